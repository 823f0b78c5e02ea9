// The postprocess demo's filters (postprocess_math.h): each kernel makes
// one pixel per thread of a width x height image, row 0 the bottom row.
// Sources are a texture object on a CUDA array or linear memory, and
// destinations a surface object or linear memory (demo_source, demo_dest), so
// that every --interop path runs the same arithmetic.

#include "postprocess_math.h"

// Pixel (x, y) of the source, clamped to the image's edges.
__device__ static pp_rgba fetch(const demo_source &s, int x, int y, int width, int height)
{
    uchar4 v = demo_fetch(s, pp_clamp(x, width), pp_clamp(y, height));
    pp_rgba p = {v.x, v.y, v.z, v.w};
    return p;
}

__device__ static void store(const demo_dest &d, int x, int y, pp_rgba p)
{
    demo_store(d, x, y, make_uchar4(p.r, p.g, p.b, p.a));
}

__device__ static pp_rgbf load_rgbf(const float4 *image, unsigned long long pitch, int x, int y)
{
    float4 v = ((const float4 *)((const unsigned char *)image + (unsigned long long)y * pitch))[x];
    pp_rgbf f = {v.x, v.y, v.z};
    return f;
}

// No filter: the source as it is.
extern "C" __global__ void pp_copy(demo_source src, demo_dest dst, int width, int height)
{
    int x = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    int y = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    if (x >= width || y >= height)
        return;
    store(dst, x, y, fetch(src, x, y, width, height));
}

// The blur's first pass: each row into `rows` (float4, x y z used), rows
// `rows_pitch` bytes apart.
extern "C" __global__ void pp_blur_rows(demo_source src, float4 *rows, unsigned long long rows_pitch,
                                        int width, int height, pp_blur b)
{
    int x = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    int y = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    if (x >= width || y >= height)
        return;
    pp_rgbf sum = pp_blur_centre(b.weight[0], pp_rgbf_of(fetch(src, x, y, width, height)));
    for (int k = 1; k <= b.radius; k++)
        sum = pp_blur_pair(sum, b.weight[k], pp_rgbf_of(fetch(src, x - k, y, width, height)),
                           pp_rgbf_of(fetch(src, x + k, y, width, height)));
    float4 *row = (float4 *)((unsigned char *)rows + (unsigned long long)y * rows_pitch);
    row[x] = make_float4(sum.r, sum.g, sum.b, 0.0f);
}

// The second pass: the columns of `rows` into RGBA8.
extern "C" __global__ void pp_blur_columns(const float4 *rows, unsigned long long rows_pitch,
                                           demo_dest dst, int width, int height, pp_blur b)
{
    int x = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    int y = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    if (x >= width || y >= height)
        return;
    pp_rgbf sum = pp_blur_centre(b.weight[0], load_rgbf(rows, rows_pitch, x, y));
    for (int k = 1; k <= b.radius; k++)
        sum = pp_blur_pair(sum, b.weight[k],
                           load_rgbf(rows, rows_pitch, x, pp_clamp(y - k, height)),
                           load_rgbf(rows, rows_pitch, x, pp_clamp(y + k, height)));
    store(dst, x, y, pp_rgba_of(sum));
}

// Sobel edges of the source.
extern "C" __global__ void pp_edges(demo_source src, demo_dest dst, int width, int height)
{
    int x = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    int y = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    if (x >= width || y >= height)
        return;
    pp_rgba n[9];
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++)
            n[j * 3 + i] = fetch(src, x + i - 1, y + j - 1, width, height);
    store(dst, x, y, pp_edge(n));
}
