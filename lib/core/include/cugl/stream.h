/**
 * @file cugl/stream.h
 * CUDA streams.
 *
 * Every asynchronous cugl operation takes an explicit stream; NULL is an
 * argument error. cugl_device_default_stream() gives the device's legacy
 * default stream for convenience.
 */
#ifndef CUGL_STREAM_H
#define CUGL_STREAM_H

#include "cugl/error.h"

CUGL_BEGIN_DECLS

/** Options for cugl_stream_create; zero-initialise for the defaults. */
typedef struct cugl_stream_desc {
    /** false (default): non-blocking, no implicit ordering with the legacy
     * default stream (cuda.core's nonblocking=True). true: a blocking stream. */
    bool blocking;
    /** 0 is the default priority. Lower numbers are higher priorities; the
     * valid range is [stream_priority_greatest, stream_priority_least] of
     * cugl_device_properties. */
    int priority;
} cugl_stream_desc;

/**
 * Create a stream on `device` (which must be initialized).
 * @errors CUGL_ERROR_INVALID_ARGUMENT (out or device NULL, priority out of
 *   range), CUGL_ERROR_INVALID_STATE (device not initialized),
 *   CUGL_ERROR_OUT_OF_MEMORY, CUGL_ERROR_CUDA.
 * @thread_safety Any thread. @pointer_lifetime The caller owns one reference.
 * @param[out] out receives the stream; NULL on failure.
 * @param device the device whose work it orders.
 * @param desc NULL for the defaults.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_stream_create(cugl_stream **out, cugl_device *device,
                                        const cugl_stream_desc *desc);

/**
 * Wrap a stream created elsewhere (a CUstream, or NULL / (void *)1 for the
 * legacy default stream, (void *)2 for the per-thread default stream).
 * The wrapper never destroys the stream; its handle is the one given (for
 * NULL: (void *)1). The stream's device is read from its context; for the
 * default streams it is the current device. A raw handle cannot be checked:
 * one that is not a live CUstream (freed, or not a stream at all) is
 * undefined behaviour in the driver itself, which may crash; only handles
 * the caller's own CUDA code made and still holds belong here.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (out NULL), CUGL_ERROR_NO_DRIVER,
 *   CUGL_ERROR_INVALID_STATE (a default stream and no current device; a
 *   stream of a context that is not an initialized device's primary context),
 *   CUGL_ERROR_OUT_OF_MEMORY, CUGL_ERROR_CUDA (not a stream).
 * @thread_safety Any thread. @pointer_lifetime The caller owns one reference.
 * @param[out] out receives the wrapper; NULL on failure.
 * @param handle a CUstream, or NULL, (void *)1 or (void *)2 for the default streams.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_stream_from_handle(cugl_stream **out, void *handle);

/**
 * The device's legacy default stream (a non-owning, process-wide wrapper;
 * close and release are no-ops on it). The driver's handle of a default
 * stream names the default stream of the current context, so every cugl
 * function given this wrapper makes its device current first, and the
 * default streams of two devices are two streams (one may wait on the
 * other). A wrapper from cugl_stream_from_handle(NULL) is bound the same
 * way to the device current when it was made.
 * @errors CUGL_ERROR_INVALID_ARGUMENT, CUGL_ERROR_INVALID_STATE (device not
 *   initialized), CUGL_ERROR_NOT_SUPPORTED (device ordinal 64 or above),
 *   CUGL_ERROR_OUT_OF_MEMORY, CUGL_ERROR_CUDA.
 * @pointer_lifetime Lives until the process exits; no reference is taken.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param[out] out receives the wrapper; NULL on failure.
 * @param device the device.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_device_default_stream(cugl_stream **out, cugl_device *device);

/**
 * Block until all work queued on the stream has completed.
 * @errors CUGL_ERROR_INVALID_ARGUMENT, CUGL_ERROR_CLOSED, CUGL_ERROR_CUDA.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param stream the stream.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_stream_sync(cugl_stream *stream);

/**
 * Whether all work queued on the stream has completed, without blocking.
 * @errors CUGL_ERROR_INVALID_ARGUMENT, CUGL_ERROR_CLOSED, CUGL_ERROR_CUDA.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param stream the stream.
 * @param[out] done receives whether all its work has completed.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_stream_query(cugl_stream *stream, bool *done);

/**
 * Make future work on `stream` wait until `event` has completed (the work
 * captured by its last record; an event never recorded is complete).
 * @errors CUGL_ERROR_INVALID_ARGUMENT, CUGL_ERROR_CLOSED, CUGL_ERROR_CUDA.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param stream the stream that waits.
 * @param event the event it waits for (of any device).
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_stream_wait_event(cugl_stream *stream, cugl_event *event);

/**
 * Make future work on `stream` wait for all work queued on `other` so far
 * (records a temporary event on `other`).
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL, or both the same stream),
 *   CUGL_ERROR_CLOSED, CUGL_ERROR_CUDA.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param stream the stream that waits.
 * @param other the stream whose work so far it waits for.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_stream_wait_stream(cugl_stream *stream, cugl_stream *other);

/**
 * Record `event` on `stream`: it completes when the work queued so far does.
 * Same as cugl_event_record(event, stream).
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL, or an event of another
 *   device), CUGL_ERROR_CLOSED, CUGL_ERROR_CUDA.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param stream the stream.
 * @param event the event to record on it.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_stream_record(cugl_stream *stream, cugl_event *event);

/**
 * Whether the stream is non-blocking with respect to the legacy default stream.
 * @thread_safety Any thread.
 * @param stream the stream, or NULL.
 * @return true for a non-blocking stream; false for NULL.
 */
CUGL_API bool cugl_stream_is_nonblocking(const cugl_stream *stream);

/**
 * The stream's priority (0 for NULL).
 * @thread_safety Any thread.
 * @param stream the stream, or NULL.
 * @return its priority (lower is higher); 0 for NULL.
 */
CUGL_API int cugl_stream_priority(const cugl_stream *stream);

/**
 * The device the stream belongs to (NULL for NULL).
 * @thread_safety Any thread.
 * @param stream the stream, or NULL.
 * @return its device (no reference taken); NULL for NULL.
 */
CUGL_API cugl_device *cugl_stream_device(const cugl_stream *stream);

/**
 * The raw CUstream; NULL after close.
 * @thread_safety Any thread.
 * @param stream the stream, or NULL.
 * @return the CUstream; NULL for NULL and after close.
 */
CUGL_API void *cugl_stream_handle(const cugl_stream *stream);

/**
 * Whether cugl_stream_close has been called. true for NULL.
 * @thread_safety Any thread.
 * @param stream the stream, or NULL.
 * @return true once closed, and for NULL.
 */
CUGL_API bool cugl_stream_is_closed(const cugl_stream *stream);

/**
 * Destroy the stream now (work already queued still completes); idempotent.
 * A wrapped foreign stream is only forgotten, not destroyed.
 * Afterwards every call but is_closed/release returns CUGL_ERROR_CLOSED.
 * @thread_safety Any thread, once no other thread uses the object.
 * @param stream the stream, or NULL (no-op).
 */
CUGL_API void cugl_stream_close(cugl_stream *stream);

/**
 * Take another reference. Returns `stream`.
 * @thread_safety Any thread: references are counted atomically.
 * @param stream the stream, or NULL.
 * @return stream.
 */
CUGL_API cugl_stream *cugl_stream_retain(cugl_stream *stream);

/**
 * Drop a reference; the last one closes and frees. NULL is a no-op.
 * @thread_safety Any thread: references are counted atomically.
 * @param stream the stream, or NULL (no-op).
 */
CUGL_API void cugl_stream_release(cugl_stream *stream);

CUGL_END_DECLS

#endif /* CUGL_STREAM_H */
