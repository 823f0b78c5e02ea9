/*
 * blit.c - a texture over the whole viewport: one triangle made in the
 * vertex shader (an empty vertex array), the embedded blit shaders, and a
 * nearest and a linear sampler, all made once per context.
 */
#include <stdlib.h>

#include "app_internal.h"

/* blit.vert's uniform: 1 draws the picture's row 0 at the top. */
enum { ROW0_UP = 4 };

/* A context's drawing objects (ctx->draw), made on first use. */
struct cugl__app_draw {
    GLuint blit_program, vao, samplers[2]; /* cugl_app_blit's; samplers nearest, linear */
    GLuint blit_buffer_program;            /* cugl_app_blit_rgba8_buffer's */
    GLuint pack_program;                   /* cugl_app_pack_rgba8's */
    GLuint points_program;                 /* cugl__app_draw_points' */
    cugl__app_drawer_objects drawers;      /* draw/'s, made there */
};

/* The context's drawing objects, made empty where there are none yet. */
static cugl_status draw_of(struct cugl__app_draw **out, cugl_app_context *ctx, const char *who)
{
    if (!ctx->draw && !(ctx->draw = calloc(1, sizeof *ctx->draw)))
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, who, "no memory for the drawing objects");
    *out = ctx->draw;
    return CUGL_OK;
}

static cugl_status blit_init(struct cugl__app_draw *d, const char *who)
{
    GLuint shaders[2];
    cugl_status st = cugl__app_compile(&shaders[0], who, "blit", GL_VERTEX_SHADER,
                                       (const char *)cugl_shader_blit_vert);
    if (st != CUGL_OK)
        return st;
    st = cugl__app_compile(&shaders[1], who, "blit", GL_FRAGMENT_SHADER,
                           (const char *)cugl_shader_blit_frag);
    if (st != CUGL_OK) {
        glDeleteShader(shaders[0]);
        return st;
    }
    CUGL__TRY(cugl__app_link(&d->blit_program, who, "blit", shaders, 2));
    if (!d->vao)
        glCreateVertexArrays(1, &d->vao);
    glCreateSamplers(2, d->samplers);
    for (int i = 0; i < 2; i++) {
        GLint filter = i ? GL_LINEAR : GL_NEAREST;
        glSamplerParameteri(d->samplers[i], GL_TEXTURE_MIN_FILTER, filter);
        glSamplerParameteri(d->samplers[i], GL_TEXTURE_MAG_FILTER, filter);
        glSamplerParameteri(d->samplers[i], GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
        glSamplerParameteri(d->samplers[i], GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    }
    return CUGL_OK;
}

/* The buffer blit's program: the blit's vertex shader, blit_buffer.frag. */
static cugl_status blit_buffer_init(struct cugl__app_draw *d, const char *who)
{
    GLuint shaders[2];
    cugl_status st = cugl__app_compile(&shaders[0], who, "blit",
                                       GL_VERTEX_SHADER, (const char *)cugl_shader_blit_vert);
    if (st != CUGL_OK)
        return st;
    st = cugl__app_compile(&shaders[1], who, "blit_buffer",
                           GL_FRAGMENT_SHADER, (const char *)cugl_shader_blit_buffer_frag);
    if (st != CUGL_OK) {
        glDeleteShader(shaders[0]);
        return st;
    }
    st = cugl__app_link(&d->blit_buffer_program, who, "blit_buffer",
                        shaders, 2);
    if (st == CUGL_OK && !d->vao)
        glCreateVertexArrays(1, &d->vao);
    return st;
}

cugl_status cugl__app_drawer_objects_of(cugl__app_drawer_objects **out, cugl_app_context *ctx,
                                        const char *who)
{
    struct cugl__app_draw *d = NULL;
    CUGL__TRY(draw_of(&d, ctx, who));
    *out = &d->drawers;
    return CUGL_OK;
}

/* The drawers' objects, those made. */
static void drawers_free(cugl__app_drawer_objects *o)
{
    if (o->mesh_program)
        glDeleteProgram(o->mesh_program);
    if (o->bar_program)
        glDeleteProgram(o->bar_program);
    if (o->volume_program)
        glDeleteProgram(o->volume_program);
    if (o->volume_sampler)
        glDeleteSamplers(1, &o->volume_sampler);
    if (o->host_lines)
        glDeleteBuffers(1, &o->host_lines);
    if (o->vao)
        glDeleteVertexArrays(1, &o->vao);
    for (int i = 0; i < CUGL__APP_COLORMAPS; i++)
        if (o->colormaps[i])
            glDeleteTextures(1, &o->colormaps[i]);
    if (o->text)
        o->text_free(o->text);
}

void cugl__app_blit_free(cugl_app_context *ctx)
{
    struct cugl__app_draw *d = ctx->draw;
    if (!d)
        return;
    drawers_free(&d->drawers);
    if (d->points_program)
        glDeleteProgram(d->points_program);
    if (d->pack_program)
        glDeleteProgram(d->pack_program);
    if (d->blit_buffer_program)
        glDeleteProgram(d->blit_buffer_program);
    if (d->blit_program)
        glDeleteProgram(d->blit_program);
    if (d->vao)
        glDeleteVertexArrays(1, &d->vao);
    if (d->samplers[0])
        glDeleteSamplers(2, d->samplers);
    free(d);
    ctx->draw = NULL;
}

CUGL_API cugl_status cugl_app_blit(cugl_app_context *ctx, uint32_t texture, bool linear)
{
    CUGL__CHECK_NOT_NULL(ctx);
    return cugl__app_blit(ctx, texture, linear, CUGL_APP_ORIGIN_LOWER, __func__);
}

cugl_status cugl__app_blit(cugl_app_context *ctx, uint32_t texture, bool linear,
                           cugl_app_origin origin, const char *who)
{
    if (!texture || !glIsTexture(texture))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "%u is not a texture name",
                          texture);
    GLint target = 0;
    glGetTextureParameteriv(texture, GL_TEXTURE_TARGET, &target);
    if (target != GL_TEXTURE_2D)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "texture %u has target 0x%x, not GL_TEXTURE_2D", texture,
                          (unsigned)target);
    struct cugl__app_draw *d = NULL;
    CUGL__TRY(draw_of(&d, ctx, who));
    if (!d->blit_program) {
        cugl_status st = blit_init(d, who);
        if (st != CUGL_OK) {
            cugl__app_blit_free(ctx);
            return st;
        }
    }
    glUseProgram(d->blit_program);
    glBindVertexArray(d->vao);
    glBindTextureUnit(0, texture);
    glBindSampler(0, d->samplers[linear ? 1 : 0]);
    glUniform1i(ROW0_UP, origin == CUGL_APP_ORIGIN_UPPER);
    glDrawArrays(GL_TRIANGLES, 0, 3);
    /* A sampler left on unit 0 would override the caller's texture filtering. */
    glBindSampler(0, 0);
    return CUGL_OK;
}

/* `buffer` holds width x height RGBA8 texels, rows `pitch` bytes apart:
 * CUGL_OK, or the refusal, named for `who`. */
static cugl_status check_image_buffer(const char *who, GLuint buffer, int width, int height,
                                      size_t pitch)
{
    if (!buffer || !glIsBuffer(buffer))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "%u is not a buffer name",
                          buffer);
    GLint64 size = 0;
    glGetNamedBufferParameteri64v(buffer, GL_BUFFER_SIZE, &size);
    const char *why = NULL;
    if (width <= 0 || height <= 0 || pitch % 4 != 0 || pitch < (size_t)width * 4 ||
        pitch / 4 > (size_t)INT32_MAX / (size_t)height)
        why = "the sizes must be positive and the pitch a multiple of 4, at least 4 x width";
    else if ((uint64_t)size < pitch * (size_t)(height - 1) + (size_t)width * 4)
        why = "the buffer is too small for the image";
    if (why)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "a %d x %d image %zu bytes a row in buffer %u of %lld bytes: "
                          "%s",
                          width, height, pitch, buffer, (long long)size, why);
    return CUGL_OK;
}

CUGL_API cugl_status cugl_app_blit_rgba8_buffer(cugl_app_context *ctx, uint32_t buffer,
                                                int width, int height, size_t pitch)
{
    CUGL__CHECK_NOT_NULL(ctx);
    return cugl__app_blit_rgba8_buffer(ctx, buffer, width, height, pitch, CUGL_APP_ORIGIN_LOWER,
                                       __func__);
}

cugl_status cugl__app_blit_rgba8_buffer(cugl_app_context *ctx, uint32_t buffer, int width,
                                        int height, size_t pitch, cugl_app_origin origin,
                                        const char *who)
{
    cugl_status checked = check_image_buffer(who, buffer, width, height, pitch);
    if (checked != CUGL_OK)
        return checked;
    struct cugl__app_draw *d = NULL;
    CUGL__TRY(draw_of(&d, ctx, who));
    if (!d->blit_buffer_program)
        CUGL__TRY(blit_buffer_init(d, who));
    glUseProgram(d->blit_buffer_program);
    glBindVertexArray(d->vao);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, buffer);
    glUniform2i(0, width, height);
    glUniform1i(1, (GLint)(pitch / 4));
    glUniform1i(ROW0_UP, origin == CUGL_APP_ORIGIN_UPPER);
    glDrawArrays(GL_TRIANGLES, 0, 3);
    return CUGL_OK;
}

CUGL_API cugl_status cugl_app_pack_rgba8(cugl_app_context *ctx, uint32_t texture, uint32_t buffer,
                                         int width, int height, size_t pitch)
{
    CUGL__CHECK_NOT_NULL(ctx);
    if (!texture || !glIsTexture(texture))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "%u is not a texture name",
                          texture);
    cugl_status checked = check_image_buffer(__func__, buffer, width, height, pitch);
    if (checked != CUGL_OK)
        return checked;
    GLint tw = 0, th = 0, format = 0;
    glGetTextureLevelParameteriv(texture, 0, GL_TEXTURE_WIDTH, &tw);
    glGetTextureLevelParameteriv(texture, 0, GL_TEXTURE_HEIGHT, &th);
    glGetTextureLevelParameteriv(texture, 0, GL_TEXTURE_INTERNAL_FORMAT, &format);
    if (format != GL_RGBA8 || width > tw || height > th)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "texture %u is %d x %d of format 0x%x; %d x %d of GL_RGBA8 wanted",
                          texture, tw, th, (unsigned)format, width, height);
    struct cugl__app_draw *d = NULL;
    CUGL__TRY(draw_of(&d, ctx, __func__));
    if (!d->pack_program) {
        CUGL__TRY(cugl_app_compute_program(&d->pack_program, "pack_rgba8",
                                           (const char *)cugl_shader_pack_rgba8_comp));
    }
    cugl_app_drain_gl_errors();
    glUseProgram(d->pack_program);
    glBindTextureUnit(0, texture);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, buffer);
    glUniform2i(0, width, height);
    glUniform1i(1, (GLint)(pitch / 4));
    glDispatchCompute(((GLuint)width + 15) / 16, ((GLuint)height + 15) / 16, 1);
    /* GL's own later reads of the buffer see the writes; others wait on a fence. */
    glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT | GL_BUFFER_UPDATE_BARRIER_BIT |
                    GL_PIXEL_BUFFER_BARRIER_BIT);
    glUseProgram(0);
    return cugl_app_check_gl(__func__, "the packing dispatch");
}

cugl_status cugl__app_draw_points(cugl_app_context *ctx, GLuint buffer, size_t count,
                                  int components, const float *matrix, float size,
                                  const float *rgba, const char *who)
{
    struct cugl__app_draw *d = NULL;
    CUGL__TRY(draw_of(&d, ctx, who));
    if (!d->points_program) {
        GLuint shaders[2];
        cugl_status st = cugl__app_compile(&shaders[0], who, "points", GL_VERTEX_SHADER,
                                           (const char *)cugl_shader_points_vert);
        if (st != CUGL_OK)
            return st;
        st = cugl__app_compile(&shaders[1], who, "points", GL_FRAGMENT_SHADER,
                               (const char *)cugl_shader_points_frag);
        if (st != CUGL_OK) {
            glDeleteShader(shaders[0]);
            return st;
        }
        CUGL__TRY(cugl__app_link(&d->points_program, who, "points", shaders, 2));
    }
    if (!d->vao)
        glCreateVertexArrays(1, &d->vao);
    static const float identity[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    GLboolean point_size_on = glIsEnabled(GL_PROGRAM_POINT_SIZE);
    GLint ssbo = 0;
    glGetIntegeri_v(GL_SHADER_STORAGE_BUFFER_BINDING, 0, &ssbo);
    cugl_app_drain_gl_errors();
    glUseProgram(d->points_program);
    glBindVertexArray(d->vao);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, buffer);
    glUniformMatrix4fv(0, 1, GL_FALSE, matrix ? matrix : identity);
    glUniform1i(1, components);
    glUniform1f(2, size);
    glUniform4fv(3, 1, rgba);
    glEnable(GL_PROGRAM_POINT_SIZE);
    glDrawArrays(GL_POINTS, 0, (GLsizei)count);
    if (!point_size_on)
        glDisable(GL_PROGRAM_POINT_SIZE);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, (GLuint)ssbo);
    return cugl_app_check_gl(who, "drawing the points");
}
