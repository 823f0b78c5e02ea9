/*
 * stream.c - streams: owned, wrapped, and each device's default stream.
 */
#include <pthread.h>
#include <stdlib.h>

#include "core_internal.h"

cugl_status cugl__stream_check(const cugl_stream *stream, const char *who)
{
    if (!stream)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "stream is NULL");
    if (stream->closed)
        return cugl__fail(CUGL_ERROR_CLOSED, who, "the stream has been closed");
    return CUGL_OK;
}

static bool is_default_stream(const void *handle)
{
    return handle == NULL || handle == (const void *)CU_STREAM_LEGACY ||
           handle == (const void *)CU_STREAM_PER_THREAD;
}

cugl_status cugl__stream_enter(const cugl_stream *stream, const char *who)
{
    if (!is_default_stream(stream->handle))
        return CUGL_OK;
    return cugl__device_activate(stream->device, who);
}

bool cugl__same_stream(const cugl_stream *a, const cugl_stream *b)
{
    return a == b || (a->handle == b->handle &&
                      (!is_default_stream(a->handle) || a->device == b->device));
}

CUGL_API cugl_status cugl_stream_create(cugl_stream **out, cugl_device *device,
                                        const cugl_stream_desc *desc)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = NULL;
    CUGL__CHECK_NOT_NULL(device);
    cugl_stream_desc d = desc ? *desc : (cugl_stream_desc){0};
    CUGL__TRY(cugl__device_activate(device, __func__));
    const cugl_device_properties *props;
    CUGL__TRY(cugl__device_props(device, __func__, &props));
    CUGL__CHECK_ARG(d.priority >= props->stream_priority_greatest &&
                        d.priority <= props->stream_priority_least,
                    "priority %d is outside the device's range [%d, %d] (lower is higher "
                    "priority)",
                    d.priority, props->stream_priority_greatest, props->stream_priority_least);

    cugl_stream *s = calloc(1, sizeof *s);
    if (!s)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, __func__, "cannot allocate a stream");
    unsigned flags = d.blocking ? CU_STREAM_DEFAULT : CU_STREAM_NON_BLOCKING;
    cugl_status st = CUGL_CU(cuStreamCreateWithPriority, &s->handle, flags, d.priority);
    if (st != CUGL_OK) {
        free(s);
        return st;
    }
    cugl__ref_init(&s->ref);
    s->device = device;
    s->owned = true;
    s->nonblocking = !d.blocking;
    s->priority = d.priority;
    *out = s;
    return CUGL_OK;
}

CUGL_API cugl_status cugl_stream_from_handle(cugl_stream **out, void *handle)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = NULL;
    CUGL__TRY(cugl__driver_load(__func__));
    cugl_device *device = NULL;
    /* NULL and CU_STREAM_LEGACY both name the legacy default stream. */
    CUstream h = handle ? (CUstream)handle : CU_STREAM_LEGACY;
    if (is_default_stream(handle)) {
        if (cugl_device_get_current(&device) != CUGL_OK)
            return cugl__fail(CUGL_ERROR_INVALID_STATE, __func__,
                              "a default stream belongs to the current device, and no "
                              "device is current; call cugl_device_set_current() first");
    } else {
        CUcontext ctx = NULL;
        CUGL__TRY(CUGL_CU(cuStreamGetCtx, h, &ctx));
        device = cugl__device_from_context(ctx);
        if (!device)
            return cugl__fail(CUGL_ERROR_INVALID_STATE, __func__,
                              "the stream belongs to a context that is not a device's "
                              "primary context initialized with cugl_device_set_current()");
    }
    unsigned flags = 0;
    int priority = 0;
    CUGL__TRY(CUGL_CU(cuStreamGetFlags, h, &flags));
    CUGL__TRY(CUGL_CU(cuStreamGetPriority, h, &priority));

    cugl_stream *s = calloc(1, sizeof *s);
    if (!s)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, __func__, "cannot allocate a stream");
    cugl__ref_init(&s->ref);
    s->handle = h;
    s->device = device;
    s->nonblocking = (flags & CU_STREAM_NON_BLOCKING) != 0;
    s->priority = priority;
    *out = s;
    return CUGL_OK;
}

/* One immortal legacy-default-stream wrapper per device, made on first use. */
static pthread_mutex_t defaults_lock = PTHREAD_MUTEX_INITIALIZER;
static cugl_stream *defaults[64];

CUGL_API cugl_status cugl_device_default_stream(cugl_stream **out, cugl_device *device)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = NULL;
    CUGL__CHECK_NOT_NULL(device);
    CUGL__TRY(cugl__device_activate(device, __func__));
    int i = cugl_device_ordinal(device);
    if (i >= (int)(sizeof defaults / sizeof defaults[0]))
        return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, __func__,
                          "device %d: default streams are kept for the first %zu devices", i,
                          sizeof defaults / sizeof defaults[0]);
    pthread_mutex_lock(&defaults_lock);
    if (!defaults[i]) {
        cugl_stream *s = calloc(1, sizeof *s);
        if (s) {
            cugl__ref_init_immortal(&s->ref);
            s->handle = CU_STREAM_LEGACY;
            s->device = device;
        }
        defaults[i] = s;
    }
    *out = defaults[i];
    pthread_mutex_unlock(&defaults_lock);
    if (!*out)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, __func__, "cannot allocate a stream");
    return CUGL_OK;
}

CUGL_API cugl_status cugl_stream_sync(cugl_stream *stream)
{
    CUGL__TRY(cugl__stream_check(stream, __func__));
    CUGL__TRY(cugl__stream_enter(stream, __func__));
    return CUGL_CU(cuStreamSynchronize, stream->handle);
}

CUGL_API cugl_status cugl_stream_query(cugl_stream *stream, bool *done)
{
    CUGL__TRY(cugl__stream_check(stream, __func__));
    CUGL__CHECK_NOT_NULL(done);
    CUGL__TRY(cugl__stream_enter(stream, __func__));
    CUresult r = cugl__cu.cuStreamQuery(stream->handle);
    *done = r == CUDA_SUCCESS;
    if (r == CUDA_SUCCESS || r == CUDA_ERROR_NOT_READY)
        return CUGL_OK;
    return cugl__cu_status(r, __func__, "cuStreamQuery");
}

CUGL_API cugl_status cugl_stream_wait_event(cugl_stream *stream, cugl_event *event)
{
    CUGL__TRY(cugl__stream_check(stream, __func__));
    CUGL__TRY(cugl__event_check(event, __func__));
    CUGL__TRY(cugl__stream_enter(stream, __func__));
    return CUGL_CU(cuStreamWaitEvent, stream->handle, event->handle, 0);
}

cugl_status cugl__stream_wait(cugl_stream *stream, cugl_stream *other, const char *who)
{
    CUGL__TRY(cugl__device_activate(other->device, who));
    CUevent ev;
    CUGL__TRY(CUGL_CU_AS(who, cuEventCreate, &ev, CU_EVENT_DISABLE_TIMING));
    cugl_status st = CUGL_CU_AS(who, cuEventRecord, ev, other->handle);
    if (st == CUGL_OK)
        st = cugl__stream_enter(stream, who);
    if (st == CUGL_OK)
        st = CUGL_CU_AS(who, cuStreamWaitEvent, stream->handle, ev, 0);
    /* Destroying a recorded event is safe: the wait keeps what it needs. */
    cugl__cu.cuEventDestroy(ev);
    return st;
}

CUGL_API cugl_status cugl_stream_wait_stream(cugl_stream *stream, cugl_stream *other)
{
    CUGL__TRY(cugl__stream_check(stream, __func__));
    CUGL__TRY(cugl__stream_check(other, __func__));
    CUGL__CHECK_ARG(!cugl__same_stream(stream, other), "a stream cannot wait on itself");
    return cugl__stream_wait(stream, other, __func__);
}

CUGL_API cugl_status cugl_stream_record(cugl_stream *stream, cugl_event *event)
{
    CUGL__TRY(cugl__stream_check(stream, __func__));
    return cugl__event_record(event, stream, __func__);
}

CUGL_API bool cugl_stream_is_nonblocking(const cugl_stream *stream)
{
    return stream && stream->nonblocking;
}

CUGL_API int cugl_stream_priority(const cugl_stream *stream)
{
    return stream ? stream->priority : 0;
}

CUGL_API cugl_device *cugl_stream_device(const cugl_stream *stream)
{
    return stream ? stream->device : NULL;
}

CUGL_API void *cugl_stream_handle(const cugl_stream *stream)
{
    return stream && !stream->closed ? (void *)stream->handle : NULL;
}

CUGL_API bool cugl_stream_is_closed(const cugl_stream *stream)
{
    return !stream || stream->closed;
}

CUGL_API void cugl_stream_close(cugl_stream *stream)
{
    if (!stream || stream->closed || atomic_load(&stream->ref.count) < 0)
        return;
    if (stream->owned)
        cugl__cu.cuStreamDestroy(stream->handle);
    stream->handle = NULL;
    stream->closed = true;
}

CUGL_API cugl_stream *cugl_stream_retain(cugl_stream *stream)
{
    if (stream)
        cugl__ref_inc(&stream->ref);
    return stream;
}

CUGL_API void cugl_stream_release(cugl_stream *stream)
{
    if (!stream || !cugl__ref_dec(&stream->ref))
        return;
    cugl_stream_close(stream);
    free(stream);
}
