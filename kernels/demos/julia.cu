// The julia demo's kernels: every frame they colour each pixel of a
// width x height RGBA8 image (julia_math.h), row 0 the bottom row.

#include "julia_math.h"

// Through a surface object on the mapped GL texture's CUDA array. A
// surface's x coordinate is in bytes: 4 per RGBA8 texel.
extern "C" __global__ void julia_surface(cudaSurfaceObject_t surface, int width, int height,
                                         julia_params p)
{
    int x = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    int y = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    if (x >= width || y >= height)
        return;
    julia_rgba c = julia_pixel(x, y, &p);
    surf2Dwrite(make_uchar4(c.r, c.g, c.b, c.a), surface, x * 4, y);
}

// Into linear memory, rows `pitch` bytes apart (a multiple of 4): a shared
// texture's storage, or a device buffer the host path uploads.
extern "C" __global__ void julia_linear(unsigned char *image, unsigned long long pitch,
                                        int width, int height, julia_params p)
{
    int x = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    int y = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    if (x >= width || y >= height)
        return;
    julia_rgba c = julia_pixel(x, y, &p);
    uchar4 *row = (uchar4 *)(image + (size_t)y * pitch);
    row[x] = make_uchar4(c.r, c.g, c.b, c.a);
}
