/*
 * target_map.c - the map path of a target: the GL object registered with
 * CUDA once (cugl/graphics.h) and mapped each turn. The targets of a turn
 * are mapped and unmapped together in one driver call, each with the map
 * flags of its use; CUDA writes an image through a surface object and
 * reads it through a texture object on the mapped array.
 *
 * Pipelined, the slot CUDA wrote stays mapped ("held") until its next
 * turn: on the GPUs measured a map waits for all of GL's earlier work and
 * an unmap holds all of GL's later work, so unmapping it while GL draws
 * the other slot would make GL wait for this turn's kernels.
 */
#include "target_internal.h"

static unsigned map_flags_of(cugl_app_cuda_use use)
{
    switch (use) {
    case CUGL_APP_CUDA_READS:
        return CUGL_GRAPHICS_READ_ONLY;
    case CUGL_APP_CUDA_READS_WRITES:
        return CUGL_GRAPHICS_NONE;
    default:
        return CUGL_GRAPHICS_WRITE_DISCARD;
    }
}

static cugl_status slot_create(cugl_app_target *t, cugl__app_slot *s, const void *initial,
                               cugl_stream *stream, const char *who)
{
    (void)stream;
    if (t->kind == CUGL_APP_TARGET_BUFFER) {
        CUGL__TRY(cugl__target_gl_buffer(t, &s->gl_name, 0, initial, who));
        return cugl_graphics_resource_from_gl_buffer(&s->resource, t->device, s->gl_name,
                                                     map_flags_of(cugl__target_use(t)));
    }
    CUGL__TRY(cugl__target_gl_texture(t, &s->gl_name, who));
    unsigned flags = t->direction == CUGL_APP_TO_GL
                         ? CUGL_GRAPHICS_SURFACE_LOAD_STORE | CUGL_GRAPHICS_WRITE_DISCARD
                         : CUGL_GRAPHICS_READ_ONLY;
    return cugl_graphics_resource_from_gl_image(
        &s->resource, t->device, s->gl_name,
        t->kind == CUGL_APP_TARGET_VOLUME ? CUGL_GL_TEXTURE_3D : CUGL_GL_TEXTURE_2D, flags);
}

static void slot_destroy(cugl_app_target *t, cugl__app_slot *s)
{
    cugl_buffer_release(s->mapped);
    cugl_array_release(s->mapped_array);
    cugl_surface_release(s->surface);
    cugl_texture_release(s->sampler);
    if (s->resource) {
        cugl_graphics_resource_close(s->resource, NULL); /* unmapped if held */
        cugl_graphics_resource_release(s->resource);
    }
    if (s->gl_name) {
        if (t->kind == CUGL_APP_TARGET_BUFFER)
            glDeleteBuffers(1, &s->gl_name);
        else
            glDeleteTextures(1, &s->gl_name);
    }
    *s = (cugl__app_slot){0};
}

/* The object CUDA uses on a mapped slot: the buffer, or a surface (to
 * write) or texture object (to read) on the array. */
static cugl_status map_object(cugl_app_target *t, cugl__app_slot *s, cugl_app_access *a,
                              const char *who)
{
    if (t->kind == CUGL_APP_TARGET_BUFFER) {
        cugl_status st = cugl_graphics_resource_buffer(&s->mapped, s->resource);
        if (st != CUGL_OK)
            return st;
        if (cugl_buffer_size(s->mapped) < t->size)
            return cugl__fail(CUGL_ERROR_INVALID_STATE, who,
                              "GL buffer %u maps to %zu bytes, fewer than %zu",
                              s->gl_name, cugl_buffer_size(s->mapped), t->size);
        a->ptr = cugl_buffer_handle(s->mapped);
        a->size = t->size;
        return CUGL_OK;
    }
    /* The image is reached through an object on the array, not linearly. */
    a->pitch = a->slice = 0;
    cugl_array *array = NULL;
    cugl_status st = cugl_graphics_resource_array(&array, s->resource, 0, 0);
    if (st != CUGL_OK)
        return st;
    cugl_resource_desc on_array = {.kind = CUGL_RESOURCE_ARRAY, .array = array};
    if (cugl__target_use(t) != CUGL_APP_CUDA_READS) {
        st = cugl_surface_create(&s->surface, t->device, &on_array);
        if (st == CUGL_OK)
            a->surface = cugl_surface_handle(s->surface);
    } else {
        st = cugl_texture_create(
            &s->sampler, t->device, &on_array,
            &(cugl_texture_desc){
                .address_mode = {CUGL_ADDRESS_CLAMP, CUGL_ADDRESS_CLAMP, CUGL_ADDRESS_CLAMP},
                .filter_mode = CUGL_FILTER_POINT,
                .read_mode = CUGL_READ_ELEMENT_TYPE,
            });
        if (st == CUGL_OK)
            a->texture = cugl_texture_handle(s->sampler);
    }
    /* The objects hold the array, and the slot does until the unmap (for
     * copies in); the unmap closes it. */
    s->mapped_array = array;
    return st;
}

/* Hand what a slot's objects were to the retirement (they may still be in
 * use by queued kernels) and forget them. */
static void take_objects(cugl__app_slot *s, cugl_texture **texture, cugl_surface **surface)
{
    cugl_buffer_release(s->mapped);
    cugl_array_release(s->mapped_array);
    s->mapped_array = NULL;
    *texture = s->sampler;
    *surface = s->surface;
    s->mapped = NULL;
    s->sampler = NULL;
    s->surface = NULL;
}

/* Unmap, in one call, the slots the targets' last turns held mapped. */
static cugl_status unmap_held(cugl_app_target *const *targets, int n, cugl_stream *stream)
{
    cugl_graphics_resource *held[CUGL_APP_TARGET_MAX_TURN * CUGL__TARGET_SLOTS];
    cugl_texture *textures[CUGL_APP_TARGET_MAX_TURN * CUGL__TARGET_SLOTS];
    cugl_surface *surfaces[CUGL_APP_TARGET_MAX_TURN * CUGL__TARGET_SLOTS];
    int count = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < targets[i]->slot_count; j++) {
            cugl__app_slot *s = &targets[i]->slots[j];
            if (!s->held)
                continue;
            s->held = false;
            held[count] = s->resource;
            take_objects(s, &textures[count], &surfaces[count]);
            count++;
        }
    if (count == 0)
        return CUGL_OK;
    cugl_status st = cugl_graphics_unmap(held, (size_t)count, stream);
    cugl_status retire = CUGL_OK;
    for (int done = 0; done < count; done += CUGL_APP_TARGET_MAX_TURN) {
        int batch = count - done < CUGL_APP_TARGET_MAX_TURN ? count - done
                                                            : CUGL_APP_TARGET_MAX_TURN;
        cugl_status r = cugl__target_retire(targets[0], stream, textures + done,
                                            surfaces + done, batch);
        retire = retire != CUGL_OK ? retire : r;
    }
    return st != CUGL_OK ? st : retire;
}

static cugl_status cuda_begin(cugl_app_target *const *targets, int n, cugl_stream *stream,
                              cugl_app_access *out, const char *who)
{
    cugl_app_target *first = targets[0];
    cugl__target_phase_begin(first, CUGL_APP_PHASE_ACQUIRE, "map", true);
    cugl_status st = unmap_held(targets, n, stream);
    cugl_graphics_resource *resources[CUGL_APP_TARGET_MAX_TURN];
    for (int i = 0; i < n && st == CUGL_OK; i++) {
        cugl__app_slot *s = cugl__cuda_slot(targets[i]);
        resources[i] = s->resource;
        unsigned want = map_flags_of(cugl__target_use(targets[i]));
        if (targets[i]->kind == CUGL_APP_TARGET_BUFFER &&
            cugl_graphics_resource_map_flags(s->resource) != want)
            st = cugl_graphics_resource_set_map_flags(s->resource, want);
    }
    if (st == CUGL_OK)
        st = cugl_graphics_map(resources, (size_t)n, stream);
    for (int i = 0; i < n && st == CUGL_OK; i++)
        st = map_object(targets[i], cugl__cuda_slot(targets[i]), &out[i], who);
    if (st != CUGL_OK && n > 0 && cugl_graphics_resource_is_mapped(resources[0])) {
        for (int i = 0; i < n; i++) {
            cugl_texture *texture = NULL;
            cugl_surface *surface = NULL;
            take_objects(cugl__cuda_slot(targets[i]), &texture, &surface);
            cugl_surface_release(surface); /* never used: nothing was queued */
            cugl_texture_release(texture);
        }
        cugl_graphics_unmap(resources, (size_t)n, stream);
    }
    cugl__target_phase_end(first, CUGL_APP_PHASE_ACQUIRE);
    return st;
}

static cugl_status cuda_end(cugl_app_target *const *targets, int n, cugl_stream *stream,
                            const char *who)
{
    (void)who;
    cugl_graphics_resource *resources[CUGL_APP_TARGET_MAX_TURN];
    cugl_texture *textures[CUGL_APP_TARGET_MAX_TURN];
    cugl_surface *surfaces[CUGL_APP_TARGET_MAX_TURN];
    int count = 0;
    for (int i = 0; i < n; i++) {
        cugl_app_target *t = targets[i];
        cugl__app_slot *s = cugl__cuda_slot(t);
        /* Pipelined, what CUDA wrote stays mapped until its next turn, GL
         * drawing the slot written a turn earlier; where there is none
         * (the first turn), GL draws this one, unmapped now. */
        int gl_next = t->last_written != t->cuda_slot ? t->last_written : t->previous;
        if (t->pipelined && cugl__target_use(t) == CUGL_APP_CUDA_WRITES && gl_next >= 0) {
            s->held = true;
            continue;
        }
        resources[count] = s->resource;
        take_objects(s, &textures[count], &surfaces[count]);
        count++;
    }
    if (count == 0)
        return CUGL_OK;
    cugl__target_phase_begin(targets[0], CUGL_APP_PHASE_RELEASE, "unmap", true);
    cugl_status st = cugl_graphics_unmap(resources, (size_t)count, stream);
    cugl__target_phase_end(targets[0], CUGL_APP_PHASE_RELEASE);
    /* Queued kernels may still use the objects: released once they ran. */
    cugl_status retire = cugl__target_retire(targets[0], stream, textures, surfaces, count);
    return st != CUGL_OK ? st : retire;
}

/* GL's turn needs nothing of this path: the unmap ordered it. */
static cugl_status gl_turn(cugl_app_target *const *targets, int n, const char *who)
{
    (void)targets;
    (void)n;
    (void)who;
    return CUGL_OK;
}

const cugl__app_path cugl__app_path_map = {
    .interop = CUGL_APP_INTEROP_MAP,
    .pipeline_slots = 2,
    .slot_create = slot_create,
    .slot_destroy = slot_destroy,
    .cuda_begin = cuda_begin,
    .cuda_end = cuda_end,
    .gl_begin = gl_turn,
    .gl_end = gl_turn,
};
