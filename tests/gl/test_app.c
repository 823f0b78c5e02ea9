/*
 * libcugl-app on a headless context (Mesa here, NVIDIA's EGL device on the
 * GPU machine): contexts and their failures, shader programs and their
 * logs, the blit read back pixel by pixel, PNG files in every colour type,
 * the orbit camera's matrices, and the frame timer. Skipped (77) only when
 * no headless GL 4.5 context can be made.
 */
#include <math.h>
#include <unistd.h>

#include <cugl/app.h>
#include <png.h>

#include "cugl_test.h"

enum { W = 64, H = 48 };

static const double PI = 3.14159265358979323846;

static cugl_app_context *ctx;
static char tmpdir[256];

/* A path in this run's temporary folder. */
static const char *tmp_path(const char *name)
{
    static char path[320];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    return path;
}

/* Text of several lines as TAP comments. */
static void note(const char *text)
{
    for (const char *line = text; *line;) {
        size_t n = strcspn(line, "\n");
        print_message("# %.*s\n", (int)n, line);
        line += n + (line[n] == '\n');
    }
}

static void make_current(void)
{
    assert_ok(cugl_app_context_make_current(ctx));
}

/* ---- Contexts ------------------------------------------------------------ */

static void headless_context(void **state)
{
    (void)state;
    const char *platform = cugl_app_context_platform(ctx);
    print_message("# %s: %s (%s)\n", platform, cugl_app_context_renderer(ctx),
                  cugl_app_context_vendor(ctx));
    assert_true(!strcmp(platform, "egl-device") || !strcmp(platform, "egl-surfaceless") ||
                !strcmp(platform, "egl-default"));
    assert_true(cugl_app_context_is_headless(ctx));
    assert_null(cugl_app_context_window(ctx));
    assert_false(cugl_app_context_should_close(ctx));

    GLint major = 0, minor = 0, mask = 0;
    glGetIntegerv(GL_MAJOR_VERSION, &major);
    glGetIntegerv(GL_MINOR_VERSION, &minor);
    glGetIntegerv(GL_CONTEXT_PROFILE_MASK, &mask);
    assert_true(major * 10 + minor >= 45);
    assert_true(mask & GL_CONTEXT_CORE_PROFILE_BIT);
    assert_string_equal(cugl_app_context_renderer(ctx), (const char *)glGetString(GL_RENDERER));
    assert_string_equal(cugl_app_context_vendor(ctx), (const char *)glGetString(GL_VENDOR));

    int w = 0, h = 0;
    cugl_app_context_size(ctx, &w, &h);
    assert_int_equal(w, W);
    assert_int_equal(h, H);
    GLuint fbo = cugl_app_context_framebuffer(ctx);
    assert_int_not_equal(fbo, 0);
    assert_true(glIsFramebuffer(fbo));
    GLint bound = 0, viewport[4] = {0};
    glGetIntegerv(GL_DRAW_FRAMEBUFFER_BINDING, &bound);
    glGetIntegerv(GL_VIEWPORT, viewport);
    assert_int_equal(bound, fbo);
    assert_int_equal(viewport[2], W);
    assert_int_equal(viewport[3], H);
    GLint color = 0, depth = 0;
    glGetNamedFramebufferAttachmentParameteriv(fbo, GL_COLOR_ATTACHMENT0,
                                               GL_FRAMEBUFFER_ATTACHMENT_RED_SIZE, &color);
    glGetNamedFramebufferAttachmentParameteriv(fbo, GL_DEPTH_ATTACHMENT,
                                               GL_FRAMEBUFFER_ATTACHMENT_DEPTH_SIZE, &depth);
    assert_int_equal(color, 8);
    assert_int_equal(depth, 24);

    const cugl_app_input *in = cugl_app_context_input(ctx);
    assert_true(in->x == 0 && in->dx == 0 && in->scroll == 0 && !in->left && !in->shift);
    assert_false(cugl_app_key_down(ctx, 'A'));
    assert_ok(cugl_app_context_present(ctx));
}

/* A second context: the default size, any negative cuda_device is any GL;
 * the first is made current again. */
static void second_context_default_size(void **state)
{
    (void)state;
    cugl_app_context *other = NULL;
    assert_ok(cugl_app_context_create(&other, &(cugl_app_context_desc){
                                                  .mode = CUGL_APP_HEADLESS,
                                                  .cuda_device = -3,
                                              }));
    int w = 0, h = 0;
    cugl_app_context_size(other, &w, &h);
    assert_int_equal(w, 1024);
    assert_int_equal(h, 768);
    assert_int_not_equal(cugl_app_context_framebuffer(other), 0);
    cugl_app_context_destroy(other);
    cugl_app_context_destroy(NULL);
    make_current();
    GLuint fbo = cugl_app_context_framebuffer(ctx);
    assert_true(glIsFramebuffer(fbo));
}

/* Set a variable for one test and put back what was there. */
typedef struct saved_env {
    const char *name;
    char *value;
} saved_env;

static saved_env unset(const char *name)
{
    const char *v = getenv(name);
    saved_env s = {name, v ? strdup(v) : NULL};
    unsetenv(name);
    return s;
}

static void restore(saved_env s)
{
    if (s.value)
        setenv(s.name, s.value, 1);
    free(s.value);
}

static void window_without_display(void **state)
{
    (void)state;
    saved_env x11 = unset("DISPLAY"), wayland = unset("WAYLAND_DISPLAY");
    cugl_app_context *c = (cugl_app_context *)&c;
    cugl_clear_error();
    cugl_status st = cugl_app_context_create(&c, &(cugl_app_context_desc){
                                                     .mode = CUGL_APP_WINDOW,
                                                     .width = 32,
                                                     .height = 32,
                                                     .cuda_device = -1,
                                                 });
    assert_int_equal(st, CUGL_ERROR_NOT_SUPPORTED);
    assert_null(c);
    assert_string_equal(cugl_last_error(),
                        "cugl_app_context_create: no display ($DISPLAY is not set); use "
                        "--headless");

    /* AUTO without a display is headless. */
    assert_ok(cugl_app_context_create(&c, &(cugl_app_context_desc){
                                              .width = 8, .height = 4, .cuda_device = -1}));
    restore(x11);
    restore(wayland);
    assert_true(cugl_app_context_is_headless(c));
    int w, h;
    cugl_app_context_size(c, &w, &h);
    assert_int_equal(w, 8);
    assert_int_equal(h, 4);
    cugl_app_context_destroy(c);
    make_current();
}

#define BAD_DESC_CASES(X)                                                                    \
    X(null_out, cugl_app_context_create(NULL, &(cugl_app_context_desc){0}),                 \
      CUGL_ERROR_INVALID_ARGUMENT, "cugl_app_context_create: out is NULL")                  \
    X(null_desc, cugl_app_context_create(&bad_out, NULL), CUGL_ERROR_INVALID_ARGUMENT,      \
      "cugl_app_context_create: desc is NULL")                                              \
    X(negative_width,                                                                        \
      cugl_app_context_create(&bad_out, &(cugl_app_context_desc){                           \
                                            .mode = CUGL_APP_HEADLESS, .width = -1,         \
                                            .height = 16, .cuda_device = -1}),              \
      CUGL_ERROR_INVALID_ARGUMENT,                                                           \
      "cugl_app_context_create: size -1 x 16 is negative (0 means the default 1024 x 768)") \
    X(negative_height,                                                                       \
      cugl_app_context_create(&bad_out, &(cugl_app_context_desc){                           \
                                            .mode = CUGL_APP_HEADLESS, .width = 16,         \
                                            .height = -5, .cuda_device = -1}),              \
      CUGL_ERROR_INVALID_ARGUMENT,                                                           \
      "cugl_app_context_create: size 16 x -5 is negative (0 means the default 1024 x 768)") \
    X(bad_mode,                                                                              \
      cugl_app_context_create(&bad_out, &(cugl_app_context_desc){.mode = 7,                 \
                                                                 .cuda_device = -1}),       \
      CUGL_ERROR_INVALID_ARGUMENT,                                                           \
      "cugl_app_context_create: mode 7 is none of CUGL_APP_AUTO, _WINDOW, _HEADLESS")

static cugl_app_context *bad_out;
BAD_DESC_CASES(CUGL_TEST_CASE)

/* A refused context writes NULL to out (where out is not NULL itself). */
static void bad_desc_is_refused(const cugl_test_case *c)
{
    if (c->call != null_out)
        assert_null(bad_out);
    bad_out = (cugl_app_context *)&bad_out;
}

static void bad_desc(void **state)
{
    (void)state;
    static const cugl_test_case cases[] = {BAD_DESC_CASES(CUGL_TEST_ROW)};
    bad_out = (cugl_app_context *)&bad_out;
    cugl_test_run_cases(cases, sizeof cases / sizeof cases[0], bad_desc_is_refused);
}

/* A CUDA device's context needs its EGL device: here (Mesa) there is none. */
static void cuda_device_needs_its_egl_device(void **state)
{
    (void)state;
    cugl_app_context *c = NULL;
    cugl_status st = cugl_app_context_create(&c, &(cugl_app_context_desc){
                                                     .mode = CUGL_APP_HEADLESS,
                                                     .width = 4,
                                                     .height = 4,
                                                     .cuda_device = 99,
                                                 });
    assert_int_equal(st, CUGL_ERROR_NOT_SUPPORTED);
    assert_null(c);
    note(cugl_last_error());
    if (!strstr(cugl_last_error(), "EGL lacks"))
        assert_error_mentions("no EGL device runs CUDA device 99: ");

    st = cugl_app_context_create(&c, &(cugl_app_context_desc){
                                         .mode = CUGL_APP_HEADLESS,
                                         .width = 4,
                                         .height = 4,
                                         .cuda_device = 0,
                                     });
    if (st == CUGL_OK) {
        assert_string_equal(cugl_app_context_platform(c), "egl-device");
        cugl_app_context_destroy(c);
    } else {
        assert_int_equal(st, CUGL_ERROR_NOT_SUPPORTED);
        assert_error_mentions("CUDA device 0");
        assert_null(c);
    }
    make_current();
}

/* ---- Shaders ------------------------------------------------------------- */

static const char vertex_ok[] = "#version 450 core\n"
                                "void main() { gl_Position = vec4(0, 0, 0, 1); }\n";
static const char fragment_bad[] = "#version 450 core\n"
                                   "out vec4 color;\n"
                                   "void main() { color = undeclared_thing; }\n";

/* The log GL itself gives, compiled here without the library. */
static char *gl_compile_log(GLenum stage, const char *src)
{
    GLuint s = glCreateShader(stage);
    glShaderSource(s, 1, &src, NULL);
    glCompileShader(s);
    static char log[4096];
    glGetShaderInfoLog(s, sizeof log, NULL, log);
    glDeleteShader(s);
    return log;
}

static void compile_failure_has_the_log(void **state)
{
    (void)state;
    GLuint p = 99;
    assert_status(cugl_app_program(&p, "broken", vertex_ok, fragment_bad), CUGL_ERROR_GL);
    assert_int_equal(p, 0);
    assert_error_mentions("cugl_app_program: program \"broken\": the fragment shader does not "
                          "compile:\n");
    char *log = gl_compile_log(GL_FRAGMENT_SHADER, fragment_bad);
    assert_true(strlen(log) > 0);
    assert_error_mentions(log);
    assert_error_mentions("undeclared_thing");

    assert_status(cugl_app_compute_program(&p, "bad compute", "#version 450 core\nvoid main( {"),
                  CUGL_ERROR_GL);
    assert_error_mentions("cugl_app_compute_program: program \"bad compute\": the compute shader "
                          "does not compile:\n");
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

/* Varyings that disagree in type compile alone and fail to link. */
static void link_failure_has_the_log(void **state)
{
    (void)state;
    static const char vs[] = "#version 450 core\n"
                             "out vec3 v;\n"
                             "void main() { v = vec3(1); gl_Position = vec4(0, 0, 0, 1); }\n";
    static const char fs[] = "#version 450 core\n"
                             "flat in ivec4 v;\n"
                             "out vec4 color;\n"
                             "void main() { color = vec4(v); }\n";
    GLuint p = 99;
    assert_status(cugl_app_program(&p, "mismatch", vs, fs), CUGL_ERROR_GL);
    assert_int_equal(p, 0);
    assert_error_mentions("cugl_app_program: program \"mismatch\" does not link:\n");
    note(cugl_last_error());
    assert_true(strlen(cugl_last_error()) > strlen("cugl_app_program: program \"mismatch\" "
                                                   "does not link:\n"));
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

static void program_arguments(void **state)
{
    (void)state;
    GLuint p;
    assert_status(cugl_app_program(NULL, "x", vertex_ok, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_program: out is NULL");
    assert_status(cugl_app_program(&p, "x", NULL, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_program: program \"x\": vertex_src is NULL");
    assert_status(cugl_app_compute_program(&p, NULL, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(),
                        "cugl_app_compute_program: program \"(unnamed)\": compute_src is NULL");
}

/* A compute program that works: squares written to a buffer, read back. */
static void compute_program_runs(void **state)
{
    (void)state;
    static const char cs[] = "#version 450 core\n"
                             "layout(local_size_x = 64) in;\n"
                             "layout(std430, binding = 0) buffer Out { uint v[]; };\n"
                             "void main() { uint i = gl_GlobalInvocationID.x; v[i] = i * i; }\n";
    GLuint p = 0, buf;
    assert_ok(cugl_app_compute_program(&p, "squares", cs));
    assert_int_not_equal(p, 0);
    glCreateBuffers(1, &buf);
    glNamedBufferStorage(buf, 256 * sizeof(GLuint), NULL, 0);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, buf);
    glUseProgram(p);
    glDispatchCompute(4, 1, 1);
    glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
    GLuint v[256];
    glGetNamedBufferSubData(buf, 0, sizeof v, v);
    for (GLuint i = 0; i < 256; i++)
        assert_int_equal(v[i], i * i);
    glUseProgram(0);
    glDeleteBuffers(1, &buf);
    glDeleteProgram(p);
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

/* ---- Blit and readback --------------------------------------------------- */

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

/* ---- PNG ----------------------------------------------------------------- */

static void png_round_trip(void **state)
{
    (void)state;
    static const int sizes[][2] = {{1, 1}, {7, 3}, {3, 7}, {W, H}, {257, 5}};
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

static void read_expect(const char *path, int w, int h, const uint8_t *want)
{
    uint8_t *got = NULL;
    int gw = 0, gh = 0;
    assert_ok(cugl_app_read_png(&got, &gw, &gh, path));
    assert_int_equal(gw, w);
    assert_int_equal(gh, h);
    assert_memory_equal(got, want, (size_t)w * h * 4);
    free(got);
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

    const char *text = tmp_path("text.png");
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
    const char *cut = tmp_path("cut.png");
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

/* A screenshot is what read_pixels sees. */
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

/* ---- Camera -------------------------------------------------------------- */

static void assert_near(double got, double want, double tolerance, const char *what)
{
    if (fabs(got - want) > tolerance)
        fail_msg("%s is %.9g, expected %.9g", what, got, want);
}

/* m (column-major) times (x, y, z, 1). */
static void transform(const float m[16], const float p[3], double out[4])
{
    for (int r = 0; r < 4; r++)
        out[r] = (double)m[r] * p[0] + (double)m[4 + r] * p[1] + (double)m[8 + r] * p[2] +
                 (double)m[12 + r];
}

static void camera_defaults(void **state)
{
    (void)state;
    cugl_app_camera cam;
    memset(&cam, 0xff, sizeof cam);
    cugl_app_camera_init(&cam);
    assert_true(cam.target[0] == 0 && cam.target[1] == 0 && cam.target[2] == 0);
    assert_true(cam.distance == 3.0f && cam.yaw == 0.6f && cam.pitch == 0.5f);
    assert_near(cam.fov_y, PI / 4, 1e-7, "fov_y");
    assert_true(cam.z_near > 0 && cam.z_far > cam.z_near);
}

static void camera_eye_and_view(void **state)
{
    (void)state;
    static const struct {
        float yaw, pitch, distance;
    } cases[] = {{0.6f, 0.5f, 3}, {0, 0, 1}, {-2.5f, -1.2f, 10}, {3.1f, 1.5f, 0.25f}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cugl_app_camera cam;
        cugl_app_camera_init(&cam);
        cam.target[0] = 1;
        cam.target[1] = -2;
        cam.target[2] = 0.5f;
        cam.yaw = cases[i].yaw;
        cam.pitch = cases[i].pitch;
        cam.distance = cases[i].distance;
        double y = cam.yaw, p = cam.pitch, d = cam.distance;
        float eye[3];
        cugl_app_camera_eye(eye, &cam);
        assert_near(eye[0], 1 + d * cos(p) * sin(y), 1e-5, "eye x");
        assert_near(eye[1], -2 + d * sin(p), 1e-5, "eye y");
        assert_near(eye[2], 0.5 + d * cos(p) * cos(y), 1e-5, "eye z");

        float view[16], proj[16];
        cugl_app_camera_matrices(view, proj, &cam, 2.0f);
        double v[4];
        transform(view, eye, v); /* the eye goes to the origin */
        assert_near(v[0], 0, 1e-5, "view * eye x");
        assert_near(v[1], 0, 1e-5, "view * eye y");
        assert_near(v[2], 0, 1e-5, "view * eye z");
        assert_near(v[3], 1, 1e-6, "view * eye w");
        transform(view, cam.target, v); /* the target straight ahead */
        assert_near(v[0], 0, 1e-5, "view * target x");
        assert_near(v[1], 0, 1e-5, "view * target y");
        assert_near(v[2], -d, 1e-5, "view * target z");

        double f = 1 / tan(cam.fov_y / 2);
        assert_near(proj[0], f / 2, 1e-5, "proj[0]");
        assert_near(proj[5], f, 1e-5, "proj[5]");
        assert_near(proj[11], -1, 0, "proj[11]");
        assert_near(proj[10], -(cam.z_far + cam.z_near) / (cam.z_far - cam.z_near), 1e-5,
                    "proj[10]");
    }
}

static void camera_pitch_is_clamped(void **state)
{
    (void)state;
    const double limit = 89 * PI / 180;
    for (int sign = -1; sign <= 1; sign += 2) {
        cugl_app_camera cam;
        cugl_app_camera_init(&cam);
        cam.pitch = 3.0f * sign;
        float eye[3];
        cugl_app_camera_eye(eye, &cam);
        assert_near(eye[1], cam.distance * sin(sign * limit), 1e-5, "clamped eye y");
        assert_near(eye[0], cam.distance * cos(limit) * sin(cam.yaw), 1e-5, "clamped eye x");
        float view[16];
        cugl_app_camera_matrices(view, NULL, &cam, 1);
        for (int i = 0; i < 16; i++)
            assert_false(isnan(view[i]));
    }
}

/* Without a window there is no input: nothing moves. */
static void camera_update_without_window(void **state)
{
    (void)state;
    cugl_app_camera cam, before;
    cugl_app_camera_init(&cam);
    cam.pitch = 0.3f;
    before = cam;
    cugl_app_camera_update(&cam, NULL, 0.1f);
    assert_memory_equal(&cam, &before, sizeof cam);
    /* A context without input events leaves it as it is. */
    cugl_app_camera_update(&cam, ctx, 0.1f);
    assert_memory_equal(&cam, &before, sizeof cam);
    cugl_app_camera_update(NULL, ctx, 0.1f);
}

/* ---- Timer --------------------------------------------------------------- */

static void timer_gl_phases(void **state)
{
    (void)state;
    enum { FRAMES = 9, RING = 4 };
    cugl_app_timer *t = NULL;
    assert_ok(cugl_app_timer_create(&t, NULL));
    for (int f = 0; f < FRAMES; f++) {
        cugl_app_timer_frame_begin(t);
        assert_ok(cugl_app_timer_begin(t, 0, "clear", false));
        glClear(GL_COLOR_BUFFER_BIT);
        assert_ok(cugl_app_timer_end(t, 0));
        assert_ok(cugl_app_timer_begin(t, 2, "draw", false));
        for (int i = 0; i < 4; i++) {
            glClearColor((float)i / 4, 0, 0, 1);
            glClear(GL_COLOR_BUFFER_BIT);
        }
        assert_ok(cugl_app_timer_end(t, 2));
        glFinish(); /* every result is there when its slot comes round */
        cugl_app_timer_frame_end(t);
    }
    cugl_app_phase_stats stats[CUGL_APP_TIMER_MAX_PHASES];
    long frames = 0;
    double frame_ms = -1;
    cugl_app_timer_stats(stats, &frames, &frame_ms, t);
    assert_int_equal(frames, FRAMES);
    assert_true(frame_ms > 0);
    assert_string_equal(stats[0].name, "clear");
    assert_string_equal(stats[2].name, "draw");
    assert_null(stats[1].name);
    for (int p = 0; p < 3; p += 2) {
        assert_false(stats[p].cuda);
        /* Results come RING frames late: the last RING are still owed. */
        assert_int_equal(stats[p].samples, FRAMES - RING);
        assert_true(stats[p].gpu_ms >= 0 && stats[p].gpu_ms < 1000);
        assert_true(stats[p].cpu_ms >= 0 && stats[p].cpu_ms <= frame_ms);
    }

    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    cugl_app_timer_print(t, out);
    fclose(out);
    note(text);
    assert_non_null(strstr(text, "clear"));
    assert_non_null(strstr(text, "draw"));
    char frames_line[64];
    snprintf(frames_line, sizeof frames_line, "%d frames, ", FRAMES);
    assert_non_null(strstr(text, frames_line));
    free(text);
    cugl_app_timer_destroy(t);
    cugl_app_timer_destroy(NULL);
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

static void timer_refusals(void **state)
{
    (void)state;
    cugl_app_timer *t = NULL;
    assert_ok(cugl_app_timer_create(&t, NULL));
    assert_status(cugl_app_timer_begin(t, 0, "early", false), CUGL_ERROR_INVALID_STATE);
    assert_string_equal(cugl_last_error(),
                        "cugl_app_timer_begin: phase 0 (\"early\") begins outside a frame "
                        "(call cugl_app_timer_frame_begin first)");
    cugl_app_timer_frame_begin(t);
    assert_status(cugl_app_timer_begin(t, 1, "kernel", true), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(),
                        "cugl_app_timer_begin: phase 1 (\"kernel\") is a CUDA phase, but the "
                        "timer has no stream");
    assert_status(cugl_app_timer_begin(t, CUGL_APP_TIMER_MAX_PHASES, "x", false),
                  CUGL_ERROR_INVALID_ARGUMENT);
    assert_status(cugl_app_timer_begin(t, -1, "x", false), CUGL_ERROR_INVALID_ARGUMENT);
    assert_status(cugl_app_timer_end(t, 3), CUGL_ERROR_INVALID_STATE);

    assert_ok(cugl_app_timer_begin(t, 0, "outer", false));
    assert_status(cugl_app_timer_begin(t, 1, "inner", false), CUGL_ERROR_INVALID_STATE);
    assert_string_equal(cugl_last_error(),
                        "cugl_app_timer_begin: GL phase 1 (\"inner\") begins while GL phase 0 "
                        "(\"outer\") is open; GL timer queries cannot nest");
    assert_status(cugl_app_timer_begin(t, 0, "outer", false), CUGL_ERROR_INVALID_STATE);
    assert_ok(cugl_app_timer_end(t, 0));
    assert_status(cugl_app_timer_begin(t, 0, NULL, false), CUGL_ERROR_INVALID_STATE);
    assert_string_equal(cugl_last_error(),
                        "cugl_app_timer_begin: phase 0 (\"outer\") has already been measured "
                        "this frame");
    /* One after the other is fine; a phase left open ends with the frame. */
    assert_ok(cugl_app_timer_begin(t, 1, "inner", false));
    cugl_app_timer_frame_end(t);
    cugl_app_timer_frame_begin(t);
    assert_ok(cugl_app_timer_begin(t, 1, NULL, false));
    assert_ok(cugl_app_timer_end(t, 1));
    cugl_app_timer_frame_end(t);
    cugl_app_phase_stats stats[CUGL_APP_TIMER_MAX_PHASES];
    cugl_app_timer_stats(stats, NULL, NULL, t);
    assert_string_equal(stats[1].name, "inner");
    assert_int_equal(glGetError(), GL_NO_ERROR);
    cugl_app_timer_destroy(t);

    assert_status(cugl_app_timer_create(NULL, NULL), CUGL_ERROR_INVALID_ARGUMENT);
}

int main(void)
{
    cugl_status st = cugl_app_context_create(&ctx, &(cugl_app_context_desc){
                                                       .mode = CUGL_APP_HEADLESS,
                                                       .width = W,
                                                       .height = H,
                                                       .cuda_device = -1,
                                                   });
    if (st == CUGL_ERROR_NOT_SUPPORTED)
        cugl_test_skip_all(cugl_last_error());
    if (st != CUGL_OK) {
        printf("Bail out! %s\n", cugl_last_error());
        return 1;
    }
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/cugl-app-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmpdir)) {
        printf("Bail out! mkdtemp %s failed\n", tmpdir);
        return 1;
    }

    const struct CMUnitTest tests[] = {
        cmocka_unit_test(headless_context),
        cmocka_unit_test(second_context_default_size),
        cmocka_unit_test(window_without_display),
        cmocka_unit_test(bad_desc),
        cmocka_unit_test(cuda_device_needs_its_egl_device),
        cmocka_unit_test(compile_failure_has_the_log),
        cmocka_unit_test(link_failure_has_the_log),
        cmocka_unit_test(program_arguments),
        cmocka_unit_test(compute_program_runs),
        cmocka_unit_test(blit_2x2_nearest),
        cmocka_unit_test(blit_7x3_one_to_one),
        cmocka_unit_test(blit_linear_interpolates),
        cmocka_unit_test(blit_refuses_non_textures),
        cmocka_unit_test(read_pixels_top_down),
        cmocka_unit_test(read_pixels_arguments),
        cmocka_unit_test(png_round_trip),
        cmocka_unit_test(png_reads_every_colour_type),
        cmocka_unit_test(png_failures),
        cmocka_unit_test(screenshot_matches_read_pixels),
        cmocka_unit_test(camera_defaults),
        cmocka_unit_test(camera_eye_and_view),
        cmocka_unit_test(camera_pitch_is_clamped),
        cmocka_unit_test(camera_update_without_window),
        cmocka_unit_test(timer_gl_phases),
        cmocka_unit_test(timer_refusals),
    };
    int failed = cugl_test_run(tests);
    cugl_app_context_destroy(ctx);
    rmdir(tmpdir);
    return failed;
}
