/*
 * app_internal.h - what the files of libcugl-app share and users never see.
 */
#ifndef CUGL_APP_INTERNAL_H
#define CUGL_APP_INTERNAL_H

#include <pthread.h>
#include <stdio.h>

#include <glad/egl.h>
#include <glad/gl.h>

#include "cugl/app.h"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

/* Errors: the idiom of every library of cugl (lib/internal/check.h). */
#include "check.h"
/* GL state saved and put back, fences waited for (lib/internal/gl_state.h). */
#include "gl_state.h"

/* file.c: a file written beside its path and renamed over it when whole
 * (a device or pipe is written in place): open, write to `file`, then
 * commit (which reports a failed write and leaves the old content) or
 * abandon. Messages name `who`. */
typedef struct cugl__app_file {
    FILE *file;
    char *target;    /* what is replaced: the path, or the file its link names */
    char *temporary; /* NULL when written in place */
    bool in_place;
} cugl__app_file;
/* A growable list of events. */
typedef struct cugl__app_events {
    cugl_app_event *items;
    size_t count, capacity;
} cugl__app_events;

/* One source's part of a context's pushed events (a remote viewer's):
 * how many of those waiting for the next present are its own, and which
 * is its last. Zeroed to start; the context keeps it current. */
typedef struct cugl__app_share {
    unsigned long generation; /* of the pushed events it counts */
    size_t count;
    size_t last;
} cugl__app_share;

struct cugl_app_context {
    bool headless;
    const char *platform; /* static string */
    char renderer[256], vendor[256];
    int width, height;
    int cuda_device; /* cugl_app_context_desc.cuda_device: negative for none */

    /* Headless: the EGL objects and the offscreen framebuffer. */
    EGLDisplay display;
    EGLContext egl_context;
    EGLSurface egl_surface; /* a 1x1 pbuffer only where surfaceless is missing */
    GLuint fbo, color, depth;
    /* The fences of the last presents, oldest first (context.c): a
     * present waits for the one CUGL_APP_FRAMES_AHEAD presents back. */
    GLsync presented[CUGL_APP_FRAMES_AHEAD];

    /* Windows: the GLFW window and the frame counter for the title. */
    GLFWwindow *window;
    char *title;
    double fps_since;
    long fps_frames;

    /* Input (input.c), from GLFW's callbacks, replay and pushed events
     * alike: as events leave it (pending) and as the last present
     * published it. `frame` counts presents (context.c): an event that
     * arrives now is first seen by frame `frame` + 1 (frame 0 before the
     * first present). */
    cugl_app_input input, pending; /* pending's dx, dy, scroll accumulate */
    bool keys[GLFW_KEY_LAST + 1], pending_keys[GLFW_KEY_LAST + 1];
    bool cursor_entered;           /* the next cursor position starts afresh */
    bool buttons_pressed[3];       /* pressed since the last present */
    bool close_requested;
    long frame;
    cugl__app_events replay;       /* events to apply when their frame comes */
    size_t replay_next;
    cugl__app_events pushed;       /* from any thread, applied at the next present */
    unsigned long pushed_generation; /* one more each time a present takes them */
    /* Every event applied since the last present (taking), and those the
     * last present published (taken: cugl_app_context_events). */
    cugl__app_events taking, taken;
    size_t taking_lost, taken_lost;
    pthread_mutex_t pushed_lock;
    cugl__app_file record;         /* every event applied goes here */
    char *record_path;
    bool record_failed;

    /* blit.c's GL objects, made on first use; no other file reads them. */
    struct cugl__app_draw *draw;
};

cugl_status cugl__app_file_open(cugl__app_file *f, const char *who, const char *path);
cugl_status cugl__app_file_commit(cugl__app_file *f, const char *who, const char *path);
void cugl__app_file_abandon(cugl__app_file *f);

/* png.c: cugl_app_write_png, its messages naming `who`. */
cugl_status cugl__app_write_png(const char *who, const char *path, const uint8_t *rgba,
                                int width, int height);

/* message.c: a notice to the program's message callback (none: dropped),
 * "cugl_app_...: <text>" as the caller formats it. */
void cugl__app_notice(const char *fmt, ...) CUGL__PRINTF(1, 2);

/* Helpers that report take `who`, the public function they work for. */

/* gl_error.c: CUGL_ERROR_INVALID_ARGUMENT where a texture of this size (a
 * 3-D one where depth is not 0) is past the current context's GL limits. */
cugl_status cugl__app_check_texture_size(int width, int height, int depth, const char *who);

/* window.c */
cugl_status cugl__app_window_create(cugl_app_context *ctx, const cugl_app_context_desc *desc,
                                    bool report, const char *who);
void cugl__app_window_destroy(cugl_app_context *ctx);
cugl_status cugl__app_window_present(cugl_app_context *ctx);

/* events.c: why an event is not valid, or NULL. */
const char *cugl__app_event_check(const cugl_app_event *ev);
/* cugl_app_context_push_event, for one source of many where `share` is
 * given (a remote viewer's): at most `quota` of the events waiting for the
 * next present are its own, and a move right after its own last move
 * replaces that one's position (the motion is the same).
 * CUGL_ERROR_INVALID_STATE past the quota, or past
 * CUGL_APP_EVENT_MAX_PENDING in all. */
cugl_status cugl__app_push_shared(cugl_app_context *ctx, const cugl_app_event *ev,
                                  cugl__app_share *share, size_t quota, const char *who);

/* input.c: set up and free a context's input; apply one event as it
 * arrives (GLFW's callbacks); at a present, apply what is due and publish. */
cugl_status cugl__app_input_init(cugl_app_context *ctx, const char *who);
void cugl__app_input_free(cugl_app_context *ctx, const char *who);
void cugl__app_input_apply(cugl_app_context *ctx, const cugl_app_event *ev);
cugl_status cugl__app_input_present(cugl_app_context *ctx); /* before `frame` counts it */

/* context.c: the CUDA device the context's GL runs on (its desc's
 * cuda_device), initialized; NULL where the desc named none. */
cugl_status cugl__app_context_cuda_device(cugl_device **out, const cugl_app_context *ctx,
                                          const char *who);

/* context.c: a headless context's colour, the RGBA8 texture of its size
 * that its framebuffer draws into; 0 for a window's. */
GLuint cugl__app_context_color(const cugl_app_context *ctx);

/* blit.c: `count` points of `components` floats from GL buffer `buffer`,
 * transformed by `matrix` (or none), `size` pixels, in `rgba`, into the
 * bound framebuffer; the state it touches is put back. */
cugl_status cugl__app_draw_points(cugl_app_context *ctx, GLuint buffer, size_t count,
                                  int components, const float *matrix, float size,
                                  const float *rgba, const char *who);

/* gl_setup.c: the headless framebuffer (RGBA8 colour, 24-bit depth) made at
 * the context's size, bound and in the viewport; freed; at a new size (the
 * context current). */
cugl_status cugl__app_offscreen_make(cugl_app_context *ctx, const char *who);
void cugl__app_offscreen_free(cugl_app_context *ctx);
cugl_status cugl__app_offscreen_resize(cugl_app_context *ctx, int width, int height,
                                       const char *who);

/* egl.c */
cugl_status cugl__app_egl_create(cugl_app_context *ctx, const cugl_app_context_desc *desc,
                                 const char *who);
void cugl__app_egl_destroy(cugl_app_context *ctx);
/* The display whose fences any thread may wait for (eglClientWaitSync):
 * the context's, headless on EGL 1.5; EGL_NO_DISPLAY in a window. */
EGLDisplay cugl__app_egl_fence_display(const cugl_app_context *ctx);
/* readback.c: what copies of frames for another thread share (the frame
 * server's, the recorder's). A pixel-pack buffer of `bytes` mapped for good
 * for reading (persistent, coherent), its memory in *pixels; on failure
 * nothing is left (*pbo 0, *pixels NULL). */
cugl_status cugl__app_mapped_pack_buffer(GLuint *pbo, void **pixels, GLsizeiptr bytes,
                                         const char *who);
/* Unmapped and deleted; both zeroed (none: no-op). */
void cugl__app_mapped_pack_buffer_free(GLuint *pbo, void **pixels);
/* A framebuffer of its own (an RGBA8 renderbuffer) that frames are blitted
 * into at another size. */
typedef struct cugl__app_sized_fb {
    GLuint fbo, rb;
    int width, height;
} cugl__app_sized_fb;
/* The framebuffer `from` (from_w x from_h) blitted, filtered, into *s at
 * w x h (made, or made again at another size). */
cugl_status cugl__app_sized_fb_blit(cugl__app_sized_fb *s, GLuint from, int from_w, int from_h,
                                    int w, int h, const char *who);
void cugl__app_sized_fb_free(cugl__app_sized_fb *s);
/* The end of a GL copy that another thread reads, after the copy's
 * commands: where `display` is a fence display, an EGL fence that thread
 * waits for (flushed: no wait here), else a GL fence for the render thread
 * to poll. */
void cugl__app_copy_fence(EGLDisplay display, EGLSync *egl, GLsync *gl);
/* Whichever of the two a copy has, deleted (a copy that failed, or one
 * never waited for); both left empty. */
void cugl__app_copy_fence_drop(EGLDisplay display, EGLSync *egl, GLsync *gl);
/* Waits for the EGL fence (on any thread) and deletes it: whether the copy
 * ended. */
bool cugl__app_copy_fence_wait(EGLDisplay display, EGLSync *egl);

/* gl_setup.c: after a context is current and GL loaded, check GL >= 4.5 and
 * keep the renderer and vendor strings; `debug` routes GL messages to the
 * message callback. */
cugl_status cugl__app_gl_init(cugl_app_context *ctx, int glad_version, bool debug,
                              const char *who);

/* shared.c: fill a shared texture from its memory now (in GL's turn; a
 * texture made with the fill off is filled only so). */
cugl_status cugl__app_shared_fill(cugl_app_shared *s, const char *who);
/* Two descriptors of one new binary semaphore made by Vulkan on the GPU of
 * `uuid` (vk_semaphore.c), for GL and CUDA to import: true, or false with
 * the reason in `why`. */
bool cugl__app_vk_semaphore_fds(const uint8_t uuid[16], int fds[2], char *why,
                                size_t why_size);

/* blit.c: free the blit objects (the context is current). */
void cugl__app_blit_free(cugl_app_context *ctx);
/* The drawers' GL objects of a context (draw/), each made by its drawer
 * on first use, kept with blit.c's and freed with them. */
enum { CUGL__APP_COLORMAPS = 2 };
typedef struct cugl__app_drawer_objects {
    GLuint mesh_program, vao, bar_program, volume_program, volume_sampler;
    GLuint host_lines; /* cugl__app_draw_host_lines' vertices */
    GLuint colormaps[CUGL__APP_COLORMAPS]; /* 256 x 1 RGBA8 each, by cugl_app_colormap */
    /* draw/text.c's font and atlases, and how they are freed. */
    struct cugl__app_text *text;
    void (*text_free)(struct cugl__app_text *text);
} cugl__app_drawer_objects;
/* draw/colormap.c: CUGL_OK where `rgba` is 4 floats from 0 to 1; else
 * CUGL_ERROR_INVALID_ARGUMENT, "rgba is NULL" or "rgba[i] is v: ...". */
cugl_status cugl__app_check_rgba(const float rgba[4], const char *who);
/* draw/mesh.c: colour map `map`'s 256 x 1 texture in the context's drawer
 * objects, made at its first use; and the drawers' empty vertex array. */
cugl_status cugl__app_colormap_texture(GLuint *out, cugl_app_context *ctx,
                                       cugl_app_colormap map, const char *who);
/* draw/mesh.c: `vertices` / 2 segments from host memory (3 floats a
 * vertex), transformed by `matrix` (or none), in `rgba`, depth-tested, as
 * cugl_app_draw_lines draws them (the axes' lines and ticks). */
cugl_status cugl__app_draw_host_lines(cugl_app_context *ctx, const float *xyz, size_t vertices,
                                      const float *matrix, const float rgba[4], const char *who);
/* blit.c: the context's drawer objects (zero where none is made yet). */
cugl_status cugl__app_drawer_objects_of(cugl__app_drawer_objects **out, cugl_app_context *ctx,
                                        const char *who);
/* interop/target.c: a target's context and kind, for the drawers. */
cugl_app_context *cugl__app_target_context(const cugl_app_target *t);
cugl_app_target_kind cugl__app_target_kind(const cugl_app_target *t);
/* blit.c: cugl_app_blit and cugl_app_blit_rgba8_buffer with row 0 where
 * `origin` says, refusals named for `who` (ctx is not NULL). */
cugl_status cugl__app_blit(cugl_app_context *ctx, uint32_t texture, bool linear,
                           cugl_app_origin origin, const char *who);
cugl_status cugl__app_blit_rgba8_buffer(cugl_app_context *ctx, uint32_t buffer, int width,
                                        int height, size_t pitch, cugl_app_origin origin,
                                        const char *who);

/* shader.c: compile one stage; the message names the program and stage. */
cugl_status cugl__app_compile(GLuint *out, const char *who, const char *name, GLenum stage,
                              const char *src);
/* Link the shaders into a program (each is deleted); the message has the log. */
cugl_status cugl__app_link(GLuint *out, const char *who, const char *name,
                           const GLuint *shaders, int count);

/* The embedded shaders (shaders/meson.build). */
extern const unsigned char cugl_shader_blit_vert[];
extern const unsigned char cugl_shader_blit_frag[];
extern const unsigned char cugl_shader_blit_buffer_frag[];
extern const unsigned char cugl_shader_pack_rgba8_comp[];
extern const unsigned char cugl_shader_unpack_rgba8_comp[];
extern const unsigned char cugl_shader_points_vert[];
extern const unsigned char cugl_shader_points_frag[];
extern const unsigned char cugl_shader_mesh_vert[];
extern const unsigned char cugl_shader_mesh_frag[];
extern const unsigned char cugl_shader_volume_vert[];
extern const unsigned char cugl_shader_volume_frag[];
extern const unsigned char cugl_shader_frame_hash_comp[]; /* the frame server's */

#endif /* CUGL_APP_INTERNAL_H */
