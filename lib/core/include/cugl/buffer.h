/**
 * @file cugl/buffer.h
 * Linear memory: a pointer, a size and who frees it.
 *
 * The C form of cuda.core's Buffer. A buffer that came from a memory
 * resource owns its memory and gives it back when closed; a buffer made
 * from a foreign pointer without a resource only describes it.
 */
#ifndef CUGL_BUFFER_H
#define CUGL_BUFFER_H

#include "cugl/error.h"

CUGL_BEGIN_DECLS

struct DLManagedTensor; /* from <dlpack/dlpack.h> */

/** A buffer exported for another process: plain bytes, to be passed whole. */
typedef struct cugl_buffer_ipc_descriptor {
    uint8_t data[64]; /**< the driver's export data of the allocation */
    uint64_t size;    /**< the buffer's size in bytes */
    uint64_t check;   /**< a hash of `data`: an import refuses a damaged descriptor */
} cugl_buffer_ipc_descriptor;

/**
 * Wrap memory at `ptr` of `size` bytes. With `mr`, the buffer owns the
 * memory and closing it deallocates through `mr` (on the stream given to
 * close); its device and accessibility are `mr`'s, and it has no
 * deallocation stream until one is set. Without, it is non-owning; the
 * device, accessibility and managed-ness of foreign pointers are read with
 * cuPointerGetAttributes (host memory the driver does not know is host-only,
 * device -1; without a driver every pointer is host memory).
 * @errors CUGL_ERROR_INVALID_ARGUMENT (out NULL; ptr 0 with a nonzero size;
 *   ptr + size past the end of the address space), CUGL_ERROR_CLOSED (mr
 *   closed), CUGL_ERROR_OUT_OF_MEMORY, CUGL_ERROR_CUDA (the driver cannot
 *   describe ptr).
 * @pointer_lifetime The caller owns one reference.
 * @thread_safety Any thread.
 * @param[out] out receives the new buffer; NULL on failure.
 * @param ptr the memory's first byte: a device, host or managed address; 0 only with size 0.
 * @param size the memory's size in bytes; ptr + size may not pass the end of the address space.
 * @param mr the resource that owns the memory and frees it, or NULL for memory cugl does not own.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_buffer_from_handle(cugl_buffer **out, uint64_t ptr, size_t size,
                                             cugl_memory_resource *mr);

/**
 * Copy this buffer into *dst, asynchronously on `stream`. When *dst is NULL,
 * a new buffer is first allocated from `src`'s memory resource and stored in
 * *dst (the caller owns it). Sizes must match exactly.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; size mismatch, both sizes in the
 *   message; *dst NULL and `src` has no memory resource), CUGL_ERROR_CLOSED,
 *   CUGL_ERROR_OUT_OF_MEMORY, CUGL_ERROR_CUDA.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param[in,out] dst the destination buffer, or a pointer to NULL to receive a new one allocated
 *   from src's resource.
 * @param src the source buffer.
 * @param stream the stream the copy is ordered on; its device does the copy.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_buffer_copy_to(cugl_buffer **dst, cugl_buffer *src,
                                         cugl_stream *stream);

/**
 * Copy `src` into `dst`, asynchronously on `stream`. Sizes must match.
 * @errors as cugl_buffer_copy_to.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param dst the destination buffer.
 * @param src the source buffer, of dst's size.
 * @param stream the stream the copy is ordered on; its device does the copy.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_buffer_copy_from(cugl_buffer *dst, cugl_buffer *src,
                                           cugl_stream *stream);

/**
 * Fill the buffer with a 1, 2 or 4 byte pattern, asynchronously on `stream`.
 * The size must be a multiple of the pattern's.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL, another pattern size, a size not
 *   divisible by it, host memory the device cannot reach), CUGL_ERROR_CLOSED,
 *   CUGL_ERROR_CUDA.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param buffer the buffer to fill.
 * @param value the pattern: value_size bytes.
 * @param value_size 1, 2 or 4.
 * @param stream the stream the fill is ordered on.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_buffer_fill(cugl_buffer *buffer, const void *value,
                                      size_t value_size, cugl_stream *stream);

/**
 * The device pointer (uint64); 0 after close.
 * @thread_safety Any thread.
 * @param buffer the buffer, or NULL.
 * @return the device pointer; 0 for NULL and after close.
 */
CUGL_API uint64_t cugl_buffer_handle(const cugl_buffer *buffer);
/**
 * The size in bytes; 0 after close.
 * @thread_safety Any thread.
 * @param buffer the buffer, or NULL.
 * @return the size in bytes; 0 for NULL and after close.
 */
CUGL_API size_t cugl_buffer_size(const cugl_buffer *buffer);
/**
 * The device ordinal; -1 for host memory.
 * @thread_safety Any thread.
 * @param buffer the buffer, or NULL.
 * @return the CUDA device ordinal; -1 for host memory and for NULL.
 */
CUGL_API int cugl_buffer_device_id(const cugl_buffer *buffer);
/**
 * The owning resource, or NULL (non-owning, or closed). No reference is taken.
 * @thread_safety Any thread.
 * @param buffer the buffer, or NULL.
 * @return the owning resource, or NULL.
 */
CUGL_API cugl_memory_resource *cugl_buffer_memory_resource(const cugl_buffer *buffer);
/**
 * Whether kernels on the buffer's device can use the memory.
 * @thread_safety Any thread.
 * @param buffer the buffer, or NULL.
 * @return true if device code can use the memory; false for NULL.
 */
CUGL_API bool cugl_buffer_is_device_accessible(const cugl_buffer *buffer);
/**
 * Whether the CPU can use the memory by pointer.
 * @thread_safety Any thread.
 * @param buffer the buffer, or NULL.
 * @return true if host code can use the memory; false for NULL.
 */
CUGL_API bool cugl_buffer_is_host_accessible(const cugl_buffer *buffer);
/**
 * Whether the memory is managed (unified) memory.
 * @thread_safety Any thread.
 * @param buffer the buffer, or NULL.
 * @return true for managed memory; false for NULL.
 */
CUGL_API bool cugl_buffer_is_managed(const cugl_buffer *buffer);

/**
 * The stream close() and the last release() deallocate on when given none
 * (initially the allocation stream). The buffer keeps a reference to it.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL), CUGL_ERROR_CLOSED (the buffer or
 *   the stream).
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param buffer the buffer.
 * @param stream the stream to deallocate on (a reference is kept).
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_buffer_set_deallocation_stream(cugl_buffer *buffer,
                                                         cugl_stream *stream);

/**
 * Export a buffer of an IPC-enabled pool for another process, which imports
 * it into the pool it opened with cugl_device_memory_resource_import_fd.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL, an empty buffer), CUGL_ERROR_CLOSED,
 *   CUGL_ERROR_INVALID_STATE (the buffer's resource is not IPC-enabled, or is
 *   itself imported), CUGL_ERROR_CUDA.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param buffer a buffer of an IPC-enabled device pool.
 * @param[out] descriptor receives the bytes to hand to the other process.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_buffer_ipc_export(cugl_buffer *buffer,
                                            cugl_buffer_ipc_descriptor *descriptor);

/**
 * Import a buffer another process exported. The buffer belongs to `mr`
 * (closing it frees the mapping, ordered on `stream`); close it before the
 * exporting process frees the memory.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; `mr` not an imported pool; a
 *   descriptor size of 0 or past the end of the shared allocation; a
 *   descriptor whose `data` does not match its `check`: damaged or cut on
 *   its way, which the driver would not survive),
 *   CUGL_ERROR_CLOSED (`mr` or `stream`), CUGL_ERROR_CUDA (the pointer is not
 *   in the pool).
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param[out] out receives the imported buffer; NULL on failure.
 * @param mr the pool imported with cugl_device_memory_resource_import_fd.
 * @param descriptor what cugl_buffer_ipc_export wrote in the other process.
 * @param stream the stream the buffer's close is ordered on.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_buffer_ipc_import(cugl_buffer **out, cugl_memory_resource *mr,
                                            const cugl_buffer_ipc_descriptor *descriptor,
                                            cugl_stream *stream);

/**
 * Export the buffer of an exportable (VMM) resource as a POSIX file
 * descriptor (new each call; the caller closes it), with the allocation's
 * size (the buffer's size rounded up to the granularity) that an importer
 * such as glImportMemoryFdEXT needs.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (buffer or fd NULL, an empty buffer),
 *   CUGL_ERROR_CLOSED, CUGL_ERROR_INVALID_STATE (not from an exportable
 *   resource), CUGL_ERROR_CUDA.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param buffer a buffer of an exportable memory resource.
 * @param[out] fd receives a new file descriptor, which the caller closes; -1 on failure.
 * @param[out] allocation_size receives the size of the allocation behind the buffer, in bytes;
 *   may be NULL.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_buffer_export_fd(cugl_buffer *buffer, int *fd,
                                           size_t *allocation_size);

/**
 * A DLPack tensor describing the buffer: 1-D, uint8, `size` elements; device
 * type kDLCUDA (device only), kDLCUDAHost (pinned), kDLCUDAManaged (managed)
 * or kDLCPU (host only). The tensor holds a reference to the buffer; its
 * deleter drops it and frees the tensor. Include <dlpack/dlpack.h> to use it.
 * @errors CUGL_ERROR_INVALID_ARGUMENT, CUGL_ERROR_CLOSED,
 *   CUGL_ERROR_OUT_OF_MEMORY.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param[out] out receives the tensor; call its deleter when done.
 * @param buffer the buffer to describe.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_buffer_to_dlpack(struct DLManagedTensor **out, cugl_buffer *buffer);

/**
 * Whether the buffer has been closed.
 * @thread_safety Any thread.
 * @param buffer the buffer, or NULL.
 * @return true once closed, and for NULL.
 */
CUGL_API bool cugl_buffer_is_closed(const cugl_buffer *buffer);

/**
 * Give the memory back to its resource, ordered on `stream` (NULL: the
 * deallocation stream); idempotent. Afterwards the size is 0 and every call
 * but the getters and release returns CUGL_ERROR_CLOSED. A non-owning buffer
 * only forgets the pointer; the buffer that cugl_graphics_resource_map
 * returned unmaps its graphics resource, ordered on `stream` (NULL: as
 * cugl_graphics_resource_unmap with no stream). With neither a stream nor an
 * open deallocation stream, stream-ordered memory is freed once the device
 * has finished all its work.
 * @errors CUGL_ERROR_CLOSED (`stream` closed: nothing is freed),
 *   CUGL_ERROR_INVALID_ARGUMENT (a mapped buffer given a stream of another
 *   device than its resource's: the buffer closes all the same, and the
 *   resource is unmapped as with no stream), CUGL_ERROR_CUDA (the memory is forgotten, or the unmap failed and the
 *   resource stays mapped; the driver's error is reported).
 * @thread_safety Any thread, once no other thread uses the object; a mapped
 *   buffer (cugl_graphics_resource_map) unmaps its resource, so it is closed
 *   on the thread whose GL context owns the GL object, with that context current.
 * @param buffer the buffer.
 * @param stream the stream to free on, or NULL for the deallocation stream.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_buffer_close(cugl_buffer *buffer, cugl_stream *stream);

/**
 * Take another reference.
 * @thread_safety Any thread: references are counted atomically.
 * @param buffer the buffer, or NULL.
 * @return buffer.
 */
CUGL_API cugl_buffer *cugl_buffer_retain(cugl_buffer *buffer);

/**
 * Drop a reference; the last one closes (on the deallocation stream) and frees.
 * @thread_safety Any thread: references are counted atomically; the last
 *   reference of a mapped buffer closes it, which unmaps its resource: that
 *   one is dropped as cugl_buffer_close is called.
 * @param buffer the buffer, or NULL (no-op).
 */
CUGL_API void cugl_buffer_release(cugl_buffer *buffer);

CUGL_END_DECLS

#endif /* CUGL_BUFFER_H */
