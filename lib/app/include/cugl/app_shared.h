/*
 * cugl/app_shared.h - map-free interop: CUDA memory that GL uses directly.
 *
 * CUDA allocates exportable memory (cuMemCreate with a POSIX file
 * descriptor handle, cugl_exportable_memory_resource_create); GL imports
 * the descriptor with GL_EXT_memory_object_fd as a buffer object or as the
 * storage of a 2-D texture with linear tiling. Nothing is mapped or
 * unmapped per frame; the two sides take turns with one call each:
 *
 *   cuda_begin(stream)  CUDA waits until GL has finished with the memory
 *   ... kernels write cugl_app_shared_buffer() on stream ...
 *   cuda_end(stream)    marks the writes (an event on the stream)
 *   gl_begin()          GL waits for those writes before its next commands
 *   ... GL draws from the buffer or texture ...
 *   gl_end()            marks GL's reads (a fence)
 *
 * Where GL lacks GL_EXT_memory_object_fd (Mesa, other vendors) creation
 * fails with CUGL_ERROR_NOT_SUPPORTED, saying to use the map path
 * (cugl/graphics.h).
 */
#ifndef CUGL_APP_SHARED_H
#define CUGL_APP_SHARED_H

#include "cugl/app.h"

CUGL_BEGIN_DECLS

typedef struct cugl_app_shared cugl_app_shared;

/**
 * `size` bytes of exportable memory on `device` (initialized), imported by
 * GL as a buffer object (immutable storage) in the current context.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL, size 0),
 *   CUGL_ERROR_NOT_SUPPORTED (no GL_EXT_memory_object_fd, or the device has
 *   no fd-exportable memory), CUGL_ERROR_GL, CUGL_ERROR_CUDA.
 */
CUGL_API cugl_status cugl_app_shared_buffer_create(cugl_app_shared **out, cugl_device *device,
                                                   size_t size);

/**
 * A `width` x `height` GL_TEXTURE_2D whose storage is exportable CUDA memory
 * with linear tiling, of `gl_internal_format` (GL_RGBA8, GL_RGBA32F,
 * GL_R32F, ... with 1, 2 or 4 channels). CUDA sees rows of
 * cugl_app_shared_pitch() bytes.
 * @errors as cugl_app_shared_buffer_create; an unsupported format.
 */
CUGL_API cugl_status cugl_app_shared_texture_create(cugl_app_shared **out, cugl_device *device,
                                                    GLenum gl_internal_format, int width,
                                                    int height);

/** Free both sides (waits for both to finish with the memory). NULL: no-op. */
CUGL_API void cugl_app_shared_destroy(cugl_app_shared *shared);

/** The CUDA side: a buffer over the whole memory (no reference is passed). */
CUGL_API cugl_buffer *cugl_app_shared_buffer(const cugl_app_shared *shared);
/** The GL side: a buffer or texture name. */
CUGL_API GLuint cugl_app_shared_gl_name(const cugl_app_shared *shared);
/** Bytes from one texture row to the next (buffers: the size). */
CUGL_API size_t cugl_app_shared_pitch(const cugl_app_shared *shared);
CUGL_API size_t cugl_app_shared_size(const cugl_app_shared *shared);

CUGL_API cugl_status cugl_app_shared_cuda_begin(cugl_app_shared *shared, cugl_stream *stream);
CUGL_API cugl_status cugl_app_shared_cuda_end(cugl_app_shared *shared, cugl_stream *stream);
CUGL_API cugl_status cugl_app_shared_gl_begin(cugl_app_shared *shared);
CUGL_API cugl_status cugl_app_shared_gl_end(cugl_app_shared *shared);

CUGL_END_DECLS

#endif /* CUGL_APP_SHARED_H */
