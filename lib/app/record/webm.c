/*
 * webm.c - a WebM muxer for one VP8 or VP9 track (webm.h): what libwebm's
 * mkvmuxer writes for a file on disk, in C11, with nothing that varies
 * from run to run (no DateUTC, no random SegmentUID), so the same frames
 * make the same bytes.
 *
 * The file, in order:
 *   EBML header   DocType "webm", version 4, read version 2
 *   Segment       its size 8 bytes wide, written at the end
 *     SeekHead    where Info, Tracks and Cues are; the Cues' 8-byte
 *                 position written at the end (a Void where none are)
 *     Info        TimestampScale, Duration (a double written at the end),
 *                 MuxingApp and WritingApp "cugl"
 *     Tracks      track 1, UID 1, video, V_VP8 or V_VP9, the picture's size
 *     Cluster...  Timestamp, SimpleBlocks; each Cluster's size 8 bytes
 *                 wide, written when the next one starts
 *     Cues        a CuePoint a key frame: its time and its Cluster
 * Every position (SeekPosition, CueClusterPosition) counts from the first
 * byte of the Segment's data.
 *
 * Timestamps are milliseconds (TimestampScale 1,000,000 ns), what
 * browsers and libwebm use: a SimpleBlock's time is a 16-bit offset from
 * its Cluster's, so a finer scale would shorten Clusters, and no scale
 * makes i/60 s exact anyway. A pts becomes the nearest millisecond (i/60
 * s within 0.5 ms), and at least one past the last frame's, so that two
 * frames under a millisecond apart (a clock past 1000 fps) stay in order.
 *
 * A Cluster starts at each key frame, so that a player seeks to a
 * Cluster's start and decodes from there, and after 5 s without one, as
 * libwebm's live mode does (a Cluster's blocks are at most 32.767 s from
 * its time; 5 s also keeps what a player reads before the first frame of a
 * seek short).
 *
 * The headers are made in memory and written at once; each frame is
 * written as it comes. A failed write is kept: every later call reports it
 * and writes nothing more, and cugl__webm_finish still frees.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "check.h"
#include "webm.h"

/* The Matroska element IDs written here, as they are written (their
 * length marker included). */
enum {
    ID_EBML = 0x1A45DFA3,
    ID_EBML_VERSION = 0x4286,
    ID_EBML_READ_VERSION = 0x42F7,
    ID_EBML_MAX_ID_LENGTH = 0x42F2,
    ID_EBML_MAX_SIZE_LENGTH = 0x42F3,
    ID_DOC_TYPE = 0x4282,
    ID_DOC_TYPE_VERSION = 0x4287,
    ID_DOC_TYPE_READ_VERSION = 0x4285,
    ID_SEGMENT = 0x18538067,
    ID_SEEK_HEAD = 0x114D9B74,
    ID_SEEK = 0x4DBB,
    ID_SEEK_ID = 0x53AB,
    ID_SEEK_POSITION = 0x53AC,
    ID_INFO = 0x1549A966,
    ID_TIMESTAMP_SCALE = 0x2AD7B1,
    ID_DURATION = 0x4489,
    ID_MUXING_APP = 0x4D80,
    ID_WRITING_APP = 0x5741,
    ID_TRACKS = 0x1654AE6B,
    ID_TRACK_ENTRY = 0xAE,
    ID_TRACK_NUMBER = 0xD7,
    ID_TRACK_UID = 0x73C5,
    ID_TRACK_TYPE = 0x83,
    ID_CODEC_ID = 0x86,
    ID_VIDEO = 0xE0,
    ID_PIXEL_WIDTH = 0xB0,
    ID_PIXEL_HEIGHT = 0xBA,
    ID_CLUSTER = 0x1F43B675,
    ID_TIMESTAMP = 0xE7,
    ID_SIMPLE_BLOCK = 0xA3,
    ID_CUES = 0x1C53BB6B,
    ID_CUE_POINT = 0xBB,
    ID_CUE_TIME = 0xB3,
    ID_CUE_TRACK_POSITIONS = 0xB7,
    ID_CUE_TRACK = 0xF7,
    ID_CUE_CLUSTER_POSITION = 0xF1,
    ID_VOID = 0xEC,
};

#define TIMESTAMP_SCALE_NS 1000000u
#define CLUSTER_MS 5000         /* the longest a Cluster runs without a key frame */
#define MAX_SIZE 0xFFFFFFFFFFFFFEu /* the largest size an 8-byte EBML size holds */
/* The Cues' Seek entry: Seek (2 + 1), SeekID (2 + 1 + 4), SeekPosition (2 + 1 + 8). */
#define CUES_SEEK_BYTES 21
/* The most a CuePoint takes: its head, CueTime and CueClusterPosition of 8
 * bytes each, CueTrackPositions' head and CueTrack. */
#define CUE_POINT_MAX 27

typedef struct cue {
    uint64_t ms;      /* the key frame's time */
    uint64_t cluster; /* its Cluster's position */
} cue;

struct cugl__webm {
    FILE *f;
    const char *who;
    uint32_t timescale;
    int error;         /* errno of the first failed write; 0 while all went out */
    uint64_t pos;      /* where the next byte goes: the end of what is written */
    uint64_t segment;  /* the first byte of the Segment's data */
    /* Where what is written at the end goes (file positions). */
    uint64_t segment_size_at, cues_seek_at, duration_at;
    /* The Cluster being written, where there is one: where its size goes
     * and its time. */
    bool in_cluster;
    uint64_t cluster_size_at, cluster_ms;
    /* The last frame's pts and time, where there was one. */
    bool any;
    int64_t last_pts;
    uint64_t last_ms;
    cue *cues;
    size_t cue_count, cue_capacity;
};

/* Bytes made in memory: the headers, a block's head, the Cues. Every
 * buffer here is made big enough for the most it can take; one that was
 * not is marked `over` (writing nothing past `cap`), and is refused. */
typedef struct bytes {
    uint8_t *p;
    size_t n, cap;
    bool over;
} bytes;

static void put(bytes *b, const void *data, size_t len)
{
    if (b->over || len > b->cap - b->n) {
        b->over = true;
        return;
    }
    memcpy(b->p + b->n, data, len);
    b->n += len;
}

/* `v`'s low `width` bytes, most significant first. */
static void put_be(bytes *b, uint64_t v, int width)
{
    uint8_t o[8];
    for (int i = 0; i < width; i++)
        o[i] = (uint8_t)(v >> 8 * (width - 1 - i));
    put(b, o, (size_t)width);
}

static int be_width(uint64_t v)
{
    int w = 1;
    while (w < 8 && v >> 8 * w)
        w++;
    return w;
}

static void put_id(bytes *b, uint32_t id)
{
    put_be(b, id, be_width(id));
}

/* An EBML size `width` bytes wide: a marker bit, then the value. */
static void put_size(bytes *b, uint64_t size, int width)
{
    put_be(b, size | (uint64_t)1 << 7 * width, width);
}

/* The fewest bytes a size takes (all ones means "unknown", so not that). */
static int size_width(uint64_t size)
{
    int w = 1;
    while (w < 8 && size >= ((uint64_t)1 << 7 * w) - 1)
        w++;
    return w;
}

static void put_uint(bytes *b, uint32_t id, uint64_t v)
{
    put_id(b, id);
    put_size(b, (uint64_t)be_width(v), 1);
    put_be(b, v, be_width(v));
}

/* An unsigned integer 8 bytes wide, to be written again later: where its
 * value is in b. */
static size_t put_uint8_wide(bytes *b, uint32_t id, uint64_t v)
{
    put_id(b, id);
    put_size(b, 8, 1);
    size_t at = b->n;
    put_be(b, v, 8);
    return at;
}

static void put_string(bytes *b, uint32_t id, const char *s)
{
    put_id(b, id);
    put_size(b, strlen(s), 1);
    put(b, s, strlen(s));
}

/* A master element of less than 127 bytes (every one but the Segment, the
 * Clusters and the Cues, which are written apart): its ID and a byte for
 * its size, which end_master writes. */
static size_t begin_master(bytes *b, uint32_t id)
{
    put_id(b, id);
    put_size(b, 0, 1);
    return b->n;
}

static void end_master(bytes *b, size_t start)
{
    if (b->over || b->n - start >= 127)
        b->over = true; /* too big for its byte: the writer refuses the buffer */
    else
        b->p[start - 1] = (uint8_t)(0x80 | (b->n - start));
}

static void put_be64(uint8_t o[8], uint64_t v)
{
    bytes b = {o, 0, 8, false};
    put_be(&b, v, 8);
}

static cugl_status errno_fail(const char *who, int e, const char *what)
{
    char text[128];
    if (strerror_r(e, text, sizeof text) != 0)
        snprintf(text, sizeof text, "errno %d", e);
    /* As lib/app/file.c reports a failed write. */
    cugl_status st = e == ENOMEM ? CUGL_ERROR_OUT_OF_MEMORY : CUGL_ERROR_INVALID_ARGUMENT;
    return cugl__fail(st, who, "%s: %s", what, text);
}

/* The first failed write, kept; false. */
static bool failed(cugl__webm *m)
{
    if (!m->error)
        m->error = errno ? errno : EIO;
    return false;
}

static bool seek(cugl__webm *m, uint64_t at)
{
    errno = 0;
    return fseeko(m->f, (off_t)at, SEEK_SET) == 0 || failed(m);
}

/* `len` bytes at the end of the file. */
static bool out(cugl__webm *m, const void *data, size_t len)
{
    errno = 0;
    if (len > 0 && fwrite(data, 1, len, m->f) != len)
        return failed(m);
    m->pos += len;
    return true;
}

static bool out_bytes(cugl__webm *m, const bytes *b)
{
    if (b->over) { /* a buffer made too small: a bug here, not the disk's */
        errno = EOVERFLOW;
        return failed(m);
    }
    return out(m, b->p, b->n);
}

/* `len` bytes written again at `at`, before the end; then back to the end. */
static bool patch(cugl__webm *m, uint64_t at, const void *data, size_t len)
{
    if (!seek(m, at))
        return false;
    errno = 0;
    if (fwrite(data, 1, len, m->f) != len)
        return failed(m);
    return seek(m, m->pos);
}

/* An 8-byte EBML size written again at `at`. */
static bool patch_size(cugl__webm *m, uint64_t at, uint64_t size)
{
    uint8_t o[8];
    put_be64(o, size | (uint64_t)1 << 56);
    return patch(m, at, o, sizeof o);
}

/* The Seek entry of `id` at `position`; where its SeekPosition's value is. */
static size_t put_seek(bytes *b, uint32_t id, uint64_t position)
{
    size_t seek_at = begin_master(b, ID_SEEK);
    put_id(b, ID_SEEK_ID);
    put_size(b, 4, 1);
    put_be(b, id, 4);
    size_t at = put_uint8_wide(b, ID_SEEK_POSITION, position);
    end_master(b, seek_at);
    return at;
}

/* The EBML header, the Segment's head, SeekHead, Info and Tracks, the
 * places written at the end noted in m (as offsets in b). */
static void put_headers(cugl__webm *m, bytes *b, cugl__webm_codec codec, int width, int height)
{
    size_t at = begin_master(b, ID_EBML);
    put_uint(b, ID_EBML_VERSION, 1);
    put_uint(b, ID_EBML_READ_VERSION, 1);
    put_uint(b, ID_EBML_MAX_ID_LENGTH, 4);
    put_uint(b, ID_EBML_MAX_SIZE_LENGTH, 8);
    put_string(b, ID_DOC_TYPE, "webm");
    put_uint(b, ID_DOC_TYPE_VERSION, 4);
    put_uint(b, ID_DOC_TYPE_READ_VERSION, 2);
    end_master(b, at);

    put_id(b, ID_SEGMENT);
    m->segment_size_at = b->n;
    put_size(b, 0, 8);
    m->segment = b->n;

    at = begin_master(b, ID_SEEK_HEAD);
    size_t info_seek = put_seek(b, ID_INFO, 0);
    size_t tracks_seek = put_seek(b, ID_TRACKS, 0);
    m->cues_seek_at = b->n;
    put_seek(b, ID_CUES, 0);
    end_master(b, at);

    uint64_t info = b->n - m->segment;
    at = begin_master(b, ID_INFO);
    put_uint(b, ID_TIMESTAMP_SCALE, TIMESTAMP_SCALE_NS);
    put_id(b, ID_DURATION);
    put_size(b, 8, 1);
    m->duration_at = b->n;
    put_be(b, 0, 8);
    put_string(b, ID_MUXING_APP, "cugl");
    put_string(b, ID_WRITING_APP, "cugl");
    end_master(b, at);

    uint64_t tracks = b->n - m->segment;
    at = begin_master(b, ID_TRACKS);
    size_t entry = begin_master(b, ID_TRACK_ENTRY);
    put_uint(b, ID_TRACK_NUMBER, 1);
    put_uint(b, ID_TRACK_UID, 1);
    put_uint(b, ID_TRACK_TYPE, 1); /* video */
    put_string(b, ID_CODEC_ID, codec == CUGL__WEBM_VP9 ? "V_VP9" : "V_VP8");
    size_t video = begin_master(b, ID_VIDEO);
    put_uint(b, ID_PIXEL_WIDTH, (uint64_t)width);
    put_uint(b, ID_PIXEL_HEIGHT, (uint64_t)height);
    end_master(b, video);
    end_master(b, entry);
    end_master(b, at);

    if (!b->over) {
        put_be64(b->p + info_seek, info);
        put_be64(b->p + tracks_seek, tracks);
    }
}

/* m freed, with its cues; `st` passed on. */
static cugl_status drop(cugl__webm *m, cugl_status st)
{
    free(m->cues);
    free(m);
    return st;
}

cugl_status cugl__webm_open(cugl__webm **out_m, FILE *f, cugl__webm_codec codec, int width,
                            int height, uint32_t timescale, const char *who)
{
    if (!who)
        who = __func__;
    if (out_m)
        *out_m = NULL;
    if (!out_m || !f)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "%s is NULL", out_m ? "f" : "out");
    if (codec != CUGL__WEBM_VP8 && codec != CUGL__WEBM_VP9)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "codec %d is neither VP8 nor VP9",
                          (int)codec);
    if (width <= 0 || height <= 0 || width > 16384 || height > 16384)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "a %d x %d picture (each side 1 to 16384)", width, height);
    if (timescale == 0)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "timescale is 0 ticks a second");
    /* The sizes and positions are written last, where they were left. */
    errno = 0;
    off_t start = ftello(f);
    if (start < 0 || fseeko(f, start, SEEK_SET) != 0)
        return errno_fail(who, errno ? errno : ESPIPE,
                          "a WebM needs a seekable file (its sizes are written last)");
    cugl__webm *m = calloc(1, sizeof *m);
    if (!m)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, who, "no memory for a WebM muxer");
    m->f = f;
    m->who = who;
    m->timescale = timescale;
    uint8_t head[256];
    bytes b = {head, 0, sizeof head, false};
    put_headers(m, &b, codec, width, height);
    m->pos = (uint64_t)start;
    m->segment += m->pos;
    m->segment_size_at += m->pos;
    m->cues_seek_at += m->pos;
    m->duration_at += m->pos;
    if (!out_bytes(m, &b))
        return drop(m, errno_fail(who, m->error, "writing the WebM's headers failed"));
    *out_m = m;
    return CUGL_OK;
}

/* `pts` ticks as the nearest millisecond; false past 64 bits. */
static bool to_ms(uint32_t timescale, int64_t pts, uint64_t *ms)
{
    uint64_t q = (uint64_t)pts / timescale, r = (uint64_t)pts % timescale;
    if (q > (UINT64_MAX >> 1) / 1000 - 1)
        return false;
    *ms = q * 1000 + (r * 1000 + timescale / 2) / timescale;
    return true;
}

/* A failed write's status, again, for a call after it. */
static cugl_status failed_before(const cugl__webm *m)
{
    return errno_fail(m->who, m->error, "writing the WebM failed before");
}

/* The Cluster being written, closed (its size written), and a new one at
 * `ms` begun. */
static bool new_cluster(cugl__webm *m, uint64_t ms)
{
    if (m->in_cluster && !patch_size(m, m->cluster_size_at, m->pos - m->cluster_size_at - 8))
        return false;
    uint8_t head[24];
    bytes b = {head, 0, sizeof head, false};
    put_id(&b, ID_CLUSTER);
    put_size(&b, 0, 8);
    put_uint(&b, ID_TIMESTAMP, ms);
    m->cluster_size_at = m->pos + 4;
    m->cluster_ms = ms;
    m->in_cluster = true;
    return out_bytes(m, &b);
}

/* Room for one more cue. */
static bool grow_cues(cugl__webm *m)
{
    if (m->cue_count < m->cue_capacity)
        return true;
    size_t n = m->cue_capacity ? 2 * m->cue_capacity : 64;
    cue *c = n < SIZE_MAX / sizeof *c ? realloc(m->cues, n * sizeof *c) : NULL;
    if (!c)
        return false;
    m->cues = c;
    m->cue_capacity = n;
    return true;
}

cugl_status cugl__webm_add(cugl__webm *m, const uint8_t *frame, size_t size, int64_t pts,
                           bool key)
{
    CUGL__CHECK_NOT_NULL(m);
    if (m->error)
        return failed_before(m);
    const char *who = m->who;
    if (!frame)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "the frame is NULL");
    if (size == 0 || size > MAX_SIZE - 4)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "a frame of %zu bytes", size);
    if (!m->any && !key)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the first frame (pts %lld) is not a key frame", (long long)pts);
    if (pts < 0)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "pts %lld is negative",
                          (long long)pts);
    if (m->any && pts <= m->last_pts)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "pts %lld is not after the last frame's (%lld)", (long long)pts,
                          (long long)m->last_pts);
    uint64_t ms;
    if (!to_ms(m->timescale, pts, &ms))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "pts %lld at %u a second is past 64 bits of milliseconds",
                          (long long)pts, m->timescale);
    if (m->any && ms <= m->last_ms)
        ms = m->last_ms + 1;
    if (key && !grow_cues(m))
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, who, "no memory for %zu cues",
                          m->cue_count + 1);
    if (key || !m->in_cluster || ms - m->cluster_ms >= CLUSTER_MS) {
        if (key)
            m->cues[m->cue_count++] = (cue){ms, m->pos - m->segment};
        if (!new_cluster(m, ms))
            return errno_fail(who, m->error, "writing the WebM failed");
    }
    /* SimpleBlock: track 1, the time from the Cluster's, the key flag. */
    uint8_t head[16];
    bytes b = {head, 0, sizeof head, false};
    put_id(&b, ID_SIMPLE_BLOCK);
    put_size(&b, size + 4, size_width(size + 4));
    put_size(&b, 1, 1);
    put_be(&b, ms - m->cluster_ms, 2);
    put_be(&b, key ? 0x80 : 0, 1);
    if (!out_bytes(m, &b) || !out(m, frame, size))
        return errno_fail(who, m->error, "writing the WebM failed");
    m->any = true;
    m->last_pts = pts;
    m->last_ms = ms;
    return CUGL_OK;
}

/* The Cues, at the end of the file. */
static cugl_status write_cues(cugl__webm *m)
{
    bytes b = {malloc(m->cue_count * CUE_POINT_MAX), 0, m->cue_count * CUE_POINT_MAX, false};
    if (!b.p)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, m->who, "no memory for %zu cues",
                          m->cue_count);
    for (size_t i = 0; i < m->cue_count; i++) {
        size_t point = begin_master(&b, ID_CUE_POINT);
        put_uint(&b, ID_CUE_TIME, m->cues[i].ms);
        size_t positions = begin_master(&b, ID_CUE_TRACK_POSITIONS);
        put_uint(&b, ID_CUE_TRACK, 1);
        put_uint(&b, ID_CUE_CLUSTER_POSITION, m->cues[i].cluster);
        end_master(&b, positions);
        end_master(&b, point);
    }
    uint8_t head[12];
    bytes h = {head, 0, sizeof head, false};
    put_id(&h, ID_CUES);
    put_size(&h, b.n, size_width(b.n));
    bool ok = out_bytes(m, &h) && out_bytes(m, &b);
    free(b.p);
    return ok ? CUGL_OK : errno_fail(m->who, m->error, "writing the WebM's cues failed");
}

/* The Cues' Seek entry made a Void of the same length: a file without
 * frames has no Cues (a Cues element holds at least one CuePoint). */
static bool void_cues_seek(cugl__webm *m)
{
    uint8_t v[CUES_SEEK_BYTES] = {ID_VOID, 0x80 | (CUES_SEEK_BYTES - 2)};
    return patch(m, m->cues_seek_at, v, sizeof v);
}

/* What is written at the end: the last Cluster's size, the Cues, the
 * Segment's size, the Cues' position and the Duration. */
static cugl_status close_file(cugl__webm *m, uint64_t end_ms)
{
    /* A file without frames still has a Cluster, empty: FFmpeg reads no
     * Matroska file without one. */
    if ((!m->in_cluster && !new_cluster(m, 0)) ||
        !patch_size(m, m->cluster_size_at, m->pos - m->cluster_size_at - 8))
        return errno_fail(m->who, m->error, "writing the WebM failed");
    uint64_t cues = m->pos - m->segment;
    if (m->cue_count > 0)
        CUGL__TRY(write_cues(m));
    uint8_t position[8], duration[8];
    put_be64(position, cues);
    double d = (double)end_ms;
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    put_be64(duration, bits);
    bool ok = patch_size(m, m->segment_size_at, m->pos - m->segment) &&
              (m->cue_count > 0 ? patch(m, m->cues_seek_at + CUES_SEEK_BYTES - 8, position, 8)
                                : void_cues_seek(m)) &&
              patch(m, m->duration_at, duration, 8);
    errno = 0;
    if (ok && (fflush(m->f) != 0 || ferror(m->f)))
        ok = failed(m);
    return ok ? CUGL_OK : errno_fail(m->who, m->error, "writing the WebM failed");
}

cugl_status cugl__webm_finish(cugl__webm *m, int64_t end_pts)
{
    CUGL__CHECK_NOT_NULL(m);
    if (m->error)
        return drop(m, failed_before(m));
    uint64_t end_ms = 0;
    if (end_pts < (m->any ? m->last_pts : 0))
        return drop(m, cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, m->who,
                                  "the end, pts %lld, is before the last frame's (%lld)",
                                  (long long)end_pts, m->any ? (long long)m->last_pts : 0LL));
    if (!to_ms(m->timescale, end_pts, &end_ms))
        return drop(m, cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, m->who,
                                  "the end, pts %lld at %u a second, is past 64 bits of "
                                  "milliseconds", (long long)end_pts, m->timescale));
    if (m->any && end_ms < m->last_ms)
        end_ms = m->last_ms;
    return drop(m, close_file(m, end_ms));
}

void cugl__webm_abort(cugl__webm *m)
{
    if (m)
        drop(m, CUGL_OK);
}
