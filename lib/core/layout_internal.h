/*
 * layout_internal.h - what layout.c (checks, construction, properties) and
 * layout_ops.c (operations) share: overflow-checked arithmetic, and the
 * checks and constructors each operation builds on. Failures are reported
 * as `who`, the public call.
 */
#ifndef CUGL_CORE_LAYOUT_INTERNAL_H
#define CUGL_CORE_LAYOUT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "core_internal.h"

#define MAXD CUGL_LAYOUT_MAX_NDIM

static inline bool mul_ok(int64_t a, int64_t b, int64_t *r)
{
    return !__builtin_mul_overflow(a, b, r);
}
static inline bool add_ok(int64_t a, int64_t b, int64_t *r)
{
    return !__builtin_add_overflow(a, b, r);
}
static inline int norm_axis(int axis, int ndim) { return axis < 0 ? axis + ndim : axis; }

/* "the layout's offsets or size in bytes overflow int64". */
cugl_status cugl__layout_overflow(const char *who);

/* Whether `l` is a layout (property getters answer for invalid input
 * without reporting). */
bool cugl__layout_valid(const cugl_layout *l);

/* Check the result of an operation, then store it: `out` may alias the input. */
cugl_status cugl__layout_finish(cugl_layout *out, const cugl_layout *result, const char *who);

/* `shape` of `ndim` extents, each non-negative. */
cugl_status cugl__layout_check_shape_arg(int ndim, const int64_t *shape, const char *who);

/* `perm` (named `name`) a permutation of 0 .. ndim-1. */
cugl_status cugl__layout_check_perm(const int *perm, int ndim, const char *name, const char *who);

/* `r`: dense strides over `shape` for the axis order `perm` (perm[ndim-1]
 * fastest). */
cugl_status cugl__layout_dense_into(cugl_layout *r, int ndim, const int64_t *shape,
                                    int64_t itemsize, const int *perm, const char *who);

/* `perm`: 0 .. ndim-1, C order. */
void cugl__layout_c_order(int *perm, int ndim);

#endif /* CUGL_CORE_LAYOUT_INTERNAL_H */
