/**
 * @file cugl/app.h
 * libcugl-app: everything GL that a cugl program needs.
 *
 * A GL 4.5 core context (a GLFW window, or headless EGL on the GPU that
 * runs CUDA), the GLAD loader, shader programs, a full-screen blit, an
 * orbit camera, FBO readback and PNG files, per-phase frame timing, and the
 * GL half of map-free interop (cugl/app_shared.h). libcugl itself never
 * calls GL; this library does, through GLAD, so include it after nothing
 * else that declares GL.
 *
 * Errors are cugl's: functions return cugl_status and leave a message in
 * cugl_last_error() (shader compile and link logs included).
 * Threads: a context is used by the thread that made it current.
 */
#ifndef CUGL_APP_H
#define CUGL_APP_H

#include <stdio.h>

#include <glad/gl.h>

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

/** What cugl_app_context_create makes; a zero field takes its default. */
typedef struct cugl_app_context_desc {
    cugl_app_mode mode; /**< window, headless, or CUGL_APP_AUTO (0): whichever works */
    int width,          /**< framebuffer width in pixels; 0: 1024 */
        height;         /**< framebuffer height in pixels; 0: 768 */
    const char *title;  /**< window title; NULL: "cugl" */
    bool no_vsync;      /**< vsync is on unless this is set (windows only) */
    /** The CUDA device (ordinal) that must run GL: headless contexts use the
     * EGL device whose EGL_CUDA_DEVICE_NV is this ordinal. -1 (any negative
     * value): any GL, an EGL device (those that run CUDA first), Mesa's
     * surfaceless platform or the default display (GL-only use, no interop). */
    int cuda_device;
    bool debug; /**< a debug context; GL errors go to stderr */
} cugl_app_context_desc;

/**
 * Create a context, make it current on this thread and load GL with GLAD.
 * Headless contexts render into an FBO of the given size (RGBA8 colour,
 * depth 24) that cugl_app_context_framebuffer() names; windows render into
 * the default framebuffer.
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

/**
 * Make the context current on this thread.
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param ctx the context.
 * @return CUGL_OK; CUGL_ERROR_INVALID_ARGUMENT for NULL; CUGL_ERROR_GL where GLFW or EGL
 *   cannot make it current (their reason is in the message).
 */
CUGL_API cugl_status cugl_app_context_make_current(cugl_app_context *ctx);
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
CUGL_API GLuint cugl_app_context_framebuffer(const cugl_app_context *ctx);
/**
 * The user asked to close (the close button, Escape, a close event).
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param ctx the context, or NULL.
 * @return true once a close was asked for; false before, and for NULL.
 */
CUGL_API bool cugl_app_context_should_close(const cugl_app_context *ctx);
/**
 * End a frame: swap buffers and poll the window's input (the title shows
 * the frames per second, updated twice a second), or glFlush (headless);
 * then apply the pushed events and the replayed ones now due, and publish
 * them all as the next frame's input.
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param ctx the context.
 * @return CUGL_OK; CUGL_ERROR_INVALID_ARGUMENT for NULL.
 */
CUGL_API cugl_status cugl_app_context_present(cugl_app_context *ctx);
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

/* ---- Input: a window's, replayed, or pushed (see "Input events" below) ----- */

/** A context's input in one frame (cugl_app_context_input). */
typedef struct cugl_app_input {
    double x,             /**< cursor, pixels from the left */
        y;                /**< cursor, pixels from the top */
    double dx,            /**< cursor motion since the previous present, pixels rightwards */
        dy;               /**< cursor motion since the previous present, pixels downwards */
    double scroll;        /**< wheel steps since the previous present */
    bool left,            /**< left button held */
        right,            /**< right button held */
        middle;           /**< middle button held */
    bool shift,           /**< a Shift key held */
        ctrl;             /**< a Control key held */
} cugl_app_input;

/**
 * This frame's input (updated by present).
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param ctx the context, or NULL.
 * @return the input, held by the context (valid while it lives; each present and replay
 *   rewrites it); for NULL, a static input of zeros.
 */
CUGL_API const cugl_app_input *cugl_app_context_input(const cugl_app_context *ctx);
/**
 * Whether a key (a GLFW_KEY_* code) is held.
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param ctx the context, or NULL.
 * @param glfw_key the key's GLFW_KEY_* code.
 * @return true when this frame's input holds it down; false for NULL or a code outside
 *   GLFW_KEY_SPACE .. GLFW_KEY_LAST.
 */
CUGL_API bool cugl_app_key_down(const cugl_app_context *ctx, int glfw_key);

/* ---- Input events ------------------------------------------------------------ */

/*
 * What a window's callbacks report, as values: the unit of input replay
 * (--input), of recordings (--save-input) and of remote viewers. An event
 * enters a context's input the way GLFW's do (cugl_app_context_push_event,
 * cugl_app_context_replay), and a context can write down every event it
 * takes (cugl_app_context_record). As text, one event a line:
 *
 *   <frame> move <x> <y>            the cursor, pixels from the top left
 *   <frame> button <left|right|middle> <down|up>
 *   <frame> scroll <steps>          the wheel; positive turns away from the user
 *   <frame> key <key> <down|up>     a letter, digit or one of ,-./;=[\]`' as
 *                                   typed, a name (escape, space, left, up,
 *                                   kp_add, f1, left_shift, ...) or a GLFW code
 *   <frame> resize <width> <height> the framebuffer's new size
 *   <frame> close                   the user asks to quit
 *
 * <frame> is the frame whose update first sees the event, counted from 0
 * by the context's presents. Blank lines and '#' lines are comments.
 */
/** What an event reports: one value for each event word of the text format above. */
typedef enum cugl_app_event_type {
    CUGL_APP_EVENT_MOVE = 0,   /**< the cursor moved to x, y */
    CUGL_APP_EVENT_BUTTON = 1, /**< a mouse button (code) went down or up */
    CUGL_APP_EVENT_SCROLL = 2, /**< the wheel turned y steps */
    CUGL_APP_EVENT_KEY = 3,    /**< a key (code) went down or up */
    CUGL_APP_EVENT_RESIZE = 4, /**< the framebuffer became width x height */
    CUGL_APP_EVENT_CLOSE = 5,  /**< the user asks to quit */
} cugl_app_event_type;

/** Limits of the text format and of a context's queue of pushed events. */
enum {
    CUGL_APP_EVENT_MAX_LINE = 256,      /**< bytes of a line, its end excluded */
    CUGL_APP_EVENT_MAX_COUNT = 1000000, /**< events of a file */
    CUGL_APP_EVENT_MAX_LINES = 4000000, /**< lines of a file, comments and blank ones too */
    CUGL_APP_EVENT_MAX_FRAME = 1000000000, /**< the largest frame an event names */
    CUGL_APP_EVENT_MAX_PENDING = 4096, /**< pushed events awaiting a present */
};

/** One input event, as a value: a line of the text format above. */
typedef struct cugl_app_event {
    long frame;               /**< the frame whose update first sees it */
    cugl_app_event_type type; /**< what happened; it says which fields below count */
    double x,                 /**< move: the cursor, pixels from the left */
        y;                    /**< move: the cursor, pixels from the top; scroll: the steps */
    int code;                 /**< button: 0 left, 1 right, 2 middle; key: GLFW_KEY_* */
    bool down;                /**< button, key: pressed, else released */
    int width,                /**< resize: the framebuffer's new width in pixels */
        height;               /**< resize: the framebuffer's new height in pixels */
} cugl_app_event;

/**
 * One line of text as an event.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; a line longer than
 *   CUGL_APP_EVENT_MAX_LINE; not an event: the message quotes the line and
 *   says what is wrong).
 * @thread_safety Any thread.
 * @param[out] out the event.
 * @param line the line, NUL-terminated; a newline at its end is allowed but counts towards
 *   CUGL_APP_EVENT_MAX_LINE. A blank or '#' line is no event here.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_event_parse(cugl_app_event *out, const char *line);

/**
 * An event as one line of text (no newline) into out[size], as snprintf
 * does: returns the length it needs, or -1 for an event that is not valid.
 * cugl_app_event_parse reads the line back to the same event.
 * @thread_safety Any thread.
 * @param[out] out where the line goes, NUL-terminated when size is not 0; NULL only with
 *   size 0.
 * @param size the bytes of out.
 * @param ev the event.
 * @return the line's length in bytes, its NUL excluded, however small size is; -1 for a
 *   NULL or invalid event (out untouched).
 */
CUGL_API int cugl_app_event_format(char *out, size_t size, const cugl_app_event *ev);

/**
 * Every event of a file (comments skipped), in order; frames never
 * decrease. Free *out with cugl_app_events_free.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; the file cannot be read; a
 *   line is not an event, goes back in time, is too long or holds a NUL
 *   byte: "<path>:<line>: ..."; more than CUGL_APP_EVENT_MAX_COUNT events
 *   or CUGL_APP_EVENT_MAX_LINES lines: an endless file such as /dev/zero
 *   ends there), CUGL_ERROR_OUT_OF_MEMORY.
 * @thread_safety Any thread.
 * @param[out] out the events, a new array; NULL for a file without events, and on failure.
 * @param[out] count the number of events; 0 on failure.
 * @param path the file to read.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_events_read(cugl_app_event **out, size_t *count,
                                          const char *path);

/**
 * Free what cugl_app_events_read returned; NULL: no-op. @thread_safety Any thread.
 * @param events the array, or NULL.
 */
CUGL_API void cugl_app_events_free(cugl_app_event *events);

/**
 * Queue an event for `ctx`: the next present applies it as if the window
 * had reported it (a resize of a window asks the window for that size).
 * For input from elsewhere, such as a remote viewer.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; an event that is not valid:
 *   a type, button or key out of range, a coordinate, scroll or size out of
 *   the text format's ranges), CUGL_ERROR_INVALID_STATE (already
 *   CUGL_APP_EVENT_MAX_PENDING events wait), CUGL_ERROR_OUT_OF_MEMORY.
 * @thread_safety Any thread, while another uses the context.
 * @param ctx the context.
 * @param ev the event, copied. Its frame is not used (the next present's frame is), but must
 *   be within the text format's range.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_context_push_event(cugl_app_context *ctx,
                                                 const cugl_app_event *ev);

/**
 * Replay `events` (copied; frames never decreasing): each present applies
 * those whose frame has come, so that frame N's input holds the events of
 * frames up to N, whatever the clock says. Events due already (frame 0 on
 * a new context) are applied now. Replaces an earlier replay; the window's
 * own input still arrives too.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL with a count; an event not
 *   valid or out of order: "event <i>: ..."), CUGL_ERROR_OUT_OF_MEMORY.
 * @thread_safety The thread that uses the context.
 * @param ctx the context.
 * @param events `count` events, copied; NULL when count is 0.
 * @param count the number of events; 0 ends an earlier replay.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_context_replay(cugl_app_context *ctx,
                                             const cugl_app_event *events, size_t count);

/** Whether every replayed event has been applied (true without a replay).
 * @thread_safety The thread that uses the context.
 * @param ctx the context, or NULL.
 * @return true when every replayed event has been applied, without a replay, and for NULL;
 *   false while some are still to come. */
CUGL_API bool cugl_app_context_replay_done(const cugl_app_context *ctx);

/**
 * Write every event the context applies from now on to the file `path`,
 * one line each with the frame that first saw it: a file
 * cugl_app_events_read and a replay take back. The lines go to a temporary
 * file beside `path`, which replaces the file at `path` when the recording
 * stops (as cugl_app_write_file does): a recording whose writing failed
 * leaves what was at `path` untouched and no temporary file. NULL stops;
 * destroying the context stops too (and cannot report a failure: stop
 * first where that matters).
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL ctx; the file cannot be made;
 *   stopping, when the file cannot be put in place), CUGL_ERROR_INVALID_STATE
 *   (stopping, when writing a line had failed), CUGL_ERROR_OUT_OF_MEMORY.
 * @thread_safety The thread that uses the context.
 * @param ctx the context.
 * @param path the file to write, or NULL to stop recording.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_context_record(cugl_app_context *ctx, const char *path);

/** Presents so far: the frame whose input the context holds now.
 * @thread_safety The thread that uses the context.
 * @param ctx the context, or NULL.
 * @return the number of presents so far; 0 for NULL. */
CUGL_API long cugl_app_context_frame(const cugl_app_context *ctx);

/* ---- Shaders and the blit --------------------------------------------------- */

/**
 * Compile and link a program from GLSL sources (fragment may be NULL for
 * none). `name` names it in messages. Compile and link logs go into the
 * error message.
 * @errors CUGL_ERROR_INVALID_ARGUMENT, CUGL_ERROR_INVALID_STATE (GL not
 *   loaded: no context was made yet), CUGL_ERROR_GL.
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param[out] out the program's GL name; 0 on failure.
 * @param name the program's name in messages; NULL: "(unnamed)".
 * @param vertex_src the vertex shader's GLSL source, NUL-terminated.
 * @param fragment_src the fragment shader's GLSL source, or NULL.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_program(GLuint *out, const char *name, const char *vertex_src,
                                      const char *fragment_src);
/**
 * A compute program.
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param[out] out the program's GL name; 0 on failure.
 * @param name the program's name in messages; NULL: "(unnamed)".
 * @param compute_src the compute shader's GLSL source, NUL-terminated.
 * @return CUGL_OK, or an error status, as cugl_app_program.
 */
CUGL_API cugl_status cugl_app_compute_program(GLuint *out, const char *name,
                                              const char *compute_src);

/**
 * Draw `texture` (a GL_TEXTURE_2D with a float or normalised format) over
 * the whole of the currently bound framebuffer's viewport, nearest
 * filtering unless `linear`. The first call builds the program from the
 * embedded shaders/blit.{vert,frag}. Texel row 0 lands at the bottom, as
 * GL has it, so cugl_app_read_pixels() (top to bottom) returns the
 * texture's rows in reverse order. The caller's depth test and blending
 * apply; the blit's program, vertex array and texture unit 0 stay bound.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL, not a texture, not 2D),
 *   CUGL_ERROR_GL (the blit shaders do not build: the log is in the message).
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param ctx the context, current; the blit's objects are made in it.
 * @param texture the GL name of the texture to draw.
 * @param linear true for linear filtering, false for nearest.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_blit(cugl_app_context *ctx, GLuint texture, bool linear);

/**
 * Draw RGBA8 texels held in a GL buffer over the whole of the bound
 * framebuffer's viewport, nearest: texel (x, y) is the 4 bytes at
 * y * pitch + x * 4, row 0 at the bottom, as cugl_app_blit draws an RGBA8
 * texture (the same bytes give the same pixels). The fragment shader reads
 * the buffer as a shader storage buffer, so an image CUDA wrote into shared
 * memory (cugl_app_shared_gl_buffer) is shown with no copy into a texture.
 * The buffer stays bound to GL_SHADER_STORAGE_BUFFER binding 0, and the
 * program and vertex array stay bound.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; not a buffer; a size not
 *   positive; a pitch not a multiple of 4 or under 4 x width; a buffer too
 *   small for the image: both sizes in the message), CUGL_ERROR_GL (the
 *   shaders do not build).
 * @thread_safety The thread that uses the context, with it current.
 * @param ctx the context, current; the program is made in it.
 * @param buffer the GL name of the buffer.
 * @param width the image's width in texels.
 * @param height the image's height in texels.
 * @param pitch bytes from one row to the next.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_blit_rgba8_buffer(cugl_app_context *ctx, GLuint buffer,
                                                int width, int height, size_t pitch);

/**
 * Copy the bottom-left width x height texels of an RGBA8 texture's level 0
 * into a GL buffer, texel (x, y) at byte y * pitch + x * 4, as
 * glGetTextureImage packs them but with a compute shader, which runs at
 * memory speed where a pack into imported (shared) memory does not. GL's
 * later commands see the bytes; CUDA sees them after a fence
 * (cugl_app_shared_gl_end). Leaves texture unit 0, storage buffer binding 0
 * and no program bound.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; not a texture or a buffer; a
 *   texture not GL_RGBA8 or smaller than the image; sizes and pitch as
 *   cugl_app_blit_rgba8_buffer takes them; a buffer too small),
 *   CUGL_ERROR_GL.
 * @thread_safety The thread that uses the context, with it current.
 * @param ctx the context, current; the program is made in it.
 * @param texture the GL name of the RGBA8 texture.
 * @param buffer the GL name of the buffer.
 * @param width texels of a row to copy.
 * @param height rows to copy.
 * @param pitch bytes from one row to the next in the buffer.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_pack_rgba8(cugl_app_context *ctx, GLuint texture, GLuint buffer,
                                         int width, int height, size_t pitch);

/* ---- GL errors -------------------------------------------------------------- */

/**
 * Read and discard every pending GL error, so that the next
 * cugl_app_check_gl() sees only what follows. Before GL is loaded (no
 * context made yet), nothing.
 * @errors none.
 * @thread_safety The thread whose GL context is current.
 */
CUGL_API void cugl_app_drain_gl_errors(void);

/**
 * CUGL_OK when glGetError() has nothing; else CUGL_ERROR_GL, reported as
 * "<function>: <what>: GL error 0x0502" (cugl_report_error), with the
 * remaining errors drained.
 * @errors CUGL_ERROR_GL; CUGL_ERROR_INVALID_STATE before GL is loaded (no
 *   context made yet: that message starts "cugl_app_check_gl: ").
 * @thread_safety The thread whose GL context is current.
 * @param function the name the message starts with (the caller's, as a
 *   rule); NULL: "cugl_app_check_gl".
 * @param what what was just done, for the message; NULL: "(no description)".
 * @return CUGL_OK, CUGL_ERROR_GL or CUGL_ERROR_INVALID_STATE.
 */
CUGL_API cugl_status cugl_app_check_gl(const char *function, const char *what);

/* ---- Which interop path ------------------------------------------------------ */

/** How CUDA's output reaches GL (cugl_app_choose_interop tries shared, then map, then host). */
typedef enum cugl_app_interop {
    CUGL_APP_INTEROP_MAP = 0,    /**< GL objects registered with CUDA, mapped each frame */
    CUGL_APP_INTEROP_SHARED = 1, /**< CUDA memory GL imports (cugl/app_shared.h) */
    CUGL_APP_INTEROP_HOST = 2,   /**< copies through host memory: works everywhere */
} cugl_app_interop;

/**
 * "map", "shared", "host", or "invalid". @thread_safety Any thread.
 * @param interop the path.
 * @return a static string; "invalid" for a value that is no cugl_app_interop.
 */
CUGL_API const char *cugl_app_interop_name(cugl_app_interop interop);

/**
 * The fastest path that works between `device` and the current context
 * `ctx`, found by trying each on a small object: shared memory where GL
 * runs on the device and imports its memory, else map where CUDA registers
 * GL's objects, else host copies (GL on Mesa, on another GPU, under WSL).
 * `reason` (reason_size bytes; NULL with 0 for none) gets one sentence
 * for the user: what was chosen and why, naming what refused. Nothing of
 * the probes is left behind.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL), the statuses of
 *   cugl_device_get_properties. A path that does not work is no error.
 * @thread_safety The thread whose current GL context is `ctx`.
 * @param[out] out the path chosen.
 * @param[out] reason where the sentence goes (NUL-terminated, cut to fit), or NULL.
 * @param reason_size the bytes of reason; 0 when reason is NULL.
 * @param ctx the context, current on this thread.
 * @param device the CUDA device whose output GL draws.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_choose_interop(cugl_app_interop *out, char *reason,
                                             size_t reason_size, cugl_app_context *ctx,
                                             cugl_device *device);

/* ---- Readback and PNG ------------------------------------------------------- */

/**
 * Read the context's framebuffer (the default one or the FBO) as RGBA8,
 * rows top to bottom, into `rgba` of at least width * height * 4 bytes.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL, too small: both sizes named),
 *   CUGL_ERROR_GL.
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param[out] rgba the pixels, 4 bytes each, rows without padding.
 * @param size the bytes of rgba.
 * @param ctx the context, current on this thread.
 * @return CUGL_OK (also for a 0 x 0 framebuffer, writing nothing), or an error status (see
 *   Errors).
 */
CUGL_API cugl_status cugl_app_read_pixels(uint8_t *rgba, size_t size, cugl_app_context *ctx);

/**
 * Write `size` bytes as the whole of the file at `path`, replacing it only
 * once every byte is written: the bytes go to a temporary file beside it
 * (".<name>.<pid>-<n>.tmp", needing write permission in its folder) that is
 * renamed over the path. A failed write (a full disk, a file-size limit)
 * leaves what was at the path untouched and no temporary file. A symbolic
 * link's target is what is replaced; a device or pipe at the path (such as
 * /dev/null) is written in place and never replaced or removed; a
 * directory is refused. Every file libcugl-app writes is written this way
 * (PNGs, recorded input events).
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL path, NULL data with a size, a
 *   directory at the path, the file cannot be opened or written: the path
 *   and the system's reason are in the message), CUGL_ERROR_OUT_OF_MEMORY.
 * @thread_safety Any thread; two writes of one path at once leave one of
 *   them whole.
 * @param path the file to write.
 * @param data the bytes; NULL only when size is 0.
 * @param size how many.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_write_file(const char *path, const void *data, size_t size);

/**
 * Write RGBA8 pixels (rows top to bottom) as an 8-bit RGBA PNG, replacing
 * the file at `path` only once the image is whole, as cugl_app_write_file
 * does: a failed write leaves what was there untouched.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL, size not positive, the file
 *   cannot be opened or written: the path and the system's or libpng's
 *   reason are in the message), CUGL_ERROR_OUT_OF_MEMORY.
 * @thread_safety Any thread.
 * @param path the file to write.
 * @param rgba width * height * 4 bytes, rows without padding.
 * @param width the image's width in pixels.
 * @param height the image's height in pixels.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_write_png(const char *path, const uint8_t *rgba, int width,
                                        int height);
/**
 * Read a PNG (any colour type and depth libpng reads) as RGBA8 rows top to
 * bottom into a new malloc'ed buffer (free it with free()). Palette and
 * gray images are expanded, 16-bit channels scaled to 8, and images
 * without alpha made opaque (tRNS becomes alpha).
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL, the file cannot be opened, is
 *   not a PNG, or libpng refuses it: the path and the reason are in the
 *   message), CUGL_ERROR_OUT_OF_MEMORY. On failure *rgba is NULL and the
 *   sizes 0.
 * @thread_safety Any thread.
 * @param[out] rgba the pixels, a new buffer of width * height * 4 bytes.
 * @param[out] width the image's width in pixels.
 * @param[out] height the image's height in pixels.
 * @param path the file to read.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_read_png(uint8_t **rgba, int *width, int *height,
                                       const char *path);
/**
 * read_pixels then write_png.
 * @errors theirs; CUGL_ERROR_INVALID_STATE for a 0 x 0 (minimised) window.
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param ctx the context, current on this thread.
 * @param path the PNG file to write (replaced).
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_screenshot(cugl_app_context *ctx, const char *path);

/* ---- Orbit camera (cglm inside; plain floats outside) ---------------------- */

/**
 * An orbit camera: the eye sits `distance` from `target`, turned `yaw` about +y (from +z
 * towards +x) and raised `pitch` above the horizontal, and looks at the target with +y up.
 */
typedef struct cugl_app_camera {
    float target[3];  /**< the point looked at, world coordinates */
    float distance;   /**< from the target */
    float yaw,        /**< radians; cugl_app_camera_update keeps it within -pi .. pi */
        pitch;        /**< radians; pitch kept within +-89 degrees */
    float fov_y;      /**< vertical field of view, radians */
    float z_near,     /**< the near clipping plane's distance from the eye */
        z_far;        /**< the far clipping plane's distance from the eye */
} cugl_app_camera;

/**
 * Looking at the origin from distance 3, yaw 0.6, pitch 0.5, 45 degrees.
 * @thread_safety Any thread.
 * @param[out] cam the camera; NULL: no-op.
 */
CUGL_API void cugl_app_camera_init(cugl_app_camera *cam);
/**
 * Left drag orbits, right drag pans the target, wheel zooms, arrow keys
 * and W/A/S/D orbit, R resets, from the context's input of this frame
 * (a window's, replayed or pushed: headless contexts too). The camera stays
 * a view whatever the input: yaw within -pi .. pi, pitch within +-89
 * degrees, distance within 1e-4 .. 1e30, a pan that would leave float's
 * range is not taken.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; dt_seconds not finite; a
 *   camera whose numbers make no view: not finite, distance not positive,
 *   fov_y outside 0 .. pi, not 0 < z_near < z_far): the camera is unchanged.
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param[in,out] cam the camera.
 * @param ctx the context whose input of this frame moves it.
 * @param dt_seconds seconds since the previous update: keys orbit 1.5 radians a second (not
 *   positive: keys do not orbit).
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_camera_update(cugl_app_camera *cam, const cugl_app_context *ctx,
                                            float dt_seconds);
/**
 * Column-major 4x4 view and projection matrices, ready for glUniformMatrix4fv.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL cam; aspect not finite; a
 *   camera whose numbers make no view, as for cugl_app_camera_update):
 *   nothing is written.
 * @thread_safety Any thread.
 * @param[out] view the view matrix, or NULL.
 * @param[out] proj the projection matrix, or NULL.
 * @param cam the camera.
 * @param aspect the viewport's width over its height; not positive: 1.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_camera_matrices(float view[16], float proj[16],
                                              const cugl_app_camera *cam, float aspect);
/**
 * Where the eye is (pitch limited to +-89 degrees).
 * @thread_safety Any thread.
 * @param[out] eye the eye's position, world coordinates; NULL: nothing is written.
 * @param cam the camera; NULL: nothing is written.
 */
CUGL_API void cugl_app_camera_eye(float eye[3], const cugl_app_camera *cam);

/* ---- Frame timing ----------------------------------------------------------- */

/** A per-phase frame timer (cugl_app_timer_create). Opaque. */
typedef struct cugl_app_timer cugl_app_timer;

/** The size of a timer's table of phases. */
enum { CUGL_APP_TIMER_MAX_PHASES = 8 /**< phases a timer measures */ };

/**
 * A per-phase frame timer. Each phase measures CPU time (the wall time
 * between begin and end) and GPU time: GL timer queries for GL phases,
 * cugl events on `stream` for CUDA phases. Results are read a few frames
 * late so that timing never stalls the pipeline: a ring of 4 frames, each
 * frame's results collected when its slot comes round again (a result not
 * ready by then is dropped). `stream` may be NULL when no phase is a CUDA
 * phase; the timer holds a reference to it. GL queries are made in the
 * context current at the phase's first use; destroy the timer with that
 * context current.
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param[out] out the timer; NULL on failure.
 * @param stream the stream CUDA phases are timed on, or NULL.
 * @return CUGL_OK; CUGL_ERROR_INVALID_ARGUMENT for NULL out; CUGL_ERROR_OUT_OF_MEMORY.
 */
CUGL_API cugl_status cugl_app_timer_create(cugl_app_timer **out, cugl_stream *stream);
/**
 * Destroy the timer: its GL queries and events, and its reference to the stream.
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param timer the timer, or NULL (no-op).
 */
CUGL_API void cugl_app_timer_destroy(cugl_app_timer *timer);
/**
 * Start a frame (ending one still open).
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param timer the timer; NULL: no-op.
 */
CUGL_API void cugl_app_timer_frame_begin(cugl_app_timer *timer);
/**
 * Phases are numbered 0 .. CUGL_APP_TIMER_MAX_PHASES - 1; the name is
 * copied (NULL keeps the previous one). Each phase is measured at most once
 * a frame. GL phases cannot nest (GL has one GL_TIME_ELAPSED query at a
 * time); CUDA phases may enclose or overlap anything.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL, phase out of range, a CUDA
 *   phase without a stream), CUGL_ERROR_INVALID_STATE (outside a frame,
 *   already measured this frame, a GL phase inside another, GL not
 *   loaded), the statuses of cugl_event_create and cugl_event_record.
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param timer the timer.
 * @param phase the phase.
 * @param name the phase's name, or NULL (at the phase's first use, "phase 2" for phase 2).
 * @param cuda true for a CUDA phase (events on the timer's stream), false for a GL phase
 *   (a GL_TIME_ELAPSED query).
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_timer_begin(cugl_app_timer *timer, int phase, const char *name,
                                          bool cuda);
/**
 * End a phase that began this frame.
 * @errors CUGL_ERROR_INVALID_ARGUMENT, CUGL_ERROR_INVALID_STATE (not begun).
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param timer the timer.
 * @param phase the phase.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_timer_end(cugl_app_timer *timer, int phase);
/**
 * End the frame (and any phase left open).
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param timer the timer; NULL, or no frame begun: no-op.
 */
CUGL_API void cugl_app_timer_frame_end(cugl_app_timer *timer);

/** What a timer measured of one phase (cugl_app_timer_stats). */
typedef struct cugl_app_phase_stats {
    const char *name;     /**< NULL: phase never used */
    bool cuda;            /**< a CUDA phase, else a GL one */
    long samples;         /**< frames with a GPU result */
    double cpu_ms,        /**< mean CPU time in milliseconds, over the frames measured */
        gpu_ms;           /**< mean GPU time in milliseconds, over the samples */
} cugl_app_phase_stats;

/**
 * Means so far; frames counted and their mean wall time from frame_begin to
 * frame_end. Names point into the timer (valid while it lives).
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param[out] phases each phase's stats (all 0 for a phase never used), or NULL.
 * @param[out] frames the frames ended so far, or NULL.
 * @param[out] frame_ms their mean wall time in milliseconds, or NULL.
 * @param timer the timer; NULL gives zeros.
 */
CUGL_API void cugl_app_timer_stats(cugl_app_phase_stats phases[CUGL_APP_TIMER_MAX_PHASES],
                                   long *frames, double *frame_ms,
                                   const cugl_app_timer *timer);
/**
 * The newest frame whose results are in (the ring's frames come in a few
 * frames late): each phase's GPU and CPU time in it (0 for a phase not
 * measured that frame, or whose GPU result was dropped) and its wall time
 * from frame_begin to frame_end. Any output may be NULL. Returns that
 * frame's number, counted from 0, or -1 (all 0) while none is in or for a
 * NULL timer. Each frame_begin brings in the next: for a plot of recent
 * frames, such as cugl_app_ui_plot.
 * @errors none.
 * @thread_safety The thread that uses the timer.
 * @param[out] gpu_ms each phase's GPU time in milliseconds, or NULL.
 * @param[out] cpu_ms each phase's CPU time in milliseconds, or NULL.
 * @param[out] frame_ms the frame's wall time in milliseconds, or NULL.
 * @param timer the timer, or NULL.
 * @return the frame's number, or -1.
 */
CUGL_API long cugl_app_timer_last(double gpu_ms[CUGL_APP_TIMER_MAX_PHASES],
                                  double cpu_ms[CUGL_APP_TIMER_MAX_PHASES], double *frame_ms,
                                  const cugl_app_timer *timer);
/** Frames a timer keeps for cugl_app_timer_summary: the newest this many. */
enum { CUGL_APP_TIMER_HISTORY = 65536 /**< collected frames kept */ };

/** A time over frames: its median and its 10th and 90th percentiles
 * (nearest rank). */
typedef struct cugl_app_spread {
    double median_ms; /**< the median, in milliseconds */
    double p10_ms;    /**< the 10th percentile */
    double p90_ms;    /**< the 90th percentile */
} cugl_app_spread;

/** One phase over the frames kept (cugl_app_timer_summary). */
typedef struct cugl_app_phase_summary {
    const char *name;    /**< NULL: phase never used */
    bool cuda;           /**< a CUDA phase, else a GL one */
    long frames;         /**< kept frames the phase ran in */
    long samples;        /**< of those, frames with a GPU result */
    cugl_app_spread cpu; /**< CPU time (begin to end), over `frames` */
    cugl_app_spread gpu; /**< GPU time, over `samples` */
} cugl_app_phase_summary;

/** The frames kept (cugl_app_timer_summary). */
typedef struct cugl_app_frame_summary {
    long frames;             /**< frames kept */
    cugl_app_spread wall;    /**< wall time from frame_begin to frame_end */
    /** The part of the wall time in no phase: the CPU outside every phase
     * (phases that nest or overlap count once). */
    cugl_app_spread outside;
} cugl_app_frame_summary;

/**
 * Medians and spreads over the frames collected so far (the newest
 * CUGL_APP_TIMER_HISTORY; results come in a few frames late, see
 * cugl_app_timer_create). Names point into the timer.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL timer; the outputs are zeroed),
 *   CUGL_ERROR_OUT_OF_MEMORY.
 * @thread_safety The thread that uses the timer.
 * @param[out] phases each phase's summary (all 0 for a phase never used), or NULL.
 * @param[out] frame the frames' summary, or NULL.
 * @param timer the timer.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_timer_summary(
    cugl_app_phase_summary phases[CUGL_APP_TIMER_MAX_PHASES], cugl_app_frame_summary *frame,
    const cugl_app_timer *timer);

/**
 * A table of the summary (cugl_app_timer_summary): each phase's CPU and GPU
 * time (median and 10th to 90th percentile), the CPU time in no phase and
 * the frame's wall time, then frames, mean ms a frame and fps.
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param timer the timer; NULL prints nothing.
 * @param out where the table goes; NULL prints nothing.
 */
CUGL_API void cugl_app_timer_print(const cugl_app_timer *timer, FILE *out);

CUGL_END_DECLS

#endif /* CUGL_APP_H */
