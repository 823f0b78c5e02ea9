/*
 * target.h - the demos' targets: libcugl-app's (cugl/app_target.h), made
 * with what the command line says (the --interop path, the devices, the
 * --bench timer, pipelining), and CUDA's turn handed to the demo kernels
 * as their demo_dest and demo_source (demo_math.h). No demo knows which
 * path it runs on, and nothing here switches over paths: that is
 * libcugl-app's.
 *
 * Pipelining: images CUDA writes whole are pipelined where the demo is
 * (d->pipelined) on the shared path, and on the map path only with
 * --pipelined (there it gains nothing on the GPUs measured); a buffer only
 * when its demo asks (demo_target_pipeline). A kept frame (d->exact_frame)
 * ends the pipelining, so that it shows its own output.
 *
 * A frame:
 *
 *   ... GL renders into a CUGL_APP_FROM_GL target's gl_name ...
 *   cugl_app_target_gl_end(scene);                GL hands it to CUDA
 *   demo_targets_cuda_begin(d, targets, n, io);    map them, or wait for GL
 *   ... kernels on d->stream read io[i].source, write io[i].dest ...
 *   demo_targets_cuda_end(d, targets, n);          hand them to GL
 *   cugl_app_target_draw(image), or gl_begin, GL draws from gl_name, gl_end
 */
#ifndef CUGL_DEMO_TARGET_H
#define CUGL_DEMO_TARGET_H

#include "demo.h"
#include "demo_math.h"

/* Where CUDA finds a target this turn: `dest` when it writes it, `source`
 * when it reads it. A buffer is at dest.ptr or source.ptr. */
typedef struct demo_io {
    demo_dest dest;
    demo_source source;
} demo_io;

/**
 * A GL buffer of `size` bytes for the demo's path, holding `initial`
 * (NULL: undefined) for GL and CUDA alike.
 */
cugl_status demo_target_create_buffer(cugl_app_target **t, demo *d, size_t size,
                                      cugl_app_direction direction, const void *initial);

/** A width x height RGBA8 image for the demo's path. */
cugl_status demo_target_create_texture(cugl_app_target **t, demo *d, int width, int height,
                                       cugl_app_direction direction);

/** Pipeline a buffer CUDA writes whole every turn and never reads
 * (sinewave's vertices), where the demo pipelines. */
cugl_status demo_target_pipeline(cugl_app_target *t, demo *d);

/** CUDA's turn on `count` targets begins on d->stream; io[i] says where
 * target i is. */
cugl_status demo_targets_cuda_begin(demo *d, cugl_app_target *const *targets, int count,
                                    demo_io *io);

/** CUDA's turn ends (after its kernels are queued). */
cugl_status demo_targets_cuda_end(demo *d, cugl_app_target *const *targets, int count);

/* Queue the kernels that write `dest` on d->stream. */
typedef cugl_status (*demo_write_fn)(demo *d, void *user, const demo_dest *dest);

/**
 * CUDA's turn on one target it writes: cuda_begin, `write` timed as the
 * CUDA phase `phase`, cuda_end (also when `write` failed).
 */
cugl_status demo_target_write(cugl_app_target *t, demo *d, const char *phase,
                              demo_write_fn write, void *user);

/**
 * A frame of a demo whose picture is one image the size of the
 * framebuffer: (re)make it when the size changed, write it
 * (demo_target_write, phase "cuda"), then draw it (cugl_app_target_draw),
 * timed as "draw".
 */
cugl_status demo_target_render_fullscreen(cugl_app_target **t, demo *d, demo_write_fn write,
                                          void *user);

/**
 * --dump-vertices: the bytes of buffer target `t` as GL holds them now,
 * into the file d->opt.dump_vertices. Returns 0, or 1 after saying what
 * failed.
 */
int demo_target_dump(cugl_app_target *t, demo *d);

/**
 * Print why creating the target failed ("<program>: cannot create <what>:
 * <message>"); where the path asked for is not supported, say so and name
 * the paths that work. Returns 1, the exit status.
 */
int demo_target_fail(const demo *d, cugl_status status, const char *what);

#endif /* CUGL_DEMO_TARGET_H */
