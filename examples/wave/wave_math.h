/*
 * wave_math.h - the arithmetic of the wave that the kernels (wave.cu) and
 * the program's CPU reference (wave.c --check) share, one rounding per
 * operation on both sides (nvcc fuses a * b + c into one FMA unless told
 * not to; the device's _rn intrinsics never are), so the picture the GPU
 * draws and the one the CPU computes are equal byte for byte.
 */
#ifndef WAVE_MATH_H
#define WAVE_MATH_H

#ifdef __CUDACC__
#define WAVE_FN static inline __host__ __device__
#else
#include <math.h>
#define WAVE_FN static inline
#endif

#define WAVE_C2 0.24f      /* (c dt / dx)^2: below 0.5, the scheme is stable */
#define WAVE_DAMPING 0.998f
#define WAVE_DROP_RADIUS 6 /* cells */

WAVE_FN float wave_mul(float a, float b)
{
#ifdef __CUDA_ARCH__
    return __fmul_rn(a, b);
#else
    return a * b;
#endif
}

WAVE_FN float wave_add(float a, float b)
{
#ifdef __CUDA_ARCH__
    return __fadd_rn(a, b);
#else
    return a + b;
#endif
}

WAVE_FN float wave_sub(float a, float b)
{
#ifdef __CUDA_ARCH__
    return __fsub_rn(a, b);
#else
    return a - b;
#endif
}

/* The field at (x, y) one step on: the 5-point Laplacian, damped; the
 * border stays 0. */
WAVE_FN float wave_next(const float *prev, const float *cur, int w, int h, int x, int y)
{
    if (x == 0 || y == 0 || x == w - 1 || y == h - 1)
        return 0.0f;
    int i = y * w + x;
    float around = wave_add(wave_add(cur[i - 1], cur[i + 1]), wave_add(cur[i - w], cur[i + w]));
    float laplacian = wave_sub(around, wave_mul(4.0f, cur[i]));
    float next = wave_add(wave_sub(wave_mul(2.0f, cur[i]), prev[i]), wave_mul(WAVE_C2, laplacian));
    return wave_mul(next, WAVE_DAMPING);
}

/* A drop at (cx, cy): the cells within the radius rise to 1. */
WAVE_FN float wave_dropped(float value, int x, int y, int cx, int cy)
{
    int dx = x - cx, dy = y - cy;
    return dx * dx + dy * dy <= WAVE_DROP_RADIUS * WAVE_DROP_RADIUS ? 1.0f : value;
}

/* [0, 1] to 0 .. 255, rounded to nearest. */
WAVE_FN unsigned char wave_unorm8(float v)
{
    v = fminf(fmaxf(v, 0.0f), 1.0f);
    return (unsigned char)wave_add(wave_mul(v, 255.0f), 0.5f);
}

/* The colour of height u: blue below, white at rest, orange above. */
WAVE_FN void wave_colour(unsigned char rgba[4], float u)
{
    float up = fminf(fmaxf(u, 0.0f), 1.0f), down = fminf(fmaxf(-u, 0.0f), 1.0f);
    rgba[0] = wave_unorm8(wave_sub(1.0f, wave_mul(0.8f, down)));
    rgba[1] = wave_unorm8(wave_sub(1.0f, wave_mul(0.5f, wave_add(up, down))));
    rgba[2] = wave_unorm8(wave_sub(1.0f, wave_mul(0.9f, up)));
    rgba[3] = 255;
}

#endif /* WAVE_MATH_H */
