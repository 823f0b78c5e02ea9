/*
 * target.c - see target.h. Every switch over the --interop paths in the
 * demos is here.
 */
#include "target.h"

#include <stdlib.h>

/* The bytes of a row of RGBA8 pixels in shared memory that GL packs into:
 * 256-byte aligned, as a shared texture's rows are. */
enum { SHARED_ROW_ALIGN = 256 };

/* What a map of the target's role asks of the driver. */
static unsigned map_flags_of(bool cuda_writes)
{
    return cuda_writes ? CUGL_GRAPHICS_WRITE_DISCARD : CUGL_GRAPHICS_READ_ONLY;
}

static cugl_status new_gl_buffer(demo_target *t, GLuint *name, GLbitfield storage_flags,
                                 const void *initial)
{
    glCreateBuffers(1, name);
    /* Immutable storage: what CUDA registered can never be respecified. */
    glNamedBufferStorage(*name, (GLsizeiptr)t->size, initial, storage_flags);
    return cugl_app_check_gl("demo_target_create_buffer", "glNamedBufferStorage");
}

static cugl_status make_gl_buffer(demo_target *t, GLbitfield storage_flags, const void *initial)
{
    t->owns_gl_name = true;
    return new_gl_buffer(t, &t->gl_name, storage_flags, initial);
}

static cugl_status new_gl_texture(demo_target *t, GLuint *name)
{
    glCreateTextures(GL_TEXTURE_2D, 1, name);
    glTextureStorage2D(*name, 1, GL_RGBA8, t->width, t->height);
    glTextureParameteri(*name, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTextureParameteri(*name, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTextureParameteri(*name, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTextureParameteri(*name, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    return cugl_app_check_gl("demo_target_create_texture", "glTextureStorage2D");
}

static cugl_status make_gl_texture(demo_target *t)
{
    t->owns_gl_name = true;
    return new_gl_texture(t, &t->gl_name);
}

/* The map path's registration of GL object `name` for the target. */
static cugl_status register_gl(demo_target *t, demo *d, GLuint name,
                               cugl_graphics_resource **out)
{
    if (!t->texture)
        return cugl_graphics_resource_from_gl_buffer(out, d->device, name,
                                                     map_flags_of(t->cuda_writes));
    return cugl_graphics_resource_from_gl_image(
        out, d->device, name, CUGL_GL_TEXTURE_2D,
        t->direction == DEMO_TO_GL ? CUGL_GRAPHICS_SURFACE_LOAD_STORE | CUGL_GRAPHICS_WRITE_DISCARD
                                   : CUGL_GRAPHICS_READ_ONLY);
}

/* The host path's device buffer and its pinned copy. */
static cugl_status make_host_buffers(demo_target *t, demo *d)
{
    cugl_status st = cugl_device_memory_resource_create(&t->device_mr, d->device, NULL);
    if (st == CUGL_OK)
        st = cugl_legacy_pinned_memory_resource_create(&t->pinned_mr, d->device);
    if (st == CUGL_OK)
        st = cugl_memory_resource_allocate(&t->device_buffer, t->device_mr, t->size, d->stream);
    if (st == CUGL_OK)
        st = cugl_memory_resource_allocate(&t->pinned_buffer, t->pinned_mr, t->size, d->stream);
    return st;
}

cugl_status demo_upload(cugl_stream *stream, cugl_buffer *dst, const void *data, size_t size)
{
    cugl_buffer *from = NULL, *to = NULL;
    cugl_status st = cugl_buffer_from_handle(&from, (uint64_t)(uintptr_t)data, size, NULL);
    /* Copies match sizes: a view of dst's first `size` bytes. */
    if (st == CUGL_OK)
        st = cugl_buffer_from_handle(&to, cugl_buffer_handle(dst), size, NULL);
    if (st == CUGL_OK)
        st = cugl_buffer_copy_from(to, from, stream);
    if (st == CUGL_OK)
        st = cugl_stream_sync(stream);
    cugl_buffer_release(to);
    cugl_buffer_release(from);
    return st;
}

/* Shared memory lives on the GL GPU; CUDA's other devices write it too. */
static cugl_status open_to_writers(demo_target *t, demo *d)
{
    cugl_device *writers[DEMO_MAX_DEVICES];
    int count = 0;
    for (int i = 0; i < d->device_count; i++)
        if (d->devices[i] != d->gl_device)
            writers[count++] = d->devices[i];
    if (count == 0)
        return CUGL_OK;
    return cugl_app_shared_set_writers(t->shared, writers, count);
}

/* Shared memory of at least t->size bytes; a texture's rows t->pitch apart. */
static cugl_status check_shared(demo_target *t, const char *who)
{
    size_t have = cugl_app_shared_size(t->shared);
    if (t->texture && (t->pitch < (size_t)t->width * 4 || t->pitch % 4 != 0 || have < t->size))
        /* The kernels read and write whole texels at row starts: 4-byte aligned. */
        return cugl_report_error(CUGL_ERROR_INVALID_STATE, who,
                                 "the shared memory of a %dx%d RGBA8 image has a pitch of %zu "
                                 "bytes and %zu bytes in all",
                                 t->width, t->height, t->pitch, have);
    if (have < t->size)
        return cugl_report_error(CUGL_ERROR_INVALID_STATE, who,
                                 "the shared buffer has %zu bytes, not %zu", have, t->size);
    return CUGL_OK;
}

cugl_status demo_target_create_buffer(demo_target *t, demo *d, size_t size,
                                      demo_direction direction, const void *initial)
{
    *t = (demo_target){
        .interop = d->opt.interop,
        .direction = direction,
        .cuda_writes = direction == DEMO_TO_GL,
        .size = size,
    };
    cugl_status st = CUGL_OK;
    switch (t->interop) {
    case DEMO_INTEROP_MAP:
        st = make_gl_buffer(t, 0, initial);
        if (st == CUGL_OK)
            st = register_gl(t, d, t->gl_name, &t->resource);
        break;
    case DEMO_INTEROP_SHARED:
        st = cugl_app_shared_buffer_create(&t->shared, d->gl_device, size);
        if (st == CUGL_OK)
            st = open_to_writers(t, d);
        if (st == CUGL_OK) {
            t->gl_name = cugl_app_shared_gl_name(t->shared);
            st = check_shared(t, "demo_target_create_buffer");
        }
        /* The initial contents are CUDA's first writes. */
        if (st == CUGL_OK && initial) {
            st = cugl_app_shared_cuda_begin(t->shared, d->stream);
            if (st == CUGL_OK)
                st = demo_upload(d->stream, cugl_app_shared_buffer(t->shared), initial, size);
            if (st == CUGL_OK)
                st = cugl_app_shared_cuda_end(t->shared, d->stream);
        }
        break;
    case DEMO_INTEROP_HOST:
        st = make_gl_buffer(t, GL_DYNAMIC_STORAGE_BIT, initial);
        if (st == CUGL_OK)
            st = make_host_buffers(t, d);
        if (st == CUGL_OK && initial)
            st = demo_upload(d->stream, t->device_buffer, initial, size);
        break;
    }
    if (st != CUGL_OK)
        demo_target_destroy(t, d);
    return st;
}

cugl_status demo_target_create_texture(demo_target *t, demo *d, int width, int height,
                                       demo_direction direction)
{
    *t = (demo_target){
        .interop = d->opt.interop,
        .direction = direction,
        .cuda_writes = direction == DEMO_TO_GL,
        .texture = true,
        .width = width,
        .height = height,
        .pitch = (size_t)width * 4,
        .size = (size_t)width * 4 * (size_t)height,
    };
    cugl_status st = CUGL_OK;
    switch (t->interop) {
    case DEMO_INTEROP_MAP:
        st = make_gl_texture(t);
        if (st == CUGL_OK)
            st = register_gl(t, d, t->gl_name, &t->resource);
        /* CUDA writes a texture whole: it can be pipelined. */
        if (st == CUGL_OK && direction == DEMO_TO_GL)
            st = demo_target_pipeline(t, d);
        break;
    case DEMO_INTEROP_SHARED:
        if (direction == DEMO_TO_GL) {
            /* A shared texture: GL's gl_begin copies CUDA's rows into it. */
            st = cugl_app_shared_texture_create(&t->shared, d->gl_device, GL_RGBA8, width,
                                                height);
            if (st == CUGL_OK)
                st = open_to_writers(t, d);
            /* Drawn with demo_target_blit, straight from the memory; a demo
             * that samples gl_name turns the fill on. Not where another GPU
             * writes the memory: there GL's shader reads of it were seen
             * to miss some of the peer's writes (the copy sees them all).
             * CUDA writes a texture whole: it can be pipelined. */
            t->drawn_from_memory = st == CUGL_OK && !d->remote;
            if (t->drawn_from_memory)
                st = cugl_app_shared_set_texture_fill(t->shared, false);
            if (st == CUGL_OK)
                st = demo_target_pipeline(t, d);
            if (st == CUGL_OK) {
                t->gl_name = cugl_app_shared_gl_name(t->shared);
                t->pitch = cugl_app_shared_pitch(t->shared);
            }
        } else {
            /* GL renders into a texture of its own and packs it into shared
             * memory at gl_end. */
            t->pitch = ((size_t)width * 4 + SHARED_ROW_ALIGN - 1) / SHARED_ROW_ALIGN *
                       SHARED_ROW_ALIGN;
            st = make_gl_texture(t);
            if (st == CUGL_OK)
                st = cugl_app_shared_buffer_create(&t->shared, d->gl_device,
                                                   t->pitch * (size_t)height);
            if (st == CUGL_OK)
                st = open_to_writers(t, d);
        }
        t->size = t->pitch * (size_t)height;
        if (st == CUGL_OK)
            st = check_shared(t, "demo_target_create_texture");
        break;
    case DEMO_INTEROP_HOST:
        st = make_gl_texture(t);
        if (st == CUGL_OK)
            st = make_host_buffers(t, d);
        break;
    }
    if (st != CUGL_OK)
        demo_target_destroy(t, d);
    return st;
}

int demo_target_dump(demo_target *t, demo *d)
{
    const char *path = d->opt.dump_vertices;
    void *data = malloc(t->size);
    if (!data) {
        fprintf(stderr, "%s: cannot allocate %zu bytes for --dump-vertices\n", d->info->program,
                t->size);
        return 1;
    }
    cugl_app_drain_gl_errors();
    glGetNamedBufferSubData(t->gl_name, 0, (GLsizeiptr)t->size, data);
    if (cugl_app_check_gl(d->info->program, "reading the vertex buffer") != CUGL_OK) {
        free(data);
        return demo_fail(d, "--dump-vertices");
    }
    cugl_status st = cugl_app_write_file(path, data, t->size);
    free(data);
    return st == CUGL_OK ? 0 : demo_fail(d, "--dump-vertices");
}

int demo_target_fail(const demo *d, cugl_status status, const char *what)
{
    if (status == CUGL_ERROR_NOT_SUPPORTED && d->opt.interop != DEMO_INTEROP_HOST) {
        fprintf(stderr, "%s: --interop %s is not supported here: %s\n  (--interop %s works "
                        "where the other does not)\n",
                d->info->program, demo_interop_name(d->opt.interop), cugl_last_error(),
                d->opt.interop == DEMO_INTEROP_SHARED ? "map or host" : "host");
        return 1;
    }
    char msg[128];
    snprintf(msg, sizeof msg, "cannot create %s (--interop %s)", what,
             demo_interop_name(d->opt.interop));
    return demo_fail(d, msg);
}

/* ---- CUDA's turn ------------------------------------------------------------ */

/* All targets of a turn take the same path. */
static cugl_status check_targets(demo_target *const *targets, int count, const char *who)
{
    if (count < 1 || count > DEMO_MAX_TARGETS)
        return cugl_report_error(CUGL_ERROR_INVALID_ARGUMENT, who,
                                 "%d targets; a turn takes 1 to %d", count, DEMO_MAX_TARGETS);
    for (int i = 1; i < count; i++)
        if (targets[i]->interop != targets[0]->interop)
            return cugl_report_error(CUGL_ERROR_INVALID_ARGUMENT, who,
                                     "target %d takes --interop %s, target 0 --interop %s", i,
                                     demo_interop_name(targets[i]->interop),
                                     demo_interop_name(targets[0]->interop));
    return CUGL_OK;
}

/* The object CUDA uses on a mapped target: the buffer, or a surface (to
 * write) or texture object (to read) on the array. */
static cugl_status map_object(demo_target *t, demo *d, demo_io *io)
{
    if (!t->texture) {
        cugl_status st = cugl_graphics_resource_buffer(&t->mapped, t->resource);
        if (st != CUGL_OK)
            return st;
        if (cugl_buffer_size(t->mapped) < t->size)
            return cugl_report_error(CUGL_ERROR_INVALID_STATE, "demo_targets_cuda_begin",
                                     "GL buffer %u maps to %zu bytes, fewer than %zu",
                                     t->gl_name, cugl_buffer_size(t->mapped), t->size);
        io->dest.ptr = io->source.ptr = cugl_buffer_handle(t->mapped);
        return CUGL_OK;
    }
    cugl_array *array = NULL;
    cugl_status st = cugl_graphics_resource_array(&array, t->resource, 0, 0);
    if (st != CUGL_OK)
        return st;
    cugl_resource_desc on_array = {.kind = CUGL_RESOURCE_ARRAY, .array = array};
    if (t->cuda_writes) {
        st = cugl_surface_create(&t->surface, d->device, &on_array);
        if (st == CUGL_OK)
            io->dest.surface = cugl_surface_handle(t->surface);
    } else {
        st = cugl_texture_create(
            &t->sampler, d->device, &on_array,
            &(cugl_texture_desc){
                .address_mode = {CUGL_ADDRESS_CLAMP, CUGL_ADDRESS_CLAMP, CUGL_ADDRESS_CLAMP},
                .filter_mode = CUGL_FILTER_POINT,
                .read_mode = CUGL_READ_ELEMENT_TYPE,
            });
        if (st == CUGL_OK)
            io->source.texture = cugl_texture_handle(t->sampler);
    }
    /* The object holds the array; the unmap closes it. */
    cugl_array_release(array);
    return st;
}

/* Drop what map_object made; the kernels have not used it. */
static void drop_objects(demo_target *t)
{
    cugl_buffer_release(t->mapped);
    cugl_surface_release(t->surface);
    cugl_texture_release(t->sampler);
    t->mapped = NULL;
    t->surface = NULL;
    t->sampler = NULL;
}


/* Shared memory that CUDA only reads and GL only reads needs no turn: GL's
 * use is waited for when CUDA next writes it. */
static bool takes_shared_turn(const demo_target *t)
{
    return t->cuda_writes || t->direction == DEMO_FROM_GL;
}

cugl_status demo_target_pipeline(demo_target *t, demo *d)
{
    if (!d->pipelined || t->interop == DEMO_INTEROP_HOST || t->direction != DEMO_TO_GL ||
        t->pipelined)
        return CUGL_OK;
    /* The map path gains nothing from it on the GPUs measured (a map waits
     * for all of GL's earlier work, an unmap holds all of GL's later work):
     * only when asked, not by default in windows. */
    if (t->interop == DEMO_INTEROP_MAP && !d->opt.pipelined && !d->handover_probe)
        return CUGL_OK;
    cugl_status st;
    if (t->interop == DEMO_INTEROP_SHARED) {
        st = cugl_app_shared_set_pipelined(t->shared, true);
    } else {
        /* The second object; GL draws it (still blank) while CUDA writes
         * the first. */
        st = t->texture ? new_gl_texture(t, &t->spare_gl_name)
                        : new_gl_buffer(t, &t->spare_gl_name, 0, NULL);
        if (st == CUGL_OK)
            st = register_gl(t, d, t->spare_gl_name, &t->spare_resource);
        if (st == CUGL_OK) {
            GLuint drawn = t->spare_gl_name;
            t->spare_gl_name = t->gl_name;
            t->gl_name = drawn;
        }
    }
    t->pipelined = st == CUGL_OK;
    return st;
}

/* Map path, pipelined targets: unmap what CUDA wrote last turn (held) and
 * swap, so that CUDA maps the other object and GL draws the one just
 * unmapped; on a kept frame, end the pipelining: GL draws what CUDA writes
 * now. Lockstep frames are counted (for the --bench floor). */
static cugl_status turn_pipelined(demo *d, demo_target *const *targets, int count)
{
    cugl_graphics_resource *held[DEMO_MAX_TARGETS];
    cugl_texture *samplers[DEMO_MAX_TARGETS];
    cugl_surface *surfaces[DEMO_MAX_TARGETS];
    int n = 0;
    bool lockstep = false;
    for (int i = 0; i < count; i++) {
        demo_target *t = targets[i];
        lockstep = lockstep || !t->pipelined || d->exact_frame;
        if (!t->held)
            continue;
        held[n] = t->resource;
        cugl_buffer_release(t->mapped);
        samplers[n] = t->sampler;
        surfaces[n] = t->surface;
        t->mapped = NULL;
        t->sampler = NULL;
        t->surface = NULL;
        n++;
    }
    if (lockstep && d->lockstep_mark != d->frame + 1) {
        d->lockstep_mark = d->frame + 1;
        d->lockstep_frames++;
    }
    cugl_status st = CUGL_OK, retire = CUGL_OK;
    if (n > 0) {
        st = cugl_graphics_unmap(held, (size_t)n, d->stream);
        retire = demo_retire(d, samplers, surfaces, n);
    }
    for (int i = 0; i < count; i++) {
        demo_target *t = targets[i];
        if (t->held) {
            t->held = false;
            cugl_graphics_resource *r = t->resource;
            t->resource = t->spare_resource;
            t->spare_resource = r;
            GLuint g = t->gl_name;
            t->gl_name = t->spare_gl_name;
            t->spare_gl_name = g;
        }
        if (t->pipelined && d->exact_frame) {
            /* GL draws the object CUDA maps now, as in lockstep. */
            GLuint g = t->gl_name;
            t->gl_name = t->spare_gl_name;
            t->spare_gl_name = g;
            t->pipelined = false;
        }
    }
    return st != CUGL_OK ? st : retire;
}

static cugl_status map_targets(demo *d, demo_target *const *targets, int count, demo_io *io)
{
    demo_phase_begin(d, DEMO_PHASE_ACQUIRE, "map", true);
    cugl_graphics_resource *resources[DEMO_MAX_TARGETS];
    cugl_status st = turn_pipelined(d, targets, count);
    for (int i = 0; i < count && st == CUGL_OK; i++) {
        demo_target *t = targets[i];
        resources[i] = t->resource;
        unsigned want = map_flags_of(t->cuda_writes);
        if (t->direction == DEMO_FROM_GL && t->cuda_writes)
            st = cugl_report_error(CUGL_ERROR_INVALID_STATE, "demo_targets_cuda_begin",
                                   "target %d is GL's to write, and CUDA's only to read", i);
        else if (cugl_graphics_resource_map_flags(t->resource) != want)
            st = cugl_graphics_resource_set_map_flags(t->resource, want);
    }
    if (st == CUGL_OK)
        st = cugl_graphics_map(resources, (size_t)count, d->stream);
    for (int i = 0; i < count && st == CUGL_OK; i++)
        st = map_object(targets[i], d, &io[i]);
    if (st != CUGL_OK && cugl_graphics_resource_is_mapped(resources[0])) {
        for (int i = 0; i < count; i++)
            drop_objects(targets[i]);
        cugl_graphics_unmap(resources, (size_t)count, d->stream);
    }
    demo_phase_end(d, DEMO_PHASE_ACQUIRE);
    return st;
}

static cugl_status wait_for_gl(demo *d, demo_target *const *targets, int count, demo_io *io)
{
    demo_phase_begin(d, DEMO_PHASE_ACQUIRE, "wait-gl", true);
    cugl_status st = CUGL_OK;
    for (int i = 0; i < count && st == CUGL_OK; i++) {
        /* A kept frame shows its own output: the pipelining ends. */
        if (targets[i]->pipelined && d->exact_frame) {
            st = cugl_app_shared_set_pipelined(targets[i]->shared, false);
            targets[i]->pipelined = false;
            if (st != CUGL_OK)
                break;
        }
        if (takes_shared_turn(targets[i])) {
            if (!targets[i]->pipelined && d->lockstep_mark != d->frame + 1) {
                d->lockstep_mark = d->frame + 1;
                d->lockstep_frames++;
            }
            st = cugl_app_shared_cuda_begin(targets[i]->shared, d->stream);
        }
        io[i].dest.ptr = io[i].source.ptr =
            cugl_buffer_handle(cugl_app_shared_buffer(targets[i]->shared));
    }
    demo_phase_end(d, DEMO_PHASE_ACQUIRE);
    return st;
}

/* host: what GL wrote (gl_end put it in pinned memory) to the device. */
static cugl_status to_device(demo *d, demo_target *const *targets, int count, demo_io *io)
{
    bool any = false;
    for (int i = 0; i < count; i++) {
        io[i].dest.ptr = io[i].source.ptr = cugl_buffer_handle(targets[i]->device_buffer);
        any = any || targets[i]->direction == DEMO_FROM_GL;
    }
    if (!any)
        return CUGL_OK;
    demo_phase_begin(d, DEMO_PHASE_ACQUIRE, "to-device", true);
    cugl_status st = CUGL_OK;
    for (int i = 0; i < count && st == CUGL_OK; i++)
        if (targets[i]->direction == DEMO_FROM_GL)
            st = cugl_buffer_copy_from(targets[i]->device_buffer, targets[i]->pinned_buffer,
                                       d->stream);
    demo_phase_end(d, DEMO_PHASE_ACQUIRE);
    return st;
}

cugl_status demo_targets_cuda_begin(demo *d, demo_target *const *targets, int count,
                                    demo_io *io)
{
    cugl_status st = check_targets(targets, count, __func__);
    if (st != CUGL_OK)
        return st;
    for (int i = 0; i < count; i++)
        io[i] = (demo_io){.dest.pitch = targets[i]->pitch, .source.pitch = targets[i]->pitch};
    switch (targets[0]->interop) {
    case DEMO_INTEROP_MAP:
        return map_targets(d, targets, count, io);
    case DEMO_INTEROP_SHARED:
        return wait_for_gl(d, targets, count, io);
    case DEMO_INTEROP_HOST:
        return to_device(d, targets, count, io);
    }
    return CUGL_OK;
}

static cugl_status unmap_targets(demo *d, demo_target *const *targets, int count)
{
    /* Pipelined targets stay mapped until their next turn. */
    cugl_graphics_resource *resources[DEMO_MAX_TARGETS];
    cugl_texture *samplers[DEMO_MAX_TARGETS];
    cugl_surface *surfaces[DEMO_MAX_TARGETS];
    int n = 0;
    for (int i = 0; i < count; i++) {
        demo_target *t = targets[i];
        if (t->pipelined) {
            t->held = true;
            continue;
        }
        resources[n] = t->resource;
        /* Queued kernels may still use the objects: released, as one
         * batch, once they ran. */
        cugl_buffer_release(t->mapped);
        samplers[n] = t->sampler;
        surfaces[n] = t->surface;
        t->mapped = NULL;
        t->sampler = NULL;
        t->surface = NULL;
        n++;
    }
    if (n == 0)
        return CUGL_OK;
    demo_phase_begin(d, DEMO_PHASE_RELEASE, "unmap", true);
    cugl_status st = cugl_graphics_unmap(resources, (size_t)n, d->stream);
    demo_phase_end(d, DEMO_PHASE_RELEASE);
    cugl_status retire = demo_retire(d, samplers, surfaces, n);
    return st != CUGL_OK ? st : retire;
}

static cugl_status signal_gl(demo *d, demo_target *const *targets, int count)
{
    demo_phase_begin(d, DEMO_PHASE_RELEASE, "signal-gl", true);
    cugl_status st = CUGL_OK;
    for (int i = 0; i < count && st == CUGL_OK; i++)
        if (takes_shared_turn(targets[i]))
            st = cugl_app_shared_cuda_end(targets[i]->shared, d->stream);
    demo_phase_end(d, DEMO_PHASE_RELEASE);
    return st;
}

/* host: what CUDA wrote -> pinned memory (one wait for all) -> GL. */
static cugl_status download_upload(demo *d, demo_target *const *targets, int count)
{
    bool written[DEMO_MAX_TARGETS], any = false;
    for (int i = 0; i < count; i++) {
        written[i] = targets[i]->cuda_writes;
        any = any || written[i];
    }
    if (!any)
        return CUGL_OK;
    demo_phase_begin(d, DEMO_PHASE_RELEASE, "download", true);
    cugl_status st = CUGL_OK;
    for (int i = 0; i < count && st == CUGL_OK; i++)
        if (written[i])
            st = cugl_buffer_copy_from(targets[i]->pinned_buffer, targets[i]->device_buffer,
                                       d->stream);
    if (st == CUGL_OK)
        st = cugl_stream_sync(d->stream);
    demo_phase_end(d, DEMO_PHASE_RELEASE);
    if (st != CUGL_OK)
        return st;

    demo_phase_begin(d, DEMO_PHASE_HANDOFF, "upload", false);
    for (int i = 0; i < count; i++) {
        demo_target *t = targets[i];
        if (!written[i])
            continue;
        const void *data = (const void *)(uintptr_t)cugl_buffer_handle(t->pinned_buffer);
        if (t->texture) {
            glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
            glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
            glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
            glTextureSubImage2D(t->gl_name, 0, 0, 0, t->width, t->height, GL_RGBA,
                                GL_UNSIGNED_BYTE, data);
        } else {
            glNamedBufferSubData(t->gl_name, 0, (GLsizeiptr)t->size, data);
        }
    }
    demo_phase_end(d, DEMO_PHASE_HANDOFF);
    return cugl_app_check_gl("demo_targets_cuda_end", "upload from pinned memory");
}

cugl_status demo_targets_cuda_end(demo *d, demo_target *const *targets, int count)
{
    cugl_status st = check_targets(targets, count, __func__);
    if (st != CUGL_OK)
        return st;
    switch (targets[0]->interop) {
    case DEMO_INTEROP_MAP:
        return unmap_targets(d, targets, count);
    case DEMO_INTEROP_SHARED:
        return signal_gl(d, targets, count);
    case DEMO_INTEROP_HOST:
        return download_upload(d, targets, count);
    }
    return CUGL_OK;
}

cugl_status demo_target_cuda_begin(demo_target *t, demo *d, demo_io *io)
{
    return demo_targets_cuda_begin(d, &t, 1, io);
}

cugl_status demo_target_cuda_end(demo_target *t, demo *d)
{
    return demo_targets_cuda_end(d, &t, 1);
}

/* ---- GL's turn -------------------------------------------------------------- */

/* GL renders into a DEMO_FROM_GL texture of its own, which gl_end copies
 * out; every other shared target is GL's between gl_begin and gl_end. */
static bool copied_out(const demo_target *t)
{
    return t->direction == DEMO_FROM_GL && t->texture;
}

cugl_status demo_targets_gl_begin(demo *d, demo_target *const *targets, int count)
{
    cugl_status st = check_targets(targets, count, __func__);
    if (st != CUGL_OK || targets[0]->interop != DEMO_INTEROP_SHARED)
        return st;
    demo_phase_begin(d, DEMO_PHASE_HANDOFF, "wait-cuda", false);
    for (int i = 0; i < count && st == CUGL_OK; i++) {
        demo_target *t = targets[i];
        if (copied_out(t))
            continue;
        st = cugl_app_shared_gl_begin(t->shared);
        /* Pipelined, a buffer's GL name changes from turn to turn. */
        if (!t->texture)
            t->gl_name = cugl_app_shared_gl_name(t->shared);
    }
    demo_phase_end(d, DEMO_PHASE_HANDOFF);
    return st;
}

/* shared: GL packs a texture into the memory CUDA reads, once CUDA has read
 * the last frame's; host: into pinned memory (a wait for GL). */
static cugl_status copy_out(demo_target *t, demo *d)
{
    if (t->interop == DEMO_INTEROP_SHARED) {
        /* A pack into imported memory runs far below memory speed; a
         * compute shader does not. */
        cugl_status st = cugl_app_shared_gl_begin(t->shared);
        if (st == CUGL_OK)
            st = cugl_app_pack_rgba8(d->ctx, t->gl_name, cugl_app_shared_gl_name(t->shared),
                                     t->width, t->height, t->pitch);
        if (st == CUGL_OK)
            st = cugl_app_shared_gl_end(t->shared);
        return st;
    }
    glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
    glPixelStorei(GL_PACK_ALIGNMENT, 4);
    glPixelStorei(GL_PACK_ROW_LENGTH, (GLint)(t->pitch / 4));
    glGetTextureImage(t->gl_name, 0, GL_RGBA, GL_UNSIGNED_BYTE, (GLsizei)t->size,
                      (void *)(uintptr_t)cugl_buffer_handle(t->pinned_buffer));
    glPixelStorei(GL_PACK_ROW_LENGTH, 0);
    return cugl_app_check_gl("demo_target_gl_end", "glGetTextureImage into pinned memory");
}

cugl_status demo_targets_gl_end(demo *d, demo_target *const *targets, int count)
{
    cugl_status st = check_targets(targets, count, __func__);
    if (st != CUGL_OK || targets[0]->interop == DEMO_INTEROP_MAP)
        return st;
    bool any = false;
    for (int i = 0; i < count; i++)
        any = any || copied_out(targets[i]);
    if (any)
        demo_phase_begin(d, DEMO_PHASE_GL_COPY,
                         targets[0]->interop == DEMO_INTEROP_SHARED ? "copy-out" : "readback",
                         false);
    for (int i = 0; i < count && st == CUGL_OK; i++) {
        demo_target *t = targets[i];
        if (copied_out(t))
            st = copy_out(t, d);
        else if (t->interop == DEMO_INTEROP_SHARED)
            st = cugl_app_shared_gl_end(t->shared);
    }
    if (any)
        demo_phase_end(d, DEMO_PHASE_GL_COPY);
    return st;
}

cugl_status demo_target_gl_begin(demo_target *t, demo *d)
{
    return demo_targets_gl_begin(d, &t, 1);
}

cugl_status demo_target_gl_end(demo_target *t, demo *d)
{
    return demo_targets_gl_end(d, &t, 1);
}

cugl_status demo_target_write(demo_target *t, demo *d, const char *phase, demo_write_fn write,
                              void *user)
{
    demo_io io;
    cugl_status st = demo_target_cuda_begin(t, d, &io);
    if (st != CUGL_OK)
        return st;
    demo_phase_begin(d, DEMO_PHASE_CUDA, phase, true);
    st = write(d, user, &io.dest);
    demo_phase_end(d, DEMO_PHASE_CUDA);
    /* GL gets the target back even when the launch failed. */
    cugl_status end = demo_target_cuda_end(t, d);
    return st != CUGL_OK ? st : end;
}

cugl_status demo_target_render_fullscreen(demo_target *t, demo *d, demo_write_fn write,
                                          void *user)
{
    cugl_status st = CUGL_OK;
    if (t->width != d->width || t->height != d->height) {
        /* The window was resized: a texture of the new size. */
        demo_target_destroy(t, d);
        st = demo_target_create_texture(t, d, d->width, d->height, DEMO_TO_GL);
    }
    if (st == CUGL_OK)
        st = demo_target_write(t, d, "cuda", write, user);
    if (st == CUGL_OK)
        st = demo_target_gl_begin(t, d);
    if (st != CUGL_OK)
        return st;
    demo_phase_begin(d, DEMO_PHASE_DRAW, "draw", false);
    st = demo_target_blit(t, d);
    demo_phase_end(d, DEMO_PHASE_DRAW);
    cugl_status end = demo_target_gl_end(t, d);
    return st != CUGL_OK ? st : end;
}

cugl_status demo_target_blit(demo_target *t, demo *d)
{
    /* Shared memory: the pixels where CUDA wrote them, no texture between. */
    if (t->drawn_from_memory)
        return cugl_app_blit_rgba8_buffer(d->ctx, cugl_app_shared_gl_buffer(t->shared),
                                          t->width, t->height, t->pitch);
    return cugl_app_blit(d->ctx, t->gl_name, false);
}

void demo_target_destroy(demo_target *t, demo *d)
{
    /* Kernels still queued may use the objects and the memory. */
    if (d->stream)
        cugl_stream_sync(d->stream);
    drop_objects(t);
    for (int i = 0; i < 2; i++) {
        cugl_graphics_resource *r = i ? t->spare_resource : t->resource;
        if (r) {
            cugl_graphics_resource_close(r, d->stream); /* unmapped if held */
            cugl_graphics_resource_release(r);
        }
    }
    if (t->spare_gl_name) {
        if (t->texture)
            glDeleteTextures(1, &t->spare_gl_name);
        else
            glDeleteBuffers(1, &t->spare_gl_name);
    }
    cugl_app_shared_destroy(t->shared);
    cugl_buffer_release(t->device_buffer);
    cugl_buffer_release(t->pinned_buffer);
    cugl_memory_resource_release(t->device_mr);
    cugl_memory_resource_release(t->pinned_mr);
    if (t->owns_gl_name) {
        if (t->texture)
            glDeleteTextures(1, &t->gl_name);
        else
            glDeleteBuffers(1, &t->gl_name);
    }
    *t = (demo_target){.interop = t->interop};
}
