/*
 * fuzz_png: PNG reading in libcugl-app (cugl_app_read_png) on the input as
 * a file. Nothing may crash, leak or trip a sanitizer; a read either gives
 * width x height RGBA8 pixels with both sizes positive (every byte of them
 * readable), or fails with a message naming the file and no pixels.
 */
#include <string.h>
#include <unistd.h>

#include <cugl/app.h>

#include "layout_oracle.h"
#include "png_bytes.h"

static size_t generate(oracle_rng *rng, uint8_t *buf, size_t cap);
static void run_one(const uint8_t *data, size_t size);

#include "fuzz_main.h"

static void run_one(const uint8_t *data, size_t size)
{
    char path[] = "/tmp/cugl-fuzz-png-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return;
    bool written = write(fd, data, size) == (ssize_t)size;
    close(fd);
    if (!written) {
        unlink(path);
        return;
    }
    uint8_t *rgba = (uint8_t *)path; /* must be replaced */
    int w = -7, h = -7;
    cugl_status st = cugl_app_read_png(&rgba, &w, &h, path);
    unlink(path);
    if (st == CUGL_OK) {
        if (!rgba || w <= 0 || h <= 0)
            FUZZ_VIOLATED("png: a read of %d x %d at %p", w, h, (void *)rgba);
        unsigned sum = 0; /* every byte readable (ASan checks) */
        for (size_t i = 0; i < (size_t)w * (size_t)h * 4; i++)
            sum += rgba[i];
        (void)sum;
        free(rgba);
    } else if (rgba || !strstr(cugl_last_error(), path)) {
        FUZZ_VIOLATED("png: a failed read left pixels (%p) or a message without the file: %s",
                      (void *)rgba, cugl_last_error());
    }
}

/* A valid PNG of a few pixels, then bent: bytes flipped, cut, repeated;
 * or its header, CRC right, claiming another size, up to a million a side. */
static size_t generate(oracle_rng *rng, uint8_t *buf, size_t cap)
{
    static uint8_t base[4096];
    static size_t base_size;
    if (!base_size) {
        uint8_t px[5 * 3 * 4];
        for (size_t i = 0; i < sizeof px; i++)
            px[i] = (uint8_t)(i * 29);
        char path[] = "/tmp/cugl-fuzz-png-base-XXXXXX";
        int fd = mkstemp(path);
        if (fd < 0)
            abort();
        close(fd);
        if (cugl_app_write_png(path, px, 5, 3) != CUGL_OK)
            FUZZ_VIOLATED("png: cannot write the base image: %s", cugl_last_error());
        FILE *f = fopen(path, "rb");
        base_size = f ? fread(base, 1, sizeof base, f) : 0;
        if (f)
            fclose(f);
        unlink(path);
        if (!base_size)
            abort();
    }
    size_t n = base_size < cap ? base_size : cap;
    memcpy(buf, base, n);
    if (oracle_range(rng, 0, 7) == 0 && n >= PNG_BYTES_IHDR + 25) {
        static const int64_t sides[] = {1, 5, 16384, 16385, 65536, 1000000};
        int64_t k = sizeof sides / sizeof sides[0] - 1;
        png_bytes_set_size(buf, (uint32_t)sides[oracle_range(rng, 0, k)],
                           (uint32_t)sides[oracle_range(rng, 0, k)]);
        return n;
    }
    int flips = (int)oracle_range(rng, 0, 4);
    for (int i = 0; i < flips; i++)
        buf[oracle_range(rng, 0, (int64_t)n - 1)] ^= (uint8_t)oracle_range(rng, 1, 255);
    if (oracle_range(rng, 0, 3) == 0)
        n = (size_t)oracle_range(rng, 0, (int64_t)n);
    return n;
}
