/*
 * target_common.c - what every interop path's turns share (target_map.c,
 * target_shared.c, target_host.c): the timer's phases, the GL names of a
 * slot, uploads from the host, a slot's retirement, what CUDA does with the
 * memory. It calls no path: the paths and target.c call it.
 */
#include <string.h>

#include "target_internal.h"

void cugl__target_phase_begin(cugl_app_target *t, int phase, const char *name, bool cuda)
{
    if (t->timer)
        (void)cugl_app_timer_begin(t->timer, phase, name, cuda);
}

void cugl__target_phase_end(cugl_app_target *t, int phase)
{
    if (t->timer)
        (void)cugl_app_timer_end(t->timer, phase);
}

cugl_status cugl__target_gl_texture(cugl_app_target *t, GLuint *name, const char *who)
{
    GLenum target = t->kind == CUGL_APP_TARGET_VOLUME ? GL_TEXTURE_3D : GL_TEXTURE_2D;
    cugl_app_drain_gl_errors();
    glCreateTextures(target, 1, name);
    if (target == GL_TEXTURE_3D)
        glTextureStorage3D(*name, 1, t->internal_format, t->width, t->height, t->depth);
    else
        glTextureStorage2D(*name, 1, t->internal_format, t->width, t->height);
    glTextureParameteri(*name, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTextureParameteri(*name, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTextureParameteri(*name, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTextureParameteri(*name, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glTextureParameteri(*name, GL_TEXTURE_WRAP_R, GL_CLAMP_TO_EDGE);
    if (t->format == CUGL_APP_FORMAT_R32F) {
        /* One channel shows as grey. */
        glTextureParameteri(*name, GL_TEXTURE_SWIZZLE_G, GL_RED);
        glTextureParameteri(*name, GL_TEXTURE_SWIZZLE_B, GL_RED);
    }
    return cugl_app_check_gl(who, "a texture for the target");
}

cugl_status cugl__target_gl_buffer(cugl_app_target *t, GLuint *name, GLbitfield flags,
                                   const void *initial, const char *who)
{
    cugl_app_drain_gl_errors();
    glCreateBuffers(1, name);
    /* Immutable storage: what CUDA registered can never be respecified. */
    glNamedBufferStorage(*name, (GLsizeiptr)t->size, initial, flags);
    return cugl_app_check_gl(who, "a buffer for the target");
}

cugl_status cugl__target_upload(cugl_stream *stream, cugl_buffer *dst, const void *data,
                                size_t size)
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

void cugl__target_free_retired(cugl__app_retired *r)
{
    for (int i = 0; i < r->count; i++) {
        cugl_texture_release(r->textures[i]);
        cugl_surface_release(r->surfaces[i]);
    }
    r->count = 0;
}

cugl_status cugl__target_retire(cugl_app_target *t, cugl_stream *stream,
                                cugl_texture *const *textures, cugl_surface *const *surfaces,
                                int count)
{
    bool any = false;
    for (int i = 0; i < count; i++)
        any = any || textures[i] || surfaces[i];
    if (!any)
        return CUGL_OK;
    /* Free the batches the stream has passed; take a free slot, else wait
     * for the oldest (the next after the last one taken). */
    cugl__app_retired *r = NULL;
    for (int i = 0; i < CUGL__TARGET_RETIRED; i++) {
        cugl__app_retired *old = &t->retired[i];
        bool done = false;
        if (old->count && cugl_event_query(old->passed, &done) == CUGL_OK && done)
            cugl__target_free_retired(old);
        if (!r && !old->count)
            r = old;
    }
    cugl_status st = CUGL_OK;
    if (!r) {
        r = &t->retired[t->retired_next];
        st = cugl_event_sync(r->passed);
        cugl__target_free_retired(r);
    }
    t->retired_next = (int)(r - t->retired + 1) % CUGL__TARGET_RETIRED;
    /* An event of the stream's device marks the batch. Every free batch's
     * is made at once: what a target holds does not change with how far
     * the GPU lags (a batch taken only under load would add its event). */
    cugl_device *device = cugl_stream_device(stream);
    for (int i = 0; st == CUGL_OK && i < CUGL__TARGET_RETIRED; i++) {
        cugl__app_retired *b = &t->retired[i];
        if (b != r && b->count)
            continue; /* still waiting on its own event */
        if (b->passed && cugl_event_device(b->passed) != device) {
            cugl_event_release(b->passed);
            b->passed = NULL;
        }
        if (!b->passed)
            st = cugl_event_create(&b->passed, device, NULL);
    }
    if (st == CUGL_OK)
        st = cugl_event_record(r->passed, stream);
    for (int i = 0; i < count; i++) {
        r->textures[i] = textures[i];
        r->surfaces[i] = surfaces[i];
    }
    r->count = count;
    if (st != CUGL_OK) {
        /* Without an event to wait on, wait for the stream itself. */
        cugl_stream_sync(stream);
        cugl__target_free_retired(r);
    }
    return st;
}

cugl_app_cuda_use cugl__target_use(const cugl_app_target *t)
{
    if (t->use != CUGL_APP_CUDA_USE_DEFAULT)
        return t->use;
    return t->direction == CUGL_APP_TO_GL ? CUGL_APP_CUDA_WRITES : CUGL_APP_CUDA_READS;
}

void cugl__target_upload_gl(const cugl_app_target *t, const cugl__app_slot *s, GLuint unpack,
                            const void *pixels, size_t bytes, GLint row_pixels)
{
    if (t->kind == CUGL_APP_TARGET_BUFFER) {
        if (unpack)
            glCopyNamedBufferSubData(unpack, s->gl_name, 0, 0, (GLsizeiptr)bytes);
        else
            glNamedBufferSubData(s->gl_name, 0, (GLsizeiptr)bytes, pixels);
        return;
    }
    cugl__gl_pixels saved;
    cugl__gl_pixels_set(&saved, false, unpack, 1, row_pixels, t->height);
    const void *from = unpack ? NULL : pixels; /* offset 0 of the unpack buffer */
    if (t->kind == CUGL_APP_TARGET_VOLUME)
        glTextureSubImage3D(s->gl_name, 0, 0, 0, 0, t->width, t->height, t->depth,
                            t->pixel_format, t->pixel_type, from);
    else
        glTextureSubImage2D(s->gl_name, 0, 0, 0, t->width, t->height, t->pixel_format,
                            t->pixel_type, from);
    cugl__gl_pixels_restore(&saved);
}
