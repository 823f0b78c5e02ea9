/*
 * buffer.c - buffers: linear memory with an owner, copies, fills, IPC and
 * file-descriptor export (DLPack: dlpack.c).
 */
#include <stdlib.h>
#include <string.h>

#include "core_internal.h"

cugl_status cugl__buffer_check(const cugl_buffer *buffer, const char *who)
{
    if (!buffer)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "buffer is NULL");
    if (buffer->closed)
        return cugl__fail(CUGL_ERROR_CLOSED, who, "the buffer has been closed");
    return CUGL_OK;
}

/* What the driver knows of a pointer it did not allocate through us. */
static cugl_status query_pointer(cugl__memory_access *a, uint64_t ptr, const char *who)
{
    *a = (cugl__memory_access){.device_id = -1};
    if (ptr == 0)
        return CUGL_OK;
    if (!cugl__driver_available()) {
        /* Without a driver there is no device memory: this is host memory. */
        a->host = true;
        return CUGL_OK;
    }
    CUmemorytype type = 0;
    int ordinal = -1;
    unsigned managed = 0;
    CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                   CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                   CU_POINTER_ATTRIBUTE_IS_MANAGED};
    void *values[] = {&type, &ordinal, &managed};
    /* Memory the driver does not know reads as type 0, not as an error. */
    CUGL__TRY(CUGL_CU_AS(who, cuPointerGetAttributes, 3, attrs, values, (CUdeviceptr)ptr));
    a->managed = managed != 0;
    if (a->managed) {
        a->device = a->host = true;
        a->device_id = ordinal;
    } else if (type == CU_MEMORYTYPE_DEVICE) {
        a->device = true;
        a->device_id = ordinal;
    } else if (type == CU_MEMORYTYPE_HOST) {
        /* Pinned or registered host memory, reachable from the device. */
        a->device = a->host = true;
    } else {
        a->host = true;
    }
    return CUGL_OK;
}

static cugl_buffer *buffer_alloc(uint64_t ptr, size_t size)
{
    cugl_buffer *b = calloc(1, sizeof *b);
    if (b) {
        cugl__ref_init(&b->ref);
        b->ptr = ptr;
        b->size = size;
    }
    return b;
}

cugl_status cugl__buffer_new(cugl_buffer **out, uint64_t ptr, size_t size,
                             cugl_memory_resource *mr, cugl_stream *stream, const char *who)
{
    cugl_buffer *b = buffer_alloc(ptr, size);
    if (!b)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, who, "cannot allocate a buffer");
    b->mr = cugl_memory_resource_retain(mr);
    b->device_id = mr->device_id;
    b->device_accessible = mr->device_accessible;
    b->host_accessible = mr->host_accessible;
    b->managed = mr->managed;
    b->dealloc_stream = cugl_stream_retain(stream);
    *out = b;
    return CUGL_OK;
}

cugl_status cugl__buffer_wrap(cugl_buffer **out, uint64_t ptr, size_t size,
                              const cugl__memory_access *access, cugl__owner owner,
                              const char *who)
{
    cugl__memory_access queried;
    if (!access) {
        CUGL__TRY(query_pointer(&queried, ptr, who));
        access = &queried;
    }
    cugl_buffer *b = buffer_alloc(ptr, size);
    if (!b)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, who, "cannot allocate a buffer");
    b->device_id = access->device_id;
    b->device_accessible = access->device;
    b->host_accessible = access->host;
    b->managed = access->managed;
    b->owner = owner;
    *out = b;
    return CUGL_OK;
}

CUGL_API cugl_status cugl_buffer_from_handle(cugl_buffer **out, uint64_t ptr, size_t size,
                                             cugl_memory_resource *mr)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = NULL;
    CUGL__CHECK_ARG(ptr != 0 || size == 0, "ptr is 0 but size is %zu", size);
    CUGL__CHECK_ARG(size <= UINT64_MAX - ptr,
                    "ptr 0x%llx + size %zu wraps around the address space",
                    (unsigned long long)ptr, size);
    if (mr && mr->closed)
        return cugl__fail(CUGL_ERROR_CLOSED, __func__, "the memory resource has been closed");
    if (mr)
        return cugl__buffer_new(out, ptr, size, mr, NULL, __func__);
    return cugl__buffer_wrap(out, ptr, size, NULL, (cugl__owner){0}, __func__);
}

static cugl_status copy(cugl_buffer *dst, cugl_buffer *src, cugl_stream *stream,
                        const char *who)
{
    if (src->size != dst->size)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "buffer sizes differ: src has %zu bytes, dst has %zu", src->size,
                          dst->size);
    if (src->size == 0)
        return CUGL_OK;
    /* The stream's device does the copy, whatever the buffers' devices
     * (peer access, or staging by the driver). */
    CUGL__TRY(cugl__device_activate(stream->device, who));
    return CUGL_CU_AS(who, cuMemcpyAsync, (CUdeviceptr)dst->ptr, (CUdeviceptr)src->ptr,
                      src->size, stream->handle);
}

CUGL_API cugl_status cugl_buffer_copy_to(cugl_buffer **dst, cugl_buffer *src,
                                         cugl_stream *stream)
{
    CUGL__CHECK_NOT_NULL(dst);
    CUGL__CHECK_NOT_NULL(src);
    CUGL__TRY(cugl__buffer_check(src, __func__));
    CUGL__TRY(cugl__stream_check(stream, __func__));
    if (*dst) {
        CUGL__TRY(cugl__buffer_check(*dst, __func__));
        return copy(*dst, src, stream, __func__);
    }
    if (!src->mr)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "*dst is NULL and the source buffer has no memory resource to "
                          "allocate one from; pass a destination buffer");
    if (src->mr->closed)
        return cugl__fail(CUGL_ERROR_CLOSED, __func__,
                          "*dst is NULL and the source buffer's memory resource, which would "
                          "allocate it, has been closed");
    cugl_buffer *fresh = NULL;
    CUGL__TRY(cugl_memory_resource_allocate(&fresh, src->mr, src->size, stream));
    cugl_status st = copy(fresh, src, stream, __func__);
    if (st != CUGL_OK) {
        cugl_buffer_release(fresh);
        return st;
    }
    *dst = fresh;
    return CUGL_OK;
}

CUGL_API cugl_status cugl_buffer_copy_from(cugl_buffer *dst, cugl_buffer *src,
                                           cugl_stream *stream)
{
    CUGL__CHECK_NOT_NULL(dst);
    CUGL__CHECK_NOT_NULL(src);
    CUGL__TRY(cugl__buffer_check(dst, __func__));
    CUGL__TRY(cugl__buffer_check(src, __func__));
    CUGL__TRY(cugl__stream_check(stream, __func__));
    return copy(dst, src, stream, __func__);
}

CUGL_API cugl_status cugl_buffer_fill(cugl_buffer *buffer, const void *value,
                                      size_t value_size, cugl_stream *stream)
{
    CUGL__TRY(cugl__buffer_check(buffer, __func__));
    CUGL__CHECK_NOT_NULL(value);
    CUGL__TRY(cugl__stream_check(stream, __func__));
    CUGL__CHECK_ARG(value_size == 1 || value_size == 2 || value_size == 4,
                    "value_size is %zu; the pattern must be 1, 2 or 4 bytes", value_size);
    CUGL__CHECK_ARG(buffer->size % value_size == 0,
                    "the buffer's size (%zu bytes) is not divisible by the pattern's (%zu)",
                    buffer->size, value_size);
    if (!buffer->device_accessible)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "the buffer is host memory the device cannot reach; fill it on the "
                          "host");
    if (buffer->size == 0)
        return CUGL_OK;
    /* The stream's device does the work, as in a copy. */
    CUGL__TRY(cugl__device_activate(stream->device, __func__));
    CUdeviceptr p = (CUdeviceptr)buffer->ptr;
    size_t n = buffer->size / value_size;
    if (value_size == 1)
        return CUGL_CU(cuMemsetD8Async, p, *(const uint8_t *)value, n, stream->handle);
    if (value_size == 2) {
        uint16_t v;
        memcpy(&v, value, 2);
        return CUGL_CU(cuMemsetD16Async, p, v, n, stream->handle);
    }
    uint32_t v;
    memcpy(&v, value, 4);
    return CUGL_CU(cuMemsetD32Async, p, v, n, stream->handle);
}

CUGL_API uint64_t cugl_buffer_handle(const cugl_buffer *buffer)
{
    return buffer ? buffer->ptr : 0;
}

CUGL_API size_t cugl_buffer_size(const cugl_buffer *buffer) { return buffer ? buffer->size : 0; }

CUGL_API int cugl_buffer_device_id(const cugl_buffer *buffer)
{
    return buffer ? buffer->device_id : -1;
}

CUGL_API cugl_memory_resource *cugl_buffer_memory_resource(const cugl_buffer *buffer)
{
    return buffer ? buffer->mr : NULL;
}

CUGL_API bool cugl_buffer_is_device_accessible(const cugl_buffer *buffer)
{
    return buffer && buffer->device_accessible;
}

CUGL_API bool cugl_buffer_is_host_accessible(const cugl_buffer *buffer)
{
    return buffer && buffer->host_accessible;
}

CUGL_API bool cugl_buffer_is_managed(const cugl_buffer *buffer)
{
    return buffer && buffer->managed;
}

CUGL_API cugl_status cugl_buffer_set_deallocation_stream(cugl_buffer *buffer,
                                                         cugl_stream *stream)
{
    CUGL__TRY(cugl__buffer_check(buffer, __func__));
    CUGL__TRY(cugl__stream_check(stream, __func__));
    cugl_stream_retain(stream);
    cugl_stream_release(buffer->dealloc_stream);
    buffer->dealloc_stream = stream;
    return CUGL_OK;
}

/* FNV-1a over the driver's bytes, from a basis of cugl's own: a descriptor
 * damaged on its way (cut, overwritten) is refused before the driver, which
 * crashes on some, sees it. Not a defence against forgery. */
static uint64_t ipc_check(const cugl_buffer_ipc_descriptor *d)
{
    uint64_t h = 0xcb1a9e5d0c3f6a27u;
    for (size_t i = 0; i < sizeof d->data; i++)
        h = (h ^ d->data[i]) * 0x100000001b3u;
    return h;
}

CUGL_API cugl_status cugl_buffer_ipc_export(cugl_buffer *buffer,
                                            cugl_buffer_ipc_descriptor *descriptor)
{
    CUGL__TRY(cugl__buffer_check(buffer, __func__));
    CUGL__CHECK_NOT_NULL(descriptor);
    if (!buffer->mr || !buffer->mr->ipc || buffer->mr->imported)
        return cugl__fail(CUGL_ERROR_INVALID_STATE, __func__,
                          "the buffer's memory resource is not IPC-enabled (allocate from a "
                          "device memory resource created with ipc = true)");
    CUGL__CHECK_ARG(buffer->size > 0, "an empty buffer has no memory to share");
    /* Zeroed: the driver writes fewer bytes than it reserves, and the rest
     * would carry this process's stack to the other. */
    CUmemPoolPtrExportData data = {0};
    _Static_assert(sizeof data.reserved == sizeof descriptor->data, "IPC descriptor size");
    CUGL__TRY(CUGL_CU(cuMemPoolExportPointer, &data, (CUdeviceptr)buffer->ptr));
    memset(descriptor, 0, sizeof *descriptor);
    memcpy(descriptor->data, data.reserved, sizeof descriptor->data);
    descriptor->size = buffer->size;
    descriptor->check = ipc_check(descriptor);
    return CUGL_OK;
}

CUGL_API cugl_status cugl_buffer_ipc_import(cugl_buffer **out, cugl_memory_resource *mr,
                                            const cugl_buffer_ipc_descriptor *descriptor,
                                            cugl_stream *stream)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = NULL;
    CUGL__CHECK_NOT_NULL(mr);
    CUGL__CHECK_NOT_NULL(descriptor);
    if (mr->closed)
        return cugl__fail(CUGL_ERROR_CLOSED, __func__, "the memory resource has been closed");
    CUGL__CHECK_ARG(mr->imported, "mr is not a pool imported with "
                                  "cugl_device_memory_resource_import_fd");
    CUGL__TRY(cugl__stream_check(stream, __func__));
    CUGL__CHECK_ARG(descriptor->size > 0, "the descriptor's size is 0");
    CUGL__CHECK_ARG(descriptor->check == ipc_check(descriptor),
                    "the descriptor is damaged: its data does not match its check (pass it "
                    "whole, as cugl_buffer_ipc_export wrote it)");
    CUGL__TRY(cugl__device_activate(mr->device, __func__));

    CUmemPoolPtrExportData data;
    memcpy(data.reserved, descriptor->data, sizeof data.reserved);
    CUdeviceptr ptr = 0;
    CUGL__TRY(CUGL_CU(cuMemPoolImportPointer, &ptr, mr->pool, &data));
    CUdeviceptr base = 0;
    size_t extent = 0;
    cugl_status st = CUGL_CU(cuMemGetAddressRange, &base, &extent, ptr);
    if (st == CUGL_OK && descriptor->size > extent - (size_t)(ptr - base))
        st = cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                        "the descriptor claims %llu bytes but the shared allocation holds "
                        "%zu from that pointer",
                        (unsigned long long)descriptor->size, extent - (size_t)(ptr - base));
    if (st == CUGL_OK)
        st = cugl__buffer_new(out, ptr, (size_t)descriptor->size, mr, stream, __func__);
    if (st != CUGL_OK)
        cugl__cu.cuMemFreeAsync(ptr, stream->handle);
    return st;
}

CUGL_API cugl_status cugl_buffer_export_fd(cugl_buffer *buffer, int *fd,
                                           size_t *allocation_size)
{
    if (fd)
        *fd = -1;
    if (allocation_size)
        *allocation_size = 0;
    CUGL__TRY(cugl__buffer_check(buffer, __func__));
    CUGL__CHECK_NOT_NULL(fd);
    if (!buffer->mr || buffer->mr->kind != CUGL_MEMORY_EXPORTABLE)
        return cugl__fail(CUGL_ERROR_INVALID_STATE, __func__,
                          "the buffer does not come from an exportable memory resource "
                          "(cugl_exportable_memory_resource_create)");
    CUGL__CHECK_ARG(buffer->size > 0, "an empty buffer has no memory to export");
    CUmemGenericAllocationHandle handle;
    CUGL__TRY(CUGL_CU(cuMemRetainAllocationHandle, &handle, (void *)(uintptr_t)buffer->ptr));
    int exported = -1;
    cugl_status st = CUGL_CU(cuMemExportToShareableHandle, &exported, handle,
                             CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    cugl__cu.cuMemRelease(handle);
    CUGL__TRY(st);
    *fd = exported;
    if (allocation_size) {
        size_t g = buffer->mr->granularity;
        *allocation_size = (buffer->size + g - 1) / g * g;
    }
    return CUGL_OK;
}

/* --- lifetime --- */

CUGL_API bool cugl_buffer_is_closed(const cugl_buffer *buffer)
{
    return !buffer || buffer->closed;
}

/*
 * The stream to free on: the one given, else the deallocation stream while
 * it is open. With neither, stream-ordered memory is freed on the legacy
 * default stream after the whole context has drained, so no stream can
 * still be using it.
 */
static cugl_status dealloc_stream(cugl_buffer *b, cugl_stream *given, cugl_stream **use,
                                  const char *who)
{
    *use = given;
    if (!*use && b->dealloc_stream && !b->dealloc_stream->closed)
        *use = b->dealloc_stream;
    if (*use || !b->mr || !b->mr->stream_ordered)
        return CUGL_OK;
    CUGL__TRY(cugl__device_activate(b->mr->device, who));
    CUGL__TRY(cugl__cu_status(cugl__cu.cuCtxSynchronize(), who, "cuCtxSynchronize"));
    return cugl_device_default_stream(use, b->mr->device);
}

CUGL_API cugl_status cugl_buffer_close(cugl_buffer *buffer, cugl_stream *stream)
{
    if (!buffer || buffer->closed)
        return CUGL_OK;
    if (stream && stream->closed)
        return cugl__fail(CUGL_ERROR_CLOSED, __func__,
                          "the stream has been closed; the buffer was not freed");
    cugl_status st = CUGL_OK;
    if (buffer->mr && buffer->ptr) {
        cugl_stream *use = NULL;
        st = dealloc_stream(buffer, stream, &use, __func__);
        if (st == CUGL_OK)
            st = cugl__mr_deallocate(buffer->mr, buffer->ptr, buffer->size, use, __func__);
    } else {
        st = cugl__owner_close(&buffer->owner, stream);
    }
    cugl_memory_resource_release(buffer->mr);
    cugl_stream_release(buffer->dealloc_stream);
    buffer->mr = NULL;
    buffer->dealloc_stream = NULL;
    buffer->ptr = 0;
    buffer->size = 0;
    buffer->closed = true;
    return st;
}

CUGL_API cugl_buffer *cugl_buffer_retain(cugl_buffer *buffer)
{
    if (buffer)
        cugl__ref_inc(&buffer->ref);
    return buffer;
}

CUGL_API void cugl_buffer_release(cugl_buffer *buffer)
{
    if (!buffer || !cugl__ref_dec(&buffer->ref))
        return;
    cugl_buffer_close(buffer, NULL);
    free(buffer);
}
