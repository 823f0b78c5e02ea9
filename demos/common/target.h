/*
 * target.h - what a demo's kernel writes and GL then reads, by one of the
 * three --interop paths:
 *
 *   map     a GL buffer or RGBA8 texture registered with CUDA once and
 *           mapped every frame (cugl/graphics.h); a texture is written
 *           through a surface object on the mapped array
 *   shared  CUDA memory that GL imports (cugl/app_shared.h): nothing is
 *           mapped; CUDA and GL take turns with a wait on each side
 *   host    a device buffer the kernel writes, copied to pinned host
 *           memory, then uploaded with glNamedBufferSubData or
 *           glTextureSubImage2D: the path without interop, for comparison
 *
 * A frame:
 *
 *   demo_target_cuda_begin(&t, d, &dest);   where the kernel writes
 *   ... launch on d->stream, writing dest ...
 *   demo_target_cuda_end(&t, d);            hand the data to GL
 *   demo_target_gl_begin(&t, d);
 *   ... GL draws from t.gl_name ...
 *   demo_target_gl_end(&t, d);
 */
#ifndef CUGL_DEMO_TARGET_H
#define CUGL_DEMO_TARGET_H

#include <cugl/app_shared.h>

#include "demo.h"

typedef struct demo_target {
    demo_interop interop;
    bool texture;      /* an RGBA8 GL_TEXTURE_2D; else a GL buffer */
    GLuint gl_name;    /* what GL draws from */
    bool owns_gl_name; /* made here (map, host); shared: the import's */
    size_t size;       /* bytes the kernel writes */
    int width, height; /* textures */
    size_t pitch;      /* textures: bytes between rows of linear memory */

    cugl_graphics_resource *resource; /* map */
    cugl_buffer *mapped;              /* map, a buffer, during CUDA's turn */
    /* map, a texture: the surface on this frame's mapped array (retired
     * with demo_retire once the kernel is queued) */
    cugl_surface *surface;

    cugl_app_shared *shared; /* shared */

    cugl_memory_resource *device_mr, *pinned_mr; /* host */
    cugl_buffer *device_buffer, *pinned_buffer;
} demo_target;

/* Where the kernel writes this frame. */
typedef struct demo_dest {
    uint64_t ptr;     /* linear memory; 0 for a texture on the map path */
    uint64_t pitch;   /* textures in linear memory: bytes between rows */
    uint64_t surface; /* a texture on the map path: the surface object */
} demo_dest;

/*
 * Timer phases (with --bench): map: "map", "unmap"; shared: "wait-gl"
 * (CUDA waits for GL), "signal-gl" (CUDA marks its writes), "wait-cuda"
 * (GL waits for them); host: "download" (to pinned memory), "upload".
 */

/** A GL buffer of `size` bytes for the path in d->opt.interop. */
cugl_status demo_target_create_buffer(demo_target *t, demo *d, size_t size);

/** A width x height GL_RGBA8 texture for the path in d->opt.interop. */
cugl_status demo_target_create_texture(demo_target *t, demo *d, int width, int height);

/** CUDA's turn begins: map, or wait for GL; *dest says where to write. */
cugl_status demo_target_cuda_begin(demo_target *t, demo *d, demo_dest *dest);

/** CUDA's turn ends: unmap, mark the writes, or download and upload. */
cugl_status demo_target_cuda_end(demo_target *t, demo *d);

/** GL's turn: shared memory waits for CUDA's writes; the rest need nothing. */
cugl_status demo_target_gl_begin(demo_target *t, demo *d);
cugl_status demo_target_gl_end(demo_target *t, demo *d);

/*
 * A frame of a demo whose picture is one texture the size of the
 * framebuffer: (re)make the texture when the size changed, let `fill` write
 * it (it calls demo_target_cuda_begin / _cuda_end), then show it with
 * cugl_app_blit between demo_target_gl_begin and _gl_end, timed as "draw".
 */
cugl_status demo_target_render_fullscreen(demo_target *t, demo *d,
                                          cugl_status (*fill)(demo *d, void *user),
                                          void *user);

/**
 * Print why creating the target failed ("<program>: cannot create <what>:
 * <message>"); where the shared path is not supported, say so and name the
 * paths that work. Returns 1, the exit status.
 */
int demo_target_fail(const demo *d, cugl_status status, const char *what);

/** Free everything (the GL context current); a zeroed target is fine. */
void demo_target_destroy(demo_target *t, demo *d);

#endif /* CUGL_DEMO_TARGET_H */
