/*
 * test_timer.c - the per-phase frame timer: GL phases
 * measured and named, medians and spreads over the frames kept, the CPU
 * time in no phase, its refusals.
 */
#include <time.h>

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

static void sleep_ms(double ms)
{
    struct timespec ts = {0, (long)(ms * 1e6)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* Known CPU times: phase 0 sleeps 3 ms, phase 2 1 ms, and 2 ms pass in no
 * phase. The summary's medians must hold them, each once. */
static void timer_summary_spreads(void **state)
{
    (void)state;
    enum { FRAMES = 24, RING = 4 };
    glClear(GL_COLOR_BUFFER_BIT);
    glFinish();
    cugl_app_timer *t = NULL;
    assert_ok(cugl_app_timer_create(&t, NULL));
    for (int f = 0; f < FRAMES; f++) {
        cugl_app_timer_frame_begin(t);
        assert_ok(cugl_app_timer_begin(t, 0, "slow", false));
        glClear(GL_COLOR_BUFFER_BIT);
        sleep_ms(3);
        assert_ok(cugl_app_timer_end(t, 0));
        sleep_ms(2);
        assert_ok(cugl_app_timer_begin(t, 2, "quick", false));
        sleep_ms(1);
        assert_ok(cugl_app_timer_end(t, 2));
        glFinish();
        cugl_app_timer_frame_end(t);
    }
    cugl_app_phase_summary ph[CUGL_APP_TIMER_MAX_PHASES];
    cugl_app_frame_summary fr;
    assert_ok(cugl_app_timer_summary(ph, &fr, t));
    /* Collected frames only: the last RING come in with later frames. */
    assert_int_equal(fr.frames, FRAMES - RING);
    assert_string_equal(ph[0].name, "slow");
    assert_string_equal(ph[2].name, "quick");
    assert_null(ph[1].name);
    assert_int_equal(ph[1].frames, 0);
    for (int p = 0; p < 3; p += 2) {
        assert_int_equal(ph[p].frames, FRAMES - RING);
        assert_int_equal(ph[p].samples, FRAMES - RING);
        const cugl_app_spread *c = &ph[p].cpu, *g = &ph[p].gpu;
        assert_true(c->p10_ms <= c->median_ms && c->median_ms <= c->p90_ms);
        assert_true(g->p10_ms <= g->median_ms && g->median_ms <= g->p90_ms);
        assert_true(g->p10_ms >= 0);
    }
    assert_true(ph[0].cpu.median_ms >= 3.0 && ph[0].cpu.median_ms < 3.0 + 20);
    assert_true(ph[2].cpu.median_ms >= 1.0 && ph[2].cpu.median_ms < 1.0 + 20);
    /* In no phase: the 2 ms between them and the glFinish after. */
    assert_true(fr.outside.median_ms >= 2.0);
    assert_true(fr.outside.p10_ms <= fr.outside.median_ms &&
                fr.outside.median_ms <= fr.outside.p90_ms);
    assert_true(fr.wall.median_ms >= 6.0);
    /* Each part once: the frame lies between the parts' 10th percentiles
     * added up and their 90th (0.5 ms of slack). Counted twice, the 3 ms
     * phase would put the low sum 3 ms above the frame; the 2 ms outside
     * left out would put the high sum under it. (The medians alone come
     * from different frames: on a loaded machine, under ASan, they missed
     * the frame by 1.9 ms with every part counted once.) */
    double low = ph[0].cpu.p10_ms + ph[2].cpu.p10_ms + fr.outside.p10_ms;
    double high = ph[0].cpu.p90_ms + ph[2].cpu.p90_ms + fr.outside.p90_ms;
    if (fr.wall.median_ms < low - 0.5 || fr.wall.median_ms > high + 0.5)
        fail_msg("the frame took %.3f ms, where the parts make %.3f to %.3f (phases %.3f + %.3f "
                 "and outside %.3f, medians)",
                 fr.wall.median_ms, low, high, ph[0].cpu.median_ms, ph[2].cpu.median_ms,
                 fr.outside.median_ms);

    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    cugl_app_timer_print(t, out);
    fclose(out);
    note(text);
    assert_non_null(strstr(text, "in no phase"));
    assert_non_null(strstr(text, "median [p10 p90]"));
    free(text);

    /* A NULL timer: refused, the outputs zeroed. */
    ph[0].frames = 99;
    fr.frames = 99;
    assert_status(cugl_app_timer_summary(ph, &fr, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_int_equal(ph[0].frames, 0);
    assert_int_equal(fr.frames, 0);
    assert_null(ph[0].name);
    cugl_app_timer_destroy(t);
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

/* More frames than the history's first allocation: every frame kept is a
 * frame measured (none left zero as the history grows). */
static void timer_history_grows(void **state)
{
    (void)state;
    enum { FRAMES = 1500, RING = 4 };
    cugl_app_timer *t = NULL;
    assert_ok(cugl_app_timer_create(&t, NULL));
    for (int f = 0; f < FRAMES; f++) {
        cugl_app_timer_frame_begin(t);
        assert_ok(cugl_app_timer_begin(t, 1, "clear", false));
        glClear(GL_COLOR_BUFFER_BIT);
        assert_ok(cugl_app_timer_end(t, 1));
        sleep_ms(0.05);
        cugl_app_timer_frame_end(t);
    }
    cugl_app_phase_summary ph[CUGL_APP_TIMER_MAX_PHASES];
    cugl_app_frame_summary fr;
    assert_ok(cugl_app_timer_summary(ph, &fr, t));
    assert_int_equal(fr.frames, FRAMES - RING);
    assert_int_equal(ph[1].frames, FRAMES - RING);
    if (!(fr.wall.p10_ms >= 0.05 && fr.outside.p10_ms >= 0.05))
        fail_msg("10th percentiles: frame %.4f ms, in no phase %.4f ms; each frame slept "
                 "0.05 ms outside its phase",
                 fr.wall.p10_ms, fr.outside.p10_ms);
    cugl_app_timer_destroy(t);
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
        cmocka_unit_test(timer_summary_spreads),
        cmocka_unit_test(timer_history_grows),
        cmocka_unit_test(timer_refusals),
    };
    return gl_test_run(tests, "cugl-timer");
}
