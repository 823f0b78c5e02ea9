/*
 * cugl-julia, run headless for 3 frames at 256x256 on each --interop path,
 * against the CPU reference of the same frame: at most 1 pixel in 1000 may
 * have a channel more than one level off. The three paths write the same
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
    static char name[64];
    snprintf(name, sizeof name, "julia-%s-%dx%d.png", interop, w, h);
    return run_demo_path(name);
}

static void check_path(const char *interop, int w, int h)
{
    const char *png = screenshot_of(interop, w, h);
    char size[32], frames[16];
    snprintf(size, sizeof size, "%dx%d", w, h);
    snprintf(frames, sizeof frames, "%d", FRAMES);
    int rc = run_demo(binary, (const char *const[]){"--headless", "--frames", frames, "--size",
                                                     size, "--screenshot", png, "--interop",
                                                     interop, NULL});
    if (rc != 0)
        fail_msg("cugl-julia --interop %s --size %s exited with %d", interop, size, rc);
    uint8_t *got = run_demo_read_png(png, w, h);
    uint8_t *want = malloc((size_t)w * h * 4);
    assert_non_null(want);
    julia_reference(want, w, h, FRAMES - 1);

    long off = 0, reported = 0;
    int worst = 0;
    for (int i = 0; i < w * h; i++) {
        int d = 0;
        for (int c = 0; c < 4; c++) {
            int diff = abs(got[i * 4 + c] - want[i * 4 + c]);
            d = diff > d ? diff : d;
        }
        worst = d > worst ? d : worst;
        if (d > 1) {
            off++;
            if (reported++ < 5)
                printf("# pixel (%d, %d) (row from the top): got %u %u %u %u, want %u %u %u %u\n",
                       i % w, i / w, got[i * 4], got[i * 4 + 1], got[i * 4 + 2], got[i * 4 + 3],
                       want[i * 4], want[i * 4 + 1], want[i * 4 + 2], want[i * 4 + 3]);
        }
    }
    printf("# --interop %s --size %s: %ld of %d pixels more than one level off, the worst "
           "by %d\n",
           interop, size, off, w * h, worst);
    free(got);
    free(want);
    if (off * 1000 > (long)w * h)
        fail_msg("%ld pixels of %d differ from the reference by more than one level", off,
                 w * h);
}

static void map_path(void **state)
{
    (void)state;
    check_path("map", W, H);
}

static void shared_path(void **state)
{
    (void)state;
    check_path("shared", W, H);
}

static void host_path(void **state)
{
    (void)state;
    check_path("host", W, H);
}

static void paths_agree(void **state)
{
    (void)state;
    for (const char *const *p = (const char *const[]){"shared", "host", NULL}; *p; p++) {
        char what[64];
        snprintf(what, sizeof what, "--interop %s against --interop map", *p);
        char reference[512];
        snprintf(reference, sizeof reference, "%s", screenshot_of("map", W, H));
        run_demo_expect_same_png(screenshot_of(*p, W, H), reference, W, H, what);
    }
}

static void odd_size(void **state)
{
    (void)state;
    for (const char *const *p = (const char *const[]){"map", "shared", "host", NULL}; *p; p++)
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
    if (argc != 2) {
        fprintf(stderr, "usage: %s CUGL_JULIA_BINARY\n", argv[0]);
        return 99;
    }
    binary = argv[1];
    run_demo_setup();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(map_path),
        cmocka_unit_test(shared_path),
        cmocka_unit_test(host_path),
        cmocka_unit_test(paths_agree),
        cmocka_unit_test(odd_size),
        cmocka_unit_test(record_writes_every_frame),
    };
    int rc = cugl_test_run(tests);
    run_demo_cleanup(rc != 0);
    return rc;
}
