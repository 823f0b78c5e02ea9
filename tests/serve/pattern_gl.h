/*
 * pattern_gl.h - pattern.h's moving picture drawn by the GPU (a compute
 * shader), for the programs that render it: serve_app --animate, and the
 * recorder's benchmark. Frame N's is pattern_row's, texel for texel.
 */
#ifndef CUGL_TEST_PATTERN_GL_H
#define CUGL_TEST_PATTERN_GL_H

#include <stdbool.h>

#include <glad/gl.h>

/* Frame `frame` of the pattern, w x h, into framebuffer `fbo` (the
 * context current; its GL objects made at the first call and kept). False
 * where the shader cannot be built (cugl_last_error() says why). */
bool draw_pattern(GLuint fbo, int w, int h, long frame);

/* The context draw_pattern drew in is gone (destroyed with its objects):
 * the next call makes them anew in the one current then. */
void pattern_gl_forget(void);

#endif /* CUGL_TEST_PATTERN_GL_H */
