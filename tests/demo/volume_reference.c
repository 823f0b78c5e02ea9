/*
 * volume_reference.c - see volume_reference.h. Built with floating-point
 * contraction off, so every operation rounds once, as the kernels' do.
 */
#include "volume_reference.h"

#include <math.h>

void volume_reference_grid(float *texels, int n)
{
    for (int k = 0; k < n; k++)
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++)
                texels[((size_t)k * (size_t)n + (size_t)j) * (size_t)n + (size_t)i] =
                    volume_texel(i, j, k, n);
}

static int clamp_index(int i, int n)
{
    return i < 0 ? 0 : i >= n ? n - 1 : i;
}

/* A product of weights in 256ths, back to 256ths: rounded, halves up. */
static int product(int w1, int w2)
{
    return (w1 * w2 + 128) >> 8;
}

/* One axis: the lower texel and the weight of the upper one, in 256ths. */
static void axis(float coord, int n, int *lower, int *weight)
{
    /* The texel-space coordinate to 8 fractional bits, rounded. */
    float fixed = floorf((coord * (float)n - 0.5f) * 256.0f + 0.5f);
    float texel = floorf(fixed / 256.0f);
    *lower = (int)texel;
    *weight = (int)(fixed - texel * 256.0f);
}

float volume_reference_fetch(const struct volume_grid *g, float u, float v, float w)
{
    int i, j, k, a, b, c;
    axis(u, g->n, &i, &a);
    axis(v, g->n, &j, &b);
    axis(w, g->n, &k, &c);
    /* weight[dz][dy][dx] of texel (i + dx, j + dy, k + dz) */
    int weight[2][2][2];
    for (int dz = 0; dz < 2; dz++) {
        int wz = dz ? c : 256 - c;
        int hi_x = product(a, wz), lo_x = wz - hi_x;
        int lo_x_lo_y = product(256 - b, lo_x), hi_x_hi_y = product(b, hi_x);
        weight[dz][0][0] = lo_x_lo_y;
        weight[dz][1][0] = lo_x - lo_x_lo_y;
        weight[dz][1][1] = hi_x_hi_y;
        weight[dz][0][1] = hi_x - hi_x_hi_y;
    }
    size_t n = (size_t)g->n;
    float sum = 0.0f;
    for (int dz = 0; dz < 2; dz++)
        for (int dy = 0; dy < 2; dy++)
            for (int dx = 0; dx < 2; dx++) {
                size_t x = (size_t)clamp_index(i + dx, g->n), y = (size_t)clamp_index(j + dy, g->n),
                       z = (size_t)clamp_index(k + dz, g->n);
                sum += (float)weight[dz][dy][dx] * g->texels[(z * n + y) * n + x];
            }
    return sum / 256.0f;
}

/* The C side of volume_math.h's volume_fetch: the emulated filter. */
float volume_fetch(volume_texture tex, float u, float v, float w)
{
    return volume_reference_fetch(tex, u, v, w);
}

void volume_reference_render(uint8_t *rgba, const struct volume_grid *g,
                             const volume_params *p, int png_rows)
{
    for (int y = 0; y < p->height; y++) {
        int row = png_rows ? p->height - 1 - y : y;
        for (int x = 0; x < p->width; x++) {
            volume_rgba c = volume_pixel(g, x, y, p);
            uint8_t *px = rgba + ((size_t)row * (size_t)p->width + (size_t)x) * 4;
            px[0] = c.r;
            px[1] = c.g;
            px[2] = c.b;
            px[3] = c.a;
        }
    }
}
