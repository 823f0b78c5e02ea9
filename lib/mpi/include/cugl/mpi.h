/**
 * @file cugl/mpi.h
 * libcugl-mpi: sort-last compositing of MPI ranks' pictures, and the
 * binding of ranks to GPUs.
 *
 * Each rank draws its share of a scene into a GL framebuffer of the same
 * size; cugl_mpi_compositor_composite() makes the picture of the whole
 * scene on one rank, the root, with MPI collectives alone:
 *
 *   1. every rank reads its framebuffer into host memory (pinned where a
 *      CUDA device is given): colour as RGBA8 and, in depth mode, depth as
 *      32-bit values (GL_UNSIGNED_INT: 0 nearest, 0xffffffff farthest);
 *   2. MPI_Reduce_scatter over the pixels with an operator of cugl's
 *      (MPI_Op_create), commutative, so that MPI may schedule it as it
 *      schedules its own (recursive halving, the binary-swap pattern, or a
 *      ring): each rank ends with one piece of the composite, about
 *      1/N of the pixels;
 *   3. MPI_Gatherv of the pieces' colour to the root, which writes the
 *      composite into its framebuffer's colour (its depth buffer is left as
 *      it drew it), to be shown, read back or served.
 *
 * The modes (cugl_mpi_composite_mode):
 * - depth: a pixel takes the colour and depth of the nearest fragment of
 *   any rank. Where two ranks' depths are equal, the smaller colour wins,
 *   the colour taken as the 32-bit number R + 256 G + 65536 B + 2^24 A: a
 *   rule that does not depend on the ranks' order or on how MPI schedules
 *   the reduction, so the composite is the same for any number of ranks and
 *   any split of the scene (it is also what keeps the operator
 *   commutative). Ranks clear to the same colour and to depth 1: the
 *   background then stays that colour.
 * - additive: each channel is the sum of the ranks' channels, saturating at
 *   255, as GL's glBlendFunc(GL_ONE, GL_ONE) does on an RGBA8 target (sums
 *   of saturated sums are the saturated sum of all: the order does not
 *   matter). Ranks clear to 0. No depth is read.
 *
 * MPI: the caller initialises MPI (any thread level: every call here is
 * made by the thread that calls cugl, which must be allowed to call MPI).
 * Each compositor duplicates the communicator it is given and sets
 * MPI_ERRORS_RETURN on the copy, so that MPI's errors come back as
 * statuses with MPI's own message. cugl_mpi_compositor_create and
 * cugl_mpi_compositor_composite are collective: every rank of the
 * communicator calls them, in the same order. Neither waits for ever: each
 * first meets the other ranks in a non-blocking collective and gives up
 * after the desc's timeout with CUGL_ERROR_NOT_READY and a message (a rank
 * that never comes, a rank stuck elsewhere). The collective left pending is
 * abandoned, and so is the compositor: later composites refuse
 * (CUGL_ERROR_INVALID_STATE). Once every rank has met, the reduce-scatter
 * and gather run as blocking collectives: a rank that dies in between is
 * MPI's to handle, and Open MPI's mpirun then ends the whole job (it stops
 * every rank when one exits without MPI_Finalize). Arguments are checked
 * together: a refusal on one rank, or sizes, modes or roots that differ
 * between ranks, is an error on every rank, with a message naming what
 * differs, its values and ranks.
 *
 * Device buffers: where the MPI library is CUDA-aware
 * (cugl_mpi_cuda_aware) device memory could go to MPI directly; the
 * compositor reads GL's framebuffer into host memory and says so
 * (cugl_mpi_compositor_transport).
 *
 * Built where Meson finds an MPI C library (the `mpi` feature); a program
 * that uses it depends on `cugl-mpi`, which brings MPI, libcugl-app and
 * libcugl. Nothing else of cugl links MPI but cugl-nbody, for its --mpi.
 */
#ifndef CUGL_MPI_H
#define CUGL_MPI_H

#include <mpi.h>

#include "cugl/app.h"

CUGL_BEGIN_DECLS

/* ---- Ranks and GPUs --------------------------------------------------------- */

/** Where a rank runs (cugl_mpi_bind). */
typedef struct cugl_mpi_binding {
    int rank;       /**< the rank in the communicator */
    int size;       /**< the ranks of the communicator */
    int local_rank; /**< the rank among those that share its host (MPI_COMM_TYPE_SHARED) */
    int local_size; /**< the ranks on its host */
    int device;     /**< the CUDA device ordinal chosen for it */
} cugl_mpi_binding;

/** How cugl_mpi_bind chooses; zero-initialise for the defaults. */
typedef struct cugl_mpi_bind_desc {
    /** The devices to spread each host's ranks over; 0: as many as libcugl
     * finds (cugl_device_count). */
    int device_count;
    /** Take `device` whatever the local rank (a program's --device option). */
    bool fixed;
    /** The device ordinal when `fixed` is set. */
    int device;
} cugl_mpi_bind_desc;

/**
 * Choose this rank's GPU: the ranks of each host (MPI_Comm_split_type with
 * MPI_COMM_TYPE_SHARED) take its devices in turn, local rank r getting
 * device r modulo the device count; more ranks than devices share them.
 * With `fixed`, every rank takes desc->device. Nothing is made current:
 * pass out->device to cugl_device_get, or as the cuda_device of a
 * cugl_app_context_desc.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL out; comm is MPI_COMM_NULL; a
 *   negative device count; a fixed device outside 0 .. count - 1 where
 *   the count is known), CUGL_ERROR_INVALID_STATE (MPI is not initialised,
 *   or finalised; MPI's error, with its message), CUGL_ERROR_NO_DRIVER and
 *   CUGL_ERROR_NO_DEVICE (the count is asked of libcugl and there is no
 *   driver or no device).
 * @thread_safety Collective over `comm`: every rank calls it, and it waits
 *   for them all (MPI_Comm_split_type blocks); a thread allowed to call MPI.
 * @param[out] out where this rank runs and the device chosen.
 * @param comm the ranks to spread (MPI_COMM_WORLD, as a rule).
 * @param desc how to choose, or NULL for the defaults.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_mpi_bind(cugl_mpi_binding *out, MPI_Comm comm,
                                   const cugl_mpi_bind_desc *desc);

/**
 * Whether the MPI library takes CUDA device pointers, asked at run time
 * (Open MPI's MPIX_Query_cuda_support() from <mpi-ext.h>, where the
 * library has it; an MPI without it is taken for not CUDA-aware), with one
 * sentence for the user in `reason`: the library (MPI_Get_library_version's
 * first line), what was asked and what it said.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL aware; reason NULL with a size).
 * @thread_safety Any thread allowed to call MPI; MPI initialised or not.
 * @param[out] aware true where device buffers may go to MPI directly.
 * @param[out] reason where the sentence goes (NUL-terminated, cut to fit), or NULL.
 * @param reason_size the bytes of reason; 0 when reason is NULL.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_mpi_cuda_aware(bool *aware, char *reason, size_t reason_size);

/**
 * Wait for a non-blocking MPI operation (MPI_Ibcast, MPI_Iallgatherv,
 * MPI_Iallreduce, ...) until it completes or `timeout_seconds` pass, so
 * that a rank that never joins (stuck elsewhere, dead, or running other
 * code) is an error with a message instead of a hang: the wait the
 * compositor makes before each collective, for a program's own. It tests
 * the request, spinning for the first millisecond (ranks that are all
 * there meet in microseconds), then sleeping 100 us between tests.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL req or what; a NaN timeout),
 *   CUGL_ERROR_INVALID_STATE (MPI is not initialised, or finalised; MPI's
 *   error, with its message), CUGL_ERROR_NOT_READY (the timeout passed:
 *   "<what>: not every rank of the <size> joined within <t> s ..."; the
 *   operation is left pending, abandoned with its buffers, which must stay
 *   valid: the program should end).
 * @thread_safety A thread allowed to call MPI.
 * @param req the operation's request; MPI_REQUEST_NULL when it completed.
 * @param comm the communicator it runs over (its size is named in the message).
 * @param timeout_seconds how long to wait; negative: no limit.
 * @param what what the operation is, for the message ("exchanging the positions").
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_mpi_wait(MPI_Request *req, MPI_Comm comm, double timeout_seconds,
                                   const char *what);

/* ---- The compositor --------------------------------------------------------- */

/** A sort-last compositor over the ranks of a communicator. Opaque. */
typedef struct cugl_mpi_compositor cugl_mpi_compositor;

/** How the ranks' pictures combine (cugl_mpi_compositor_desc.mode). */
typedef enum cugl_mpi_composite_mode {
    /** The nearest fragment's colour; equal depths: the smaller colour. */
    CUGL_MPI_COMPOSITE_DEPTH = 0,
    /** Each channel the saturating sum of the ranks' (8-bit integers). */
    CUGL_MPI_COMPOSITE_ADD = 1,
} cugl_mpi_composite_mode;

/** What cugl_mpi_compositor_create makes; a zero field takes its default. */
typedef struct cugl_mpi_compositor_desc {
    int width,  /**< pixels of a row; 0: the context's framebuffer width now */
        height; /**< rows; 0: the context's framebuffer height now */
    cugl_mpi_composite_mode mode; /**< 0: CUGL_MPI_COMPOSITE_DEPTH */
    int root;   /**< the rank that gets the composite; 0: rank 0 */
    /** Whose pinned host memory the pixels pass through (cuMemAllocHost);
     * NULL: ordinary (pageable) host memory. */
    cugl_device *device;
    /** Seconds create and each composite wait for every rank to join
     * before giving up; 0: 60; negative: no limit. */
    double timeout_seconds;
} cugl_mpi_compositor_desc;

/**
 * Make a compositor over the ranks of `comm`, for pictures of
 * width x height drawn in `ctx`. Collective: every rank calls it, and
 * every rank gets the same outcome: a compositor each, or an error each
 * (the message of a rank that refused its own arguments says why; the
 * others' name that rank). The ranks must agree on width, height, mode and
 * root; a difference names the field, its values and two ranks that hold
 * them ("height differs between ranks: 48 on rank 0, 49 on rank 2").
 * The root makes a texture and a framebuffer in `ctx` for the composite.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL out or ctx; comm is
 *   MPI_COMM_NULL; a size not positive, or its pixels over INT_MAX; a mode
 *   that is none of the two; a root outside the communicator; a NaN
 *   timeout; another rank's refusal; the ranks disagree),
 *   CUGL_ERROR_INVALID_STATE (MPI is not initialised, or finalised; MPI's
 *   error, with its message), CUGL_ERROR_NOT_READY (not every rank joined
 *   within the timeout: the message says how long it waited),
 *   CUGL_ERROR_OUT_OF_MEMORY, CUGL_ERROR_GL (the root's texture), and the
 *   statuses of cugl_legacy_pinned_memory_resource_create and
 *   cugl_memory_resource_allocate where a device is given.
 *   With a NULL out, MPI_COMM_NULL or MPI not initialised the call returns
 *   at once and the other ranks time out.
 * @thread_safety Collective over `comm`; the thread that uses `ctx`, with it current.
 * @param[out] out the compositor; NULL on failure.
 * @param comm the ranks that composite (duplicated: the caller may free its own).
 * @param ctx the GL context each rank draws in, current on this thread.
 * @param desc what to make, or NULL for the defaults.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_mpi_compositor_create(cugl_mpi_compositor **out, MPI_Comm comm,
                                                cugl_app_context *ctx,
                                                const cugl_mpi_compositor_desc *desc);

/**
 * Free the compositor: its memory, its copy of the communicator (an MPI
 * collective that does not wait in the MPI libraries we know; call it on
 * every rank), and on the root its texture and framebuffer (the context
 * must be current). After a timeout the communicator and the buffers of
 * the abandoned collective are left to MPI. NULL: no-op.
 * @errors none.
 * @thread_safety Collective over the compositor's communicator; the thread
 *   that uses its context, with it current.
 * @param c the compositor, or NULL.
 */
CUGL_API void cugl_mpi_compositor_destroy(cugl_mpi_compositor *c);

/**
 * Composite what every rank drew into `framebuffer` (the region
 * width x height at its bottom left): read it, reduce-scatter, gather; the
 * root writes the composite into the colour of its `framebuffer` (a blit,
 * whatever the caller's scissor, sRGB and rasterizer-discard state, which
 * are kept). Colour is read from the framebuffer's read buffer as RGBA8;
 * in depth mode the framebuffer needs a depth buffer. GL's pixel-store,
 * buffer and framebuffer bindings are left as they were.
 * Collective: every rank calls it. A rank that fails before the exchange
 * (a GL error, no depth buffer) makes it fail on every rank: its own
 * message says why, the others' name it.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; `framebuffer` is not a
 *   complete framebuffer of the context; depth mode without a depth
 *   buffer; another rank's refusal), CUGL_ERROR_INVALID_STATE (an earlier
 *   composite timed out; the ranks are at different composites; MPI's
 *   error, with its message), CUGL_ERROR_NOT_READY (not every rank came
 *   within the timeout), CUGL_ERROR_GL.
 * @thread_safety Collective over the compositor's communicator; the thread
 *   that uses its context, with it current.
 * @param c the compositor.
 * @param framebuffer the GL framebuffer each rank drew into:
 *   cugl_app_context_framebuffer(ctx) for the context's own (0 for a window).
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_mpi_compositor_composite(cugl_mpi_compositor *c, uint32_t framebuffer);

/** What the last composite cost this rank (cugl_mpi_compositor_stats). */
typedef struct cugl_mpi_composite_stats {
    long composites;         /**< composites made so far */
    double seconds;          /**< the last one's wall time on this rank, all its parts */
    double readback_seconds; /**< of which reading the framebuffer and packing the pixels */
    double mpi_seconds;      /**< meeting the ranks, the reduce-scatter and the gather */
    double write_seconds;    /**< the root's upload and blit (0 elsewhere) */
    /** One rank's picture as it enters the reduce-scatter: width x height
     * x 8 bytes in depth mode (colour and depth), x 4 in additive mode. */
    uint64_t image_bytes;
    /** The bytes this rank's operator combined in the reduce-scatter: the
     * pieces that reached it from other ranks. MPI does not report what its
     * collectives send; the schedules MPI libraries use for commutative
     * operators (recursive halving, ring, pairwise exchange) send each
     * rank as much as they bring it, so this is what it sent there too,
     * except in the extra steps where the ranks are not a power of two in
     * number. Over all ranks the sum is at least (ranks - 1) x image_bytes,
     * the least any schedule can combine. */
    uint64_t reduce_bytes;
    /** The bytes this rank sent to the root in the gather (its piece's
     * colour, 4 bytes a pixel); 0 on the root. Exact. */
    uint64_t gather_bytes;
    /** reduce_bytes + gather_bytes: what this rank sent, by the measure above. */
    uint64_t bytes_sent;
} cugl_mpi_composite_stats;

/**
 * What the last composite cost this rank; all zero before the first.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL).
 * @thread_safety The thread that uses the compositor.
 * @param[out] out the figures.
 * @param c the compositor.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_mpi_compositor_stats(cugl_mpi_composite_stats *out,
                                               const cugl_mpi_compositor *c);

/**
 * The root's copy of the last composite, as written into its framebuffer:
 * width x height RGBA8 pixels, rows bottom to top (GL's order), for a
 * program that serves or saves it without reading GL back.
 * @errors none.
 * @thread_safety The thread that uses the compositor.
 * @pointer_lifetime Held by the compositor; rewritten by each composite,
 *   freed by destroy.
 * @param c the compositor, or NULL.
 * @return the pixels; NULL on another rank, before the first composite, and for NULL.
 */
CUGL_API const uint8_t *cugl_mpi_compositor_image(const cugl_mpi_compositor *c);

/**
 * How the pixels travel between GL and MPI: "host-pinned" (pinned host
 * memory of the desc's device) or "host" (pageable host memory); "device"
 * is kept for device buffers handed to a CUDA-aware MPI, which this
 * version does not make.
 * @errors none.
 * @thread_safety Any thread.
 * @param c the compositor, or NULL.
 * @return a static string; "" for NULL.
 */
CUGL_API const char *cugl_mpi_compositor_transport(const cugl_mpi_compositor *c);

/**
 * "depth", "add", or "invalid". @errors none. @thread_safety Any thread.
 * @param mode the mode.
 * @return a static string; "invalid" for a value that is no cugl_mpi_composite_mode.
 */
CUGL_API const char *cugl_mpi_composite_mode_name(cugl_mpi_composite_mode mode);

CUGL_END_DECLS

#endif /* CUGL_MPI_H */
