/*
 * demo_math.h - what a demo kernel and its C reference share: a qualifier
 * for functions both nvcc and the C compiler build, float arithmetic that
 * rounds the same way on both sides, and the one description of an image a
 * kernel reads or writes on every --interop path (demo_source, demo_dest).
 */
#ifndef CUGL_DEMO_MATH_H
#define CUGL_DEMO_MATH_H

/* The fixed step of repeatable runs: frame i shows time i / DEMO_STEP_HZ s. */
#define DEMO_STEP_HZ 60.0f

#ifdef __CUDACC__
#define DEMO_FN static inline __host__ __device__
#else
#include <math.h>
#define DEMO_FN static inline
#endif

/*
 * One rounding per operation. nvcc fuses a * b + c into one FMA unless told
 * not to; a C compiler in C11 mode does not. An iterated map such as
 * z^2 + c turns that last-bit difference into a different escape count, so
 * code a CPU reference must match bit for bit uses these: the device
 * intrinsics are never fused.
 */
DEMO_FN float demo_mul(float a, float b)
{
#ifdef __CUDA_ARCH__
    return __fmul_rn(a, b);
#else
    return a * b;
#endif
}

DEMO_FN float demo_add(float a, float b)
{
#ifdef __CUDA_ARCH__
    return __fadd_rn(a, b);
#else
    return a + b;
#endif
}

DEMO_FN float demo_sub(float a, float b)
{
#ifdef __CUDA_ARCH__
    return __fsub_rn(a, b);
#else
    return a - b;
#endif
}

DEMO_FN float demo_clamp01(float v)
{
    return fminf(fmaxf(v, 0.0f), 1.0f);
}

/* [0, 1] to 0 .. 255, rounded to nearest. */
DEMO_FN unsigned char demo_unorm8(float v)
{
    return (unsigned char)demo_add(demo_mul(demo_clamp01(v), 255.0f), 0.5f);
}

/*
 * Where a kernel reads RGBA8 pixels: a texture object on a CUDA array
 * (point sampling, elements as stored) when texture is not 0 (the map
 * path), else linear memory at ptr, rows pitch bytes apart (shared memory,
 * or the host path's device buffer). A kernel argument, passed by value.
 */
typedef struct demo_source {
    unsigned long long texture;
    unsigned long long ptr;
    unsigned long long pitch;
} demo_source;

/* Where a kernel writes RGBA8 pixels: a surface object on a CUDA array when
 * surface is not 0, else linear memory at ptr, rows pitch bytes apart (a
 * multiple of 4). A buffer target (vertices) uses ptr alone. */
typedef struct demo_dest {
    unsigned long long surface;
    unsigned long long ptr;
    unsigned long long pitch;
} demo_dest;

#ifdef __CUDACC__
/* Pixel (x, y) of the source, inside the image. Point sampling at the
 * texel's centre returns the stored texel exactly. */
__device__ static inline uchar4 demo_fetch(const demo_source &s, int x, int y)
{
    if (s.texture)
        return tex2D<uchar4>((cudaTextureObject_t)s.texture, (float)x + 0.5f, (float)y + 0.5f);
    return ((const uchar4 *)(s.ptr + (unsigned long long)y * s.pitch))[x];
}

/* Pixel (x, y) of the destination. A surface's x coordinate is in bytes: 4
 * per RGBA8 texel. */
__device__ static inline void demo_store(const demo_dest &d, int x, int y, uchar4 v)
{
    if (d.surface)
        surf2Dwrite(v, (cudaSurfaceObject_t)d.surface, x * 4, y);
    else
        ((uchar4 *)(d.ptr + (unsigned long long)y * d.pitch))[x] = v;
}
#endif

#endif /* CUGL_DEMO_MATH_H */
