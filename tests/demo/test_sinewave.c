/*
 * cugl-sinewave, run headless for 3 frames at 256x256 on each --interop
 * path: the vertex buffer GL holds after the last frame (--dump-vertices)
 * against the CPU reference of the same time, every one of the 512 x 512
 * vertices' 6 floats within 1e-5; and the same screenshot from every path,
 * one that shows the surface, not only the background.
 *
 * usage: test_demo_sinewave CUGL_SINEWAVE_BINARY
 */
#include <math.h>
#include <stdlib.h>

#include "cugl_test.h"

#include "reference.h"
#include "run_demo.h"
#include "sinewave_math.h"

enum { W = 256, H = 256, FRAMES = 3 };
enum { FLOATS = SINEWAVE_N * SINEWAVE_N * SINEWAVE_VERTEX_FLOATS };

static const char *binary;

static const char *file_of(const char *what, const char *interop)
{
    static char name[64];
    snprintf(name, sizeof name, "sinewave-%s.%s", interop, what);
    return run_demo_path(name);
}

static float *read_floats(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    float *v = malloc((size_t)FLOATS * sizeof *v + 1);
    assert_non_null(v);
    size_t n = fread(v, 1, (size_t)FLOATS * sizeof *v + 1, f);
    fclose(f);
    if (n != (size_t)FLOATS * sizeof *v)
        fail_msg("%s has %zu bytes, not %zu", path, n, (size_t)FLOATS * sizeof *v);
    return v;
}

static void check_path(const char *interop)
{
    const char *png = file_of("png", interop), *vertices = file_of("vertices", interop);
    int rc = run_demo(binary, (const char *const[]){"--headless", "--frames", "3", "--size",
                                                     "256x256", "--screenshot", png,
                                                     "--dump-vertices", vertices, "--interop",
                                                     interop, NULL});
    if (rc != 0)
        fail_msg("cugl-sinewave --interop %s exited with %d", interop, rc);
    float *got = read_floats(vertices);
    float *want = malloc((size_t)FLOATS * sizeof *want);
    assert_non_null(want);
    sinewave_reference(want, SINEWAVE_N, demo_reference_time(FRAMES - 1));
    double worst = 0;
    long worst_at = 0, off = 0;
    for (long i = 0; i < FLOATS; i++) {
        double d = fabs((double)got[i] - (double)want[i]);
        if (!(d <= 1e-5)) /* NaN too */
            off++;
        if (!(d <= worst)) {
            worst = d;
            worst_at = i;
        }
    }
    long v = worst_at / SINEWAVE_VERTEX_FLOATS;
    printf("# --interop %s: worst difference %.3g at vertex (%ld, %ld) float %ld: got %.9g, "
           "want %.9g\n",
           interop, worst, v % SINEWAVE_N, v / SINEWAVE_N, worst_at % SINEWAVE_VERTEX_FLOATS,
           (double)got[worst_at], (double)want[worst_at]);
    free(got);
    free(want);
    if (off)
        fail_msg("%ld of %d floats differ from the reference by more than 1e-5", off, FLOATS);
    free(run_demo_read_png(png, W, H));
}

static void map_path(void **state)
{
    (void)state;
    check_path("map");
}

static void shared_path(void **state)
{
    (void)state;
    check_path("shared");
}

static void host_path(void **state)
{
    (void)state;
    check_path("host");
}

static void paths_agree(void **state)
{
    (void)state;
    uint8_t *map = run_demo_read_png(file_of("png", "map"), W, H);
    for (const char *const *p = (const char *const[]){"shared", "host", NULL}; *p; p++) {
        char what[64], reference[512];
        snprintf(what, sizeof what, "--interop %s against --interop map", *p);
        snprintf(reference, sizeof reference, "%s", file_of("png", "map"));
        run_demo_expect_same_png(file_of("png", *p), reference, W, H, what);
    }
    /* The surface covers much of the view: pixels unlike the top left
     * corner, which shows the background. */
    long surface = 0;
    for (int i = 0; i < W * H; i++)
        surface += memcmp(map + i * 4, map, 4) != 0;
    printf("# %ld of %d pixels show the surface\n", surface, W * H);
    free(map);
    assert_true(surface > W * H / 5);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s CUGL_SINEWAVE_BINARY\n", argv[0]);
        return 99;
    }
    binary = argv[1];
    run_demo_setup();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(map_path),
        cmocka_unit_test(shared_path),
        cmocka_unit_test(host_path),
        cmocka_unit_test(paths_agree),
    };
    int rc = cugl_test_run(tests);
    run_demo_cleanup(rc != 0);
    return rc;
}
