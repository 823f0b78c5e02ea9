#version 450 core
// A 3-D array of values ray-marched through a box of the scene: the ray of
// this pixel (its near and far points through the inverse of the camera's
// matrix) clipped to the box, `steps` samples along the box's diagonal
// (trilinear), each value through the colour map (the formula of
// cugl/app_draw.h) with an opacity rising with it (t * density a sample),
// composited front to back; premultiplied, blended over the picture.
in vec2 ndc;
layout(location = 0) uniform mat4 inverse;     // clip space to the scene
layout(location = 1) uniform vec3 box_min;
layout(location = 2) uniform vec3 box_max;
layout(location = 3) uniform vec2 range;       // vmin, 1 / (vmax - vmin)
layout(location = 4) uniform float density;    // a sample's opacity at t = 1
layout(location = 5) uniform int steps;        // samples along the box's diagonal
layout(binding = 0) uniform sampler2D colormap;
layout(binding = 1) uniform sampler3D values;
out vec4 colour;

void main()
{
    vec4 a = inverse * vec4(ndc, -1.0, 1.0), b = inverse * vec4(ndc, 1.0, 1.0);
    vec3 from = a.xyz / a.w, to = b.xyz / b.w, dir = to - from;
    // The ray's stretch within the box (slabs), in 0 .. 1 of from -> to.
    vec3 inv = 1.0 / dir;
    vec3 t0 = (box_min - from) * inv, t1 = (box_max - from) * inv;
    vec3 lo = min(t0, t1), hi = max(t0, t1);
    float enter = max(max(max(lo.x, lo.y), lo.z), 0.0);
    float leave = min(min(min(hi.x, hi.y), hi.z), 1.0);
    vec4 acc = vec4(0.0);
    if (enter < leave) {
        float ds = length(box_max - box_min) / float(steps) / length(dir);
        vec3 size = box_max - box_min;
        for (float s = enter + 0.5 * ds; s < leave && acc.a < 0.995; s += ds) {
            vec3 p = (from + s * dir - box_min) / size;
            float t = (texture(values, p).r - range.x) * range.y;
            t = isnan(t) ? 0.0 : clamp(t, 0.0, 1.0);
            vec3 c = texelFetch(colormap, ivec2(int(t * 255.0 + 0.5), 0), 0).rgb;
            float alpha = t * density;
            acc += (1.0 - acc.a) * vec4(c * alpha, alpha);
        }
    }
    colour = acc;
}
