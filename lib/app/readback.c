/*
 * readback.c - the context's framebuffer as RGBA8 rows, top to bottom, and
 * screenshots of it; the mapped buffers and scaling framebuffers that copies
 * of frames for another thread share (the frame server's, the recorder's).
 */
#include <stdlib.h>
#include <string.h>

#include "app_internal.h"

/* GL's rows run bottom to top; images run top to bottom. */
static cugl_status flip_rows(uint8_t *rgba, size_t row, int height)
{
    uint8_t *tmp = malloc(row);
    if (!tmp)
        return CUGL_ERROR_OUT_OF_MEMORY;
    for (int y = 0; y < height / 2; y++) {
        uint8_t *a = rgba + (size_t)y * row, *b = rgba + (size_t)(height - 1 - y) * row;
        memcpy(tmp, a, row);
        memcpy(a, b, row);
        memcpy(b, tmp, row);
    }
    free(tmp);
    return CUGL_OK;
}

/* cugl_app_read_pixels, its messages naming `who`. */
static cugl_status read_pixels(const char *who, uint8_t *rgba, size_t size,
                               cugl_app_context *ctx)
{
    size_t row = (size_t)ctx->width * 4, need = row * (size_t)ctx->height;
    if (size < need)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "rgba has %zu bytes; the %d x %d framebuffer needs %zu", size,
                          ctx->width, ctx->height, need);
    if (need == 0)
        return CUGL_OK; /* a minimised window */

    /* The caller's read framebuffer and pack state are restored. */
    GLint read_fbo = 0;
    glGetIntegerv(GL_READ_FRAMEBUFFER_BINDING, &read_fbo);
    cugl__gl_pixels saved;
    cugl__gl_pixels_set(&saved, true, 0, 1, 0, 0);
    cugl_app_drain_gl_errors();
    glBindFramebuffer(GL_READ_FRAMEBUFFER, ctx->fbo);
    glReadPixels(0, 0, ctx->width, ctx->height, GL_RGBA, GL_UNSIGNED_BYTE, rgba);
    GLenum error = glGetError();
    cugl__gl_pixels_restore(&saved);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, (GLuint)read_fbo);
    if (error != GL_NO_ERROR)
        return cugl__fail(CUGL_ERROR_GL, who,
                          "glReadPixels of the %d x %d framebuffer %u: GL error 0x%x",
                          ctx->width, ctx->height, ctx->fbo, error);
    if (flip_rows(rgba, row, ctx->height) != CUGL_OK)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, who,
                          "no memory for a row of %zu bytes", row);
    return CUGL_OK;
}

cugl_status cugl__app_mapped_pack_buffer(GLuint *pbo, void **pixels, GLsizeiptr bytes,
                                         const char *who)
{
    GLbitfield flags = GL_MAP_READ_BIT | GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT;
    cugl_app_drain_gl_errors();
    glCreateBuffers(1, pbo);
    glNamedBufferStorage(*pbo, bytes, NULL, flags | GL_CLIENT_STORAGE_BIT);
    *pixels = glMapNamedBufferRange(*pbo, 0, bytes, flags);
    cugl_status st = cugl_app_check_gl(who, "a mapped pixel-pack buffer");
    if (st == CUGL_OK && !*pixels)
        st = cugl__fail(CUGL_ERROR_GL, who, "cannot map a pixel-pack buffer of %lld bytes",
                        (long long)bytes);
    if (st != CUGL_OK)
        cugl__app_mapped_pack_buffer_free(pbo, pixels);
    return st;
}

void cugl__app_mapped_pack_buffer_free(GLuint *pbo, void **pixels)
{
    if (*pbo) {
        if (*pixels)
            glUnmapNamedBuffer(*pbo);
        glDeleteBuffers(1, pbo);
    }
    *pbo = 0;
    *pixels = NULL;
}

cugl_status cugl__app_sized_fb_blit(cugl__app_sized_fb *s, GLuint from, int from_w, int from_h,
                                    int w, int h, const char *who)
{
    if (!s->fbo || s->width != w || s->height != h) {
        cugl__app_sized_fb_free(s);
        glCreateRenderbuffers(1, &s->rb);
        glNamedRenderbufferStorage(s->rb, GL_RGBA8, w, h);
        glCreateFramebuffers(1, &s->fbo);
        glNamedFramebufferRenderbuffer(s->fbo, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, s->rb);
        s->width = w;
        s->height = h;
        CUGL__TRY(cugl_app_check_gl(who, "a framebuffer for scaled frames"));
    }
    glBlitNamedFramebuffer(from, s->fbo, 0, 0, from_w, from_h, 0, 0, w, h, GL_COLOR_BUFFER_BIT,
                           GL_LINEAR);
    return CUGL_OK;
}

void cugl__app_sized_fb_free(cugl__app_sized_fb *s)
{
    if (s->fbo)
        glDeleteFramebuffers(1, &s->fbo);
    if (s->rb)
        glDeleteRenderbuffers(1, &s->rb);
    *s = (cugl__app_sized_fb){0};
}

CUGL_API cugl_status cugl_app_read_pixels(uint8_t *rgba, size_t size, cugl_app_context *ctx)
{
    CUGL__CHECK_NOT_NULL(ctx);
    CUGL__CHECK_NOT_NULL(rgba);
    return read_pixels(__func__, rgba, size, ctx);
}

CUGL_API cugl_status cugl_app_screenshot(cugl_app_context *ctx, const char *path)
{
    CUGL__CHECK_NOT_NULL(ctx);
    CUGL__CHECK_NOT_NULL(path);
    if (ctx->width == 0 || ctx->height == 0)
        return cugl__fail(CUGL_ERROR_INVALID_STATE, __func__,
                          "the framebuffer is %d x %d (a minimised window); no image",
                          ctx->width, ctx->height);
    size_t size = (size_t)ctx->width * ctx->height * 4;
    uint8_t *rgba = malloc(size);
    if (!rgba)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, __func__, "no memory for %zu bytes of pixels",
                          size);
    cugl_status st = read_pixels(__func__, rgba, size, ctx);
    if (st == CUGL_OK)
        st = cugl__app_write_png(__func__, path, rgba, ctx->width, ctx->height);
    free(rgba);
    return st;
}
