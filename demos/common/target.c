/*
 * target.c - see target.h.
 */
#include "target.h"

static cugl_status gl_check(const char *who, const char *what)
{
    GLenum e = glGetError();
    if (e == GL_NO_ERROR)
        return CUGL_OK;
    return cugl_report_error(CUGL_ERROR_GL, who, "%s: GL error 0x%04x", what, e);
}

static cugl_status make_gl_buffer(demo_target *t, GLbitfield storage_flags)
{
    glCreateBuffers(1, &t->gl_name);
    t->owns_gl_name = true;
    /* Immutable storage: what CUDA registered can never be respecified. */
    glNamedBufferStorage(t->gl_name, (GLsizeiptr)t->size, NULL, storage_flags);
    return gl_check("demo_target_create_buffer", "glNamedBufferStorage");
}

static cugl_status make_gl_texture(demo_target *t)
{
    glCreateTextures(GL_TEXTURE_2D, 1, &t->gl_name);
    t->owns_gl_name = true;
    glTextureStorage2D(t->gl_name, 1, GL_RGBA8, t->width, t->height);
    glTextureParameteri(t->gl_name, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTextureParameteri(t->gl_name, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTextureParameteri(t->gl_name, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTextureParameteri(t->gl_name, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    return gl_check("demo_target_create_texture", "glTextureStorage2D");
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

cugl_status demo_target_create_buffer(demo_target *t, demo *d, size_t size)
{
    *t = (demo_target){.interop = d->opt.interop, .size = size};
    cugl_status st = CUGL_OK;
    switch (t->interop) {
    case DEMO_INTEROP_MAP:
        st = make_gl_buffer(t, 0);
        if (st == CUGL_OK)
            st = cugl_graphics_resource_from_gl_buffer(&t->resource, d->device, t->gl_name,
                                                       CUGL_GRAPHICS_WRITE_DISCARD);
        break;
    case DEMO_INTEROP_SHARED:
        st = cugl_app_shared_buffer_create(&t->shared, d->device, size);
        if (st == CUGL_OK)
            t->gl_name = cugl_app_shared_gl_name(t->shared);
        if (st == CUGL_OK && cugl_app_shared_size(t->shared) < size)
            st = cugl_report_error(CUGL_ERROR_INVALID_STATE, "demo_target_create_buffer",
                                   "the shared buffer has %zu bytes, not %zu",
                                   cugl_app_shared_size(t->shared), size);
        break;
    case DEMO_INTEROP_HOST:
        st = make_gl_buffer(t, GL_DYNAMIC_STORAGE_BIT);
        if (st == CUGL_OK)
            st = make_host_buffers(t, d);
        break;
    }
    if (st != CUGL_OK)
        demo_target_destroy(t, d);
    return st;
}

cugl_status demo_target_create_texture(demo_target *t, demo *d, int width, int height)
{
    *t = (demo_target){
        .interop = d->opt.interop,
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
            st = cugl_graphics_resource_from_gl_image(
                &t->resource, d->device, t->gl_name, CUGL_GL_TEXTURE_2D,
                CUGL_GRAPHICS_SURFACE_LOAD_STORE | CUGL_GRAPHICS_WRITE_DISCARD);
        break;
    case DEMO_INTEROP_SHARED:
        st = cugl_app_shared_texture_create(&t->shared, d->device, GL_RGBA8, width, height);
        if (st != CUGL_OK)
            break;
        t->gl_name = cugl_app_shared_gl_name(t->shared);
        t->pitch = cugl_app_shared_pitch(t->shared);
        t->size = t->pitch * (size_t)height;
        /* The kernel writes whole texels at row starts: 4-byte aligned. */
        if (t->pitch < (size_t)width * 4 || t->pitch % 4 != 0 ||
            cugl_app_shared_size(t->shared) < t->size)
            st = cugl_report_error(CUGL_ERROR_INVALID_STATE, "demo_target_create_texture",
                                   "the shared %dx%d RGBA8 texture has a pitch of %zu bytes "
                                   "and %zu bytes in all",
                                   width, height, t->pitch, cugl_app_shared_size(t->shared));
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

/* Map the texture and put a surface object on its array. */
static cugl_status map_surface(demo_target *t, demo *d, demo_dest *dest)
{
    cugl_array *array = NULL;
    cugl_status st = cugl_graphics_resource_map_array(&array, t->resource, d->stream, 0, 0);
    if (st != CUGL_OK)
        return st;
    st = cugl_surface_create(&t->surface, d->device,
                             &(cugl_resource_desc){.kind = CUGL_RESOURCE_ARRAY, .array = array});
    /* The surface holds the array; the unmap in cuda_end closes it. Without
     * a surface this drops the last reference, which unmaps. */
    cugl_array_release(array);
    if (st != CUGL_OK)
        return st;
    dest->surface = cugl_surface_handle(t->surface);
    return CUGL_OK;
}

static cugl_status map_buffer(demo_target *t, demo *d, demo_dest *dest)
{
    cugl_status st = cugl_graphics_resource_map(&t->mapped, t->resource, d->stream);
    if (st != CUGL_OK)
        return st;
    if (cugl_buffer_size(t->mapped) < t->size) {
        st = cugl_report_error(CUGL_ERROR_INVALID_STATE, "demo_target_cuda_begin",
                               "the mapped buffer has %zu bytes, fewer than %zu",
                               cugl_buffer_size(t->mapped), t->size);
        cugl_graphics_resource_unmap(t->resource, d->stream);
        cugl_buffer_release(t->mapped);
        t->mapped = NULL;
        return st;
    }
    dest->ptr = cugl_buffer_handle(t->mapped);
    return CUGL_OK;
}

cugl_status demo_target_cuda_begin(demo_target *t, demo *d, demo_dest *dest)
{
    *dest = (demo_dest){.pitch = t->pitch};
    cugl_status st = CUGL_OK;
    switch (t->interop) {
    case DEMO_INTEROP_MAP:
        demo_phase_begin(d, DEMO_PHASE_ACQUIRE, "map", true);
        st = t->texture ? map_surface(t, d, dest) : map_buffer(t, d, dest);
        demo_phase_end(d, DEMO_PHASE_ACQUIRE);
        break;
    case DEMO_INTEROP_SHARED:
        demo_phase_begin(d, DEMO_PHASE_ACQUIRE, "wait-gl", true);
        st = cugl_app_shared_cuda_begin(t->shared, d->stream);
        demo_phase_end(d, DEMO_PHASE_ACQUIRE);
        dest->ptr = cugl_buffer_handle(cugl_app_shared_buffer(t->shared));
        break;
    case DEMO_INTEROP_HOST:
        dest->ptr = cugl_buffer_handle(t->device_buffer);
        break;
    }
    return st;
}

/* Device buffer -> pinned memory -> the GL object. */
static cugl_status download_upload(demo_target *t, demo *d)
{
    demo_phase_begin(d, DEMO_PHASE_RELEASE, "download", true);
    cugl_status st = cugl_buffer_copy_from(t->pinned_buffer, t->device_buffer, d->stream);
    if (st == CUGL_OK)
        st = cugl_stream_sync(d->stream);
    demo_phase_end(d, DEMO_PHASE_RELEASE);
    if (st != CUGL_OK)
        return st;

    demo_phase_begin(d, DEMO_PHASE_HANDOFF, "upload", false);
    const void *data = (const void *)(uintptr_t)cugl_buffer_handle(t->pinned_buffer);
    if (t->texture) {
        glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
        glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
        glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
        glTextureSubImage2D(t->gl_name, 0, 0, 0, t->width, t->height, GL_RGBA, GL_UNSIGNED_BYTE,
                            data);
    } else {
        glNamedBufferSubData(t->gl_name, 0, (GLsizeiptr)t->size, data);
    }
    demo_phase_end(d, DEMO_PHASE_HANDOFF);
    return gl_check("demo_target_cuda_end", "upload");
}

cugl_status demo_target_cuda_end(demo_target *t, demo *d)
{
    cugl_status st = CUGL_OK;
    switch (t->interop) {
    case DEMO_INTEROP_MAP:
        demo_phase_begin(d, DEMO_PHASE_RELEASE, "unmap", true);
        st = cugl_graphics_resource_unmap(t->resource, d->stream);
        demo_phase_end(d, DEMO_PHASE_RELEASE);
        cugl_buffer_release(t->mapped);
        t->mapped = NULL;
        if (t->surface) {
            cugl_status retire = demo_retire(d, NULL, t->surface);
            st = st != CUGL_OK ? st : retire;
            t->surface = NULL;
        }
        break;
    case DEMO_INTEROP_SHARED:
        demo_phase_begin(d, DEMO_PHASE_RELEASE, "signal-gl", true);
        st = cugl_app_shared_cuda_end(t->shared, d->stream);
        demo_phase_end(d, DEMO_PHASE_RELEASE);
        break;
    case DEMO_INTEROP_HOST:
        st = download_upload(t, d);
        break;
    }
    return st;
}

cugl_status demo_target_gl_begin(demo_target *t, demo *d)
{
    if (t->interop != DEMO_INTEROP_SHARED)
        return CUGL_OK;
    demo_phase_begin(d, DEMO_PHASE_HANDOFF, "wait-cuda", false);
    cugl_status st = cugl_app_shared_gl_begin(t->shared);
    demo_phase_end(d, DEMO_PHASE_HANDOFF);
    return st;
}

cugl_status demo_target_gl_end(demo_target *t, demo *d)
{
    (void)d;
    return t->interop == DEMO_INTEROP_SHARED ? cugl_app_shared_gl_end(t->shared) : CUGL_OK;
}

cugl_status demo_target_render_fullscreen(demo_target *t, demo *d,
                                          cugl_status (*fill)(demo *d, void *user),
                                          void *user)
{
    cugl_status st = CUGL_OK;
    if (t->width != d->width || t->height != d->height) {
        /* The window was resized: a texture of the new size. */
        demo_target_destroy(t, d);
        st = demo_target_create_texture(t, d, d->width, d->height);
    }
    if (st == CUGL_OK)
        st = fill(d, user);
    if (st == CUGL_OK)
        st = demo_target_gl_begin(t, d);
    if (st != CUGL_OK)
        return st;
    demo_phase_begin(d, DEMO_PHASE_DRAW, "draw", false);
    st = cugl_app_blit(d->ctx, t->gl_name, false);
    demo_phase_end(d, DEMO_PHASE_DRAW);
    cugl_status end = demo_target_gl_end(t, d);
    return st != CUGL_OK ? st : end;
}

void demo_target_destroy(demo_target *t, demo *d)
{
    /* Kernels still queued may use the surfaces and the memory. */
    if (d->stream)
        cugl_stream_sync(d->stream);
    cugl_buffer_release(t->mapped);
    cugl_surface_release(t->surface);
    if (t->resource) {
        cugl_graphics_resource_close(t->resource, d->stream);
        cugl_graphics_resource_release(t->resource);
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
