#version 450 core
// Lambert shading with a little Blinn-Phong specular; the colour follows the
// height. Back faces (the surface seen from below) use the flipped normal.

in vec3 world_position;
in vec3 world_normal;

layout(location = 2) uniform vec3 eye;
layout(location = 3) uniform vec3 light_dir; // towards the light

out vec4 colour;

void main()
{
    vec3 n = normalize(world_normal);
    if (!gl_FrontFacing)
        n = -n;
    vec3 l = normalize(light_dir);
    vec3 v = normalize(eye - world_position);
    vec3 h = normalize(l + v);
    float diffuse = max(dot(n, l), 0.0);
    float specular = pow(max(dot(n, h), 0.0), 48.0) * 0.35;
    float height = clamp(world_position.y * 2.0 + 0.5, 0.0, 1.0);
    vec3 base = mix(vec3(0.08, 0.30, 0.75), vec3(0.95, 0.55, 0.18), height);
    colour = vec4(base * (0.12 + 0.88 * diffuse) + vec3(specular), 1.0);
}
