#version 450 core
// A hash of an RGBA8 texture's level 0, its R, G and B (the frame server's
// test for a still picture): two sums over the texels, modulo 2^32, of a
// mix of each texel's colour and its place. Sums do not depend on the
// order the work groups run in, so a picture always hashes the same.
// 16 x 16 texels a work group, summed in shared memory first (a tree, not
// atomics on one word), then added into the buffer: one atomic a group.
layout(local_size_x = 16, local_size_y = 16) in;
layout(binding = 0) uniform sampler2D image;
layout(std430, binding = 0) buffer Hash { uint sums[2]; };
layout(location = 0) uniform ivec2 size;

const uint GROUP = 256u;
shared uvec2 part[GROUP];

// A 32-bit finaliser (each input bit reaches every output bit).
uint mix32(uint x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

void main()
{
    uint i = gl_LocalInvocationIndex;
    ivec2 t = ivec2(gl_GlobalInvocationID.xy);
    uvec2 h = uvec2(0u);
    if (t.x < size.x && t.y < size.y) {
        uint rgb = packUnorm4x8(texelFetch(image, t, 0)) & 0xffffffu;
        uint place = uint(t.y) * uint(size.x) + uint(t.x);
        h = uvec2(mix32(rgb ^ mix32(place)), mix32(rgb + 0x9e3779b9u * (place + 1u)));
    }
    part[i] = h;
    for (uint n = GROUP / 2u; n > 0u; n /= 2u) {
        barrier();
        if (i < n)
            part[i] += part[i + n];
    }
    if (i == 0u) {
        atomicAdd(sums[0], part[0].x);
        atomicAdd(sums[1], part[0].y);
    }
}
