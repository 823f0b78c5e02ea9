/*
 * test_window_app.c - a libcugl-app window driven by real X input (XTest,
 * through xdotool): the cursor lands where it was put, a drag gives its
 * motion, the wheel its steps, a key is held, a resize reaches the context
 * and the framebuffer reads back at the new size, Escape asks to close, and
 * the recording of it all reads back and replays to the same input.
 * Needs a display (Xvfb with Mesa in CI) and no CUDA. Skipped (77) without
 * a display or xdotool.
 */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h> /* the key codes */

#include "app_test.h"

enum { W = 320, H = 240 };

static cugl_app_context *ctx;
static char title[64];
static char window_id[32];

/* Run a shell command (xdotool); fail the test when it fails. */
static void sh(const char *fmt, ...)
{
    char cmd[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int rc = system(cmd);
    if (rc != 0)
        fail_msg("'%s' failed (%d)", cmd, rc);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Present frames until `done` holds, summing motion and wheel steps on the
 * way; fail after 5 s. X delivers events when it will, never on cue. */
typedef struct seen {
    double dx, dy, scroll;
} seen;

static void present_until(bool (*done)(const cugl_app_input *in, const seen *s), seen *s,
                          const char *what)
{
    double until = now() + 5.0;
    while (now() < until) {
        assert_ok(cugl_app_context_present(ctx));
        const cugl_app_input *in = cugl_app_context_input(ctx);
        s->dx += in->dx;
        s->dy += in->dy;
        s->scroll += in->scroll;
        if (done(in, s))
            return;
        nanosleep(&(struct timespec){.tv_nsec = 2000000}, NULL);
    }
    const cugl_app_input *in = cugl_app_context_input(ctx);
    fail_msg("%s did not arrive in 5 s (cursor %g, %g; left %d; dx %g; scroll %g)", what, in->x,
             in->y, in->left, s->dx, s->scroll);
}

static bool at_100_80(const cugl_app_input *in, const seen *s)
{
    (void)s;
    return in->x == 100 && in->y == 80;
}
static bool left_down(const cugl_app_input *in, const seen *s)
{
    (void)s;
    return in->left;
}
static bool dragged_to_130_90(const cugl_app_input *in, const seen *s)
{
    (void)s;
    return in->x == 130 && in->y == 90;
}
static bool left_up(const cugl_app_input *in, const seen *s)
{
    (void)s;
    return !in->left;
}
static bool scrolled(const cugl_app_input *in, const seen *s)
{
    (void)in;
    return s->scroll >= 1;
}
static bool r_down(const cugl_app_input *in, const seen *s)
{
    (void)in;
    (void)s;
    return cugl_app_key_down(ctx, 'R');
}
static bool r_up(const cugl_app_input *in, const seen *s)
{
    (void)in;
    (void)s;
    return !cugl_app_key_down(ctx, 'R');
}
static bool resized(const cugl_app_input *in, const seen *s)
{
    (void)in;
    (void)s;
    int w, h;
    cugl_app_context_size(ctx, &w, &h);
    return w == 400 && h == 300;
}
static bool closing(const cugl_app_input *in, const seen *s)
{
    (void)in;
    (void)s;
    return cugl_app_context_should_close(ctx);
}

static void mouse_and_keys(void **state)
{
    (void)state;
    const char *recording = tmp_path("window.txt");
    assert_ok(cugl_app_context_record(ctx, recording));
    seen s = {0};
    sh("xdotool mousemove --window %s 100 80", window_id);
    present_until(at_100_80, &s, "the cursor at (100, 80)");

    s = (seen){0};
    sh("xdotool mousedown 1");
    present_until(left_down, &s, "the left button");
    sh("xdotool mousemove --window %s 130 90", window_id);
    present_until(dragged_to_130_90, &s, "the drag to (130, 90)");
    assert_true(s.dx == 30 && s.dy == 10);
    sh("xdotool mouseup 1");
    present_until(left_up, &s, "the left button's release");

    s = (seen){0};
    sh("xdotool click 4");
    present_until(scrolled, &s, "a wheel step away from the user");
    assert_true(s.scroll == 1);

    /* Keys go to the focused window; XTest's, not synthetic ones. */
    sh("xdotool windowfocus --sync %s", window_id);
    sh("xdotool keydown r");
    present_until(r_down, &s, "R held");
    sh("xdotool keyup r");
    present_until(r_up, &s, "R released");

    /* A resize: the context follows, and the framebuffer reads back at it. */
    sh("xdotool windowsize %s 400 300", window_id);
    present_until(resized, &s, "the resize to 400 x 300");
    glViewport(0, 0, 400, 300);
    glClearColor(0.0f, 0.0f, 1.0f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    uint8_t *pixels = malloc(400 * 300 * 4);
    assert_non_null(pixels);
    assert_ok(cugl_app_read_pixels(pixels, 400 * 300 * 4, ctx));
    const uint8_t *corner = pixels + (400 * 300 - 1) * 4;
    assert_true(corner[0] == 0 && corner[2] == 255);
    free(pixels);

    sh("xdotool key Escape");
    present_until(closing, &s, "Escape's close");
    assert_ok(cugl_app_context_record(ctx, NULL));

    /* What was recorded: each kind of event. */
    cugl_app_event *events = NULL;
    size_t n = 0;
    assert_ok(cugl_app_events_read(&events, &n, recording));
    bool move = false, down = false, up = false, wheel = false, key = false, size = false,
         escape = false;
    for (size_t i = 0; i < n; i++) {
        const cugl_app_event *e = &events[i];
        move |= e->type == CUGL_APP_EVENT_MOVE && e->x == 130 && e->y == 90;
        down |= e->type == CUGL_APP_EVENT_BUTTON && e->code == 0 && e->down;
        up |= e->type == CUGL_APP_EVENT_BUTTON && e->code == 0 && !e->down;
        wheel |= e->type == CUGL_APP_EVENT_SCROLL && e->y == 1;
        key |= e->type == CUGL_APP_EVENT_KEY && e->code == 'R' && e->down;
        size |= e->type == CUGL_APP_EVENT_RESIZE && e->width == 400 && e->height == 300;
        escape |= e->type == CUGL_APP_EVENT_KEY && e->code == GLFW_KEY_ESCAPE && e->down;
    }
    print_message("# %zu events recorded\n", n);
    assert_true(move && down && up && wheel && key && size && escape);

    /* Replayed on a headless context, the recording gives the same input
     * (with the window gone: Mesa makes no EGL context current on a thread
     * where a GLX one was). */
    cugl_app_context_destroy(ctx);
    ctx = NULL;
    cugl_app_context *headless = NULL;
    assert_ok(cugl_app_context_create(&headless, &(cugl_app_context_desc){
                                                     .mode = CUGL_APP_HEADLESS,
                                                     .width = W,
                                                     .height = H,
                                                     .cuda_device = -1,
                                                 }));
    assert_ok(cugl_app_context_replay(headless, events, n));
    for (long f = 0; f < events[n - 1].frame; f++)
        assert_ok(cugl_app_context_present(headless));
    const cugl_app_input *in = cugl_app_context_input(headless);
    assert_true(in->x == 130 && in->y == 90 && !in->left);
    assert_true(cugl_app_context_should_close(headless));
    int w, h;
    cugl_app_context_size(headless, &w, &h);
    assert_true(w == 400 && h == 300);
    cugl_app_context_destroy(headless);
    cugl_app_events_free(events);
    unlink(recording);
}

int main(void)
{
    const char *display = getenv("DISPLAY");
    if (!display || !*display)
        cugl_test_skip_all("no display ($DISPLAY is not set)");
    if (system("command -v xdotool >/dev/null") != 0)
        cugl_test_skip_all("xdotool is not installed");
    snprintf(title, sizeof title, "cugl-window-test-%ld", (long)getpid());
    cugl_status st = cugl_app_context_create(&ctx, &(cugl_app_context_desc){
                                                       .mode = CUGL_APP_WINDOW,
                                                       .width = W,
                                                       .height = H,
                                                       .title = title,
                                                       .cuda_device = -1,
                                                   });
    if (st != CUGL_OK)
        cugl_test_skip_all(cugl_last_error());
    test_gl_load();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "xdotool search --sync --name '^%s'", title);
    FILE *p = popen(cmd, "r");
    if (!p || !fgets(window_id, sizeof window_id, p)) {
        printf("Bail out! no X window named %s\n", title);
        return 1;
    }
    pclose(p);
    window_id[strcspn(window_id, "\n")] = '\0';
    app_test_dir_make("cugl-window");
    const struct CMUnitTest tests[] = {cmocka_unit_test(mouse_and_keys)};
    int failed = cugl_test_run(tests);
    cugl_app_context_destroy(ctx);
    app_test_dir_remove();
    return failed;
}
