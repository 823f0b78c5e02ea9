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
 *   - the quality, scale and PSNR (against pattern.h's frame, the picture
 *     scaled back up as the page does, nearest) of every 10th picture.
 * One line of JSON a period on stdout.
 *
 *   - the encoder's time a picture (the header's "encode_ms"), mean.
 * With LINK_VIEWER_TRACE set to a file's name, a line a message there:
 * when, its size, codec, picture age, decode time and what its header says.
 * With --no-psnr (a program other than serve_app --animate) no PSNR. With
 * --video it tells the server it decodes VP8 ("codecs vp8", as a page with
 * WebCodecs does) and decodes it with libvpx (where this build has it).
 * With --ack-delay MS each ack leaves MS after its frame arrived, the
 * time it reports held unchanged: a browser's unreported wait for its
 * next animation frame (ws_client_set_ack_delay).
 *
 * usage: link_viewer ADDRESS PORT [--warmup S] [--periods N] [--period S] [--no-psnr]
 *                    [--video] [--ack-delay MS]
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
    double quality_sum, scale_sum, encode_ms_sum;
    long video_pictures;
    int levels;
} period;

/* PSNR is measured on a thread of its own, so that no ack waits for it (a
 * page measures nothing): a picture goes to it when it is idle, else that
 * sample is left out. A VP8 picture goes as a copy of its planes (I420),
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
    double sum;    /* the PSNRs measured since the last take, and their count */
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
#if LINK_VIEWER_VIDEO
    vpx_codec_ctx_t vp8;
    bool vp8_open, need_key;
#endif
} state;

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

#if LINK_VIEWER_VIDEO
/* A VP8 message decoded: the picture as libvpx holds it (until the next
 * decode), or NULL. As in a browser, the decoder runs on several threads
 * and the picture stays in YUV: only a picture measured (PSNR) is turned
 * into RGB (vp8_rgba), where a page's GPU would draw it. */
static const vpx_image_t *decode_vp8(state *st, const uint8_t *m, size_t size)
{
    size_t n = (size_t)m[0] | (size_t)m[1] << 8 | (size_t)m[2] << 16 | (size_t)m[3] << 24;
    bool key = header_has(m, size, "\"key\":true");
    if (!st->vp8_open) {
        vpx_codec_dec_cfg_t cfg = {.threads = 4};
        if (vpx_codec_dec_init(&st->vp8, vpx_codec_vp8_dx(), &cfg, 0) != VPX_CODEC_OK)
            return NULL;
        st->vp8_open = true;
        st->need_key = true;
    }
    if (st->need_key && !key) {
        ws_client_send(st->client, "key\n");
        return NULL;
    }
    st->need_key = false;
    if (vpx_codec_decode(&st->vp8, m + 4 + n, (unsigned)(size - 4 - n), NULL, 0) != VPX_CODEC_OK) {
        st->need_key = true;
        ws_client_send(st->client, "key\n");
        return NULL;
    }
    vpx_codec_iter_t iter = NULL;
    return vpx_codec_get_frame(&st->vp8, &iter);
}

/* The picture's planes packed, Y then U then V (malloc'ed), or NULL. */
static uint8_t *vp8_planes(const vpx_image_t *img, int *w, int *h)
{
    *w = (int)img->d_w;
    *h = (int)img->d_h;
    size_t cw = (size_t)(*w + 1) / 2, ch = (size_t)(*h + 1) / 2;
    uint8_t *out = malloc((size_t)*w * (size_t)*h + 2 * cw * ch);
    uint8_t *o = out;
    for (int y = 0; out && y < *h; y++, o += *w)
        memcpy(o, img->planes[0] + (size_t)y * (size_t)img->stride[0], (size_t)*w);
    for (int c = 1; out && c <= 2; c++)
        for (size_t y = 0; y < ch; y++, o += cw)
            memcpy(o, img->planes[c] + y * (size_t)img->stride[c], cw);
    return out;
}
#endif

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

/* I420 planes packed (vp8_planes) to RGBA rows (malloc'ed), or NULL:
 * BT.601, limited range, as browsers show VP8. */
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
        if (rgba != p->got)
            free(rgba);
        free(p->got);
        pthread_mutex_lock(&ms->lock);
        ms->want = want;
        ms->job.got = NULL;
        if (db >= 0) {
            ms->sum += db;
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

/* The mean PSNR measured since the last take, -1 if none. */
static double measured(measurer *ms)
{
    if (!ms)
        return -1;
    pthread_mutex_lock(&ms->lock);
    double db = ms->count ? ms->sum / ms->count : -1;
    ms->sum = 0;
    ms->count = 0;
    pthread_mutex_unlock(&ms->lock);
    return db;
}

static void on_frame(void *user, const uint8_t *m, size_t size)
{
    state *st = user;
    int gw = 0, gh = 0;
    bool vp8 = header_has(m, size, "\"codec\":\"vp8\"");
    uint8_t *got = NULL; /* a JPEG's pixels */
    bool picture = false;
    double t0 = now_s();
#if LINK_VIEWER_VIDEO
    const vpx_image_t *img = NULL;
    if (vp8) {
        img = decode_vp8(st, m, size);
        picture = img != NULL;
    } else
#endif
    {
        got = vp8 ? NULL : ws_message_decode(m, size, &gw, &gh);
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
                "%.4f frame %.0f size %zu vp8 %d key %d picture %d age %.1f decode %.2f "
                "encode %.2f bitrate %.0f quality %.0f scale %.0f input %.1f\n",
                now - st->start_s, ws_message_number(m, size, "frame"), size, vp8,
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
        p->video_pictures += vp8;
        p->encode_ms_sum += ws_message_number(m, size, "encode_ms");
        double age = (now - ws_message_number(m, size, "time")) * 1e3;
        if (p->ages < MAX_SAMPLES)
            p->age_ms[p->ages++] = age;
        if (st->pictures % 10 == 0) {
            int w = (int)ws_message_number(m, size, "width");
            int h = (int)ws_message_number(m, size, "height");
            long frame = (long)ws_message_number(m, size, "frame");
            if (st->measure) {
#if LINK_VIEWER_VIDEO
                if (img)
                    got = vp8_planes(img, &gw, &gh);
#endif
                measure(st->measure, (sample){got, vp8, gw, gh, w, h, frame});
                got = NULL;
            }
            if (!vp8) {
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
                        "[--period S] [--ack-delay MS]\n");
        return 2;
    }
    double warmup = 2, length = 3, ack_delay_ms = 0;
    int periods = 3;
    bool psnr = true, video = false;
    for (int i = 3; i < argc; i += 2) {
        if (strcmp(argv[i], "--no-psnr") == 0 || strcmp(argv[i], "--video") == 0) {
            psnr = psnr && strcmp(argv[i], "--no-psnr") != 0;
            video = video || strcmp(argv[i], "--video") == 0;
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
    if (video)
        ws_client_send(c, LINK_VIEWER_VIDEO ? "codecs vp8\n" : "codecs none no libvpx here\n");
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
            measured(st.measure);
            start = now_s();
        } else if (st.p && now_s() - start >= length) {
            double dt = now_s() - start;
            printf("{\"period\":%d,\"fps\":%.2f,\"messages_per_s\":%.2f,\"mbit_s\":%.3f,"
                   "\"age_median_ms\":%.1f,\"age_worst_ms\":%.1f,\"input_median_ms\":%.1f,"
                   "\"input_worst_ms\":%.1f,\"inputs\":%d,\"psnr\":%.2f,\"quality\":%.1f,"
                   "\"scale\":%.2f,\"rtt_ms\":%.2f,\"throughput_mbit_s\":%.3f,\"program_fps\":%.1f,"
                   "\"encode_ms\":%.3f,\"pictures\":%ld,\"messages\":%ld,\"video_share\":%.3f,"
                   "\"bitrate_kbps\":%.0f}\n",
                   done, (double)p->pictures / dt, (double)p->messages / dt,
                   p->bytes * 8 / dt / 1e6, median(p->age_ms, p->ages),
                   worst(p->age_ms, p->ages), median(p->input_ms, p->inputs),
                   worst(p->input_ms, p->inputs), p->inputs,
                   measured(st.measure),
                   p->levels ? p->quality_sum / p->levels : -1,
                   p->levels ? p->scale_sum / p->levels : -1,
                   ws_client_header_number(c, "rtt_ms"),
                   ws_client_header_number(c, "throughput") * 8 / 1e6,
                   ws_client_header_number(c, "fps"),
                   p->pictures ? p->encode_ms_sum / (double)p->pictures : -1, p->pictures,
                   p->messages,
                   p->pictures ? (double)p->video_pictures / (double)p->pictures : 0,
                   ws_client_header_number(c, "bitrate"));
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
    if (closed) {
        fprintf(stderr, "link_viewer: the server closed the connection\n");
        return 1;
    }
    return 0;
}
