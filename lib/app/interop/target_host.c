/*
 * target_host.c - the host path of a target: device memory CUDA uses, and
 * copies through host memory to or from the GL object. It works wherever
 * GL and CUDA do, however far apart (GL on Mesa, on another GPU, under
 * WSL), and is what the other paths are measured against.
 *
 * The host memory is GL's own where it can be: a persistently mapped GL
 * buffer (the slot's staging buffer) whose pages CUDA registers. CUDA
 * copies its output into it by DMA on the stream, and GL uploads from it
 * as a pixel-unpack (or copy) source on the GPU: the CPU moves no pixel,
 * and waits only for the copy's event before GL's upload, which pipelined
 * (two slots) has long run. GL's fence after each use of the staging
 * buffer keeps CUDA from overwriting what GL still reads. Where CUDA cannot
 * register GL's memory, the copies go through pinned memory and GL reads
 * the pixels from it on the CPU, as the reason says; that way is never
 * pipelined. Without a CUDA device, the GL object is all a slot has
 * (cugl_app_target_copy_from uploads host memory straight to it).
 */
#include <string.h>

#include "target_internal.h"

/* The staging buffer's flags: mapped for as long as it lives, coherent,
 * in host memory (the client's storage), so that CUDA can register it. */
enum {
    STAGING_MAP = GL_MAP_READ_BIT | GL_MAP_WRITE_BIT | GL_MAP_PERSISTENT_BIT |
                  GL_MAP_COHERENT_BIT,
};

/* The slot's staging buffer, mapped and registered with CUDA; false (with
 * why) where GL or CUDA will not, the slot then having none. */
static bool make_staging(cugl_app_target *t, cugl__app_slot *s, char *why, size_t why_size)
{
    cugl_app_drain_gl_errors();
    glCreateBuffers(1, &s->staging);
    glNamedBufferStorage(s->staging, (GLsizeiptr)t->size, NULL,
                         STAGING_MAP | GL_CLIENT_STORAGE_BIT);
    s->staging_map = glMapNamedBufferRange(s->staging, 0, (GLsizeiptr)t->size, STAGING_MAP);
    GLenum e = glGetError();
    cugl_status st = CUGL_ERROR_GL;
    if (s->staging_map && e == GL_NO_ERROR)
        st = cugl_buffer_register_host(&s->staged, t->device, s->staging_map, t->size);
    if (st == CUGL_OK)
        return true;
    if (s->staging_map && e == GL_NO_ERROR)
        snprintf(why, why_size, "%s", cugl_last_error());
    else
        snprintf(why, why_size, "GL maps no persistent buffer of %zu bytes (GL error 0x%04x)",
                 t->size, e);
    if (s->staging_map)
        glUnmapNamedBuffer(s->staging);
    glDeleteBuffers(1, &s->staging);
    s->staging = 0;
    s->staging_map = NULL;
    return false;
}

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
    /* The first slot decides how the target copies; the others follow. */
    if (t->slot_count == 0) {
        char why[384];
        t->host_staged = make_staging(t, s, why, sizeof why);
        if (!t->host_staged) {
            size_t used = strlen(t->reason);
            snprintf(t->reason + used, sizeof t->reason - used,
                     "; GL's memory is not CUDA's to copy into (%s): the copies go through "
                     "pinned memory, GL reading them on the CPU",
                     why);
        }
    } else if (t->host_staged) {
        char why[384];
        if (!make_staging(t, s, why, sizeof why))
            return cugl__fail(CUGL_ERROR_GL, who, "a staging buffer for a pipelined slot: %s",
                              why);
    }
    cugl_memory_resource *device_mr = NULL, *pinned_mr = NULL;
    st = cugl_device_memory_resource_create(&device_mr, t->device, NULL);
    if (st == CUGL_OK && !t->host_staged)
        st = cugl_legacy_pinned_memory_resource_create(&pinned_mr, t->device);
    if (st == CUGL_OK)
        st = cugl_memory_resource_allocate(&s->device_buffer, device_mr, t->size, stream);
    if (st == CUGL_OK && !t->host_staged)
        st = cugl_memory_resource_allocate(&s->pinned_buffer, pinned_mr, t->size, stream);
    if (st == CUGL_OK && t->host_staged)
        st = cugl_event_create(&s->staged_done, t->device, NULL);
    /* The buffers hold their resources. */
    cugl_memory_resource_release(device_mr);
    cugl_memory_resource_release(pinned_mr);
    if (st == CUGL_OK && initial)
        st = cugl__target_upload(stream, s->device_buffer, initial, t->size);
    return st;
}

static void slot_destroy(cugl_app_target *t, cugl__app_slot *s)
{
    (void)cugl__gl_fence_wait(&s->gl_done, "the staging buffer", "cugl_app_target_destroy");
    if (s->staged_done)
        (void)cugl_event_sync(s->staged_done);
    cugl_event_release(s->staged_done);
    cugl_buffer_release(s->staged); /* unregisters GL's memory while it is mapped */
    if (s->staging) {
        glUnmapNamedBuffer(s->staging);
        glDeleteBuffers(1, &s->staging);
    }
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

/* GL's last use of the slot's staging buffer is done (its fence waited for
 * on the CPU; long passed where the slots rotate). */
static cugl_status wait_gl(cugl__app_slot *s, const char *who)
{
    return cugl__gl_fence_wait(&s->gl_done, "the staging buffer", who);
}

/* A fence after GL's use of the slot's staging buffer. */
static cugl_status fence_gl(cugl__app_slot *s, const char *who)
{
    s->gl_done = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
    if (!s->gl_done)
        return cugl__fail(CUGL_ERROR_GL, who, "glFenceSync after the staging buffer failed");
    return CUGL_OK;
}

/* What GL wrote (gl_end put it in host memory) goes to the device. */
static cugl_status cuda_begin(cugl_app_target *const *targets, int n, cugl_stream *stream,
                              cugl_app_access *out, const char *who)
{
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
        cugl_app_target *t = targets[i];
        cugl__app_slot *s = cugl__cuda_slot(t);
        if (t->direction != CUGL_APP_FROM_GL)
            continue;
        if (!t->host_staged) {
            st = cugl_buffer_copy_from(s->device_buffer, s->pinned_buffer, stream);
            continue;
        }
        st = wait_gl(s, who); /* GL's pack into the staging buffer */
        if (st == CUGL_OK)
            st = cugl_buffer_copy_from(s->device_buffer, s->staged, stream);
        if (st == CUGL_OK)
            st = cugl_event_record(s->staged_done, stream);
        s->staged_pending = st == CUGL_OK;
    }
    cugl__target_phase_end(targets[0], CUGL_APP_PHASE_ACQUIRE);
    return st;
}

/* Host memory into the slot's GL object: from the staging buffer on the
 * GPU, or from `pixels` on the CPU; rows a pitch apart. */
static void upload(cugl_app_target *t, cugl__app_slot *s, const void *pixels)
{
    cugl__target_upload_gl(t, s, pixels ? 0 : s->staging, pixels, t->size,
                           (GLint)(t->pitch / t->texel));
}

static bool written_by_cuda(const cugl_app_target *t)
{
    return t->direction == CUGL_APP_TO_GL && cugl__target_use(t) != CUGL_APP_CUDA_READS;
}

/* What CUDA wrote goes to host memory: staged, a DMA queued on the stream
 * (GL uploads it in its turn); else to pinned memory, waited for, and
 * uploaded now. Each target as it was made: one whose staging buffer CUDA
 * could not register goes through pinned memory beside staged ones. */
static cugl_status cuda_end(cugl_app_target *const *targets, int n, cugl_stream *stream,
                            const char *who)
{
    bool any = false;
    for (int i = 0; i < n; i++)
        any = any || written_by_cuda(targets[i]);
    if (!any)
        return CUGL_OK;
    bool pinned = false;
    cugl__target_phase_begin(targets[0], CUGL_APP_PHASE_RELEASE, "download", true);
    cugl_status st = CUGL_OK;
    for (int i = 0; i < n && st == CUGL_OK; i++) {
        cugl__app_slot *s = cugl__cuda_slot(targets[i]);
        if (!written_by_cuda(targets[i]))
            continue;
        if (!targets[i]->host_staged) {
            st = cugl_buffer_copy_from(s->pinned_buffer, s->device_buffer, stream);
            pinned = true;
            continue;
        }
        st = wait_gl(s, who); /* GL's last upload from this staging buffer */
        if (st == CUGL_OK)
            st = cugl_buffer_copy_from(s->staged, s->device_buffer, stream);
        if (st == CUGL_OK)
            st = cugl_event_record(s->staged_done, stream);
        s->staged_pending = st == CUGL_OK;
    }
    if (st == CUGL_OK && pinned)
        st = cugl_stream_sync(stream);
    cugl__target_phase_end(targets[0], CUGL_APP_PHASE_RELEASE);
    if (st != CUGL_OK || !pinned)
        return st;
    cugl__target_phase_begin(targets[0], CUGL_APP_PHASE_HANDOFF, "upload", false);
    cugl_app_drain_gl_errors();
    for (int i = 0; i < n; i++) {
        cugl__app_slot *s = cugl__cuda_slot(targets[i]);
        if (written_by_cuda(targets[i]) && !targets[i]->host_staged)
            upload(targets[i], s,
                   (const void *)(uintptr_t)cugl_buffer_handle(s->pinned_buffer));
    }
    cugl__target_phase_end(targets[0], CUGL_APP_PHASE_HANDOFF);
    return cugl_app_check_gl(who, "an upload from pinned memory");
}

/* Staged: what CUDA copied out (its event waited for) into the GL object,
 * uploaded on the GPU from the staging buffer. */
static cugl_status gl_begin(cugl_app_target *const *targets, int n, const char *who)
{
    bool any = false;
    for (int i = 0; i < n; i++)
        any = any || (targets[i]->host_staged && targets[i]->direction == CUGL_APP_TO_GL &&
                      cugl__gl_slot(targets[i])->staged_pending);
    if (!any)
        return CUGL_OK;
    cugl__target_phase_begin(targets[0], CUGL_APP_PHASE_HANDOFF, "upload", false);
    cugl_status st = CUGL_OK;
    cugl_app_drain_gl_errors();
    for (int i = 0; i < n && st == CUGL_OK; i++) {
        cugl_app_target *t = targets[i];
        cugl__app_slot *s = cugl__gl_slot(t);
        if (!t->host_staged || t->direction != CUGL_APP_TO_GL || !s->staged_pending)
            continue;
        st = cugl_event_sync(s->staged_done);
        if (st != CUGL_OK)
            break;
        s->staged_pending = false;
        upload(t, s, NULL);
        st = fence_gl(s, who);
    }
    if (st == CUGL_OK)
        st = cugl_app_check_gl(who, "an upload from the staging buffer");
    cugl__target_phase_end(targets[0], CUGL_APP_PHASE_HANDOFF);
    return st;
}

/* What GL drew, into host memory for the next CUDA turn: packed into the
 * staging buffer on the GPU (fenced), or read into pinned memory, waiting. */
static cugl_status gl_end(cugl_app_target *const *targets, int n, const char *who)
{
    bool any = false;
    for (int i = 0; i < n; i++)
        any = any || targets[i]->direction == CUGL_APP_FROM_GL;
    if (!any)
        return CUGL_OK;
    cugl__target_phase_begin(targets[0], CUGL_APP_PHASE_GL_COPY, "readback", false);
    cugl__gl_pixels saved;
    cugl__gl_pixels_set(&saved, true, 0, 1, 0, 0);
    cugl_app_drain_gl_errors();
    cugl_status st = CUGL_OK;
    for (int i = 0; i < n && st == CUGL_OK; i++) {
        cugl_app_target *t = targets[i];
        if (t->direction != CUGL_APP_FROM_GL)
            continue;
        cugl__app_slot *s = cugl__gl_slot(t);
        void *data = NULL; /* staged: offset 0 of the pack buffer */
        if (t->host_staged) {
            /* CUDA's copy out of the staging buffer from the last turn. */
            if (s->staged_pending)
                st = cugl_event_sync(s->staged_done);
            s->staged_pending = false;
            if (st != CUGL_OK)
                break;
            glBindBuffer(GL_PIXEL_PACK_BUFFER, s->staging);
        } else {
            glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
            data = (void *)(uintptr_t)cugl_buffer_handle(s->pinned_buffer);
        }
        if (t->kind == CUGL_APP_TARGET_BUFFER) {
            if (t->host_staged)
                glCopyNamedBufferSubData(s->gl_name, s->staging, 0, 0, (GLsizeiptr)t->size);
            else
                glGetNamedBufferSubData(s->gl_name, 0, (GLsizeiptr)t->size, data);
        } else {
            glPixelStorei(GL_PACK_ROW_LENGTH, (GLint)(t->pitch / t->texel));
            glGetTextureImage(s->gl_name, 0, t->pixel_format, t->pixel_type, (GLsizei)t->size,
                              data);
        }
        if (t->host_staged)
            st = fence_gl(s, who);
    }
    if (st == CUGL_OK)
        st = cugl_app_check_gl(who, "a readback into host memory");
    cugl__gl_pixels_restore(&saved);
    cugl__target_phase_end(targets[0], CUGL_APP_PHASE_GL_COPY);
    return st;
}

const cugl__app_path cugl__app_path_host = {
    .interop = CUGL_APP_INTEROP_HOST,
    .pipeline_slots = 2,
    .slot_create = slot_create,
    .slot_destroy = slot_destroy,
    .cuda_begin = cuda_begin,
    .cuda_end = cuda_end,
    .gl_begin = gl_begin,
    .gl_end = gl_end,
};
