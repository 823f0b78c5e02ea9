/*
 * gl_error.c - GL's error flags, read one way for all of libcugl-app and
 * the programs on it (cugl/app.h).
 */
#include <string.h>

#include "app_internal.h"

/* GL keeps one flag per error kind; a few reads clear a broken driver's too. */
enum { MAX_GL_ERRORS = 16 };

CUGL_API void cugl_app_drain_gl_errors(void)
{
    if (!glad_glGetError)
        return; /* GL not loaded: no context was ever made */
    for (int i = 0; i < MAX_GL_ERRORS && glGetError() != GL_NO_ERROR; i++) {
    }
}

CUGL_API cugl_status cugl_app_check_gl(const char *function, const char *what)
{
    if (!function)
        function = __func__;
    if (!what)
        what = "(no description)";
    if (!glad_glGetError)
        return cugl__fail(CUGL_ERROR_INVALID_STATE, __func__,
                          "GL is not loaded: create a context first "
                          "(cugl_app_context_create); checked for %.64s: %.64s",
                          function, what);
    GLenum e = glGetError();
    if (e == GL_NO_ERROR)
        return CUGL_OK;
    cugl_app_drain_gl_errors();
    return cugl__fail(CUGL_ERROR_GL, function, "%s: GL error 0x%04x", what, e);
}

cugl_status cugl__app_check_texture_size(int width, int height, int depth, const char *who)
{
    GLint most = 0;
    glGetIntegerv(depth ? GL_MAX_3D_TEXTURE_SIZE : GL_MAX_TEXTURE_SIZE, &most);
    if (most <= 0 || (width <= most && height <= most && depth <= most))
        return CUGL_OK;
    char size[64];
    int n = snprintf(size, sizeof size, "%d x %d", width, height);
    if (depth && n > 0 && (size_t)n < sizeof size)
        snprintf(size + n, sizeof size - (size_t)n, " x %d", depth);
    return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                      "size %s: GL here takes at most %d texels a side (%s)", size, (int)most,
                      depth ? "GL_MAX_3D_TEXTURE_SIZE" : "GL_MAX_TEXTURE_SIZE");
}
