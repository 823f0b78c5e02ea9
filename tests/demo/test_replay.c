/*
 * test_replay.c - input replay on one demo (its binary is the argument):
 * a left drag replayed headless (--input) changes the picture, and the
 * view the demo reports after it (--view ...) gives the same picture when
 * set directly; a demo without a view (fluids) replays to the same picture
 * twice; R held after a drag brings the view home. And --pipelined: the
 * frame a screenshot keeps is the lockstep one, pixel for pixel, on the
 * map and shared paths.
 */
#include <stdio.h>
#include <string.h>

#include <cugl/app.h>

#include "run_demo.h"

enum { W = 320, H = 240, FRAMES = 8 };

static const char *binary;

/* A left drag from (200, 150) to (260, 170) over frames 1 to 4. */
static const char drag[] = "# a left drag\n"
                           "0 move 200 150\n"
                           "1 button left down\n"
                           "2 move 230 160\n"
                           "3 move 260 170\n"
                           "4 button left up\n";

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

/* A headless run with `extra` flags (NULL-terminated), stdout to `out`. */
static void run(const char *screenshot, const char *out, const char *const *extra)
{
    char size[32], frames[16];
    snprintf(size, sizeof size, "%dx%d", W, H);
    snprintf(frames, sizeof frames, "%d", FRAMES);
    const char *args[16] = {"--headless", "--frames",   frames, "--size", size,
                            "--interop",  run_demo_interops[0], "--screenshot", screenshot};
    size_t n = 9;
    for (; extra && *extra; extra++)
        args[n++] = *extra;
    args[n] = NULL;
    int rc = run_demo_to(binary, args, out);
    if (rc != 0)
        fail_msg("%s exited with %d (its output: %s)", binary, rc, out);
}

/* The value of the "--view " line the demo printed, or NULL. */
static const char *printed_view(const char *out)
{
    static char view[512];
    FILE *f = fopen(out, "r");
    assert_non_null(f);
    char line[1024];
    const char *found = NULL;
    while (fgets(line, sizeof line, f)) {
        const char *at = strstr(line, ": --view ");
        if (at) {
            snprintf(view, sizeof view, "%s", at + strlen(": --view "));
            view[strcspn(view, "\r\n")] = '\0';
            found = view;
        }
    }
    fclose(f);
    return found;
}

static long pixels_differing(const char *a, const char *b)
{
    uint8_t *pa = run_demo_read_png(a, W, H), *pb = run_demo_read_png(b, W, H);
    long n = 0;
    for (size_t i = 0; i < (size_t)W * H; i++)
        n += memcmp(pa + 4 * i, pb + 4 * i, 4) != 0;
    free(pa);
    free(pb);
    return n;
}

static void drag_replays_exactly(void **state)
{
    (void)state;
    const char *input = run_demo_path("drag.txt");
    write_file(input, drag);
    const char *dragged = run_demo_path("dragged.png"), *dragged_out = run_demo_path("dragged.txt");
    run(dragged, dragged_out, (const char *const[]){"--input", input, NULL});
    const char *still = run_demo_path("still.png");
    run(still, run_demo_path("still.txt"), NULL);
    long moved = pixels_differing(dragged, still);
    print_message("# the drag changed %ld of %d pixels\n", moved, W * H);
    if (moved == 0)
        fail_msg("the replayed drag left the picture as it was");

    const char *view = printed_view(dragged_out);
    const char *again = run_demo_path("again.png");
    if (view) {
        /* The same view, set directly, draws the same picture. */
        print_message("# --view %s\n", view);
        run(again, run_demo_path("again.txt"), (const char *const[]){"--view", view, NULL});
        run_demo_expect_same_png(again, dragged, W, H, "--view after the replay");
    } else {
        /* No view to set: the replay itself repeats exactly. */
        run(again, run_demo_path("again.txt"), (const char *const[]){"--input", input, NULL});
        run_demo_expect_same_png(again, dragged, W, H, "the replay run twice");
    }
}

/* The drag, then R held down over two frames: the view is home again, the
 * view of a run without input (before, the second frame's R reset the
 * orbit camera to the library's view, not the demo's). Volume's spin
 * makes its home view a matter of time: left out. */
static void held_r_goes_home(void **state)
{
    (void)state;
    if (strstr(binary, "volume")) {
        print_message("# volume: its home view turns with time; not compared\n");
        return;
    }
    char text[512];
    snprintf(text, sizeof text, "%s5 key r down\n7 key r up\n", drag);
    const char *input = run_demo_path("held-r.txt");
    write_file(input, text);
    const char *out = run_demo_path("held-r-out.txt"), *home_out = run_demo_path("home.txt");
    run(run_demo_path("held-r.png"), out, (const char *const[]){"--input", input, NULL});
    run(run_demo_path("home.png"), home_out, NULL);
    char home[512];
    const char *view = printed_view(home_out);
    if (!view) {
        print_message("# no view to compare\n");
        return;
    }
    snprintf(home, sizeof home, "%s", view);
    view = printed_view(out);
    assert_non_null(view);
    print_message("# after the drag and R held: --view %s (home %s)\n", view, home);
    assert_string_equal(view, home);
}

/* --save-input on a replay writes the same events back. */
static void replay_records_itself(void **state)
{
    (void)state;
    const char *input = run_demo_path("drag2.txt");
    write_file(input, drag);
    const char *saved = run_demo_path("saved.txt");
    run(run_demo_path("saved.png"), run_demo_path("saved-out.txt"),
        (const char *const[]){"--input", input, "--save-input", saved, NULL});
    cugl_app_event *want = NULL, *got = NULL;
    size_t nwant = 0, ngot = 0;
    assert_ok(cugl_app_events_read(&want, &nwant, input));
    assert_ok(cugl_app_events_read(&got, &ngot, saved));
    assert_int_equal(ngot, nwant);
    for (size_t i = 0; i < ngot; i++) {
        char a[CUGL_APP_EVENT_MAX_LINE + 1], b[CUGL_APP_EVENT_MAX_LINE + 1];
        cugl_app_event_format(a, sizeof a, &want[i]);
        cugl_app_event_format(b, sizeof b, &got[i]);
        assert_string_equal(b, a);
    }
    cugl_app_events_free(want);
    cugl_app_events_free(got);
}

/* GL a frame behind CUDA, until the kept frame, which shows its own. */
static void pipelined_screenshot_is_exact(void **state)
{
    (void)state;
    char size[32];
    snprintf(size, sizeof size, "%dx%d", W, H);
    static const char *const paths[] = {"shared", "map"};
    for (int i = 0; i < 2; i++) {
        const char *lockstep = run_demo_path("lockstep-%s.png", paths[i]);
        const char *piped = run_demo_path("piped-%s.png", paths[i]);
        const char *args[] = {"--headless", "--frames", "6",         "--size", size,
                              "--interop",  paths[i], "--screenshot", lockstep, NULL,
                              NULL};
        assert_int_equal(run_demo(binary, args), 0);
        args[8] = piped;
        args[9] = "--pipelined";
        assert_int_equal(run_demo(binary, args), 0);
        char what[64];
        snprintf(what, sizeof what, "--interop %s --pipelined against lockstep", paths[i]);
        run_demo_expect_same_png(piped, lockstep, W, H, what);
    }
}

int main(int argc, char **argv)
{
    binary = run_demo_setup(argc, argv, "<demo binary>");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(drag_replays_exactly),
        cmocka_unit_test(replay_records_itself),
        cmocka_unit_test(held_r_goes_home),
        cmocka_unit_test(pipelined_screenshot_is_exact),
    };
    return run_demo_tests(tests, NULL, NULL);
}
