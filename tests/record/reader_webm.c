/*
 * reader_webm.c - a WebM's video track read from its EBML elements (RFC
 * 8794, Matroska's elements as WebM keeps them).
 *
 * An element is its ID (1 to 4 bytes, the length marker kept), its size
 * (a variable-length integer of 1 to 8 bytes, the marker dropped; all
 * value bits set: unknown, which only a Segment and a Cluster may be: they
 * then end at their parent's end, or where an element comes that cannot
 * be their child), and its data. What is read:
 *   EBML header           DocType "webm", EBMLReadVersion 1
 *   Segment
 *     SeekHead            each Seek's element is where it says
 *     Info                TimestampScale (ns a tick; TimecodeScale once),
 *                         Duration (in ticks, a float)
 *     Tracks/TrackEntry   the first video track: its TrackNumber, CodecID
 *                         V_VP8 or V_VP9, Video/PixelWidth, PixelHeight
 *     Cluster             Timestamp, then SimpleBlocks, and BlockGroups
 *                         (a Block, ReferenceBlocks where no key frame)
 *     Cues                each CuePoint of the track at a Cluster's start
 * A block: its track's number (a variable-length integer), its time from
 * its Cluster's (16 bits, signed), flags (a SimpleBlock's top bit: a key
 * frame; lacing is refused), the frame. SeekPosition and
 * CueClusterPosition count from the Segment's data.
 *
 * Beside EBML's rules the track is held to what a player of the
 * recorder's files relies on: a Cluster's Timestamp before its blocks;
 * frames in time order (VP8 and VP9 do not reorder); a key flag that is
 * the frame header's own; a key frame of the track's size.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader_internal.h"

/* Every element the reader knows, with its name for the messages. */
#define ELEMENTS(X)                                      \
    X(EBML, 0x1A45DFA3, "EBML header")                   \
    X(EBML_READ_VERSION, 0x42F7, "EBMLReadVersion")      \
    X(EBML_MAX_ID_LENGTH, 0x42F2, "EBMLMaxIDLength")     \
    X(EBML_MAX_SIZE_LENGTH, 0x42F3, "EBMLMaxSizeLength") \
    X(DOC_TYPE, 0x4282, "DocType")                       \
    X(SEGMENT, 0x18538067, "Segment")                    \
    X(SEEK_HEAD, 0x114D9B74, "SeekHead")                 \
    X(SEEK, 0x4DBB, "Seek")                              \
    X(SEEK_ID, 0x53AB, "SeekID")                         \
    X(SEEK_POSITION, 0x53AC, "SeekPosition")             \
    X(INFO, 0x1549A966, "Info")                          \
    X(TIMESTAMP_SCALE, 0x2AD7B1, "TimestampScale")       \
    X(DURATION, 0x4489, "Duration")                      \
    X(TRACKS, 0x1654AE6B, "Tracks")                      \
    X(TRACK_ENTRY, 0xAE, "TrackEntry")                   \
    X(TRACK_NUMBER, 0xD7, "TrackNumber")                 \
    X(TRACK_TYPE, 0x83, "TrackType")                     \
    X(CODEC_ID, 0x86, "CodecID")                         \
    X(CONTENT_ENCODINGS, 0x6D80, "ContentEncodings")     \
    X(VIDEO, 0xE0, "Video")                              \
    X(PIXEL_WIDTH, 0xB0, "PixelWidth")                   \
    X(PIXEL_HEIGHT, 0xBA, "PixelHeight")                 \
    X(CLUSTER, 0x1F43B675, "Cluster")                    \
    X(TIMESTAMP, 0xE7, "Timestamp")                      \
    X(SIMPLE_BLOCK, 0xA3, "SimpleBlock")                 \
    X(BLOCK_GROUP, 0xA0, "BlockGroup")                   \
    X(BLOCK, 0xA1, "Block")                              \
    X(REFERENCE_BLOCK, 0xFB, "ReferenceBlock")           \
    X(CUES, 0x1C53BB6B, "Cues")                          \
    X(CUE_POINT, 0xBB, "CuePoint")                       \
    X(CUE_TIME, 0xB3, "CueTime")                         \
    X(CUE_TRACK_POSITIONS, 0xB7, "CueTrackPositions")    \
    X(CUE_TRACK, 0xF7, "CueTrack")                       \
    X(CUE_CLUSTER_POSITION, 0xF1, "CueClusterPosition")  \
    X(CHAPTERS, 0x1043A770, "Chapters")                  \
    X(TAGS, 0x1254C367, "Tags")                          \
    X(ATTACHMENTS, 0x1941A469, "Attachments")

#define AS_ENUM(name, id, text) ID_##name = id,
enum { ELEMENTS(AS_ENUM) };

/* An element's name: the spec's, or its ID in hex. */
typedef struct label {
    char s[32];
} label;

static label name_of(uint32_t id)
{
#define AS_ROW(name, id, text) {id, text},
    static const struct {
        uint32_t id;
        const char *text;
    } names[] = {ELEMENTS(AS_ROW)};
    label l;
    snprintf(l.s, sizeof l.s, "element 0x%" PRIX32, id);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].id == id)
            snprintf(l.s, sizeof l.s, "%s", names[i].text);
    return l;
}

/* The Segment's children, which end a Cluster of unknown size. */
static bool segment_level(uint32_t id)
{
    return id == ID_SEEK_HEAD || id == ID_INFO || id == ID_TRACKS || id == ID_CLUSTER ||
           id == ID_CUES || id == ID_CHAPTERS || id == ID_TAGS || id == ID_ATTACHMENTS ||
           id == ID_EBML || id == ID_SEGMENT;
}

typedef struct element {
    uint32_t id;
    size_t at, data, end;
} element;

typedef struct cluster {
    size_t at, data, end;
} cluster;

typedef struct webm {
    reader__in *in;
    reader__track *t;
    size_t segment; /* the Segment's data: where positions count from */
    uint64_t scale; /* ns a tick */
    uint64_t track; /* the video track's number */
    cluster *clusters;
    int cluster_count, cluster_cap, sample_cap;
    int64_t last_time;
} webm;

/* A variable-length integer at `at`, before `end`: its value without the
 * marker, its width, whether every value bit is set. */
static int vint(reader__in *in, size_t at, size_t end, const char *what, uint64_t *v, int *width,
                bool *ones)
{
    if (at >= end)
        return reader__fail(in, "%s at byte %zu is cut off", what, at);
    uint8_t first = in->p[at];
    int w = 1;
    while (w <= 8 && !(first & (0x100 >> w)))
        w++;
    if (w > 8)
        return reader__fail(in, "%s at byte %zu begins with a zero byte", what, at);
    if (end - at < (size_t)w)
        return reader__fail(in, "%s at byte %zu (%d bytes) is cut off", what, at, w);
    uint64_t value = first & (0xffu >> w);
    for (int i = 1; i < w; i++)
        value = value << 8 | in->p[at + (size_t)i];
    *v = value;
    *width = w;
    *ones = value == (UINT64_C(1) << (7 * w)) - 1;
    return 0;
}

/* An element's ID at `at`: 1 to 4 bytes, the marker kept. */
static int read_id(reader__in *in, size_t at, size_t end, uint32_t *id, int *width)
{
    uint64_t v;
    bool ones;
    if (vint(in, at, end, "an element ID", &v, width, &ones) != 0)
        return -1;
    if (*width > 4)
        return reader__fail(in, "the element ID at byte %zu is %d bytes long: 4 at most", at,
                            *width);
    *id = 0;
    for (int i = 0; i < *width; i++)
        *id = *id << 8 | in->p[at + (size_t)i];
    return 0;
}

static int read_element(reader__in *in, size_t at, size_t end, const char *parent, element *e);

/* Where a Cluster of unknown size ends: at the first element that cannot
 * be its child, or at its parent's end. */
static int unknown_end(reader__in *in, element *e, size_t end)
{
    size_t at = e->data;
    while (at < end) {
        uint32_t id;
        int width;
        element child;
        if (read_id(in, at, end, &id, &width) != 0)
            return -1;
        if (segment_level(id))
            break;
        if (read_element(in, at, end, "Cluster", &child) != 0)
            return -1;
        at = child.end;
    }
    e->end = at;
    return 0;
}

/* The element at `at` in a parent that ends at `end`. */
static int read_element(reader__in *in, size_t at, size_t end, const char *parent, element *e)
{
    int idw, sw;
    uint64_t size;
    bool unknown;
    if (read_id(in, at, end, &e->id, &idw) != 0)
        return -1;
    label name = name_of(e->id);
    if (vint(in, at + (size_t)idw, end, "an element's size", &size, &sw, &unknown) != 0)
        return -1;
    e->at = at;
    e->data = at + (size_t)idw + (size_t)sw;
    if (unknown) {
        if (e->id == ID_SEGMENT) {
            e->end = end;
            return 0;
        }
        if (e->id == ID_CLUSTER)
            return unknown_end(in, e, end);
        return reader__fail(in, "the %s at byte %zu has an unknown size: only a Segment or a "
                                "Cluster may",
                            name.s, at);
    }
    if (size > end - e->data)
        return reader__fail(in, "the %s at byte %zu says %" PRIu64 " bytes, past the end of %s "
                                "(%zu bytes left)",
                            name.s, at, size, parent, end - e->data);
    e->end = e->data + (size_t)size;
    return 0;
}

/* The next child of `parent` from *at: 1 and the child, 0 at the end, -1. */
static int next(reader__in *in, const element *parent, size_t *at, element *child)
{
    if (*at >= parent->end)
        return 0;
    if (read_element(in, *at, parent->end, name_of(parent->id).s, child) != 0)
        return -1;
    *at = child->end;
    return 1;
}

/* Each child of `parent` in turn, `at` the cursor; rc < 0 after it: failed. */
#define EACH_CHILD(in, parent, at, child, rc) \
    for (size_t at = (parent)->data; ((rc) = next(in, parent, &at, child)) > 0;)

static int uint_of(reader__in *in, const element *e, uint64_t *v)
{
    size_t n = e->end - e->data;
    if (n > 8)
        return reader__fail(in, "the %s at byte %zu is a %zu-byte unsigned integer: 8 at most",
                            name_of(e->id).s, e->at, n);
    *v = 0;
    for (size_t i = 0; i < n; i++)
        *v = *v << 8 | in->p[e->data + i];
    return 0;
}

static int float_of(reader__in *in, const element *e, double *v)
{
    size_t n = e->end - e->data;
    if (n == 0) {
        *v = 0;
    } else if (n == 4) {
        uint32_t bits = reader__be32(in->p + e->data);
        float f;
        memcpy(&f, &bits, 4);
        *v = f;
    } else if (n == 8) {
        uint64_t bits = reader__be64(in->p + e->data);
        memcpy(v, &bits, 8);
    } else {
        return reader__fail(in, "the %s at byte %zu is a %zu-byte float: 0, 4 or 8",
                            name_of(e->id).s, e->at, n);
    }
    return 0;
}

/* Whether a string element (its NUL padding dropped) is `s`. */
static bool string_is(reader__in *in, const element *e, const char *s)
{
    size_t n = e->end - e->data;
    while (n > 0 && in->p[e->data + n - 1] == 0)
        n--;
    return n == strlen(s) && memcmp(in->p + e->data, s, n) == 0;
}

/* A string element for a message: at most 16 bytes, unprintable ones '?'. */
static label string_of(reader__in *in, const element *e)
{
    label l;
    size_t n = e->end - e->data, i = 0;
    for (; i < n && i < 16; i++) {
        char c = (char)in->p[e->data + i];
        l.s[i] = c >= 0x20 && c < 0x7f ? c : '?';
    }
    l.s[i] = '\0';
    return l;
}

/* The EBML header: a WebM, readable by an EBML reader of version 1. */
static int header(reader__in *in, const element *h)
{
    element e;
    int rc;
    uint64_t v;
    bool doc_type = false;
    EACH_CHILD(in, h, at, &e, rc)
    {
        if (e.id == ID_DOC_TYPE) {
            doc_type = true;
            if (!string_is(in, &e, "webm"))
                return reader__fail(in, "the DocType is \"%s\", not \"webm\"",
                                    string_of(in, &e).s);
        } else if (e.id == ID_EBML_READ_VERSION || e.id == ID_EBML_MAX_ID_LENGTH ||
                   e.id == ID_EBML_MAX_SIZE_LENGTH) {
            if (uint_of(in, &e, &v) != 0)
                return -1;
            uint64_t most = e.id == ID_EBML_READ_VERSION    ? 1
                            : e.id == ID_EBML_MAX_ID_LENGTH ? 4
                                                            : 8;
            if (v > most || v == 0)
                return reader__fail(in, "the %s is %" PRIu64 ": the reader takes 1 to %" PRIu64,
                                    name_of(e.id).s, v, most);
        }
    }
    if (rc < 0)
        return -1;
    if (!doc_type)
        return reader__fail(in, "the EBML header has no DocType (so it is \"matroska\", not "
                                "\"webm\")");
    return 0;
}

/* Info: TimestampScale, and Duration where it is there. */
static int info(webm *w, const element *i)
{
    element e;
    int rc;
    double duration = 0;
    EACH_CHILD(w->in, i, at, &e, rc)
    {
        if (e.id == ID_TIMESTAMP_SCALE && uint_of(w->in, &e, &w->scale) != 0)
            return -1;
        if (e.id == ID_DURATION && float_of(w->in, &e, &duration) != 0)
            return -1;
    }
    if (rc < 0)
        return -1;
    if (w->scale == 0)
        return reader__fail(w->in, "the TimestampScale is 0 ns a tick");
    w->t->duration = duration * (double)w->scale / 1e9;
    if (!isfinite(w->t->duration) || duration < 0)
        return reader__fail(w->in, "the Duration is %g ticks of %" PRIu64 " ns: not a time",
                            duration, w->scale);
    return 0;
}

/* Video: the picture's size, 1 to 65535 a side. */
static int video(webm *w, const element *v)
{
    element e;
    int rc;
    uint64_t pw = 0, ph = 0;
    EACH_CHILD(w->in, v, at, &e, rc)
    {
        if (e.id == ID_PIXEL_WIDTH && uint_of(w->in, &e, &pw) != 0)
            return -1;
        if (e.id == ID_PIXEL_HEIGHT && uint_of(w->in, &e, &ph) != 0)
            return -1;
    }
    if (rc < 0)
        return -1;
    if (pw == 0 || ph == 0 || pw > 65535 || ph > 65535)
        return reader__fail(w->in, "track %" PRIu64 "'s picture is %" PRIu64 " x %" PRIu64
                                   ": each side 1 to 65535",
                            w->track, pw, ph);
    w->t->width = (int)pw;
    w->t->height = (int)ph;
    return 0;
}

/* Tracks: the first video track, VP8 or VP9, frames neither compressed
 * nor encrypted. */
static int tracks(webm *w, const element *t)
{
    element entry, e, codec = {0}, pixels = {0};
    int rc, rc2;
    EACH_CHILD(w->in, t, at, &entry, rc)
    {
        if (entry.id != ID_TRACK_ENTRY)
            continue;
        uint64_t number = 0, type = 0;
        bool encoded = false;
        codec.id = pixels.id = 0;
        EACH_CHILD(w->in, &entry, at2, &e, rc2)
        {
            if (e.id == ID_TRACK_NUMBER && uint_of(w->in, &e, &number) != 0)
                return -1;
            if (e.id == ID_TRACK_TYPE && uint_of(w->in, &e, &type) != 0)
                return -1;
            if (e.id == ID_CODEC_ID)
                codec = e;
            if (e.id == ID_VIDEO)
                pixels = e;
            encoded |= e.id == ID_CONTENT_ENCODINGS;
        }
        if (rc2 < 0)
            return -1;
        if (type != 1)
            continue;
        w->track = number;
        if (number == 0)
            return reader__fail(w->in, "the video track's TrackNumber is 0 or missing");
        if (codec.id != ID_CODEC_ID)
            return reader__fail(w->in, "track %" PRIu64 " has no CodecID", number);
        if (string_is(w->in, &codec, "V_VP8"))
            w->t->codec = READER__VP8;
        else if (string_is(w->in, &codec, "V_VP9"))
            w->t->codec = READER__VP9;
        else
            return reader__fail(w->in, "track %" PRIu64 "'s CodecID is \"%s\": V_VP8 or V_VP9 "
                                       "is read",
                                number, string_of(w->in, &codec).s);
        if (encoded)
            return reader__fail(w->in, "track %" PRIu64 " has ContentEncodings (its frames "
                                       "compressed or encrypted): not read",
                                number);
        if (pixels.id != ID_VIDEO)
            return reader__fail(w->in, "track %" PRIu64 " has no Video element", number);
        return video(w, &pixels);
    }
    if (rc < 0)
        return -1;
    return reader__fail(w->in, "no video track: no TrackEntry has TrackType 1");
}

/* A VP8 frame's header (RFC 6386 9.1): a key frame where the frame tag's
 * lowest bit is 0, then the start code and the picture's size. */
static int vp8_header(webm *w, const uint8_t *p, size_t n, int i, bool key)
{
    if (n < 3)
        return reader__fail(w->in, "frame %d is %zu bytes: shorter than VP8's frame tag", i, n);
    bool is_key = !(p[0] & 1);
    if (is_key != key)
        return reader__fail(w->in, "frame %d is marked %s, its VP8 frame (%zu bytes) is %s", i,
                            key ? "key" : "not key", n, is_key ? "a key frame" : "not");
    if (!key)
        return 0;
    if (n < 10)
        return reader__fail(w->in, "frame %d's VP8 key frame is cut off at %zu bytes", i, n);
    int fw = (p[6] | p[7] << 8) & 0x3fff, fh = (p[8] | p[9] << 8) & 0x3fff;
    if (p[3] != 0x9d || p[4] != 0x01 || p[5] != 0x2a)
        return reader__fail(w->in, "frame %d's VP8 key frame lacks its start code", i);
    if (fw != w->t->width || fh != w->t->height)
        return reader__fail(w->in, "frame %d is a %d x %d VP8 key frame in a %d x %d track", i,
                            fw, fh, w->t->width, w->t->height);
    return 0;
}

/* A VP9 frame's uncompressed header (VP9's bitstream specification,
 * 6.2): the frame type, and a key frame's size after its colour config. */
static int vp9_header(webm *w, const uint8_t *p, size_t n, int i, bool key)
{
    reader__bits b = {.p = p, .size = n};
    if (reader__bits_u(&b, 2) != 2)
        return reader__fail(w->in, "frame %d is no VP9 frame (its frame marker is not 2)", i);
    uint32_t profile = reader__bits_u(&b, 1);
    profile |= reader__bits_u(&b, 1) << 1;
    if (profile == 3)
        reader__bits_u(&b, 1);
    bool is_key = !reader__bits_u(&b, 1) && reader__bits_u(&b, 1) == 0; /* shown anew, type 0 */
    if (b.over || is_key != key)
        return reader__fail(w->in, "frame %d is marked %s, its VP9 frame (%zu bytes) is %s", i,
                            key ? "key" : "not key", n, is_key ? "a key frame" : "not");
    if (!key)
        return 0;
    reader__bits_u(&b, 2); /* show_frame, error_resilient_mode */
    if (reader__bits_u(&b, 24) != 0x498342)
        return reader__fail(w->in, "frame %d's VP9 key frame lacks its sync code", i);
    if (profile >= 2)
        reader__bits_u(&b, 1);
    bool odd = profile == 1 || profile == 3; /* its subsampling said */
    if (reader__bits_u(&b, 3) != 7)         /* not RGB: range, subsampling, a reserved bit */
        reader__bits_u(&b, odd ? 4 : 1);
    else if (odd)
        reader__bits_u(&b, 1);
    int fw = (int)reader__bits_u(&b, 16) + 1, fh = (int)reader__bits_u(&b, 16) + 1;
    if (b.over)
        return reader__fail(w->in, "frame %d's VP9 key frame header is cut off", i);
    if (fw != w->t->width || fh != w->t->height)
        return reader__fail(w->in, "frame %d is a %d x %d VP9 key frame in a %d x %d track", i,
                            fw, fh, w->t->width, w->t->height);
    return 0;
}

/* A Block or SimpleBlock of the video track: its frame kept as a sample. */
static int block(webm *w, const element *e, int64_t cluster_time, bool simple, bool referenced)
{
    reader__in *in = w->in;
    uint64_t track;
    int width;
    bool ones;
    if (vint(in, e->data, e->end, "a block's track number", &track, &width, &ones) != 0)
        return -1;
    size_t at = e->data + (size_t)width;
    if (e->end - at < 3)
        return reader__fail(in, "the %s at byte %zu is cut off after its track number",
                            name_of(e->id).s, e->at);
    if (track != w->track)
        return 0;
    int i = w->t->count;
    int64_t time = cluster_time + (int16_t)reader__be16(in->p + at);
    uint8_t flags = in->p[at + 2];
    const uint8_t *frame = in->p + at + 3;
    size_t size = e->end - at - 3;
    bool key = simple ? flags & 0x80 : !referenced;
    if (flags & 0x06)
        return reader__fail(in, "frame %d (byte %zu) is laced: the reader takes one frame a "
                                "block",
                            i, e->at);
    if (size == 0 || size > UINT32_MAX)
        return reader__fail(in, "frame %d (byte %zu) is %zu bytes", i, e->at, size);
    if (time < 0)
        return reader__fail(in, "frame %d's time is %" PRId64 " ticks: before the Segment's start",
                            i, time);
    if (i > 0 && time < w->last_time)
        return reader__fail(in, "frame %d at %" PRId64 " ticks comes after frame %d at %" PRId64
                                ": VP8 and VP9 frames come in time order",
                            i, time, i - 1, w->last_time);
    int rc = w->t->codec == READER__VP8 ? vp8_header(w, frame, size, i, key)
                                        : vp9_header(w, frame, size, i, key);
    if (rc != 0)
        return -1;
    if (i == w->sample_cap) {
        int cap = w->sample_cap ? 2 * w->sample_cap : 256;
        reader__sample *s =
            cap < (1 << 28) ? realloc(w->t->samples, (size_t)cap * sizeof *s) : NULL;
        if (!s)
            return reader__fail(in, "out of memory for %d frames", cap);
        w->t->samples = s;
        w->sample_cap = cap;
    }
    w->t->samples[i] = (reader__sample){.offset = (uint64_t)(frame - in->p),
                                        .size = (uint32_t)size,
                                        .pts = (double)time * (double)w->scale / 1e9,
                                        .key = key};
    w->t->count++;
    w->last_time = time;
    return 0;
}

/* A Cluster: its Timestamp, then its blocks. */
static int cluster_blocks(webm *w, const cluster *c)
{
    element whole = {.id = ID_CLUSTER, .at = c->at, .data = c->data, .end = c->end}, e, g;
    int rc, rc2;
    bool timed = false;
    uint64_t time = 0;
    EACH_CHILD(w->in, &whole, at, &e, rc)
    {
        if (e.id == ID_TIMESTAMP) {
            if (timed || uint_of(w->in, &e, &time) != 0)
                return timed ? reader__fail(w->in, "the Cluster at byte %zu has two Timestamps",
                                            c->at)
                             : -1;
            if (time > INT64_MAX / 2)
                return reader__fail(w->in, "the Cluster at byte %zu is at %" PRIu64 " ticks",
                                    c->at, time);
            timed = true;
            continue;
        }
        if (e.id != ID_SIMPLE_BLOCK && e.id != ID_BLOCK_GROUP)
            continue;
        if (!timed)
            return reader__fail(w->in, "the Cluster at byte %zu has a block before its Timestamp",
                                c->at);
        if (e.id == ID_SIMPLE_BLOCK) {
            if (block(w, &e, (int64_t)time, true, false) != 0)
                return -1;
            continue;
        }
        element b = {0};
        bool referenced = false;
        EACH_CHILD(w->in, &e, at2, &g, rc2)
        {
            if (g.id == ID_BLOCK && b.id == ID_BLOCK)
                return reader__fail(w->in, "the BlockGroup at byte %zu has two Blocks", e.at);
            if (g.id == ID_BLOCK)
                b = g;
            referenced |= g.id == ID_REFERENCE_BLOCK;
        }
        if (rc2 < 0)
            return -1;
        if (b.id != ID_BLOCK)
            return reader__fail(w->in, "the BlockGroup at byte %zu has no Block", e.at);
        if (block(w, &b, (int64_t)time, false, referenced) != 0)
            return -1;
    }
    if (rc < 0)
        return -1;
    if (!timed)
        return reader__fail(w->in, "the Cluster at byte %zu has no Timestamp", c->at);
    return 0;
}

/* Whether a position in the Segment is a Cluster's start. */
static bool cluster_at(const webm *w, uint64_t position)
{
    int lo = 0, hi = w->cluster_count;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        uint64_t p = w->clusters[mid].at - w->segment;
        if (p == position)
            return true;
        if (p < position)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

/* Cues: each of the video track's points at a Cluster's start. */
static int cues(webm *w, const element *cues_element)
{
    element point, e, pos;
    int rc, rc2, rc3, n = 0;
    EACH_CHILD(w->in, cues_element, at, &point, rc)
    {
        if (point.id != ID_CUE_POINT)
            continue;
        EACH_CHILD(w->in, &point, at2, &e, rc2)
        {
            if (e.id != ID_CUE_TRACK_POSITIONS)
                continue;
            uint64_t track = 0, position = UINT64_MAX, v = 0;
            EACH_CHILD(w->in, &e, at3, &pos, rc3)
            {
                if ((pos.id == ID_CUE_TRACK || pos.id == ID_CUE_CLUSTER_POSITION) &&
                    uint_of(w->in, &pos, &v) != 0)
                    return -1;
                if (pos.id == ID_CUE_TRACK)
                    track = v;
                if (pos.id == ID_CUE_CLUSTER_POSITION)
                    position = v;
            }
            if (rc3 < 0)
                return -1;
            if (track == w->track && !cluster_at(w, position))
                return reader__fail(w->in, "cue %d points at byte %" PRIu64 " of the Segment, "
                                           "which is no Cluster's start",
                                    n, position);
        }
        if (rc2 < 0)
            return -1;
        n++;
    }
    return rc < 0 ? -1 : 0;
}

/* SeekHead: each Seek's element is where it says. */
static int seek_head(webm *w, const element *s, const element *segment)
{
    element seek, e, there;
    int rc, rc2;
    EACH_CHILD(w->in, s, at, &seek, rc)
    {
        if (seek.id != ID_SEEK)
            continue;
        uint64_t id = 0, position = UINT64_MAX;
        EACH_CHILD(w->in, &seek, at2, &e, rc2)
        {
            if ((e.id == ID_SEEK_ID || e.id == ID_SEEK_POSITION) &&
                uint_of(w->in, &e, e.id == ID_SEEK_ID ? &id : &position) != 0)
                return -1;
        }
        if (rc2 < 0)
            return -1;
        if (position >= segment->end - w->segment ||
            read_element(w->in, w->segment + (size_t)position, segment->end, "the Segment",
                         &there) != 0 ||
            there.id != id)
            return reader__fail(w->in, "the SeekHead's entry for the %s points at byte %" PRIu64
                                       " of the Segment, where there is no %s",
                                name_of((uint32_t)id).s, position, name_of((uint32_t)id).s);
    }
    return rc < 0 ? -1 : 0;
}

/* The Segment's children: the one Info and Tracks, the Clusters, the Cues. */
static int segment_children(webm *w, const element *segment, element *parts)
{
    element e;
    int rc;
    EACH_CHILD(w->in, segment, at, &e, rc)
    {
        int k = e.id == ID_INFO ? 0 : e.id == ID_TRACKS ? 1 : e.id == ID_CUES ? 2 : -1;
        if (k >= 0 && parts[k].id != 0)
            return reader__fail(w->in, "the Segment has a second %s at byte %zu",
                                name_of(e.id).s, e.at);
        if (k >= 0)
            parts[k] = e;
        if (e.id == ID_SEEK_HEAD && seek_head(w, &e, segment) != 0)
            return -1;
        if (e.id != ID_CLUSTER)
            continue;
        if (w->cluster_count == w->cluster_cap) {
            int cap = w->cluster_cap ? 2 * w->cluster_cap : 64;
            cluster *c = cap < (1 << 28) ? realloc(w->clusters, (size_t)cap * sizeof *c) : NULL;
            if (!c)
                return reader__fail(w->in, "out of memory for %d Clusters", cap);
            w->clusters = c;
            w->cluster_cap = cap;
        }
        w->clusters[w->cluster_count++] = (cluster){e.at, e.data, e.end};
    }
    if (rc < 0)
        return -1;
    if (parts[0].id == 0 || parts[1].id == 0)
        return reader__fail(w->in, "the Segment has no %s", parts[0].id == 0 ? "Info" : "Tracks");
    return 0;
}

int reader__webm(reader__in *in, reader__track *t)
{
    webm w = {.in = in, .t = t, .scale = 1000000};
    element h, segment, parts[3] = {{0}};
    if (read_element(in, 0, in->size, "the file", &h) != 0 || header(in, &h) != 0)
        return -1;
    size_t at = h.end;
    do {
        if (at >= in->size)
            return reader__fail(in, "the file ends after its EBML header: no Segment");
        if (read_element(in, at, in->size, "the file", &segment) != 0)
            return -1;
        at = segment.end;
    } while (segment.id == 0xEC); /* Void */
    if (segment.id != ID_SEGMENT)
        return reader__fail(in, "after the EBML header comes a %s, not a Segment",
                            name_of(segment.id).s);
    w.segment = segment.data;
    int rc = segment_children(&w, &segment, parts);
    if (rc == 0)
        rc = info(&w, &parts[0]) != 0 || tracks(&w, &parts[1]) != 0 ? -1 : 0;
    for (int i = 0; rc == 0 && i < w.cluster_count; i++)
        rc = cluster_blocks(&w, &w.clusters[i]);
    if (rc == 0 && parts[2].id != 0)
        rc = cues(&w, &parts[2]);
    free(w.clusters);
    return rc;
}
