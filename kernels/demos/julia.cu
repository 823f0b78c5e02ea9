// The julia demo's kernels: every frame they colour each pixel of a
// width x height RGBA8 image (julia_math.h), row 0 the bottom row.

#include "julia_math.h"

// Into the frame's image (demo_dest): a surface on the mapped GL
// texture's array, or linear memory.
extern "C" __global__ void julia_render(demo_dest dest, int width, int height, julia_params p)
{
    int x = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    int y = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    if (x >= width || y >= height)
        return;
    julia_rgba c = julia_pixel(x, y, &p);
    demo_store(dest, x, y, make_uchar4(c.r, c.g, c.b, c.a));
}
