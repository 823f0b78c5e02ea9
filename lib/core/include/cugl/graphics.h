/**
 * @file cugl/graphics.h
 * GL buffers and images registered with CUDA.
 *
 * The C form of cuda.core's GraphicsResource, with image mapping and
 * batched map/unmap added. libcugl makes no GL call: GL object names and
 * targets are plain integers, and the GL context that owns the object must
 * be current on the calling thread for registration, mapping, unmapping and
 * unregistration (the driver's rule).
 *
 * States: registered -> mapped -> registered ... -> closed. While mapped,
 * GL must not touch the object. Mapping orders CUDA work on the stream after
 * all GL work issued before it; unmapping orders later GL work after the
 * CUDA work on the stream.
 *
 * The buffer or array that map returns owns the mapping: closing it (or
 * releasing its last reference) unmaps. Every buffer and array obtained from
 * a mapping is closed when the resource is unmapped: its handle goes to 0
 * and every use returns CUGL_ERROR_CLOSED. Each holds a reference to the
 * resource. A resource is used by one thread at a time.
 */
#ifndef CUGL_GRAPHICS_H
#define CUGL_GRAPHICS_H

#include "cugl/error.h"

CUGL_BEGIN_DECLS

/** A GL buffer or image registered with CUDA. */
typedef struct cugl_graphics_resource cugl_graphics_resource;

/** Registration flags; combine with |. READ_ONLY and WRITE_DISCARD exclude
 * each other; SURFACE_LOAD_STORE and TEXTURE_GATHER are for images. */
typedef enum cugl_graphics_flags {
    CUGL_GRAPHICS_NONE = 0,               /**< CUDA reads and writes */
    CUGL_GRAPHICS_READ_ONLY = 1,          /**< CUDA only reads */
    CUGL_GRAPHICS_WRITE_DISCARD = 2,      /**< CUDA overwrites all; old contents lost */
    CUGL_GRAPHICS_SURFACE_LOAD_STORE = 4, /**< the array can back a surface object */
    CUGL_GRAPHICS_TEXTURE_GATHER = 8,     /**< texture gather on the array */
} cugl_graphics_flags;

/** The GL targets an image can be registered with (GL's own values). */
enum {
    CUGL_GL_TEXTURE_2D = 0x0DE1,        /**< GL_TEXTURE_2D */
    CUGL_GL_TEXTURE_3D = 0x806F,        /**< GL_TEXTURE_3D */
    CUGL_GL_TEXTURE_RECTANGLE = 0x84F5, /**< GL_TEXTURE_RECTANGLE */
    CUGL_GL_TEXTURE_CUBE_MAP = 0x8513,  /**< GL_TEXTURE_CUBE_MAP */
    CUGL_GL_TEXTURE_2D_ARRAY = 0x8C1A,  /**< GL_TEXTURE_2D_ARRAY */
    CUGL_GL_RENDERBUFFER = 0x8D41,      /**< GL_RENDERBUFFER */
};

/** Cube map faces, as layers of a mapped cube map (CUarray_cubemap_face). */
enum {
    CUGL_CUBE_FACE_POSITIVE_X = 0, /**< the +x face */
    CUGL_CUBE_FACE_NEGATIVE_X = 1, /**< the -x face */
    CUGL_CUBE_FACE_POSITIVE_Y = 2, /**< the +y face */
    CUGL_CUBE_FACE_NEGATIVE_Y = 3, /**< the -y face */
    CUGL_CUBE_FACE_POSITIVE_Z = 4, /**< the +z face */
    CUGL_CUBE_FACE_NEGATIVE_Z = 5, /**< the -z face */
};

/**
 * Register GL buffer object `gl_buffer` for `device` (initialized with
 * cugl_device_set_current) with flags NONE, READ_ONLY or WRITE_DISCARD.
 * Registration is costly: register once, map every frame. Storage
 * respecified afterwards (glBufferData) is not what CUDA sees: prefer
 * immutable storage (glBufferStorage), or register again.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; name 0; unknown flags, image
 *   flags, READ_ONLY with WRITE_DISCARD), CUGL_ERROR_INVALID_STATE (device
 *   not initialized; no GL context current), CUGL_ERROR_NOT_SUPPORTED (the
 *   current GL context does not run on `device`: Mesa, another vendor or
 *   another GPU; the message says what to do), CUGL_ERROR_CUDA (the driver
 *   refused, e.g. not a buffer name).
 * @pointer_lifetime The caller owns one reference.
 * @thread_safety The thread whose current GL context owns the GL objects (registration, map and
 *   unmap talk to GL).
 * @param[out] out receives the resource; NULL on failure.
 * @param device the CUDA device GL runs on (initialized).
 * @param gl_buffer the GL buffer's name (with immutable storage).
 * @param flags CUGL_GRAPHICS_* flags.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_graphics_resource_from_gl_buffer(cugl_graphics_resource **out,
                                                           cugl_device *device,
                                                           uint32_t gl_buffer, unsigned flags);

/**
 * Register a GL texture or renderbuffer `gl_image` of `gl_target`
 * (CUGL_GL_TEXTURE_2D, _RECTANGLE, _CUBE_MAP, _3D, _2D_ARRAY or
 * CUGL_GL_RENDERBUFFER). Registrable internal formats have 1, 2 or 4
 * channels: GL_R, GL_RG, GL_RGBA x 8, 16, 16F, 32F, 8UI, 16UI, 32UI, 8I,
 * 16I, 32I. The driver takes GL_RGB8 and GL_SRGB8_ALPHA8 too, as arrays
 * of four unsigned bytes a texel (sRGB bytes as stored, not converted);
 * other GL_RGB* formats, depth, compressed, multisampled and bindless
 * textures it refuses. Writing from a kernel needs
 * SURFACE_LOAD_STORE.
 * @errors as cugl_graphics_resource_from_gl_buffer, plus an unknown target;
 *   a refused format is CUGL_ERROR_NOT_SUPPORTED with the list above.
 * @thread_safety The thread whose current GL context owns the GL objects (registration, map and
 *   unmap talk to GL).
 * @param[out] out receives the resource; NULL on failure.
 * @param device the CUDA device GL runs on (initialized).
 * @param gl_image the GL texture's or renderbuffer's name.
 * @param gl_target its target, a CUGL_GL_* value.
 * @param flags CUGL_GRAPHICS_* flags.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_graphics_resource_from_gl_image(cugl_graphics_resource **out,
                                                          cugl_device *device,
                                                          uint32_t gl_image, uint32_t gl_target,
                                                          unsigned flags);

/**
 * Map a buffer resource on `stream` and return the mapped memory as a
 * non-owning buffer (memory resource none) that owns the mapping.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; an image resource; the stream on
 *   another device), CUGL_ERROR_CLOSED (resource or stream),
 *   CUGL_ERROR_INVALID_STATE (already mapped), CUGL_ERROR_CUDA. If the map
 *   succeeds and fetching the pointer fails, the resource is unmapped before
 *   the error returns.
 * @pointer_lifetime The caller owns one reference to the buffer.
 * @thread_safety The thread whose current GL context owns the GL objects (registration, map and
 *   unmap talk to GL).
 * @param[out] out receives the mapped memory as a buffer; NULL on failure.
 * @param resource a buffer resource.
 * @param stream the stream the map is ordered on (required).
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_graphics_resource_map(cugl_buffer **out,
                                                cugl_graphics_resource *resource,
                                                cugl_stream *stream);

/**
 * Map an image resource on `stream` and return the CUDA array of one layer
 * (2-D array textures; the face, CUGL_CUBE_FACE_*, of cube maps; 0
 * otherwise) and mip level. The array owns the mapping.
 * @errors as cugl_graphics_resource_map; a buffer resource, a layer or
 *   level the image does not have (CUGL_ERROR_INVALID_ARGUMENT; the
 *   resource is left unmapped).
 * @thread_safety The thread whose current GL context owns the GL objects (registration, map and
 *   unmap talk to GL).
 * @param[out] out receives the mapped image as an array; NULL on failure.
 * @param resource an image resource.
 * @param stream the stream the map is ordered on (required).
 * @param layer the layer or cube face (0 for others).
 * @param level the mipmap level.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_graphics_resource_map_array(cugl_array **out,
                                                      cugl_graphics_resource *resource,
                                                      cugl_stream *stream, unsigned layer,
                                                      unsigned level);

/**
 * Map `count` resources in one driver call on `stream`. All must be
 * registered, unmapped, distinct and of one device. Then take their memory
 * with cugl_graphics_resource_buffer / _array; unmap with
 * cugl_graphics_unmap (or each resource's unmap).
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL, count 0, a duplicate, devices
 *   differ, the stream on another device), CUGL_ERROR_CLOSED,
 *   CUGL_ERROR_INVALID_STATE (one is mapped: which), CUGL_ERROR_CUDA. On
 *   failure none is mapped.
 * @thread_safety The thread whose current GL context owns the GL objects (registration, map and
 *   unmap talk to GL).
 * @param resources the resources, count of them, none mapped.
 * @param count how many.
 * @param stream the stream the map is ordered on (required).
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_graphics_map(cugl_graphics_resource *const *resources, size_t count,
                                       cugl_stream *stream);

/**
 * Unmap `count` mapped resources in as few driver calls as there are
 * streams: on `stream`, or, when it is NULL, on each one's unmap stream
 * (see cugl_graphics_resource_unmap). Buffers and arrays taken from them
 * are closed.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL, count 0, a duplicate, devices
 *   differ, the stream on another device), CUGL_ERROR_CLOSED,
 *   CUGL_ERROR_INVALID_STATE (one is not mapped: nothing is unmapped),
 *   CUGL_ERROR_CUDA (those of the failed driver call stay mapped).
 * @thread_safety The thread whose current GL context owns the GL objects (registration, map and
 *   unmap talk to GL).
 * @param resources the resources, count of them, all mapped.
 * @param count how many.
 * @param stream the stream it is ordered on, or NULL for the resource's unmap stream
 *   (cugl_graphics_resource_unmap says which).
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_graphics_unmap(cugl_graphics_resource *const *resources,
                                         size_t count, cugl_stream *stream);

/**
 * The mapped memory of a mapped buffer resource, as a new non-owning buffer
 * that does not own the mapping (it is closed at unmap).
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL, an image resource),
 *   CUGL_ERROR_CLOSED, CUGL_ERROR_INVALID_STATE (not mapped), CUGL_ERROR_CUDA.
 * @thread_safety Any thread; not concurrently with a map, unmap or close of the same resource.
 * @param[out] out receives the mapped memory as a buffer; NULL on failure.
 * @param resource a mapped buffer resource.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_graphics_resource_buffer(cugl_buffer **out,
                                                   cugl_graphics_resource *resource);

/**
 * The same for one layer (or cube face) and mip level of a mapped image.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; a buffer resource; a layer or
 *   level the image does not have), CUGL_ERROR_CLOSED, CUGL_ERROR_INVALID_STATE
 *   (not mapped), CUGL_ERROR_CUDA.
 * @thread_safety Any thread; not concurrently with a map, unmap or close of the same resource.
 * @param[out] out receives the mapped image as an array; NULL on failure.
 * @param resource a mapped image resource.
 * @param layer the layer or cube face (0 for others).
 * @param level the mipmap level.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_graphics_resource_array(cugl_array **out,
                                                  cugl_graphics_resource *resource,
                                                  unsigned layer, unsigned level);

/**
 * Unmap. The unmap is ordered on `stream` when given; otherwise on the
 * stream set by cugl_graphics_resource_set_unmap_stream, otherwise on the
 * mapping stream. Closing the buffer or array that map returned does the
 * same (with close's stream as the override). The buffers and arrays taken
 * from the mapping are closed even when the driver fails; the resource then
 * stays mapped, and unmap or close may try again.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL, or a stream of another
 *   device), CUGL_ERROR_CLOSED (resource or stream), CUGL_ERROR_INVALID_STATE
 *   (not mapped), CUGL_ERROR_CUDA.
 * @thread_safety The thread whose current GL context owns the GL objects (registration, map and
 *   unmap talk to GL).
 * @param resource the resource.
 * @param stream the stream it is ordered on, or NULL for the unmap stream or else the mapping
 *   stream, as above.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_graphics_resource_unmap(cugl_graphics_resource *resource,
                                                  cugl_stream *stream);

/**
 * While mapped: the stream the eventual unmap is ordered on, when the call
 * that unmaps names none (cuda.core's unmap(stream=...) override for the
 * buffer's close). NULL restores the mapping stream.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL resource, or a stream of another
 *   device), CUGL_ERROR_CLOSED,
 *   CUGL_ERROR_INVALID_STATE (not mapped).
 * @thread_safety Any thread; not concurrently with a map, unmap or close of the same resource.
 * @param resource the resource.
 * @param stream the stream later unmaps are ordered on when given none.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_graphics_resource_set_unmap_stream(cugl_graphics_resource *resource,
                                                             cugl_stream *stream);

/**
 * Change the access hint for the next maps: NONE, READ_ONLY or
 * WRITE_DISCARD (nbody's ping-pong pattern).
 * @errors CUGL_ERROR_INVALID_ARGUMENT (other flags), CUGL_ERROR_CLOSED,
 *   CUGL_ERROR_INVALID_STATE (mapped), CUGL_ERROR_CUDA.
 * @thread_safety The thread whose current GL context owns the GL objects (registration, map and
 *   unmap talk to GL).
 * @param resource the resource.
 * @param flags CUGL_GRAPHICS_NONE, READ_ONLY or WRITE_DISCARD.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_graphics_resource_set_map_flags(cugl_graphics_resource *resource,
                                                          unsigned flags);

/**
 * Unregister (unmapping first, on `stream` or as unmap would, if mapped).
 * Idempotent. The GL context must still be current. The unregistration is
 * asked of the driver even where the device cannot be made current.
 * @errors CUGL_ERROR_CLOSED (stream), CUGL_ERROR_INVALID_ARGUMENT (a stream
 *   of another device; nothing is done), CUGL_ERROR_CUDA (the resource is
 *   closed all the same).
 * @thread_safety The thread whose current GL context owns the GL objects (registration, map and
 *   unmap talk to GL).
 * @param resource the resource, or NULL (no-op, CUGL_OK).
 * @param stream the stream the unmap is ordered on, or NULL for the resource's unmap stream
 *   (cugl_graphics_resource_unmap says which).
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_graphics_resource_close(cugl_graphics_resource *resource,
                                                  cugl_stream *stream);

/**
 * @thread_safety Any thread; not concurrently with a map, unmap or close of the same resource.
 * @param resource the resource, or NULL.
 * @return true if mapped; false for NULL.
 */
CUGL_API bool cugl_graphics_resource_is_mapped(const cugl_graphics_resource *resource);
/**
 * @thread_safety Any thread; not concurrently with a map, unmap or close of the same resource.
 * @param resource the resource, or NULL.
 * @return true once closed, and for NULL.
 */
CUGL_API bool cugl_graphics_resource_is_closed(const cugl_graphics_resource *resource);
/**
 * true for buffers, false for images.
 * @thread_safety Any thread; not concurrently with a map, unmap or close of the same resource.
 * @param resource the resource, or NULL.
 * @return true for a buffer; false for NULL.
 */
CUGL_API bool cugl_graphics_resource_is_buffer(const cugl_graphics_resource *resource);
/**
 * The flags given at registration (cugl_graphics_resource_map_flags gives the current map
 * flags).
 * @thread_safety Any thread; not concurrently with a map, unmap or close of the same resource.
 * @param resource the resource, or NULL.
 * @return the registration flags; 0 for NULL.
 */
CUGL_API unsigned cugl_graphics_resource_flags(const cugl_graphics_resource *resource);
/**
 * @thread_safety Any thread; not concurrently with a map, unmap or close of the same resource.
 * @param resource the resource, or NULL.
 * @return the map flags now in force; 0 for NULL.
 */
CUGL_API unsigned cugl_graphics_resource_map_flags(const cugl_graphics_resource *resource);
/**
 * The GL object's name, as given at registration.
 * @thread_safety Any thread; not concurrently with a map, unmap or close of the same resource.
 * @param resource the resource, or NULL.
 * @return the GL object's name; 0 for NULL.
 */
CUGL_API uint32_t cugl_graphics_resource_gl_name(const cugl_graphics_resource *resource);
/**
 * @thread_safety Any thread; not concurrently with a map, unmap or close of the same resource.
 * @param resource the resource, or NULL.
 * @return the image's target (a CUGL_GL_* value); 0 for buffers and NULL.
 */
CUGL_API uint32_t cugl_graphics_resource_gl_target(const cugl_graphics_resource *resource);
/**
 * The CUgraphicsResource (NULL after close).
 * @thread_safety Any thread; not concurrently with a map, unmap or close of the same resource.
 * @param resource the resource, or NULL.
 * @return the CUgraphicsResource; NULL for NULL and after close.
 */
CUGL_API void *cugl_graphics_resource_handle(const cugl_graphics_resource *resource);
/**
 * @thread_safety Any thread; not concurrently with a map, unmap or close of the same resource.
 * @param resource the resource, or NULL.
 * @return its device (no reference taken); NULL for NULL.
 */
CUGL_API cugl_device *cugl_graphics_resource_device(const cugl_graphics_resource *resource);

/**
 * The CUDA devices that run the current GL context (cuGLGetDevices), at
 * most `capacity` ordinals into `ordinals`, their number in *count. The
 * thread's current CUDA context is left as it was (device 0's primary
 * context is borrowed for the call when there is none).
 * @errors CUGL_ERROR_INVALID_STATE (no GL context current),
 *   CUGL_ERROR_NOT_SUPPORTED (the GL context runs on no CUDA device; a driver without GL
 *   interop), CUGL_ERROR_INVALID_ARGUMENT (NULL count; NULL ordinals with a capacity above 0;
 *   negative capacity), CUGL_ERROR_NO_DRIVER, CUGL_ERROR_CUDA.
 * @thread_safety The thread whose current GL context owns the GL objects (registration, map and
 *   unmap talk to GL).
 * @param[out] ordinals receives up to capacity CUDA device ordinals; may be NULL with capacity 0.
 * @param capacity the room at ordinals.
 * @param[out] count receives the number of such devices (may exceed capacity).
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_gl_devices(int *ordinals, int capacity, int *count);

/**
 * Take another reference.
 * @thread_safety Any thread; not concurrently with a map, unmap or close of the same resource.
 * @param resource the resource, or NULL.
 * @return resource.
 */
CUGL_API cugl_graphics_resource *cugl_graphics_resource_retain(cugl_graphics_resource *resource);
/**
 * Drop a reference. The last one closes the resource (cugl_graphics_resource_close with a NULL
 * stream, so its GL context must then be current) and frees it.
 * @thread_safety Any thread for a reference that is not the last; the last one closes the
 *   resource, so it is dropped on the thread whose GL context owns the GL object, with that
 *   context current; not concurrently with a map, unmap or close of the same resource.
 * @param resource the resource, or NULL (no-op).
 */
CUGL_API void cugl_graphics_resource_release(cugl_graphics_resource *resource);

CUGL_END_DECLS

#endif /* CUGL_GRAPHICS_H */
