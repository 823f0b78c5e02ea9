/*
 * The CPU references the demo tests hold the GPU to, checked against what
 * the math says independently of how it is computed: the sinewave against
 * its formula in double precision and its normals against the surface's
 * finite-difference tangents; the julia image against the set's symmetry
 * z -> -z, and its colouring for smoothness. No GPU needed.
 */
#include <math.h>

#include "cugl_test.h"

#include "julia_math.h"
#include "reference.h"
#include "sinewave_math.h"

static void sinewave_matches_its_formula(void **state)
{
    (void)state;
    const int n = SINEWAVE_N;
    const float t = demo_reference_time(2);
    assert_true(t == 2.0f / 60.0f);
    float *v = malloc((size_t)n * n * SINEWAVE_VERTEX_FLOATS * sizeof *v);
    assert_non_null(v);
    sinewave_reference(v, n, t);
    const double a = SINEWAVE_AMPLITUDE, k = SINEWAVE_FREQUENCY;
    double worst_y = 0, worst_n = 0, worst_len = 0;
    for (int j = 0; j < n; j++) {
        for (int i = 0; i < n; i++) {
            const float *p = v + ((size_t)j * n + i) * SINEWAVE_VERTEX_FLOATS;
            double x = -1.0 + 2.0 * i / (n - 1), z = -1.0 + 2.0 * j / (n - 1);
            assert_true(fabs(p[0] - x) < 1e-6 && fabs(p[2] - z) < 1e-6);
            double y = a * sin(k * x + t) * cos(k * z + t);
            worst_y = fmax(worst_y, fabs(p[1] - y));
            /* The normal is perpendicular to both tangents, found by central
             * differences of the height, and has unit length. */
            const double h = 1e-4;
            double dydx = (a * sin(k * (x + h) + t) - a * sin(k * (x - h) + t)) / (2 * h) *
                          cos(k * z + t);
            double dydz = a * sin(k * x + t) *
                          (cos(k * (z + h) + t) - cos(k * (z - h) + t)) / (2 * h);
            double along_x = p[3] + p[4] * dydx, along_z = p[5] + p[4] * dydz;
            worst_n = fmax(worst_n, fmax(fabs(along_x), fabs(along_z)));
            double len = sqrt((double)p[3] * p[3] + (double)p[4] * p[4] + (double)p[5] * p[5]);
            worst_len = fmax(worst_len, fabs(len - 1.0));
            assert_true(p[4] > 0.0f); /* the normals point up */
        }
    }
    free(v);
    printf("# sinewave: height off by %.2g, normal off the tangents by %.2g, length by %.2g\n",
           worst_y, worst_n, worst_len);
    assert_true(worst_y < 1e-6);
    assert_true(worst_n < 1e-5);
    assert_true(worst_len < 1e-6);
}

static int compare_rgba(const void *a, const void *b)
{
    return memcmp(a, b, 4);
}

static void julia_is_symmetric_and_smooth(void **state)
{
    (void)state;
    enum { W = 160, H = 120 };
    uint8_t *img = malloc((size_t)W * H * 4);
    assert_non_null(img);
    julia_reference(img, W, H, 2);
    for (int y = 0; y < H; y++) {
        for (int x = 0; x < W; x++) {
            /* z -> -z maps a Julia set onto itself, and the default view is
             * centred on 0: pixels (x, y) and (W-1-x, H-1-y) sample z0 and
             * -z0 exactly, iterate alike and get the same colour. */
            const uint8_t *p = img + ((size_t)y * W + x) * 4;
            const uint8_t *q = img + ((size_t)(H - 1 - y) * W + (W - 1 - x)) * 4;
            if (memcmp(p, q, 4) != 0)
                fail_msg("pixels (%d, %d) and (%d, %d) differ", x, y, W - 1 - x, H - 1 - y);
            assert_int_equal(p[3], 255);
        }
    }
    /* Smooth colouring: many colours; bands of whole iteration counts would
     * give at most JULIA_MAX_ITER + 1. */
    qsort(img, (size_t)W * H, 4, compare_rgba);
    size_t colours = 1;
    for (size_t i = 1; i < (size_t)W * H; i++)
        colours += memcmp(img + i * 4, img + (i - 1) * 4, 4) != 0;
    printf("# julia: %zu colours in %d pixels\n", colours, W * H);
    assert_true(colours > 500);
    free(img);
}

static void julia_parameters(void **state)
{
    (void)state;
    julia_view view = julia_view_default();
    julia_params p0 = julia_params_for(&view, 0, 300, 200);
    /* The shorter side spans JULIA_SPAN: 3.2 / 200 per pixel. */
    assert_true(p0.scale == JULIA_SPAN / 200.0f);
    assert_true(p0.half_width == 150.0f && p0.half_height == 100.0f);
    assert_true(fabsf(hypotf(p0.c_re, p0.c_im) - JULIA_C_RADIUS) < 1e-6f);
    assert_true(fabsf(atan2f(p0.c_im, p0.c_re) - JULIA_C_ANGLE0) < 1e-5f);
    /* c moves every frame and comes back after a period. */
    julia_params p1 = julia_params_for(&view, 1, 300, 200);
    julia_params again = julia_params_for(&view, JULIA_PERIOD_FRAMES, 300, 200);
    assert_true(p1.c_re != p0.c_re || p1.c_im != p0.c_im);
    assert_memory_equal(&again, &p0, sizeof p0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sinewave_matches_its_formula),
        cmocka_unit_test(julia_is_symmetric_and_smooth),
        cmocka_unit_test(julia_parameters),
    };
    return cugl_test_run(tests);
}
