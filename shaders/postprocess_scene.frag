#version 450 core
// Lambert shading with a Blinn-Phong highlight, the vertex colour times the
// object's tint, fading into the background colour with distance.

in vec3 world_position;
in vec3 world_normal;
in vec3 vertex_colour;

layout(location = 3) uniform vec3 eye;
layout(location = 4) uniform vec3 light_dir; // towards the light
layout(location = 5) uniform vec3 tint;
layout(location = 6) uniform vec3 background;

out vec4 colour;

void main()
{
    vec3 n = normalize(world_normal);
    vec3 l = normalize(light_dir);
    vec3 to_eye = eye - world_position;
    vec3 v = normalize(to_eye);
    vec3 h = normalize(l + v);
    float diffuse = max(dot(n, l), 0.0);
    float specular = diffuse > 0.0 ? pow(max(dot(n, h), 0.0), 40.0) * 0.4 : 0.0;
    vec3 lit = vertex_colour * tint * (0.16 + 0.84 * diffuse) + vec3(specular);
    float fog = smoothstep(7.0, 13.0, length(to_eye));
    colour = vec4(mix(lit, background, fog), 1.0);
}
