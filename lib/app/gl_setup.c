/*
 * gl_setup.c - what a context's GL gets before a program draws: GL loaded
 * and checked (4.5 core), its debug output as notices, and the headless
 * framebuffer (RGBA8 and depth) made, resized and freed.
 */
#include <stdio.h>

#include "app_internal.h"

static void GLAD_API_PTR debug_message(GLenum source, GLenum type, GLuint id, GLenum severity,
                                       GLsizei length, const GLchar *message,
                                       const void *user)
{
    (void)source;
    (void)id;
    (void)user;
    const char *level = severity == GL_DEBUG_SEVERITY_HIGH     ? "error"
                        : severity == GL_DEBUG_SEVERITY_MEDIUM ? "warning"
                                                               : "note";
    cugl__app_notice("cugl GL %s (type 0x%x): %.*s", level, type, (int)length, message);
}

static void copy_gl_string(char *dst, size_t size, GLenum name)
{
    const GLubyte *s = glGetString(name);
    snprintf(dst, size, "%s", s ? (const char *)s : "(unknown)");
}

cugl_status cugl__app_gl_init(cugl_app_context *ctx, int glad_version, bool debug,
                              const char *who)
{
    if (!glad_version)
        return cugl__fail(CUGL_ERROR_GL, who,
                          "the GLAD loader could not load GL on the %s context",
                          ctx->platform);
    copy_gl_string(ctx->renderer, sizeof ctx->renderer, GL_RENDERER);
    copy_gl_string(ctx->vendor, sizeof ctx->vendor, GL_VENDOR);
    GLint major = 0, minor = 0;
    glGetIntegerv(GL_MAJOR_VERSION, &major);
    glGetIntegerv(GL_MINOR_VERSION, &minor);
    if (major * 10 + minor < 45 || !GLAD_GL_VERSION_4_5)
        return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who,
                          "%s (%s) offers GL %d.%d on %s; cugl needs GL 4.5 core",
                          ctx->renderer, ctx->vendor, major, minor, ctx->platform);
    if (debug) {
        glEnable(GL_DEBUG_OUTPUT);
        glEnable(GL_DEBUG_OUTPUT_SYNCHRONOUS);
        glDebugMessageCallback(debug_message, NULL);
        glDebugMessageControl(GL_DONT_CARE, GL_DONT_CARE, GL_DEBUG_SEVERITY_NOTIFICATION, 0,
                              NULL, GL_FALSE);
    }
    return CUGL_OK;
}

/* Headless contexts draw into an FBO: RGBA8 colour, 24-bit depth. */
cugl_status cugl__app_offscreen_make(cugl_app_context *ctx, const char *who)
{
    GLint max_size = 0;
    glGetIntegerv(GL_MAX_RENDERBUFFER_SIZE, &max_size);
    if (ctx->width > max_size || ctx->height > max_size)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "size %d x %d exceeds %s's largest framebuffer, %d x %d",
                          ctx->width, ctx->height, ctx->renderer, max_size, max_size);
    cugl_app_drain_gl_errors();
    glCreateTextures(GL_TEXTURE_2D, 1, &ctx->color);
    glTextureStorage2D(ctx->color, 1, GL_RGBA8, ctx->width, ctx->height);
    glCreateRenderbuffers(1, &ctx->depth);
    glNamedRenderbufferStorage(ctx->depth, GL_DEPTH_COMPONENT24, ctx->width, ctx->height);
    glCreateFramebuffers(1, &ctx->fbo);
    glNamedFramebufferTexture(ctx->fbo, GL_COLOR_ATTACHMENT0, ctx->color, 0);
    glNamedFramebufferRenderbuffer(ctx->fbo, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, ctx->depth);
    GLenum error = glGetError();
    GLenum complete = glCheckNamedFramebufferStatus(ctx->fbo, GL_FRAMEBUFFER);
    if (error != GL_NO_ERROR || complete != GL_FRAMEBUFFER_COMPLETE)
        return cugl__fail(CUGL_ERROR_GL, who,
                          "the %d x %d offscreen framebuffer (RGBA8, DEPTH24) failed: "
                          "GL error 0x%x, status 0x%x",
                          ctx->width, ctx->height, error, complete);
    glBindFramebuffer(GL_FRAMEBUFFER, ctx->fbo);
    glViewport(0, 0, ctx->width, ctx->height);
    return CUGL_OK;
}

void cugl__app_offscreen_free(cugl_app_context *ctx)
{
    glDeleteFramebuffers(1, &ctx->fbo);
    glDeleteRenderbuffers(1, &ctx->depth);
    glDeleteTextures(1, &ctx->color);
    ctx->fbo = ctx->depth = ctx->color = 0;
}

cugl_status cugl__app_offscreen_resize(cugl_app_context *ctx, int width, int height,
                                       const char *who)
{
    int old_width = ctx->width, old_height = ctx->height;
    cugl__app_offscreen_free(ctx);
    ctx->width = width;
    ctx->height = height;
    cugl_status st = cugl__app_offscreen_make(ctx, who);
    if (st == CUGL_OK)
        return CUGL_OK;
    /* Back to the size that worked; the message says why the new one did not. */
    cugl__app_offscreen_free(ctx);
    ctx->width = old_width;
    ctx->height = old_height;
    if (cugl__app_offscreen_make(ctx, who) != CUGL_OK)
        cugl__app_offscreen_free(ctx);
    return st;
}
