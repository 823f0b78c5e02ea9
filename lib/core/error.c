/*
 * error.c - status names, the per-thread last error, the error callback.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core_internal.h"

enum { CUGL__MESSAGE_MAX = 4096 };

static _Thread_local struct {
    cugl_status status;
    int cu_result;
    char message[CUGL__MESSAGE_MAX];
} last_error;

static pthread_mutex_t callback_lock = PTHREAD_MUTEX_INITIALIZER;
static cugl_error_callback callback;
static void *callback_user_data;

CUGL_API const char *cugl_status_name(cugl_status status)
{
    switch (status) {
#define CUGL__STATUS_NAME(name, value, text) \
    case name:                               \
        return #name;
        CUGL_STATUS_LIST(CUGL__STATUS_NAME)
#undef CUGL__STATUS_NAME
    }
    return "CUGL_STATUS_UNKNOWN";
}

CUGL_API const char *cugl_status_description(cugl_status status)
{
    switch (status) {
#define CUGL__STATUS_TEXT(name, value, text) \
    case name:                               \
        return text;
        CUGL_STATUS_LIST(CUGL__STATUS_TEXT)
#undef CUGL__STATUS_TEXT
    }
    return "not a cugl status";
}

CUGL_API const char *cugl_last_error(void) { return last_error.message; }

CUGL_API cugl_status cugl_last_status(void) { return last_error.status; }

CUGL_API int cugl_last_cuda_result(void) { return last_error.cu_result; }

CUGL_API void cugl_clear_error(void)
{
    last_error.status = CUGL_OK;
    last_error.cu_result = 0;
    last_error.message[0] = '\0';
}

CUGL_API void cugl_set_error_callback(cugl_error_callback cb, void *user_data,
                                      cugl_error_callback *previous,
                                      void **previous_user_data)
{
    pthread_mutex_lock(&callback_lock);
    if (previous)
        *previous = callback;
    if (previous_user_data)
        *previous_user_data = callback_user_data;
    callback = cb;
    callback_user_data = user_data;
    pthread_mutex_unlock(&callback_lock);
}

static cugl_status record(cugl_status status, int cu_result, const char *who,
                          const char *fmt, va_list ap)
{
    /* Format into a local first: an argument may point into last_error. */
    char text[CUGL__MESSAGE_MAX];
    int n = snprintf(text, sizeof text, "%s: ", who ? who : "cugl");
    if (n < 0)
        n = 0;
    if ((size_t)n < sizeof text)
        vsnprintf(text + n, sizeof text - (size_t)n, fmt, ap);
    memcpy(last_error.message, text, sizeof text);
    last_error.status = status;
    last_error.cu_result = cu_result;

    pthread_mutex_lock(&callback_lock);
    cugl_error_callback cb = callback;
    void *user = callback_user_data;
    pthread_mutex_unlock(&callback_lock);
    if (cb)
        cb(status, last_error.message, user);
    return status;
}

cugl_status cugl__fail(cugl_status status, const char *who, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record(status, 0, who, fmt, ap);
    va_end(ap);
    return status;
}

CUGL_API cugl_status cugl_report_error(cugl_status status, const char *who, const char *fmt,
                                       ...)
{
    if (status == CUGL_OK)
        return CUGL_OK;
    va_list ap;
    va_start(ap, fmt);
    record(status, 0, who ? who : "cugl", fmt, ap);
    va_end(ap);
    return status;
}

cugl_status cugl__fail_cu(cugl_status status, int cu_result, const char *who,
                          const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record(status, cu_result, who, fmt, ap);
    va_end(ap);
    return status;
}
