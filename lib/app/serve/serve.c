/*
 * serve.c - the frames of a GL context to web browsers (cugl/app_serve.h):
 * libwebsockets for HTTP and WebSocket on a thread of its own, libjpeg-turbo
 * on encoder threads, and GL pixel-pack buffers, persistently mapped, that
 * the framebuffer is copied into without waiting.
 *
 * A frame's way: cugl_app_server_frame (the render thread) copies the
 * framebuffer (scaled down on the GPU when no viewer wants it whole) into a
 * free slot's buffer and fences the copy: headless on EGL 1.5 with an EGL
 * fence, and queues the slot at once (the encoder waits for the fence);
 * else with a GL fence, and a later call finds it passed and queues the
 * slot. An encoder hashes the pixels (an unchanged hash: the picture is
 * still), makes a JPEG at each level some viewer wants (scaled down further
 * on the CPU where needed), frees the slot, and publishes them; the network
 * thread, woken, sends each viewer the newest frame of its level.
 *
 * Latency is bounded by counting, end to end: a viewer acknowledges each
 * frame once shown, and is sent a frame only while fewer than `window` of
 * its frames are unacknowledged, so at most `window` frames are ever queued
 * for it anywhere (here, in libwebsockets, in the kernel, on the link).
 * The acknowledgements also measure the viewer's link: round trip, bytes a
 * second, input to picture. From them each viewer gets its own level (JPEG
 * quality, then size) so that its frames fit its link at the frame rate
 * wanted: the program's rate while the viewer's input arrives, half of it
 * otherwise; and once the picture is still, a frame of the best level its
 * link carries in REFINE_S, then headers alone until the picture changes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <libwebsockets.h>
#include <turbojpeg.h>

#include "app_internal.h"
#include "cugl/app_serve.h"
#include "serve_internal.h"

extern const unsigned char cugl_serve_page_html[];
extern const size_t cugl_serve_page_html_size;

enum {
    SLOTS = 4,        /* framebuffer copies in flight or being encoded */
    JSON_MAX = 2 * CUGL_APP_SERVE_MAX_STATS + 768, /* escaped stats, name and numbers */
    VIEWER_JSON_MAX = 384 + 2 * 192,               /* a viewer's own fields */
    LEVELS = 10,
    /* The kernel's send buffer for a viewer: frames wait for their turn in
     * this server, not in the kernel; and unsent bytes wake the server
     * only once below NOTSENT_LOWAT. */
    SNDBUF_BYTES = 1 << 20,
    NOTSENT_LOWAT = 64 << 10,
    HELD_MAX_MS = 60000, /* a page that held a frame longer is lying */
    GPU_FRAMES = 4,      /* frames the GPU's encoder encodes at once */
    VIDEO_WANT = 1 << 10, /* in the want masks: a video viewer has room (LEVELS is 10) */
    PROBE = LEVELS,      /* a GPU frame's job for its hash: half size, every texel */
    /* A viewer's events waiting for a present, at most (its moves merge):
     * all viewers' together fit CUGL_APP_EVENT_MAX_PENDING. */
    VIEWER_EVENTS = CUGL_APP_EVENT_MAX_PENDING / CUGL_APP_SERVE_MAX_VIEWERS,
    /* A viewer that owes an ack this long goes (a page acks every frame it
     * shows; one that stopped holds a place among the viewers);
     * CUGL_SERVE_ACK_TIMEOUT (seconds) sets another. */
    ACK_TIMEOUT_S = 60,
    /* Viewers that get video at once: each has a libvpx encoder of its
     * own at the program's size (about 2.8 GB at 8192 x 8192), and any
     * viewer may ask for video and for that size. */
    VIDEO_STREAMS = 4,
};

#define FPS_WINDOW_S 0.5     /* the rendering rate: frames over this time, ending now */
#define FPS_RING 256         /* frame times kept: the window up to 512 frames a second */
#define INTERACTING_S 1.0    /* a viewer's input this recent: frame rate wins */
#define REFINE_S 0.25        /* a still picture's frame may take this long to send */
#define HEADROOM 0.8         /* of the measured bytes a second, what frames may use */
#define LEVEL_UP_S 0.5       /* a level goes up at most this often */
#define RTT_WINDOW_S 10.0    /* the round trip: the least over this time */
/* Frames read for the viewers: at most CAPTURE_HZ a second, in bursts of up
 * to CAPTURE_BURST (a program held up renders the frames it owes back to
 * back: with bursts of 2, one at 60 a second on average had 40 read). Not
 * only while a viewer has room: a frame takes a few presents to be encoded,
 * and a viewer at 60 got half of them. A page shows 60 (a little more, for
 * a program whose 60 runs fast by its clock); an unpaced program drawing
 * 800 a second had every one copied and encoded, on its own GPU. */
#define CAPTURE_HZ 80.0
#define CAPTURE_BURST 4.0
#define VIDEO_BELOW_BPS 30e6 /* auto: video on links that carry less */
#define JPEG_ABOVE_BPS 60e6  /* ... and back to JPEG on links that carry more */
#define CODEC_HOLD_S 5.0     /* a codec is kept at least this long */
#define VIDEO_SHARE 0.5      /* of the measured bytes a second, what video starts at */
#define VIDEO_CAP 0.7        /* ... and what it may reach */
/* A video frame that waited longer than HIGH: bitrate down; shorter than
 * LOW: up. At 50 and 15 ms a 5 Mbit/s link's worst reached 300 to 560 ms. */
#define VIDEO_QUEUE_HIGH_S 0.03
#define VIDEO_QUEUE_LOW_S 0.008
#define VIDEO_RATE_S 0.25       /* the bitrate changes at most this often */
/* A video frame smaller than this tells little of its link: a shaper's
 * burst passes it at once (tc tbf's 64 kbit: 8 kB), and its rate reads
 * several times the link's. While a viewer gets video such frames leave
 * its throughput as it was: at 20 Mbit/s, taken, they read over 60 and
 * sent the viewer back to JPEG, and 5 s later to video with a key frame.
 * A JPEG viewer's frames are sized from its throughput, so one read too
 * high makes larger frames, which queue and measure the link again; and
 * on a narrow link all its frames are small. */
#define VIDEO_SAMPLE_MIN_BYTES (32 << 10)

/* The levels, best first: JPEG quality (at most the server's) and the
 * divisor of each side; `bytes` is a guess of a frame's size against
 * level 0's until frames of the level have been seen. */
static const struct {
    int quality, scale;
    double bytes;
} levels[LEVELS] = {
    {100, 1, 1.0},  {70, 1, 0.6},  {55, 1, 0.45}, {40, 1, 0.33},  {70, 2, 0.17},
    {50, 2, 0.12},  {35, 2, 0.09}, {60, 4, 0.05}, {40, 4, 0.035}, {25, 4, 0.025},
};

typedef enum slot_state {
    SLOT_FREE,    /* the render thread's */
    SLOT_COPYING, /* GL copies into it; its fence tells when done */
    SLOT_QUEUED,  /* an encoder's, waiting or working */
} slot_state;

typedef struct slot {
    GLuint pbo;
    void *pixels; /* the buffer, mapped for good */
    int width, height;     /* of the buffer */
    int scale;             /* what the copy is scaled down by: 1, 2 or 4 */
    GLsync fence;          /* the copy's end, polled at the next frame; or */
    EGLSync egl_fence;     /* ... waited for by the encoder (headless, EGL 1.5) */
    long number;           /* the frame's, from the context's presents */
    long events;           /* the viewers' events it shows */
    double time_s;         /* when it was copied */
    double fps;            /* the program's frame rate then */
    slot_state state;      /* under server->lock */
    bool video_only;       /* copied for video alone (the GPU makes its JPEGs) */
    char json[JSON_MAX];   /* the frame's header fields, made when it was copied */
} slot;

/* A frame: its header's fields and, unless `level` is -1 (the header of
 * the newest frame, whose picture some viewers have already), a JPEG. */
typedef struct frame {
    atomic_int refs;
    long number, events;
    double time_s;
    uint64_t hash;      /* of the picture */
    int level;
    int width, height;  /* of the JPEG */
    double encode_ms;
    char json[JSON_MAX + 160];
    size_t size;        /* of the JPEG */
    unsigned char jpeg[];
} frame;

enum { WINDOW_MAX = CUGL_APP_SERVE_MAX_WINDOW };

/* A frame sent and not yet acknowledged. */
typedef struct in_flight {
    long number, events;
    double sent_s;
    size_t bytes;
} in_flight;

/* A viewer's video: its encoder and the frames encoded for it, in order.
 * Under the server's lock, but for `encoder`, which the one encoder thread
 * that set `busy` uses; a stream whose viewer left while busy is freed by
 * that thread (`dead`). */
typedef struct video_stream {
    cugl__video *encoder;
    bool room;        /* its viewer can take another frame */
    bool busy, dead;
    bool key;         /* the next frame is a key frame */
    long last;        /* the number of the last frame encoded */
    int kbps;         /* the bitrate to encode at */
    frame *ready[WINDOW_MAX];
    int ready_count;
} video_stream;

typedef enum viewer_codec { CODEC_JPEG, CODEC_VIDEO } viewer_codec;

/* A viewer: libwebsockets' per-connection memory (zeroed at the start);
 * the network thread's alone. */
typedef struct viewer {
    struct lws *wsi;
    bool started;
    int index;               /* in server->viewer_list */
    size_t rx_size;          /* bytes of the message being received */
    char rx[CUGL_APP_SERVE_MAX_MESSAGE + 1];

    in_flight flight[WINDOW_MAX];
    int unacked;
    long sent, acked;        /* the numbers of the last frame sent, acknowledged; -1: none */
    long sent_count, acked_count;
    uint64_t shown_hash;     /* the picture it has, and its level */
    int shown_level;
    int level;               /* the level its link carries at the rate wanted */
    double level_s;          /* when it last went up */

    double rtt_s, rtt_min_s, rtt_min_at; /* the least delivery less transfer, and when */
    double throughput;       /* bytes a second; 0: not measured yet */
    double last_arrival_s;   /* the previous frame's, on this clock plus the way back */
    double input_s;          /* when its first event not yet shown arrived; 0: none */
    long input_events;       /* the event count that shows it */
    double input_ms;         /* input to picture, the last measured; -1: none */
    double last_input_s;     /* when its last event arrived */
    cugl__app_share events;  /* its part of the events waiting for a present */

    unsigned char *out;      /* the message being sent: LWS_PRE, then it */
    size_t out_cap;
    size_t out_size, out_off; /* its size, and how much of it is written */

    bool can_video;          /* its page decodes VP8 ("codecs vp8") */
    char page_why[128];      /* why it cannot, in its words */
    viewer_codec codec;
    double codec_s;          /* when it last changed */
    char codec_why[192];     /* why it gets the codec it gets */
    video_stream *video;     /* while it gets video */
    double video_kbps;       /* its bitrate, by the delay its frames see */
    double video_rate_s;     /* when that last changed */
} viewer;

struct cugl_app_server {
    cugl_app_context *ctx;
    char name[128];
    char token[CUGL_APP_SERVE_MAX_TOKEN + 1];
    int quality;
    int window;
    int port;
    int ack_timeout_s;       /* a viewer's frames unacknowledged that long: it goes */
    /* The name listened on as given (a host name, or a literal). */
    char listen_name[256];

    slot slots[SLOTS];
    /* Headless on EGL 1.5: a copy's end is an EGL fence that an encoder
     * waits for, not a GL one polled at the program's next frame (a frame
     * of latency at 60 a second). EGL_NO_DISPLAY: GL fences. */
    EGLDisplay egl_display;
    double fps_times[FPS_RING]; /* the last frames' times, by count % FPS_RING */
    long fps_count;
    double fps;
    double capture_s, capture_tokens; /* the last present with viewers; frames it may read */
    long copied;                      /* frames read for the viewers (the render thread's) */
    char stats[CUGL_APP_SERVE_MAX_STATS];
    /* The GPU's JPEG encoder (serve_nvjpeg.c: GL's shaders or nvJPEG), and
     * the frames it encodes: each a slot's header fields and a job a level. */
    cugl__gpu_jpeg *gpu;
    char encoder_why[512];
    cugl_app_serve_codec codec; /* as asked for */
    char cert[512], key[512];   /* PEM files: HTTPS and WSS; "": plain */
    video_stream *video_list[CUGL_APP_SERVE_MAX_VIEWERS]; /* under the lock */
    int video_count;
    pthread_mutex_t gpu_lock; /* gpu_frames, and `gpu` against its thread */
    struct gpu_frame {
        bool busy;
        slot meta;
        int jobs[LEVELS + 1]; /* -1: none; jobs[PROBE] hashes the picture */
    } gpu_frames[GPU_FRAMES];
    /* GPU downscaling: a framebuffer of the scaled size to blit into. */
    GLuint down_fbo, down_rb;
    int down_w, down_h;

    pthread_mutex_t lock; /* slots' states, the queue, the frames, the size model, `stop` */
    pthread_cond_t work;
    int queue[SLOTS];
    int queued;
    frame *newest[LEVELS]; /* each level's newest JPEG */
    frame *header;         /* the newest frame's header (level -1) */
    uint64_t hash;         /* the newest frame's picture */
    double level_bytes[LEVELS], level_seen_s[LEVELS], bytes0; /* sizes seen */
    cugl_app_server_viewer_stats viewer_stats[CUGL_APP_SERVE_MAX_VIEWERS];
    int viewer_stats_count;
    bool stop;
    pthread_t encoders[CUGL_APP_SERVE_MAX_ENCODERS];
    int encoder_count;

    /* The levels viewers with room want: `want_live` each one's own level
     * (for a new picture), `want_now` what each one wants of the newest
     * picture (its level, the refining level, or none). */
    atomic_uint want_live, want_now;

    struct lws_context *lws;
    /* The numeric addresses listened on (a vhost each), all on `port`. */
    char addresses[CUGL_APP_SERVE_MAX_ADDRESSES][64];
    char vhost_names[CUGL_APP_SERVE_MAX_ADDRESSES][16];
    int address_count;
    viewer *viewer_list[CUGL_APP_SERVE_MAX_VIEWERS]; /* the network thread's */
    pthread_t network;
    bool network_started;
    atomic_bool network_stop;
    atomic_int viewers;
    atomic_long encoded, sent, dropped;
    atomic_long events;   /* viewer events pushed into the context so far */
    long events_shown;    /* of those, the ones the next frame copied shows */
};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void frame_unref(frame *f)
{
    if (f && atomic_fetch_sub(&f->refs, 1) == 1)
        free(f);
}

static void json_escape(char *out, size_t size, const char *text);

static int level_quality(const cugl_app_server *s, int level)
{
    return levels[level].quality < s->quality ? levels[level].quality : s->quality;
}

/* ---- Encoders ---------------------------------------------------------------- */

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

/* A frame of the slot's header fields and, at `level` (-1: none, the
 * header alone), `size` bytes of JPEG of a w x h picture; NULL without
 * memory. */
static frame *wrap_frame(cugl_app_server *s, const slot *sl, int level, uint64_t hash,
                         const unsigned char *jpeg, size_t size, int w, int h, double encode_ms,
                         const char *encoder)
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
    if (level >= 0)
        snprintf(f->json, sizeof f->json,
                 "%s,\"codec\":\"jpeg\",\"encoder\":\"%s\",\"quality\":%d,\"scale\":%d,"
                 "\"encode_ms\":%.3f",
                 sl->json, encoder, level_quality(s, level),
                 levels[level].scale, encode_ms);
    else
        snprintf(f->json, sizeof f->json, "%s", sl->json);
    if (size)
        memcpy(f->jpeg, jpeg, size);
    return f;
}

/* A frame of the slot's pixels: a JPEG at `level` by libjpeg-turbo, or
 * the header alone (level -1); NULL on failure. `scratch` holds a picture
 * scaled down on the CPU. */
static frame *make_frame(cugl_app_server *s, tjhandle tj, const slot *sl, int level,
                         uint64_t hash, uint8_t **scratch, size_t *scratch_size)
{
    unsigned char *jpeg = NULL;
    unsigned long jpeg_size = 0;
    int w = sl->width, h = sl->height;
    double t0 = now_s();
    if (level >= 0) {
        const uint8_t *pixels = sl->pixels;
        int f = levels[level].scale / sl->scale;
        if (f > 1) {
            size_t need = (size_t)(w / f) * (size_t)(h / f) * 4;
            if (need > *scratch_size) {
                uint8_t *p = realloc(*scratch, need);
                if (!p)
                    return NULL;
                *scratch = p;
                *scratch_size = need;
            }
            box_down(*scratch, pixels, w, h, f);
            pixels = *scratch;
            w /= f;
            h /= f;
        }
        /* GL's rows run bottom to top. */
        if (tjCompress2(tj, pixels, w, 0, h, TJPF_RGBA, &jpeg, &jpeg_size, TJSAMP_420,
                        level_quality(s, level), TJFLAG_BOTTOMUP | TJFLAG_FASTDCT) != 0) {
            cugl__app_notice("cugl_app_server: JPEG of a %d x %d frame: %s", w, h,
                             tjGetErrorStr2(tj));
            tjFree(jpeg);
            return NULL;
        }
    }
    frame *f = wrap_frame(s, sl, level, hash, jpeg, jpeg_size, w, h, 1e3 * (now_s() - t0),
                          "libjpeg-turbo");
    tjFree(jpeg);
    return f;
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

/* The size frames of `level` are expected to have (under the lock): as
 * seen lately, else level 0's guessed down; 0 before any frame. */
static double predict_bytes(const cugl_app_server *s, int level, double now)
{
    if (s->level_seen_s[level] > 0 && now - s->level_seen_s[level] < 2.0)
        return s->level_bytes[level];
    return s->bytes0 * levels[level].bytes;
}

/* A frame's JPEGs (made[l] at level l, or NULL) and header as the newest,
 * where they are; the sizes seen kept (under the lock). */
static void publish_frames(cugl_app_server *s, frame *made[LEVELS], frame *header, uint64_t hash)
{
    double now = now_s();
    for (int l = 0; l < LEVELS; l++) {
        if (!made[l])
            continue;
        double size = (double)made[l]->size;
        bool seen = s->level_seen_s[l] > 0 && now - s->level_seen_s[l] < 2.0;
        s->level_bytes[l] = seen ? 0.7 * s->level_bytes[l] + 0.3 * size : size;
        s->level_seen_s[l] = now;
        double b0 = size / levels[l].bytes;
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

static void video_stream_free(video_stream *vs)
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
static void drop_video(cugl_app_server *s, viewer *v)
{
    for (int i = 0; i < s->video_count; i++)
        if (s->video_list[i] == v->video)
            s->video_list[i] = s->video_list[--s->video_count];
    if (v->video->busy)
        v->video->dead = true;
    else
        video_stream_free(v->video);
    v->video = NULL;
}

#if CUGL_SERVE_VIDEO
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
        if (!vs->encoder)
            vs->encoder = cugl__video_new();
        unsigned char *bits =
            vs->encoder ? cugl__video_encode(vs->encoder, sl->pixels, sl->width, sl->height,
                                             sl->fps, kbps, key, &size, &is_key, why,
                                             sizeof why)
                        : NULL;
        frame *f = NULL;
        if (bits) {
            f = malloc(sizeof *f + size);
            if (f) {
                atomic_init(&f->refs, 1);
                f->number = sl->number;
                f->events = sl->events;
                f->time_s = sl->time_s;
                f->hash = 0;
                f->level = -2; /* video */
                f->width = sl->width & ~1;
                f->height = sl->height & ~1;
                f->size = size;
                f->encode_ms = 1e3 * (now_s() - t0);
                snprintf(f->json, sizeof f->json,
                         "%s,\"codec\":\"vp8\",\"encoder\":\"libvpx\",\"key\":%s,"
                         "\"bitrate\":%d,\"encode_ms\":%.3f",
                         sl->json, is_key ? "true" : "false", kbps, f->encode_ms);
                memcpy(f->jpeg, bits, size);
            }
            free(bits);
        } else {
            cugl__app_notice("cugl_app_server: %s", why);
        }
        pthread_mutex_lock(&s->lock);
        vs->busy = false;
        if (vs->dead) {
            frame_unref(f);
            video_stream_free(vs);
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

static void *encoder_main(void *arg)
{
    cugl_app_server *s = arg;
    prctl(PR_SET_NAME, "cugl-encoder"); /* what profilers and benchmarks see */
    tjhandle tj = tjInitCompress();
    uint8_t *scratch = NULL;
    size_t scratch_size = 0;
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
            if ((want >> l & 1) && tj && levels[l].scale >= sl->scale &&
                sl->width * sl->scale / levels[l].scale >= 16 &&
                sl->height * sl->scale / levels[l].scale >= 16)
                made[l] = make_frame(s, tj, sl, l, hash, &scratch, &scratch_size);
        frame *header = make_frame(s, tj, sl, -1, hash, &scratch, &scratch_size);

        pthread_mutex_lock(&s->lock);
        sl->state = SLOT_FREE;
        publish_frames(s, made, header, hash);
        pthread_mutex_unlock(&s->lock);
        lws_cancel_service(s->lws); /* the network thread sends them */
        pthread_mutex_lock(&s->lock);
    }
    pthread_mutex_unlock(&s->lock);
    free(scratch);
    if (tj)
        tjDestroy(tj);
    return NULL;
}

/* ---- The network thread --------------------------------------------------------- */

/* Whether the request's URL carries the server's token (or none is needed). */
static bool token_ok(cugl_app_server *s, struct lws *wsi)
{
    if (!s->token[0])
        return true;
    char buf[CUGL_APP_SERVE_MAX_TOKEN + 16];
    const char *got = lws_get_urlarg_by_name(wsi, "token=", buf, (int)sizeof buf);
    if (!got || strlen(got) != strlen(s->token))
        return false;
    /* Compare every byte, whatever the first that differs. */
    unsigned char diff = 0;
    for (size_t i = 0; s->token[i]; i++)
        diff |= (unsigned char)(got[i] ^ s->token[i]);
    return diff == 0;
}

static cugl_app_server *server_of(struct lws *wsi)
{
    return lws_context_user(lws_get_context(wsi));
}

static int http_reply(struct lws *wsi, unsigned status, const char *type, size_t length)
{
    unsigned char buf[LWS_PRE + 512], *p = buf + LWS_PRE, *end = buf + sizeof buf;
    if (lws_add_http_common_headers(wsi, status, type, (lws_filepos_t)length, &p, end) ||
        lws_add_http_header_by_name(wsi, (const unsigned char *)"cache-control:",
                                    (const unsigned char *)"no-store", 8, &p, end) ||
        lws_add_http_header_by_name(wsi, (const unsigned char *)"x-content-type-options:",
                                    (const unsigned char *)"nosniff", 7, &p, end) ||
        lws_finalize_write_http_header(wsi, buf + LWS_PRE, &p, end))
        return -1;
    return 0;
}

/* Whether the upgrade asks for the subprotocol `name` among those it lists. */
static bool offers_subprotocol(struct lws *wsi, const char *name)
{
    char list[256];
    if (lws_hdr_copy(wsi, list, (int)sizeof list, WSI_TOKEN_PROTOCOL) <= 0)
        return false;
    for (char *save = NULL, *p = strtok_r(list, ", \t", &save); p;
         p = strtok_r(NULL, ", \t", &save))
        if (strcmp(p, name) == 0)
            return true;
    return false;
}

/* Whether `host` (a Host header: a name or literal, a port after it) is one
 * a server without a token answers to: an IP address, "localhost", or the
 * name it listens on as given. A web page elsewhere whose name is made to
 * resolve to this host (DNS rebinding) sends its own name. */
static bool host_allowed(const cugl_app_server *s, const char *host)
{
    char name[256];
    size_t n;
    if (host[0] == '[') { /* an IPv6 literal */
        n = strcspn(host + 1, "]");
        if (host[1 + n] != ']' || n >= sizeof name)
            return false;
        memcpy(name, host + 1, n);
        name[n] = '\0';
        struct in6_addr a6;
        return inet_pton(AF_INET6, name, &a6) == 1;
    }
    n = strcspn(host, ":");
    if (n >= sizeof name)
        return false;
    memcpy(name, host, n);
    name[n] = '\0';
    struct in_addr a4;
    return inet_pton(AF_INET, name, &a4) == 1 || strcasecmp(name, "localhost") == 0 ||
           strcasecmp(name, s->listen_name) == 0;
}

/* Without a token, whether a WebSocket may be opened from where this one
 * comes: any web page the user has open could otherwise watch and drive
 * the program (browsers let pages open WebSockets anywhere, sending their
 * Origin). A request without an Origin is no browser's page. */
static bool origin_allowed(const cugl_app_server *s, struct lws *wsi, const char **why)
{
    char host[256], origin[300];
    if (lws_hdr_copy(wsi, host, (int)sizeof host, WSI_TOKEN_HOST) <= 0 ||
        !host_allowed(s, host)) {
        *why = "without a token this server answers only to an IP address, localhost or its "
               "own name";
        return false;
    }
    int n = lws_hdr_copy(wsi, origin, (int)sizeof origin, WSI_TOKEN_ORIGIN);
    if (n == 0 && lws_hdr_total_length(wsi, WSI_TOKEN_ORIGIN) == 0)
        return true;
    const char *rest = n < 0                                   ? NULL
                       : strncasecmp(origin, "http://", 7) == 0  ? origin + 7
                       : strncasecmp(origin, "https://", 8) == 0 ? origin + 8
                                                                 : NULL;
    if (!rest || strcasecmp(rest, host) != 0) {
        *why = "without a token this server takes WebSockets from its own page alone";
        return false;
    }
    return true;
}

/* The HTTP status that refuses an upgrade, with why; 0 where its path,
 * token, origin, subprotocol and the viewer count all allow it. */
static unsigned upgrade_refusal(cugl_app_server *s, struct lws *wsi, const char **why)
{
    char uri[64];
    if (lws_hdr_copy(wsi, uri, (int)sizeof uri, WSI_TOKEN_GET_URI) <= 0 ||
        strcmp(uri, "/ws") != 0)
        return *why = "the WebSocket is /ws", HTTP_STATUS_NOT_FOUND;
    if (!token_ok(s, wsi))
        return *why = "this server wants ?token=...", HTTP_STATUS_FORBIDDEN;
    if (!s->token[0] && !origin_allowed(s, wsi, why))
        return HTTP_STATUS_FORBIDDEN;
    if (!offers_subprotocol(wsi, CUGL_APP_SERVE_SUBPROTOCOL))
        return *why = "the WebSocket's subprotocol must be " CUGL_APP_SERVE_SUBPROTOCOL,
               HTTP_STATUS_BAD_REQUEST;
    if (atomic_load(&s->viewers) >= CUGL_APP_SERVE_MAX_VIEWERS)
        return *why = "too many viewers", HTTP_STATUS_SERVICE_UNAVAILABLE;
    return 0;
}

/* An upgrade is answered with an HTTP status where it is refused: >0. */
static int confirm_upgrade(cugl_app_server *s, struct lws *wsi)
{
    const char *why = NULL;
    unsigned status = upgrade_refusal(s, wsi, &why);
    if (!status)
        return 0;
    return lws_return_http_status(wsi, status, why) ? -1 : 1;
}

static int http_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                         size_t len)
{
    cugl_app_server *s = server_of(wsi);
    switch (reason) {
    case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
        return confirm_upgrade(s, wsi);
    case LWS_CALLBACK_HTTP: {
        const char *uri = in;
        if (strcmp(uri, "/") != 0 && strcmp(uri, "/index.html") != 0) {
            static const char body[] = "not found\n";
            if (http_reply(wsi, HTTP_STATUS_NOT_FOUND, "text/plain", sizeof body - 1) ||
                lws_write(wsi, (unsigned char *)body, sizeof body - 1, LWS_WRITE_HTTP_FINAL) < 0)
                return -1;
            return lws_http_transaction_completed(wsi) ? -1 : 0;
        }
        if (!token_ok(s, wsi)) {
            static const char body[] = "forbidden: this server wants ?token=...\n";
            if (http_reply(wsi, HTTP_STATUS_FORBIDDEN, "text/plain", sizeof body - 1) ||
                lws_write(wsi, (unsigned char *)body, sizeof body - 1, LWS_WRITE_HTTP_FINAL) < 0)
                return -1;
            return lws_http_transaction_completed(wsi) ? -1 : 0;
        }
        if (http_reply(wsi, HTTP_STATUS_OK, "text/html; charset=utf-8",
                       cugl_serve_page_html_size))
            return -1;
        lws_callback_on_writable(wsi);
        return 0;
    }
    case LWS_CALLBACK_HTTP_WRITEABLE: {
        /* The page in one write; lws keeps what the socket does not take. */
        unsigned char *page = malloc(LWS_PRE + cugl_serve_page_html_size);
        if (!page)
            return -1;
        memcpy(page + LWS_PRE, cugl_serve_page_html, cugl_serve_page_html_size);
        int n = lws_write(wsi, page + LWS_PRE, cugl_serve_page_html_size, LWS_WRITE_HTTP_FINAL);
        free(page);
        if (n < 0)
            return -1;
        return lws_http_transaction_completed(wsi) ? -1 : 0;
    }
    default:
        return lws_callback_http_dummy(wsi, reason, user, in, len);
    }
}

static const struct lws_protocols protocols[3]; /* http, frames, the end */
static void gpu_job_done(void *user);

/* ---- Viewers: what each is sent ------------------------------------------------ */

/* The frame rate `v` wants: the program's (at most 60) while its input
 * arrives, else half of it, down to 10. */
static double target_fps(const cugl_app_server *s, const viewer *v, double now)
{
    double fps = fmin(s->fps > 0 ? s->fps : 60, 60);
    if (v->last_input_s > 0 && now - v->last_input_s < INTERACTING_S)
        return fps;
    return fmax(fps / 2, fmin(fps, 10));
}

/* The best level whose frames fit `budget` bytes (under the lock). */
static int level_for(const cugl_app_server *s, double budget, double now)
{
    for (int l = 0; l < LEVELS; l++)
        if (predict_bytes(s, l, now) <= budget)
            return l;
    return LEVELS - 1;
}

/* The level a still picture is sent at: the best whose frame takes at
 * most REFINE_S on `v`'s link, never worse than its live level. */
static int refine_level(const cugl_app_server *s, const viewer *v, double now)
{
    if (v->throughput <= 0)
        return 0;
    int l = level_for(s, v->throughput * REFINE_S, now);
    return l < v->level ? l : v->level;
}

/* `v`'s level from its measured link (under the lock): worse at once,
 * better at most every LEVEL_UP_S and with a margin. */
static void adapt(cugl_app_server *s, viewer *v, double now)
{
    if (v->throughput <= 0)
        return;
    double budget = v->throughput * HEADROOM / target_fps(s, v, now);
    int best = level_for(s, budget, now);
    if (best > v->level) {
        v->level = best;
        v->level_s = now;
    } else if (best < v->level && now - v->level_s >= LEVEL_UP_S) {
        int up = level_for(s, budget / 1.2, now);
        if (up < v->level) {
            v->level = up;
            v->level_s = now;
        }
    }
}

/* The levels viewers with room want, for the encoders (under the lock). */
static void update_wants(cugl_app_server *s)
{
    unsigned live = 0, now_want = 0;
    double now = now_s();
    for (int i = 0; i < atomic_load(&s->viewers) && s->viewer_list[i]; i++) {
        viewer *v = s->viewer_list[i];
        if (v->video)
            v->video->room = v->unacked + v->video->ready_count < s->window;
        if (v->unacked >= s->window)
            continue;
        if (v->video) {
            if (v->video->room) {
                live |= VIDEO_WANT;
                now_want |= VIDEO_WANT;
            }
            continue;
        }
        live |= 1u << v->level;
        if (!s->header || s->hash != v->shown_hash)
            now_want |= 1u << v->level;
        else if (v->shown_level > refine_level(s, v, now))
            now_want |= 1u << refine_level(s, v, now);
    }
    atomic_store(&s->want_live, live);
    atomic_store(&s->want_now, now_want);
}

/* `v`'s numbers for cugl_app_server_viewer (under the lock). */
static void note_stats(cugl_app_server *s, const viewer *v)
{
    s->viewer_stats[v->index] = (cugl_app_server_viewer_stats){
        .rtt_ms = v->rtt_min_at > 0 ? 1e3 * v->rtt_min_s : -1,
        .throughput = v->throughput,
        .input_ms = v->input_ms,
        .quality = level_quality(s, v->level),
        .scale = levels[v->level].scale,
        .unacked = v->unacked,
        .sent = v->sent_count,
        .acked = v->acked_count,
    };
}

/* What `v` is sent next, referenced, or NULL (under the lock): its
 * level's newest picture when the picture changed; when it did not, a
 * better frame of it if its link carries one, else the header alone. */
static frame *next_for(cugl_app_server *s, const viewer *v, double now)
{
    frame *h = s->header, *f = NULL;
    if (!h || h->number <= v->sent)
        return NULL;
    if (h->hash == v->shown_hash) {
        int refine = refine_level(s, v, now);
        frame *r = s->newest[refine];
        if (v->shown_level <= refine)
            f = h;
        else if (r && r->hash == h->hash && r->number > v->sent)
            f = r;
    } else {
        frame *n = s->newest[v->level];
        if (n && n->number > v->sent)
            f = n;
    }
    if (f)
        atomic_fetch_add(&f->refs, 1);
    return f;
}

/*
 * Write on the message being sent, no more than the kernel takes now: the
 * bytes it holds unsent stay under NOTSENT_LOWAT, so a write is never
 * partial and libwebsockets never keeps a part of ours to send later (its
 * 4.1 spins in a close while it holds some and the peer is gone). A
 * message goes as one WebSocket message of fragments. False: failed.
 */
static bool write_on(struct lws *wsi, viewer *v)
{
    int fd = lws_get_socket_fd(wsi), unsent = 0;
    size_t room = 16 << 10;
    if (fd >= 0 && ioctl(fd, SIOCOUTQNSD, &unsent) == 0)
        room = unsent < NOTSENT_LOWAT ? (size_t)(NOTSENT_LOWAT - unsent) : 0;
    size_t n = v->out_size - v->out_off;
    if (n > room)
        n = room;
    if (n == 0 && v->out_off < v->out_size) {
        lws_callback_on_writable(wsi);
        return true;
    }
    int flags = (v->out_off == 0 ? LWS_WRITE_BINARY : LWS_WRITE_CONTINUATION) |
                (v->out_off + n < v->out_size ? LWS_WRITE_NO_FIN : 0);
    /* The LWS_PRE bytes before this part, sent already, take its header. */
    if (lws_write(wsi, v->out + LWS_PRE + v->out_off, n, (enum lws_write_protocol)flags) <
        (int)n)
        return false;
    v->out_off += n;
    if (v->out_off < v->out_size)
        lws_callback_on_writable(wsi);
    return true;
}

/* Send `v` its next frame if it has room (or more of the one being sent):
 * false when the connection failed. */
static bool send_next(cugl_app_server *s, struct lws *wsi, viewer *v)
{
    if (v->out_off < v->out_size)
        return write_on(wsi, v);
    if (v->unacked >= s->window)
        return true;
    double now = now_s();
    pthread_mutex_lock(&s->lock);
    frame *f = NULL;
    if (v->video && v->video->ready_count) {
        f = v->video->ready[0]; /* the reference passes to us */
        memmove(v->video->ready, v->video->ready + 1,
                (size_t)--v->video->ready_count * sizeof v->video->ready[0]);
    } else if (!v->video) {
        f = next_for(s, v, now);
    }
    pthread_mutex_unlock(&s->lock);
    if (!f)
        return true;
    char mine[VIEWER_JSON_MAX], why[2 * sizeof v->codec_why];
    json_escape(why, sizeof why, v->codec_why);
    int n = snprintf(mine, sizeof mine,
                     ",\"rtt_ms\":%.1f,\"throughput\":%.0f,\"input_ms\":%.1f,\"window\":%d,"
                     "\"unacked\":%d,\"level\":%d,\"interacting\":%s,\"time\":%.6f,"
                     "\"codec_why\":\"%s\"}",
                     v->rtt_min_at > 0 ? 1e3 * v->rtt_min_s : -1.0, v->throughput,
                     v->input_ms, s->window, v->unacked + 1, v->level,
                     v->last_input_s > 0 && now - v->last_input_s < INTERACTING_S ? "true"
                                                                                  : "false",
                     f->time_s, why);
    size_t json = strlen(f->json) + (size_t)n, size = 4 + json + f->size;
    if (LWS_PRE + size > v->out_cap) {
        unsigned char *p = realloc(v->out, LWS_PRE + size);
        if (!p) {
            frame_unref(f);
            return false;
        }
        v->out = p;
        v->out_cap = LWS_PRE + size;
    }
    unsigned char *m = v->out + LWS_PRE;
    for (int i = 0; i < 4; i++)
        m[i] = (unsigned char)(json >> (8 * i) & 0xff);
    memcpy(m + 4, f->json, strlen(f->json));
    memcpy(m + 4 + strlen(f->json), mine, (size_t)n);
    memcpy(m + 4 + json, f->jpeg, f->size);
    if (v->unacked == 0)
        lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, s->ack_timeout_s);
    v->flight[v->unacked++] = (in_flight){
        .number = f->number, .events = f->events, .sent_s = now, .bytes = size};
    v->sent = f->number;
    v->sent_count++;
    if (f->level >= 0) {
        v->shown_hash = f->hash;
        v->shown_level = f->level;
    }
    frame_unref(f);
    v->out_size = size;
    v->out_off = 0;
    atomic_fetch_add(&s->sent, 1);
    return write_on(wsi, v);
}

/* The bitrate `v`'s video starts at: half of what its link carried, 1
 * Mbit/s before that is known. */
static int video_kbps(const viewer *v)
{
    double kbps = v->throughput > 0 ? v->throughput * 8 / 1e3 * VIDEO_SHARE : 1000;
    return (int)fmin(fmax(kbps, 150), 40000);
}

/* The bitrate by delay, as real-time video does: a frame that waited
 * (its delivery beyond the round trip) more than VIDEO_QUEUE_HIGH_S cuts
 * it by 30%, one that did not wait past VIDEO_QUEUE_LOW_S raises it by 3%,
 * each at most every VIDEO_RATE_S. */
static void video_rate(viewer *v, double queued_s, double now)
{
    if (now - v->video_rate_s < VIDEO_RATE_S)
        return;
    double kbps = v->video_kbps;
    if (queued_s > VIDEO_QUEUE_HIGH_S)
        kbps *= 0.7;
    else if (queued_s < VIDEO_QUEUE_LOW_S)
        kbps *= 1.03;
    else
        return;
    /* Never above most of what the link carried: a queue that fills at
     * the link's bottleneck loses packets, and TCP's retransmissions cost
     * hundreds of milliseconds. */
    if (v->throughput > 0)
        kbps = fmin(kbps, v->throughput * 8 / 1e3 * VIDEO_CAP);
    v->video_kbps = fmin(fmax(kbps, 150), 40000);
    v->video_rate_s = now;
}

/* Which codec `v` gets and why: as asked for, where its page and this
 * build can; else video on narrow links, JPEG on wide ones (with
 * hysteresis, and kept at least CODEC_HOLD_S). Starts or ends its video
 * stream (under the lock). */
static void choose_codec(cugl_app_server *s, viewer *v, double now)
{
    viewer_codec want = CODEC_JPEG;
    char why[sizeof v->codec_why];
    double mbit = v->throughput * 8 / 1e6;
    if (!CUGL_SERVE_VIDEO) {
        snprintf(why, sizeof why, "JPEG: this cugl has no video codec (built without libvpx)");
    } else if (s->codec == CUGL_APP_SERVE_CODEC_JPEG) {
        snprintf(why, sizeof why, "JPEG, as the server was told");
    } else if (!v->can_video) {
        snprintf(why, sizeof why, "JPEG: the page cannot decode VP8 (%s)",
                 v->page_why[0] ? v->page_why : "it did not say it can");
    } else if (s->codec == CUGL_APP_SERVE_CODEC_VIDEO) {
        want = CODEC_VIDEO;
        snprintf(why, sizeof why, "video, as the server was told");
    } else if (v->throughput <= 0) {
        want = v->codec;
        snprintf(why, sizeof why, "%s: the link is not measured yet",
                 v->codec == CODEC_VIDEO ? "video" : "JPEG");
    } else if (now - v->codec_s < CODEC_HOLD_S) {
        want = v->codec;
        snprintf(why, sizeof why, "%s", v->codec_why);
    } else if (v->codec == CODEC_VIDEO ? mbit * 1e6 < JPEG_ABOVE_BPS
                                       : mbit * 1e6 < VIDEO_BELOW_BPS) {
        want = CODEC_VIDEO;
        snprintf(why, sizeof why, "video: the link carries %.1f Mbit/s (JPEG above %.0f)", mbit,
                 JPEG_ABOVE_BPS / 1e6);
    } else {
        snprintf(why, sizeof why, "JPEG: the link carries %.1f Mbit/s (video below %.0f)", mbit,
                 VIDEO_BELOW_BPS / 1e6);
    }
    if (want == CODEC_VIDEO && !v->video && s->video_count >= VIDEO_STREAMS) {
        want = CODEC_JPEG;
        snprintf(why, sizeof why,
                 "JPEG: %d viewers get video already (at most %d: each has an encoder of its "
                 "own)",
                 s->video_count, VIDEO_STREAMS);
    }
    snprintf(v->codec_why, sizeof v->codec_why, "%s", why);
    if (v->video)
        v->video->kbps = (int)v->video_kbps;
    if (want == v->codec)
        return;
    /* Its codec is video exactly while it has a stream. */
    video_stream *vs = want == CODEC_VIDEO ? calloc(1, sizeof *vs) : NULL;
    if (want == CODEC_VIDEO && !vs) {
        snprintf(v->codec_why, sizeof v->codec_why, "JPEG: no memory for a video stream");
        return;
    }
    v->codec = want;
    v->codec_s = now;
    if (vs) {
        vs->key = true;
        vs->last = v->sent;
        v->video_kbps = video_kbps(v);
        v->video_rate_s = now;
        vs->kbps = (int)v->video_kbps;
        s->video_list[s->video_count++] = vs;
        v->video = vs;
    } else if (want == CODEC_JPEG && v->video) {
        drop_video(s, v);
        v->shown_hash = 0; /* a whole picture next */
    }
}

/* "ack N HELD": frame N and those before it are shown, N HELD ms after it
 * arrived. Measures `v`'s link and adapts its level. False: an ack of a
 * frame never sent to it, or a HELD out of range; the viewer goes. */
static bool take_ack(cugl_app_server *s, viewer *v, long number, double held_ms)
{
    if (!(held_ms >= 0 && held_ms <= HELD_MAX_MS) || number > v->sent)
        return false;
    if (number <= v->acked)
        return true; /* late or repeated: nothing new */
    int k = 0;
    while (k < v->unacked && v->flight[k].number != number)
        k++;
    if (k == v->unacked)
        return false;
    in_flight e = v->flight[k];
    v->unacked -= k + 1;
    memmove(v->flight, v->flight + k + 1, (size_t)v->unacked * sizeof v->flight[0]);
    /* While it owes acks, the timeout starts again at each one. */
    lws_set_timeout(v->wsi, v->unacked ? PENDING_TIMEOUT_USER_OK : NO_PENDING_TIMEOUT,
                    v->unacked ? s->ack_timeout_s : 0);
    v->acked = number;
    v->acked_count += k + 1;

    /* On this clock, the frame's arrival at the page plus the way back. */
    double now = now_s(), arrival = now - held_ms / 1e3;
    double delivery = arrival - e.sent_s;
    /* Its time on the link: from the previous frame's arrival if it was
     * still on its way when this one was sent, else from its sending less
     * the round trip. */
    double rtt = v->rtt_min_at > 0 ? v->rtt_min_s : 0;
    double busy = v->last_arrival_s > e.sent_s ? arrival - v->last_arrival_s
                                               : delivery - rtt;
    /* The first frame's time holds the page's start: not a measure. */
    if (busy > 1e-3 && v->acked_count > k + 1 &&
        (!v->video || e.bytes >= VIDEO_SAMPLE_MIN_BYTES)) {
        double rate = (double)e.bytes / busy;
        v->throughput = v->throughput > 0 ? 0.7 * v->throughput + 0.3 * rate : rate;
    }
    v->last_arrival_s = arrival;
    double rtt_sample = delivery - (v->throughput > 0 ? (double)e.bytes / v->throughput : 0);
    rtt_sample = fmax(rtt_sample, 0);
    if (v->rtt_min_at == 0 || rtt_sample <= v->rtt_min_s || now - v->rtt_min_at > RTT_WINDOW_S) {
        v->rtt_min_s = rtt_sample;
        v->rtt_min_at = now;
    }
    if (v->video)
        video_rate(v, delivery - (v->rtt_min_at > 0 ? v->rtt_min_s : 0), now);
    if (v->input_s > 0 && e.events >= v->input_events) {
        v->input_ms = 1e3 * (now - v->input_s);
        v->input_s = 0;
    }
    pthread_mutex_lock(&s->lock);
    adapt(s, v, now);
    choose_codec(s, v, now);
    update_wants(s);
    note_stats(s, v);
    pthread_mutex_unlock(&s->lock);
    return true;
}

/* A page's message: lines, each an ack or an event into the context's
 * input. False: a line that is neither (or an event a viewer may not
 * send, or an ack that lies); the viewer goes. */
static bool take_lines(cugl_app_server *s, viewer *v, char *text)
{
    bool input = false;
    for (char *line = text, *next; line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        size_t n = strlen(line);
        if (n && line[n - 1] == '\r')
            line[--n] = '\0';
        if (n == 0)
            continue;
        if (strncmp(line, "codecs ", 7) == 0) {
            /* "codecs vp8", or "codecs none WHY": what the page decodes. */
            v->can_video = strcmp(line + 7, "vp8") == 0;
            snprintf(v->page_why, sizeof v->page_why, "%s",
                     strncmp(line + 7, "none ", 5) == 0 ? line + 12 : "");
            pthread_mutex_lock(&s->lock);
            v->codec_s = 0;
            choose_codec(s, v, now_s());
            update_wants(s);
            pthread_mutex_unlock(&s->lock);
            continue;
        }
        if (strcmp(line, "key") == 0) {
            pthread_mutex_lock(&s->lock);
            if (v->video)
                v->video->key = true;
            pthread_mutex_unlock(&s->lock);
            continue;
        }
        if (strncmp(line, "ack ", 4) == 0) {
            char *end = NULL;
            long number = strtol(line + 4, &end, 10);
            double held = end && *end == ' ' ? strtod(end + 1, &end) : -1;
            if (!end || *end != '\0' || !take_ack(s, v, number, held))
                return false;
            continue;
        }
        cugl_app_event ev;
        if (cugl_app_event_parse(&ev, line) != CUGL_OK || ev.type == CUGL_APP_EVENT_CLOSE ||
            (ev.type == CUGL_APP_EVENT_RESIZE && (ev.width > CUGL_APP_SERVE_MAX_RESIZE ||
                                                  ev.height > CUGL_APP_SERVE_MAX_RESIZE)))
            return false;
        /* Escape closes a program where its window reports it: a viewer's
         * is not passed on, as its close is refused (the page's Escape
         * leaves full-window mode). */
        if (ev.type == CUGL_APP_EVENT_KEY && ev.code == CUGL_APP_KEY_ESCAPE)
            continue;
        ev.frame = 0;
        /* Each viewer's share of what waits for the next present: one that
         * floods loses itself, never another. */
        if (cugl__app_push_shared(s->ctx, &ev, &v->events, VIEWER_EVENTS, "cugl_app_server") !=
            CUGL_OK)
            return false;
        atomic_fetch_add(&s->events, 1);
        input = true;
    }
    if (input) {
        double now = now_s();
        if (v->input_s == 0) {
            v->input_s = now;
            v->input_events = atomic_load(&s->events);
        }
        v->last_input_s = now;
    }
    return true;
}

/* A new viewer: its socket keeps little unsent, and sends at once. */
static void viewer_start(cugl_app_server *s, struct lws *wsi, viewer *v)
{
    int fd = lws_get_socket_fd(wsi), sndbuf = SNDBUF_BYTES, lowat = NOTSENT_LOWAT, one = 1;
    if (fd >= 0) {
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
        setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lowat, sizeof lowat);
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    *v = (viewer){.wsi = wsi, .started = true, .sent = -1, .acked = -1,
                  .shown_level = LEVELS, .input_ms = -1, .codec = CODEC_JPEG};
    pthread_mutex_lock(&s->lock);
    v->index = atomic_load(&s->viewers);
    s->viewer_list[v->index] = v;
    atomic_fetch_add(&s->viewers, 1);
    s->viewer_stats_count = v->index + 1;
    choose_codec(s, v, now_s());
    note_stats(s, v);
    update_wants(s);
    pthread_mutex_unlock(&s->lock);
}

static void viewer_end(cugl_app_server *s, viewer *v)
{
    pthread_mutex_lock(&s->lock);
    int last = atomic_load(&s->viewers) - 1;
    s->viewer_list[v->index] = s->viewer_list[last];
    s->viewer_list[v->index]->index = v->index;
    s->viewer_stats[v->index] = s->viewer_stats[last];
    s->viewer_list[last] = NULL;
    atomic_fetch_sub(&s->viewers, 1);
    if (v->video)
        drop_video(s, v);
    s->viewer_stats_count = last;
    update_wants(s);
    pthread_mutex_unlock(&s->lock);
    free(v->out);
    v->out = NULL;
    v->started = false;
}

static int ws_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                       size_t len)
{
    cugl_app_server *s = server_of(wsi);
    viewer *v = user;
    switch (reason) {
    case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
    {
        /* confirm_upgrade answered every refusal with a status already. */
        const char *why;
        return upgrade_refusal(s, wsi, &why) != 0;
    }
    case LWS_CALLBACK_ESTABLISHED:
        viewer_start(s, wsi, v);
        lws_callback_on_writable(wsi);
        return 0;
    case LWS_CALLBACK_CLOSED:
        if (v && v->started)
            viewer_end(s, v);
        return 0;
    case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
        pthread_mutex_lock(&s->lock);
        update_wants(s);
        pthread_mutex_unlock(&s->lock);
        lws_callback_on_writable_all_protocol(lws_get_context(wsi), &protocols[1]);
        return 0;
    case LWS_CALLBACK_SERVER_WRITEABLE:
        if (atomic_load(&s->network_stop))
            return -1;
        return send_next(s, wsi, v) ? 0 : -1;
    case LWS_CALLBACK_RECEIVE:
        if (lws_frame_is_binary(wsi) || v->rx_size + len > CUGL_APP_SERVE_MAX_MESSAGE)
            return -1; /* not ours to take: the viewer goes, the program stays */
        memcpy(v->rx + v->rx_size, in, len);
        v->rx_size += len;
        if (lws_is_final_fragment(wsi) && lws_remaining_packet_payload(wsi) == 0) {
            v->rx[v->rx_size] = '\0';
            int unacked = v->unacked;
            bool ok = strlen(v->rx) == v->rx_size && take_lines(s, v, v->rx);
            v->rx_size = 0;
            if (!ok)
                return -1;
            if (v->unacked < unacked)
                lws_callback_on_writable(wsi); /* room for the next frame */
        }
        return 0;
    default:
        return 0;
    }
}

static const struct lws_protocols protocols[3] = {
    {"http", http_callback, 0, 0, 0, NULL, 0},
    /* tx_packet_size: what libwebsockets writes at once, more than the
     * parts write_on gives it (by default its rx size, 4096: the rest of
     * every part would wait in its buffer). */
    {CUGL_APP_SERVE_SUBPROTOCOL, ws_callback, sizeof(viewer), CUGL_APP_SERVE_MAX_MESSAGE, 0, NULL,
     2 * NOTSENT_LOWAT},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

static void *network_main(void *arg)
{
    cugl_app_server *s = arg;
    prctl(PR_SET_NAME, "cugl-network");
    while (!atomic_load(&s->network_stop))
        if (lws_service(s->lws, 0) < 0)
            break;
    return NULL;
}

/* ---- Create and destroy ------------------------------------------------------- */

/* Why the numeric `address`:`port` cannot be listened on, from a bind of
 * our own; true where our bind worked (what failed was libwebsockets'). */
static bool bind_failure(char *why, size_t size, const char *address, int port)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV}, *ai = NULL;
    char service[16];
    snprintf(service, sizeof service, "%d", port);
    int rc = getaddrinfo(address, service, &hints, &ai);
    if (rc != 0) {
        snprintf(why, size, "%s", gai_strerror(rc));
        return false;
    }
    int fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    bool bindable = fd >= 0 && bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 1) == 0;
    if (!bindable)
        snprintf(why, size, "%s%s", strerror(errno),
                 errno == EADDRNOTAVAIL ? " (not an address of this host)" : "");
    else
        snprintf(why, size, "libwebsockets could not listen there");
    if (fd >= 0)
        close(fd);
    freeaddrinfo(ai);
    return bindable;
}

/* Whether `address` is the C library's numeric shorthand ("0", "2130706433",
 * "127.1", "0x7f.1"), which getaddrinfo takes as an IPv4 address although it
 * is neither a dotted address nor a name: "0" is every address of the
 * host, and reads like a port. */
static bool numeric_shorthand(const char *address)
{
    struct in_addr v4;
    struct in6_addr v6;
    if (inet_pton(AF_INET, address, &v4) == 1 || inet_pton(AF_INET6, address, &v6) == 1)
        return false;
    struct addrinfo hints = {.ai_family = AF_INET, .ai_flags = AI_NUMERICHOST}, *ai = NULL;
    if (getaddrinfo(address, NULL, &hints, &ai) != 0)
        return false;
    freeaddrinfo(ai);
    return true;
}

/* The numeric addresses `address` names: a literal itself, a host name
 * each IPv4 and IPv6 address it resolves to, once. Their count, or 0 with
 * the reason in `why`. */
static int resolve(cugl_app_server *s, const char *address, char *why, size_t size)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai = NULL;
    int rc = getaddrinfo(address, NULL, &hints, &ai);
    if (rc != 0) {
        snprintf(why, size, "%s", gai_strerror(rc));
        return 0;
    }
    int n = 0;
    for (struct addrinfo *a = ai; a && n < CUGL_APP_SERVE_MAX_ADDRESSES; a = a->ai_next) {
        char host[sizeof s->addresses[0]];
        if ((a->ai_family != AF_INET && a->ai_family != AF_INET6) ||
            getnameinfo(a->ai_addr, a->ai_addrlen, host, sizeof host, NULL, 0, NI_NUMERICHOST))
            continue;
        bool seen = false;
        for (int i = 0; i < n; i++)
            seen = seen || strcmp(s->addresses[i], host) == 0;
        if (!seen)
            memcpy(s->addresses[n++], host, sizeof host);
    }
    freeaddrinfo(ai);
    if (n == 0)
        snprintf(why, size, "it names no IPv4 or IPv6 address");
    return n;
}

/* A vhost listening on s->addresses[i] alone (an IPv4 address without the
 * IPv6 wildcard libwebsockets would otherwise bind), or NULL. */
static struct lws_vhost *listen_on(cugl_app_server *s, int i, int port)
{
    const char *address = s->addresses[i];
    snprintf(s->vhost_names[i], sizeof s->vhost_names[i], "cugl-%d", i);
    struct lws_context_creation_info info = {0};
    info.vhost_name = s->vhost_names[i];
    info.iface = address;
    info.port = port;
    info.protocols = protocols;
    info.options = LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND | LWS_SERVER_OPTION_VALIDATE_UTF8;
    if (s->cert[0]) {
        info.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
        info.ssl_cert_filepath = s->cert;
        info.ssl_private_key_filepath = s->key;
    }
    if (!strchr(address, ':'))
        info.options |= LWS_SERVER_OPTION_DISABLE_IPV6;
    return lws_create_vhost(s->lws, &info);
}

/* Listen on every address `address` names, all on one port: a literal must
 * be bound; of a host name's addresses, those this host cannot bind are left
 * out, and at least one must be bound. */
static cugl_status listen_all(cugl_app_server *s, const char *who, const char *address, int port)
{
    char why[256] = "";
    if (numeric_shorthand(address))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "cannot serve on %s: it is neither a dotted or colon address nor a "
                          "name (every address of this host is 0.0.0.0, or :: with IPv6; "
                          "loopback is 127.0.0.1)",
                          address);
    int count = resolve(s, address, why, sizeof why);
    if (count == 0)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "cannot serve on %s: %s",
                          address, why);
    bool literal = count == 1 && strcmp(s->addresses[0], address) == 0;
    int bound = 0;
    bool bindable = false;
    lws_set_log_level(0, NULL); /* its bind errors: ours say more */
    for (int i = 0; i < count; i++) {
        struct lws_vhost *vh = listen_on(s, i, s->port ? s->port : port);
        int got = vh ? lws_get_vhost_listen_port(vh) : 0;
        if (got > 0) {
            s->port = got;
            if (bound != i)
                memcpy(s->addresses[bound], s->addresses[i], sizeof s->addresses[i]);
            bound++;
            continue;
        }
        if (vh)
            lws_vhost_destroy(vh);
        if (!why[0] || literal)
            bindable = bind_failure(why, sizeof why, s->addresses[i], s->port ? s->port : port);
        if (literal)
            break;
    }
    lws_set_log_level(LLL_ERR, NULL);
    s->address_count = bound;
    if (bound == 0 && bindable && s->cert[0])
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "cannot serve HTTPS with the certificate %s and the key %s: "
                          "libwebsockets could not load them (a key that does not match the "
                          "certificate?); %s port %d itself can be bound",
                          s->cert, s->key, s->addresses[0], s->port ? s->port : port);
    if (bound == 0)
        return cugl__fail(CUGL_ERROR_INVALID_STATE, who,
                          "cannot serve on %s%s%s%s port %d: %s", address,
                          literal ? "" : " (", literal ? "" : s->addresses[0],
                          literal ? "" : ")", port, why);
    return CUGL_OK;
}

/* A PEM file of `what` (its marker within its first 64 KiB), readable. */
static cugl_status check_pem(const char *path, const char *what, const char *marker,
                             const char *who)
{
    FILE *f = strlen(path) < 512 ? fopen(path, "rb") : NULL;
    if (!f)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "cannot read the %s %s: %s", what,
                          path, strlen(path) < 512 ? strerror(errno) : "the path is too long");
    enum { HEAD = 65536 };
    char *text = malloc(HEAD);
    size_t n = text ? fread(text, 1, HEAD - 1, f) : 0;
    fclose(f);
    if (!text)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, who, "no memory to read the %s", what);
    text[n] = '\0';
    bool pem = strstr(text, marker) != NULL;
    free(text);
    if (!pem)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the %s %s is not a PEM %s (no \"%s\" line)", what, path, what,
                          marker);
    return CUGL_OK;
}

static bool token_chars_ok(const char *t)
{
    for (; *t; t++)
        if (!((*t >= 'a' && *t <= 'z') || (*t >= 'A' && *t <= 'Z') || (*t >= '0' && *t <= '9') ||
              *t == '-' || *t == '_' || *t == '.'))
            return false;
    return true;
}

/* A slot's buffer (its fences are the caller's). */
static void free_slot(slot *sl)
{
    if (sl->pbo) {
        glUnmapNamedBuffer(sl->pbo);
        glDeleteBuffers(1, &sl->pbo);
    }
    *sl = (slot){0};
}

CUGL_API void cugl_app_server_destroy(cugl_app_server *s)
{
    if (!s)
        return;
    /* The GPU's encoder first: its thread publishes frames (gpu_job_done). */
    pthread_mutex_lock(&s->gpu_lock);
    cugl__gpu_jpeg *g = s->gpu;
    s->gpu = NULL;
    pthread_mutex_unlock(&s->gpu_lock);
    cugl__gpu_jpeg_close(g);
    pthread_mutex_lock(&s->lock);
    s->stop = true;
    pthread_cond_broadcast(&s->work);
    pthread_mutex_unlock(&s->lock);
    for (int i = 0; i < s->encoder_count; i++)
        pthread_join(s->encoders[i], NULL);
    if (s->network_started) {
        atomic_store(&s->network_stop, true);
        lws_cancel_service(s->lws);
        pthread_join(s->network, NULL);
    }
    if (s->lws)
        lws_context_destroy(s->lws);
    for (int l = 0; l < LEVELS; l++)
        frame_unref(s->newest[l]);
    frame_unref(s->header);
    for (int i = 0; i < s->video_count; i++)
        video_stream_free(s->video_list[i]);
    for (int i = 0; i < SLOTS; i++) {
        /* Copying, or queued and never waited for. */
        cugl__app_copy_fence_drop(s->egl_display, &s->slots[i].egl_fence, &s->slots[i].fence);
        free_slot(&s->slots[i]);
    }
    if (s->down_fbo)
        glDeleteFramebuffers(1, &s->down_fbo);
    if (s->down_rb)
        glDeleteRenderbuffers(1, &s->down_rb);
    pthread_cond_destroy(&s->work);
    pthread_mutex_destroy(&s->lock);
    pthread_mutex_destroy(&s->gpu_lock);
    free(s);
}

CUGL_API cugl_status cugl_app_server_create(cugl_app_server **out, cugl_app_context *ctx,
                                            const cugl_app_server_desc *desc)
{
    if (!out || !ctx || !desc)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "%s is NULL",
                          !out ? "out" : !ctx ? "ctx" : "desc");
    *out = NULL;
    const char *token = desc->token ? desc->token : "";
    if (desc->port < 0 || desc->port > 65535)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "port %d is not 0 to 65535",
                          desc->port);
    if (desc->quality < 0 || desc->quality > 100)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "quality %d is not 1 to 100 (0: 85)",
                          desc->quality);
    if (desc->encoders < 0 || desc->encoders > CUGL_APP_SERVE_MAX_ENCODERS)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "%d encoders; 1 to %d (0: 2)",
                          desc->encoders, CUGL_APP_SERVE_MAX_ENCODERS);
    if (desc->window < 0 || desc->window > CUGL_APP_SERVE_MAX_WINDOW)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "a window of %d frames; 1 to %d (0: 2)", desc->window,
                          CUGL_APP_SERVE_MAX_WINDOW);
    if (desc->encoder < CUGL_APP_SERVE_ENCODER_AUTO ||
        desc->encoder > CUGL_APP_SERVE_ENCODER_NVJPEG)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "encoder %d is not CUGL_APP_SERVE_ENCODER_AUTO, _CPU, _GPU or _NVJPEG",
                          (int)desc->encoder);
    bool cert = desc->cert && *desc->cert, key = desc->key && *desc->key;
    if (cert != key)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "HTTPS needs a certificate and a key: %s is missing",
                          cert ? "the key" : "the certificate");
    for (int i = 0; cert && i < 2; i++) {
        cugl_status st = check_pem(i ? desc->key : desc->cert, i ? "key" : "certificate",
                                   i ? "PRIVATE KEY-----" : "-----BEGIN CERTIFICATE-----",
                                   __func__);
        if (st != CUGL_OK)
            return st;
    }
    if (desc->codec < CUGL_APP_SERVE_CODEC_AUTO || desc->codec > CUGL_APP_SERVE_CODEC_VIDEO)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "codec %d is not CUGL_APP_SERVE_CODEC_AUTO, _JPEG or _VIDEO",
                          (int)desc->codec);
    if (strlen(token) > CUGL_APP_SERVE_MAX_TOKEN || !token_chars_ok(token))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "the token must be at most %d letters, digits, '-', '_' or '.'",
                          CUGL_APP_SERVE_MAX_TOKEN);
    cugl_app_server *s = calloc(1, sizeof *s);
    if (!s)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, __func__, "no memory for a server");
    s->ctx = ctx;
    snprintf(s->name, sizeof s->name, "%s", desc->name ? desc->name : "cugl");
    snprintf(s->token, sizeof s->token, "%s", token);
    s->quality = desc->quality ? desc->quality : 85;
    s->window = desc->window ? desc->window : 2;
    s->codec = desc->codec;
    const char *timeout = getenv("CUGL_SERVE_ACK_TIMEOUT");
    s->ack_timeout_s = timeout && atoi(timeout) > 0 ? atoi(timeout) : ACK_TIMEOUT_S;
    snprintf(s->listen_name, sizeof s->listen_name, "%s",
             desc->address && *desc->address ? desc->address : "127.0.0.1");
    if (cert) {
        snprintf(s->cert, sizeof s->cert, "%s", desc->cert);
        snprintf(s->key, sizeof s->key, "%s", desc->key);
    }
    s->egl_display = cugl__app_egl_fence_display(ctx);
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_init(&s->gpu_lock, NULL);
    pthread_cond_init(&s->work, NULL);

    /* JPEG on the GPU where GL runs on one: GL's compute shaders, or
     * nvJPEG where asked for; libjpeg-turbo where GL renders on the CPU. */
    cugl_app_serve_encoder encoder = desc->encoder;
    static const char *const encoder_names[] = {"auto", "cpu", "gpu", "nvjpeg"};
    const char *forced = getenv("CUGL_SERVE_ENCODER");
    for (int i = 1; encoder == CUGL_APP_SERVE_ENCODER_AUTO && forced && i < 4; i++)
        if (strcmp(forced, encoder_names[i]) == 0)
            encoder = (cugl_app_serve_encoder)i;
    const char *renderer = cugl_app_context_renderer(ctx);
    bool software = strstr(renderer, "llvmpipe") || strstr(renderer, "softpipe") ||
                    strstr(renderer, "Software Rasterizer");
    if (encoder == CUGL_APP_SERVE_ENCODER_CPU) {
        snprintf(s->encoder_why, sizeof s->encoder_why, "the CPU was asked for%s",
                 encoder != desc->encoder ? " (CUGL_SERVE_ENCODER=cpu)" : "");
    } else if (encoder == CUGL_APP_SERVE_ENCODER_AUTO && software) {
        snprintf(s->encoder_why, sizeof s->encoder_why,
                 "GL renders on the CPU (%s): no GPU to encode on", renderer);
    } else {
        char why[sizeof s->encoder_why - 64];
        s->gpu = cugl__gpu_jpeg_open(ctx, encoder == CUGL_APP_SERVE_ENCODER_NVJPEG, gpu_job_done,
                                     s, why, sizeof why);
        snprintf(s->encoder_why, sizeof s->encoder_why, "%s%s", why,
                 encoder != desc->encoder ? (encoder == CUGL_APP_SERVE_ENCODER_NVJPEG
                                                 ? " (CUGL_SERVE_ENCODER=nvjpeg)"
                                                 : " (CUGL_SERVE_ENCODER=gpu)")
                                          : "");
        if (!s->gpu && encoder != CUGL_APP_SERVE_ENCODER_AUTO) {
            cugl_app_server_destroy(s);
            return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, __func__, "no JPEG on the GPU: %s", why);
        }
    }
    const char *address = desc->address && *desc->address ? desc->address : "127.0.0.1";
    lws_set_log_level(LLL_ERR, NULL);
    struct lws_context_creation_info info = {0};
    info.port = CONTEXT_PORT_NO_LISTEN;
    info.user = s;
    info.gid = (gid_t)-1;
    info.uid = (uid_t)-1;
    info.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS |
                   (cert ? LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT : 0);
    s->lws = lws_create_context(&info);
    cugl_status st = s->lws ? listen_all(s, __func__, address, desc->port)
                            : cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, __func__,
                                         "libwebsockets cannot make a context");
    if (st != CUGL_OK) {
        cugl_app_server_destroy(s);
        return st;
    }
    int encoders = desc->encoders ? desc->encoders : 2;
    for (; s->encoder_count < encoders; s->encoder_count++)
        if (pthread_create(&s->encoders[s->encoder_count], NULL, encoder_main, s) != 0)
            break;
    s->network_started = s->encoder_count == encoders &&
                         pthread_create(&s->network, NULL, network_main, s) == 0;
    if (!s->network_started) {
        cugl_app_server_destroy(s);
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, __func__, "cannot start the server's threads");
    }
    *out = s;
    return CUGL_OK;
}

/* ---- Frames ----------------------------------------------------------------------- */

/* `text` as the inside of a JSON string, cut to fit `size`. */
static void json_escape(char *out, size_t size, const char *text)
{
    size_t n = 0;
    for (const unsigned char *c = (const unsigned char *)text; *c && n + 7 < size; c++) {
        if (*c == '"' || *c == '\\') {
            out[n++] = '\\';
            out[n++] = (char)*c;
        } else if (*c < 0x20) {
            n += (size_t)snprintf(out + n, size - n, "\\u%04x", *c);
        } else {
            out[n++] = (char)*c;
        }
    }
    out[n] = '\0';
}

/* A free slot's buffer of `width` x `height`. */
static cugl_status size_slot(slot *sl, int width, int height, const char *who)
{
    if (sl->pbo && sl->width == width && sl->height == height)
        return CUGL_OK;
    free_slot(sl);
    GLsizeiptr bytes = (GLsizeiptr)width * height * 4;
    cugl_app_drain_gl_errors();
    glCreateBuffers(1, &sl->pbo);
    GLbitfield flags = GL_MAP_READ_BIT | GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT;
    glNamedBufferStorage(sl->pbo, bytes, NULL, flags | GL_CLIENT_STORAGE_BIT);
    sl->pixels = glMapNamedBufferRange(sl->pbo, 0, bytes, flags);
    cugl_status st = cugl_app_check_gl(who, "a mapped pixel-pack buffer");
    if (st == CUGL_OK && !sl->pixels)
        st = cugl__fail(CUGL_ERROR_GL, who, "cannot map a %d x %d pixel-pack buffer", width,
                        height);
    if (st != CUGL_OK) {
        free_slot(sl);
        return st;
    }
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
    int w = width / scale, h = height / scale;
    if (!s->down_fbo || s->down_w != w || s->down_h != h) {
        if (s->down_fbo)
            glDeleteFramebuffers(1, &s->down_fbo);
        if (s->down_rb)
            glDeleteRenderbuffers(1, &s->down_rb);
        glCreateRenderbuffers(1, &s->down_rb);
        glNamedRenderbufferStorage(s->down_rb, GL_RGBA8, w, h);
        glCreateFramebuffers(1, &s->down_fbo);
        glNamedFramebufferRenderbuffer(s->down_fbo, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER,
                                       s->down_rb);
        s->down_w = w;
        s->down_h = h;
        CUGL__TRY(cugl_app_check_gl(who, "a framebuffer for scaled frames"));
    }
    glBlitNamedFramebuffer(from, s->down_fbo, 0, 0, width, height, 0, 0, w, h,
                           GL_COLOR_BUFFER_BIT, GL_LINEAR);
    *fbo = s->down_fbo;
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
    json_escape(name, sizeof name, s->name);
    json_escape(stats, sizeof stats, s->stats);
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
                made[l] = wrap_frame(s, &gf->meta, l, 0, jpeg, size, w, h, ms,
                                     cugl__gpu_jpeg_name(s->gpu));
            free(jpeg);
        }
        for (int l = 0; l < LEVELS; l++)
            if (made[l])
                made[l]->hash = hash;
        frame *header = wrap_frame(s, &gf->meta, -1, hash, NULL, 0, gf->meta.width,
                                   gf->meta.height, 0, cugl__gpu_jpeg_name(s->gpu));
        gf->busy = false;
        pthread_mutex_lock(&s->lock);
        publish_frames(s, made, header, hash);
        pthread_mutex_unlock(&s->lock);
        lws_cancel_service(s->lws);
    }
}

/* The GPU encoder's thread has finished a job: its frame goes out now, not
 * at the program's next present (a frame later at 60 a second). */
static void gpu_job_done(void *user)
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
        int scale = l == PROBE ? 2 : levels[l].scale;
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
    s->gpu = NULL; /* its thread, in gpu_job_done, finds none */
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

    /* Copies that have finished go to the encoders; the GPU's finished
     * frames are published, and a free one taken for this present (free
     * it stays until gpu_start: the GPU encoder's thread only ends frames). */
    struct gpu_frame *gf = NULL;
    if (s->gpu) {
        pthread_mutex_lock(&s->gpu_lock);
        cugl_status st = gpu_collect(s, __func__);
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
    int free_index = -1;
    for (int i = 0; i < SLOTS && free_index < 0; i++)
        if (s->slots[i].state == SLOT_FREE)
            free_index = i;
    /* Where every viewer gets video, the GPU's JPEGs are sent to no one. */
    bool jpeg_viewers = s->video_count < atomic_load(&s->viewers);
    pthread_mutex_unlock(&s->lock);

    int width = 0, height = 0;
    cugl_app_context_size(s->ctx, &width, &height);
    if (atomic_load(&s->viewers) == 0 || width <= 0 || height <= 0) {
        s->capture_s = 0;
        return CUGL_OK;
    }
    /* At most CAPTURE_HZ a second. */
    s->capture_tokens = s->capture_s > 0 ? s->capture_tokens + (t - s->capture_s) * CAPTURE_HZ
                                         : CAPTURE_BURST;
    s->capture_tokens = fmin(s->capture_tokens, CAPTURE_BURST);
    s->capture_s = t;
    if (s->capture_tokens < 1)
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
        if ((want >> l & 1) && levels[l].scale < scale)
            scale = levels[l].scale;
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

    /* The caller's read framebuffer and pack state are kept. */
    GLint read_fbo = 0;
    glGetIntegerv(GL_READ_FRAMEBUFFER_BINDING, &read_fbo);
    cugl__gl_pixels saved;
    cugl__gl_pixels_set(&saved, true, 0, 4, 0, 0);
    cugl_app_drain_gl_errors();
    cugl_status st = CUGL_OK, gpu_st = CUGL_OK;
    if (use_gpu) {
        gf->meta.width = width;
        gf->meta.height = height;
        pthread_mutex_lock(&s->gpu_lock);
        gpu_st = gpu_start(s, gf, width, height, __func__);
        pthread_mutex_unlock(&s->gpu_lock);
    }
    if (sl) {
        GLuint from = 0;
        st = scaled_framebuffer(s, &from, width, height, scale, __func__);
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
    if (!sl)
        return CUGL_OK;
    if (st == CUGL_OK)
        st = cugl_app_check_gl(__func__, "copying the framebuffer");
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

CUGL_API const char *cugl_app_server_encoder(const cugl_app_server *s, const char **why)
{
    if (why)
        *why = s ? s->encoder_why : "";
    return !s ? NULL : s->gpu ? cugl__gpu_jpeg_name(s->gpu) : "libjpeg-turbo";
}

CUGL_API cugl_status cugl_app_server_set_stats(cugl_app_server *s, const char *text)
{
    if (!s)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "server is NULL");
    snprintf(s->stats, sizeof s->stats, "%s", text ? text : "");
    return CUGL_OK;
}

CUGL_API int cugl_app_server_port(const cugl_app_server *s)
{
    return s ? s->port : 0;
}

CUGL_API const char *cugl_app_server_address(const cugl_app_server *s, int i)
{
    return s && i >= 0 && i < s->address_count ? s->addresses[i] : NULL;
}

CUGL_API bool cugl_app_server_is_https(const cugl_app_server *s)
{
    return s && s->cert[0];
}

CUGL_API int cugl_app_server_viewers(const cugl_app_server *s)
{
    return s ? atomic_load(&((cugl_app_server *)s)->viewers) : 0;
}

CUGL_API void cugl_app_server_counts(const cugl_app_server *s, long *encoded, long *sent,
                                     long *dropped)
{
    cugl_app_server *m = (cugl_app_server *)s;
    if (encoded)
        *encoded = m ? atomic_load(&m->encoded) : 0;
    if (sent)
        *sent = m ? atomic_load(&m->sent) : 0;
    if (dropped)
        *dropped = m ? atomic_load(&m->dropped) : 0;
}

CUGL_API cugl_status cugl_app_server_viewer(const cugl_app_server *s, int i,
                                            cugl_app_server_viewer_stats *out)
{
    if (!s || !out)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "%s is NULL",
                          !s ? "server" : "out");
    cugl_app_server *m = (cugl_app_server *)s;
    pthread_mutex_lock(&m->lock);
    int count = m->viewer_stats_count;
    if (i >= 0 && i < count)
        *out = m->viewer_stats[i];
    pthread_mutex_unlock(&m->lock);
    if (i < 0 || i >= count)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "viewer %d: %d viewers are connected", i, count);
    return CUGL_OK;
}
