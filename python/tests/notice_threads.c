/*
 * notice_threads.c - for the Python suite: a message callback (libcugl-app's
 * cugl_app_message_fn) called on threads Python never made, as the frame
 * server's encoder threads call it, all at once.
 */
#include <pthread.h>
#include <stddef.h>

typedef void (*message_fn)(const char *message, void *user_data);

typedef struct call {
    message_fn fn;
    const char *message;
    void *user_data;
} call;

static void *run(void *arg)
{
    const call *c = arg;
    c->fn(c->message, c->user_data);
    return NULL;
}

/* `fn` called with each of the `count` messages (at most 64), each on a
 * thread of its own, the threads started before any is joined; 0, or -1
 * where a thread could not be started (those started are joined). */
int notices_from_threads(message_fn fn, void *user_data, const char *const *messages, int count);

int notices_from_threads(message_fn fn, void *user_data, const char *const *messages, int count)
{
    enum { MAX = 64 };
    if (!fn || !messages || count < 0 || count > MAX)
        return -1;
    call calls[MAX];
    pthread_t threads[MAX];
    int started = 0, rc = 0;
    for (; started < count; started++) {
        calls[started] = (call){fn, messages[started], user_data};
        if (pthread_create(&threads[started], NULL, run, &calls[started]) != 0) {
            rc = -1;
            break;
        }
    }
    for (int i = 0; i < started; i++)
        pthread_join(threads[i], NULL);
    return rc;
}
