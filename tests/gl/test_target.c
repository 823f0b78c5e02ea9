/*
 * test_target.c - targets (cugl/app_target.h) where there is no CUDA: a
 * context on no CUDA device gives targets of the host path that take host
 * memory (cugl_app_target_copy_from), so a program without a GPU (Mesa
 * here) still shows what it computes. Images of RGBA8 and float formats
 * from dense and strided views drawn texel for pixel, a volume read back,
 * a buffer's points drawn where they are, and every refusal named.
 */
#include <float.h>
#include <math.h>

#include "gl_test.h"

static const uint8_t black[4] = {0, 0, 0, 255};

/* A host view of `data`: `ndim` axes of `shape`, byte strides (NULL: dense). */
static cugl_view *host_view(void *data, size_t size, int ndim, const int64_t *shape,
                            const int64_t *byte_strides, int64_t itemsize, cugl_dtype dtype)
{
    cugl_buffer *b = NULL;
    cugl_layout l;
    cugl_view *v = NULL;
    assert_ok(cugl_buffer_from_handle(&b, (uint64_t)(uintptr_t)data, size, NULL));
    assert_ok(cugl_layout_init_bytes(&l, ndim, shape, byte_strides, itemsize));
    assert_ok(cugl_view_from_buffer(&v, b, &l, dtype, true));
    cugl_buffer_release(b);
    return v;
}

static cugl_app_target *image_target(cugl_app_format format)
{
    cugl_app_target *t = NULL;
    assert_ok(cugl_app_target_create(&t, ctx, &(cugl_app_target_desc){.format = format,
                                                                      .width = W,
                                                                      .height = H}));
    return t;
}

/* The framebuffer after drawing `t` with row 0 where `origin` says (-1:
 * cugl_app_target_draw), rows top to bottom. */
static uint8_t *drawn_from(cugl_app_target *t, int origin)
{
    glBindFramebuffer(GL_FRAMEBUFFER, cugl_app_context_framebuffer(ctx));
    glViewport(0, 0, W, H);
    glClearColor(0, 0, 0, 1);
    glClear(GL_COLOR_BUFFER_BIT);
    if (origin < 0)
        assert_ok(cugl_app_target_draw(t));
    else
        assert_ok(cugl_app_target_draw_origin(t, (cugl_app_origin)origin));
    uint8_t *px = malloc((size_t)W * H * 4);
    assert_ok(cugl_app_read_pixels(px, (size_t)W * H * 4, ctx));
    return px;
}

static uint8_t *drawn(cugl_app_target *t)
{
    return drawn_from(t, -1);
}

/* Texel (x, y) of the image's row y (row 0 first): at the framebuffer's row H - 1 - y. */
static const uint8_t *pixel(const uint8_t *px, int x, int y)
{
    return px + ((size_t)(H - 1 - y) * W + (size_t)x) * 4;
}

static void auto_takes_host_without_cuda(void **state)
{
    (void)state;
    cugl_app_target *t = image_target(CUGL_APP_FORMAT_RGBA8);
    assert_int_equal(cugl_app_target_interop(t), CUGL_APP_INTEROP_HOST);
    assert_non_null(strstr(cugl_app_target_reason(t), "no CUDA device"));
    assert_false(cugl_app_target_is_pipelined(t));
    assert_ok(cugl_app_target_set_pipelined(t, true)); /* not without a CUDA device */
    assert_false(cugl_app_target_is_pipelined(t));
    cugl_app_target_destroy(t);
}

static void rgba8_from_dense_and_strided_views(void **state)
{
    (void)state;
    /* The same picture twice: once dense, once every texel 8 bytes apart
     * and rows padded, read through strides. */
    uint8_t dense[H][W][4], padded[H][W + 3][8];
    memset(padded, 0x77, sizeof padded);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            for (int c = 0; c < 4; c++)
                dense[y][x][c] = padded[y][x][c] = (uint8_t)(c == 3 ? 255 : x * 3 + y * 5 + c * 50);
    int64_t shape[3] = {H, W, 4};
    int64_t strides[3] = {(W + 3) * 8, 8, 1};
    cugl_view *views[2] = {
        host_view(dense, sizeof dense, 3, shape, NULL, 1, (cugl_dtype){CUGL_DTYPE_UINT, 8, 1}),
        host_view(padded, sizeof padded, 3, shape, strides, 1,
                  (cugl_dtype){CUGL_DTYPE_UINT, 8, 1}),
    };
    for (int v = 0; v < 2; v++) {
        cugl_app_target *t = image_target(CUGL_APP_FORMAT_RGBA8);
        assert_ok(cugl_app_target_copy_from(t, views[v], NULL));
        uint8_t *px = drawn(t);
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                if (memcmp(pixel(px, x, y), dense[y][x], 4) != 0)
                    fail_msg("%s view: texel (%d, %d) drawn as %u %u %u, expected %u %u %u",
                             v ? "strided" : "dense", x, y, pixel(px, x, y)[0],
                             pixel(px, x, y)[1], pixel(px, x, y)[2], dense[y][x][0],
                             dense[y][x][1], dense[y][x][2]);
        free(px);
        cugl_app_target_destroy(t);
        cugl_view_release(views[v]);
    }
}

/* Row 0 at the bottom (cugl_app_target_draw, CUGL_APP_ORIGIN_LOWER) or at
 * the top (CUGL_APP_ORIGIN_UPPER), every texel where it belongs; an origin
 * that is neither refused, the framebuffer untouched. */
static void origin_puts_row_0_where_asked(void **state)
{
    (void)state;
    static uint8_t picture[H][W][4];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            for (int c = 0; c < 4; c++)
                picture[y][x][c] = (uint8_t)(c == 3 ? 255 : x * 7 + y * 11 + c * 60);
    int64_t shape[3] = {H, W, 4};
    cugl_view *view = host_view(picture, sizeof picture, 3, shape, NULL, 1,
                                (cugl_dtype){CUGL_DTYPE_UINT, 8, 1});
    cugl_app_target *t = image_target(CUGL_APP_FORMAT_RGBA8);
    assert_ok(cugl_app_target_copy_from(t, view, NULL));
    int origins[3] = {-1, CUGL_APP_ORIGIN_LOWER, CUGL_APP_ORIGIN_UPPER};
    for (int o = 0; o < 3; o++) {
        uint8_t *px = drawn_from(t, origins[o]);
        for (int y = 0; y < H; y++) {
            /* The framebuffer's row, from the top, that holds the image's row y. */
            int row = origins[o] == CUGL_APP_ORIGIN_UPPER ? y : H - 1 - y;
            for (int x = 0; x < W; x++) {
                const uint8_t *got = px + ((size_t)row * W + (size_t)x) * 4;
                if (memcmp(got, picture[y][x], 4) != 0)
                    fail_msg("origin %d: texel (%d, %d) drawn as %u %u %u in row %d from the "
                             "top, expected %u %u %u",
                             origins[o], x, y, got[0], got[1], got[2], row,
                             picture[y][x][0], picture[y][x][1], picture[y][x][2]);
            }
        }
        free(px);
    }
    /* Refused, nothing drawn: the framebuffer keeps its clear colour. */
    glClear(GL_COLOR_BUFFER_BIT);
    assert_status(cugl_app_target_draw_origin(t, (cugl_app_origin)2),
                  CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_target_draw_origin: origin 2: "
                                           "CUGL_APP_ORIGIN_LOWER (0) or "
                                           "CUGL_APP_ORIGIN_UPPER (1)");
    uint8_t corner[4];
    glReadPixels(0, 0, 1, 1, GL_RGBA, GL_UNSIGNED_BYTE, corner);
    assert_memory_equal(corner, black, 4);
    assert_status(cugl_app_target_draw_origin(NULL, CUGL_APP_ORIGIN_UPPER),
                  CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_target_draw_origin: target is NULL");
    /* The next good draw works: the refusals left no turn open. */
    free(drawn_from(t, CUGL_APP_ORIGIN_UPPER));
    cugl_app_target_destroy(t);
    cugl_view_release(view);
}

/* Floats clamp to 0 .. 1 as drawn; one channel shows as grey. */
static void float_images_drawn(void **state)
{
    (void)state;
    static float rgba[H][W][4], grey[H][W];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            float v = (float)(x + y) / (float)(W + H - 2);
            rgba[y][x][0] = v;
            rgba[y][x][1] = 1.0f - v;
            rgba[y][x][2] = x % 2 ? 2.0f : -1.0f; /* clamped */
            rgba[y][x][3] = 1.0f;
            grey[y][x] = v;
        }
    int64_t shape4[3] = {H, W, 4}, shape1[3] = {H, W, 1};
    const cugl_dtype f32 = {CUGL_DTYPE_FLOAT, 32, 1};
    cugl_view *v4 = host_view(rgba, sizeof rgba, 3, shape4, NULL, 4, f32);
    cugl_view *v1 = host_view(grey, sizeof grey, 3, shape1, NULL, 4, f32);
    cugl_app_target *t4 = image_target(CUGL_APP_FORMAT_RGBA32F);
    cugl_app_target *t1 = image_target(CUGL_APP_FORMAT_R32F);
    assert_ok(cugl_app_target_copy_from(t4, v4, NULL));
    assert_ok(cugl_app_target_copy_from(t1, v1, NULL));
    uint8_t *p4 = drawn(t4), *p1 = drawn(t1);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            int want = (int)lroundf(grey[y][x] * 255.0f);
            const uint8_t *a = pixel(p4, x, y), *b = pixel(p1, x, y);
            if (abs(a[0] - want) > 1 || abs(a[1] - (255 - want)) > 1 ||
                a[2] != (x % 2 ? 255 : 0) || abs(b[0] - want) > 1 || b[0] != b[1] ||
                b[1] != b[2])
                fail_msg("texel (%d, %d): RGBA32F drawn %u %u %u, R32F %u %u %u; want %d", x, y,
                         a[0], a[1], a[2], b[0], b[1], b[2], want);
        }
    free(p4);
    free(p1);
    cugl_view_release(v4);
    cugl_view_release(v1);
    cugl_app_target_destroy(t4);
    cugl_app_target_destroy(t1);
}

static void volume_read_back(void **state)
{
    (void)state;
    enum { VW = 5, VH = 4, VD = 3 };
    uint8_t v[VD][VH][VW][4], got[VD][VH][VW][4];
    for (size_t i = 0; i < sizeof v; i++)
        ((uint8_t *)v)[i] = (uint8_t)(i * 7 + 1);
    cugl_app_target *t = NULL;
    assert_ok(cugl_app_target_create(&t, ctx, &(cugl_app_target_desc){
                                                  .kind = CUGL_APP_TARGET_VOLUME,
                                                  .width = VW,
                                                  .height = VH,
                                                  .depth = VD}));
    int64_t shape[4] = {VD, VH, VW, 4};
    cugl_view *view = host_view(v, sizeof v, 4, shape, NULL, 1, (cugl_dtype){0});
    assert_ok(cugl_app_target_copy_from(t, view, NULL));
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glGetTextureImage(cugl_app_target_gl_name(t), 0, GL_RGBA, GL_UNSIGNED_BYTE, sizeof got, got);
    assert_int_equal(glGetError(), GL_NO_ERROR);
    assert_memory_equal(got, v, sizeof v);
    /* A volume is sampled by a shader of the program's own, not drawn. */
    assert_status(cugl_app_target_draw(t), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_target_draw: a volume is not drawn as an "
                                           "image (a shader of the program's own samples a "
                                           "volume)");
    cugl_view_release(view);
    cugl_app_target_destroy(t);
}

/* Points at the centres of the four quadrants, 3 and 4 floats each. */
static void points_drawn_where_they_are(void **state)
{
    (void)state;
    static const float at[4][2] = {{-0.5f, -0.5f}, {0.5f, -0.5f}, {-0.5f, 0.5f}, {0.5f, 0.5f}};
    for (int components = 3; components <= 4; components++) {
        float p[4][4] = {{0}};
        for (int i = 0; i < 4; i++) {
            p[i][0] = at[i][0];
            p[i][1] = at[i][1];
        }
        /* Packed as `components` floats a point. */
        float packed[16];
        for (int i = 0; i < 4; i++)
            memcpy(packed + i * components, p[i], sizeof(float) * (size_t)components);
        size_t bytes = 4 * (size_t)components * sizeof(float);
        cugl_app_target *t = NULL;
        assert_ok(cugl_app_target_create(&t, ctx, &(cugl_app_target_desc){
                                                      .kind = CUGL_APP_TARGET_BUFFER,
                                                      .size = bytes}));
        int64_t shape[2] = {4, components};
        cugl_view *view = host_view(packed, bytes, 2, shape, NULL, 4,
                                    (cugl_dtype){CUGL_DTYPE_FLOAT, 32, 1});
        assert_ok(cugl_app_target_copy_from(t, view, NULL));
        glBindFramebuffer(GL_FRAMEBUFFER, cugl_app_context_framebuffer(ctx));
        glViewport(0, 0, W, H);
        glClearColor(0, 0, 0, 1);
        glClear(GL_COLOR_BUFFER_BIT);
        static const float white[4] = {1, 1, 1, 1};
        assert_ok(cugl_app_target_draw_points(t, 4, components, NULL, 3.0f, white));
        uint8_t *px = malloc((size_t)W * H * 4);
        assert_ok(cugl_app_read_pixels(px, (size_t)W * H * 4, ctx));
        int lit = 0;
        for (int i = 0; i < W * H; i++)
            lit += px[4 * i] == 255;
        for (int i = 0; i < 4; i++) {
            int x = (int)((at[i][0] * 0.5f + 0.5f) * W), y = (int)((at[i][1] * 0.5f + 0.5f) * H);
            const uint8_t *c = px + ((size_t)(H - 1 - y) * W + (size_t)x) * 4;
            if (c[0] != 255 || c[1] != 255 || c[2] != 255)
                fail_msg("%d floats a point: point %d at pixel (%d, %d) is %u %u %u", components,
                         i, x, y, c[0], c[1], c[2]);
        }
        /* Four 3 x 3 squares, nothing else. */
        assert_int_equal(lit, 4 * 9);
        assert_memory_equal(px, black, 4); /* a corner is the clear colour */
        free(px);
        /* More points than the buffer holds, and other component counts, are refused. */
        assert_status(cugl_app_target_draw_points(t, 5, components, NULL, 1, white),
                      CUGL_ERROR_INVALID_ARGUMENT);
        assert_non_null(strstr(cugl_last_error(), "5 points of"));
        assert_status(cugl_app_target_draw_points(t, 1, 2, NULL, 1, white),
                      CUGL_ERROR_INVALID_ARGUMENT);
        assert_status(cugl_app_target_draw_points(t, 1, 3, NULL, NAN, white),
                      CUGL_ERROR_INVALID_ARGUMENT);
        cugl_view_release(view);
        cugl_app_target_destroy(t);
    }
}

/* A buffer takes a source shorter than itself at its start and keeps the
 * rest: no byte past the source is read (here they differ from the rest). */
static void buffer_takes_a_shorter_source(void **state)
{
    (void)state;
    enum { SIZE = 64, PART = 16 };
    uint8_t initial[SIZE] = {0}, source[SIZE], got[SIZE];
    memset(source, 0xaa, sizeof source);
    for (int i = 0; i < PART; i++)
        source[i] = (uint8_t)(i + 1);
    cugl_app_target *t = NULL;
    assert_ok(cugl_app_target_create(&t, ctx, &(cugl_app_target_desc){
                                                  .kind = CUGL_APP_TARGET_BUFFER,
                                                  .size = SIZE,
                                                  .initial = initial}));
    int64_t shape[1] = {PART};
    cugl_view *view = host_view(source, PART, 1, shape, NULL, 1, (cugl_dtype){0});
    assert_ok(cugl_app_target_copy_from(t, view, NULL));
    glGetNamedBufferSubData(cugl_app_target_gl_name(t), 0, SIZE, got);
    assert_int_equal(glGetError(), GL_NO_ERROR);
    assert_memory_equal(got, source, PART);
    assert_memory_equal(got + PART, initial + PART, SIZE - PART);
    cugl_view_release(view);
    cugl_app_target_destroy(t);
}

static void refusals(void **state)
{
    (void)state;
    cugl_app_target *t = NULL;
    const cugl_app_target_desc desc = {.width = W, .height = H};
    assert_status(cugl_app_target_create(NULL, ctx, &desc), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_target_create: out is NULL");
    assert_status(cugl_app_target_create(&t, ctx, &(cugl_app_target_desc){.width = 0, .height = 4}),
                  CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_target_create: size 0 x 4: each from 1 to "
                                           "65536");
    assert_status(cugl_app_target_create(&t, ctx, &(cugl_app_target_desc){
                                                      .kind = CUGL_APP_TARGET_BUFFER}),
                  CUGL_ERROR_INVALID_ARGUMENT);
    assert_status(cugl_app_target_create(&t, ctx, &(cugl_app_target_desc){
                                                      .interop = CUGL_APP_INTEROP_MAP,
                                                      .width = W,
                                                      .height = H}),
                  CUGL_ERROR_NOT_SUPPORTED);
    assert_string_equal(cugl_last_error(),
                        "cugl_app_target_create: the map path needs a CUDA device, and the desc "
                        "names none and the context runs on none "
                        "(cugl_app_context_desc.cuda_device)");
    /* Past GL's own limit (below 65536 on every GL tried): refused as the
     * header says, with GL's limit named, before any GL object is made. */
    GLint most = 0;
    glGetIntegerv(GL_MAX_TEXTURE_SIZE, &most);
    if (most > 0 && most < 65536) {
        assert_status(cugl_app_target_create(&t, ctx, &(cugl_app_target_desc){.width = most + 1,
                                                                              .height = 4}),
                      CUGL_ERROR_INVALID_ARGUMENT);
        char want[200];
        snprintf(want, sizeof want,
                 "cugl_app_target_create: size %d x 4: GL here takes at most %d texels a side "
                 "(GL_MAX_TEXTURE_SIZE)",
                 most + 1, most);
        assert_string_equal(cugl_last_error(), want);
    }
    assert_status(cugl_app_target_create(&t, ctx, &(cugl_app_target_desc){
                                                      .kind = CUGL_APP_TARGET_VOLUME,
                                                      .width = 4,
                                                      .height = 4}),
                  CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_target_create: size 4 x 4 x 0: each from 1 "
                                           "to 65536");
    assert_status(cugl_app_target_create(&t, ctx, &(cugl_app_target_desc){
                                                      .kind = (cugl_app_target_kind)7}),
                  CUGL_ERROR_INVALID_ARGUMENT);
    assert_null(t);

    assert_ok(cugl_app_target_create(&t, ctx, &desc));
    cugl_app_access a;
    assert_status(cugl_app_target_cuda_begin(t, NULL, &a), CUGL_ERROR_INVALID_ARGUMENT);
    uint8_t small[2][2][4];
    int64_t shape[3] = {2, 2, 4};
    cugl_view *wrong = host_view(small, sizeof small, 3, shape, NULL, 1, (cugl_dtype){0});
    assert_status(cugl_app_target_copy_from(t, wrong, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cugl_last_error(), "cugl_app_target_copy_from: an image of"));
    assert_status(cugl_app_target_copy_from(t, NULL, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_target_copy_from: src is NULL");
    cugl_view_release(wrong);
    /* A view whose buffer was closed: refused, and nothing uploaded. */
    uint8_t pixels[H][W][4];
    memset(pixels, 0x7f, sizeof pixels);
    int64_t full[3] = {H, W, 4};
    cugl_view *gone = host_view(pixels, sizeof pixels, 3, full, NULL, 1, (cugl_dtype){0});
    cugl_buffer_close(cugl_view_buffer(gone), NULL);
    assert_status(cugl_app_target_copy_from(t, gone, NULL), CUGL_ERROR_CLOSED);
    assert_string_equal(cugl_last_error(),
                        "cugl_app_target_copy_from: the source view's buffer has been closed");
    cugl_view_release(gone);
    cugl_app_target_destroy(t);
    cugl_app_target_destroy(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(auto_takes_host_without_cuda),
        cmocka_unit_test(rgba8_from_dense_and_strided_views),
        cmocka_unit_test(origin_puts_row_0_where_asked),
        cmocka_unit_test(float_images_drawn),
        cmocka_unit_test(volume_read_back),
        cmocka_unit_test(points_drawn_where_they_are),
        cmocka_unit_test(buffer_takes_a_shorter_source),
        cmocka_unit_test(refusals),
    };
    return gl_test_run(tests, "cugl-target");
}
