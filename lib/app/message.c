/*
 * message.c - libcugl-app's notices: what it has to say that is no
 * failure of the call at hand (GL's debug output of a debug context, the
 * frame server giving up its GPU encoder for the CPU's, a frame it could
 * not encode). They go to the program's callback, never to stderr: a
 * library does not write on its program's terminal.
 */
#include <pthread.h>
#include <stdarg.h>

#include "app_internal.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static cugl_app_message_callback callback;
static void *callback_user_data;

CUGL_API void cugl_app_set_message_callback(cugl_app_message_callback cb, void *user_data,
                                            cugl_app_message_callback *previous,
                                            void **previous_user_data)
{
    pthread_mutex_lock(&lock);
    if (previous)
        *previous = callback;
    if (previous_user_data)
        *previous_user_data = callback_user_data;
    callback = cb;
    callback_user_data = user_data;
    pthread_mutex_unlock(&lock);
}

void cugl__app_notice(const char *fmt, ...)
{
    pthread_mutex_lock(&lock);
    cugl_app_message_callback cb = callback;
    void *user_data = callback_user_data;
    pthread_mutex_unlock(&lock);
    if (!cb)
        return;
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    cb(text, user_data);
}
