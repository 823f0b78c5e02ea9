#version 450 core
// RGBA8 texels from a buffer over the viewport, nearest: texel (x, y) is the
// 32-bit word at y * pitch + x (pitch in texels), row 0 at the bottom, as
// blit.frag samples a texture; the same colours for the same bytes.
layout(std430, binding = 0) readonly buffer Texels { uint texels[]; };
layout(location = 0) uniform ivec2 size;
layout(location = 1) uniform int pitch;
layout(location = 0) in vec2 uv;
layout(location = 0) out vec4 color;

void main()
{
    ivec2 t = clamp(ivec2(floor(uv * vec2(size))), ivec2(0), size - 1);
    color = unpackUnorm4x8(texels[t.y * pitch + t.x]);
}
