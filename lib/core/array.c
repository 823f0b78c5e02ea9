/*
 * array.c - CUDA arrays and mipmapped arrays: creation, limits, levels,
 * full-array and region copies.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const struct {
    const char *id; /* "CUGL_FORMAT_U8" */
    const char *name;
    size_t size;
    CUarray_format cu;
    bool is_float;
} formats[] = {
#define FORMAT_ROW(id, value, name, size, cu, is_float) \
    [CUGL_FORMAT_##id] = {"CUGL_FORMAT_" #id, name, size, CU_AD_FORMAT_##cu, is_float},
    CUGL_FORMAT_LIST(FORMAT_ROW)
#undef FORMAT_ROW
};

bool cugl__format_valid(cugl_format f)
{
    return (int)f >= CUGL_FORMAT_FIRST && (int)f <= CUGL_FORMAT_LAST;
}

bool cugl__format_is_float(cugl_format f) { return cugl__format_valid(f) && formats[f].is_float; }

cugl_status cugl__format_check(cugl_format f, const char *what, const char *who)
{
    if (cugl__format_valid(f))
        return CUGL_OK;
    return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "%s %d is not a cugl_format (%s to %s)",
                      what, (int)f, formats[CUGL_FORMAT_FIRST].id, formats[CUGL_FORMAT_LAST].id);
}

CUGL_API size_t cugl_format_size(cugl_format format)
{
    return cugl__format_valid(format) ? formats[format].size : 0;
}

CUGL_API const char *cugl_format_name(cugl_format format)
{
    return cugl__format_valid(format) ? formats[format].name : "invalid";
}

CUarray_format cugl__format_to_cu(cugl_format format) { return formats[format].cu; }

static cugl_format format_from_cu(CUarray_format cu)
{
    for (int f = CUGL_FORMAT_FIRST; f <= CUGL_FORMAT_LAST; f++)
        if (formats[f].cu == cu)
            return (cugl_format)f;
    return (cugl_format)0;
}

/* a + b, false on overflow. */
static bool add_size(size_t a, size_t b, size_t *r)
{
    if (b > SIZE_MAX - a)
        return false;
    *r = a + b;
    return true;
}

/* The extent a copy of the whole array covers: x, y (1 for 1D), z (depth,
 * or layers x faces, or 1). */
static void array_extent(const cugl_array_desc *d, size_t e[3])
{
    e[0] = d->shape[0];
    e[1] = d->ndim >= 2 ? d->shape[1] : 1;
    e[2] = d->ndim == 3 ? d->shape[2] : 1;
    if (d->layers || d->cubemap)
        e[2] = (d->cubemap ? 6 : 1) * (d->layers ? d->layers : 1);
}

static cugl_status check_desc(const cugl_array_desc *d, const char *who)
{
    if (!d)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "desc is NULL");
    if (d->ndim < 1 || d->ndim > 3)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "ndim %d is not 1, 2 or 3 (the rank of the shape)", d->ndim);
    for (int i = 0; i < 3; i++) {
        if (i < d->ndim && d->shape[i] == 0)
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "shape[%d] is 0; each of the %d extents must be >= 1", i,
                              d->ndim);
        if (i >= d->ndim && d->shape[i] != 0)
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "shape[%d] is %zu but ndim is %d; extents past ndim must be 0",
                              i, d->shape[i], d->ndim);
    }
    CUGL__TRY(cugl__format_check(d->format, "format", who));
    if (d->num_channels == 3)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "num_channels 3 is not supported: arrays have 1, 2 or 4 channels "
                          "(store RGB as 4 channels)");
    if (d->num_channels != 0 && d->num_channels != 1 && d->num_channels != 2 &&
        d->num_channels != 4)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "num_channels %d is not 1, 2 or 4", d->num_channels);
    if (d->layers && d->ndim == 3)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "layers is %zu but ndim is 3; a layered array is a stack of 1D or "
                          "2D images",
                          d->layers);
    if (d->cubemap && d->ndim != 2)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "a cube map has ndim 2 (square faces), not %d", d->ndim);
    if (d->cubemap && d->shape[0] != d->shape[1])
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "a cube map's faces are square, but the shape is %zux%zu",
                          d->shape[0], d->shape[1]);
    /* Bytes of the whole array must be representable (the limits, checked
     * later, keep real arrays far below this). */
    size_t e[3], n;
    array_extent(d, e);
    size_t channels = d->num_channels ? (size_t)d->num_channels : 1;
    if (!cugl__mul_size(e[0], e[1], &n) || !cugl__mul_size(n, e[2], &n) ||
        !cugl__mul_size(n, channels * formats[d->format].size, &n))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the array's size in bytes overflows size_t");
    return CUGL_OK;
}

CUGL_API cugl_status cugl_array_desc_validate(const cugl_array_desc *desc)
{
    return check_desc(desc, __func__);
}

/* One extent against a limit the device reports (0: unknown, not checked). */
static cugl_status check_limit(size_t value, int limit, const char *axis, const char *what,
                               const cugl_device_properties *p, const char *who)
{
    if (limit > 0 && value > (size_t)limit)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "%s %zu exceeds the %s limit of %d on %s", axis, value, what, limit,
                          p->name);
    return CUGL_OK;
}

/*
 * The device's size limits for the kind of array. cugl_device_properties
 * has no 1D-layered and layered-cube-map limits; there the driver decides.
 */
static cugl_status check_limits(const cugl_array_desc *d, const cugl_device_properties *p,
                                const char *who)
{
    static const char *axis[] = {"width", "height", "depth"};
    if (d->cubemap)
        return check_limit(d->shape[0], p->max_texture_cubemap_width, "width",
                           "cube-map texture", p, who);
    if (d->layers) {
        if (d->ndim == 1)
            return CUGL_OK;
        CUGL__TRY(check_limit(d->shape[0], p->max_texture_2d_layered[0], "width",
                              "2D layered texture", p, who));
        CUGL__TRY(check_limit(d->shape[1], p->max_texture_2d_layered[1], "height",
                              "2D layered texture", p, who));
        return check_limit(d->layers, p->max_texture_2d_layered[2], "layers",
                           "2D layered texture", p, who);
    }
    const int *tex = d->ndim == 1 ? &p->max_texture_1d_width
                     : d->ndim == 2 ? p->max_texture_2d
                                    : p->max_texture_3d;
    const int *surf = d->ndim == 1 ? &p->max_surface_1d_width
                      : d->ndim == 2 ? p->max_surface_2d
                                     : p->max_surface_3d;
    static const char *tex_what[] = {"1D texture", "2D texture", "3D texture"};
    static const char *surf_what[] = {"1D surface", "2D surface", "3D surface"};
    for (int i = 0; i < d->ndim; i++) {
        CUGL__TRY(check_limit(d->shape[i], tex[i], axis[i], tex_what[d->ndim - 1], p, who));
        if (d->surface_load_store)
            CUGL__TRY(
                check_limit(d->shape[i], surf[i], axis[i], surf_what[d->ndim - 1], p, who));
    }
    return CUGL_OK;
}

static CUDA_ARRAY3D_DESCRIPTOR cu_desc(const cugl_array_desc *d)
{
    CUDA_ARRAY3D_DESCRIPTOR c;
    memset(&c, 0, sizeof c);
    c.Width = d->shape[0];
    c.Height = d->ndim >= 2 ? d->shape[1] : 0;
    c.Depth = d->ndim == 3 ? d->shape[2] : 0;
    if (d->layers || d->cubemap)
        c.Depth = (d->cubemap ? 6 : 1) * (d->layers ? d->layers : 1);
    c.Format = formats[d->format].cu;
    c.NumChannels = (unsigned)d->num_channels;
    if (d->layers)
        c.Flags |= CUDA_ARRAY3D_LAYERED;
    if (d->cubemap)
        c.Flags |= CUDA_ARRAY3D_CUBEMAP;
    if (d->surface_load_store)
        c.Flags |= CUDA_ARRAY3D_SURFACE_LDST;
    return c;
}

/* The desc of an array the driver describes; NOT_SUPPORTED for what cugl
 * cannot represent. */
static cugl_status desc_from_cu(const CUDA_ARRAY3D_DESCRIPTOR *c, cugl_array_desc *d,
                                const char *who)
{
    memset(d, 0, sizeof *d);
    d->format = format_from_cu(c->Format);
    if (!d->format)
        return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who,
                          "the array's format 0x%x is none of cugl's formats (8, 16, 32-bit "
                          "integers, f16, f32)",
                          (unsigned)c->Format);
    if (c->NumChannels != 1 && c->NumChannels != 2 && c->NumChannels != 4)
        return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who,
                          "the array has %u channels; cugl supports 1, 2 or 4",
                          c->NumChannels);
    d->num_channels = (int)c->NumChannels;
    d->surface_load_store = (c->Flags & CUDA_ARRAY3D_SURFACE_LDST) != 0;
    d->cubemap = (c->Flags & CUDA_ARRAY3D_CUBEMAP) != 0;
    bool layered = (c->Flags & CUDA_ARRAY3D_LAYERED) != 0;
    d->shape[0] = c->Width;
    if (d->cubemap) {
        d->ndim = 2;
        d->shape[1] = c->Height;
        d->layers = layered ? c->Depth / 6 : 0;
    } else if (layered) {
        d->ndim = c->Height ? 2 : 1;
        d->shape[1] = c->Height;
        d->layers = c->Depth;
    } else {
        d->ndim = c->Depth ? 3 : c->Height ? 2 : 1;
        d->shape[1] = c->Height;
        d->shape[2] = c->Depth;
    }
    return CUGL_OK;
}

/* A new array object (no driver handle yet) for a valid desc. */
static cugl_array *array_new(cugl_device *device, const cugl_array_desc *d)
{
    cugl_array *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    cugl__ref_init(&a->ref);
    a->device = device;
    a->desc = *d;
    if (!a->desc.num_channels)
        a->desc.num_channels = 1;
    a->element_size = formats[d->format].size * (size_t)a->desc.num_channels;
    size_t e[3];
    array_extent(d, e);
    a->size_bytes = e[0] * e[1] * e[2] * a->element_size;
    return a;
}

cugl_status cugl__array_check(const cugl_array *array, const char *who)
{
    if (!array)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "array is NULL");
    if (array->closed)
        return cugl__fail(CUGL_ERROR_CLOSED, who, "the array has been closed");
    if (array->parent && array->parent->closed)
        return cugl__fail(CUGL_ERROR_CLOSED, who,
                          "the array is a level of a mipmapped array that has been closed");
    return CUGL_OK;
}

static cugl_status mipmap_check(const cugl_mipmapped_array *m, const char *who)
{
    if (!m)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "mipmap is NULL");
    if (m->closed)
        return cugl__fail(CUGL_ERROR_CLOSED, who, "the mipmapped array has been closed");
    return CUGL_OK;
}

CUGL_API cugl_status cugl_array_create(cugl_array **out, cugl_device *device,
                                       const cugl_array_desc *desc)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = NULL;
    CUGL__CHECK_NOT_NULL(device);
    CUGL__TRY(check_desc(desc, __func__));
    CUGL__TRY(cugl__device_activate(device, __func__));
    const cugl_device_properties *props;
    CUGL__TRY(cugl__device_props(device, __func__, &props));
    CUGL__TRY(check_limits(desc, props, __func__));

    cugl_array *a = array_new(device, desc);
    if (!a)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, __func__, "cannot allocate an array");
    CUDA_ARRAY3D_DESCRIPTOR c = cu_desc(&a->desc);
    cugl_status st = CUGL_CU(cuArray3DCreate, &a->handle, &c);
    if (st != CUGL_OK) {
        free(a);
        return st;
    }
    a->owned = true;
    *out = a;
    return CUGL_OK;
}

/*
 * cugl__array_wrap, with `flags` added to those the driver reports: a
 * mipmap level has its mipmapped array's flags by construction, whether or
 * not the driver repeats them for the level.
 */
static cugl_status wrap(cugl_array **out, CUarray handle, cugl_device *device, unsigned flags,
                        cugl__owner owner, const char *who)
{
    *out = NULL;
    CUGL__TRY(cugl__device_activate(device, who));
    CUDA_ARRAY3D_DESCRIPTOR c;
    CUGL__TRY(CUGL_CU_AS(who, cuArray3DGetDescriptor, &c, handle));
    c.Flags |= flags;
    cugl_array_desc d;
    CUGL__TRY(desc_from_cu(&c, &d, who));
    cugl_array *a = array_new(device, &d);
    if (!a)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, who, "cannot allocate an array");
    a->handle = handle;
    a->owner = owner;
    *out = a;
    return CUGL_OK;
}

cugl_status cugl__array_wrap(cugl_array **out, CUarray handle, cugl_device *device,
                             unsigned flags, cugl__owner owner, const char *who)
{
    return wrap(out, handle, device, flags, owner, who);
}

/* ---- Copies ------------------------------------------------------------ */

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
    array_extent(&e->array->desc, lim);
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
    array_extent(&array->desc, extent);
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

/* ---- Getters and lifetime ---------------------------------------------- */

CUGL_API cugl_device *cugl_array_device(const cugl_array *array)
{
    return array ? array->device : NULL;
}

CUGL_API int cugl_array_ndim(const cugl_array *array) { return array ? array->desc.ndim : 0; }

CUGL_API void cugl_array_shape(const cugl_array *array, size_t shape[3])
{
    for (int i = 0; i < 3; i++)
        shape[i] = array ? array->desc.shape[i] : 0;
}

CUGL_API size_t cugl_array_layers(const cugl_array *array)
{
    return array ? array->desc.layers : 0;
}

CUGL_API bool cugl_array_is_cubemap(const cugl_array *array)
{
    return array && array->desc.cubemap;
}

CUGL_API cugl_format cugl_array_format(const cugl_array *array)
{
    return array ? array->desc.format : (cugl_format)0;
}

CUGL_API int cugl_array_num_channels(const cugl_array *array)
{
    return array ? array->desc.num_channels : 0;
}

CUGL_API bool cugl_array_is_surface_load_store(const cugl_array *array)
{
    return array && array->desc.surface_load_store;
}

CUGL_API size_t cugl_array_element_size(const cugl_array *array)
{
    return array ? array->element_size : 0;
}

CUGL_API size_t cugl_array_size_bytes(const cugl_array *array)
{
    return array ? array->size_bytes : 0;
}

CUGL_API void *cugl_array_handle(const cugl_array *array)
{
    return cugl_array_is_closed(array) ? NULL : (void *)array->handle;
}

CUGL_API bool cugl_array_is_closed(const cugl_array *array)
{
    return !array || array->closed || (array->parent && array->parent->closed);
}

CUGL_API void cugl_array_close(cugl_array *array)
{
    if (!array || array->closed)
        return;
    if (array->owned)
        cugl__cu.cuArrayDestroy(array->handle);
    array->handle = NULL;
    array->closed = true;
    array->parent = NULL;
    /* close returns nothing: a hook's failure is in cugl_last_error(). */
    cugl__owner_close(&array->owner, NULL);
}

CUGL_API cugl_array *cugl_array_retain(cugl_array *array)
{
    if (array)
        cugl__ref_inc(&array->ref);
    return array;
}

CUGL_API void cugl_array_release(cugl_array *array)
{
    if (!array || !cugl__ref_dec(&array->ref))
        return;
    cugl_array_close(array);
    free(array);
}

/* ---- Mipmapped arrays -------------------------------------------------- */

static size_t largest_extent(const cugl_array_desc *d)
{
    size_t largest = 0;
    for (int i = 0; i < d->ndim; i++)
        if (d->shape[i] > largest)
            largest = d->shape[i];
    return largest;
}

/* 1 + floor(log2(largest extent)): the levels until every extent is 1. */
static unsigned max_levels(const cugl_array_desc *d)
{
    size_t largest = largest_extent(d);
    unsigned n = 1;
    while (largest > 1) {
        largest >>= 1;
        n++;
    }
    return n;
}

static cugl_status check_mipmap_desc(const cugl_array_desc *d, unsigned num_levels,
                                     const char *who)
{
    CUGL__TRY(check_desc(d, who));
    if (num_levels < 1)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "num_levels is 0; it must be >= 1");
    unsigned max = max_levels(d);
    if (num_levels > max)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "num_levels %u exceeds the %u level%s of a shape whose largest "
                          "extent is %zu (halving until 1)",
                          num_levels, max, max == 1 ? "" : "s", largest_extent(d));
    return CUGL_OK;
}

CUGL_API cugl_status cugl_mipmapped_array_desc_validate(const cugl_array_desc *desc,
                                                        unsigned num_levels)
{
    return check_mipmap_desc(desc, num_levels, __func__);
}

CUGL_API cugl_status cugl_mipmapped_array_create(cugl_mipmapped_array **out,
                                                 cugl_device *device,
                                                 const cugl_array_desc *desc,
                                                 unsigned num_levels)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = NULL;
    CUGL__CHECK_NOT_NULL(device);
    CUGL__TRY(check_mipmap_desc(desc, num_levels, __func__));
    CUGL__TRY(cugl__device_activate(device, __func__));
    const cugl_device_properties *props;
    CUGL__TRY(cugl__device_props(device, __func__, &props));
    CUGL__TRY(check_limits(desc, props, __func__));

    cugl_mipmapped_array *m = calloc(1, sizeof *m);
    if (!m)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, __func__,
                          "cannot allocate a mipmapped array");
    m->desc = *desc;
    if (!m->desc.num_channels)
        m->desc.num_channels = 1;
    CUDA_ARRAY3D_DESCRIPTOR c = cu_desc(&m->desc);
    cugl_status st = CUGL_CU(cuMipmappedArrayCreate, &m->handle, &c, num_levels);
    if (st != CUGL_OK) {
        free(m);
        return st;
    }
    cugl__ref_init(&m->ref);
    m->device = device;
    m->num_levels = num_levels;
    *out = m;
    return CUGL_OK;
}

static void release_mipmap(void *mipmap) { cugl_mipmapped_array_release(mipmap); }

CUGL_API cugl_status cugl_mipmapped_array_get_level(cugl_array **out,
                                                    cugl_mipmapped_array *mipmap,
                                                    unsigned level)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = NULL;
    CUGL__TRY(mipmap_check(mipmap, __func__));
    CUGL__CHECK_ARG(level < mipmap->num_levels,
                    "level %u is out of range: the mipmapped array has %u level%s (0 to %u)",
                    level, mipmap->num_levels, mipmap->num_levels == 1 ? "" : "s",
                    mipmap->num_levels - 1);
    CUGL__TRY(cugl__device_activate(mipmap->device, __func__));
    CUarray h = NULL;
    CUGL__TRY(CUGL_CU(cuMipmappedArrayGetLevel, &h, mipmap->handle, level));
    CUDA_ARRAY3D_DESCRIPTOR parent = cu_desc(&mipmap->desc);
    cugl_mipmapped_array_retain(mipmap);
    cugl_status st =
        wrap(out, h, mipmap->device, parent.Flags,
             (cugl__owner){.owner = mipmap, .release = release_mipmap}, __func__);
    if (st != CUGL_OK) {
        cugl_mipmapped_array_release(mipmap);
        return st;
    }
    (*out)->parent = mipmap;
    return CUGL_OK;
}

CUGL_API cugl_status cugl_mipmapped_array_level_desc(const cugl_mipmapped_array *mipmap,
                                                     unsigned level, cugl_array_desc *desc)
{
    CUGL__CHECK_NOT_NULL(mipmap);
    CUGL__CHECK_NOT_NULL(desc);
    CUGL__CHECK_ARG(level < mipmap->num_levels,
                    "level %u is out of range: the mipmapped array has %u level%s (0 to %u)",
                    level, mipmap->num_levels, mipmap->num_levels == 1 ? "" : "s",
                    mipmap->num_levels - 1);
    *desc = mipmap->desc;
    for (int i = 0; i < desc->ndim; i++) {
        size_t e = desc->shape[i] >> level;
        desc->shape[i] = e ? e : 1;
    }
    return CUGL_OK;
}

CUGL_API unsigned cugl_mipmapped_array_num_levels(const cugl_mipmapped_array *mipmap)
{
    return mipmap ? mipmap->num_levels : 0;
}

CUGL_API cugl_device *cugl_mipmapped_array_device(const cugl_mipmapped_array *mipmap)
{
    return mipmap ? mipmap->device : NULL;
}

CUGL_API void *cugl_mipmapped_array_handle(const cugl_mipmapped_array *mipmap)
{
    return mipmap && !mipmap->closed ? (void *)mipmap->handle : NULL;
}

CUGL_API bool cugl_mipmapped_array_is_closed(const cugl_mipmapped_array *mipmap)
{
    return !mipmap || mipmap->closed;
}

CUGL_API void cugl_mipmapped_array_close(cugl_mipmapped_array *mipmap)
{
    if (!mipmap || mipmap->closed)
        return;
    cugl__cu.cuMipmappedArrayDestroy(mipmap->handle);
    mipmap->handle = NULL;
    mipmap->closed = true;
}

CUGL_API cugl_mipmapped_array *cugl_mipmapped_array_retain(cugl_mipmapped_array *mipmap)
{
    if (mipmap)
        cugl__ref_inc(&mipmap->ref);
    return mipmap;
}

CUGL_API void cugl_mipmapped_array_release(cugl_mipmapped_array *mipmap)
{
    if (!mipmap || !cugl__ref_dec(&mipmap->ref))
        return;
    cugl_mipmapped_array_close(mipmap);
    free(mipmap);
}
