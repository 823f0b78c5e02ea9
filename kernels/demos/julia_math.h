/*
 * julia_math.h - the julia demo's image, shared by its kernels (julia.cu)
 * and the C reference the tests compare them with.
 *
 * Pixel (x, y), y = 0 the bottom row as GL stores textures, samples the
 * point z0 = center + (x + 1/2 - w/2, y + 1/2 - h/2) * scale of the
 * complex plane and iterates z = z^2 + c until |z| > 256 or max_iter
 * steps. Points that escape get a colour from the smooth iteration count
 * mu = n + 1 - log2(ln |z|); the others are black. Every step of the
 * iteration rounds as the C reference does (demo_math.h), so the escape
 * count is the same on both; only the colour's transcendental functions
 * may differ in the last bit, which moves a channel by at most one level.
 */
#ifndef CUGL_JULIA_MATH_H
#define CUGL_JULIA_MATH_H

#include "demo_math.h"

enum {
    JULIA_MAX_ITER = 256,
    /* c goes once around its circle in this many frames (a minute at 60 Hz). */
    JULIA_PERIOD_FRAMES = 3600,
};

#define JULIA_BAILOUT2 65536.0f /* |z|^2 beyond which z escapes: |z| > 256 */
#define JULIA_C_RADIUS 0.7885f  /* c = 0.7885 e^(i a), a animated */
#define JULIA_C_ANGLE0 2.65f
#define JULIA_SPAN 3.2f         /* the plane across the shorter side at zoom 1 */
#define JULIA_TWO_PI 6.28318530717958647692f

/* Where the demo looks: what panning and zooming change. */
typedef struct julia_view {
    float center_re, center_im;
    float span; /* plane units across the shorter side of the image */
} julia_view;

/* One frame's parameters: a kernel argument, the same layout in C and CUDA. */
typedef struct julia_params {
    float c_re, c_im;
    float center_re, center_im;
    float scale; /* plane units per pixel */
    float half_width, half_height;
    int max_iter;
} julia_params;

typedef struct julia_rgba {
    unsigned char r, g, b, a;
} julia_rgba;

DEMO_FN julia_view julia_view_default(void)
{
    julia_view v = {0.0f, 0.0f, JULIA_SPAN};
    return v;
}

/* The parameters of frame `frame` of a width x height image of `view`. */
DEMO_FN julia_params julia_params_for(const julia_view *view, long frame, int width,
                                      int height)
{
    float step = JULIA_TWO_PI / (float)JULIA_PERIOD_FRAMES;
    float a = demo_add(JULIA_C_ANGLE0, demo_mul(step, (float)(frame % JULIA_PERIOD_FRAMES)));
    julia_params p;
    p.c_re = demo_mul(JULIA_C_RADIUS, cosf(a));
    p.c_im = demo_mul(JULIA_C_RADIUS, sinf(a));
    p.center_re = view->center_re;
    p.center_im = view->center_im;
    p.scale = view->span / (float)(width < height ? width : height);
    p.half_width = 0.5f * (float)width;
    p.half_height = 0.5f * (float)height;
    p.max_iter = JULIA_MAX_ITER;
    return p;
}

/* 0.5 + 0.5 cos(2 pi (s + phase)): one channel of a cosine palette. */
DEMO_FN float julia_palette(float s, float phase)
{
    return demo_add(0.5f, demo_mul(0.5f, cosf(demo_mul(JULIA_TWO_PI, demo_add(s, phase)))));
}

/* The colour of pixel (x, y), y counted from the bottom row. */
DEMO_FN julia_rgba julia_pixel(int x, int y, const julia_params *p)
{
    float zr = demo_add(p->center_re,
                        demo_mul(demo_sub(demo_add((float)x, 0.5f), p->half_width), p->scale));
    float zi = demo_add(p->center_im,
                        demo_mul(demo_sub(demo_add((float)y, 0.5f), p->half_height), p->scale));
    float r2 = 0.0f;
    int n = 0;
    for (; n < p->max_iter; n++) {
        float x2 = demo_mul(zr, zr), y2 = demo_mul(zi, zi);
        r2 = demo_add(x2, y2);
        if (r2 > JULIA_BAILOUT2)
            break;
        zi = demo_add(demo_mul(demo_add(zr, zr), zi), p->c_im);
        zr = demo_add(demo_sub(x2, y2), p->c_re);
    }
    julia_rgba c = {0, 0, 0, 255};
    if (n == p->max_iter)
        return c;
    /* ln |z| = ln(|z|^2) / 2 */
    float mu = (float)n + 1.0f - log2f(0.5f * logf(r2));
    float s = 0.32f * sqrtf(fmaxf(mu, 0.0f));
    c.r = demo_unorm8(julia_palette(s, 0.00f));
    c.g = demo_unorm8(julia_palette(s, 0.10f));
    c.b = demo_unorm8(julia_palette(s, 0.22f));
    return c;
}

#endif /* CUGL_JULIA_MATH_H */
