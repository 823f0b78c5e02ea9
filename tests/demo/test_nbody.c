/*
 * cugl-nbody. First the step kernel alone, launched here through cugl on
 * the demo's initial conditions: one step of 4096, 1000 (a partial last
 * tile) and 1 body against the double-precision CPU reference, each body's
 * new position and velocity within a relative error of 5e-4 (the error of
 * the vector, over its length), masses unchanged; and the step in three
 * slices, as --devices splits it, bit for bit the step in one. Then the demo, headless,
 * 3 frames of 10,000 bodies on each --interop path: the positions it dumps
 * against 3 reference steps, and screenshots and positions identical
 * across the paths, with bright bodies on a dark sky. Then the default
 * 65,536 bodies and bad --bodies values. With CUGL_NBODY_TIMING=1 only
 * --bench's step time with the turns waiting on the GPU and on the CPU (the
 * same: the kernel's own): a test of its own (demo-nbody-timing) that has
 * the GPU to itself, as other tests' kernels on the GPU slow the steps it
 * compares, one more than the other (3.89 against 4.77 ms, the fastest of
 * 9 steps, with the GPU command's other tests beside it on an H200).
 *
 * usage: test_demo_nbody CUGL_NBODY_BINARY
 */
#include <math.h>
#include <stdlib.h>

#include "cugl_test.h"

#include "nbody_math.h"
#include "nbody_reference.h"
#include "run_demo.h"

extern const unsigned char cugl_nbody_fatbin[];
extern const size_t cugl_nbody_fatbin_size;

#define MAX_RELATIVE_ERROR 5e-4

enum { W = 256, H = 256, FRAMES = 3, DEMO_BODIES = 10000 };

static const char *binary;
static cugl_device *dev;

/* Initial conditions of n bodies, as floats and as doubles. */
typedef struct bodies {
    long n;
    float *pos, *vel;
    double *pos_d, *vel_d;
} bodies;

static bodies make_bodies(long n)
{
    bodies b = {.n = n};
    b.pos = malloc((size_t)n * 4 * sizeof(float));
    b.vel = malloc((size_t)n * 4 * sizeof(float));
    b.pos_d = malloc((size_t)n * 4 * sizeof(double));
    b.vel_d = malloc((size_t)n * 4 * sizeof(double));
    assert_true(b.pos && b.vel && b.pos_d && b.vel_d);
    nbody_initial_conditions(b.pos, b.vel, n);
    for (long i = 0; i < 4 * n; i++) {
        b.pos_d[i] = b.pos[i];
        b.vel_d[i] = b.vel[i];
    }
    return b;
}

static void free_bodies(bodies *b)
{
    free(b->pos);
    free(b->vel);
    free(b->pos_d);
    free(b->vel_d);
}

/*
 * The largest relative error of n 3-vectors (4 floats apart) against the
 * reference; fails when one exceeds MAX_RELATIVE_ERROR (NaN included) or a
 * fourth component differs from `w` (the masses, or the velocities' 0).
 */
static double check_vectors(const char *what, const float *got, const double *want,
                            const float *w, long n)
{
    double worst = 0.0;
    long worst_at = 0, off = 0;
    for (long i = 0; i < n; i++) {
        const float *g = got + 4 * i;
        const double *r = want + 4 * i;
        double diff = 0.0, len = 0.0;
        for (int c = 0; c < 3; c++) {
            diff += ((double)g[c] - r[c]) * ((double)g[c] - r[c]);
            len += r[c] * r[c];
        }
        double e = sqrt(diff) / sqrt(len);
        if (!(e <= MAX_RELATIVE_ERROR))
            off++;
        if (!(e <= worst)) {
            worst = e;
            worst_at = i;
        }
        if (memcmp(&g[3], &w[4 * i + 3], sizeof(float)) != 0)
            fail_msg("%s of body %ld: fourth component %.9g, expected %.9g", what, i,
                     (double)g[3], (double)w[4 * i + 3]);
    }
    const float *g = got + 4 * worst_at;
    const double *r = want + 4 * worst_at;
    printf("# %ld bodies, %s: largest relative error %.3g, body %ld: got (%.9g, %.9g, %.9g), "
           "want (%.9g, %.9g, %.9g)\n",
           n, what, worst, worst_at, (double)g[0], (double)g[1], (double)g[2], r[0], r[1], r[2]);
    if (off)
        fail_msg("%s: %ld of %ld bodies off by more than %g", what, off, n, MAX_RELATIVE_ERROR);
    return worst;
}

/* --- The kernel alone ---------------------------------------------------------- */

static cugl_buffer *device_copy(cugl_memory_resource *mr, cugl_stream *stream, const void *data,
                                size_t size)
{
    cugl_buffer *buf = NULL;
    assert_ok(cugl_memory_resource_allocate(&buf, mr, size, stream));
    run_demo_upload(buf, data, stream);
    return buf;
}

/*
 * One step of the n bodies of b by `slices` launches of nbody_step (or,
 * `per_thread` NBODY_WIDE, nbody_step2), each on a run of bodies as the
 * demo's --devices splits them (the first `first` of a slice at its
 * velocities' start); the new positions and velocities into got_pos and
 * got_vel, and fails unless the input positions are kept.
 */
static void run_step_of(const bodies *b, int slices, int per_thread, float *got_pos,
                        float *got_vel)
{
    long n = b->n;
    size_t size = (size_t)n * 4 * sizeof(float);
    cugl_stream *stream = NULL;
    cugl_memory_resource *mr = NULL;
    cugl_module *module = NULL;
    cugl_kernel *kernel = NULL;
    assert_ok(cugl_stream_create(&stream, dev, NULL));
    assert_ok(cugl_device_memory_resource_create(&mr, dev, NULL));
    assert_ok(cugl_module_load_data(&module, dev, cugl_nbody_fatbin, cugl_nbody_fatbin_size));
    assert_ok(cugl_module_get_kernel(&kernel, module,
                                     per_thread == 1 ? "nbody_step" : "nbody_step2"));

    cugl_buffer *pos_in = device_copy(mr, stream, b->pos, size);
    cugl_buffer *vel = device_copy(mr, stream, b->vel, size);
    cugl_buffer *pos_out = NULL;
    assert_ok(cugl_memory_resource_allocate(&pos_out, mr, size, stream));
    uint8_t nan = 0xFF; /* every float a NaN: a body not written fails */
    assert_ok(cugl_buffer_fill(pos_out, &nan, 1, stream));

    uint64_t in_ptr = cugl_buffer_handle(pos_in), out_ptr = cugl_buffer_handle(pos_out);
    int count = (int)n;
    float dt = NBODY_DT, eps2 = NBODY_SOFTENING * NBODY_SOFTENING;
    for (int k = 0; k < slices; k++) {
        int first = (int)(n * k / slices), slice = (int)(n * (k + 1) / slices) - first;
        uint64_t vel_ptr = cugl_buffer_handle(vel) + (uint64_t)first * 4 * sizeof(float);
        void *args[] = {&in_ptr, &out_ptr, &vel_ptr, &count, &first, &slice, &dt, &eps2};
        cugl_launch_config grid = {
            .grid = {(uint32_t)nbody_blocks(slice, per_thread), 1, 1},
            .block = {NBODY_BLOCK, 1, 1},
        };
        if (slice > 0)
            assert_ok(cugl_launch(stream, &grid, kernel, args, 8));
    }
    float *got_in = malloc(size);
    assert_non_null(got_in);
    run_demo_download(got_pos, pos_out, stream);
    run_demo_download(got_vel, vel, stream);
    run_demo_download(got_in, pos_in, stream);
    if (memcmp(got_in, b->pos, size) != 0)
        fail_msg("%s", "the kernel changed its input positions");

    free(got_in);
    cugl_buffer_release(pos_in);
    cugl_buffer_release(pos_out);
    cugl_buffer_release(vel);
    cugl_kernel_release(kernel);
    cugl_module_release(module);
    cugl_memory_resource_release(mr);
    cugl_stream_release(stream);
}

static void run_step(const bodies *b, int slices, float *got_pos, float *got_vel)
{
    run_step_of(b, slices, 1, got_pos, got_vel);
}

/* One launch of nbody_step on n bodies against one reference step. */
static void one_step(long n)
{
    bodies b = make_bodies(n);
    size_t size = (size_t)n * 4 * sizeof(float);
    float *got_pos = malloc(size), *got_vel = malloc(size);
    assert_true(got_pos && got_vel);
    run_step(&b, 1, got_pos, got_vel);
    nbody_reference_steps(b.pos_d, b.vel_d, n, 1, NBODY_DT, NBODY_SOFTENING);
    check_vectors("positions", got_pos, b.pos_d, b.pos, n);
    check_vectors("velocities", got_vel, b.vel_d, b.vel, n);
    free(got_pos);
    free(got_vel);
    free_bodies(&b);
}

/* The step in 3 slices of uneven length (as on 3 GPUs) computes the bits
 * of one launch: a body's result does not depend on its slice. */
static void slices_compute_the_same_bits(void **state)
{
    (void)state;
    enum { N = 1000 };
    bodies b = make_bodies(N);
    size_t size = (size_t)N * 4 * sizeof(float);
    float *whole_pos = malloc(size), *whole_vel = malloc(size), *pos = malloc(size),
          *vel = malloc(size);
    assert_true(whole_pos && whole_vel && pos && vel);
    run_step(&b, 1, whole_pos, whole_vel);
    run_step(&b, 3, pos, vel);
    if (memcmp(pos, whole_pos, size) != 0 || memcmp(vel, whole_vel, size) != 0)
        fail_msg("%s", "3 slices computed other positions or velocities than one launch");
    free(whole_pos);
    free(whole_vel);
    free(pos);
    free(vel);
    free_bodies(&b);
}

/* nbody_step2 (two bodies a thread) computes nbody_step's bits, whole and
 * in slices, for sizes that leave blocks and threads part-filled. */
static void two_bodies_a_thread_compute_the_same_bits(void **state)
{
    (void)state;
    static const long sizes[] = {1, 300, 1000, 4096};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        long n = sizes[k];
        bodies b = make_bodies(n);
        size_t size = (size_t)n * 4 * sizeof(float);
        float *pos1 = malloc(size), *vel1 = malloc(size), *pos2 = malloc(size),
              *vel2 = malloc(size);
        assert_true(pos1 && vel1 && pos2 && vel2);
        for (int slices = 1; slices <= (n > 2 ? 3 : 1); slices += 2) {
            run_step_of(&b, slices, 1, pos1, vel1);
            run_step_of(&b, slices, NBODY_WIDE, pos2, vel2);
            if (memcmp(pos1, pos2, size) != 0 || memcmp(vel1, vel2, size) != 0)
                fail_msg("%ld bodies in %d slice(s): nbody_step2 computed other bits than "
                         "nbody_step",
                         n, slices);
        }
        free(pos1);
        free(vel1);
        free(pos2);
        free(vel2);
        free_bodies(&b);
    }
}

static void step_4096(void **state)
{
    (void)state;
    one_step(4096);
}

static void step_1000(void **state)
{
    (void)state;
    one_step(1000);
}

static void step_1(void **state)
{
    (void)state;
    one_step(1);
}

/* --- The demo ---------------------------------------------------------------------- */

static const char *file_of(const char *what, const char *interop)
{
    return run_demo_path("nbody-%s.%s", interop, what);
}

/* Pixels with a channel of at least 128: bodies, where they crowd. */
static long bright_pixels(const uint8_t *rgba, int w, int h)
{
    long bright = 0;
    for (long i = 0; i < (long)w * h; i++) {
        const uint8_t *p = rgba + 4 * i;
        bright += p[0] >= 128 || p[1] >= 128 || p[2] >= 128;
    }
    return bright;
}

static void path(void **state)
{
    const char *interop = *state;
    static bodies want; /* FRAMES reference steps, made once */
    if (!want.n) {
        want = make_bodies(DEMO_BODIES);
        nbody_reference_steps(want.pos_d, want.vel_d, want.n, FRAMES, NBODY_DT, NBODY_SOFTENING);
    }
    const char *png = file_of("png", interop), *positions = file_of("positions", interop);
    const char *extra[] = {"--dump-vertices", positions, "--bodies", "10000", NULL};
    /* One path spells it --bodies=N. */
    if (strcmp(interop, "host") == 0) {
        extra[2] = "--bodies=10000";
        extra[3] = NULL;
    }
    run_demo_headless(binary, &(run_demo_args){.interop = interop, .width = W, .height = H,
                                               .frames = FRAMES, .screenshot = png,
                                               .extra = extra});
    float *got = run_demo_read_floats(positions, (size_t)DEMO_BODIES * 4);
    check_vectors("positions", got, want.pos_d, want.pos, DEMO_BODIES);
    free(got);
    free(run_demo_read_png(png, W, H));
}

static void paths_agree(void **state)
{
    (void)state;
    const char *first = run_demo_interops[0];
    uint8_t *picture = run_demo_read_png(file_of("png", first), W, H);
    float *first_pos = run_demo_read_floats(file_of("positions", first), (size_t)DEMO_BODIES * 4);
    for (const char *const *p = run_demo_interops + 1; *p; p++) {
        char what[64];
        snprintf(what, sizeof what, "--interop %s against --interop %s", *p, first);
        run_demo_expect_same_png(file_of("png", *p), file_of("png", first), W, H, what);
        float *pos = run_demo_read_floats(file_of("positions", *p), (size_t)DEMO_BODIES * 4);
        if (memcmp(pos, first_pos, (size_t)DEMO_BODIES * 4 * sizeof(float)) != 0)
            fail_msg("--interop %s and --interop %s computed different positions", *p, first);
        free(pos);
    }
    long bright = bright_pixels(picture, W, H);
    printf("# %ld of %d pixels are bright\n", bright, W * H);
    free(picture);
    free(first_pos);
    /* Two galaxies: many bright pixels, but mostly dark sky. */
    assert_true(bright >= 100);
    assert_true(bright < W * H / 2);
}

static void default_bodies(void **state)
{
    (void)state;
    const char *png = run_demo_path("nbody-default.png");
    int rc = run_demo(binary, (const char *const[]){"--headless", "--frames", "2", "--size",
                                                     "256x256", "--screenshot", png, NULL});
    if (rc != 0)
        fail_msg("cugl-nbody with the default bodies exited with %d", rc);
    uint8_t *rgba = run_demo_read_png(png, W, H);
    long bright = bright_pixels(rgba, W, H);
    printf("# 65536 bodies: %ld of %d pixels are bright\n", bright, W * H);
    free(rgba);
    assert_true(bright >= 100);
    assert_true(bright < W * H / 2);
}

/* --bench on the shared path with the turns waiting on the GPU (the
 * default where Vulkan is) and on the CPU: "ms a step" is the kernel's own
 * time either way. Timed in the frames, the GPU waits put GL's work of the
 * frame in the step's events (2.66 against 2.29 ms a step of 65,536 bodies
 * on an H200); the figure now comes from steps timed after the run with
 * nothing else on the GPU. The fastest of them is compared: other tests on
 * the GPU can only slow one down. */
static double step_ms(bool cpu_waits, double *fastest)
{
    const char *out = run_demo_path("bench-step-%s.txt", cpu_waits ? "cpu-waits" : "gpu-waits");
    if (cpu_waits)
        setenv("CUGL_APP_CPU_WAITS", "1", 1);
    else
        unsetenv("CUGL_APP_CPU_WAITS");
    int rc = run_demo_to(binary,
                         (const char *const[]){"--headless", "--size", "320x240", "--frames",
                                               "20", "--interop", "shared", "--bodies", "65536",
                                               "--bench", NULL},
                         out);
    unsetenv("CUGL_APP_CPU_WAITS");
    if (rc != 0)
        fail_msg("--bench %s exited with %d", cpu_waits ? "(CPU waits)" : "(GPU waits)", rc);
    FILE *f = fopen(out, "r");
    assert_non_null(f);
    char line[1024];
    double ms = -1;
    *fastest = -1;
    while (fgets(line, sizeof line, f)) {
        const char *at = strstr(line, " steps: ");
        if (at && sscanf(at, " steps: %lf ms a step", &ms) == 1) {
            const char *fast = strstr(line, "the fastest ");
            if (!fast || sscanf(fast, "the fastest %lf ms", fastest) != 1)
                fail_msg("no fastest step in: %s", line);
            printf("# %s", line);
        }
    }
    fclose(f);
    if (!(ms > 0 && *fastest > 0 && *fastest <= ms))
        fail_msg("no step time in %s (%.4f, fastest %.4f)", out, ms, *fastest);
    return ms;
}

static void bench_step_is_the_kernels_own(void **state)
{
    (void)state;
    /* Up to 3 tries: a run may still share the GPU with another program
     * (a display's); the fault this holds slowed the GPU waits' every
     * time. */
    double gpu_fastest = 0, cpu_fastest = 0;
    for (int attempt = 1; attempt <= 3; attempt++) {
        double gpu = step_ms(false, &gpu_fastest), cpu = step_ms(true, &cpu_fastest);
        printf("# try %d, a step of 65536 bodies: %.4f ms (fastest %.4f) with GPU waits, "
               "%.4f ms (fastest %.4f) with CPU waits\n",
               attempt, gpu, gpu_fastest, cpu, cpu_fastest);
        if (fabs(gpu_fastest - cpu_fastest) <= 0.03 * fmin(gpu_fastest, cpu_fastest))
            return;
    }
    fail_msg("the step's own time depends on how the turns wait: %.4f ms (GPU waits) against "
             "%.4f ms (CPU waits), 3 times",
             gpu_fastest, cpu_fastest);
}

static void bad_bodies(void **state)
{
    (void)state;
    static const char *const bad[][3] = {
        {"--bodies", "0", NULL},        {"--bodies", "ten", NULL}, {"--bodies", NULL, NULL},
        {"--bodies=", NULL, NULL},      {"--bodies=-5", NULL, NULL},
        {"--bodies", "16777217", NULL}, {"--bodies", "--headless", NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = run_demo(binary, bad[i]);
        if (rc != 2)
            fail_msg("cugl-nbody %s %s exited with %d, not 2", bad[i][0],
                     bad[i][1] ? bad[i][1] : "", rc);
    }
    assert_int_equal(run_demo(binary, (const char *const[]){"--bodies", "5", "--help", NULL}), 0);
}

int main(int argc, char **argv)
{
    binary = run_demo_setup(argc, argv, "CUGL_NBODY_BINARY");
    dev = cugl_test_device();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(step_4096),   cmocka_unit_test(step_1000),
        cmocka_unit_test(step_1),
        cmocka_unit_test(slices_compute_the_same_bits),
        cmocka_unit_test(two_bodies_a_thread_compute_the_same_bits),
        run_demo_each_interop(path),
        cmocka_unit_test(paths_agree), cmocka_unit_test(default_bodies),
        cmocka_unit_test(bad_bodies),
    };
    const struct CMUnitTest timing[] = {
        cmocka_unit_test(bench_step_is_the_kernels_own),
    };
    const char *only_timing = getenv("CUGL_NBODY_TIMING");
    if (only_timing && strcmp(only_timing, "1") == 0)
        return run_demo_tests(timing, NULL, NULL);
    return run_demo_tests(tests, NULL, NULL);
}
