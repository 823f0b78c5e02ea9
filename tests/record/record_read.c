/*
 * record_read.c - a video file as the recorder's tests read it back
 * (reader.h), for scripts on a machine without ffprobe:
 *
 *   record_read [--decode] FILE
 *
 * prints "codec=h264 width=W height=H frames=N", then a line a frame in
 * presentation order, "pts=SECONDS key=0|1"; with --decode every frame is
 * decoded too, and its line goes on " luma=MEAN spread=DEVIATION": its
 * luma plane's mean and standard deviation, 0 to 255 (a black or a flat
 * picture has no spread). A file the reader refuses: its reason on
 * stderr, exit 1.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "reader.h"

int main(int argc, char **argv)
{
    bool decode = argc == 3 && strcmp(argv[1], "--decode") == 0;
    if (argc != 2 + decode || argv[argc - 1][0] == '-') {
        fprintf(stderr, "usage: record_read [--decode] FILE\n");
        return 2;
    }
    const char *path = argv[argc - 1];
    reader_video v;
    char why[512];
    if (reader_open(&v, path, decode, why, sizeof why) != 0) {
        fprintf(stderr, "record_read: %s: %s\n", path, why);
        return 1;
    }
    printf("codec=%s width=%d height=%d frames=%d\n", v.codec, v.width, v.height, v.frames);
    for (int i = 0; i < v.frames; i++) {
        printf("pts=%.6f key=%d", v.pts[i], v.key[i]);
        if (decode) {
            const uint8_t *y = v.pictures + (size_t)i * v.picture_size;
            size_t n = (size_t)v.width * (size_t)v.height;
            double sum = 0, squares = 0;
            for (size_t k = 0; k < n; k++) {
                sum += y[k];
                squares += (double)y[k] * y[k];
            }
            double mean = sum / (double)n;
            printf(" luma=%.1f spread=%.1f", mean, sqrt(fmax(squares / (double)n - mean * mean, 0)));
        }
        printf("\n");
    }
    reader_free(&v);
    return fflush(stdout) == 0 ? 0 : 1;
}
