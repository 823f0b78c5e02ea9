/*
 * dlpack.c - DLPack, both ways: buffers and views exported as
 * DLManagedTensor (and the versioned tensor of DLPack 1.x), tensors of
 * other libraries imported as views over buffers cugl does not own.
 */
#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core_internal.h"

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

/* Where a buffer's memory is, as DLPack names it. */
static DLDevice device_of(const cugl_buffer *b)
{
    if (b->managed)
        return (DLDevice){kDLCUDAManaged, b->device_id >= 0 ? b->device_id : 0};
    if (b->device_accessible && b->host_accessible)
        return (DLDevice){kDLCUDAHost, 0};
    if (b->device_accessible)
        return (DLDevice){kDLCUDA, b->device_id};
    return (DLDevice){kDLCPU, 0};
}

/* --- Buffers: bytes, a one-dimensional uint8 tensor --- */

typedef struct buffer_export {
    DLManagedTensor tensor;
    int64_t shape[1];
} buffer_export;

static void delete_buffer_export(DLManagedTensor *self)
{
    if (!self)
        return;
    cugl_buffer_release(self->manager_ctx);
    free(self);
}

CUGL_API cugl_status cugl_buffer_to_dlpack(struct DLManagedTensor **out, cugl_buffer *buffer)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = NULL;
    CUGL__TRY(cugl__buffer_check(buffer, __func__));
    buffer_export *e = calloc(1, sizeof *e);
    if (!e)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, __func__, "cannot allocate a DLPack tensor");
    e->shape[0] = (int64_t)buffer->size;
    e->tensor.dl_tensor = (DLTensor){
        .data = (void *)(uintptr_t)buffer->ptr,
        .device = device_of(buffer),
        .ndim = 1,
        .dtype = {.code = kDLUInt, .bits = 8, .lanes = 1},
        .shape = e->shape,
        .strides = NULL,
        .byte_offset = 0,
    };
    e->tensor.manager_ctx = cugl_buffer_retain(buffer);
    e->tensor.deleter = delete_buffer_export;
    *out = &e->tensor;
    return CUGL_OK;
}

/* --- Views: import --- */

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

/* Where the tensor's memory is, as cugl's buffers say it: on a device
 * (its ordinal, or -1 where any device reaches it), on the host, both. */
static cugl_status memory_of(const DLTensor *t, cugl__memory_access *m, const char *who)
{
    *m = (cugl__memory_access){-1, false, false, false};
    switch ((int)t->device.device_type) {
    case kDLCPU:
        m->host = true;
        return CUGL_OK;
    case kDLCUDA:
        m->device = true;
        m->device_id = t->device.device_id;
        return CUGL_OK;
    case kDLCUDAHost:
        m->device = m->host = true;
        return CUGL_OK;
    case kDLCUDAManaged:
        m->device = m->host = m->managed = true;
        m->device_id = t->device.device_id;
        return CUGL_OK;
    default:
        return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who,
                          "DLPack device type %d is not supported (kDLCPU, kDLCUDA, "
                          "kDLCUDAHost and kDLCUDAManaged are)",
                          (int)t->device.device_type);
    }
}

/* A device that does not exist is refused now, not at the first copy. */
static cugl_status check_device(int device_id, const char *who)
{
    int count = 0;
    if (!cugl__driver_available() || !cugl__driver_has_devices() ||
        cugl__cu.cuDeviceGetCount(&count) != CUDA_SUCCESS)
        count = 0;
    if (count == 0)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the tensor is on CUDA device %d; this machine has no CUDA "
                          "device",
                          device_id);
    if (device_id < 0 || device_id >= count)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the tensor is on CUDA device %d; this machine has %d (0 to %d)",
                          device_id, count, count - 1);
    return CUGL_OK;
}

/* The bytes the tensor's elements span: exactly them, so that negative
 * strides work (the buffer starts at the lowest element, which the slice
 * offset of `l` steps over). */
static cugl_status span_of(const DLTensor *t, cugl_layout *l, int64_t itemsize, uint64_t *start,
                           size_t *size, const char *who)
{
    int64_t lo = 0, hi = -1;
    CUGL__TRY(cugl__layout_check(l, who, &lo, &hi));
    if (hi >= lo && !t->data)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the tensor's data is NULL, yet it has %lld elements",
                          (long long)(hi - lo + 1));
    uint64_t data = (uint64_t)(uintptr_t)t->data;
    if (t->byte_offset > UINT64_MAX - data)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "data 0x%llx + byte_offset %llu wraps around the address space",
                          (unsigned long long)data, (unsigned long long)t->byte_offset);
    uint64_t base = data + t->byte_offset;
    /* The lowest element may lie before base (negative strides), the
     * highest after it; both must stay inside the address space. */
    if (hi >= lo && ((lo < 0 && (uint64_t)(-lo) * (uint64_t)itemsize > base) ||
                     (hi >= 0 && (uint64_t)(hi + 1) * (uint64_t)itemsize > UINT64_MAX - base)))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the tensor's elements at 0x%llx run past the end of the address "
                          "space",
                          (unsigned long long)base);
    *start = hi < lo ? base : base + (uint64_t)(lo * itemsize);
    *size = hi < lo ? 0 : (size_t)((hi - lo + 1) * itemsize);
    l->slice_offset = hi < lo ? 0 : -lo;
    return CUGL_OK;
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
    cugl__memory_access m;
    CUGL__TRY(memory_of(t, &m, who));
    if (t->dtype.bits == 0 || t->dtype.bits % 8 != 0 || t->dtype.lanes == 0)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the tensor's dtype has %u bits x %u lanes; cugl views need whole "
                          "bytes",
                          t->dtype.bits, t->dtype.lanes);
    cugl_dtype dtype = {t->dtype.code, t->dtype.bits, t->dtype.lanes};
    int64_t itemsize = (int64_t)(dtype.bits / 8) * dtype.lanes;
    cugl_layout l;
    CUGL__TRY(cugl__layout_init(&l, t->ndim, t->shape, t->strides, itemsize, who));

    if (m.device && (int)t->device.device_type != kDLCUDAHost && !d.no_sync) {
        if (!d.consumer_stream)
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "consumer_stream is NULL: a CUDA tensor needs the stream that "
                              "will use it (or no_sync when you order the work yourself)");
        CUGL__TRY(cugl__stream_check(d.consumer_stream, who));
        if (d.producer_stream)
            CUGL__TRY(cugl__stream_check(d.producer_stream, who));
        if (d.producer_stream && !cugl__same_stream(d.producer_stream, d.consumer_stream))
            CUGL__TRY(cugl_stream_wait_stream(d.consumer_stream, d.producer_stream));
    }

    if (m.device_id >= 0 || (m.device && !m.host))
        CUGL__TRY(check_device(m.device_id, who));
    uint64_t start = 0;
    size_t size = 0;
    CUGL__TRY(span_of(t, &l, itemsize, &start, &size, who));

    cugl_buffer *b = NULL;
    CUGL__TRY(cugl__buffer_wrap(&b, start, size, &m, (cugl__owner){0}, who));
    cugl_status st = cugl__view_new(out, b, &l, dtype, readonly, who);
    if (st == CUGL_OK) {
        /* Only now does the buffer take the tensor: on failure it stays the caller's. */
        b->owner = (cugl__owner){.owner = owner, .release = owner_release};
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

/* --- Views: export --- */

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
    int n = v->layout.ndim;
    memcpy(dims, v->layout.shape, (size_t)n * sizeof *dims);
    memcpy(dims + n, v->layout.strides, (size_t)n * sizeof *dims);
    *t = (DLTensor){
        .data = (void *)(uintptr_t)b->ptr,
        .device = device_of(b),
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
    CUGL__TRY(cugl__view_check(view, "view", __func__));
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
    CUGL__TRY(cugl__view_check(view, "view", __func__));
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
