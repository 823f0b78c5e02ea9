/**
 * @file cugl/error.h
 * Status codes, per-thread error messages, error callback.
 *
 * Every fallible cugl function returns a cugl_status; CUGL_OK is 0. On
 * failure the calling thread's last error holds a message that names the
 * function and states the facts, e.g.
 *   "cugl_stream_create: priority 3 is outside the device's range [-5, 0]".
 */
#ifndef CUGL_ERROR_H
#define CUGL_ERROR_H

#include "cugl/base.h"

CUGL_BEGIN_DECLS

/** The status codes as X(name, value, description), one row each: the
 * enum below and the name and description tables are made from it. */
#define CUGL_STATUS_LIST(X)                                                        \
    X(CUGL_OK, 0, "no error")                                                      \
    X(CUGL_ERROR_INVALID_ARGUMENT, 1, "an argument is NULL, zero or out of range") \
    X(CUGL_ERROR_CLOSED, 2, "the object has been closed")                          \
    X(CUGL_ERROR_INVALID_STATE, 3, "the call is not valid in the object's state")  \
    X(CUGL_ERROR_NOT_SUPPORTED, 4, "not supported by this driver or device")       \
    X(CUGL_ERROR_OUT_OF_MEMORY, 5, "out of memory")                                \
    X(CUGL_ERROR_NO_DRIVER, 6, "no usable CUDA driver")                            \
    X(CUGL_ERROR_NO_DEVICE, 7, "no CUDA device")                                   \
    X(CUGL_ERROR_NOT_READY, 8, "the work has not completed yet")                   \
    X(CUGL_ERROR_CUDA, 9, "the CUDA driver reported an error")                     \
    X(CUGL_ERROR_GL, 10, "the OpenGL side reported an error")

/**
 * What a fallible call returns: CUGL_OK (0), or an error, with the thread's
 * last error saying more (CUGL_STATUS_LIST makes the values):
 * - CUGL_OK (0): no error
 * - CUGL_ERROR_INVALID_ARGUMENT (1): an argument is NULL, zero or out of range
 * - CUGL_ERROR_CLOSED (2): the object has been closed
 * - CUGL_ERROR_INVALID_STATE (3): the call is not valid in the object's state
 * - CUGL_ERROR_NOT_SUPPORTED (4): not supported by this driver or device
 * - CUGL_ERROR_OUT_OF_MEMORY (5): out of memory
 * - CUGL_ERROR_NO_DRIVER (6): no usable CUDA driver
 * - CUGL_ERROR_NO_DEVICE (7): no CUDA device
 * - CUGL_ERROR_NOT_READY (8): the work has not completed yet
 * - CUGL_ERROR_CUDA (9): the CUDA driver reported an error
 * - CUGL_ERROR_GL (10): the OpenGL side reported an error
 */
typedef enum cugl_status {
    /** @cond */
#define CUGL__STATUS_ENUM(name, value, text) name = value,
    CUGL_STATUS_LIST(CUGL__STATUS_ENUM)
#undef CUGL__STATUS_ENUM
    /** @endcond */
} cugl_status;

/**
 * The name of a status code ("CUGL_ERROR_CLOSED"); "CUGL_STATUS_UNKNOWN" for
 * a value that is not a cugl_status.
 * @thread_safety Any thread. @pointer_lifetime Static storage.
 * @param status the status.
 * @return its name, in static storage.
 */
CUGL_API const char *cugl_status_name(cugl_status status);

/**
 * A one-line description of a status code.
 * @thread_safety Any thread. @pointer_lifetime Static storage.
 * @param status the status.
 * @return its description, in static storage; "not a cugl status" for a value that is none.
 */
CUGL_API const char *cugl_status_description(cugl_status status);

/**
 * The message of the calling thread's last failure, or "" if no cugl call on
 * this thread has failed since the last cugl_clear_error().
 * Successful calls do not clear it.
 * @thread_safety Any thread; each thread has its own.
 * @pointer_lifetime Valid until the next failing cugl call on this thread.
 * @return the message; "" when there is none.
 */
CUGL_API const char *cugl_last_error(void);

/**
 * The status of the calling thread's last failure (CUGL_OK if none).
 * @thread_safety Any thread; the error state is each thread's own.
 * @return the status of the last failure, or CUGL_OK.
 */
CUGL_API cugl_status cugl_last_status(void);

/**
 * The CUresult of the calling thread's last failure when the driver reported
 * it (0, CUDA_SUCCESS, when the failure did not come from the driver).
 * @thread_safety Any thread; the error state is each thread's own.
 * @return the CUresult, or 0.
 */
CUGL_API int cugl_last_cuda_result(void);

/**
 * Record a failure as cugl's own: for libraries and programs built on cugl
 * (libcugl-app, the demos) whose callers read cugl_last_error(). Sets the
 * thread's last error to "<who>: <formatted message>", calls the error
 * callback, and returns `status` (CUGL_OK records nothing).
 * @thread_safety Any thread; the error state is each thread's own.
 * @param status the failure's status; CUGL_OK records nothing.
 * @param who the function to name at the message's start; NULL gives "cugl".
 * @param fmt a printf format for the rest of the message, then its arguments.
 * @return status.
 */
CUGL_API cugl_status cugl_report_error(cugl_status status, const char *who, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/**
 * Forget the calling thread's last failure.
 * @thread_safety Any thread; the error state is each thread's own.
 */
CUGL_API void cugl_clear_error(void);

/**
 * Called on every failure, on the thread that failed, after the thread's last
 * error is set. `message` lives until the callback returns.
 * @param status the failure's status.
 * @param message the thread's last error, as cugl_last_error() returns it.
 * @param user_data what cugl_set_error_callback was given with the callback.
 */
typedef void (*cugl_error_callback)(cugl_status status, const char *message,
                                    void *user_data);

/**
 * Install an error callback (NULL removes it); it may be set before any other
 * call. Writes the previous callback and its user data to `previous` and
 * `previous_user_data` when those are not NULL.
 * @thread_safety Any thread; the swap is atomic with respect to failures.
 * @param callback the function to call, or NULL for none.
 * @param user_data passed to the callback as its last argument.
 * @param[out] previous receives the callback replaced, or NULL.
 * @param[out] previous_user_data receives its user data, or NULL.
 */
CUGL_API void cugl_set_error_callback(cugl_error_callback callback, void *user_data,
                                      cugl_error_callback *previous,
                                      void **previous_user_data);

CUGL_END_DECLS

#endif /* CUGL_ERROR_H */
