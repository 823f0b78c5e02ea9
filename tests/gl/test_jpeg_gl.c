/*
 * test_jpeg_gl.c - the frame server's JPEG encoder in GL compute shaders
 * (lib/app/serve/jpeg_gl.c), on the suite's context: its JPEGs decoded by
 * libjpeg-turbo against the picture and against libjpeg-turbo's own JPEG
 * of it (quality and size within a margin) for sizes that are and are not
 * whole MCUs and several qualities; the markers (a restart interval of 4
 * MCUs, a restart marker between intervals, in order); ten qualities, more
 * than it keeps tables for, each as good as libjpeg-turbo's; a texture read
 * bottom up (GL's rows) giving the same bytes as its rows top first; a JPEG that does
 * not fit its room, and the next with twice the room, its intervals too
 * long for their slots and written in place; the caller's GL bindings
 * kept; arguments out of range refused.
 */
#include <math.h>
#include <turbojpeg.h>

#include "gl_test.h"
#include "jpeg_gl.h"

static cugl__jpeg_gl *enc;

/* A picture with what a simulation has: smooth gradients, hard edges, a
 * little noise (RGBA, top row first). */
static uint8_t *picture(int w, int h, unsigned noise)
{
    uint8_t *p = malloc((size_t)w * h * 4);
    unsigned r = 12345;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint8_t *q = p + ((size_t)y * w + x) * 4;
            r = r * 1103515245u + 12345u;
            int n = noise ? (int)(r >> 16) % (int)(2 * noise + 1) - (int)noise : 0;
            double fx = (double)x / w, fy = (double)y / h;
            int ring = ((int)(hypot(fx - 0.4, fy - 0.5) * 12)) & 1;
            int v[3] = {(int)(255 * fx) + n, (int)(255 * fy) - n, ring ? 220 : 40 + n};
            for (int c = 0; c < 3; c++)
                q[c] = (uint8_t)(v[c] < 0 ? 0 : v[c] > 255 ? 255 : v[c]);
            q[3] = 255;
        }
    return p;
}

static GLuint texture_of(const uint8_t *rgba, int w, int h)
{
    GLuint tex;
    glCreateTextures(GL_TEXTURE_2D, 1, &tex);
    glTextureStorage2D(tex, 1, GL_RGBA8, w, h);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glTextureSubImage2D(tex, 0, 0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, rgba);
    return tex;
}

/* Encode and wait: the JPEG (malloc'ed) or NULL, *overflowed said. */
static unsigned char *encode_as(cugl__jpeg_gl_out *out, GLuint tex, int w, int h, bool bottom_up,
                                int quality, size_t *size, double *ms, bool *overflowed)
{
    char why[256] = "";
    if (!cugl__jpeg_gl_encode(enc, out, tex, w, h, bottom_up, quality, why, sizeof why))
        fail_msg("encode of %d x %d at %d: %s", w, h, quality, why);
    GLsync fence = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
    assert_int_not_equal(glClientWaitSync(fence, GL_SYNC_FLUSH_COMMANDS_BIT, 30000000000ull),
                         GL_WAIT_FAILED);
    glDeleteSync(fence);
    double pass[JPEG_GL_PASSES];
    *ms = cugl__jpeg_gl_gpu_ms(out, pass);
    double sum = 0;
    for (int i = 0; i < JPEG_GL_PASSES; i++) {
        assert_true(pass[i] >= 0);
        sum += pass[i];
    }
    assert_true(fabs(sum - *ms) < 1e-3);
    print_message("#   passes (DCT, code, place, code in place, copy): %.3f %.3f %.3f %.3f "
                  "%.3f ms\n",
                  pass[0], pass[1], pass[2], pass[3], pass[4]);
    double whole = -1;
    unsigned char *jpeg = cugl__jpeg_gl_collect(out, size, &whole, overflowed);
    assert_true(fabs(whole - *ms) < 1e-3); /* the GPU's own copy of the times */
    return jpeg;
}

static unsigned char *encode(cugl__jpeg_gl_out *out, GLuint tex, int w, int h, int quality,
                             size_t *size, double *ms, bool *overflowed)
{
    return encode_as(out, tex, w, h, false, quality, size, ms, overflowed);
}

/* PSNR of the decoded RGB against the picture's RGB, dB. */
static double psnr(const uint8_t *rgb, const uint8_t *rgba, int w, int h)
{
    double sum = 0;
    for (size_t i = 0; i < (size_t)w * h; i++)
        for (int c = 0; c < 3; c++) {
            double d = (double)rgb[i * 3 + c] - rgba[i * 4 + c];
            sum += d * d;
        }
    double mse = sum / ((double)w * h * 3);
    return mse == 0 ? 99 : 10 * log10(255.0 * 255.0 / mse);
}

/* Decoded by libjpeg-turbo: RGB, or a failure. */
static uint8_t *decode(const unsigned char *jpeg, size_t size, int w, int h)
{
    tjhandle tj = tjInitDecompress();
    int dw = 0, dh = 0, sub = -1, space = -1;
    if (tjDecompressHeader3(tj, jpeg, (unsigned long)size, &dw, &dh, &sub, &space))
        fail_msg("libjpeg-turbo reads no header: %s", tjGetErrorStr2(tj));
    assert_int_equal(dw, w);
    assert_int_equal(dh, h);
    assert_int_equal(sub, TJSAMP_420);
    uint8_t *rgb = malloc((size_t)w * h * 3);
    if (tjDecompress2(tj, jpeg, (unsigned long)size, rgb, w, 0, h, TJPF_RGB, 0))
        fail_msg("libjpeg-turbo cannot decode the JPEG of %d x %d: %s", w, h, tjGetErrorStr2(tj));
    tjDestroy(tj);
    return rgb;
}

/* A JPEG's PSNR against the picture, decoded by libjpeg-turbo. */
static double jpeg_psnr(const unsigned char *jpeg, size_t size, const uint8_t *rgba, int w, int h)
{
    uint8_t *rgb = decode(jpeg, size, w, h);
    double db = psnr(rgb, rgba, w, h);
    free(rgb);
    return db;
}

/* libjpeg-turbo's own JPEG of the picture at `quality`, 4:2:0: its PSNR,
 * and its size in *size. */
static double theirs_psnr(const uint8_t *rgba, int w, int h, int quality, unsigned long *size)
{
    tjhandle tj = tjInitCompress();
    unsigned char *jpeg = NULL;
    assert_int_equal(
        tjCompress2(tj, rgba, w, 0, h, TJPF_RGBA, &jpeg, size, TJSAMP_420, quality, 0), 0);
    double db = jpeg_psnr(jpeg, *size, rgba, w, h);
    tjFree(jpeg);
    tjDestroy(tj);
    return db;
}

/* The restart interval (DRI) and the markers in the scan: RST0..7 in turn
 * between intervals, EOI last. */
static void check_markers(const unsigned char *jpeg, size_t size, int w, int h)
{
    size_t at = 2, scan = 0;
    int interval = -1;
    while (at + 4 <= size && jpeg[at] == 0xff) {
        unsigned length = (unsigned)jpeg[at + 2] << 8 | jpeg[at + 3];
        if (jpeg[at + 1] == 0xdd)
            interval = jpeg[at + 4] << 8 | jpeg[at + 5];
        if (jpeg[at + 1] == 0xda) {
            scan = at + 2 + length;
            break;
        }
        at += 2 + length;
    }
    assert_int_equal(interval, 4);
    assert_true(scan > 0);
    int mcus = ((w + 15) / 16) * ((h + 15) / 16), intervals = (mcus + 3) / 4, restarts = 0;
    bool eoi = false;
    for (size_t i = scan; i + 1 < size; i++) {
        if (jpeg[i] != 0xff || jpeg[i + 1] == 0x00 || jpeg[i + 1] == 0xff)
            continue;
        if (jpeg[i + 1] == 0xd9) {
            eoi = i + 2 == size;
            break;
        }
        if (jpeg[i + 1] != 0xd0 + restarts % 8)
            fail_msg("marker 0x%02x where RST%d was due", jpeg[i + 1], restarts % 8);
        restarts++;
    }
    assert_true(eoi);
    assert_int_equal(restarts, intervals - 1);
}

static void like_libjpeg_turbo(void **state)
{
    (void)state;
    static const int sizes[][2] = {{16, 16}, {33, 17}, {100, 75}, {640, 360}, {1920, 1080}};
    static const int qualities[] = {30, 75, 95};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int w = sizes[s][0], h = sizes[s][1];
        uint8_t *rgba = picture(w, h, 6);
        GLuint tex = texture_of(rgba, w, h);
        cugl__jpeg_gl_out out = {0};
        for (size_t k = 0; k < sizeof qualities / sizeof qualities[0]; k++) {
            int q = qualities[k];
            size_t size = 0;
            double ms = -1;
            bool overflowed = true;
            unsigned char *jpeg = encode(&out, tex, w, h, q, &size, &ms, &overflowed);
            assert_false(overflowed);
            assert_non_null(jpeg);
            check_markers(jpeg, size, w, h);
            /* Every interval in its slot (header word 2), but at quality 95
             * of this picture, whose detail may take more. */
            if (q < 95)
                assert_int_equal(out.mapped[2], 1);
            unsigned long theirs_size = 0;
            double ours = jpeg_psnr(jpeg, size, rgba, w, h),
                   theirs = theirs_psnr(rgba, w, h, q, &theirs_size);
            print_message("# %4d x %4d q %2d: %.2f dB in %zu bytes (GPU %.3f ms); "
                          "libjpeg-turbo %.2f dB in %lu bytes\n",
                          w, h, q, ours, size, ms, theirs, theirs_size);
            if (ours < theirs - 0.5)
                fail_msg("%d x %d at %d: %.2f dB, libjpeg-turbo's %.2f", w, h, q, ours, theirs);
            /* A restart interval costs a few bytes of markers and padding. */
            int intervals = (((w + 15) / 16) * ((h + 15) / 16) + 3) / 4;
            if ((double)size > theirs_size * 1.06 + 6.0 * intervals)
                fail_msg("%d x %d at %d: %zu bytes, libjpeg-turbo's %lu", w, h, q, size,
                         theirs_size);
            assert_true(ms >= 0);
            free(jpeg);
        }
        cugl__jpeg_gl_out_free(&out);
        glDeleteTextures(1, &tex);
        free(rgba);
    }
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

/* Ten qualities, more than the encoder keeps tables for (8): each JPEG
 * as good as libjpeg-turbo's at its quality, the first ones again after
 * their tables were dropped. */
static void many_qualities(void **state)
{
    (void)state;
    int w = 64, h = 48;
    uint8_t *rgba = picture(w, h, 6);
    GLuint tex = texture_of(rgba, w, h);
    cugl__jpeg_gl_out out = {0};
    for (int round = 0; round < 2; round++) {
        for (int q = 10; q <= 100; q += 10) {
            size_t size = 0;
            double ms;
            bool overflowed;
            unsigned char *jpeg = encode(&out, tex, w, h, q, &size, &ms, &overflowed);
            assert_non_null(jpeg);
            unsigned long theirs_size = 0;
            double ours = jpeg_psnr(jpeg, size, rgba, w, h),
                   theirs = theirs_psnr(rgba, w, h, q, &theirs_size);
            if (ours < theirs - 0.5)
                fail_msg("quality %d (round %d): %.2f dB, libjpeg-turbo's %.2f", q, round, ours,
                         theirs);
            free(jpeg);
        }
    }
    cugl__jpeg_gl_out_free(&out);
    glDeleteTextures(1, &tex);
    free(rgba);
}

/* A texture with GL's rows (bottom first), read bottom up: the same JPEG,
 * byte for byte, as the picture's rows top first. */
static void bottom_up_is_the_same_jpeg(void **state)
{
    (void)state;
    int w = 200, h = 117;
    uint8_t *rgba = picture(w, h, 6), *flipped = malloc((size_t)w * h * 4);
    for (int y = 0; y < h; y++)
        memcpy(flipped + (size_t)y * w * 4, rgba + (size_t)(h - 1 - y) * w * 4, (size_t)w * 4);
    GLuint tex = texture_of(rgba, w, h), gl_rows = texture_of(flipped, w, h);
    cugl__jpeg_gl_out a = {0}, b = {0};
    size_t size_a = 0, size_b = 0;
    double ms;
    bool overflowed;
    unsigned char *top = encode(&a, tex, w, h, 80, &size_a, &ms, &overflowed);
    unsigned char *bottom = encode_as(&b, gl_rows, w, h, true, 80, &size_b, &ms, &overflowed);
    assert_non_null(top);
    assert_non_null(bottom);
    assert_int_equal(size_a, size_b);
    assert_memory_equal(top, bottom, size_a);
    free(top);
    free(bottom);
    cugl__jpeg_gl_out_free(&a);
    cugl__jpeg_gl_out_free(&b);
    GLuint textures[] = {tex, gl_rows};
    glDeleteTextures(2, textures);
    free(flipped);
    free(rgba);
}

/* Noise at quality 100 takes over 4 bits a pixel, the first room. */
static void overflow_doubles_the_room(void **state)
{
    (void)state;
    int w = 512, h = 256;
    uint8_t *rgba = malloc((size_t)w * h * 4);
    unsigned r = 7;
    for (size_t i = 0; i < (size_t)w * h * 4; i++) {
        r = r * 1664525u + 1013904223u;
        rgba[i] = (uint8_t)(r >> 24);
    }
    GLuint tex = texture_of(rgba, w, h);
    cugl__jpeg_gl_out out = {0};
    size_t size = 0;
    double ms = 0;
    bool overflowed = false;
    assert_null(encode(&out, tex, w, h, 100, &size, &ms, &overflowed));
    assert_true(overflowed);
    size_t room = out.capacity;
    unsigned char *jpeg = NULL;
    for (int i = 0; i < 3 && !jpeg; i++)
        jpeg = encode(&out, tex, w, h, 100, &size, &ms, &overflowed);
    assert_non_null(jpeg);
    assert_true(out.capacity >= 2 * room);
    assert_int_equal(out.mapped[2], 0); /* intervals of over 1 KB: written in place */
    print_message("# noise at 100: %zu bytes, room %zu then %zu\n", size, room, out.capacity);
    /* Chroma at half resolution loses most of the noise's: libjpeg-turbo's
     * JPEG of it is no better. */
    unsigned long theirs_size = 0;
    double db = jpeg_psnr(jpeg, size, rgba, w, h),
           theirs = theirs_psnr(rgba, w, h, 100, &theirs_size);
    print_message("# noise at 100: %.2f dB, libjpeg-turbo's %.2f in %lu bytes\n", db, theirs,
                  theirs_size);
    if (db < theirs - 0.5)
        fail_msg("noise at quality 100 decodes at %.2f dB, libjpeg-turbo's at %.2f", db, theirs);
    check_markers(jpeg, size, w, h);
    free(jpeg);
    cugl__jpeg_gl_out_free(&out);
    glDeleteTextures(1, &tex);
    free(rgba);
}

static void bindings_kept(void **state)
{
    (void)state;
    uint8_t *rgba = picture(64, 64, 0);
    GLuint tex = texture_of(rgba, 64, 64), other = texture_of(rgba, 4, 4), ssbo[8], indirect, query;
    glCreateBuffers(8, ssbo);
    glCreateBuffers(1, &indirect);
    glCreateBuffers(1, &query);
    glNamedBufferStorage(query, 16, NULL, 0);
    glBindBuffer(GL_QUERY_BUFFER, query);
    glNamedBufferStorage(indirect, 16, NULL, 0);
    glBindBuffer(GL_DISPATCH_INDIRECT_BUFFER, indirect);
    for (GLuint i = 0; i < 8; i++) {
        glNamedBufferStorage(ssbo[i], 16, NULL, 0);
        glBindBufferBase(GL_SHADER_STORAGE_BUFFER, i, ssbo[i]);
    }
    glActiveTexture(GL_TEXTURE3);
    glBindTextureUnit(0, other);
    cugl__jpeg_gl_out out = {0};
    size_t size;
    double ms;
    bool overflowed;
    unsigned char *jpeg = encode(&out, tex, 64, 64, 80, &size, &ms, &overflowed);
    assert_non_null(jpeg);
    GLint got = 0;
    for (GLuint i = 0; i < 8; i++) {
        glGetIntegeri_v(GL_SHADER_STORAGE_BUFFER_BINDING, i, &got);
        assert_int_equal(got, (GLint)ssbo[i]);
    }
    glGetIntegerv(GL_DISPATCH_INDIRECT_BUFFER_BINDING, &got);
    assert_int_equal(got, (GLint)indirect);
    glGetIntegerv(GL_QUERY_BUFFER_BINDING, &got);
    assert_int_equal(got, (GLint)query);
    glGetIntegerv(GL_ACTIVE_TEXTURE, &got);
    assert_int_equal(got, GL_TEXTURE3);
    glActiveTexture(GL_TEXTURE0);
    glGetIntegerv(GL_TEXTURE_BINDING_2D, &got);
    assert_int_equal(got, (GLint)other);
    free(jpeg);
    cugl__jpeg_gl_out_free(&out);
    glDeleteBuffers(8, ssbo);
    glDeleteBuffers(1, &indirect);
    glDeleteBuffers(1, &query);
    GLuint textures[] = {tex, other};
    glDeleteTextures(2, textures);
    free(rgba);
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

static void out_of_range_refused(void **state)
{
    (void)state;
    cugl__jpeg_gl_out out = {0};
    char why[256];
    static const int bad[][3] = {{0, 16, 75}, {16, -1, 75}, {70000, 16, 75}, {16, 16, 0},
                                 {16, 16, 101}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why[0] = 0;
        assert_false(cugl__jpeg_gl_encode(enc, &out, 0, bad[i][0], bad[i][1], false, bad[i][2],
                                          why, sizeof why));
        assert_non_null(strstr(why, "out of range"));
    }
    assert_int_equal(out.buffer, 0);
}

static int open_encoder(void **state)
{
    (void)state;
    char why[256] = "";
    enc = cugl__jpeg_gl_open(why, sizeof why);
    if (!enc)
        print_error("cugl__jpeg_gl_open: %s\n", why);
    return enc ? 0 : -1;
}

static int close_encoder(void **state)
{
    (void)state;
    cugl__jpeg_gl_close(enc);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(like_libjpeg_turbo, open_encoder, close_encoder),
        cmocka_unit_test_setup_teardown(many_qualities, open_encoder, close_encoder),
        cmocka_unit_test_setup_teardown(bottom_up_is_the_same_jpeg, open_encoder, close_encoder),
        cmocka_unit_test_setup_teardown(overflow_doubles_the_room, open_encoder, close_encoder),
        cmocka_unit_test_setup_teardown(bindings_kept, open_encoder, close_encoder),
        cmocka_unit_test_setup_teardown(out_of_range_refused, open_encoder, close_encoder),
    };
    return gl_test_run(tests, "cugl-jpeg-gl");
}
