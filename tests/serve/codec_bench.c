/*
 * codec_bench.c - the frame server's video encoders (serve_video.c,
 * serve_h264.c) on tests/serve/pattern.h's moving picture at a fixed
 * bitrate, for codec_bench.py:
 *
 *   codec_bench vp8|h264 KBPS WIDTH HEIGHT FRAMES PICTURES STREAM
 *   codec_bench pictures WIDTH HEIGHT FRAMES PICTURES
 *
 * writes the pictures as the program rendered them (RGBA, rows top first,
 * FRAMES of them) to PICTURES and what the encoder made of them to STREAM
 * (VP8 in IVF, H.264 as an Annex B stream), each frame encoded as the
 * server does (60 a second, a key frame first); prints one JSON line: the
 * bitrate it came to and the encoder's time a frame. `pictures` writes the
 * pictures alone (test_link.py's peer encodes them).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pattern.h"
#include "serve_internal.h"

static void put_le(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* FRAMES pictures of w x h to `path`, rows top first; 0 or 1. */
static int write_pictures(const char *path, int w, int h, int n)
{
    FILE *out = fopen(path, "wb");
    uint8_t *row = malloc((size_t)w * 4);
    int ok = out && row;
    for (int f = 0; ok && f < n; f++)
        for (int y = 0; ok && y < h; y++) {
            pattern_row(row, y, w, f);
            ok = fwrite(row, 1, (size_t)w * 4, out) == (size_t)w * 4;
        }
    free(row);
    if ((out && fclose(out) != 0) || !ok) {
        fprintf(stderr, "codec_bench: cannot write %s\n", path);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 6 && strcmp(argv[1], "pictures") == 0) {
        int w = atoi(argv[2]), h = atoi(argv[3]), n = atoi(argv[4]);
        if (w < 16 || h < 16 || (w | h) & 1 || n <= 0) {
            fprintf(stderr, "codec_bench: even sides of 16 or more, FRAMES > 0\n");
            return 2;
        }
        return write_pictures(argv[5], w, h, n);
    }
    if (argc != 8) {
        fprintf(stderr, "usage: codec_bench vp8|h264 KBPS WIDTH HEIGHT FRAMES PICTURES STREAM\n"
                        "       codec_bench pictures WIDTH HEIGHT FRAMES PICTURES\n");
        return 2;
    }
    cugl__video_codec codec = strcmp(argv[1], "h264") == 0 ? CUGL__VIDEO_H264 : CUGL__VIDEO_VP8;
    int kbps = atoi(argv[2]), w = atoi(argv[3]), h = atoi(argv[4]), n = atoi(argv[5]);
    if ((strcmp(argv[1], "vp8") && strcmp(argv[1], "h264")) || kbps <= 0 || w < 16 || h < 16 ||
        (w | h) & 1 || n <= 0) {
        fprintf(stderr, "codec_bench: a codec vp8 or h264, KBPS > 0, even sides of 16 or "
                        "more, FRAMES > 0\n");
        return 2;
    }
    cugl__video *v = cugl__video_new(codec);
    if (!v) {
        fprintf(stderr, "codec_bench: this build has no %s encoder\n", argv[1]);
        return 77;
    }
    FILE *pictures = fopen(argv[6], "wb"), *stream = fopen(argv[7], "wb");
    uint8_t *rgba = malloc((size_t)w * (size_t)h * 4);
    if (!pictures || !stream || !rgba) {
        fprintf(stderr, "codec_bench: cannot write %s or %s\n", argv[6], argv[7]);
        return 1;
    }
    if (codec == CUGL__VIDEO_VP8) { /* IVF: 60 frames a second */
        uint8_t head[32] = {'D', 'K', 'I', 'F', 0, 0, 32, 0, 'V', 'P', '8', '0'};
        put_le(head + 12, (uint64_t)w, 2);
        put_le(head + 14, (uint64_t)h, 2);
        put_le(head + 16, 60, 4);
        put_le(head + 20, 1, 4);
        put_le(head + 24, (uint64_t)n, 4);
        fwrite(head, 1, sizeof head, stream);
    }
    double bytes = 0, ms = 0;
    for (int f = 0; f < n; f++) {
        /* The encoder takes GL's rows, bottom first. */
        for (int y = 0; y < h; y++) {
            uint8_t *row = rgba + (size_t)(h - 1 - y) * (size_t)w * 4;
            pattern_row(row, y, w, f);
            fwrite(row, 1, (size_t)w * 4, pictures);
        }
        size_t size = 0;
        bool key = false;
        char why[256];
        double t0 = now_ms();
        unsigned char *bits =
            cugl__video_encode(v, rgba, w, h, 60, kbps, f == 0, &size, &key, why, sizeof why);
        ms += now_ms() - t0;
        if (!bits) {
            fprintf(stderr, "codec_bench: frame %d: %s\n", f, why);
            return 1;
        }
        if (codec == CUGL__VIDEO_VP8) {
            uint8_t head[12];
            put_le(head, size, 4);
            put_le(head + 4, (uint64_t)f, 8);
            fwrite(head, 1, sizeof head, stream);
        }
        fwrite(bits, 1, size, stream);
        bytes += (double)size;
        free(bits);
    }
    cugl__video_close(v);
    free(rgba);
    if (fclose(pictures) != 0 || fclose(stream) != 0) {
        fprintf(stderr, "codec_bench: writing failed\n");
        return 1;
    }
    printf("{\"kbps\": %.1f, \"encode_ms\": %.3f}\n", bytes * 8 * 60 / n / 1e3, ms / n);
    return 0;
}
