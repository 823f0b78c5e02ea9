/*
 * fluids_reference.c - see fluids_reference.h. Built with -ffp-contract=off,
 * so that the shared math rounds once per operation, as the kernels do.
 */
#include "fluids_reference.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

/* The fraction towards the upper texel along one axis, in steps of 1/256
 * (not rounded), and the lower texel's index. */
static double axis_steps(float coord, int *lower)
{
    double t = (double)coord - 0.5; /* exact in double */
    double base = floor(t);
    *lower = (int)base;
    return (t - base) * 256.0;
}

/* v rounded to the nearest integer, a tie up or down. */
static double round_nearest(double v, bool tie_up)
{
    return tie_up ? floor(v + 0.5) : ceil(v - 0.5);
}

static bool is_tie(double v)
{
    return v - floor(v) == 0.5;
}

static int clamp_index(int i, int n)
{
    return i < 0 ? 0 : i >= n ? n - 1 : i;
}

void fluids_reference_sample(float *out, const float *field, int channels, int n, float x,
                             float y, fluids_filter filter, unsigned ties)
{
    int x0, y0;
    double sa = axis_steps(x, &x0), sb = axis_steps(y, &y0), a, b, ab;
    if (filter == FLUIDS_FILTER_EXACT) {
        a = sa / 256.0;
        b = sb / 256.0;
        ab = a * b;
    } else {
        double qa = round_nearest(sa, ties & FLUIDS_TIE_X_UP);
        double qb = round_nearest(sb, ties & FLUIDS_TIE_Y_UP);
        a = qa / 256.0;
        b = qb / 256.0;
        ab = round_nearest(qa * qb / 256.0, ties & FLUIDS_TIE_PRODUCT_UP) / 256.0;
    }
    int xs[2] = {clamp_index(x0, n), clamp_index(x0 + 1, n)};
    int ys[2] = {clamp_index(y0, n), clamp_index(y0 + 1, n)};
    /* w[j][i]: the weight of texel (xs[i], ys[j]) */
    double w[2][2] = {{1.0 - a - b + ab, a - ab}, {b - ab, ab}};
    for (int c = 0; c < channels; c++) {
        double v = 0.0;
        for (int j = 0; j < 2; j++)
            for (int i = 0; i < 2; i++)
                v += w[j][i] * (double)field[((size_t)ys[j] * n + xs[i]) * channels + c];
        out[c] = (float)v;
    }
}

unsigned fluids_reference_ties(float x, float y)
{
    int x0, y0;
    double sa = axis_steps(x, &x0), sb = axis_steps(y, &y0);
    unsigned ties = (is_tie(sa) ? FLUIDS_TIE_X_UP : 0) | (is_tie(sb) ? FLUIDS_TIE_Y_UP : 0);
    /* The product of any rounding of the fractions. */
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
            if (is_tie(round_nearest(sa, ta) * round_nearest(sb, tb) / 256.0))
                ties |= FLUIDS_TIE_PRODUCT_UP;
    return ties;
}

void fluids_reference_advect_cell(fluids_vec2 *velocity_out, fluids_vec4 *dye_out,
                                  const fluids_vec2 *velocity, const fluids_vec4 *dye, int x,
                                  int y, int n, float dt_cells, float velocity_keep,
                                  float dye_keep, fluids_filter filter, unsigned ties)
{
    fluids_vec2 p = fluids_backtrace(x, y, velocity[fluids_at(x, y, n)], dt_cells);
    float v[2], d[4];
    fluids_reference_sample(v, &velocity[0].x, 2, n, p.x, p.y, filter, ties);
    fluids_reference_sample(d, &dye[0].x, 4, n, p.x, p.y, filter, ties);
    velocity_out->x = demo_mul(v[0], velocity_keep);
    velocity_out->y = demo_mul(v[1], velocity_keep);
    dye_out->x = demo_mul(d[0], dye_keep);
    dye_out->y = demo_mul(d[1], dye_keep);
    dye_out->z = demo_mul(d[2], dye_keep);
    dye_out->w = demo_mul(d[3], dye_keep);
}

void fluids_reference_divergence(float *div, const fluids_vec2 *velocity, int n)
{
    for (int y = 0; y < n; y++)
        for (int x = 0; x < n; x++)
            div[fluids_at(x, y, n)] = fluids_divergence(velocity, x, y, n);
}

void fluids_reference_jacobi(float *p, float *scratch, const float *div, int n, int sweeps,
                             float weight)
{
    float *from = p, *to = scratch;
    for (int s = 0; s < sweeps; s++) {
        for (int y = 0; y < n; y++)
            for (int x = 0; x < n; x++)
                to[fluids_at(x, y, n)] = fluids_jacobi(from, div, x, y, n, weight);
        float *t = from;
        from = to;
        to = t;
    }
    if (from != p)
        memcpy(p, from, (size_t)n * n * sizeof *p);
}

void fluids_reference_subtract_gradient(fluids_vec2 *velocity_out, const fluids_vec2 *velocity,
                                        const float *p, int n)
{
    for (int y = 0; y < n; y++)
        for (int x = 0; x < n; x++)
            velocity_out[fluids_at(x, y, n)] = fluids_project(velocity, p, x, y, n);
}

float fluids_reference_max_divergence(const fluids_vec2 *velocity, int n)
{
    float worst = 0.0f;
    for (int y = 0; y < n; y++)
        for (int x = 0; x < n; x++)
            worst = fmaxf(worst, fabsf(fluids_divergence(velocity, x, y, n)));
    return worst;
}
