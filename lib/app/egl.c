/*
 * egl.c - headless contexts: an EGL display (the EGL device that runs a
 * given CUDA device, or any device, Mesa's surfaceless platform, or the
 * default display), a GL 4.5 core context current without a surface.
 */
#include <stdio.h>
#include <string.h>

#include "app_internal.h"

enum { MAX_DEVICES = 32 };

static const char *egl_error_name(EGLint error)
{
    switch (error) {
#define NAME(e) \
    case e:     \
        return #e;
        NAME(EGL_SUCCESS)
        NAME(EGL_NOT_INITIALIZED)
        NAME(EGL_BAD_ACCESS)
        NAME(EGL_BAD_ALLOC)
        NAME(EGL_BAD_ATTRIBUTE)
        NAME(EGL_BAD_CONFIG)
        NAME(EGL_BAD_CONTEXT)
        NAME(EGL_BAD_CURRENT_SURFACE)
        NAME(EGL_BAD_DISPLAY)
        NAME(EGL_BAD_MATCH)
        NAME(EGL_BAD_NATIVE_PIXMAP)
        NAME(EGL_BAD_NATIVE_WINDOW)
        NAME(EGL_BAD_PARAMETER)
        NAME(EGL_BAD_SURFACE)
        NAME(EGL_CONTEXT_LOST)
#undef NAME
    }
    return "unknown EGL error";
}

/* Whether the space-separated list `list` holds `word`. */
static bool has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; p && (p = strstr(p, word)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return true;
    return false;
}

static bool can_enumerate_devices(void)
{
    return GLAD_EGL_EXT_platform_device && eglQueryDevicesEXT && eglQueryDeviceStringEXT &&
           eglQueryDeviceAttribEXT && eglGetPlatformDisplayEXT;
}

/* The CUDA device ordinal behind an EGL device, or -1 where it has none. */
static int cuda_ordinal(EGLDeviceEXT device)
{
    if (!has_word(eglQueryDeviceStringEXT(device, EGL_EXTENSIONS), "EGL_NV_device_cuda"))
        return -1;
    /* EGL_CUDA_DEVICE_NV is a CUdevice, which the driver numbers as the ordinal. */
    EGLAttrib cu = -1;
    if (!eglQueryDeviceAttribEXT(device, EGL_CUDA_DEVICE_NV, &cu))
        return -1;
    return (int)cu;
}

static bool initialize(EGLDisplay display)
{
    EGLint major, minor;
    return display != EGL_NO_DISPLAY && eglInitialize(display, &major, &minor);
}

static EGLint query_devices(EGLDeviceEXT devices[MAX_DEVICES])
{
    EGLint n = 0;
    if (!eglQueryDevicesEXT(MAX_DEVICES, devices, &n))
        return 0;
    return n;
}

/* The display of the EGL device that runs CUDA device `ordinal`. */
static cugl_status open_cuda_display(cugl_app_context *ctx, int ordinal, const char *who)
{
    if (!can_enumerate_devices())
        return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who,
                          "headless GL on CUDA device %d needs EGL_EXT_device_enumeration, "
                          "EGL_EXT_device_query and EGL_EXT_platform_device, which this "
                          "EGL lacks (NVIDIA's EGL has them)",
                          ordinal);
    EGLDeviceEXT devices[MAX_DEVICES];
    EGLint n = query_devices(devices);
    int with_cuda = 0;
    char found[256] = "";
    size_t used = 0;
    for (EGLint i = 0; i < n; i++) {
        int cu = cuda_ordinal(devices[i]);
        if (cu < 0)
            continue;
        with_cuda++;
        if (used < sizeof found) {
            int w = snprintf(found + used, sizeof found - used, "%s%d", used ? ", " : "", cu);
            used += w > 0 ? (size_t)w : 0;
        }
        if (cu != ordinal)
            continue;
        EGLDisplay d = eglGetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT, devices[i], NULL);
        if (!initialize(d))
            return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who,
                              "the EGL device of CUDA device %d does not initialise "
                              "(%s)",
                              ordinal, egl_error_name(eglGetError()));
        ctx->display = d;
        ctx->platform = "egl-device";
        return CUGL_OK;
    }
    if (with_cuda == 0)
        return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who,
                          "no EGL device runs CUDA device %d: %d EGL device(s), none with "
                          "EGL_NV_device_cuda (is NVIDIA's EGL installed?)",
                          ordinal, (int)n);
    return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who,
                      "no EGL device runs CUDA device %d: %d EGL device(s), %d with "
                      "EGL_NV_device_cuda, for CUDA device(s) %s",
                      ordinal, (int)n, with_cuda, found);
}

/*
 * Any display: EGL devices (those that run CUDA first), then Mesa's
 * surfaceless platform, then the default display.
 */
static cugl_status open_any_display(cugl_app_context *ctx, const char *who)
{
    EGLint n = 0;
    if (can_enumerate_devices()) {
        EGLDeviceEXT devices[MAX_DEVICES];
        n = query_devices(devices);
        for (int pass = 0; pass < 2; pass++)
            for (EGLint i = 0; i < n; i++) {
                if ((cuda_ordinal(devices[i]) >= 0) != (pass == 0))
                    continue;
                EGLDisplay d =
                    eglGetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT, devices[i], NULL);
                if (initialize(d)) {
                    ctx->display = d;
                    ctx->platform = "egl-device";
                    return CUGL_OK;
                }
            }
    }
    if (GLAD_EGL_MESA_platform_surfaceless && eglGetPlatformDisplayEXT) {
        EGLDisplay d = eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA,
                                                EGL_DEFAULT_DISPLAY, NULL);
        if (initialize(d)) {
            ctx->display = d;
            ctx->platform = "egl-surfaceless";
            return CUGL_OK;
        }
    }
    EGLDisplay d = eglGetDisplay(EGL_DEFAULT_DISPLAY);
    if (initialize(d)) {
        ctx->display = d;
        ctx->platform = "egl-default";
        return CUGL_OK;
    }
    return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who,
                      "no EGL display: %d EGL device(s) tried, Mesa's surfaceless "
                      "platform %s, the default display does not initialise (%s)",
                      (int)n,
                      GLAD_EGL_MESA_platform_surfaceless ? "tried" : "absent",
                      egl_error_name(eglGetError()));
}

static GLADapiproc egl_proc(const char *name)
{
    return (GLADapiproc)eglGetProcAddress(name);
}

static bool choose_config(EGLDisplay display, EGLint surface_type, EGLConfig *config)
{
    const EGLint attrs[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_SURFACE_TYPE,
                            surface_type, EGL_NONE};
    EGLint n = 0;
    return eglChooseConfig(display, attrs, config, 1, &n) && n >= 1;
}

cugl_status cugl__app_egl_create(cugl_app_context *ctx, const cugl_app_context_desc *desc,
                                 const char *who)
{
    ctx->headless = true;
    ctx->width = desc->width;
    ctx->height = desc->height;
    /* Client extensions first (devices, platforms), then the display's. */
    if (!gladLoaderLoadEGL(EGL_NO_DISPLAY))
        return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who,
                          "no EGL library (libEGL.so.1 does not load)");
    CUGL__TRY(desc->cuda_device >= 0 ? open_cuda_display(ctx, desc->cuda_device, who)
                                            : open_any_display(ctx, who));
    if (!gladLoaderLoadEGL(ctx->display))
        return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who,
                          "the GLAD loader could not load EGL for the %s display",
                          ctx->platform);
    if (!eglBindAPI(EGL_OPENGL_API))
        return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who,
                          "the %s display has no desktop GL (eglBindAPI: %s)",
                          ctx->platform, egl_error_name(eglGetError()));

    /* Without EGL_KHR_surfaceless_context a 1x1 pbuffer stands in. */
    bool surfaceless = GLAD_EGL_KHR_surfaceless_context;
    EGLConfig config;
    if (!(surfaceless && choose_config(ctx->display, 0, &config)) &&
        !choose_config(ctx->display, EGL_PBUFFER_BIT, &config))
        return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who,
                          "the %s display has no GL config (%s)", ctx->platform,
                          egl_error_name(eglGetError()));
    if (!surfaceless) {
        const EGLint pbuffer[] = {EGL_WIDTH, 1, EGL_HEIGHT, 1, EGL_NONE};
        ctx->egl_surface = eglCreatePbufferSurface(ctx->display, config, pbuffer);
        if (ctx->egl_surface == EGL_NO_SURFACE)
            return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who,
                              "the %s display is not surfaceless and makes no pbuffer "
                              "(%s)",
                              ctx->platform, egl_error_name(eglGetError()));
    }
    const EGLint attrs[] = {EGL_CONTEXT_MAJOR_VERSION, 4,
                            EGL_CONTEXT_MINOR_VERSION, 5,
                            EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                            EGL_CONTEXT_OPENGL_DEBUG, desc->debug ? EGL_TRUE : EGL_FALSE,
                            EGL_NONE};
    ctx->egl_context = eglCreateContext(ctx->display, config, EGL_NO_CONTEXT, attrs);
    if (ctx->egl_context == EGL_NO_CONTEXT)
        return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who,
                          "the %s display makes no GL 4.5 core context (%s)",
                          ctx->platform, egl_error_name(eglGetError()));
    if (!eglMakeCurrent(ctx->display, ctx->egl_surface, ctx->egl_surface, ctx->egl_context))
        return cugl__fail(CUGL_ERROR_GL, who,
                          "eglMakeCurrent on the %s display failed (%s)", ctx->platform,
                          egl_error_name(eglGetError()));
    return cugl__app_gl_init(ctx, gladLoadGL(egl_proc), desc->debug, who);
}

/*
 * No eglTerminate: Mesa frees its driver there and leaves blocks the leak
 * checker cannot attribute; the display lives until the process exits, and
 * eglInitialize on it again is harmless.
 */
EGLDisplay cugl__app_egl_fence_display(const cugl_app_context *ctx)
{
    bool fences = GLAD_EGL_VERSION_1_5 && eglCreateSync && eglClientWaitSync && eglDestroySync;
    return ctx->headless && fences ? ctx->display : EGL_NO_DISPLAY;
}

void cugl__app_copy_fence(EGLDisplay display, EGLSync *egl, GLsync *gl)
{
    if (display != EGL_NO_DISPLAY)
        *egl = eglCreateSync(display, EGL_SYNC_FENCE, NULL);
    if (*egl != EGL_NO_SYNC)
        glFlush(); /* the fence reaches the GPU without a wait here */
    else
        *gl = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
}

void cugl__app_copy_fence_drop(EGLDisplay display, EGLSync *egl, GLsync *gl)
{
    if (*egl != EGL_NO_SYNC)
        eglDestroySync(display, *egl);
    if (*gl)
        glDeleteSync(*gl);
    *egl = EGL_NO_SYNC;
    *gl = NULL;
}

bool cugl__app_copy_fence_wait(EGLDisplay display, EGLSync *egl)
{
    EGLint r = eglClientWaitSync(display, *egl, 0, EGL_FOREVER);
    eglDestroySync(display, *egl);
    *egl = EGL_NO_SYNC;
    return r == EGL_CONDITION_SATISFIED;
}

void cugl__app_egl_destroy(cugl_app_context *ctx)
{
    if (ctx->display == EGL_NO_DISPLAY)
        return;
    if (eglGetCurrentContext() == ctx->egl_context)
        eglMakeCurrent(ctx->display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    if (ctx->egl_surface != EGL_NO_SURFACE)
        eglDestroySurface(ctx->display, ctx->egl_surface);
    if (ctx->egl_context != EGL_NO_CONTEXT)
        eglDestroyContext(ctx->display, ctx->egl_context);
    /* EGL's per-thread state goes too, unless another context is current. */
    if (eglGetCurrentContext() == EGL_NO_CONTEXT)
        eglReleaseThread();
    ctx->egl_surface = EGL_NO_SURFACE;
    ctx->egl_context = EGL_NO_CONTEXT;
    ctx->display = EGL_NO_DISPLAY;
}
