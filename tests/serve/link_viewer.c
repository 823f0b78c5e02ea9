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
 * With --no-psnr (a program other than serve_app --animate) no PSNR. With
 * --video it tells the server it decodes VP8 ("codecs vp8", as a page with
 * WebCodecs does) and decodes it with libvpx (where this build has it).
 *
 * usage: link_viewer ADDRESS PORT [--warmup S] [--periods N] [--period S] [--no-psnr]
 *                    [--video]
 */
#include <math.h>
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
    double psnr_sum, quality_sum, scale_sum, encode_ms_sum;
    long video_pictures;
    int psnrs, levels;
} period;

typedef struct state {
    period *p;             /* the period being counted; NULL while warming up */
    long pictures;         /* since the start */
    double probe_s;        /* when the pending event was sent; 0: none */
    long probe_events;     /* the count that shows it */
    uint8_t *want;         /* the reference picture, top to bottom */
    bool psnr;             /* whether to measure it */
    ws_client *client;
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
/* A VP8 message decoded to RGBA rows top first (malloc'ed), or NULL. */
static uint8_t *decode_vp8(state *st, const uint8_t *m, size_t size, int *w, int *h)
{
    size_t n = (size_t)m[0] | (size_t)m[1] << 8 | (size_t)m[2] << 16 | (size_t)m[3] << 24;
    bool key = header_has(m, size, "\"key\":true");
    if (!st->vp8_open) {
        if (vpx_codec_dec_init(&st->vp8, vpx_codec_vp8_dx(), NULL, 0) != VPX_CODEC_OK)
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
    vpx_image_t *img = vpx_codec_get_frame(&st->vp8, &iter);
    if (!img)
        return NULL;
    *w = (int)img->d_w;
    *h = (int)img->d_h;
    uint8_t *rgba = malloc((size_t)*w * (size_t)*h * 4);
    for (int y = 0; rgba && y < *h; y++) {
        const uint8_t *py = img->planes[0] + (size_t)y * (size_t)img->stride[0];
        const uint8_t *pu = img->planes[1] + (size_t)(y / 2) * (size_t)img->stride[1];
        const uint8_t *pv = img->planes[2] + (size_t)(y / 2) * (size_t)img->stride[2];
        for (int x = 0; x < *w; x++) {
            int c = py[x] - 16, d = pu[x / 2] - 128, e = pv[x / 2] - 128;
            int r = (298 * c + 409 * e + 128) >> 8, g = (298 * c - 100 * d - 208 * e + 128) >> 8,
                b = (298 * c + 516 * d + 128) >> 8;
            uint8_t *o = rgba + ((size_t)y * (size_t)*w + (size_t)x) * 4;
            o[0] = (uint8_t)(r < 0 ? 0 : r > 255 ? 255 : r);
            o[1] = (uint8_t)(g < 0 ? 0 : g > 255 ? 255 : g);
            o[2] = (uint8_t)(b < 0 ? 0 : b > 255 ? 255 : b);
            o[3] = 255;
        }
    }
    return rgba;
}
#endif

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* PSNR of `got` (gw x gh, the program's w x h scaled down) against frame
 * `frame` of the pattern. */
static double psnr(state *st, const uint8_t *got, int gw, int gh, int w, int h, long frame)
{
    for (int y = 0; y < h; y++)
        pattern_row(st->want + (size_t)y * (size_t)w * 4, y, w, frame);
    double se = 0;
    for (int y = 0; y < h; y++) {
        int sy = (int)((long)y * gh / h);
        for (int x = 0; x < w; x++) {
            int sx = (int)((long)x * gw / w);
            const uint8_t *a = st->want + ((size_t)y * (size_t)w + (size_t)x) * 4;
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

static void on_frame(void *user, const uint8_t *m, size_t size)
{
    state *st = user;
    int gw = 0, gh = 0;
    bool vp8 = header_has(m, size, "\"codec\":\"vp8\"");
    uint8_t *got = NULL;
#if LINK_VIEWER_VIDEO
    if (vp8)
        got = decode_vp8(st, m, size, &gw, &gh);
    else
#endif
        got = vp8 ? NULL : ws_message_decode(m, size, &gw, &gh);
    double now = now_s();
    period *p = st->p;
    long events = (long)ws_message_number(m, size, "events");
    if (got && st->probe_s > 0 && events >= st->probe_events) {
        if (p && p->inputs < MAX_SAMPLES)
            p->input_ms[p->inputs++] = (now - st->probe_s) * 1e3;
        st->probe_s = 0;
    }
    if (p) {
        p->messages++;
        p->bytes += (double)size;
    }
    if (!got)
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
            if (!st->want)
                st->want = malloc((size_t)w * (size_t)h * 4);
            if (st->psnr && st->want && w > 0 && h > 0) {
                p->psnr_sum += psnr(st, got, gw, gh, w, h, frame);
                p->psnrs++;
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
                        "[--period S]\n");
        return 2;
    }
    double warmup = 2, length = 3;
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
    }
    ws_client *c = ws_client_open_at(argv[1], atoi(argv[2]), NULL);
    if (!c || !ws_client_wait_frames(c, 1, 20)) {
        fprintf(stderr, "link_viewer: no frame from %s:%s\n", argv[1], argv[2]);
        ws_client_close(c);
        return 1;
    }
    state st = {.psnr = psnr, .client = c};
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
                   p->psnrs ? p->psnr_sum / p->psnrs : -1,
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
    free(st.want);
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
