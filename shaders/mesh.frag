#version 450 core
// A mesh's colour: its scalar through the colour map (256 entries, the
// formula of cugl/app_draw.h), or one colour; lit by the face's normal
// against a light at the eye where shaded. The face's normal is taken
// outside any branch (bench_draw's 2M triangles on Mesa's llvmpipe: 1.31
// times a hand-written draw's time with it in a branch, 1.19 outside).
in float value;
in float outside;
noperspective in vec3 ndc;
layout(location = 3) uniform bool scalared;
layout(location = 5) uniform vec2 range; // vmin, 1 / (vmax - vmin)
layout(location = 6) uniform vec4 rgba;
layout(location = 7) uniform bool shaded;
layout(binding = 0) uniform sampler2D colormap;
out vec4 colour;

void main()
{
    if (outside > 0.0)
        discard;
    vec3 n = normalize(cross(dFdx(ndc), dFdy(ndc)));
    float t = (value - range.x) * range.y;
    t = isnan(t) ? 0.0 : clamp(t, 0.0, 1.0);
    vec4 mapped = texelFetch(colormap, ivec2(int(t * 255.0 + 0.5), 0), 0);
    vec4 c = scalared ? mapped : rgba;
    c.rgb *= shaded ? 0.35 + 0.65 * abs(n.z) : 1.0;
    colour = c;
}
