/*
 * mpi_internal.h - what the files of libcugl-mpi share: the compositor's
 * fields, waiting for a collective with a deadline, MPI's errors as cugl's,
 * and the pixel work on either side of the reduce-scatter.
 */
#ifndef CUGL_MPI_INTERNAL_H
#define CUGL_MPI_INTERNAL_H

/* libcugl-mpi's own GL loader (GLAD), loaded from the context libcugl-app
 * made current, as any program's is. */
#include <glad/gl.h>

#include "cugl/mpi.h"

/* Errors: the idiom of every library of cugl (lib/internal/check.h). */
#include "check.h"
/* GL state saved and put back, fences waited for (lib/internal/gl_state.h). */
#include "gl_state.h"

/* How long create and composite wait for every rank when the desc says 0. */
#define CUGL__MPI_DEFAULT_TIMEOUT 60.0

/*
 * What a collective that may be abandoned reads and writes: it stays
 * allocated until the collective completes, which after a timeout is never
 * known, so an abandoned one is left behind (a few bytes).
 */
typedef struct cugl__mpi_pending {
    MPI_Request request;
    MPI_Comm comm;    /* MPI_Comm_idup's result */
    int send[12];  /* (value, rank) pairs for MINLOC and MAXLOC */
    int recv[24];  /* their least, then their greatest */
} cugl__mpi_pending;

struct cugl_mpi_compositor {
    MPI_Comm comm;           /* our duplicate, with MPI_ERRORS_RETURN */
    int rank, size, root;
    int width, height;
    cugl_mpi_composite_mode mode;
    double timeout;          /* seconds; negative: none */
    bool broken;             /* a collective was abandoned: no more composites */
    cugl__mpi_pending *meet; /* the per-composite meeting's buffers */
    cugl_app_context *ctx;

    /* The pieces of the reduce-scatter: counts[r] pixels from displs[r]. */
    int *counts, *displs;
    MPI_Op op;
    MPI_Datatype pixel;      /* MPI_UINT64_T (depth) or MPI_UINT32_T (additive) */
    size_t pixel_bytes;      /* 8 or 4 */

    /* Host memory, one block: pinned (device given) or malloc'ed. */
    uint8_t *block;
    cugl_memory_resource *pinned_mr;
    cugl_buffer *pinned;
    uint8_t *colour;         /* the framebuffer's RGBA8, width x height */
    uint32_t *depth;         /* its depth (depth mode), width x height */
    void *send;              /* the packed pixels (depth mode; else colour) */
    void *piece;             /* this rank's piece of the composite */
    uint8_t *image;          /* the root's whole composite, RGBA8 */
    bool have_image;

    /* The root's texture and framebuffer for writing the composite. */
    GLuint texture, fbo;

    cugl_mpi_composite_stats stats;
};

/* MPI's error `err` as `status`, reported as "<who>: <what>: <MPI's text>". */
cugl_status cugl__mpi_fail(cugl_status status, const char *who, int err, const char *what);

/* Whether MPI can be called (initialised, not finalised); else reports. */
cugl_status cugl__mpi_check_ready(const char *who);

/*
 * Wait for `req` until `timeout` seconds have passed (negative: no limit).
 * CUGL_ERROR_NOT_READY on a timeout, reported as "<who>: <what>: not every
 * rank of the <size> joined within <timeout> s" (the request is left
 * pending); MPI's errors as cugl__mpi_fail.
 */
cugl_status cugl__mpi_wait(MPI_Request *req, double timeout, int size, const char *who,
                           const char *what);

/* The operators: the nearer pixel of (depth << 32 | colour) words, and the
 * per-channel saturating sum of RGBA8 words. */
cugl_status cugl__mpi_op_create(MPI_Op *op, cugl_mpi_composite_mode mode, const char *who);

/* Bytes the operators have combined in this process so far. */
uint64_t cugl__mpi_reduced_bytes(void);

/* depth mode: out[i] = (uint64_t)depth[i] << 32 | the colour of pixel i as
 * R + 256 G + 65536 B + 2^24 A. */
void cugl__mpi_pack_depth(uint64_t *out, const uint8_t *rgba, const uint32_t *depth,
                          size_t pixels);

/* The colour of packed pixels, as RGBA8, in place (out may be in). */
void cugl__mpi_unpack_colour(uint8_t *out, const uint64_t *in, size_t pixels);

#endif /* CUGL_MPI_INTERNAL_H */
