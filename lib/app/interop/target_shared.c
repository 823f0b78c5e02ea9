/*
 * target_shared.c - the shared path of a target: CUDA memory that GL
 * imports (cugl/app_shared.h), one shared object a slot. Nothing is mapped;
 * the two sides take turns with an event (CUDA's writes) and a fence (GL's
 * use), and pipelining (target.c) rotates three slots so that each wait
 * finds what it waits for long done.
 *
 *   image, CUDA writes   a shared texture; drawn straight from the memory
 *                        (RGBA8 written on the GL GPU), or its texture
 *                        filled from it when asked for (target.c)
 *   image, GL writes     GL renders into a texture of the target's, packed
 *                        into the shared memory at the end of GL's turn
 *   volume               the memory, and a 3-D texture filled from it at
 *                        the start of GL's turn
 *   buffer               the imported buffer itself
 */
#include "target_internal.h"

/* Whether CUDA's turn on the target waits for GL and marks its writes: not
 * where CUDA only reads what it wrote itself (GL's reads are waited for
 * when CUDA next writes it). */
static bool takes_cuda_turn(cugl_app_target *t)
{
    return cugl__target_use(t) != CUGL_APP_CUDA_READS || t->direction == CUGL_APP_FROM_GL;
}

/* Everyone who writes the memory besides its own device: the desc's
 * writers and, computing elsewhere, the target's device. */
static cugl_status open_to_writers(cugl_app_target *t, cugl__app_slot *s)
{
    cugl_device *writers[CUGL_APP_SHARED_MAX_WRITERS + 1];
    int count = 0;
    for (int i = 0; i < t->writer_count; i++)
        writers[count++] = t->writers[i];
    if (t->device != t->gl_device)
        writers[count++] = t->device;
    if (count == 0)
        return CUGL_OK;
    if (count > CUGL_APP_SHARED_MAX_WRITERS)
        count = CUGL_APP_SHARED_MAX_WRITERS;
    return cugl_app_shared_set_writers(s->shared, writers, count);
}

static cugl_status slot_create(cugl_app_target *t, cugl__app_slot *s, const void *initial,
                               cugl_stream *stream, const char *who)
{
    bool image_written = t->kind == CUGL_APP_TARGET_IMAGE && t->direction == CUGL_APP_TO_GL;
    CUGL__TRY(image_written ? cugl_app_shared_texture_create(&s->shared, t->gl_device,
                                                             t->internal_format, t->width,
                                                             t->height)
                            : cugl_app_shared_buffer_create(&s->shared, t->gl_device, t->size));
    CUGL__TRY(open_to_writers(t, s));
    cugl_status st = CUGL_OK;
    if (cugl_app_shared_size(s->shared) < t->size ||
        (image_written && cugl_app_shared_pitch(s->shared) != t->pitch))
        return cugl__fail(CUGL_ERROR_INVALID_STATE, who,
                          "the shared memory has %zu bytes with a pitch of %zu; the "
                          "target needs %zu with a pitch of %zu",
                          cugl_app_shared_size(s->shared),
                          cugl_app_shared_pitch(s->shared), t->size, t->pitch);
    if (image_written) {
        /* Filled only when its texture is asked for (target.c). Not drawn
         * from the memory where another GPU writes it: GL's shader reads
         * were seen to miss some of a peer's writes there, which the
         * texture's fill sees. */
        st = cugl_app_shared_set_texture_fill(s->shared, false);
        t->drawn_from_memory = t->format == CUGL_APP_FORMAT_RGBA8 && t->writer_count == 0 &&
                               t->device == t->gl_device;
        if (t->format == CUGL_APP_FORMAT_R32F && st == CUGL_OK) {
            glTextureParameteri(cugl_app_shared_gl_name(s->shared), GL_TEXTURE_SWIZZLE_G, GL_RED);
            glTextureParameteri(cugl_app_shared_gl_name(s->shared), GL_TEXTURE_SWIZZLE_B, GL_RED);
        }
        s->gl_name = cugl_app_shared_gl_name(s->shared);
    } else if (t->kind == CUGL_APP_TARGET_IMAGE) {
        /* GL renders into a texture of its own. */
        st = cugl__target_gl_texture(t, &s->gl_name, who);
    } else if (t->kind == CUGL_APP_TARGET_VOLUME) {
        if (!t->volume_texture)
            st = cugl__target_gl_texture(t, &t->volume_texture, who);
        s->gl_name = t->volume_texture;
    } else {
        s->gl_name = cugl_app_shared_gl_name(s->shared);
    }
    /* The initial contents are CUDA's first writes. */
    if (st == CUGL_OK && initial) {
        st = cugl_app_shared_cuda_begin(s->shared, stream);
        if (st == CUGL_OK)
            st = cugl__target_upload(stream, cugl_app_shared_buffer(s->shared), initial,
                                     t->size);
        if (st == CUGL_OK)
            st = cugl_app_shared_cuda_end(s->shared, stream);
    }
    return st;
}

static void slot_destroy(cugl_app_target *t, cugl__app_slot *s)
{
    /* The target's own texture: an image GL renders into. */
    if (t->kind == CUGL_APP_TARGET_IMAGE && t->direction == CUGL_APP_FROM_GL && s->gl_name)
        glDeleteTextures(1, &s->gl_name);
    cugl_app_shared_destroy(s->shared);
    *s = (cugl__app_slot){0};
}

static cugl_status cuda_begin(cugl_app_target *const *targets, int n, cugl_stream *stream,
                              cugl_app_access *out, const char *who)
{
    (void)who;
    cugl__target_phase_begin(targets[0], CUGL_APP_PHASE_ACQUIRE, "wait-gl", true);
    cugl_status st = CUGL_OK;
    int begun = 0;
    for (; begun < n; begun++) {
        cugl__app_slot *s = cugl__cuda_slot(targets[begun]);
        if (takes_cuda_turn(targets[begun]))
            st = cugl_app_shared_cuda_begin(s->shared, stream);
        if (st != CUGL_OK)
            break;
        out[begun].ptr = cugl_buffer_handle(cugl_app_shared_buffer(s->shared));
        out[begun].size = targets[begun]->size;
    }
    /* On a failure, the turns that began are ended again (and only they:
     * the one that failed has no turn to end, and its message stays). */
    for (int i = 0; st != CUGL_OK && i < begun; i++) {
        cugl__app_slot *s = cugl__cuda_slot(targets[i]);
        if (takes_cuda_turn(targets[i]))
            (void)cugl_app_shared_cuda_end(s->shared, stream);
    }
    cugl__target_phase_end(targets[0], CUGL_APP_PHASE_ACQUIRE);
    return st;
}

static cugl_status cuda_end(cugl_app_target *const *targets, int n, cugl_stream *stream,
                            const char *who)
{
    (void)who;
    cugl__target_phase_begin(targets[0], CUGL_APP_PHASE_RELEASE, "signal-gl", true);
    cugl_status st = CUGL_OK;
    for (int i = 0; i < n; i++) {
        if (!takes_cuda_turn(targets[i]))
            continue;
        cugl_status one = cugl_app_shared_cuda_end(cugl__cuda_slot(targets[i])->shared, stream);
        st = st != CUGL_OK ? st : one;
    }
    cugl__target_phase_end(targets[0], CUGL_APP_PHASE_RELEASE);
    return st;
}

/* An image GL renders into is GL's alone until the end of its turn. */
static bool rendered_by_gl(const cugl_app_target *t)
{
    return t->direction == CUGL_APP_FROM_GL && t->kind == CUGL_APP_TARGET_IMAGE;
}

/* A volume's 3-D texture from the slot's memory, on the GPU; the unpack
 * state is put back. */
static cugl_status fill_volume(cugl_app_target *t, cugl__app_slot *s, const char *who)
{
    cugl__gl_pixels saved;
    cugl__gl_pixels_set(&saved, false, cugl_app_shared_gl_buffer(s->shared), 1,
                        (GLint)(t->pitch / t->texel), t->height);
    cugl_app_drain_gl_errors();
    glTextureSubImage3D(t->volume_texture, 0, 0, 0, 0, t->width, t->height, t->depth,
                        t->pixel_format, t->pixel_type, NULL);
    cugl_status st = cugl_app_check_gl(who,
                                       "the volume's texture from the shared memory");
    cugl__gl_pixels_restore(&saved);
    return st;
}

static cugl_status gl_begin(cugl_app_target *const *targets, int n, const char *who)
{
    cugl__target_phase_begin(targets[0], CUGL_APP_PHASE_HANDOFF, "wait-cuda", false);
    cugl_status st = CUGL_OK;
    int begun = 0;
    for (; begun < n && st == CUGL_OK; begun++) {
        cugl_app_target *t = targets[begun];
        cugl__app_slot *s = cugl__gl_slot(t);
        if (rendered_by_gl(t))
            continue;
        st = cugl_app_shared_gl_begin(s->shared);
        /* Pipelined, a buffer's GL name is the slot's. */
        if (st == CUGL_OK && t->kind == CUGL_APP_TARGET_BUFFER)
            s->gl_name = cugl_app_shared_gl_name(s->shared);
        if (st == CUGL_OK && t->kind == CUGL_APP_TARGET_VOLUME)
            st = fill_volume(t, s, who);
    }
    /* On a failure, the turns begun are ended again. */
    for (int i = 0; st != CUGL_OK && i < begun - 1; i++)
        if (!rendered_by_gl(targets[i]))
            (void)cugl_app_shared_gl_end(cugl__gl_slot(targets[i])->shared);
    cugl__target_phase_end(targets[0], CUGL_APP_PHASE_HANDOFF);
    return st;
}

/* What GL rendered, packed into the memory CUDA reads once CUDA has read
 * the last turn's. A pack into imported memory runs far below memory speed
 * where a compute shader does not: RGBA8 takes the shader. */
static cugl_status copy_out(cugl_app_target *t, cugl__app_slot *s, const char *who)
{
    cugl_status st = cugl_app_shared_gl_begin(s->shared);
    if (st != CUGL_OK)
        return st;
    if (t->format == CUGL_APP_FORMAT_RGBA8) {
        st = cugl_app_pack_rgba8(t->ctx, s->gl_name, cugl_app_shared_gl_buffer(s->shared),
                                 t->width, t->height, t->pitch);
    } else {
        cugl__gl_pixels saved;
        cugl__gl_pixels_set(&saved, true, cugl_app_shared_gl_buffer(s->shared), 1,
                            (GLint)(t->pitch / t->texel), 0);
        cugl_app_drain_gl_errors();
        glGetTextureImage(s->gl_name, 0, t->pixel_format, t->pixel_type, (GLsizei)t->size, NULL);
        st = cugl_app_check_gl(who, "packing the image into shared memory");
        cugl__gl_pixels_restore(&saved);
    }
    cugl_status end = cugl_app_shared_gl_end(s->shared);
    return st != CUGL_OK ? st : end;
}

static cugl_status gl_end(cugl_app_target *const *targets, int n, const char *who)
{
    bool copies = false;
    for (int i = 0; i < n; i++)
        copies = copies || rendered_by_gl(targets[i]);
    if (copies)
        cugl__target_phase_begin(targets[0], CUGL_APP_PHASE_GL_COPY, "copy-out", false);
    cugl_status st = CUGL_OK;
    for (int i = 0; i < n; i++) {
        cugl_app_target *t = targets[i];
        cugl__app_slot *s = cugl__gl_slot(t);
        cugl_status one =
            rendered_by_gl(t) ? copy_out(t, s, who) : cugl_app_shared_gl_end(s->shared);
        st = st != CUGL_OK ? st : one;
    }
    if (copies)
        cugl__target_phase_end(targets[0], CUGL_APP_PHASE_GL_COPY);
    return st;
}

const cugl__app_path cugl__app_path_shared = {
    .interop = CUGL_APP_INTEROP_SHARED,
    .pipeline_slots = 3,
    .slot_create = slot_create,
    .slot_destroy = slot_destroy,
    .cuda_begin = cuda_begin,
    .cuda_end = cuda_end,
    .gl_begin = gl_begin,
    .gl_end = gl_end,
};
