/*
 * test_ui.c - the UI panel (cugl/app_ui.h) on a headless context (Mesa
 * here): it draws at the top left and nowhere else, leaves the caller's GL
 * state as it was, takes clicks from the context's input (pushed events,
 * as a replay or a remote viewer gives them), plots the timer's newest
 * frame, and refuses misuse.
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>

#include <cugl/app_ui.h>

#include "app_test.h"

enum { W = 320, H = 240 };

static cugl_app_context *ctx;

/* Magenta: a colour the default style never draws, blended or not. */
static const uint8_t clear_rgba[4] = {255, 0, 255, 255};

static bool is_clear(const uint8_t *px) { return memcmp(px, clear_rgba, 4) == 0; }

/* Clear the context's framebuffer, so that what the panel draws stands out. */
static void clear(void)
{
    glBindFramebuffer(GL_FRAMEBUFFER, cugl_app_context_framebuffer(ctx));
    glViewport(0, 0, W, H);
    glDisable(GL_SCISSOR_TEST);
    glClearColor(1, 0, 1, 1);
    glClear(GL_COLOR_BUFFER_BIT);
}

static uint8_t *read_frame(void)
{
    uint8_t *px = malloc((size_t)W * H * 4);
    assert_non_null(px);
    assert_ok(cugl_app_read_pixels(px, (size_t)W * H * 4, ctx));
    return px;
}

/* The rectangle of pixels that are not the clear colour: x0 <= x < x1. */
typedef struct box {
    int x0, y0, x1, y1;
} box;

static box drawn_box(const uint8_t *px)
{
    box b = {W, H, 0, 0};
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            if (!is_clear(px + ((size_t)y * W + x) * 4)) {
                b.x0 = x < b.x0 ? x : b.x0;
                b.y0 = y < b.y0 ? y : b.y0;
                b.x1 = x + 1 > b.x1 ? x + 1 : b.x1;
                b.y1 = y + 1 > b.y1 ? y + 1 : b.y1;
            }
    return b;
}

static const char *const shapes[] = {"sphere", "cube", "torus"};

/* One frame of a panel with every kind of widget. */
static void draw_panel(cugl_app_ui *ui, float *speed, int *count, bool *paused, int *shape)
{
    static const float history[] = {1.0f, 3.0f, 2.0f, 5.0f, 4.0f, 2.5f, 3.5f, 1.5f};
    cugl_app_ui_begin(ui, 1.0f / 60.0f, "panel");
    cugl_app_ui_slider_float(ui, "speed", speed, 0.0f, 10.0f);
    cugl_app_ui_slider_int(ui, "count", count, 1, 100);
    cugl_app_ui_checkbox(ui, "paused", paused);
    cugl_app_ui_combo(ui, "shape", shape, shapes, 3);
    cugl_app_ui_text(ui, "%d bodies, %.1f ms", *count, 16.7);
    cugl_app_ui_plot(ui, "frame ms", history, 8, 6.0f);
}

/* The panel fills a rectangle at the top left, of the size of its widgets;
 * everything else keeps the clear colour. A new panel measures itself in
 * its first frame and shows from the second. */
static void panel_draws_at_the_top_left(void **state)
{
    (void)state;
    cugl_app_ui *ui = NULL;
    assert_ok(cugl_app_ui_create(&ui, ctx));
    float speed = 2.5f;
    int count = 10, shape = 1;
    bool paused = false;
    for (int frame = 0; frame < 2; frame++) {
        clear();
        draw_panel(ui, &speed, &count, &paused, &shape);
        assert_ok(cugl_app_ui_end(ui));
        uint8_t *px = read_frame();
        box b = drawn_box(px);
        if (frame == 0) {
            assert_int_equal(b.x1, 0); /* nothing drawn */
        } else {
            print_message("# panel: %d x %d at (%d, %d)\n", b.x1 - b.x0, b.y1 - b.y0, b.x0,
                          b.y0);
            assert_int_equal(b.x0, 0);
            assert_int_equal(b.y0, 0);
            /* Seven rows of widgets and a plot, each at least a line high. */
            assert_in_range(b.x1, 150, W - 1);
            assert_in_range(b.y1, 100, H - 1);
            for (int y = b.y0; y < b.y1; y++)
                for (int x = b.x0; x < b.x1; x++)
                    if (is_clear(px + ((size_t)y * W + x) * 4))
                        fail_msg("(%d, %d) inside the panel has the clear colour", x, y);
        }
        free(px);
        assert_ok(cugl_app_context_present(ctx));
    }
    /* Nobody touched the widgets. */
    assert_true(speed == 2.5f && count == 10 && !paused && shape == 1);
    cugl_app_ui_destroy(ui);
}

/* What the demos rely on between frames is as it was before the panel. */
static void panel_restores_gl_state(void **state)
{
    (void)state;
    cugl_app_ui *ui = NULL;
    assert_ok(cugl_app_ui_create(&ui, ctx));
    GLuint program = 0, vao = 0;
    assert_ok(cugl_app_program(&program, "test_ui",
                               "#version 450\nvoid main() { gl_Position = vec4(0); }\n", NULL));
    glCreateVertexArrays(1, &vao);
    for (int frame = 0; frame < 2; frame++) {
        clear();
        glUseProgram(program);
        glBindVertexArray(vao);
        glViewport(3, 4, 50, 60);
        glEnable(GL_SCISSOR_TEST);
        glScissor(5, 6, 70, 80);
        glDisable(GL_BLEND);
        glEnable(GL_DEPTH_TEST);
        float speed = 1;
        int count = 1, shape = 0;
        bool paused = true;
        draw_panel(ui, &speed, &count, &paused, &shape);
        assert_ok(cugl_app_ui_end(ui));

        GLint got_program = 0, got_vao = 0, viewport[4], scissor[4];
        glGetIntegerv(GL_CURRENT_PROGRAM, &got_program);
        glGetIntegerv(GL_VERTEX_ARRAY_BINDING, &got_vao);
        glGetIntegerv(GL_VIEWPORT, viewport);
        glGetIntegerv(GL_SCISSOR_BOX, scissor);
        assert_int_equal(got_program, program);
        assert_int_equal(got_vao, vao);
        assert_memory_equal(viewport, ((GLint[]){3, 4, 50, 60}), sizeof viewport);
        assert_memory_equal(scissor, ((GLint[]){5, 6, 70, 80}), sizeof scissor);
        assert_true(glIsEnabled(GL_SCISSOR_TEST));
        assert_false(glIsEnabled(GL_BLEND));
        assert_true(glIsEnabled(GL_DEPTH_TEST));
        assert_ok(cugl_app_check_gl("panel_restores_gl_state", "after the panel"));
        assert_ok(cugl_app_context_present(ctx));
    }
    glUseProgram(0);
    glBindVertexArray(0);
    glDisable(GL_SCISSOR_TEST);
    glDisable(GL_DEPTH_TEST);
    glDeleteVertexArrays(1, &vao);
    glDeleteProgram(program);
    cugl_app_ui_destroy(ui);
}

static void push(const cugl_app_event *ev) { assert_ok(cugl_app_context_push_event(ctx, ev)); }

static void push_move(double x, double y)
{
    push(&(cugl_app_event){.type = CUGL_APP_EVENT_MOVE, .x = x, .y = y});
}

static void push_left(bool down)
{
    push(&(cugl_app_event){.type = CUGL_APP_EVENT_BUTTON, .code = 0, .down = down});
}

/* One frame of a panel that holds just the checkbox; whether it changed. */
static bool checkbox_frame(cugl_app_ui *ui, bool *value)
{
    clear();
    cugl_app_ui_begin(ui, 1.0f / 60.0f, "click");
    bool changed = cugl_app_ui_checkbox(ui, "flip", value);
    assert_ok(cugl_app_ui_end(ui));
    return changed;
}

/*
 * A click made of pushed events flips the checkbox, as a mouse's does: the
 * press arms it, the release over it flips it. With the default style (a
 * 13 px font, frame padding 4 x 3, window padding 8 x 8) the title bar is
 * 19 px high and the checkbox's row spans y 27 to 46 from x 8, its label
 * included; (20, 36) is on the box. A click elsewhere changes nothing and
 * the panel leaves that mouse to the program.
 */
static void pushed_click_flips_the_checkbox(void **state)
{
    (void)state;
    cugl_app_ui *ui = NULL;
    assert_ok(cugl_app_ui_create(&ui, ctx));
    bool value = false;
    push_move(W - 1, H - 1);
    for (int i = 0; i < 2; i++) { /* measured, then shown */
        assert_false(checkbox_frame(ui, &value));
        assert_ok(cugl_app_context_present(ctx));
    }
    uint8_t *unchecked = read_frame();

    static const struct {
        double x, y;
        bool over_panel;
    } clicks[] = {
        {W - 20, H - 20, false},
        {20, 36, true}, /* flips it on */
        {20, 36, true}, /* and off */
        {20, 36, true}, /* and on */
    };
    bool want = false;
    for (size_t i = 0; i < sizeof clicks / sizeof clicks[0]; i++) {
        push_move(clicks[i].x, clicks[i].y);
        push_left(true);
        assert_ok(cugl_app_context_present(ctx));
        assert_false(checkbox_frame(ui, &value)); /* pressed: not yet */
        assert_true(value == want);
        assert_true(cugl_app_ui_wants_mouse(ui) == clicks[i].over_panel);
        push_left(false);
        assert_ok(cugl_app_context_present(ctx));
        want = clicks[i].over_panel ? !want : want;
        assert_true(checkbox_frame(ui, &value) == clicks[i].over_panel);
        assert_true(value == want);
    }
    assert_true(value);

    /* The cursor away, the panel shows the check mark where it showed none
     * (focused again by the last clicks, as it was when new). */
    push_move(W - 1, H - 1);
    assert_ok(cugl_app_context_present(ctx));
    assert_false(checkbox_frame(ui, &value));
    assert_false(cugl_app_ui_wants_mouse(ui));
    uint8_t *checked = read_frame();
    int changed = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            size_t at = ((size_t)y * W + x) * 4;
            if (memcmp(unchecked + at, checked + at, 4) != 0) {
                changed++;
                if (x < 8 || x >= 27 || y < 27 || y >= 46)
                    fail_msg("(%d, %d) changed, outside the checkbox's square", x, y);
            }
        }
    assert_true(changed > 10);
    free(unchecked);
    free(checked);
    assert_ok(cugl_app_context_present(ctx));
    cugl_app_ui_destroy(ui);
}

/* The timer's newest frame, a few frames late, as a plot takes it. */
static void timer_last_feeds_a_plot(void **state)
{
    (void)state;
    enum { RING = 4 };
    cugl_app_timer *t = NULL;
    assert_ok(cugl_app_timer_create(&t, NULL));
    double gpu[CUGL_APP_TIMER_MAX_PHASES], cpu[CUGL_APP_TIMER_MAX_PHASES], frame_ms = -1;
    assert_int_equal(cugl_app_timer_last(gpu, cpu, &frame_ms, t), -1);
    assert_true(frame_ms == 0 && gpu[0] == 0 && cpu[0] == 0);
    assert_int_equal(cugl_app_timer_last(NULL, NULL, NULL, NULL), -1);

    cugl_app_ui *ui = NULL;
    assert_ok(cugl_app_ui_create(&ui, ctx));
    float history[8] = {0};
    for (int f = 0; f < 8; f++) {
        cugl_app_timer_frame_begin(t);
        long last = cugl_app_timer_last(gpu, cpu, &frame_ms, t);
        /* Frame f's begin brings in frame f - RING. */
        assert_int_equal(last, f >= RING ? f - RING : -1);
        if (last >= 0) {
            assert_true(frame_ms > 0);
            assert_true(cpu[0] > 0 && cpu[0] <= frame_ms);
            assert_true(gpu[0] >= 0 && gpu[0] < 1000);
            assert_true(gpu[1] == 0 && cpu[1] == 0); /* phase 1 never measured */
            history[f] = (float)gpu[0];
        }
        assert_ok(cugl_app_timer_begin(t, 0, "panel", false));
        clear();
        cugl_app_ui_begin(ui, 1.0f / 60.0f, "timing");
        cugl_app_ui_plot(ui, "gpu ms", history, 8, 0.0f);
        assert_ok(cugl_app_ui_end(ui));
        assert_ok(cugl_app_timer_end(t, 0));
        glFinish(); /* every result is there when its slot comes round */
        cugl_app_timer_frame_end(t);
    }
    cugl_app_ui_destroy(ui);
    cugl_app_timer_destroy(t);
}

/* Misuse is refused with a message, or ignored where nothing can go wrong. */
static void refusals(void **state)
{
    (void)state;
    cugl_app_ui *ui = NULL;
    assert_status(cugl_app_ui_create(NULL, ctx), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_ui_create: out is NULL");
    assert_status(cugl_app_ui_create(&ui, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_ui_create: ctx is NULL");
    assert_null(ui);
    assert_status(cugl_app_ui_end(NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_ui_end: ui is NULL");
    assert_false(cugl_app_ui_wants_mouse(NULL));
    cugl_app_ui_destroy(NULL);

    assert_ok(cugl_app_ui_create(&ui, ctx));
    assert_status(cugl_app_ui_end(ui), CUGL_ERROR_INVALID_STATE);
    assert_string_equal(cugl_last_error(),
                        "cugl_app_ui_end: no frame has begun (call cugl_app_ui_begin first)");
    /* Widgets outside a frame do nothing. */
    bool b = false;
    float f = 1;
    int i = 0;
    assert_false(cugl_app_ui_checkbox(ui, "b", &b));
    assert_false(cugl_app_ui_slider_float(ui, "f", &f, 0, 2));
    assert_false(cugl_app_ui_combo(ui, "c", &i, shapes, 3));
    cugl_app_ui_text(ui, "%s", "nothing");
    /* A frame begun twice drops the first; one left open goes with the panel. */
    cugl_app_ui_begin(ui, 0.0f, NULL);
    cugl_app_ui_begin(ui, -1.0f, NULL);
    clear();
    assert_ok(cugl_app_ui_end(ui));
    cugl_app_ui_begin(ui, 1.0f / 60.0f, NULL);
    cugl_app_ui_destroy(ui);
}

/* Widgets Dear ImGui would abort on are refused, each with a message naming
 * the function, and the frame's end reports the first; the program and the
 * panel go on, and the next frame is clean. */
static void hostile_widgets_are_refused(void **state)
{
    (void)state;
    cugl_app_ui *ui = NULL;
    assert_ok(cugl_app_ui_create(&ui, ctx));
    static const struct {
        float min, max, value;
    } bad_floats[] = {
        {NAN, 1, 0}, {0, NAN, 0}, {-INFINITY, 1, 0}, {0, INFINITY, 0}, {-FLT_MAX, 1, 0},
        {0, FLT_MAX, 0}, {-FLT_MAX, FLT_MAX, 0}, {0, 1, NAN}, {0, 1, INFINITY},
    };
    static const int bad_ints[][2] = {{INT_MIN, INT_MAX}, {INT_MIN, 0}, {0, INT_MAX},
                                      {INT_MAX, INT_MIN}};
    for (int round = 0; round < 2; round++) {
        cugl_app_ui_begin(ui, 1.0f / 60.0f, "");
        for (size_t i = 0; i < sizeof bad_floats / sizeof bad_floats[0]; i++) {
            float v = bad_floats[i].value;
            assert_false(cugl_app_ui_slider_float(ui, "f", &v, bad_floats[i].min,
                                                  bad_floats[i].max));
            assert_true(strncmp(cugl_last_error(), "cugl_app_ui_slider_float: \"f\": ", 30) == 0);
        }
        for (size_t i = 0; i < sizeof bad_ints / sizeof bad_ints[0]; i++) {
            int v = 0;
            assert_false(cugl_app_ui_slider_int(ui, "i", &v, bad_ints[i][0], bad_ints[i][1]));
            assert_true(strncmp(cugl_last_error(), "cugl_app_ui_slider_int: \"i\": bounds ", 34) ==
                        0);
        }
        bool b = false;
        float f = 0.5f;
        int n = 0;
        const char *holes[] = {"one", NULL, "three"};
        assert_false(cugl_app_ui_checkbox(ui, "", &b));
        assert_string_equal(cugl_last_error(),
                            "cugl_app_ui_checkbox: an empty label: every widget needs one");
        assert_false(cugl_app_ui_slider_float(ui, "", &f, 0, 1));
        assert_false(cugl_app_ui_slider_int(ui, "", &n, 0, 1));
        assert_false(cugl_app_ui_combo(ui, "", &n, shapes, 3));
        assert_false(cugl_app_ui_combo(ui, "holes", &n, holes, 3));
        assert_string_equal(cugl_last_error(), "cugl_app_ui_combo: \"holes\": item 1 of 3 is NULL");
        assert_false(cugl_app_ui_checkbox(ui, "b", NULL));
        assert_string_equal(cugl_last_error(), "cugl_app_ui_checkbox: \"b\": value is NULL");
        cugl_app_ui_plot(ui, "", NULL, 0, 1);
        cugl_app_ui_plot(ui, "p", &f, -1, NAN);
        assert_string_equal(cugl_last_error(), "cugl_app_ui_plot: \"p\": count -1 is negative");
        /* A good widget still works in the same frame. */
        assert_false(cugl_app_ui_slider_float(ui, "fine", &f, -FLT_MAX / 2, FLT_MAX / 2));
        assert_false(cugl_app_ui_slider_int(ui, "fine int", &n, INT_MIN / 2, INT_MAX / 2));
        clear();
        assert_status(cugl_app_ui_end(ui), CUGL_ERROR_INVALID_ARGUMENT);
        assert_string_equal(cugl_last_error(),
                            "cugl_app_ui_end: a widget was refused and left out: "
                            "cugl_app_ui_slider_float: \"f\": bounds nan .. 1 are not finite "
                            "numbers within +-FLT_MAX/2");
    }
    /* The next frame, with good widgets only, ends well. */
    cugl_app_ui_begin(ui, 1.0f / 60.0f, NULL);
    float f = 0.5f;
    cugl_app_ui_slider_float(ui, "f", &f, 0, 1);
    clear();
    assert_ok(cugl_app_ui_end(ui));
    cugl_app_ui_destroy(ui);
}

int main(void)
{
    ctx = app_test_headless(W, H);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(panel_draws_at_the_top_left),
        cmocka_unit_test(panel_restores_gl_state),
        cmocka_unit_test(pushed_click_flips_the_checkbox),
        cmocka_unit_test(timer_last_feeds_a_plot),
        cmocka_unit_test(refusals),
        cmocka_unit_test(hostile_widgets_are_refused),
    };
    int failed = cugl_test_run(tests);
    cugl_app_context_destroy(ctx);
    return failed;
}
