/*
 * array_copy.c - copies between CUDA arrays and linear memory (host,
 * device buffers, other arrays), of whole arrays or of regions.
 *
 * Between an array and device memory of its device, cugl's kernels
 * (kernels/lib/array_copy.cu) do the copy: through a surface object where
 * the driver's array has the surface flag (every array cugl_array_create
 * makes, where the device allows it), 16 bytes at a time where the rows
 * allow; otherwise reads through a texture object, and writes by the
 * driver. The driver's 3-D copy moves these at 0.2-0.3 of a linear copy's
 * speed. Large copies between an array and pageable host memory go through
 * device memory the same way. Everything else is the driver's 3-D copy.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array_copy.h"
#include "core_internal.h"

extern const unsigned char cugl_array_copy_fatbin[];
extern const size_t cugl_array_copy_fatbin_size;

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

/* --- the copy kernels --- */

static cugl__kernel_set kernels = {
    .what = "the array copy kernels",
    .fatbin = cugl_array_copy_fatbin,
    .fatbin_size = &cugl_array_copy_fatbin_size,
};

/* Pageable host copies of at least this many bytes go through device
 * memory and the kernels. */
#define STAGE_MIN_BYTES ((size_t)1 << 20)

static int array_kind(const cugl_array_desc *d)
{
    if (d->cubemap)
        return d->layers ? CUGL_ARRAY_KIND_CUBE_LAYERED : CUGL_ARRAY_KIND_CUBE;
    if (d->ndim == 3)
        return CUGL_ARRAY_KIND_3D;
    if (d->ndim == 2)
        return d->layers ? CUGL_ARRAY_KIND_2D_LAYERED : CUGL_ARRAY_KIND_2D;
    return d->layers ? CUGL_ARRAY_KIND_1D_LAYERED : CUGL_ARRAY_KIND_1D;
}

static int log2_size(size_t v)
{
    int l = 0;
    while (((size_t)1 << l) < v)
        l++;
    return l;
}

/* The kernel for one direction and array; `wide`: the surface kernel that
 * moves 16 bytes at a time whatever the format (see kernel_copy). Slots: surface reads
 * 0-4 and writes 5-9 by log2 of the element size, texture reads 10 + 3 x
 * the channel type (u8, u16, u32, f16, f32) + the channel count's index. */
static cugl_status copy_kernel(const cugl_array *a, bool to_array, bool wide, cugl_kernel **out,
                               const char *who)
{
    char name[48];
    int slot;
    size_t elem = wide ? 16 : a->element_size;
    if (to_array || a->ldst) {
        snprintf(name, sizeof name, "cugl_array_surf_%s_%zu", to_array ? "write" : "read", elem);
        slot = (to_array ? 5 : 0) + log2_size(elem);
    } else {
        static const char *const types[] = {"u8", "u16", "u32", "f16", "f32"};
        int type, ch = a->desc.num_channels;
        switch (a->desc.format) {
        case CUGL_FORMAT_U8: case CUGL_FORMAT_I8: type = 0; break;
        case CUGL_FORMAT_U16: case CUGL_FORMAT_I16: type = 1; break;
        case CUGL_FORMAT_U32: case CUGL_FORMAT_I32: type = 2; break;
        case CUGL_FORMAT_F16: type = 3; break;
        default: type = 4; break;
        }
        snprintf(name, sizeof name, "cugl_array_tex_read_%sx%d", types[type], ch);
        slot = 10 + 3 * type + log2_size((size_t)ch);
    }
    return cugl__kernel_get(&kernels, a->device, slot, name, out, who);
}

static pthread_mutex_t objects_lock = PTHREAD_MUTEX_INITIALIZER;

typedef enum object_kind { OBJECT_SURFACE, OBJECT_TEXTURE } object_kind;

/* The array's surface object (to write, or to read an array whose driver
 * array has the surface flag) or texture object for the kernels: made on
 * first use, kept until the array is closed. */
static cugl_status copy_object(cugl_array *a, object_kind kind, uint64_t *out, const char *who)
{
    pthread_mutex_lock(&objects_lock);
    uint64_t *slot = kind == OBJECT_SURFACE ? &a->copy_surface : &a->copy_texture;
    cugl_status st = CUGL_OK;
    if (!*slot) {
        CUDA_RESOURCE_DESC res;
        memset(&res, 0, sizeof res);
        res.resType = CU_RESOURCE_TYPE_ARRAY;
        res.res.array.hArray = a->handle;
        CUDA_TEXTURE_DESC tex;
        memset(&tex, 0, sizeof tex);
        for (int i = 0; i < 3; i++)
            tex.addressMode[i] = CU_TR_ADDRESS_MODE_CLAMP;
        tex.filterMode = CU_TR_FILTER_MODE_POINT;
        /* Integers as they are, not scaled to [0, 1]. */
        if (a->desc.format != CUGL_FORMAT_F16 && a->desc.format != CUGL_FORMAT_F32)
            tex.flags = CU_TRSF_READ_AS_INTEGER;
        if (kind == OBJECT_SURFACE) {
            CUsurfObject obj;
            st = CUGL_CU_AS(who, cuSurfObjectCreate, &obj, &res);
            *slot = st == CUGL_OK ? (uint64_t)obj : 0;
        } else {
            CUtexObject obj;
            st = CUGL_CU_AS(who, cuTexObjectCreate, &obj, &res, &tex, NULL);
            *slot = st == CUGL_OK ? (uint64_t)obj : 0;
        }
    }
    *out = *slot;
    pthread_mutex_unlock(&objects_lock);
    return st;
}

void cugl__array_copy_objects_destroy(cugl_array *a)
{
    if (!a->copy_texture && !a->copy_surface)
        return;
    cugl__device_activate(a->device, "cugl_array_close");
    if (a->copy_texture)
        cugl__cu.cuTexObjectDestroy((CUtexObject)a->copy_texture);
    if (a->copy_surface)
        cugl__cu.cuSurfObjectDestroy((CUsurfObject)a->copy_surface);
    a->copy_texture = a->copy_surface = 0;
}

/* Whether the kernels can copy between `a` and device memory at `ptr`
 * with rows `pitch` and slices `slice` bytes apart: they write arrays
 * through surfaces only, and address the linear side by whole elements. */
static bool kernel_applies(const cugl_array *a, bool to_array, uint64_t ptr, size_t pitch,
                           size_t slice, const size_t extent[3])
{
    size_t e = a->element_size;
    if (to_array && !a->ldst)
        return false;
    if (ptr % e || pitch % e || slice % e)
        return false;
    for (int i = 0; i < 3; i++)
        if (extent[i] > INT32_MAX)
            return false;
    return true;
}

/* Copy `extent` elements between the array region at `offset` and device
 * memory at `ptr` (rows `pitch`, slices `slice` bytes apart). */
static cugl_status kernel_copy(cugl_array *a, const size_t offset[3], bool to_array,
                               uint64_t ptr, size_t pitch, size_t slice,
                               const size_t extent[3], cugl_stream *stream, const char *who)
{
    bool surface = to_array || a->ldst;
    size_t elem = a->element_size;
    cugl_array_copy_params k;
    memset(&k, 0, sizeof k);
    /* Rows of whole, aligned 16-byte pieces move 16 bytes at a time: a
     * surface access of that size moves the bytes at that byte offset,
     * whatever the format. (Textures fetch texels of the format.) */
    bool wide = surface && elem < 16 && (offset[0] * elem) % 16 == 0 &&
                (extent[0] * elem) % 16 == 0 && ptr % 16 == 0 && pitch % 16 == 0 &&
                slice % 16 == 0;
    CUGL__TRY(copy_object(a, surface ? OBJECT_SURFACE : OBJECT_TEXTURE, &k.object, who));
    cugl_kernel *kernel;
    CUGL__TRY(copy_kernel(a, to_array, wide, &kernel, who));
    size_t scale = wide ? 16 / elem : 1;
    if (wide)
        elem = 16;
    k.linear = ptr;
    k.pitch = pitch;
    k.slice = slice;
    k.x0 = (int32_t)(offset[0] / scale);
    k.y0 = (int32_t)offset[1];
    k.z0 = (int32_t)offset[2];
    k.width = (int32_t)(extent[0] / scale);
    k.height = (int32_t)extent[1];
    k.depth = (int32_t)extent[2];
    k.kind = array_kind(&a->desc);
    k.face_size = (int32_t)a->desc.shape[0];
    /* A block's threads span at most 64 bytes of a row (32 elements of
     * narrower ones), and fewer rows where the region has few; each thread
     * moves CUGL_ARRAY_COPY_VEC elements, a block's width apart. */
    unsigned cols = (unsigned)(64 / elem);
    cols = cols > 32 ? 32 : cols;
    unsigned rows = CUGL_ARRAY_COPY_THREADS / cols;
    while (rows > 1 && rows / 2 >= extent[1]) {
        rows /= 2;
        cols *= 2;
    }
    size_t span = (size_t)cols * CUGL_ARRAY_COPY_VEC(elem);
    cugl_launch_config cfg = {
        .grid = {(unsigned)(((size_t)k.width + span - 1) / span),
                 (unsigned)((extent[1] + rows - 1) / rows),
                 (unsigned)(extent[2] < 65535 ? extent[2] : 65535)},
        .block = {cols, rows, 1},
    };
    void *args[] = {&k};
    cugl_status st = cugl_launch(stream, &cfg, kernel, args, 1);
    if (st != CUGL_OK)
        return cugl__fail(st, who, "the array copy kernel failed: %s", cugl_last_error());
    return CUGL_OK;
}

/* Whether `p` is pageable host memory: memory the driver does not know. */
static bool pageable(const void *p)
{
    CUmemorytype type = 0;
    CUpointer_attribute attr = CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
    void *values[] = {&type};
    if (cugl__cu.cuPointerGetAttributes(1, &attr, values, (CUdeviceptr)(uintptr_t)p) !=
        CUDA_SUCCESS)
        return true;
    return type == 0;
}

/* A packed region between the array and pageable host memory, through a
 * device buffer: the host transfer at the speed of a linear one, the
 * array side by the kernels, where they apply. CUGL_ERROR_NOT_SUPPORTED
 * (with no message) where they do not or no device memory is free: the
 * caller takes the driver's copy then. */
static cugl_status staged_copy(cugl_array *a, const size_t offset[3], bool to_array,
                               void *host, const size_t extent[3], cugl_stream *stream,
                               const char *who)
{
    size_t row = extent[0] * a->element_size, bytes = row * extent[1] * extent[2];
    if (!kernel_applies(a, to_array, 0, row, row * extent[1], extent))
        return CUGL_ERROR_NOT_SUPPORTED;
    CUdeviceptr tmp;
    if (cugl__cu.cuMemAllocAsync(&tmp, bytes, stream->handle) != CUDA_SUCCESS)
        return CUGL_ERROR_NOT_SUPPORTED;
    cugl_status st;
    if (to_array) {
        st = CUGL_CU_AS(who, cuMemcpyAsync, tmp, (CUdeviceptr)(uintptr_t)host, bytes,
                        stream->handle);
        if (st == CUGL_OK)
            st = kernel_copy(a, offset, true, tmp, row, row * extent[1], extent, stream, who);
    } else {
        st = kernel_copy(a, offset, false, tmp, row, row * extent[1], extent, stream, who);
        if (st == CUGL_OK)
            st = CUGL_CU_AS(who, cuMemcpyAsync, (CUdeviceptr)(uintptr_t)host, tmp, bytes,
                            stream->handle);
    }
    cugl_status freed = cugl__free_async(tmp, bytes, stream, who);
    return st != CUGL_OK ? st : freed;
}

/* The kernels' copy where it applies; CUGL_ERROR_NOT_SUPPORTED (no message)
 * where it does not. */
static cugl_status fast_copy(const cugl_copy_endpoint *dst, const cugl_copy_endpoint *src,
                             const cu_side *d, const cu_side *s, const size_t extent[3],
                             cugl_stream *stream, const char *who)
{
    if (dst->array && src->array)
        return CUGL_ERROR_NOT_SUPPORTED;
    bool to_array = dst->array != NULL;
    cugl_array *a = to_array ? dst->array : src->array;
    const cugl_copy_endpoint *lin = to_array ? src : dst;
    const cu_side *l = to_array ? s : d;
    if (lin->buffer && lin->buffer->device_accessible && !lin->buffer->host_accessible &&
        lin->buffer->device_id == a->device->ordinal) {
        uint64_t ptr = (uint64_t)l->device + l->x_bytes + (l->z * l->height + l->y) * l->pitch;
        size_t slice = l->pitch * l->height;
        if (!kernel_applies(a, to_array, ptr, l->pitch, slice, extent))
            return CUGL_ERROR_NOT_SUPPORTED;
        return kernel_copy(a, to_array ? dst->offset : src->offset, to_array, ptr, l->pitch,
                           slice, extent, stream, who);
    }
    /* Pageable host memory, packed (as whole-array copies are). */
    void *host = l->type == CU_MEMORYTYPE_HOST ? l->host : NULL;
    size_t row = extent[0] * a->element_size;
    if (!host || l->x_bytes || l->y || l->z || l->pitch != row || l->height != extent[1] ||
        row * extent[1] * extent[2] < STAGE_MIN_BYTES || !pageable(host))
        return CUGL_ERROR_NOT_SUPPORTED;
    return staged_copy(a, to_array ? dst->offset : src->offset, to_array, host, extent, stream,
                       who);
}

/* The driver's 3-D copy of `extent` elements between the sides `d` and
 * `s` (one of them `array`, the destination where dst_is_array), queued on
 * `stream`. */
static cugl_status memcpy_3d(const cugl_array *array, bool dst_is_array, cu_side *d, cu_side *s,
                             const size_t extent[3], cugl_stream *stream, const char *who)
{
    /* A layered 1-D array: the driver steps from one layer's row to the
     * next by the pitch times the copy's height (1), not the linear side's
     * rows. Its rows become the pitch, its offsets the address. */
    if (array->desc.ndim == 1 && array->desc.layers) {
        cu_side *l = dst_is_array ? s : d;
        size_t skip = (l->z * l->height + l->y) * l->pitch;
        if (l->type == CU_MEMORYTYPE_HOST)
            l->host = (char *)l->host + skip;
        else
            l->device += skip;
        l->pitch *= l->height;
        l->height = 1;
        l->y = l->z = 0;
    }

    CUDA_MEMCPY3D p;
    memset(&p, 0, sizeof p);
    p.srcMemoryType = s->type;
    p.srcHost = s->host;
    p.srcDevice = s->device;
    p.srcArray = s->array;
    p.srcPitch = s->pitch;
    p.srcHeight = s->height;
    p.srcXInBytes = s->x_bytes;
    p.srcY = s->y;
    p.srcZ = s->z;
    p.dstMemoryType = d->type;
    p.dstHost = d->host;
    p.dstDevice = d->device;
    p.dstArray = d->array;
    p.dstPitch = d->pitch;
    p.dstHeight = d->height;
    p.dstXInBytes = d->x_bytes;
    p.dstY = d->y;
    p.dstZ = d->z;
    p.WidthInBytes = extent[0] * array->element_size;
    p.Height = extent[1];
    p.Depth = extent[2];
    return CUGL_CU_AS(who, cuMemcpy3DAsync, &p, stream->handle);
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
    cugl_status st = fast_copy(dst, src, &d, &s, extent, stream, who);
    if (st != CUGL_ERROR_NOT_SUPPORTED)
        return st;
    return memcpy_3d(array, dst->array != NULL, &d, &s, extent, stream, who);
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

