/*
 * encoders.c - the encoder threads: a slot's pixels hashed (a still picture is
 * told by its hash), made JPEGs at each level some viewer wants
 * (libjpeg-turbo, scaled down on the CPU where needed) and published; and
 * each video viewer's VP8 frames (serve_video.c).
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include <libwebsockets.h>
#include <turbojpeg.h>

#include "server.h"

/* A hash of the picture: four lanes of 64-bit words, so the multiplies overlap. */
static uint64_t hash_pixels(const void *pixels, size_t bytes, int width, int height)
{
    const uint64_t *p = pixels;
    uint64_t h[4] = {0x9e3779b97f4a7c15u, 0xc2b2ae3d27d4eb4fu, 0x165667b19e3779f9u,
                     (uint64_t)width << 32 | (uint64_t)height};
    size_t words = bytes / 8, i = 0;
    for (; i + 4 <= words; i += 4)
        for (int k = 0; k < 4; k++)
            h[k] = (h[k] ^ p[i + k]) * 0x100000001b3u;
    for (; i < words; i++)
        h[0] = (h[0] ^ p[i]) * 0x100000001b3u;
    return h[0] ^ (h[1] << 1) ^ (h[2] << 2) ^ (h[3] << 3);
}

/* `src` (w x h RGBA) made `f` times smaller each side, each pixel the mean
 * of the f x f it covers. */
static void box_down(uint8_t *dst, const uint8_t *src, int w, int h, int f)
{
    int dw = w / f, dh = h / f, n = f * f;
    for (int y = 0; y < dh; y++) {
        uint8_t *d = dst + (size_t)y * dw * 4;
        for (int x = 0; x < dw; x++, d += 4) {
            unsigned sum[4] = {0, 0, 0, 0};
            for (int j = 0; j < f; j++) {
                const uint8_t *r = src + ((size_t)(y * f + j) * w + (size_t)x * f) * 4;
                for (int i = 0; i < 4 * f; i++)
                    sum[i & 3] += r[i];
            }
            for (int c = 0; c < 4; c++)
                d[c] = (uint8_t)((sum[c] + (unsigned)n / 2) / (unsigned)n);
        }
    }
}

/* A frame of the slot's number, events and time, `size` bytes of picture
 * (`bytes`) of a w x h picture at `level` (-2: video), its header not yet
 * written; NULL without memory. */
static frame *frame_of(const slot *sl, int level, uint64_t hash, int w, int h,
                       const unsigned char *bytes, size_t size, double encode_ms)
{
    frame *f = malloc(sizeof *f + size);
    if (!f)
        return NULL;
    atomic_init(&f->refs, 1);
    f->number = sl->number;
    f->events = sl->events;
    f->time_s = sl->time_s;
    f->hash = hash;
    f->level = level;
    f->width = w;
    f->height = h;
    f->size = size;
    f->encode_ms = encode_ms;
    if (size)
        memcpy(f->jpeg, bytes, size);
    return f;
}

/* A frame of the slot's header fields and, at `level` (-1: none, the
 * header alone), `size` bytes of JPEG of a w x h picture; NULL without
 * memory. */
frame *cugl__serve_wrap_frame(cugl_app_server *s, const slot *sl, int level, uint64_t hash,
                              const unsigned char *jpeg, size_t size, int w, int h,
                              double encode_ms, const char *encoder)
{
    frame *f = frame_of(sl, level, hash, w, h, jpeg, size, encode_ms);
    if (!f)
        return NULL;
    if (level >= 0)
        snprintf(f->json, sizeof f->json,
                 "%s,\"codec\":\"jpeg\",\"encoder\":\"%s\",\"quality\":%d,\"scale\":%d,"
                 "\"encode_ms\":%.3f",
                 sl->json, encoder, level_quality(s, level),
                 cugl__serve_levels[level].scale, encode_ms);
    else
        snprintf(f->json, sizeof f->json, "%s", sl->json);
    return f;
}

void cugl__serve_frame_psnr(frame *f, double psnr, const char *why)
{
    size_t n = strlen(f->json);
    if (psnr >= 0) {
        snprintf(f->json + n, sizeof f->json - n, ",\"psnr\":%.2f", psnr);
    } else {
        char text[160];
        cugl__serve_json_escape(text, sizeof text, why);
        snprintf(f->json + n, sizeof f->json - n, ",\"psnr\":-1,\"psnr_why\":\"%s\"", text);
    }
}

/* A buffer of at least `need` bytes in *buf; false without memory. */
static bool room_for(uint8_t **buf, size_t *size, size_t need)
{
    if (need <= *size)
        return true;
    uint8_t *p = realloc(*buf, need);
    if (!p)
        return false;
    *buf = p;
    *size = need;
    return true;
}

/* What a page shows of a JPEG of the slot's picture scaled down by `f`
 * (jw x jh), drawn back at the slot's size, against the picture: PSNR over
 * R, G and B in dB (99 where they are equal), each of every other row and
 * column's pixels against its texel (nearest: a page's smoothing scores a
 * little higher); -1 where the JPEG does not decode. Both rows bottom first. */
static double jpeg_psnr(tjhandle dec, const unsigned char *jpeg, unsigned long size, int jw,
                        int jh, const slot *sl, int f, uint8_t **buf, size_t *buf_size)
{
    if (!dec || !room_for(buf, buf_size, (size_t)jw * (size_t)jh * 4) ||
        tjDecompress2(dec, jpeg, size, *buf, jw, 0, jh, TJPF_RGBA,
                      TJFLAG_BOTTOMUP | TJFLAG_FASTDCT) != 0)
        return -1;
    double se = 0;
    long n = 0;
    for (int y = 0; y < sl->height; y += 2) {
        const uint8_t *a = (const uint8_t *)sl->pixels + (size_t)y * (size_t)sl->width * 4;
        const uint8_t *b = *buf + (size_t)(y / f < jh ? y / f : jh - 1) * (size_t)jw * 4;
        for (int x = 0; x < sl->width; x += 2) {
            const uint8_t *p = a + 4 * x, *q = b + 4 * (x / f < jw ? x / f : jw - 1);
            for (int c = 0; c < 3; c++) {
                double d = (double)p[c] - (double)q[c];
                se += d * d;
            }
            n += 3;
        }
    }
    return se <= 0 || n == 0 ? 99.0 : 10 * log10(255.0 * 255.0 * (double)n / se);
}

/* The PSNR of `level` for a frame's header: measured on this JPEG where
 * the level's estimate is PSNR_EVERY_S old, else that estimate. */
static double level_psnr(cugl_app_server *s, tjhandle dec, const unsigned char *jpeg,
                         unsigned long size, int jw, int jh, const slot *sl, int level, int f,
                         uint8_t **buf, size_t *buf_size)
{
    double t = now_s();
    pthread_mutex_lock(&s->lock);
    bool measure = t - s->level_psnr_s[level] >= PSNR_EVERY_S;
    if (measure)
        s->level_psnr_s[level] = t;
    double psnr = s->level_psnr[level];
    pthread_mutex_unlock(&s->lock);
    if (!measure)
        return psnr;
    psnr = jpeg_psnr(dec, jpeg, size, jw, jh, sl, f, buf, buf_size);
    pthread_mutex_lock(&s->lock);
    s->level_psnr[level] = psnr;
    pthread_mutex_unlock(&s->lock);
    return psnr;
}

/* What each encoder thread keeps: libjpeg-turbo's handles and the
 * pictures scaled down or decoded. */
typedef struct encoder_scratch {
    tjhandle tj, dec;
    uint8_t *down, *decoded;
    size_t down_size, decoded_size;
} encoder_scratch;

/* A frame of the slot's pixels: a JPEG at `level` by libjpeg-turbo, or
 * the header alone (level -1); NULL on failure. */
static frame *make_frame(cugl_app_server *s, encoder_scratch *e, const slot *sl, int level,
                         uint64_t hash)
{
    unsigned char *jpeg = NULL;
    unsigned long jpeg_size = 0;
    int w = sl->width, h = sl->height;
    double t0 = now_s();
    int f = 1;
    if (level >= 0) {
        const uint8_t *pixels = sl->pixels;
        f = cugl__serve_levels[level].scale / sl->scale;
        if (f > 1) {
            if (!room_for(&e->down, &e->down_size, (size_t)(w / f) * (size_t)(h / f) * 4))
                return NULL;
            box_down(e->down, pixels, w, h, f);
            pixels = e->down;
            w /= f;
            h /= f;
        }
        /* GL's rows run bottom to top. */
        if (tjCompress2(e->tj, pixels, w, 0, h, TJPF_RGBA, &jpeg, &jpeg_size, TJSAMP_420,
                        level_quality(s, level), TJFLAG_BOTTOMUP | TJFLAG_FASTDCT) != 0) {
            cugl__app_notice("cugl_app_server: JPEG of a %d x %d frame: %s", w, h,
                             tjGetErrorStr2(e->tj));
            tjFree(jpeg);
            return NULL;
        }
    }
    double ms = 1e3 * (now_s() - t0);
    frame *out = cugl__serve_wrap_frame(s, sl, level, hash, jpeg, jpeg_size, w, h, ms,
                                        "libjpeg-turbo");
    if (out && level >= 0)
        cugl__serve_frame_psnr(out, level_psnr(s, e->dec, jpeg, jpeg_size, w, h, sl, level, f,
                                               &e->decoded, &e->decoded_size),
                               "libjpeg-turbo could not decode its own JPEG");
    tjFree(jpeg);
    return out;
}

/* Keep `f` as the newest of its kind if it is newer; drops the loser. */
static void publish(frame **newest, frame *f)
{
    if (!*newest || (*newest)->number < f->number) {
        frame *old = *newest;
        *newest = f;
        f = old;
    }
    frame_unref(f);
}

bool cugl__serve_level_seen(const cugl_app_server *s, int level, double now)
{
    return s->level_seen_s[level] > 0 && now - s->level_seen_s[level] < SEEN_S;
}

/* The size frames of `level` are expected to have (under the lock): as
 * seen lately, else level 0's guessed down; 0 before any frame. */
double cugl__serve_predict_bytes(const cugl_app_server *s, int level, double now)
{
    if (cugl__serve_level_seen(s, level, now))
        return s->level_bytes[level];
    return s->bytes0 * cugl__serve_levels[level].bytes;
}

/* A frame's JPEGs (made[l] at level l, or NULL) and header as the newest,
 * where they are; the sizes seen kept (under the lock). */
void cugl__serve_publish_frames(cugl_app_server *s, frame *made[LEVELS], frame *header,
                                uint64_t hash)
{
    double now = now_s();
    for (int l = 0; l < LEVELS; l++) {
        if (!made[l])
            continue;
        double size = (double)made[l]->size;
        bool seen = cugl__serve_level_seen(s, l, now);
        s->level_bytes[l] = seen ? 0.7 * s->level_bytes[l] + 0.3 * size : size;
        s->level_seen_s[l] = now;
        double b0 = size / cugl__serve_levels[l].bytes;
        s->bytes0 = s->bytes0 > 0 ? 0.7 * s->bytes0 + 0.3 * b0 : b0;
        atomic_fetch_add(&s->encoded, 1);
        publish(&s->newest[l], made[l]);
    }
    if (header) {
        if (!s->header || s->header->number < header->number)
            s->hash = hash;
        publish(&s->header, header);
    }
}

void cugl__serve_video_stream_free(video_stream *vs)
{
    if (!vs)
        return;
#if CUGL_SERVE_VIDEO
    cugl__video_close(vs->encoder);
#endif
    for (int i = 0; i < vs->ready_count; i++)
        frame_unref(vs->ready[i]);
    free(vs);
}

/* The viewer's video stream out of the server's list (under the server's
 * lock): freed now, or by the encoder thread that holds it. */
void cugl__serve_drop_video(cugl_app_server *s, viewer *v)
{
    for (int i = 0; i < s->video_count; i++)
        if (s->video_list[i] == v->video)
            s->video_list[i] = s->video_list[--s->video_count];
    if (v->video->busy)
        v->video->dead = true;
    else
        cugl__serve_video_stream_free(v->video);
    v->video = NULL;
}

#if CUGL_SERVE_VIDEO
/* A frame of `size` bytes of the stream's video of the slot's picture,
 * its header with the encoder's PSNR; NULL without memory. */
static frame *video_frame(video_stream *vs, const slot *sl, const unsigned char *bits,
                          size_t size, bool is_key, int kbps, double encode_ms)
{
    frame *f = frame_of(sl, -2, 0, sl->width & ~1, sl->height & ~1, bits, size, encode_ms);
    if (!f)
        return NULL;
    const cugl__video_codec_info *c = &cugl__video_codecs[vs->codec];
    snprintf(f->json, sizeof f->json,
             "%s,\"codec\":\"%s\",\"encoder\":\"%s\",\"key\":%s,\"bitrate\":%d,"
             "\"encode_ms\":%.3f",
             sl->json, c->name, c->encoder, is_key ? "true" : "false", kbps, encode_ms);
    char none[96];
    snprintf(none, sizeof none, "%s measures no PSNR of its frames", c->encoder);
    cugl__serve_frame_psnr(f, cugl__video_psnr(vs->encoder), none);
    return f;
}

/* The slot's pixels to each video stream with room, in frame order. */
static void encode_video(cugl_app_server *s, const slot *sl)
{
    if (sl->scale != 1)
        return;
    for (int done = 0; done < CUGL_APP_SERVE_MAX_VIEWERS; done++) {
        pthread_mutex_lock(&s->lock);
        video_stream *vs = NULL;
        for (int i = 0; i < s->video_count && !vs; i++) {
            video_stream *c = s->video_list[i];
            if (c->room && !c->busy && !c->dead && c->last < sl->number &&
                c->ready_count < WINDOW_MAX)
                vs = c;
        }
        if (!vs) {
            pthread_mutex_unlock(&s->lock);
            return;
        }
        vs->busy = true;
        vs->room = false;
        int kbps = vs->kbps;
        bool key = vs->key;
        vs->key = false;
        vs->last = sl->number;
        pthread_mutex_unlock(&s->lock);

        char why[192] = "";
        size_t size = 0;
        bool is_key = false;
        double t0 = now_s();
        if (!vs->encoder && (vs->encoder = cugl__video_new(vs->codec)) != NULL)
            cugl__video_measure(vs->encoder);
        if (!vs->encoder)
            snprintf(why, sizeof why, "no %s encoder (no memory)",
                     cugl__video_codecs[vs->codec].title);
        unsigned char *bits =
            vs->encoder ? cugl__video_encode(vs->encoder, sl->pixels, sl->width, sl->height,
                                             sl->fps, kbps, key, &size, &is_key, why,
                                             sizeof why)
                        : NULL;
        frame *f = NULL;
        if (bits) {
            f = video_frame(vs, sl, bits, size, is_key, kbps, 1e3 * (now_s() - t0));
            free(bits);
        } else {
            cugl__app_notice("cugl_app_server: %s", why);
        }
        pthread_mutex_lock(&s->lock);
        vs->busy = false;
        if (vs->dead) {
            frame_unref(f);
            cugl__serve_video_stream_free(vs);
        } else if (f) {
            vs->ready[vs->ready_count++] = f;
        } else {
            vs->key = true; /* a frame lost: the next one stands alone */
        }
        pthread_mutex_unlock(&s->lock);
        lws_cancel_service(s->lws);
    }
}
#endif

void *cugl__serve_encoder_main(void *arg)
{
    cugl_app_server *s = arg;
    prctl(PR_SET_NAME, "cugl-encoder"); /* what profilers and benchmarks see */
    encoder_scratch e = {.tj = tjInitCompress(), .dec = tjInitDecompress()};
    pthread_mutex_lock(&s->lock);
    for (;;) {
        while (!s->stop && s->queued == 0)
            pthread_cond_wait(&s->work, &s->lock);
        if (s->stop)
            break;
        slot *sl = &s->slots[s->queue[0]];
        memmove(s->queue, s->queue + 1, (size_t)(--s->queued) * sizeof s->queue[0]);
        pthread_mutex_unlock(&s->lock);
        /* Any thread may wait for an EGL fence; the mapping is coherent. */
        if (sl->egl_fence != EGL_NO_SYNC &&
            !cugl__app_copy_fence_wait(s->egl_display, &sl->egl_fence)) {
            atomic_fetch_add(&s->dropped, 1);
            pthread_mutex_lock(&s->lock);
            sl->state = SLOT_FREE;
            continue;
        }
#if CUGL_SERVE_VIDEO
        encode_video(s, sl);
#endif
        if (sl->video_only) {
            pthread_mutex_lock(&s->lock);
            sl->state = SLOT_FREE;
            continue;
        }
        uint64_t hash = hash_pixels(sl->pixels, (size_t)sl->width * (size_t)sl->height * 4,
                                    sl->width * sl->scale, sl->height * sl->scale);
        pthread_mutex_lock(&s->lock);
        bool changed = hash != s->hash;
        pthread_mutex_unlock(&s->lock);

        /* A new picture for every viewer with room; the same one only for
         * those that want it better. */
        unsigned want = changed ? atomic_load(&s->want_live) : atomic_load(&s->want_now);
        frame *made[LEVELS] = {0};
        for (int l = 0; l < LEVELS; l++)
            if ((want >> l & 1) && e.tj && cugl__serve_levels[l].scale >= sl->scale &&
                sl->width * sl->scale / cugl__serve_levels[l].scale >= 16 &&
                sl->height * sl->scale / cugl__serve_levels[l].scale >= 16)
                made[l] = make_frame(s, &e, sl, l, hash);
        frame *header = make_frame(s, &e, sl, -1, hash);

        pthread_mutex_lock(&s->lock);
        sl->state = SLOT_FREE;
        cugl__serve_publish_frames(s, made, header, hash);
        pthread_mutex_unlock(&s->lock);
        lws_cancel_service(s->lws); /* the network thread sends them */
        pthread_mutex_lock(&s->lock);
    }
    pthread_mutex_unlock(&s->lock);
    free(e.down);
    free(e.decoded);
    if (e.tj)
        tjDestroy(e.tj);
    if (e.dec)
        tjDestroy(e.dec);
    return NULL;
}
