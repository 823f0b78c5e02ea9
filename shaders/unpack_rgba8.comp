#version 450 core
// RGBA8 texels of a buffer (texel (x, y) the 32-bit word at y * pitch + x,
// pitch in texels, row 0 first) into level 0 of an RGBA8 texture, bit for
// bit: the texture is bound as an rgba8ui image, so nothing is converted.
// 16 x 16 texels a work group.
layout(local_size_x = 16, local_size_y = 16) in;
layout(std430, binding = 0) readonly buffer Texels { uint texels[]; };
layout(binding = 0, rgba8ui) uniform writeonly uimage2D image;
layout(location = 0) uniform ivec2 size;
layout(location = 1) uniform int pitch;

void main()
{
    ivec2 t = ivec2(gl_GlobalInvocationID.xy);
    if (t.x < size.x && t.y < size.y) {
        uint w = texels[t.y * pitch + t.x];
        imageStore(image, t, uvec4(w & 0xffu, (w >> 8) & 0xffu, (w >> 16) & 0xffu, w >> 24));
    }
}
