/*
 * layout_ops.c - the operations on strided layouts (cugl/layout.h): reshape
 * (NumPy's, without a copy), permute, flatten, squeeze, unsqueeze,
 * broadcast, repack and slice, each result checked before it is stored.
 */
#include <stdio.h>
#include <string.h>

#include "core_internal.h"
#include "layout_internal.h"

/* `shape` (ndim extents, one of them -1 at most: inferred) as the extents
 * of `want`, whose product must be `vol`. */
static cugl_status resolve_shape(int64_t want[MAXD], int ndim, const int64_t *shape, int64_t vol,
                                 const char *who)
{
    int64_t known = 1;
    int infer = -1;
    for (int i = 0; i < ndim; i++) {
        want[i] = shape[i];
        if (shape[i] == -1) {
            if (infer >= 0)
                return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                                  "there can be at most one -1 extent in a shape");
            infer = i;
            continue;
        }
        if (shape[i] < 0)
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "shape[%d] is %lld; extents must be non-negative (or one -1)", i,
                              (long long)shape[i]);
        if (!mul_ok(known, shape[i], &known))
            return cugl__layout_overflow(who);
    }
    if (infer >= 0) {
        if (known == 0)
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "the -1 extent is ambiguous when the other extents multiply to 0");
        if (vol % known != 0)
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "the volume %lld is not divisible by the other extents' product "
                              "%lld",
                              (long long)vol, (long long)known);
        want[infer] = vol / known;
        known = vol;
    }
    if (known != vol)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "cannot reshape %lld elements into a shape of %lld", (long long)vol,
                          (long long)known);
    return CUGL_OK;
}

/* The strides of `r` (of shape `want`) over `layout`'s memory without a
 * copy, or the refusal where there are none. */
static cugl_status regroup(cugl_layout *r, const cugl_layout *layout, int ndim,
                           const int64_t *want, const char *who)
{
    /* NumPy's no-copy reshape: group old and new axes of equal products
     * (extents of 1 set aside); a group can be re-split only if its old
     * axes are contiguous with one another. */
    int64_t od[MAXD], os[MAXD];
    int on = 0;
    for (int i = 0; i < layout->ndim; i++)
        if (layout->shape[i] != 1) {
            od[on] = layout->shape[i];
            os[on] = layout->strides[i];
            on++;
        }
    int64_t nd[MAXD], ns[MAXD];
    int nn = 0, map[MAXD];
    for (int i = 0; i < ndim; i++)
        if (want[i] != 1) {
            map[nn] = i;
            nd[nn++] = want[i];
        }
    int oi = 0, oj = 1, ni = 0, nj = 1;
    while (ni < nn && oi < on) {
        int64_t np = nd[ni], op = od[oi];
        while (np != op) {
            /* Products never exceed the volume, which fits. */
            if (np < op)
                np *= nd[nj++];
            else
                op *= od[oj++];
        }
        int64_t contiguous_stride;
        for (int k = oi; k < oj - 1; k++)
            if (!mul_ok(od[k + 1], os[k + 1], &contiguous_stride) || os[k] != contiguous_stride)
                return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                                  "the layout's strides are incompatible with the new shape: "
                                  "it cannot be reshaped without a copy");
        ns[nj - 1] = os[oj - 1];
        for (int k = nj - 1; k > ni; k--)
            if (!mul_ok(ns[k], nd[k], &ns[k - 1]))
                return cugl__layout_overflow(who);
        ni = nj++;
        oi = oj++;
    }
    /* Axes of extent 1 take the stride an axis there would have in C order. */
    int64_t next = 1;
    for (int i = ndim - 1, k = nn - 1; i >= 0; i--) {
        if (k >= 0 && map[k] == i) {
            r->strides[i] = ns[k];
            if (!mul_ok(ns[k], nd[k], &next))
                next = 0;
            k--;
        } else {
            r->strides[i] = next;
        }
    }
    return CUGL_OK;
}

CUGL_API cugl_status cugl_layout_reshaped(cugl_layout *out, const cugl_layout *layout,
                                          int ndim, const int64_t *shape)
{
    CUGL__CHECK_NOT_NULL(out);
    CUGL__TRY(cugl__layout_check(layout, __func__, NULL, NULL));
    CUGL__CHECK_ARG(ndim >= 0 && ndim <= MAXD, "ndim is %d; a layout has 0 to %d dimensions",
                    ndim, MAXD);
    CUGL__CHECK_ARG(ndim == 0 || shape, "shape is NULL");
    int64_t vol = cugl_layout_volume(layout);
    int64_t want[MAXD];
    CUGL__TRY(resolve_shape(want, ndim, shape, vol, __func__));
    cugl_layout r = *layout;
    r.ndim = ndim;
    memcpy(r.shape, want, (size_t)ndim * sizeof *want);
    if (vol == 0) {
        int perm[MAXD];
        cugl__layout_c_order(perm, ndim);
        CUGL__TRY(cugl__layout_dense_into(&r, ndim, want, layout->itemsize, perm, __func__));
        r.slice_offset = layout->slice_offset;
        return cugl__layout_finish(out, &r, __func__);
    }

    CUGL__TRY(regroup(&r, layout, ndim, want, __func__));
    return cugl__layout_finish(out, &r, __func__);
}

CUGL_API cugl_status cugl_layout_permuted(cugl_layout *out, const cugl_layout *layout,
                                          const int *axes)
{
    CUGL__CHECK_NOT_NULL(out);
    CUGL__TRY(cugl__layout_check(layout, __func__, NULL, NULL));
    CUGL__TRY(cugl__layout_check_perm(axes, layout->ndim, "axes", __func__));
    cugl_layout r = *layout;
    for (int i = 0; i < layout->ndim; i++) {
        r.shape[i] = layout->shape[axes[i]];
        r.strides[i] = layout->strides[axes[i]];
    }
    return cugl__layout_finish(out, &r, __func__);
}

CUGL_API cugl_status cugl_layout_flattened(cugl_layout *out, const cugl_layout *layout,
                                           int start_axis, int end_axis)
{
    CUGL__CHECK_NOT_NULL(out);
    CUGL__TRY(cugl__layout_check(layout, __func__, NULL, NULL));
    cugl_layout r = *layout;
    int n = layout->ndim;
    if (n == 0) {
        CUGL__CHECK_ARG((start_axis == 0 || start_axis == -1) && (end_axis == 0 || end_axis == -1),
                        "a scalar flattens only as axes 0..-1, got %d..%d", start_axis, end_axis);
        r.ndim = 1;
        r.shape[0] = 1;
        r.strides[0] = 1;
        return cugl__layout_finish(out, &r, __func__);
    }
    int s = norm_axis(start_axis, n), e = norm_axis(end_axis, n);
    CUGL__CHECK_ARG(s >= 0 && s < n && e >= 0 && e < n,
                    "axes %d..%d are outside the layout's %d axes", start_axis, end_axis, n);
    CUGL__CHECK_ARG(s <= e, "start_axis %d comes after end_axis %d", start_axis, end_axis);

    int64_t extent = 1;
    for (int i = s; i <= e; i++)
        if (!mul_ok(extent, layout->shape[i], &extent))
            return cugl__layout_overflow(__func__);
    int64_t stride = layout->strides[e], want;
    if (cugl_layout_volume(layout) > 0) {
        int last = -1; /* the faster axis of the pair being checked */
        for (int i = e; i >= s; i--) {
            if (layout->shape[i] == 1)
                continue;
            if (last < 0) {
                stride = layout->strides[i];
            } else if (!mul_ok(layout->strides[last], layout->shape[last], &want) ||
                       layout->strides[i] != want) {
                return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                                  "axes %d..%d cannot be merged without a copy: the stride of "
                                  "axis %d (%lld) is not the stride times the extent of axis %d "
                                  "(%lld x %lld)",
                                  s, e, i, (long long)layout->strides[i], last,
                                  (long long)layout->strides[last],
                                  (long long)layout->shape[last]);
            }
            last = i;
        }
    }
    r.shape[s] = extent;
    r.strides[s] = stride;
    int drop = e - s;
    for (int i = s + 1; i + drop < n; i++) {
        r.shape[i] = layout->shape[i + drop];
        r.strides[i] = layout->strides[i + drop];
    }
    r.ndim = n - drop;
    return cugl__layout_finish(out, &r, __func__);
}

CUGL_API cugl_status cugl_layout_squeezed(cugl_layout *out, const cugl_layout *layout)
{
    CUGL__CHECK_NOT_NULL(out);
    CUGL__TRY(cugl__layout_check(layout, __func__, NULL, NULL));
    cugl_layout r = *layout;
    if (cugl_layout_volume(layout) == 0) {
        r.ndim = 1;
        r.shape[0] = 0;
        r.strides[0] = 0;
        return cugl__layout_finish(out, &r, __func__);
    }
    r.ndim = 0;
    for (int i = 0; i < layout->ndim; i++)
        if (layout->shape[i] != 1) {
            r.shape[r.ndim] = layout->shape[i];
            r.strides[r.ndim] = layout->strides[i];
            r.ndim++;
        }
    return cugl__layout_finish(out, &r, __func__);
}

CUGL_API cugl_status cugl_layout_unsqueezed(cugl_layout *out, const cugl_layout *layout,
                                            int naxes, const int *axes)
{
    CUGL__CHECK_NOT_NULL(out);
    CUGL__TRY(cugl__layout_check(layout, __func__, NULL, NULL));
    CUGL__CHECK_ARG(naxes >= 0, "naxes is %d", naxes);
    CUGL__CHECK_ARG(naxes == 0 || axes, "axes is NULL");
    /* Compared before adding: ndim + naxes could overflow. */
    CUGL__CHECK_ARG(naxes <= MAXD - layout->ndim,
                    "the result would have %d + %d axes; at most %d are supported",
                    layout->ndim, naxes, MAXD);
    int total = layout->ndim + naxes;
    bool inserted[MAXD] = {false};
    for (int k = 0; k < naxes; k++) {
        int a = norm_axis(axes[k], total);
        CUGL__CHECK_ARG(a >= 0 && a < total,
                        "axes[%d] is %d; the result's axes are %d to %d", k, axes[k], -total,
                        total - 1);
        CUGL__CHECK_ARG(!inserted[a], "axes repeats position %d", a);
        inserted[a] = true;
    }
    cugl_layout r = *layout;
    r.ndim = total;
    /* From the back, so that a new axis can take the stride x extent of the
     * old axis after it: what it would have in a contiguous layout. */
    int64_t next = 1;
    for (int i = total - 1, j = layout->ndim - 1; i >= 0; i--) {
        if (inserted[i]) {
            r.shape[i] = 1;
            r.strides[i] = next;
        } else {
            r.shape[i] = layout->shape[j];
            r.strides[i] = layout->strides[j];
            if (!mul_ok(layout->strides[j], layout->shape[j], &next))
                next = 0;
            j--;
        }
    }
    return cugl__layout_finish(out, &r, __func__);
}

CUGL_API cugl_status cugl_layout_broadcast_to(cugl_layout *out, const cugl_layout *layout,
                                              int ndim, const int64_t *shape)
{
    CUGL__CHECK_NOT_NULL(out);
    CUGL__TRY(cugl__layout_check(layout, __func__, NULL, NULL));
    CUGL__TRY(cugl__layout_check_shape_arg(ndim, shape, __func__));
    CUGL__CHECK_ARG(ndim >= layout->ndim,
                    "cannot broadcast %d axes to %d: broadcasting never removes axes",
                    layout->ndim, ndim);
    cugl_layout r = *layout;
    r.ndim = ndim;
    int lead = ndim - layout->ndim;
    for (int i = 0; i < ndim; i++) {
        r.shape[i] = shape[i];
        int j = i - lead;
        if (j < 0) {
            r.strides[i] = 0;
        } else if (layout->shape[j] == shape[i]) {
            r.strides[i] = layout->strides[j];
        } else if (layout->shape[j] == 1) {
            r.strides[i] = 0;
        } else {
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                              "shapes cannot be broadcast together: axis %d has extent %lld, "
                              "asked for %lld",
                              j, (long long)layout->shape[j], (long long)shape[i]);
        }
    }
    return cugl__layout_finish(out, &r, __func__);
}

/* Repack into `r`, or write why not into `why`. */
static bool try_repack(cugl_layout *r, const cugl_layout *l, int64_t itemsize,
                       uint64_t data_ptr, int axis, bool keep_dim, char *why, size_t why_size)
{
#define NO(...) (snprintf(why, why_size, __VA_ARGS__), false)
    *r = *l;
    if (itemsize <= 0)
        return NO("itemsize must be positive, got %lld", (long long)itemsize);
    if (itemsize == l->itemsize)
        return true;
    if (l->ndim == 0)
        return NO("a scalar cannot be repacked; unsqueeze it first");
    int a = norm_axis(axis, l->ndim);
    if (a < 0 || a >= l->ndim)
        return NO("axis %d is outside the layout's %d axes", axis, l->ndim);
    if (l->shape[a] == 0)
        return NO("axis %d has extent 0", a);
    if (l->strides[a] != 1 && l->shape[a] != 1)
        return NO("axis %d has stride %lld; repacking needs stride 1", a,
                  (long long)l->strides[a]);
    r->strides[a] = 1;
    r->itemsize = itemsize;
    if (itemsize > l->itemsize) {
        if (itemsize % l->itemsize != 0)
            return NO("itemsize %lld is not a multiple of %lld", (long long)itemsize,
                      (long long)l->itemsize);
        int64_t k = itemsize / l->itemsize;
        if (l->shape[a] % k != 0)
            return NO("the extent %lld of axis %d is not divisible by %lld",
                      (long long)l->shape[a], a, (long long)k);
        for (int i = 0; i < l->ndim; i++) {
            if (i == a)
                continue;
            if (l->strides[i] % k != 0) {
                if (l->shape[i] != 1)
                    return NO("the stride %lld of axis %d is not divisible by %lld",
                              (long long)l->strides[i], i, (long long)k);
                r->strides[i] = 0; /* extent 1: the stride is never used */
            } else {
                r->strides[i] = l->strides[i] / k;
            }
        }
        if (l->slice_offset % k != 0)
            return NO("the slice offset %lld is not divisible by %lld",
                      (long long)l->slice_offset, (long long)k);
        if (data_ptr % (uint64_t)itemsize != 0)
            return NO("the data pointer 0x%llx is not aligned to %lld bytes",
                      (unsigned long long)data_ptr, (long long)itemsize);
        r->shape[a] = l->shape[a] / k;
        r->slice_offset = l->slice_offset / k;
        if (!keep_dim && r->shape[a] == 1) {
            for (int i = a; i + 1 < l->ndim; i++) {
                r->shape[i] = r->shape[i + 1];
                r->strides[i] = r->strides[i + 1];
            }
            r->ndim--;
        }
        return true;
    }
    if (l->itemsize % itemsize != 0)
        return NO("itemsize %lld does not divide %lld", (long long)itemsize,
                  (long long)l->itemsize);
    int64_t k = l->itemsize / itemsize;
    for (int i = 0; i < l->ndim; i++)
        if (i != a && !mul_ok(l->strides[i], k, &r->strides[i]))
            return NO("the strides overflow");
    if (!mul_ok(l->shape[a], k, &r->shape[a]) || !mul_ok(l->slice_offset, k, &r->slice_offset))
        return NO("the extent or the offset overflows");
    return true;
#undef NO
}

CUGL_API cugl_status cugl_layout_repacked(cugl_layout *out, const cugl_layout *layout,
                                          int64_t itemsize, uint64_t data_ptr, int axis,
                                          bool keep_dim)
{
    CUGL__CHECK_NOT_NULL(out);
    CUGL__TRY(cugl__layout_check(layout, __func__, NULL, NULL));
    cugl_layout r;
    char why[256];
    if (!try_repack(&r, layout, itemsize, data_ptr, axis, keep_dim, why, sizeof why))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "cannot repack itemsize %lld as %lld: %s", (long long)layout->itemsize,
                          (long long)itemsize, why);
    return cugl__layout_finish(out, &r, __func__);
}

CUGL_API cugl_status cugl_layout_max_compatible_itemsize(int64_t *itemsize,
                                                         const cugl_layout *layout,
                                                         int64_t max_itemsize,
                                                         uint64_t data_ptr, int axis)
{
    CUGL__CHECK_NOT_NULL(itemsize);
    CUGL__TRY(cugl__layout_check(layout, __func__, NULL, NULL));
    CUGL__CHECK_ARG(max_itemsize >= layout->itemsize,
                    "max_itemsize %lld is smaller than the itemsize %lld",
                    (long long)max_itemsize, (long long)layout->itemsize);
    /* The axis cugl_layout_repacked would take, checked as it checks it. */
    int a = norm_axis(axis, layout->ndim);
    CUGL__CHECK_ARG(layout->ndim == 0 || (a >= 0 && a < layout->ndim),
                    "axis %d is outside the layout's %d axes", axis, layout->ndim);
    int64_t best = layout->itemsize;
    char why[256];
    /* Doubling stops before it could pass max_itemsize, or overflow. */
    while (best <= max_itemsize / 2) {
        cugl_layout r;
        if (!try_repack(&r, layout, best * 2, data_ptr, axis, true, why, sizeof why) ||
            !cugl__layout_valid(&r))
            break;
        best *= 2;
    }
    *itemsize = best;
    return CUGL_OK;
}

/* Python's slice.indices(): normalise start and stop, return the length. */
static int64_t slice_indices(const cugl_slice *s, int64_t n, int64_t *start)
{
    int64_t step = s->step, b, e;
    if (!s->has_start) {
        b = step < 0 ? n - 1 : 0;
    } else {
        b = s->start;
        if (b < 0) {
            b += n;
            if (b < 0)
                b = step < 0 ? -1 : 0;
        } else if (b >= n) {
            b = step < 0 ? n - 1 : n;
        }
    }
    if (!s->has_stop) {
        e = step < 0 ? -1 : n;
    } else {
        e = s->stop;
        if (e < 0) {
            e += n;
            if (e < 0)
                e = step < 0 ? -1 : 0;
        } else if (e >= n) {
            e = step < 0 ? n - 1 : n;
        }
    }
    *start = b;
    if (step < 0)
        return e < b ? (b - e - 1) / -step + 1 : 0;
    return b < e ? (e - b - 1) / step + 1 : 0;
}

CUGL_API cugl_status cugl_layout_sliced(cugl_layout *out, const cugl_layout *layout,
                                        int nslices, const cugl_slice *slices)
{
    CUGL__CHECK_NOT_NULL(out);
    CUGL__TRY(cugl__layout_check(layout, __func__, NULL, NULL));
    CUGL__CHECK_ARG(nslices >= 0 && nslices <= layout->ndim,
                    "%d slices for a layout of %d axes", nslices, layout->ndim);
    CUGL__CHECK_ARG(nslices == 0 || slices, "slices is NULL");
    cugl_layout r = *layout;
    r.ndim = 0;
    bool empty = false;
    for (int i = 0; i < layout->ndim; i++) {
        int64_t n = layout->shape[i], st = layout->strides[i], off;
        const cugl_slice *s = i < nslices ? &slices[i] : NULL;
        if (s && s->is_index) {
            int64_t idx = s->index < 0 ? s->index + n : s->index;
            CUGL__CHECK_ARG(idx >= 0 && idx < n,
                            "index %lld is out of range for axis %d of extent %lld",
                            (long long)s->index, i, (long long)n);
            if (!mul_ok(idx, st, &off) || !add_ok(r.slice_offset, off, &r.slice_offset))
                return cugl__layout_overflow(__func__);
            continue;
        }
        int64_t start = 0, count = n, step = 1;
        if (s) {
            CUGL__CHECK_ARG(s->step != 0, "slice %d: the step cannot be zero", i);
            CUGL__CHECK_ARG(s->step != INT64_MIN, "slice %d: the step is out of range", i);
            step = s->step;
            count = slice_indices(s, n, &start);
        }
        r.shape[r.ndim] = count;
        r.strides[r.ndim] = st;
        if (count > 1 && !mul_ok(st, step, &r.strides[r.ndim]))
            return cugl__layout_overflow(__func__);
        if (count > 0) {
            if (!mul_ok(start, st, &off) || !add_ok(r.slice_offset, off, &r.slice_offset))
                return cugl__layout_overflow(__func__);
        } else {
            empty = true;
        }
        r.ndim++;
    }
    if (empty)
        for (int i = 0; i < r.ndim; i++)
            r.strides[i] = 0;
    return cugl__layout_finish(out, &r, __func__);
}
