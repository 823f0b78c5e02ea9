/*
 * shader.c - GLSL programs: compile, link, and the logs in the message.
 */
#include <stdlib.h>

#include "app_internal.h"

static const char *stage_name(GLenum stage)
{
    switch (stage) {
    case GL_VERTEX_SHADER:
        return "vertex";
    case GL_FRAGMENT_SHADER:
        return "fragment";
    case GL_COMPUTE_SHADER:
        return "compute";
    default:
        return "other";
    }
}

/* An info log as a malloc'ed string (NULL where memory is short). */
static char *info_log(GLuint object, bool program)
{
    GLint length = 0;
    if (program)
        glGetProgramiv(object, GL_INFO_LOG_LENGTH, &length);
    else
        glGetShaderiv(object, GL_INFO_LOG_LENGTH, &length);
    char *log = malloc(length > 0 ? (size_t)length + 1 : 1);
    if (!log)
        return NULL;
    log[0] = '\0';
    if (length > 0) {
        if (program)
            glGetProgramInfoLog(object, length + 1, NULL, log);
        else
            glGetShaderInfoLog(object, length + 1, NULL, log);
    }
    return log;
}

cugl_status cugl__app_compile(GLuint *out, const char *who, const char *name, GLenum stage,
                              const char *src)
{
    GLuint shader = glCreateShader(stage);
    if (!shader)
        return cugl__fail(CUGL_ERROR_GL, who,
                          "program \"%s\": glCreateShader(%s) failed (GL error 0x%x)",
                          name, stage_name(stage), glGetError());
    glShaderSource(shader, 1, &src, NULL);
    glCompileShader(shader);
    GLint ok = GL_FALSE;
    glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        char *log = info_log(shader, false);
        glDeleteShader(shader);
        cugl_status st = cugl__fail(CUGL_ERROR_GL, who,
                                    "program \"%s\": the %s shader does not compile:\n%s",
                                    name, stage_name(stage), log ? log : "(no log)");
        free(log);
        return st;
    }
    *out = shader;
    return CUGL_OK;
}

cugl_status cugl__app_link(GLuint *out, const char *who, const char *name,
                           const GLuint *shaders, int count)
{
    GLuint program = glCreateProgram();
    if (!program) {
        for (int i = 0; i < count; i++)
            glDeleteShader(shaders[i]);
        return cugl__fail(CUGL_ERROR_GL, who,
                          "program \"%s\": glCreateProgram failed (GL error 0x%x)",
                          name, glGetError());
    }
    for (int i = 0; i < count; i++)
        glAttachShader(program, shaders[i]);
    glLinkProgram(program);
    /* Attached shaders live on with the program until it is deleted. */
    for (int i = 0; i < count; i++) {
        glDetachShader(program, shaders[i]);
        glDeleteShader(shaders[i]);
    }
    GLint ok = GL_FALSE;
    glGetProgramiv(program, GL_LINK_STATUS, &ok);
    if (!ok) {
        char *log = info_log(program, true);
        glDeleteProgram(program);
        cugl_status st = cugl__fail(CUGL_ERROR_GL, who,
                                    "program \"%s\" does not link:\n%s", name,
                                    log ? log : "(no log)");
        free(log);
        return st;
    }
    *out = program;
    return CUGL_OK;
}

/* GL entry points are NULL until a context has loaded them. */
static cugl_status check_gl(const char *who)
{
    if (!glad_glCreateShader)
        return cugl__fail(CUGL_ERROR_INVALID_STATE, who,
                          "GL is not loaded: create a context first "
                          "(cugl_app_context_create)");
    return CUGL_OK;
}

CUGL_API cugl_status cugl_app_program(uint32_t *out, const char *name, const char *vertex_src,
                                      const char *fragment_src)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = 0;
    if (!name)
        name = "(unnamed)";
    if (!vertex_src)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "program \"%s\": vertex_src is NULL", name);
    cugl_status st = check_gl(__func__);
    if (st != CUGL_OK)
        return st;
    GLuint shaders[2];
    int count = 0;
    CUGL__TRY(cugl__app_compile(&shaders[count], __func__, name, GL_VERTEX_SHADER, vertex_src));
    count++;
    if (fragment_src) {
        st = cugl__app_compile(&shaders[count], __func__, name, GL_FRAGMENT_SHADER,
                               fragment_src);
        if (st != CUGL_OK) {
            glDeleteShader(shaders[0]);
            return st;
        }
        count++;
    }
    return cugl__app_link(out, __func__, name, shaders, count);
}

CUGL_API cugl_status cugl_app_compute_program(uint32_t *out, const char *name,
                                              const char *compute_src)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = 0;
    if (!name)
        name = "(unnamed)";
    if (!compute_src)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "program \"%s\": compute_src is NULL", name);
    CUGL__TRY(check_gl(__func__));
    GLuint shader;
    CUGL__TRY(cugl__app_compile(&shader, __func__, name, GL_COMPUTE_SHADER, compute_src));
    return cugl__app_link(out, __func__, name, &shader, 1);
}
