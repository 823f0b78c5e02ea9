/*
 * blit.c - a texture over the whole viewport: one triangle made in the
 * vertex shader (an empty vertex array), the embedded blit shaders, and a
 * nearest and a linear sampler, all made once per context.
 */
#include "app_internal.h"

static cugl_status blit_init(cugl_app_context *ctx)
{
    GLuint shaders[2];
    cugl_status st = cugl__app_compile(&shaders[0], "cugl_app_blit", "blit", GL_VERTEX_SHADER,
                                       (const char *)cugl_shader_blit_vert);
    if (st != CUGL_OK)
        return st;
    st = cugl__app_compile(&shaders[1], "cugl_app_blit", "blit", GL_FRAGMENT_SHADER,
                           (const char *)cugl_shader_blit_frag);
    if (st != CUGL_OK) {
        glDeleteShader(shaders[0]);
        return st;
    }
    st = cugl__app_link(&ctx->blit_program, "cugl_app_blit", "blit", shaders, 2);
    if (st != CUGL_OK)
        return st;
    if (!ctx->blit_vao)
        glCreateVertexArrays(1, &ctx->blit_vao);
    glCreateSamplers(2, ctx->blit_samplers);
    for (int i = 0; i < 2; i++) {
        GLint filter = i ? GL_LINEAR : GL_NEAREST;
        glSamplerParameteri(ctx->blit_samplers[i], GL_TEXTURE_MIN_FILTER, filter);
        glSamplerParameteri(ctx->blit_samplers[i], GL_TEXTURE_MAG_FILTER, filter);
        glSamplerParameteri(ctx->blit_samplers[i], GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
        glSamplerParameteri(ctx->blit_samplers[i], GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    }
    return CUGL_OK;
}

/* The buffer blit's program: the blit's vertex shader, blit_buffer.frag. */
static cugl_status blit_buffer_init(cugl_app_context *ctx)
{
    GLuint shaders[2];
    cugl_status st = cugl__app_compile(&shaders[0], "cugl_app_blit_rgba8_buffer", "blit",
                                       GL_VERTEX_SHADER, (const char *)cugl_shader_blit_vert);
    if (st != CUGL_OK)
        return st;
    st = cugl__app_compile(&shaders[1], "cugl_app_blit_rgba8_buffer", "blit_buffer",
                           GL_FRAGMENT_SHADER, (const char *)cugl_shader_blit_buffer_frag);
    if (st != CUGL_OK) {
        glDeleteShader(shaders[0]);
        return st;
    }
    st = cugl__app_link(&ctx->blit_buffer_program, "cugl_app_blit_rgba8_buffer", "blit_buffer",
                        shaders, 2);
    if (st == CUGL_OK && !ctx->blit_vao)
        glCreateVertexArrays(1, &ctx->blit_vao);
    return st;
}

void cugl__app_blit_free(cugl_app_context *ctx)
{
    if (ctx->blit_buffer_program)
        glDeleteProgram(ctx->blit_buffer_program);
    ctx->blit_buffer_program = 0;
    if (ctx->blit_program)
        glDeleteProgram(ctx->blit_program);
    if (ctx->blit_vao)
        glDeleteVertexArrays(1, &ctx->blit_vao);
    if (ctx->blit_samplers[0])
        glDeleteSamplers(2, ctx->blit_samplers);
    ctx->blit_program = ctx->blit_vao = 0;
    ctx->blit_samplers[0] = ctx->blit_samplers[1] = 0;
}

CUGL_API cugl_status cugl_app_blit(cugl_app_context *ctx, GLuint texture, bool linear)
{
    if (!ctx)
        return CUGL__APP_FAIL(CUGL_ERROR_INVALID_ARGUMENT, "ctx is NULL");
    if (!texture || !glIsTexture(texture))
        return CUGL__APP_FAIL(CUGL_ERROR_INVALID_ARGUMENT, "%u is not a texture name",
                              texture);
    GLint target = 0;
    glGetTextureParameteriv(texture, GL_TEXTURE_TARGET, &target);
    if (target != GL_TEXTURE_2D)
        return CUGL__APP_FAIL(CUGL_ERROR_INVALID_ARGUMENT,
                              "texture %u has target 0x%x, not GL_TEXTURE_2D", texture,
                              (unsigned)target);
    if (!ctx->blit_program) {
        cugl_status st = blit_init(ctx);
        if (st != CUGL_OK) {
            cugl__app_blit_free(ctx);
            return st;
        }
    }
    glUseProgram(ctx->blit_program);
    glBindVertexArray(ctx->blit_vao);
    glBindTextureUnit(0, texture);
    glBindSampler(0, ctx->blit_samplers[linear ? 1 : 0]);
    glDrawArrays(GL_TRIANGLES, 0, 3);
    /* A sampler left on unit 0 would override the caller's texture filtering. */
    glBindSampler(0, 0);
    return CUGL_OK;
}

CUGL_API cugl_status cugl_app_blit_rgba8_buffer(cugl_app_context *ctx, GLuint buffer,
                                                int width, int height, size_t pitch)
{
    if (!ctx)
        return CUGL__APP_FAIL(CUGL_ERROR_INVALID_ARGUMENT, "ctx is NULL");
    if (!buffer || !glIsBuffer(buffer))
        return CUGL__APP_FAIL(CUGL_ERROR_INVALID_ARGUMENT, "%u is not a buffer name", buffer);
    if (width <= 0 || height <= 0 || pitch % 4 != 0 || pitch < (size_t)width * 4 ||
        pitch / 4 > (size_t)INT32_MAX / (size_t)height)
        return CUGL__APP_FAIL(CUGL_ERROR_INVALID_ARGUMENT,
                              "a %d x %d image with rows %zu bytes apart: the sizes must be "
                              "positive and the pitch a multiple of 4, at least 4 x width",
                              width, height, pitch);
    GLint64 size = 0;
    glGetNamedBufferParameteri64v(buffer, GL_BUFFER_SIZE, &size);
    size_t need = pitch * (size_t)(height - 1) + (size_t)width * 4;
    if ((uint64_t)size < need)
        return CUGL__APP_FAIL(CUGL_ERROR_INVALID_ARGUMENT,
                              "buffer %u has %lld bytes; a %d x %d image %zu bytes a row needs "
                              "%zu",
                              buffer, (long long)size, width, height, pitch, need);
    if (!ctx->blit_buffer_program) {
        cugl_status st = blit_buffer_init(ctx);
        if (st != CUGL_OK)
            return st;
    }
    glUseProgram(ctx->blit_buffer_program);
    glBindVertexArray(ctx->blit_vao);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, buffer);
    glUniform2i(0, width, height);
    glUniform1i(1, (GLint)(pitch / 4));
    glDrawArrays(GL_TRIANGLES, 0, 3);
    return CUGL_OK;
}
