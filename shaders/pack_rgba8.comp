#version 450 core
// An RGBA8 texture's level 0 into a buffer: texel (x, y) as the 32-bit word
// at y * pitch + x (pitch in texels), row 0 first, as glGetTextureImage
// packs it; 16 x 16 texels a work group.
layout(local_size_x = 16, local_size_y = 16) in;
layout(binding = 0) uniform sampler2D image;
layout(std430, binding = 0) writeonly buffer Texels { uint texels[]; };
layout(location = 0) uniform ivec2 size;
layout(location = 1) uniform int pitch;

void main()
{
    ivec2 t = ivec2(gl_GlobalInvocationID.xy);
    if (t.x < size.x && t.y < size.y)
        texels[t.y * pitch + t.x] = packUnorm4x8(texelFetch(image, t, 0));
}
