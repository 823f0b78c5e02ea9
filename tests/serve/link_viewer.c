/*
 * link_viewer: a viewer of a frame server across a link (run on the far
 * side of a shaped one by test_link.py), playing the page: every picture
 * is decoded before its ack, as a browser shows it before acking. Meant
 * for serve_app --animate, whose frame N it knows (pattern.h).
 *
 * Measured, in periods of equal length after a warm-up:
 *   - frames a second (pictures, and messages with headers alone);
 *   - megabits a second received;
 *   - each picture's age once decoded: from when the server copied it
 *     (the header's "time", CLOCK_MONOTONIC, the same clock on one host
 *     whatever the network namespace) to now: median and worst;
 *   - input to picture: an event line sent every 200 ms, until the first
 *     decoded picture whose header counts it ("events"): median and worst;
 *   - the quality, scale, PSNR and SSIM (against pattern.h's frame, the
 *     picture scaled back up as the page does, nearest; PSNR over RGB,
 *     SSIM of the luma in 8 x 8 windows every 4 pixels, as ffmpeg's ssim
 *     filter) of every 10th picture.
 * One line of JSON a period on stdout.
 *
 *   - the encoder's time a picture (the header's "encode_ms"), mean, and
 *     this viewer's own time to decode one, mean ("decode_ms": a viewer
 *     that decodes slower than the program renders gets fewer frames).
 * With LINK_VIEWER_TRACE set to a file's name, a line a message there:
 * when, its size, codec, picture age, decode time and what its header says.
 * With --no-psnr (a program other than serve_app --animate) no PSNR. With
 * --video it tells the server it decodes VP8 ("codecs vp8", as a page with
 * WebCodecs does) and decodes it with libvpx; with --h264 H.264, decoded
 * by OpenH264 (both: "codecs vp8 h264"), where this build has each.
 * With --ack-delay MS each ack leaves MS after its frame arrived, the
 * time it reports held unchanged: a browser's unreported wait for its
 * next animation frame (ws_client_set_ack_delay).
 *
 * usage: link_viewer ADDRESS PORT [--warmup S] [--periods N] [--period S] [--no-psnr]
 *                    [--video] [--h264] [--ack-delay MS]
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pattern.h"
#include "ws_client.h"

#if LINK_VIEWER_VIDEO
#include <vpx/vp8dx.h>
#include <vpx/vpx_decoder.h>
#endif
#if LINK_VIEWER_H264
#include <wels/codec_api.h>
#endif

enum { MAX_SAMPLES = 20000 };

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct period {
    long pictures, messages;
    double bytes;
    double age_ms[MAX_SAMPLES];
    int ages;
    double input_ms[MAX_SAMPLES];
    int inputs;
    double quality_sum, scale_sum, encode_ms_sum, decode_ms_sum;
    long video_pictures;
    int levels;
} period;

/* PSNR is measured on a thread of its own, so that no ack waits for it (a
 * page measures nothing): a picture goes to it when it is idle, else that
 * sample is left out. A video picture goes as a copy of its planes (I420),
 * turned into RGB there. */
typedef struct sample {
    uint8_t *got; /* RGBA (gw x gh), or with `yuv` I420 planes packed; owned */
    bool yuv;
    int gw, gh, w, h; /* as received; the program's size */
    long frame;
} sample;

typedef struct measurer {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool started, stop, busy;
    sample job;    /* while busy */
    uint8_t *want; /* the reference picture, top to bottom */
    double sum, ssim_sum; /* the PSNRs and SSIMs since the last take, and their count */
    int count;
} measurer;

typedef struct state {
    period *p;             /* the period being counted; NULL while warming up */
    long pictures;         /* since the start */
    double probe_s;        /* when the pending event was sent; 0: none */
    long probe_events;     /* the count that shows it */
    measurer *measure;     /* NULL: no PSNR */
    ws_client *client;
    FILE *trace; /* LINK_VIEWER_TRACE: a line a message */
    double start_s;
    bool need_key; /* the video decoder waits for a key frame */
#if LINK_VIEWER_VIDEO
    vpx_codec_ctx_t vp8;
    bool vp8_open;
#endif
#if LINK_VIEWER_H264
    ISVCDecoder *h264;
#endif
} state;

/* A decoded video picture's I420 planes, as its decoder holds them (until
 * its next decode). */
typedef struct yuv_view {
    const uint8_t *planes[3];
    int strides[3];
    int w, h;
} yuv_view;

/* Whether the message's header has `text` (a "key":"value" pair). */
static bool header_has(const uint8_t *m, size_t size, const char *text)
{
    if (size < 4)
        return false;
    size_t n = (size_t)m[0] | (size_t)m[1] << 8 | (size_t)m[2] << 16 | (size_t)m[3] << 24;
    if (n + 4 > size || n > 8192)
        return false;
    char json[8193];
    memcpy(json, m + 4, n);
    json[n] = '\0';
    return strstr(json, text) != NULL;
}

#if LINK_VIEWER_VIDEO || LINK_VIEWER_H264
/* The video frame's payload after its header; false (and "key" asked for)
 * where the decoder waits for a key frame and this is none. */
static bool video_payload(state *st, const uint8_t *m, size_t size, const uint8_t **data,
                          size_t *bytes)
{
    size_t n = (size_t)m[0] | (size_t)m[1] << 8 | (size_t)m[2] << 16 | (size_t)m[3] << 24;
    if (st->need_key && !header_has(m, size, "\"key\":true")) {
        ws_client_send(st->client, "key\n");
        return false;
    }
    st->need_key = false;
    *data = m + 4 + n;
    *bytes = size - 4 - n;
    return true;
}

/* The decoder failed: the next key frame, asked for. */
static void lost(state *st)
{
    st->need_key = true;
    ws_client_send(st->client, "key\n");
}
#endif

#if LINK_VIEWER_VIDEO
/* A VP8 message decoded into *out, or false. As in a browser, the decoder
 * runs on several threads and the picture stays in YUV: only a picture
 * measured (PSNR) is turned into RGB (i420_rgba), where a page's GPU would
 * draw it. */
static bool decode_vp8(state *st, const uint8_t *m, size_t size, yuv_view *out)
{
    if (!st->vp8_open) {
        vpx_codec_dec_cfg_t cfg = {.threads = 4};
        if (vpx_codec_dec_init(&st->vp8, vpx_codec_vp8_dx(), &cfg, 0) != VPX_CODEC_OK)
            return false;
        st->vp8_open = true;
        st->need_key = true;
    }
    const uint8_t *data;
    size_t bytes;
    if (!video_payload(st, m, size, &data, &bytes))
        return false;
    if (vpx_codec_decode(&st->vp8, data, (unsigned)bytes, NULL, 0) != VPX_CODEC_OK) {
        lost(st);
        return false;
    }
    vpx_codec_iter_t iter = NULL;
    const vpx_image_t *img = vpx_codec_get_frame(&st->vp8, &iter);
    if (!img)
        return false;
    *out = (yuv_view){{img->planes[0], img->planes[1], img->planes[2]},
                      {img->stride[0], img->stride[1], img->stride[2]},
                      (int)img->d_w,
                      (int)img->d_h};
    return true;
}
#endif

#if LINK_VIEWER_H264
/* An H.264 message (an access unit in Annex B) decoded by OpenH264 into
 * *out, or false. */
static bool decode_h264(state *st, const uint8_t *m, size_t size, yuv_view *out)
{
    if (!st->h264) {
        SDecodingParam param;
        memset(&param, 0, sizeof param);
        param.sVideoProperty.size = sizeof param.sVideoProperty;
        param.sVideoProperty.eVideoBsType = VIDEO_BITSTREAM_AVC;
        param.eEcActiveIdc = ERROR_CON_DISABLE; /* a damaged picture is no picture */
        if (WelsCreateDecoder(&st->h264) != 0 || !st->h264) {
            st->h264 = NULL;
            return false;
        }
        int quiet = WELS_LOG_QUIET;
        (*st->h264)->SetOption(st->h264, DECODER_OPTION_TRACE_LEVEL, &quiet);
        if ((*st->h264)->Initialize(st->h264, &param) != 0) {
            WelsDestroyDecoder(st->h264);
            st->h264 = NULL;
            return false;
        }
        st->need_key = true;
    }
    const uint8_t *data;
    size_t bytes;
    if (!video_payload(st, m, size, &data, &bytes))
        return false;
    unsigned char *planes[3] = {0};
    SBufferInfo info;
    memset(&info, 0, sizeof info);
    if ((*st->h264)->DecodeFrameNoDelay(st->h264, data, (int)bytes, planes, &info) !=
        dsErrorFree) {
        lost(st);
        return false;
    }
    if (info.iBufferStatus != 1)
        return false;
    const SSysMEMBuffer *b = &info.UsrData.sSystemBuffer;
    *out = (yuv_view){{planes[0], planes[1], planes[2]},
                      {b->iStride[0], b->iStride[1], b->iStride[1]},
                      b->iWidth,
                      b->iHeight};
    return true;
}
#endif

/* The picture's planes packed, Y then U then V (malloc'ed), or NULL. */
static uint8_t *yuv_planes(const yuv_view *img, int *w, int *h)
{
    *w = img->w;
    *h = img->h;
    size_t cw = (size_t)(*w + 1) / 2, ch = (size_t)(*h + 1) / 2;
    uint8_t *out = malloc((size_t)*w * (size_t)*h + 2 * cw * ch);
    uint8_t *o = out;
    for (int y = 0; out && y < *h; y++, o += *w)
        memcpy(o, img->planes[0] + (size_t)y * (size_t)img->strides[0], (size_t)*w);
    for (int c = 1; out && c <= 2; c++)
        for (size_t y = 0; y < ch; y++, o += cw)
            memcpy(o, img->planes[c] + y * (size_t)img->strides[c], cw);
    return out;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* PSNR of `got` (gw x gh, the program's w x h scaled down) against frame
 * `frame` of the pattern. */
static double psnr(uint8_t *want, const uint8_t *got, int gw, int gh, int w, int h, long frame)
{
    for (int y = 0; y < h; y++)
        pattern_row(want + (size_t)y * (size_t)w * 4, y, w, frame);
    double se = 0;
    for (int y = 0; y < h; y++) {
        int sy = (int)((long)y * gh / h);
        for (int x = 0; x < w; x++) {
            int sx = (int)((long)x * gw / w);
            const uint8_t *a = want + ((size_t)y * (size_t)w + (size_t)x) * 4;
            const uint8_t *b = got + ((size_t)sy * (size_t)gw + (size_t)sx) * 4;
            for (int c = 0; c < 3; c++) {
                double d = (double)a[c] - (double)b[c];
                se += d * d;
            }
        }
    }
    double mse = se / ((double)w * h * 3);
    return mse > 0 ? 10 * log10(255.0 * 255.0 / mse) : 99;
}

/* I420 planes packed (yuv_planes) to RGBA rows (malloc'ed), or NULL:
 * BT.601, limited range, as the server makes them and browsers show them. */
static uint8_t *i420_rgba(const uint8_t *planes, int w, int h)
{
    size_t cw = (size_t)(w + 1) / 2, ch = (size_t)(h + 1) / 2;
    const uint8_t *pu = planes + (size_t)w * (size_t)h, *pv = pu + cw * ch;
    uint8_t *rgba = malloc((size_t)w * (size_t)h * 4);
    for (int y = 0; rgba && y < h; y++) {
        const uint8_t *py = planes + (size_t)y * (size_t)w;
        const uint8_t *u = pu + (size_t)(y / 2) * cw, *v = pv + (size_t)(y / 2) * cw;
        for (int x = 0; x < w; x++) {
            int c = py[x] - 16, d = u[x / 2] - 128, e = v[x / 2] - 128;
            int r = (298 * c + 409 * e + 128) >> 8, g = (298 * c - 100 * d - 208 * e + 128) >> 8,
                b = (298 * c + 516 * d + 128) >> 8;
            uint8_t *o = rgba + ((size_t)y * (size_t)w + (size_t)x) * 4;
            o[0] = (uint8_t)(r < 0 ? 0 : r > 255 ? 255 : r);
            o[1] = (uint8_t)(g < 0 ? 0 : g > 255 ? 255 : g);
            o[2] = (uint8_t)(b < 0 ? 0 : b > 255 ? 255 : b);
            o[3] = 255;
        }
    }
    return rgba;
}

/* BT.601 luma of an RGBA pixel, 0 to 255. */
static inline double luma(const uint8_t *p)
{
    return 0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2];
}

/* SSIM of the luma of `got` (gw x gh, scaled up nearest to w x h) against
 * `want` (w x h, as psnr left it): the mean over 8 x 8 windows every 4
 * pixels; -1 where the picture is smaller than a window, or no memory.
 * Each picture's luma is taken once (each pixel lies in 4 windows). */
static double ssim(const uint8_t *want, const uint8_t *got, int gw, int gh, int w, int h)
{
    const double c1 = (0.01 * 255) * (0.01 * 255), c2 = (0.03 * 255) * (0.03 * 255);
    size_t n = (size_t)w * (size_t)h;
    float *la = malloc(2 * n * sizeof *la), *lb = la + n;
    if (!la)
        return -1;
    for (int y = 0; y < h; y++) {
        int sy = (int)((long)y * gh / h);
        for (int x = 0; x < w; x++) {
            int sx = (int)((long)x * gw / w);
            la[(size_t)y * w + x] = (float)luma(want + ((size_t)y * (size_t)w + (size_t)x) * 4);
            lb[(size_t)y * w + x] = (float)luma(got + ((size_t)sy * (size_t)gw + (size_t)sx) * 4);
        }
    }
    double total = 0;
    long windows = 0;
    for (int y0 = 0; y0 + 8 <= h; y0 += 4) {
        for (int x0 = 0; x0 + 8 <= w; x0 += 4) {
            double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
            for (int y = y0; y < y0 + 8; y++) {
                for (int x = x0; x < x0 + 8; x++) {
                    double a = la[(size_t)y * w + x], b = lb[(size_t)y * w + x];
                    sa += a;
                    sb += b;
                    saa += a * a;
                    sbb += b * b;
                    sab += a * b;
                }
            }
            double ma = sa / 64, mb = sb / 64;
            double va = saa / 64 - ma * ma, vb = sbb / 64 - mb * mb, cov = sab / 64 - ma * mb;
            total += ((2 * ma * mb + c1) * (2 * cov + c2)) /
                     ((ma * ma + mb * mb + c1) * (va + vb + c2));
            windows++;
        }
    }
    free(la);
    return windows ? total / (double)windows : -1;
}

static void *measure_main(void *arg)
{
    measurer *ms = arg;
    pthread_mutex_lock(&ms->lock);
    for (;;) {
        while (!ms->stop && !ms->busy)
            pthread_cond_wait(&ms->wake, &ms->lock);
        if (ms->stop)
            break;
        pthread_mutex_unlock(&ms->lock);
        const sample *p = &ms->job;
        uint8_t *rgba = p->yuv ? i420_rgba(p->got, p->gw, p->gh) : p->got;
        uint8_t *want = ms->want ? ms->want : malloc((size_t)p->w * (size_t)p->h * 4);
        double db = rgba && want ? psnr(want, rgba, p->gw, p->gh, p->w, p->h, p->frame) : -1;
        double same = db >= 0 ? ssim(want, rgba, p->gw, p->gh, p->w, p->h) : -1;
        if (rgba != p->got)
            free(rgba);
        free(p->got);
        pthread_mutex_lock(&ms->lock);
        ms->want = want;
        ms->job.got = NULL;
        if (db >= 0 && same >= 0) {
            ms->sum += db;
            ms->ssim_sum += same;
            ms->count++;
        }
        ms->busy = false;
    }
    pthread_mutex_unlock(&ms->lock);
    return NULL;
}

/* `p` measured unless the thread is busy (its pixels freed then). The
 * reference is made once, for the first picture's size. */
static void measure(measurer *ms, sample p)
{
    pthread_mutex_lock(&ms->lock);
    bool take = !ms->busy && p.got && p.w > 0 && p.h > 0 &&
                (!ms->want || (ms->job.w == p.w && ms->job.h == p.h));
    if (take) {
        ms->busy = true;
        ms->job = p;
        pthread_cond_signal(&ms->wake);
    }
    pthread_mutex_unlock(&ms->lock);
    if (!take)
        free(p.got);
}

/* The mean PSNR measured since the last take, -1 if none; the mean SSIM
 * in *same (-1 if none). */
static double measured(measurer *ms, double *same)
{
    *same = -1;
    if (!ms)
        return -1;
    pthread_mutex_lock(&ms->lock);
    double db = ms->count ? ms->sum / ms->count : -1;
    if (ms->count)
        *same = ms->ssim_sum / ms->count;
    ms->sum = ms->ssim_sum = 0;
    ms->count = 0;
    pthread_mutex_unlock(&ms->lock);
    return db;
}

static void on_frame(void *user, const uint8_t *m, size_t size)
{
    state *st = user;
    int gw = 0, gh = 0;
    bool vp8 = header_has(m, size, "\"codec\":\"vp8\""),
         h264 = header_has(m, size, "\"codec\":\"h264\""), video = vp8 || h264;
    uint8_t *got = NULL; /* a JPEG's pixels */
    yuv_view img = {0};  /* a video picture */
    bool picture = false;
    double t0 = now_s();
#if LINK_VIEWER_VIDEO
    if (vp8)
        picture = decode_vp8(st, m, size, &img);
#endif
#if LINK_VIEWER_H264
    if (h264)
        picture = decode_h264(st, m, size, &img);
#endif
    if (!video) {
        got = ws_message_decode(m, size, &gw, &gh);
        picture = got != NULL;
    }
    double now = now_s();
    period *p = st->p;
    long events = (long)ws_message_number(m, size, "events");
    double input_ms = -1;
    if (picture && st->probe_s > 0 && events >= st->probe_events) {
        input_ms = (now - st->probe_s) * 1e3;
        if (p && p->inputs < MAX_SAMPLES)
            p->input_ms[p->inputs++] = input_ms;
        st->probe_s = 0;
    }
    if (st->trace)
        fprintf(st->trace,
                "%.4f frame %.0f size %zu codec %s key %d picture %d age %.1f decode %.2f "
                "encode %.2f bitrate %.0f quality %.0f scale %.0f input %.1f\n",
                now - st->start_s, ws_message_number(m, size, "frame"), size,
                vp8 ? "vp8" : h264 ? "h264" : "jpeg",
                header_has(m, size, "\"key\":true"), picture,
                (now - ws_message_number(m, size, "time")) * 1e3, (now - t0) * 1e3,
                ws_message_number(m, size, "encode_ms"), ws_message_number(m, size, "bitrate"),
                ws_message_number(m, size, "quality"), ws_message_number(m, size, "scale"),
                input_ms);
    if (p) {
        p->messages++;
        p->bytes += (double)size;
    }
    if (!picture)
        return;
    st->pictures++;
    if (p) {
        p->pictures++;
        p->video_pictures += video;
        p->encode_ms_sum += ws_message_number(m, size, "encode_ms");
        p->decode_ms_sum += (now - t0) * 1e3;
        double age = (now - ws_message_number(m, size, "time")) * 1e3;
        if (p->ages < MAX_SAMPLES)
            p->age_ms[p->ages++] = age;
        if (st->pictures % 10 == 0) {
            int w = (int)ws_message_number(m, size, "width");
            int h = (int)ws_message_number(m, size, "height");
            long frame = (long)ws_message_number(m, size, "frame");
            if (st->measure) {
                if (video)
                    got = yuv_planes(&img, &gw, &gh);
                measure(st->measure, (sample){got, video, gw, gh, w, h, frame});
                got = NULL;
            }
            if (!video) {
                p->quality_sum += ws_message_number(m, size, "quality");
                p->scale_sum += ws_message_number(m, size, "scale");
                p->levels++;
            }
        }
    }
    free(got);
}

static double median(double *v, int n)
{
    if (n == 0)
        return -1;
    qsort(v, (size_t)n, sizeof v[0], cmp_double);
    return v[n / 2];
}

static double worst(const double *v, int n)
{
    double w = -1;
    for (int i = 0; i < n; i++)
        w = v[i] > w ? v[i] : w;
    return w;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: link_viewer ADDRESS PORT [--warmup S] [--periods N] "
                        "[--period S] [--no-psnr] [--video] [--h264] [--ack-delay MS]\n");
        return 2;
    }
    double warmup = 2, length = 3, ack_delay_ms = 0;
    int periods = 3;
    bool psnr = true, vp8 = false, h264 = false;
    for (int i = 3; i < argc; i += 2) {
        if (strcmp(argv[i], "--no-psnr") == 0 || strcmp(argv[i], "--video") == 0 ||
            strcmp(argv[i], "--h264") == 0) {
            psnr = psnr && strcmp(argv[i], "--no-psnr") != 0;
            vp8 = vp8 || strcmp(argv[i], "--video") == 0;
            h264 = h264 || strcmp(argv[i], "--h264") == 0;
            i--;
        } else if (i + 1 >= argc) {
            break;
        } else if (strcmp(argv[i], "--warmup") == 0)
            warmup = atof(argv[i + 1]);
        else if (strcmp(argv[i], "--periods") == 0)
            periods = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--period") == 0)
            length = atof(argv[i + 1]);
        else if (strcmp(argv[i], "--ack-delay") == 0)
            ack_delay_ms = atof(argv[i + 1]);
    }
    if ((vp8 && !LINK_VIEWER_VIDEO) || (h264 && !LINK_VIEWER_H264)) {
        fprintf(stderr, "link_viewer: this build has no %s decoder (%s)\n",
                vp8 && !LINK_VIEWER_VIDEO ? "VP8" : "H.264",
                vp8 && !LINK_VIEWER_VIDEO ? "libvpx-dev" : "libopenh264-dev");
        return 2;
    }
    ws_client *c = ws_client_open_at(argv[1], atoi(argv[2]), NULL);
    if (c)
        ws_client_set_ack_delay(c, ack_delay_ms / 1e3);
    if (!c || !ws_client_wait_frames(c, 1, 20)) {
        fprintf(stderr, "link_viewer: no frame from %s:%s\n", argv[1], argv[2]);
        ws_client_close(c);
        return 1;
    }
    const char *trace = getenv("LINK_VIEWER_TRACE");
    measurer ms = {0};
    if (psnr) {
        pthread_mutex_init(&ms.lock, NULL);
        pthread_cond_init(&ms.wake, NULL);
        ms.started = pthread_create(&ms.thread, NULL, measure_main, &ms) == 0;
    }
    state st = {.measure = ms.started ? &ms : NULL, .client = c, .start_s = now_s(),
                .trace = trace && *trace ? fopen(trace, "w") : NULL};
    if (st.trace)
        fprintf(st.trace, "start %.4f\n", st.start_s);
    if (vp8 || h264)
        ws_client_send(c, vp8 && h264 ? "codecs vp8 h264\n" : vp8 ? "codecs vp8\n" : "codecs h264\n");
    ws_client_on_frame(c, on_frame, &st);
    period *p = calloc(1, sizeof *p);
    if (!p)
        return 1;
    double start = now_s(), next_probe = start;
    long sent_events = 0;
    int done = 0;
    while (done < periods && !ws_client_closed(c)) {
        double now = now_s();
        if (now >= next_probe) {
            char line[64];
            snprintf(line, sizeof line, "0 move %ld %ld\n", 10 + sent_events % 100,
                     20 + sent_events % 50);
            if (ws_client_send(c, line)) {
                sent_events++;
                if (st.probe_s == 0) {
                    st.probe_s = now;
                    st.probe_events = sent_events;
                }
            }
            next_probe = now + 0.2;
        }
        ws_client_run(c, 0.005);
        if (!st.p && now_s() - start >= warmup) {
            st.p = p;
            double same;
            measured(st.measure, &same);
            start = now_s();
        } else if (st.p && now_s() - start >= length) {
            double dt = now_s() - start, same, db = measured(st.measure, &same);
            printf("{\"period\":%d,\"fps\":%.2f,\"messages_per_s\":%.2f,\"mbit_s\":%.3f,"
                   "\"age_median_ms\":%.1f,\"age_worst_ms\":%.1f,\"input_median_ms\":%.1f,"
                   "\"input_worst_ms\":%.1f,\"inputs\":%d,\"psnr\":%.2f,\"ssim\":%.4f,"
                   "\"quality\":%.1f,"
                   "\"scale\":%.2f,\"rtt_ms\":%.2f,\"throughput_mbit_s\":%.3f,\"program_fps\":%.1f,"
                   "\"encode_ms\":%.3f,\"pictures\":%ld,\"messages\":%ld,\"video_share\":%.3f,"
                   "\"bitrate_kbps\":%.0f,\"decode_ms\":%.3f}\n",
                   done, (double)p->pictures / dt, (double)p->messages / dt,
                   p->bytes * 8 / dt / 1e6, median(p->age_ms, p->ages),
                   worst(p->age_ms, p->ages), median(p->input_ms, p->inputs),
                   worst(p->input_ms, p->inputs), p->inputs,
                   db, same,
                   p->levels ? p->quality_sum / p->levels : -1,
                   p->levels ? p->scale_sum / p->levels : -1,
                   ws_client_header_number(c, "rtt_ms"),
                   ws_client_header_number(c, "throughput") * 8 / 1e6,
                   ws_client_header_number(c, "fps"),
                   p->pictures ? p->encode_ms_sum / (double)p->pictures : -1, p->pictures,
                   p->messages,
                   p->pictures ? (double)p->video_pictures / (double)p->pictures : 0,
                   ws_client_header_number(c, "bitrate"),
                   p->pictures ? p->decode_ms_sum / (double)p->pictures : -1);
            fflush(stdout);
            memset(p, 0, sizeof *p);
            start = now_s();
            done++;
        }
    }
    bool closed = ws_client_closed(c);
    ws_client_close(c);
    free(p);
    if (ms.started) {
        pthread_mutex_lock(&ms.lock);
        ms.stop = true;
        pthread_cond_signal(&ms.wake);
        pthread_mutex_unlock(&ms.lock);
        pthread_join(ms.thread, NULL);
        free(ms.job.got);
        free(ms.want);
    }
    if (st.trace)
        fclose(st.trace);
#if LINK_VIEWER_VIDEO
    if (st.vp8_open)
        vpx_codec_destroy(&st.vp8);
#endif
#if LINK_VIEWER_H264
    if (st.h264) {
        (*st.h264)->Uninitialize(st.h264);
        WelsDestroyDecoder(st.h264);
    }
#endif
    if (closed) {
        fprintf(stderr, "link_viewer: the server closed the connection\n");
        return 1;
    }
    return 0;
}
