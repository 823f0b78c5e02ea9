/*
 * target.c - what CUDA writes and GL shows (cugl/app_target.h): the
 * object, its turns and their order, pipelining, drawing. What a turn does
 * on each interop path is the path's (target_map.c, target_shared.c,
 * target_host.c); nothing here switches over paths.
 *
 * Pipelining rotates slots, the same way on every path: CUDA's turn takes
 * the slot after the one it wrote last, GL's the one written before that,
 * so each side finds the other long done with what it takes. The map path
 * rotates 2 (the slot CUDA wrote stays mapped until its next turn, so GL
 * never waits for this turn's unmap), shared memory 3 (a slot's fence is
 * a frame old when CUDA takes it again).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "target_internal.h"

/* The GL formats of each texel format. */
static const struct {
    GLenum internal, format, type;
    size_t bytes;
} formats[] = {
    [CUGL_APP_FORMAT_RGBA8] = {GL_RGBA8, GL_RGBA, GL_UNSIGNED_BYTE, 4},
    [CUGL_APP_FORMAT_RGBA16F] = {GL_RGBA16F, GL_RGBA, GL_HALF_FLOAT, 8},
    [CUGL_APP_FORMAT_RGBA32F] = {GL_RGBA32F, GL_RGBA, GL_FLOAT, 16},
    [CUGL_APP_FORMAT_R32F] = {GL_R32F, GL_RED, GL_FLOAT, 4},
};

static const cugl__app_path *const paths[] = {
    [CUGL_APP_INTEROP_MAP] = &cugl__app_path_map,
    [CUGL_APP_INTEROP_SHARED] = &cugl__app_path_shared,
    [CUGL_APP_INTEROP_HOST] = &cugl__app_path_host,
};

/* ---- Create and destroy ------------------------------------------------------ */

static void destroy_slots(cugl_app_target *t)
{
    for (int i = 0; i < t->slot_count; i++)
        t->path->slot_destroy(t, &t->slots[i]);
    t->slot_count = 0;
}

CUGL_API void cugl_app_target_destroy(cugl_app_target *t)
{
    if (!t)
        return;
    /* Work still queued may use the objects and the memory. */
    (void)cugl_app_context_make_current(t->ctx);
    if (t->turn_done) {
        (void)cugl_event_sync(t->turn_done);
        cugl_event_release(t->turn_done);
    }
    for (int i = 0; i < CUGL__TARGET_RETIRED; i++) {
        cugl__app_retired *r = &t->retired[i];
        if (r->count > 0)
            cugl_event_sync(r->passed);
        cugl__target_free_retired(r);
        cugl_event_release(r->passed);
    }
    destroy_slots(t);
    if (t->volume_texture)
        glDeleteTextures(1, &t->volume_texture);
    free(t);
}

/* Checks of the desc that need no GL and no driver. */
static cugl_status check_desc(const cugl_app_target_desc *d, const char *who)
{
    if ((unsigned)d->kind > CUGL_APP_TARGET_VOLUME)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "kind %d is none of CUGL_APP_TARGET_IMAGE, _BUFFER, _VOLUME",
                          (int)d->kind);
    if ((unsigned)d->direction > CUGL_APP_FROM_GL)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "direction %d is none of CUGL_APP_TO_GL, CUGL_APP_FROM_GL",
                          (int)d->direction);
    if ((unsigned)d->interop > CUGL_APP_INTEROP_HOST)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "interop %d is none of CUGL_APP_INTEROP_AUTO, _MAP, _SHARED, "
                          "_HOST",
                          (int)d->interop);
    if (d->kind == CUGL_APP_TARGET_BUFFER) {
        if (d->size == 0 || d->size > (size_t)PTRDIFF_MAX)
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "a buffer of %zu bytes: 1 to PTRDIFF_MAX", d->size);
    } else {
        if ((unsigned)d->format > CUGL_APP_FORMAT_R32F)
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "format %d is no cugl_app_format", (int)d->format);
        bool volume = d->kind == CUGL_APP_TARGET_VOLUME;
        if (d->width < 1 || d->height < 1 || (volume && d->depth < 1) || d->width > 65536 ||
            d->height > 65536 || (volume && d->depth > 65536)) {
            if (volume)
                return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                                  "size %d x %d x %d: each from 1 to 65536", d->width,
                                  d->height, d->depth);
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "size %d x %d: each from 1 to 65536", d->width, d->height);
        }
        if (volume && d->direction == CUGL_APP_FROM_GL)
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "a volume is CUDA's to write (CUGL_APP_TO_GL)");
        if (d->initial)
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "initial contents are for buffers; an image starts "
                              "undefined");
    }
    if (d->writer_count < 0 || d->writer_count > CUGL_APP_SHARED_MAX_WRITERS ||
        (d->writer_count > 0 && !d->writers))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "%d writers%s: 0 to %d", d->writer_count,
                          d->writer_count > 0 && !d->writers ? " at NULL" : "",
                          CUGL_APP_SHARED_MAX_WRITERS);
    if (d->pipelined && d->direction == CUGL_APP_FROM_GL)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "what GL draws for CUDA to read is not pipelined");
    return CUGL_OK;
}

/* The size of the linear memory CUDA uses for an image or volume: rows
 * 256-byte aligned, as CUDA's pitched memory has them. */
static void linear_layout(cugl_app_target *t)
{
    if (t->kind == CUGL_APP_TARGET_BUFFER)
        return;
    size_t row = (size_t)t->width * t->texel;
    t->pitch = (row + 255) / 256 * 256;
    t->slice = t->pitch * (size_t)t->height;
    t->size = t->slice * (size_t)(t->kind == CUGL_APP_TARGET_VOLUME ? t->depth : 1);
}

/* The path: the one asked for, or the fastest that works here, by the
 * one rule for CUDA on other GPUs than GL's (cugl_app_choose_interop_for):
 * the target's own device and its writers write it. */
static cugl_status choose_path(cugl_app_target *t, cugl_app_interop asked, const char *who)
{
    cugl_device *writers[CUGL_APP_SHARED_MAX_WRITERS + 1] = {t->device};
    for (int i = 0; i < t->writer_count; i++)
        writers[1 + i] = t->writers[i];
    cugl_app_interop chosen = asked;
    cugl_status st = cugl_app_choose_interop_for(&chosen, t->reason, sizeof t->reason, t->ctx,
                                                 t->gl_device, writers, 1 + t->writer_count,
                                                 asked);
    if (st != CUGL_OK)
        return cugl__as_own(st, who);
    t->path = paths[chosen];
    return CUGL_OK;
}

/* No CUDA device (neither the desc nor the context names one): the host
 * path, whose GL side takes host memory alone (cugl_app_target_copy_from). */
static cugl_status choose_without_cuda(cugl_app_target *t, const cugl_app_target_desc *desc,
                                       const char *who)
{
    if (desc->interop != CUGL_APP_INTEROP_AUTO && desc->interop != CUGL_APP_INTEROP_HOST)
        return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who,
                          "the %s path needs a CUDA device, and the desc names none and "
                          "the context runs on none (cugl_app_context_desc.cuda_device)",
                          cugl_app_interop_name(desc->interop));
    if (t->writer_count > 0)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "writers, but no CUDA device of the target's own");
    snprintf(t->reason, sizeof t->reason,
             "host: no CUDA device (the context runs on none): the target takes host memory "
             "alone (cugl_app_target_copy_from)");
    t->path = paths[CUGL_APP_INTEROP_HOST];
    return CUGL_OK;
}

/* A slot more for pipelining, or the first. */
static cugl_status add_slot(cugl_app_target *t, const void *initial, const char *who)
{
    cugl_stream *stream = NULL;
    cugl_status st = t->device ? cugl_device_default_stream(&stream, t->device) : CUGL_OK;
    if (st == CUGL_OK)
        st = t->path->slot_create(t, &t->slots[t->slot_count], initial, stream, who);
    if (st != CUGL_OK) {
        t->path->slot_destroy(t, &t->slots[t->slot_count]);
        return cugl__as_own(st, who);
    }
    t->slot_count++;
    return CUGL_OK;
}

CUGL_API cugl_status cugl_app_target_create(cugl_app_target **out, cugl_app_context *ctx,
                                            const cugl_app_target_desc *desc)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = NULL;
    if (!ctx || !desc)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "%s is NULL", !ctx ? "ctx" : "desc");
    cugl_status st = check_desc(desc, __func__);
    if (st != CUGL_OK)
        return st;
    if (!glad_glCreateTextures)
        return cugl__fail(CUGL_ERROR_INVALID_STATE, __func__,
                          "GL is not loaded: create the context first");
    if (desc->kind != CUGL_APP_TARGET_BUFFER) {
        bool volume = desc->kind == CUGL_APP_TARGET_VOLUME;
        st = cugl__app_check_texture_size(desc->width, desc->height, volume ? desc->depth : 0,
                                          __func__);
        if (st != CUGL_OK)
            return st;
    }
    cugl_app_target *t = calloc(1, sizeof *t);
    if (!t)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, __func__, "no memory for a target");
    *t = (cugl_app_target){
        .ctx = ctx,
        .kind = desc->kind,
        .direction = desc->direction,
        .format = desc->format,
        .width = desc->kind == CUGL_APP_TARGET_BUFFER ? 0 : desc->width,
        .height = desc->kind == CUGL_APP_TARGET_BUFFER ? 0 : desc->height,
        .depth = desc->kind == CUGL_APP_TARGET_VOLUME ? desc->depth
                 : desc->kind == CUGL_APP_TARGET_IMAGE ? 1
                                                        : 0,
        .size = desc->size,
        .timer = desc->timer,
        .writer_count = desc->writer_count,
        .last_written = -1,
        .previous = -1,
    };
    t->internal_format = formats[t->format].internal;
    t->pixel_format = formats[t->format].format;
    t->pixel_type = formats[t->format].type;
    t->texel = formats[t->format].bytes;
    linear_layout(t);
    for (int i = 0; i < desc->writer_count; i++)
        t->writers[i] = desc->writers[i];

    st = cugl__app_context_cuda_device(&t->gl_device, ctx, __func__);
    t->device = desc->device ? desc->device : t->gl_device;
    if (st == CUGL_OK && !t->gl_device)
        t->gl_device = t->device;
    if (st == CUGL_OK && !t->device)
        st = choose_without_cuda(t, desc, __func__);
    else if (st == CUGL_OK)
        st = choose_path(t, desc->interop, __func__);
    if (st == CUGL_OK && t->writer_count > 0 && t->path != &cugl__app_path_shared)
        st = cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                        "writers on other devices take the shared path alone, not %s",
                        cugl_app_interop_name(t->path->interop));
    if (st == CUGL_OK)
        st = add_slot(t, desc->initial, __func__);
    if (st == CUGL_OK && desc->pipelined)
        st = cugl_app_target_set_pipelined(t, true);
    if (st != CUGL_OK) {
        cugl_app_target_destroy(t);
        return st;
    }
    *out = t;
    return CUGL_OK;
}

CUGL_API cugl_status cugl_app_target_set_cuda_use(cugl_app_target *t, cugl_app_cuda_use use)
{
    if (!t)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "target is NULL");
    if ((unsigned)use > CUGL_APP_CUDA_READS_WRITES)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "use %d is none of CUGL_APP_CUDA_USE_DEFAULT, _WRITES, _READS, "
                          "_READS_WRITES",
                          (int)use);
    if (t->direction == CUGL_APP_FROM_GL && use != CUGL_APP_CUDA_USE_DEFAULT &&
        use != CUGL_APP_CUDA_READS)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "what GL draws is CUDA's to read, not to write");
    if (t->cuda_open)
        return cugl__fail(CUGL_ERROR_INVALID_STATE, __func__,
                          "CUDA's turn is open: its use changes between turns");
    t->use = use;
    return CUGL_OK;
}

CUGL_API cugl_status cugl_app_target_set_pipelined(cugl_app_target *t, bool on)
{
    if (!t)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "target is NULL");
    if (on && t->direction == CUGL_APP_FROM_GL)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "what GL draws for CUDA to read is not pipelined");
    if (t->cuda_open || t->gl_open)
        return cugl__fail(CUGL_ERROR_INVALID_STATE, __func__,
                          "a turn is open: pipelining changes between turns");
    /* A path of one slot is never pipelined, nor the host path where its
     * copies wait for the stream anyway (no staging buffer CUDA copies
     * into; no CUDA device). Slots written before are stale: the rotation
     * starts afresh. */
    on = on && t->path->pipeline_slots > 1 &&
         (t->path->interop != CUGL_APP_INTEROP_HOST || (t->device && t->host_staged));
    while (on && t->slot_count < t->path->pipeline_slots) {
        CUGL__TRY(add_slot(t, NULL, __func__));
    }
    if (on && !t->pipelined)
        t->previous = -1;
    t->pipelined = on;
    return CUGL_OK;
}

/* ---- Turns ------------------------------------------------------------------------- */

/* The turn's targets: 1 to CUGL_APP_TARGET_MAX_TURN of one path and context. */
static cugl_status check_turn(cugl_app_target *const *targets, int count, const char *who)
{
    if (!targets)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "targets is NULL");
    if (count < 1 || count > CUGL_APP_TARGET_MAX_TURN)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "%d targets; a turn takes 1 to %d", count,
                          CUGL_APP_TARGET_MAX_TURN);
    for (int i = 0; i < count; i++) {
        if (!targets[i])
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "target %d is NULL", i);
        if (targets[i]->path != targets[0]->path || targets[i]->ctx != targets[0]->ctx)
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "target %d takes the %s path in context %p, target 0 the "
                              "%s path in context %p: a turn takes one of each",
                              i, cugl_app_interop_name(targets[i]->path->interop),
                              (void *)targets[i]->ctx,
                              cugl_app_interop_name(targets[0]->path->interop),
                              (void *)targets[0]->ctx);
        for (int j = 0; j < i; j++)
            if (targets[j] == targets[i])
                return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                                  "targets %d and %d are the same", j, i);
    }
    return CUGL_OK;
}

CUGL_API cugl_status cugl_app_targets_cuda_begin(cugl_app_target *const *targets, int count,
                                                 cugl_stream *stream, cugl_app_access *out)
{
    cugl_status st = check_turn(targets, count, __func__);
    if (st != CUGL_OK)
        return st;
    if (!stream || !out)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "%s is NULL",
                          !stream ? "stream" : "out");
    if (cugl_stream_is_closed(stream))
        return cugl__fail(CUGL_ERROR_CLOSED, __func__, "the stream has been closed");
    for (int i = 0; i < count; i++)
        if (!targets[i]->device)
            return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, __func__,
                              "target %d has no CUDA device (the context runs on none): it "
                              "takes host memory alone (cugl_app_target_copy_from)",
                              i);
    for (int i = 0; i < count; i++) {
        cugl_app_target *t = targets[i];
        if (t->cuda_open || t->gl_open)
            return cugl__fail(CUGL_ERROR_INVALID_STATE, __func__,
                              "target %d: %s turn is open; end it first", i,
                              t->cuda_open ? "CUDA's" : "GL's");
    }
    bool lockstep = false;
    int slots_before[CUGL_APP_TARGET_MAX_TURN];
    for (int i = 0; i < count; i++) {
        cugl_app_target *t = targets[i];
        slots_before[i] = t->cuda_slot;
        /* Pipelined, CUDA writes the slot after the last one it wrote:
         * neither the one GL may be using now nor the one it uses next.
         * What CUDA reads is the latest. */
        bool writes_all = cugl__target_use(t) == CUGL_APP_CUDA_WRITES;
        t->cuda_slot = t->last_written < 0                 ? 0
                       : t->pipelined && writes_all         ? (t->last_written + 1) % t->slot_count
                                                            : t->last_written;
        lockstep = lockstep || !t->pipelined;
        out[i] = (cugl_app_access){.pitch = t->pitch, .slice = t->slice};
    }
    st = targets[0]->path->cuda_begin(targets, count, stream, out, __func__);
    if (st != CUGL_OK) {
        for (int i = 0; i < count; i++)
            targets[i]->cuda_slot = slots_before[i]; /* refused: nothing changed */
        return cugl__as_own(st, __func__);
    }
    for (int i = 0; i < count; i++) {
        targets[i]->cuda_open = true;
        targets[i]->turn_stream = stream;
        if (lockstep && !targets[i]->pipelined)
            targets[i]->lockstep_turns++;
    }
    return CUGL_OK;
}

/* An event after the turn's work, on an event of the stream's device. */
static cugl_status mark_turn_done(cugl_app_target *t, cugl_stream *stream)
{
    cugl_status st = CUGL_OK;
    if (t->turn_done && cugl_event_device(t->turn_done) != cugl_stream_device(stream)) {
        st = cugl_event_sync(t->turn_done);
        cugl_event_release(t->turn_done);
        t->turn_done = NULL;
    }
    if (st == CUGL_OK && !t->turn_done)
        st = cugl_event_create(&t->turn_done, cugl_stream_device(stream), NULL);
    return st == CUGL_OK ? cugl_event_record(t->turn_done, stream) : st;
}

CUGL_API cugl_status cugl_app_targets_cuda_end(cugl_app_target *const *targets, int count,
                                               cugl_stream *stream)
{
    cugl_status st = check_turn(targets, count, __func__);
    if (st != CUGL_OK)
        return st;
    for (int i = 0; i < count; i++) {
        if (!targets[i]->cuda_open)
            return cugl__fail(CUGL_ERROR_INVALID_STATE, __func__,
                              "target %d: CUDA's turn has not begun", i);
        if (stream != targets[i]->turn_stream)
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                              "target %d: the turn began on another stream", i);
    }
    st = targets[0]->path->cuda_end(targets, count, stream, __func__);
    /* The turn is over whatever the path said: GL gets the targets back. */
    for (int i = 0; i < count; i++) {
        cugl_app_target *t = targets[i];
        /* What destroy waits for before it frees what the work may use. */
        cugl_status marked = mark_turn_done(t, stream);
        st = st != CUGL_OK ? st : marked;
        t->cuda_open = false;
        t->turn_stream = NULL;
        if (t->last_written != t->cuda_slot)
            t->previous = t->last_written;
        t->last_written = t->cuda_slot;
        t->slots[t->cuda_slot].filled = false;
    }
    return cugl__as_own(st, __func__);
}

CUGL_API cugl_status cugl_app_targets_gl_begin(cugl_app_target *const *targets, int count)
{
    cugl_status st = check_turn(targets, count, __func__);
    if (st != CUGL_OK)
        return st;
    for (int i = 0; i < count; i++)
        if (targets[i]->cuda_open || targets[i]->gl_open)
            return cugl__fail(CUGL_ERROR_INVALID_STATE, __func__,
                              "target %d: %s turn is open; end it first", i,
                              targets[i]->cuda_open ? "CUDA's" : "GL's");
    for (int i = 0; i < count; i++) {
        cugl_app_target *t = targets[i];
        /* Pipelined, GL takes what CUDA finished a turn earlier (the
         * latest on the first turn); else the latest. */
        int use = t->pipelined && t->previous >= 0 ? t->previous : t->last_written;
        t->gl_slot = use >= 0 ? use : 0;
    }
    st = targets[0]->path->gl_begin(targets, count, __func__);
    if (st != CUGL_OK)
        return cugl__as_own(st, __func__);
    for (int i = 0; i < count; i++)
        targets[i]->gl_open = true;
    return CUGL_OK;
}

CUGL_API cugl_status cugl_app_targets_gl_end(cugl_app_target *const *targets, int count)
{
    cugl_status st = check_turn(targets, count, __func__);
    if (st != CUGL_OK)
        return st;
    for (int i = 0; i < count; i++)
        if (!targets[i]->gl_open)
            return cugl__fail(CUGL_ERROR_INVALID_STATE, __func__,
                              "target %d: GL's turn has not begun",
                              i);
    st = targets[0]->path->gl_end(targets, count, __func__);
    for (int i = 0; i < count; i++) {
        targets[i]->gl_open = false;
        /* What GL drew is CUDA's to read next: its slot is the latest. */
        if (targets[i]->direction == CUGL_APP_FROM_GL)
            targets[i]->last_written = targets[i]->gl_slot;
    }
    return cugl__as_own(st, __func__);
}

/* The one-target forms: a refusal names them, then the batch's words. */
CUGL_API cugl_status cugl_app_target_cuda_begin(cugl_app_target *t, cugl_stream *stream,
                                                cugl_app_access *out)
{
    return cugl__as_own(cugl_app_targets_cuda_begin(&t, 1, stream, out), __func__);
}

CUGL_API cugl_status cugl_app_target_cuda_end(cugl_app_target *t, cugl_stream *stream)
{
    return cugl__as_own(cugl_app_targets_cuda_end(&t, 1, stream), __func__);
}

CUGL_API cugl_status cugl_app_target_gl_begin(cugl_app_target *t)
{
    return cugl__as_own(cugl_app_targets_gl_begin(&t, 1), __func__);
}

CUGL_API cugl_status cugl_app_target_gl_end(cugl_app_target *t)
{
    return cugl__as_own(cugl_app_targets_gl_end(&t, 1), __func__);
}

/* ---- Drawing and questions ---------------------------------------------------- */

CUGL_API uint32_t cugl_app_target_gl_name(cugl_app_target *t)
{
    if (!t)
        return 0;
    if (t->kind == CUGL_APP_TARGET_VOLUME && t->volume_texture)
        return t->volume_texture;
    cugl__app_slot *s = t->gl_open ? cugl__gl_slot(t) : &t->slots[t->last_written >= 0
                                                                        ? t->last_written
                                                                        : 0];
    /* A shared image's texture holds CUDA's pixels once filled. */
    if (t->gl_open && s->shared && t->kind == CUGL_APP_TARGET_IMAGE &&
        t->direction == CUGL_APP_TO_GL && !s->filled) {
        if (cugl__as_own(cugl__app_shared_fill(s->shared, __func__), __func__) !=
            CUGL_OK)
            return 0;
        s->filled = true;
    }
    return s->gl_name;
}

/* An image over the viewport, row 0 where `origin` says (cugl_app_target_draw). */
static cugl_status draw_image(cugl_app_target *t, cugl_app_origin origin, const char *who)
{
    if (!t)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "target is NULL");
    if (t->kind != CUGL_APP_TARGET_IMAGE)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "a %s is not drawn as an image (%s)",
                          t->kind == CUGL_APP_TARGET_BUFFER ? "buffer" : "volume",
                          t->kind == CUGL_APP_TARGET_BUFFER
                          ? "cugl_app_target_draw_points draws a buffer"
                          : "a shader of the program's own samples a volume");
    cugl_status st = cugl_app_target_gl_begin(t);
    if (st != CUGL_OK)
        return cugl__as_own(st, who);
    cugl__app_slot *s = cugl__gl_slot(t);
    if (t->drawn_from_memory && !s->filled) {
        /* Shared memory: the pixels where CUDA wrote them, no texture between. */
        st = cugl__app_blit_rgba8_buffer(t->ctx, cugl_app_shared_gl_buffer(s->shared),
                                         t->width, t->height, t->pitch, origin, who);
    } else {
        uint32_t name = cugl_app_target_gl_name(t);
        st = name ? cugl__app_blit(t->ctx, name, false, origin, who) : cugl_last_status();
    }
    cugl_status end = cugl_app_target_gl_end(t);
    return cugl__as_own(st != CUGL_OK ? st : end, who);
}

CUGL_API cugl_status cugl_app_target_draw(cugl_app_target *t)
{
    return draw_image(t, CUGL_APP_ORIGIN_LOWER, __func__);
}

CUGL_API cugl_status cugl_app_target_draw_origin(cugl_app_target *t, cugl_app_origin origin)
{
    if (origin != CUGL_APP_ORIGIN_LOWER && origin != CUGL_APP_ORIGIN_UPPER)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "origin %d: CUGL_APP_ORIGIN_LOWER (0) or CUGL_APP_ORIGIN_UPPER (1)",
                          (int)origin);
    return draw_image(t, origin, __func__);
}

CUGL_API cugl_status cugl_app_target_draw_points(cugl_app_target *t, size_t count,
                                                 int components, const float matrix[16],
                                                 float point_size, const float rgba[4])
{
    if (!t || !rgba)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "%s is NULL", !t ? "target" : "rgba");
    if (t->kind != CUGL_APP_TARGET_BUFFER)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "an image or volume has no points (cugl_app_target_draw draws "
                          "an image)");
    if (components != 3 && components != 4)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "%d components a point: 3 or 4",
                          components);
    size_t per_point = (size_t)components * sizeof(float);
    if (count > t->size / per_point || count > INT32_MAX)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "%zu points of %d floats; the buffer's %zu bytes hold %zu", count,
                          components, t->size, t->size / per_point);
    if (!(point_size > 0 && point_size <= 4096))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "point size %g: more than 0, at most 4096", (double)point_size);
    cugl_status st = cugl_app_target_gl_begin(t);
    if (st != CUGL_OK)
        return cugl__as_own(st, __func__);
    st = cugl__app_draw_points(t->ctx, cugl_app_target_gl_name(t), count, components, matrix,
                               point_size, rgba, __func__);
    cugl_status end = cugl_app_target_gl_end(t);
    return cugl__as_own(st != CUGL_OK ? st : end, __func__);
}

cugl_app_context *cugl__app_target_context(const cugl_app_target *t)
{
    return t->ctx;
}

cugl_app_target_kind cugl__app_target_kind(const cugl_app_target *t)
{
    return t->kind;
}

CUGL_API cugl_app_interop cugl_app_target_interop(const cugl_app_target *t)
{
    return t ? t->path->interop : CUGL_APP_INTEROP_AUTO;
}

CUGL_API const char *cugl_app_target_reason(const cugl_app_target *t)
{
    return t ? t->reason : "";
}

CUGL_API bool cugl_app_target_waits_on_gpu(const cugl_app_target *t)
{
    return t && t->path->interop == CUGL_APP_INTEROP_SHARED &&
           cugl_app_shared_waits_on_gpu(t->slots[0].shared);
}

CUGL_API bool cugl_app_target_is_pipelined(const cugl_app_target *t)
{
    return t && t->pipelined;
}

CUGL_API long cugl_app_target_lockstep_turns(const cugl_app_target *t)
{
    return t ? t->lockstep_turns : 0;
}

CUGL_API void cugl_app_target_size(const cugl_app_target *t, int *width, int *height, int *depth,
                                   size_t *bytes)
{
    if (width)
        *width = t ? t->width : 0;
    if (height)
        *height = t ? t->height : 0;
    if (depth)
        *depth = t ? t->depth : 0;
    if (bytes)
        *bytes = t ? t->size : 0;
}

/* ---- Copies in --------------------------------------------------------------- */

/* The shape and element size `src` must have for the target: images
 * (height, width, components), volumes (depth, height, width, components)
 * of component-sized elements; buffers any dense view of at most its bytes. */
static cugl_status check_source(const cugl_app_target *t, cugl_view *src, size_t *bytes,
                                const char *who)
{
    if (cugl_buffer_is_closed(cugl_view_buffer(src)))
        return cugl__fail(CUGL_ERROR_CLOSED, who, "the source view's buffer has been closed");
    const cugl_layout *l = cugl_view_layout(src);
    int64_t n = 1;
    for (int i = 0; i < l->ndim; i++)
        n *= l->shape[i];
    *bytes = (size_t)n * (size_t)l->itemsize;
    if (t->kind == CUGL_APP_TARGET_BUFFER) {
        if (*bytes > t->size)
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "the source has %zu bytes; the buffer holds %zu", *bytes,
                              t->size);
        return CUGL_OK;
    }
    int components = t->format == CUGL_APP_FORMAT_R32F ? 1 : 4;
    size_t component = t->texel / (size_t)components;
    bool volume = t->kind == CUGL_APP_TARGET_VOLUME;
    int64_t want[4] = {t->depth, t->height, t->width, components};
    const int64_t *w = volume ? want : want + 1;
    int ndim = volume ? 4 : 3;
    bool same = l->ndim == ndim && (size_t)l->itemsize == component;
    for (int i = 0; same && i < ndim; i++)
        same = l->shape[i] == w[i];
    if (!same)
        return cugl__fail(
            CUGL_ERROR_INVALID_ARGUMENT, who,
            "%s of %d x %d%s%.0d texels of %d components of %zu bytes takes a source of shape "
            "(%s%d, %d, %d) of %zu-byte elements; this one has %d axes of %lld-byte elements",
            volume ? "a volume" : "an image", t->width, t->height, volume ? " x " : "",
            volume ? t->depth : 0, components, component, volume ? "depth, " : "",
            t->height, t->width, components, component, l->ndim, (long long)l->itemsize);
    return CUGL_OK;
}

/* A view of the target's linear memory at `ptr` in the source's shape. */
static cugl_status linear_view(cugl_view **out, const cugl_app_target *t, uint64_t ptr,
                               const cugl_view *src)
{
    const cugl_layout *l = cugl_view_layout(src);
    cugl_buffer *memory = NULL;
    cugl_status st = cugl_buffer_from_handle(&memory, ptr, t->size, NULL);
    cugl_layout layout;
    if (st == CUGL_OK && t->kind == CUGL_APP_TARGET_BUFFER) {
        st = cugl_layout_dense(&layout, l->ndim, l->shape, l->itemsize, CUGL_ORDER_C, NULL);
    } else if (st == CUGL_OK) {
        int64_t strides[4] = {(int64_t)t->slice, (int64_t)t->pitch, (int64_t)t->texel,
                              l->itemsize};
        bool volume = t->kind == CUGL_APP_TARGET_VOLUME;
        st = cugl_layout_init_bytes(&layout, l->ndim, l->shape, volume ? strides : strides + 1,
                                    l->itemsize);
    }
    if (st == CUGL_OK)
        st = cugl_view_from_buffer(out, memory, &layout, cugl_view_dtype(src), false);
    cugl_buffer_release(memory); /* the view holds it */
    return st;
}

/* Host memory straight into the GL object, rows tight. */
static cugl_status upload_to_gl(cugl_app_target *t, const void *pixels, size_t bytes,
                                const char *who)
{
    cugl_app_drain_gl_errors();
    cugl__target_upload_gl(t, &t->slots[0], 0, pixels, bytes, 0);
    return cugl_app_check_gl(who, t->kind == CUGL_APP_TARGET_BUFFER ? "uploading the buffer"
                                                                     : "uploading the image");
}

/* Without CUDA: the source (host memory) packed tight on the CPU when it
 * is not, then uploaded. */
static cugl_status copy_without_cuda(cugl_app_target *t, cugl_view *src, size_t bytes,
                                     const char *who)
{
    if (cugl_view_is_device_accessible(src) && cugl_view_device_id(src) >= 0)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the target has no CUDA device: its source is host memory");
    if (cugl_layout_is_contiguous_c(cugl_view_layout(src)))
        return upload_to_gl(t, (const void *)(uintptr_t)cugl_view_ptr(src), bytes, who);
    void *packed = malloc(bytes);
    if (!packed)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, who, "no memory for %zu bytes",
                          bytes);
    const cugl_layout *l = cugl_view_layout(src);
    cugl_layout dense;
    cugl_buffer *host = NULL;
    cugl_view *to = NULL;
    cugl_status st = cugl_layout_dense(&dense, l->ndim, l->shape, l->itemsize, CUGL_ORDER_C,
                                       NULL);
    if (st == CUGL_OK)
        st = cugl_buffer_from_handle(&host, (uint64_t)(uintptr_t)packed, bytes, NULL);
    if (st == CUGL_OK)
        st = cugl_view_from_buffer(&to, host, &dense, cugl_view_dtype(src), false);
    if (st == CUGL_OK)
        st = cugl_view_copy_from(to, src, NULL, NULL);
    if (st == CUGL_OK)
        st = upload_to_gl(t, packed, bytes, who);
    cugl_view_release(to);
    cugl_buffer_release(host);
    free(packed);
    return st;
}

/* `src` packed densely (C order) into a new buffer on `device`, in *packed,
 * copied on `stream`. *packed is set where the allocation succeeded, also
 * when the copy failed: the caller gives it to drop_packed. */
static cugl_status pack_on_device(cugl_buffer **packed, cugl_device *device, cugl_view *src,
                                  size_t bytes, cugl_stream *stream)
{
    const cugl_layout *l = cugl_view_layout(src);
    cugl_memory_resource *mr = NULL;
    cugl_view *to = NULL;
    cugl_layout dense;
    *packed = NULL;
    cugl_status st = cugl_device_memory_resource_create(&mr, device, NULL);
    if (st == CUGL_OK)
        st = cugl_memory_resource_allocate(packed, mr, bytes, stream);
    if (st == CUGL_OK)
        st = cugl_layout_dense(&dense, l->ndim, l->shape, l->itemsize, CUGL_ORDER_C, NULL);
    if (st == CUGL_OK)
        st = cugl_view_from_buffer(&to, *packed, &dense, cugl_view_dtype(src), false);
    if (st == CUGL_OK)
        st = cugl_view_copy_from(to, src, stream, NULL);
    cugl_view_release(to);
    cugl_memory_resource_release(mr); /* the buffer holds it */
    return st;
}

/* A packed buffer let go: freed once the copies queued on `stream` that
 * read it have run. NULL is nothing. */
static void drop_packed(cugl_buffer *packed, cugl_stream *stream)
{
    if (packed)
        cugl_buffer_close(packed, stream);
    cugl_buffer_release(packed);
}

/* A mapped array (the map path's image) from `src`: through a pitched copy
 * where the source's rows are dense, else packed on the device first. */
static cugl_status copy_to_array(cugl_app_target *t, cugl_array *array, cugl_view *src,
                                 size_t bytes, cugl_stream *stream)
{
    const cugl_layout *l = cugl_view_layout(src);
    bool volume = t->kind == CUGL_APP_TARGET_VOLUME;
    int row_axis = volume ? 1 : 0;
    bool rows_dense = l->strides[l->ndim - 1] == 1 &&
                      l->strides[l->ndim - 2] == l->shape[l->ndim - 1] &&
                      (!volume || l->strides[0] % l->strides[1] == 0);
    cugl_buffer *packed = NULL, *from = NULL;
    cugl_status st = CUGL_OK;
    size_t pitch = 0, rows = 0;
    if (rows_dense) {
        pitch = (size_t)l->strides[row_axis] * (size_t)l->itemsize;
        rows = volume ? (size_t)(l->strides[0] / l->strides[1]) : (size_t)t->height;
        size_t span = pitch * rows * (size_t)t->depth;
        st = cugl_buffer_from_handle(&from, cugl_view_ptr(src), span, NULL);
    } else {
        st = pack_on_device(&packed, t->device, src, bytes, stream);
        from = cugl_buffer_retain(packed);
        pitch = (size_t)t->width * t->texel;
        rows = (size_t)t->height;
    }
    if (st == CUGL_OK) {
        cugl_copy_endpoint dst_end = {.array = array};
        cugl_copy_endpoint src_end = {.buffer = from, .pitch = pitch, .rows = rows};
        size_t extent[3] = {(size_t)t->width, (size_t)t->height, volume ? (size_t)t->depth : 1};
        st = cugl_array_copy_region(&dst_end, &src_end, extent, stream);
    }
    cugl_buffer_release(from);
    drop_packed(packed, stream);
    return st;
}

/* A source on another device than the target's linear memory (a tensor on
 * a compute device, the target's memory on GL's, open to it as a writer)
 * is copied across by the source's device: `stream` must be that device's. */
static cugl_status check_across(cugl_view *dst, cugl_view *src, cugl_stream *stream,
                                const char *who)
{
    int to = cugl_view_device_id(dst), from = cugl_view_device_id(src);
    bool across = cugl_view_is_device_accessible(src) && from >= 0 && to >= 0 && from != to;
    if (across && cugl_device_ordinal(cugl_stream_device(stream)) != from)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the source is on device %d and the target's memory on device %d: "
                          "the stream must be device %d's, which copies it across",
                          from, to, from);
    return CUGL_OK;
}

CUGL_API cugl_status cugl_app_target_copy_from(cugl_app_target *t, cugl_view *src,
                                               cugl_stream *stream)
{
    if (!t || !src)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "%s is NULL", !t ? "target" : "src");
    if (t->direction != CUGL_APP_TO_GL)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "what GL draws for CUDA (CUGL_APP_FROM_GL) takes no copy in");
    size_t bytes = 0;
    cugl_status st = check_source(t, src, &bytes, __func__);
    if (st != CUGL_OK)
        return st;
    if (!t->device) {
        if (t->cuda_open || t->gl_open)
            return cugl__fail(CUGL_ERROR_INVALID_STATE, __func__, "a turn is open; end it first");
        return copy_without_cuda(t, src, bytes, __func__);
    }
    CUGL__CHECK_NOT_NULL(stream);
    cugl_app_cuda_use use = t->use;
    t->use = CUGL_APP_CUDA_WRITES;
    cugl_app_access a;
    st = cugl_app_targets_cuda_begin(&t, 1, stream, &a);
    t->use = use;
    if (st != CUGL_OK)
        return cugl__as_own(st, __func__);
    cugl__app_slot *s = cugl__cuda_slot(t);
    if (a.ptr) {
        cugl_view *dst = NULL;
        st = linear_view(&dst, t, a.ptr, src);
        if (st == CUGL_OK)
            st = check_across(dst, src, stream, __func__);
        if (st == CUGL_OK)
            st = cugl_view_copy_from(dst, src, stream, NULL);
        cugl_view_release(dst);
    } else {
        st = copy_to_array(t, s->mapped_array, src, bytes, stream);
    }
    cugl_status end = cugl_app_targets_cuda_end(&t, 1, stream);
    return cugl__as_own(st != CUGL_OK ? st : end, __func__);
}
