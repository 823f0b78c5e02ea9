/**
 * @file cugl/app_context.h
 * Contexts: a GLFW window or headless EGL, made current, presented.
 *
 * A GL 4.5 core context (a GLFW window, or headless EGL on the GPU that
 * runs CUDA) and what libcugl-app keeps with it. libcugl-app loads GL for
 * itself and keeps its loader private: a program draws with its own loader
 * (GLAD, libepoxy, GLEW), loaded from cugl_app_gl_proc.
 *
 * Part of libcugl-app (cugl/app.h includes every part). Errors are
 * cugl's: functions return cugl_status and leave a message in
 * cugl_last_error().
 */
#ifndef CUGL_APP_CONTEXT_H
#define CUGL_APP_CONTEXT_H

#include <stdbool.h>
#include <stdint.h>

#include "cugl/cugl.h"

CUGL_BEGIN_DECLS

/* ---- Contexts ------------------------------------------------------------ */

/**
 * A GL context and what libcugl-app keeps with it (its input, the blit's
 * objects, the offscreen framebuffer): a GLFW window or headless EGL. Opaque.
 */
typedef struct cugl_app_context cugl_app_context;

/** Where a context draws (cugl_app_context_desc.mode). */
typedef enum cugl_app_mode {
    /** A window where a display is reachable ($DISPLAY or $WAYLAND_DISPLAY
     * and GLFW initialises); headless otherwise. */
    CUGL_APP_AUTO = 0,
    CUGL_APP_WINDOW = 1,   /**< a GLFW window; without a display, an error */
    CUGL_APP_HEADLESS = 2, /**< EGL, drawing into an offscreen framebuffer */
} cugl_app_mode;

/** What cugl_app_context_create makes; a zero field takes its default
 * (for cuda_device, device 0). */
typedef struct cugl_app_context_desc {
    cugl_app_mode mode; /**< window, headless, or CUGL_APP_AUTO (0): whichever works */
    int width,          /**< framebuffer width in pixels; 0: 1024 */
        height;         /**< framebuffer height in pixels; 0: 768 */
    const char *title;  /**< window title; NULL: "cugl" */
    bool no_vsync;      /**< vsync is on unless this is set (windows only) */
    /** The CUDA device (ordinal) whose output the context shows; 0: the
     * first, as the default (a program with one GPU leaves it 0, and 0 is
     * a device like any other, so that "none" takes -1 rather than 0).
     * Headless, GL runs on it: the EGL device whose EGL_CUDA_DEVICE_NV is
     * this ordinal. A window's GL runs where the display puts it (the
     * X server's GPU; cugl_gl_devices says which CUDA devices those are):
     * there the ordinal names the device targets take by default, and
     * where GL is not on it, the target's path says so and copies (host).
     * -1 (any negative value): no CUDA device; headless, any GL (an EGL
     * device, those that run CUDA first, Mesa's surfaceless platform or
     * the default display): GL-only use, targets of host memory alone. */
    int cuda_device;
    bool debug; /**< a debug context; GL's messages go to cugl_app_set_message_callback's callback */
} cugl_app_context_desc;

/**
 * Create a context, make it current on this thread and load GL with GLAD.
 * Headless contexts render into an FBO of the given size (RGBA8 colour,
 * depth 24) that cugl_app_context_framebuffer() names, one FBO for the
 * context's life (until a resize event makes it anew): after
 * cugl_app_context_present it still holds the frame presented, until the
 * program draws the next (cugl_app_read_pixels reads it then). Windows
 * render into the default framebuffer, whose back buffer is undefined
 * after a present (read it before).
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL, negative size, a mode that is
 *   none of the three, a headless size past GL's largest framebuffer),
 *   CUGL_ERROR_NOT_SUPPORTED (no display for a window; no EGL display, or no
 *   EGL device for that CUDA device, headless; GL older than 4.5),
 *   CUGL_ERROR_OUT_OF_MEMORY, CUGL_ERROR_GL. The message says which and
 *   what was tried.
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param[out] out the new context, current on this thread; NULL on failure.
 * @param desc what to make.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_context_create(cugl_app_context **out,
                                             const cugl_app_context_desc *desc);
/**
 * Destroy the context and everything of libcugl-app made in it (the blit's
 * objects, the offscreen framebuffer). It is made current for that, so no
 * context is current on this thread afterwards. NULL: no-op.
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param ctx the context, or NULL.
 */
CUGL_API void cugl_app_context_destroy(cugl_app_context *ctx);

/* ---- Notices ------------------------------------------------------------- */

/**
 * A notice of libcugl-app's that is no failure of a call: GL's debug
 * output of a debug context ("cugl GL error (type 0x824c): ..."), the
 * frame server falling back from its GPU encoder to the CPU's, a frame it
 * could not encode. Called on the thread that has the notice (the frame
 * server's encoder threads too). `message` lives until the callback returns.
 * @param message the notice, one line, naming what it comes from.
 * @param user_data what cugl_app_set_message_callback was given.
 */
typedef void (*cugl_app_message_callback)(const char *message, void *user_data);

/**
 * Where libcugl-app's notices go: `callback` (NULL: nowhere, the default).
 * The library never writes to stderr itself; a program that wants the
 * notices on its terminal prints them here (the demos do).
 * @thread_safety Any thread; the callback in effect when a notice comes is called.
 * @param callback the callback, or NULL.
 * @param user_data passed to it.
 * @param[out] previous receives the callback replaced, or NULL.
 * @param[out] previous_user_data receives its user data, or NULL.
 */
CUGL_API void cugl_app_set_message_callback(cugl_app_message_callback callback, void *user_data,
                                            cugl_app_message_callback *previous,
                                            void **previous_user_data);

/** A GL entry point, as loaders take them (GLAD's GLADapiproc). */
typedef void (*cugl_app_glproc)(void);

/**
 * The address of the GL (or EGL) function `name` for the context this
 * thread made current last (cugl_app_context_create makes the new context
 * current), from its platform: glfwGetProcAddress for a window,
 * eglGetProcAddress headless. Load the program's own GL loader with it
 * once a context is made: with GLAD, gladLoadGL(cugl_app_gl_proc); with
 * libepoxy or GLEW, nothing is needed. Which functions the context has
 * is GL's version and extensions to say, not this address: EGL and GLX
 * give an address for any name that starts with "gl" (a stub of the
 * driver's, which must not be called where the context lacks the function).
 * @errors none.
 * @thread_safety The thread whose context is current.
 * @param name the function's name, "glCreateBuffers" say.
 * @return the function's address; also for a name the context lacks where
 *   the platform makes stubs (EGL, GLX); NULL where the platform knows no
 *   such name, no context was made current on this thread, or `name` is
 *   NULL.
 */
CUGL_API cugl_app_glproc cugl_app_gl_proc(const char *name);

/**
 * Make the context current on this thread.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL), CUGL_ERROR_GL (GLFW or EGL
 *   cannot make it current: their reason is in the message).
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param ctx the context.
 * @return CUGL_OK; CUGL_ERROR_INVALID_ARGUMENT for NULL; CUGL_ERROR_GL where GLFW or EGL
 *   cannot make it current (their reason is in the message).
 */
CUGL_API cugl_status cugl_app_context_make_current(cugl_app_context *ctx);
/**
 * Bind the framebuffer the context presents (headless: its offscreen
 * framebuffer; a window: the default one) for drawing, with the viewport
 * over its whole size (it changes when a window is resized): what a frame
 * does before it draws, so that a program that draws only through
 * libcugl-app (cugl_app_target_draw) needs no GL of its own.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL), CUGL_ERROR_INVALID_STATE (GL
 *   not loaded), CUGL_ERROR_GL.
 * @thread_safety The thread that uses the context, with it current.
 * @param ctx the context.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_context_bind_framebuffer(cugl_app_context *ctx);

/**
 * Whether the context is headless (EGL, drawing into an offscreen framebuffer).
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param ctx the context, or NULL.
 * @return true for a headless context; false for a window or NULL.
 */
CUGL_API bool cugl_app_context_is_headless(const cugl_app_context *ctx);
/**
 * "glfw", "egl-device", "egl-surfaceless" or "egl-default".
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param ctx the context, or NULL.
 * @return one of those static strings; "" for NULL.
 */
CUGL_API const char *cugl_app_context_platform(const cugl_app_context *ctx);
/**
 * GL_RENDERER and GL_VENDOR, read at creation.
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param ctx the context, or NULL.
 * @return the GL_RENDERER string, held by the context (valid while it lives; "(unknown)"
 *   where GL gave none); "" for NULL.
 */
CUGL_API const char *cugl_app_context_renderer(const cugl_app_context *ctx);
/**
 * GL_VENDOR, read at creation.
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param ctx the context, or NULL.
 * @return the GL_VENDOR string, held by the context (valid while it lives; "(unknown)"
 *   where GL gave none); "" for NULL.
 */
CUGL_API const char *cugl_app_context_vendor(const cugl_app_context *ctx);
/**
 * Framebuffer size in pixels. It follows resizes: a window's, and a
 * resize event replayed or pushed to a headless context.
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param ctx the context, or NULL (both sizes 0).
 * @param[out] width the framebuffer's width in pixels, or NULL.
 * @param[out] height the framebuffer's height in pixels, or NULL.
 */
CUGL_API void cugl_app_context_size(const cugl_app_context *ctx, int *width, int *height);
/**
 * The framebuffer to draw into: 0 for a window, the offscreen FBO headless
 * (made anew by a resize event: ask each frame).
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param ctx the context, or NULL.
 * @return the framebuffer's GL name; 0 for a window or NULL.
 */
CUGL_API uint32_t cugl_app_context_framebuffer(const cugl_app_context *ctx);
/**
 * The user asked to close (the close button, Escape, a close event).
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param ctx the context, or NULL.
 * @return true once a close was asked for; false before, and for NULL.
 */
CUGL_API bool cugl_app_context_should_close(const cugl_app_context *ctx);
/** The frames a headless context's GL work may be queued ahead of the GPU. */
#define CUGL_APP_FRAMES_AHEAD 2
/**
 * End a frame: swap buffers and poll the window's input (the title shows
 * the frames per second, updated twice a second), or, headless, flush and
 * wait until the GPU has finished the frame CUGL_APP_FRAMES_AHEAD presents
 * back (as a window's swap chain does: a program whose CPU runs ahead
 * would otherwise queue frames without bound, and its picture would lag
 * its input by all of them); then apply the pushed events and the
 * replayed ones now due, and publish them all as the next frame's input.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL), CUGL_ERROR_GL (the swap or
 *   the wait for the GPU failed), the statuses of the recording of input
 *   (cugl_app_context_record) where writing it failed.
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param ctx the context.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_context_present(cugl_app_context *ctx);

/**
 * Wait until the GPU has done all GL work queued so far in the context
 * (glFinish), for a program without a GL loader of its own that reads
 * what GL made by other means, or times it.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL), CUGL_ERROR_INVALID_STATE (the
 *   context is not the one current on this thread), CUGL_ERROR_GL.
 * @thread_safety The thread whose current context is `ctx`.
 * @param ctx the context.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_context_finish(cugl_app_context *ctx);
/**
 * The GLFWwindow * (NULL headless), for programs that want more input.
 * cugl_app_context_input() is fed by the window's framebuffer-size, cursor,
 * cursor-enter, button, scroll and key callbacks: a program that sets its
 * own should call on to cugl's (glfwSet*Callback returns the previous one).
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param ctx the context, or NULL.
 * @return the GLFWwindow *; NULL for a headless context or NULL.
 */
CUGL_API void *cugl_app_context_window(cugl_app_context *ctx);

CUGL_END_DECLS

#endif /* CUGL_APP_CONTEXT_H */
