/*
 * serve_nvjpeg.c - the frame server's JPEG encoder on the GPU (serve.c):
 * NVIDIA's nvJPEG, loaded at run time as libcugl loads libcuda, so neither
 * the build nor a machine without it needs nvJPEG. The raw frame never
 * leaves the GPU: the framebuffer is blitted into a framebuffer of ours
 * (rows flipped to top first, and scaled down by a filter), read as RGB
 * into a GL buffer (a copy on the GPU), which CUDA maps; nvjpegEncodeImage
 * reads it there, and only the JPEG comes back to the host.
 *
 * A job's way, all on the render thread (GL's and CUDA's calls both):
 * start() issues the blit and the copy and fences them; poll() at later
 * frames, once the fence passed, maps the buffer, queues the encode and an
 * event on the encoder's stream and unmaps; once the event completes, it
 * takes the JPEG out (nvjpegEncodeRetrieveBitstream). Nothing waits.
 *
 * The nvJPEG entry points used are declared here, from NVIDIA's documented
 * API (the nvJPEG Library Reference: nvjpegCreateSimple, the encoder
 * state and parameters, nvjpegEncodeImage, nvjpegEncodeRetrieveBitstream):
 * handles are opaque pointers, statuses and enumerations are ints, 0 is
 * success; an image is four channel pointers and four pitches.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_internal.h"
#include "serve_internal.h"

typedef void *nvj_handle;
typedef void *nvj_state;
typedef void *nvj_params;
typedef struct nvj_image {
    unsigned char *channel[4];
    size_t pitch[4];
} nvj_image;
enum {
    NVJ_INPUT_RGBI = 5, /* nvjpegInputFormat_t: interleaved R, G, B bytes */
    NVJ_CSS_420 = 2,    /* nvjpegChromaSubsampling_t: 4:2:0 */
};

/* name, arguments */
#define NVJ_FUNCTIONS(X)                                                                 \
    X(nvjpegCreateSimple, (nvj_handle *))                                                \
    X(nvjpegDestroy, (nvj_handle))                                                       \
    X(nvjpegEncoderStateCreate, (nvj_handle, nvj_state *, void *))                       \
    X(nvjpegEncoderStateDestroy, (nvj_state))                                            \
    X(nvjpegEncoderParamsCreate, (nvj_handle, nvj_params *, void *))                     \
    X(nvjpegEncoderParamsDestroy, (nvj_params))                                          \
    X(nvjpegEncoderParamsSetQuality, (nvj_params, int, void *))                          \
    X(nvjpegEncoderParamsSetSamplingFactors, (nvj_params, int, void *))                  \
    X(nvjpegEncodeImage, (nvj_handle, nvj_state, nvj_params, const nvj_image *, int, int, \
                          int, void *))                                                  \
    X(nvjpegEncodeRetrieveBitstream, (nvj_handle, nvj_state, unsigned char *, size_t *,   \
                                      void *))

static struct {
#define NVJ_FIELD(name, args) int(*name) args;
    NVJ_FUNCTIONS(NVJ_FIELD)
#undef NVJ_FIELD
} nvj;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_why[512]; /* "" once loaded */
static char load_path[256];

/* Where nvJPEG may be: CUGL_LIBNVJPEG, else the loader's paths, then the
 * CUDA Toolkit's (its lib64 is often not among them). */
static void load(void)
{
    const char *env = getenv("CUGL_LIBNVJPEG");
    static const char *const names[] = {"libnvjpeg.so.13", "libnvjpeg.so.12",
                                        "libnvjpeg.so.11", "libnvjpeg.so"};
    const char *dirs[] = {"", getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda/lib64",
                          "/usr/local/cuda/targets/x86_64-linux/lib"};
    void *lib = NULL;
    char first_error[256] = "";
    for (size_t d = 0; !lib && d < sizeof dirs / sizeof dirs[0]; d++) {
        for (size_t n = 0; !lib && n < sizeof names / sizeof names[0]; n++) {
            if (env && *env)
                snprintf(load_path, sizeof load_path, "%s", env);
            else if (!dirs[d])
                break;
            else if (!dirs[d][0])
                snprintf(load_path, sizeof load_path, "%s", names[n]);
            else
                snprintf(load_path, sizeof load_path, "%s%s/%s", dirs[d],
                         d == 1 || d == 2 ? "/lib64" : "", names[n]);
            lib = dlopen(load_path, RTLD_NOW | RTLD_LOCAL);
            if (!lib && !first_error[0]) {
                const char *e = dlerror();
                snprintf(first_error, sizeof first_error, "%s", e ? e : load_path);
            }
            if (env && *env)
                d = sizeof dirs / sizeof dirs[0] - 1;
        }
    }
    if (!lib) {
        snprintf(load_why, sizeof load_why,
                 "no nvJPEG (%s; it comes with the CUDA Toolkit, or name it in "
                 "CUGL_LIBNVJPEG)",
                 first_error);
        return;
    }
#define NVJ_LOAD(name, args)                                                            \
    if (!(*(void **)&nvj.name = dlsym(lib, #name))) {                                   \
        snprintf(load_why, sizeof load_why, "%s has no %s: not an nvJPEG with an encoder", \
                 load_path, #name);                                                     \
        return;                                                                         \
    }
    NVJ_FUNCTIONS(NVJ_LOAD)
#undef NVJ_LOAD
}

typedef enum job_phase { JOB_IDLE, JOB_COPYING, JOB_ENCODING, JOB_DONE } job_phase;

typedef struct job {
    job_phase phase;
    nvj_state state;
    nvj_params params;
    GLuint fbo, rb;       /* the flipped, scaled frame */
    GLuint pbo;           /* its RGB rows, for CUDA */
    cugl_graphics_resource *resource;
    int width, height, quality;
    GLsync fence;
    cugl_event *begin, *end;
    unsigned char *jpeg;
    size_t size;
    double encode_ms;
} job;

struct cugl__gpu_jpeg {
    cugl_device *device;
    cugl_stream *stream;
    nvj_handle handle;
    job jobs[CUGL__GPU_JPEG_JOBS];
};

/* The job's framebuffer and the buffer CUDA reads (its registration
 * first), for a job of another size or none. */
static void job_free_pixels(job *j)
{
    if (j->resource) {
        cugl_graphics_resource_close(j->resource, NULL);
        cugl_graphics_resource_release(j->resource);
        j->resource = NULL;
    }
    if (j->pbo)
        glDeleteBuffers(1, &j->pbo);
    if (j->fbo)
        glDeleteFramebuffers(1, &j->fbo);
    if (j->rb)
        glDeleteRenderbuffers(1, &j->rb);
    j->pbo = j->fbo = j->rb = 0;
}

static void job_free(job *j)
{
    if (j->phase == JOB_ENCODING && j->end)
        cugl_event_sync(j->end);
    if (j->fence)
        glDeleteSync(j->fence);
    job_free_pixels(j);
    cugl_event_release(j->begin);
    cugl_event_release(j->end);
    if (j->params)
        nvj.nvjpegEncoderParamsDestroy(j->params);
    if (j->state)
        nvj.nvjpegEncoderStateDestroy(j->state);
    free(j->jpeg);
    *j = (job){0};
}

void cugl__gpu_jpeg_close(cugl__gpu_jpeg *g)
{
    if (!g)
        return;
    for (int i = 0; i < CUGL__GPU_JPEG_JOBS; i++)
        job_free(&g->jobs[i]);
    if (g->handle)
        nvj.nvjpegDestroy(g->handle);
    cugl_stream_release(g->stream);
    free(g);
}

cugl__gpu_jpeg *cugl__gpu_jpeg_open(cugl_app_context *ctx, char *why, size_t why_size)
{
    (void)ctx;
    int ordinals[4], count = 0;
    if (cugl_gl_devices(ordinals, 4, &count) != CUGL_OK || count == 0) {
        snprintf(why, why_size, "the GL context runs on no CUDA device (%s)",
                 count == 0 && !cugl_last_error()[0] ? "none found" : cugl_last_error());
        cugl_clear_error();
        return NULL;
    }
    pthread_once(&load_once, load);
    if (load_why[0]) {
        snprintf(why, why_size, "%s", load_why);
        return NULL;
    }
    cugl__gpu_jpeg *g = calloc(1, sizeof *g);
    if (!g) {
        snprintf(why, why_size, "no memory");
        return NULL;
    }
    int r = 0;
    if (cugl_device_get(&g->device, ordinals[0]) != CUGL_OK ||
        cugl_device_set_current(g->device) != CUGL_OK ||
        cugl_stream_create(&g->stream, g->device, NULL) != CUGL_OK) {
        snprintf(why, why_size, "CUDA device %d: %s", ordinals[0], cugl_last_error());
        cugl_clear_error();
    } else if ((r = nvj.nvjpegCreateSimple(&g->handle)) != 0) {
        snprintf(why, why_size, "%s: nvjpegCreateSimple failed (status %d)", load_path, r);
    } else {
        snprintf(why, why_size, "nvJPEG (%s) on CUDA device %d, where GL runs", load_path,
                 ordinals[0]);
        return g;
    }
    cugl__gpu_jpeg_close(g);
    return NULL;
}

/* The job's GL objects and nvJPEG state for a w x h picture. */
static cugl_status job_size(cugl__gpu_jpeg *g, job *j, int w, int h, const char *who)
{
    if (!j->state) {
        int r = nvj.nvjpegEncoderStateCreate(g->handle, &j->state, cugl_stream_handle(g->stream));
        if (r == 0)
            r = nvj.nvjpegEncoderParamsCreate(g->handle, &j->params,
                                              cugl_stream_handle(g->stream));
        if (r == 0)
            r = nvj.nvjpegEncoderParamsSetSamplingFactors(j->params, NVJ_CSS_420,
                                                          cugl_stream_handle(g->stream));
        if (r != 0)
            return cugl__fail(CUGL_ERROR_CUDA, who, "nvJPEG cannot make an encoder (status %d)",
                              r);
        cugl_event_desc timing = {.timing = true};
        CUGL__TRY_OWN(cugl_event_create(&j->begin, g->device, &timing));
        CUGL__TRY_OWN(cugl_event_create(&j->end, g->device, &timing));
    }
    if (j->pbo && j->width == w && j->height == h)
        return CUGL_OK;
    job_free_pixels(j);
    cugl_app_drain_gl_errors();
    glCreateRenderbuffers(1, &j->rb);
    glNamedRenderbufferStorage(j->rb, GL_RGBA8, w, h);
    glCreateFramebuffers(1, &j->fbo);
    glNamedFramebufferRenderbuffer(j->fbo, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, j->rb);
    glCreateBuffers(1, &j->pbo);
    glNamedBufferStorage(j->pbo, (GLsizeiptr)w * h * 3, NULL, 0);
    CUGL__TRY(cugl_app_check_gl(who, "the GPU encoder's framebuffer and buffer"));
    CUGL__TRY_OWN(cugl_graphics_resource_from_gl_buffer(&j->resource, g->device, j->pbo,
                                                        CUGL_GRAPHICS_READ_ONLY));
    j->width = w;
    j->height = h;
    return CUGL_OK;
}

int cugl__gpu_jpeg_free_job(const cugl__gpu_jpeg *g)
{
    for (int i = 0; i < CUGL__GPU_JPEG_JOBS; i++)
        if (g->jobs[i].phase == JOB_IDLE)
            return i;
    return -1;
}

cugl_status cugl__gpu_jpeg_start(cugl__gpu_jpeg *g, int index, GLuint from, int width, int height,
                                 int scale, int quality, const char *who)
{
    job *j = &g->jobs[index];
    int w = width / scale, h = height / scale;
    /* nvJPEG (on the CUDA runtime) works in the thread's current context. */
    CUGL__TRY_OWN(cugl_device_set_current(g->device));
    CUGL__TRY(job_size(g, j, w, h, who));
    /* Flipped (rows top first, as JPEG has them) and scaled in one blit. */
    glBlitNamedFramebuffer(from, j->fbo, 0, 0, width, height, 0, h, w, 0, GL_COLOR_BUFFER_BIT,
                           scale > 1 ? GL_LINEAR : GL_NEAREST);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, j->fbo);
    glBindBuffer(GL_PIXEL_PACK_BUFFER, j->pbo);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadPixels(0, 0, w, h, GL_RGB, GL_UNSIGNED_BYTE, NULL);
    j->fence = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
    CUGL__TRY(cugl_app_check_gl(who, "copying the frame for nvJPEG"));
    j->quality = quality;
    j->phase = JOB_COPYING;
    return CUGL_OK;
}

/* A copied frame to nvJPEG: map, encode, unmap, all queued on the stream. */
static cugl_status encode(cugl__gpu_jpeg *g, job *j, const char *who)
{
    void *stream = cugl_stream_handle(g->stream);
    CUGL__TRY_OWN(cugl_device_set_current(g->device));
    cugl_buffer *mapped = NULL;
    CUGL__TRY_OWN(cugl_graphics_resource_map(&mapped, j->resource, g->stream));
    nvj_image image = {.channel = {(unsigned char *)(uintptr_t)cugl_buffer_handle(mapped)},
                       .pitch = {(size_t)j->width * 3}};
    cugl_status st = cugl_event_record(j->begin, g->stream);
    int r = st == CUGL_OK ? nvj.nvjpegEncoderParamsSetQuality(j->params, j->quality, stream) : 0;
    if (st == CUGL_OK && r == 0)
        r = nvj.nvjpegEncodeImage(g->handle, j->state, j->params, &image, NVJ_INPUT_RGBI,
                                  j->width, j->height, stream);
    if (st == CUGL_OK && r == 0)
        st = cugl_event_record(j->end, g->stream);
    cugl_buffer_release(mapped); /* unmaps, after the encode on the stream */
    if (st != CUGL_OK)
        return cugl__fail(st, who, "nvJPEG: %s", cugl_last_error());
    if (r != 0)
        return cugl__fail(CUGL_ERROR_CUDA, who, "nvjpegEncodeImage of %d x %d failed (status %d)",
                          j->width, j->height, r);
    return CUGL_OK;
}

cugl_status cugl__gpu_jpeg_poll(cugl__gpu_jpeg *g, int index, bool *done, const char *who)
{
    job *j = &g->jobs[index];
    *done = j->phase == JOB_DONE;
    if (j->phase == JOB_COPYING) {
        if (glClientWaitSync(j->fence, 0, 0) == GL_TIMEOUT_EXPIRED)
            return CUGL_OK;
        glDeleteSync(j->fence);
        j->fence = NULL;
        j->phase = JOB_ENCODING;
        cugl_status st = encode(g, j, who);
        if (st != CUGL_OK) {
            j->phase = JOB_IDLE;
            return st;
        }
    }
    if (j->phase == JOB_ENCODING) {
        CUGL__TRY_OWN(cugl_device_set_current(g->device));
        bool finished = false;
        CUGL__TRY_OWN(cugl_event_query(j->end, &finished));
        if (!finished)
            return CUGL_OK;
        float ms = 0;
        if (cugl_event_elapsed_ms(&ms, j->begin, j->end) == CUGL_OK)
            j->encode_ms = ms;
        cugl_clear_error();
        void *stream = cugl_stream_handle(g->stream);
        size_t size = 0;
        int r = nvj.nvjpegEncodeRetrieveBitstream(g->handle, j->state, NULL, &size, stream);
        unsigned char *p = r == 0 && size ? malloc(size) : NULL;
        if (p)
            r = nvj.nvjpegEncodeRetrieveBitstream(g->handle, j->state, p, &size, stream);
        if (r != 0 || !p) {
            free(p);
            j->phase = JOB_IDLE;
            return cugl__fail(r ? CUGL_ERROR_CUDA : CUGL_ERROR_OUT_OF_MEMORY, who,
                              "nvJPEG: cannot take out a JPEG of %zu bytes (status %d)", size,
                              r);
        }
        free(j->jpeg);
        j->jpeg = p;
        j->size = size;
        j->phase = JOB_DONE;
        *done = true;
    }
    return CUGL_OK;
}

unsigned char *cugl__gpu_jpeg_take(cugl__gpu_jpeg *g, int index, size_t *size, int *width,
                                   int *height, double *encode_ms)
{
    job *j = &g->jobs[index];
    unsigned char *p = j->jpeg;
    *size = j->size;
    *width = j->width;
    *height = j->height;
    *encode_ms = j->encode_ms;
    j->jpeg = NULL;
    j->size = 0;
    j->phase = JOB_IDLE;
    return p;
}

void cugl__gpu_jpeg_cancel(cugl__gpu_jpeg *g, int index)
{
    job *j = &g->jobs[index];
    if (j->phase == JOB_ENCODING)
        cugl_event_sync(j->end);
    if (j->fence) {
        glDeleteSync(j->fence);
        j->fence = NULL;
    }
    free(j->jpeg);
    j->jpeg = NULL;
    j->phase = JOB_IDLE;
}
