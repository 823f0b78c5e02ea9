// The wave's kernels: a step of the field, a drop, and the picture.
// cugl's headers are plain C that nvcc reads too: the kernel takes the
// cugl_app_access that cugl_app_target_cuda_begin filled, by value.
#include <cugl/app_target.h>

#include "wave_math.h"

extern "C" __global__ void wave_step(const float *prev, const float *cur, float *next, int w,
                                     int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h)
        next[y * w + x] = wave_next(prev, cur, w, h, x, y);
}

extern "C" __global__ void wave_drop(float *field, int w, int h, int cx, int cy)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h)
        field[y * w + x] = wave_dropped(field[y * w + x], x, y, cx, cy);
}

// Row y of the image is row y of the field: the target's memory (ptr,
// rows pitch bytes apart) or, on the map path, a surface object.
extern "C" __global__ void wave_draw(cugl_app_access a, const float *field, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    unsigned char c[4];
    wave_colour(c, field[y * w + x]);
    uchar4 v = make_uchar4(c[0], c[1], c[2], c[3]);
    if (a.ptr)
        *(uchar4 *)((unsigned char *)a.ptr + y * a.pitch + x * 4ull) = v;
    else
        surf2Dwrite(v, a.surface, x * 4, y);
}
