/*
 * demo_mpi.h - a demo as one of MPI's ranks (--mpi): what the common code asks
 * of the ranks as a run goes, and what a demo's own exchanges use.
 *
 * demo_mpi is in mpi.c where the build has MPI (libcugl-mpi), and in
 * mpi_off.c, whose start only says why --mpi is not there, elsewhere. Only
 * a demo that names it in its demo_info (.mpi = &demo_mpi) links either,
 * so no other demo links MPI. The common code calls it through d->mpi,
 * which is NULL in one process: a run without --mpi does nothing more.
 *
 * A run with --mpi, on every rank, in this order:
 *
 *   start        (demo_start, after the command line) MPI, this rank's
 *                name and GPU, the options every rank must share
 *   started      (end of demo_start) every rank's outcome; rank 0's
 *                settings (frames, screenshot, size); the compositor
 *   run_begin    (demo_run) every rank's set-up outcome
 *   each frame:  frame_stop, then (after rank 0's update) frame_view,
 *                frame_target, the demo's render (its own allgather),
 *                composite
 *   run_end      (demo_run) a rank whose frames failed ends every rank
 *   finish       (demo_finish) --bench's figures over the ranks, every
 *                rank's outcome, MPI_Finalize
 */
#ifndef CUGL_DEMO_DEMO_MPI_H
#define CUGL_DEMO_DEMO_MPI_H

#include "demo.h"

typedef struct demo_mpi_backend {
    /* MPI, this rank's name (d->info->program says "[rank r/N]"), its GPU
     * (d->opt.device) and the options every rank must share; DEMO_RUN, or
     * the exit status, the same on every rank, after a message. */
    int (*start)(demo *d);
    /* demo_start's outcome `rc` on this rank, made every rank's: DEMO_RUN,
     * or the exit status after a message naming the ranks that failed. */
    int (*started)(demo *d, int rc);
    /* The demo's set-up went well here; 0, or 1 where a rank's did not. */
    int (*run_begin)(demo *d);
    /* The frames' outcome `rc`: 0 goes on; else every rank ends (MPI_Abort). */
    int (*run_end)(demo *d, int rc);
    /* Free what start made and leave MPI; the status to exit with (1 where
     * another rank failed). */
    int (*finish)(demo *d, int status);

    /* Whether the frame is the last: *stop in, this rank's wish (its
     * window closed, a signal); out, the ranks'. */
    cugl_status (*frame_stop)(demo *d, bool *stop);
    /* Rank 0's framebuffer size and view (--view's numbers: the camera's,
     * or the demo's own) to every rank. */
    cugl_status (*frame_view)(demo *d, const demo_callbacks *cb, void *user);
    /* The framebuffer this rank draws the frame into, at rank 0's size
     * (d->width, d->height): rank 0's context's, a framebuffer of its own
     * elsewhere. */
    cugl_status (*frame_target)(demo *d, uint32_t *framebuffer);
    /* Every rank's picture in `framebuffer` combined into rank 0's. */
    cugl_status (*composite)(demo *d, uint32_t framebuffer);

    /*
     * The parts of device memory `buffer` (`size` bytes) the ranks wrote,
     * rank r's at offsets[r] (sizes[r] bytes), each to every rank: with
     * MPI_Allgatherv, of device memory where the MPI library takes it
     * (cugl_mpi_cuda_aware), else through pinned host memory. Ordered on
     * d->stream: waits for the work queued there, and queues the copies
     * back.
     */
    cugl_status (*allgather)(demo *d, uint64_t buffer, size_t size, const size_t *offsets,
                             const size_t *sizes);
    /* values[0 .. count-1] made the largest of every rank's. */
    cugl_status (*max)(demo *d, double *values, int count);
} demo_mpi_backend;

extern const demo_mpi_backend demo_mpi;

#endif /* CUGL_DEMO_DEMO_MPI_H */
