/*
 * gl_error.c - GL's error flags, read one way for all of libcugl-app and
 * the programs on it (cugl/app.h).
 */
#include "app_internal.h"

/* GL keeps one flag per error kind; a few reads clear a broken driver's too. */
enum { MAX_GL_ERRORS = 16 };

CUGL_API void cugl_app_drain_gl_errors(void)
{
    for (int i = 0; i < MAX_GL_ERRORS && glGetError() != GL_NO_ERROR; i++) {
    }
}

CUGL_API cugl_status cugl_app_check_gl(const char *function, const char *what)
{
    GLenum e = glGetError();
    if (e == GL_NO_ERROR)
        return CUGL_OK;
    cugl_app_drain_gl_errors();
    return cugl_report_error(CUGL_ERROR_GL, function, "%s: GL error 0x%04x", what, e);
}
