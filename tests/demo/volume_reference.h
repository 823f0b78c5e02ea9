/*
 * volume_reference.h - the CPU reference of the volume demo: its density
 * grid, the GPU's trilinear texture filter emulated on that grid, and the
 * ray march of volume_math.h over it.
 */
#ifndef CUGL_VOLUME_REFERENCE_H
#define CUGL_VOLUME_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

#include "volume_math.h"

/* An n^3 grid of densities, x fastest, as the demo's 3-D array holds it. */
struct volume_grid {
    const float *texels;
    int n;
};

/* The demo's density sampled at the texel centres of an n^3 grid. */
void volume_reference_grid(float *texels, int n);

/*
 * What a tex3D read of the grid at normalized coordinates (u, v, w)
 * returns with linear filtering and clamped addressing. The CUDA
 * programming guide ("Linear Filtering") describes the blend of the 8
 * texels around x = u n - 1/2 (per axis) with weights of 8 fractional
 * bits. What the hardware does exactly was measured on an H200 (a texture
 * of one texel 1 and the rest 0 gives one texel's weight; 80,000 points
 * matched to within 3e-8):
 *   - each coordinate x is rounded to 8 fractional bits, then split into
 *     the lower texel floor(x) and the upper one's weight A (0 .. 255);
 *   - the eight weights (in 256ths) are products formed z first, then x,
 *     then y, each rounded to 8 bits (halves up) on one side and the
 *     complement on the other, so that they sum to exactly 1: the x split
 *     rounds the upper texel's share, the y split rounds the share of the
 *     texel on the same side in y as in x;
 *   - the result is the weighted sum of the texels, indices clamped to the
 *     grid, in fp32.
 * Rounding the per-axis weights alone and blending them (the guide's
 * formula) is off by up to 1/256 of a texel difference at 15% of points.
 */
float volume_reference_fetch(const struct volume_grid *g, float u, float v, float w);

/*
 * The image of the grid under camera `p` (p->width x p->height RGBA8),
 * rows in the kernel's order (row 0 the bottom) unless `png_rows`, which
 * puts the top row first as a PNG (and the demo's screenshot) has it.
 */
void volume_reference_render(uint8_t *rgba, const struct volume_grid *g,
                             const volume_params *p, int png_rows);

#endif /* CUGL_VOLUME_REFERENCE_H */
