/*
 * reader_internal.h - what the reader's files share: the bytes read and
 * where a failure's reason goes; the track each container's parser
 * gives (its samples in decoding order) to the part that orders,
 * decodes and hands them out; bits read by the codecs' headers.
 */
#ifndef RECORD_READER_INTERNAL_H
#define RECORD_READER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reader.h"

/* The file's bytes, and the caller's buffer for the reason of a failure. */
typedef struct reader__in {
    const uint8_t *p;
    size_t size;
    char *why;
    size_t why_size;
} reader__in;

/* Say why in in->why; returns -1, for `return reader__fail(...)`. */
int reader__fail(reader__in *in, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

typedef enum reader__codec { READER__H264, READER__VP8, READER__VP9 } reader__codec;

/* One frame's bytes in the file, its time and whether it is a key frame. */
typedef struct reader__sample {
    uint64_t offset;
    uint32_t size;
    double pts; /* seconds */
    bool key;
} reader__sample;

/* Parameter sets an H.264 decoder needs first (avcC's SPS and PPS). */
enum { READER__PARAMS_MAX = 64 };

typedef struct reader__track {
    reader__codec codec;
    int width, height;
    double duration;
    reader__sample *samples; /* in decoding order (the file's) */
    int count;
    /* H.264: each sample's NAL units follow their lengths, each of
     * nal_length_size bytes; params are the SPS and PPS, in avcC's order. */
    int nal_length_size;
    const uint8_t *params[READER__PARAMS_MAX];
    uint16_t params_size[READER__PARAMS_MAX];
    int params_count;
} reader__track;

/* The container's parsers: `t` filled (its samples the caller's to free). */
int reader__mp4(reader__in *in, reader__track *t);
int reader__webm(reader__in *in, reader__track *t);

/* Every sample decoded into pictures (count * picture size bytes), sample
 * i's picture at slot[i]; each decoded picture must be width x height. */
int reader__decode(reader__in *in, const reader__track *t, const int *slot, uint8_t *pictures);

/* Bits read most significant first (the codecs' headers), past the end
 * as zeros with `over` set, so a parser checks once at its end. */
typedef struct reader__bits {
    const uint8_t *p;
    size_t size, at; /* at: in bits */
    bool over;
} reader__bits;

uint32_t reader__bits_u(reader__bits *b, int n);
/* Exp-Golomb, ue(v) of H.264 (section 9.1); a code past 32 bits sets over. */
uint32_t reader__bits_ue(reader__bits *b);

static inline uint16_t reader__be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }

static inline uint32_t reader__be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t reader__be64(const uint8_t *p)
{
    return (uint64_t)reader__be32(p) << 32 | reader__be32(p + 4);
}

#endif /* RECORD_READER_INTERNAL_H */
