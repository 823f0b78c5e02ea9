/*
 * target.h - the one interop mechanism of the demos: a GL buffer or RGBA8
 * texture that CUDA and GL take turns on, by one of the three --interop
 * paths:
 *
 *   map     a GL object registered with CUDA once and mapped every frame
 *           (cugl/graphics.h); the targets of one turn are mapped and
 *           unmapped together in one driver call, each with the map flags
 *           of its role; a texture is written through a surface object and
 *           read through a texture object on the mapped array
 *   shared  CUDA memory that GL imports (cugl/app_shared.h): nothing is
 *           mapped; CUDA and GL take turns with a wait on each side
 *   host    a device buffer CUDA uses, and copies through pinned host
 *           memory to or from the GL object: the path without interop,
 *           for comparison
 *
 * A target has a direction, fixed when it is made:
 *
 *   DEMO_TO_GL    CUDA writes it, GL draws from it (an image, vertices);
 *                 CUDA may also read back what it wrote (nbody's positions)
 *   DEMO_FROM_GL  GL renders into it, CUDA reads it (postprocess's scene)
 *
 * and each CUDA turn a role, `cuda_writes`: true (the default of DEMO_TO_GL)
 * maps it WRITE_DISCARD, false READ_ONLY.
 *
 * A frame:
 *
 *   ... GL renders into a DEMO_FROM_GL target's gl_name ...
 *   demo_target_gl_end(&scene, d);                GL hands it to CUDA
 *   demo_targets_cuda_begin(d, targets, n, io);    map them, or wait for GL
 *   ... kernels on d->stream read io[i].source, write io[i].dest ...
 *   demo_targets_cuda_end(d, targets, n);          hand them to GL
 *   demo_target_gl_begin(&image, d);
 *   ... GL draws from image.gl_name ...
 *   demo_target_gl_end(&image, d);
 *
 * Adding an interop path means adding it here (and to options.c): no demo
 * knows which path it runs on.
 */
#ifndef CUGL_DEMO_TARGET_H
#define CUGL_DEMO_TARGET_H

#include <cugl/app_shared.h>

#include "demo.h"
#include "demo_math.h"

typedef enum demo_direction {
    DEMO_TO_GL = 0,   /* CUDA writes, GL reads */
    DEMO_FROM_GL = 1, /* GL writes, CUDA reads */
} demo_direction;

typedef struct demo_target {
    demo_interop interop;
    demo_direction direction;
    bool cuda_writes;  /* this CUDA turn's role: writes (else reads) */
    bool texture;      /* an RGBA8 GL_TEXTURE_2D; else a GL buffer */
    GLuint gl_name;    /* what GL draws from or renders into */
    bool owns_gl_name; /* made here; shared DEMO_TO_GL: the import's */
    size_t size;       /* bytes CUDA reads or writes */
    int width, height; /* textures */
    size_t pitch;      /* textures: bytes between rows of linear memory */

    /* map: the object CUDA maps. Pipelined, a second object registered
     * alike (spare_*) takes turns with it: CUDA writes one while GL draws
     * the other, written a turn before, so gl_name is then the other
     * object's; the one CUDA wrote stays mapped (held) until its next
     * turn, so GL's drawing never waits for this turn's kernels. */
    cugl_graphics_resource *resource;
    cugl_graphics_resource *spare_resource;
    GLuint spare_gl_name;
    bool held;
    cugl_buffer *mapped;              /* map, a buffer, during CUDA's turn */
    /* map, a texture, during CUDA's turn: the object on the mapped array
     * (retired with demo_retire once the kernels are queued) */
    cugl_surface *surface;
    cugl_texture *sampler;

    cugl_app_shared *shared; /* shared */
    bool pipelined;          /* map, shared: GL shows CUDA's output a frame late */
    bool drawn_from_memory;  /* shared texture: demo_target_blit reads the memory */

    cugl_memory_resource *device_mr, *pinned_mr; /* host */
    cugl_buffer *device_buffer, *pinned_buffer;
} demo_target;

/* Where CUDA finds a target this turn: `dest` when it writes it, `source`
 * when it reads it. A buffer is at dest.ptr or source.ptr. */
typedef struct demo_io {
    demo_dest dest;
    demo_source source;
} demo_io;

/*
 * Timer phases (with --bench): map: "map", "unmap"; shared: "wait-gl"
 * (CUDA waits for GL), "signal-gl" (CUDA marks its turn), "wait-cuda" (GL
 * waits for CUDA), "copy-out" (GL copies a DEMO_FROM_GL texture into the
 * memory CUDA reads); host: "download" (to pinned memory), "upload",
 * "readback" and "to-device" (a DEMO_FROM_GL texture on its way to CUDA).
 */

/**
 * A GL buffer of `size` bytes for the path in d->opt.interop, holding
 * `initial` (NULL: undefined) for GL and CUDA alike.
 */
cugl_status demo_target_create_buffer(demo_target *t, demo *d, size_t size,
                                      demo_direction direction, const void *initial);

/** A width x height GL_RGBA8 texture for the path in d->opt.interop. */
cugl_status demo_target_create_texture(demo_target *t, demo *d, int width, int height,
                                       demo_direction direction);

/**
 * CUDA's turn on `count` targets begins: map them in one call, wait for
 * GL, or copy GL's pixels to the device; io[i] says where target i is.
 * On a failure no target is left mapped.
 */
cugl_status demo_targets_cuda_begin(demo *d, demo_target *const *targets, int count,
                                    demo_io *io);

/** CUDA's turn ends (after its kernels are queued): unmap them in one
 * call, mark CUDA's use, or copy what CUDA wrote to GL. */
cugl_status demo_targets_cuda_end(demo *d, demo_target *const *targets, int count);

/** The one-target forms of the two above. */
cugl_status demo_target_cuda_begin(demo_target *t, demo *d, demo_io *io);
cugl_status demo_target_cuda_end(demo_target *t, demo *d);

/** GL's turn on `count` targets: shared memory waits for CUDA (and fills a
 * shared texture); the other paths need nothing. */
cugl_status demo_targets_gl_begin(demo *d, demo_target *const *targets, int count);

/** GL's turn ends: shared memory marks GL's use; a DEMO_FROM_GL texture
 * goes where CUDA reads it (shared memory, or pinned host memory). */
cugl_status demo_targets_gl_end(demo *d, demo_target *const *targets, int count);

/** The one-target forms of the two above. */
cugl_status demo_target_gl_begin(demo_target *t, demo *d);
cugl_status demo_target_gl_end(demo_target *t, demo *d);

/* Queue the kernels that write `dest` on d->stream. */
typedef cugl_status (*demo_write_fn)(demo *d, void *user, const demo_dest *dest);

/**
 * CUDA's turn on one target it writes: cuda_begin, `write` timed as the
 * CUDA phase `phase`, cuda_end (also when `write` failed).
 */
cugl_status demo_target_write(demo_target *t, demo *d, const char *phase, demo_write_fn write,
                              void *user);

/**
 * A frame of a demo whose picture is one texture the size of the
 * framebuffer: (re)make the texture when the size changed, write it
 * (demo_target_write, phase "cuda"), then show it with cugl_app_blit
 * between demo_target_gl_begin and _gl_end, timed as "draw".
 */
cugl_status demo_target_render_fullscreen(demo_target *t, demo *d, demo_write_fn write,
                                          void *user);

/**
 * Draw an RGBA8 texture target over the viewport, nearest (cugl_app_blit),
 * between demo_target_gl_begin and _gl_end. On the shared path the pixels
 * are read where CUDA wrote them (cugl_app_blit_rgba8_buffer): a shared
 * DEMO_TO_GL texture is not filled (cugl_app_shared_set_texture_fill), and
 * a demo that samples its gl_name otherwise turns the fill on.
 */
cugl_status demo_target_blit(demo_target *t, demo *d);

/**
 * --dump-vertices: the bytes of buffer target `t` as GL holds them now,
 * into the file d->opt.dump_vertices. Returns 0, or 1 after saying what
 * failed.
 */
int demo_target_dump(demo_target *t, demo *d);

/** `size` bytes of host memory into the start of `dst` (which may be
 * larger: shared memory is rounded up), copied on `stream`; then wait. */
cugl_status demo_upload(cugl_stream *stream, cugl_buffer *dst, const void *data, size_t size);

/**
 * Print why creating the target failed ("<program>: cannot create <what>:
 * <message>"); where the shared path is not supported, say so and name the
 * paths that work. Returns 1, the exit status.
 */
int demo_target_fail(const demo *d, cugl_status status, const char *what);

/**
 * Pipeline a shared DEMO_TO_GL target that CUDA writes whole every turn
 * and never reads (sinewave's vertices), when d->pipelined: GL then uses
 * what CUDA wrote a turn earlier. Shared textures are pipelined so when
 * made; other paths and targets ignore it. A frame with d->exact_frame
 * ends the pipelining, so that it shows its own output.
 */
cugl_status demo_target_pipeline(demo_target *t, demo *d);

/** Free everything (the GL context current); a zeroed target is fine. */
void demo_target_destroy(demo_target *t, demo *d);

#endif /* CUGL_DEMO_TARGET_H */
