/*
 * gl_state.c - GL state saved and put back, and fences waited for
 * (gl_state.h). Compiled into libcugl-app and libcugl-mpi, each with its
 * own GL loader.
 */
#include <stdint.h>

#include "check.h"
#include "gl_state.h"

/* The pack's and the unpack's names of one store. */
typedef struct store_names {
    GLenum binding, target, alignment, row_length, image_height, skip_rows, skip_pixels,
        skip_images, swap_bytes;
} store_names;

static const store_names store[2] = {
    {GL_PIXEL_UNPACK_BUFFER_BINDING, GL_PIXEL_UNPACK_BUFFER, GL_UNPACK_ALIGNMENT,
     GL_UNPACK_ROW_LENGTH, GL_UNPACK_IMAGE_HEIGHT, GL_UNPACK_SKIP_ROWS, GL_UNPACK_SKIP_PIXELS,
     GL_UNPACK_SKIP_IMAGES, GL_UNPACK_SWAP_BYTES},
    {GL_PIXEL_PACK_BUFFER_BINDING, GL_PIXEL_PACK_BUFFER, GL_PACK_ALIGNMENT, GL_PACK_ROW_LENGTH,
     GL_PACK_IMAGE_HEIGHT, GL_PACK_SKIP_ROWS, GL_PACK_SKIP_PIXELS, GL_PACK_SKIP_IMAGES,
     GL_PACK_SWAP_BYTES},
};

void cugl__gl_pixels_set(cugl__gl_pixels *saved, bool pack, GLuint buffer, GLint alignment,
                         GLint row_pixels, GLint image_height)
{
    const store_names *n = &store[pack];
    *saved = (cugl__gl_pixels){.pack = pack};
    glGetIntegerv(n->binding, &saved->buffer);
    glGetIntegerv(n->alignment, &saved->alignment);
    glGetIntegerv(n->row_length, &saved->row_length);
    glGetIntegerv(n->image_height, &saved->image_height);
    glGetIntegerv(n->skip_rows, &saved->skip_rows);
    glGetIntegerv(n->skip_pixels, &saved->skip_pixels);
    glGetIntegerv(n->skip_images, &saved->skip_images);
    glGetIntegerv(n->swap_bytes, &saved->swap_bytes);
    glBindBuffer(n->target, buffer);
    glPixelStorei(n->alignment, alignment);
    glPixelStorei(n->row_length, row_pixels);
    glPixelStorei(n->image_height, image_height);
    glPixelStorei(n->skip_rows, 0);
    glPixelStorei(n->skip_pixels, 0);
    glPixelStorei(n->skip_images, 0);
    glPixelStorei(n->swap_bytes, GL_FALSE);
}

void cugl__gl_pixels_restore(const cugl__gl_pixels *saved)
{
    const store_names *n = &store[saved->pack];
    glPixelStorei(n->alignment, saved->alignment);
    glPixelStorei(n->row_length, saved->row_length);
    glPixelStorei(n->image_height, saved->image_height);
    glPixelStorei(n->skip_rows, saved->skip_rows);
    glPixelStorei(n->skip_pixels, saved->skip_pixels);
    glPixelStorei(n->skip_images, saved->skip_images);
    glPixelStorei(n->swap_bytes, saved->swap_bytes);
    glBindBuffer(n->target, (GLuint)saved->buffer);
}

cugl_status cugl__gl_fence_wait(GLsync *fence, const char *what, const char *who)
{
    if (!*fence)
        return CUGL_OK;
    GLenum r = glClientWaitSync(*fence, GL_SYNC_FLUSH_COMMANDS_BIT, UINT64_MAX);
    glDeleteSync(*fence);
    *fence = NULL;
    if (r == GL_WAIT_FAILED)
        return cugl__fail(CUGL_ERROR_GL, who, "glClientWaitSync on %s failed", what);
    return CUGL_OK;
}
