/*
 * frames.c - the render thread's part: each present's framebuffer copied into a
 * free slot (scaled down on the GPU as far as the viewers allow) and fenced,
 * or handed to the GPU's JPEG encoder; the rendering rate; the frames'
 * headers.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libwebsockets.h>

#include "server.h"

/* A slot's buffer (its fences are the caller's). */
void cugl__serve_free_slot(slot *sl)
{
    cugl__app_mapped_pack_buffer_free(&sl->pbo, &sl->pixels);
    *sl = (slot){0};
}

/* A free slot's buffer of `width` x `height`. */
static cugl_status size_slot(slot *sl, int width, int height, const char *who)
{
    if (sl->pbo && sl->width == width && sl->height == height)
        return CUGL_OK;
    cugl__serve_free_slot(sl);
    CUGL__TRY(cugl__app_mapped_pack_buffer(&sl->pbo, &sl->pixels,
                                           (GLsizeiptr)width * height * 4, who));
    sl->width = width;
    sl->height = height;
    return CUGL_OK;
}

/* The framebuffer to read a frame `scale` times smaller from: the
 * context's blitted (filtered) into one of that size. */
static cugl_status scaled_framebuffer(cugl_app_server *s, GLuint *fbo, int width, int height,
                                      int scale, const char *who)
{
    GLuint from = cugl_app_context_framebuffer(s->ctx);
    *fbo = from;
    if (scale == 1)
        return CUGL_OK;
    CUGL__TRY(cugl__app_sized_fb_blit(&s->down, from, width, height, width / scale,
                                      height / scale, who));
    *fbo = s->down.fbo;
    return CUGL_OK;
}

/* The frame's header fields into `sl` (number, events, time, JSON). */
static void describe(cugl_app_server *s, slot *sl, int width, int height, long shown, double t)
{
    sl->number = cugl_app_context_frame(s->ctx);
    sl->events = shown;
    sl->time_s = t;
    sl->fps = s->fps;
    char name[256], stats[2 * CUGL_APP_SERVE_MAX_STATS];
    cugl__serve_json_escape(name, sizeof name, s->name);
    cugl__serve_json_escape(stats, sizeof stats, s->stats);
    snprintf(sl->json, sizeof sl->json,
             "{\"frame\":%ld,\"width\":%d,\"height\":%d,\"name\":\"%s\",\"fps\":%.1f,"
             "\"copied\":%ld,\"viewers\":%d,\"events\":%ld,\"stats\":\"%s\"",
             sl->number, width, height, name, s->fps, s->copied, atomic_load(&s->viewers), shown,
             stats);
}

/* Slot `i` to the encoders (under the lock). */
static void queue_slot(cugl_app_server *s, int i)
{
    s->slots[i].state = SLOT_QUEUED;
    s->queue[s->queued++] = i;
    pthread_cond_signal(&s->work);
}

/* The GPU encoder's frames whose every job is done, published (under
 * gpu_lock; on the render thread or the encoder's). */
static void gpu_publish_done(cugl_app_server *s)
{
    for (int i = 0; s->gpu && i < GPU_FRAMES; i++) {
        struct gpu_frame *gf = &s->gpu_frames[i];
        bool all = gf->busy;
        for (int l = 0; all && l <= LEVELS; l++)
            all = gf->jobs[l] < 0 || cugl__gpu_jpeg_is_done(s->gpu, gf->jobs[l]);
        if (!all)
            continue;
        frame *made[LEVELS] = {0};
        uint64_t hash = 0;
        for (int l = 0; l <= LEVELS; l++) {
            if (gf->jobs[l] < 0)
                continue;
            int job = gf->jobs[l];
            gf->jobs[l] = -1;
            if (l == PROBE) {
                hash = cugl__gpu_jpeg_take_hash(s->gpu, job);
                continue;
            }
            size_t size = 0;
            int w = 0, h = 0;
            double ms = 0;
            unsigned char *jpeg = cugl__gpu_jpeg_take(s->gpu, job, &size, &w, &h, &ms);
            if (jpeg)
                made[l] = cugl__serve_wrap_frame(s, &gf->meta, l, 0, jpeg, size, w, h, ms,
                                                 cugl__gpu_jpeg_name(s->gpu));
            if (made[l])
                cugl__serve_frame_psnr(made[l], -1, "the GPU makes these JPEGs; the picture "
                                                    "is not on the host to compare");
            free(jpeg);
        }
        for (int l = 0; l < LEVELS; l++)
            if (made[l])
                made[l]->hash = hash;
        frame *header = cugl__serve_wrap_frame(s, &gf->meta, -1, hash, NULL, 0, gf->meta.width,
                                               gf->meta.height, 0, cugl__gpu_jpeg_name(s->gpu));
        gf->busy = false;
        pthread_mutex_lock(&s->lock);
        cugl__serve_publish_frames(s, made, header, hash);
        pthread_mutex_unlock(&s->lock);
        lws_cancel_service(s->lws);
    }
}

/* The GPU encoder's thread has finished a job: its frame goes out now, not
 * at the program's next present (a frame later at 60 a second). */
void cugl__serve_gpu_job_done(void *user)
{
    cugl_app_server *s = user;
    pthread_mutex_lock(&s->gpu_lock);
    gpu_publish_done(s);
    pthread_mutex_unlock(&s->gpu_lock);
}

/* The GPU encoder's jobs moved on (those whose copy is done go to its
 * thread, each polled, even while an earlier one is still encoding), and
 * the frames done published (under gpu_lock). */
static cugl_status gpu_collect(cugl_app_server *s, const char *who)
{
    for (int i = 0; i < GPU_FRAMES; i++) {
        struct gpu_frame *gf = &s->gpu_frames[i];
        for (int l = 0; gf->busy && l <= LEVELS; l++)
            if (gf->jobs[l] >= 0)
                CUGL__TRY(cugl__gpu_jpeg_poll(s->gpu, gf->jobs[l], who));
    }
    gpu_publish_done(s);
    return CUGL_OK;
}

/* This frame to the GPU's encoder: a job for each level wanted, and the
 * probe, a hash of the picture (every pixel counts in it) by a GL compute
 * shader, to tell a still picture. (The probe was a JPEG of its own,
 * hashed: half of nvJPEG's encodes. As a hash it cost the serving threads
 * 1.7 ms of CPU a 4K frame where it cost 3.1 on an H100.) */
static cugl_status gpu_start(cugl_app_server *s, struct gpu_frame *gf, int width, int height,
                             const char *who)
{
    unsigned want = atomic_load(&s->want_live) | atomic_load(&s->want_now);
    /* The frame, and where headless the texture it is drawn into. */
    GLuint from = cugl_app_context_framebuffer(s->ctx), color = cugl__app_context_color(s->ctx);
    for (int l = 0; l <= LEVELS; l++)
        gf->jobs[l] = -1;
    gf->busy = true;
    for (int l = 0; l <= LEVELS; l++) {
        int scale = l == PROBE ? 2 : cugl__serve_levels[l].scale;
        if ((l < PROBE && !(want >> l & 1)) || width / scale < 16 || height / scale < 16)
            continue;
        int job = cugl__gpu_jpeg_free_job(s->gpu, width / scale, height / scale, l == PROBE);
        if (job < 0)
            continue;
        if (l == PROBE)
            CUGL__TRY(cugl__gpu_jpeg_start_hash(s->gpu, job, from, color, width, height, who));
        else
            CUGL__TRY(cugl__gpu_jpeg_start(s->gpu, job, from, color, width, height, scale,
                                           level_quality(s, l), who));
        gf->jobs[l] = job;
    }
    return CUGL_OK;
}

/* The GPU's encoder failed: said once, and the CPU encodes from now on. */
static void gpu_give_up(cugl_app_server *s)
{
    snprintf(s->encoder_why, sizeof s->encoder_why, "%s failed: %s",
             cugl__gpu_jpeg_name(s->gpu), cugl_last_error());
    cugl__app_notice("cugl_app_server: %s; JPEG on the CPU from now on", s->encoder_why);
    pthread_mutex_lock(&s->gpu_lock);
    for (int i = 0; i < GPU_FRAMES; i++)
        for (int l = 0; l <= LEVELS; l++)
            if (s->gpu_frames[i].busy && s->gpu_frames[i].jobs[l] >= 0)
                cugl__gpu_jpeg_cancel(s->gpu, s->gpu_frames[i].jobs[l]);
    memset(s->gpu_frames, 0, sizeof s->gpu_frames);
    cugl__gpu_jpeg *g = s->gpu;
    s->gpu = NULL; /* its thread, in cugl__serve_gpu_job_done, finds none */
    pthread_mutex_unlock(&s->gpu_lock);
    cugl__gpu_jpeg_close(g); /* not under gpu_lock: it waits for the thread */
    cugl_clear_error();
}

/* A frame at `t`: the rendering rate over the FPS_WINDOW_S ending now (the
 * frames' intervals in it over their time), at least over the last
 * interval. A window that ended at its last close, as it once was, lagged
 * by up to its length: where the rate changed, the header said the old
 * one. */
static void note_rate(cugl_app_server *s, double t)
{
    long n = ++s->fps_count;
    s->fps_times[(n - 1) % FPS_RING] = t;
    long first = n - 1; /* the oldest frame of the window, by count */
    while (first > 0 && n - first < FPS_RING &&
           t - s->fps_times[(first - 1) % FPS_RING] <= FPS_WINDOW_S)
        first--;
    if (first == n - 1)
        first = n - 2;
    double span = first >= 0 ? t - s->fps_times[first % FPS_RING] : 0;
    if (span <= 0)
        return;
    pthread_mutex_lock(&s->lock);
    s->fps = (double)(n - 1 - first) / span;
    pthread_mutex_unlock(&s->lock);
}

/* The copies that have finished, to the encoders; the GPU's finished
 * frames published, and a free one taken for this present (free it stays
 * until gpu_start: the GPU encoder's thread only ends frames), or NULL; a
 * free slot's index, or -1; whether some viewer gets JPEG (where every
 * viewer gets video, the GPU's JPEGs are sent to no one). */
static struct gpu_frame *collect(cugl_app_server *s, int *free_index, bool *jpeg_viewers)
{
    struct gpu_frame *gf = NULL;
    if (s->gpu) {
        pthread_mutex_lock(&s->gpu_lock);
        cugl_status st = gpu_collect(s, "cugl_app_server_frame");
        for (int i = 0; i < GPU_FRAMES && !gf; i++)
            if (!s->gpu_frames[i].busy)
                gf = &s->gpu_frames[i];
        pthread_mutex_unlock(&s->gpu_lock);
        if (st != CUGL_OK) {
            gpu_give_up(s);
            gf = NULL;
        }
    }
    pthread_mutex_lock(&s->lock);
    for (int i = 0; i < SLOTS; i++) {
        slot *sl = &s->slots[i];
        if (sl->state != SLOT_COPYING ||
            glClientWaitSync(sl->fence, 0, 0) == GL_TIMEOUT_EXPIRED)
            continue;
        glDeleteSync(sl->fence);
        sl->fence = NULL;
        queue_slot(s, i);
    }
    *free_index = -1;
    for (int i = 0; i < SLOTS && *free_index < 0; i++)
        if (s->slots[i].state == SLOT_FREE)
            *free_index = i;
    *jpeg_viewers = s->video_count < atomic_load(&s->viewers);
    pthread_mutex_unlock(&s->lock);
    return gf;
}

/* Whether a frame may be read now: there are viewers, and at most
 * CAPTURE_HZ a second are read (CAPTURE_BURST at once). */
static bool capture_due(cugl_app_server *s, int width, int height, double t)
{
    if (atomic_load(&s->viewers) == 0 || width <= 0 || height <= 0) {
        s->capture_s = 0;
        return false;
    }
    s->capture_tokens = s->capture_s > 0 ? s->capture_tokens + (t - s->capture_s) * CAPTURE_HZ
                                         : CAPTURE_BURST;
    s->capture_tokens = fmin(s->capture_tokens, CAPTURE_BURST);
    s->capture_s = t;
    return s->capture_tokens >= 1;
}

/* The framebuffer to the GPU's encoder (gf) and into the slot `sl` for
 * the CPU's (scaled down by `scale`), either NULL; the caller's read
 * framebuffer and pack state are kept. The GPU's failure gives the GPU's
 * encoder up; the copy's, the status. */
static cugl_status copy(cugl_app_server *s, struct gpu_frame *gf, slot *sl, int width, int height,
                        int scale, const char *who)
{
    GLint read_fbo = 0;
    glGetIntegerv(GL_READ_FRAMEBUFFER_BINDING, &read_fbo);
    cugl__gl_pixels saved;
    cugl__gl_pixels_set(&saved, true, 0, 4, 0, 0);
    cugl_app_drain_gl_errors();
    cugl_status st = CUGL_OK, gpu_st = CUGL_OK;
    if (gf) {
        gf->meta.width = width;
        gf->meta.height = height;
        pthread_mutex_lock(&s->gpu_lock);
        gpu_st = gpu_start(s, gf, width, height, who);
        pthread_mutex_unlock(&s->gpu_lock);
    }
    if (sl) {
        GLuint from = 0;
        st = scaled_framebuffer(s, &from, width, height, scale, who);
        if (st == CUGL_OK) {
            glBindFramebuffer(GL_READ_FRAMEBUFFER, from);
            glBindBuffer(GL_PIXEL_PACK_BUFFER, sl->pbo);
            glReadPixels(0, 0, sl->width, sl->height, GL_RGBA, GL_UNSIGNED_BYTE, NULL);
            cugl__app_copy_fence(s->egl_display, &sl->egl_fence, &sl->fence);
        }
    }
    cugl__gl_pixels_restore(&saved);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, (GLuint)read_fbo);
    if (gpu_st != CUGL_OK)
        gpu_give_up(s);
    if (sl && st == CUGL_OK)
        st = cugl_app_check_gl(who, "copying the framebuffer");
    return st;
}

CUGL_API cugl_status cugl_app_server_frame(cugl_app_server *s)
{
    if (!s)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "server is NULL");
    double t = now_s();
    note_rate(s, t);
    /* Events pushed before the last present are in this frame; those
     * pushed since, in the next (a few may be, and are counted later). */
    long shown = s->events_shown;
    s->events_shown = atomic_load(&s->events);
    int free_index;
    bool jpeg_viewers;
    struct gpu_frame *gf = collect(s, &free_index, &jpeg_viewers);
    int width = 0, height = 0;
    cugl_app_context_size(s->ctx, &width, &height);
    if (!capture_due(s, width, height, t))
        return CUGL_OK;
    /* The GPU's JPEGs, where some viewer gets JPEG; the CPU's copy for
     * libjpeg-turbo, or with the GPU's encoder for video alone. Each goes
     * on without the other: a video viewer's frame does not wait for the
     * GPU to have a free frame, nor a JPEG one for a free slot. */
    unsigned want = atomic_load(&s->want_live) | atomic_load(&s->want_now);
    bool use_gpu = s->gpu && jpeg_viewers && gf;
    bool use_cpu = (!s->gpu || (want & VIDEO_WANT)) && free_index >= 0;
    if (!use_gpu && !use_cpu) {
        atomic_fetch_add(&s->dropped, 1);
        return CUGL_OK;
    }
    s->capture_tokens -= 1;
    s->copied++;
    /* Scaled down on the GPU as far as every level wanted allows. */
    int scale = want ? 4 : 1;
    for (int l = 0; l < LEVELS; l++)
        if ((want >> l & 1) && cugl__serve_levels[l].scale < scale)
            scale = cugl__serve_levels[l].scale;
    if ((want & VIDEO_WANT) || width / scale < 16 || height / scale < 16)
        scale = 1;
    slot *sl = use_cpu ? &s->slots[free_index] : NULL;
    if (sl) {
        CUGL__TRY(size_slot(sl, width / scale, height / scale, __func__));
        sl->scale = scale;
        sl->video_only = s->gpu != NULL; /* with the GPU's JPEG, the CPU's copy is for video */
        describe(s, sl, width, height, shown, t);
    }
    if (use_gpu)
        describe(s, &gf->meta, width, height, shown, t);
    cugl_status st = copy(s, use_gpu ? gf : NULL, sl, width, height, scale, __func__);
    if (!sl)
        return CUGL_OK;
    if (st != CUGL_OK) { /* the slot stays free: no fence of a copy that failed */
        cugl__app_copy_fence_drop(s->egl_display, &sl->egl_fence, &sl->fence);
        return st;
    }
    pthread_mutex_lock(&s->lock);
    if (sl->egl_fence != EGL_NO_SYNC)
        queue_slot(s, (int)(sl - s->slots)); /* an encoder waits for the copy */
    else
        sl->state = SLOT_COPYING;
    pthread_mutex_unlock(&s->lock);
    return CUGL_OK;
}
