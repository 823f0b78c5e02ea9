/*
 * reader.c - the reader's door (reader.h): the file mapped, its container
 * told by its first bytes (an MP4 begins with ftyp, a WebM with the EBML
 * header), its parser's samples put in presentation order, decoded where
 * asked, and handed out.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reader_internal.h"

int reader__fail(reader__in *in, const char *format, ...)
{
    if (in->why_size > 0) {
        va_list ap;
        va_start(ap, format);
        vsnprintf(in->why, in->why_size, format, ap);
        va_end(ap);
    }
    return -1;
}

uint32_t reader__bits_u(reader__bits *b, int n)
{
    uint32_t v = 0;
    for (int i = 0; i < n; i++, b->at++) {
        int bit = 0;
        if (b->at / 8 < b->size)
            bit = b->p[b->at / 8] >> (7 - b->at % 8) & 1;
        else
            b->over = true;
        v = v << 1 | (uint32_t)bit;
    }
    return v;
}

uint32_t reader__bits_ue(reader__bits *b)
{
    int zeros = 0;
    while (reader__bits_u(b, 1) == 0 && !b->over)
        if (++zeros > 31) {
            b->over = true;
            return 0;
        }
    return (uint32_t)((1ull << zeros) - 1 + reader__bits_u(b, zeros));
}

size_t reader_picture_size(int w, int h)
{
    size_t cw = (size_t)(w + 1) / 2, ch = (size_t)(h + 1) / 2;
    return (size_t)w * (size_t)h + 2 * cw * ch;
}

static const char *const codec_names[] = {[READER__H264] = "h264", [READER__VP8] = "vp8",
                                          [READER__VP9] = "vp9"};

/* A frame's place in presentation order: by time, ties in the file's order. */
typedef struct rank {
    double pts;
    int index; /* in the file's order */
} rank;

static int by_time(const void *a, const void *b)
{
    const rank *x = a, *y = b;
    if (x->pts != y->pts)
        return x->pts < y->pts ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

/* `t` handed out in `out`, its frames in presentation order. */
static int hand_out(reader__in *in, reader__track *t, bool decode, reader_video *out)
{
    int n = t->count;
    rank *order = malloc(((size_t)n + 1) * sizeof *order);
    int *slot = malloc(((size_t)n + 1) * sizeof *slot);
    out->pts = malloc(((size_t)n + 1) * sizeof *out->pts);
    out->key = malloc(((size_t)n + 1) * sizeof *out->key);
    if (!order || !slot || !out->pts || !out->key) {
        free(order);
        free(slot);
        return reader__fail(in, "out of memory for %d frames", n);
    }
    for (int i = 0; i < n; i++)
        order[i] = (rank){t->samples[i].pts, i};
    qsort(order, (size_t)n, sizeof *order, by_time);
    for (int r = 0; r < n; r++) {
        slot[order[r].index] = r;
        out->pts[r] = order[r].pts;
        out->key[r] = t->samples[order[r].index].key;
    }
    free(order);
    snprintf(out->codec, sizeof out->codec, "%s", codec_names[t->codec]);
    out->width = t->width;
    out->height = t->height;
    out->frames = n;
    out->duration = t->duration;
    int rc = 0;
    if (decode) {
        out->picture_size = reader_picture_size(t->width, t->height);
        if (n > 0 && out->picture_size > READER_DECODED_MAX / (size_t)n)
            rc = reader__fail(in, "%d frames of %d x %d would take more than %zu bytes decoded",
                              n, t->width, t->height, (size_t)READER_DECODED_MAX);
        else if (!(out->pictures = malloc(out->picture_size * (size_t)n + 1)))
            rc = reader__fail(in, "out of memory for %d decoded frames", n);
        else
            rc = reader__decode(in, t, slot, out->pictures);
    }
    free(slot);
    return rc;
}

int reader_parse(reader_video *out, const uint8_t *bytes, size_t size, bool decode, char *why,
                 size_t why_size)
{
    reader__in in = {.p = bytes, .size = size, .why = why, .why_size = why_size};
    memset(out, 0, sizeof *out);
    if (why_size > 0)
        why[0] = '\0';
    reader__track t = {0};
    int rc;
    if (size >= 8 && memcmp(bytes + 4, "ftyp", 4) == 0)
        rc = reader__mp4(&in, &t);
    else if (size >= 4 && reader__be32(bytes) == 0x1A45DFA3)
        rc = reader__webm(&in, &t);
    else
        rc = reader__fail(&in, "neither an MP4 (it does not begin with an ftyp box) nor a WebM "
                               "(nor with an EBML header): %zu bytes",
                          size);
    if (rc == 0)
        rc = hand_out(&in, &t, decode, out);
    free(t.samples);
    if (rc != 0)
        reader_free(out);
    return rc;
}

int reader_open(reader_video *out, const char *path, bool decode, char *why, size_t why_size)
{
    reader__in in = {.why = why, .why_size = why_size};
    memset(out, 0, sizeof *out);
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return reader__fail(&in, "cannot open %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return reader__fail(&in, "%s is not a regular file", path);
    }
    if (st.st_size == 0) {
        close(fd);
        return reader__fail(&in, "%s is empty", path);
    }
    size_t size = (size_t)st.st_size;
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return reader__fail(&in, "cannot map %s (%zu bytes): %s", path, size, strerror(errno));
    int rc = reader_parse(out, map, size, decode, why, why_size);
    munmap(map, size);
    return rc;
}

void reader_free(reader_video *v)
{
    if (!v)
        return;
    free(v->pts);
    free(v->key);
    free(v->pictures);
    memset(v, 0, sizeof *v);
}
