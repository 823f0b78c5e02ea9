/*
 * target.c - see target.h.
 */
#include "target.h"
#include "demo_internal.h"

#include <stdlib.h>

/* The desc every demo target starts from: the demo's path, device, writers
 * (shared memory alone takes them) and timer. */
static cugl_app_target_desc base_desc(demo *d, cugl_device **writers)
{
    cugl_app_target_desc desc = {
        .interop = d->opt.interop,
        .device = d->device,
        /* The hand-over probe runs before the frames are timed. */
        .timer = d->turns.handover_probe ? NULL : d->timer,
    };
    if (d->opt.interop == CUGL_APP_INTEROP_SHARED) {
        for (int i = 0; i < d->device_count; i++)
            if (d->devices[i] != d->gl_device)
                writers[desc.writer_count++] = d->devices[i];
        desc.writers = writers;
    }
    return desc;
}

/* Whether a target CUDA writes whole each turn is pipelined here. The map
 * path gains nothing from it on the GPUs measured (a map waits for all of
 * GL's earlier work, an unmap holds all of GL's later work), nor the host
 * path, whose frame the copies' DMA already overlaps: only when asked, not
 * by default in windows. */
static bool pipelines(const demo *d)
{
    if (!d->pipelined)
        return false;
    if (d->opt.interop == CUGL_APP_INTEROP_MAP || d->opt.interop == CUGL_APP_INTEROP_HOST)
        return d->opt.pipelined || d->turns.handover_probe;
    return d->opt.interop == CUGL_APP_INTEROP_SHARED;
}

cugl_status demo_target_create_buffer(cugl_app_target **t, demo *d, size_t size,
                                      cugl_app_direction direction, const void *initial)
{
    cugl_device *writers[DEMO_MAX_DEVICES];
    cugl_app_target_desc desc = base_desc(d, writers);
    desc.kind = CUGL_APP_TARGET_BUFFER;
    desc.direction = direction;
    desc.size = size;
    desc.initial = initial;
    return cugl_app_target_create(t, d->ctx, &desc);
}

cugl_status demo_target_create_texture(cugl_app_target **t, demo *d, int width, int height,
                                       cugl_app_direction direction)
{
    cugl_device *writers[DEMO_MAX_DEVICES];
    cugl_app_target_desc desc = base_desc(d, writers);
    desc.kind = CUGL_APP_TARGET_IMAGE;
    desc.direction = direction;
    desc.width = width;
    desc.height = height;
    /* CUDA writes an image whole. */
    desc.pipelined = direction == CUGL_APP_TO_GL && pipelines(d);
    return cugl_app_target_create(t, d->ctx, &desc);
}

cugl_status demo_target_pipeline(cugl_app_target *t, demo *d)
{
    return pipelines(d) ? cugl_app_target_set_pipelined(t, true) : CUGL_OK;
}

cugl_status demo_targets_cuda_begin(demo *d, cugl_app_target *const *targets, int count,
                                    demo_io *io)
{
    if (count < 1 || count > DEMO_MAX_TARGETS)
        return cugl_report_error(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                                 "%d targets; a turn takes 1 to %d", count, DEMO_MAX_TARGETS);
    bool lockstep = false;
    for (int i = 0; i < count; i++) {
        /* A kept frame shows its own output: the pipelining ends. */
        if (d->exact_frame && cugl_app_target_is_pipelined(targets[i])) {
            cugl_status st = cugl_app_target_set_pipelined(targets[i], false);
            if (st != CUGL_OK)
                return st;
        }
        lockstep = lockstep || !cugl_app_target_is_pipelined(targets[i]);
        d->turns.gpu_waits = d->turns.gpu_waits || cugl_app_target_waits_on_gpu(targets[i]);
    }
    cugl_app_access access[DEMO_MAX_TARGETS];
    cugl_status st = cugl_app_targets_cuda_begin(targets, count, d->stream, access);
    if (st != CUGL_OK)
        return st;
    /* Frames with a turn in lockstep, for the --bench floor: a pipelined
     * run has at most one (the kept frame's). */
    demo_turns *t = &d->turns;
    if (lockstep && cugl_app_target_interop(targets[0]) != CUGL_APP_INTEROP_HOST &&
        t->lockstep_mark != d->frame + 1) {
        t->lockstep_mark = d->frame + 1;
        t->lockstep_frames++;
    }
    for (int i = 0; i < count; i++)
        io[i] = (demo_io){
            .dest = {.surface = access[i].surface, .ptr = access[i].ptr, .pitch = access[i].pitch},
            .source = {.texture = access[i].texture, .ptr = access[i].ptr,
                       .pitch = access[i].pitch},
        };
    return CUGL_OK;
}

cugl_status demo_targets_cuda_end(demo *d, cugl_app_target *const *targets, int count)
{
    return cugl_app_targets_cuda_end(targets, count, d->stream);
}

cugl_status demo_target_write(cugl_app_target *t, demo *d, const char *phase,
                              demo_write_fn write, void *user)
{
    demo_io io;
    cugl_status st = demo_targets_cuda_begin(d, &t, 1, &io);
    if (st != CUGL_OK)
        return st;
    demo_phase_begin(d, DEMO_PHASE_CUDA, phase, true);
    st = write(d, user, &io.dest);
    demo_phase_end(d, DEMO_PHASE_CUDA);
    /* GL gets the target back even when the launch failed. */
    cugl_status end = demo_targets_cuda_end(d, &t, 1);
    return st != CUGL_OK ? st : end;
}

cugl_status demo_target_render_fullscreen(cugl_app_target **t, demo *d, demo_write_fn write,
                                          void *user)
{
    cugl_status st = CUGL_OK;
    int width = 0, height = 0;
    cugl_app_target_size(*t, &width, &height, NULL, NULL);
    if (width != d->width || height != d->height) {
        /* The window was resized: an image of the new size. */
        cugl_stream_sync(d->stream);
        cugl_app_target_destroy(*t);
        *t = NULL;
        st = demo_target_create_texture(t, d, d->width, d->height, CUGL_APP_TO_GL);
    }
    if (st == CUGL_OK)
        st = demo_target_write(*t, d, "cuda", write, user);
    if (st != CUGL_OK)
        return st;
    demo_phase_begin(d, DEMO_PHASE_DRAW, "draw", false);
    st = cugl_app_target_draw(*t);
    demo_phase_end(d, DEMO_PHASE_DRAW);
    return st;
}

int demo_target_dump(cugl_app_target *t, demo *d)
{
    size_t size = 0;
    cugl_app_target_size(t, NULL, NULL, NULL, &size);
    void *data = malloc(size);
    if (!data) {
        fprintf(stderr, "%s: cannot allocate %zu bytes for --dump-vertices\n", d->info->program,
                size);
        return 1;
    }
    cugl_app_drain_gl_errors();
    glGetNamedBufferSubData(cugl_app_target_gl_name(t), 0, (GLsizeiptr)size, data);
    if (cugl_app_check_gl(d->info->program, "reading the vertex buffer") != CUGL_OK) {
        free(data);
        return demo_fail(d, "--dump-vertices");
    }
    cugl_status st = cugl_app_write_file(d->opt.dump_vertices, data, size);
    free(data);
    return st == CUGL_OK ? 0 : demo_fail(d, "--dump-vertices");
}

int demo_target_fail(const demo *d, cugl_status status, const char *what)
{
    if (status == CUGL_ERROR_NOT_SUPPORTED && d->opt.interop != CUGL_APP_INTEROP_HOST) {
        fprintf(stderr, "%s: --interop %s is not supported here: %s\n  (--interop %s works "
                        "where the other does not)\n",
                d->info->program, demo_interop_name(d->opt.interop), cugl_last_error(),
                d->opt.interop == CUGL_APP_INTEROP_SHARED ? "map or host" : "host");
        return 1;
    }
    char msg[128];
    snprintf(msg, sizeof msg, "cannot create %s (--interop %s)", what,
             demo_interop_name(d->opt.interop));
    return demo_fail(d, msg);
}

void demo__turns_probe(demo *d, bool probing)
{
    d->turns.handover_probe = probing;
}

void demo__turns_count_from_here(demo *d)
{
    d->turns.lockstep_frames = d->turns.lockstep_mark = 0;
}

long demo__turns_lockstep_frames(const demo *d)
{
    return d->turns.lockstep_frames;
}

bool demo_turns_wait_on_gpu(const demo *d)
{
    return d->turns.gpu_waits;
}
