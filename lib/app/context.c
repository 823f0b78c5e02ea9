/*
 * context.c - creating a context (a window or headless) and what every
 * context answers (GL loaded and checked, and the headless framebuffer:
 * gl_setup.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_internal.h"

enum { DEFAULT_WIDTH = 1024, DEFAULT_HEIGHT = 768 };

/* The context this thread made current last: whose platform answers
 * cugl_app_gl_proc. */
static _Thread_local cugl_app_context *current;

/* The fences of the last presents, deleted. */
static void free_presented(cugl_app_context *ctx)
{
    for (int i = 0; i < CUGL_APP_FRAMES_AHEAD; i++) {
        if (ctx->presented[i])
            glDeleteSync(ctx->presented[i]);
        ctx->presented[i] = NULL;
    }
}

static void reset(cugl_app_context *ctx)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->display = EGL_NO_DISPLAY;
    ctx->egl_context = EGL_NO_CONTEXT;
    ctx->egl_surface = EGL_NO_SURFACE;
}

static cugl_status create_headless(cugl_app_context *ctx, const cugl_app_context_desc *desc,
                                   const char *who)
{
    cugl_status st = cugl__app_egl_create(ctx, desc, who);
    if (st == CUGL_OK) {
        st = cugl__app_offscreen_make(ctx, who);
        if (st != CUGL_OK)
            cugl__app_offscreen_free(ctx);
    }
    if (st != CUGL_OK)
        cugl__app_egl_destroy(ctx);
    return st;
}

static cugl_status create_window(cugl_app_context *ctx, const cugl_app_context_desc *desc,
                                 bool report, const char *who)
{
    cugl_status st = cugl__app_window_create(ctx, desc, report, who);
    if (st != CUGL_OK)
        cugl__app_window_destroy(ctx);
    return st;
}

static bool display_reachable(void)
{
    const char *x11 = getenv("DISPLAY"), *wayland = getenv("WAYLAND_DISPLAY");
    return (x11 && *x11) || (wayland && *wayland);
}

CUGL_API cugl_status cugl_app_context_create(cugl_app_context **out,
                                             const cugl_app_context_desc *desc)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = NULL;
    CUGL__CHECK_NOT_NULL(desc);
    if (desc->width < 0 || desc->height < 0)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "size %d x %d is negative (0 means the default %d x %d)",
                          desc->width, desc->height, DEFAULT_WIDTH, DEFAULT_HEIGHT);
    if (desc->mode != CUGL_APP_AUTO && desc->mode != CUGL_APP_WINDOW &&
        desc->mode != CUGL_APP_HEADLESS)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "mode %d is none of CUGL_APP_AUTO, _WINDOW, _HEADLESS",
                          (int)desc->mode);

    cugl_app_context_desc d = *desc;
    if (d.width == 0)
        d.width = DEFAULT_WIDTH;
    if (d.height == 0)
        d.height = DEFAULT_HEIGHT;
    if (!d.title)
        d.title = "cugl";

    cugl_app_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, __func__, "no memory for a context");
    reset(ctx);

    cugl_status st;
    switch (d.mode) {
    case CUGL_APP_WINDOW:
        if (!display_reachable())
            st = cugl__fail(CUGL_ERROR_NOT_SUPPORTED, __func__,
                            "no display ($DISPLAY is not set); use --headless");
        else
            st = create_window(ctx, &d, true, __func__);
        break;
    case CUGL_APP_HEADLESS:
        st = create_headless(ctx, &d, __func__);
        break;
    default:
        /* A failed window attempt is no failure here: headless follows. */
        st = display_reachable() ? create_window(ctx, &d, false, __func__)
                                 : CUGL_ERROR_NOT_SUPPORTED;
        if (st != CUGL_OK) {
            reset(ctx);
            st = create_headless(ctx, &d, __func__);
        }
        break;
    }
    ctx->cuda_device = d.cuda_device;
    if (st == CUGL_OK) {
        st = cugl__app_input_init(ctx, __func__);
        if (st != CUGL_OK) {
            if (ctx->headless)
                cugl__app_egl_destroy(ctx);
            else
                cugl__app_window_destroy(ctx);
        }
    }
    if (st != CUGL_OK) {
        free(ctx);
        return st;
    }
    current = ctx;
    *out = ctx;
    return CUGL_OK;
}

CUGL_API void cugl_app_context_destroy(cugl_app_context *ctx)
{
    if (!ctx)
        return;
    if (cugl_app_context_make_current(ctx) == CUGL_OK) {
        cugl__app_blit_free(ctx);
        free_presented(ctx);
        cugl__app_offscreen_free(ctx);
    }
    if (ctx->headless)
        cugl__app_egl_destroy(ctx);
    else
        cugl__app_window_destroy(ctx);
    cugl__app_input_free(ctx, __func__);
    if (current == ctx)
        current = NULL;
    free(ctx);
}

CUGL_API cugl_status cugl_app_context_make_current(cugl_app_context *ctx)
{
    CUGL__CHECK_NOT_NULL(ctx);
    if (!ctx->headless) {
        glfwGetError(NULL);
        glfwMakeContextCurrent(ctx->window);
        const char *why = NULL;
        if (glfwGetError(&why) != GLFW_NO_ERROR)
            return cugl__fail(CUGL_ERROR_GL, __func__, "glfwMakeContextCurrent: %s",
                              why ? why : "unknown GLFW error");
        current = ctx;
        return CUGL_OK;
    }
    if (!eglMakeCurrent(ctx->display, ctx->egl_surface, ctx->egl_surface, ctx->egl_context))
        return cugl__fail(CUGL_ERROR_GL, __func__, "eglMakeCurrent failed (EGL error 0x%x)",
                          (unsigned)eglGetError());
    current = ctx;
    return CUGL_OK;
}

cugl_status cugl__app_context_cuda_device(cugl_device **out, const cugl_app_context *ctx,
                                          const char *who)
{
    *out = NULL;
    if (ctx->cuda_device < 0)
        return CUGL_OK;
    cugl_device *d = NULL;
    cugl_status st = cugl_device_get(&d, ctx->cuda_device);
    if (st == CUGL_OK && !cugl_device_is_initialized(d))
        st = cugl_device_set_current(d);
    if (st != CUGL_OK)
        return cugl__as_own(st, who);
    *out = d;
    return CUGL_OK;
}

CUGL_API cugl_app_glproc cugl_app_gl_proc(const char *name)
{
    if (!name || !current)
        return NULL;
    if (current->window)
        return (cugl_app_glproc)glfwGetProcAddress(name);
    return (cugl_app_glproc)eglGetProcAddress(name);
}

CUGL_API bool cugl_app_context_is_headless(const cugl_app_context *ctx)
{
    return ctx && ctx->headless;
}

CUGL_API const char *cugl_app_context_platform(const cugl_app_context *ctx)
{
    return ctx ? ctx->platform : "";
}

CUGL_API const char *cugl_app_context_renderer(const cugl_app_context *ctx)
{
    return ctx ? ctx->renderer : "";
}

CUGL_API const char *cugl_app_context_vendor(const cugl_app_context *ctx)
{
    return ctx ? ctx->vendor : "";
}

CUGL_API void cugl_app_context_size(const cugl_app_context *ctx, int *width, int *height)
{
    if (width)
        *width = ctx ? ctx->width : 0;
    if (height)
        *height = ctx ? ctx->height : 0;
}

GLuint cugl__app_context_color(const cugl_app_context *ctx)
{
    return ctx->color;
}

CUGL_API uint32_t cugl_app_context_framebuffer(const cugl_app_context *ctx)
{
    return ctx ? ctx->fbo : 0;
}

CUGL_API cugl_status cugl_app_context_bind_framebuffer(cugl_app_context *ctx)
{
    CUGL__CHECK_NOT_NULL(ctx);
    if (!glad_glBindFramebuffer)
        return cugl__fail(CUGL_ERROR_INVALID_STATE, __func__,
                          "GL is not loaded: create the context first");
    cugl_app_drain_gl_errors();
    glBindFramebuffer(GL_FRAMEBUFFER, ctx->fbo);
    glViewport(0, 0, ctx->width, ctx->height);
    return cugl_app_check_gl(__func__, "binding the framebuffer");
}

/* A fence after the frame's GL work, the work flushed, and a wait for the
 * fence CUGL_APP_FRAMES_AHEAD presents back. */
static cugl_status present_headless(cugl_app_context *ctx)
{
    GLsync oldest = ctx->presented[0];
    memmove(ctx->presented, ctx->presented + 1,
            (CUGL_APP_FRAMES_AHEAD - 1) * sizeof ctx->presented[0]);
    ctx->presented[CUGL_APP_FRAMES_AHEAD - 1] = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
    glFlush();
    if (!oldest)
        return CUGL_OK;
    GLenum r = glClientWaitSync(oldest, 0, UINT64_MAX);
    glDeleteSync(oldest);
    if (r == GL_WAIT_FAILED)
        return cugl__fail(CUGL_ERROR_GL, "cugl_app_context_present",
                          "glClientWaitSync on a frame %d presents back failed",
                          CUGL_APP_FRAMES_AHEAD);
    return CUGL_OK;
}

CUGL_API cugl_status cugl_app_context_present(cugl_app_context *ctx)
{
    CUGL__CHECK_NOT_NULL(ctx);
    cugl_status st;
    if (ctx->headless) {
        st = present_headless(ctx);
        cugl_status input = cugl__app_input_present(ctx);
        if (st == CUGL_OK)
            st = input;
    } else {
        st = cugl__app_window_present(ctx);
    }
    /* The events just applied were the next frame's: it begins. */
    ctx->frame++;
    return st;
}

CUGL_API cugl_status cugl_app_context_finish(cugl_app_context *ctx)
{
    CUGL__CHECK_NOT_NULL(ctx);
    if (ctx != current)
        return cugl__fail(CUGL_ERROR_INVALID_STATE, __func__,
                          "the context is not the one current on this thread "
                          "(cugl_app_context_make_current)");
    cugl_app_drain_gl_errors();
    glFinish();
    return cugl_app_check_gl(__func__, "glFinish");
}

CUGL_API long cugl_app_context_frame(const cugl_app_context *ctx) { return ctx ? ctx->frame : 0; }

CUGL_API void *cugl_app_context_window(cugl_app_context *ctx)
{
    return ctx ? (void *)ctx->window : NULL;
}
