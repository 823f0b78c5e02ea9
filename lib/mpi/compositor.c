/*
 * compositor.c - making and freeing a compositor, and what it answers.
 *
 * create is collective and must end the same way on every rank. So each
 * rank first does everything of its own that can fail (its arguments, its
 * memory, the root's texture, the operator) and remembers the outcome;
 * then the ranks meet, non-blocking and with the deadline
 * (MPI_Comm_idup, then two MPI_Iallreduce of (value, rank) pairs, MINLOC
 * and MAXLOC): a rank's failure, and any field whose least and greatest
 * values differ, fail every rank with the same facts.
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"


/* What each rank brings to the meeting, MINLOC and MAXLOC over (value, rank). */
enum { F_FAILED, F_STATUS, F_WIDTH, F_HEIGHT, F_MODE, F_ROOT, F_COUNT };
static const char *const field_name[F_COUNT] = {"failed", "status", "width",
                                                "height", "mode", "root"};

/* A rank's own failure before the meeting: its status and message. */
typedef struct local_outcome {
    cugl_status status;
    char why[1024];
} local_outcome;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void refuse(local_outcome *o, cugl_status status, const char *fmt, ...)
{
    if (o->status != CUGL_OK)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->why, sizeof o->why, fmt, ap);
    va_end(ap);
    o->status = status;
}

/* A call of cugl's failed: keep its message, less the function's name. */
static void refuse_last(local_outcome *o, cugl_status status)
{
    refuse(o, status, "%s", cugl_last_error());
}

static size_t round_up(size_t n) { return (n + 63) & ~(size_t)63; }

/* The host block: the framebuffer's pixels, the packed image, this rank's
 * piece and the root's composite. */
static void make_memory(cugl_mpi_compositor *c, cugl_device *device, local_outcome *o)
{
    size_t n = (size_t)c->width * (size_t)c->height;
    size_t mine = (size_t)c->counts[c->rank];
    bool depth = c->mode == CUGL_MPI_COMPOSITE_DEPTH;
    size_t at_depth = round_up(4 * n);
    size_t at_send = depth ? at_depth + round_up(4 * n) : 0;
    size_t at_piece = depth ? at_send + round_up(8 * n) : at_depth;
    size_t at_image = at_piece + round_up(mine * c->pixel_bytes);
    size_t total = at_image + (c->rank == c->root ? round_up(4 * n) : 0);
    if (device) {
        if (cugl_legacy_pinned_memory_resource_create(&c->pinned_mr, device) != CUGL_OK ||
            cugl_memory_resource_allocate(&c->pinned, c->pinned_mr, total, NULL) != CUGL_OK) {
            refuse_last(o, cugl_last_status());
            return;
        }
        c->block = (uint8_t *)(uintptr_t)cugl_buffer_handle(c->pinned);
    } else {
        c->block = aligned_alloc(64, total);
        if (!c->block) {
            refuse(o, CUGL_ERROR_OUT_OF_MEMORY, "no memory for %zu bytes of pixels", total);
            return;
        }
    }
    c->colour = c->block;
    c->depth = depth ? (uint32_t *)(void *)(c->block + at_depth) : NULL;
    c->send = depth ? (void *)(c->block + at_send) : (void *)c->colour;
    c->piece = c->block + at_piece;
    c->image = c->rank == c->root ? c->block + at_image : NULL;
}

/* The root's RGBA8 texture and the framebuffer that reads it in the blit. */
static void make_gl(cugl_mpi_compositor *c, local_outcome *o)
{
    cugl_app_drain_gl_errors();
    glCreateTextures(GL_TEXTURE_2D, 1, &c->texture);
    glTextureStorage2D(c->texture, 1, GL_RGBA8, c->width, c->height);
    glCreateFramebuffers(1, &c->fbo);
    glNamedFramebufferTexture(c->fbo, GL_COLOR_ATTACHMENT0, c->texture, 0);
    GLenum err = glGetError();
    GLenum complete = glCheckNamedFramebufferStatus(c->fbo, GL_READ_FRAMEBUFFER);
    if (err != GL_NO_ERROR)
        refuse(o, CUGL_ERROR_GL, "the root's %d x %d RGBA8 texture: GL error 0x%x", c->width,
               c->height, err);
    else if (complete != GL_FRAMEBUFFER_COMPLETE)
        refuse(o, CUGL_ERROR_GL, "the root's framebuffer over its %d x %d texture: status 0x%x",
               c->width, c->height, complete);
}

/* Check this rank's arguments and make what it can alone. */
static cugl_mpi_compositor *prepare(MPI_Comm comm, cugl_app_context *ctx,
                                    const cugl_mpi_compositor_desc *desc, int values[F_COUNT],
                                    local_outcome *o, const char *who)
{
    cugl_mpi_compositor_desc d = desc ? *desc : (cugl_mpi_compositor_desc){0};
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (!ctx) {
        refuse(o, CUGL_ERROR_INVALID_ARGUMENT, "ctx is NULL");
    } else if (!glad_glGetError && !gladLoadGL(cugl_app_gl_proc)) {
        refuse(o, CUGL_ERROR_GL, "GLAD cannot load GL from the context made current");
    } else {
        int w = 0, h = 0;
        cugl_app_context_size(ctx, &w, &h);
        d.width = d.width ? d.width : w;
        d.height = d.height ? d.height : h;
    }
    values[F_WIDTH] = d.width;
    values[F_HEIGHT] = d.height;
    values[F_MODE] = (int)d.mode;
    values[F_ROOT] = d.root;
    if (d.width <= 0 || d.height <= 0)
        refuse(o, CUGL_ERROR_INVALID_ARGUMENT, "size %d x %d is not positive", d.width,
               d.height);
    else if ((long long)d.width * d.height > INT_MAX)
        refuse(o, CUGL_ERROR_INVALID_ARGUMENT,
               "size %d x %d has more pixels than MPI counts in an int (%d)", d.width, d.height,
               INT_MAX);
    if (d.mode != CUGL_MPI_COMPOSITE_DEPTH && d.mode != CUGL_MPI_COMPOSITE_ADD)
        refuse(o, CUGL_ERROR_INVALID_ARGUMENT, "mode %d is neither CUGL_MPI_COMPOSITE_DEPTH (0) "
               "nor CUGL_MPI_COMPOSITE_ADD (1)", (int)d.mode);
    if (d.root < 0 || d.root >= size)
        refuse(o, CUGL_ERROR_INVALID_ARGUMENT, "root %d is not a rank of the communicator "
               "(0 .. %d)", d.root, size - 1);
    if (isnan(d.timeout_seconds))
        refuse(o, CUGL_ERROR_INVALID_ARGUMENT, "timeout_seconds is NaN");
    if (o->status != CUGL_OK)
        return NULL;

    cugl_mpi_compositor *c = calloc(1, sizeof *c);
    int *counts = calloc(2 * (size_t)size, sizeof *counts);
    if (!c || !counts) {
        free(c);
        free(counts);
        refuse(o, CUGL_ERROR_OUT_OF_MEMORY, "no memory for a compositor of %d ranks", size);
        return NULL;
    }
    c->comm = MPI_COMM_NULL;
    c->op = MPI_OP_NULL;
    c->rank = rank;
    c->size = size;
    c->root = d.root;
    c->width = d.width;
    c->height = d.height;
    c->mode = d.mode;
    c->timeout = d.timeout_seconds == 0 ? CUGL__MPI_DEFAULT_TIMEOUT : d.timeout_seconds;
    c->ctx = ctx;
    c->counts = counts;
    c->displs = counts + size;
    bool depth = d.mode == CUGL_MPI_COMPOSITE_DEPTH;
    c->pixel = depth ? MPI_UINT64_T : MPI_UINT32_T;
    c->pixel_bytes = depth ? 8 : 4;
    /* Pieces as even as whole pixels allow; the first ranks take one more. */
    int n = d.width * d.height;
    for (int r = 0, at = 0; r < size; r++) {
        c->counts[r] = n / size + (r < n % size);
        c->displs[r] = at;
        at += c->counts[r];
    }
    c->meet = calloc(1, sizeof *c->meet);
    if (!c->meet)
        refuse(o, CUGL_ERROR_OUT_OF_MEMORY, "no memory for the meeting's buffers");
    if (o->status == CUGL_OK)
        make_memory(c, d.device, o);
    if (o->status == CUGL_OK && rank == d.root)
        make_gl(c, o);
    if (o->status == CUGL_OK && cugl__mpi_op_create(&c->op, d.mode, who) != CUGL_OK)
        refuse_last(o, CUGL_ERROR_INVALID_STATE);
    return c;
}

/* Free what prepare made; the communicator and the meeting's buffers are the caller's. */
static void discard(cugl_mpi_compositor *c)
{
    if (!c)
        return;
    if (c->texture || c->fbo) {
        glDeleteFramebuffers(1, &c->fbo);
        glDeleteTextures(1, &c->texture);
    }
    if (c->pinned) {
        cugl_buffer_release(c->pinned);
    } else {
        free(c->block);
    }
    cugl_memory_resource_release(c->pinned_mr);
    int finalized = 1;
    MPI_Finalized(&finalized);
    if (c->op != MPI_OP_NULL && !finalized)
        MPI_Op_free(&c->op);
    free(c->counts);
    free(c);
}

/* The message for ranks that disagree: every field whose values differ. */
static bool disagreement(char *out, size_t size, const int *lo, const int *hi)
{
    size_t used = 0;
    out[0] = '\0';
    for (int f = F_WIDTH; f < F_COUNT; f++) {
        if (lo[2 * f] == hi[2 * f])
            continue;
        int n = snprintf(out + used, size - used, "%s%s differs between ranks: %d on rank %d, "
                         "%d on rank %d", used ? "; " : "", field_name[f], lo[2 * f],
                         lo[2 * f + 1], hi[2 * f], hi[2 * f + 1]);
        if (n > 0)
            used += (size_t)n < size - used ? (size_t)n : size - used - 1;
    }
    return used > 0;
}

/* Every rank's outcome and arguments (`values`) compared over the meeting's
 * communicator: the first refusal of any rank, or where the ranks' arguments
 * differ, what differs; CUGL_OK where all agree. `*abandoned` where a
 * collective timed out: p and its communicator then stay with it. */
static cugl_status agree(cugl__mpi_pending *p, int values[F_COUNT], const local_outcome *o,
                         int rank, int size, double timeout, bool *abandoned, const char *who)
{
    *abandoned = false;
    values[F_FAILED] = o->status != CUGL_OK;
    values[F_STATUS] = (int)o->status;
    for (int f = 0; f < F_COUNT; f++) {
        p->send[2 * f] = values[f];
        p->send[2 * f + 1] = rank;
    }
    int *lo = p->recv, *hi = p->recv + 2 * F_COUNT;
    _Static_assert(sizeof p->recv >= 4 * F_COUNT * sizeof(int), "room for MINLOC and MAXLOC");
    MPI_Request req[2];
    int err = MPI_Iallreduce(p->send, lo, F_COUNT, MPI_2INT, MPI_MINLOC, p->comm, &req[0]);
    if (err == MPI_SUCCESS)
        err = MPI_Iallreduce(p->send, hi, F_COUNT, MPI_2INT, MPI_MAXLOC, p->comm, &req[1]);
    if (err != MPI_SUCCESS)
        return cugl__mpi_fail(CUGL_ERROR_INVALID_STATE, who, err, "MPI_Iallreduce");
    cugl_status st = CUGL_OK;
    for (int i = 0; i < 2 && st == CUGL_OK; i++)
        st = cugl__mpi_wait(&req[i], timeout, size, who, "comparing the ranks' arguments");
    if (st != CUGL_OK) {
        *abandoned = true;
        return st;
    }
    char differs[1024];
    if (hi[2 * F_FAILED] != 0) {
        if (o->status != CUGL_OK)
            return cugl__fail(o->status, who, "%s", o->why);
        return cugl__fail((cugl_status)hi[2 * F_STATUS], who,
                          "rank %d of %d refused (%s; its own message says why): no rank made "
                          "a compositor",
                          hi[2 * F_STATUS + 1], size,
                          cugl_status_name((cugl_status)hi[2 * F_STATUS]));
    }
    if (disagreement(differs, sizeof differs, lo, hi))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "%s", differs);
    return CUGL_OK;
}

CUGL_API cugl_status cugl_mpi_compositor_create(cugl_mpi_compositor **out, MPI_Comm comm,
                                                cugl_app_context *ctx,
                                                const cugl_mpi_compositor_desc *desc)
{
    if (out)
        *out = NULL;
    cugl_status st = cugl__mpi_check_ready(__func__);
    if (st != CUGL_OK)
        return st;
    if (comm == MPI_COMM_NULL)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "comm is MPI_COMM_NULL");
    if (!out)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "out is NULL");

    local_outcome o = {.status = CUGL_OK};
    int values[F_COUNT] = {0};
    cugl_mpi_compositor *c = prepare(comm, ctx, desc, values, &o, __func__);
    double timeout = c ? c->timeout
                       : (desc && desc->timeout_seconds != 0 && !isnan(desc->timeout_seconds)
                              ? desc->timeout_seconds
                              : CUGL__MPI_DEFAULT_TIMEOUT);
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    /* A rank whose own work failed still meets the others, with buffers of its own. */
    cugl__mpi_pending *p = c ? c->meet : calloc(1, sizeof *p);
    if (!p) {
        discard(c);
        return cugl__fail(o.status ? o.status : CUGL_ERROR_OUT_OF_MEMORY, __func__, "%s",
                                 o.status ? o.why : "no memory for the meeting's buffers");
    }
    if (c)
        c->meet = NULL;

    int err = MPI_Comm_idup(comm, &p->comm, &p->request);
    if (err != MPI_SUCCESS) {
        discard(c);
        free(p);
        return cugl__mpi_fail(CUGL_ERROR_INVALID_STATE, __func__, err, "MPI_Comm_idup");
    }
    st = cugl__mpi_wait(&p->request, timeout, size, __func__, "duplicating the communicator");
    if (st != CUGL_OK) {
        discard(c); /* p stays: MPI may still write the new communicator into it */
        return st;
    }
    MPI_Comm_set_errhandler(p->comm, MPI_ERRORS_RETURN);

    bool abandoned = false;
    st = agree(p, values, &o, rank, size, timeout, &abandoned, __func__);
    if (st != CUGL_OK) {
        discard(c);
        if (!abandoned) { /* else p and its communicator stay with the abandoned collective */
            MPI_Comm_free(&p->comm);
            free(p);
        }
        return st;
    }
    c->comm = p->comm;
    p->comm = MPI_COMM_NULL;
    c->meet = p;
    *out = c;
    return CUGL_OK;
}

CUGL_API void cugl_mpi_compositor_destroy(cugl_mpi_compositor *c)
{
    if (!c)
        return;
    int finalized = 1;
    MPI_Finalized(&finalized);
    if (!c->broken) {
        if (c->comm != MPI_COMM_NULL && !finalized)
            MPI_Comm_free(&c->comm);
        free(c->meet);
    }
    discard(c);
}

CUGL_API cugl_status cugl_mpi_compositor_stats(cugl_mpi_composite_stats *out,
                                               const cugl_mpi_compositor *c)
{
    if (!out)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, "cugl_mpi_compositor_stats",
                                 "out is NULL");
    if (!c) {
        *out = (cugl_mpi_composite_stats){0};
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, "cugl_mpi_compositor_stats",
                                 "c is NULL");
    }
    *out = c->stats;
    return CUGL_OK;
}

CUGL_API const uint8_t *cugl_mpi_compositor_image(const cugl_mpi_compositor *c)
{
    return c && c->have_image ? c->image : NULL;
}

CUGL_API const char *cugl_mpi_compositor_transport(const cugl_mpi_compositor *c)
{
    if (!c)
        return "";
    return c->pinned ? "host-pinned" : "host";
}

CUGL_API const char *cugl_mpi_composite_mode_name(cugl_mpi_composite_mode mode)
{
    switch (mode) {
    case CUGL_MPI_COMPOSITE_DEPTH:
        return "depth";
    case CUGL_MPI_COMPOSITE_ADD:
        return "add";
    }
    return "invalid";
}
