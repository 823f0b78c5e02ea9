/**
 * @file cugl/event.h
 * CUDA events: ordering, timing, inter-process sharing.
 */
#ifndef CUGL_EVENT_H
#define CUGL_EVENT_H

#include "cugl/error.h"

CUGL_BEGIN_DECLS

/** Options for cugl_event_create; zero-initialise for the defaults. */
typedef struct cugl_event_desc {
    bool timing;        /**< record timestamps (cugl_event_elapsed_ms) */
    bool blocking_sync; /**< cugl_event_sync sleeps instead of spinning */
    bool ipc;           /**< shareable with other processes; excludes timing */
} cugl_event_desc;

/** An event exported for another process. Plain bytes: send them any way. */
typedef struct cugl_event_ipc_descriptor {
    uint8_t handle[64]; /**< the driver's IPC handle of the event */
    bool blocking_sync; /**< whether the exported event was made with blocking_sync */
} cugl_event_ipc_descriptor;

/**
 * Create an event on `device` (which must be initialized).
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL out or device; ipc with timing),
 *   CUGL_ERROR_INVALID_STATE (device not initialized), CUGL_ERROR_OUT_OF_MEMORY,
 *   CUGL_ERROR_CUDA.
 * @pointer_lifetime The caller owns one reference.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param[out] out receives the event; NULL on failure.
 * @param device the device whose work it records.
 * @param desc NULL for the defaults (no timing, spinning sync, no IPC).
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_event_create(cugl_event **out, cugl_device *device,
                                       const cugl_event_desc *desc);

/**
 * Capture the work queued on `stream` so far; the event completes with it.
 * The stream must be of the event's device (streams of any device can wait
 * for the event).
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL, or a stream of another
 *   device), CUGL_ERROR_CLOSED, CUGL_ERROR_CUDA.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param event the event.
 * @param stream the stream whose work so far it marks.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_event_record(cugl_event *event, cugl_stream *stream);

/**
 * Block until the event has completed.
 * @errors CUGL_ERROR_INVALID_ARGUMENT, CUGL_ERROR_CLOSED, CUGL_ERROR_CUDA.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param event the event.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_event_sync(cugl_event *event);

/**
 * Whether the event has completed, without blocking.
 * @errors CUGL_ERROR_INVALID_ARGUMENT, CUGL_ERROR_CLOSED, CUGL_ERROR_CUDA.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param event the event.
 * @param[out] done receives whether the work it marks has completed.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_event_query(cugl_event *event, bool *done);

/**
 * Milliseconds between two completed, recorded, timing-enabled events
 * (end minus start).
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL), CUGL_ERROR_CLOSED,
 *   CUGL_ERROR_INVALID_STATE (timing disabled on either, either never
 *   recorded), CUGL_ERROR_NOT_READY (either not complete yet), CUGL_ERROR_CUDA.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param[out] ms receives the time from start to end, in milliseconds.
 * @param start the earlier event.
 * @param end the later event.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_event_elapsed_ms(float *ms, cugl_event *start, cugl_event *end);

/**
 * Export an IPC event for another process.
 * @errors CUGL_ERROR_INVALID_ARGUMENT, CUGL_ERROR_CLOSED,
 *   CUGL_ERROR_INVALID_STATE (not created with ipc), CUGL_ERROR_CUDA.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param event an event made with ipc.
 * @param[out] descriptor receives the bytes to hand to the other process.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_event_ipc_export(cugl_event *event,
                                           cugl_event_ipc_descriptor *descriptor);

/**
 * Open an event exported by another process. The result can be recorded,
 * waited on and queried; it is closed like any event. It records no timing,
 * and counts as recorded from the start.
 * @errors CUGL_ERROR_INVALID_ARGUMENT, CUGL_ERROR_INVALID_STATE (device not
 *   initialized), CUGL_ERROR_OUT_OF_MEMORY, CUGL_ERROR_CUDA (not a valid handle).
 * @pointer_lifetime The caller owns one reference.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param[out] out receives the event; NULL on failure.
 * @param device the device the exporting process's event is on.
 * @param descriptor what cugl_event_ipc_export wrote in the other process.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_event_ipc_import(cugl_event **out, cugl_device *device,
                                           const cugl_event_ipc_descriptor *descriptor);

/**
 * Whether the event records timestamps.
 * @thread_safety Any thread.
 * @param event the event, or NULL.
 * @return true if made with timing; false for NULL.
 */
CUGL_API bool cugl_event_is_timing_enabled(const cugl_event *event);
/**
 * Whether cugl_event_sync sleeps on it instead of spinning.
 * @thread_safety Any thread.
 * @param event the event, or NULL.
 * @return true if made with blocking_sync; false for NULL.
 */
CUGL_API bool cugl_event_is_blocking_sync(const cugl_event *event);
/**
 * Whether the event can be exported to another process.
 * @thread_safety Any thread.
 * @param event the event, or NULL.
 * @return true if made with ipc; false for NULL.
 */
CUGL_API bool cugl_event_is_ipc_enabled(const cugl_event *event);
/**
 * The device the event was created or opened on.
 * @thread_safety Any thread.
 * @param event the event, or NULL.
 * @return its device (no reference taken); NULL for NULL.
 */
CUGL_API cugl_device *cugl_event_device(const cugl_event *event);

/**
 * The raw CUevent; NULL after close.
 * @thread_safety Any thread.
 * @param event the event, or NULL.
 * @return the CUevent; NULL for NULL and after close.
 */
CUGL_API void *cugl_event_handle(const cugl_event *event);

/**
 * Whether cugl_event_close has been called. true for NULL.
 * @thread_safety Any thread.
 * @param event the event, or NULL.
 * @return true once closed, and for NULL.
 */
CUGL_API bool cugl_event_is_closed(const cugl_event *event);

/**
 * Destroy the event now; idempotent.
 * @thread_safety Any thread, once no other thread uses the object.
 * @param event the event, or NULL (no-op).
 */
CUGL_API void cugl_event_close(cugl_event *event);

/**
 * Take another reference.
 * @thread_safety Any thread: references are counted atomically.
 * @param event the event, or NULL.
 * @return event.
 */
CUGL_API cugl_event *cugl_event_retain(cugl_event *event);

/**
 * Drop a reference; the last one closes and frees. NULL is a no-op.
 * @thread_safety Any thread: references are counted atomically.
 * @param event the event, or NULL (no-op).
 */
CUGL_API void cugl_event_release(cugl_event *event);

/**
 * An external semaphore: a binary semaphore made by another API (Vulkan's
 * VK_KHR_external_semaphore_fd, exported as an opaque file descriptor) that
 * CUDA streams signal and wait for on the GPU. The other API (GL with
 * GL_EXT_semaphore_fd, Vulkan) imports the same payload from a second
 * descriptor, so that work ordered between the two never waits on the CPU.
 * As a binary semaphore, each wait needs a signal queued before it, and a
 * signal may not be queued while an earlier one is still to be waited for.
 */
typedef struct cugl_semaphore cugl_semaphore;

/**
 * Import a binary semaphore from an opaque POSIX file descriptor, for
 * streams of `device` (initialized).
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL out or device, fd < 0),
 *   CUGL_ERROR_INVALID_STATE (device not initialized), CUGL_ERROR_NOT_SUPPORTED
 *   (a driver without external semaphores), CUGL_ERROR_OUT_OF_MEMORY,
 *   CUGL_ERROR_CUDA (the descriptor is no semaphore the driver can import).
 * @pointer_lifetime The caller owns one reference. On success the driver
 *   owns `fd` (do not close it); on failure the caller still does.
 * @thread_safety Any thread.
 * @param out receives the semaphore.
 * @param device the device whose streams will signal and wait for it.
 * @param fd the descriptor (VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT).
 * @return CUGL_OK or the error.
 */
CUGL_API cugl_status cugl_semaphore_import_fd(cugl_semaphore **out, cugl_device *device, int fd);

/**
 * Queue a signal of the semaphore on `stream` (of the semaphore's device):
 * it fires when the work queued on the stream before it is done.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL, or a stream of another
 *   device), CUGL_ERROR_CLOSED, CUGL_ERROR_CUDA.
 * @thread_safety Any thread.
 * @param semaphore the semaphore.
 * @param stream a stream of its device.
 * @return CUGL_OK or the error.
 */
CUGL_API cugl_status cugl_semaphore_signal(cugl_semaphore *semaphore, cugl_stream *stream);

/**
 * Queue a wait for the semaphore on `stream` (of the semaphore's device):
 * work queued on the stream after it starts once the signal it waits for
 * has fired. The CPU does not wait.
 * @errors as cugl_semaphore_signal.
 * @thread_safety Any thread.
 * @param semaphore the semaphore.
 * @param stream a stream of its device.
 * @return CUGL_OK or the error.
 */
CUGL_API cugl_status cugl_semaphore_wait(cugl_semaphore *semaphore, cugl_stream *stream);

/**
 * The device whose streams use the semaphore; NULL for NULL.
 * @thread_safety Any thread.
 * @param semaphore the semaphore, or NULL.
 * @return its device.
 */
CUGL_API cugl_device *cugl_semaphore_device(const cugl_semaphore *semaphore);

/**
 * Whether cugl_semaphore_close has been called. true for NULL.
 * @thread_safety Any thread.
 * @param semaphore the semaphore, or NULL.
 * @return true once closed, and for NULL.
 */
CUGL_API bool cugl_semaphore_is_closed(const cugl_semaphore *semaphore);

/**
 * Destroy CUDA's import now; idempotent. Work already queued is not
 * affected.
 * @thread_safety Any thread, once no other thread uses the object.
 * @param semaphore the semaphore, or NULL (no-op).
 */
CUGL_API void cugl_semaphore_close(cugl_semaphore *semaphore);

/**
 * Drop a reference; the last one closes and frees. NULL is a no-op.
 * @thread_safety Any thread: references are counted atomically.
 * @param semaphore the semaphore, or NULL (no-op).
 */
CUGL_API void cugl_semaphore_release(cugl_semaphore *semaphore);

CUGL_END_DECLS

#endif /* CUGL_EVENT_H */
