/*
 * pattern.h - a moving picture with detail like a simulation's, the same
 * wherever it is computed: serve_app --animate draws frame N's, and a
 * viewer compares what it received with it (PSNR). Waves that drift with
 * the frame number over fine grain that changes every frame: about 250 kB
 * a JPEG at quality 85 and 1280x720, as the demos' pictures are.
 */
#ifndef CUGL_TEST_PATTERN_H
#define CUGL_TEST_PATTERN_H

#include <math.h>
#include <stdint.h>

/* The waves' table: 1024 samples of 90 sin, rounded (serve_app hands it
 * to its shader, which draws the same picture on the GPU). */
static inline const int16_t *pattern_wave(void)
{
    static int16_t wave[1024];
    if (!wave[256])
        for (int i = 0; i < 1024; i++)
            wave[i] = (int16_t)lround(90.0 * sin(6.283185307179586 * i / 1024.0));
    return wave;
}

/* Row `y` (0 the top) of frame `frame`, `w` RGBA pixels. serve_app's
 * PATTERN_SHADER is the same arithmetic, exact in 32-bit ints. */
static inline void pattern_row(uint8_t *row, int y, int w, long frame)
{
    const int16_t *wave = pattern_wave();
    int t = (int)(frame % 1024);
    for (int x = 0; x < w; x++) {
        int a = wave[(x * 3 + y + 5 * t) & 1023], b = wave[(y * 4 - x + 7 * t) & 1023];
        int c = wave[((x * x + y * y) / 64 + 3 * t) & 1023];
        /* The grain drifts (2, 1) pixels a frame: detail that moves, as a
         * simulation's does, not noise new every frame. */
        uint32_t gx = (uint32_t)(x + 2 * t), gy = (uint32_t)(y + t);
        uint32_t n = gx * 73856093u ^ gy * 19349663u;
        n = (n ^ (n >> 13)) * 0x5bd1e995u;
        int grain = (int)((n >> 24) % 26) - 13;
        int r = 128 + a + grain, g = 128 + b / 2 + c / 2 + grain, bl = 128 + c - a / 2 + grain;
        row[4 * x + 0] = (uint8_t)(r < 0 ? 0 : r > 255 ? 255 : r);
        row[4 * x + 1] = (uint8_t)(g < 0 ? 0 : g > 255 ? 255 : g);
        row[4 * x + 2] = (uint8_t)(bl < 0 ? 0 : bl > 255 ? 255 : bl);
        row[4 * x + 3] = 255;
    }
}

#endif /* CUGL_TEST_PATTERN_H */
