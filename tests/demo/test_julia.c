/*
 * cugl-julia, run headless for 3 frames at 256x256 on each --interop path,
 * against the CPU reference of the same frame: at most 1 pixel in 1000 may
 * have a channel more than one level off. Every path writes the same
 * bytes, so their screenshots must also be identical. Then at 203x117, a
 * size that leaves partial 16x16 blocks at two edges and makes a shared
 * texture's pitch (a multiple of 256 bytes) longer than its rows. And
 * --record: every frame as a numbered PNG, the last one the screenshot.
 *
 * usage: test_demo_julia CUGL_JULIA_BINARY
 */
#include <stdlib.h>

#include "cugl_test.h"

#include "reference.h"
#include "run_demo.h"

enum { W = 256, H = 256, ODD_W = 203, ODD_H = 117, FRAMES = 3 };

static const char *binary;

static const char *screenshot_of(const char *interop, int w, int h)
{
    return run_demo_path("julia-%s-%dx%d.png", interop, w, h);
}

static void check_path(const char *interop, int w, int h)
{
    const char *png = screenshot_of(interop, w, h);
    run_demo_headless(binary, &(run_demo_args){.interop = interop, .width = w, .height = h,
                                               .frames = FRAMES, .screenshot = png});
    uint8_t *got = run_demo_read_png(png, w, h);
    uint8_t *want = malloc((size_t)w * h * 4);
    assert_non_null(want);
    julia_reference(want, w, h, FRAMES - 1);
    char what[64];
    snprintf(what, sizeof what, "--interop %s --size %dx%d", interop, w, h);
    run_demo_expect_close(got, want, w, h, what);
    free(got);
    free(want);
}

static void path(void **state)
{
    check_path(*state, W, H);
}

static void paths_agree(void **state)
{
    (void)state;
    const char *first = run_demo_interops[0];
    for (const char *const *p = run_demo_interops + 1; *p; p++) {
        char what[64];
        snprintf(what, sizeof what, "--interop %s against --interop %s", *p, first);
        run_demo_expect_same_png(screenshot_of(*p, W, H), screenshot_of(first, W, H), W, H,
                                 what);
    }
}

static void odd_size(void **state)
{
    (void)state;
    for (const char *const *p = run_demo_interops; *p; p++)
        check_path(*p, ODD_W, ODD_H);
}

/* --record writes frames 0 .. N-1, each the reference of its frame. */
static void record_writes_every_frame(void **state)
{
    (void)state;
    enum { RW = 96, RH = 64 };
    const char *dir = run_demo_path("recorded");
    char size[32], frames[16];
    snprintf(size, sizeof size, "%dx%d", RW, RH);
    snprintf(frames, sizeof frames, "%d", FRAMES);
    int rc = run_demo(binary, (const char *const[]){"--headless", "--frames", frames, "--size",
                                                     size, "--record", dir, "--screenshot",
                                                     run_demo_path("recorded.png"), NULL});
    if (rc != 0)
        fail_msg("cugl-julia --record exited with %d", rc);
    uint8_t *want = malloc((size_t)RW * RH * 4);
    assert_non_null(want);
    for (int f = 0; f < FRAMES; f++) {
        char file[600];
        snprintf(file, sizeof file, "%s/julia-%06d.png", dir, f);
        uint8_t *got = run_demo_read_png(file, RW, RH);
        julia_reference(want, RW, RH, f);
        long off = 0;
        for (int i = 0; i < RW * RH * 4; i++)
            off += abs(got[i] - want[i]) > 1;
        if (off * 1000 > (long)RW * RH)
            fail_msg("%s: %ld channels differ from frame %d's reference", file, off, f);
        if (f == FRAMES - 1) {
            uint8_t *shot = run_demo_read_png(run_demo_path("recorded.png"), RW, RH);
            assert_memory_equal(shot, got, (size_t)RW * RH * 4);
            free(shot);
        }
        free(got);
    }
    char extra[600];
    snprintf(extra, sizeof extra, "%s/julia-%06d.png", dir, FRAMES);
    FILE *f = fopen(extra, "rb");
    if (f) {
        fclose(f);
        fail_msg("%s exists: more frames recorded than rendered", extra);
    }
    free(want);
}

int main(int argc, char **argv)
{
    binary = run_demo_setup(argc, argv, "CUGL_JULIA_BINARY");
    const struct CMUnitTest tests[] = {
        run_demo_each_interop(path),
        cmocka_unit_test(paths_agree),
        cmocka_unit_test(odd_size),
        cmocka_unit_test(record_writes_every_frame),
    };
    return run_demo_tests(tests, NULL, NULL);
}
