/*
 * gl_state.h - the GL state that libcugl-app and libcugl-mpi change for a
 * moment and must give back, kept one way for both (each compiles
 * gl_state.c with its own GL loader):
 *
 *   the pixel store of a pack (GL to memory) or an unpack (memory to GL):
 *   cugl__gl_pixels_set saves the pack or unpack buffer binding and the
 *   store's alignment, row length, image height and skips, then sets them
 *   for the transfer at hand; cugl__gl_pixels_restore puts them back. A
 *   program's own settings never leak into a transfer of ours, nor ours
 *   into its;
 *
 *   a fence waited for on the CPU and deleted (cugl__gl_fence_wait).
 */
#ifndef CUGL_INTERNAL_GL_STATE_H
#define CUGL_INTERNAL_GL_STATE_H

#include <stdbool.h>

#include <glad/gl.h>

#include "cugl/error.h"

typedef struct cugl__gl_pixels {
    bool pack; /* GL_PACK_* and GL_PIXEL_PACK_BUFFER, or the unpack ones */
    GLint buffer, alignment, row_length, image_height, skip_rows, skip_pixels, skip_images,
        swap_bytes;
} cugl__gl_pixels;

/* Save the pack (or unpack) state in *saved, then bind `buffer` there (0:
 * client memory) with rows `alignment` bytes aligned, `row_pixels` pixels
 * a row (0: the image's width), `image_height` rows an image of a 3-D
 * transfer (0: the image's height), nothing skipped, bytes not swapped. */
void cugl__gl_pixels_set(cugl__gl_pixels *saved, bool pack, GLuint buffer, GLint alignment,
                         GLint row_pixels, GLint image_height);

/* Put back what cugl__gl_pixels_set saved. */
void cugl__gl_pixels_restore(const cugl__gl_pixels *saved);

/* Wait on the CPU until *fence has signalled (flushing GL's commands),
 * delete it and clear *fence; NULL is nothing to wait for. CUGL_ERROR_GL
 * where the wait failed: "<who>: glClientWaitSync on <what> failed". */
cugl_status cugl__gl_fence_wait(GLsync *fence, const char *what, const char *who);

#endif /* CUGL_INTERNAL_GL_STATE_H */
