/*
 * demo_math.h - what a demo kernel and its C reference share: a qualifier
 * for functions both nvcc and the C compiler build, and float arithmetic
 * that rounds the same way on both sides.
 */
#ifndef CUGL_DEMO_MATH_H
#define CUGL_DEMO_MATH_H

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

#endif /* CUGL_DEMO_MATH_H */
