/*
 * readback.c - a file read back by the tests' reader and, where they are,
 * by ffprobe and ffmpeg (readback.h); damaged files given to the reader.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "readback.h"

void readback_read(reader_video *out, const char *path, bool decode)
{
    char why[512];
    if (reader_open(out, path, decode, why, sizeof why) != 0)
        fail_msg("the reader refuses %s: %s", path, why);
}

static const char *tool(const char *name)
{
    const char *p = getenv(name);
    return p && p[0] ? p : NULL;
}

bool readback_tools(void)
{
    if (tool("FFPROBE") && tool("FFMPEG"))
        return true;
    print_message("# read back by the test's own reader; ffprobe/ffmpeg not here to "
                  "cross-check\n");
    return false;
}

char *readback_output(const char *command)
{
    FILE *p = popen(command, "r");
    if (!p)
        fail_msg("cannot run %s", command);
    size_t size = 0, cap = 1 << 16;
    char *text = malloc(cap);
    assert_non_null(text);
    for (size_t n; (n = fread(text + size, 1, cap - size - 1, p)) > 0;) {
        size += n;
        if (cap - size < 2) {
            text = realloc(text, cap *= 2);
            assert_non_null(text);
        }
    }
    text[size] = '\0';
    int rc = pclose(p);
    if (rc != 0)
        fail_msg("%s exited with %d: %s", command, rc, text);
    return text;
}

typedef struct packet {
    double pts;
    bool key;
} packet;

static int by_time(const void *a, const void *b)
{
    double x = ((const packet *)a)->pts, y = ((const packet *)b)->pts;
    return (x > y) - (x < y);
}

/* ffprobe's lines "codec_name=", "width=", "height=" and each packet's
 * "pts_time=" and "flags=", into v. */
static void parse_probe(const char *text, reader_video *v)
{
    int cap = 256;
    packet *packets = malloc((size_t)cap * sizeof *packets);
    assert_non_null(packets);
    for (const char *line = text; *line;) {
        size_t n = strcspn(line, "\n");
        const char *value = memchr(line, '=', n);
        if (value) {
            value++;
            if (strncmp(line, "codec_name=", 11) == 0)
                snprintf(v->codec, sizeof v->codec, "%.*s", (int)(line + n - value), value);
            else if (strncmp(line, "width=", 6) == 0)
                v->width = atoi(value);
            else if (strncmp(line, "height=", 7) == 0)
                v->height = atoi(value);
            else if (strncmp(line, "pts_time=", 9) == 0) {
                if (v->frames == cap) {
                    packets = realloc(packets, (size_t)(cap *= 2) * sizeof *packets);
                    assert_non_null(packets);
                }
                char *end;
                packets[v->frames++] = (packet){.pts = strtod(value, &end)};
                if (end == value)
                    fail_msg("ffprobe gives packet %d no time: %.*s", v->frames - 1, (int)n, line);
            } else if (strncmp(line, "flags=", 6) == 0 && v->frames > 0) {
                packets[v->frames - 1].key = value[0] == 'K';
            }
        }
        line += n + (line[n] == '\n');
    }
    qsort(packets, (size_t)v->frames, sizeof *packets, by_time);
    v->pts = malloc(((size_t)v->frames + 1) * sizeof *v->pts);
    v->key = malloc(((size_t)v->frames + 1) * sizeof *v->key);
    assert_true(v->pts && v->key);
    for (int i = 0; i < v->frames; i++) {
        v->pts[i] = packets[i].pts;
        v->key[i] = packets[i].key;
    }
    free(packets);
}

void readback_probe(reader_video *out, const char *path, bool decode)
{
    memset(out, 0, sizeof *out);
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "'%s' -v error -select_streams v:0 -show_entries "
             "stream=codec_name,width,height:packet=pts_time,flags -of default=nw=1 '%s'",
             tool("FFPROBE"), path);
    char *text = readback_output(cmd);
    parse_probe(text, out);
    free(text);
    if (!decode)
        return;
    out->picture_size = reader_picture_size(out->width, out->height);
    out->pictures = malloc(out->picture_size * ((size_t)out->frames + 1));
    assert_non_null(out->pictures);
    snprintf(cmd, sizeof cmd,
             "'%s' -v error -i '%s' -f rawvideo -pix_fmt yuv420p -fps_mode passthrough -",
             tool("FFMPEG"), path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    int n = 0;
    while (n <= out->frames &&
           fread(out->pictures + (size_t)n * out->picture_size, 1, out->picture_size, p) ==
               out->picture_size)
        n++;
    int rc = pclose(p);
    if (rc != 0 || n != out->frames)
        fail_msg("%s exited with %d after %d whole pictures; ffprobe counts %d packets", cmd, rc,
                 n, out->frames);
}

void readback_agree(const reader_video *r, const reader_video *p)
{
    if (strcmp(r->codec, p->codec) != 0 || r->width != p->width || r->height != p->height ||
        r->frames != p->frames)
        fail_msg("the reader reads %s, %d x %d, %d frames; ffprobe %s, %d x %d, %d frames",
                 r->codec, r->width, r->height, r->frames, p->codec, p->width, p->height,
                 p->frames);
    for (int i = 0; i < r->frames; i++) {
        if (fabs(r->pts[i] - p->pts[i]) > 1e-6)
            fail_msg("frame %d: at %.9f s by the reader, %.9f s by ffprobe", i, r->pts[i],
                     p->pts[i]);
        if (r->key[i] != p->key[i])
            fail_msg("frame %d: %s by the reader, %s by ffprobe", i,
                     r->key[i] ? "a key frame" : "no key frame",
                     p->key[i] ? "a key frame" : "no key frame");
    }
}

double readback_psnr(const uint8_t *a, const uint8_t *b, size_t n)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)a[i] - b[i];
        sum += d * d;
    }
    return sum == 0 ? 99 : 10 * log10(255.0 * 255.0 * (double)n / sum);
}

/* What a reader may give for any file it does not refuse. */
static void expect_sane(const char *name, const char *what, const reader_video *v, size_t size,
                        bool decoded)
{
    bool ok = (strcmp(v->codec, "h264") == 0 || strcmp(v->codec, "vp8") == 0 ||
               strcmp(v->codec, "vp9") == 0) &&
              v->width >= 1 && v->width <= 65535 && v->height >= 1 && v->height <= 65535 &&
              v->frames >= 0 && (size_t)v->frames <= size && isfinite(v->duration) &&
              v->duration >= 0 && (v->frames == 0 || (v->pts && v->key));
    for (int i = 0; ok && i < v->frames; i++)
        ok = isfinite(v->pts[i]) && (i == 0 || v->pts[i] >= v->pts[i - 1]);
    if (decoded)
        ok = ok && v->pictures && v->picture_size == reader_picture_size(v->width, v->height);
    else
        ok = ok && !v->pictures;
    if (!ok)
        fail_msg("%s %s: read as %s, %d x %d, %d frames, %g s: not sane", name, what, v->codec,
                 v->width, v->height, v->frames, v->duration);
}

/* Where to cut next: every byte of the first 1 KiB and the last 2 KiB
 * (the headers and the index), 256 points between. */
static size_t next_cut(size_t n, size_t size)
{
    if (n < 1024 || n + 2048 >= size)
        return n + 1;
    size_t step = (size - 3072) / 256;
    return n + (step ? step : 1);
}

static uint32_t xorshift(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

void readback_damage(const char *name, const uint8_t *file, size_t size, unsigned seed)
{
    enum { CHANGED = 2000, DECODE_EVERY = 16 };
    reader_video v;
    char why[512], what[96];
    if (reader_parse(&v, file, size, true, why, sizeof why) != 0)
        fail_msg("%s: the whole file (%zu bytes) is refused: %s", name, size, why);
    reader_free(&v);
    int cuts = 0;
    for (size_t n = 0; n < size; n = next_cut(n, size), cuts++) {
        uint8_t *cut = malloc(n + 1); /* exactly n used: a read past them is ASan's to see */
        assert_non_null(cut);
        memcpy(cut, file, n);
        int rc = reader_parse(&v, cut, n, false, why, sizeof why);
        free(cut);
        if (rc == 0)
            fail_msg("%s cut to %zu of its %zu bytes: read (%d frames), not refused", name, n,
                     size, v.frames);
        if (!why[0])
            fail_msg("%s cut to %zu bytes: refused without a reason", name, n);
        if (n == size / 2 || n == size - 1)
            print_message("# %s cut to %zu bytes: %s\n", name, n, why);
    }
    uint32_t state = seed ? seed : 1;
    int refused = 0, read = 0, decoded = 0;
    uint8_t *copy = malloc(size);
    assert_non_null(copy);
    size_t head = size < 1024 ? size : 1024, tail = size < 2048 ? size : 2048;
    for (int k = 0; k < CHANGED; k++) {
        memcpy(copy, file, size);
        int changes = 1 + (int)(xorshift(&state) % 4);
        size_t first = 0;
        for (int c = 0; c < changes; c++) {
            uint32_t where = xorshift(&state) % 5, r = xorshift(&state);
            size_t at = where < 2 ? r % head : where < 4 ? size - tail + r % tail : r % size;
            copy[at] ^= (uint8_t)(1 + xorshift(&state) % 255);
            first = c == 0 ? at : first;
        }
        bool decode = k % DECODE_EVERY == 0;
        snprintf(what, sizeof what, "copy %d (seed %u; %d bytes changed, the first at %zu)", k,
                 seed, changes, first);
        if (reader_parse(&v, copy, size, decode, why, sizeof why) == 0) {
            expect_sane(name, what, &v, size, decode);
            read++;
            decoded += decode;
        } else {
            if (!why[0])
                fail_msg("%s %s: refused without a reason", name, what);
            refused++;
        }
        reader_free(&v);
    }
    free(copy);
    print_message("# %s: cut short %d ways, each refused; %d copies with bytes changed (seed %u): "
                  "%d refused, %d read sanely (%d of them decoded)\n",
                  name, cuts, CHANGED, seed, refused, read, decoded);
}
