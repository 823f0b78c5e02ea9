/*
 * view.c - strided memory views: creation from buffers, and the checks
 * around copies (copy.c does the copying; DLPack: dlpack.c).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_internal.h"

static int64_t dtype_size(cugl_dtype d) { return (int64_t)(d.bits / 8) * d.lanes; }

/* A zero dtype is untyped: opaque bytes of the item size. */
static cugl_status resolve_dtype(cugl_dtype *d, int64_t itemsize, const char *who)
{
    if (d->bits == 0 && d->lanes == 0 && d->code == 0) {
        if (itemsize > UINT16_MAX)
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "an untyped view's items are at most %d bytes, not %lld",
                              UINT16_MAX, (long long)itemsize);
        *d = (cugl_dtype){CUGL_DTYPE_OPAQUE, 8, (uint16_t)itemsize};
        return CUGL_OK;
    }
    if (d->bits == 0 || d->bits % 8 != 0 || d->lanes == 0)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "dtype has %u bits x %u lanes; cugl views need whole bytes", d->bits,
                          d->lanes);
    if (dtype_size(*d) != itemsize)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the dtype has %lld bytes but the layout's itemsize is %lld; repack "
                          "the layout first (cugl_layout_repacked)",
                          (long long)dtype_size(*d), (long long)itemsize);
    return CUGL_OK;
}

cugl_status cugl__view_new(cugl_view **out, cugl_buffer *buffer, const cugl_layout *layout,
                            cugl_dtype dtype, bool readonly, const char *who)
{
    int64_t lo, hi;
    CUGL__TRY(cugl__layout_check(layout, who, &lo, &hi));
    CUGL__TRY(resolve_dtype(&dtype, layout->itemsize, who));
    if (hi >= lo && lo < 0)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the layout reaches before the start of the buffer (to element "
                          "offset %lld)",
                          (long long)lo);
    int64_t need = hi < lo ? 0 : (hi + 1) * layout->itemsize; /* fits: checked */
    if ((uint64_t)need > buffer->size)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the layout needs %lld bytes but the buffer has %zu", (long long)need,
                          buffer->size);
    cugl_view *v = calloc(1, sizeof *v);
    if (!v)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, who, "cannot allocate a view");
    cugl__ref_init(&v->ref);
    v->buffer = cugl_buffer_retain(buffer);
    v->layout = *layout;
    v->dtype = dtype;
    v->readonly = readonly;
    *out = v;
    return CUGL_OK;
}

cugl_status cugl__view_check(const cugl_view *v, const char *name, const char *who)
{
    if (!v)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "%s is NULL", name);
    if (v->buffer->closed)
        return cugl__fail(CUGL_ERROR_CLOSED, who, "the buffer of %s has been closed", name);
    return CUGL_OK;
}

CUGL_API cugl_status cugl_view_from_buffer(cugl_view **out, cugl_buffer *buffer,
                                           const cugl_layout *layout, cugl_dtype dtype,
                                           bool readonly)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = NULL;
    CUGL__TRY(cugl__buffer_check(buffer, __func__));
    CUGL__CHECK_NOT_NULL(layout);
    return cugl__view_new(out, buffer, layout, dtype, readonly, __func__);
}

CUGL_API cugl_status cugl_view_view(cugl_view **out, cugl_view *view, const cugl_layout *layout,
                                    cugl_dtype dtype)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = NULL;
    CUGL__TRY(cugl__view_check(view, "view", __func__));
    if (!layout)
        layout = &view->layout;
    bool untyped = dtype.code == 0 && dtype.bits == 0 && dtype.lanes == 0;
    if (untyped && layout->itemsize == view->layout.itemsize)
        dtype = view->dtype;
    return cugl__view_new(out, view->buffer, layout, dtype, view->readonly, __func__);
}

/* --- copies --- */

static void format_shape(char *buf, size_t size, const cugl_layout *l)
{
    int n = snprintf(buf, size, "(");
    for (int i = 0; i < l->ndim && (size_t)n < size; i++)
        n += snprintf(buf + n, size - (size_t)n, "%s%lld", i ? ", " : "", (long long)l->shape[i]);
    if ((size_t)n < size)
        snprintf(buf + n, size - (size_t)n, ")");
}

/* The bytes a view's elements occupy: [*begin, *end). */
static void byte_range(const cugl_view *v, uint64_t *begin, uint64_t *end)
{
    int64_t lo = 0, hi = -1;
    cugl_layout_offset_bounds(&v->layout, &lo, &hi);
    *begin = v->buffer->ptr + (uint64_t)(lo * v->layout.itemsize);
    *end = v->buffer->ptr + (uint64_t)((hi + 1) * v->layout.itemsize);
}

/* Elements enumerated to decide an overlap: past these the copy is refused
 * as if the byte ranges decided it. */
enum { OVERLAP_ENUMERATE_MAX = 1 << 20, OVERLAP_PROBE_MAX = 1 << 26 };

/* The first byte of every element of v, in `out` (count of them). */
static void element_starts(const cugl_view *v, uint64_t *out)
{
    const cugl_layout *l = &v->layout;
    int64_t idx[CUGL_LAYOUT_MAX_NDIM] = {0};
    int64_t offset = l->slice_offset;
    size_t n = 0;
    for (;;) {
        out[n++] = v->buffer->ptr + (uint64_t)(offset * l->itemsize);
        int k = l->ndim - 1;
        for (; k >= 0; k--) {
            offset += l->strides[k];
            if (++idx[k] < l->shape[k])
                break;
            offset -= l->strides[k] * l->shape[k];
            idx[k] = 0;
        }
        if (k < 0)
            return;
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/*
 * Whether an element of `a` shares a byte with an element of `b`, views
 * whose byte ranges overlap (the even and odd columns of one buffer do not
 * share an element). 1: they do, 0: they do not, -1: too many elements to
 * tell, which counts as overlapping.
 */
static int elements_overlap(const cugl_view *a, const cugl_view *b)
{
    int64_t na = cugl_layout_volume(&a->layout), nb = cugl_layout_volume(&b->layout);
    if (na > nb) {
        const cugl_view *t = a;
        a = b;
        b = t;
        int64_t tn = na;
        na = nb;
        nb = tn;
    }
    if (na > OVERLAP_ENUMERATE_MAX || nb > OVERLAP_PROBE_MAX)
        return -1;
    uint64_t *starts = malloc((size_t)na * sizeof *starts),
             *probes = malloc((size_t)nb * sizeof *probes);
    if (!starts || !probes) {
        free(starts);
        free(probes);
        return -1;
    }
    element_starts(a, starts);
    element_starts(b, probes);
    qsort(starts, (size_t)na, sizeof *starts, cmp_u64);
    uint64_t ia = (uint64_t)a->layout.itemsize, ib = (uint64_t)b->layout.itemsize;
    int found = 0;
    for (int64_t j = 0; j < nb && !found; j++) {
        /* The last element of a starting before b's element ends. */
        uint64_t p = probes[j], end = p + ib;
        size_t lo = 0, hi = (size_t)na;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (starts[mid] < end)
                lo = mid + 1;
            else
                hi = mid;
        }
        found = lo > 0 && starts[lo - 1] + ia > p;
    }
    free(starts);
    free(probes);
    return found;
}

/* The devices of a copy: views on one device take its stream; on two,
 * either's, and the other must be initialized too. */
static cugl_status check_devices(const cugl_buffer *sb, const cugl_buffer *db,
                                 const cugl_stream *stream, const char *who)
{
    if (sb->device_accessible && db->device_accessible && sb->device_id >= 0 &&
        db->device_id >= 0 && sb->device_id != db->device_id) {
        /* Two devices: the stream is either's; the other works too. */
        int here = stream->device->ordinal;
        if (here != sb->device_id && here != db->device_id)
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "the source is on device %d and the destination on device %d: "
                              "the stream must be one of theirs, not device %d's",
                              sb->device_id, db->device_id, here);
        int other = here == sb->device_id ? db->device_id : sb->device_id;
        cugl_device *o = NULL;
        if (cugl_device_get(&o, other) != CUGL_OK || !cugl_device_is_initialized(o))
            return cugl__fail(CUGL_ERROR_INVALID_STATE, who,
                              "the copy works on device %d too, which is not initialized; "
                              "call cugl_device_set_current() first",
                              other);
        return CUGL_OK;
    }
    int on = db->device_accessible && db->device_id >= 0   ? db->device_id
             : sb->device_accessible && sb->device_id >= 0 ? sb->device_id
                                                           : -1;
    if (on >= 0 && stream && on != stream->device->ordinal)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the stream is on device %d but the views are on device %d",
                          stream->device->ordinal, on);
    return CUGL_OK;
}

static cugl_status copy(cugl_view *dst, cugl_view *src, cugl_stream *stream,
                        const cugl_view_copy_desc *desc, const char *who)
{
    CUGL__TRY(cugl__view_check(dst, "dst", who));
    CUGL__TRY(cugl__view_check(src, "src", who));
    /* Host-to-host copies need no stream; given one, they wait for it. */
    bool host_only = !dst->buffer->device_accessible && !src->buffer->device_accessible;
    if (stream || !host_only)
        CUGL__TRY(cugl__stream_check(stream, who));
    cugl_view_copy_desc d = desc ? *desc : (cugl_view_copy_desc){0};
    if (d.blocking != CUGL_BLOCKING_DEFAULT && d.blocking != CUGL_BLOCKING_YES &&
        d.blocking != CUGL_BLOCKING_NO)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "blocking %d is not a cugl_blocking",
                          (int)d.blocking);
    if (dst->readonly)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "the destination view is read-only");
    const cugl_layout *dl = &dst->layout, *sl = &src->layout;
    bool same_shape = dl->ndim == sl->ndim;
    for (int i = 0; same_shape && i < dl->ndim; i++)
        same_shape = dl->shape[i] == sl->shape[i];
    if (!same_shape) {
        char a[256], b[256];
        format_shape(a, sizeof a, sl);
        format_shape(b, sizeof b, dl);
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "shapes differ: the source is %s, the destination %s (broadcast the "
                          "source with cugl_layout_broadcast_to)",
                          a, b);
    }
    bool typed = src->dtype.code != CUGL_DTYPE_OPAQUE && dst->dtype.code != CUGL_DTYPE_OPAQUE;
    if (dl->itemsize != sl->itemsize ||
        (typed && memcmp(&src->dtype, &dst->dtype, sizeof src->dtype) != 0))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "dtypes differ (code %u, %u bits x %u to code %u, %u bits x %u); a "
                          "copy does not convert",
                          src->dtype.code, src->dtype.bits, src->dtype.lanes, dst->dtype.code,
                          dst->dtype.bits, dst->dtype.lanes);
    if (!cugl_layout_is_unique(dl))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the destination layout maps several indices to one element (a "
                          "broadcast); a copy into it would be ambiguous");

    const cugl_buffer *sb = src->buffer, *db = dst->buffer;
    CUGL__TRY(check_devices(sb, db, stream, who));

    uint64_t s0, s1, d0, d1;
    byte_range(src, &s0, &s1);
    byte_range(dst, &d0, &d1);
    if (s0 < d1 && d0 < s1) {
        if (s0 == d0 && sb->ptr == db->ptr && cugl_layout_equal(sl, dl))
            return CUGL_OK; /* a view copied onto itself */
    }
    /* Overlapping byte ranges may still share no element (interleaved views). */
    if (s0 < d1 && d0 < s1 && elements_overlap(src, dst) != 0) {
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the source and destination overlap in memory (bytes 0x%llx-0x%llx "
                          "and 0x%llx-0x%llx): the copy would read what it already wrote; "
                          "copy through a temporary",
                          (unsigned long long)s0, (unsigned long long)s1,
                          (unsigned long long)d0, (unsigned long long)d1);
    }
    if (d.allocator && d.allocator->closed)
        return cugl__fail(CUGL_ERROR_CLOSED, who, "the allocator has been closed");
    if (d.allocator && !d.allocator->device_accessible)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the allocator's memory is not reachable from the device");

    cugl__copy_side ds = {.layout = *dl,
                          .base = db->ptr,
                          .device_accessible = db->device_accessible,
                          .device_id = db->device_id};
    cugl__copy_side ss = {.layout = *sl,
                          .base = sb->ptr,
                          .device_accessible = sb->device_accessible,
                          .device_id = sb->device_id};
    return cugl__strided_copy(&ds, &ss, stream, d.allocator, d.blocking, who);
}

CUGL_API cugl_status cugl_view_copy_from(cugl_view *dst, cugl_view *src, cugl_stream *stream,
                                         const cugl_view_copy_desc *desc)
{
    return copy(dst, src, stream, desc, __func__);
}

CUGL_API cugl_status cugl_view_copy_to(cugl_view *src, cugl_view *dst, cugl_stream *stream,
                                       const cugl_view_copy_desc *desc)
{
    return copy(dst, src, stream, desc, __func__);
}

/* --- attributes and lifetime --- */

CUGL_API uint64_t cugl_view_ptr(const cugl_view *view)
{
    if (!view || view->buffer->closed)
        return 0;
    return view->buffer->ptr + (uint64_t)(view->layout.slice_offset * view->layout.itemsize);
}

CUGL_API int cugl_view_device_id(const cugl_view *view)
{
    return view ? view->buffer->device_id : -1;
}

CUGL_API bool cugl_view_is_device_accessible(const cugl_view *view)
{
    return view && view->buffer->device_accessible;
}

CUGL_API bool cugl_view_is_host_accessible(const cugl_view *view)
{
    return view && view->buffer->host_accessible;
}

CUGL_API bool cugl_view_readonly(const cugl_view *view) { return view && view->readonly; }

CUGL_API cugl_dtype cugl_view_dtype(const cugl_view *view)
{
    return view ? view->dtype : (cugl_dtype){0, 0, 0};
}

CUGL_API const cugl_layout *cugl_view_layout(const cugl_view *view)
{
    return view ? &view->layout : NULL;
}

CUGL_API int cugl_view_ndim(const cugl_view *view) { return view ? view->layout.ndim : 0; }

CUGL_API const int64_t *cugl_view_shape(const cugl_view *view)
{
    return view ? view->layout.shape : NULL;
}

CUGL_API const int64_t *cugl_view_strides(const cugl_view *view)
{
    return view ? view->layout.strides : NULL;
}

CUGL_API cugl_buffer *cugl_view_buffer(const cugl_view *view)
{
    return view ? view->buffer : NULL;
}

CUGL_API cugl_view *cugl_view_retain(cugl_view *view)
{
    if (view)
        cugl__ref_inc(&view->ref);
    return view;
}

CUGL_API void cugl_view_release(cugl_view *view)
{
    if (!view || !cugl__ref_dec(&view->ref))
        return;
    cugl_buffer_release(view->buffer);
    free(view);
}
