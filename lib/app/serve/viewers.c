/*
 * viewers.c - each viewer: what it is sent (its level, by what its link
 * carries at the rate wanted, and the refinement of a still picture),
 * its acknowledgements and what they measure, JPEG or video and its
 * bitrate, its input, and the network thread's WebSocket callback.
 */
#include <math.h>
#include <stddef.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <netinet/in.h>
#include <linux/tcp.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include <libwebsockets.h>

#include "server.h"

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
        if (cugl__serve_predict_bytes(s, l, now) <= budget)
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

/* Whether `v`'s link is to be found by using it (under the lock): its
 * kernel gives link rates, and its last step up brought none (frames that
 * still leave the link idle), or none came for PROBE_IDLE_S; and its
 * frames do not queue. */
static bool probing(const viewer *v, double now)
{
    if (!v->kernel_rate || v->level == 0 || v->queued_s > PROBE_QUEUE_S ||
        now - v->level_s < PROBE_S)
        return false;
    return v->probed || now - v->rate_s >= PROBE_IDLE_S;
}

/* `v`'s level from its measured link (under the lock): worse at once,
 * better at most every LEVEL_UP_S and with a margin; where the link is to
 * be found (probing), the best whose frames are at most twice the size. */
static void adapt(cugl_app_server *s, viewer *v, double now)
{
    if (probing(v, now)) {
        /* Frames up to twice the size: the link is found in a few steps. */
        double twice = 2 * cugl__serve_predict_bytes(s, v->level, now);
        int l = v->level - 1;
        while (l > 0 && cugl__serve_predict_bytes(s, l - 1, now) <= twice)
            l--;
        v->level = l;
        v->level_s = now;
        v->probed = true;
        return;
    }
    /* A link rate from before the last change of level says nothing of
     * the level: only a newer one moves it. */
    if (v->throughput <= 0 || (v->kernel_rate && v->rate_s < v->level_s))
        return;
    double budget = v->throughput * HEADROOM / target_fps(s, v, now);
    int best = level_for(s, budget, now);
    if (best > v->level && v->kernel_rate && v->queued_s <= PROBE_QUEUE_S) {
        /* A rate too low for frames that the link takes without a queue is
         * TCP's window still growing (after a narrow stretch, say), not the
         * link: the level stays, and the link is looked for further. */
        v->probed = true;
    } else if (best > v->level) {
        v->level = best;
        v->level_s = now;
        v->probed = false;
    } else if (best < v->level && now - v->level_s >= LEVEL_UP_S) {
        int up = level_for(s, budget / LEVEL_UP_MARGIN, now);
        if (up < v->level) {
            v->level = up;
            v->level_s = now;
        }
    }
}

/* The cugl__serve_levels viewers with room want, for the encoders (under the lock). */
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
        /* The next better level's size measured now and then. */
        int better = v->level - 1;
        if (better >= 0 && (!cugl__serve_level_seen(s, better, now) ||
                            now - s->level_seen_s[better] >= NEIGHBOUR_S))
            live |= 1u << better;
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
        .scale = cugl__serve_levels[v->level].scale,
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
    cugl__serve_json_escape(why, sizeof why, v->codec_why);
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
 * (its delivery beyond the round trip and its own time on the link) more
 * than VIDEO_QUEUE_HIGH_S cuts it by 30%, one that did not wait past
 * VIDEO_QUEUE_LOW_S raises it by 3%, each at most every VIDEO_RATE_S. */
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

/* The video codecs in the order a viewer gets them, of those its page
 * decodes and this cugl has. */
static const cugl__video_codec video_order[] = {VIDEO_ORDER};

/* The video codec `v` gets where it gets video; -1 where none, with why. */
static int video_codec_for(const viewer *v, char *why, size_t why_size)
{
    for (size_t i = 0; i < sizeof video_order / sizeof *video_order; i++)
        if (v->decodes >> video_order[i] & 1 && cugl__video_codecs[video_order[i]].built)
            return (int)video_order[i];
    if (!v->decodes) {
        snprintf(why, why_size, "the page decodes no video (%s)",
                 v->page_why[0] ? v->page_why : "it did not say it can");
        return -1;
    }
    char names[64] = "";
    for (int c = 0; c < CUGL__VIDEO_CODECS; c++)
        if (v->decodes >> c & 1)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                     names[0] ? " and " : "", cugl__video_codecs[c].title);
    snprintf(why, why_size, "the page decodes %s, which this cugl was built without", names);
    return -1;
}

/* Which codec `v` gets and why: as asked for, where its page and this
 * build can; else video on narrow links, JPEG on wide ones (with
 * hysteresis, and kept at least CODEC_HOLD_S). Of the video codecs, the
 * first of VIDEO_ORDER that the page decodes. Starts or ends its video
 * stream, or starts one of another codec (under the lock). */
static void choose_codec(cugl_app_server *s, viewer *v, double now)
{
    viewer_codec want = CODEC_JPEG;
    char why[sizeof v->codec_why], cannot[sizeof v->codec_why - 16];
    int vc = video_codec_for(v, cannot, sizeof cannot);
    const char *title = vc >= 0 ? cugl__video_codecs[vc].title : "";
    double mbit = v->throughput * 8 / 1e6;
    if (!CUGL_SERVE_VIDEO) {
        snprintf(why, sizeof why,
                 "JPEG: this cugl has no video codec (built without libvpx and OpenH264)");
    } else if (s->codec == CUGL_APP_SERVE_CODEC_JPEG) {
        snprintf(why, sizeof why, "JPEG, as the server was told");
    } else if (vc < 0) {
        snprintf(why, sizeof why, "JPEG: %s", cannot);
    } else if (s->codec == CUGL_APP_SERVE_CODEC_VIDEO) {
        want = CODEC_VIDEO;
        snprintf(why, sizeof why, "%s video, as the server was told", title);
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
        snprintf(why, sizeof why, "%s video: the link carries %.1f Mbit/s (JPEG above %.0f)",
                 title, mbit, JPEG_ABOVE_BPS / 1e6);
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
    if (want == v->codec && (want == CODEC_JPEG || (int)v->video->codec == vc))
        return;
    /* Its codec is video exactly while it has a stream. */
    video_stream *vs = want == CODEC_VIDEO ? calloc(1, sizeof *vs) : NULL;
    if (want == CODEC_VIDEO && !vs) {
        snprintf(v->codec_why, sizeof v->codec_why, "%s: no memory for a video stream",
                 v->codec == CODEC_VIDEO ? "video" : "JPEG");
        return;
    }
    if (v->video && vs) /* another codec's */
        cugl__serve_drop_video(s, v);
    v->codec = want;
    v->codec_s = now;
    if (vs) {
        vs->codec = (cugl__video_codec)vc;
        vs->key = true;
        vs->last = v->sent;
        v->video_kbps = video_kbps(v);
        v->video_rate_s = now;
        vs->kbps = (int)v->video_kbps;
        s->video_list[s->video_count++] = vs;
        v->video = vs;
    } else if (want == CODEC_JPEG && v->video) {
        cugl__serve_drop_video(s, v);
        v->shown_hash = 0; /* a whole picture next */
    }
}

/* TCP's latest delivery rate on `v`'s socket, in *rate, where it was taken
 * while TCP had data to send: the link's own rate. False where it was
 * application-limited (frames that leave the link idle, or pass a
 * shaper's burst at the interface's speed), and where the kernel does not
 * say (*known false). */
static bool link_limited_rate(const viewer *v, double *rate, bool *known)
{
    struct tcp_info ti;
    socklen_t size = sizeof ti;
    int fd = lws_get_socket_fd(v->wsi);
    *known = fd >= 0 && getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &size) == 0 &&
             size >= offsetof(struct tcp_info, tcpi_delivery_rate) + sizeof ti.tcpi_delivery_rate;
    if (!*known || ti.tcpi_delivery_rate_app_limited || ti.tcpi_delivery_rate == 0)
        return false;
    *rate = (double)ti.tcpi_delivery_rate;
    return true;
}

/* A link-limited rate into `v`'s window of them, its throughput the best
 * there seen in two of its buckets (a single high reading, ACKs that came
 * back bunched, is passed over), or the best where it follows a step up to
 * find the link (the link may have got faster); `slower` (a rate well below it while
 * frames queue): the link slowed, and the window starts again from this
 * one. */
static void rate_sample(viewer *v, double rate, double now, bool slower)
{
    long bucket = (long)(now / RATE_BUCKET_S);
    for (int i = 0; i < RATE_BUCKETS; i++)
        if (slower || v->rate_bucket[i] <= bucket - RATE_BUCKETS)
            v->rate_max[i] = 0;
    int at = (int)(bucket % RATE_BUCKETS);
    if (v->rate_bucket[at] != bucket) {
        v->rate_bucket[at] = bucket;
        v->rate_max[at] = 0;
    }
    v->rate_max[at] = fmax(v->rate_max[at], rate);
    double best = 0, second = 0;
    for (int i = 0; i < RATE_BUCKETS; i++) {
        if (v->rate_max[i] > best) {
            second = best;
            best = v->rate_max[i];
        } else {
            second = fmax(second, v->rate_max[i]);
        }
    }
    /* After a step up to find the link, the rate it found is the link's. */
    v->throughput = second > 0 && !v->probed ? second : best;
    v->rate_s = now;
    v->probed = false;
}

/* The old measure, where the kernel gives no rates: a frame's time on the
 * link from the previous frame's arrival if it was still on its way when
 * this one was sent, else from its sending less the round trip. A page's
 * unreported time reads as a slow link here. */
static void ack_rate(viewer *v, const in_flight *e, double arrival, double delivery, bool first)
{
    double rtt = v->rtt_min_at > 0 ? v->rtt_min_s : 0;
    double busy = v->last_arrival_s > e->sent_s ? arrival - v->last_arrival_s : delivery - rtt;
    /* The first frame's time holds the page's start: not a measure. */
    if (busy > 1e-3 && !first && (!v->video || e->bytes >= VIDEO_SAMPLE_MIN_BYTES)) {
        double rate = (double)e->bytes / busy;
        v->throughput = v->throughput > 0 ? 0.7 * v->throughput + 0.3 * rate : rate;
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
    /* The link's rate: the kernel's, taken while the link was full; else
     * from the acks. */
    /* Its wait behind others: its delivery beyond the least and its own
     * time on the link as last measured. */
    double own = v->throughput > 0 ? (double)e.bytes / v->throughput : 0;
    v->queued_s = v->rtt_min_at > 0 ? fmax(delivery - v->rtt_min_s - own, 0) : 0;
    double rate = 0;
    bool known = false;
    /* A video viewer's frames are the bitrate's size, not the link's: its
     * link is measured from its acks, its bitrate set by their delay. */
    if (!v->video && link_limited_rate(v, &rate, &known))
        rate_sample(v, rate, now,
                    v->throughput > 0 && rate < RATE_DROP * v->throughput &&
                        v->queued_s > RATE_DROP_QUEUE_S);
    else if (!known || v->video)
        ack_rate(v, &e, arrival, delivery, v->acked_count == k + 1);
    v->kernel_rate = known && !v->video;
    v->last_arrival_s = arrival;
    double rtt_sample = delivery - (v->throughput > 0 ? (double)e.bytes / v->throughput : 0);
    rtt_sample = fmax(rtt_sample, 0);
    if (v->rtt_min_at == 0 || rtt_sample <= v->rtt_min_s || now - v->rtt_min_at > RTT_WINDOW_S) {
        v->rtt_min_s = rtt_sample;
        v->rtt_min_at = now;
    }
    /* Its wait behind others, as queued_s: a frame's own time on the link
     * is no queue (at 5 Mbit/s a 60th of 3 is 10 ms, past
     * VIDEO_QUEUE_LOW_S: counted, the bitrate never rose from its start). */
    if (v->video)
        video_rate(v, v->queued_s, now);
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

/* A "codecs" line's list (after "codecs "): the codecs named, of those
 * this server knows, or none with the page's reason ("none WHY"). */
static void take_codecs(viewer *v, const char *list)
{
    v->decodes = 0;
    v->page_why[0] = '\0';
    if (strncmp(list, "none", 4) == 0 && (list[4] == ' ' || list[4] == '\0')) {
        snprintf(v->page_why, sizeof v->page_why, "%s", list[4] ? list + 5 : "");
        return;
    }
    /* Of the codecs a viewer may get (VIDEO_ORDER: not the recorder's VP9). */
    for (const char *w = list; *w;) {
        size_t n = strcspn(w, " ");
        for (size_t i = 0; i < sizeof video_order / sizeof *video_order; i++) {
            const char *name = cugl__video_codecs[video_order[i]].name;
            if (n == strlen(name) && strncmp(w, name, n) == 0)
                v->decodes |= 1u << video_order[i];
        }
        w += n;
        w += strspn(w, " ");
    }
    if (!v->decodes)
        snprintf(v->page_why, sizeof v->page_why, "it named no codec this server has: %.80s",
                 list);
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
            /* "codecs vp8 h264" (those it names, of those this server
             * knows), or "codecs none WHY": what the page decodes. */
            take_codecs(v, line + 7);
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
        cugl__serve_drop_video(s, v);
    s->viewer_stats_count = last;
    update_wants(s);
    pthread_mutex_unlock(&s->lock);
    free(v->out);
    v->out = NULL;
    v->started = false;
}

int cugl__serve_ws_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                            size_t len)
{
    cugl_app_server *s = cugl__serve_server_of(wsi);
    viewer *v = user;
    switch (reason) {
    case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
    {
        /* confirm_upgrade answered every refusal with a status already. */
        const char *why;
        return cugl__serve_upgrade_refusal(s, wsi, &why) != 0;
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
        lws_callback_on_writable_all_protocol(lws_get_context(wsi), &cugl__serve_protocols[1]);
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

const struct lws_protocols cugl__serve_protocols[3] = {
    {"http", cugl__serve_http_callback, 0, 0, 0, NULL, 0},
    /* tx_packet_size: what libwebsockets writes at once, more than the
     * parts write_on gives it (by default its rx size, 4096: the rest of
     * every part would wait in its buffer). */
    {CUGL_APP_SERVE_SUBPROTOCOL, cugl__serve_ws_callback, sizeof(viewer),
     CUGL_APP_SERVE_MAX_MESSAGE, 0, NULL, 2 * NOTSENT_LOWAT},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

void *cugl__serve_network_main(void *arg)
{
    cugl_app_server *s = arg;
    prctl(PR_SET_NAME, "cugl-network");
    while (!atomic_load(&s->network_stop))
        if (lws_service(s->lws, 0) < 0)
            break;
    return NULL;
}
