/*
 * texture.c - resource descriptors, texture objects and surface objects.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core_internal.h"

struct cugl_texture {
    cugl__ref ref;
    CUtexObject handle;
    cugl_device *device;
    cugl_resource_desc resource; /* resolved; holds a reference to its object */
    cugl_texture_desc desc;      /* resolved */
    bool closed;
};

struct cugl_surface {
    cugl__ref ref;
    CUsurfObject handle;
    cugl_device *device;
    cugl_array *array; /* a reference, until close */
    bool closed;
};

static const char *const kind_names[] = {
    [CUGL_RESOURCE_ARRAY] = "CUGL_RESOURCE_ARRAY",
    [CUGL_RESOURCE_MIPMAPPED_ARRAY] = "CUGL_RESOURCE_MIPMAPPED_ARRAY",
    [CUGL_RESOURCE_LINEAR] = "CUGL_RESOURCE_LINEAR",
    [CUGL_RESOURCE_PITCH2D] = "CUGL_RESOURCE_PITCH2D",
};

static const char *const address_names[] = {
    [CUGL_ADDRESS_CLAMP] = "CUGL_ADDRESS_CLAMP",
    [CUGL_ADDRESS_WRAP] = "CUGL_ADDRESS_WRAP",
    [CUGL_ADDRESS_MIRROR] = "CUGL_ADDRESS_MIRROR",
    [CUGL_ADDRESS_BORDER] = "CUGL_ADDRESS_BORDER",
};

static const CUaddress_mode address_modes[] = {
    [CUGL_ADDRESS_CLAMP] = CU_TR_ADDRESS_MODE_CLAMP,
    [CUGL_ADDRESS_WRAP] = CU_TR_ADDRESS_MODE_WRAP,
    [CUGL_ADDRESS_MIRROR] = CU_TR_ADDRESS_MODE_MIRROR,
    [CUGL_ADDRESS_BORDER] = CU_TR_ADDRESS_MODE_BORDER,
};

static bool kind_valid(cugl_resource_kind k)
{
    return (int)k >= CUGL_RESOURCE_ARRAY && (int)k <= CUGL_RESOURCE_PITCH2D;
}

static bool is_buffer_kind(cugl_resource_kind k)
{
    return k == CUGL_RESOURCE_LINEAR || k == CUGL_RESOURCE_PITCH2D;
}

/* What a resource holds, whatever its kind. */
typedef struct resource_info {
    cugl_format format;
    unsigned num_levels; /* 0 unless mipmapped */
    bool cubemap;
    cugl_device *device; /* NULL for buffers */
} resource_info;

static resource_info info_of(const cugl_resource_desc *r)
{
    resource_info i = {.format = r->format};
    if (r->kind == CUGL_RESOURCE_ARRAY) {
        i.format = r->array->desc.format;
        i.cubemap = r->array->desc.cubemap;
        i.device = r->array->device;
    } else if (r->kind == CUGL_RESOURCE_MIPMAPPED_ARRAY) {
        i.format = r->mipmapped_array->desc.format;
        i.num_levels = r->mipmapped_array->num_levels;
        i.cubemap = r->mipmapped_array->desc.cubemap;
        i.device = r->mipmapped_array->device;
    }
    return i;
}

/* `field` of a resource is set, which its kind does not read. */
static cugl_status stray_object(const cugl_resource_desc *r, const char *field,
                                const char *wanted, const char *who)
{
    return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                      "resource.%s is set, but a resource of kind %s reads resource.%s; "
                      "leave the others NULL",
                      field, kind_names[r->kind], wanted);
}

/* The element size of a buffer resource whose fields passed check_fields. */
static size_t buffer_element_size(const cugl_resource_desc *r)
{
    return cugl_format_size(r->format) * (size_t)(r->num_channels ? r->num_channels : 1);
}

/*
 * The resource's own fields, no object dereferenced: kind, which object is
 * set, and for buffer kinds the format, channels and pitch2d shape.
 */
static cugl_status check_fields(const cugl_resource_desc *r, const char *who)
{
    if (!r)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "resource is NULL");
    if (!kind_valid(r->kind))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "resource.kind %d is not a cugl_resource_kind "
                          "(CUGL_RESOURCE_ARRAY to CUGL_RESOURCE_PITCH2D)",
                          (int)r->kind);
    const char *wanted = r->kind == CUGL_RESOURCE_ARRAY             ? "array"
                         : r->kind == CUGL_RESOURCE_MIPMAPPED_ARRAY ? "mipmapped_array"
                                                                    : "buffer";
    if (r->array && r->kind != CUGL_RESOURCE_ARRAY)
        return stray_object(r, "array", wanted, who);
    if (r->mipmapped_array && r->kind != CUGL_RESOURCE_MIPMAPPED_ARRAY)
        return stray_object(r, "mipmapped_array", wanted, who);
    if (r->buffer && !is_buffer_kind(r->kind))
        return stray_object(r, "buffer", wanted, who);
    if (!r->array && !r->mipmapped_array && !r->buffer)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "resource.%s is NULL (kind %s)",
                          wanted, kind_names[r->kind]);
    if (!is_buffer_kind(r->kind))
        return CUGL_OK;

    CUGL__TRY(cugl__format_check(r->format, "resource.format", who));
    if (r->num_channels == 3)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "resource.num_channels 3 is not supported: textures read 1, 2 or 4 "
                          "channels (store RGB as 4 channels)");
    if (r->num_channels != 0 && r->num_channels != 1 && r->num_channels != 2 &&
        r->num_channels != 4)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "resource.num_channels %d is not 1, 2 or 4", r->num_channels);
    if (r->kind == CUGL_RESOURCE_LINEAR)
        return CUGL_OK;
    if (r->width == 0 || r->height == 0)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "resource.width and height must be >= 1, got %zux%zu", r->width,
                          r->height);
    size_t elem = buffer_element_size(r), row;
    if (!cugl__mul_size(r->width, elem, &row))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "resource.width %zu x element size %zu overflows size_t", r->width,
                          elem);
    if (r->pitch_bytes < row)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "resource.pitch_bytes %zu is smaller than width %zu x element size "
                          "%zu = %zu bytes",
                          r->pitch_bytes, r->width, elem, row);
    return CUGL_OK;
}

/*
 * The objects a resource names (after check_fields): not closed; a buffer
 * the device can read, large enough. `out` receives the resource with the
 * defaults resolved (a linear size of 0, 0 channels).
 */
static cugl_status check_objects(const cugl_resource_desc *r, cugl_resource_desc *out,
                                 const char *who)
{
    *out = *r;
    if (r->kind == CUGL_RESOURCE_ARRAY)
        return cugl__array_check(r->array, who);
    if (r->kind == CUGL_RESOURCE_MIPMAPPED_ARRAY) {
        if (r->mipmapped_array->closed)
            return cugl__fail(CUGL_ERROR_CLOSED, who, "the mipmapped array has been closed");
        return CUGL_OK;
    }
    const cugl_buffer *b = r->buffer;
    CUGL__TRY(cugl__buffer_check(b, who));
    if (!b->device_accessible)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the buffer is host memory the device cannot read; textures need "
                          "device, pinned or managed memory");
    if (r->offset > b->size)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "resource.offset %zu is beyond the buffer's %zu bytes", r->offset,
                          b->size);
    size_t elem = buffer_element_size(r);
    size_t avail = b->size - r->offset;
    if (!out->num_channels)
        out->num_channels = 1;
    if (r->kind == CUGL_RESOURCE_LINEAR) {
        size_t size = r->size_bytes ? r->size_bytes : avail;
        if (size > avail)
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "resource.size_bytes %zu exceeds the buffer's %zu bytes after "
                              "offset %zu",
                              size, avail, r->offset);
        if (size < elem)
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "resource.size_bytes %zu is less than one element (%zu bytes: "
                              "%d x %s)",
                              size, elem, out->num_channels, cugl_format_name(r->format));
        if (size % elem != 0)
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "resource.size_bytes %zu is not a multiple of the element size "
                              "%zu",
                              size, elem);
        out->size_bytes = size;
        return CUGL_OK;
    }
    size_t total;
    if (!cugl__mul_size(r->pitch_bytes, r->height, &total) || total > avail)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "resource.pitch_bytes %zu x height %zu exceeds the buffer's %zu "
                          "bytes after offset %zu",
                          r->pitch_bytes, r->height, avail, r->offset);
    return CUGL_OK;
}

CUGL_API cugl_status cugl_resource_desc_validate(const cugl_resource_desc *resource)
{
    cugl_resource_desc resolved;
    CUGL__TRY(check_fields(resource, __func__));
    return check_objects(resource, &resolved, __func__);
}

static bool filter_valid(cugl_filter_mode f)
{
    return f == CUGL_FILTER_POINT || f == CUGL_FILTER_LINEAR;
}

/* The texture options alone. */
static cugl_status check_options(const cugl_texture_desc *d, const char *who)
{
    for (int i = 0; i < 3; i++) {
        cugl_address_mode m = d->address_mode[i];
        if ((int)m < CUGL_ADDRESS_CLAMP || (int)m > CUGL_ADDRESS_BORDER)
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "address_mode[%d] %d is not a cugl_address_mode", i, (int)m);
    }
    if (!filter_valid(d->filter_mode))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "filter_mode %d is not a cugl_filter_mode", (int)d->filter_mode);
    if (!filter_valid(d->mipmap_filter_mode))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "mipmap_filter_mode %d is not a cugl_filter_mode",
                          (int)d->mipmap_filter_mode);
    if (d->read_mode != CUGL_READ_ELEMENT_TYPE && d->read_mode != CUGL_READ_NORMALIZED_FLOAT)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "read_mode %d is not a cugl_read_mode", (int)d->read_mode);
    for (int i = 0; i < 4; i++)
        if (!isfinite(d->border_color[i]))
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "border_color[%d] is not a finite number", i);
    if (d->max_anisotropy > 16)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "max_anisotropy %u exceeds 16, the hardware's maximum",
                          d->max_anisotropy);
    if (!isfinite(d->mipmap_level_bias))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "mipmap_level_bias is not a finite number");
    if (!isfinite(d->min_mipmap_level_clamp) || d->min_mipmap_level_clamp < 0.0f)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "min_mipmap_level_clamp %g is not a level (a finite number >= 0)",
                          (double)d->min_mipmap_level_clamp);
    if (!isfinite(d->max_mipmap_level_clamp) || d->max_mipmap_level_clamp < 0.0f)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "max_mipmap_level_clamp %g is not a level (a finite number >= 0)",
                          (double)d->max_mipmap_level_clamp);
    if (d->max_mipmap_level_clamp != 0.0f &&
        d->min_mipmap_level_clamp > d->max_mipmap_level_clamp)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "min_mipmap_level_clamp %g exceeds max_mipmap_level_clamp %g",
                          (double)d->min_mipmap_level_clamp, (double)d->max_mipmap_level_clamp);
    if (!d->normalized_coords)
        for (int i = 0; i < 3; i++)
            if (d->address_mode[i] == CUGL_ADDRESS_WRAP ||
                d->address_mode[i] == CUGL_ADDRESS_MIRROR)
                return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                                  "address_mode[%d] is %s, which needs normalized_coords "
                                  "(unnormalized coordinates only clamp or use the border)",
                                  i, address_names[d->address_mode[i]]);
    return CUGL_OK;
}

static bool is_integer(cugl_format f) { return !cugl__format_is_float(f); }

/*
 * The options against the resource they sample (whose fields passed
 * check_fields; an array's format is read from the array). `d` receives the
 * resolved max_mipmap_level_clamp.
 */
static cugl_status check_pair(cugl_texture_desc *d, const cugl_resource_desc *r,
                              const char *who)
{
    resource_info in = info_of(r);
    bool as_element = d->read_mode == CUGL_READ_ELEMENT_TYPE;
    if (r->kind == CUGL_RESOURCE_LINEAR && d->filter_mode != CUGL_FILTER_POINT)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "a linear resource is read with tex1Dfetch, which does not filter; "
                          "use CUGL_FILTER_POINT, or a pitch2d or array resource");
    if (is_integer(in.format) && as_element && d->filter_mode == CUGL_FILTER_LINEAR)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "linear filtering of %s data read as element type is not done by "
                          "the hardware; read it as CUGL_READ_NORMALIZED_FLOAT or use a float "
                          "format",
                          cugl_format_name(in.format));
    if (in.num_levels && is_integer(in.format) && as_element &&
        d->mipmap_filter_mode == CUGL_FILTER_LINEAR)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "linear mipmap filtering of %s data read as element type is not "
                          "done by the hardware; read it as CUGL_READ_NORMALIZED_FLOAT or use "
                          "a float format",
                          cugl_format_name(in.format));
    if (!as_element && (in.format == CUGL_FORMAT_U32 || in.format == CUGL_FORMAT_I32))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "CUGL_READ_NORMALIZED_FLOAT converts 8- and 16-bit integers only; "
                          "%s data would be returned unconverted",
                          cugl_format_name(in.format));
    if (in.num_levels && !d->normalized_coords)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "a mipmapped array is sampled with normalized coordinates; set "
                          "normalized_coords");
    if (d->seamless_cubemap && !in.cubemap)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "seamless_cubemap needs a cube-map array or mipmapped array, and "
                          "the resource is not a cube map");
    if (in.num_levels && d->max_mipmap_level_clamp == 0.0f) {
        d->max_mipmap_level_clamp = (float)(in.num_levels - 1);
        if (d->min_mipmap_level_clamp > d->max_mipmap_level_clamp)
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "min_mipmap_level_clamp %g exceeds the last level, %u",
                              (double)d->min_mipmap_level_clamp, in.num_levels - 1);
    }
    return CUGL_OK;
}

CUGL_API cugl_status cugl_texture_desc_validate(const cugl_texture_desc *desc,
                                                const cugl_resource_desc *resource)
{
    cugl_texture_desc d = desc ? *desc : (cugl_texture_desc){0};
    CUGL__TRY(check_options(&d, __func__));
    if (!resource)
        return CUGL_OK;
    cugl_resource_desc r;
    CUGL__TRY(check_fields(resource, __func__));
    CUGL__TRY(check_pair(&d, resource, __func__));
    return check_objects(resource, &r, __func__);
}

/* What needs the device: which device, alignment, size limits. */
static cugl_status check_on_device(const cugl_resource_desc *r, cugl_device *device,
                                   const char *what, const char *who)
{
    resource_info in = info_of(r);
    if (in.device && in.device != device)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the %s is on device %d, the %s would be on device %d",
                          r->kind == CUGL_RESOURCE_ARRAY ? "array" : "mipmapped array",
                          in.device->ordinal, what, device->ordinal);
    if (!is_buffer_kind(r->kind))
        return CUGL_OK;
    const cugl_buffer *b = r->buffer;
    if (!b->host_accessible && b->device_id >= 0 && b->device_id != device->ordinal)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the buffer is memory of device %d, the %s would be on device %d",
                          b->device_id, what, device->ordinal);
    const cugl_device_properties *p;
    CUGL__TRY(cugl__device_props(device, who, &p));
    uint64_t address = b->ptr + r->offset;
    if (p->texture_alignment && address % p->texture_alignment != 0)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the address 0x%llx (buffer + offset %zu) is not a multiple of the "
                          "device's texture_alignment, %zu bytes",
                          (unsigned long long)address, r->offset, p->texture_alignment);
    if (r->kind == CUGL_RESOURCE_LINEAR)
        return CUGL_OK;
    if (p->texture_pitch_alignment && r->pitch_bytes % p->texture_pitch_alignment != 0)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "resource.pitch_bytes %zu is not a multiple of the device's "
                          "texture_pitch_alignment, %zu bytes",
                          r->pitch_bytes, p->texture_pitch_alignment);
    const int *lim = p->max_texture_2d_linear;
    if ((lim[0] > 0 && r->width > (size_t)lim[0]) || (lim[1] > 0 && r->height > (size_t)lim[1]) ||
        (lim[2] > 0 && r->pitch_bytes > (size_t)lim[2]))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "a pitch2d image of %zux%zu elements, pitch %zu bytes, exceeds the "
                          "limits of %s: %dx%d, pitch %d bytes",
                          r->width, r->height, r->pitch_bytes, p->name, lim[0], lim[1], lim[2]);
    return CUGL_OK;
}

static CUDA_RESOURCE_DESC cu_resource(const cugl_resource_desc *r)
{
    CUDA_RESOURCE_DESC c;
    memset(&c, 0, sizeof c);
    switch (r->kind) {
    case CUGL_RESOURCE_ARRAY:
        c.resType = CU_RESOURCE_TYPE_ARRAY;
        c.res.array.hArray = r->array->handle;
        break;
    case CUGL_RESOURCE_MIPMAPPED_ARRAY:
        c.resType = CU_RESOURCE_TYPE_MIPMAPPED_ARRAY;
        c.res.mipmap.hMipmappedArray = r->mipmapped_array->handle;
        break;
    case CUGL_RESOURCE_LINEAR:
        c.resType = CU_RESOURCE_TYPE_LINEAR;
        c.res.linear.devPtr = (CUdeviceptr)(r->buffer->ptr + r->offset);
        c.res.linear.format = cugl__format_to_cu(r->format);
        c.res.linear.numChannels = (unsigned)r->num_channels;
        c.res.linear.sizeInBytes = r->size_bytes;
        break;
    default:
        c.resType = CU_RESOURCE_TYPE_PITCH2D;
        c.res.pitch2D.devPtr = (CUdeviceptr)(r->buffer->ptr + r->offset);
        c.res.pitch2D.format = cugl__format_to_cu(r->format);
        c.res.pitch2D.numChannels = (unsigned)r->num_channels;
        c.res.pitch2D.width = r->width;
        c.res.pitch2D.height = r->height;
        c.res.pitch2D.pitchInBytes = r->pitch_bytes;
        break;
    }
    return c;
}

static CUDA_TEXTURE_DESC cu_texture(const cugl_texture_desc *d)
{
    CUDA_TEXTURE_DESC c;
    memset(&c, 0, sizeof c);
    for (int i = 0; i < 3; i++)
        c.addressMode[i] = address_modes[d->address_mode[i]];
    c.filterMode = d->filter_mode == CUGL_FILTER_LINEAR ? CU_TR_FILTER_MODE_LINEAR
                                                        : CU_TR_FILTER_MODE_POINT;
    c.mipmapFilterMode = d->mipmap_filter_mode == CUGL_FILTER_LINEAR
                             ? CU_TR_FILTER_MODE_LINEAR
                             : CU_TR_FILTER_MODE_POINT;
    if (d->read_mode == CUGL_READ_ELEMENT_TYPE)
        c.flags |= CU_TRSF_READ_AS_INTEGER;
    if (d->normalized_coords)
        c.flags |= CU_TRSF_NORMALIZED_COORDINATES;
    if (d->srgb)
        c.flags |= CU_TRSF_SRGB;
    if (d->disable_trilinear_optimization)
        c.flags |= CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION;
    if (d->seamless_cubemap)
        c.flags |= CU_TRSF_SEAMLESS_CUBEMAP;
    c.maxAnisotropy = d->max_anisotropy;
    c.mipmapLevelBias = d->mipmap_level_bias;
    c.minMipmapLevelClamp = d->min_mipmap_level_clamp;
    c.maxMipmapLevelClamp = d->max_mipmap_level_clamp;
    memcpy(c.borderColor, d->border_color, sizeof c.borderColor);
    return c;
}

/* Take or drop the reference a texture or surface holds on its resource. */
static void resource_retain(const cugl_resource_desc *r)
{
    if (r->kind == CUGL_RESOURCE_ARRAY)
        cugl_array_retain(r->array);
    else if (r->kind == CUGL_RESOURCE_MIPMAPPED_ARRAY)
        cugl_mipmapped_array_retain(r->mipmapped_array);
    else
        cugl_buffer_retain(r->buffer);
}

static void resource_release(const cugl_resource_desc *r)
{
    if (r->kind == CUGL_RESOURCE_ARRAY)
        cugl_array_release(r->array);
    else if (r->kind == CUGL_RESOURCE_MIPMAPPED_ARRAY)
        cugl_mipmapped_array_release(r->mipmapped_array);
    else
        cugl_buffer_release(r->buffer);
}

static bool resource_closed(const cugl_resource_desc *r)
{
    if (r->kind == CUGL_RESOURCE_ARRAY)
        return cugl_array_is_closed(r->array);
    if (r->kind == CUGL_RESOURCE_MIPMAPPED_ARRAY)
        return cugl_mipmapped_array_is_closed(r->mipmapped_array);
    return cugl_buffer_is_closed(r->buffer);
}

CUGL_API cugl_status cugl_texture_create(cugl_texture **out, cugl_device *device,
                                         const cugl_resource_desc *resource,
                                         const cugl_texture_desc *desc)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = NULL;
    CUGL__CHECK_NOT_NULL(device);
    cugl_texture_desc d = desc ? *desc : (cugl_texture_desc){0};
    CUGL__TRY(check_options(&d, __func__));
    CUGL__TRY(check_fields(resource, __func__));
    CUGL__TRY(check_pair(&d, resource, __func__));
    cugl_resource_desc r;
    CUGL__TRY(check_objects(resource, &r, __func__));
    CUGL__TRY(cugl__device_activate(device, __func__));
    CUGL__TRY(check_on_device(&r, device, "texture", __func__));

    cugl_texture *t = calloc(1, sizeof *t);
    if (!t)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, __func__, "cannot allocate a texture");
    CUDA_RESOURCE_DESC cr = cu_resource(&r);
    CUDA_TEXTURE_DESC ct = cu_texture(&d);
    cugl_status st = CUGL_CU(cuTexObjectCreate, &t->handle, &cr, &ct, NULL);
    if (st != CUGL_OK) {
        free(t);
        return st;
    }
    cugl__ref_init(&t->ref);
    t->device = device;
    t->resource = r;
    t->desc = d;
    resource_retain(&r);
    *out = t;
    return CUGL_OK;
}

static cugl_status texture_check(const cugl_texture *t, const char *who)
{
    if (!t)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "texture is NULL");
    if (t->closed)
        return cugl__fail(CUGL_ERROR_CLOSED, who, "the texture has been closed");
    if (resource_closed(&t->resource))
        return cugl__fail(CUGL_ERROR_CLOSED, who, "the texture's %s has been closed",
                          t->resource.kind == CUGL_RESOURCE_ARRAY             ? "array"
                          : t->resource.kind == CUGL_RESOURCE_MIPMAPPED_ARRAY ? "mipmapped array"
                                                                              : "buffer");
    return CUGL_OK;
}

CUGL_API uint64_t cugl_texture_handle(const cugl_texture *texture)
{
    return cugl_texture_is_closed(texture) ? 0 : (uint64_t)texture->handle;
}

CUGL_API cugl_device *cugl_texture_device(const cugl_texture *texture)
{
    return texture ? texture->device : NULL;
}

CUGL_API cugl_status cugl_texture_get_resource(const cugl_texture *texture,
                                               cugl_resource_desc *resource)
{
    CUGL__TRY(texture_check(texture, __func__));
    CUGL__CHECK_NOT_NULL(resource);
    *resource = texture->resource;
    return CUGL_OK;
}

CUGL_API cugl_status cugl_texture_get_desc(const cugl_texture *texture,
                                           cugl_texture_desc *desc)
{
    CUGL__TRY(texture_check(texture, __func__));
    CUGL__CHECK_NOT_NULL(desc);
    *desc = texture->desc;
    return CUGL_OK;
}

CUGL_API bool cugl_texture_is_closed(const cugl_texture *texture)
{
    return !texture || texture->closed || resource_closed(&texture->resource);
}

CUGL_API void cugl_texture_close(cugl_texture *texture)
{
    if (!texture || texture->closed)
        return;
    cugl__cu.cuTexObjectDestroy(texture->handle);
    texture->handle = 0;
    texture->closed = true;
    resource_release(&texture->resource);
}

CUGL_API cugl_texture *cugl_texture_retain(cugl_texture *texture)
{
    if (texture)
        cugl__ref_inc(&texture->ref);
    return texture;
}

CUGL_API void cugl_texture_release(cugl_texture *texture)
{
    if (!texture || !cugl__ref_dec(&texture->ref))
        return;
    cugl_texture_close(texture);
    free(texture);
}

/* ---- Surfaces ---------------------------------------------------------- */

CUGL_API cugl_status cugl_surface_create(cugl_surface **out, cugl_device *device,
                                         const cugl_resource_desc *resource)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = NULL;
    CUGL__CHECK_NOT_NULL(device);
    CUGL__CHECK_NOT_NULL(resource);
    if (kind_valid(resource->kind) && resource->kind != CUGL_RESOURCE_ARRAY)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "a surface writes an array; resource.kind is %s (for one level of a "
                          "mipmapped array, pass the level from "
                          "cugl_mipmapped_array_get_level as an array)",
                          kind_names[resource->kind]);
    cugl_resource_desc r;
    CUGL__TRY(check_fields(resource, __func__));
    CUGL__TRY(check_objects(resource, &r, __func__));
    if (!r.array->desc.surface_load_store)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "the array was not created with surface_load_store; set "
                          "cugl_array_desc.surface_load_store to bind it to a surface");
    CUGL__TRY(cugl__device_activate(device, __func__));
    CUGL__TRY(check_on_device(&r, device, "surface", __func__));

    cugl_surface *s = calloc(1, sizeof *s);
    if (!s)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, __func__, "cannot allocate a surface");
    CUDA_RESOURCE_DESC cr = cu_resource(&r);
    cugl_status st = CUGL_CU(cuSurfObjectCreate, &s->handle, &cr);
    if (st != CUGL_OK) {
        free(s);
        return st;
    }
    cugl__ref_init(&s->ref);
    s->device = device;
    s->array = cugl_array_retain(r.array);
    *out = s;
    return CUGL_OK;
}

CUGL_API uint64_t cugl_surface_handle(const cugl_surface *surface)
{
    return cugl_surface_is_closed(surface) ? 0 : (uint64_t)surface->handle;
}

CUGL_API cugl_device *cugl_surface_device(const cugl_surface *surface)
{
    return surface ? surface->device : NULL;
}

CUGL_API cugl_array *cugl_surface_array(const cugl_surface *surface)
{
    return surface && !surface->closed ? surface->array : NULL;
}

CUGL_API bool cugl_surface_is_closed(const cugl_surface *surface)
{
    return !surface || surface->closed || cugl_array_is_closed(surface->array);
}

CUGL_API void cugl_surface_close(cugl_surface *surface)
{
    if (!surface || surface->closed)
        return;
    cugl__cu.cuSurfObjectDestroy(surface->handle);
    surface->handle = 0;
    surface->closed = true;
    cugl_array_release(surface->array);
    surface->array = NULL;
}

CUGL_API cugl_surface *cugl_surface_retain(cugl_surface *surface)
{
    if (surface)
        cugl__ref_inc(&surface->ref);
    return surface;
}

CUGL_API void cugl_surface_release(cugl_surface *surface)
{
    if (!surface || !cugl__ref_dec(&surface->ref))
        return;
    cugl_surface_close(surface);
    free(surface);
}
