/*
 * test_blit.c - the full-window blit read back pixel by
 * pixel (nearest and linear), the blit of RGBA8 texels from a buffer equal
 * to the same texels' from a texture, and its refusals; readback rows top down and its arguments, and
 * screenshots equal to the readback.
 */
#include <math.h>

#include "gl_test.h"

static GLuint texture_rgba8(int w, int h, const uint8_t *texels)
{
    GLuint tex;
    glCreateTextures(GL_TEXTURE_2D, 1, &tex);
    glTextureStorage2D(tex, 1, GL_RGBA8, w, h);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glTextureSubImage2D(tex, 0, 0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, texels);
    /* The blit's samplers decide the filtering, whatever the texture says. */
    glTextureParameteri(tex, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
    glTextureParameteri(tex, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
    return tex;
}

static uint8_t frame[W * H * 4];

/* A GL name no test makes an object of. */
#define NEVER_MADE 0xBAD0u

/* A 2x2 texture, nearest: each texel fills a quadrant; texel row 0 at the bottom. */
static void blit_2x2_nearest(void **state)
{
    (void)state;
    static const uint8_t texels[2 * 2 * 4] = {
        255, 0,   0,   255, /* (0, 0): bottom left */
        0,   255, 0,   255, /* (1, 0): bottom right */
        0,   0,   255, 255, /* (0, 1): top left */
        10,  20,  30,  40,  /* (1, 1): top right */
    };
    GLuint tex = texture_rgba8(2, 2, texels);
    glClearColor(0.5f, 0.5f, 0.5f, 1);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
    assert_ok(cugl_app_blit(ctx, tex, false));
    assert_ok(cugl_app_read_pixels(frame, sizeof frame, ctx));
    for (int y = 0; y < H; y++) /* rows top to bottom */
        for (int x = 0; x < W; x++) {
            int tx = x < W / 2 ? 0 : 1, ty = y < H / 2 ? 1 : 0;
            const uint8_t *want = &texels[(ty * 2 + tx) * 4], *got = &frame[(y * W + x) * 4];
            if (memcmp(want, got, 4) != 0)
                fail_msg("pixel (%d, %d) from the top is %u %u %u %u, texel (%d, %d) is %u %u "
                         "%u %u",
                         x, y, got[0], got[1], got[2], got[3], tx, ty, want[0], want[1],
                         want[2], want[3]);
        }
    GLint sampler = -1;
    glGetIntegerv(GL_SAMPLER_BINDING, &sampler);
    assert_int_equal(sampler, 0);
    glDeleteTextures(1, &tex);
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

/* Same size as the viewport: texel for pixel, exactly, with either filter. */
static void blit_7x3_one_to_one(void **state)
{
    (void)state;
    enum { TW = 7, TH = 3 };
    uint8_t texels[TW * TH * 4];
    for (int i = 0; i < TW * TH * 4; i++)
        texels[i] = (uint8_t)(i * 37 + 11);
    GLuint tex = texture_rgba8(TW, TH, texels);
    for (int linear = 0; linear < 2; linear++) {
        glViewport(0, 0, TW, TH);
        glClearColor(0, 0, 0, 0);
        glClear(GL_COLOR_BUFFER_BIT);
        assert_ok(cugl_app_blit(ctx, tex, linear));
        glViewport(0, 0, W, H);
        assert_ok(cugl_app_read_pixels(frame, sizeof frame, ctx));
        for (int y = 0; y < TH; y++)
            for (int x = 0; x < TW; x++) {
                /* Texel row y lands on framebuffer row y from the bottom. */
                const uint8_t *want = &texels[(y * TW + x) * 4];
                const uint8_t *got = &frame[((H - 1 - y) * W + x) * 4];
                for (int c = 0; c < 4; c++)
                    if (abs(got[c] - want[c]) > (linear ? 1 : 0))
                        fail_msg("%s: texel (%d, %d) channel %d: %u, expected %u",
                                 linear ? "linear" : "nearest", x, y, c, got[c], want[c]);
            }
        /* Outside the viewport nothing was drawn. */
        assert_int_equal(frame[((H - 1) * W + TW) * 4 + 3], 0);
        assert_int_equal(frame[((H - 1 - TH) * W) * 4 + 3], 0);
    }
    glDeleteTextures(1, &tex);
}

/* Stretched black-to-white: nearest gives only the two, linear the ramp between. */
static void blit_linear_interpolates(void **state)
{
    (void)state;
    static const uint8_t texels[2 * 4] = {0, 0, 0, 255, 255, 255, 255, 255};
    GLuint tex = texture_rgba8(2, 1, texels);
    for (int linear = 0; linear < 2; linear++) {
        assert_ok(cugl_app_blit(ctx, tex, linear));
        assert_ok(cugl_app_read_pixels(frame, sizeof frame, ctx));
        int between = 0, previous = -1;
        for (int x = 0; x < W; x++) {
            int v = frame[(H / 2 * W + x) * 4];
            assert_true(v >= previous); /* never darker to the right */
            previous = v;
            between += v != 0 && v != 255;
        }
        if (linear)
            assert_int_equal(between, W / 2); /* the middle half is a ramp */
        else
            assert_int_equal(between, 0);
        assert_int_equal(frame[(H / 2 * W) * 4], 0);
        assert_int_equal(frame[(H / 2 * W + W - 1) * 4], 255);
    }
    glDeleteTextures(1, &tex);
}

static void blit_refuses_non_textures(void **state)
{
    (void)state;
    assert_status(cugl_app_blit(ctx, 0, false), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_blit: 0 is not a texture name");
    assert_status(cugl_app_blit(ctx, 4242, false), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_blit: 4242 is not a texture name");
    assert_status(cugl_app_blit(NULL, 1, false), CUGL_ERROR_INVALID_ARGUMENT);
    GLuint tex3d;
    glCreateTextures(GL_TEXTURE_3D, 1, &tex3d);
    glTextureStorage3D(tex3d, 1, GL_RGBA8, 2, 2, 2);
    assert_status(cugl_app_blit(ctx, tex3d, false), CUGL_ERROR_INVALID_ARGUMENT);
    char want[128];
    snprintf(want, sizeof want, "cugl_app_blit: texture %u has target 0x%x, not GL_TEXTURE_2D",
             tex3d, GL_TEXTURE_3D);
    assert_string_equal(cugl_last_error(), want);
    glDeleteTextures(1, &tex3d);
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

/* The top row of GL's framebuffer is the first row read back. */
/* RGBA8 texels in a buffer, rows a padded pitch apart: the same pixels as
 * the same texels in a texture, at sizes that divide the viewport and not. */
static void blit_buffer_equals_texture(void **state)
{
    (void)state;
    static const int sizes[][2] = {{2, 2}, {7, 3}, {5, 9}, {W, H}};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int w = sizes[k][0], h = sizes[k][1];
        size_t pitch = ((size_t)w * 4 + 255) / 256 * 256; /* a shared texture's */
        uint8_t *packed = malloc((size_t)w * h * 4), *padded = calloc(pitch, (size_t)h);
        uint8_t *by_texture = malloc(sizeof frame);
        assert_true(packed && padded && by_texture);
        for (int i = 0; i < w * h * 4; i++)
            packed[i] = (uint8_t)(i * 37 + 11);
        for (int y = 0; y < h; y++)
            memcpy(padded + (size_t)y * pitch, packed + (size_t)y * w * 4, (size_t)w * 4);
        GLuint tex = texture_rgba8(w, h, packed), buf;
        glCreateBuffers(1, &buf);
        glNamedBufferStorage(buf, (GLsizeiptr)(pitch * (size_t)h), padded, 0);
        assert_ok(cugl_app_blit(ctx, tex, false));
        assert_ok(cugl_app_read_pixels(by_texture, sizeof frame, ctx));
        glClearColor(0.5f, 0.5f, 0.5f, 1);
        glClear(GL_COLOR_BUFFER_BIT);
        assert_ok(cugl_app_blit_rgba8_buffer(ctx, buf, w, h, pitch));
        assert_ok(cugl_app_read_pixels(frame, sizeof frame, ctx));
        if (memcmp(frame, by_texture, sizeof frame) != 0)
            fail_msg("a %d x %d image from a buffer differs from the same texels in a texture",
                     w, h);
        glDeleteTextures(1, &tex);
        glDeleteBuffers(1, &buf);
        free(packed);
        free(padded);
        free(by_texture);
    }
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

static void blit_buffer_refusals(void **state)
{
    (void)state;
    GLuint buf;
    glCreateBuffers(1, &buf);
    glNamedBufferStorage(buf, 64, NULL, 0);
    assert_status(cugl_app_blit_rgba8_buffer(NULL, buf, 2, 2, 8), CUGL_ERROR_INVALID_ARGUMENT);
    assert_status(cugl_app_blit_rgba8_buffer(ctx, 0, 2, 2, 8), CUGL_ERROR_INVALID_ARGUMENT);
    assert_status(cugl_app_blit_rgba8_buffer(ctx, NEVER_MADE, 2, 2, 8),
                  CUGL_ERROR_INVALID_ARGUMENT);
    assert_status(cugl_app_blit_rgba8_buffer(ctx, buf, 0, 2, 8), CUGL_ERROR_INVALID_ARGUMENT);
    assert_status(cugl_app_blit_rgba8_buffer(ctx, buf, 2, -1, 8), CUGL_ERROR_INVALID_ARGUMENT);
    assert_status(cugl_app_blit_rgba8_buffer(ctx, buf, 2, 2, 6), CUGL_ERROR_INVALID_ARGUMENT);
    assert_status(cugl_app_blit_rgba8_buffer(ctx, buf, 2, 2, 4), CUGL_ERROR_INVALID_ARGUMENT);
    /* 64 bytes hold 4 rows of 16, not 5 */
    assert_status(cugl_app_blit_rgba8_buffer(ctx, buf, 4, 5, 16), CUGL_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cugl_last_error(), "64 bytes"));
    assert_ok(cugl_app_blit_rgba8_buffer(ctx, buf, 4, 4, 16));
    glDeleteBuffers(1, &buf);
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

/* The compute-shader pack: the bytes glGetTextureImage packs, at a padded
 * pitch, the padding untouched; and its refusals. */
static void pack_equals_get_texture_image(void **state)
{
    (void)state;
    enum { PW = 37, PH = 19 };
    size_t pitch = 256;
    uint8_t texels[PW * PH * 4], want[256 * PH], got[256 * PH];
    for (size_t i = 0; i < sizeof texels; i++)
        texels[i] = (uint8_t)(i * 13 + 5);
    GLuint tex = texture_rgba8(PW, PH, texels), buf;
    memset(want, 0xAB, sizeof want);
    glCreateBuffers(1, &buf);
    glNamedBufferStorage(buf, sizeof want, want, GL_DYNAMIC_STORAGE_BIT);
    for (int y = 0; y < PH; y++)
        memcpy(want + (size_t)y * pitch, texels + (size_t)y * PW * 4, PW * 4);
    assert_ok(cugl_app_pack_rgba8(ctx, tex, buf, PW, PH, pitch));
    glGetNamedBufferSubData(buf, 0, sizeof got, got);
    if (memcmp(got, want, sizeof got) != 0)
        fail_msg("%s", "the packed bytes differ from the texture's, or the padding changed");

    GLuint r8;
    glCreateTextures(GL_TEXTURE_2D, 1, &r8);
    glTextureStorage2D(r8, 1, GL_R8, 4, 4);
    assert_status(cugl_app_pack_rgba8(NULL, tex, buf, PW, PH, pitch), CUGL_ERROR_INVALID_ARGUMENT);
    /* Texture and buffer names are counted apart, so a buffer's may also
     * name a texture: a name never made stands for neither. */
    assert_status(cugl_app_pack_rgba8(ctx, NEVER_MADE, buf, PW, PH, pitch),
                  CUGL_ERROR_INVALID_ARGUMENT);
    assert_status(cugl_app_pack_rgba8(ctx, tex, NEVER_MADE, PW, PH, pitch),
                  CUGL_ERROR_INVALID_ARGUMENT);
    assert_status(cugl_app_pack_rgba8(ctx, r8, buf, 4, 4, 16), CUGL_ERROR_INVALID_ARGUMENT);
    assert_status(cugl_app_pack_rgba8(ctx, tex, buf, PW + 1, PH, pitch),
                  CUGL_ERROR_INVALID_ARGUMENT);
    assert_status(cugl_app_pack_rgba8(ctx, tex, buf, PW, PH, 100), CUGL_ERROR_INVALID_ARGUMENT);
    assert_status(cugl_app_pack_rgba8(ctx, tex, buf, PW, PH, 512), CUGL_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cugl_last_error(), "too small"));
    glDeleteTextures(1, &r8);
    glDeleteTextures(1, &tex);
    glDeleteBuffers(1, &buf);
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

static void read_pixels_top_down(void **state)
{
    (void)state;
    glClearColor(0, 0, 1, 1);
    glClear(GL_COLOR_BUFFER_BIT);
    glEnable(GL_SCISSOR_TEST);
    glScissor(0, H - 1, W, 1);
    glClearColor(1, 0, 0, 1);
    glClear(GL_COLOR_BUFFER_BIT);
    glDisable(GL_SCISSOR_TEST);
    glPixelStorei(GL_PACK_ALIGNMENT, 8);
    memset(frame, 0x77, sizeof frame);
    assert_ok(cugl_app_read_pixels(frame, sizeof frame, ctx));
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            const uint8_t *px = &frame[(y * W + x) * 4];
            uint8_t r = y == 0 ? 255 : 0, b = y == 0 ? 0 : 255;
            if (px[0] != r || px[1] != 0 || px[2] != b || px[3] != 255)
                fail_msg("pixel (%d, %d) is %u %u %u %u", x, y, px[0], px[1], px[2], px[3]);
        }
    GLint alignment = 0;
    glGetIntegerv(GL_PACK_ALIGNMENT, &alignment);
    assert_int_equal(alignment, 8); /* the caller's state is kept */
    glPixelStorei(GL_PACK_ALIGNMENT, 4);
}

static void read_pixels_arguments(void **state)
{
    (void)state;
    uint8_t small[100];
    assert_status(cugl_app_read_pixels(small, sizeof small, ctx), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(),
                        "cugl_app_read_pixels: rgba has 100 bytes; the 64 x 48 framebuffer "
                        "needs 12288");
    assert_status(cugl_app_read_pixels(frame, W * H * 4 - 1, ctx), CUGL_ERROR_INVALID_ARGUMENT);
    assert_status(cugl_app_read_pixels(NULL, 0, ctx), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_read_pixels: rgba is NULL");
    assert_status(cugl_app_read_pixels(frame, sizeof frame, NULL), CUGL_ERROR_INVALID_ARGUMENT);
}


static void screenshot_matches_read_pixels(void **state)
{
    (void)state;
    glClearColor(0.25f, 0.5f, 0.75f, 1);
    glClear(GL_COLOR_BUFFER_BIT);
    glEnable(GL_SCISSOR_TEST);
    glScissor(3, 5, 7, 11);
    glClearColor(1, 1, 0, 0.5f);
    glClear(GL_COLOR_BUFFER_BIT);
    glDisable(GL_SCISSOR_TEST);
    const char *path = tmp_path("shot.png");
    assert_ok(cugl_app_screenshot(ctx, path));
    assert_ok(cugl_app_read_pixels(frame, sizeof frame, ctx));
    read_expect(path, W, H, frame);
    /* The scissored box, found from the top: rows H-16 .. H-6, columns 3 .. 9. */
    const uint8_t *inside = &frame[((H - 6) * W + 3) * 4], *outside = &frame[((H - 5) * W + 3) * 4];
    assert_int_equal(inside[0], 255);
    assert_int_equal(inside[2], 0);
    assert_int_equal(outside[0], 64);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(blit_2x2_nearest),
        cmocka_unit_test(blit_7x3_one_to_one),
        cmocka_unit_test(blit_linear_interpolates),
        cmocka_unit_test(blit_refuses_non_textures),
        cmocka_unit_test(blit_buffer_equals_texture),
        cmocka_unit_test(blit_buffer_refusals),
        cmocka_unit_test(pack_equals_get_texture_image),
        cmocka_unit_test(read_pixels_top_down),
        cmocka_unit_test(read_pixels_arguments),
        cmocka_unit_test(screenshot_matches_read_pixels),
    };
    return gl_test_run(tests, "cugl-blit");
}
