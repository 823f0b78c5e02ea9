/*
 * test_context.c - libcugl-app contexts on a headless
 * context: what they report, defaults, the frames a present lets queue,
 * windows without a display, bad
 * descriptions, and the EGL device a CUDA device needs.
 */
#include <math.h>

#include "gl_test.h"

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

/* The frame presented stays in a headless context's framebuffer (as its
 * header says), read back after the present; cugl_app_context_finish waits
 * for GL's work, and refuses a context not current here. */
static void frame_kept_after_present(void **state)
{
    (void)state;
    assert_ok(cugl_app_context_bind_framebuffer(ctx));
    glClearColor(0.0f, 1.0f, 0.0f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    assert_ok(cugl_app_context_finish(ctx));
    assert_ok(cugl_app_context_present(ctx));
    uint8_t *px = malloc((size_t)W * H * 4);
    assert_non_null(px);
    assert_ok(cugl_app_read_pixels(px, (size_t)W * H * 4, ctx));
    for (int i = 0; i < W * H; i++)
        if (px[4 * i] != 0 || px[4 * i + 1] != 255 || px[4 * i + 3] != 255)
            fail_msg("pixel %d is %u %u %u %u after the present, not the green presented", i,
                     px[4 * i], px[4 * i + 1], px[4 * i + 2], px[4 * i + 3]);
    free(px);
    assert_status(cugl_app_context_finish(NULL), CUGL_ERROR_INVALID_ARGUMENT);
    cugl_app_context *other = NULL;
    assert_ok(cugl_app_context_create(&other, &(cugl_app_context_desc){.mode = CUGL_APP_HEADLESS,
                                                                       .width = 8,
                                                                       .height = 8,
                                                                       .cuda_device = -1}));
    assert_status(cugl_app_context_finish(ctx), CUGL_ERROR_INVALID_STATE); /* other is current */
    assert_string_equal(cugl_last_error(), "cugl_app_context_finish: the context is not the one "
                                           "current on this thread "
                                           "(cugl_app_context_make_current)");
    cugl_app_context_destroy(other);
    make_current();
    assert_ok(cugl_app_context_finish(ctx));
}

/* An --interop flag's words, both ways. */
static void interop_names_both_ways(void **state)
{
    (void)state;
    for (int i = CUGL_APP_INTEROP_AUTO; i <= CUGL_APP_INTEROP_HOST; i++) {
        cugl_app_interop back = (cugl_app_interop)-1;
        assert_ok(cugl_app_interop_from_name(&back, cugl_app_interop_name((cugl_app_interop)i)));
        assert_int_equal(back, i);
    }
    cugl_app_interop kept = CUGL_APP_INTEROP_MAP;
    assert_status(cugl_app_interop_from_name(&kept, "Shared"), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_interop_from_name: \"Shared\" names no "
                                           "interop path (auto, map, shared, host)");
    assert_int_equal(kept, CUGL_APP_INTEROP_MAP);
    assert_status(cugl_app_interop_from_name(&kept, NULL), CUGL_ERROR_INVALID_ARGUMENT);
}

/* A headless present bounds the frames queued: the GL work before a present
 * is done once CUGL_APP_FRAMES_AHEAD more presents have returned, with no
 * wait of the caller's (before, headless presents only flushed). Each
 * frame clears the framebuffer many times, so that the GPU is behind. */
static void present_bounds_the_frames_queued(void **state)
{
    (void)state;
    enum { FRAMES = 6, CLEARS = 200 };
    GLsync marks[FRAMES] = {0};
    for (int f = 0; f < FRAMES; f++) {
        for (int i = 0; i < CLEARS; i++) {
            glClearColor((float)i / CLEARS, 0.f, (float)f / FRAMES, 1.f);
            glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
        }
        marks[f] = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
        assert_non_null(marks[f]);
        assert_ok(cugl_app_context_present(ctx));
        int done = f - CUGL_APP_FRAMES_AHEAD; /* the frame whose work is done now */
        if (done >= 0) {
            GLint status = 0;
            glGetSynciv(marks[done], GL_SYNC_STATUS, 1, NULL, &status);
            assert_int_equal(status, GL_SIGNALED);
        }
    }
    for (int f = 0; f < FRAMES; f++)
        glDeleteSync(marks[f]);
    assert_int_equal(glGetError(), GL_NO_ERROR);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(headless_context),
        cmocka_unit_test(frame_kept_after_present),
        cmocka_unit_test(interop_names_both_ways),
        cmocka_unit_test(present_bounds_the_frames_queued),
        cmocka_unit_test(second_context_default_size),
        cmocka_unit_test(window_without_display),
        cmocka_unit_test(bad_desc),
        cmocka_unit_test(cuda_device_needs_its_egl_device),
    };
    return gl_test_run(tests, "cugl-context");
}
