/*
 * server.h - the frame server's model, shared by its files: the slots the
 * framebuffer is copied into, the frames (JPEGs and headers) made from them,
 * the viewers and what each is sent, and the server; and what its files
 * call of each other. Which thread owns what is said beside each field.
 *
 * The files, by the frame's way: frames.c (the render thread copies the
 * framebuffer into a slot), encoders.c (the encoder threads make JPEGs and
 * video frames, and publish them), viewers.c (the network thread sends
 * each viewer the newest frame of its level and reads its acknowledgements
 * and input), http.c (the page and the upgrade's checks), server.c (made,
 * listened on, ended; its getters), model.c (the levels, JSON text).
 * serve_nvjpeg.c and jpeg_gl.c encode JPEGs on the GPU, serve_video.c VP8
 * (serve_internal.h).
 */
#ifndef CUGL_APP_SERVE_SERVER_H
#define CUGL_APP_SERVE_SERVER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <libwebsockets.h>

#include "app_internal.h"
#include "cugl/app_serve.h"
#include "serve_internal.h"

extern const unsigned char cugl_serve_page_html[];
extern const size_t cugl_serve_page_html_size;

enum {
    SLOTS = 4,        /* framebuffer copies in flight or being encoded */
    JSON_MAX = 2 * CUGL_APP_SERVE_MAX_STATS + 768, /* escaped stats, name and numbers */
    VIEWER_JSON_MAX = 384 + 2 * 192,               /* a viewer's own fields */
    LEVELS = 12,
    /* The kernel's send buffer for a viewer: frames wait for their turn in
     * this server, not in the kernel; and unsent bytes wake the server
     * only once below NOTSENT_LOWAT. */
    SNDBUF_BYTES = 1 << 20,
    NOTSENT_LOWAT = 64 << 10,
    HELD_MAX_MS = 60000, /* a page that held a frame longer is lying */
    RATE_BUCKETS = 4,    /* of RATE_BUCKET_S: the link rate's window */
    GPU_FRAMES = 4,      /* frames the GPU's encoder encodes at once */
    VIDEO_WANT = 1 << LEVELS, /* in the want masks: a video viewer has room */
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
/* ... where the better level's frames, as seen, fit the budget with this
 * margin; a level's size counts as seen for SEEN_S after a frame of it. */
#define LEVEL_UP_MARGIN 1.1
#define SEEN_S 2.0
/* The level one better than a viewer's is encoded, not only guessed from
 * another's size, at least every NEIGHBOUR_S (while the viewer has room):
 * its size decides whether the viewer climbs. Guessed from the others by
 * the table's ratios (measured with libjpeg-turbo), another encoder's
 * better levels may read too large (an H200 held a 98 Mbit/s link at half
 * size, 46 Mbit/s, before this; not yet measured since). */
#define NEIGHBOUR_S 1.0
#define RTT_WINDOW_S 10.0    /* the round trip: the least over this time */
/* A viewer's link rate: the best of the kernel's delivery-rate samples
 * taken while TCP had data to send (not application-limited), over
 * RATE_BUCKETS buckets of RATE_BUCKET_S; a sample below RATE_DROP of it
 * while frames queue is the link slowing down, and replaces it. */
#define RATE_BUCKET_S 0.5
#define RATE_DROP 0.6
/* Without such a sample for PROBE_S (small frames never fill the link,
 * and a page's unreported time reads as a slow one), a better level (up to
 * twice the bytes) at most every PROBE_S while frames wait at most
 * PROBE_QUEUE_S behind others: the link is found by using it. */
#define PROBE_S 0.15
#define PROBE_QUEUE_S 0.008
/* ... and, once found, tried again (one level better) after PROBE_IDLE_S
 * without such a sample: a level that fits leaves the link idle between
 * frames, so TCP's samples there are all application-limited. */
#define PROBE_IDLE_S 0.5
#define RATE_DROP_QUEUE_S 0.03 /* frames this late beyond the least: queued */
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
/* The video codecs in the order a viewer gets them, of those its page
 * decodes (viewers.c). As measured (`meson test --benchmark
 * serve-codecs`: each encoder as the server sets it up, at a fixed
 * bitrate, on tests/serve/pattern.h's picture; a 2-core machine), OpenH264
 * against libvpx's VP8 and x264 (veryfast, zerolatency) as a peer: at
 * 1280x720 and 3.5 Mbit/s 28.70 dB PSNR and SSIM 0.758, against 26.91 and
 * 0.716 (x264 29.06, 0.771); at 1920x1080 and 14 Mbit/s 28.31 and 0.823
 * against 26.66 and 0.786 (x264 28.69, 0.839), in about the same time a
 * frame (1080p: 24.6 and 27.0 ms). */
#define VIDEO_ORDER CUGL__VIDEO_H264, CUGL__VIDEO_VP8
#define JPEG_ABOVE_BPS 60e6  /* ... and back to JPEG on links that carry more */
/* A level's PSNR is measured on a frame this often (seconds): a decode of
 * the JPEG and a comparison of every other row and column. */
#define PSNR_EVERY_S 1.0
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

/* The cugl__serve_levels, best first: JPEG quality (at most the server's) and the
 * divisor of each side; `bytes` is a guess of a frame's size against
 * level 0's until frames of the level have been seen. */
/* Each level of the JPEGs a viewer may get: its quality, how far it is
 * scaled down, and its size against level 0's. */
typedef struct serve_level {
    int quality, scale;
    double bytes;
} serve_level;
extern const serve_level cugl__serve_levels[LEVELS];

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
    char json[JSON_MAX + 320]; /* the slot's, the codec's fields, the PSNR's */
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
    cugl__video_codec codec;
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
    double rate_max[RATE_BUCKETS]; /* the best link-limited sample of each bucket */
    long rate_bucket[RATE_BUCKETS]; /* which bucket (time / RATE_BUCKET_S) each holds */
    double rate_s;           /* when the last link-limited sample came; 0: none */
    bool kernel_rate;        /* its socket gives TCP's delivery rate (TCP_INFO) */
    bool probed;             /* its level went up to find the link, no rate since */
    double queued_s;         /* the last frame's delivery beyond the least */
    double last_arrival_s;   /* the previous frame's, on this clock plus the way back */
    double input_s;          /* when its first event not yet shown arrived; 0: none */
    long input_events;       /* the event count that shows it */
    double input_ms;         /* input to picture, the last measured; -1: none */
    double last_input_s;     /* when its last event arrived */
    cugl__app_share events;  /* its part of the events waiting for a present */

    unsigned char *out;      /* the message being sent: LWS_PRE, then it */
    size_t out_cap;
    size_t out_size, out_off; /* its size, and how much of it is written */

    unsigned decodes;        /* the video codecs its page decodes: 1 << cugl__video_codec
                              * ("codecs vp8 h264") */
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
    cugl__app_sized_fb down;

    pthread_mutex_t lock; /* slots' states, the queue, the frames, the size model, `stop` */
    pthread_cond_t work;
    int queue[SLOTS];
    int queued;
    frame *newest[LEVELS]; /* each level's newest JPEG */
    frame *header;         /* the newest frame's header (level -1) */
    uint64_t hash;         /* the newest frame's picture */
    double level_bytes[LEVELS], level_seen_s[LEVELS], bytes0; /* sizes seen */
    /* Each level's PSNR as a page shows it (dB; -1: none), measured on a
     * frame every PSNR_EVERY_S (libjpeg-turbo's JPEGs: encoders.c), and when. */
    double level_psnr[LEVELS], level_psnr_s[LEVELS];
    cugl_app_server_viewer_stats viewer_stats[CUGL_APP_SERVE_MAX_VIEWERS];
    int viewer_stats_count;
    bool stop;
    pthread_t encoders[CUGL_APP_SERVE_MAX_ENCODERS];
    int encoder_count;

    /* The cugl__serve_levels viewers with room want: `want_live` each one's own level
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

static inline double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline void frame_unref(frame *f)
{
    if (f && atomic_fetch_sub(&f->refs, 1) == 1)
        free(f);
}

static inline int level_quality(const cugl_app_server *s, int level)
{
    return cugl__serve_levels[level].quality < s->quality ? cugl__serve_levels[level].quality
                                                          : s->quality;
}

/* encoders.c: a picture's or video frame's header gets the PSNR of what
 * a page shows of it (dB; -1 with why where none is measured). */
void cugl__serve_frame_psnr(frame *f, double psnr, const char *why);
/* encoders.c (the encoder threads). A frame of the slot's header fields
 * and, at `level` (-1: the header alone), `size` bytes of JPEG of a w x h
 * picture; NULL without memory. */
frame *cugl__serve_wrap_frame(cugl_app_server *s, const slot *sl, int level, uint64_t hash,
                              const unsigned char *jpeg, size_t size, int w, int h,
                              double encode_ms, const char *encoder);
/* The size frames of `level` are expected to have (under the lock): as
 * seen lately, else level 0's guessed down; 0 before any frame. */
double cugl__serve_predict_bytes(const cugl_app_server *s, int level, double now);
/* Whether a frame of `level` was made within SEEN_S (under the lock). */
bool cugl__serve_level_seen(const cugl_app_server *s, int level, double now);
/* A frame's JPEGs (made[l] at level l, or NULL) and header as the newest;
 * the sizes seen kept (under the lock). */
void cugl__serve_publish_frames(cugl_app_server *s, frame *made[LEVELS], frame *header,
                                uint64_t hash);
/* A video stream and its encoder, freed. */
void cugl__serve_video_stream_free(video_stream *vs);
/* The viewer's video stream out of the server's list (under the lock):
 * freed now, or by the encoder thread that holds it. */
void cugl__serve_drop_video(cugl_app_server *s, viewer *v);
/* An encoder thread (cugl-encoder): slots queued, encoded, published. */
void *cugl__serve_encoder_main(void *arg);

/* http.c. The server a connection belongs to. */
cugl_app_server *cugl__serve_server_of(struct lws *wsi);
/* The HTTP status that refuses an upgrade, with why; 0 where its path,
 * token, origin, subprotocol and the viewer count all allow it. */
unsigned cugl__serve_upgrade_refusal(cugl_app_server *s, struct lws *wsi, const char **why);
/* libwebsockets' callback of HTTP: the page, and the upgrade's checks. */
int cugl__serve_http_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user,
                              void *in, size_t len);

/* viewers.c. libwebsockets' callback of the frames' protocol: a viewer
 * starts, is sent frames, acknowledges them, sends input, ends. */
int cugl__serve_ws_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                            size_t len);
/* The network thread (cugl-network): libwebsockets' service loop. */
void *cugl__serve_network_main(void *arg);

/* frames.c. A slot's buffer freed (its fences are the caller's). */
void cugl__serve_free_slot(slot *sl);
/* The GPU encoder's thread finished a job: its frame goes out now. */
void cugl__serve_gpu_job_done(void *user);

/* model.c: `text` as the inside of a JSON string, cut to fit `size`. */
void cugl__serve_json_escape(char *out, size_t size, const char *text);

/* viewers.c: the protocols listened with: http, frames, the end. */
extern const struct lws_protocols cugl__serve_protocols[3];

#endif /* CUGL_APP_SERVE_SERVER_H */
