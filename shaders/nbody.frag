#version 450 core
// A round soft sprite; with glBlendFunc(GL_SRC_ALPHA, GL_ONE) the bodies'
// light adds up where they crowd.

in vec3 tint;
in float brightness;

layout(location = 4) uniform float intensity; // a lone body's light at the sprite's centre

out vec4 colour;

void main()
{
    vec2 c = gl_PointCoord * 2.0 - 1.0;
    float r2 = dot(c, c);
    if (r2 >= 1.0)
        discard;
    float falloff = exp(-4.0 * r2) * (1.0 - r2);
    colour = vec4(tint, falloff * brightness * intensity);
}
