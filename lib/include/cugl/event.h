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

CUGL_END_DECLS

#endif /* CUGL_EVENT_H */
