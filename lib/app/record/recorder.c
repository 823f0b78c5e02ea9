/*
 * recorder.c - cugl/app_record.h: a context's frames kept as a video file.
 *
 * The render thread's part: each kept frame is read into a pixel-pack
 * buffer of its own slot (mapped for good, as the frame server's are),
 * after a filtered blit where the framebuffer is not the recording's size,
 * and fenced; later calls see the fences signal, in order, and queue the
 * slots. The encoder thread takes the queued slots in order, reads the
 * mapped pixels where they are (no copy on the render thread), encodes them
 * with the frame server's encoders (serve_video.c, serve_h264.c) and writes
 * the container (mp4.c, webm.c) into a temporary file that close renames
 * into place. A slot is free again once encoded: with every slot taken the
 * render thread drops its frame, or, keeping every frame, waits.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cugl/app_record.h"

#include "app_internal.h"
#include "gl_state.h"
#include "mp4.h"
#include "serve/serve_internal.h"
#include "webm.h"

enum {
    TIMESCALE = 90000, /* ticks a second in the file: every common rate's frame is whole */
    KEY_SECONDS = 2,   /* a key frame this often, so that a player can seek */
};

typedef enum { SLOT_FREE, SLOT_COPYING, SLOT_QUEUED, SLOT_ENCODING } slot_state;

typedef struct slot {
    GLuint pbo;
    void *pixels;          /* the buffer, mapped for good (rows bottom first) */
    GLsync fence;          /* the copy's, while COPYING */
    slot_state state;      /* the render thread moves FREE -> COPYING -> QUEUED; the encoder
                              QUEUED -> ENCODING -> FREE; under `lock` but for COPYING */
    long index;            /* the frame's number: calls to frame, kept or dropped */
    double seconds;        /* when it was kept, from the first (the wall clock) */
} slot;

struct cugl_app_recorder {
    cugl_app_context *ctx;
    char *path;
    cugl__app_file file;
    cugl__video_codec codec;
    double fps;
    int kbps, width, height; /* width 0 until the first frame sets it */
    cugl_app_record_clock clock;
    bool keep_every_frame;

    cugl__video *video;
    cugl__mp4 *mp4;
    cugl__webm *webm_out;
    cugl__app_sized_fb sized; /* the recording's size, where the framebuffer has another */
    slot slots[CUGL_APP_RECORD_QUEUE];
    long offered;         /* calls to frame with a picture: the next frame's number */
    struct timespec t0;   /* the first frame's time */
    long long last_pts;   /* the encoder's: the last frame's, -1 before it */

    pthread_t thread;
    bool thread_started;
    pthread_mutex_t lock;
    pthread_cond_t changed; /* a slot queued or freed, a failure, or stop */
    int queue[CUGL_APP_RECORD_QUEUE]; /* queued slots, oldest first */
    int queued;
    bool stop;
    cugl_status failed;    /* the encoder's or the file's first failure */
    char why[512];
    cugl_app_record_counts counts;
};

static double since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* A message less its leading "<who>: " (a cugl function's name). */
static const char *bare(const char *text)
{
    const char *colon = strstr(text, ": ");
    return colon && strncmp(text, "cugl_", 5) == 0 ? colon + 2 : text;
}

/* The first failure, kept for the render thread to report (under `lock`). */
static void fail_locked(cugl_app_recorder *r, cugl_status st, const char *text)
{
    if (r->failed != CUGL_OK)
        return;
    r->failed = st;
    snprintf(r->why, sizeof r->why, "%s", bare(text));
}

/* The recorder's failure as this call's error. */
static cugl_status reported(cugl_app_recorder *r, const char *who)
{
    pthread_mutex_lock(&r->lock);
    cugl_status st = r->failed;
    char why[sizeof r->why];
    memcpy(why, r->why, sizeof why);
    pthread_mutex_unlock(&r->lock);
    if (st == CUGL_OK)
        return CUGL_OK;
    return cugl__fail(st, who, "recording %s: %s", r->path, why);
}

/* One queued frame encoded and written (the encoder thread's). */
static void encode(cugl_app_recorder *r, slot *sl)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long key_every = lround(r->fps * KEY_SECONDS);
    bool key = r->last_pts < 0 || sl->index % (key_every > 0 ? key_every : 1) == 0;
    size_t size = 0;
    bool is_key = false;
    char why[256] = "";
    unsigned char *data = cugl__video_encode(r->video, sl->pixels, r->width, r->height, r->fps,
                                             r->kbps, key, &size, &is_key, why, sizeof why);
    cugl_status st = CUGL_OK;
    char text[512] = "";
    if (!data) {
        st = CUGL_ERROR_INVALID_STATE;
        snprintf(text, sizeof text, "the %s encoder failed: %s",
                 cugl__video_codecs[r->codec].encoder, why);
    } else if (size > 0) {
        long long pts;
        if (r->clock == CUGL_APP_RECORD_CLOCK_FIXED)
            pts = llround((double)sl->index * TIMESCALE / r->fps);
        else
            pts = llround(sl->seconds * TIMESCALE);
        if (pts <= r->last_pts)
            pts = r->last_pts + 1;
        st = r->webm_out ? cugl__webm_add(r->webm_out, data, size, pts, is_key)
                         : cugl__mp4_add(r->mp4, data, size, pts, is_key);
        if (st != CUGL_OK)
            snprintf(text, sizeof text, "%s", cugl_last_error());
        else
            r->last_pts = pts;
    }
    free(data);
    double ms = since(&t0) * 1e3;
    pthread_mutex_lock(&r->lock);
    if (st != CUGL_OK) {
        fail_locked(r, st, text);
    } else {
        long n = r->counts.written++;
        r->counts.encode_ms = (r->counts.encode_ms * (double)n + ms) / (double)(n + 1);
        r->counts.bytes = r->file.file ? (long long)ftello(r->file.file) : 0;
    }
    pthread_mutex_unlock(&r->lock);
}

static void *encoder_thread(void *arg)
{
    cugl_app_recorder *r = arg;
    pthread_mutex_lock(&r->lock);
    for (;;) {
        while (r->queued == 0 && !r->stop)
            pthread_cond_wait(&r->changed, &r->lock);
        if (r->queued == 0)
            break; /* stopped, and nothing left */
        slot *sl = &r->slots[r->queue[0]];
        memmove(r->queue, r->queue + 1, (size_t)--r->queued * sizeof r->queue[0]);
        sl->state = SLOT_ENCODING;
        bool failed = r->failed != CUGL_OK;
        pthread_mutex_unlock(&r->lock);
        if (!failed)
            encode(r, sl); /* after a failure, slots are freed unread */
        pthread_mutex_lock(&r->lock);
        sl->state = SLOT_FREE;
        pthread_cond_broadcast(&r->changed);
    }
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

/* The copies that have ended, oldest first, queued for the encoder; with
 * `wait`, every copy, waiting for each (close). */
static cugl_status queue_done(cugl_app_recorder *r, bool wait, const char *who)
{
    for (;;) {
        slot *oldest = NULL;
        pthread_mutex_lock(&r->lock); /* the encoder frees slots meanwhile */
        for (int i = 0; i < CUGL_APP_RECORD_QUEUE; i++) {
            slot *sl = &r->slots[i];
            if (sl->state == SLOT_COPYING && (!oldest || sl->index < oldest->index))
                oldest = sl;
        }
        pthread_mutex_unlock(&r->lock);
        if (!oldest)
            return CUGL_OK;
        if (wait) {
            CUGL__TRY(cugl__gl_fence_wait(&oldest->fence, "a recorded frame's copy", who));
        } else {
            GLenum e = glClientWaitSync(oldest->fence, 0, 0);
            if (e == GL_TIMEOUT_EXPIRED)
                return CUGL_OK;
            if (e == GL_WAIT_FAILED)
                return cugl__fail(CUGL_ERROR_GL, who,
                                  "glClientWaitSync on a recorded frame's copy failed");
            glDeleteSync(oldest->fence);
            oldest->fence = NULL;
        }
        pthread_mutex_lock(&r->lock);
        oldest->state = SLOT_QUEUED;
        r->queue[r->queued++] = (int)(oldest - r->slots);
        pthread_cond_broadcast(&r->changed);
        pthread_mutex_unlock(&r->lock);
    }
}

/* A free slot, or -1 (under `lock`). */
static int free_slot_locked(const cugl_app_recorder *r)
{
    for (int i = 0; i < CUGL_APP_RECORD_QUEUE; i++)
        if (r->slots[i].state == SLOT_FREE)
            return i;
    return -1;
}

static void free_gl(cugl_app_recorder *r)
{
    for (int i = 0; i < CUGL_APP_RECORD_QUEUE; i++) {
        slot *sl = &r->slots[i];
        if (sl->fence)
            glDeleteSync(sl->fence);
        cugl__app_mapped_pack_buffer_free(&sl->pbo, &sl->pixels);
        *sl = (slot){0};
    }
    cugl__app_sized_fb_free(&r->sized);
}

/* Stop the encoder thread once it has written what was queued. */
static void stop_thread(cugl_app_recorder *r)
{
    if (!r->thread_started)
        return;
    pthread_mutex_lock(&r->lock);
    r->stop = true;
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
    pthread_join(r->thread, NULL);
    r->thread_started = false;
}

/* Everything freed; the file, unless committed, taken away. */
static void destroy(cugl_app_recorder *r)
{
    stop_thread(r);
    free_gl(r);
    cugl__mp4_abort(r->mp4);
    cugl__webm_abort(r->webm_out);
    cugl__app_file_abandon(&r->file);
    cugl__video_close(r->video);
    pthread_cond_destroy(&r->changed);
    pthread_mutex_destroy(&r->lock);
    free(r->path);
    free(r);
}

static bool ends_with(const char *s, const char *end)
{
    size_t n = strlen(s), m = strlen(end);
    if (n < m)
        return false;
    for (size_t i = 0; i < m; i++)
        if ((s[n - m + i] | 0x20) != end[i]) /* ".MP4" too */
            return false;
    return true;
}

/* desc's fields in range, its zeros made defaults where they do not
 * depend on the first frame. */
static cugl_status check_desc(cugl_app_recorder_desc *desc, const char *who)
{
    cugl_app_recorder_desc d = *desc;
    if (!(d.fps >= 0.0 && d.fps <= 60.0)) /* NaN too */
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "fps is %g: not from 1 to 60 (0: 60)", d.fps);
    if (d.fps == 0.0)
        d.fps = 60.0;
    if (d.fps < 1.0)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "fps is %g: not from 1 to 60 (0: 60)", d.fps);
    if (d.kbps < 0 || d.kbps > CUGL_APP_RECORD_MAX_KBPS)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "kbps is %d: not from 1 to %d (0: from the size)", d.kbps,
                          CUGL_APP_RECORD_MAX_KBPS);
    if ((d.width == 0) != (d.height == 0) || d.width < 0 || d.height < 0 ||
        d.width > CUGL_APP_RECORD_MAX_SIZE || d.height > CUGL_APP_RECORD_MAX_SIZE ||
        (d.width > 0 && (d.width < 16 || d.height < 16)))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the size is %d x %d: both from 16 to %d, or 0 x 0 (the framebuffer's)",
                          d.width, d.height, CUGL_APP_RECORD_MAX_SIZE);
    if (d.clock != CUGL_APP_RECORD_CLOCK_FIXED && d.clock != CUGL_APP_RECORD_CLOCK_WALL)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "clock is %d: not a cugl_app_record_clock", (int)d.clock);
    if ((unsigned)d.codec > CUGL_APP_RECORD_CODEC_VP9)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "codec is %d: not a cugl_app_record_codec", (int)d.codec);
    *desc = d;
    return CUGL_OK;
}

/* The codec of the file at `path` (its name's container, desc's codec),
 * built in; or an error. */
static cugl_status codec_of(const char *path, cugl_app_record_codec asked,
                            cugl__video_codec *codec, const char *who)
{
    bool webm = ends_with(path, ".webm");
    if (!webm && !ends_with(path, ".mp4"))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "%.200s: the name ends in neither .mp4 (H.264) nor .webm (VP8, VP9)",
                          path);
    static const cugl__video_codec of[] = {
        [CUGL_APP_RECORD_CODEC_H264] = CUGL__VIDEO_H264,
        [CUGL_APP_RECORD_CODEC_VP8] = CUGL__VIDEO_VP8,
        [CUGL_APP_RECORD_CODEC_VP9] = CUGL__VIDEO_VP9,
    };
    *codec = asked == CUGL_APP_RECORD_CODEC_DEFAULT ? (webm ? CUGL__VIDEO_VP8 : CUGL__VIDEO_H264)
                                                    : of[asked];
    if (webm == (*codec == CUGL__VIDEO_H264))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "%.200s: %s is not in %s (H.264 is in .mp4, VP8 and VP9 in .webm)",
                          path, cugl__video_codecs[*codec].title, webm ? ".webm" : ".mp4");
    if (!cugl__video_codecs[*codec].built)
        return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who,
                          "%.200s: this cugl was built without %s (%s: Meson feature %s, "
                          "Debian's %s)",
                          path, cugl__video_codecs[*codec].title,
                          cugl__video_codecs[*codec].encoder,
                          webm ? "serve_video" : "serve_h264",
                          webm ? "libvpx-dev" : "libopenh264-dev");
    return CUGL_OK;
}

CUGL_API cugl_status cugl_app_recorder_create(cugl_app_recorder **out, cugl_app_context *ctx,
                                              const char *path,
                                              const cugl_app_recorder_desc *desc)
{
    const char *who = __func__;
    if (!out || !ctx || !path)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "%s is NULL",
                          !out ? "out" : !ctx ? "ctx" : "path");
    *out = NULL;
    cugl_app_recorder_desc d = desc ? *desc : (cugl_app_recorder_desc){0};
    if (!path[0])
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "path is empty");
    CUGL__TRY(check_desc(&d, who));
    cugl__video_codec codec = CUGL__VIDEO_H264; /* codec_of sets it where it succeeds */
    CUGL__TRY(codec_of(path, d.codec, &codec, who));

    cugl_app_recorder *r = calloc(1, sizeof *r);
    if (!r)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, who, "no memory for a recorder");
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->changed, NULL);
    r->ctx = ctx;
    r->codec = codec;
    r->fps = d.fps;
    r->kbps = d.kbps;
    r->width = d.width & ~1;
    r->height = d.height & ~1;
    r->clock = d.clock;
    r->keep_every_frame = d.keep_every_frame;
    r->last_pts = -1;
    r->path = strdup(path);
    r->video = cugl__video_new(codec);
    if (r->video && d.same_bytes)
        cugl__video_fixed_speed(r->video);
    cugl_status st = CUGL_OK;
    if (!r->path || !r->video)
        st = cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, who, "no memory for a recorder");
    if (st == CUGL_OK)
        st = cugl__app_file_open(&r->file, who, path);
    /* The containers seek back to write sizes and the index: a pipe will not do. */
    if (st == CUGL_OK && fseeko(r->file.file, 0, SEEK_CUR) != 0)
        st = cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                        "cannot record into %.200s: it cannot be sought (a pipe?)", path);
    if (st == CUGL_OK && pthread_create(&r->thread, NULL, encoder_thread, r) != 0)
        st = cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, who, "cannot start the encoder's thread");
    else if (st == CUGL_OK)
        r->thread_started = true;
    if (st != CUGL_OK) {
        destroy(r);
        return st;
    }
    *out = r;
    return CUGL_OK;
}

/* The first frame: the recording's size, its slots, its container. */
static cugl_status start(cugl_app_recorder *r, int width, int height, const char *who)
{
    if (r->width == 0) {
        r->width = width & ~1;
        r->height = height & ~1;
        if (r->width < 16 || r->height < 16 || r->width > CUGL_APP_RECORD_MAX_SIZE ||
            r->height > CUGL_APP_RECORD_MAX_SIZE)
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "the framebuffer is %d x %d: a recording is from 16 x 16 to %d x %d "
                              "(cugl_app_recorder_desc's width and height scale it)",
                              width, height, CUGL_APP_RECORD_MAX_SIZE, CUGL_APP_RECORD_MAX_SIZE);
    }
    if (r->kbps == 0) {
        double bits = 0.1 * r->width * r->height * r->fps / 1000.0;
        r->kbps = bits < 500 ? 500 : bits > CUGL_APP_RECORD_MAX_KBPS ? CUGL_APP_RECORD_MAX_KBPS
                                                                   : (int)lround(bits);
    }
    for (int i = 0; i < CUGL_APP_RECORD_QUEUE; i++)
        CUGL__TRY(cugl__app_mapped_pack_buffer(&r->slots[i].pbo, &r->slots[i].pixels,
                                               (GLsizeiptr)r->width * r->height * 4, who));
    /* The container of the codec: WebM for VP8 and VP9, MP4 for H.264. */
    const char *muxer_who = "cugl_app_recorder";
    cugl_status st = r->codec != CUGL__VIDEO_H264
                         ? cugl__webm_open(&r->webm_out, r->file.file,
                                           r->codec == CUGL__VIDEO_VP9 ? CUGL__WEBM_VP9
                                                                       : CUGL__WEBM_VP8,
                                           r->width, r->height, TIMESCALE, muxer_who)
                         : cugl__mp4_open(&r->mp4, r->file.file, r->width, r->height, TIMESCALE,
                                          muxer_who);
    if (st != CUGL_OK)
        return cugl__fail(st, who, "recording %s: %s", r->path, bare(cugl_last_error()));
    clock_gettime(CLOCK_MONOTONIC, &r->t0);
    return CUGL_OK;
}

/* The framebuffer to read the recording's size from: the context's, or
 * it blitted (filtered) into one of that size. */
static cugl_status sized_framebuffer(cugl_app_recorder *r, GLuint *fbo, int width, int height,
                                     const char *who)
{
    GLuint from = cugl_app_context_framebuffer(r->ctx);
    *fbo = from;
    if (width == r->width && height == r->height)
        return CUGL_OK;
    CUGL__TRY(cugl__app_sized_fb_blit(&r->sized, from, width, height, r->width, r->height, who));
    *fbo = r->sized.fbo;
    return CUGL_OK;
}

/* The frame into slot `i`: read, fenced. */
static cugl_status copy(cugl_app_recorder *r, int i, int width, int height, const char *who)
{
    slot *sl = &r->slots[i];
    GLint read_fbo = 0;
    glGetIntegerv(GL_READ_FRAMEBUFFER_BINDING, &read_fbo);
    cugl__gl_pixels saved;
    cugl__gl_pixels_set(&saved, true, sl->pbo, 4, 0, 0);
    cugl_app_drain_gl_errors();
    GLuint from = 0;
    cugl_status st = sized_framebuffer(r, &from, width, height, who);
    if (st == CUGL_OK) {
        glBindFramebuffer(GL_READ_FRAMEBUFFER, from);
        glReadPixels(0, 0, r->width, r->height, GL_RGBA, GL_UNSIGNED_BYTE, NULL);
        sl->fence = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0); /* present flushes it */
    }
    cugl__gl_pixels_restore(&saved);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, (GLuint)read_fbo);
    if (st == CUGL_OK)
        st = cugl_app_check_gl(who, "copying the framebuffer");
    if (st == CUGL_OK && !sl->fence)
        st = cugl__fail(CUGL_ERROR_GL, who, "glFenceSync gave no fence");
    if (st != CUGL_OK && sl->fence) {
        glDeleteSync(sl->fence);
        sl->fence = NULL;
    }
    return st;
}

/* A failure of the render thread's: the recorder stops keeping frames. */
static cugl_status stop_on(cugl_app_recorder *r, cugl_status st)
{
    if (st != CUGL_OK) {
        pthread_mutex_lock(&r->lock);
        fail_locked(r, st, cugl_last_error());
        pthread_mutex_unlock(&r->lock);
    }
    return st;
}

CUGL_API cugl_status cugl_app_recorder_frame(cugl_app_recorder *r)
{
    const char *who = __func__;
    CUGL__CHECK_NOT_NULL(r);
    CUGL__TRY(reported(r, who));
    CUGL__TRY(stop_on(r, queue_done(r, false, who)));
    int width = 0, height = 0;
    cugl_app_context_size(r->ctx, &width, &height);
    if (width <= 0 || height <= 0)
        return CUGL_OK; /* a minimised window: nothing to keep */
    if (!r->slots[0].pbo)
        CUGL__TRY(stop_on(r, start(r, width, height, who)));

    pthread_mutex_lock(&r->lock);
    int i = free_slot_locked(r);
    if (i < 0 && r->keep_every_frame) {
        /* Every slot taken: the oldest copies queued as they end, then the
         * encoder waited for until it frees one. */
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        pthread_mutex_unlock(&r->lock);
        cugl_status st = queue_done(r, true, who);
        pthread_mutex_lock(&r->lock);
        while (st == CUGL_OK && (i = free_slot_locked(r)) < 0 && r->failed == CUGL_OK)
            pthread_cond_wait(&r->changed, &r->lock);
        r->counts.waited_ms += since(&t0) * 1e3;
        if (st != CUGL_OK) {
            pthread_mutex_unlock(&r->lock);
            return stop_on(r, st);
        }
    }
    long index = r->offered++;
    if (i < 0 || r->failed != CUGL_OK) {
        r->counts.dropped += i < 0;
        pthread_mutex_unlock(&r->lock);
        return reported(r, who);
    }
    r->slots[i].state = SLOT_COPYING; /* the encoder leaves it alone now */
    r->counts.kept++;
    pthread_mutex_unlock(&r->lock);

    slot *sl = &r->slots[i];
    sl->index = index;
    sl->seconds = since(&r->t0);
    cugl_status st = copy(r, i, width, height, who);
    if (st != CUGL_OK) {
        pthread_mutex_lock(&r->lock);
        sl->state = SLOT_FREE;
        r->counts.kept--;
        pthread_mutex_unlock(&r->lock);
    }
    return stop_on(r, st);
}

CUGL_API cugl_status cugl_app_recorder_counts(const cugl_app_recorder *rec,
                                              cugl_app_record_counts *counts)
{
    CUGL__CHECK_NOT_NULL(rec);
    CUGL__CHECK_NOT_NULL(counts);
    cugl_app_recorder *r = (cugl_app_recorder *)rec; /* its lock */
    pthread_mutex_lock(&r->lock);
    *counts = r->counts;
    counts->behind = r->counts.kept - r->counts.written;
    pthread_mutex_unlock(&r->lock);
    return CUGL_OK;
}

CUGL_API cugl_status cugl_app_recorder_close(cugl_app_recorder *r)
{
    const char *who = __func__;
    if (!r)
        return CUGL_OK;
    cugl_status st = r->failed == CUGL_OK ? queue_done(r, true, who) : CUGL_OK;
    stop_thread(r); /* what was queued is written first */
    if (st == CUGL_OK)
        st = reported(r, who);
    if (st == CUGL_OK && r->counts.written == 0)
        st = cugl__fail(CUGL_ERROR_INVALID_STATE, who,
                        "recording %s: no frame was kept; nothing is written", r->path);
    if (st == CUGL_OK) {
        long long end = r->last_pts + llround(TIMESCALE / r->fps);
        st = r->webm_out ? cugl__webm_finish(r->webm_out, end) : cugl__mp4_finish(r->mp4, end);
        r->webm_out = NULL;
        r->mp4 = NULL;
        if (st != CUGL_OK)
            st = cugl__fail(st, who, "recording %s: %s", r->path, bare(cugl_last_error()));
    }
    if (st == CUGL_OK)
        st = cugl__app_file_commit(&r->file, who, r->path);
    destroy(r);
    return st;
}
