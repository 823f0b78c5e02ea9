/*
 * cugl-nbody: all-pairs gravity between the bodies of two colliding spiral
 * galaxies (65,536 by default). Every frame one CUDA kernel advances every
 * body one fixed step, pulling tiles of positions through shared memory
 * (kernels/demos/nbody.cu); it reads the positions from one of two buffers
 * and writes them into the other, and the two swap roles each frame. GL
 * draws the new positions as additive point sprites coloured by speed,
 * which it reads off the two buffers (the step's displacement is v dt).
 * Velocities stay in a device buffer that only CUDA touches.
 *
 * The position buffers are two interop targets (common/target.h) that
 * CUDA takes together each step, the one read READ_ONLY and the one
 * written WRITE_DISCARD: on the map path both are mapped in one call. The
 * kernel and its launch are the same on every path, so every path computes
 * the same bits and draws the same picture.
 *
 * --devices N1,N2,... splits the bodies into one slice a GPU. The position
 * buffers are then shared memory of the GL GPU that every GPU writes: each
 * step, each GPU other than the GL GPU copies all positions into memory of
 * its own over its peer path, integrates its slice (its velocities are its
 * own) and writes the slice's new positions straight into the GL GPU's
 * buffer. The first device's stream forks the step to the others through an
 * event and joins them before GL's turn; a body's result does not depend on
 * the slice it is in, so any split computes the same bits.
 *
 * --mpi (common/demo_mpi.h) splits them over MPI's ranks instead, each on its
 * GPU with all positions in its own buffers: a rank steps its slice, then
 * the ranks' new slices go to every rank (MPI_Allgatherv), and each draws
 * its own slice alone. Their light adds up: rank 0 lays the background,
 * the others clear to nothing, and the compositor adds the pictures with
 * GL's saturation, so rank 0 shows what one process draws.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/demo.h"
#include "common/demo_mpi.h"

#if CUGL_APP_HAS_UI
#include <cugl/app_ui.h>
#endif
#include "common/target.h"
#include "nbody_math.h"

extern const unsigned char cugl_nbody_fatbin[];
extern const size_t cugl_nbody_fatbin_size;
extern const unsigned char cugl_shader_nbody_vert[];
extern const unsigned char cugl_shader_nbody_frag[];

static long bodies_asked = NBODY_DEFAULT_BODIES; /* --bodies */

static const char *parse_bodies(const char *value, void *user)
{
    long n;
    if (!demo_parse_long(value, 1, NBODY_MAX_BODIES, &n))
        return "is not a number from 1 to 16777216"; /* NBODY_MAX_BODIES */
    *(long *)user = n;
    return NULL;
}

static const demo_flag nbody_flags[] = {
    {"--bodies", "N", "the number of bodies, 1 to 16777216 (default 65536)", parse_bodies,
     &bodies_asked},
    {0},
};

static const demo_info info = {
    .program = "cugl-nbody",
    .name = "nbody",
    .summary =
        "All-pairs gravity of two colliding spiral galaxies: every frame a CUDA kernel\n"
        "advances each body one step (tiles of bodies in shared memory), reading the\n"
        "positions from one GL vertex buffer and writing them into another; GL draws\n"
        "them as glowing points coloured by speed. The buffers swap roles each frame.\n"
        "A step of N bodies costs N^2 interactions.\n"
        "\n"
        "The interop paths here: map registers both GL buffers once and maps them\n"
        "together every frame, the one read READ_ONLY, the one written WRITE_DISCARD;\n"
        "shared makes both of CUDA memory that GL imports, mapping nothing; host keeps\n"
        "them in device memory and uploads each frame's positions through pinned host\n"
        "memory. All three draw the same picture. --bench adds the step kernel's\n"
        "interactions per second and GFLOP/s (20 flops an interaction, CUDA events)\n"
        "and the GPU's peak FP32 rate. --dump-vertices writes the last positions,\n"
        "4 floats a body: x, y, z, mass. With --mpi, MPI's ranks share the bodies\n"
        "(mpirun -np N cugl-nbody --mpi), each on its GPU.",
    .view = DEMO_VIEW_ORBIT,
    .controls = "  left drag, arrow keys, W/A/S/D   orbit\n"
                "  right drag                       pan\n"
                "  wheel                            zoom\n"
                "  R                                reset the camera\n"
                "  Escape                           quit\n",
    .dump_vertices = true,
    .multi_device = true,
    .extra = nbody_flags,
    .mpi = &demo_mpi,
    .mpi_additive = true,
};

enum { TIMING_SLOTS = 8 }; /* steps whose kernel times are read later */

#define SPRITE_SIZE 0.02f /* a body's sprite across, in world units */
#define BRIGHT_SPEED 2.2f /* the speed drawn in the fastest colour */

/* One GPU's slice of the bodies. Part 0 runs on d->device with d->stream
 * and d->module; the others own theirs. */
typedef struct nbody_part {
    cugl_device *device;
    long first, count;
    cugl_stream *stream;      /* part 0: d->stream, not owned */
    cugl_module *module;      /* part 0: NULL (d->module) */
    cugl_kernel *kernel;      /* nbody_step or nbody_step2 (nbody_per_thread) */
    int per_thread;           /* bodies a thread of it steps */
    cugl_memory_resource *mr;
    cugl_buffer *vel;         /* the slice's velocities */
    cugl_buffer *local;       /* all positions, copied over the peer path each
                               * step; NULL where the kernel reads them in place */
    cugl_event *done;         /* parts after 0: after the slice's kernel */
} nbody_part;

typedef struct nbody {
    long n;
    long first, count; /* the bodies this rank steps and draws: all in one process */
    size_t *offsets, *sizes; /* --mpi: each rank's positions, bytes into a buffer */
    nbody_part parts[DEMO_MAX_DEVICES];
    int part_count;
    cugl_event *fork;         /* several parts: d->stream reached the step */
    size_t bytes; /* of one position buffer: 4 floats a body */
    int cur;      /* the buffer (0 or 1) with the latest positions */
    long stepped; /* the frame whose step was taken last; -1: none */
    cugl_app_target *pos[2]; /* the positions, CUDA's and GL's by turns */
    /* Where a part copies them from another GPU (parts with `local`):
     * pos[i]'s bytes as a buffer, made at its first turn (shared memory
     * stays put when not pipelined); else NULL. */
    bool copies;
    cugl_buffer *pos_bytes[2];
    GLuint program, vao;
    cugl_app_camera camera;
    /* --bench: events around each step's kernel, read TIMING_SLOTS steps
     * later, when they have long completed */
    cugl_event *started[TIMING_SLOTS], *ended[TIMING_SLOTS];
    bool timed[TIMING_SLOTS];
    long steps;
    long steps_timed;
    double step_ms; /* their sum */
} nbody;

/* --- Set-up ----------------------------------------------------------------- */

/* Attribute 0: this frame's positions (binding 0), 1: the last frame's (binding 1). */
static void make_vertex_array(nbody *s)
{
    glCreateVertexArrays(1, &s->vao);
    for (GLuint a = 0; a < 2; a++) {
        glEnableVertexArrayAttrib(s->vao, a);
        glVertexArrayAttribFormat(s->vao, a, 4, GL_FLOAT, GL_FALSE, 0);
        glVertexArrayAttribBinding(s->vao, a, a);
    }
}

/* Both galaxies in view, from above their orbital plane. */
static void camera_home(cugl_app_camera *camera)
{
    cugl_app_camera_init(camera);
    camera->distance = 6.2f;
    camera->pitch = 0.62f;
}

/*
 * Slice k of `slices` of n bodies: [*first, *first + *count). Slices differ
 * by at most one tile, each a whole number of tiles but the last.
 */
static void slice_of(long n, int k, int slices, long *first, long *count)
{
    long tiles = (n + NBODY_BLOCK - 1) / NBODY_BLOCK;
    long first_tile = tiles * k / slices, end_tile = tiles * (k + 1) / slices;
    *first = first_tile * NBODY_BLOCK;
    *count = (end_tile * NBODY_BLOCK < n ? end_tile * NBODY_BLOCK : n) - *first;
    if (*count < 0)
        *count = 0;
}

/*
 * Part i: its slice (of this rank's), stream, kernel and velocities, and a
 * buffer for all positions where it reads them from another GPU's memory.
 */
static cugl_status make_part(nbody *s, demo *d, int i, const float *vel)
{
    nbody_part *p = &s->parts[i];
    p->device = d->devices[i];
    slice_of(s->n, d->rank * s->part_count + i, d->rank_count * s->part_count, &p->first,
             &p->count);
    cugl_device_properties props;
    cugl_status st = cugl_device_get_properties(p->device, &props);
    if (st != CUGL_OK)
        return st;
    p->per_thread = nbody_per_thread(p->count, props.multiprocessor_count);
    const char *kernel = p->per_thread == 1 ? "nbody_step" : "nbody_step2";
    if (i == 0) {
        p->stream = d->stream;
        st = demo_kernel(&p->kernel, d, kernel);
    } else {
        st = cugl_stream_create(&p->stream, p->device, NULL);
        if (st == CUGL_OK)
            st = cugl_module_load_data(&p->module, p->device, cugl_nbody_fatbin,
                                       cugl_nbody_fatbin_size);
        if (st == CUGL_OK)
            st = cugl_module_get_kernel(&p->kernel, p->module, kernel);
        if (st == CUGL_OK)
            st = cugl_event_create(&p->done, p->device, &(cugl_event_desc){.timing = false});
    }
    size_t slice = (size_t)(p->count > 0 ? p->count : 1) * 4 * sizeof(float);
    if (st == CUGL_OK)
        st = cugl_device_memory_resource_create(&p->mr, p->device, NULL);
    if (st == CUGL_OK)
        st = cugl_memory_resource_allocate(&p->vel, p->mr, slice, p->stream);
    cugl_buffer *host = NULL;
    if (st == CUGL_OK && p->count > 0)
        st = cugl_buffer_from_handle(&host, (uint64_t)(uintptr_t)(vel + 4 * p->first), slice,
                                     NULL);
    if (host && st == CUGL_OK)
        st = cugl_buffer_copy_from(p->vel, host, p->stream);
    if (host && st == CUGL_OK)
        st = cugl_stream_sync(p->stream); /* before the host memory goes */
    cugl_buffer_release(host);
    if (st == CUGL_OK && d->opt.interop == CUGL_APP_INTEROP_SHARED && p->device != d->gl_device)
        st = cugl_memory_resource_allocate(&p->local, p->mr, s->bytes, p->stream);
    return st;
}

/* The bodies, the buffers of the chosen path, the kernel, the shaders. */
static int nbody_create(nbody *s, demo *d)
{
    camera_home(&s->camera);
    if (demo_load_module(d, cugl_nbody_fatbin, cugl_nbody_fatbin_size) != CUGL_OK)
        return demo_fail(d, "cannot load the kernel");
    if (cugl_app_program(&s->program, "nbody", (const char *)cugl_shader_nbody_vert,
                         (const char *)cugl_shader_nbody_frag) != CUGL_OK)
        return demo_fail(d, "cannot build the shaders");

    s->bytes = (size_t)s->n * 4 * sizeof(float);
    float *pos = malloc(s->bytes), *vel = malloc(s->bytes);
    if (!pos || !vel) {
        free(pos);
        free(vel);
        fprintf(stderr, "%s: cannot allocate 2 x %zu bytes for %ld bodies\n", d->info->program,
                s->bytes, s->n);
        return 1;
    }
    nbody_initial_conditions(pos, vel, s->n);
    slice_of(s->n, d->rank, d->rank_count, &s->first, &s->count);
    if (d->mpi) {
        s->offsets = calloc(2 * (size_t)d->rank_count, sizeof *s->offsets);
        if (!s->offsets) {
            free(pos);
            free(vel);
            fprintf(stderr, "%s: no memory for %d ranks' slices\n", d->info->program,
                    d->rank_count);
            return 1;
        }
        s->sizes = s->offsets + d->rank_count;
        for (int r = 0; r < d->rank_count; r++) {
            long first, count;
            slice_of(s->n, r, d->rank_count, &first, &count);
            s->offsets[r] = (size_t)first * 4 * sizeof(float);
            s->sizes[r] = (size_t)count * 4 * sizeof(float);
        }
        printf("%s: --mpi: bodies %ld to %ld of %ld on this rank\n", d->info->program,
               s->first, s->first + s->count - 1, s->n);
    }

    s->part_count = d->device_count;
    cugl_status st = CUGL_OK;
    for (int i = 0; i < s->part_count && st == CUGL_OK; i++)
        st = make_part(s, d, i, vel);
    if (st == CUGL_OK && s->part_count > 1)
        st = cugl_event_create(&s->fork, d->device, &(cugl_event_desc){.timing = false});
    free(vel);
    if (st != CUGL_OK) {
        free(pos);
        return demo_fail(d, "cannot set up the step on every device");
    }
    /* The first buffer holds the initial positions. */
    for (int i = 0; i < 2 && st == CUGL_OK; i++)
        st = demo_target_create_buffer(&s->pos[i], d, s->bytes, CUGL_APP_TO_GL,
                                       i == 0 ? pos : NULL);
    free(pos);
    if (st != CUGL_OK)
        return demo_target_fail(d, st, "the position buffers");
    for (int i = 0; i < s->part_count; i++)
        s->copies = s->copies || s->parts[i].local;
    make_vertex_array(s);
    if (s->part_count > 1) {
        printf("%s: %d slices:", d->info->program, s->part_count);
        for (int i = 0; i < s->part_count; i++)
            printf(" %ld on device %d%s", s->parts[i].count, d->opt.compute[i],
                   i + 1 < s->part_count ? "," : "\n");
    }

    if (d->opt.bench) {
        for (int i = 0; i < TIMING_SLOTS && st == CUGL_OK; i++) {
            st = cugl_event_create(&s->started[i], d->device, &(cugl_event_desc){.timing = true});
            if (st == CUGL_OK)
                st = cugl_event_create(&s->ended[i], d->device,
                                       &(cugl_event_desc){.timing = true});
        }
        if (st != CUGL_OK)
            return demo_fail(d, "cannot create the timing events");
    }
    return 0;
}

static void nbody_destroy(nbody *s)
{
    /* Queued steps may still use the buffers. */
    for (int i = 0; i < s->part_count; i++)
        if (s->parts[i].stream)
            cugl_stream_sync(s->parts[i].stream);
    for (int i = 0; i < 2; i++) {
        cugl_buffer_release(s->pos_bytes[i]);
        cugl_app_target_destroy(s->pos[i]);
    }
    for (int i = 0; i < TIMING_SLOTS; i++) {
        cugl_event_release(s->started[i]);
        cugl_event_release(s->ended[i]);
    }
    for (int i = 0; i < s->part_count; i++) {
        nbody_part *p = &s->parts[i];
        cugl_buffer_release(p->vel);
        cugl_buffer_release(p->local);
        cugl_memory_resource_release(p->mr);
        cugl_kernel_release(p->kernel);
        cugl_module_release(p->module);
        cugl_event_release(p->done);
        if (i > 0)
            cugl_stream_release(p->stream);
    }
    cugl_event_release(s->fork);
    free(s->offsets);
    glDeleteVertexArrays(1, &s->vao);
    glDeleteProgram(s->program);
}

/* --- A frame ------------------------------------------------------------------ */

/* Add a timed step's kernel time to the sums (it completed long ago). */
static cugl_status collect_time(nbody *s, int slot)
{
    if (!s->timed[slot])
        return CUGL_OK;
    s->timed[slot] = false;
    float ms = 0.0f;
    cugl_status st = cugl_event_sync(s->ended[slot]);
    if (st == CUGL_OK)
        st = cugl_event_elapsed_ms(&ms, s->started[slot], s->ended[slot]);
    if (st == CUGL_OK) {
        s->step_ms += ms;
        s->steps_timed++;
    }
    return st;
}

/* Part p's share of a step: all positions at `src` (copied here first
 * from `all`, their bytes, where they are another GPU's), its slice's new
 * ones into `dst`. */
static cugl_status launch_part(nbody *s, nbody_part *p, cugl_buffer *all, uint64_t src,
                               uint64_t dst)
{
    if (p->count == 0)
        return CUGL_OK;
    cugl_status st = CUGL_OK;
    if (p->local) {
        st = cugl_buffer_copy_from(p->local, all, p->stream);
        src = cugl_buffer_handle(p->local);
    }
    uint64_t vel = cugl_buffer_handle(p->vel);
    int n = (int)s->n, first = (int)p->first, count = (int)p->count;
    float dt = NBODY_DT, eps2 = NBODY_SOFTENING * NBODY_SOFTENING;
    void *args[] = {&src, &dst, &vel, &n, &first, &count, &dt, &eps2};
    cugl_launch_config grid = {
        .grid = {(uint32_t)nbody_blocks(p->count, p->per_thread), 1, 1},
        .block = {NBODY_BLOCK, 1, 1},
    };
    if (st == CUGL_OK)
        st = cugl_launch(p->stream, &grid, p->kernel, args, 8);
    return st;
}

/*
 * The step on every part: the others wait for d->stream to reach it (the
 * fork), run their slices, and d->stream waits for each (the join), so
 * that to GL and the timing events the step is work on d->stream.
 */
static cugl_status launch_parts(nbody *s, demo *d, uint64_t src, uint64_t dst)
{
    cugl_status st = CUGL_OK;
    if (s->part_count > 1)
        st = cugl_event_record(s->fork, d->stream);
    for (int i = 1; i < s->part_count && st == CUGL_OK; i++)
        st = cugl_stream_wait_event(s->parts[i].stream, s->fork);
    for (int i = 0; i < s->part_count && st == CUGL_OK; i++)
        st = launch_part(s, &s->parts[i], s->pos_bytes[s->cur], src, dst); /* cur: src's */
    for (int i = 1; i < s->part_count && st == CUGL_OK; i++) {
        st = cugl_event_record(s->parts[i].done, s->parts[i].stream);
        if (st == CUGL_OK)
            st = cugl_stream_wait_event(d->stream, s->parts[i].done);
    }
    return st;
}

/* The step, with --bench's events around it: positions from `src` into
 * `dst`, velocities in place. */
static cugl_status launch_step(nbody *s, demo *d, uint64_t src, uint64_t dst)
{
    int slot = (int)(s->steps % TIMING_SLOTS);
    bool timing = s->started[slot] != NULL;
    cugl_status st = CUGL_OK;
    if (timing) {
        st = collect_time(s, slot);
        if (st == CUGL_OK)
            st = cugl_event_record(s->started[slot], d->stream);
        if (st != CUGL_OK)
            return st;
    }
    demo_phase_begin(d, DEMO_PHASE_CUDA, "cuda", true);
    st = launch_parts(s, d, src, dst);
    demo_phase_end(d, DEMO_PHASE_CUDA);
    if (st == CUGL_OK && timing) {
        st = cugl_event_record(s->ended[slot], d->stream);
        s->timed[slot] = st == CUGL_OK;
    }
    s->steps++;
    return st;
}

/* With --mpi: every rank's new slice of `positions` to every rank. */
static cugl_status exchange(nbody *s, demo *d, uint64_t positions)
{
    demo_phase_begin(d, DEMO_PHASE_EXCHANGE, "exchange", true);
    cugl_status st = d->mpi->allgather(d, positions, s->bytes, s->offsets, s->sizes);
    demo_phase_end(d, DEMO_PHASE_EXCHANGE);
    return st;
}

/* CUDA's turn on the two position buffers begins: the newest (io[0])
 * read, the other (io[1]) written. On failure no turn is open. */
static cugl_status step_turn_begin(nbody *s, demo *d, demo_io io[2])
{
    int src = s->cur, dst = 1 - s->cur;
    cugl_status st = cugl_app_target_set_cuda_use(s->pos[src], CUGL_APP_CUDA_READS);
    if (st == CUGL_OK)
        st = cugl_app_target_set_cuda_use(s->pos[dst], CUGL_APP_CUDA_WRITES);
    cugl_app_target *both[2] = {s->pos[src], s->pos[dst]};
    if (st == CUGL_OK)
        st = demo_targets_cuda_begin(d, both, 2, io);
    if (st != CUGL_OK)
        return st;
    for (int i = 0; i < 2 && s->copies && st == CUGL_OK; i++)
        if (!s->pos_bytes[i == 0 ? src : dst])
            st = cugl_buffer_from_handle(&s->pos_bytes[i == 0 ? src : dst], io[i].source.ptr,
                                         s->bytes, NULL);
    if (st != CUGL_OK)
        (void)demo_targets_cuda_end(d, both, 2);
    return st;
}

/* CUDA's turn: one step, the newest positions into the other buffer. */
static cugl_status step(nbody *s, demo *d)
{
    int src = s->cur, dst = 1 - s->cur;
    cugl_app_target *both[2] = {s->pos[src], s->pos[dst]};
    demo_io io[2];
    cugl_status st = step_turn_begin(s, d, io);
    if (st != CUGL_OK)
        return st;
    st = launch_step(s, d, io[0].source.ptr, io[1].dest.ptr);
    if (st == CUGL_OK && d->mpi)
        st = exchange(s, d, io[1].dest.ptr);
    /* GL must get its buffers back even when the launch failed. */
    cugl_status end = demo_targets_cuda_end(d, both, 2);
    s->cur = dst;
    return st != CUGL_OK ? st : end;
}

/* This rank's bodies as additive point sprites; their light adds up, no
 * depth. With --mpi, the other ranks' add to it in the composite, over
 * rank 0's background. */
static void draw(nbody *s, demo *d)
{
    float view[16], proj[16];
    cugl_app_camera_matrices(view, proj, &s->camera, (float)d->width / (float)d->height);
    glVertexArrayVertexBuffer(s->vao, 0, cugl_app_target_gl_name(s->pos[s->cur]), 0,
                              4 * sizeof(float));
    glVertexArrayVertexBuffer(s->vao, 1, cugl_app_target_gl_name(s->pos[1 - s->cur]), 0,
                              4 * sizeof(float));
    if (d->rank == 0)
        glClearColor(0.005f, 0.006f, 0.014f, 1.0f);
    else
        glClearColor(0.0f, 0.0f, 0.0f, 0.0f);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
    glDisable(GL_DEPTH_TEST);
    glEnable(GL_BLEND);
    glBlendFunc(GL_SRC_ALPHA, GL_ONE);
    glEnable(GL_PROGRAM_POINT_SIZE);
    glUseProgram(s->program);
    glUniformMatrix4fv(0, 1, GL_FALSE, view);
    glUniformMatrix4fv(1, 1, GL_FALSE, proj);
    /* proj[5] is cot(fov/2): pixels per world unit at distance 1 are
     * proj[5] * height / 2. */
    glUniform1f(2, SPRITE_SIZE * proj[5] * 0.5f * (float)d->height);
    glUniform1f(3, 1.0f / (NBODY_DT * BRIGHT_SPEED));
    /* Fewer bodies are fainter crowds: each shines brighter, up to a limit. */
    glUniform1f(4, fminf(0.6f * sqrtf((float)NBODY_DEFAULT_BODIES / (float)s->n), 1.0f));
    glBindVertexArray(s->vao);
    glDrawArrays(GL_POINTS, (GLint)s->first, (GLsizei)s->count);
    glBindVertexArray(0);
    glDisable(GL_PROGRAM_POINT_SIZE);
    glDisable(GL_BLEND);
}

static void update(demo *d, void *user)
{
    nbody *s = user;
    cugl_app_camera_update(&s->camera, d->ctx, d->dt);
    if (demo_camera_was_reset(d)) /* the camera's reset is for a smaller scene */
        camera_home(&s->camera);
}

static cugl_status render(demo *d, void *user)
{
    nbody *s = user;
    cugl_status st = CUGL_OK;
    /* A frame drawn again (a screenshot after the window closed) shows
     * the same positions: one step a frame. */
    if (d->frame != s->stepped) {
        st = step(s, d);
        s->stepped = d->frame;
    }
    cugl_app_target *both[2] = {s->pos[s->cur], s->pos[1 - s->cur]};
    if (st == CUGL_OK)
        st = cugl_app_targets_gl_begin(both, 2);
    if (st != CUGL_OK)
        return st;
    demo_phase_begin(d, DEMO_PHASE_DRAW, "draw", false);
    draw(s, d);
    demo_phase_end(d, DEMO_PHASE_DRAW);
    return cugl_app_targets_gl_end(both, 2);
}

/* --- After the run -------------------------------------------------------------- */

/* --dump-vertices: the latest positions as GL holds them, 4 floats a body. */
static int dump_positions(nbody *s, demo *d)
{
    if (demo_target_dump(s->pos[s->cur], d) != 0)
        return 1;
    printf("%s: wrote %s (%ld bodies of 4 floats: x, y, z, mass; after %ld steps)\n",
           d->info->program, d->opt.dump_vertices, s->n, s->steps);
    return 0;
}

/* FP32 lanes (CUDA cores) per SM of a compute capability; 0 if unknown. */
static int fp32_lanes_per_sm(int major, int minor)
{
    switch (major) {
    case 5:
        return 128;
    case 6:
        return minor == 0 ? 64 : 128; /* P100; the other Pascals */
    case 7:
        return 64; /* Volta, Turing */
    case 8:
        return minor == 0 ? 64 : 128; /* A100; GA10x, Orin, Ada */
    case 9:
    case 10:
    case 11:
    case 12:
        return 128; /* Hopper, Blackwell */
    default:
        return 0;
    }
}

/* The velocities of every part into `saved` (made here) or back from it:
 * what timing steps after the run changes, put back. */
static cugl_status keep_velocities(nbody *s, cugl_buffer **saved, bool back)
{
    cugl_status st = CUGL_OK;
    for (int i = 0; i < s->part_count && st == CUGL_OK; i++) {
        nbody_part *p = &s->parts[i];
        if (!back)
            st = cugl_memory_resource_allocate(&saved[i], p->mr, cugl_buffer_size(p->vel),
                                               p->stream);
        if (st == CUGL_OK)
            st = back ? cugl_buffer_copy_from(p->vel, saved[i], p->stream)
                      : cugl_buffer_copy_from(saved[i], p->vel, p->stream);
        if (st == CUGL_OK)
            st = cugl_stream_sync(p->stream);
    }
    return st;
}

/*
 * --bench: the step kernel's own time, the median of STEPS_ALONE steps
 * taken after the run with nothing else on the GPU. In the frames, the
 * events around a step may also time GL's work of the frame: with the
 * turns waiting on the GPU, GL's work is queued right beside the step and
 * the two contexts take turns on the GPU within it (on an H200, 2.66 ms a
 * step of 65,536 bodies so timed, 2.29 ms alone). The step reads the
 * newest positions and writes the other buffer, and the velocities are
 * put back after, so that what the run leaves (--dump-vertices) is as it
 * was.
 */
enum { STEPS_ALONE = 9 };

static cugl_status time_step_alone(nbody *s, demo *d, double *ms, double *fastest)
{
    *ms = *fastest = 0;
    glFinish();
    cugl_app_target *both[2] = {s->pos[s->cur], s->pos[1 - s->cur]};
    cugl_buffer *saved[DEMO_MAX_DEVICES] = {0};
    demo_io io[2];
    cugl_status st = step_turn_begin(s, d, io);
    if (st != CUGL_OK)
        return st;
    st = keep_velocities(s, saved, false);
    double t[STEPS_ALONE];
    for (int k = 0; k < STEPS_ALONE && st == CUGL_OK; k++) {
        float elapsed = 0.0f;
        st = cugl_event_record(s->started[0], d->stream);
        if (st == CUGL_OK)
            st = launch_parts(s, d, io[0].source.ptr, io[1].dest.ptr);
        if (st == CUGL_OK)
            st = cugl_event_record(s->ended[0], d->stream);
        if (st == CUGL_OK)
            st = cugl_event_sync(s->ended[0]);
        if (st == CUGL_OK)
            st = cugl_event_elapsed_ms(&elapsed, s->started[0], s->ended[0]);
        t[k] = elapsed;
    }
    if (st == CUGL_OK) {
        qsort(t, STEPS_ALONE, sizeof t[0], demo_cmp_double);
        *ms = t[STEPS_ALONE / 2];
        *fastest = t[0];
    }
    cugl_status back = saved[0] ? keep_velocities(s, saved, true) : CUGL_OK;
    for (int i = 0; i < s->part_count; i++)
        cugl_buffer_release(saved[i]);
    cugl_status end = demo_targets_cuda_end(d, both, 2);
    return st != CUGL_OK ? st : back != CUGL_OK ? back : end;
}

/* --bench: the step kernel's rate against the GPU's peak, and the rate
 * with every step drawn. With --mpi, collective: the slowest rank's step
 * (every rank waits for it each frame), printed by rank 0. */
static int print_rates(nbody *s, demo *d)
{
    const char *program = d->info->program;
    int rc = 0;
    for (int i = 0; i < TIMING_SLOTS; i++)
        if (collect_time(s, i) != CUGL_OK && rc == 0)
            rc = demo_fail(d, "cannot read the step kernel's timing events");
    double alone = 0, fastest = 0;
    if (rc == 0 && time_step_alone(s, d, &alone, &fastest) != CUGL_OK)
        rc = demo_fail(d, "cannot time the step alone after the run");
    double frame_ms = 0;
    cugl_app_timer_stats(NULL, NULL, &frame_ms, d->timer);
    double slowest[4] = {alone, frame_ms,
                         s->steps_timed > 0 ? s->step_ms / (double)s->steps_timed : 0, fastest};
    if (d->mpi && d->mpi->max(d, slowest, 4) != CUGL_OK)
        return demo_fail(d, "--bench: the ranks' step times");
    if (rc != 0 || d->rank != 0 || s->steps_timed == 0)
        return rc;
    double ms = slowest[0];
    frame_ms = slowest[1];
    double per_second = (double)s->n * (double)s->n / (ms * 1e-3);
    double gflops = per_second * NBODY_FLOPS_PER_INTERACTION * 1e-9;
    printf("%s: %ld bodies, %d steps: %.4f ms a step (GPU time of the step%s alone on the "
           "GPU after the run, CUDA events: the median; the fastest %.4f ms; in the frames "
           "%.4f ms, the mean of %ld, %s)\n",
           program, s->n, STEPS_ALONE, ms,
           d->mpi              ? " kernel on the slowest rank"
           : s->part_count > 1 ? " on every device, fork to join"
                               : " kernel",
           slowest[3], slowest[2], s->steps_timed,
           demo_turns_wait_on_gpu(d)
               ? "the turns waiting on the GPU, so GL's work of the frame may be in it"
               : "GL's work waited for on the CPU");
    printf("%s: %.4g interactions/s, %.1f GFLOP/s at %d flops an interaction\n", program,
           per_second, gflops, NBODY_FLOPS_PER_INTERACTION);
    if (frame_ms > 0)
        printf("%s: with every step drawn: %.4g interactions a second (%.3f ms a frame%s)\n",
               program, (double)s->n * (double)s->n / (frame_ms * 1e-3), frame_ms,
               d->mpi ? ", the slowest rank's" : "");
    if (d->opt.interop == CUGL_APP_INTEROP_HOST)
        printf("%s: (on the host path nothing orders the step after GL's drawing of the last\n"
               "  frame, so the two share the GPU and the step's time includes some of GL's)\n",
               program);
    cugl_device_properties p;
    if (cugl_device_get_properties(d->device, &p) != CUGL_OK)
        return demo_fail(d, "cannot read the device's properties");
    int lanes = fp32_lanes_per_sm(p.compute_capability_major, p.compute_capability_minor);
    if (lanes == 0 || p.clock_rate_khz <= 0) {
        printf("%s: peak FP32 of %s unknown (compute capability %d.%d, clock %d kHz)\n",
               program, p.name, p.compute_capability_major, p.compute_capability_minor,
               p.clock_rate_khz);
        return 0;
    }
    /* Every GPU of --devices or of the ranks is taken to be like this one. */
    double peak = (double)p.multiprocessor_count * lanes * 2.0 * p.clock_rate_khz * 1e-6 *
                  d->gpus;
    printf("%s: peak FP32 of %d x %s (compute capability %d.%d): %d SMs x %d lanes x 2 flops x "
           "%.0f MHz = %.1f GFLOP/s; the step reaches %.1f%% of it\n",
           program, d->gpus, p.name, p.compute_capability_major, p.compute_capability_minor,
           p.multiprocessor_count * d->gpus, lanes, p.clock_rate_khz * 1e-3, peak,
           100.0 * gflops / peak);
    return 0;
}

#if CUGL_APP_HAS_UI
/* The panel: the bodies and the step kernel's rate so far. */
static void panel(demo *d, void *user, cugl_app_ui *ui)
{
    (void)d;
    nbody *s = user;
    cugl_app_ui_text(ui, "%ld bodies (--bodies), %.3g interactions a step", s->n,
                     (double)s->n * (double)s->n);
    if (s->steps_timed > 0)
        cugl_app_ui_text(ui, "step %.3f ms: %.4g interactions/s",
                         s->step_ms / (double)s->steps_timed,
                         (double)s->n * (double)s->n / (s->step_ms / (double)s->steps_timed * 1e-3));
}
#endif

int main(int argc, char **argv)
{
    demo d;
    int rc = demo_start(&d, &info, argc, argv);
    if (rc != DEMO_RUN)
        return rc;
    nbody s = {.n = bodies_asked, .stepped = -1};
    printf("%s: %ld bodies, %.4g interactions a step\n", d.info->program, s.n,
           (double)s.n * (double)s.n);
    rc = nbody_create(&s, &d);
    if (rc == 0)
        rc = demo_run(&d,
                      &(demo_callbacks){.update = update,
                                        .render = render,
                                        .camera = &s.camera,
                                        .panel = DEMO_PANEL(panel)},
                      &s);
    /* The rates first: with --mpi every rank takes part. */
    if (rc == 0 && d.opt.bench)
        rc = print_rates(&s, &d);
    if (rc == 0 && d.opt.dump_vertices)
        rc = dump_positions(&s, &d);
    nbody_destroy(&s);
    return demo_finish(&d, rc);
}
