/*
 * serve_video.c - the frame server's and the recorder's video codecs
 * (serve_internal.h): VP8 and VP9 by libvpx (CUGL_SERVE_VP8) and H.264 by
 * OpenH264 (CUGL_SERVE_H264, serve_h264.c), one stream a viewer, for links
 * too narrow for JPEG. Real time and low latency: one frame in, one frame
 * out (no lag, no B-frames, no alternate reference frames), rate control to
 * the bitrate the viewer's link carries, a key frame at the start and
 * whenever asked. Called on the encoder threads, one at a time a stream.
 *
 * The frame comes as GL has it, RGBA rows bottom first; it is turned into
 * I420 (BT.601, limited range, as browsers decode both) with rows top
 * first, here for both codecs.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if CUGL_SERVE_VP8
#include <vpx/vp8cx.h>
#include <vpx/vpx_encoder.h>
#endif

#include "serve_internal.h"

struct cugl__video {
    cugl__video_codec codec;
    bool open;
    bool fixed_speed; /* the same frames, the same bytes (cugl__video_fixed_speed) */
    bool measure;     /* a frame's PSNR a second (cugl__video_measure) */
    double psnr;      /* the last measured, in dB; -1: none */
    double psnr_ms;   /* the stream's time of the next measure */
    int width, height;
    int threads, bands; /* the encoder's threads, the conversion's bands: set at start */
    double clock_ms; /* the stream's time: 1 / fps a frame */
    /* The I420 picture: Y, U and V, each `stride` bytes a row. */
    uint8_t *planes[3];
    int strides[3];
#if CUGL_SERVE_VP8
    vpx_codec_ctx_t codec_ctx;
    vpx_codec_enc_cfg_t cfg;
    vpx_image_t image;
#endif
#if CUGL_SERVE_H264
    cugl__h264 *h264;
    uint8_t *i420; /* planes' memory */
#endif
};

#if CUGL_SERVE_VP8
/* Whether libvpx encodes `codec` (VP8 and VP9 do). */
static bool by_libvpx(cugl__video_codec codec)
{
    return codec == CUGL__VIDEO_VP8 || codec == CUGL__VIDEO_VP9;
}
#endif

/* The encoder and its picture, gone. */
static void stop(cugl__video *v)
{
    if (!v->open)
        return;
#if CUGL_SERVE_VP8
    if (by_libvpx(v->codec)) {
        vpx_codec_destroy(&v->codec_ctx);
        vpx_img_free(&v->image);
    }
#endif
#if CUGL_SERVE_H264
    if (v->codec == CUGL__VIDEO_H264) {
        cugl__h264_close(v->h264);
        v->h264 = NULL;
        free(v->i420);
        v->i420 = NULL;
    }
#endif
    v->open = false;
}

void cugl__video_close(cugl__video *v)
{
    if (!v)
        return;
    stop(v);
    free(v);
}

void cugl__video_fixed_speed(cugl__video *v)
{
    v->fixed_speed = true;
}

bool cugl__video_measure(cugl__video *v)
{
#if CUGL_SERVE_VP8
    v->measure = by_libvpx(v->codec);
#endif
    return v->measure;
}

double cugl__video_psnr(const cugl__video *v)
{
    return v->psnr;
}

int cugl__video_threads(int w, int h)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores >= 16 && (long)w * h > 1920L * 1088)
        return (int)(cores - 2 < 16 ? cores - 2 : 16);
    return cores >= 16 ? 8 : cores >= 8 ? 4 : cores >= 4 ? 2 : 1;
}

cugl__video *cugl__video_new(cugl__video_codec codec)
{
    if (!cugl__video_codecs[codec].built)
        return NULL;
    cugl__video *v = calloc(1, sizeof(cugl__video));
    if (v) {
        v->codec = codec;
        v->psnr = -1;
    }
    return v;
}

#if CUGL_SERVE_VP8
/* VP8's own settings, after the ones it shares with VP9 (start_vpx). */
static void set_up_vp8(cugl__video *v)
{
    /* Real time, speed over size: at 1080p on 2 cores, 12 encodes in 8.4
     * ms where 10 took 11.2, for 0.7 dB less at the same bitrate. */
    /* A positive speed lets libvpx pick the speed from the time frames
     * took, so a loaded machine encodes the same frames otherwise; a
     * negative one holds it (a recording made twice is the same bytes). */
    vpx_codec_control(&v->codec_ctx, VP8E_SET_CPUUSED, v->fixed_speed ? -12 : 12);
    if (v->cfg.g_threads > 1) /* 4 partitions of tokens, packed by the threads */
        vpx_codec_control(&v->codec_ctx, VP8E_SET_TOKEN_PARTITIONS,
                          (int)VP8_FOUR_TOKENPARTITION);
    vpx_codec_control(&v->codec_ctx, VP8E_SET_NOISE_SENSITIVITY, 0u);
    vpx_codec_control(&v->codec_ctx, VP8E_SET_STATIC_THRESHOLD, 1u);
}

/* VP9's own settings, after the ones it shares with VP8 (start_vpx), as
 * WebRTC's VP9 sender without layers has them. */
static void set_up_vp9(cugl__video *v)
{
    /* Speed: VP9's real-time modes are 5 to 9 (libvpx 1.12). Even 9, the
     * fastest, took 1.7 to 1.9 times VP8's CPU time a frame on a 2-core
     * machine, one thread (720p: 16.3 ms where VP8 took 8.9; 1080p: 42.3
     * where 22.3), for 2.6 to 3.7 dB more PSNR at the same bitrate; 7 and 8
     * were slower for no more (300 frames of tests/serve's pattern). VP9
     * picks no speed from the time frames take: the same frames give the
     * same bytes at any speed. */
    vpx_codec_control(&v->codec_ctx, VP8E_SET_CPUUSED, 9);
    /* Tiles as the threads, log2 of them (one tile on one thread; libvpx
     * makes no tile narrower than 256 pixels), and rows of superblocks
     * across the threads within a tile, but where the same frames must
     * give the same bytes: libvpx's row threads are not deterministic
     * (vpxenc's --row-mt says so), its tiles are. */
    int tiles_log2 = 0;
    while ((1u << (tiles_log2 + 1)) <= v->cfg.g_threads)
        tiles_log2++;
    vpx_codec_control(&v->codec_ctx, VP9E_SET_TILE_COLUMNS, tiles_log2);
    vpx_codec_control(&v->codec_ctx, VP9E_SET_ROW_MT, v->fixed_speed ? 0u : 1u);
    /* Cyclic refresh: a slice of the picture's blocks at a lower quantizer
     * each frame, the rest coasting on them. */
    vpx_codec_control(&v->codec_ctx, VP9E_SET_AQ_MODE, 3u);
    vpx_codec_control(&v->codec_ctx, VP9E_SET_NOISE_SENSITIVITY, 0u);
    /* Backward adaptation of the probabilities stays on. */
    vpx_codec_control(&v->codec_ctx, VP9E_SET_FRAME_PARALLEL_DECODING, 0u);
}

/* A libvpx encoder of v's codec (VP8 or VP9) for w x h at `kbps`; false
 * with `why`. */
static bool start_vpx(cugl__video *v, int w, int h, int kbps, char *why, size_t why_size)
{
    bool vp9 = v->codec == CUGL__VIDEO_VP9;
    vpx_codec_iface_t *iface = vp9 ? vpx_codec_vp9_cx() : vpx_codec_vp8_cx();
    const char *title = cugl__video_codecs[v->codec].title;
    vpx_codec_err_t e = vpx_codec_enc_config_default(iface, &v->cfg, 0);
    if (e != VPX_CODEC_OK) {
        snprintf(why, why_size, "libvpx: %s", vpx_codec_err_to_string(e));
        return false;
    }
    v->cfg.g_w = (unsigned)w;
    v->cfg.g_h = (unsigned)h;
    v->cfg.g_timebase = (struct vpx_rational){1, 1000}; /* milliseconds */
    /* Rows of macroblocks on several threads. */
    v->cfg.g_threads = (unsigned)v->threads;
    v->cfg.g_lag_in_frames = 0;     /* one frame in, one frame out */
    v->cfg.g_pass = VPX_RC_ONE_PASS;
    v->cfg.rc_end_usage = VPX_CBR;
    v->cfg.rc_target_bitrate = (unsigned)kbps;
    v->cfg.rc_min_quantizer = 4;
    v->cfg.rc_max_quantizer = 63; /* the bitrate before the quality */
    v->cfg.rc_buf_initial_sz = 100; /* ms: little in the rate control's buffer, */
    v->cfg.rc_buf_optimal_sz = 150; /* so frames keep close to the bitrate */
    v->cfg.rc_buf_sz = 250;
    v->cfg.rc_overshoot_pct = 10;
    v->cfg.kf_mode = VPX_KF_AUTO;
    v->cfg.kf_max_dist = 3000; /* key frames when asked, or now and then */
    e = vpx_codec_enc_init(&v->codec_ctx, iface, &v->cfg, 0);
    if (e != VPX_CODEC_OK) {
        snprintf(why, why_size, "libvpx cannot start a %d x %d %s encoder: %s", w, h, title,
                 vpx_codec_err_to_string(e));
        return false;
    }
    if (vp9)
        set_up_vp9(v);
    else
        set_up_vp8(v);
    if (!vpx_img_alloc(&v->image, VPX_IMG_FMT_I420, (unsigned)w, (unsigned)h, 16)) {
        vpx_codec_destroy(&v->codec_ctx);
        snprintf(why, why_size, "no memory for a %d x %d picture", w, h);
        return false;
    }
    for (int i = 0; i < 3; i++) {
        v->planes[i] = v->image.planes[i];
        v->strides[i] = v->image.stride[i];
    }
    return true;
}

/* PSNR in dB of the frame libvpx reconstructs (its preview) against the
 * I420 picture it was given, Y, U and V by their samples (as libvpx's own
 * VPX_CODEC_USE_PSNR, which costs that on every frame: 2 ms of 21 at
 * 1080p on 2 cores); -1 where there is no preview. */
static double preview_psnr(cugl__video *v)
{
    const vpx_image_t *r = vpx_codec_get_preview_frame(&v->codec_ctx);
    if (!r || r->d_w != v->image.d_w || r->d_h != v->image.d_h)
        return -1;
    double se = 0, n = 0;
    for (int p = 0; p < 3; p++) {
        unsigned w = p ? (v->image.d_w + 1) / 2 : v->image.d_w;
        unsigned h = p ? (v->image.d_h + 1) / 2 : v->image.d_h;
        for (unsigned y = 0; y < h; y++) {
            const uint8_t *a = v->image.planes[p] + (size_t)y * (size_t)v->image.stride[p];
            const uint8_t *b = r->planes[p] + (size_t)y * (size_t)r->stride[p];
            for (unsigned x = 0; x < w; x++) {
                double d = (double)a[x] - (double)b[x];
                se += d * d;
            }
        }
        n += (double)w * h;
    }
    return se <= 0 ? 99.0 : 10 * log10(255.0 * 255.0 * n / se);
}

/* The I420 picture as a frame of v's libvpx codec (see cugl__video_encode). */
static unsigned char *encode_vpx(cugl__video *v, long long pts, unsigned long duration,
                                 int kbps, bool key, size_t *size, bool *is_key, char *why,
                                 size_t why_size)
{
    if ((unsigned)kbps != v->cfg.rc_target_bitrate) {
        v->cfg.rc_target_bitrate = (unsigned)kbps;
        vpx_codec_enc_config_set(&v->codec_ctx, &v->cfg);
    }
    vpx_codec_err_t e = vpx_codec_encode(&v->codec_ctx, &v->image, (vpx_codec_pts_t)pts,
                                         duration, key ? VPX_EFLAG_FORCE_KF : 0,
                                         VPX_DL_REALTIME);
    if (e != VPX_CODEC_OK) {
        snprintf(why, why_size, "%s encoding failed: %s", cugl__video_codecs[v->codec].title,
                 vpx_codec_error(&v->codec_ctx));
        return NULL;
    }
    unsigned char *out = NULL;
    vpx_codec_iter_t iter = NULL;
    const vpx_codec_cx_pkt_t *pkt;
    while ((pkt = vpx_codec_get_cx_data(&v->codec_ctx, &iter)) != NULL) {
        if (pkt->kind != VPX_CODEC_CX_FRAME_PKT)
            continue;
        unsigned char *p = realloc(out, *size + pkt->data.frame.sz);
        if (!p) {
            free(out);
            snprintf(why, why_size, "no memory for a %s frame", cugl__video_codecs[v->codec].title);
            return NULL;
        }
        out = p;
        memcpy(out + *size, pkt->data.frame.buf, pkt->data.frame.sz);
        *size += pkt->data.frame.sz;
        *is_key = *is_key || (pkt->data.frame.flags & VPX_FRAME_IS_KEY);
    }
    if (!out)
        snprintf(why, why_size, "the %s encoder gave no frame", cugl__video_codecs[v->codec].title);
    else if (v->measure && (double)pts >= v->psnr_ms) { /* one frame a second */
        v->psnr = preview_psnr(v);
        v->psnr_ms = (double)pts + 1000;
    }
    return out;
}
#endif

#if CUGL_SERVE_H264
/* An H.264 encoder for w x h at `kbps`, and its picture; false with `why`. */
static bool start_h264(cugl__video *v, int w, int h, double fps, int kbps, char *why,
                       size_t why_size)
{
    size_t luma = (size_t)w * (size_t)h;
    v->i420 = malloc(luma + luma / 2);
    if (!v->i420) {
        snprintf(why, why_size, "no memory for a %d x %d picture", w, h);
        return false;
    }
    v->h264 = cugl__h264_open(w, h, fps, kbps, v->fixed_speed ? 1 : v->threads, why, why_size);
    if (!v->h264) {
        free(v->i420);
        v->i420 = NULL;
        return false;
    }
    v->planes[0] = v->i420;
    v->planes[1] = v->i420 + luma;
    v->planes[2] = v->i420 + luma + luma / 4;
    v->strides[0] = w;
    v->strides[1] = v->strides[2] = w / 2;
    return true;
}
#endif

/* An encoder of v's codec for w x h; false with `why`. */
static bool start(cugl__video *v, int w, int h, double fps, int kbps, char *why,
                  size_t why_size)
{
    stop(v);
    bool ok = false;
    /* Once a stream, not a frame: the cores are read from /sys each time.
     * The conversion in bands on threads: an H100 machine's host took 6.7
     * ms for 1080p on one (1.6 on a 2-core CI machine), and 3840 x 2160 is
     * four times that, on the encoder's thread before the encoder's own
     * threads start. A band is at least 256K pixels: a thread's start
     * costs tens of microseconds. */
    v->threads = cugl__video_threads(w, h);
    long bands = (long)w * h / (256L * 1024);
    v->bands = bands < v->threads ? (int)bands : v->threads;
#if CUGL_SERVE_VP8
    if (by_libvpx(v->codec))
        ok = start_vpx(v, w, h, kbps, why, why_size);
#endif
#if CUGL_SERVE_H264
    if (v->codec == CUGL__VIDEO_H264)
        ok = start_h264(v, w, h, fps, kbps, why, why_size);
#endif
    (void)fps;
    if (!ok)
        return false;
    v->open = true;
    v->width = w;
    v->height = h;
    return true;
}

static inline uint8_t luma_of(const uint8_t *p)
{
    return (uint8_t)(((66 * p[0] + 129 * p[1] + 25 * p[2] + 128) >> 8) + 16);
}

/* Rows y0 to y1 (even; rows top first) of the I420 image from RGBA (rows
 * bottom first, `stride` bytes): luma a pixel, chroma the mean of each 2 x
 * 2. The luma rows first, then the chroma, each a loop without branches
 * that the compiler vectorizes (this file is built at -O3): 1080p in 1.6 ms
 * on a 2-core CI machine, where one loop over 2 x 2 blocks took 4.4. */
static void to_i420_rows(uint8_t *const planes[3], const int strides[3], const uint8_t *rgba,
                         int w, int h, size_t stride, int y0, int y1)
{
    for (int y = y0; y < y1; y++) {
        const uint8_t *restrict row = rgba + (size_t)(h - 1 - y) * stride;
        uint8_t *restrict out = planes[0] + (size_t)y * (size_t)strides[0];
        for (int x = 0; x < w; x++)
            out[x] = luma_of(row + 4 * x);
    }
    for (int y = y0; y < y1; y += 2) {
        const uint8_t *restrict r0 = rgba + (size_t)(h - 1 - y) * stride;
        const uint8_t *restrict r1 = r0 - stride;
        uint8_t *restrict u = planes[1] + (size_t)(y / 2) * (size_t)strides[1];
        uint8_t *restrict v = planes[2] + (size_t)(y / 2) * (size_t)strides[2];
        for (int x = 0; x < w / 2; x++) {
            const uint8_t *a = r0 + 8 * x, *b = r1 + 8 * x;
            int sr = (a[0] + a[4] + b[0] + b[4] + 2) >> 2;
            int sg = (a[1] + a[5] + b[1] + b[5] + 2) >> 2;
            int sb = (a[2] + a[6] + b[2] + b[6] + 2) >> 2;
            u[x] = (uint8_t)(((-38 * sr - 74 * sg + 112 * sb + 128) >> 8) + 128);
            v[x] = (uint8_t)(((112 * sr - 94 * sg - 18 * sb + 128) >> 8) + 128);
        }
    }
}

/* One band of rows, on a thread of its own. */
typedef struct i420_band {
    uint8_t *const *planes;
    const int *strides;
    const uint8_t *rgba;
    int w, h, y0, y1;
    size_t stride;
    pthread_t thread;
    bool started;
} i420_band;

static void *band_main(void *arg)
{
    i420_band *b = arg;
    to_i420_rows(b->planes, b->strides, b->rgba, b->w, b->h, b->stride, b->y0, b->y1);
    return NULL;
}

void cugl__video_to_i420(uint8_t *const planes[3], const int strides[3], const uint8_t *rgba,
                         int w, int h, size_t stride, int bands)
{
    bands = bands < 1 ? 1 : bands > CUGL__I420_BANDS ? CUGL__I420_BANDS : bands;
    if (bands > h / 16)
        bands = h / 16 > 1 ? h / 16 : 1;
    i420_band band[CUGL__I420_BANDS];
    for (int k = 0; k < bands; k++) {
        band[k] = (i420_band){
            .planes = planes,
            .strides = strides,
            .rgba = rgba,
            .w = w,
            .h = h,
            .y0 = (int)((long)h * k / bands) & ~1,
            .y1 = k + 1 < bands ? (int)((long)h * (k + 1) / bands) & ~1 : h,
            .stride = stride,
        };
        /* The first band on this thread; a band whose thread cannot be
         * started, here too. */
        band[k].started =
            k > 0 && pthread_create(&band[k].thread, NULL, band_main, &band[k]) == 0;
    }
    for (int k = 0; k < bands; k++)
        if (!band[k].started)
            band_main(&band[k]);
    for (int k = 1; k < bands; k++)
        if (band[k].started)
            pthread_join(band[k].thread, NULL);
}

unsigned char *cugl__video_encode(cugl__video *v, const uint8_t *rgba, int width, int height,
                                  double fps, int kbps, bool key, size_t *size, bool *is_key,
                                  char *why, size_t why_size)
{
    *size = 0;
    *is_key = false;
    int w = width & ~1, h = height & ~1; /* I420 wants even sides */
    if (w < 16 || h < 16) {
        snprintf(why, why_size, "a %d x %d picture is too small for %s", width, height,
                 cugl__video_codecs[v->codec].title);
        return NULL;
    }
    if (!v->open || v->width != w || v->height != h) {
        if (!start(v, w, h, fps, kbps, why, why_size))
            return NULL;
        v->clock_ms = 0;
        v->psnr_ms = 0;
        key = true;
    }
    cugl__video_to_i420(v->planes, v->strides, rgba, w, h, (size_t)width * 4, v->bands);
    /* The time stamps go 1 / fps a frame, not by the clock: an encoder
     * gives a frame the bits of the time since the last one, and the
     * frames a viewer's window skipped made the next one two or three
     * times the size (VP8: 115 kB where a frame at 60 was 34 kB, at 20
     * Mbit/s 46 ms on the link, and the next frame later still). */
    double step_ms = 1e3 / (fps > 0 ? fmin(fmax(fps, 1), 60) : 60); /* 0: not known yet */
    long long pts = llround(v->clock_ms);
    v->clock_ms += step_ms;
    unsigned long duration = (unsigned long)(llround(v->clock_ms) - pts);
#if CUGL_SERVE_VP8
    if (by_libvpx(v->codec))
        return encode_vpx(v, pts, duration, kbps, key, size, is_key, why, why_size);
#endif
#if CUGL_SERVE_H264
    if (v->codec == CUGL__VIDEO_H264)
        return cugl__h264_encode(v->h264, v->planes, v->strides, pts, fps, kbps, key, size,
                                 is_key, why, why_size);
#endif
    (void)duration; /* not reached: cugl__video_new makes only the codecs built */
    snprintf(why, why_size, "this cugl has no encoder of the stream's codec");
    return NULL;
}
