/*
 * test_i420.c - the video encoders' colour conversion
 * (cugl__video_to_i420, serve_video.c): GL's RGBA, rows bottom first, into
 * I420 with rows top first, BT.601 limited range; the same bytes in any
 * number of bands on threads, and nothing written outside the planes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cugl_test.h"
#include "serve_internal.h"

enum { PAD = 64, SENTINEL = 0xA5 };

/* An I420 picture of w x h whose rows are PAD bytes longer than needed,
 * every byte SENTINEL. */
typedef struct picture {
    uint8_t *planes[3];
    int strides[3];
    size_t sizes[3];
} picture;

static picture picture_new(int w, int h)
{
    picture p;
    for (int i = 0; i < 3; i++) {
        int pw = i ? w / 2 : w, ph = i ? h / 2 : h;
        p.strides[i] = pw + PAD;
        p.sizes[i] = (size_t)p.strides[i] * (size_t)ph;
        p.planes[i] = malloc(p.sizes[i]);
        assert_non_null(p.planes[i]);
        memset(p.planes[i], SENTINEL, p.sizes[i]);
    }
    return p;
}

static void picture_free(picture *p)
{
    for (int i = 0; i < 3; i++)
        free(p->planes[i]);
}

/* The sample at (x, y) of plane i. */
static uint8_t at(const picture *p, int i, int x, int y)
{
    return p->planes[i][(size_t)y * (size_t)p->strides[i] + (size_t)x];
}

/* The bottom half of memory's rows red, the top half white: in I420 (rows
 * top first) white above red, each with BT.601's limited-range values. */
static void known_colours_land_in_the_right_rows(void **state)
{
    (void)state;
    int w = 32, h = 32;
    uint8_t *rgba = malloc((size_t)w * (size_t)h * 4);
    assert_non_null(rgba);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint8_t *px = rgba + ((size_t)y * (size_t)w + (size_t)x) * 4;
            bool red = y < h / 2; /* GL's bottom rows */
            px[0] = 255;
            px[1] = px[2] = red ? 0 : 255;
            px[3] = 255;
        }
    picture p = picture_new(w, h);
    cugl__video_to_i420(p.planes, p.strides, rgba, w, h, (size_t)w * 4, 1);
    for (int y = 0; y < h; y++) {
        bool red = y >= h / 2; /* I420's bottom rows */
        for (int x = 0; x < w; x++)
            assert_int_equal(at(&p, 0, x, y), red ? 82 : 235);
    }
    for (int y = 0; y < h / 2; y++) {
        bool red = y >= h / 4;
        for (int x = 0; x < w / 2; x++) {
            assert_int_equal(at(&p, 1, x, y), red ? 90 : 128);
            assert_int_equal(at(&p, 2, x, y), red ? 240 : 128);
        }
    }
    picture_free(&p);
    free(rgba);
}

/* Random pixels in rows of `stride` bytes, some of them padding. */
static uint8_t *random_rgba(int w, int h, size_t stride)
{
    uint8_t *rgba = malloc(stride * (size_t)h);
    assert_non_null(rgba);
    uint32_t s = 12345;
    for (size_t i = 0; i < stride * (size_t)h; i++) {
        s = s * 1664525u + 1013904223u;
        rgba[i] = (uint8_t)(s >> 24);
    }
    (void)w;
    return rgba;
}

/* Whether every plane's padding is still SENTINEL. */
static bool padding_untouched(const picture *p, int w, int h)
{
    for (int i = 0; i < 3; i++) {
        int pw = i ? w / 2 : w, ph = i ? h / 2 : h;
        for (int y = 0; y < ph; y++)
            for (int x = pw; x < p->strides[i]; x++)
                if (at(p, i, x, y) != SENTINEL)
                    return false;
    }
    return true;
}

/* Each size in 1, 2, 3, 7, 16 and 40 bands (more than there may be) gives
 * the bytes of one band, and writes only the picture. */
static void bands_give_the_same_bytes(void **state)
{
    (void)state;
    const int sizes[][2] = {{1920, 1080}, {642, 362}, {64, 18}, {16, 16}};
    const int band_counts[] = {2, 3, 7, 16, 40};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int w = sizes[s][0], h = sizes[s][1];
        size_t stride = (size_t)w * 4 + 12;
        uint8_t *rgba = random_rgba(w, h, stride);
        picture one = picture_new(w, h);
        cugl__video_to_i420(one.planes, one.strides, rgba, w, h, stride, 1);
        assert_true(padding_untouched(&one, w, h));
        for (size_t b = 0; b < sizeof band_counts / sizeof band_counts[0]; b++) {
            picture many = picture_new(w, h);
            cugl__video_to_i420(many.planes, many.strides, rgba, w, h, stride, band_counts[b]);
            for (int i = 0; i < 3; i++)
                if (memcmp(one.planes[i], many.planes[i], one.sizes[i]) != 0)
                    fail_msg("%d x %d in %d bands: plane %d differs from one band's", w, h,
                             band_counts[b], i);
            picture_free(&many);
        }
        picture_free(&one);
        free(rgba);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(known_colours_land_in_the_right_rows),
        cmocka_unit_test(bands_give_the_same_bytes),
    };
    return cugl_test_run(tests);
}
