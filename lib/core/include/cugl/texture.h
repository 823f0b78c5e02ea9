/**
 * @file cugl/texture.h
 * Texture objects (filtered reads) and surface objects
 * (element reads and writes) for kernels.
 *
 * The C form of cuda.core's ResourceDescriptor, TextureObject(Options) and
 * SurfaceObject. A texture samples an array, a mipmapped array, a range of
 * a buffer (linear) or a pitched 2D image in a buffer (pitch2d); a surface
 * reads and writes an array created with surface_load_store.
 *
 * A kernel takes the handle as a 64-bit argument (cudaTextureObject_t,
 * cudaSurfaceObject_t are unsigned long long):
 *
 *   uint64_t tex = cugl_texture_handle(t);
 *   void *args[] = {&tex, &out};
 *
 * Both hold a reference to what they read, so the caller may release its
 * own reference while the texture or surface lives. Closing that resource
 * explicitly frees it, though: the texture or surface then reports closed.
 */
#ifndef CUGL_TEXTURE_H
#define CUGL_TEXTURE_H

#include "cugl/array.h"

CUGL_BEGIN_DECLS

/** What a texture or surface reads. 0 is none, so a forgotten kind is caught. */
typedef enum cugl_resource_kind {
    CUGL_RESOURCE_ARRAY = 1,           /**< an array (or a mipmap level) */
    CUGL_RESOURCE_MIPMAPPED_ARRAY = 2, /**< all levels of a mipmapped array */
    CUGL_RESOURCE_LINEAR = 3,          /**< bytes of a buffer as a 1D texture */
    CUGL_RESOURCE_PITCH2D = 4,         /**< a pitched 2D image in a buffer */
} cugl_resource_kind;

/**
 * A resource: set `kind` and the fields it names. The objects other kinds
 * read must be NULL (a second object is refused as a mistake); the other
 * numbers are ignored. Buffer resources must be memory the device can read,
 * at an address (the buffer's plus `offset`) aligned to the device's
 * texture_alignment.
 */
typedef struct cugl_resource_desc {
    cugl_resource_kind kind;               /**< which of the fields below are read */
    cugl_array *array;                     /**< ARRAY */
    cugl_mipmapped_array *mipmapped_array; /**< MIPMAPPED_ARRAY */
    cugl_buffer *buffer;                   /**< LINEAR, PITCH2D */
    cugl_format format;                    /**< LINEAR, PITCH2D: required */
    int num_channels;                      /**< LINEAR, PITCH2D: 1, 2 or 4; 0 means 1 */
    size_t offset;                         /**< LINEAR, PITCH2D: bytes into the buffer */
    /** LINEAR: bytes to sample, a whole number (>= 1) of elements; 0 means
     * the rest of the buffer after offset. */
    size_t size_bytes;
    size_t width;  /**< PITCH2D: in elements, >= 1 */
    size_t height; /**< PITCH2D: in elements, >= 1 */
    /** PITCH2D: bytes from a row to the next, >= width x element size and a
     * multiple of the device's texture_pitch_alignment. */
    size_t pitch_bytes;
} cugl_resource_desc;

/** What a coordinate outside [0, 1) (normalized) or [0, size) does. */
typedef enum cugl_address_mode {
    CUGL_ADDRESS_CLAMP = 0,  /**< the edge texel (the default) */
    CUGL_ADDRESS_WRAP = 1,   /**< repeat; needs normalized coordinates */
    CUGL_ADDRESS_MIRROR = 2, /**< repeat mirrored; needs normalized coordinates */
    CUGL_ADDRESS_BORDER = 3, /**< the border colour */
} cugl_address_mode;

/** How a texture blends texels. */
typedef enum cugl_filter_mode {
    CUGL_FILTER_POINT = 0,  /**< the nearest texel (the default) */
    CUGL_FILTER_LINEAR = 1, /**< blend the nearest 2, 4 or 8 texels */
} cugl_filter_mode;

/** What a texture read returns. */
typedef enum cugl_read_mode {
    CUGL_READ_ELEMENT_TYPE = 0,     /**< the stored values as they are (the default) */
    CUGL_READ_NORMALIZED_FLOAT = 1, /**< 8- and 16-bit integers as floats in [0, 1]
                                     * (unsigned) or [-1, 1] (signed) */
} cugl_read_mode;

/** How a texture samples; zero-initialise for the defaults. */
typedef struct cugl_texture_desc {
    cugl_address_mode address_mode[3]; /**< per axis x, y, z */
    cugl_filter_mode filter_mode; /**< within a level */
    cugl_read_mode read_mode;     /**< element type or normalized floats */
    bool normalized_coords; /**< coordinates in [0, 1) instead of [0, size) */
    bool srgb;              /**< sRGB to linear conversion on read */
    float border_color[4];  /**< CUGL_ADDRESS_BORDER: what outside reads */
    unsigned max_anisotropy; /**< 0 or 1: none; at most 16 */
    cugl_filter_mode mipmap_filter_mode; /**< between mipmap levels */
    float mipmap_level_bias;      /**< added to the level the hardware picks */
    float min_mipmap_level_clamp; /**< the finest level that may be read */
    /** The coarsest level that may be read; 0 means num_levels - 1 for a
     * mipmapped array (every level reachable). */
    float max_mipmap_level_clamp;
    /** full trilinear filtering, never the faster approximation */
    bool disable_trilinear_optimization;
    bool seamless_cubemap; /**< filter across cube faces; cube maps only */
} cugl_texture_desc;

/**
 * Check a resource without the driver: kind, the fields it uses (and that
 * the others' objects are unset), formats and channels, closed objects,
 * buffer memory the device can read, and sizes against the buffer: offset
 * within it; linear size at most the rest of the buffer, at least one
 * element, a multiple of the element size; pitch2d width and height >= 1,
 * pitch >= width x element size, offset + pitch x height within the buffer.
 * Alignment and size limits need the device: cugl_texture_create checks them.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (with the values), CUGL_ERROR_CLOSED.
 * @thread_safety Any thread.
 * @param resource the resource to check.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_resource_desc_validate(const cugl_resource_desc *resource);

/**
 * Check texture options without the driver: every enum in range, finite
 * numbers, max_anisotropy <= 16, min clamp <= max clamp, and what the
 * hardware would silently get wrong: wrap or mirror addressing without
 * normalized coordinates. With a resource (NULL to skip), also the resource
 * (cugl_resource_desc_validate) and the pair: linear filtering (or linear
 * mipmap filtering of a mipmapped array) of an integer format read as
 * element type; normalized-float reads of 32-bit integers (returned
 * unconverted); any filtering but point of a linear resource; a mipmapped
 * array without normalized coordinates; seamless_cubemap on a resource
 * that is not a cube map.
 * @param desc NULL for the defaults.
 * @errors CUGL_ERROR_INVALID_ARGUMENT, CUGL_ERROR_CLOSED.
 * @thread_safety Any thread.
 * @param resource the resource it would sample, or NULL to check the options alone.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_texture_desc_validate(const cugl_texture_desc *desc,
                                                const cugl_resource_desc *resource);

/**
 * Create a texture object on `device` (initialized; the resource's device
 * for arrays and device memory). Checks as cugl_texture_desc_validate, then
 * the device's alignment and size limits for buffer resources.
 * @param desc NULL for the defaults.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL out, device or resource; every
 *   check above, with a message), CUGL_ERROR_CLOSED (the resource),
 *   CUGL_ERROR_INVALID_STATE (device not initialized), CUGL_ERROR_CUDA.
 * @thread_safety Any thread.
 * @pointer_lifetime The caller owns one reference; the texture holds one to
 *   the array, mipmapped array or buffer until it is closed.
 * @param[out] out receives the texture (it holds references to what it samples); NULL on failure.
 * @param device the device to make it on.
 * @param resource what it samples.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_texture_create(cugl_texture **out, cugl_device *device,
                                         const cugl_resource_desc *resource,
                                         const cugl_texture_desc *desc);

/**
 * The CUtexObject a kernel takes (cudaTextureObject_t); 0 once closed.
 * @thread_safety Any thread.
 * @param texture the texture, or NULL.
 * @return the CUtexObject to pass to kernels; 0 for NULL and once the texture or its resource
 *   is closed.
 */
CUGL_API uint64_t cugl_texture_handle(const cugl_texture *texture);

/**
 * @thread_safety Any thread.
 * @param texture the texture, or NULL.
 * @return its device (no reference taken); NULL for NULL.
 */
CUGL_API cugl_device *cugl_texture_device(const cugl_texture *texture);

/**
 * The resource as the texture samples it: a linear size of 0 resolved to
 * the bytes it covers. The objects in it are not retained for the caller.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL), CUGL_ERROR_CLOSED.
 * @thread_safety Any thread.
 * @param texture the texture.
 * @param[out] resource receives what it samples (no references taken).
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_texture_get_resource(const cugl_texture *texture,
                                               cugl_resource_desc *resource);

/**
 * The options as the driver got them: a max_mipmap_level_clamp of 0 for a
 * mipmapped array resolved to num_levels - 1.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL), CUGL_ERROR_CLOSED.
 * @thread_safety Any thread.
 * @param texture the texture.
 * @param[out] desc receives its options.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_texture_get_desc(const cugl_texture *texture,
                                           cugl_texture_desc *desc);

/**
 * Whether the texture has been closed, or the resource it samples has:
 * true for NULL.
 * @thread_safety Any thread.
 * @param texture the texture, or NULL.
 * @return true if so, and for NULL.
 */
CUGL_API bool cugl_texture_is_closed(const cugl_texture *texture);

/**
 * Destroy the texture object now (kernels already queued that use it must
 * have finished) and drop its reference to the resource; idempotent.
 * Afterwards every call that returns a status returns CUGL_ERROR_CLOSED.
 * @thread_safety Any thread, once no other thread uses the object.
 * @param texture the texture, or NULL (no-op).
 */
CUGL_API void cugl_texture_close(cugl_texture *texture);

/**
 * Take another reference.
 * @thread_safety Any thread: references are counted atomically.
 * @param texture the texture, or NULL.
 * @return texture.
 */
CUGL_API cugl_texture *cugl_texture_retain(cugl_texture *texture);

/**
 * Drop a reference; the last one closes and frees. NULL is a no-op.
 * @thread_safety Any thread: references are counted atomically.
 * @param texture the texture, or NULL (no-op).
 */
CUGL_API void cugl_texture_release(cugl_texture *texture);

/**
 * Create a surface object on `device` (the array's, initialized) for an
 * array resource whose array was created with surface_load_store. Linear,
 * pitch2d and mipmapped resources are refused (a mipmap level, as an array
 * resource, is fine).
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; another kind; an array without
 *   surface_load_store; another device), CUGL_ERROR_CLOSED,
 *   CUGL_ERROR_INVALID_STATE, CUGL_ERROR_CUDA.
 * @pointer_lifetime The caller owns one reference; the surface holds one to
 *   the array until it is closed.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param[out] out receives the surface (it holds a reference to the array); NULL on failure.
 * @param device the device to make it on.
 * @param resource the array it writes (kind CUGL_RESOURCE_ARRAY).
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_surface_create(cugl_surface **out, cugl_device *device,
                                         const cugl_resource_desc *resource);

/**
 * The CUsurfObject a kernel takes (cudaSurfaceObject_t); 0 once closed.
 * @thread_safety Any thread.
 * @param surface the surface, or NULL.
 * @return the CUsurfObject to pass to kernels; 0 for NULL and once the surface or its array is
 *   closed.
 */
CUGL_API uint64_t cugl_surface_handle(const cugl_surface *surface);

/**
 * @thread_safety Any thread.
 * @param surface the surface, or NULL.
 * @return its device (no reference taken); NULL for NULL.
 */
CUGL_API cugl_device *cugl_surface_device(const cugl_surface *surface);

/**
 * The array the surface writes (no reference is taken); NULL once closed.
 * @thread_safety Any thread.
 * @param surface the surface, or NULL.
 * @return the array it writes (no reference taken); NULL for NULL and after close.
 */
CUGL_API cugl_array *cugl_surface_array(const cugl_surface *surface);

/**
 * Whether the surface, or its array, has been closed; true for NULL.
 * @thread_safety Any thread.
 * @param surface the surface, or NULL.
 * @return true if so, and for NULL.
 */
CUGL_API bool cugl_surface_is_closed(const cugl_surface *surface);

/**
 * Destroy the surface object now and drop its array; idempotent.
 * @thread_safety Any thread, once no other thread uses the object.
 * @param surface the surface, or NULL (no-op).
 */
CUGL_API void cugl_surface_close(cugl_surface *surface);

/**
 * Take another reference.
 * @thread_safety Any thread: references are counted atomically.
 * @param surface the surface, or NULL.
 * @return surface.
 */
CUGL_API cugl_surface *cugl_surface_retain(cugl_surface *surface);

/**
 * Drop a reference; the last one closes and frees. NULL is a no-op.
 * @thread_safety Any thread: references are counted atomically.
 * @param surface the surface, or NULL (no-op).
 */
CUGL_API void cugl_surface_release(cugl_surface *surface);

CUGL_END_DECLS

#endif /* CUGL_TEXTURE_H */
