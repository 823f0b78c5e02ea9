// Kernels the target tests launch (tests/gpu/test_target.c): a known
// pattern written into a target wherever its path puts it (linear memory,
// or a surface object on a mapped array), and an image read back from
// wherever its path puts it (linear memory, or a texture object).
// cugl_app_access, as the kernel receives it by value.
struct access {
    unsigned long long ptr, pitch, slice, size, surface, texture;
};

// Component c of texel (x, y, z): a value every format holds exactly (a
// byte; a half or a float of k / 2 with k < 251).
__device__ unsigned pattern(unsigned x, unsigned y, unsigned z, unsigned c, unsigned seed)
{
    return (x * 3u + y * 5u + z * 7u + c + seed) % 251u;
}

// The half of k / 2 (k < 251: exact), as its bits, in integers alone (the
// test computes the same on the host).
__device__ unsigned short half_bits(unsigned k)
{
    if (k == 0)
        return 0;
    unsigned e = 31u - (unsigned)__clz((int)k); // k / 2^e in [1, 2)
    unsigned mantissa = (k << (10u - e)) - 1024u;
    return (unsigned short)((e - 1u + 15u) << 10 | mantissa);
}

// Texel (x, y, z) as `bytes` bytes: `components` components of `size`
// bytes each (1: a byte, 2: a half, 4: a float).
__device__ void texel_bytes(unsigned char *out, unsigned x, unsigned y, unsigned z,
                            int components, int size, unsigned seed)
{
    for (int c = 0; c < components; c++) {
        unsigned k = pattern(x, y, z, (unsigned)c, seed);
        if (size == 1) {
            out[c] = (unsigned char)k;
        } else if (size == 2) {
            unsigned short bits = half_bits(k);
            out[2 * c] = (unsigned char)bits;
            out[2 * c + 1] = (unsigned char)(bits >> 8);
        } else {
            unsigned bits = __float_as_uint(0.5f * (float)k);
            for (int b = 0; b < 4; b++)
                out[4 * c + b] = (unsigned char)(bits >> (8 * b));
        }
    }
}

// Every texel of a width x height x depth target (a buffer: width bytes,
// height and depth 1, one component of one byte).
extern "C" __global__ void cugl_target_write(access a, int width, int height, int depth,
                                             int components, int size, unsigned seed)
{
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    unsigned z = blockIdx.z;
    if (x >= (unsigned)width || y >= (unsigned)height || z >= (unsigned)depth)
        return;
    int bytes = components * size;
    unsigned char t[16];
    texel_bytes(t, x, y, z, components, size, seed);
    if (a.ptr) {
        unsigned char *p = (unsigned char *)a.ptr + z * a.slice + y * a.pitch +
                           (unsigned long long)x * bytes;
        for (int b = 0; b < bytes; b++)
            p[b] = t[b];
        return;
    }
    unsigned w[4];
    for (int i = 0; i < 4; i++)
        w[i] = i * 4 < bytes ? (unsigned)t[4 * i] | (unsigned)t[4 * i + 1] << 8 |
                                   (unsigned)t[4 * i + 2] << 16 | (unsigned)t[4 * i + 3] << 24
                             : 0u;
    int bx = (int)x * bytes;
    if (depth > 1) {
        if (bytes == 4)
            surf3Dwrite(w[0], a.surface, bx, (int)y, (int)z);
        else if (bytes == 8)
            surf3Dwrite(make_uint2(w[0], w[1]), a.surface, bx, (int)y, (int)z);
        else
            surf3Dwrite(make_uint4(w[0], w[1], w[2], w[3]), a.surface, bx, (int)y, (int)z);
    } else {
        if (bytes == 4)
            surf2Dwrite(w[0], a.surface, bx, (int)y);
        else if (bytes == 8)
            surf2Dwrite(make_uint2(w[0], w[1]), a.surface, bx, (int)y);
        else
            surf2Dwrite(make_uint4(w[0], w[1], w[2], w[3]), a.surface, bx, (int)y);
    }
}

// An RGBA8 image CUDA reads, into out (width x height, rows tight).
extern "C" __global__ void cugl_target_read_rgba8(access a, int width, int height, uchar4 *out)
{
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= (unsigned)width || y >= (unsigned)height)
        return;
    uchar4 v;
    if (a.ptr)
        v = *(const uchar4 *)((const unsigned char *)a.ptr + y * a.pitch + x * 4ull);
    else
        v = tex2D<uchar4>(a.texture, (float)x + 0.5f, (float)y + 0.5f);
    out[y * (unsigned)width + x] = v;
}
