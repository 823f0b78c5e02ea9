/*
 * app_internal.h - what the files of libcugl-app share and users never see.
 */
#ifndef CUGL_APP_INTERNAL_H
#define CUGL_APP_INTERNAL_H

#include <glad/egl.h>

#include "cugl/app.h"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#define CUGL__APP_FAIL(status, ...) cugl_report_error((status), __func__, __VA_ARGS__)

struct cugl_app_context {
    bool headless;
    const char *platform; /* static string */
    char renderer[256], vendor[256];
    int width, height;

    /* Headless: the EGL objects and the offscreen framebuffer. */
    EGLDisplay display;
    EGLContext egl_context;
    EGLSurface egl_surface; /* a 1x1 pbuffer only where surfaceless is missing */
    GLuint fbo, color, depth;

    /* Windows: the GLFW window, input as the callbacks see it and as the
     * last present published it, and the frame counter for the title. */
    GLFWwindow *window;
    char *title;
    cugl_app_input input;   /* published by present */
    cugl_app_input pending; /* dx, dy, scroll accumulate here */
    bool cursor_entered;    /* the next cursor position starts afresh */
    double fps_since;
    long fps_frames;

    /* cugl_app_blit's program, vertex array and samplers (nearest, linear),
     * made on first use and freed with the context. */
    GLuint blit_program, blit_vao, blit_samplers[2];
};

/* window.c */
cugl_status cugl__app_window_create(cugl_app_context *ctx, const cugl_app_context_desc *desc,
                                    bool report);
void cugl__app_window_destroy(cugl_app_context *ctx);
cugl_status cugl__app_window_present(cugl_app_context *ctx);

/* egl.c */
cugl_status cugl__app_egl_create(cugl_app_context *ctx, const cugl_app_context_desc *desc);
void cugl__app_egl_destroy(cugl_app_context *ctx);

/* context.c: after a context is current and GL loaded, check GL >= 4.5 and
 * keep the renderer and vendor strings; `debug` routes GL messages to stderr. */
cugl_status cugl__app_gl_init(cugl_app_context *ctx, int glad_version, bool debug);

/* blit.c: free the blit objects (the context is current). */
void cugl__app_blit_free(cugl_app_context *ctx);

/* shader.c: compile one stage; the message names the program and stage. */
cugl_status cugl__app_compile(GLuint *out, const char *who, const char *name, GLenum stage,
                              const char *src);
/* Link the shaders into a program (each is deleted); the message has the log. */
cugl_status cugl__app_link(GLuint *out, const char *who, const char *name,
                           const GLuint *shaders, int count);

/* The embedded shaders (shaders/meson.build). */
extern const unsigned char cugl_shader_blit_vert[];
extern const unsigned char cugl_shader_blit_frag[];

#endif /* CUGL_APP_INTERNAL_H */
