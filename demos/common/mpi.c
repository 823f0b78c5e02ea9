/*
 * mpi.c - a demo as one of MPI's ranks (--mpi, demo_mpi.h), over libcugl-mpi.
 *
 * Every rank runs the whole demo on its own GPU (the ranks of a host take
 * its GPUs in turn, or --device) and draws its share of the scene into a
 * framebuffer of rank 0's size; libcugl-mpi's compositor makes the picture
 * in rank 0's, which rank 0 then shows, serves, records and keeps as one
 * process does. What one process's input decides, rank 0 decides for all:
 * each frame the ranks agree whether to go on (a window closed on rank 0,
 * a signal on any), and rank 0 sends its framebuffer's size and its view,
 * so that its window's or its browser's input moves every rank's camera in
 * the same frame. The other ranks take no input and keep no frame.
 *
 * Nothing waits for ever: every collective here is non-blocking and waited
 * for at most --mpi-timeout seconds (cugl_mpi_wait), after which the rank
 * says which step it was in and how long it waited. At the end of each
 * stage (start, set-up, end) the ranks gather every rank's outcome, so a
 * rank that fails there (no GPU, no GL) is an error on every rank with that
 * rank's message; the options every rank must share are compared before
 * anything else. Within the frames a rank that fails cannot tell the
 * others, who wait in a collective it will not join: it ends the job
 * (MPI_Abort) after its message, as a rank that dies does.
 */
#include "demo_mpi.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cugl/mpi.h>

#include "demo_internal.h"

enum { TEXT = 512 }; /* bytes of one rank's text in a gather, its NUL included */

typedef enum stage {
    STAGE_STARTING, /* demo_start has not ended */
    STAGE_READY,    /* every rank started; the demo sets itself up */
    STAGE_RUNNING,  /* in the frames */
    STAGE_RAN,      /* every rank's frames ended well */
    STAGE_DONE,     /* a rank failed at an agreement: only MPI_Finalize is left */
} stage;

/* What rank 0 sends each frame. */
typedef struct frame_state {
    int width, height; /* its framebuffer's size */
    int view_count;    /* the view's numbers; 0: the demo has no view */
    float view[DEMO_MAX_VIEW];
} frame_state;

/* What rank 0 decides for the run, sent once. */
typedef struct run_state {
    long frames;
    int fixed_step, pipelined, keeps_last;
} run_state;

struct demo_ranks {
    MPI_Comm comm; /* MPI_COMM_WORLD's copy, errors returned */
    double timeout;
    stage stage;
    cugl_mpi_binding where;
    bool fixed; /* --device chose the GPU, not the local rank */
    bool cuda_aware;
    char aware_reason[512];

    int width, height; /* rank 0's framebuffer this frame */
    cugl_mpi_compositor *compositor;
    int composite_width, composite_height; /* the compositor's size */
    /* Elsewhere than rank 0: the framebuffer the rank draws into. */
    GLuint fbo, colour, depth;

    /* allgather: device memory (CUDA-aware MPI) or pinned host memory for
     * every rank's part, and MPI's counts. */
    cugl_memory_resource *stage_mr;
    cugl_buffer *stage_buffer;
    int *counts, *displs;

    /* --bench: sums over the frames. */
    long composites;
    double composite_s, readback_s, mpi_s, write_s;
    uint64_t composite_sent; /* the last composite's bytes this rank sent */
    long exchanges;
    double exchange_s;
    uint64_t exchange_bytes; /* what this rank took in, each exchange */
};

/* --- Agreements --------------------------------------------------------------- */

/* Every rank's `mine` (cut to TEXT bytes) into all[rank * TEXT ...]. */
static cugl_status gather_texts(struct demo_ranks *r, const char *mine, char *all,
                                const char *what)
{
    char text[TEXT];
    snprintf(text, sizeof text, "%s", mine);
    MPI_Request req;
    int err = MPI_Iallgather(text, TEXT, MPI_CHAR, all, TEXT, MPI_CHAR, r->comm, &req);
    if (err != MPI_SUCCESS)
        return cugl_report_error(CUGL_ERROR_INVALID_STATE, "MPI_Iallgather",
                                 "%s: MPI error %d", what, err);
    return cugl_mpi_wait(&req, r->comm, r->timeout, what);
}

/* A rank that did not come within the timeout (its message is in
 * cugl_last_error): the collective is abandoned, and MPI_Finalize could
 * wait for that rank for ever, so every rank ends here. */
static void give_up(demo *d)
{
    fprintf(stderr, "%s: --mpi: %s; ending every rank\n", d->info->program, cugl_last_error());
    fflush(NULL);
    MPI_Abort(d->mpi_state->comm, 1);
}

/* Stop MPI on this rank (every rank comes here at the same stage). */
static void leave(demo *d)
{
    struct demo_ranks *r = d->mpi_state;
    if (!r)
        return;
    cugl_mpi_compositor_destroy(r->compositor);
    if (r->fbo) {
        glDeleteFramebuffers(1, &r->fbo);
        glDeleteTextures(1, &r->colour);
        glDeleteRenderbuffers(1, &r->depth);
    }
    cugl_buffer_release(r->stage_buffer);
    cugl_memory_resource_release(r->stage_mr);
    free(r->counts);
    if (r->comm != MPI_COMM_NULL)
        MPI_Comm_free(&r->comm);
    free(r);
    d->mpi_state = NULL;
    MPI_Finalize();
}

/*
 * Every rank's outcome of `stage_name`: `why` is "" where this rank's went
 * well, else what went wrong. Returns 0 where every rank's went well; else
 * prints on every rank which ranks failed and why, and returns `own` (this
 * rank's status) or 1. A rank that does not come within the timeout is a
 * failure too.
 */
static int agree(demo *d, int own, const char *why, const char *stage_name)
{
    struct demo_ranks *r = d->mpi_state;
    char *all = malloc((size_t)d->rank_count * TEXT);
    if (!all) {
        fprintf(stderr, "%s: --mpi: no memory to hear %d ranks\n", d->info->program,
                d->rank_count);
        return own ? own : 1;
    }
    char what[128];
    snprintf(what, sizeof what, "hearing how every rank's %s went", stage_name);
    if (gather_texts(r, why, all, what) != CUGL_OK)
        give_up(d);
    int failed = 0;
    for (int k = 0; k < d->rank_count; k++) {
        const char *text = all + (size_t)k * TEXT;
        if (!text[0])
            continue;
        if (failed++ < 4)
            fprintf(stderr, "%s: --mpi: rank %d%s failed to %s: %s\n", d->info->program, k,
                    k == d->rank ? " (this one)" : "", stage_name, text);
    }
    if (failed > 4)
        fprintf(stderr, "%s: --mpi: and %d ranks more\n", d->info->program, failed - 4);
    if (failed)
        fprintf(stderr, "%s: --mpi: every rank stops\n", d->info->program);
    free(all);
    return failed ? (own ? own : 1) : 0;
}

/* This rank's outcome, for agree: "" where rc says it went on. */
static const char *outcome_text(char *out, size_t size, int rc, int good)
{
    if (rc == good)
        return "";
    const char *last = demo__last_failure();
    if (last[0])
        snprintf(out, size, "%s (exit status %d)", last, rc);
    else
        snprintf(out, size, "exit status %d (its own message says why)", rc);
    return out;
}

/* --- Start ------------------------------------------------------------------------ */

/* "--size 640x480\n--frames 10\n...": the options every rank must share. */
static void shared_options(const demo *d, char *out, size_t size)
{
    const demo_options *o = &d->opt;
    char size_text[32] = "default", frames[32] = "default";
    if (o->width)
        snprintf(size_text, sizeof size_text, "%dx%d", o->width, o->height);
    if (o->frames)
        snprintf(frames, sizeof frames, "%ld", o->frames);
    int n = snprintf(out, size, "the demo %s\n--size %s\n--frames %s\n--bench %s\n"
                                "--mpi-timeout %g\n",
                     d->info->name, size_text, frames, o->bench ? "given" : "not given",
                     o->mpi_timeout > 0 ? o->mpi_timeout : (double)DEMO_MPI_TIMEOUT);
    int k = 0;
    for (const demo_flag *x = d->info->extra; x && x->name && k < DEMO_MAX_EXTRA; x++, k++) {
        const char *v = o->extra_values[k];
        if (n > 0 && (size_t)n < size)
            n += snprintf(out + n, size - (size_t)n, "%s %s\n", x->name,
                          !v ? "default" : *v ? v : "given");
    }
}

/* The first line of `a` and `b` that differ, as "<name> differs between
 * ranks: <a's value> on rank 0, <b's> on rank k". */
static bool first_difference(char *out, size_t size, const char *a, const char *b, int k)
{
    while (*a || *b) {
        size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");
        if (la != lb || memcmp(a, b, la) != 0) {
            /* The name is the line up to its last space. */
            size_t name = la;
            while (name > 0 && a[name - 1] != ' ')
                name--;
            if (name > 0 && name <= lb && memcmp(a, b, name) == 0)
                snprintf(out, size,
                         "%.*s differs between ranks: %.*s on rank 0, %.*s on rank %d; every "
                         "rank needs the same --size, --frames, --bench, --mpi-timeout and "
                         "the demo's own options",
                         (int)(name - 1), a, (int)(la - name), a + name, (int)(lb - name),
                         b + name, k);
            else
                snprintf(out, size, "the ranks run different things: \"%.*s\" on rank 0, "
                                    "\"%.*s\" on rank %d",
                         (int)la, a, (int)lb, b, k);
            return true;
        }
        a += la + (a[la] == '\n');
        b += lb + (b[lb] == '\n');
    }
    return false;
}

/* The shared options compared; DEMO_RUN, or DEMO_EXIT_USAGE on every rank. */
static int compare_options(demo *d)
{
    struct demo_ranks *r = d->mpi_state;
    char mine[TEXT];
    shared_options(d, mine, sizeof mine);
    char *all = malloc((size_t)d->rank_count * TEXT);
    if (!all) {
        fprintf(stderr, "%s: --mpi: no memory for %d ranks' options\n", d->info->program,
                d->rank_count);
        return 1;
    }
    int rc = DEMO_RUN;
    if (gather_texts(r, mine, all, "comparing the ranks' options") != CUGL_OK)
        give_up(d);
    char why[1024];
    for (int k = 1; k < d->rank_count && rc == DEMO_RUN; k++) {
        if (first_difference(why, sizeof why, all, all + (size_t)k * TEXT, k)) {
            fprintf(stderr, "%s: --mpi: %s\n", d->info->program, why);
            rc = DEMO_EXIT_USAGE;
        }
    }
    free(all);
    return rc;
}

/* What only rank 0 does: its window, its input, its pictures and files. */
static void leave_to_rank_0(demo_options *o)
{
    o->headless = true;
    o->screenshot = NULL;
    o->record = NULL;
    o->serve = false;
    o->ui = false;
    o->input = NULL;
    o->save_input = NULL;
    o->dump_vertices = NULL;
    o->view_count = 0;
}

static int start(demo *d)
{
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized && MPI_Init(NULL, NULL) != MPI_SUCCESS) {
        fprintf(stderr, "%s: --mpi: MPI_Init failed\n", d->info->program);
        return 1;
    }
    struct demo_ranks *r = calloc(1, sizeof *r);
    if (!r) {
        fprintf(stderr, "%s: --mpi: out of host memory\n", d->info->program);
        MPI_Abort(MPI_COMM_WORLD, 1);
        return 1;
    }
    d->mpi_state = r;
    r->comm = MPI_COMM_NULL;
    MPI_Comm_rank(MPI_COMM_WORLD, &d->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &d->rank_count);
    d->rank_info = *d->info;
    snprintf(d->rank_program, sizeof d->rank_program, "%s[rank %d/%d]", d->info->program,
             d->rank, d->rank_count);
    d->rank_info.program = d->rank_program;
    d->info = &d->rank_info;
    r->timeout = d->opt.mpi_timeout > 0 ? d->opt.mpi_timeout : DEMO_MPI_TIMEOUT;
    /* The first meeting: every rank of the job must come to it. */
    MPI_Request req;
    cugl_status st = CUGL_ERROR_INVALID_STATE;
    if (MPI_Comm_idup(MPI_COMM_WORLD, &r->comm, &req) == MPI_SUCCESS)
        st = cugl_mpi_wait(&req, MPI_COMM_WORLD, r->timeout, "meeting the other ranks");
    if (st != CUGL_OK) {
        fprintf(stderr, "%s: --mpi: %s; ending every rank\n", d->info->program,
                st == CUGL_ERROR_INVALID_STATE ? "MPI_Comm_idup failed" : cugl_last_error());
        fflush(NULL);
        MPI_Abort(MPI_COMM_WORLD, 1);
        return 1;
    }
    MPI_Comm_set_errhandler(r->comm, MPI_ERRORS_RETURN);
    /* mpirun hands SIGINT and SIGTERM to every rank: they stop together. */
    demo__stop_on_signals();

    int rc = compare_options(d);
    if (rc != DEMO_RUN) {
        leave(d);
        return rc;
    }

    /* The GPU: by local rank, or --device. A rank without one fails every rank. */
    r->fixed = d->opt.device_given;
    char why[TEXT] = "";
    if (cugl_mpi_bind(&r->where, r->comm,
                      &(cugl_mpi_bind_desc){.fixed = r->fixed, .device = d->opt.device}) !=
        CUGL_OK)
        snprintf(why, sizeof why, "%s", cugl_last_error());
    if (agree(d, why[0] ? 1 : 0, why, "take a GPU") != 0) {
        leave(d);
        return 1;
    }
    d->opt.device = r->where.device;
    d->opt.device_given = true;
    if (d->rank != 0)
        leave_to_rank_0(&d->opt);
    cugl_mpi_cuda_aware(&r->cuda_aware, r->aware_reason, sizeof r->aware_reason);

    char host[64] = "?";
    gethostname(host, sizeof host - 1);
    printf("%s: --mpi: on %s (pid %ld), local rank %d of %d, GPU %d\n", d->info->program, host,
           (long)getpid(), r->where.local_rank, r->where.local_size, r->where.device);
    if (d->rank == 0)
        printf("%s: --mpi: %d ranks; each exchanges through %s: %s\n", d->info->program,
               d->rank_count, r->cuda_aware ? "device memory" : "pinned host memory",
               r->aware_reason);
    fflush(stdout);
    return DEMO_RUN;
}

/* This rank's framebuffer (not rank 0's) at the frame's size. */
static cugl_status make_framebuffer(demo *d, int width, int height)
{
    struct demo_ranks *r = d->mpi_state;
    if (r->fbo) {
        glDeleteFramebuffers(1, &r->fbo);
        glDeleteTextures(1, &r->colour);
        glDeleteRenderbuffers(1, &r->depth);
        r->fbo = r->colour = r->depth = 0;
    }
    cugl_app_drain_gl_errors();
    /* As a headless context's own: RGBA8 and 24-bit depth. */
    glCreateTextures(GL_TEXTURE_2D, 1, &r->colour);
    glTextureStorage2D(r->colour, 1, GL_RGBA8, width, height);
    glCreateRenderbuffers(1, &r->depth);
    glNamedRenderbufferStorage(r->depth, GL_DEPTH_COMPONENT24, width, height);
    glCreateFramebuffers(1, &r->fbo);
    glNamedFramebufferTexture(r->fbo, GL_COLOR_ATTACHMENT0, r->colour, 0);
    glNamedFramebufferRenderbuffer(r->fbo, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, r->depth);
    GLenum status = glCheckNamedFramebufferStatus(r->fbo, GL_FRAMEBUFFER);
    if (status != GL_FRAMEBUFFER_COMPLETE)
        return cugl_report_error(CUGL_ERROR_GL, d->info->program,
                                 "--mpi: this rank's %d x %d framebuffer: status 0x%x", width,
                                 height, status);
    return cugl_app_check_gl(d->info->program, "--mpi: this rank's framebuffer");
}

/* The compositor (and elsewhere than rank 0 the framebuffer) at
 * width x height; collective. */
static cugl_status size_compositor(demo *d, int width, int height)
{
    struct demo_ranks *r = d->mpi_state;
    cugl_mpi_compositor_destroy(r->compositor);
    r->compositor = NULL;
    r->composite_width = r->composite_height = 0;
    cugl_status own = d->rank == 0 ? CUGL_OK : make_framebuffer(d, width, height);
    /* A rank whose framebuffer failed refuses the compositor, so every
     * rank fails with it. */
    cugl_status st = cugl_mpi_compositor_create(
        &r->compositor, r->comm, d->ctx,
        &(cugl_mpi_compositor_desc){
            .width = own == CUGL_OK ? width : -1,
            .height = own == CUGL_OK ? height : -1,
            .mode = d->info->mpi_additive ? CUGL_MPI_COMPOSITE_ADD : CUGL_MPI_COMPOSITE_DEPTH,
            .device = d->device,
            .timeout_seconds = r->timeout});
    if (own != CUGL_OK)
        return own;
    if (st == CUGL_OK) {
        r->composite_width = width;
        r->composite_height = height;
    }
    return st;
}

static int started(demo *d, int rc)
{
    struct demo_ranks *r = d->mpi_state;
    char text[TEXT];
    int failed = agree(d, rc == DEMO_RUN ? 0 : rc, outcome_text(text, sizeof text, rc, DEMO_RUN),
                       "start");
    if (failed) {
        leave(d);
        d->mpi = NULL;
        return failed;
    }

    /* Rank 0's run: its frames and whether it keeps the last (its window
     * or headless), its size; and every rank's GPUs counted, host by host. */
    run_state run = {.frames = d->frames, .fixed_step = d->fixed_step,
                     .pipelined = d->pipelined, .keeps_last = d->keeps_last};
    frame_state first = {0};
    cugl_app_context_size(d->ctx, &first.width, &first.height);
    int gpus = 0, count = 0;
    if (r->where.local_rank == 0 && cugl_device_count(&count) == CUGL_OK)
        gpus = r->fixed ? 1 : r->where.local_size < count ? r->where.local_size : count;
    MPI_Request req[3];
    cugl_status st = CUGL_OK;
    if (MPI_Ibcast(&run, sizeof run, MPI_BYTE, 0, r->comm, &req[0]) != MPI_SUCCESS ||
        MPI_Ibcast(&first, sizeof first, MPI_BYTE, 0, r->comm, &req[1]) != MPI_SUCCESS ||
        MPI_Iallreduce(MPI_IN_PLACE, &gpus, 1, MPI_INT, MPI_SUM, r->comm, &req[2]) !=
            MPI_SUCCESS)
        st = cugl_report_error(CUGL_ERROR_INVALID_STATE, d->info->program,
                               "--mpi: MPI refused to send rank 0's settings");
    for (int i = 0; i < 3 && st == CUGL_OK; i++)
        st = cugl_mpi_wait(&req[i], r->comm, r->timeout, "sending rank 0's settings");
    if (st == CUGL_OK) {
        d->frames = run.frames;
        d->fixed_step = run.fixed_step;
        d->pipelined = run.pipelined;
        d->keeps_last = run.keeps_last;
        d->gpus = gpus > 0 ? gpus : 1;
        r->width = first.width;
        r->height = first.height;
        /* A window minimised from the start gets its compositor at its
         * first frame with a size. */
        if (first.width > 0 && first.height > 0)
            st = size_compositor(d, first.width, first.height);
    }
    if (st == CUGL_ERROR_NOT_READY)
        give_up(d);
    if (st != CUGL_OK) {
        /* Every rank has the same outcome here (the compositor agrees). */
        fprintf(stderr, "%s: --mpi: %s\n", d->info->program, cugl_last_error());
        leave(d);
        d->mpi = NULL;
        return 1;
    }
    if (d->rank == 0)
        printf("%s: --mpi: compositing %s, %dx%d, through %s host memory\n", d->info->program,
               d->info->mpi_additive ? "additively" : "by depth", first.width, first.height,
               strcmp(cugl_mpi_compositor_transport(r->compositor), "host-pinned") == 0
                   ? "pinned"
                   : "pageable");
    r->stage = STAGE_READY;
    return DEMO_RUN;
}

static int run_begin(demo *d)
{
    struct demo_ranks *r = d->mpi_state;
    int rc = agree(d, 0, "", "set up");
    r->stage = rc ? STAGE_DONE : STAGE_RUNNING;
    return rc;
}

static int run_end(demo *d, int rc)
{
    struct demo_ranks *r = d->mpi_state;
    if (rc == 0) {
        r->stage = STAGE_RAN;
        return 0;
    }
    fprintf(stderr, "%s: --mpi: this rank failed in frame %ld (see above), and the others wait "
                    "for it in MPI: ending every rank\n",
            d->info->program, d->frame);
    fflush(NULL);
    MPI_Abort(r->comm, rc);
    return rc;
}

/* --bench: the compositor and the exchanges, the slowest rank's. */
static void print_bench(demo *d)
{
    struct demo_ranks *r = d->mpi_state;
    double n = r->composites > 0 ? (double)r->composites : 1;
    double e = r->exchanges > 0 ? (double)r->exchanges : 1;
    double v[7] = {r->composite_s / n * 1e3, r->readback_s / n * 1e3, r->mpi_s / n * 1e3,
                   r->write_s / n * 1e3,     (double)r->composite_sent,
                   r->exchange_s / e * 1e3,  (double)r->exchange_bytes};
    MPI_Request req;
    if (MPI_Iallreduce(MPI_IN_PLACE, v, 7, MPI_DOUBLE, MPI_MAX, r->comm, &req) != MPI_SUCCESS) {
        fprintf(stderr, "%s: --mpi: --bench: MPI refused the reduction\n", d->info->program);
        return;
    }
    if (cugl_mpi_wait(&req, r->comm, r->timeout, "gathering --bench's figures") != CUGL_OK)
        give_up(d);
    if (d->rank != 0)
        return;
    double image = 4.0 * r->composite_width * r->composite_height *
                   (d->info->mpi_additive ? 1 : 2);
    printf("%s: --mpi: %d ranks on %d GPU%s; the slowest rank's means over %ld frames:\n",
           d->info->program, d->rank_count, d->gpus, d->gpus == 1 ? "" : "s", r->composites);
    printf("%s:   composite %.3f ms (readback %.3f, MPI %.3f, write %.3f), %dx%d %s; a rank "
           "sent at most %.0f bytes (%.3f of the image)\n",
           d->info->program, v[0], v[1], v[2], v[3], r->composite_width, r->composite_height,
           d->info->mpi_additive ? "additive" : "by depth", v[4], image > 0 ? v[4] / image : 0);
    if (r->exchanges > 0)
        printf("%s:   exchange %.3f ms a step, a rank taking in at most %.0f bytes (through "
               "%s)\n",
               d->info->program, v[5], v[6],
               r->cuda_aware ? "device memory" : "pinned host memory");
}

static int finish(demo *d, int status)
{
    struct demo_ranks *r = d->mpi_state;
    char text[TEXT];
    switch (r->stage) {
    case STAGE_STARTING:
        return status; /* start() failed here: started() agrees on it */
    case STAGE_READY:
        /* The demo never ran here: its set-up failed. */
        status = agree(d, status, outcome_text(text, sizeof text, status, 0), "set up");
        break;
    case STAGE_RUNNING:
        return run_end(d, status ? status : 1);
    case STAGE_RAN:
        if (d->opt.bench)
            print_bench(d);
        status = agree(d, status, outcome_text(text, sizeof text, status, 0), "finish");
        break;
    case STAGE_DONE:
        break;
    }
    leave(d);
    d->mpi = NULL;
    return status;
}

/* --- Frames ------------------------------------------------------------------------ */

static cugl_status frame_stop(demo *d, bool *stop)
{
    struct demo_ranks *r = d->mpi_state;
    int flags[2] = {*stop, demo__stop_asked};
    MPI_Request req;
    if (MPI_Iallreduce(MPI_IN_PLACE, flags, 2, MPI_INT, MPI_MAX, r->comm, &req) != MPI_SUCCESS)
        return cugl_report_error(CUGL_ERROR_INVALID_STATE, d->info->program,
                                 "--mpi: MPI refused the ranks' stop");
    cugl_status st = cugl_mpi_wait(&req, r->comm, r->timeout, "agreeing to go on");
    *stop = flags[0] != 0;
    demo__stop_asked = flags[1];
    return st;
}

static cugl_status frame_view(demo *d, const demo_callbacks *cb, void *user)
{
    struct demo_ranks *r = d->mpi_state;
    frame_state f = {0};
    if (d->rank == 0) {
        cugl_app_context_size(d->ctx, &f.width, &f.height);
        f.view_count = cb->view_get ? cb->view_get(d, user, f.view)
                       : cb->camera ? demo_camera_view_get(cb->camera, f.view)
                                    : 0;
    }
    MPI_Request req;
    if (MPI_Ibcast(&f, sizeof f, MPI_BYTE, 0, r->comm, &req) != MPI_SUCCESS)
        return cugl_report_error(CUGL_ERROR_INVALID_STATE, d->info->program,
                                 "--mpi: MPI refused rank 0's view");
    cugl_status st = cugl_mpi_wait(&req, r->comm, r->timeout, "sending rank 0's view");
    if (st != CUGL_OK)
        return st;
    r->width = f.width;
    r->height = f.height;
    if (d->rank == 0 || f.view_count == 0)
        return CUGL_OK;
    const char *why = cb->view_set ? cb->view_set(d, user, f.view, f.view_count)
                      : cb->camera ? demo_camera_view_set(cb->camera, f.view, f.view_count)
                                   : "is one this demo has no view for";
    if (why)
        return cugl_report_error(CUGL_ERROR_INVALID_ARGUMENT, d->info->program,
                                 "--mpi: rank 0's view (%d numbers) %s", f.view_count, why);
    return CUGL_OK;
}

static cugl_status frame_target(demo *d, uint32_t *framebuffer)
{
    struct demo_ranks *r = d->mpi_state;
    d->width = r->width;
    d->height = r->height;
    if (r->width <= 0 || r->height <= 0)
        return CUGL_OK; /* rank 0's window is minimised: no rank draws */
    if (r->width != r->composite_width || r->height != r->composite_height) {
        cugl_status st = size_compositor(d, r->width, r->height);
        if (st != CUGL_OK)
            return st;
    }
    *framebuffer = d->rank == 0 ? cugl_app_context_framebuffer(d->ctx) : r->fbo;
    return CUGL_OK;
}

static cugl_status composite(demo *d, uint32_t framebuffer)
{
    struct demo_ranks *r = d->mpi_state;
    cugl_status st = cugl_mpi_compositor_composite(r->compositor, framebuffer);
    cugl_mpi_composite_stats s;
    if (st == CUGL_OK && cugl_mpi_compositor_stats(&s, r->compositor) == CUGL_OK) {
        r->composites++;
        r->composite_s += s.seconds;
        r->readback_s += s.readback_seconds;
        r->mpi_s += s.mpi_seconds;
        r->write_s += s.write_seconds;
        r->composite_sent = s.bytes_sent;
    }
    return st;
}

/* --- Exchanges --------------------------------------------------------------------- */

/* Memory of `size` bytes that MPI takes: the GPU's where MPI is CUDA-aware. */
static cugl_status stage_memory(demo *d, size_t size)
{
    struct demo_ranks *r = d->mpi_state;
    if (r->stage_buffer && cugl_buffer_size(r->stage_buffer) == size)
        return CUGL_OK;
    cugl_buffer_release(r->stage_buffer);
    r->stage_buffer = NULL;
    cugl_status st = CUGL_OK;
    if (!r->stage_mr)
        st = r->cuda_aware ? cugl_device_memory_resource_create(&r->stage_mr, d->device, NULL)
                           : cugl_legacy_pinned_memory_resource_create(&r->stage_mr, d->device);
    if (st == CUGL_OK)
        st = cugl_memory_resource_allocate(&r->stage_buffer, r->stage_mr, size, d->stream);
    if (st == CUGL_OK && !r->counts) {
        r->counts = calloc(2 * (size_t)d->rank_count, sizeof *r->counts);
        if (!r->counts)
            st = cugl_report_error(CUGL_ERROR_OUT_OF_MEMORY, d->info->program,
                                   "--mpi: no memory for %d ranks' counts", d->rank_count);
        else
            r->displs = r->counts + d->rank_count;
    }
    return st;
}

/* Copy `size` bytes from `from` to `to` (device or pinned memory) on d->stream. */
static cugl_status copy_part(demo *d, uint64_t to, uint64_t from, size_t size)
{
    if (size == 0)
        return CUGL_OK;
    cugl_buffer *dst = NULL, *src = NULL;
    cugl_status st = cugl_buffer_from_handle(&dst, to, size, NULL);
    if (st == CUGL_OK)
        st = cugl_buffer_from_handle(&src, from, size, NULL);
    if (st == CUGL_OK)
        st = cugl_buffer_copy_from(dst, src, d->stream);
    cugl_buffer_release(dst);
    cugl_buffer_release(src);
    return st;
}

static cugl_status allgather(demo *d, uint64_t buffer, size_t size, const size_t *offsets,
                             const size_t *sizes)
{
    struct demo_ranks *r = d->mpi_state;
    double t0 = demo__now_seconds();
    if (size > (size_t)INT_MAX)
        return cugl_report_error(CUGL_ERROR_INVALID_ARGUMENT, d->info->program,
                                 "--mpi: %zu bytes to exchange, more than MPI counts in an int",
                                 size);
    cugl_status st = stage_memory(d, size);
    if (st != CUGL_OK)
        return st;
    for (int k = 0; k < d->rank_count; k++) {
        r->counts[k] = (int)sizes[k];
        r->displs[k] = (int)offsets[k];
    }
    uint64_t staged = cugl_buffer_handle(r->stage_buffer);
    size_t mine = offsets[d->rank], count = sizes[d->rank];
    /* This rank's part out, once the work before it is done. */
    st = copy_part(d, staged + mine, buffer + mine, count);
    if (st == CUGL_OK)
        st = cugl_stream_sync(d->stream);
    if (st != CUGL_OK)
        return st;
    MPI_Request req;
    int err = MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, (void *)(uintptr_t)staged,
                              r->counts, r->displs, MPI_BYTE, r->comm, &req);
    if (err != MPI_SUCCESS)
        return cugl_report_error(CUGL_ERROR_INVALID_STATE, d->info->program,
                                 "--mpi: MPI_Iallgatherv of %zu bytes refused (MPI error %d)",
                                 size, err);
    st = cugl_mpi_wait(&req, r->comm, r->timeout, "exchanging the ranks' parts");
    /* The others' parts in: the ones before this rank's and after it. */
    if (st == CUGL_OK)
        st = copy_part(d, buffer, staged, mine);
    if (st == CUGL_OK)
        st = copy_part(d, buffer + mine + count, staged + mine + count, size - mine - count);
    if (st == CUGL_OK) {
        r->exchanges++;
        r->exchange_s += demo__now_seconds() - t0;
        r->exchange_bytes = size - count;
    }
    return st;
}

static cugl_status max(demo *d, double *values, int count)
{
    struct demo_ranks *r = d->mpi_state;
    MPI_Request req;
    if (MPI_Iallreduce(MPI_IN_PLACE, values, count, MPI_DOUBLE, MPI_MAX, r->comm, &req) !=
        MPI_SUCCESS)
        return cugl_report_error(CUGL_ERROR_INVALID_STATE, d->info->program,
                                 "--mpi: MPI refused a reduction");
    return cugl_mpi_wait(&req, r->comm, r->timeout, "taking the largest of the ranks' figures");
}

const demo_mpi_backend demo_mpi = {
    .start = start,
    .started = started,
    .run_begin = run_begin,
    .run_end = run_end,
    .finish = finish,
    .frame_stop = frame_stop,
    .frame_view = frame_view,
    .frame_target = frame_target,
    .composite = composite,
    .allgather = allgather,
    .max = max,
};
