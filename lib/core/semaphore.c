/*
 * semaphore.c - external semaphores: binary semaphores made by another API
 * (Vulkan), imported from an opaque file descriptor, that streams signal
 * and wait for on the GPU.
 */
#include <stdlib.h>

#include "core_internal.h"

struct cugl_semaphore {
    cugl__ref ref;
    cugl_device *device;
    CUexternalSemaphore handle;
    bool closed;
};

static cugl_status check(const cugl_semaphore *s, const cugl_stream *stream, const char *who)
{
    if (!s)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "semaphore is NULL");
    if (s->closed)
        return cugl__fail(CUGL_ERROR_CLOSED, who, "the semaphore has been closed");
    CUGL__TRY(cugl__stream_check(stream, who));
    if (stream->device != s->device)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the semaphore was imported for device %d and the stream is "
                          "device %d's",
                          s->device->ordinal, stream->device->ordinal);
    return cugl__stream_enter(stream, who);
}

CUGL_API cugl_status cugl_semaphore_import_fd(cugl_semaphore **out, cugl_device *device, int fd)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = NULL;
    CUGL__CHECK_NOT_NULL(device);
    CUGL__CHECK_ARG(fd >= 0, "fd is %d, not a file descriptor", fd);
    CUGL__TRY(cugl__device_activate(device, __func__));
    if (!cugl__cu.cuImportExternalSemaphore || !cugl__cu.cuDestroyExternalSemaphore ||
        !cugl__cu.cuSignalExternalSemaphoresAsync || !cugl__cu.cuWaitExternalSemaphoresAsync)
        return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, __func__,
                          "the CUDA driver has no external semaphores");
    cugl_semaphore *s = calloc(1, sizeof *s);
    if (!s)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, __func__, "cannot allocate a semaphore");
    CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC desc = {
        .type = CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD,
        .handle.fd = fd,
    };
    cugl_status st = CUGL_CU(cuImportExternalSemaphore, &s->handle, &desc);
    if (st != CUGL_OK) {
        free(s);
        return st;
    }
    cugl__ref_init(&s->ref);
    s->device = device;
    *out = s;
    return CUGL_OK;
}

CUGL_API cugl_status cugl_semaphore_signal(cugl_semaphore *semaphore, cugl_stream *stream)
{
    CUGL__TRY(check(semaphore, stream, __func__));
    CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS params = {0};
    return CUGL_CU(cuSignalExternalSemaphoresAsync, &semaphore->handle, &params, 1,
                   stream->handle);
}

CUGL_API cugl_status cugl_semaphore_wait(cugl_semaphore *semaphore, cugl_stream *stream)
{
    CUGL__TRY(check(semaphore, stream, __func__));
    CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS params = {0};
    return CUGL_CU(cuWaitExternalSemaphoresAsync, &semaphore->handle, &params, 1,
                   stream->handle);
}

CUGL_API cugl_device *cugl_semaphore_device(const cugl_semaphore *semaphore)
{
    return semaphore ? semaphore->device : NULL;
}

CUGL_API bool cugl_semaphore_is_closed(const cugl_semaphore *semaphore)
{
    return !semaphore || semaphore->closed;
}

CUGL_API void cugl_semaphore_close(cugl_semaphore *semaphore)
{
    if (!semaphore || semaphore->closed)
        return;
    cugl__cu.cuDestroyExternalSemaphore(semaphore->handle);
    semaphore->handle = NULL;
    semaphore->closed = true;
}

CUGL_API void cugl_semaphore_release(cugl_semaphore *semaphore)
{
    if (!semaphore || !cugl__ref_dec(&semaphore->ref))
        return;
    cugl_semaphore_close(semaphore);
    free(semaphore);
}
