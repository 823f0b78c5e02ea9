/*
 * interop.c - which way CUDA's output can reach this GL context
 * (cugl_app_choose_interop, cugl/app.h). Each way is tried for real, in
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
