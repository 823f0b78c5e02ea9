/*
 * target_host.c - the host path of a target: device memory CUDA uses, and
 * copies through pinned host memory to or from the GL object. It works
 * wherever GL and CUDA do, however far apart (GL on Mesa, on another GPU,
 * under WSL), and is what the other paths are measured against. Its copies
 * wait for the stream, so it is never pipelined.
 */
#include "target_internal.h"

static cugl_status slot_create(cugl_app_target *t, cugl__app_slot *s, const void *initial,
                               cugl_stream *stream, const char *who)
{
    cugl_status st = t->kind == CUGL_APP_TARGET_BUFFER
                         ? cugl__target_gl_buffer(t, &s->gl_name, GL_DYNAMIC_STORAGE_BIT,
                                                  initial, who)
                         : cugl__target_gl_texture(t, &s->gl_name, who);
    /* Without a CUDA device the GL object is all there is. */
    if (st != CUGL_OK || !t->device)
        return st;
    cugl_memory_resource *device_mr = NULL, *pinned_mr = NULL;
    if (st == CUGL_OK)
        st = cugl_device_memory_resource_create(&device_mr, t->device, NULL);
    if (st == CUGL_OK)
        st = cugl_legacy_pinned_memory_resource_create(&pinned_mr, t->device);
    if (st == CUGL_OK)
        st = cugl_memory_resource_allocate(&s->device_buffer, device_mr, t->size, stream);
    if (st == CUGL_OK)
        st = cugl_memory_resource_allocate(&s->pinned_buffer, pinned_mr, t->size, stream);
    /* The buffers hold their resources. */
    cugl_memory_resource_release(device_mr);
    cugl_memory_resource_release(pinned_mr);
    if (st == CUGL_OK && initial)
        st = cugl__target_upload(stream, s->device_buffer, initial, t->size);
    return st;
}

static void slot_destroy(cugl_app_target *t, cugl__app_slot *s)
{
    cugl_buffer_release(s->device_buffer);
    cugl_buffer_release(s->pinned_buffer);
    if (s->gl_name) {
        if (t->kind == CUGL_APP_TARGET_BUFFER)
            glDeleteBuffers(1, &s->gl_name);
        else
            glDeleteTextures(1, &s->gl_name);
    }
    *s = (cugl__app_slot){0};
}

/* What GL wrote (gl_end put it in pinned memory) goes to the device. */
static cugl_status cuda_begin(cugl_app_target *const *targets, int n, cugl_stream *stream,
                              cugl_app_access *out, const char *who)
{
    (void)who;
    bool any = false;
    for (int i = 0; i < n; i++) {
        cugl__app_slot *s = cugl__cuda_slot(targets[i]);
        out[i].ptr = cugl_buffer_handle(s->device_buffer);
        out[i].size = targets[i]->size;
        any = any || targets[i]->direction == CUGL_APP_FROM_GL;
    }
    if (!any)
        return CUGL_OK;
    cugl__target_phase_begin(targets[0], CUGL_APP_PHASE_ACQUIRE, "to-device", true);
    cugl_status st = CUGL_OK;
    for (int i = 0; i < n && st == CUGL_OK; i++) {
        cugl__app_slot *s = cugl__cuda_slot(targets[i]);
        if (targets[i]->direction == CUGL_APP_FROM_GL)
            st = cugl_buffer_copy_from(s->device_buffer, s->pinned_buffer, stream);
    }
    cugl__target_phase_end(targets[0], CUGL_APP_PHASE_ACQUIRE);
    return st;
}

/* Pinned memory into the slot's GL object; the unpack state is put back. */
static cugl_status upload(cugl_app_target *t, cugl__app_slot *s)
{
    const void *data = (const void *)(uintptr_t)cugl_buffer_handle(s->pinned_buffer);
    if (t->kind == CUGL_APP_TARGET_BUFFER) {
        glNamedBufferSubData(s->gl_name, 0, (GLsizeiptr)t->size, data);
        return CUGL_OK;
    }
    GLint bound = 0, alignment = 4, row_length = 0, image_height = 0;
    glGetIntegerv(GL_PIXEL_UNPACK_BUFFER_BINDING, &bound);
    glGetIntegerv(GL_UNPACK_ALIGNMENT, &alignment);
    glGetIntegerv(GL_UNPACK_ROW_LENGTH, &row_length);
    glGetIntegerv(GL_UNPACK_IMAGE_HEIGHT, &image_height);
    glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, (GLint)(t->pitch / t->texel));
    glPixelStorei(GL_UNPACK_IMAGE_HEIGHT, t->height);
    if (t->kind == CUGL_APP_TARGET_VOLUME)
        glTextureSubImage3D(s->gl_name, 0, 0, 0, 0, t->width, t->height, t->depth,
                            t->pixel_format, t->pixel_type, data);
    else
        glTextureSubImage2D(s->gl_name, 0, 0, 0, t->width, t->height, t->pixel_format,
                            t->pixel_type, data);
    glPixelStorei(GL_UNPACK_IMAGE_HEIGHT, image_height);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, row_length);
    glPixelStorei(GL_UNPACK_ALIGNMENT, alignment);
    glBindBuffer(GL_PIXEL_UNPACK_BUFFER, (GLuint)bound);
    return CUGL_OK;
}

/* What CUDA wrote -> pinned memory (one wait for all) -> GL. */
static cugl_status cuda_end(cugl_app_target *const *targets, int n, cugl_stream *stream,
                            const char *who)
{
    bool written[CUGL_APP_TARGET_MAX_TURN], any = false;
    for (int i = 0; i < n; i++) {
        written[i] = targets[i]->direction == CUGL_APP_TO_GL &&
                     cugl__target_use(targets[i]) != CUGL_APP_CUDA_READS;
        any = any || written[i];
    }
    if (!any)
        return CUGL_OK;
    cugl__target_phase_begin(targets[0], CUGL_APP_PHASE_RELEASE, "download", true);
    cugl_status st = CUGL_OK;
    for (int i = 0; i < n && st == CUGL_OK; i++) {
        cugl__app_slot *s = cugl__cuda_slot(targets[i]);
        if (written[i])
            st = cugl_buffer_copy_from(s->pinned_buffer, s->device_buffer, stream);
    }
    if (st == CUGL_OK)
        st = cugl_stream_sync(stream);
    cugl__target_phase_end(targets[0], CUGL_APP_PHASE_RELEASE);
    if (st != CUGL_OK)
        return st;
    cugl__target_phase_begin(targets[0], CUGL_APP_PHASE_HANDOFF, "upload", false);
    cugl_app_drain_gl_errors();
    for (int i = 0; i < n; i++)
        if (written[i])
            upload(targets[i], cugl__cuda_slot(targets[i]));
    cugl__target_phase_end(targets[0], CUGL_APP_PHASE_HANDOFF);
    return cugl_app_check_gl(who, "an upload from pinned memory");
}

static cugl_status gl_begin(cugl_app_target *const *targets, int n, const char *who)
{
    (void)targets;
    (void)n;
    (void)who;
    return CUGL_OK;
}

/* What GL drew into pinned memory, for the next CUDA turn (a wait for GL). */
static cugl_status gl_end(cugl_app_target *const *targets, int n, const char *who)
{
    bool any = false;
    for (int i = 0; i < n; i++)
        any = any || targets[i]->direction == CUGL_APP_FROM_GL;
    if (!any)
        return CUGL_OK;
    cugl__target_phase_begin(targets[0], CUGL_APP_PHASE_GL_COPY, "readback", false);
    GLint bound = 0, alignment = 4, row_length = 0;
    glGetIntegerv(GL_PIXEL_PACK_BUFFER_BINDING, &bound);
    glGetIntegerv(GL_PACK_ALIGNMENT, &alignment);
    glGetIntegerv(GL_PACK_ROW_LENGTH, &row_length);
    cugl_app_drain_gl_errors();
    glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    for (int i = 0; i < n; i++) {
        cugl_app_target *t = targets[i];
        if (t->direction != CUGL_APP_FROM_GL)
            continue;
        cugl__app_slot *s = cugl__gl_slot(t);
        void *data = (void *)(uintptr_t)cugl_buffer_handle(s->pinned_buffer);
        if (t->kind == CUGL_APP_TARGET_BUFFER) {
            glGetNamedBufferSubData(s->gl_name, 0, (GLsizeiptr)t->size, data);
        } else {
            glPixelStorei(GL_PACK_ROW_LENGTH, (GLint)(t->pitch / t->texel));
            glGetTextureImage(s->gl_name, 0, t->pixel_format, t->pixel_type, (GLsizei)t->size,
                              data);
        }
    }
    cugl_status st = cugl_app_check_gl(who, "a readback into pinned memory");
    glPixelStorei(GL_PACK_ROW_LENGTH, row_length);
    glPixelStorei(GL_PACK_ALIGNMENT, alignment);
    glBindBuffer(GL_PIXEL_PACK_BUFFER, (GLuint)bound);
    cugl__target_phase_end(targets[0], CUGL_APP_PHASE_GL_COPY);
    return st;
}

const cugl__app_path cugl__app_path_host = {
    .interop = CUGL_APP_INTEROP_HOST,
    .pipeline_slots = 1,
    .slot_create = slot_create,
    .slot_destroy = slot_destroy,
    .cuda_begin = cuda_begin,
    .cuda_end = cuda_end,
    .gl_begin = gl_begin,
    .gl_end = gl_end,
};
