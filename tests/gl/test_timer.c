/*
 * test_timer.c - the per-phase frame timer: GL phases
 * measured and named, its refusals.
 */
#include <math.h>

#include "gl_test.h"

static void timer_gl_phases(void **state)
{
    (void)state;
    enum { FRAMES = 9, RING = 4 };
    /* Mesa's llvmpipe times a context's very first commands from a start it
     * never set (10^6 ms seen): the context draws once before it is timed. */
    glClear(GL_COLOR_BUFFER_BIT);
    glFinish();
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
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(timer_gl_phases),
        cmocka_unit_test(timer_refusals),
    };
    return gl_test_run(tests, "cugl-timer");
}
