/*
 * jpeg_gl.h - baseline JPEG encoded by GL compute shaders (jpeg_gl.c): the
 * frame server's encoder where GL runs on a GPU (serve_nvjpeg.c). Its own
 * static library, so that the gl suite tests it directly. GL calls need
 * the context current (open, close, encode, gpu_ms, out_free); collect
 * reads host memory only (any thread, once the encode's fence has passed).
 */
#ifndef CUGL_APP_JPEG_GL_H
#define CUGL_APP_JPEG_GL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <glad/gl.h>

typedef struct cugl__jpeg_gl cugl__jpeg_gl;

/* Its passes: coefficients, coding into slots, placing, coding in place
 * (where a slot overflowed), copying out. */
enum { JPEG_GL_PASSES = 5 };

/* Where one encode's JPEG lands: a buffer in host memory, mapped, that the
 * GPU writes and the CPU reads once the encode's fence has passed. One an
 * encode in flight. Zeroed is empty. */
typedef struct cugl__jpeg_gl_out {
    GLuint buffer;
    const uint32_t *mapped;
    size_t capacity;        /* bytes of entropy-coded data it takes */
    GLuint queries[JPEG_GL_PASSES + 1]; /* the passes' starts and the end, GPU's clock */
    bool overflowed;        /* the last encode did not fit: the next gets twice the room */
    unsigned char header[1024]; /* the JPEG's markers up to its scan's data */
    size_t header_size;
    int width, height;
} cugl__jpeg_gl_out;

/* The shaders compiled and libjpeg-turbo's tables read; NULL with `why`. */
cugl__jpeg_gl *cugl__jpeg_gl_open(char *why, size_t why_size);
void cugl__jpeg_gl_close(cugl__jpeg_gl *e);

/* The RGBA8 texture `texture`'s texels (0, 0) to (width, height), row 0 the
 * picture's top (its bottom where `bottom_up`, as GL draws), to a 4:2:0
 * JPEG at `quality` (1-100) in `out`: queued on
 * GL, not waited for (the caller fences it). The program, texture unit 0
 * storage buffer bindings 0-7, the indirect dispatch and query buffer
 * bindings are put back.
 * False with `why` on failure. */
bool cugl__jpeg_gl_encode(cugl__jpeg_gl *e, cugl__jpeg_gl_out *out, GLuint texture, int width,
                          int height, bool bottom_up, int quality, char *why, size_t why_size);

/* The GPU's time for `out`'s encode, ms, and where `pass_ms`, each pass's;
 * once its fence has passed (GL's context current; collect gives the
 * whole on any thread). */
double cugl__jpeg_gl_gpu_ms(const cugl__jpeg_gl_out *out, double pass_ms[JPEG_GL_PASSES]);

/* The JPEG of `out`'s encode, malloc'ed (`size` bytes), and the GPU's time
 * for it (ms; the GPU wrote its timer queries into the buffer); NULL where
 * it did not fit (*overflowed: the next encode into `out` has twice the
 * room) or memory ran out. Host memory only: any thread, once the fence
 * passed. */
unsigned char *cugl__jpeg_gl_collect(cugl__jpeg_gl_out *out, size_t *size, double *gpu_ms,
                                     bool *overflowed);

void cugl__jpeg_gl_out_free(cugl__jpeg_gl_out *out);

#endif /* CUGL_APP_JPEG_GL_H */
