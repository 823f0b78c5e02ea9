/*
 * postprocess_reference.h - the postprocess demo's filters on the CPU, from
 * the same per-pixel math as its kernels (postprocess_math.h).
 */
#ifndef CUGL_POSTPROCESS_REFERENCE_H
#define CUGL_POSTPROCESS_REFERENCE_H

#include <stdbool.h>
#include <stdint.h>

#include "postprocess_math.h"

/*
 * Filter a width x height RGBA8 image `in` into `out` (distinct, the same
 * size, rows packed) as the demo does with `filter` and blur `radius`.
 * The filters commute with turning the image upside down, so rows may run
 * either way. Returns false when memory for the intermediate images runs
 * out.
 */
bool postprocess_reference(uint8_t *out, const uint8_t *in, int width, int height,
                           pp_filter filter, int radius);

#endif /* CUGL_POSTPROCESS_REFERENCE_H */
