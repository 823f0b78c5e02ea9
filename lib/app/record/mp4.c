/*
 * mp4.c - the recorder's MP4 files (mp4.h): one H.264 video track in an ISO
 * base media file (ISO/IEC 14496-12), the samples as ISO/IEC 14496-15
 * carries AVC. Written here rather than by a library: one video track
 * needs some twenty boxes, fewer lines than a dependency's build.
 *
 * The file: ftyp; mdat, each sample appended as it comes, its NAL units
 * without their start codes, each after its length in 4 bytes (avcC says
 * 4); then moov, made in memory at the end from what was kept of each
 * sample (its offset, size, time and whether it is a key frame). mdat's
 * header has the 64-bit size field from the start (largesize), patched at
 * the end, so that a recording may pass 4 GiB; its chunk offsets then go
 * to co64 where stco's 32 bits end. Each sample is its own chunk: stsc is
 * one row, and each sample's offset stands in the index as it was written.
 *
 * The SPS and PPS of the first sample go into avcC, once: the samples
 * carry none (a repeat at a later key frame is dropped, a change refused,
 * since one avcC describes the whole track). Baseline has no B-frames, so
 * decoding order is presentation order: no ctts, and no edit list, since
 * the track's times start at 0 (the first sample's pts).
 *
 * Nothing in the file comes from the clock or the run (creation and
 * modification times are 0): the same samples make the same bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "check.h"
#include "mp4.h"

enum { NAL_IDR = 5, NAL_SPS = 7, NAL_PPS = 8 };
enum { MAX_SIDE = 16384 };

/* What the index needs of each sample. */
typedef struct sample {
    uint64_t offset; /* in the file */
    uint32_t size;
    bool key;
    int64_t pts;
} sample;

struct cugl__mp4 {
    FILE *f;
    char who[96];
    int width, height;
    uint32_t timescale;
    uint64_t pos;  /* bytes written: where the next sample goes */
    uint64_t mdat; /* where mdat's header is */
    uint8_t *sps, *pps;
    size_t sps_size, pps_size;
    sample *samples;
    size_t count, capacity;
    /* A failed write: every later call fails with it, as the file is
     * missing bytes the index would name. */
    cugl_status failed;
    char why[224];
};

/* ftyp (isom, as ffmpeg's mp4 muxer writes it: minor version 512) and
 * mdat's header, size 1: the size is the 64-bit one after the type, that
 * of an empty mdat until the end patches it. */
static const uint8_t file_head[] = {
    0, 0, 0, 32, 'f', 't', 'y', 'p', 'i', 's', 'o', 'm', 0, 0, 2, 0,
    'i', 's', 'o', 'm', 'i', 's', 'o', '2', 'a', 'v', 'c', '1', 'm', 'p', '4', '1',
    0, 0, 0, 1, 'm', 'd', 'a', 't', 0, 0, 0, 0, 0, 0, 0, 16,
};
enum { MDAT_AT = 32, MDAT_HEAD = 16 };

/* --- the file: every write checked, the first failure kept -------------- */

/* The project's file code's status for a failed write (lib/app/file.c):
 * out of memory for ENOMEM, else an invalid argument (the file given). */
static cugl_status write_failed(cugl__mp4 *m, int e, const char *what)
{
    char text[128];
    if (strerror_r(e, text, sizeof text) != 0)
        snprintf(text, sizeof text, "errno %d", e);
    snprintf(m->why, sizeof m->why, "writing the MP4 failed at %s (after %llu bytes): %s", what,
             (unsigned long long)m->pos, text);
    m->failed = e == ENOMEM ? CUGL_ERROR_OUT_OF_MEMORY : CUGL_ERROR_INVALID_ARGUMENT;
    return cugl__fail(m->failed, m->who, "%s", m->why);
}

static cugl_status put(cugl__mp4 *m, const void *data, size_t size, const char *what)
{
    errno = 0;
    if (size > 0 && fwrite(data, 1, size, m->f) != size)
        return write_failed(m, errno ? errno : EIO, what);
    m->pos += size;
    return CUGL_OK;
}

static cugl_status seek(cugl__mp4 *m, uint64_t to, const char *what)
{
    errno = 0;
    if (to > INT64_MAX || fseeko(m->f, (off_t)to, SEEK_SET) != 0)
        return write_failed(m, errno ? errno : EIO, what);
    return CUGL_OK;
}

static void be32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (24 - 8 * i));
}

/* --- opening ------------------------------------------------------------ */

/* Refused where the file cannot take the index: a pipe cannot go back to
 * mdat's size, and the offsets count from the file's first byte. */
static cugl_status check_file(FILE *f, const char *who)
{
    errno = 0;
    off_t at = ftello(f);
    if (at < 0 || fseeko(f, 0, SEEK_END) != 0 || (at = ftello(f)) < 0) {
        int e = errno ? errno : ESPIPE;
        char text[128];
        if (strerror_r(e, text, sizeof text) != 0)
            snprintf(text, sizeof text, "errno %d", e);
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the MP4's file is not seekable (%s): its index is written last and "
                          "mdat's size patched",
                          text);
    }
    if (at != 0)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the MP4's file is not empty (%lld bytes): its offsets count from the "
                          "file's start",
                          (long long)at);
    return CUGL_OK;
}

cugl_status cugl__mp4_open(cugl__mp4 **out, FILE *f, int width, int height, uint32_t timescale,
                           const char *who)
{
    const char *name = who ? who : __func__;
    if (!out)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, name, "out is NULL");
    *out = NULL;
    if (!f || !who)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, name, "%s is NULL", f ? "who" : "f");
    if (width < 1 || width > MAX_SIDE || height < 1 || height > MAX_SIDE)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "a %d x %d picture: each side must be 1 to %d", width, height,
                          MAX_SIDE);
    if (timescale == 0)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "timescale is 0: timestamps need ticks a second");
    CUGL__TRY(check_file(f, who));
    cugl__mp4 *m = calloc(1, sizeof *m);
    if (!m)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, who, "no memory for an MP4 muxer");
    m->f = f;
    snprintf(m->who, sizeof m->who, "%s", who);
    m->width = width;
    m->height = height;
    m->timescale = timescale;
    m->mdat = MDAT_AT;
    cugl_status st = put(m, file_head, sizeof file_head, "ftyp");
    if (st != CUGL_OK) {
        cugl__mp4_abort(m);
        return st;
    }
    *out = m;
    return CUGL_OK;
}

/* --- an access unit's NAL units ----------------------------------------- */

/* Where the first start code (00 00 01) at or after `from` begins; `size`
 * where there is none. */
static size_t start_code(const uint8_t *p, size_t size, size_t from)
{
    for (size_t i = from + 2; i < size; i++) {
        const uint8_t *one = memchr(p + i, 1, size - i);
        if (!one)
            return size;
        i = (size_t)(one - p);
        if (p[i - 1] == 0 && p[i - 2] == 0)
            return i - 2;
    }
    return size;
}

/* The NAL unit after the start code at *at, without the zero bytes before
 * the next (trailing zeros, a 4-byte start code's first); *at moves to the
 * next start code. Empty where two start codes meet. */
static size_t next_nal(const uint8_t *p, size_t size, size_t *at, const uint8_t **nal)
{
    size_t begin = *at + 3;
    size_t end = *at = start_code(p, size, begin);
    while (end > begin && p[end - 1] == 0)
        end--;
    *nal = p + begin;
    return end - begin;
}

/* What an access unit holds, read before anything of it is written. */
typedef struct access_unit {
    const uint8_t *sps, *pps; /* the first sample's, for avcC */
    size_t sps_size, pps_size;
    uint64_t bytes; /* the sample: each NAL unit kept, after its length */
    bool idr, picture;
} access_unit;

/* An SPS or PPS: the first kept (for avcC), the same again dropped, another
 * refused: one avcC describes every sample. */
static cugl_status parameter_set(const cugl__mp4 *m, const char *what, const uint8_t *known,
                                 size_t known_size, const uint8_t **first, size_t *first_size,
                                 const uint8_t *nal, size_t n)
{
    if (!known) {
        known = *first;
        known_size = *first_size;
    }
    if (!known) {
        if (n < 4 || n > UINT16_MAX)
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, m->who,
                              "the %s is %zu bytes: avcC takes 4 to 65535", what, n);
        *first = nal;
        *first_size = n;
        return CUGL_OK;
    }
    if (n != known_size || memcmp(nal, known, n) != 0)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, m->who,
                          "sample %zu's %s (%zu bytes) is not the first's (%zu bytes): the "
                          "stream's parameters cannot change within one MP4",
                          m->count, what, n, known_size);
    return CUGL_OK;
}

static cugl_status scan(const cugl__mp4 *m, const uint8_t *p, size_t size, access_unit *au)
{
    size_t at = start_code(p, size, 0);
    for (size_t i = 0; i < at && at < size; i++)
        if (p[i] != 0)
            at = size;
    if (at >= size)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, m->who,
                          "sample %zu (%zu bytes) does not begin with a start code: Annex B "
                          "wanted",
                          m->count, size);
    while (at < size) {
        const uint8_t *nal;
        size_t n = next_nal(p, size, &at, &nal);
        if (n == 0)
            continue;
        int type = nal[0] & 0x1f;
        cugl_status st = CUGL_OK;
        if (type == NAL_SPS)
            st = parameter_set(m, "SPS", m->sps, m->sps_size, &au->sps, &au->sps_size, nal, n);
        else if (type == NAL_PPS)
            st = parameter_set(m, "PPS", m->pps, m->pps_size, &au->pps, &au->pps_size, nal, n);
        else
            au->bytes += 4 + (uint64_t)n;
        if (st != CUGL_OK)
            return st;
        au->idr |= type == NAL_IDR;
        au->picture |= type >= 1 && type <= NAL_IDR;
    }
    if (au->bytes > UINT32_MAX)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, m->who,
                          "sample %zu is %llu bytes: an MP4's samples hold at most 4 GiB - 1",
                          m->count, (unsigned long long)au->bytes);
    return CUGL_OK;
}

/* What scan found, as a sample: the first must start the stream, and
 * `key` must say what the slices say (stss lists the key frames a player
 * seeks to). */
static cugl_status check_unit(const cugl__mp4 *m, const access_unit *au, bool key)
{
    const char *who = m->who;
    if (m->count == 0 && !key)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the first sample is not a key frame: an MP4 starts with an IDR "
                          "picture and its SPS and PPS");
    if (m->count == 0 && (!au->sps || !au->pps))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the first sample has no %s: avcC needs the SPS and the PPS",
                          au->sps ? "PPS" : au->pps ? "SPS" : "SPS and no PPS");
    if (!au->picture)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "sample %zu has no picture (no slice NAL unit)", m->count);
    if (key != au->idr)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          key ? "sample %zu is marked key but has no IDR slice"
                              : "sample %zu has an IDR slice but is not marked key",
                          m->count);
    return CUGL_OK;
}

/* --- adding a sample ---------------------------------------------------- */

static cugl_status check_pts(const cugl__mp4 *m, int64_t pts, const char *what)
{
    if (m->count == 0)
        return CUGL_OK;
    int64_t last = m->samples[m->count - 1].pts;
    if (pts <= last)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, m->who,
                          "%s %lld is not after the last sample's pts, %lld", what,
                          (long long)pts, (long long)last);
    uint64_t step = (uint64_t)pts - (uint64_t)last;
    if (step > UINT32_MAX)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, m->who,
                          "%s %lld is %llu ticks after the last sample's: an MP4's durations "
                          "hold at most 2^32 - 1",
                          what, (long long)pts, (unsigned long long)step);
    return CUGL_OK;
}

static uint8_t *copy_of(const uint8_t *p, size_t n)
{
    uint8_t *c = malloc(n);
    if (c)
        memcpy(c, p, n);
    return c;
}

/* Room for one sample more and, for the first, avcC's SPS and PPS: all
 * that may fail for memory, before anything is written. */
static cugl_status make_room(cugl__mp4 *m, const access_unit *au)
{
    if (m->count == m->capacity) {
        size_t cap = m->capacity ? m->capacity * 2 : 1024;
        sample *s = cap < SIZE_MAX / sizeof *s ? realloc(m->samples, cap * sizeof *s) : NULL;
        if (!s)
            return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, m->who,
                              "no memory for the index of %zu samples", cap);
        m->samples = s;
        m->capacity = cap;
    }
    if (m->count == 0) {
        m->sps = copy_of(au->sps, au->sps_size);
        m->pps = copy_of(au->pps, au->pps_size);
        if (!m->sps || !m->pps) {
            free(m->sps);
            free(m->pps);
            m->sps = m->pps = NULL;
            return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, m->who, "no memory for the SPS and PPS");
        }
        m->sps_size = au->sps_size;
        m->pps_size = au->pps_size;
    }
    return CUGL_OK;
}

/* The sample's NAL units but its SPS and PPS, each after its length. */
static cugl_status write_unit(cugl__mp4 *m, const uint8_t *p, size_t size)
{
    char what[32];
    snprintf(what, sizeof what, "sample %zu", m->count);
    size_t at = start_code(p, size, 0);
    while (at < size) {
        const uint8_t *nal;
        size_t n = next_nal(p, size, &at, &nal);
        int type = n ? nal[0] & 0x1f : 0;
        if (n == 0 || type == NAL_SPS || type == NAL_PPS)
            continue;
        uint8_t length[4];
        be32(length, (uint32_t)n);
        CUGL__TRY(put(m, length, sizeof length, what));
        CUGL__TRY(put(m, nal, n, what));
    }
    return CUGL_OK;
}

cugl_status cugl__mp4_add(cugl__mp4 *m, const uint8_t *annexb, size_t size, int64_t pts,
                          bool key)
{
    if (!m)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "m is NULL");
    if (m->failed)
        return cugl__fail(m->failed, m->who, "an earlier write failed: %s", m->why);
    if (!annexb || size == 0)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, m->who, "sample %zu is %s", m->count,
                          annexb ? "empty (0 bytes)" : "NULL");
    CUGL__TRY(check_pts(m, pts, "pts"));
    access_unit au = {0};
    CUGL__TRY(scan(m, annexb, size, &au));
    CUGL__TRY(check_unit(m, &au, key));
    CUGL__TRY(make_room(m, &au));
    uint64_t offset = m->pos;
    CUGL__TRY(write_unit(m, annexb, size));
    m->samples[m->count++] = (sample){.offset = offset, .size = (uint32_t)au.bytes, .key = key,
                                      .pts = pts};
    return CUGL_OK;
}

/* --- the index, made in memory ------------------------------------------ */

/* Bytes that grow; a failed allocation is kept, and checked once at the end. */
typedef struct bytes {
    uint8_t *data;
    size_t size, capacity;
    bool failed;
} bytes;

static uint8_t *room(bytes *b, size_t n)
{
    if (b->failed)
        return NULL;
    if (n > b->capacity - b->size) {
        size_t cap = b->capacity ? b->capacity : 4096;
        while (cap - b->size < n && cap <= SIZE_MAX / 2)
            cap *= 2;
        uint8_t *d = cap - b->size >= n ? realloc(b->data, cap) : NULL;
        if (!d) {
            b->failed = true;
            return NULL;
        }
        b->data = d;
        b->capacity = cap;
    }
    b->size += n;
    return b->data + b->size - n;
}

static void put_bytes(bytes *b, const void *p, size_t n)
{
    uint8_t *d = room(b, n);
    if (d && n)
        memcpy(d, p, n);
}

static void put_zeros(bytes *b, size_t n)
{
    uint8_t *d = room(b, n);
    if (d)
        memset(d, 0, n);
}

static void put_be(bytes *b, uint64_t v, int n)
{
    uint8_t *d = room(b, (size_t)n);
    for (int i = 0; d && i < n; i++)
        d[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
}

static void put16(bytes *b, uint32_t v) { put_be(b, v, 2); }
static void put32(bytes *b, uint32_t v) { put_be(b, v, 4); }

/* A box's header, its size 0 until end_box; where it begins. */
static size_t box(bytes *b, const char *type)
{
    size_t at = b->size;
    put32(b, 0);
    put_bytes(b, type, 4);
    return at;
}

static size_t full_box(bytes *b, const char *type, uint8_t version, uint32_t flags)
{
    size_t at = box(b, type);
    put32(b, (uint32_t)version << 24 | flags);
    return at;
}

static void patch32(bytes *b, size_t at, uint32_t v)
{
    if (!b->failed)
        be32(b->data + at, v);
}

static void end_box(bytes *b, size_t at) { patch32(b, at, (uint32_t)(b->size - at)); }

/* The identity: no rotation, no scale. */
static void matrix(bytes *b)
{
    static const uint32_t unity[9] = {0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000};
    for (int i = 0; i < 9; i++)
        put32(b, unity[i]);
}

/* Creation and modification time (0: a file does not depend on when it
 * was made), then `tail` 32-bit fields, then the duration: version 1's
 * 64-bit fields where the duration needs them. */
static void times(bytes *b, int version, const uint32_t *tail, int n, uint64_t duration)
{
    put_zeros(b, version ? 16 : 8);
    for (int i = 0; i < n; i++)
        put32(b, tail[i]);
    put_be(b, duration, version ? 8 : 4);
}

static void movie_header(bytes *b, const cugl__mp4 *m, uint64_t duration)
{
    int v = duration > UINT32_MAX;
    size_t at = full_box(b, "mvhd", (uint8_t)v, 0);
    times(b, v, &m->timescale, 1, duration);
    put32(b, 0x10000); /* rate 1.0 */
    put16(b, 0x100);   /* volume 1.0 */
    put_zeros(b, 10);
    matrix(b);
    put_zeros(b, 24);
    put32(b, 2); /* the next track's ID */
    end_box(b, at);
}

static void track_header(bytes *b, const cugl__mp4 *m, uint64_t duration)
{
    int v = duration > UINT32_MAX;
    /* Enabled, in the movie; track 1, and a reserved field. */
    size_t at = full_box(b, "tkhd", (uint8_t)v, 3);
    const uint32_t id[2] = {1, 0};
    times(b, v, id, 2, duration);
    put_zeros(b, 8 + 2 + 2 + 2 + 2); /* reserved, layer, group, volume 0, reserved */
    matrix(b);
    put32(b, (uint32_t)m->width << 16); /* 16.16 fixed point */
    put32(b, (uint32_t)m->height << 16);
    end_box(b, at);
}

static void media_header(bytes *b, const cugl__mp4 *m, uint64_t duration)
{
    int v = duration > UINT32_MAX;
    size_t at = full_box(b, "mdhd", (uint8_t)v, 0);
    times(b, v, &m->timescale, 1, duration);
    put16(b, ('u' - 0x60) << 10 | ('n' - 0x60) << 5 | ('d' - 0x60)); /* ISO 639-2 "und" */
    put16(b, 0);
    end_box(b, at);
    at = full_box(b, "hdlr", 0, 0);
    put32(b, 0);
    put_bytes(b, "vide", 4);
    put_zeros(b, 12);
    put_bytes(b, "VideoHandler", sizeof "VideoHandler"); /* with its NUL */
    end_box(b, at);
}

/* vmhd and dinf: video, its data in this file (a url with flag 1). */
static void media_info_head(bytes *b)
{
    size_t at = full_box(b, "vmhd", 0, 1);
    put_zeros(b, 8); /* graphics mode copy, no colour */
    end_box(b, at);
    size_t dinf = box(b, "dinf");
    size_t dref = full_box(b, "dref", 0, 0);
    put32(b, 1);
    end_box(b, full_box(b, "url ", 0, 1));
    end_box(b, dref);
    end_box(b, dinf);
}

/* stsd: one avc1 entry and its avcC (profile, its compatibility flags and
 * level: the SPS's bytes 1 to 3). */
static void sample_description(bytes *b, const cugl__mp4 *m)
{
    size_t stsd = full_box(b, "stsd", 0, 0);
    put32(b, 1);
    size_t avc1 = box(b, "avc1");
    put_zeros(b, 6);
    put16(b, 1);      /* data reference 1 */
    put_zeros(b, 16); /* pre-defined and reserved */
    put16(b, (uint32_t)m->width);
    put16(b, (uint32_t)m->height);
    put32(b, 0x480000); /* 72 dpi, both ways */
    put32(b, 0x480000);
    put32(b, 0);
    put16(b, 1);      /* a frame a sample */
    put_zeros(b, 32); /* no compressor name */
    put16(b, 0x18);   /* colour, no alpha */
    put16(b, 0xffff);
    size_t avcc = box(b, "avcC");
    const uint8_t head[6] = {1, m->sps[1], m->sps[2], m->sps[3],
                             0xfc | 3,  /* lengths in 4 bytes */
                             0xe0 | 1}; /* one SPS */
    put_bytes(b, head, sizeof head);
    put16(b, (uint32_t)m->sps_size);
    put_bytes(b, m->sps, m->sps_size);
    put_be(b, 1, 1); /* one PPS */
    put16(b, (uint32_t)m->pps_size);
    put_bytes(b, m->pps, m->pps_size);
    end_box(b, avcc);
    end_box(b, avc1);
    end_box(b, stsd);
}

static uint32_t duration_of(const cugl__mp4 *m, size_t i, int64_t end_pts)
{
    int64_t next = i + 1 < m->count ? m->samples[i + 1].pts : end_pts;
    return (uint32_t)((uint64_t)next - (uint64_t)m->samples[i].pts);
}

/* stts (runs of equal durations), stss, stsz, stsc, stco or co64. */
static void sample_tables(bytes *b, const cugl__mp4 *m, int64_t end_pts)
{
    size_t at = full_box(b, "stts", 0, 0);
    size_t runs_at = b->size;
    put32(b, 0);
    uint32_t runs = 0;
    for (size_t i = 0, j; i < m->count; i = j, runs++) {
        uint32_t d = duration_of(m, i, end_pts);
        for (j = i + 1; j < m->count && duration_of(m, j, end_pts) == d; j++)
            ;
        put32(b, (uint32_t)(j - i));
        put32(b, d);
    }
    patch32(b, runs_at, runs);
    end_box(b, at);
    at = full_box(b, "stss", 0, 0);
    size_t keys_at = b->size;
    put32(b, 0);
    uint32_t keys = 0;
    for (size_t i = 0; i < m->count; i++)
        if (m->samples[i].key) {
            put32(b, (uint32_t)(i + 1));
            keys++;
        }
    patch32(b, keys_at, keys);
    end_box(b, at);
    at = full_box(b, "stsz", 0, 0);
    put32(b, 0); /* sizes differ: a table */
    put32(b, (uint32_t)m->count);
    for (size_t i = 0; i < m->count; i++)
        put32(b, m->samples[i].size);
    end_box(b, at);
    at = full_box(b, "stsc", 0, 0);
    /* One row: from chunk 1 on, 1 sample a chunk, of description 1. */
    const uint32_t one_a_chunk[4] = {1, 1, 1, 1};
    for (int i = 0; i < 4; i++)
        put32(b, one_a_chunk[i]);
    end_box(b, at);
    bool wide = m->samples[m->count - 1].offset > UINT32_MAX;
    at = full_box(b, wide ? "co64" : "stco", 0, 0);
    put32(b, (uint32_t)m->count);
    for (size_t i = 0; i < m->count; i++)
        put_be(b, m->samples[i].offset, wide ? 8 : 4);
    end_box(b, at);
}

static void make_moov(bytes *b, const cugl__mp4 *m, int64_t end_pts)
{
    uint64_t duration = (uint64_t)end_pts - (uint64_t)m->samples[0].pts;
    size_t moov = box(b, "moov");
    movie_header(b, m, duration);
    size_t trak = box(b, "trak");
    track_header(b, m, duration);
    size_t mdia = box(b, "mdia");
    media_header(b, m, duration);
    size_t minf = box(b, "minf");
    media_info_head(b);
    size_t stbl = box(b, "stbl");
    sample_description(b, m);
    sample_tables(b, m, end_pts);
    end_box(b, stbl);
    end_box(b, minf);
    end_box(b, mdia);
    end_box(b, trak);
    end_box(b, moov);
}

/* --- the end ------------------------------------------------------------- */

static cugl_status finish(cugl__mp4 *m, int64_t end_pts)
{
    if (m->failed)
        return cugl__fail(m->failed, m->who, "an earlier write failed: %s", m->why);
    if (m->count == 0)
        return cugl__fail(CUGL_ERROR_INVALID_STATE, m->who,
                          "no sample was added: an MP4 needs one at least");
    CUGL__TRY(check_pts(m, end_pts, "end_pts"));
    bytes moov = {0};
    make_moov(&moov, m, end_pts);
    if (moov.failed) {
        free(moov.data);
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, m->who,
                          "no memory for the MP4's index of %zu samples", m->count);
    }
    uint64_t end = m->pos;
    uint8_t size[8];
    for (int i = 0; i < 8; i++)
        size[i] = (uint8_t)((end - m->mdat) >> (56 - 8 * i));
    cugl_status st = seek(m, m->mdat + 8, "mdat's size");
    if (st == CUGL_OK) {
        m->pos = m->mdat + 8;
        st = put(m, size, sizeof size, "mdat's size");
        m->pos = end;
    }
    if (st == CUGL_OK)
        st = seek(m, end, "moov");
    if (st == CUGL_OK)
        st = put(m, moov.data, moov.size, "moov");
    free(moov.data);
    errno = 0;
    if (st == CUGL_OK && fflush(m->f) != 0)
        st = write_failed(m, errno ? errno : EIO, "the flush");
    return st;
}

cugl_status cugl__mp4_finish(cugl__mp4 *m, int64_t end_pts)
{
    if (!m)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "m is NULL");
    cugl_status st = finish(m, end_pts);
    cugl__mp4_abort(m);
    return st;
}

void cugl__mp4_abort(cugl__mp4 *m)
{
    if (!m)
        return;
    free(m->samples);
    free(m->sps);
    free(m->pps);
    free(m);
}
