/*
 * event.c - events: record, wait, time, share across processes.
 */
#include <stdlib.h>
#include <string.h>

#include "core_internal.h"

cugl_status cugl__event_check(const cugl_event *event, const char *who)
{
    if (!event)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "event is NULL");
    if (event->closed)
        return cugl__fail(CUGL_ERROR_CLOSED, who, "the event has been closed");
    return CUGL_OK;
}

static cugl_event *event_new(cugl_device *device, bool timing, bool blocking_sync, bool ipc)
{
    cugl_event *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    cugl__ref_init(&e->ref);
    e->device = device;
    e->timing = timing;
    e->blocking_sync = blocking_sync;
    e->ipc = ipc;
    return e;
}

static unsigned event_flags(bool timing, bool blocking_sync, bool ipc)
{
    unsigned flags = CU_EVENT_DEFAULT;
    if (!timing)
        flags |= CU_EVENT_DISABLE_TIMING;
    if (blocking_sync)
        flags |= CU_EVENT_BLOCKING_SYNC;
    if (ipc)
        flags |= CU_EVENT_INTERPROCESS;
    return flags;
}

CUGL_API cugl_status cugl_event_create(cugl_event **out, cugl_device *device,
                                       const cugl_event_desc *desc)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = NULL;
    CUGL__CHECK_NOT_NULL(device);
    cugl_event_desc d = desc ? *desc : (cugl_event_desc){0};
    CUGL__CHECK_ARG(!(d.ipc && d.timing),
                    "an IPC-enabled event cannot record timing; set timing or ipc, not both");
    CUGL__TRY(cugl__device_activate(device, __func__));

    cugl_event *e = event_new(device, d.timing, d.blocking_sync, d.ipc);
    if (!e)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, __func__, "cannot allocate an event");
    cugl_status st =
        CUGL_CU(cuEventCreate, &e->handle, event_flags(d.timing, d.blocking_sync, d.ipc));
    if (st != CUGL_OK) {
        cugl__ref_discard(&e->ref);
        free(e);
        return st;
    }
    *out = e;
    return CUGL_OK;
}

cugl_status cugl__event_record(cugl_event *event, cugl_stream *stream, const char *who)
{
    CUGL__TRY(cugl__event_check(event, who));
    CUGL__TRY(cugl__stream_check(stream, who));
    if (event->device != stream->device)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the event belongs to device %d and the stream to device %d; an "
                          "event is recorded on a stream of its own device (a stream of "
                          "another device can wait for it)",
                          event->device->ordinal, stream->device->ordinal);
    CUGL__TRY(cugl__stream_enter(stream, who));
    CUGL__TRY(CUGL_CU_AS(who, cuEventRecord, event->handle, stream->handle));
    event->recorded = true;
    return CUGL_OK;
}

CUGL_API cugl_status cugl_event_record(cugl_event *event, cugl_stream *stream)
{
    return cugl__event_record(event, stream, __func__);
}

CUGL_API cugl_status cugl_event_sync(cugl_event *event)
{
    CUGL__TRY(cugl__event_check(event, __func__));
    return CUGL_CU(cuEventSynchronize, event->handle);
}

CUGL_API cugl_status cugl_event_query(cugl_event *event, bool *done)
{
    CUGL__TRY(cugl__event_check(event, __func__));
    CUGL__CHECK_NOT_NULL(done);
    CUresult r = cugl__cu.cuEventQuery(event->handle);
    *done = r == CUDA_SUCCESS;
    if (r == CUDA_SUCCESS || r == CUDA_ERROR_NOT_READY)
        return CUGL_OK;
    return cugl__cu_status(r, __func__, "cuEventQuery");
}

CUGL_API cugl_status cugl_event_elapsed_ms(float *ms, cugl_event *start, cugl_event *end)
{
    CUGL__CHECK_NOT_NULL(ms);
    *ms = 0.0f;
    CUGL__CHECK_NOT_NULL(start);
    CUGL__CHECK_NOT_NULL(end);
    CUGL__TRY(cugl__event_check(start, __func__));
    CUGL__TRY(cugl__event_check(end, __func__));
    if (!start->timing || !end->timing)
        return cugl__fail(CUGL_ERROR_INVALID_STATE, __func__,
                          "timing is disabled on the %s event; create both with "
                          "cugl_event_desc.timing = true",
                          !start->timing ? "start" : "end");
    if (!start->recorded || !end->recorded)
        return cugl__fail(CUGL_ERROR_INVALID_STATE, __func__,
                          "the %s event has never been recorded; record both on a stream "
                          "first",
                          !start->recorded ? "start" : "end");
    CUresult r = cugl__cu.cuEventElapsedTime(ms, start->handle, end->handle);
    if (r == CUDA_ERROR_NOT_READY)
        return cugl__fail_cu(CUGL_ERROR_NOT_READY, r, __func__,
                             "the events have not completed yet; wait with "
                             "cugl_event_sync() on the end event first");
    return cugl__cu_status(r, __func__, "cuEventElapsedTime");
}

CUGL_API cugl_status cugl_event_ipc_export(cugl_event *event,
                                           cugl_event_ipc_descriptor *descriptor)
{
    CUGL__TRY(cugl__event_check(event, __func__));
    CUGL__CHECK_NOT_NULL(descriptor);
    if (!event->ipc)
        return cugl__fail(CUGL_ERROR_INVALID_STATE, __func__,
                          "the event was not created IPC-enabled (cugl_event_desc.ipc)");
    CUipcEventHandle h;
    CUGL__TRY(CUGL_CU(cuIpcGetEventHandle, &h, event->handle));
    _Static_assert(sizeof h.reserved == sizeof descriptor->handle, "IPC handle size");
    memset(descriptor, 0, sizeof *descriptor);
    memcpy(descriptor->handle, h.reserved, sizeof descriptor->handle);
    descriptor->blocking_sync = event->blocking_sync;
    return CUGL_OK;
}

CUGL_API cugl_status cugl_event_ipc_import(cugl_event **out, cugl_device *device,
                                           const cugl_event_ipc_descriptor *descriptor)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = NULL;
    CUGL__CHECK_NOT_NULL(device);
    CUGL__CHECK_NOT_NULL(descriptor);
    CUGL__TRY(cugl__device_activate(device, __func__));
    cugl_event *e = event_new(device, false, descriptor->blocking_sync, true);
    if (!e)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, __func__, "cannot allocate an event");
    /* What the exporter recorded is not known here; treat it as recorded. */
    e->recorded = true;
    CUipcEventHandle h;
    memcpy(h.reserved, descriptor->handle, sizeof h.reserved);
    cugl_status st = CUGL_CU(cuIpcOpenEventHandle, &e->handle, h);
    if (st != CUGL_OK) {
        cugl__ref_discard(&e->ref);
        free(e);
        return st;
    }
    *out = e;
    return CUGL_OK;
}

CUGL_API bool cugl_event_is_timing_enabled(const cugl_event *event)
{
    return event && event->timing;
}

CUGL_API bool cugl_event_is_blocking_sync(const cugl_event *event)
{
    return event && event->blocking_sync;
}

CUGL_API bool cugl_event_is_ipc_enabled(const cugl_event *event) { return event && event->ipc; }

CUGL_API cugl_device *cugl_event_device(const cugl_event *event)
{
    return event ? event->device : NULL;
}

CUGL_API void *cugl_event_handle(const cugl_event *event)
{
    return event && !event->closed ? (void *)event->handle : NULL;
}

CUGL_API bool cugl_event_is_closed(const cugl_event *event) { return !event || event->closed; }

CUGL_API void cugl_event_close(cugl_event *event)
{
    if (!event || event->closed)
        return;
    cugl__cu.cuEventDestroy(event->handle);
    event->handle = NULL;
    event->closed = true;
}

CUGL_API cugl_event *cugl_event_retain(cugl_event *event)
{
    if (event)
        cugl__ref_inc(&event->ref);
    return event;
}

CUGL_API void cugl_event_release(cugl_event *event)
{
    if (!event || !cugl__ref_dec(&event->ref))
        return;
    cugl_event_close(event);
    free(event);
}
