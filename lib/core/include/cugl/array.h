/**
 * @file cugl/array.h
 * CUDA arrays: opaque, hardware-laid-out images for textures
 * and surfaces.
 *
 * The C form of cuda.core's CUDAArray (OpaqueArray) and MipmappedArray, with
 * what cuda.core leaves out: layered and cube-map arrays and copies of
 * sub-regions between arrays, pitched buffers and pitched host memory.
 *
 * An array has no device pointer. Kernels read it through a texture and
 * write it through a surface (cugl/texture.h); the host fills and reads it
 * by copying, always on a stream.
 *
 * Shapes are (width, height, depth) in elements, x fastest. An element is
 * num_channels values of the format, e.g. 4 x f32 = 16 bytes. A layered
 * array is a stack of `layers` 1D or 2D images; a cube map has 6 square
 * faces (6 x layers for a layered cube map). In copies, the z coordinate of
 * a layered or cube-map array is its layer (or face: layer x 6 + face, faces
 * in the order +x, -x, +y, -y, +z, -z).
 */
#ifndef CUGL_ARRAY_H
#define CUGL_ARRAY_H

#include "cugl/error.h"

CUGL_BEGIN_DECLS

/**
 * The channel formats, one row each: the name after CUGL_FORMAT_, its
 * value, the short name, bytes per channel, the driver's format (the name
 * after CU_AD_FORMAT_) and whether it is floating point. A new format is a
 * row here; every table and check in cugl derives from this list. Values
 * run from 1 without gaps (CUGL_FORMAT_FIRST to CUGL_FORMAT_LAST).
 */
#define CUGL_FORMAT_LIST(X)                       \
    X(U8, 1, "u8", 1, UNSIGNED_INT8, false)       \
    X(U16, 2, "u16", 2, UNSIGNED_INT16, false)    \
    X(U32, 3, "u32", 4, UNSIGNED_INT32, false)    \
    X(I8, 4, "i8", 1, SIGNED_INT8, false)         \
    X(I16, 5, "i16", 2, SIGNED_INT16, false)      \
    X(I32, 6, "i32", 4, SIGNED_INT32, false)      \
    X(F16, 7, "f16", 2, HALF, true)               \
    X(F32, 8, "f32", 4, FLOAT, true)

/**
 * The type of one channel. 0 is no format, so a forgotten one is caught.
 * CUGL_FORMAT_LIST makes the values: CUGL_FORMAT_U8 (1), CUGL_FORMAT_U16
 * (2), CUGL_FORMAT_U32 (3), CUGL_FORMAT_I8 (4), CUGL_FORMAT_I16 (5),
 * CUGL_FORMAT_I32 (6), CUGL_FORMAT_F16 (7), CUGL_FORMAT_F32 (8).
 */
typedef enum cugl_format {
    /** @cond */
#define CUGL__FORMAT_ENUM(id, value, name, size, cu, is_float) CUGL_FORMAT_##id = value,
    CUGL_FORMAT_LIST(CUGL__FORMAT_ENUM)
#undef CUGL__FORMAT_ENUM
    /** @endcond */
} cugl_format;

/** @cond */
#define CUGL__FORMAT_ONE(id, value, name, size, cu, is_float) +1
/** @endcond */
/** The range of the formats' values. */
enum {
    CUGL_FORMAT_FIRST = 1, /**< the first format's value */
    CUGL_FORMAT_LAST = 0 CUGL_FORMAT_LIST(CUGL__FORMAT_ONE) /**< the last format's value */
};
#undef CUGL__FORMAT_ONE

/**
 * Bytes per channel of a format (1, 2 or 4); 0 for a value that is none.
 * @thread_safety Any thread.
 * @param format the format.
 * @return bytes per channel; 0 for a value that is no format.
 */
CUGL_API size_t cugl_format_size(cugl_format format);

/**
 * A short name of a format ("u8", "f32"); "invalid" for a value that is none.
 * @pointer_lifetime Static storage.
 * @thread_safety Any thread.
 * @param format the format.
 * @return its short name, or "invalid".
 */
CUGL_API const char *cugl_format_name(cugl_format format);

/** What an array is made of; zero-initialise, then set ndim, shape and format. */
typedef struct cugl_array_desc {
    int ndim;            /**< 1, 2 or 3: how many entries of shape are used */
    size_t shape[3];     /**< width, height, depth in elements; each used one >= 1,
                          * the unused ones 0 */
    cugl_format format;  /**< required */
    int num_channels;    /**< 1, 2 or 4; 0 means 1 */
    bool surface_load_store; /**< may be written through a surface object */
    /** 0: not layered. >= 1: a layered array, a stack of this many 1D
     * (ndim 1) or 2D (ndim 2) images. */
    size_t layers;
    /** A cube map: ndim 2 and width == height; 6 faces, or 6 per layer when
     * layers is set (a layered cube map). */
    bool cubemap;
} cugl_array_desc;

/**
 * Check a desc without touching the driver: everything cugl_array_create
 * checks before it needs the device (rank, extents, format, channels,
 * layers, cube-map shape). The device's limits are checked at creation.
 * @errors CUGL_ERROR_INVALID_ARGUMENT, with a message that states the value.
 * @thread_safety Any thread.
 * @param desc the desc to check.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_array_desc_validate(const cugl_array_desc *desc);

/**
 * Allocate an array on `device` (which must be initialized). The desc is
 * validated first (cugl_array_desc_validate), then against the device's
 * texture (and, with surface_load_store, surface) size limits.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL out, device or desc; a bad desc;
 *   an extent beyond the device's limits, with the limit),
 *   CUGL_ERROR_INVALID_STATE (device not initialized),
 *   CUGL_ERROR_OUT_OF_MEMORY, CUGL_ERROR_CUDA.
 * @thread_safety Any thread.
 * @pointer_lifetime The caller owns one reference.
 * @param[out] out receives the array; NULL on failure.
 * @param device the device to make it on.
 * @param desc what to make.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_array_create(cugl_array **out, cugl_device *device,
                                       const cugl_array_desc *desc);

/*
 * Full-array copies, one cuMemcpy3DAsync each, ordered on `stream` (which
 * must belong to the array's device). The other side holds the array's
 * size_bytes as one tightly packed block (rows of width x element_size
 * bytes, then rows, then slices, layers or faces); it may be larger.
 * Host memory may be pinned or pageable; it must stay valid, and a source
 * unchanged, until the stream has finished the copy (cugl_stream_sync).
 * A buffer may hold device, pinned or managed memory, or host memory.
 */

/**
 * Copy `src_size` >= size_bytes bytes of host memory into the whole array.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; src_size smaller than the array,
 *   both sizes in the message; a stream of another device),
 *   CUGL_ERROR_CLOSED (array or stream), CUGL_ERROR_CUDA.
 * @thread_safety Any thread.
 * @param dst the array.
 * @param src the host memory: the whole array's elements, packed.
 * @param src_size bytes at src, at least the array's size in bytes.
 * @param stream the stream the copy is ordered on.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_array_copy_from_host(cugl_array *dst, const void *src,
                                               size_t src_size, cugl_stream *stream);

/**
 * Copy the whole array into `dst_size` >= size_bytes bytes of host memory.
 * @errors as cugl_array_copy_from_host.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param dst the host memory that receives the whole array, packed.
 * @param dst_size bytes at dst, at least the array's size in bytes.
 * @param src the array.
 * @param stream the stream the copy is ordered on.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_array_copy_to_host(void *dst, size_t dst_size, cugl_array *src,
                                             cugl_stream *stream);

/**
 * Copy the first size_bytes bytes of a buffer into the whole array.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; the buffer smaller than the
 *   array, both sizes in the message; device memory of another device; a
 *   stream of another device), CUGL_ERROR_CLOSED (array, buffer or stream),
 *   CUGL_ERROR_CUDA.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param dst the array.
 * @param src the buffer (device, pinned, managed or host memory): the array's elements,
 *   packed, at its start.
 * @param stream the stream the copy is ordered on.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_array_copy_from_buffer(cugl_array *dst, cugl_buffer *src,
                                                 cugl_stream *stream);

/**
 * Copy the whole array into the first size_bytes bytes of a buffer.
 * @errors as cugl_array_copy_from_buffer.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param dst the buffer (device, pinned, managed or host memory) that receives the array's
 *   elements, packed, at its start.
 * @param src the array.
 * @param stream the stream the copy is ordered on.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_array_copy_to_buffer(cugl_buffer *dst, cugl_array *src,
                                               cugl_stream *stream);

/**
 * One side of a region copy: exactly one of `array`, `buffer` and `host`.
 * Offsets are in elements of the array taking part (rows and slices for
 * y and z); for a layered or cube-map array z is the layer or face.
 * A buffer or host side is a pitched layout starting at its first byte:
 * element (x, y, z) lies at z x rows x pitch + y x pitch + x x element_size.
 */
typedef struct cugl_copy_endpoint {
    cugl_array *array;   /**< an array side, or NULL */
    cugl_buffer *buffer; /**< a buffer side, or NULL */
    void *host;       /**< pinned or pageable (cast const data when a source), or NULL */
    size_t host_size; /**< bytes at host */
    size_t offset[3]; /**< x, y, z of the region's first element */
    /** Buffer or host: bytes from a row to the next; 0 means the least that
     * holds the region, (offset[0] + extent[0]) x element_size. */
    size_t pitch;
    /** Buffer or host: rows from a slice to the next; 0 means the least that
     * holds the region, offset[1] + extent[1]. */
    size_t rows;
} cugl_copy_endpoint;

/**
 * Copy a box of extent[0] x extent[1] x extent[2] elements from `src` to
 * `dst`, ordered on `stream`: array to array, or between an array and a
 * pitched buffer or host memory (at least one side is an array). Every
 * bound is checked before the driver is called: the region lies inside both
 * sides, pitch >= the region's row bytes, rows >= its rows, two arrays have
 * the same element size (the bytes are copied as they are, so formats may
 * differ), a region does not overlap itself within one array.
 * @param extent Every entry >= 1 (1 for unused axes).
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; an endpoint with none or more
 *   than one of array/buffer/host; no array on either side; a bound broken,
 *   with the numbers; arrays or a stream of different devices),
 *   CUGL_ERROR_CLOSED (an array, buffer or the stream), CUGL_ERROR_CUDA.
 * @thread_safety Any thread.
 * @param dst where the box goes.
 * @param src where it comes from.
 * @param stream the stream the copy is ordered on.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_array_copy_region(const cugl_copy_endpoint *dst,
                                            const cugl_copy_endpoint *src,
                                            const size_t extent[3], cugl_stream *stream);

/**
 * The device the array lives on (NULL for NULL).
 * @thread_safety Any thread.
 * @param array the array, or NULL.
 * @return its device (no reference taken); NULL for NULL.
 */
CUGL_API cugl_device *cugl_array_device(const cugl_array *array);

/**
 * 1, 2 or 3 (0 for NULL). A layered or cube-map array counts its images' rank.
 * @thread_safety Any thread.
 * @param array the array, or NULL.
 * @return 1, 2 or 3; 0 for NULL.
 */
CUGL_API int cugl_array_ndim(const cugl_array *array);

/**
 * Width, height, depth in elements; 0 past ndim (all 0 for NULL).
 * @thread_safety Any thread.
 * @param array the array, or NULL.
 * @param[out] shape receives width, height and depth (unused ones 0; all 0 for NULL); NULL: nothing
 *   is written.
 */
CUGL_API void cugl_array_shape(const cugl_array *array, size_t shape[3]);

/**
 * The number of layers of a layered array; 0 when not layered.
 * @thread_safety Any thread.
 * @param array the array, or NULL.
 * @return the layers of a layered array; 0 if not layered, and for NULL.
 */
CUGL_API size_t cugl_array_layers(const cugl_array *array);

/**
 * Whether the array is a cube map (layered or not).
 * @thread_safety Any thread.
 * @param array the array, or NULL.
 * @return true for a cube map; false for NULL.
 */
CUGL_API bool cugl_array_is_cubemap(const cugl_array *array);
/**
 * The format of each channel.
 * @thread_safety Any thread.
 * @param array the array, or NULL.
 * @return the channel format; 0 for NULL.
 */
CUGL_API cugl_format cugl_array_format(const cugl_array *array);
/**
 * The channels of an element (a desc's 0 reads as 1).
 * @thread_safety Any thread.
 * @param array the array, or NULL.
 * @return 1, 2 or 4; 0 for NULL.
 */
CUGL_API int cugl_array_num_channels(const cugl_array *array);
/**
 * Whether the array was made with surface_load_store.
 * @thread_safety Any thread.
 * @param array the array, or NULL.
 * @return true if surface objects may write it; false for NULL.
 */
CUGL_API bool cugl_array_is_surface_load_store(const cugl_array *array);

/**
 * Bytes per element: format size x channels.
 * @thread_safety Any thread.
 * @param array the array, or NULL.
 * @return bytes per element (channels x channel size); 0 for NULL.
 */
CUGL_API size_t cugl_array_element_size(const cugl_array *array);

/**
 * Bytes of the whole array, every layer and face included.
 * @thread_safety Any thread.
 * @param array the array, or NULL.
 * @return bytes of all its elements, layers and faces; 0 for NULL.
 */
CUGL_API size_t cugl_array_size_bytes(const cugl_array *array);

/**
 * The raw CUarray; NULL after close.
 * @thread_safety Any thread.
 * @param array the array, or NULL.
 * @return the CUarray; NULL for NULL and after close.
 */
CUGL_API void *cugl_array_handle(const cugl_array *array);

/**
 * Whether the array has been closed; true for NULL, and for a mipmap level
 * whose mipmapped array has been closed. The other getters keep answering
 * after close (they describe what the array was); handle is NULL.
 * @thread_safety Any thread.
 * @param array the array, or NULL.
 * @return true once closed, and for NULL.
 */
CUGL_API bool cugl_array_is_closed(const cugl_array *array);

/**
 * Free the array now (queued work that uses it must have finished);
 * idempotent. An array that does not own its memory (a mipmap level, a
 * mapped graphics image) only lets go of what it holds; the array that
 * cugl_graphics_resource_map_array returned unmaps its graphics resource
 * (a failure reaches cugl_last_error() and the error callback). Afterwards every
 * call that returns a status returns CUGL_ERROR_CLOSED.
 * @thread_safety Not concurrently with other calls on the same array; a
 *   mapped array (cugl_graphics_resource_map_array) unmaps its resource, so
 *   it is closed on the thread whose GL context owns the GL object, with that
 *   context current.
 * @param array the array, or NULL (no-op).
 */
CUGL_API void cugl_array_close(cugl_array *array);

/**
 * Take another reference. Returns `array`.
 * @thread_safety Any thread: references are counted atomically.
 * @param array the array, or NULL.
 * @return array.
 */
CUGL_API cugl_array *cugl_array_retain(cugl_array *array);

/**
 * Drop a reference; the last one closes and frees. NULL is a no-op.
 * @thread_safety Any thread: references are counted atomically; the last
 *   reference of a mapped array closes it, which unmaps its resource: that
 *   one is dropped as cugl_array_close is called.
 * @param array the array, or NULL (no-op).
 */
CUGL_API void cugl_array_release(cugl_array *array);

/**
 * Check a mipmapped array's desc and level count without the driver: as
 * cugl_array_desc_validate, and 1 <= num_levels <= 1 + floor(log2 of the
 * largest extent), layers not counted (the driver would silently make
 * fewer levels).
 * @errors CUGL_ERROR_INVALID_ARGUMENT.
 * @thread_safety Any thread.
 * @param desc level 0's desc.
 * @param num_levels the number of levels.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_mipmapped_array_desc_validate(const cugl_array_desc *desc,
                                                        unsigned num_levels);

/**
 * Allocate a mipmapped array on `device`: level 0 as `desc` describes,
 * each further level halving width, height and (3D) depth, none below 1;
 * layers and rank stay. Textures sample it with normalized coordinates.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (as cugl_array_create; num_levels out
 *   of range), CUGL_ERROR_INVALID_STATE, CUGL_ERROR_OUT_OF_MEMORY,
 *   CUGL_ERROR_CUDA.
 * @pointer_lifetime The caller owns one reference.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param[out] out receives the mipmapped array; NULL on failure.
 * @param device the device to make it on.
 * @param desc level 0's desc.
 * @param num_levels the number of levels: 1 to 1 + floor(log2 of the largest extent).
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_mipmapped_array_create(cugl_mipmapped_array **out,
                                                 cugl_device *device,
                                                 const cugl_array_desc *desc,
                                                 unsigned num_levels);

/**
 * One level as an array (level 0 is the largest). The level does not own
 * its memory; it holds a reference to the mipmapped array, so it stays
 * usable after the caller releases the mipmapped array (but not after an
 * explicit cugl_mipmapped_array_close, which frees every level).
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; level >= num_levels),
 *   CUGL_ERROR_CLOSED, CUGL_ERROR_CUDA.
 * @pointer_lifetime The caller owns one reference to a new array each call.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param[out] out receives the level as an array (it holds a reference to the mipmapped array);
 *   NULL on failure.
 * @param mipmap the mipmapped array.
 * @param level the level, from 0.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_mipmapped_array_get_level(cugl_array **out,
                                                    cugl_mipmapped_array *mipmap,
                                                    unsigned level);

/**
 * The desc of a level (level 0: the one it was created with) without the
 * driver: the shape halved `level` times, none below 1.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; level >= num_levels).
 * @thread_safety Any thread.
 * @param mipmap the mipmapped array.
 * @param level the level, from 0.
 * @param[out] desc receives the level's desc (num_channels 0 at creation reads as 1).
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_mipmapped_array_level_desc(const cugl_mipmapped_array *mipmap,
                                                     unsigned level, cugl_array_desc *desc);

/**
 * The number of levels it was created with.
 * @thread_safety Any thread.
 * @param mipmap the mipmapped array, or NULL.
 * @return the number of levels; 0 for NULL.
 */
CUGL_API unsigned cugl_mipmapped_array_num_levels(const cugl_mipmapped_array *mipmap);
/**
 * The device the mipmapped array lives on.
 * @thread_safety Any thread.
 * @param mipmap the mipmapped array, or NULL.
 * @return its device (no reference taken); NULL for NULL.
 */
CUGL_API cugl_device *cugl_mipmapped_array_device(const cugl_mipmapped_array *mipmap);

/**
 * The raw CUmipmappedArray; NULL after close.
 * @thread_safety Any thread.
 * @param mipmap the mipmapped array, or NULL.
 * @return the CUmipmappedArray; NULL for NULL and after close.
 */
CUGL_API void *cugl_mipmapped_array_handle(const cugl_mipmapped_array *mipmap);

/**
 * Whether cugl_mipmapped_array_close has been called. true for NULL.
 * @thread_safety Any thread.
 * @param mipmap the mipmapped array, or NULL.
 * @return true once closed, and for NULL.
 */
CUGL_API bool cugl_mipmapped_array_is_closed(const cugl_mipmapped_array *mipmap);

/**
 * Free the mipmapped array and all its levels now; idempotent. Level arrays
 * still held report closed.
 * @thread_safety Any thread, once no other thread uses the object.
 * @param mipmap the mipmapped array, or NULL (no-op).
 */
CUGL_API void cugl_mipmapped_array_close(cugl_mipmapped_array *mipmap);

/**
 * Take another reference.
 * @thread_safety Any thread: references are counted atomically.
 * @param mipmap the mipmapped array, or NULL.
 * @return mipmap.
 */
CUGL_API cugl_mipmapped_array *cugl_mipmapped_array_retain(cugl_mipmapped_array *mipmap);

/**
 * Drop a reference; the last one (levels hold one each) closes and frees.
 * @thread_safety Any thread: references are counted atomically.
 * @param mipmap the mipmapped array, or NULL (no-op).
 */
CUGL_API void cugl_mipmapped_array_release(cugl_mipmapped_array *mipmap);

CUGL_END_DECLS

#endif /* CUGL_ARRAY_H */
