/*
 * array.c - CUDA arrays: formats, descriptions and their limits, creation,
 * wrapping arrays cugl does not own, getters and lifetime (copies:
 * array_copy.c; mipmapped arrays: mipmap.c).
 */
#include <stdlib.h>
#include <string.h>

#include "core_internal.h"

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

/* The extent a copy of the whole array covers: x, y (1 for 1D), z (depth,
 * or layers x faces, or 1). */
void cugl__array_extent(const cugl_array_desc *d, size_t e[3])
{
    e[0] = d->shape[0];
    e[1] = d->ndim >= 2 ? d->shape[1] : 1;
    e[2] = d->ndim == 3 ? d->shape[2] : 1;
    if (d->layers || d->cubemap)
        e[2] = (d->cubemap ? 6 : 1) * (d->layers ? d->layers : 1);
}

cugl_status cugl__array_desc_check(const cugl_array_desc *d, const char *who)
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
    cugl__array_extent(d, e);
    size_t channels = d->num_channels ? (size_t)d->num_channels : 1;
    if (!cugl__mul_size(e[0], e[1], &n) || !cugl__mul_size(n, e[2], &n) ||
        !cugl__mul_size(n, channels * formats[d->format].size, &n))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the array's size in bytes overflows size_t");
    return CUGL_OK;
}

CUGL_API cugl_status cugl_array_desc_validate(const cugl_array_desc *desc)
{
    return cugl__array_desc_check(desc, __func__);
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
cugl_status cugl__array_limits_check(const cugl_array_desc *d, const cugl_device_properties *p,
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

CUDA_ARRAY3D_DESCRIPTOR cugl__array_cu_desc(const cugl_array_desc *d)
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
    cugl__array_extent(d, e);
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

CUGL_API cugl_status cugl_array_create(cugl_array **out, cugl_device *device,
                                       const cugl_array_desc *desc)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = NULL;
    CUGL__CHECK_NOT_NULL(device);
    CUGL__TRY(cugl__array_desc_check(desc, __func__));
    CUGL__TRY(cugl__device_activate(device, __func__));
    const cugl_device_properties *props;
    CUGL__TRY(cugl__device_props(device, __func__, &props));
    CUGL__TRY(cugl__array_limits_check(desc, props, __func__));

    cugl_array *a = array_new(device, desc);
    if (!a)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, __func__, "cannot allocate an array");
    CUDA_ARRAY3D_DESCRIPTOR c = cugl__array_cu_desc(&a->desc);
    /* Surface access for cugl's copy kernels (array_copy.c), which write
     * arrays and read narrow formats much faster through surfaces, where
     * the device takes the flag for this shape; surface_load_store still
     * says whether the caller may bind a surface. */
    cugl_status st = CUGL_OK;
    CUDA_ARRAY3D_DESCRIPTOR ldst = c;
    ldst.Flags |= CUDA_ARRAY3D_SURFACE_LDST;
    if (cugl__cu.cuArray3DCreate(&a->handle, &ldst) == CUDA_SUCCESS)
        a->ldst = true;
    else
        st = CUGL_CU(cuArray3DCreate, &a->handle, &c);
    if (st != CUGL_OK) {
        cugl__ref_discard(&a->ref);
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
    a->ldst = d.surface_load_store;
    *out = a;
    return CUGL_OK;
}

cugl_status cugl__array_wrap(cugl_array **out, CUarray handle, cugl_device *device,
                             unsigned flags, cugl__owner owner, const char *who)
{
    return wrap(out, handle, device, flags, owner, who);
}

/* ---- Getters and lifetime ---------------------------------------------- */

CUGL_API cugl_device *cugl_array_device(const cugl_array *array)
{
    return array ? array->device : NULL;
}

CUGL_API int cugl_array_ndim(const cugl_array *array) { return array ? array->desc.ndim : 0; }

CUGL_API void cugl_array_shape(const cugl_array *array, size_t shape[3])
{
    if (!shape)
        return;
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
    cugl__array_copy_objects_destroy(array);
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

