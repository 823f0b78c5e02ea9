/**
 * @file cugl/app_shared.h
 * Map-free interop: CUDA memory that GL uses directly.
 *
 * CUDA allocates exportable memory (cuMemCreate with a POSIX file
 * descriptor handle, cugl_exportable_memory_resource_create); GL imports
 * the descriptor with GL_EXT_memory_object_fd as the storage of a buffer
 * object. A shared texture is such a buffer holding the pixels (rows
 * cugl_app_shared_pitch() bytes apart) and a GL texture that gl_begin fills
 * from it with a copy on the GPU: CUDA writes plain linear memory with
 * ordinary pointers, GL samples an ordinary texture, and nothing is mapped
 * or unmapped per frame. The two sides take turns with one call each:
 *
 *   cuda_begin(stream)  CUDA waits until GL has finished with the memory
 *   ... kernels write cugl_app_shared_buffer() on stream ...
 *   cuda_end(stream)    marks the writes (an event on the stream)
 *   gl_begin()          GL waits for those writes before its next commands
 *   ... GL draws from the buffer or texture ...
 *   gl_end()            marks GL's reads (a fence)
 *
 * Where Vulkan's loader and driver are there (libvulkan.so.1, loaded at
 * run time), the waits are on the GPU: Vulkan makes two binary semaphores
 * that GL (GL_EXT_semaphore_fd) and CUDA both import; gl_end signals one
 * that cuda_begin queues a wait for on the stream, and cuda_end the other
 * that gl_begin queues a GL wait for. No call then blocks the CPU, and
 * what the program does between them (Python building a tensor, say) is
 * done while the GPU works. Elsewhere each wait is a CPU wait: gl_begin
 * blocks until CUDA's writes are done, cuda_begin until GL's use is; so
 * are all the waits of memory that other devices write
 * (cugl_app_shared_set_writers), and a wait after a side ended twice
 * before the other began (a binary semaphore holds one signal). cugl_app_shared_waits_on_gpu() says which, and
 * CUGL_APP_CPU_WAITS=1 in the environment asks for CPU waits. A target
 * (cugl/app_target.h, pipelined) avoids even the GPU's waiting by rotating
 * several shared objects: CUDA writes one while GL uses the one CUDA
 * finished a frame earlier. Where GL lacks GL_EXT_memory_object_fd (Mesa, other
 * vendors) creation fails with CUGL_ERROR_NOT_SUPPORTED, saying to use the
 * map path (cugl/graphics.h).
 *
 * Threads: a shared object is used by the thread whose GL context it was
 * made in, with that context current.
 */
#ifndef CUGL_APP_SHARED_H
#define CUGL_APP_SHARED_H

#include "cugl/app_context.h"

CUGL_BEGIN_DECLS

/** Exportable CUDA memory that GL uses: a buffer, or a texture fed from one. Opaque. */
typedef struct cugl_app_shared cugl_app_shared;

/** The most writers a shared object takes (cugl_app_shared_set_writers). */
enum { CUGL_APP_SHARED_MAX_WRITERS = 16 /**< devices besides its own that write it */ };

/**
 * `size` bytes of exportable memory on `device` (initialized), imported by
 * GL as a buffer object (immutable storage) in the current context.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL, size 0),
 *   CUGL_ERROR_NOT_SUPPORTED (no GL_EXT_memory_object_fd, or the device has
 *   no fd-exportable memory), CUGL_ERROR_GL, CUGL_ERROR_CUDA.
 * @thread_safety The thread whose GL context is current; the object is used
 *   in that context.
 * @param[out] out the shared buffer; NULL on failure.
 * @param device the CUDA device whose memory it is.
 * @param size the bytes asked for.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_shared_buffer_create(cugl_app_shared **out, cugl_device *device,
                                                   size_t size);

/**
 * A `width` x `height` GL_TEXTURE_2D of `gl_internal_format` (GL_R8, GL_RG8,
 * GL_RGBA8, GL_R16F, GL_RG16F, GL_RGBA16F, GL_R32F, GL_RG32F, GL_RGBA32F,
 * GL_R32UI, GL_RGBA32UI) fed from exportable CUDA memory: CUDA writes rows
 * of cugl_app_shared_pitch() bytes (a multiple of 256) into
 * cugl_app_shared_buffer(); gl_begin copies them into the texture on the GPU.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (another format; a size not positive
 *   or too large: past GL's limits), and as cugl_app_shared_buffer_create.
 * @thread_safety The thread whose GL context is current; the object is used
 *   in that context.
 * @param[out] out the shared texture; NULL on failure.
 * @param device the CUDA device whose memory it is.
 * @param gl_internal_format the texture's sized format, one of those above.
 * @param width the texture's width in texels.
 * @param height the texture's height in texels.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_shared_texture_create(cugl_app_shared **out, cugl_device *device,
                                                    uint32_t gl_internal_format, int width,
                                                    int height);

/**
 * Let CUDA on `devices` (count of them; initialized, with a peer path to
 * the shared object's device) write the memory: then cuda_begin and
 * cuda_end take a stream of any of them, and GL on this device draws what
 * another GPU wrote, with no CUDA work on the GL GPU. Call it before the
 * first turn: the memory is made again, mapped for them too, and GL
 * imports it anew (a buffer's GL name changes; ask again). count 0: only
 * the own device writes.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; count out of 0 to 16),
 *   CUGL_ERROR_INVALID_STATE (the memory has been used; a writer not
 *   initialized), CUGL_ERROR_NOT_SUPPORTED (no peer path between a writer
 *   and the device: the message names both and says to copy through the
 *   host), and as cugl_app_shared_buffer_create. On a failure the object
 *   has no memory left: destroy it.
 * @thread_safety The thread of the shared object's GL context, current.
 * @param shared the shared object.
 * @param devices the writers, `count` of them (its own device, or one named twice, counts
 *   once); NULL when count is 0.
 * @param count the number of writers.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_shared_set_writers(cugl_app_shared *shared,
                                                 cugl_device *const *devices, int count);

/**
 * Free both sides (waits for both to finish with the memory). NULL: no-op.
 * @errors none: a failure to wait is ignored, the memory is freed all the same.
 * @thread_safety The thread of the shared object's GL context, current.
 * @param shared the shared object, or NULL.
 */
CUGL_API void cugl_app_shared_destroy(cugl_app_shared *shared);

/**
 * The CUDA side: a buffer over the memory CUDA writes this frame (no
 * reference is passed; its size may exceed the size asked for). NULL for NULL.
 * @errors none. @thread_safety Any thread, between the calls that take turns.
 * @param shared the shared object, or NULL.
 * @return the buffer, held by the shared object; NULL for NULL.
 */
CUGL_API cugl_buffer *cugl_app_shared_buffer(const cugl_app_shared *shared);
/** The GL side: the texture, or the buffer GL uses this frame; 0 for NULL.
 * @errors none. @thread_safety Any thread, between the calls that take turns.
 * @param shared the shared object, or NULL.
 * @return the GL name of the texture or buffer; 0 for NULL. */
CUGL_API uint32_t cugl_app_shared_gl_name(const cugl_app_shared *shared);
/** Whether the turns wait for each other on the GPU (semaphores made by
 * Vulkan; not for memory that other devices write); false for NULL.
 * @errors none. @thread_safety Any thread.
 * @param shared the shared object, or NULL.
 * @return true where the waits are GPU waits. */
CUGL_API bool cugl_app_shared_waits_on_gpu(const cugl_app_shared *shared);
/** Why the waits are CPU waits ("" where they are GPU waits, and for NULL).
 * @errors none. @thread_safety Any thread.
 * @param shared the shared object, or NULL.
 * @return the reason, valid while the object lives. */
CUGL_API const char *cugl_app_shared_wait_reason(const cugl_app_shared *shared);
/** Bytes from one texture row to the next (buffers: the size); 0 for NULL.
 * @errors none. @thread_safety Any thread.
 * @param shared the shared object, or NULL.
 * @return the pitch in bytes; 0 for NULL. */
CUGL_API size_t cugl_app_shared_pitch(const cugl_app_shared *shared);
/** The bytes of the memory CUDA writes (at least those asked for); 0 for NULL.
 * @errors none. @thread_safety Any thread.
 * @param shared the shared object, or NULL.
 * @return the size in bytes; 0 for NULL. */
CUGL_API size_t cugl_app_shared_size(const cugl_app_shared *shared);

/**
 * CUDA's turn begins: wait until GL has finished with the memory CUDA is
 * about to write (GL's last gl_end): the stream waits for GL's semaphore
 * on the GPU where the waits are GPU waits, else the CPU waits for GL's
 * fence.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; a stream of a device that is
 *   neither the memory's nor one of its writers),
 *   CUGL_ERROR_CLOSED (the stream), CUGL_ERROR_INVALID_STATE (GL's turn
 *   has not ended), CUGL_ERROR_GL (the wait failed), the statuses of
 *   cugl_semaphore_wait.
 * @thread_safety The thread of the shared object's GL context, current.
 * @param shared the shared object.
 * @param stream the stream CUDA writes on in this turn: a stream of the memory's device or of a
 *   writer.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_shared_cuda_begin(cugl_app_shared *shared, cugl_stream *stream);

/**
 * CUDA's turn ends: an event on `stream` after the work queued so far
 * marks CUDA's writes, which gl_begin waits for (preceded, where the waits
 * are GPU waits, by a signal of the semaphore GL's wait is queued for).
 * @errors as cugl_app_shared_cuda_begin; CUGL_ERROR_INVALID_STATE (CUDA's
 *   turn has not begun), the statuses of cugl_event_create,
 *   cugl_semaphore_signal and cugl_event_record: CUDA's turn then stays
 *   open, and cuda_end may be called again.
 * @thread_safety The thread of the shared object's GL context.
 * @param shared the shared object.
 * @param stream the stream the writes were queued on.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_shared_cuda_end(cugl_app_shared *shared, cugl_stream *stream);

/**
 * GL's turn begins: wait for CUDA's writes to the memory GL uses now (a
 * GL wait for CUDA's semaphore, queued, where the waits are GPU waits;
 * else a CPU wait for CUDA's event) (and
 * copy a shared texture's pixels into it, on the GPU: GL_RGBA8 written by
 * the memory's own device by a compute shader, at memory speed, which
 * leaves the current program, shader storage binding 0 and image unit 0
 * as they were; other formats, or memory other devices write, by a pixel
 * unpack copy, which leaves the unpack state as it was).
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL), CUGL_ERROR_INVALID_STATE
 *   (CUDA's turn has not ended), the statuses of cugl_event_sync,
 *   CUGL_ERROR_GL (the semaphore's wait, the texture's copy).
 * @thread_safety The thread of the shared object's GL context, current.
 * @param shared the shared object.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_shared_gl_begin(cugl_app_shared *shared);

/**
 * GL's turn ends: a signal of the semaphore CUDA's next turn waits for
 * (then a flush), or where that cannot be (CPU waits, or a signal still
 * pending from an earlier gl_end) a fence, after GL's commands so far
 * marks its use (also after GL wrote the memory without a gl_begin).
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL), CUGL_ERROR_INVALID_STATE
 *   (CUDA's turn has not ended), CUGL_ERROR_GL (no fence, or the signal
 *   failed).
 * @thread_safety The thread of the shared object's GL context, current.
 * @param shared the shared object.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_shared_gl_end(cugl_app_shared *shared);

/**
 * The GL buffer that holds the memory GL uses this frame (for a buffer, the
 * same as cugl_app_shared_gl_name; for a texture, the pixels it is filled
 * from, rows cugl_app_shared_pitch() bytes apart). Pipelined, it changes
 * from frame to frame: ask after gl_begin.
 * @errors none. @thread_safety Any thread, between the calls that take turns.
 * @param shared the shared object, or NULL.
 * @return the buffer's GL name; 0 for NULL.
 */
CUGL_API uint32_t cugl_app_shared_gl_buffer(const cugl_app_shared *shared);

/**
 * Whether gl_begin fills a shared texture from the memory (on, the
 * default). Off, the texture is left alone and GL reads the pixels where
 * CUDA wrote them (cugl_app_shared_gl_buffer; cugl_app_blit_rgba8_buffer
 * shows an RGBA8 image): a frame saves a copy of the whole image on the
 * GPU. Turn it on again to sample the texture (filtering, mipmaps).
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; a shared buffer).
 * @thread_safety The thread of the shared object's GL context.
 * @param shared the shared texture.
 * @param on true to fill the texture at gl_begin, false not to.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_shared_set_texture_fill(cugl_app_shared *shared, bool on);

CUGL_END_DECLS

#endif /* CUGL_APP_SHARED_H */
