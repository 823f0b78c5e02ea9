/*
 * cugl-julia, run headless for 3 frames at 256x256 on each --interop path,
 * against the CPU reference of the same frame: at most 1 pixel in 1000 may
 * have a channel more than one level off. Every path writes the same
 * bytes, so their screenshots must also be identical. Then at 203x117, a
 * size that leaves partial 16x16 blocks at two edges and makes a shared
 * texture's pitch (a multiple of 256 bytes) longer than its rows. And
 * --record: every frame as a numbered PNG, the last one the screenshot.
 * And --bench on each path: the breakdown's figures are there and agree
 * with each other (the floor is the work plus the hand-over measured
 * before the first frame; the ratio is the median frame over it).
 *
 * usage: test_demo_julia CUGL_JULIA_BINARY
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    static char text[16384];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    return text;
}

static const char *line_with(const char *text, const char *start, const char *what)
{
    const char *at = strstr(text, start);
    if (!at)
        fail_msg("%s: no line \"%s...\" in:\n%s", what, start, text);
    return at;
}

static void near(double got, double want, double tolerance, const char *what)
{
    if (fabs(got - want) > tolerance)
        fail_msg("%s: %.4f, expected %.4f", what, got, want);
}

/* --bench's output on `interop`: run again once where a frame stalled
 * (its mean past 4 times its p90: 3.5 ms against 0.37, one frame of 60
 * held about 190 ms by the GPU command's other tests beside it on an
 * H200); a mean that is not the frames' own fails the same twice. */
static const char *bench_text(const char *interop, bool pipelined, const char *what)
{
    const char *out = run_demo_path("bench-%s%s.txt", interop, pipelined ? "-pipelined" : "");
    for (int attempt = 0;; attempt++) {
        int rc = run_demo_to(binary,
                             (const char *const[]){"--headless", "--size", "320x240", "--frames",
                                                   "60", "--interop", interop, "--bench",
                                                   pipelined ? "--pipelined" : NULL, NULL},
                             out);
        if (rc != 0)
            fail_msg("%s exited with %d", what, rc);
        const char *text = read_text(out);
        const char *frame = strstr(text, "frame: median");
        double median, p10, p90, mean;
        if (attempt == 0 && frame &&
            sscanf(frame, "frame: median %lf ms [p10 %lf, p90 %lf], mean %lf ms", &median, &p10,
                   &p90, &mean) == 4 &&
            !(mean < 4 * p90)) {
            printf("# %s: mean %.4f ms with p90 %.4f: a frame stalled; measured again\n", what,
                   mean, p90);
            continue;
        }
        return text;
    }
}

static void bench_run(const char *interop, bool pipelined)
{
    char what[64];
    snprintf(what, sizeof what, "--interop %s --bench%s", interop,
             pipelined ? " --pipelined" : "");
    const char *text = bench_text(interop, pipelined, what);
    line_with(text, "in no phase", what);
    double gl, cuda, waits, hand, hand_pipe = -1, lock, pipe = -1, median, p10, p90, ratio,
                                       outside;
    const char *work = line_with(text, "work (GPU", what);
    if (sscanf(work, "work (GPU, medians): GL %lf ms, CUDA %lf ms", &gl, &cuda) != 2 ||
        sscanf(line_with(work, "hand-over phases", what), "hand-over phases %lf ms", &waits) !=
            1)
        fail_msg("%s: the work line does not parse", what);
    const char *h = line_with(text, "hand-over before", what);
    if (sscanf(h, "hand-over before the first frame: %lf ms lockstep, %lf ms pipelined", &hand,
               &hand_pipe) < 1)
        fail_msg("%s: the hand-over line does not parse", what);
    const char *fl = line_with(text, "floor: ", what);
    if (sscanf(fl, "floor: lockstep %lf ms, pipelined %lf ms", &lock, &pipe) < 1)
        fail_msg("%s: the floor line does not parse", what);
    char which[16];
    double mean;
    if (sscanf(line_with(text, "frame: median", what),
               "frame: median %lf ms [p10 %lf, p90 %lf], mean %lf ms, %lfx the %15s floor; CPU "
               "in no phase %lf ms",
               &median, &p10, &p90, &mean, &ratio, which, &outside) != 7)
        fail_msg("%s: the frame line does not parse", what);
    /* Both APIs worked; a hand-over costs something. */
    if (!(gl > 0 && cuda > 0 && waits >= 0 && hand > 0))
        fail_msg("%s: GL %.4f, CUDA %.4f, hand-over phases %.4f, hand-over %.4f ms", what, gl,
                 cuda, waits, hand);
    near(lock, gl + cuda + hand, 0.0025, "the lockstep floor against GL + CUDA + hand-over");
    /* Every path pipelines: map and shared always, the host path where
     * CUDA copies into GL's own memory (not through pinned memory, which
     * the bench then says). */
    bool shared = strcmp(interop, "host") != 0 || !strstr(text, "pipelined hand-over: none");
    if (!shared && !strstr(text, "pinned memory"))
        fail_msg("%s: the host path does not pipeline, and says no reason:\n%s", what, text);
    if (shared != (hand_pipe >= 0) || shared != (pipe >= 0))
        fail_msg("%s: a pipelined hand-over and floor %s expected", what,
                 shared ? "are" : "are not");
    const char *probe = shared ? line_with(text, "GL and CUDA side by side", what) : NULL;
    double longer = gl > cuda ? gl : cuda, less = gl > cuda ? cuda : gl;
    if (probe && strncmp(probe, "GL and CUDA side by side: not measured: ", 40) == 0) {
        /* The probe could not measure (the GPU busy with other work, say):
         * it says so, and the floor takes the two as running side by
         * side, as it did before there was a probe. */
        if (!strstr(probe, "the floor takes them as running side by side"))
            fail_msg("%s: the probe did not measure and does not say what the floor takes:\n%s",
                     what, text);
        printf("# %s: %.*s\n", what, (int)strcspn(probe, "\n"), probe);
        near(pipe, longer + hand_pipe, 0.0025,
             "the pipelined floor without the probe: max(GL, CUDA) + its hand-over");
    } else if (shared) {
        /* The overlap probe ran, and the floor takes it. */
        double overlap, probe_gl, probe_cuda, probe_both;
        if (sscanf(probe,
                   "GL and CUDA side by side: %lf%% of the shorter overlapped (alone: GL %lf ms, "
                   "CUDA %lf ms; both queued: %lf ms)",
                   &overlap, &probe_gl, &probe_cuda, &probe_both) != 4)
            fail_msg("%s: the overlap line does not parse", what);
        double shorter = probe_gl < probe_cuda ? probe_gl : probe_cuda;
        /* Each side's work sized to 1 ms, and measured only where it took
         * a quarter to four times that (else the probe says it could not
         * measure, above). */
        if (!(overlap >= 0 && overlap <= 100 && probe_gl >= 0.25 && probe_gl <= 4 &&
              probe_cuda >= 0.25 && probe_cuda <= 4 && probe_both > 0.1))
            fail_msg("%s: overlap %.1f%% of GL %.4f ms and CUDA %.4f ms, both %.4f ms", what,
                     overlap, probe_gl, probe_cuda, probe_both);
        near(overlap / 100,
             fmin(1, fmax(0, (probe_gl + probe_cuda - probe_both) / shorter)),
             0.002 + 0.0015 / shorter, "the overlap against its probe's times");
        near(pipe, longer + (1 - overlap / 100) * less + hand_pipe, 0.0025 + 0.0005 * less,
             "the pipelined floor against max(GL, CUDA) + the rest that did not overlap + its "
             "hand-over");
    }
    bool pipe_floor = pipelined && shared;
    if (strcmp(which, pipe_floor ? "pipelined" : "lockstep") != 0)
        fail_msg("%s: the frame is set against the %s floor", what, which);
    if (!(p10 <= median && median <= p90 && median > 0))
        fail_msg("%s: median %.4f, p10 %.4f, p90 %.4f", what, median, p10, p90);
    /* The mean of frames within the percentiles' range, roughly: not the
     * whole run's wall time with the probes and the kept frame. */
    if (!(mean > 0 && mean < 4 * p90))
        fail_msg("%s: mean %.4f with p90 %.4f", what, mean, p90);
    /* Printed to 0.001 ms: the ratio of the printed figures may be off by
     * that much relative to a small floor. */
    double floor = pipe_floor ? pipe : lock;
    near(ratio, mean / floor, 0.006 + mean / floor * (0.0006 / floor + 0.0006 / mean),
         "the frame's ratio to its floor");
    if (!(outside >= 0 && outside <= median))
        fail_msg("%s: %.4f ms in no phase of a %.4f ms frame", what, outside, median);
}

/* With GPU-side waits (the shared path where Vulkan makes semaphores) the
 * phases' GPU times include the waiting: --bench says so and gives no
 * floor. The floor's checks above run with the waits on the CPU. */
static void bench_gpu_waits(void)
{
    const char *out = run_demo_path("bench-shared-gpu-waits.txt");
    unsetenv("CUGL_APP_CPU_WAITS");
    int rc = run_demo_to(binary,
                         (const char *const[]){"--headless", "--size", "320x240", "--frames",
                                               "30", "--interop", "shared", "--bench", NULL},
                         out);
    setenv("CUGL_APP_CPU_WAITS", "1", 1);
    if (rc != 0)
        fail_msg("--interop shared --bench with GPU waits exited with %d", rc);
    const char *text = read_text(out);
    double median, p10, p90, mean, outside;
    if (strstr(text, "floor: lockstep"))
        fail_msg("a floor from phases that include GPU waits:\n%s", text);
    line_with(text, "floor: not taken: the turns wait on the GPU", "GPU waits");
    if (sscanf(line_with(text, "frame: median", "GPU waits"),
               "frame: median %lf ms [p10 %lf, p90 %lf], mean %lf ms; CPU in no phase %lf ms",
               &median, &p10, &p90, &mean, &outside) != 5 ||
        !(p10 <= median && median <= p90 && median > 0 && mean > 0))
        fail_msg("the frame line does not parse:\n%s", text);
}

static void bench_breakdown(void **state)
{
    setenv("CUGL_APP_CPU_WAITS", "1", 1);
    bench_run(*state, false);
    bench_run(*state, true);
    /* Where the shared path waits on the GPU (it does on the GPU machine). */
    if (strcmp(*state, "shared") == 0 && getenv("CUGL_TEST_NO_SKIP"))
        bench_gpu_waits();
    unsetenv("CUGL_APP_CPU_WAITS");
}

int main(int argc, char **argv)
{
    binary = run_demo_setup(argc, argv, "CUGL_JULIA_BINARY");
    const struct CMUnitTest tests[] = {
        run_demo_each_interop(path),
        cmocka_unit_test(paths_agree),
        cmocka_unit_test(odd_size),
        cmocka_unit_test(record_writes_every_frame),
        run_demo_each_interop(bench_breakdown),
    };
    return run_demo_tests(tests, NULL, NULL);
}
