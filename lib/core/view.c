/*
 * view.c - strided memory views: creation from buffers and DLPack, export
 * to DLPack, and the checks around copies (copy.c does the copying).
 */
#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* DLPack 1.x's versioned tensor, for headers older than 1.0 (Debian 12 has
 * 0.6). The layout is the one the DLPack 1.0 specification fixes. */
#ifndef DLPACK_MAJOR_VERSION
typedef struct {
    uint32_t major;
    uint32_t minor;
} DLPackVersion;

struct DLManagedTensorVersioned {
    DLPackVersion version;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensorVersioned *self);
    uint64_t flags;
    DLTensor dl_tensor;
};
#define DLPACK_FLAG_BITMASK_READ_ONLY (1ull << 0)
#endif
enum { DLPACK_ABI_MAJOR = 1, DLPACK_ABI_MINOR = 0 };

struct cugl_view {
    cugl__ref ref;
    cugl_buffer *buffer; /* a reference */
    cugl_layout layout;
    cugl_dtype dtype;
    bool readonly;
};

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

static cugl_status view_new(cugl_view **out, cugl_buffer *buffer, const cugl_layout *layout,
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

static cugl_status view_check(const cugl_view *v, const char *name, const char *who)
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
    return view_new(out, buffer, layout, dtype, readonly, __func__);
}

CUGL_API cugl_status cugl_view_view(cugl_view **out, cugl_view *view, const cugl_layout *layout,
                                    cugl_dtype dtype)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = NULL;
    CUGL__TRY(view_check(view, "view", __func__));
    if (!layout)
        layout = &view->layout;
    bool untyped = dtype.code == 0 && dtype.bits == 0 && dtype.lanes == 0;
    if (untyped && layout->itemsize == view->layout.itemsize)
        dtype = view->dtype;
    return view_new(out, view->buffer, layout, dtype, view->readonly, __func__);
}

/* --- DLPack import --- */

static void release_tensor(void *owner)
{
    DLManagedTensor *t = owner;
    if (t->deleter)
        t->deleter(t);
}

static void release_versioned(void *owner)
{
    struct DLManagedTensorVersioned *t = owner;
    if (t->deleter)
        t->deleter(t);
}

static cugl_status import(cugl_view **out, const DLTensor *t, bool readonly, void *owner,
                          void (*owner_release)(void *), const cugl_dlpack_import_desc *desc,
                          const char *who)
{
    cugl_dlpack_import_desc d = desc ? *desc : (cugl_dlpack_import_desc){0};
    if (t->ndim < 0 || t->ndim > CUGL_LAYOUT_MAX_NDIM)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the tensor has %d dimensions; cugl handles 0 to %d", (int)t->ndim,
                          CUGL_LAYOUT_MAX_NDIM);
    if (t->ndim > 0 && !t->shape)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "the tensor's shape is NULL");
    bool dev = false, host = false, managed = false;
    int device_id = -1;
    switch ((int)t->device.device_type) {
    case kDLCPU:
        host = true;
        break;
    case kDLCUDA:
        dev = true;
        device_id = t->device.device_id;
        break;
    case kDLCUDAHost:
        dev = host = true;
        break;
    case kDLCUDAManaged:
        dev = host = managed = true;
        device_id = t->device.device_id;
        break;
    default:
        return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who,
                          "DLPack device type %d is not supported (kDLCPU, kDLCUDA, "
                          "kDLCUDAHost and kDLCUDAManaged are)",
                          (int)t->device.device_type);
    }
    if (t->dtype.bits == 0 || t->dtype.bits % 8 != 0 || t->dtype.lanes == 0)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the tensor's dtype has %u bits x %u lanes; cugl views need whole "
                          "bytes",
                          t->dtype.bits, t->dtype.lanes);
    cugl_dtype dtype = {t->dtype.code, t->dtype.bits, t->dtype.lanes};
    int64_t itemsize = dtype_size(dtype);
    cugl_layout l;
    CUGL__TRY(cugl__layout_init(&l, t->ndim, t->shape, t->strides, itemsize, who));

    if (dev && (int)t->device.device_type != kDLCUDAHost && !d.no_sync) {
        if (!d.consumer_stream)
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "consumer_stream is NULL: a CUDA tensor needs the stream that "
                              "will use it (or no_sync when you order the work yourself)");
        CUGL__TRY(cugl__stream_check(d.consumer_stream, who));
        if (d.producer_stream && d.producer_stream->handle != d.consumer_stream->handle)
            CUGL__TRY(cugl_stream_wait_stream(d.consumer_stream, d.producer_stream));
    }

    /* The buffer spans exactly the elements, so that negative strides work:
     * it starts at the lowest element, which the slice offset steps over. */
    int64_t lo = 0, hi = -1;
    CUGL__TRY(cugl__layout_check(&l, who, &lo, &hi));
    uint64_t base = (uint64_t)(uintptr_t)t->data + t->byte_offset;
    uint64_t start = hi < lo ? base : base + (uint64_t)(lo * itemsize);
    size_t size = hi < lo ? 0 : (size_t)((hi - lo + 1) * itemsize);
    l.slice_offset = hi < lo ? 0 : -lo;

    cugl_buffer *b = calloc(1, sizeof *b);
    if (!b)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, who, "cannot allocate a buffer");
    cugl__ref_init(&b->ref);
    b->ptr = start;
    b->size = size;
    b->device_id = device_id;
    b->device_accessible = dev;
    b->host_accessible = host;
    b->managed = managed;
    cugl_status st = view_new(out, b, &l, dtype, readonly, who);
    if (st == CUGL_OK) {
        /* Only now does the buffer take the tensor: on failure it stays the caller's. */
        b->owner = owner;
        b->owner_release = owner_release;
    }
    cugl_buffer_release(b); /* the view holds it */
    return st;
}

CUGL_API cugl_status cugl_view_from_dlpack(cugl_view **out, struct DLManagedTensor *tensor,
                                           const cugl_dlpack_import_desc *desc)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = NULL;
    CUGL__CHECK_NOT_NULL(tensor);
    return import(out, &tensor->dl_tensor, desc && desc->readonly, tensor, release_tensor, desc,
                  __func__);
}

CUGL_API cugl_status cugl_view_from_dlpack_versioned(cugl_view **out,
                                                     struct DLManagedTensorVersioned *tensor,
                                                     const cugl_dlpack_import_desc *desc)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = NULL;
    CUGL__CHECK_NOT_NULL(tensor);
    if (tensor->version.major != DLPACK_ABI_MAJOR)
        return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, __func__,
                          "the tensor is DLPack %u.%u; cugl reads major version %d",
                          tensor->version.major, tensor->version.minor, DLPACK_ABI_MAJOR);
    bool readonly = (desc && desc->readonly) || (tensor->flags & DLPACK_FLAG_BITMASK_READ_ONLY);
    return import(out, &tensor->dl_tensor, readonly, tensor, release_versioned, desc, __func__);
}

/* --- DLPack export --- */

typedef struct exported {
    DLManagedTensor tensor;
    int64_t dims[];
} exported;

typedef struct exported_versioned {
    struct DLManagedTensorVersioned tensor;
    int64_t dims[];
} exported_versioned;

static void delete_exported(DLManagedTensor *self)
{
    if (!self)
        return;
    cugl_view_release(self->manager_ctx);
    free(self);
}

static void delete_exported_versioned(struct DLManagedTensorVersioned *self)
{
    if (!self)
        return;
    cugl_view_release(self->manager_ctx);
    free(self);
}

/* Fill a DLTensor describing `v`; shape and strides go to `dims`. */
static cugl_status describe(DLTensor *t, int64_t *dims, const cugl_view *v, const char *who)
{
    if (v->dtype.code == CUGL_DTYPE_OPAQUE)
        return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who,
                          "the view is untyped; DLPack needs a dtype (make one with "
                          "cugl_view_view)");
    const cugl_buffer *b = v->buffer;
    DLDevice device = {kDLCPU, 0};
    if (b->managed)
        device = (DLDevice){kDLCUDAManaged, b->device_id >= 0 ? b->device_id : 0};
    else if (b->device_accessible && b->host_accessible)
        device.device_type = kDLCUDAHost;
    else if (b->device_accessible)
        device = (DLDevice){kDLCUDA, b->device_id};
    int n = v->layout.ndim;
    memcpy(dims, v->layout.shape, (size_t)n * sizeof *dims);
    memcpy(dims + n, v->layout.strides, (size_t)n * sizeof *dims);
    *t = (DLTensor){
        .data = (void *)(uintptr_t)b->ptr,
        .device = device,
        .ndim = n,
        .dtype = {.code = v->dtype.code, .bits = v->dtype.bits, .lanes = v->dtype.lanes},
        .shape = dims,
        .strides = dims + n,
        .byte_offset = (uint64_t)(v->layout.slice_offset * v->layout.itemsize),
    };
    return CUGL_OK;
}

/*
 * Allocate a tensor struct of `header` bytes whose DLTensor sits at byte
 * `tensor_at` and whose shape and strides follow the struct, describing the
 * view. NULL (with the failure reported) when it cannot.
 */
static void *export_new(cugl_view *view, size_t header, size_t tensor_at, const char *who)
{
    size_t n = (size_t)view->layout.ndim;
    char *e = calloc(1, header + 2 * n * sizeof(int64_t));
    if (!e) {
        cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, who, "cannot allocate a DLPack tensor");
        return NULL;
    }
    if (describe((DLTensor *)(e + tensor_at), (int64_t *)(e + header), view, who) != CUGL_OK) {
        free(e);
        return NULL;
    }
    return e;
}

CUGL_API cugl_status cugl_view_to_dlpack(struct DLManagedTensor **out, cugl_view *view)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = NULL;
    CUGL__TRY(view_check(view, "view", __func__));
    if (view->readonly)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "the view is read-only and an unversioned DLPack tensor cannot say "
                          "so; use cugl_view_to_dlpack_versioned");
    exported *e = export_new(view, offsetof(exported, dims),
                             offsetof(exported, tensor.dl_tensor), __func__);
    if (!e)
        return cugl_last_status();
    e->tensor.manager_ctx = cugl_view_retain(view);
    e->tensor.deleter = delete_exported;
    *out = &e->tensor;
    return CUGL_OK;
}

CUGL_API cugl_status cugl_view_to_dlpack_versioned(struct DLManagedTensorVersioned **out,
                                                   cugl_view *view)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = NULL;
    CUGL__TRY(view_check(view, "view", __func__));
    exported_versioned *e = export_new(view, offsetof(exported_versioned, dims),
                                       offsetof(exported_versioned, tensor.dl_tensor), __func__);
    if (!e)
        return cugl_last_status();
    e->tensor.version = (DLPackVersion){DLPACK_ABI_MAJOR, DLPACK_ABI_MINOR};
    e->tensor.flags = view->readonly ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
    e->tensor.manager_ctx = cugl_view_retain(view);
    e->tensor.deleter = delete_exported_versioned;
    *out = &e->tensor;
    return CUGL_OK;
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

static cugl_status copy(cugl_view *dst, cugl_view *src, cugl_stream *stream,
                        const cugl_view_copy_desc *desc, const char *who)
{
    CUGL__TRY(view_check(dst, "dst", who));
    CUGL__TRY(view_check(src, "src", who));
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
    if (sb->device_accessible && db->device_accessible && sb->device_id >= 0 &&
        db->device_id >= 0 && sb->device_id != db->device_id)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the views are on different devices (%d and %d)", sb->device_id,
                          db->device_id);
    int on = db->device_accessible && db->device_id >= 0   ? db->device_id
             : sb->device_accessible && sb->device_id >= 0 ? sb->device_id
                                                           : -1;
    if (on >= 0 && stream && on != stream->device->ordinal)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the stream is on device %d but the views are on device %d",
                          stream->device->ordinal, on);

    uint64_t s0, s1, d0, d1;
    byte_range(src, &s0, &s1);
    byte_range(dst, &d0, &d1);
    if (s0 < d1 && d0 < s1) {
        if (s0 == d0 && sb->ptr == db->ptr && cugl_layout_equal(sl, dl))
            return CUGL_OK; /* a view copied onto itself */
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the source and destination overlap in memory (bytes 0x%llx-0x%llx "
                          "and 0x%llx-0x%llx): the copy would read what it already wrote; "
                          "copy through a temporary",
                          (unsigned long long)s0, (unsigned long long)s1,
                          (unsigned long long)d0, (unsigned long long)d1);
    }
    if (d.allocator && !d.allocator->device_accessible)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the allocator's memory is not reachable from the device");

    cugl__copy_side ds = {.layout = *dl, .base = db->ptr, .device_accessible = db->device_accessible};
    cugl__copy_side ss = {.layout = *sl, .base = sb->ptr, .device_accessible = sb->device_accessible};
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
