/*
 * test_webm.c - the recorder's WebM muxer (lib/app/record/webm.c), linked
 * in directly: an animation with fine moving detail encoded by libvpx (VP8
 * and VP9, real time, one frame in one out, a key frame every 30), muxed,
 * and read back: the file's own elements walked here (sizes, SeekHead,
 * Cues, Clusters, Duration); the tests' own reader (reader.h: codec, size,
 * frame count, each frame's time and key flag, every frame decoded and
 * its PSNR against the source); and ffprobe and ffmpeg, where they are,
 * which must read the same. Also: Clusters and a Segment of unknown size
 * read the same; the reader refuses what a muxer could get wrong, and
 * damaged copies; the same frames make the same bytes; the refusals and
 * their messages; a full disk (/dev/full). Skipped (77) without libvpx.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <unistd.h>

#include "cugl_test.h"
#include "readback.h"
#include "webm.h"

#if TEST_WEBM_VPX
#include <vpx/vp8cx.h>
#include <vpx/vpx_encoder.h>
#endif

#define W 320
#define H 240
#define FPS 60
#define FRAME_BYTES (W * H * 3 / 2)
#define WHO "cugl_app_record"

static char dir[256];

static const char *path_of(const char *name)
{
    static char path[320];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

/* Frame i of the animation, I420: stripes and rings that move a few
 * pixels a frame, and chroma that drifts. */
static void picture(int i, uint8_t *out)
{
    uint8_t *u = out + W * H, *v = u + W * H / 4;
    /* The terms of one row or column, once (the same values, a fifth of
     * the sines: they were most of the test's time). */
    double across[W];
    for (int x = 0; x < W; x++)
        across[x] = sin((x + 2.0 * i) * 0.45);
    double cx = 160 + 60 * sin(i * 0.05), cy = 120 + 40 * cos(i * 0.07);
    for (int y = 0; y < H; y++) {
        double down = cos((y - 1.5 * i) * 0.3), dy = y - cy;
        for (int x = 0; x < W; x++) {
            double dx = x - cx;
            double r = sin(sqrt(dx * dx + dy * dy) * 0.5 - i * 0.2);
            out[y * W + x] = (uint8_t)lrint(128 + 50 * (across[x] * down) + 40 * r);
        }
    }
    for (int y = 0; y < H / 2; y++)
        for (int x = 0; x < W / 2; x++) {
            u[y * W / 2 + x] = (uint8_t)(64 + (x + i) % 128);
            v[y * W / 2 + x] = (uint8_t)(64 + (y * 2 + i) % 128);
        }
}

typedef struct packet {
    uint8_t *data;
    size_t size;
    bool key;
} packet;

typedef struct stream {
    cugl__webm_codec codec;
    int count;
    packet *frames;
} stream;

/* The three encodings the cases share: VP8 and VP9 of 120 frames with a
 * key frame every 30 (four Clusters), and VP8 of 400 frames with one key
 * frame (6.7 s: a second Cluster after 5 s). */
static stream vp8, vp9, vp8_long;

#if TEST_WEBM_VPX
/* `count` frames of the animation, a key frame every `key_every`; false with why. */
static bool encode(stream *s, cugl__webm_codec codec, int count, int key_every, char *why,
                   size_t why_size)
{
    vpx_codec_iface_t *iface = codec == CUGL__WEBM_VP9 ? vpx_codec_vp9_cx() : vpx_codec_vp8_cx();
    vpx_codec_enc_cfg_t cfg;
    vpx_codec_ctx_t ctx;
    if (vpx_codec_enc_config_default(iface, &cfg, 0) != VPX_CODEC_OK)
        return snprintf(why, why_size, "libvpx has no default configuration"), false;
    cfg.g_w = W;
    cfg.g_h = H;
    cfg.g_timebase = (struct vpx_rational){1, FPS};
    cfg.g_threads = 1;
    cfg.g_lag_in_frames = 0; /* one in, one out, as the recorder drives it */
    cfg.g_pass = VPX_RC_ONE_PASS;
    cfg.rc_end_usage = VPX_VBR;
    cfg.rc_target_bitrate = 6000; /* generous: the test is of the container */
    cfg.rc_min_quantizer = 0;
    cfg.rc_max_quantizer = 32;
    cfg.rc_dropframe_thresh = 0;
    cfg.kf_mode = VPX_KF_DISABLED; /* key frames only where asked */
    if (vpx_codec_enc_init(&ctx, iface, &cfg, 0) != VPX_CODEC_OK)
        return snprintf(why, why_size, "libvpx cannot start its encoder"), false;
    /* The fastest real-time speeds: 640 frames in 2.6 s here, not 5.3. */
    vpx_codec_control(&ctx, VP8E_SET_CPUUSED, codec == CUGL__WEBM_VP9 ? 9 : 16);
    uint8_t *pixels = malloc(FRAME_BYTES);
    vpx_image_t image;
    vpx_img_wrap(&image, VPX_IMG_FMT_I420, W, H, 1, pixels);
    s->codec = codec;
    s->frames = calloc((size_t)count, sizeof *s->frames);
    s->count = 0;
    bool ok = pixels && s->frames;
    for (int i = 0; ok && i < count; i++) {
        picture(i, pixels);
        vpx_enc_frame_flags_t flags = i % key_every == 0 ? VPX_EFLAG_FORCE_KF : 0;
        ok = vpx_codec_encode(&ctx, &image, i, 1, flags, VPX_DL_REALTIME) == VPX_CODEC_OK;
        vpx_codec_iter_t iter = NULL;
        for (const vpx_codec_cx_pkt_t *p; ok && (p = vpx_codec_get_cx_data(&ctx, &iter));) {
            if (p->kind != VPX_CODEC_CX_FRAME_PKT || s->count == count)
                continue;
            packet *f = &s->frames[s->count++];
            f->size = p->data.frame.sz;
            f->data = malloc(f->size);
            f->key = p->data.frame.flags & VPX_FRAME_IS_KEY;
            ok = f->data != NULL;
            if (ok)
                memcpy(f->data, p->data.frame.buf, f->size);
        }
    }
    vpx_codec_destroy(&ctx);
    free(pixels);
    if (ok && s->count != count)
        return snprintf(why, why_size, "libvpx gave %d frames of %d", s->count, count), false;
    return ok || (snprintf(why, why_size, "encoding failed"), false);
}
#endif

static void stream_free(stream *s)
{
    for (int i = 0; i < s->count; i++)
        free(s->frames[i].data);
    free(s->frames);
}

/* The stream muxed into `path`, frame i at pts i * ticks (timescale
 * ticks a second); the last frame ends a frame later. */
static void mux(const stream *s, const char *path, uint32_t timescale, double ticks)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    cugl__webm *m = NULL;
    assert_ok(cugl__webm_open(&m, f, s->codec, W, H, timescale, WHO));
    for (int i = 0; i < s->count; i++)
        assert_ok(cugl__webm_add(m, s->frames[i].data, s->frames[i].size, llround(i * ticks),
                                 s->frames[i].key));
    assert_ok(cugl__webm_finish(m, llround(s->count * ticks)));
    assert_int_equal(fclose(f), 0);
}

/* --- The file's own elements ------------------------------------------- */

typedef struct reader {
    const uint8_t *p;
    size_t n;
} reader;

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long size = ftell(f);
    rewind(f);
    uint8_t *p = malloc((size_t)size + 1);
    assert_non_null(p);
    assert_int_equal(fread(p, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    *n = (size_t)size;
    return p;
}

/* An EBML number at `at` (an ID keeps its marker; a size loses it). */
static uint64_t vint(const uint8_t *p, size_t n, size_t *at, bool keep_marker)
{
    assert_true(*at < n);
    int w = 1;
    while (w <= 8 && !(p[*at] & (0x100 >> w)))
        w++;
    assert_true(w <= 8 && *at + (size_t)w <= n);
    uint64_t v = keep_marker ? p[*at] : p[*at] & (0xFFu >> w);
    for (int i = 1; i < w; i++)
        v = v << 8 | p[*at + (size_t)i];
    *at += (size_t)w;
    return v;
}

static uint64_t be(const uint8_t *p, size_t len)
{
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++)
        v = v << 8 | p[i];
    return v;
}

/* The element at `at`: its ID, its data's start and size (within n). */
static uint32_t element(const uint8_t *p, size_t n, size_t at, size_t *data, size_t *size)
{
    uint32_t id = (uint32_t)vint(p, n, &at, true);
    *size = (size_t)vint(p, n, &at, false);
    *data = at;
    assert_true(*size <= n - at);
    return id;
}

/* The unsigned value of child `id` in the master element [at, end); `dflt` where there is none. */
static uint64_t child_uint(const uint8_t *p, size_t at, size_t end, uint32_t id, uint64_t dflt)
{
    for (size_t d, sz; at < end; at = d + sz)
        if (element(p, end, at, &d, &sz) == id)
            return be(p + d, sz);
    return dflt;
}

typedef struct layout {
    int clusters, blocks, cues, voids_in_seek_head;
    double duration;
    char codec[8];
} layout;

/* One Cluster: its blocks counted, each of track 1, their times from the
 * Cluster's increasing from 0. */
static void walk_cluster(const uint8_t *p, size_t d, size_t end, layout *l)
{
    size_t at = d, data, size;
    assert_int_equal(element(p, end, at, &data, &size), 0xE7); /* Timestamp first */
    int last = -1;
    for (at = data + size; at < end; at = data + size) {
        assert_int_equal(element(p, end, at, &data, &size), 0xA3);
        assert_int_equal(p[data], 0x81);
        int time = (int16_t)be(p + data + 1, 2);
        assert_true(time > last);
        last = time;
        l->blocks++;
    }
}

/* Walk the Segment: every SeekHead entry names its element, every cue its
 * Cluster (whose Timestamp is the cue's time and whose first block is a
 * key frame), the Segment's size is the rest of the file. */
static layout walk(const char *path)
{
    size_t n;
    uint8_t *p = slurp(path, &n);
    layout l = {0};
    size_t data, size;
    assert_int_equal(element(p, n, 0, &data, &size), 0x1A45DFA3);
    assert_int_equal(child_uint(p, data, data + size, 0x4287, 0), 4);
    assert_int_equal(child_uint(p, data, data + size, 0x4285, 0), 2);
    size_t at = data + size;
    assert_int_equal(element(p, n, at, &data, &size), 0x18538067);
    assert_int_equal(data + size, n);
    size_t segment = data;
    for (at = segment; at < n; at = data + size) {
        uint32_t id = element(p, n, at, &data, &size);
        if (id == 0x114D9B74) {
            for (size_t s = data, sd, ss; s < data + size; s = sd + ss) {
                uint32_t sid = element(p, n, s, &sd, &ss);
                if (sid == 0xEC) {
                    l.voids_in_seek_head++;
                    continue;
                }
                assert_int_equal(sid, 0x4DBB);
                size_t id_at, id_size;
                element(p, n, sd, &id_at, &id_size); /* SeekID first */
                uint64_t target = child_uint(p, sd, sd + ss, 0x53AC, UINT64_MAX);
                size_t td, ts, tat = segment + (size_t)target;
                assert_int_equal(element(p, n, tat, &td, &ts), be(p + id_at, id_size));
            }
        } else if (id == 0x1549A966) {
            assert_int_equal(child_uint(p, data, data + size, 0x2AD7B1, 0), 1000000);
            for (size_t c = data, cd, cs; c < data + size; c = cd + cs)
                if (element(p, n, c, &cd, &cs) == 0x4489) {
                    uint64_t bits = be(p + cd, cs);
                    assert_int_equal(cs, 8);
                    memcpy(&l.duration, &bits, 8);
                }
        } else if (id == 0x1654AE6B) {
            size_t ed, es;
            assert_int_equal(element(p, n, data, &ed, &es), 0xAE);
            for (size_t c = ed, cd, cs; c < ed + es; c = cd + cs)
                if (element(p, n, c, &cd, &cs) == 0x86)
                    snprintf(l.codec, sizeof l.codec, "%.*s", (int)cs, (const char *)p + cd);
        } else if (id == 0x1F43B675) {
            l.clusters++;
            walk_cluster(p, data, data + size, &l);
        } else if (id == 0x1C53BB6B) {
            for (size_t c = data, cd, cs; c < data + size; c = cd + cs) {
                assert_int_equal(element(p, n, c, &cd, &cs), 0xBB);
                l.cues++;
                uint64_t time = child_uint(p, cd, cd + cs, 0xB3, UINT64_MAX);
                size_t td = 0, ts = 0;
                for (size_t t = cd; t < cd + cs; t = td + ts)
                    if (element(p, n, t, &td, &ts) == 0xB7)
                        break;
                assert_int_equal(child_uint(p, td, td + ts, 0xF7, 0), 1);
                size_t cluster = segment + child_uint(p, td, td + ts, 0xF1, UINT64_MAX);
                size_t kd, ks, bd, bs;
                assert_int_equal(element(p, n, cluster, &kd, &ks), 0x1F43B675);
                assert_int_equal(child_uint(p, kd, kd + ks, 0xE7, UINT64_MAX), time);
                element(p, n, kd, &bd, &bs); /* the Timestamp */
                assert_int_equal(element(p, n, bd + bs, &bd, &bs), 0xA3);
                assert_int_equal(p[bd + 3] & 0x80, 0x80); /* a key frame */
            }
        }
    }
    free(p);
    return l;
}

/* --- Read back: the reader, and ffprobe and ffmpeg where they are ---------- */

/* What ffprobe says of the video stream (the frames counted by decoding
 * them): "codec_name=vp8|width=320|height=240|nb_read_frames=200". */
static void probe(const char *path, char *out, size_t size)
{
    char cmd[640];
    snprintf(cmd, sizeof cmd,
             "'%s' -v error -count_frames -select_streams v:0 -show_entries "
             "stream=codec_name,width,height,nb_read_frames -of compact=p=0:nk=0 '%s'",
             getenv("FFPROBE"), path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    if (!fgets(out, (int)size, p))
        out[0] = 0;
    out[strcspn(out, "\n")] = 0;
    assert_int_equal(pclose(p), 0);
}

/* Each decoded frame's time, as ffprobe gives it, within a millisecond of
 * frame i's (i / FPS). */
static void probe_frame_times(const stream *s, const char *path)
{
    char cmd[640], line[256];
    snprintf(cmd, sizeof cmd,
             "'%s' -v error -select_streams v:0 -show_entries frame=pts_time "
             "-of compact=p=0:nk=0 '%s'",
             getenv("FFPROBE"), path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    int i = 0;
    for (; fgets(line, sizeof line, p); i++) {
        const char *t = strstr(line, "pts_time=");
        assert_non_null(t);
        double want = (double)i / FPS, got = atof(t + 9);
        if (fabs(got - want) > 0.001)
            fail_msg("frame %d: pts_time %.6f, want %.6f", i, got, want);
    }
    assert_int_equal(pclose(p), 0);
    assert_int_equal(i, s->count);
}

/* Each frame's time within a millisecond of frame i's (i / FPS), its key
 * flag the encoder's. */
static void times_match(const stream *s, const reader_video *v, const char *who)
{
    assert_int_equal(v->frames, s->count);
    for (int i = 0; i < v->frames; i++) {
        if (fabs(v->pts[i] - (double)i / FPS) > 0.001)
            fail_msg("frame %d by %s: at %.6f s, want %.6f", i, who, v->pts[i], (double)i / FPS);
        if (v->key[i] != s->frames[i].key)
            fail_msg("frame %d by %s: key %d, the encoder's %d", i, who, v->key[i],
                     s->frames[i].key);
    }
}

/* Every frame the reader decoded, and ffmpeg where `ffmpeg`, within 30 dB
 * of its source (PSNR of Y, U and V together); the lowest noted. */
static void pictures_match(const stream *s, const reader_video *ours, const reader_video *ffmpeg)
{
    const reader_video *views[2] = {ours, ffmpeg};
    static const char *const who[2] = {"the reader", "ffmpeg"};
    double lowest[2] = {INFINITY, INFINITY};
    uint8_t *want = malloc(FRAME_BYTES);
    assert_non_null(want);
    for (int i = 0; i < s->count; i++) {
        picture(i, want);
        for (int k = 0; k < 2 && views[k]; k++) {
            assert_int_equal(views[k]->picture_size, FRAME_BYTES);
            double psnr = readback_psnr(views[k]->pictures + (size_t)i * FRAME_BYTES, want,
                                        FRAME_BYTES);
            if (psnr < 30)
                fail_msg("frame %d decoded by %s: PSNR %.1f dB, under 30", i, who[k], psnr);
            lowest[k] = fmin(lowest[k], psnr);
        }
    }
    free(want);
    for (int k = 0; k < 2 && views[k]; k++)
        print_message("# %d frames decoded by %s, the lowest PSNR %.1f dB\n", s->count, who[k],
                      lowest[k]);
}

/* Everything a player sees of `s` muxed into `name`. */
static void plays(const stream *s, const char *name, uint32_t timescale, double ticks,
                  int clusters, int cues)
{
    const char *path = path_of(name);
    mux(s, path, timescale, ticks);
    layout l = walk(path);
    assert_string_equal(l.codec, s->codec == CUGL__WEBM_VP9 ? "V_VP9" : "V_VP8");
    assert_int_equal(l.clusters, clusters);
    assert_int_equal(l.cues, cues);
    assert_int_equal(l.blocks, s->count);
    assert_int_equal(l.voids_in_seek_head, 0);
    assert_true(fabs(l.duration - 1000.0 * s->count / FPS) <= 0.5);
    reader_video v;
    readback_read(&v, path, true);
    assert_string_equal(v.codec, s->codec == CUGL__WEBM_VP9 ? "vp9" : "vp8");
    assert_int_equal(v.width, W);
    assert_int_equal(v.height, H);
    assert_true(fabs(v.duration - (double)s->count / FPS) <= 0.0005);
    times_match(s, &v, "the reader");
    reader_video p = {0};
    if (readback_tools()) {
        char got[256], want[256];
        probe(path, got, sizeof got);
        snprintf(want, sizeof want, "codec_name=%s|width=%d|height=%d|nb_read_frames=%d",
                 s->codec == CUGL__WEBM_VP9 ? "vp9" : "vp8", W, H, s->count);
        assert_string_equal(got, want);
        probe_frame_times(s, path);
        readback_probe(&p, path, true);
        readback_agree(&v, &p);
        times_match(s, &p, "ffprobe");
    }
    pictures_match(s, &v, p.pictures ? &p : NULL);
    reader_free(&p);
    reader_free(&v);
    unlink(path);
}

/* --- The cases --------------------------------------------------------------- */

static void vp8_plays(void **state)
{
    (void)state;
    plays(&vp8, "vp8.webm", FPS, 1, 4, 4);
}

static void vp9_plays(void **state)
{
    (void)state;
    plays(&vp9, "vp9.webm", FPS, 1, 4, 4);
}

/* Microsecond timestamps: i/60 s is not a whole number of them, nor of ms. */
static void microseconds_play(void **state)
{
    (void)state;
    plays(&vp8, "vp8_us.webm", 1000000, 1e6 / FPS, 4, 4);
}

/* One key frame in 6.7 s: a second Cluster at 5 s, without a cue. */
static void long_gop_splits_clusters(void **state)
{
    (void)state;
    plays(&vp8_long, "vp8_long.webm", FPS, 1, 2, 1);
}

static void same_frames_same_bytes(void **state)
{
    (void)state;
    size_t na, nb;
    mux(&vp9, path_of("a.webm"), FPS, 1);
    mux(&vp9, path_of("b.webm"), FPS, 1);
    uint8_t *a = slurp(path_of("a.webm"), &na), *b = slurp(path_of("b.webm"), &nb);
    assert_int_equal(na, nb);
    assert_memory_equal(a, b, na);
    free(a);
    free(b);
    unlink(path_of("a.webm"));
    unlink(path_of("b.webm"));
}

/* No frames: a track, an empty Cluster (FFmpeg reads no file without
 * one), no Cues (the SeekHead's entry for them a Void). */
static void no_frames_is_a_file(void **state)
{
    (void)state;
    const char *path = path_of("empty.webm");
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    cugl__webm *m = NULL;
    assert_ok(cugl__webm_open(&m, f, CUGL__WEBM_VP8, W, H, FPS, WHO));
    assert_ok(cugl__webm_finish(m, 0));
    fclose(f);
    layout l = walk(path);
    assert_int_equal(l.clusters, 1);
    assert_int_equal(l.blocks, 0);
    assert_int_equal(l.cues, 0);
    assert_int_equal(l.voids_in_seek_head, 1);
    reader_video v;
    readback_read(&v, path, true);
    assert_string_equal(v.codec, "vp8");
    assert_int_equal(v.width, W);
    assert_int_equal(v.height, H);
    assert_int_equal(v.frames, 0);
    if (readback_tools()) {
        char got[256];
        probe(path, got, sizeof got);
        /* No frames counted: "0" or "N/A", as ffprobe's version says it. */
        assert_memory_equal(got, "codec_name=vp8|width=320|height=240|",
                            strlen("codec_name=vp8|width=320|height=240|"));
        reader_video p;
        readback_probe(&p, path, false);
        readback_agree(&v, &p);
        reader_free(&p);
    }
    reader_free(&v);
    unlink(path);
}

/* The Segment's and every Cluster's size made unknown (all ones), as a
 * muxer that cannot seek back writes them: the same frames, the same
 * pictures; ffprobe, where it is, agrees. */
static void unknown_sizes_read_the_same(void **state)
{
    (void)state;
    const char *path = path_of("unknown.webm");
    mux(&vp8, path, FPS, 1);
    size_t n, data, size;
    uint8_t *p = slurp(path, &n);
    reader_video known;
    readback_read(&known, path, true);
    element(p, n, 0, &data, &size); /* the EBML header */
    size_t sizes[16], count = 0;
    assert_int_equal(element(p, n, data + size, &data, &size), 0x18538067);
    sizes[count++] = data - 8;
    for (size_t at = data; at < n; at = data + size)
        if (element(p, n, at, &data, &size) == 0x1F43B675) {
            assert_true(count < 16);
            sizes[count++] = data - 8;
        }
    assert_int_equal(count, 1 + 4); /* the Segment, four Clusters */
    for (size_t i = 0; i < count; i++) {
        assert_int_equal(p[sizes[i]], 0x01); /* 8 bytes wide */
        memset(p + sizes[i] + 1, 0xff, 7);
    }
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
    free(p);
    reader_video unknown;
    readback_read(&unknown, path, true);
    assert_int_equal(unknown.frames, known.frames);
    assert_memory_equal(unknown.pts, known.pts, sizeof *known.pts * (size_t)known.frames);
    assert_memory_equal(unknown.key, known.key, sizeof *known.key * (size_t)known.frames);
    assert_memory_equal(unknown.pictures, known.pictures,
                        known.picture_size * (size_t)known.frames);
    if (readback_tools()) {
        reader_video probed;
        readback_probe(&probed, path, false);
        readback_agree(&unknown, &probed);
        reader_free(&probed);
    }
    reader_free(&known);
    reader_free(&unknown);
    unlink(path);
}

/* --- The reader holds a file to its rules ---------------------------------- */

/* A muxer's mistake: the byte `at` into the first `pattern` after the last
 * `anchor` (LAST: the last byte of the value of the element `pattern`
 * begins) changed by `delta`; the reader's reason, or its start. */
#define LAST ((size_t)-1)
#define BYTES(s) s, sizeof s - 1
typedef struct mistake {
    const char *anchor;
    size_t anchor_size;
    const char *pattern;
    size_t pattern_size;
    size_t at;
    int delta;
    const char *why;
} mistake;

static const mistake mistakes[] = {
    {BYTES(""), BYTES("webm"), 3, 1, "the DocType is \"webn\", not \"webm\""},
    {BYTES(""), BYTES("V_VP8"), 4, -1, "track 1's CodecID is \"V_VP7\": V_VP8 or V_VP9 is read"},
    {BYTES(""), BYTES("\xB0\x82\x01\x40"), 3, 1,
     "frame 0 is a 320 x 240 VP8 key frame in a 321 x 240 track"},
    {BYTES("\x1F\x43\xB6\x75"), BYTES("\x81\x00\x00\x80"), 3, -0x80,
     "frame 90 is marked not key, its VP8 frame"},
    {BYTES("\x1C\x53\xBB\x6B"), BYTES("\xF1"), LAST, 1, "cue 0 points at byte "},
    {BYTES("\x11\x4D\x9B\x74"), BYTES("\x53\xAC"), LAST, 1, "the SeekHead's entry for the "},
};

/* Where `s` is first after `from`, or last where `last`. */
static size_t find_bytes(const uint8_t *p, size_t n, size_t from, const char *s, size_t size,
                         bool last)
{
    size_t found = SIZE_MAX;
    for (size_t at = from; at + size <= n && (last || found == SIZE_MAX); at++)
        if (memcmp(p + at, s, size) == 0)
            found = at;
    if (found == SIZE_MAX)
        fail_msg("no such bytes in the file (%zu of them)", size);
    return found;
}

static void the_reader_refuses_a_muxers_mistakes(void **state)
{
    (void)state;
    const char *path = path_of("mistake.webm");
    mux(&vp8, path, FPS, 1);
    size_t n;
    uint8_t *file = slurp(path, &n);
    unlink(path);
    uint8_t *copy = malloc(n);
    assert_non_null(copy);
    for (size_t k = 0; k < sizeof mistakes / sizeof mistakes[0]; k++) {
        const mistake *m = &mistakes[k];
        memcpy(copy, file, n);
        size_t at = m->anchor_size ? find_bytes(copy, n, 0, m->anchor, m->anchor_size, true) : 0;
        at = find_bytes(copy, n, at, m->pattern, m->pattern_size, false);
        if (m->at == LAST) {
            size_t data, size;
            element(copy, n, at, &data, &size);
            at = data + size - 1;
        } else {
            at += m->at;
        }
        copy[at] = (uint8_t)(copy[at] + m->delta);
        reader_video v;
        char why[512];
        if (reader_parse(&v, copy, n, false, why, sizeof why) == 0)
            fail_msg("mistake %zu (byte %zu): read, not refused", k, at);
        if (strncmp(why, m->why, strlen(m->why)) != 0)
            fail_msg("mistake %zu (byte %zu): \"%s\", expected \"%s\"", k, at, why, m->why);
        print_message("# %s\n", why);
    }
    free(copy);
    free(file);
}

/* Eight frames of VP8 and of VP9 muxed, cut short at every byte of their
 * ends and changed at random (seeded, so a failure repeats): refused with
 * a reason or read sanely, never a read past the bytes given (the
 * sanitizers' build). */
static void damaged_copies_are_refused_or_read_sanely(void **state)
{
    (void)state;
    const stream *streams[] = {&vp8, &vp9};
    for (int k = 0; k < 2; k++) {
        stream eight = *streams[k];
        eight.count = 8;
        const char *path = path_of("damaged.webm");
        mux(&eight, path, FPS, 1);
        size_t n;
        uint8_t *file = slurp(path, &n);
        unlink(path);
        readback_damage(k ? "a WebM of 8 VP9 frames" : "a WebM of 8 VP8 frames", file, n,
                        20240601 + (unsigned)k);
        free(file);
    }
}

static void expect(cugl_status got, cugl_status want, const char *message)
{
    if (got != want)
        fail_msg("returned %s, expected %s (%s)", cugl_status_name(got), cugl_status_name(want),
                 cugl_last_error());
    if (strcmp(cugl_last_error(), message) != 0)
        fail_msg("message \"%s\", expected \"%s\"", cugl_last_error(), message);
}

static void refusals(void **state)
{
    (void)state;
    FILE *f = fopen(path_of("refused.webm"), "wb");
    assert_non_null(f);
    cugl__webm *m = NULL;
    const struct {
        cugl__webm **out;
        FILE *f;
        int codec, w, h;
        uint32_t timescale;
        const char *message;
    } opens[] = {
        {NULL, f, 0, W, H, FPS, WHO ": out is NULL"},
        {&m, NULL, 0, W, H, FPS, WHO ": f is NULL"},
        {&m, f, 2, W, H, FPS, WHO ": codec 2 is neither VP8 nor VP9"},
        {&m, f, 0, 0, H, FPS, WHO ": a 0 x 240 picture (each side 1 to 16384)"},
        {&m, f, 0, W, -1, FPS, WHO ": a 320 x -1 picture (each side 1 to 16384)"},
        {&m, f, 1, 16385, H, FPS, WHO ": a 16385 x 240 picture (each side 1 to 16384)"},
        {&m, f, 0, W, H, 0, WHO ": timescale is 0 ticks a second"},
    };
    for (size_t i = 0; i < sizeof opens / sizeof *opens; i++) {
        m = (cugl__webm *)1;
        expect(cugl__webm_open(opens[i].out, opens[i].f, (cugl__webm_codec)opens[i].codec,
                               opens[i].w, opens[i].h, opens[i].timescale, WHO),
               CUGL_ERROR_INVALID_ARGUMENT, opens[i].message);
        if (opens[i].out)
            assert_null(m);
    }
    /* A pipe cannot be seeked back into. */
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    FILE *w = fdopen(fds[1], "wb");
    assert_non_null(w);
    expect(cugl__webm_open(&m, w, CUGL__WEBM_VP8, W, H, FPS, WHO), CUGL_ERROR_INVALID_ARGUMENT,
           WHO ": a WebM needs a seekable file (its sizes are written last): Illegal seek");
    fclose(w);
    close(fds[0]);

    assert_ok(cugl__webm_open(&m, f, CUGL__WEBM_VP8, W, H, FPS, WHO));
    const uint8_t *d = vp8.frames[0].data;
    size_t n = vp8.frames[0].size;
    expect(cugl__webm_add(m, d, n, 0, false), CUGL_ERROR_INVALID_ARGUMENT,
           WHO ": the first frame (pts 0) is not a key frame");
    expect(cugl__webm_add(m, NULL, n, 0, true), CUGL_ERROR_INVALID_ARGUMENT,
           WHO ": the frame is NULL");
    expect(cugl__webm_add(m, d, 0, 0, true), CUGL_ERROR_INVALID_ARGUMENT,
           WHO ": a frame of 0 bytes");
    expect(cugl__webm_add(m, d, n, -1, true), CUGL_ERROR_INVALID_ARGUMENT,
           WHO ": pts -1 is negative");
    expect(cugl__webm_add(NULL, d, n, 0, true), CUGL_ERROR_INVALID_ARGUMENT,
           "cugl__webm_add: m is NULL");
    /* Refused calls wrote nothing: the muxer goes on. */
    assert_ok(cugl__webm_add(m, d, n, 5, true));
    expect(cugl__webm_add(m, vp8.frames[1].data, vp8.frames[1].size, 5, false),
           CUGL_ERROR_INVALID_ARGUMENT, WHO ": pts 5 is not after the last frame's (5)");
    expect(cugl__webm_add(m, vp8.frames[1].data, vp8.frames[1].size, 4, false),
           CUGL_ERROR_INVALID_ARGUMENT, WHO ": pts 4 is not after the last frame's (5)");
    assert_ok(cugl__webm_add(m, vp8.frames[1].data, vp8.frames[1].size, 6, false));
    expect(cugl__webm_finish(m, 5), CUGL_ERROR_INVALID_ARGUMENT,
           WHO ": the end, pts 5, is before the last frame's (6)");
    expect(cugl__webm_finish(NULL, 7), CUGL_ERROR_INVALID_ARGUMENT,
           "cugl__webm_finish: m is NULL");
    cugl__webm_abort(NULL);
    /* Dropped: frees, writes nothing more. */
    assert_int_equal(fflush(f), 0);
    long before = ftell(f);
    assert_ok(cugl__webm_open(&m, f, CUGL__WEBM_VP8, W, H, FPS, WHO));
    assert_ok(cugl__webm_add(m, d, n, 0, true));
    long written = ftell(f);
    cugl__webm_abort(m);
    assert_int_equal(ftell(f), written);
    assert_true(written > before);
    fclose(f);
    unlink(path_of("refused.webm"));
}

/* A full disk: the failure says so and names the caller, later calls fail
 * at once with the same, finish frees (the sanitizers' builds see leaks). */
static void full_disk(void **state)
{
    (void)state;
    FILE *f = fopen("/dev/full", "wb");
    if (!f)
        skip();
    cugl__webm *m = NULL;
    cugl_status st = cugl__webm_open(&m, f, CUGL__WEBM_VP8, W, H, FPS, WHO);
    for (int i = 0; st == CUGL_OK && i < vp8.count; i++)
        st = cugl__webm_add(m, vp8.frames[i].data, vp8.frames[i].size, i, vp8.frames[i].key);
    assert_status(st, CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(),
                        WHO ": writing the WebM failed: No space left on device");
    expect(cugl__webm_add(m, vp8.frames[0].data, vp8.frames[0].size, 1000, true),
           CUGL_ERROR_INVALID_ARGUMENT,
           WHO ": writing the WebM failed before: No space left on device");
    expect(cugl__webm_finish(m, 1000), CUGL_ERROR_INVALID_ARGUMENT,
           WHO ": writing the WebM failed before: No space left on device");
    fclose(f);

    /* Failing only at the end: the frames fit stdio's buffer. */
    f = fopen("/dev/full", "wb");
    assert_non_null(f);
    assert_ok(cugl__webm_open(&m, f, CUGL__WEBM_VP8, 16, 16, FPS, WHO));
    static const uint8_t tiny[8] = {1, 2, 3};
    assert_ok(cugl__webm_add(m, tiny, sizeof tiny, 0, true));
    expect(cugl__webm_finish(m, 1), CUGL_ERROR_INVALID_ARGUMENT,
           WHO ": writing the WebM failed: No space left on device");
    fclose(f);
}

int main(void)
{
#if !TEST_WEBM_VPX
    cugl_test_skip_all("built without libvpx (Debian's libvpx-dev)");
#else
    const char *base = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/cugl-webm-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(dir)) {
        printf("Bail out! mkdtemp %s: %s\n", dir, strerror(errno));
        return 1;
    }
    char why[128];
    if (!encode(&vp8, CUGL__WEBM_VP8, 120, 30, why, sizeof why) ||
        !encode(&vp9, CUGL__WEBM_VP9, 120, 30, why, sizeof why) ||
        !encode(&vp8_long, CUGL__WEBM_VP8, 400, 400, why, sizeof why)) {
        printf("Bail out! %s\n", why);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(vp8_plays),
        cmocka_unit_test(vp9_plays),
        cmocka_unit_test(microseconds_play),
        cmocka_unit_test(long_gop_splits_clusters),
        cmocka_unit_test(same_frames_same_bytes),
        cmocka_unit_test(no_frames_is_a_file),
        cmocka_unit_test(unknown_sizes_read_the_same),
        cmocka_unit_test(the_reader_refuses_a_muxers_mistakes),
        cmocka_unit_test(damaged_copies_are_refused_or_read_sanely),
        cmocka_unit_test(refusals),
        cmocka_unit_test(full_disk),
    };
    int failed = cugl_test_run(tests);
    stream_free(&vp8);
    stream_free(&vp9);
    stream_free(&vp8_long);
    rmdir(dir);
    return failed;
#endif
}
