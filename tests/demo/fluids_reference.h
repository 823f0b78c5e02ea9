/*
 * fluids_reference.h - the fluids demo's kernels on the CPU, from the same
 * per-cell math (kernels/demos/fluids_math.h), and a model of the texture
 * unit's bilinear filter for the advection.
 */
#ifndef CUGL_DEMO_FLUIDS_REFERENCE_H
#define CUGL_DEMO_FLUIDS_REFERENCE_H

#include "fluids_math.h"

/*
 * How a bilinear sample is blended. CUDA's texture unit keeps the fraction
 * between two texels in fixed point with 8 fractional bits (CUDA C
 * Programming Guide, "Linear Filtering"), and the four weights it forms
 * are quantised too. The hardware model is what an H200 was measured to do
 * (test_fluids.c, filter_weights): the fractions a (along x) and b (along
 * y) round to the nearest 1/256; the weight of the far corner, a b, rounds
 * to the nearest 1/256 as well, and the others follow from it, w11 = [a b],
 * w10 = a - w11, w01 = b - w11, w00 = 1 - a - b + w11, so that the weights
 * sum to 1 and a linear ramp is reproduced exactly. The product rounding
 * moves a blend by up to 1/512 of the texels' mixed difference
 * T00 - T10 - T01 + T11. The exact filter is the textbook bilinear blend.
 */
typedef enum fluids_filter {
    FLUIDS_FILTER_HARDWARE,
    FLUIDS_FILTER_EXACT,
} fluids_filter;

/*
 * Which way the hardware model rounds each of its three quantities when it
 * lies exactly halfway between two multiples of 1/256 (a set bit: up).
 * Every tie the H200 met rounded up (4 of the fractions and 67 products in
 * 4096 samples); the tests accept either way for every tie.
 */
enum {
    FLUIDS_TIE_X_UP = 1,
    FLUIDS_TIE_Y_UP = 2,
    FLUIDS_TIE_PRODUCT_UP = 4,
    FLUIDS_TIE_CHOICES = 8, /* every combination is below this */
};

/*
 * Sample an n x n field of `channels` floats per cell (1 to 4) at (x, y)
 * in texture coordinates (texel centres at + 1/2) as a texture with linear
 * filtering, clamp addressing and unnormalized coordinates does. The blend
 * is computed in double from the weights and rounded once to float.
 */
void fluids_reference_sample(float *out, const float *field, int channels, int n, float x,
                             float y, fluids_filter filter, unsigned ties);

/* Which of the hardware model's roundings at (x, y) are ties (FLUIDS_TIE_* bits). */
unsigned fluids_reference_ties(float x, float y);

/*
 * The advection of cell (x, y) as fluids_advect computes it, through the
 * given filter: its velocity and dye after one step.
 */
void fluids_reference_advect_cell(fluids_vec2 *velocity_out, fluids_vec4 *dye_out,
                                  const fluids_vec2 *velocity, const fluids_vec4 *dye, int x,
                                  int y, int n, float dt_cells, float velocity_keep,
                                  float dye_keep, fluids_filter filter, unsigned ties);

/* The divergence of every cell. */
void fluids_reference_divergence(float *div, const fluids_vec2 *velocity, int n);

/*
 * `sweeps` Jacobi sweeps from the pressure in p (n * n floats), which ends
 * up holding the last sweep's result; scratch holds n * n floats.
 */
void fluids_reference_jacobi(float *p, float *scratch, const float *div, int n, int sweeps,
                             float weight);

/* velocity_out = velocity - the gradient of p, every cell. */
void fluids_reference_subtract_gradient(fluids_vec2 *velocity_out, const fluids_vec2 *velocity,
                                        const float *p, int n);

/* The largest |divergence| over the grid. */
float fluids_reference_max_divergence(const fluids_vec2 *velocity, int n);

#endif /* CUGL_DEMO_FLUIDS_REFERENCE_H */
