/*
 * array_copy.c - copies between CUDA arrays and linear memory (host,
 * device buffers, other arrays), of whole arrays or of regions, through
 * the driver's 3-D copy.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* a + b, false on overflow. */
static bool add_size(size_t a, size_t b, size_t *r)
{
    if (b > SIZE_MAX - a)
        return false;
    *r = a + b;
    return true;
}

/* One side of a copy as the driver takes it. */
typedef struct cu_side {
    CUmemorytype type;
    void *host;
    CUdeviceptr device;
    CUarray array;
    size_t pitch, height; /* linear sides */
    size_t x_bytes, y, z;
} cu_side;

static const char *const axis_name = "xyz";

/* Exactly one of array, buffer, host. */
static cugl_status check_endpoint_kind(const cugl_copy_endpoint *e, const char *name,
                                       const char *who)
{
    if (!e)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "%s is NULL", name);
    int set = (e->array != NULL) + (e->buffer != NULL) + (e->host != NULL);
    if (set != 1)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "%s sets %s of array, buffer and host; set exactly one", name,
                          set == 0 ? "none" : "more than one");
    return CUGL_OK;
}

/* Device memory of another device cannot be copied to or from the array. */
static cugl_status check_buffer_device(const cugl_buffer *b, const cugl_device *device,
                                       const char *who)
{
    if (b->device_accessible && !b->host_accessible && b->device_id >= 0 &&
        b->device_id != device->ordinal)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the buffer is memory of device %d, the array is on device %d",
                          b->device_id, device->ordinal);
    return CUGL_OK;
}

static cugl_status check_array_side(const cugl_copy_endpoint *e, const char *name,
                                    const size_t extent[3], const char *who, cu_side *s)
{
    CUGL__TRY(cugl__array_check(e->array, who));
    size_t lim[3];
    cugl__array_extent(&e->array->desc, lim);
    for (int i = 0; i < 3; i++)
        if (e->offset[i] > lim[i] || extent[i] > lim[i] - e->offset[i])
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "%s: offset[%d] %zu + extent[%d] %zu exceeds the array's %zu "
                              "along %c",
                              name, i, e->offset[i], i, extent[i], lim[i], axis_name[i]);
    s->type = CU_MEMORYTYPE_ARRAY;
    s->array = e->array->handle;
    s->x_bytes = e->offset[0] * e->array->element_size;
    s->y = e->offset[1];
    s->z = e->offset[2];
    return CUGL_OK;
}

static cugl_status check_linear_side(const cugl_copy_endpoint *e, const char *name,
                                     const cugl_array *array, const size_t extent[3],
                                     const char *who, cu_side *s)
{
    size_t elem = array->element_size, size;
    const char *what;
    if (e->buffer) {
        CUGL__TRY(cugl__buffer_check(e->buffer, who));
        CUGL__TRY(check_buffer_device(e->buffer, array->device, who));
        size = e->buffer->size;
        what = "buffer";
        if (e->buffer->device_accessible) {
            /* Device, pinned and managed memory: the driver finds out which. */
            s->type = CU_MEMORYTYPE_UNIFIED;
            s->device = (CUdeviceptr)e->buffer->ptr;
        } else {
            s->type = CU_MEMORYTYPE_HOST;
            s->host = (void *)(uintptr_t)e->buffer->ptr;
        }
    } else {
        size = e->host_size;
        what = "host memory";
        s->type = CU_MEMORYTYPE_HOST;
        s->host = e->host;
    }
    size_t x_end, row_end, rows_needed, z_end;
    if (!add_size(e->offset[0], extent[0], &x_end) ||
        !cugl__mul_size(x_end, elem, &row_end) ||
        !add_size(e->offset[1], extent[1], &rows_needed) ||
        !add_size(e->offset[2], extent[2], &z_end))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "%s: the region's end overflows size_t", name);
    size_t pitch = e->pitch ? e->pitch : row_end;
    size_t rows = e->rows ? e->rows : rows_needed;
    if (pitch < row_end)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "%s: pitch %zu is smaller than a row of the region: (offset[0] %zu "
                          "+ extent[0] %zu) x %zu-byte elements = %zu bytes",
                          name, pitch, e->offset[0], extent[0], elem, row_end);
    if (rows < rows_needed)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "%s: rows %zu is fewer than the region's: offset[1] %zu + extent[1] "
                          "%zu = %zu",
                          name, rows, e->offset[1], extent[1], rows_needed);
    /* The byte after the region's last element. */
    size_t last_row, end;
    if (!cugl__mul_size(z_end - 1, rows, &last_row) ||
        !add_size(last_row, rows_needed - 1, &last_row) ||
        !cugl__mul_size(last_row, pitch, &end) || !add_size(end, row_end, &end))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "%s: the region's end overflows size_t", name);
    if (end > size)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "%s: the region ends at byte %zu, beyond the %s's %zu bytes (pitch "
                          "%zu, rows %zu)",
                          name, end, what, size, pitch, rows);
    s->pitch = pitch;
    s->height = rows;
    s->x_bytes = e->offset[0] * elem;
    s->y = e->offset[1];
    s->z = e->offset[2];
    return CUGL_OK;
}

static bool regions_overlap(const size_t a[3], const size_t b[3], const size_t extent[3])
{
    for (int i = 0; i < 3; i++)
        if (a[i] >= b[i] + extent[i] || b[i] >= a[i] + extent[i])
            return false;
    return true;
}

/* Validate a region copy completely, then run it. */
static cugl_status copy_region(const cugl_copy_endpoint *dst, const cugl_copy_endpoint *src,
                               const size_t extent[3], cugl_stream *stream, const char *who)
{
    CUGL__TRY(check_endpoint_kind(dst, "dst", who));
    CUGL__TRY(check_endpoint_kind(src, "src", who));
    if (!extent)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "extent is NULL");
    for (int i = 0; i < 3; i++)
        if (extent[i] == 0)
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "extent[%d] is 0; every extent must be >= 1 (1 for unused axes)",
                              i);
    if (!dst->array && !src->array)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "neither dst nor src is an array; copy between buffers with "
                          "cugl_buffer_copy_from");

    cu_side d, s;
    memset(&d, 0, sizeof d);
    memset(&s, 0, sizeof s);
    const cugl_array *array = dst->array ? dst->array : src->array;
    if (dst->array)
        CUGL__TRY(check_array_side(dst, "dst", extent, who, &d));
    if (src->array)
        CUGL__TRY(check_array_side(src, "src", extent, who, &s));
    if (dst->array && src->array) {
        if (dst->array->element_size != src->array->element_size)
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "element sizes differ: dst has %zu-byte elements, src %zu-byte",
                              dst->array->element_size, src->array->element_size);
        if (dst->array->device != src->array->device)
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "dst is on device %d, src on device %d",
                              dst->array->device->ordinal, src->array->device->ordinal);
        if (dst->array->handle == src->array->handle &&
            regions_overlap(dst->offset, src->offset, extent))
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "dst and src are regions of the same array that overlap");
    }
    if (!dst->array)
        CUGL__TRY(check_linear_side(dst, "dst", array, extent, who, &d));
    if (!src->array)
        CUGL__TRY(check_linear_side(src, "src", array, extent, who, &s));
    CUGL__TRY(cugl__stream_check(stream, who));
    if (stream->device != array->device)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the stream is on device %d, the array on device %d",
                          cugl_device_ordinal(stream->device), array->device->ordinal);
    CUGL__TRY(cugl__device_activate(array->device, who));

    CUDA_MEMCPY3D p;
    memset(&p, 0, sizeof p);
    p.srcMemoryType = s.type;
    p.srcHost = s.host;
    p.srcDevice = s.device;
    p.srcArray = s.array;
    p.srcPitch = s.pitch;
    p.srcHeight = s.height;
    p.srcXInBytes = s.x_bytes;
    p.srcY = s.y;
    p.srcZ = s.z;
    p.dstMemoryType = d.type;
    p.dstHost = d.host;
    p.dstDevice = d.device;
    p.dstArray = d.array;
    p.dstPitch = d.pitch;
    p.dstHeight = d.height;
    p.dstXInBytes = d.x_bytes;
    p.dstY = d.y;
    p.dstZ = d.z;
    p.WidthInBytes = extent[0] * array->element_size;
    p.Height = extent[1];
    p.Depth = extent[2];
    return CUGL_CU_AS(who, cuMemcpy3DAsync, &p, stream->handle);
}

CUGL_API cugl_status cugl_array_copy_region(const cugl_copy_endpoint *dst,
                                            const cugl_copy_endpoint *src,
                                            const size_t extent[3], cugl_stream *stream)
{
    return copy_region(dst, src, extent, stream, __func__);
}

/* A whole-array copy between `array` and a tightly packed `other`. */
static cugl_status copy_whole(cugl_array *array, const cugl_copy_endpoint *other,
                              bool to_array, cugl_stream *stream, const char *who)
{
    cugl_copy_endpoint a = {.array = array};
    size_t extent[3];
    cugl__array_extent(&array->desc, extent);
    return to_array ? copy_region(&a, other, extent, stream, who)
                    : copy_region(other, &a, extent, stream, who);
}

/* The size check of whole-array copies, in cuda.core's words. */
static cugl_status check_whole_size(size_t size, const cugl_array *array, const char *side,
                                    const char *who)
{
    if (size < array->size_bytes)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "%s has %zu bytes, smaller than the array extent (%zu bytes)", side,
                          size, array->size_bytes);
    return CUGL_OK;
}

CUGL_API cugl_status cugl_array_copy_from_host(cugl_array *dst, const void *src,
                                               size_t src_size, cugl_stream *stream)
{
    CUGL__TRY(cugl__array_check(dst, __func__));
    CUGL__CHECK_NOT_NULL(src);
    CUGL__TRY(check_whole_size(src_size, dst, "source", __func__));
    cugl_copy_endpoint h = {.host = (void *)(uintptr_t)src, .host_size = src_size};
    return copy_whole(dst, &h, true, stream, __func__);
}

CUGL_API cugl_status cugl_array_copy_to_host(void *dst, size_t dst_size, cugl_array *src,
                                             cugl_stream *stream)
{
    CUGL__CHECK_NOT_NULL(dst);
    CUGL__TRY(cugl__array_check(src, __func__));
    CUGL__TRY(check_whole_size(dst_size, src, "destination", __func__));
    cugl_copy_endpoint h = {.host = dst, .host_size = dst_size};
    return copy_whole(src, &h, false, stream, __func__);
}

CUGL_API cugl_status cugl_array_copy_from_buffer(cugl_array *dst, cugl_buffer *src,
                                                 cugl_stream *stream)
{
    CUGL__TRY(cugl__array_check(dst, __func__));
    CUGL__TRY(cugl__buffer_check(src, __func__));
    CUGL__TRY(check_whole_size(src->size, dst, "source buffer", __func__));
    cugl_copy_endpoint b = {.buffer = src};
    return copy_whole(dst, &b, true, stream, __func__);
}

CUGL_API cugl_status cugl_array_copy_to_buffer(cugl_buffer *dst, cugl_array *src,
                                               cugl_stream *stream)
{
    CUGL__TRY(cugl__buffer_check(dst, __func__));
    CUGL__TRY(cugl__array_check(src, __func__));
    CUGL__TRY(check_whole_size(dst->size, src, "destination buffer", __func__));
    cugl_copy_endpoint b = {.buffer = dst};
    return copy_whole(src, &b, false, stream, __func__);
}

