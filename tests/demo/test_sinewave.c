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
    return run_demo_path("sinewave-%s.%s", interop, what);
}

static void path(void **state)
{
    const char *interop = *state;
    const char *png = file_of("png", interop), *vertices = file_of("vertices", interop);
    const char *const extra[] = {"--dump-vertices", vertices, NULL};
    run_demo_headless(binary, &(run_demo_args){.interop = interop, .width = W, .height = H,
                                               .frames = FRAMES, .screenshot = png,
                                               .extra = extra});
    float *got = run_demo_read_floats(vertices, FLOATS);
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

static void paths_agree(void **state)
{
    (void)state;
    const char *first = run_demo_interops[0];
    uint8_t *picture = run_demo_read_png(file_of("png", first), W, H);
    for (const char *const *p = run_demo_interops + 1; *p; p++) {
        char what[64];
        snprintf(what, sizeof what, "--interop %s against --interop %s", *p, first);
        run_demo_expect_same_png(file_of("png", *p), file_of("png", first), W, H, what);
    }
    /* The surface covers much of the view: pixels unlike the top left
     * corner, which shows the background. */
    long surface = 0;
    for (int i = 0; i < W * H; i++)
        surface += memcmp(picture + i * 4, picture, 4) != 0;
    printf("# %ld of %d pixels show the surface\n", surface, W * H);
    free(picture);
    assert_true(surface > W * H / 5);
}

int main(int argc, char **argv)
{
    binary = run_demo_setup(argc, argv, "CUGL_SINEWAVE_BINARY");
    const struct CMUnitTest tests[] = {
        run_demo_each_interop(path),
        cmocka_unit_test(paths_agree),
    };
    return run_demo_tests(tests, NULL, NULL);
}
