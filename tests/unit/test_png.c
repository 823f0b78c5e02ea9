/*
 * test_png.c - libcugl-app's PNG files, no GL needed:
 * round trips of RGBA8 images, every colour type libpng writes read as
 * RGBA8, failures named with the file, and headers claiming more pixels
 * than cugl reads refused.
 */
#include <math.h>
#include <png.h>

#include "app_test.h"
#include "png_bytes.h"

static void png_round_trip(void **state)
{
    (void)state;
    static const int sizes[][2] = {{1, 1}, {7, 3}, {3, 7}, {64, 48}, {257, 5}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int w = sizes[s][0], h = sizes[s][1];
        size_t n = (size_t)w * h * 4;
        uint8_t *image = malloc(n);
        for (size_t i = 0; i < n; i++)
            image[i] = (uint8_t)(i * 131 + s * 7 + (i >> 9));
        const char *path = tmp_path("round.png");
        assert_ok(cugl_app_write_png(path, image, w, h));
        uint8_t *back = NULL;
        int bw = 0, bh = 0;
        assert_ok(cugl_app_read_png(&back, &bw, &bh, path));
        assert_int_equal(bw, w);
        assert_int_equal(bh, h);
        assert_memory_equal(back, image, n);
        free(back);
        free(image);
        unlink(path);
    }
}

/* A PNG in any colour type, written with libpng here. */
static void write_raw_png(const char *path, int w, int h, int color, int depth,
                          const uint8_t *rows, size_t row_bytes, const png_color *palette,
                          int palette_size, const png_byte *trns, int trns_size)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    if (setjmp(png_jmpbuf(png)))
        fail_msg("libpng failed writing %s", path);
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, depth, color, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (palette)
        png_set_PLTE(png, info, palette, palette_size);
    if (trns)
        png_set_tRNS(png, info, trns, trns_size, NULL);
    png_write_info(png, info);
    for (int y = 0; y < h; y++)
        png_write_row(png, rows + (size_t)y * row_bytes);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    fclose(f);
}

static void png_reads_every_colour_type(void **state)
{
    (void)state;
    const char *path = tmp_path("types.png");

    /* Gray 8 -> gray, gray, gray, opaque. */
    static const uint8_t gray[2 * 3] = {0, 50, 100, 150, 200, 255};
    write_raw_png(path, 3, 2, PNG_COLOR_TYPE_GRAY, 8, gray, 3, NULL, 0, NULL, 0);
    uint8_t want[3 * 2 * 4];
    for (int i = 0; i < 6; i++)
        memcpy(&want[i * 4], (uint8_t[]){gray[i], gray[i], gray[i], 255}, 4);
    read_expect(path, 3, 2, want);

    /* Gray 1 bit: 1 -> 255. */
    static const uint8_t bits[1] = {0xA0}; /* 1 0 1 */
    write_raw_png(path, 3, 1, PNG_COLOR_TYPE_GRAY, 1, bits, 1, NULL, 0, NULL, 0);
    static const uint8_t want_bits[3 * 4] = {255, 255, 255, 255, 0, 0, 0, 255,
                                             255, 255, 255, 255};
    read_expect(path, 3, 1, want_bits);

    /* Gray + alpha, 16 bits (big-endian): scaled to 8 bits. */
    static const uint8_t ga16[2 * 4] = {0xFF, 0xFF, 0x00, 0x00, 0x80, 0x80, 0x12, 0x12};
    write_raw_png(path, 2, 1, PNG_COLOR_TYPE_GRAY_ALPHA, 16, ga16, 8, NULL, 0, NULL, 0);
    static const uint8_t want_ga16[2 * 4] = {255, 255, 255, 0, 0x80, 0x80, 0x80, 0x12};
    read_expect(path, 2, 1, want_ga16);

    /* RGB 8 without alpha -> opaque. */
    static const uint8_t rgb[2 * 3] = {1, 2, 3, 4, 5, 6};
    write_raw_png(path, 2, 1, PNG_COLOR_TYPE_RGB, 8, rgb, 6, NULL, 0, NULL, 0);
    static const uint8_t want_rgb[2 * 4] = {1, 2, 3, 255, 4, 5, 6, 255};
    read_expect(path, 2, 1, want_rgb);

    /* Palette of 4 bits with a transparent entry (tRNS). */
    static const png_color palette[3] = {{10, 20, 30}, {40, 50, 60}, {70, 80, 90}};
    static const png_byte trns[2] = {255, 128};
    static const uint8_t indices[2] = {0x01, 0x20}; /* 0 1 2 0 */
    write_raw_png(path, 4, 1, PNG_COLOR_TYPE_PALETTE, 4, indices, 2, palette, 3, trns, 2);
    static const uint8_t want_pal[4 * 4] = {10, 20, 30, 255, 40, 50, 60, 128,
                                            70, 80, 90, 255, 10, 20, 30, 255};
    read_expect(path, 4, 1, want_pal);
    unlink(path);
}

static void png_failures(void **state)
{
    (void)state;
    uint8_t *rgba = (uint8_t *)&rgba;
    int w = -1, h = -1;

    /* A NULL path still clears the outputs, as the header says. */
    assert_status(cugl_app_read_png(&rgba, &w, &h, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_null(rgba);
    assert_int_equal(w, 0);
    assert_int_equal(h, 0);
    rgba = (uint8_t *)&rgba;

    char missing[320];
    snprintf(missing, sizeof missing, "%s", tmp_path("missing.png"));
    assert_status(cugl_app_read_png(&rgba, &w, &h, missing), CUGL_ERROR_INVALID_ARGUMENT);
    char want[512];
    snprintf(want, sizeof want,
             "cugl_app_read_png: cannot open %s for reading: No such file or directory", missing);
    assert_string_equal(cugl_last_error(), want);
    assert_null(rgba);
    assert_int_equal(w, 0);
    assert_int_equal(h, 0);

    /* tmp_path's buffer is reused: each path a copy of its own. */
    char text[320], cut[320];
    snprintf(text, sizeof text, "%s", tmp_path("text.png"));
    snprintf(cut, sizeof cut, "%s", tmp_path("cut.png"));
    FILE *f = fopen(text, "w");
    fputs("hello, I am not a PNG file\n", f);
    fclose(f);
    assert_status(cugl_app_read_png(&rgba, &w, &h, text), CUGL_ERROR_INVALID_ARGUMENT);
    snprintf(want, sizeof want,
             "cugl_app_read_png: %s is not a PNG file (no PNG signature in its first 8 bytes)",
             text);
    assert_string_equal(cugl_last_error(), want);
    assert_null(rgba);

    /* A PNG cut short: libpng's own error, nothing leaked. */
    static uint8_t image[16 * 16 * 4];
    for (size_t i = 0; i < sizeof image; i++)
        image[i] = (uint8_t)(i * 97);
    assert_ok(cugl_app_write_png(cut, image, 16, 16));
    assert_int_equal(truncate(cut, 60), 0);
    assert_status(cugl_app_read_png(&rgba, &w, &h, cut), CUGL_ERROR_INVALID_ARGUMENT);
    note(cugl_last_error());
    assert_error_mentions(cut);
    assert_error_mentions(": libpng: ");
    assert_null(rgba);

    assert_int_equal(truncate(text, 0), 0);
    assert_status(cugl_app_read_png(&rgba, &w, &h, text), CUGL_ERROR_INVALID_ARGUMENT);
    assert_error_mentions("in its first 0 bytes");
    unlink(text);
    unlink(cut);

    char nowhere[320];
    snprintf(nowhere, sizeof nowhere, "%s", tmp_path("no/such/folder.png"));
    assert_status(cugl_app_write_png(nowhere, image, 16, 16), CUGL_ERROR_INVALID_ARGUMENT);
    snprintf(want, sizeof want,
             "cugl_app_write_png: cannot open %s for writing: No such file or directory", nowhere);
    assert_string_equal(cugl_last_error(), want);
    assert_status(cugl_app_write_png(text, image, 0, 16), CUGL_ERROR_INVALID_ARGUMENT);
    assert_status(cugl_app_write_png(text, NULL, 16, 16), CUGL_ERROR_INVALID_ARGUMENT);
    assert_status(cugl_app_read_png(NULL, &w, &h, text), CUGL_ERROR_INVALID_ARGUMENT);
    assert_int_equal(access(text, F_OK), -1); /* nothing written */
}

static void write_claiming_png(const char *path, uint32_t width, uint32_t height)
{
    uint8_t file[PNG_BYTES_CLAIMING];
    png_bytes_claiming(file, width, height);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(file, 1, sizeof file, f), sizeof file);
    assert_int_equal(fclose(f), 0);
}

/* A file of 49 bytes whose header claims more pixels than cugl reads is
 * refused before any memory is taken for them (before, 1,000,000 x
 * 1,000,000 asked malloc for 4 TB, which ASan and libFuzzer end the process
 * for, and 20,000 x 20,000 took 1.6 GB for a file of 49 bytes). */
static void png_refuses_huge_headers(void **state)
{
    (void)state;
    static const png_uint_32 sizes[][2] = {
        {1000000, 1000000}, {40000, 40000}, {20000, 20000}, {16385, 16384}, {1000000, 269}};
    char path[320];
    snprintf(path, sizeof path, "%s", tmp_path("huge.png"));
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        write_claiming_png(path, sizes[s][0], sizes[s][1]);
        uint8_t *rgba = (uint8_t *)&rgba;
        int w = -1, h = -1;
        assert_status(cugl_app_read_png(&rgba, &w, &h, path), CUGL_ERROR_INVALID_ARGUMENT);
        char want[512];
        snprintf(want, sizeof want,
                 "cugl_app_read_png: %s is %u x %u pixels, more than the %d that cugl reads "
                 "(1 GiB of RGBA)",
                 path, (unsigned)sizes[s][0], (unsigned)sizes[s][1], CUGL_APP_PNG_MAX_PIXELS);
        assert_string_equal(cugl_last_error(), want);
        assert_null(rgba);
        assert_int_equal(w, 0);
        assert_int_equal(h, 0);
    }
    /* At the limit the header is read on; the missing rows are libpng's error. */
    write_claiming_png(path, 16384, 16384);
    uint8_t *rgba = NULL;
    int w = 0, h = 0;
    assert_status(cugl_app_read_png(&rgba, &w, &h, path), CUGL_ERROR_INVALID_ARGUMENT);
    assert_error_mentions(": libpng: ");
    assert_null(rgba);
    unlink(path);
}

int main(void)
{
    app_test_dir_make("cugl-png");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(png_round_trip),
        cmocka_unit_test(png_reads_every_colour_type),
        cmocka_unit_test(png_failures),
        cmocka_unit_test(png_refuses_huge_headers),
    };
    int failed = cugl_test_run(tests);
    app_test_dir_remove();
    return failed;
}
