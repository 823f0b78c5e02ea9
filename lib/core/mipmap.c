/*
 * mipmap.c - mipmapped CUDA arrays: creation, their levels as arrays that
 * hold the mipmapped array, getters and lifetime.
 */
#include <stdlib.h>
#include <string.h>

#include "core_internal.h"

static cugl_status mipmap_check(const cugl_mipmapped_array *m, const char *who)
{
    if (!m)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "mipmap is NULL");
    if (m->closed)
        return cugl__fail(CUGL_ERROR_CLOSED, who, "the mipmapped array has been closed");
    return CUGL_OK;
}

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
    CUGL__TRY(cugl__array_desc_check(d, who));
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
    CUGL__TRY(cugl__array_limits_check(desc, props, __func__));

    cugl_mipmapped_array *m = calloc(1, sizeof *m);
    if (!m)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, __func__,
                          "cannot allocate a mipmapped array");
    m->desc = *desc;
    if (!m->desc.num_channels)
        m->desc.num_channels = 1;
    CUDA_ARRAY3D_DESCRIPTOR c = cugl__array_cu_desc(&m->desc);
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
    CUDA_ARRAY3D_DESCRIPTOR parent = cugl__array_cu_desc(&mipmap->desc);
    cugl_mipmapped_array_retain(mipmap);
    cugl_status st =
        cugl__array_wrap(out, h, mipmap->device, parent.Flags,
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
