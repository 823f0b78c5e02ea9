// The volume demo's kernels (volume_math.h): the density sampled into a
// grid once, and a ray marcher that reads it through a trilinearly filtered
// 3-D texture and writes a width x height RGBA8 image, row 0 the bottom row.

#include "volume_math.h"

// The n^3 grid, x fastest, into linear memory (copied into the 3-D array).
extern "C" __global__ void volume_fill(float *grid, int n)
{
    int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    int j = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    int k = (int)(blockIdx.z * blockDim.z + threadIdx.z);
    if (i >= n || j >= n || k >= n)
        return;
    grid[((size_t)k * (size_t)n + (size_t)j) * (size_t)n + (size_t)i] = volume_texel(i, j, k, n);
}

// Into the frame's image (demo_dest): a surface on the mapped GL
// texture's array, or linear memory.
extern "C" __global__ void volume_render(demo_dest dest, cudaTextureObject_t grid, volume_params p)
{
    int x = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    int y = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    if (x >= p.width || y >= p.height)
        return;
    volume_rgba c = volume_pixel(grid, x, y, &p);
    demo_store(dest, x, y, make_uchar4(c.r, c.g, c.b, c.a));
}

// out[i] = the texture at normalized coordinates uvw[3i .. 3i + 2]: the
// tests hold the filter emulation of their reference to the hardware's.
extern "C" __global__ void volume_sample(cudaTextureObject_t grid, const float *uvw, float *out,
                                         unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = volume_fetch(grid, uvw[3 * i], uvw[3 * i + 1], uvw[3 * i + 2]);
}
