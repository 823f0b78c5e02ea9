/*
 * shared.c - map-free interop: exportable CUDA memory imported by GL.
 *
 * CUDA allocates with cuMemCreate (a POSIX fd handle; cugl's exportable
 * memory resource), GL imports the descriptor with GL_EXT_memory_object_fd
 * as the storage of a buffer object. A shared texture is that buffer (the
 * pixels, rows `pitch` bytes apart) plus a GL texture that gl_begin fills
 * from it on the GPU (a pixel unpack buffer copy): CUDA writes plain linear
 * memory, GL samples an ordinary texture, and nothing is mapped per frame.
 *
 * The two sides take turns: CUDA's writes end with an event that gl_begin
 * waits for; GL's use ends with a fence that cuda_begin waits for. Where
 * Vulkan can make semaphores that both import (vk_semaphore.c), the waits
 * are on the GPU: GL signals one at gl_end that CUDA's stream waits for at
 * cuda_begin, and CUDA signals the other at cuda_end that GL waits for at
 * gl_begin, so neither call blocks the CPU and the work of a turn may be
 * queued before the other side has finished. The switch between the two
 * costs the GPU the same (about as much as a map/unmap on the GPUs
 * measured), but what the program does between its calls no longer adds
 * to it. Elsewhere (no Vulkan, memory that other GPUs write, a side that
 * ends twice before the other begins) each wait is a CPU wait. A target
 * (target.c) pipelines by rotating several shared objects: CUDA writes one
 * while GL uses the one CUDA finished a frame earlier, and the waits find
 * their event or fence already signalled.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app_internal.h"
#include "cugl/app_shared.h"

/* The memory's own device and the writers (cugl_app_shared_set_writers). */
enum { DEVICES = 1 + CUGL_APP_SHARED_MAX_WRITERS };

typedef struct slot {
    cugl_buffer *buffer; /* the CUDA side */
    /* recorded by cuda_end on a stream of devices[i] (made at its first use) */
    cugl_event *written_on[DEVICES];
    cugl_event *written; /* the last one recorded */
    bool recorded;       /* written was recorded at least once */
    bool pending;        /* written is recorded and GL has not waited for it */
    GLuint memory;       /* the GL memory object */
    GLuint gl_buffer;    /* the imported storage */
    GLsync fence;        /* gl_end's where its semaphore did not mark GL's
                          * use, until CUDA next writes the slot */
} slot;

struct cugl_app_shared {
    cugl_device *device;
    cugl_device *devices[DEVICES]; /* devices[0] is `device`; then the writers */
    int device_count;
    cugl_memory_resource *mr;
    cugl_stream *stream; /* the allocations' (the device's default stream) */
    slot slot;        /* the memory, both sides' */
    bool made;        /* slot holds memory */
    bool cuda_open;   /* between cuda_begin and cuda_end */
    bool gl_open;     /* between gl_begin and gl_end */
    GLuint texture;   /* shared textures: what GL samples; 0 for buffers */
    bool no_fill;     /* shared textures: gl_begin leaves the texture alone */
    GLenum format, type; /* shared textures: the pixel transfer's */
    /* RGBA8 textures written by the memory's own device: the fill is a
     * compute shader (unpack_rgba8.comp), made at the first fill. */
    GLuint unpack_program;
    int width, height;
    size_t pitch, size, texel;
    /* GPU-side waits: [0] GL signals and CUDA waits for, [1] the other way;
     * GL's import and CUDA's of each. None where why_cpu says why not. */
    GLuint gl_semaphore[2];
    cugl_semaphore *cuda_semaphore[2];
    bool gl_signalled;   /* [0] signalled by GL, not yet waited for by CUDA */
    bool cuda_signalled; /* [1] signalled by CUDA, not yet waited for by GL */
    bool event_needed;   /* CUDA's last writes are after its pending signal */
    char why_cpu[320];   /* why the waits are CPU waits; "" where they are not */
};

/* The unsized format and type of each sized format a shared texture takes. */
static const struct {
    GLenum internal, format, type;
    size_t bytes;
    GLenum filter; /* integer formats cannot be filtered */
} texture_formats[] = {
    {GL_R8, GL_RED, GL_UNSIGNED_BYTE, 1, GL_LINEAR},
    {GL_RG8, GL_RG, GL_UNSIGNED_BYTE, 2, GL_LINEAR},
    {GL_RGBA8, GL_RGBA, GL_UNSIGNED_BYTE, 4, GL_LINEAR},
    {GL_R16F, GL_RED, GL_HALF_FLOAT, 2, GL_LINEAR},
    {GL_RG16F, GL_RG, GL_HALF_FLOAT, 4, GL_LINEAR},
    {GL_RGBA16F, GL_RGBA, GL_HALF_FLOAT, 8, GL_LINEAR},
    {GL_R32F, GL_RED, GL_FLOAT, 4, GL_LINEAR},
    {GL_RG32F, GL_RG, GL_FLOAT, 8, GL_LINEAR},
    {GL_RGBA32F, GL_RGBA, GL_FLOAT, 16, GL_LINEAR},
    {GL_R32UI, GL_RED_INTEGER, GL_UNSIGNED_INT, 4, GL_NEAREST},
    {GL_RGBA32UI, GL_RGBA_INTEGER, GL_UNSIGNED_INT, 16, GL_NEAREST},
};

static cugl_status check_extensions(const char *who)
{
    if (!GLAD_GL_EXT_memory_object || !GLAD_GL_EXT_memory_object_fd)
        return cugl__fail(
            CUGL_ERROR_NOT_SUPPORTED, who,
            "the GL driver (%s) lacks GL_EXT_memory_object_fd, so GL cannot import CUDA "
            "memory; use the map path (cugl_graphics_resource_map, --interop map)",
            (const char *)glGetString(GL_RENDERER));
    return CUGL_OK;
}

/* Where `d` is in s->devices; -1 when it may not write the memory. */
static int device_index(const cugl_app_shared *s, const cugl_device *d)
{
    for (int i = 0; i < s->device_count; i++)
        if (s->devices[i] == d)
            return i;
    return -1;
}

/* Allocate the memory: exportable bytes, imported into GL as a buffer. */
static cugl_status slot_create(cugl_app_shared *s, const char *who)
{
    slot *sl = &s->slot;
    s->made = true;
    int fd = -1;
    size_t allocation = 0;
    cugl_status st = cugl_memory_resource_allocate(&sl->buffer, s->mr, s->size, s->stream);
    if (st == CUGL_OK)
        st = cugl_buffer_export_fd(sl->buffer, &fd, &allocation);
    if (st == CUGL_OK) {
        cugl_app_drain_gl_errors();
        glCreateMemoryObjectsEXT(1, &sl->memory);
        /* Each cuMemCreate allocation is its own memory object: without
         * this, NVIDIA's GL read zeros from every other import (measured
         * on an H200 with 1 MiB buffers). */
        GLint dedicated = GL_TRUE;
        glMemoryObjectParameterivEXT(sl->memory, GL_DEDICATED_MEMORY_OBJECT_EXT, &dedicated);
        /* On success GL owns the descriptor. */
        glImportMemoryFdEXT(sl->memory, allocation, GL_HANDLE_TYPE_OPAQUE_FD_EXT, fd);
        st = cugl_app_check_gl(who, "glImportMemoryFdEXT");
        if (st != CUGL_OK)
            close(fd);
    }
    if (st == CUGL_OK) {
        glCreateBuffers(1, &sl->gl_buffer);
        glNamedBufferStorageMemEXT(sl->gl_buffer, (GLsizeiptr)s->size, sl->memory, 0);
        st = cugl_app_check_gl(who, "glNamedBufferStorageMemEXT");
    }
    return st;
}

static void slot_destroy(slot *sl)
{
    /* CUDA's last writes finish before the memory goes (the stream they
     * were queued on need not be ordered with the deallocation's). */
    for (int d = 0; d < DEVICES; d++)
        if (sl->written_on[d] && sl->recorded)
            cugl_event_sync(sl->written_on[d]);
    (void)cugl__gl_fence_wait(&sl->fence, "GL's last use", "cugl_app_shared_destroy");
    if (sl->gl_buffer)
        glDeleteBuffers(1, &sl->gl_buffer);
    if (sl->memory)
        glDeleteMemoryObjectsEXT(1, &sl->memory);
    if (sl->buffer)
        cugl_buffer_close(sl->buffer, NULL); /* waits for the stream, then frees */
    cugl_buffer_release(sl->buffer);
    for (int d = 0; d < DEVICES; d++)
        cugl_event_release(sl->written_on[d]);
    *sl = (slot){0};
}

static void semaphores_destroy(cugl_app_shared *s)
{
    for (int i = 0; i < 2; i++) {
        if (s->gl_semaphore[i])
            glDeleteSemaphoresEXT(1, &s->gl_semaphore[i]);
        cugl_semaphore_release(s->cuda_semaphore[i]);
        s->gl_semaphore[i] = 0;
        s->cuda_semaphore[i] = NULL;
    }
}

/* The two semaphores, made by Vulkan and imported by GL and CUDA; where
 * that fails, s->why_cpu says why and the waits stay CPU waits. */
static void semaphores_create(cugl_app_shared *s, const char *who)
{
    const char *off = getenv("CUGL_APP_CPU_WAITS");
    if (off && *off && strcmp(off, "0") != 0) {
        snprintf(s->why_cpu, sizeof s->why_cpu, "CUGL_APP_CPU_WAITS is set");
        return;
    }
    if (!GLAD_GL_EXT_semaphore || !GLAD_GL_EXT_semaphore_fd) {
        snprintf(s->why_cpu, sizeof s->why_cpu, "the GL driver lacks GL_EXT_semaphore_fd");
        return;
    }
    cugl_device_properties p;
    cugl_status st = cugl_device_get_properties(s->device, &p);
    for (int i = 0; i < 2 && st == CUGL_OK; i++) {
        int fds[2];
        if (!cugl__app_vk_semaphore_fds(p.uuid, fds, s->why_cpu, sizeof s->why_cpu)) {
            semaphores_destroy(s);
            return;
        }
        cugl_app_drain_gl_errors();
        glGenSemaphoresEXT(1, &s->gl_semaphore[i]);
        glImportSemaphoreFdEXT(s->gl_semaphore[i], GL_HANDLE_TYPE_OPAQUE_FD_EXT, fds[0]);
        st = cugl_app_check_gl(who, "glImportSemaphoreFdEXT");
        if (st != CUGL_OK)
            close(fds[0]); /* GL owns it only where the import succeeded */
        if (st == CUGL_OK)
            st = cugl_semaphore_import_fd(&s->cuda_semaphore[i], s->device, fds[1]);
        if (st != CUGL_OK)
            close(fds[1]);
    }
    if (st != CUGL_OK) {
        snprintf(s->why_cpu, sizeof s->why_cpu, "%s", cugl_last_error());
        semaphores_destroy(s);
    }
}

static cugl_status create(cugl_app_shared **out, cugl_device *device, size_t size,
                          const char *who)
{
    if (!out)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "out is NULL");
    *out = NULL;
    if (!device)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "device is NULL");
    if (size == 0)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "size is 0");
    cugl_status st = check_extensions(who);
    if (st != CUGL_OK)
        return st;
    cugl_app_shared *s = calloc(1, sizeof *s);
    if (!s)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, who, "cannot allocate");
    s->device = s->devices[0] = device;
    s->device_count = 1;
    s->size = s->pitch = size;
    st = cugl_exportable_memory_resource_create(&s->mr, device);
    if (st == CUGL_OK)
        st = cugl_device_default_stream(&s->stream, device);
    if (st == CUGL_OK)
        st = slot_create(s, who);
    if (st != CUGL_OK) {
        cugl_app_shared_destroy(s);
        return st;
    }
    semaphores_create(s, who);
    *out = s;
    return CUGL_OK;
}

static cugl_status texture_create(cugl_app_shared **out, cugl_device *device,
                                  uint32_t gl_internal_format, int width, int height,
                                  const char *who)
{
    if (!out)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "out is NULL");
    *out = NULL;
    if (width <= 0 || height <= 0)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "size %dx%d is not positive",
                          width, height);
    size_t i = 0, n = sizeof texture_formats / sizeof texture_formats[0];
    while (i < n && texture_formats[i].internal != gl_internal_format)
        i++;
    if (i == n)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "internal format 0x%04x is not one a shared texture takes "
                          "(GL_R8, GL_RG8, GL_RGBA8, GL_R16F, GL_RG16F, GL_RGBA16F, "
                          "GL_R32F, GL_RG32F, GL_RGBA32F, GL_R32UI, GL_RGBA32UI)",
                          gl_internal_format);
    cugl_status st = cugl__app_check_texture_size(width, height, 0, who);
    if (st != CUGL_OK)
        return st;
    /* Rows 256-byte aligned: what CUDA's pitched memory would use. */
    size_t row = (size_t)width * texture_formats[i].bytes;
    size_t pitch = (row + 255) / 256 * 256;
    if ((size_t)height > SIZE_MAX / pitch)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "size %dx%d is too large",
                          width, height);
    cugl_app_shared *s = NULL;
    st = create(&s, device, pitch * (size_t)height, who);
    if (st != CUGL_OK)
        return st;
    s->width = width;
    s->height = height;
    s->pitch = pitch;
    s->texel = texture_formats[i].bytes;
    s->format = texture_formats[i].format;
    s->type = texture_formats[i].type;
    cugl_app_drain_gl_errors();
    glCreateTextures(GL_TEXTURE_2D, 1, &s->texture);
    glTextureStorage2D(s->texture, 1, gl_internal_format, width, height);
    glTextureParameteri(s->texture, GL_TEXTURE_MIN_FILTER, (GLint)texture_formats[i].filter);
    glTextureParameteri(s->texture, GL_TEXTURE_MAG_FILTER, (GLint)texture_formats[i].filter);
    glTextureParameteri(s->texture, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTextureParameteri(s->texture, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    st = cugl_app_check_gl(who, "glTextureStorage2D");
    if (st != CUGL_OK) {
        cugl_app_shared_destroy(s);
        return st;
    }
    *out = s;
    return CUGL_OK;
}

CUGL_API void cugl_app_shared_destroy(cugl_app_shared *s)
{
    if (!s)
        return;
    /* Both sides finish with the memory before it goes. */
    if (s->made) {
        glFinish();
        slot_destroy(&s->slot);
    }
    if (s->texture)
        glDeleteTextures(1, &s->texture);
    if (s->unpack_program)
        glDeleteProgram(s->unpack_program);
    semaphores_destroy(s);
    cugl_stream_release(s->stream);
    cugl_memory_resource_release(s->mr);
    free(s);
}

static cugl_status set_writers(cugl_app_shared *s, cugl_device *const *devices, int count,
                               const char *who)
{
    if (!s || (!devices && count))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "%s is NULL",
                          !s ? "shared" : "devices");
    if (count < 0 || count > CUGL_APP_SHARED_MAX_WRITERS)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "count is %d; 0 to %d writers", count,
                          CUGL_APP_SHARED_MAX_WRITERS);
    if (s->slot.recorded || s->slot.fence || s->gl_signalled || s->cuda_open || s->gl_open)
        return cugl__fail(CUGL_ERROR_INVALID_STATE, who,
                          "the memory has been used; name its writers before its first "
                          "turn");
    cugl_status st = cugl_memory_resource_set_peer_access(s->mr, devices, count);
    if (st != CUGL_OK)
        return st;
    /* The memory again, mapped for the writers too (GL imports it anew). */
    slot_destroy(&s->slot);
    st = slot_create(s, who);
    if (st != CUGL_OK) {
        slot_destroy(&s->slot);
        s->made = false;
        return st;
    }
    s->device_count = 1;
    for (int i = 0; i < count; i++)
        if (device_index(s, devices[i]) < 0)
            s->devices[s->device_count++] = devices[i];
    /* CUDA's semaphores are the memory's device's: other devices' streams
     * cannot wait for them, so every turn waits on the CPU. */
    if (s->device_count > 1 && s->cuda_semaphore[0]) {
        semaphores_destroy(s);
        snprintf(s->why_cpu, sizeof s->why_cpu,
                 "other devices write the memory (cugl_app_shared_set_writers)");
    }
    return CUGL_OK;
}

CUGL_API cugl_buffer *cugl_app_shared_buffer(const cugl_app_shared *s)
{
    return s ? s->slot.buffer : NULL;
}

CUGL_API uint32_t cugl_app_shared_gl_name(const cugl_app_shared *s)
{
    return !s ? 0 : s->texture ? s->texture : s->slot.gl_buffer;
}

CUGL_API uint32_t cugl_app_shared_gl_buffer(const cugl_app_shared *s)
{
    return s ? s->slot.gl_buffer : 0;
}

CUGL_API cugl_status cugl_app_shared_set_texture_fill(cugl_app_shared *s, bool on)
{
    if (!s)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "shared is NULL");
    if (!s->texture)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "a shared buffer has no texture to fill");
    s->no_fill = !on;
    return CUGL_OK;
}

CUGL_API bool cugl_app_shared_waits_on_gpu(const cugl_app_shared *s)
{
    return s && s->cuda_semaphore[0];
}

CUGL_API const char *cugl_app_shared_wait_reason(const cugl_app_shared *s)
{
    return s ? s->why_cpu : "";
}

CUGL_API size_t cugl_app_shared_pitch(const cugl_app_shared *s) { return s ? s->pitch : 0; }

CUGL_API size_t cugl_app_shared_size(const cugl_app_shared *s) { return s ? s->size : 0; }

/* Whether a side (`cuda`, or GL) may begin or end its turn now. */
static cugl_status check_turn(const cugl_app_shared *s, cugl_stream *stream, bool cuda,
                              bool begin, const char *who)
{
    if (!s || (cuda && !stream))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "%s is NULL",
                          !s ? "shared" : "stream");
    if (cuda && cugl_stream_is_closed(stream))
        return cugl__fail(CUGL_ERROR_CLOSED, who, "the stream has been closed");
    if (cuda && device_index(s, cugl_stream_device(stream)) < 0)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the stream is device %d's; the shared memory is device %d's "
                          "and no other device writes it (cugl_app_shared_set_writers)",
                          cugl_device_ordinal(cugl_stream_device(stream)),
                          cugl_device_ordinal(s->device));
    /* GL may mark its use (gl_end) without a gl_begin: after GL wrote. */
    if (cuda && begin && s->gl_open)
        return cugl__fail(CUGL_ERROR_INVALID_STATE, who,
                          "GL's turn has not ended: call cugl_app_shared_gl_end first");
    if (cuda && !begin && !s->cuda_open)
        return cugl__fail(CUGL_ERROR_INVALID_STATE, who,
                          "CUDA's turn has not begun: call cugl_app_shared_cuda_begin "
                          "first");
    if (!cuda && s->cuda_open)
        return cugl__fail(CUGL_ERROR_INVALID_STATE, who,
                          "CUDA's turn has not ended: call cugl_app_shared_cuda_end "
                          "first");
    return CUGL_OK;
}

static cugl_status cuda_begin(cugl_app_shared *s, cugl_stream *stream, const char *who)
{
    CUGL__TRY(check_turn(s, stream, true, true, who));
    slot *sl = &s->slot;
    /* GL's use of the slot is queued before its signal and its fence; CUDA
     * may not overwrite the memory until it is done. */
    if (s->gl_signalled) {
        CUGL__TRY(cugl_semaphore_wait(s->cuda_semaphore[0], stream));
        s->gl_signalled = false;
    }
    s->cuda_open = true;
    /* A fence: GL's use since its signal, or all of it (CPU waits). */
    cugl_status st = cugl__gl_fence_wait(&sl->fence, "GL's use of the memory", who);
    if (st != CUGL_OK)
        s->cuda_open = false; /* refused: no turn began */
    return st;
}

static cugl_status cuda_end(cugl_app_shared *s, cugl_stream *stream, const char *who)
{
    cugl_status st = check_turn(s, stream, true, false, who);
    if (st != CUGL_OK)
        return st;
    slot *sl = &s->slot;
    /* An event of the stream's device marks the writes. */
    int d = device_index(s, cugl_stream_device(stream));
    if (!sl->written_on[d])
        CUGL__TRY(cugl_event_create(&sl->written_on[d], s->devices[d], NULL));
    /* A signal for GL's wait, where none is still pending (a binary
     * semaphore holds one); else gl_begin waits for the event. The event
     * comes after the signal, so that a wait for it (the destroy's) knows
     * the signal done too. */
    bool signal = s->cuda_semaphore[1] && !s->cuda_signalled;
    if (signal) {
        CUGL__TRY(cugl_semaphore_signal(s->cuda_semaphore[1], stream));
        s->cuda_signalled = true;
    }
    s->event_needed = !signal;
    CUGL__TRY(cugl_event_record(sl->written_on[d], stream));
    sl->written = sl->written_on[d];
    s->cuda_open = false;
    sl->pending = sl->recorded = true;
    return CUGL_OK;
}

/* The texture from the slot's memory by unpack_rgba8.comp; the current
 * program, SSBO binding 0 and image unit 0 are put back afterwards. */
static cugl_status fill_by_compute(cugl_app_shared *s, const slot *sl, const char *who)
{
    if (!s->unpack_program) {
        CUGL__TRY(cugl_app_compute_program(&s->unpack_program, "unpack_rgba8",
                                                  (const char *)cugl_shader_unpack_rgba8_comp));
    }
    GLint program = 0, ssbo = 0, image = 0, level = 0, layered = 0, layer = 0, access = 0,
          format = 0;
    glGetIntegerv(GL_CURRENT_PROGRAM, &program);
    glGetIntegeri_v(GL_SHADER_STORAGE_BUFFER_BINDING, 0, &ssbo);
    glGetIntegeri_v(GL_IMAGE_BINDING_NAME, 0, &image);
    glGetIntegeri_v(GL_IMAGE_BINDING_LEVEL, 0, &level);
    glGetIntegeri_v(GL_IMAGE_BINDING_LAYERED, 0, &layered);
    glGetIntegeri_v(GL_IMAGE_BINDING_LAYER, 0, &layer);
    glGetIntegeri_v(GL_IMAGE_BINDING_ACCESS, 0, &access);
    glGetIntegeri_v(GL_IMAGE_BINDING_FORMAT, 0, &format);
    cugl_app_drain_gl_errors();
    glUseProgram(s->unpack_program);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, sl->gl_buffer);
    glBindImageTexture(0, s->texture, 0, GL_FALSE, 0, GL_WRITE_ONLY, GL_RGBA8UI);
    glUniform2i(0, s->width, s->height);
    glUniform1i(1, (GLint)(s->pitch / 4));
    glDispatchCompute(((GLuint)s->width + 15) / 16, ((GLuint)s->height + 15) / 16, 1);
    /* Sampling and copies of the texture after this see the writes. */
    glMemoryBarrier(GL_TEXTURE_FETCH_BARRIER_BIT | GL_SHADER_IMAGE_ACCESS_BARRIER_BIT |
                    GL_TEXTURE_UPDATE_BARRIER_BIT | GL_FRAMEBUFFER_BARRIER_BIT);
    cugl_status st = cugl_app_check_gl(who, "the texture fill dispatch");
    glUseProgram((GLuint)program);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, (GLuint)ssbo);
    glBindImageTexture(0, (GLuint)image, level, layered ? GL_TRUE : GL_FALSE, layer,
                       access ? (GLenum)access : GL_READ_ONLY, format ? (GLenum)format : GL_R8);
    return st;
}

static cugl_status gl_begin(cugl_app_shared *s, const char *who)
{
    CUGL__TRY(check_turn(s, NULL, false, true, who));
    slot *sl = &s->slot;
    bool covered = false;
    if (s->cuda_signalled) {
        cugl_app_drain_gl_errors();
        glWaitSemaphoreEXT(s->gl_semaphore[1], 1, &sl->gl_buffer, 0, NULL, NULL);
        CUGL__TRY(cugl_app_check_gl(who, "glWaitSemaphoreEXT"));
        s->cuda_signalled = false;
        covered = !s->event_needed;
    }
    if (sl->pending && !covered)
        CUGL__TRY(cugl_event_sync(sl->written));
    sl->pending = false;
    s->event_needed = false;
    s->gl_open = true;
    if (!s->texture || s->no_fill)
        return CUGL_OK;
    return cugl__app_shared_fill(s, who);
}

cugl_status cugl__app_shared_fill(cugl_app_shared *s, const char *who)
{
    slot *sl = &s->slot;
    cugl_status st;
    /* RGBA8 written on this GPU: a compute shader copies at memory speed,
     * where a pixel-unpack copy from imported memory does not. Not where
     * another GPU writes the memory: GL's shader reads were seen to miss
     * some of a peer's writes there, which the unpack copy sees. */
    if (s->format == GL_RGBA && s->type == GL_UNSIGNED_BYTE && s->device_count == 1)
        return fill_by_compute(s, sl, who);
    /* The texture takes the pixels CUDA wrote: a copy on the GPU. The
     * application's unpack state is put back afterwards. */
    cugl__gl_pixels saved;
    cugl__gl_pixels_set(&saved, false, sl->gl_buffer, 1, (GLint)(s->pitch / s->texel), 0);
    cugl_app_drain_gl_errors();
    glTextureSubImage2D(s->texture, 0, 0, 0, s->width, s->height, s->format, s->type, NULL);
    st = cugl_app_check_gl(who, "glTextureSubImage2D from the shared buffer");
    cugl__gl_pixels_restore(&saved);
    return st;
}

static cugl_status gl_end(cugl_app_shared *s, const char *who)
{
    CUGL__TRY(check_turn(s, NULL, false, false, who));
    s->gl_open = false;
    slot *sl = &s->slot;
    if (sl->fence)
        glDeleteSync(sl->fence);
    sl->fence = NULL;
    /* A signal for CUDA's wait where none is still pending; else a fence,
     * which the next cuda_begin waits for on the CPU. */
    if (s->gl_semaphore[0] && !s->gl_signalled) {
        cugl_app_drain_gl_errors();
        glSignalSemaphoreEXT(s->gl_semaphore[0], 1, &sl->gl_buffer, 0, NULL, NULL);
        /* CUDA's stream waits on the GPU for what GL has sent it. */
        glFlush();
        CUGL__TRY(cugl_app_check_gl(who, "glSignalSemaphoreEXT"));
        s->gl_signalled = true;
        return CUGL_OK;
    }
    sl->fence = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
    if (!sl->fence)
        return cugl__fail(CUGL_ERROR_GL, who, "glFenceSync failed");
    /* No flush: cuda_begin's wait flushes (GL_SYNC_FLUSH_COMMANDS_BIT). */
    return CUGL_OK;
}

/* ---- the public calls: the work above, with `who` their name, and the
 * failures of what it calls (libcugl's) named by them too ---- */

CUGL_API cugl_status cugl_app_shared_buffer_create(cugl_app_shared **out, cugl_device *device,
                                                   size_t size)
{
    return cugl__as_own(create(out, device, size, __func__), __func__);
}

CUGL_API cugl_status cugl_app_shared_texture_create(cugl_app_shared **out, cugl_device *device,
                                                    uint32_t gl_internal_format, int width,
                                                    int height)
{
    return cugl__as_own(
        texture_create(out, device, gl_internal_format, width, height, __func__), __func__);
}

CUGL_API cugl_status cugl_app_shared_set_writers(cugl_app_shared *s,
                                                cugl_device *const *devices, int count)
{
    return cugl__as_own(set_writers(s, devices, count, __func__), __func__);
}

CUGL_API cugl_status cugl_app_shared_cuda_begin(cugl_app_shared *s, cugl_stream *stream)
{
    return cugl__as_own(cuda_begin(s, stream, __func__), __func__);
}

CUGL_API cugl_status cugl_app_shared_cuda_end(cugl_app_shared *s, cugl_stream *stream)
{
    return cugl__as_own(cuda_end(s, stream, __func__), __func__);
}

CUGL_API cugl_status cugl_app_shared_gl_begin(cugl_app_shared *s)
{
    return cugl__as_own(gl_begin(s, __func__), __func__);
}

CUGL_API cugl_status cugl_app_shared_gl_end(cugl_app_shared *s)
{
    return cugl__as_own(gl_end(s, __func__), __func__);
}
