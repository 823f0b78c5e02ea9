/*
 * postprocess_reference.c - see postprocess_reference.h. Built with
 * floating-point contraction off, so every operation rounds once, as the
 * kernels' do; the loops visit the taps in the kernels' order.
 */
#include "postprocess_reference.h"

#include <stdlib.h>
#include <string.h>

static pp_rgba pixel(const uint8_t *image, int width, int height, int x, int y)
{
    const uint8_t *p =
        image + ((size_t)pp_clamp(y, height) * (size_t)width + (size_t)pp_clamp(x, width)) * 4;
    pp_rgba c = {p[0], p[1], p[2], p[3]};
    return c;
}

static void put(uint8_t *image, int width, int x, int y, pp_rgba c)
{
    uint8_t *p = image + ((size_t)y * (size_t)width + (size_t)x) * 4;
    p[0] = c.r;
    p[1] = c.g;
    p[2] = c.b;
    p[3] = c.a;
}

/* pp_blur_rows, then pp_blur_columns. */
static bool blur(uint8_t *out, const uint8_t *in, int width, int height, int radius)
{
    pp_blur b = pp_blur_make(radius);
    pp_rgbf *rows = malloc((size_t)width * (size_t)height * sizeof *rows);
    if (!rows)
        return false;
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            pp_rgbf sum = pp_blur_centre(b.weight[0], pp_rgbf_of(pixel(in, width, height, x, y)));
            for (int k = 1; k <= b.radius; k++)
                sum = pp_blur_pair(sum, b.weight[k],
                                   pp_rgbf_of(pixel(in, width, height, x - k, y)),
                                   pp_rgbf_of(pixel(in, width, height, x + k, y)));
            rows[(size_t)y * (size_t)width + (size_t)x] = sum;
        }
    }
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            pp_rgbf sum = pp_blur_centre(b.weight[0], rows[(size_t)y * (size_t)width + (size_t)x]);
            for (int k = 1; k <= b.radius; k++)
                sum = pp_blur_pair(
                    sum, b.weight[k],
                    rows[(size_t)pp_clamp(y - k, height) * (size_t)width + (size_t)x],
                    rows[(size_t)pp_clamp(y + k, height) * (size_t)width + (size_t)x]);
            put(out, width, x, y, pp_rgba_of(sum));
        }
    }
    free(rows);
    return true;
}

static void edges(uint8_t *out, const uint8_t *in, int width, int height)
{
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            pp_rgba n[9];
            for (int j = 0; j < 3; j++)
                for (int i = 0; i < 3; i++)
                    n[j * 3 + i] = pixel(in, width, height, x + i - 1, y + j - 1);
            put(out, width, x, y, pp_edge(n));
        }
    }
}

bool postprocess_reference(uint8_t *out, const uint8_t *in, int width, int height,
                           pp_filter filter, int radius)
{
    size_t size = (size_t)width * (size_t)height * 4;
    switch (filter) {
    case PP_FILTER_NONE:
        memcpy(out, in, size);
        return true;
    case PP_FILTER_BLUR:
        return blur(out, in, width, height, radius);
    case PP_FILTER_EDGES:
        edges(out, in, width, height);
        return true;
    case PP_FILTER_BOTH: {
        uint8_t *blurred = malloc(size);
        bool ok = blurred && blur(blurred, in, width, height, radius);
        if (ok)
            edges(out, blurred, width, height);
        free(blurred);
        return ok;
    }
    }
    return false;
}
