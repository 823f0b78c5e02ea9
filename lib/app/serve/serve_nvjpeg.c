/*
 * serve_nvjpeg.c - the frame server's JPEG encoders on the GPU (server.h):
 * GL compute shaders (jpeg_gl.c), the default where GL runs on a GPU, or
 * NVIDIA's nvJPEG where asked for, loaded at run time as libcugl loads
 * libcuda, so neither the build nor a machine without it needs nvJPEG. The
 * raw frame never leaves the GPU.
 *
 *   GL's shaders   read a headless frame where it is (its colour texture,
 *                  GL's rows bottom first); a window's frame, or one
 *                  scaled down, is blitted into a framebuffer of ours first
 *                  (rows flipped, scaled by a filter). The JPEG lands in a
 *                  mapped buffer in host memory. Nothing runs on CUDA.
 *   nvJPEG         the frame blitted as above and read as RGB into CUDA
 *                  memory that GL imports (cugl/app_shared.h: nothing is
 *                  mapped, no GL-CUDA hand-over); nvjpegEncodeImage reads
 *                  it there, and only the JPEG comes back to the host.
 *
 * A hash job (the server's test for a still picture) sums a hash of every
 * texel of the frame (of a headless frame where it is; else blitted at half
 * size, every texel in one of its) with a compute shader
 * (shaders/frame_hash.comp) and copies the sums into a mapped GL buffer:
 * GL's work alone; its fence passed, the hash is read there.
 *
 * A job's way: start(), on the render thread, queues GL's work and fences
 * it. Headless on EGL 1.5 the fence is an EGL one and the job goes to the
 * encoder's thread at once, which waits for it (a job polled for at the
 * program's next frames waited 17 ms at 60 a second); else poll(), at
 * later frames, hands the job over once the GL fence passed. The thread
 * copies GL's JPEG out of host memory, or encodes with nvJPEG on its own
 * stream, waits for the encode, takes the JPEG out
 * (nvjpegEncodeRetrieveBitstream), and tells the server (done()), which
 * publishes the frame whose jobs are all done.
 * The render thread never waits: nvjpegEncodeImage does (about 1 ms a 4K
 * picture where GL's work shares the GPU), on the thread.
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
#include <sys/prctl.h>

#include "app_internal.h"
#include "jpeg_gl.h"
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

/* A job's way: IDLE; COPYING (start() with a GL fence after GL's blit and
 * copy); QUEUED (the thread's: at once where start() made an EGL fence,
 * which the thread waits for, else once poll() found the GL fence
 * passed); ENCODING (the thread's); DONE or FAILED (the thread let go of
 * it); IDLE again once taken or cancelled. `phase` and the queue are under
 * `lock`; the rest of a job is the render thread's while it is IDLE,
 * COPYING, DONE or FAILED, and the thread's while QUEUED or ENCODING. */
typedef enum job_phase {
    JOB_IDLE,
    JOB_COPYING,
    JOB_QUEUED,
    JOB_ENCODING,
    JOB_DONE,
    JOB_FAILED,
} job_phase;

typedef struct job {
    job_phase phase;
    bool cancelled;       /* dropped while the thread had it: IDLE when it lets go */
    bool hashing;         /* a hash job (start_hash), else a JPEG's */
    GLuint fbo, tex;      /* the flipped, scaled frame (the render thread's) */
    cugl_app_shared *rgb; /* its RGB rows: CUDA memory GL packs them into (nvJPEG's jobs) */
    cugl__jpeg_gl_out out; /* where GL's encoder puts the JPEG (its jobs) */
    /* Hash jobs: the shader's two sums in GPU memory (atomics into host
     * memory took 19 ms a 1920x1080 picture), copied to hash_words, the
     * mapping of hash_read. */
    GLuint hash_buf, hash_read;
    const uint32_t *hash_words;
    int room_w, room_h;   /* the largest picture the two take */
    int width, height, quality;
    GLsync fence;         /* the copy's end, polled by poll(); or */
    EGLSync egl_fence;    /* ... waited for by the thread (headless, EGL 1.5) */
    /* The thread's: the JPEG (or the hash), and what the encode took or why
     * it failed. */
    uint64_t hash;
    unsigned char *jpeg;
    size_t size;
    double encode_ms;
    cugl_status failure;
    char why[256];
} job;

struct cugl__gpu_jpeg {
    cugl__jpeg_gl *gl; /* GL's encoder, or NULL: nvJPEG's */
    cugl_device *device;
    cugl_stream *stream;
    nvj_handle handle;
    job jobs[CUGL__GPU_JPEG_JOBS];
    pthread_t thread;
    bool thread_started;
    pthread_mutex_t lock;
    pthread_cond_t work, idle; /* a job queued, or `stop`; a job let go of */
    int queue[CUGL__GPU_JPEG_JOBS];
    int queued;
    bool stop;
    void (*done)(void *user); /* called on the thread after each job it let go of */
    void *user;
    EGLDisplay egl_display; /* EGL_NO_DISPLAY: GL fences, polled */
    GLuint hash_program;    /* shaders/frame_hash.comp, made at the first hash job */
    /* The thread's one encoder: it encodes a job at a time, and each
     * nvJPEG state holds buffers of its own (with one a job, up to 24). */
    nvj_state state;
    nvj_params params;
    cugl_event *begin, *end;
    bool current; /* the device's context is the thread's current one */
};

/* ---- The encoder's thread ---------------------------------------------------------- */

/* The thread's nvJPEG state and events, made at its first encode (what a
 * failure left out, at the next). */
static cugl_status make_encoder(cugl__gpu_jpeg *g, const char *who)
{
    void *stream = cugl_stream_handle(g->stream);
    int r = 0;
    if (!g->state)
        r = nvj.nvjpegEncoderStateCreate(g->handle, &g->state, stream);
    if (r == 0 && !g->params) {
        r = nvj.nvjpegEncoderParamsCreate(g->handle, &g->params, stream);
        if (r == 0)
            r = nvj.nvjpegEncoderParamsSetSamplingFactors(g->params, NVJ_CSS_420, stream);
        if (r != 0 && g->params) {
            nvj.nvjpegEncoderParamsDestroy(g->params);
            g->params = NULL;
        }
    }
    if (r != 0)
        return cugl__fail(CUGL_ERROR_CUDA, who, "nvJPEG cannot make an encoder (status %d)", r);
    /* The thread sleeps in its wait for the end: spinning, it took 12 ms
     * of a core's time a 4K picture. */
    cugl_event_desc timing = {.timing = true}, sleeping = {.timing = true, .blocking_sync = true};
    if (!g->begin)
        CUGL__TRY_OWN(cugl_event_create(&g->begin, g->device, &timing));
    if (!g->end)
        CUGL__TRY_OWN(cugl_event_create(&g->end, g->device, &sleeping));
    return CUGL_OK;
}

/* The job's RGB rows to a JPEG in j->jpeg: encoded on the stream, waited
 * for, taken out. */
static cugl_status encode(cugl__gpu_jpeg *g, job *j, const char *who)
{
    if (g->gl) { /* GL's encoder: the JPEG is in host memory, waiting */
        bool overflowed = false;
        free(j->jpeg);
        j->jpeg = cugl__jpeg_gl_collect(&j->out, &j->size, &j->encode_ms, &overflowed);
        if (!j->jpeg && !overflowed)
            return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, who, "no memory for a JPEG");
        return CUGL_OK; /* one that overflowed is no frame; the next has more room */
    }
    void *stream = cugl_stream_handle(g->stream);
    /* nvJPEG (on the CUDA runtime) works in the thread's current context:
     * the device's, made current once (no other code runs on the thread). */
    if (!g->current) {
        CUGL__TRY_OWN(cugl_device_set_current(g->device));
        g->current = true;
    }
    CUGL__TRY(make_encoder(g, who));
    nvj_image image = {.channel = {(unsigned char *)(uintptr_t)cugl_buffer_handle(
                           cugl_app_shared_buffer(j->rgb))},
                       .pitch = {(size_t)j->width * 3}};
    CUGL__TRY_OWN(cugl_event_record(g->begin, g->stream));
    int r = nvj.nvjpegEncoderParamsSetQuality(g->params, j->quality, stream);
    if (r == 0)
        r = nvj.nvjpegEncodeImage(g->handle, g->state, g->params, &image, NVJ_INPUT_RGBI,
                                  j->width, j->height, stream);
    if (r != 0)
        return cugl__fail(CUGL_ERROR_CUDA, who, "nvjpegEncodeImage of %d x %d failed (status %d)",
                          j->width, j->height, r);
    CUGL__TRY_OWN(cugl_event_record(g->end, g->stream));
    CUGL__TRY_OWN(cugl_event_sync(g->end));
    float ms = 0;
    if (cugl_event_elapsed_ms(&ms, g->begin, g->end) == CUGL_OK)
        j->encode_ms = ms;
    cugl_clear_error();
    size_t size = 0;
    r = nvj.nvjpegEncodeRetrieveBitstream(g->handle, g->state, NULL, &size, stream);
    unsigned char *p = r == 0 && size ? malloc(size) : NULL;
    if (p)
        r = nvj.nvjpegEncodeRetrieveBitstream(g->handle, g->state, p, &size, stream);
    if (r != 0 || !p) {
        free(p);
        return cugl__fail(r ? CUGL_ERROR_CUDA : CUGL_ERROR_OUT_OF_MEMORY, who,
                          "nvJPEG: cannot take out a JPEG of %zu bytes (status %d)", size, r);
    }
    free(j->jpeg);
    j->jpeg = p;
    j->size = size;
    return CUGL_OK;
}

/* A hash job's sums, once GL's work is done (its fence passed). */
static void read_hash(job *j)
{
    uint64_t h = (uint64_t)j->hash_words[1] << 32 | j->hash_words[0];
    j->hash = h ? h : 1; /* 0 is the server's "no picture yet" */
}

static void *encoder_thread(void *arg)
{
    cugl__gpu_jpeg *g = arg;
    prctl(PR_SET_NAME, "cugl-gpu-jpeg"); /* what profilers and benchmarks see */
    pthread_mutex_lock(&g->lock);
    for (;;) {
        while (!g->stop && g->queued == 0)
            pthread_cond_wait(&g->work, &g->lock);
        if (g->stop)
            break;
        int index = g->queue[0];
        memmove(g->queue, g->queue + 1, (size_t)--g->queued * sizeof g->queue[0]);
        job *j = &g->jobs[index];
        j->phase = JOB_ENCODING;
        pthread_mutex_unlock(&g->lock);
        cugl_status st = CUGL_OK;
        /* GL's copy into the memory: any thread may wait for it. */
        if (j->egl_fence != EGL_NO_SYNC &&
            !cugl__app_copy_fence_wait(g->egl_display, &j->egl_fence))
            st = cugl__fail(CUGL_ERROR_GL, "cugl_app_server_frame",
                            "eglClientWaitSync for GL's copy failed");
        if (st == CUGL_OK && j->hashing)
            read_hash(j);
        else if (st == CUGL_OK)
            st = encode(g, j, "cugl_app_server_frame");
        if (st != CUGL_OK)
            snprintf(j->why, sizeof j->why, "%s", cugl_last_error());
        cugl_clear_error();
        pthread_mutex_lock(&g->lock);
        j->failure = st;
        j->phase = j->cancelled ? JOB_IDLE : st == CUGL_OK ? JOB_DONE : JOB_FAILED;
        j->cancelled = false;
        pthread_cond_broadcast(&g->idle);
        pthread_mutex_unlock(&g->lock);
        g->done(g->user); /* not under the lock: it asks for jobs' phases */
        pthread_mutex_lock(&g->lock);
    }
    pthread_mutex_unlock(&g->lock);
    return NULL;
}

/* ---- The render thread ------------------------------------------------------------- */

/* Until the thread has let go of job `j` (under the lock). */
static void wait_for_thread(cugl__gpu_jpeg *g, job *j)
{
    for (int k = 0; k < g->queued; k++) {
        if (&g->jobs[g->queue[k]] == j) {
            memmove(g->queue + k, g->queue + k + 1,
                    (size_t)(g->queued - k - 1) * sizeof g->queue[0]);
            g->queued--;
            j->phase = JOB_IDLE;
            return;
        }
    }
    while (j->phase == JOB_ENCODING) {
        j->cancelled = true;
        pthread_cond_wait(&g->idle, &g->lock);
    }
}

/* The job's framebuffer and the memory it is packed into, for a job of
 * another size or none. */
static void job_free_pixels(job *j)
{
    cugl_app_shared_destroy(j->rgb); /* waits for GL's copy into it */
    j->rgb = NULL;
    if (j->fbo)
        glDeleteFramebuffers(1, &j->fbo);
    if (j->tex)
        glDeleteTextures(1, &j->tex);
    j->fbo = j->tex = 0;
    j->room_w = j->room_h = 0;
}

static void job_free(cugl__gpu_jpeg *g, job *j)
{
    /* Copying, or queued and never waited for. */
    cugl__app_copy_fence_drop(g->egl_display, &j->egl_fence, &j->fence);
    job_free_pixels(j);
    cugl__jpeg_gl_out_free(&j->out);
    if (j->hash_buf)
        glDeleteBuffers(1, &j->hash_buf);
    if (j->hash_read)
        glDeleteBuffers(1, &j->hash_read); /* unmapped with it */
    free(j->jpeg);
    *j = (job){0};
}

void cugl__gpu_jpeg_close(cugl__gpu_jpeg *g)
{
    if (!g)
        return;
    if (g->thread_started) {
        pthread_mutex_lock(&g->lock);
        g->stop = true; /* an encode under way ends first */
        pthread_cond_signal(&g->work);
        pthread_mutex_unlock(&g->lock);
        pthread_join(g->thread, NULL);
    }
    for (int i = 0; i < CUGL__GPU_JPEG_JOBS; i++)
        job_free(g, &g->jobs[i]);
    if (g->hash_program)
        glDeleteProgram(g->hash_program);
    cugl__jpeg_gl_close(g->gl);
    cugl_event_release(g->begin);
    cugl_event_release(g->end);
    if (g->params)
        nvj.nvjpegEncoderParamsDestroy(g->params);
    if (g->state)
        nvj.nvjpegEncoderStateDestroy(g->state);
    if (g->handle)
        nvj.nvjpegDestroy(g->handle);
    cugl_stream_release(g->stream);
    pthread_cond_destroy(&g->idle);
    pthread_cond_destroy(&g->work);
    pthread_mutex_destroy(&g->lock);
    free(g);
}

/* An encoder of neither kind yet: its lock, its conditions, its caller. */
static cugl__gpu_jpeg *make(cugl_app_context *ctx, void (*done)(void *user), void *user)
{
    cugl__gpu_jpeg *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->done = done;
    g->user = user;
    g->egl_display = cugl__app_egl_fence_display(ctx);
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->work, NULL);
    pthread_cond_init(&g->idle, NULL);
    return g;
}

static bool start_thread(cugl__gpu_jpeg *g, char *why, size_t why_size)
{
    int r = pthread_create(&g->thread, NULL, encoder_thread, g);
    if (r != 0) {
        snprintf(why, why_size, "no thread for the GPU's JPEG: %s", strerror(r));
        return false;
    }
    g->thread_started = true;
    return true;
}

/* GL's encoder (jpeg_gl.c): nothing but the GL context. */
static cugl__gpu_jpeg *open_gl(cugl_app_context *ctx, void (*done)(void *user), void *user,
                               char *why, size_t why_size)
{
    cugl__gpu_jpeg *g = make(ctx, done, user);
    if (!g) {
        snprintf(why, why_size, "no memory");
        return NULL;
    }
    char failed[256] = "";
    g->gl = cugl__jpeg_gl_open(failed, sizeof failed);
    if (!g->gl) {
        snprintf(why, why_size, "GL's JPEG encoder: %s", failed);
    } else if (start_thread(g, why, why_size)) {
        snprintf(why, why_size, "GL compute shaders on %s", cugl_app_context_renderer(ctx));
        return g;
    }
    cugl__gpu_jpeg_close(g);
    return NULL;
}

cugl__gpu_jpeg *cugl__gpu_jpeg_open(cugl_app_context *ctx, bool nvjpeg, void (*done)(void *user),
                                    void *user, char *why, size_t why_size)
{
    if (!nvjpeg)
        return open_gl(ctx, done, user, why, why_size);
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
    cugl__gpu_jpeg *g = make(ctx, done, user);
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
    } else if (start_thread(g, why, why_size)) {
        snprintf(why, why_size, "nvJPEG (%s) on CUDA device %d, where GL runs", load_path,
                 ordinals[0]);
        return g;
    }
    cugl__gpu_jpeg_close(g);
    return NULL;
}

const char *cugl__gpu_jpeg_name(const cugl__gpu_jpeg *g)
{
    return g->gl ? "gl-compute" : "nvjpeg";
}

/* The job's framebuffer, and for a JPEG (`rgb`) the CUDA memory it is
 * packed into, for a w x h picture: made anew only to grow (the memory's
 * destruction waits for GL to finish, and its making allocates and
 * imports: a server whose viewers' scales changed had its program render
 * 44 frames a second where it rendered 60). */
static cugl_status job_size(cugl__gpu_jpeg *g, job *j, int w, int h, bool rgb, const char *who)
{
    if (!j->fbo || w > j->room_w || h > j->room_h) {
        int room_w = w > j->room_w ? w : j->room_w, room_h = h > j->room_h ? h : j->room_h;
        job_free_pixels(j);
        cugl_app_drain_gl_errors();
        glCreateTextures(GL_TEXTURE_2D, 1, &j->tex);
        glTextureStorage2D(j->tex, 1, GL_RGBA8, room_w, room_h);
        glCreateFramebuffers(1, &j->fbo);
        glNamedFramebufferTexture(j->fbo, GL_COLOR_ATTACHMENT0, j->tex, 0);
        CUGL__TRY(cugl_app_check_gl(who, "the GPU encoder's framebuffer"));
        j->room_w = room_w;
        j->room_h = room_h;
    }
    if (rgb && !j->rgb)
        CUGL__TRY_OWN(cugl_app_shared_buffer_create(&j->rgb, g->device,
                                                    (size_t)j->room_w * (size_t)j->room_h * 3));
    j->width = w;
    j->height = h;
    return CUGL_OK;
}

/* Job `index` to the encoder's thread (under the lock). */
static void queue_job(cugl__gpu_jpeg *g, int index)
{
    g->jobs[index].phase = JOB_QUEUED;
    g->queue[g->queued++] = index;
    pthread_cond_signal(&g->work);
}

/* Job `j`'s phase, read under the lock (the thread moves it on). */
static job_phase phase_of(cugl__gpu_jpeg *g, const job *j)
{
    pthread_mutex_lock(&g->lock);
    job_phase phase = j->phase;
    pthread_mutex_unlock(&g->lock);
    return phase;
}

int cugl__gpu_jpeg_free_job(cugl__gpu_jpeg *g, int width, int height, bool hash)
{
    /* One with room for the picture (made anew, its memory costs an
     * allocation, GL's import and a wait), else the first: the jobs used
     * stay few. */
    int first = -1, fits = -1;
    pthread_mutex_lock(&g->lock);
    for (int i = 0; i < CUGL__GPU_JPEG_JOBS && fits < 0; i++) {
        const job *j = &g->jobs[i];
        if (j->phase != JOB_IDLE)
            continue;
        if (j->fbo && (hash || j->rgb || g->gl) && width <= j->room_w && height <= j->room_h)
            fits = i;
        else if (first < 0)
            first = i;
    }
    pthread_mutex_unlock(&g->lock);
    return fits >= 0 ? fits : first;
}

/* The frame into job `j`'s framebuffer, flipped (rows top first, as JPEG
 * has them) and scaled in one blit. */
static void blit_in(job *j, GLuint from, int width, int height, int scale)
{
    glBlitNamedFramebuffer(from, j->fbo, 0, 0, width, height, 0, j->height, j->width, 0,
                           GL_COLOR_BUFFER_BIT, scale > 1 ? GL_LINEAR : GL_NEAREST);
}

/* GL's work of job `j` queued: fenced, and to the thread (EGL fence) or
 * polled for (GL fence); or, where it failed, dropped. */
static cugl_status fence_job(cugl__gpu_jpeg *g, int index, const char *who, const char *what)
{
    job *j = &g->jobs[index];
    cugl__app_copy_fence(g->egl_display, &j->egl_fence, &j->fence);
    cugl_status st = cugl_app_check_gl(who, what);
    if (st != CUGL_OK) { /* the job stays idle: no fence of work that failed */
        cugl__app_copy_fence_drop(g->egl_display, &j->egl_fence, &j->fence);
        return st;
    }
    pthread_mutex_lock(&g->lock);
    if (j->egl_fence != EGL_NO_SYNC)
        queue_job(g, index); /* the thread waits for the copy */
    else
        j->phase = JOB_COPYING;
    pthread_mutex_unlock(&g->lock);
    return CUGL_OK;
}

cugl_status cugl__gpu_jpeg_start(cugl__gpu_jpeg *g, int index, GLuint from, GLuint color,
                                 int width, int height, int scale, int quality, const char *who)
{
    job *j = &g->jobs[index];
    j->hashing = false;
    j->quality = quality;
    /* GL's encoder reads a full-size frame where it is, GL's rows and all:
     * a 4K blit cost a served program more than the encode. */
    GLuint direct = g->gl && scale == 1 ? color : 0;
    if (direct) {
        j->width = width;
        j->height = height;
    } else {
        CUGL__TRY(job_size(g, j, width / scale, height / scale, !g->gl, who));
        blit_in(j, from, width, height, scale);
    }
    if (g->gl) { /* GL's encoder, on the GPU, into host memory */
        char why[256];
        if (!cugl__jpeg_gl_encode(g->gl, &j->out, direct ? direct : j->tex, j->width, j->height,
                                  direct != 0, quality, why, sizeof why))
            return cugl__fail(CUGL_ERROR_GL, who, "%s", why);
        return fence_job(g, index, who, "GL's JPEG encode");
    }
    /* Packed as RGB into the CUDA memory: GL's copy on the GPU; the
     * program's pack state is put back. */
    glBindFramebuffer(GL_READ_FRAMEBUFFER, j->fbo);
    cugl__gl_pixels saved;
    cugl__gl_pixels_set(&saved, true, cugl_app_shared_gl_name(j->rgb), 1, 0, 0);
    glReadPixels(0, 0, j->width, j->height, GL_RGB, GL_UNSIGNED_BYTE, NULL);
    cugl__gl_pixels_restore(&saved);
    return fence_job(g, index, who, "copying the frame for nvJPEG");
}

cugl_status cugl__gpu_jpeg_start_hash(cugl__gpu_jpeg *g, int index, GLuint from, GLuint color,
                                      int width, int height, const char *who)
{
    job *j = &g->jobs[index];
    /* The frame where it is, every texel, where it is a texture; else
     * every texel is in one of the half size's (a linear filter at half
     * size averages each 2 x 2 block). */
    GLuint direct = color;
    if (direct) {
        j->width = width;
        j->height = height;
    } else {
        CUGL__TRY(job_size(g, j, width / 2, height / 2, false, who));
    }
    j->hashing = true;
    if (!g->hash_program)
        CUGL__TRY(cugl_app_compute_program(&g->hash_program, "frame_hash",
                                           (const char *)cugl_shader_frame_hash_comp));
    if (!j->hash_read) {
        GLbitfield mapped = GL_MAP_READ_BIT | GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT;
        glCreateBuffers(1, &j->hash_buf);
        glNamedBufferStorage(j->hash_buf, 2 * sizeof(uint32_t), NULL, 0);
        glCreateBuffers(1, &j->hash_read);
        glNamedBufferStorage(j->hash_read, 2 * sizeof(uint32_t), NULL, mapped);
        j->hash_words = glMapNamedBufferRange(j->hash_read, 0, 2 * sizeof(uint32_t), mapped);
        if (!j->hash_words) {
            glDeleteBuffers(1, &j->hash_buf);
            glDeleteBuffers(1, &j->hash_read);
            j->hash_buf = j->hash_read = 0;
            return cugl_app_check_gl(who, "mapping the frame hash's buffer") == CUGL_OK
                       ? cugl__fail(CUGL_ERROR_GL, who, "the frame hash's buffer maps to NULL")
                       : CUGL_ERROR_GL;
        }
    }
    /* The caller's program, texture unit 0 and storage buffer 0 are kept. */
    if (!direct)
        blit_in(j, from, width, height, 2);
    GLint program = 0, texture = 0, active = 0, storage = 0;
    glGetIntegerv(GL_CURRENT_PROGRAM, &program);
    glGetIntegerv(GL_ACTIVE_TEXTURE, &active);
    glActiveTexture(GL_TEXTURE0);
    glGetIntegerv(GL_TEXTURE_BINDING_2D, &texture);
    glActiveTexture((GLenum)active);
    glGetIntegeri_v(GL_SHADER_STORAGE_BUFFER_BINDING, 0, &storage);
    GLuint zero = 0;
    glClearNamedBufferSubData(j->hash_buf, GL_R32UI, 0, 2 * sizeof(uint32_t), GL_RED_INTEGER,
                              GL_UNSIGNED_INT, &zero);
    glUseProgram(g->hash_program);
    glBindTextureUnit(0, direct ? direct : j->tex);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, j->hash_buf);
    glUniform2i(0, j->width, j->height);
    glDispatchCompute(((GLuint)j->width + 15) / 16, ((GLuint)j->height + 15) / 16, 1);
    glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT); /* the sums, for the copy */
    glCopyNamedBufferSubData(j->hash_buf, j->hash_read, 0, 0, 2 * sizeof(uint32_t));
    glUseProgram((GLuint)program);
    glBindTextureUnit(0, (GLuint)texture);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, (GLuint)storage);
    return fence_job(g, index, who, "hashing the frame");
}

cugl_status cugl__gpu_jpeg_poll(cugl__gpu_jpeg *g, int index, const char *who)
{
    job *j = &g->jobs[index];
    job_phase phase = phase_of(g, j);
    if (phase == JOB_COPYING) {
        /* GL's copy done, its writes are in the memory: the thread's. */
        if (glClientWaitSync(j->fence, GL_SYNC_FLUSH_COMMANDS_BIT, 0) == GL_TIMEOUT_EXPIRED)
            return CUGL_OK;
        glDeleteSync(j->fence);
        j->fence = NULL;
        pthread_mutex_lock(&g->lock);
        if (j->hashing) { /* GL's work was all of it */
            read_hash(j);
            j->phase = JOB_DONE;
        } else {
            queue_job(g, index);
        }
        pthread_mutex_unlock(&g->lock);
        return CUGL_OK;
    }
    if (phase == JOB_FAILED) {
        cugl_status failure = j->failure;
        char why[sizeof j->why];
        snprintf(why, sizeof why, "%s", j->why);
        pthread_mutex_lock(&g->lock);
        j->phase = JOB_IDLE;
        pthread_mutex_unlock(&g->lock);
        return cugl__fail(failure, who, "%s: %s", g->gl ? "GL's JPEG encoder" : "nvJPEG", why);
    }
    return CUGL_OK;
}

bool cugl__gpu_jpeg_is_done(cugl__gpu_jpeg *g, int index)
{
    return phase_of(g, &g->jobs[index]) == JOB_DONE;
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
    pthread_mutex_lock(&g->lock);
    j->phase = JOB_IDLE;
    pthread_mutex_unlock(&g->lock);
    return p;
}

uint64_t cugl__gpu_jpeg_take_hash(cugl__gpu_jpeg *g, int index)
{
    job *j = &g->jobs[index];
    uint64_t hash = j->hash;
    pthread_mutex_lock(&g->lock);
    j->phase = JOB_IDLE;
    pthread_mutex_unlock(&g->lock);
    return hash;
}

void cugl__gpu_jpeg_cancel(cugl__gpu_jpeg *g, int index)
{
    job *j = &g->jobs[index];
    pthread_mutex_lock(&g->lock);
    wait_for_thread(g, j);
    j->phase = JOB_IDLE;
    pthread_mutex_unlock(&g->lock);
    /* Copying, or taken off the queue before the thread waited for it. */
    cugl__app_copy_fence_drop(g->egl_display, &j->egl_fence, &j->fence);
    free(j->jpeg);
    j->jpeg = NULL;
}
