#version 450 core
// A mesh's colour: its scalar through the colour map (256 entries, the
// formula of cugl/app_draw.h), or one colour; lit by the face's normal
// against a light at the eye where shaded.
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
    vec4 c = rgba;
    if (scalared) {
        float t = (value - range.x) * range.y;
        t = isnan(t) ? 0.0 : clamp(t, 0.0, 1.0);
        c = texelFetch(colormap, ivec2(int(t * 255.0 + 0.5), 0), 0);
    }
    if (shaded) {
        vec3 n = normalize(cross(dFdx(ndc), dFdy(ndc)));
        c.rgb *= 0.35 + 0.65 * abs(n.z);
    }
    colour = c;
}
