/*
 * layout.c - strided layouts: their checks, construction and properties,
 * every piece of index arithmetic checked for overflow (the operations:
 * layout_ops.c).
 */
#include <stdio.h>
#include <string.h>

#include "core_internal.h"
#include "layout_internal.h"


cugl_status cugl__layout_overflow(const char *who)
{
    return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                      "the layout's offsets or size in bytes overflow int64");
}

static int64_t volume_of(int ndim, const int64_t *shape)
{
    int64_t v = 1;
    for (int i = 0; i < ndim; i++)
        if (shape[i] == 0)
            return 0;
    for (int i = 0; i < ndim; i++)
        if (!mul_ok(v, shape[i], &v))
            return -1;
    return v;
}

/*
 * Inspect a layout completely and compute its offset bounds: the volume and
 * every offset, in elements and in bytes, must fit in int64. Says why not in
 * `why` (when given); reports nothing itself.
 */
static bool inspect(const cugl_layout *l, int64_t *lo_out, int64_t *hi_out, char *why,
                    size_t why_size)
{
#define NO(...) (why ? (void)snprintf(why, why_size, __VA_ARGS__) : (void)0, false)
    if (l->ndim < 0 || l->ndim > MAXD)
        return NO("ndim is %d; a layout has 0 to %d dimensions", l->ndim, MAXD);
    if (l->itemsize <= 0)
        return NO("itemsize must be positive, got %lld", (long long)l->itemsize);
    for (int i = 0; i < l->ndim; i++)
        if (l->shape[i] < 0)
            return NO("shape[%d] is %lld; extents must be non-negative", i,
                      (long long)l->shape[i]);
    const char *overflows = "the layout's offsets or size in bytes overflow int64";
    int64_t vol = volume_of(l->ndim, l->shape);
    if (vol < 0)
        return NO("%s", overflows);
    int64_t lo = 0, hi = -1;
    if (vol > 0) {
        lo = hi = l->slice_offset;
        for (int i = 0; i < l->ndim; i++) {
            int64_t span;
            if (!mul_ok(l->shape[i] - 1, l->strides[i], &span))
                return NO("%s", overflows);
            if (!add_ok(span > 0 ? hi : lo, span, span > 0 ? &hi : &lo))
                return NO("%s", overflows);
        }
        int64_t bytes;
        if (!mul_ok(lo, l->itemsize, &bytes) || !add_ok(hi, 1, &bytes) ||
            !mul_ok(bytes, l->itemsize, &bytes))
            return NO("%s", overflows);
    }
    if (lo_out)
        *lo_out = lo;
    if (hi_out)
        *hi_out = hi;
    return true;
#undef NO
}

static cugl_status check(const cugl_layout *l, const char *who, int64_t *lo, int64_t *hi)
{
    if (!l)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "layout is NULL");
    char why[160];
    if (!inspect(l, lo, hi, why, sizeof why))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "%s", why);
    return CUGL_OK;
}

/* Property getters answer for invalid input without reporting. */
bool cugl__layout_valid(const cugl_layout *l) { return l && inspect(l, NULL, NULL, NULL, 0); }

/* Check the result of an operation, then store it: `out` may alias the input. */
cugl_status cugl__layout_finish(cugl_layout *out, const cugl_layout *result, const char *who)
{
    CUGL__TRY(check(result, who, NULL, NULL));
    *out = *result;
    return CUGL_OK;
}

/* --- construction --- */

cugl_status cugl__layout_check_shape_arg(int ndim, const int64_t *shape, const char *who)
{
    if (ndim < 0 || ndim > MAXD)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "ndim is %d; a layout has 0 to %d dimensions", ndim, MAXD);
    if (ndim > 0 && !shape)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "shape is NULL");
    for (int i = 0; i < ndim; i++)
        if (shape[i] < 0)
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "shape[%d] is %lld; extents must be non-negative", i,
                              (long long)shape[i]);
    return CUGL_OK;
}

cugl_status cugl__layout_check_perm(const int *perm, int ndim, const char *name, const char *who)
{
    if (ndim > 0 && !perm)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "%s is NULL", name);
    bool seen[MAXD] = {false};
    for (int i = 0; i < ndim; i++) {
        if (perm[i] < 0 || perm[i] >= ndim)
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "%s[%d] is %d; axes of this layout are 0 to %d", name, i, perm[i],
                              ndim - 1);
        if (seen[perm[i]])
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "%s repeats axis %d", name,
                              perm[i]);
        seen[perm[i]] = true;
    }
    return CUGL_OK;
}

/* Dense strides for the axis order `perm` (perm[ndim-1] fastest). */
cugl_status cugl__layout_dense_into(cugl_layout *r, int ndim, const int64_t *shape,
                                    int64_t itemsize, const int *perm, const char *who)
{
    memset(r, 0, sizeof *r);
    r->ndim = ndim;
    r->itemsize = itemsize;
    int64_t stride = 1;
    for (int k = ndim - 1; k >= 0; k--) {
        int ax = perm[k];
        r->shape[ax] = shape[ax];
        r->strides[ax] = stride;
        /* An extent of 0 still gets strides that would fit extent 1. */
        if (!mul_ok(stride, shape[ax] > 0 ? shape[ax] : 1, &stride))
            return cugl__layout_overflow(who);
    }
    return CUGL_OK;
}

void cugl__layout_c_order(int *perm, int ndim)
{
    for (int i = 0; i < ndim; i++)
        perm[i] = i;
}

cugl_status cugl__layout_init(cugl_layout *out, int ndim, const int64_t *shape,
                              const int64_t *strides, int64_t itemsize, const char *who)
{
    if (!out)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "out is NULL");
    CUGL__TRY(cugl__layout_check_shape_arg(ndim, shape, who));
    if (itemsize <= 0)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "itemsize must be positive, got %lld",
                          (long long)itemsize);
    cugl_layout r;
    int perm[MAXD];
    cugl__layout_c_order(perm, ndim);
    CUGL__TRY(cugl__layout_dense_into(&r, ndim, shape, itemsize, perm, who));
    if (strides)
        memcpy(r.strides, strides, (size_t)ndim * sizeof *strides);
    return cugl__layout_finish(out, &r, who);
}

cugl_status cugl__layout_check(const cugl_layout *layout, const char *who, int64_t *min_offset,
                               int64_t *max_offset)
{
    return check(layout, who, min_offset, max_offset);
}

CUGL_API cugl_status cugl_layout_init(cugl_layout *out, int ndim, const int64_t *shape,
                                      const int64_t *strides, int64_t itemsize)
{
    return cugl__layout_init(out, ndim, shape, strides, itemsize, __func__);
}

CUGL_API cugl_status cugl_layout_init_bytes(cugl_layout *out, int ndim, const int64_t *shape,
                                            const int64_t *byte_strides, int64_t itemsize)
{
    CUGL__CHECK_NOT_NULL(out);
    CUGL__TRY(cugl__layout_check_shape_arg(ndim, shape, __func__));
    CUGL__CHECK_ARG(itemsize > 0, "itemsize must be positive, got %lld", (long long)itemsize);
    /* NULL: dense, in C order, as cugl_layout_init takes it. */
    int64_t strides[MAXD];
    for (int i = 0; byte_strides && i < ndim; i++) {
        CUGL__CHECK_ARG(byte_strides[i] % itemsize == 0,
                        "byte stride %lld of axis %d is not a multiple of itemsize %lld",
                        (long long)byte_strides[i], i, (long long)itemsize);
        strides[i] = byte_strides[i] / itemsize;
    }
    cugl_layout r;
    int perm[MAXD];
    cugl__layout_c_order(perm, ndim);
    CUGL__TRY(cugl__layout_dense_into(&r, ndim, shape, itemsize, perm, __func__));
    if (byte_strides)
        memcpy(r.strides, strides, (size_t)ndim * sizeof *strides);
    return cugl__layout_finish(out, &r, __func__);
}

/* The axis permutation for a dense order; `like` answers CUGL_ORDER_K. */
static cugl_status order_perm(int *out_perm, int ndim, cugl_order order, const int *perm,
                              const cugl_layout *like, const char *who)
{
    switch (order) {
    case CUGL_ORDER_C:
        cugl__layout_c_order(out_perm, ndim);
        return CUGL_OK;
    case CUGL_ORDER_F:
        for (int i = 0; i < ndim; i++)
            out_perm[i] = ndim - 1 - i;
        return CUGL_OK;
    case CUGL_ORDER_K:
        if (!like)
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "CUGL_ORDER_K keeps a layout's order; use cugl_layout_dense_like");
        return cugl_layout_stride_order(like, out_perm);
    case CUGL_ORDER_CUSTOM:
        CUGL__TRY(cugl__layout_check_perm(perm, ndim, "perm", who));
        memcpy(out_perm, perm, (size_t)ndim * sizeof *perm);
        return CUGL_OK;
    }
    return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "order %d is not a cugl_order",
                      (int)order);
}

CUGL_API cugl_status cugl_layout_dense(cugl_layout *out, int ndim, const int64_t *shape,
                                       int64_t itemsize, cugl_order order, const int *perm)
{
    CUGL__CHECK_NOT_NULL(out);
    CUGL__TRY(cugl__layout_check_shape_arg(ndim, shape, __func__));
    CUGL__CHECK_ARG(itemsize > 0, "itemsize must be positive, got %lld", (long long)itemsize);
    int p[MAXD];
    CUGL__TRY(order_perm(p, ndim, order, perm, NULL, __func__));
    cugl_layout r;
    CUGL__TRY(cugl__layout_dense_into(&r, ndim, shape, itemsize, p, __func__));
    return cugl__layout_finish(out, &r, __func__);
}

static cugl_status dense_like(cugl_layout *out, const cugl_layout *other, cugl_order order,
                              const int *perm, const char *who)
{
    if (!out)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "out is NULL");
    CUGL__TRY(check(other, who, NULL, NULL));
    int p[MAXD];
    CUGL__TRY(order_perm(p, other->ndim, order, perm, other, who));
    cugl_layout r;
    CUGL__TRY(cugl__layout_dense_into(&r, other->ndim, other->shape, other->itemsize, p, who));
    return cugl__layout_finish(out, &r, who);
}

CUGL_API cugl_status cugl_layout_dense_like(cugl_layout *out, const cugl_layout *other,
                                            cugl_order order, const int *perm)
{
    return dense_like(out, other, order, perm, __func__);
}

CUGL_API cugl_status cugl_layout_to_dense(cugl_layout *out, const cugl_layout *layout,
                                          cugl_order order, const int *perm)
{
    return dense_like(out, layout, order, perm, __func__);
}

CUGL_API cugl_status cugl_layout_validate(const cugl_layout *layout)
{
    return check(layout, __func__, NULL, NULL);
}

/* --- properties --- */

CUGL_API int64_t cugl_layout_volume(const cugl_layout *layout)
{
    return cugl__layout_valid(layout) ? volume_of(layout->ndim, layout->shape) : 0;
}

CUGL_API cugl_status cugl_layout_strides_in_bytes(const cugl_layout *layout,
                                                  int64_t *byte_strides)
{
    CUGL__TRY(check(layout, __func__, NULL, NULL));
    CUGL__CHECK_ARG(layout->ndim == 0 || byte_strides, "byte_strides is NULL");
    for (int i = 0; i < layout->ndim; i++)
        if (!mul_ok(layout->strides[i], layout->itemsize, &byte_strides[i]))
            return cugl__layout_overflow(__func__);
    return CUGL_OK;
}

CUGL_API int64_t cugl_layout_slice_offset_in_bytes(const cugl_layout *layout)
{
    int64_t r;
    if (!cugl__layout_valid(layout) || !mul_ok(layout->slice_offset, layout->itemsize, &r))
        return 0;
    return r;
}

/* |v|, INT64_MIN's (2^63) included: a stride of INT64_MIN passes check()
 * on an axis of extent 0 or 1. */
static uint64_t abs64(int64_t v) { return v < 0 ? 0 - (uint64_t)v : (uint64_t)v; }

/* Axes sorted by |stride|, descending (slowest first); ties keep axis order. */
static void sort_axes_by_stride(const cugl_layout *l, int *axes, bool descending)
{
    for (int i = 0; i < l->ndim; i++)
        axes[i] = i;
    for (int i = 1; i < l->ndim; i++) {
        int a = axes[i], j = i;
        /* Insertion sort: stable, and ndim <= 64. Overflow-free: a stride of
         * INT64_MIN cannot pass check() unless its extent is 0 or 1. */
        while (j > 0) {
            uint64_t sa = abs64(l->strides[a]), sb = abs64(l->strides[axes[j - 1]]);
            if (descending ? sa > sb : sa < sb)
                axes[j] = axes[j - 1], j--;
            else
                break;
        }
        axes[j] = a;
    }
}

CUGL_API cugl_status cugl_layout_stride_order(const cugl_layout *layout, int *axes)
{
    CUGL__TRY(check(layout, __func__, NULL, NULL));
    CUGL__CHECK_ARG(layout->ndim == 0 || axes, "axes is NULL");
    sort_axes_by_stride(layout, axes, true);
    return CUGL_OK;
}

CUGL_API bool cugl_layout_is_unique(const cugl_layout *layout)
{
    if (!cugl__layout_valid(layout))
        return false;
    if (cugl_layout_volume(layout) <= 1)
        return true;
    int axes[MAXD];
    sort_axes_by_stride(layout, axes, false);
    /* Each axis must step over everything the faster axes can reach. */
    int64_t span = 0;
    for (int k = 0; k < layout->ndim; k++) {
        int a = axes[k];
        if (layout->shape[a] == 1)
            continue;
        uint64_t m = abs64(layout->strides[a]);
        if (m <= (uint64_t)span)
            return false;
        int64_t s = (int64_t)m; /* the axis's extent is 2 or more: check() kept it in range */
        /* Each term fits (check() saw it); their sum may not. */
        if (!add_ok(span, (layout->shape[a] - 1) * s, &span))
            return false;
    }
    return true;
}

/* Contiguous when walking the axes in `axes` order from the fastest. */
static bool contiguous_in(const cugl_layout *l, const int *axes)
{
    if (cugl_layout_volume(l) <= 1)
        return true;
    int64_t expected = 1;
    for (int k = l->ndim - 1; k >= 0; k--) {
        int a = axes[k];
        if (l->shape[a] == 1)
            continue;
        if (l->strides[a] != expected)
            return false;
        expected *= l->shape[a];
    }
    return true;
}

CUGL_API bool cugl_layout_is_contiguous_c(const cugl_layout *layout)
{
    if (!cugl__layout_valid(layout))
        return false;
    int axes[MAXD];
    cugl__layout_c_order(axes, layout->ndim);
    return contiguous_in(layout, axes);
}

CUGL_API bool cugl_layout_is_contiguous_f(const cugl_layout *layout)
{
    if (!cugl__layout_valid(layout))
        return false;
    int axes[MAXD];
    for (int i = 0; i < layout->ndim; i++)
        axes[i] = layout->ndim - 1 - i;
    return contiguous_in(layout, axes);
}

CUGL_API bool cugl_layout_is_contiguous_any(const cugl_layout *layout)
{
    if (!cugl__layout_valid(layout))
        return false;
    int axes[MAXD];
    sort_axes_by_stride(layout, axes, true);
    return contiguous_in(layout, axes);
}

CUGL_API bool cugl_layout_is_dense(const cugl_layout *layout)
{
    return cugl_layout_is_contiguous_any(layout) && layout->slice_offset == 0;
}

CUGL_API cugl_status cugl_layout_offset_bounds(const cugl_layout *layout, int64_t *min_offset,
                                               int64_t *max_offset)
{
    CUGL__CHECK_ARG(min_offset || max_offset, "min_offset and max_offset are both NULL");
    return check(layout, __func__, min_offset, max_offset);
}

CUGL_API cugl_status cugl_layout_required_size_in_bytes(const cugl_layout *layout,
                                                        int64_t *size)
{
    CUGL__CHECK_NOT_NULL(size);
    *size = 0;
    int64_t lo, hi;
    CUGL__TRY(check(layout, __func__, &lo, &hi));
    if (hi < lo)
        return CUGL_OK;
    if (lo < 0)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "the layout maps elements to negative offsets (down to %lld), so the "
                          "size of memory it needs is ambiguous",
                          (long long)lo);
    *size = (hi + 1) * layout->itemsize; /* fits: check() verified it */
    return CUGL_OK;
}

CUGL_API bool cugl_layout_equal(const cugl_layout *a, const cugl_layout *b)
{
    if (!a || !b || a->ndim != b->ndim || a->itemsize != b->itemsize ||
        a->slice_offset != b->slice_offset || a->ndim < 0 || a->ndim > MAXD)
        return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i] || a->strides[i] != b->strides[i])
            return false;
    return true;
}
