/*
 * reader_mp4.c - an MP4's video track read from its boxes (ISO/IEC
 * 14496-12), H.264 in it as ISO/IEC 14496-15 carries it.
 *
 * A box is a 32-bit size (1: a 64-bit size follows the type; 0: the box
 * runs to its container's end), a four-character type, and its body.
 * What is read, and where:
 *   ftyp                            the file's first box
 *   mdat                            the samples' bytes (one or more)
 *   moov/mvhd                       the movie's timescale
 *   trak/edts/elst                  where there is one: a shift in time
 *   moov/trak                       the first whose mdia/hdlr is 'vide'
 *   trak/tkhd                       the size it is shown at
 *   trak/mdia/mdhd                  timescale (ticks a second), duration
 *   mdia/minf/stbl/stsd/avc1        the coded size; avcC in it: the SPS
 *                                   and PPS, the NAL units' length size
 *   stbl/stts, ctts                 decoding times as deltas; composition
 *                                   offsets, where there are any
 *   stbl/stss                       sync samples (none: all are)
 *   stbl/stsz, stsc, stco or co64   each sample's size, its chunk, the
 *                                   chunks' offsets
 * A sample's time is its decoding time plus its composition offset, over
 * the timescale, shifted by the edit list where there is one (moov/mvhd's
 * timescale its empty edits'; the recorder writes none).
 *
 * Beside the boxes' own rules the reader holds the track to what the
 * recorder promises and a player relies on: the SPS's size is avc1's and
 * tkhd's, avcC's profile and level are its SPS's, each sample lies whole
 * in an mdat and its NAL units fill it exactly, a sync sample holds an IDR
 * slice and a sample with one is a sync sample. Every count is checked
 * against the bytes of its table before anything is allocated by it.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader_internal.h"

enum { MDAT_MAX = 16, SPS_MAX = 4096, SAMPLES_MAX = 1 << 24, SIDE_MAX = 65535 };

typedef struct box {
    uint32_t type;
    size_t at;   /* its header */
    size_t body; /* its first byte after the header */
    size_t end;
    char path[64]; /* "moov/trak/mdia", for the messages */
} box;

/* A four-character type for a message, each unprintable byte a '?'. */
typedef struct fourcc {
    char s[5];
} fourcc;

static fourcc text(uint32_t type)
{
    fourcc f;
    for (int i = 0; i < 4; i++) {
        char c = (char)(type >> (24 - 8 * i));
        f.s[i] = c >= 0x20 && c < 0x7f ? c : '?';
    }
    f.s[4] = '\0';
    return f;
}

static uint32_t type_of(const char *s)
{
    return (uint32_t)(uint8_t)s[0] << 24 | (uint32_t)(uint8_t)s[1] << 16 |
           (uint32_t)(uint8_t)s[2] << 8 | (uint8_t)s[3];
}

/* The box at `at` within `parent` (which ends at parent->end). */
static int box_at(reader__in *in, const box *parent, size_t at, box *b)
{
    size_t left = parent->end - at;
    if (left < 8)
        return reader__fail(in, "%s: a box header at byte %zu is cut off (%zu bytes left)",
                            parent->path, at, left);
    uint64_t size = reader__be32(in->p + at);
    size_t head = 8;
    b->type = reader__be32(in->p + at + 4);
    if (size == 1) {
        if (left < 16)
            return reader__fail(in, "%s: box '%s' at byte %zu: its 64-bit size is cut off",
                                parent->path, text(b->type).s, at);
        size = reader__be64(in->p + at + 8);
        head = 16;
    } else if (size == 0) {
        size = left;
    }
    if (size < head)
        return reader__fail(in, "%s: box '%s' at byte %zu says %" PRIu64 " bytes, less than its "
                                "header",
                            parent->path, text(b->type).s, at, size);
    if (size > left)
        return reader__fail(in, "%s: box '%s' at byte %zu says %" PRIu64 " bytes, past the end "
                                "of %s (%zu bytes left)",
                            parent->path, text(b->type).s, at, size,
                            parent->at == SIZE_MAX ? "the file" : parent->path, left);
    b->at = at;
    b->body = at + head;
    b->end = at + (size_t)size;
    size_t n = parent->at == SIZE_MAX ? 0 : strlen(parent->path);
    n = n < sizeof b->path - 6 ? n : sizeof b->path - 6; /* deeper than the reader goes */
    memcpy(b->path, parent->path, n);
    if (n > 0)
        b->path[n++] = '/';
    memcpy(b->path + n, text(b->type).s, 5);
    return 0;
}

/* The one box of `type` among `parent`'s children from `from`: 1 found,
 * 0 none, -1 a bad box or two of them. */
static int find(reader__in *in, const box *parent, size_t from, const char *type, box *out)
{
    int found = 0;
    box b;
    for (size_t at = from; at < parent->end; at = b.end) {
        if (box_at(in, parent, at, &b) != 0)
            return -1;
        if (b.type != type_of(type))
            continue;
        if (found)
            return reader__fail(in, "%s has two %s boxes (at bytes %zu and %zu)", parent->path,
                                type, out->at, b.at);
        *out = b;
        found = 1;
    }
    return found;
}

/* The same, where the box must be there. */
static int need(reader__in *in, const box *parent, size_t from, const char *type, box *out)
{
    int rc = find(in, parent, from, type, out);
    if (rc == 0)
        return reader__fail(in, "%s has no %s box", parent->path, type);
    return rc < 0 ? -1 : 0;
}

/* A body of at least `n` bytes. */
static int body_holds(reader__in *in, const box *b, size_t n)
{
    if (b->end - b->body < n)
        return reader__fail(in, "%s is %zu bytes: too short for its fields (%zu)", b->path,
                            b->end - b->body, n);
    return 0;
}

/* A full box's table: `count` entries of `width` bytes after `head`
 * bytes of its body, which must hold them. */
static int table(reader__in *in, const box *b, size_t head, uint32_t count, size_t width,
                 const uint8_t **entries)
{
    size_t room = b->end - b->body - head; /* body_holds(head) checked first */
    if (room / width < count)
        return reader__fail(in, "%s says %" PRIu32 " entries of %zu bytes: its %zu bytes hold %zu",
                            b->path, count, width, room, room / width);
    *entries = in->p + b->body + head;
    return 0;
}

/* A full box's table whose entry count follows its version and flags. */
static int counted(reader__in *in, const box *b, size_t width, uint32_t *count,
                   const uint8_t **entries)
{
    if (body_holds(in, b, 8) != 0)
        return -1;
    *count = reader__be32(in->p + b->body + 4);
    return table(in, b, 8, *count, width, entries);
}

static int32_t se(reader__bits *b)
{
    uint32_t k = reader__bits_ue(b);
    return k & 1 ? (int32_t)((k + 1) / 2) : -(int32_t)(k / 2);
}

/* The picture's size from an SPS (H.264 7.3.2.1.1 and the cropping of
 * 7.4.2.1.1), its emulation prevention bytes taken out first. */
static int sps_size(reader__in *in, const uint8_t *nal, size_t size, int *w, int *h)
{
    static const uint8_t chroma_profiles[] = {100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139,
                                              134, 135};
    uint8_t rbsp[SPS_MAX];
    size_t n = 0;
    if (size > SPS_MAX)
        return reader__fail(in, "the SPS is %zu bytes: more than the reader takes (%d)", size,
                            SPS_MAX);
    for (size_t i = 1, zeros = 0; i < size; i++) {
        if (zeros >= 2 && nal[i] == 3) {
            zeros = 0;
            continue;
        }
        zeros = nal[i] == 0 ? zeros + 1 : 0;
        rbsp[n++] = nal[i];
    }
    reader__bits b = {.p = rbsp, .size = n};
    uint32_t profile = reader__bits_u(&b, 8);
    reader__bits_u(&b, 16); /* constraint flags, level */
    reader__bits_ue(&b);    /* seq_parameter_set_id */
    uint32_t chroma = 1, separate = 0;
    if (memchr(chroma_profiles, (int)profile, sizeof chroma_profiles)) {
        chroma = reader__bits_ue(&b);
        if (chroma == 3)
            separate = reader__bits_u(&b, 1);
        reader__bits_ue(&b); /* bit depths */
        reader__bits_ue(&b);
        reader__bits_u(&b, 1);
        if (reader__bits_u(&b, 1)) /* scaling matrices */
            for (int i = 0; i < (chroma != 3 ? 8 : 12) && !b.over; i++) {
                if (!reader__bits_u(&b, 1))
                    continue;
                for (int j = 0, last = 8, next = 8; j < (i < 6 ? 16 : 64) && !b.over; j++) {
                    if (next != 0) /* int64_t: a delta past -128..127 must not overflow */
                        next = (int)(((int64_t)last + se(&b) + 256) % 256);
                    last = next == 0 ? last : next;
                }
            }
    }
    reader__bits_ue(&b); /* log2_max_frame_num_minus4 */
    uint32_t poc_type = reader__bits_ue(&b);
    if (poc_type == 0) {
        reader__bits_ue(&b);
    } else if (poc_type == 1) {
        reader__bits_u(&b, 1);
        se(&b);
        se(&b);
        uint32_t cycle = reader__bits_ue(&b);
        for (uint32_t i = 0; i < cycle && i < 256 && !b.over; i++)
            se(&b);
    }
    reader__bits_ue(&b); /* max_num_ref_frames */
    reader__bits_u(&b, 1);
    uint64_t mbs_w = (uint64_t)reader__bits_ue(&b) + 1, map_h = (uint64_t)reader__bits_ue(&b) + 1;
    uint32_t frames_only = reader__bits_u(&b, 1);
    if (!frames_only)
        reader__bits_u(&b, 1);
    reader__bits_u(&b, 1); /* direct_8x8_inference_flag */
    uint64_t crop[4] = {0};
    if (reader__bits_u(&b, 1))
        for (int i = 0; i < 4; i++)
            crop[i] = reader__bits_ue(&b);
    if (b.over || chroma > 3)
        return reader__fail(in, "the SPS (%zu bytes) is cut off or not valid", size);
    uint64_t unit_x = 1, unit_y = 2 - frames_only;
    if (!separate && chroma != 0) {
        unit_x = chroma == 3 ? 1 : 2;
        unit_y *= chroma == 1 ? 2 : 1;
    }
    uint64_t cw = mbs_w * 16, ch = (2 - frames_only) * map_h * 16;
    uint64_t cut_w = unit_x * (crop[0] + crop[1]), cut_h = unit_y * (crop[2] + crop[3]);
    if (cw > SIDE_MAX + 16 || ch > SIDE_MAX + 32 || cut_w >= cw || cut_h >= ch)
        return reader__fail(in, "the SPS's picture is %" PRIu64 " x %" PRIu64 " cropped by %" PRIu64
                                " x %" PRIu64 ": not a size",
                            cw, ch, cut_w, cut_h);
    *w = (int)(cw - cut_w);
    *h = (int)(ch - cut_h);
    return 0;
}

/* avcC (ISO/IEC 14496-15 5.3.3.1): the NAL units' length size and the
 * parameter sets, which must be an SPS of avcC's profile and level and a
 * PPS; the SPS's picture size in w and h. */
static int avcc(reader__in *in, const box *b, reader__track *t, int *w, int *h)
{
    const uint8_t *p = in->p + b->body, *end = in->p + b->end;
    if (end - p < 7)
        return reader__fail(in, "%s is %td bytes: too short", b->path, end - p);
    if (p[0] != 1)
        return reader__fail(in, "%s is version %d: 1 is read", b->path, p[0]);
    if ((p[4] & 0xfc) != 0xfc || (p[5] & 0xe0) != 0xe0)
        return reader__fail(in, "%s's reserved bits are not all set (0x%02x, 0x%02x)", b->path,
                            p[4], p[5]);
    t->nal_length_size = (p[4] & 3) + 1;
    if (t->nal_length_size == 3)
        return reader__fail(in, "%s says NAL units' lengths take 3 bytes: 1, 2 or 4", b->path);
    const uint8_t *at = p + 5;
    for (int kind = 0; kind < 2; kind++) { /* the SPSs, then the PPSs */
        if (at >= end)
            return reader__fail(in, "%s is cut off before its %s count", b->path,
                                kind ? "PPS" : "SPS");
        int sets = kind ? *at : *at & 0x1f;
        at++;
        if (sets == 0)
            return reader__fail(in, "%s has no %s", b->path, kind ? "PPS" : "SPS");
        for (int i = 0; i < sets; i++) {
            if (end - at < 2 || end - at - 2 < reader__be16(at) || reader__be16(at) == 0)
                return reader__fail(in, "%s: %s %d runs past its end or is empty", b->path,
                                    kind ? "PPS" : "SPS", i);
            const uint8_t *nal = at + 2;
            size_t size = reader__be16(at);
            int type = nal[0] & 0x1f;
            if (type != (kind ? 8 : 7))
                return reader__fail(in, "%s: %s %d is a NAL unit of type %d", b->path,
                                    kind ? "PPS" : "SPS", i, type);
            if (t->params_count == READER__PARAMS_MAX)
                return reader__fail(in, "%s holds more than %d parameter sets", b->path,
                                    READER__PARAMS_MAX);
            t->params[t->params_count] = nal;
            t->params_size[t->params_count++] = (uint16_t)size;
            if (kind == 0 && i == 0) {
                if (size < 4 || memcmp(nal + 1, p + 1, 3) != 0)
                    return reader__fail(in, "%s's profile, constraints and level (%d, 0x%02x, "
                                            "%d) are not its SPS's",
                                        b->path, p[1], p[2], p[3]);
                if (sps_size(in, nal, size, w, h) != 0)
                    return -1;
            }
            at = nal + size;
        }
    }
    return 0;
}

/* The video track: the first trak whose handler is 'vide'. */
static int video_trak(reader__in *in, const box *moov, box *trak)
{
    box b, mdia, hdlr;
    for (size_t at = moov->body; at < moov->end; at = b.end) {
        if (box_at(in, moov, at, &b) != 0)
            return -1;
        if (b.type != type_of("trak"))
            continue;
        if (need(in, &b, b.body, "mdia", &mdia) != 0 || need(in, &mdia, mdia.body, "hdlr", &hdlr) ||
            body_holds(in, &hdlr, 12) != 0)
            return -1;
        if (reader__be32(in->p + hdlr.body + 8) == type_of("vide")) {
            *trak = b;
            return 0;
        }
    }
    return reader__fail(in, "no video track: no moov/trak has an hdlr of 'vide'");
}

/* The sizes tkhd shows the track at (16.16 fixed point, the fraction dropped). */
static int tkhd_size(reader__in *in, const box *trak, int *w, int *h)
{
    box b;
    if (need(in, trak, trak->body, "tkhd", &b) != 0 || body_holds(in, &b, 4) != 0)
        return -1;
    int version = in->p[b.body];
    if (version > 1)
        return reader__fail(in, "%s is version %d: 0 or 1 is read", b.path, version);
    size_t at = version ? 88 : 76;
    if (body_holds(in, &b, at + 8) != 0)
        return -1;
    *w = (int)(reader__be32(in->p + b.body + at) >> 16);
    *h = (int)(reader__be32(in->p + b.body + at + 4) >> 16);
    return 0;
}

/* mdhd's timescale and duration (UINT64_MAX where it says none). */
static int mdhd(reader__in *in, const box *mdia, uint32_t *timescale, uint64_t *duration)
{
    box b;
    if (need(in, mdia, mdia->body, "mdhd", &b) != 0 || body_holds(in, &b, 4) != 0)
        return -1;
    int version = in->p[b.body];
    if (version > 1)
        return reader__fail(in, "%s is version %d: 0 or 1 is read", b.path, version);
    if (body_holds(in, &b, version ? 36 : 24) != 0)
        return -1;
    const uint8_t *p = in->p + b.body;
    *timescale = reader__be32(p + (version ? 20 : 12));
    *duration = version ? reader__be64(p + 24) : reader__be32(p + 16);
    if (!version && *duration == UINT32_MAX)
        *duration = UINT64_MAX;
    if (*timescale == 0)
        return reader__fail(in, "%s's timescale is 0 ticks a second", b.path);
    return 0;
}

/* mvhd's timescale: the movie's ticks a second (an edit list's). */
static int mvhd(reader__in *in, const box *moov, uint32_t *timescale)
{
    box b;
    if (need(in, moov, moov->body, "mvhd", &b) != 0 || body_holds(in, &b, 4) != 0)
        return -1;
    int version = in->p[b.body];
    if (version > 1)
        return reader__fail(in, "%s is version %d: 0 or 1 is read", b.path, version);
    if (body_holds(in, &b, version ? 24 : 16) != 0)
        return -1;
    *timescale = reader__be32(in->p + b.body + (version ? 20 : 12));
    return 0;
}

/* The shift in seconds an edit list (edts/elst, 14496-12 8.6.6) gives
 * every sample's time: empty edits first delay the track, the one edit
 * after them starts it at its media time. Other lists (two edits that
 * show media, a rate other than 1) are refused. */
static int edits(reader__in *in, const box *trak, uint32_t movie_scale, uint32_t media_scale,
                 double *shift)
{
    box edts, elst;
    *shift = 0;
    int has = find(in, trak, trak->body, "edts", &edts);
    if (has <= 0)
        return has;
    if (need(in, &edts, edts.body, "elst", &elst) != 0 || body_holds(in, &elst, 4) != 0)
        return -1;
    int version = in->p[elst.body];
    if (version > 1)
        return reader__fail(in, "%s is version %d: 0 or 1 is read", elst.path, version);
    size_t width = version ? 20 : 12;
    uint32_t n;
    const uint8_t *e;
    if (counted(in, &elst, width, &n, &e) != 0)
        return -1;
    uint64_t empty = 0;
    int64_t start = -1;
    for (uint32_t r = 0; r < n; r++) {
        const uint8_t *p = e + width * r;
        uint64_t duration = version ? reader__be64(p) : reader__be32(p);
        int64_t media = version ? (int64_t)reader__be64(p + 8) : (int32_t)reader__be32(p + 4);
        uint32_t rate = reader__be32(p + (version ? 16 : 8));
        if (media == -1 && start < 0) {
            empty += duration;
            continue;
        }
        if (start >= 0 || media < 0 || rate != 0x10000)
            return reader__fail(in, "%s's edit %" PRIu32 " (media time %" PRId64 ", rate 0x%08"
                                    PRIx32 ") is not one the reader applies: empty edits, then "
                                    "one at rate 1",
                                elst.path, r, media, rate);
        start = media;
    }
    if (start < 0)
        return reader__fail(in, "%s shows none of the track", elst.path);
    if (empty > 0 && movie_scale == 0)
        return reader__fail(in, "moov/mvhd's timescale is 0 ticks a second");
    *shift = (empty ? (double)empty / movie_scale : 0) - (double)start / media_scale;
    return 0;
}

/* stsd's one entry, avc1: its coded size and avcC. */
static int stsd(reader__in *in, const box *stbl, reader__track *t)
{
    box d, e, c;
    if (need(in, stbl, stbl->body, "stsd", &d) != 0 || body_holds(in, &d, 8) != 0)
        return -1;
    uint32_t entries = reader__be32(in->p + d.body + 4);
    if (entries != 1)
        return reader__fail(in, "%s holds %" PRIu32 " sample descriptions: one is read", d.path,
                            entries);
    if (box_at(in, &d, d.body + 8, &e) != 0)
        return -1;
    if (e.type != type_of("avc1"))
        return reader__fail(in, "%s's sample entry is '%s': avc1 (H.264) is read", d.path,
                            text(e.type).s);
    if (body_holds(in, &e, 78) != 0)
        return -1;
    t->width = reader__be16(in->p + e.body + 24);
    t->height = reader__be16(in->p + e.body + 26);
    int w = 0, h = 0;
    if (need(in, &e, e.body + 78, "avcC", &c) != 0 || avcc(in, &c, t, &w, &h) != 0)
        return -1;
    if (w != t->width || h != t->height)
        return reader__fail(in, "%s says %d x %d, its SPS %d x %d", e.path, t->width, t->height,
                            w, h);
    if (t->width == 0 || t->height == 0)
        return reader__fail(in, "%s says %d x %d", e.path, t->width, t->height);
    return 0;
}

/* How many samples stsz has and their sizes (sizes NULL: all `fixed`);
 * each of at least one NAL unit of `least` bytes, so at most the file's
 * size over that. */
static int stsz(reader__in *in, const box *stbl, size_t least, uint32_t *n, uint32_t *fixed,
                const uint8_t **sizes)
{
    box b;
    if (need(in, stbl, stbl->body, "stsz", &b) != 0 || body_holds(in, &b, 12) != 0)
        return -1;
    *fixed = reader__be32(in->p + b.body + 4);
    *n = reader__be32(in->p + b.body + 8);
    *sizes = NULL;
    if (*fixed == 0 && table(in, &b, 12, *n, 4, sizes) != 0)
        return -1;
    if (*fixed != 0 && *fixed < least)
        return reader__fail(in, "%s says every sample is %" PRIu32 " bytes: too few for a NAL "
                                "unit",
                            b.path, *fixed);
    if (*n > in->size / (*fixed ? *fixed : least))
        return reader__fail(in, "%s says %" PRIu32 " samples of %zu bytes or more: more than the "
                                "file's %zu bytes hold",
                            b.path, *n, (size_t)(*fixed ? *fixed : least), in->size);
    if (*n > SAMPLES_MAX)
        return reader__fail(in, "%s says %" PRIu32 " samples: more than the reader takes (%d)",
                            b.path, *n, SAMPLES_MAX);
    return 0;
}

/* Each sample's time: stts's decoding times (deltas, run-length coded)
 * plus ctts's offsets where it is there, in ticks; their end in *end. */
static int times(reader__in *in, const box *stbl, uint32_t n, int64_t *ticks, uint64_t *end)
{
    box b;
    uint32_t rows;
    const uint8_t *e;
    if (need(in, stbl, stbl->body, "stts", &b) != 0 || counted(in, &b, 8, &rows, &e) != 0)
        return -1;
    uint64_t total = 0;
    for (uint32_t r = 0; r < rows; r++)
        total += reader__be32(e + 8 * r);
    if (total != n)
        return reader__fail(in, "%s gives times to %" PRIu64 " samples, stsz has %" PRIu32,
                            b.path, total, n);
    uint64_t dts = 0;
    for (uint32_t r = 0, i = 0; r < rows; r++)
        for (uint32_t k = reader__be32(e + 8 * r); k > 0; k--, i++) {
            ticks[i] = (int64_t)dts;
            dts += reader__be32(e + 8 * r + 4);
        }
    *end = dts;
    int has = find(in, stbl, stbl->body, "ctts", &b);
    if (has <= 0)
        return has;
    if (counted(in, &b, 8, &rows, &e) != 0)
        return -1;
    if (in->p[b.body] > 1)
        return reader__fail(in, "%s is version %d: 0 or 1 is read", b.path, in->p[b.body]);
    total = 0;
    for (uint32_t r = 0; r < rows; r++)
        total += reader__be32(e + 8 * r);
    if (total != n)
        return reader__fail(in, "%s gives offsets to %" PRIu64 " samples, stsz has %" PRIu32,
                            b.path, total, n);
    /* Signed in version 1; in version 0 too, as players take it. */
    for (uint32_t r = 0, i = 0; r < rows; r++)
        for (uint32_t k = reader__be32(e + 8 * r); k > 0; k--, i++)
            ticks[i] += (int32_t)reader__be32(e + 8 * r + 4);
    return 0;
}

/* Which samples are sync samples: stss's, or all where there is none. */
static int sync_samples(reader__in *in, const box *stbl, reader__track *t)
{
    box b;
    int has = find(in, stbl, stbl->body, "stss", &b);
    if (has < 0)
        return -1;
    for (int i = 0; i < t->count; i++)
        t->samples[i].key = has == 0;
    if (has == 0)
        return 0;
    uint32_t rows;
    const uint8_t *e;
    if (counted(in, &b, 4, &rows, &e) != 0)
        return -1;
    for (uint32_t r = 0, last = 0; r < rows; r++) {
        uint32_t s = reader__be32(e + 4 * r);
        if (s <= last || s > (uint32_t)t->count)
            return reader__fail(in, "%s's entry %" PRIu32 " is sample %" PRIu32 ": not after %"
                                    PRIu32 " and within the %d samples",
                                b.path, r, s, last, t->count);
        t->samples[s - 1].key = true;
        last = s;
    }
    return 0;
}

typedef struct span {
    size_t from, to;
} span;

/* Each sample's offset: chunks (stco or co64) of the sizes stsc gives
 * them, the samples one after another in each; each sample whole in the
 * file and in an mdat. */
static int offsets(reader__in *in, const box *stbl, reader__track *t, const uint32_t *sizes,
                   const span *mdat, int mdats)
{
    box c, s;
    int has32 = find(in, stbl, stbl->body, "stco", &c);
    int has64 = has32 < 0 ? -1 : find(in, stbl, stbl->body, "co64", &s);
    if (has32 < 0 || has64 < 0)
        return -1;
    if (has32 == has64)
        return reader__fail(in, "%s has %s", stbl->path,
                            has32 ? "both stco and co64" : "neither stco nor co64");
    if (has64)
        c = s;
    size_t width = has64 ? 8 : 4;
    uint32_t chunks, rows;
    const uint8_t *off, *row;
    if (counted(in, &c, width, &chunks, &off) != 0 ||
        need(in, stbl, stbl->body, "stsc", &s) != 0 || counted(in, &s, 12, &rows, &row) != 0)
        return -1;
    for (uint32_t r = 0; r < rows; r++) {
        uint32_t first = reader__be32(row + 12 * r), per = reader__be32(row + 12 * r + 4);
        uint32_t desc = reader__be32(row + 12 * r + 8);
        bool after = r == 0 ? first == 1 : first > reader__be32(row + 12 * (r - 1));
        if (!after || first > chunks || per == 0 || desc != 1)
            return reader__fail(in, "%s's row %" PRIu32 " (first chunk %" PRIu32 ", %" PRIu32
                                    " samples, description %" PRIu32 ") is not valid with %" PRIu32
                                    " chunks",
                                s.path, r, first, per, desc, chunks);
    }
    if (rows == 0 && t->count > 0)
        return reader__fail(in, "%s is empty: %d samples are in no chunk", s.path, t->count);
    uint32_t i = 0, n = (uint32_t)t->count;
    for (uint32_t k = 1, r = 0; k <= chunks; k++) {
        while (r + 1 < rows && reader__be32(row + 12 * (r + 1)) <= k)
            r++;
        uint32_t per = reader__be32(row + 12 * r + 4);
        if (per > n - i)
            return reader__fail(in, "chunk %" PRIu32 " holds %" PRIu32 " samples: only %" PRIu32
                                    " of stsz's %" PRIu32 " are left",
                                k, per, n - i, n);
        uint64_t at = has64 ? reader__be64(off + 8 * (k - 1)) : reader__be32(off + 4 * (k - 1));
        for (uint32_t j = 0; j < per; j++, i++) {
            if (at > in->size || sizes[i] > in->size - at)
                return reader__fail(in, "frame %" PRIu32 "'s sample runs past the end of the file "
                                        "(offset %" PRIu64 ", size %" PRIu32 ", the file %zu "
                                        "bytes)",
                                    i, at, sizes[i], in->size);
            bool inside = false;
            for (int m = 0; m < mdats && !inside; m++)
                inside = at >= mdat[m].from && at + sizes[i] <= mdat[m].to;
            if (!inside)
                return reader__fail(in, "frame %" PRIu32 "'s sample (offset %" PRIu64 ", size %"
                                        PRIu32 ") is not inside an mdat box",
                                    i, at, sizes[i]);
            t->samples[i].offset = at;
            t->samples[i].size = sizes[i];
            at += sizes[i];
        }
    }
    if (i != n)
        return reader__fail(in, "the %" PRIu32 " chunks hold %" PRIu32 " of stsz's %" PRIu32
                                " samples",
                            chunks, i, n);
    return 0;
}

/* A sample's NAL units fill it exactly; it has a slice; an IDR slice
 * where and only where it is a sync sample. */
static int nal_units(reader__in *in, const reader__track *t, int i)
{
    const reader__sample *s = &t->samples[i];
    const uint8_t *p = in->p + s->offset;
    bool slice = false, idr = false;
    if (s->size == 0)
        return reader__fail(in, "frame %d's sample is empty (0 bytes)", i);
    for (size_t at = 0; at < s->size;) {
        size_t len = 0, ls = (size_t)t->nal_length_size;
        if (s->size - at < ls)
            return reader__fail(in, "frame %d's sample (%" PRIu32 " bytes) ends inside a NAL "
                                    "unit's length at byte %zu",
                                i, s->size, at);
        for (size_t k = 0; k < ls; k++)
            len = len << 8 | p[at + k];
        at += ls;
        if (len == 0 || len > s->size - at)
            return reader__fail(in, "frame %d's sample (%" PRIu32 " bytes): the NAL unit at byte "
                                    "%zu says %zu bytes, %zu are left",
                                i, s->size, at - ls, len, s->size - at);
        if (p[at] & 0x80)
            return reader__fail(in, "frame %d's sample: the NAL unit at byte %zu has its "
                                    "forbidden_zero_bit set",
                                i, at - ls);
        int type = p[at] & 0x1f;
        slice |= type >= 1 && type <= 5;
        idr |= type == 5;
        at += len;
    }
    if (!slice)
        return reader__fail(in, "frame %d's sample holds no slice (no picture)", i);
    if (s->key != idr)
        return reader__fail(in, s->key ? "frame %d is a sync sample but holds no IDR slice"
                                       : "frame %d holds an IDR slice but is not a sync sample",
                            i);
    return 0;
}

/* The top level: ftyp first, the one moov, the mdats' bodies. */
static int top(reader__in *in, box *moov, span *mdat, int *mdats)
{
    box file = {.at = SIZE_MAX, .end = in->size, .path = "the file"}, b;
    bool have_moov = false;
    *mdats = 0;
    for (size_t at = 0; at < in->size; at = b.end) {
        if (box_at(in, &file, at, &b) != 0)
            return -1;
        bool ftyp = b.type == type_of("ftyp");
        if (at == 0 && !ftyp)
            return reader__fail(in, "the file begins with '%s', not ftyp", text(b.type).s);
        if (at > 0 && ftyp)
            return reader__fail(in, "a second ftyp at byte %zu", at);
        if (ftyp && (b.end - b.body < 8 || (b.end - b.body) % 4 != 0))
            return reader__fail(in, "ftyp is %zu bytes: 8, and 4 a compatible brand",
                                b.end - b.body);
        if (b.type == type_of("moov")) {
            if (have_moov)
                return reader__fail(in, "a second moov at byte %zu", b.at);
            *moov = b;
            have_moov = true;
        } else if (b.type == type_of("mdat")) {
            if (*mdats == MDAT_MAX)
                return reader__fail(in, "more than %d mdat boxes", MDAT_MAX);
            mdat[(*mdats)++] = (span){b.body, b.end};
        }
    }
    if (!have_moov)
        return reader__fail(in, "no moov box: the file (%zu bytes) has no index", in->size);
    return 0;
}

int reader__mp4(reader__in *in, reader__track *t)
{
    box moov, trak, mdia, minf, stbl;
    span mdat[MDAT_MAX];
    int mdats, shown_w = 0, shown_h = 0;
    uint32_t movie_scale = 0;
    if (top(in, &moov, mdat, &mdats) != 0 || mvhd(in, &moov, &movie_scale) != 0 ||
        video_trak(in, &moov, &trak) != 0 || tkhd_size(in, &trak, &shown_w, &shown_h) != 0 ||
        need(in, &trak, trak.body, "mdia", &mdia) != 0 ||
        need(in, &mdia, mdia.body, "minf", &minf) != 0 ||
        need(in, &minf, minf.body, "stbl", &stbl) != 0)
        return -1;
    uint32_t timescale, n, fixed;
    uint64_t duration = 0, end = 0;
    double shift;
    const uint8_t *size_table;
    t->codec = READER__H264;
    if (mdhd(in, &mdia, &timescale, &duration) != 0 ||
        edits(in, &trak, movie_scale, timescale, &shift) != 0 || stsd(in, &stbl, t) != 0 ||
        stsz(in, &stbl, (size_t)t->nal_length_size + 1, &n, &fixed, &size_table) != 0)
        return -1;
    if (shown_w != t->width || shown_h != t->height)
        return reader__fail(in, "%s/tkhd shows the track at %d x %d, avc1 codes %d x %d",
                            trak.path, shown_w, shown_h, t->width, t->height);
    t->samples = calloc((size_t)n + 1, sizeof *t->samples);
    int64_t *ticks = calloc((size_t)n + 1, sizeof *ticks);
    uint32_t *sizes = calloc((size_t)n + 1, sizeof *sizes);
    int rc = -1;
    if (!t->samples || !ticks || !sizes) {
        rc = reader__fail(in, "out of memory for %" PRIu32 " samples", n);
        goto done;
    }
    for (uint32_t i = 0; i < n; i++)
        sizes[i] = size_table ? reader__be32(size_table + 4 * i) : fixed;
    t->count = (int)n;
    if (times(in, &stbl, n, ticks, &end) != 0 || sync_samples(in, &stbl, t) != 0 ||
        offsets(in, &stbl, t, sizes, mdat, mdats) != 0)
        goto done;
    for (int i = 0; i < t->count; i++) {
        t->samples[i].pts = (double)ticks[i] / timescale + shift;
        if (nal_units(in, t, i) != 0)
            goto done;
    }
    t->duration = (double)(duration == UINT64_MAX ? end : duration) / timescale;
    rc = 0;
done:
    free(ticks);
    free(sizes);
    return rc;
}
