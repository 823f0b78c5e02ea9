/*
 * interop.c - which way CUDA's output can reach this GL context
 * (cugl_app_choose_interop; from other GPUs than GL's, or several,
 * cugl_app_choose_interop_for: the one rule). Each way is tried for real, in
 * order of speed, on a small object: where a driver refuses, the next
 * one is tried, and the reason names what refused.
 *
 * Registration fails where GL does not run on the CUDA device's driver:
 * Mesa (llvmpipe, or another vendor's GPU), WSL, laptops that draw with
 * the integrated GPU. NVIDIA Warp falls back to copies there; so do we.
 */
#include <stdio.h>
#include <string.h>

#include "app_internal.h"
#include "cugl/app_shared.h"

/* The bytes of the objects the probes make. */
enum { PROBE_BYTES = 65536 };

static const char *const interop_names[] = {
#define INTEROP_NAME(id, value, name, help) [value] = name,
    CUGL_APP_INTEROP_LIST(INTEROP_NAME)
#undef INTEROP_NAME
};

CUGL_API const char *cugl_app_interop_name(cugl_app_interop interop)
{
    return (unsigned)interop < sizeof interop_names / sizeof interop_names[0]
               ? interop_names[interop]
               : "invalid";
}

CUGL_API cugl_status cugl_app_interop_from_name(cugl_app_interop *out, const char *name)
{
    CUGL__CHECK_NOT_NULL(out);
    CUGL__CHECK_NOT_NULL(name);
    size_t count = sizeof interop_names / sizeof interop_names[0];
    for (size_t i = 0; i < count; i++)
        if (strcmp(name, interop_names[i]) == 0) {
            *out = (cugl_app_interop)i;
            return CUGL_OK;
        }
    return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                      "\"%.64s\" names no interop path (auto, map, shared, host)", name);
}

/* Whether GL runs on the CUDA device: GL_EXT_memory_object lists the
 * UUIDs of the devices the context uses. */
static bool gl_runs_on(const cugl_device_properties *p)
{
    if (!GLAD_GL_EXT_memory_object)
        return false;
    GLint n = 0;
    glGetIntegerv(GL_NUM_DEVICE_UUIDS_EXT, &n);
    for (GLint i = 0; i < n; i++) {
        GLubyte uuid[GL_UUID_SIZE_EXT] = {0};
        glGetUnsignedBytei_vEXT(GL_DEVICE_UUID_EXT, (GLuint)i, uuid);
        if (memcmp(uuid, p->uuid, sizeof p->uuid) == 0)
            return true;
    }
    return false;
}

/* Map-free memory: CUDA's exportable memory imported by GL. */
static cugl_status try_shared(cugl_device *device, const cugl_device_properties *p,
                              const char *who)
{
    if (!gl_runs_on(p))
        return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who,
                          "GL does not report the CUDA device's UUID among its devices");
    cugl_app_shared *s = NULL;
    cugl_status st = cugl_app_shared_buffer_create(&s, device, PROBE_BYTES);
    cugl_app_shared_destroy(s);
    return st;
}

/* Registration of a GL buffer with CUDA. */
static cugl_status try_map(cugl_device *device, const char *who)
{
    GLuint name = 0;
    glCreateBuffers(1, &name);
    glNamedBufferStorage(name, PROBE_BYTES, NULL, 0);
    cugl_status st = cugl_app_check_gl(who, "a GL buffer to register");
    cugl_graphics_resource *r = NULL;
    if (st == CUGL_OK)
        st = cugl_graphics_resource_from_gl_buffer(&r, device, name, CUGL_GRAPHICS_NONE);
    if (r) {
        cugl_graphics_resource_close(r, NULL);
        cugl_graphics_resource_release(r);
    }
    glDeleteBuffers(1, &name);
    return st;
}

CUGL_API cugl_status cugl_app_choose_interop(cugl_app_interop *out, char *reason,
                                             size_t reason_size, cugl_app_context *ctx,
                                             cugl_device *device)
{
    if (!out || !ctx || !device || (!reason && reason_size))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "%s is NULL",
                          !out ? "out" : !ctx ? "ctx" : !device ? "device" : "reason");
    cugl_device_properties p;
    CUGL__TRY_OWN(cugl_device_get_properties(device, &p));
    cugl_app_drain_gl_errors();
    char why_not[2][384];
    cugl_status st = try_shared(device, &p, __func__);
    if (st == CUGL_OK) {
        *out = CUGL_APP_INTEROP_SHARED;
        if (reason_size)
            snprintf(reason, reason_size,
                     "GL on %s imports CUDA memory of %s: nothing is mapped per frame",
                     cugl_app_context_renderer(ctx), p.name);
        return CUGL_OK;
    }
    snprintf(why_not[0], sizeof why_not[0], "%s", cugl_last_error());
    st = try_map(device, __func__);
    if (st == CUGL_OK) {
        *out = CUGL_APP_INTEROP_MAP;
        if (reason_size)
            snprintf(reason, reason_size,
                     "GL on %s cannot import CUDA memory (%s); CUDA registers its objects "
                     "and maps them each frame",
                     cugl_app_context_renderer(ctx), why_not[0]);
        return CUGL_OK;
    }
    snprintf(why_not[1], sizeof why_not[1], "%s", cugl_last_error());
    cugl_app_drain_gl_errors();
    *out = CUGL_APP_INTEROP_HOST;
    if (reason_size)
        snprintf(reason, reason_size,
                 "the GL context runs on %s %s, which CUDA on %s cannot register (%s); "
                 "drawing through host copies",
                 cugl_app_context_vendor(ctx), cugl_app_context_renderer(ctx), p.name, why_not[1]);
    cugl_clear_error();
    return CUGL_OK;
}

/* The writers that are not `device`, in `remote` (at most `max`); how many. */
static int other_gpus(cugl_device *device, cugl_device *const *writers, int n,
                      cugl_device **remote, int max)
{
    int count = 0;
    for (int i = 0; i < n && count < max; i++)
        if (writers[i] && writers[i] != device)
            remote[count++] = writers[i];
    return count;
}

/* Whether `path` reaches GL on `device` from the `remote` GPUs (of
 * `writer_devices` writing devices in all): CUGL_OK, or NOT_SUPPORTED
 * saying why and what would. */
static cugl_status reaches_from(cugl_app_interop path, cugl_device *device,
                                const cugl_device_properties *gl, cugl_device *const *remote,
                                int remote_count, int writer_devices, const char *who)
{
    cugl_device_properties other;
    switch (path) {
    case CUGL_APP_INTEROP_MAP:
        CUGL__TRY_OWN(cugl_device_get_properties(remote[0], &other));
        return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who,
                          "the map path maps GL's objects for CUDA on the GL GPU (device %d, "
                          "%s) alone, and CUDA on device %d (%s) writes; the shared path "
                          "reaches GL from there (or, for one writer, host copies)",
                          cugl_device_ordinal(device), gl->name, cugl_device_ordinal(remote[0]),
                          other.name);
    case CUGL_APP_INTEROP_SHARED:
        for (int i = 0; i < remote_count; i++) {
            bool peer = false;
            cugl_status st = cugl_device_can_access_peer(&peer, remote[i], device);
            if (st != CUGL_OK)
                return cugl__as_own(st, who);
            if (!peer)
                return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who,
                                  "device %d has no peer path to the GL GPU (device %d, %s), so "
                                  "it cannot write the memory GL draws from; %s",
                                  cugl_device_ordinal(remote[i]), cugl_device_ordinal(device),
                                  gl->name,
                                  writer_devices == 1 ? "host copies reach GL from there"
                                                      : "leave it out of the writers");
        }
        return CUGL_OK;
    case CUGL_APP_INTEROP_HOST:
        if (writer_devices == 1)
            return CUGL_OK;
        return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who,
                          "the host path copies from one device, and %d write; the shared "
                          "path takes several",
                          writer_devices);
    default:
        return CUGL_OK;
    }
}

CUGL_API cugl_status cugl_app_choose_interop_for(cugl_app_interop *out, char *reason,
                                                 size_t reason_size, cugl_app_context *ctx,
                                                 cugl_device *device,
                                                 cugl_device *const *writers, int writer_count,
                                                 cugl_app_interop asked)
{
    if (!out || !ctx || !device || (!reason && reason_size))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "%s is NULL",
                          !out ? "out" : !ctx ? "ctx" : !device ? "device" : "reason");
    CUGL__CHECK_ARG(writer_count >= 0 && writer_count <= CUGL_APP_SHARED_MAX_WRITERS + 1,
                    "%d writers; 0 to %d", writer_count, CUGL_APP_SHARED_MAX_WRITERS + 1);
    CUGL__CHECK_ARG(writer_count == 0 || writers, "writers is NULL, and writer_count is %d",
                    writer_count);
    CUGL__CHECK_ARG((unsigned)asked < sizeof interop_names / sizeof interop_names[0],
                    "asked is %d, no cugl_app_interop", (int)asked);
    for (int i = 0; i < writer_count; i++)
        CUGL__CHECK_ARG(writers[i], "writers[%d] is NULL", i);
    cugl_device *remote[CUGL_APP_SHARED_MAX_WRITERS + 1];
    int remote_count = other_gpus(device, writers, writer_count, remote,
                                  CUGL_APP_SHARED_MAX_WRITERS + 1);
    int writer_devices = writer_count ? writer_count : 1;
    cugl_device_properties gl;
    if (remote_count)
        CUGL__TRY_OWN(cugl_device_get_properties(device, &gl));
    if (asked != CUGL_APP_INTEROP_AUTO) {
        if (remote_count)
            CUGL__TRY(reaches_from(asked, device, &gl, remote, remote_count, writer_devices,
                                   __func__));
        if (reason_size)
            snprintf(reason, reason_size, "%s: asked for", cugl_app_interop_name(asked));
        *out = asked;
        return CUGL_OK;
    }
    cugl_app_interop chosen;
    char here[768];
    CUGL__TRY_OWN(cugl_app_choose_interop(&chosen, here, sizeof here, ctx, device));
    if (remote_count == 0) {
        if (reason_size)
            snprintf(reason, reason_size, "%s", here);
        *out = chosen;
        return CUGL_OK;
    }
    /* From other GPUs: shared memory where GL imports it and each has a
     * peer path to GL's device; else host copies for one writer. */
    cugl_status st = chosen == CUGL_APP_INTEROP_SHARED
                         ? reaches_from(CUGL_APP_INTEROP_SHARED, device, &gl, remote,
                                        remote_count, writer_devices, __func__)
                         : cugl__fail(CUGL_ERROR_NOT_SUPPORTED, __func__,
                                      "GL cannot import memory here (%s), and a mapping serves "
                                      "only CUDA on the GL GPU (device %d)",
                                      here, cugl_device_ordinal(device));
    if (st == CUGL_OK) {
        *out = CUGL_APP_INTEROP_SHARED;
        if (reason_size)
            snprintf(reason, reason_size,
                     "CUDA on device %d writes memory of the GL GPU (device %d, %s) over "
                     "their peer path, and GL imports it",
                     cugl_device_ordinal(remote[0]), cugl_device_ordinal(device), gl.name);
        return CUGL_OK;
    }
    if (writer_devices > 1 || st != CUGL_ERROR_NOT_SUPPORTED)
        return st; /* its message says why */
    const char *why = cugl_last_error();
    size_t n = strlen(__func__);
    if (strncmp(why, __func__, n) == 0 && strncmp(why + n, ": ", 2) == 0)
        why += n + 2;
    if (reason_size)
        snprintf(reason, reason_size, "%s; drawing through host copies", why);
    cugl_clear_error();
    *out = CUGL_APP_INTEROP_HOST;
    return CUGL_OK;
}
