/*
 * A demo with its CUDA work on another GPU (--compute-device 1, GL on
 * device 0): on the shared path (peer memory of the GL GPU) and the host
 * path, its picture is the one it draws with --compute-device 0, bit for
 * bit; --interop auto takes shared memory and says why; --interop map,
 * which maps for the GL GPU only, is refused. For nbody also --devices:
 * the positions after a few steps split over 0,1 and 1,0 are those of one
 * device, bit for bit, and --devices with the host path is refused.
 * Skipped (77) with fewer than two CUDA devices.
 *
 * usage: test_demo_compute_device CUGL_DEMO_BINARY
 */
#include <stdlib.h>
#include <string.h>

#include "cugl_test.h"

#include "run_demo.h"

enum { W = 160, H = 120, FRAMES = 3, BODIES = 5000 };

static const char *binary;
static bool nbody; /* the binary is cugl-nbody */

static const char *shot(const char *interop, const char *devices)
{
    return run_demo_path("%s-%s.png", interop, devices);
}

/* A headless run with CUDA on `devices` (a --compute-device, or with a
 * comma a --devices), writing its screenshot and, for nbody, its positions. */
static void run_on(const char *interop, const char *devices)
{
    const char *extra[8] = {strchr(devices, ',') ? "--devices" : "--compute-device", devices};
    int n = 2;
    if (nbody) {
        extra[n++] = "--bodies";
        extra[n++] = "5000"; /* BODIES */
        extra[n++] = "--dump-vertices";
        extra[n++] = run_demo_path("%s-%s.positions", interop, devices);
    }
    run_demo_headless(binary, &(run_demo_args){.interop = interop, .width = W, .height = H,
                                               .frames = FRAMES,
                                               .screenshot = shot(interop, devices),
                                               .extra = extra});
}

static void same_positions(const char *interop, const char *devices, const char *reference)
{
    float *want = run_demo_read_floats(run_demo_path("%s-%s.positions", interop, reference),
                                       (size_t)BODIES * 4);
    float *got = run_demo_read_floats(run_demo_path("%s-%s.positions", interop, devices),
                                      (size_t)BODIES * 4);
    if (memcmp(got, want, (size_t)BODIES * 4 * sizeof(float)) != 0)
        fail_msg("--interop %s: the positions with CUDA on %s differ from those on %s", interop,
                 devices, reference);
    free(want);
    free(got);
}

/* The same picture with CUDA on device 1 as on device 0. */
static void on_device_1(const char *interop)
{
    run_on(interop, "0");
    run_on(interop, "1");
    char what[96];
    snprintf(what, sizeof what, "--interop %s --compute-device 1 against 0", interop);
    run_demo_expect_same_png(shot(interop, "1"), shot(interop, "0"), W, H, what);
    if (nbody)
        same_positions(interop, "1", "0");
}

static void shared_on_device_1(void **state)
{
    (void)state;
    on_device_1("shared");
}

static void host_on_device_1(void **state)
{
    (void)state;
    on_device_1("host");
}

/* Whether the file holds `text`. */
static bool file_holds(const char *path, const char *text)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char buf[16384];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strstr(buf, text) != NULL;
}

static void auto_takes_peer_memory(void **state)
{
    (void)state;
    const char *out = run_demo_path("auto.txt");
    char size[32];
    snprintf(size, sizeof size, "%dx%d", W, H);
    int rc = run_demo_to(binary,
                         (const char *const[]){"--headless", "--frames", "1", "--size", size,
                                               "--compute-device", "1", "--screenshot",
                                               run_demo_path("auto.png"), NULL},
                         out);
    assert_int_equal(rc, 0);
    if (!file_holds(out, "--interop auto: shared: CUDA on device 1 writes memory of the GL GPU "
                         "(device 0"))
        fail_msg("%s", "--interop auto with --compute-device 1 did not say it chose shared "
                       "memory over the peer path");
    if (!file_holds(out, "CUDA on device 1 ("))
        fail_msg("%s", "the demo did not name the device CUDA runs on");
}

static void map_is_refused(void **state)
{
    (void)state;
    int rc = run_demo(binary, (const char *const[]){"--headless", "--frames", "1",
                                                     "--interop", "map", "--compute-device", "1",
                                                     NULL});
    assert_int_equal(rc, 2);
}

/* nbody: a step split over two GPUs, in either order, equals one GPU's. */
static void split_over_devices(void **state)
{
    (void)state;
    run_on("shared", "0,1");
    run_on("shared", "1,0");
    same_positions("shared", "0,1", "0");
    same_positions("shared", "1,0", "0");
    run_demo_expect_same_png(shot("shared", "0,1"), shot("shared", "0"), W, H,
                             "--devices 0,1 against --compute-device 0");
    int rc = run_demo(binary, (const char *const[]){"--headless", "--frames", "1",
                                                     "--interop", "host", "--devices", "0,1",
                                                     NULL});
    assert_int_equal(rc, 2);
}

int main(int argc, char **argv)
{
    binary = run_demo_setup(argc, argv, "CUGL_DEMO_BINARY");
    const char *base = strrchr(binary, '/');
    nbody = strcmp(base ? base + 1 : binary, "cugl-nbody") == 0;
    int count = 0;
    if (cugl_device_count(&count) != CUGL_OK || count < 2)
        cugl_test_skip_all("these tests need two CUDA devices");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shared_on_device_1), cmocka_unit_test(host_on_device_1),
        cmocka_unit_test(auto_takes_peer_memory), cmocka_unit_test(map_is_refused),
        cmocka_unit_test(split_over_devices), /* the last: nbody only */
    };
    size_t count_tests = sizeof tests / sizeof tests[0] - (nbody ? 0 : 1);
    return run_demo__tests(tests, count_tests, NULL, NULL);
}
