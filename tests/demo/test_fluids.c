/*
 * cugl-fluids: its kernels launched one by one on small grids against the
 * CPU reference (fluids_reference.c), then the demo itself, headless.
 *
 *   projection   after the Jacobi solve and the gradient subtraction the
 *                velocity is divergence-free: max |div| falls more than
 *                1000-fold and below 1e-5 (velocities of order 1) after
 *                1000 sweeps, and more than 10-fold after the 50 a frame
 *                runs; the GPU's pressure and velocity are the CPU's
 *   constant     advecting a constant field keeps it constant within 1e-5,
 *                traces that leave the box by many cells included
 *   weights      the texture unit's bilinear weights, read back exactly
 *                through ramps and a checkerboard: the fractions and the
 *                far corner's product weight round to the nearest 1/256
 *   reference    one advection step against the CPU model of that filter
 *   paths        the demo on every --interop path: dye in the screenshot,
 *                black bars beside the square; identical screenshots
 *   flags        --grid and --vorticity: bad values exit 2
 *
 * usage: test_demo_fluids CUGL_FLUIDS_BINARY
 */
#include <math.h>
#include <stdlib.h>

#include "cugl_test.h"

#include "fluids_reference.h"
#include "run_demo.h"

extern const unsigned char cugl_fluids_fatbin[];
extern const size_t cugl_fluids_fatbin_size;

static const char *binary;
static cugl_device *dev;
static cugl_stream *stream;
static cugl_module *module;
static cugl_memory_resource *mr;

/* ---- helpers ---------------------------------------------------------------- */

static uint64_t rng_state;

static void seed(uint64_t s)
{
    rng_state = s;
}

/* Uniform in [lo, hi), from the top bits of a 64-bit LCG. */
static float uniform(float lo, float hi)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + (hi - lo) * (float)(rng_state >> 40) / 16777216.0f;
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    assert_non_null(p);
    return p;
}

static cugl_buffer *device_buffer(size_t bytes)
{
    cugl_buffer *b = NULL;
    assert_ok(cugl_memory_resource_allocate(&b, mr, bytes, stream));
    return b;
}

static cugl_kernel *kernel(const char *name)
{
    cugl_kernel *k = NULL;
    assert_ok(cugl_module_get_kernel(&k, module, name));
    return k;
}

static void launch(cugl_kernel *k, int n, void **args, size_t num_args)
{
    cugl_launch_config grid = {
        .grid = {((unsigned)n + 15) / 16, ((unsigned)n + 15) / 16, 1},
        .block = {16, 16, 1},
    };
    assert_ok(cugl_launch(stream, &grid, k, args, num_args));
}

/* ---- projection ------------------------------------------------------------- */

enum { FIELD_NOISE, FIELD_BLOBS };

/* Every cell random in [-1, 1), or three Gaussian blobs of velocity as the jets make. */
static void make_velocity(fluids_vec2 *v, int n, int kind)
{
    if (kind == FIELD_NOISE) {
        for (int i = 0; i < n * n; i++) {
            v[i].x = uniform(-1.0f, 1.0f);
            v[i].y = uniform(-1.0f, 1.0f);
        }
        return;
    }
    fluids_splats s = {.count = 3};
    for (int k = 0; k < 3; k++)
        s.splat[k] = (fluids_splat){.x = 0.25f + 0.25f * (float)k,
                                    .y = 0.3f + 0.2f * (float)k,
                                    .vx = uniform(-1.0f, 1.0f),
                                    .vy = uniform(-1.0f, 1.0f),
                                    .radius = 0.1f};
    fluids_vec4 unused = {0};
    for (int y = 0; y < n; y++)
        for (int x = 0; x < n; x++)
            fluids_splat_cell(&v[fluids_at(x, y, n)], &unused, x, y, n, &s);
}

static float max_abs(const float *v, size_t count)
{
    float m = 0.0f;
    for (size_t i = 0; i < count; i++)
        m = fmaxf(m, fabsf(v[i]));
    return m;
}

/* The largest difference between two float arrays, and how many are equal. */
static float max_diff(const float *a, const float *b, size_t count, size_t *equal)
{
    float m = 0.0f;
    *equal = 0;
    for (size_t i = 0; i < count; i++) {
        if (a[i] == b[i])
            (*equal)++;
        float d = fabsf(a[i] - b[i]);
        m = d > m || d != d ? d : m;
    }
    return m;
}

/*
 * The divergence, `sweeps` Jacobi sweeps from p = 0 and the gradient
 * subtraction on the GPU, at two points: after the frame's sweeps and
 * after `sweeps`. Each is held to the CPU reference of the same
 * arithmetic and its divergence measured on the CPU.
 */
static void check_projection(int n, int kind, int sweeps)
{
    size_t cells = (size_t)n * n;
    fluids_vec2 *v = xcalloc(cells, sizeof *v), *got_v = xcalloc(cells, sizeof *v);
    fluids_vec2 *want_v = xcalloc(cells, sizeof *v);
    float *div = xcalloc(cells, 4), *want_p = xcalloc(cells, 4), *scratch = xcalloc(cells, 4);
    float *got_p = xcalloc(cells, 4), *got_div = xcalloc(cells, 4);
    make_velocity(v, n, kind);
    float before = fluids_reference_max_divergence(v, n);

    cugl_buffer *velocity = device_buffer(cells * sizeof *v), *out = device_buffer(cells * 8);
    cugl_buffer *div_buf = device_buffer(cells * 4), *p[2] = {device_buffer(cells * 4),
                                                             device_buffer(cells * 4)};
    const float zero = 0.0f;
    assert_ok(cugl_buffer_fill(p[0], &zero, 4, stream));
    run_demo_upload(velocity, v, stream);
    cugl_kernel *k_div = kernel("fluids_compute_divergence");
    cugl_kernel *k_jacobi = kernel("fluids_jacobi_sweep");
    cugl_kernel *k_grad = kernel("fluids_subtract_gradient");
    uint64_t hv = cugl_buffer_handle(velocity), ho = cugl_buffer_handle(out);
    uint64_t hdiv = cugl_buffer_handle(div_buf);
    float weight = FLUIDS_JACOBI_WEIGHT;
    launch(k_div, n, (void *[]){&hv, &hdiv, &n}, 3);
    run_demo_download(got_div, div_buf, stream);
    fluids_reference_divergence(div, v, n);
    size_t equal;
    float div_diff = max_diff(got_div, div, cells, &equal);
    printf("# %dx%d %s: divergence kernel against the CPU: %zu of %zu equal, worst by %.3g\n",
           n, n, kind == FIELD_NOISE ? "noise" : "blobs", equal, cells, (double)div_diff);
    assert_true(div_diff <= 1e-6f * max_abs(div, cells));

    int stops[2] = {FLUIDS_JACOBI_ITERATIONS, sweeps}, done = 0, now = 0;
    for (int s = 0; s < 2; s++) {
        for (; done < stops[s]; done++, now = 1 - now) {
            uint64_t from = cugl_buffer_handle(p[now]), to = cugl_buffer_handle(p[1 - now]);
            launch(k_jacobi, n, (void *[]){&from, &hdiv, &to, &n, &weight}, 5);
        }
        uint64_t hp = cugl_buffer_handle(p[now]);
        launch(k_grad, n, (void *[]){&hv, &hp, &ho, &n}, 4);
        run_demo_download(got_p, p[now], stream);
        run_demo_download(got_v, out, stream);

        /* The CPU: the same sweeps from the same start. */
        memset(want_p, 0, cells * 4);
        fluids_reference_jacobi(want_p, scratch, div, n, done, weight);
        fluids_reference_subtract_gradient(want_v, v, want_p, n);
        size_t p_equal, v_equal;
        float p_diff = max_diff(got_p, want_p, cells, &p_equal);
        float v_diff = max_diff(&got_v[0].x, &want_v[0].x, cells * 2, &v_equal);
        float after = fluids_reference_max_divergence(got_v, n);
        printf("# %dx%d %s, %d sweeps: max |div| %.4g -> %.4g (%.3g-fold); against the CPU: "
               "pressure %zu of %zu equal (worst by %.3g), velocity %zu of %zu (%.3g)\n",
               n, n, kind == FIELD_NOISE ? "noise" : "blobs", done, (double)before,
               (double)after, (double)(before / after), p_equal, cells, (double)p_diff, v_equal,
               cells * 2, (double)v_diff);
        /* Both sides round every operation the same way; allow a few ulps. */
        assert_true(p_diff <= 1e-6f * fmaxf(max_abs(want_p, cells), 1.0f));
        assert_true(v_diff <= 1e-6f);
        if (s == 0 && !(after * 10.0f < before))
            fail_msg("%d sweeps took max |div| only from %g to %g", done, (double)before,
                     (double)after);
        if (s == 1 && !(after * 1000.0f < before && after < 1e-5f))
            fail_msg("%d sweeps left max |div| at %g (from %g): want < 1/1000 of it and < 1e-5",
                     done, (double)after, (double)before);
    }
    cugl_kernel_release(k_div);
    cugl_kernel_release(k_jacobi);
    cugl_kernel_release(k_grad);
    cugl_buffer *bufs[] = {velocity, out, div_buf, p[0], p[1]};
    for (size_t i = 0; i < 5; i++)
        cugl_buffer_release(bufs[i]);
    void *blocks[] = {v, got_v, want_v, div, want_p, scratch, got_p, got_div};
    for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++)
        free(blocks[i]);
}

/*
 * Jacobi converges at (1 - 0.8 lambda) a sweep for each mode, lambda down
 * to sin^2(pi / n) ~ 0.0096 at n = 32 (0.9923 a sweep, 4.5e-4 after 1000):
 * noise, with every mode in it, and blobs like the jets' both lose more
 * than 1000-fold; what is left is a few float roundings of values of
 * order 1 (the CPU run of the same arithmetic leaves ~4e-6 at n = 32).
 */
static void projection_noise(void **state)
{
    (void)state;
    seed(1);
    check_projection(32, FIELD_NOISE, 1000);
}

/* An odd size: the mirrored neighbours two cells away land differently. */
static void projection_blobs_odd(void **state)
{
    (void)state;
    seed(2);
    check_projection(33, FIELD_BLOBS, 1000);
}

/* ---- advection ---------------------------------------------------------------- */

typedef struct advect_case {
    int n;
    float dt_cells, velocity_keep, dye_keep;
    const fluids_vec2 *velocity;
    const fluids_vec4 *dye;
    fluids_vec2 *velocity_out; /* what the GPU wrote */
    fluids_vec4 *dye_out;
} advect_case;

/*
 * One fluids_advect launch as the demo makes it: the fields in linear
 * memory, copied into float2 and float4 arrays that textures with linear
 * filtering and clamp addressing sample.
 */
static void gpu_advect(advect_case *c)
{
    int n = c->n;
    size_t cells = (size_t)n * n;
    cugl_buffer *velocity = device_buffer(cells * 8), *dye = device_buffer(cells * 16);
    cugl_buffer *velocity_out = device_buffer(cells * 8), *dye_out = device_buffer(cells * 16);
    run_demo_upload(velocity, c->velocity, stream);
    run_demo_upload(dye, c->dye, stream);
    cugl_array *arrays[2];
    cugl_texture *textures[2];
    for (int i = 0; i < 2; i++) {
        assert_ok(cugl_array_create(&arrays[i], dev,
                                    &(cugl_array_desc){.ndim = 2,
                                                       .shape = {(size_t)n, (size_t)n},
                                                       .format = CUGL_FORMAT_F32,
                                                       .num_channels = i == 0 ? 2 : 4}));
        assert_ok(cugl_array_copy_from_buffer(arrays[i], i == 0 ? velocity : dye, stream));
        assert_ok(cugl_texture_create(
            &textures[i], dev,
            &(cugl_resource_desc){.kind = CUGL_RESOURCE_ARRAY, .array = arrays[i]},
            &(cugl_texture_desc){.address_mode = {CUGL_ADDRESS_CLAMP, CUGL_ADDRESS_CLAMP},
                                 .filter_mode = CUGL_FILTER_LINEAR}));
    }
    uint64_t vt = cugl_texture_handle(textures[0]), dt = cugl_texture_handle(textures[1]);
    uint64_t hv = cugl_buffer_handle(velocity), hvo = cugl_buffer_handle(velocity_out);
    uint64_t hdo = cugl_buffer_handle(dye_out);
    cugl_kernel *k = kernel("fluids_advect");
    launch(k, n,
           (void *[]){&vt, &dt, &hv, &hvo, &hdo, &n, &c->dt_cells, &c->velocity_keep,
                      &c->dye_keep},
           9);
    run_demo_download(c->velocity_out, velocity_out, stream);
    run_demo_download(c->dye_out, dye_out, stream);
    cugl_kernel_release(k);
    for (int i = 0; i < 2; i++) {
        cugl_texture_release(textures[i]);
        cugl_array_release(arrays[i]);
    }
    cugl_buffer_release(velocity);
    cugl_buffer_release(dye);
    cugl_buffer_release(velocity_out);
    cugl_buffer_release(dye_out);
}

static float worst_off_constant(const float *field, size_t count, int channels,
                                const float *value)
{
    float worst = 0.0f;
    for (size_t i = 0; i < count; i++)
        for (int c = 0; c < channels; c++) {
            float d = fabsf(field[i * channels + c] - value[c]);
            worst = d > worst || d != d ? d : worst;
        }
    return worst;
}

/*
 * A constant velocity (every trace 5.3 cells long, so the traces of the
 * cells near two walls end outside the box) carrying constant dye; then
 * random velocities up to 8 cells a step carrying constant dye. Clamp
 * addressing gives the edge cell, the same constant, wherever a trace
 * ends; a bilinear blend of four equal texels is that value.
 */
static void advect_constant(void **state)
{
    (void)state;
    enum { N = 32 };
    static fluids_vec2 velocity[N * N], velocity_out[N * N];
    static fluids_vec4 dye[N * N], dye_out[N * N];
    const float v0[2] = {0.14f, -0.09f}, d0[4] = {0.25f, 0.5f, 0.75f, 1.0f};
    for (int i = 0; i < N * N; i++) {
        velocity[i] = (fluids_vec2){v0[0], v0[1]};
        dye[i] = (fluids_vec4){d0[0], d0[1], d0[2], d0[3]};
    }
    advect_case c = {.n = N, .dt_cells = 32.0f, .velocity_keep = 1.0f, .dye_keep = 1.0f,
                     .velocity = velocity, .dye = dye, .velocity_out = velocity_out,
                     .dye_out = dye_out};
    gpu_advect(&c);
    float wv = worst_off_constant(&velocity_out[0].x, N * N, 2, v0);
    float wd = worst_off_constant(&dye_out[0].x, N * N, 4, d0);
    printf("# constant velocity and dye: the worst cell off by %.3g (velocity), %.3g (dye)\n",
           (double)wv, (double)wd);
    assert_true(wv <= 1e-5f);
    assert_true(wd <= 1e-5f);

    seed(3);
    for (int i = 0; i < N * N; i++)
        velocity[i] = (fluids_vec2){uniform(-0.25f, 0.25f), uniform(-0.25f, 0.25f)};
    gpu_advect(&c);
    wd = worst_off_constant(&dye_out[0].x, N * N, 4, d0);
    printf("# random velocity, constant dye: the worst cell off by %.3g\n", (double)wd);
    assert_true(wd <= 1e-5f);
}

/*
 * The texture unit's weights themselves. Every cell of a 64 x 64 grid holds
 * dye (x, y, (x + y) mod 2, 1) and traces to a random interior point. With
 * weights w00, w10, w01, w11 on the texels (i, j), (i + 1, j), (i, j + 1),
 * (i + 1, j + 1), the first channel gives i + w10 + w11, the second
 * j + w01 + w11, the checkerboard w10 + w01 (or w00 + w11) and the last
 * their sum. The model (fluids_reference.h): the first two are i + a and
 * j + b, a and b the fractions rounded to the nearest 1/256; w11 is a b
 * rounded to the nearest 1/256; the sum is 1. Every sample must be so
 * (either rounding where a value is exactly halfway). Small integers times
 * multiples of 1/256 are exact in fp32, so the channels give the weights
 * exactly; the samples go to filter-weights.txt in the test's folder.
 */
static void filter_weights(void **state)
{
    (void)state;
    enum { N = 64 };
    static fluids_vec2 velocity[N * N], velocity_out[N * N];
    static fluids_vec4 dye[N * N], dye_out[N * N];
    seed(5);
    for (int y = 0; y < N; y++)
        for (int x = 0; x < N; x++) {
            int i = fluids_at(x, y, N);
            velocity[i] = (fluids_vec2){(float)x + 0.5f - uniform(2.0f, N - 2.0f),
                                        (float)y + 0.5f - uniform(2.0f, N - 2.0f)};
            dye[i] = (fluids_vec4){(float)x, (float)y, (float)((x + y) & 1), 1.0f};
        }
    advect_case c = {.n = N, .dt_cells = 1.0f, .velocity_keep = 1.0f, .dye_keep = 1.0f,
                     .velocity = velocity, .dye = dye, .velocity_out = velocity_out,
                     .dye_out = dye_out};
    gpu_advect(&c);

    FILE *log = fopen(run_demo_path("filter-weights.txt"), "w");
    long bad[3] = {0}, ties_up[3] = {0}, ties[3] = {0}, shown = 0;
    double sum_err = 0.0;
    for (int y = 0; y < N; y++)
        for (int x = 0; x < N; x++) {
            int i = fluids_at(x, y, N);
            fluids_vec2 p = fluids_backtrace(x, y, velocity[i], 1.0f);
            const double coord[2] = {p.x, p.y}, got[2] = {dye_out[i].x, dye_out[i].y};
            double want[3], hw[3]; /* in steps of 1/256: a, b, then w11 */
            int lower[2];
            for (int a = 0; a < 2; a++) {
                double t = coord[a] - 0.5;
                lower[a] = (int)floor(t);
                want[a] = (t - floor(t)) * 256.0;
                hw[a] = (got[a] - lower[a]) * 256.0;
            }
            /* The checkerboard: 1 at (i, j) when i + j is odd. */
            double board = dye_out[i].z, sum_ab = (hw[0] + hw[1]) / 256.0;
            double w11 = ((lower[0] + lower[1]) & 1) ? (board - 1.0 + sum_ab) / 2.0
                                                     : (sum_ab - board) / 2.0;
            hw[2] = w11 * 256.0;
            want[2] = hw[0] * hw[1] / 256.0;
            if (log)
                fprintf(log, "%.9g %.9g  a %.6f -> %.6f  b %.6f -> %.6f  ab %.6f -> %.6f\n",
                        coord[0], coord[1], want[0], hw[0], want[1], hw[1], want[2], hw[2]);
            for (int q = 0; q < 3; q++) {
                double k = floor(want[q]);
                bool tie = want[q] - k == 0.5;
                ties[q] += tie;
                ties_up[q] += tie && hw[q] == k + 1;
                bool ok = tie ? hw[q] == k || hw[q] == k + 1 : hw[q] == floor(want[q] + 0.5);
                if (!ok) {
                    bad[q]++;
                    if (shown++ < 6)
                        printf("#   (%.9g, %.9g): %s is %.6f steps of 1/256, the hardware "
                               "took %.6f\n",
                               coord[0], coord[1], q == 0 ? "a" : q == 1 ? "b" : "a b", want[q],
                               hw[q]);
                }
            }
            sum_err = fmax(sum_err, fabs((double)dye_out[i].w - 1.0));
        }
    if (log)
        fclose(log);
    static const char *const names[3] = {"a (x)", "b (y)", "a b"};
    for (int q = 0; q < 3; q++)
        printf("# %s: %ld of %d samples off the nearest 1/256; %ld ties, %ld of them rounded "
               "up\n",
               names[q], bad[q], N * N, ties[q], ties_up[q]);
    printf("# the weights' sum is off 1 by %.3g at worst\n", sum_err);
    if (bad[0] || bad[1] || bad[2] || sum_err != 0.0)
        fail_msg("%ld, %ld and %ld samples of a, b and a b are not as the model rounds them; "
                 "the weights' sum is off 1 by %g",
                 bad[0], bad[1], bad[2], sum_err);
}

/*
 * One step of random velocity (traces up to 3 cells, leaving the box near
 * the walls) and random dye, with the demo's keep factors, against the CPU
 * model of the hardware filter (fluids_reference.h), every tie rounded
 * whichever way comes closer. The model gives the hardware's weights; the
 * hardware's blend of four fp32 products in an order of its own and the
 * keep factor's rounding leave an ulp or two of the largest texel (an H200
 * was off by 6e-8 of it at worst): 1e-6 of the field's largest value (8 to
 * 16 ulps) covers them. The quantisation moves a blend by up to ~1/512 of
 * the texels' spread, thousands of times that: the exact bilinear blend is
 * reported to show how far off it is.
 */
static void check_advect_reference(int n)
{
    size_t cells = (size_t)n * n;
    fluids_vec2 *velocity = xcalloc(cells, 8), *velocity_out = xcalloc(cells, 8);
    fluids_vec4 *dye = xcalloc(cells, 16), *dye_out = xcalloc(cells, 16);
    float dt_cells = (float)n / 60.0f;
    float reach = 3.0f / dt_cells; /* a velocity that moves a trace 3 cells */
    for (size_t i = 0; i < cells; i++) {
        velocity[i] = (fluids_vec2){uniform(-reach, reach), uniform(-reach, reach)};
        dye[i] = (fluids_vec4){uniform(0, 1), uniform(0, 1), uniform(0, 1), uniform(0, 1)};
    }
    advect_case c = {.n = n, .dt_cells = dt_cells, .velocity_keep = FLUIDS_VELOCITY_KEEP,
                     .dye_keep = FLUIDS_DYE_KEEP, .velocity = velocity, .dye = dye,
                     .velocity_out = velocity_out, .dye_out = dye_out};
    gpu_advect(&c);

    const float scale[2] = {reach, 1.0f}; /* the fields' largest values */
    const int channels[2] = {2, 4};
    float worst[2][2] = {{0}}; /* [hardware, exact][velocity, dye], of scale */
    long off = 0, with_ties = 0;
    int worst_x = 0, worst_y = 0;
    for (int y = 0; y < n; y++)
        for (int x = 0; x < n; x++) {
            int i = fluids_at(x, y, n);
            fluids_vec2 p = fluids_backtrace(x, y, velocity[i], dt_cells);
            unsigned ties = fluids_reference_ties(p.x, p.y);
            with_ties += ties != 0;
            const float *got[2] = {&velocity_out[i].x, &dye_out[i].x};
            for (int m = 0; m < 2; m++) {
                float err[2] = {INFINITY, INFINITY};
                for (unsigned t = 0; t < FLUIDS_TIE_CHOICES; t++) {
                    if (t & ~ties)
                        continue;
                    fluids_vec2 wv;
                    fluids_vec4 wd;
                    fluids_reference_advect_cell(
                        &wv, &wd, velocity, dye, x, y, n, dt_cells, FLUIDS_VELOCITY_KEEP,
                        FLUIDS_DYE_KEEP, m == 0 ? FLUIDS_FILTER_HARDWARE : FLUIDS_FILTER_EXACT, t);
                    const float *want[2] = {&wv.x, &wd.x};
                    for (int f = 0; f < 2; f++) {
                        float e = 0.0f;
                        for (int ch = 0; ch < channels[f]; ch++) {
                            float d = fabsf(got[f][ch] - want[f][ch]) / scale[f];
                            e = d > e || d != d ? d : e;
                        }
                        err[f] = fminf(err[f], e);
                    }
                }
                if (m == 0 && !(err[0] <= 1e-6f && err[1] <= 1e-6f))
                    off++;
                if (m == 0 && fmaxf(err[0], err[1]) > fmaxf(worst[0][0], worst[0][1])) {
                    worst_x = x;
                    worst_y = y;
                }
                worst[m][0] = fmaxf(worst[m][0], err[0]);
                worst[m][1] = fmaxf(worst[m][1], err[1]);
            }
        }
    printf("# %dx%d: %ld of %zu cells off the hardware model by more than 1e-6; the worst "
           "(%d, %d) by %.3g (velocity), %.3g (dye) of the field's largest value; the exact "
           "bilinear blend is off by %.3g, %.3g; %ld traces meet a tie\n",
           n, n, off, cells, worst_x, worst_y, (double)worst[0][0], (double)worst[0][1],
           (double)worst[1][0], (double)worst[1][1], with_ties);
    free(velocity);
    free(velocity_out);
    free(dye);
    free(dye_out);
    if (off)
        fail_msg("%ld of %zu cells are off the hardware filter's model by more than 1e-6", off,
                 cells);
}

static void advect_reference(void **state)
{
    (void)state;
    seed(4);
    check_advect_reference(32);
    check_advect_reference(37);
}

/* ---- the demo ------------------------------------------------------------------ */

enum { W = 320, H = 200, SIDE = 200, FRAMES = 30 };

static const char *screenshot_of(const char *interop)
{
    return run_demo_path("fluids-%s.png", interop);
}

/*
 * 30 frames of a 128 x 128 grid shown in the 200 x 200 square of a
 * 320 x 200 frame: black beside the square, and dye in it (the jets run
 * from the first frame).
 */
static void path(void **state)
{
    const char *interop = *state;
    const char *png = screenshot_of(interop);
    const char *const extra[] = {"--grid", "128", NULL};
    run_demo_headless(binary, &(run_demo_args){.interop = interop, .width = W, .height = H,
                                               .frames = FRAMES, .screenshot = png,
                                               .extra = extra});
    uint8_t *rgba = run_demo_read_png(png, W, H);
    long bars_lit = 0, dyed = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            const uint8_t *px = rgba + ((size_t)y * W + x) * 4;
            bool inside = x >= (W - SIDE) / 2 && x < (W + SIDE) / 2;
            if (!inside && (px[0] | px[1] | px[2]))
                bars_lit++;
            if (inside && (px[0] > 60 || px[1] > 60 || px[2] > 60))
                dyed++;
        }
    free(rgba);
    printf("# --interop %s: %ld of %d pixels in the square dyed, %ld lit beside it\n", interop,
           dyed, SIDE * SIDE, bars_lit);
    if (bars_lit)
        fail_msg("--interop %s: %ld pixels beside the square are not black", interop, bars_lit);
    if (dyed * 50 < SIDE * SIDE)
        fail_msg("--interop %s: only %ld pixels show dye: a blank picture", interop, dyed);
}

/* The same picture on every path. */
static void paths_agree(void **state)
{
    (void)state;
    const char *first = run_demo_interops[0];
    uint8_t *want = run_demo_read_png(screenshot_of(first), W, H);
    for (const char *const *p = run_demo_interops + 1; *p; p++) {
        uint8_t *rgba = run_demo_read_png(screenshot_of(*p), W, H);
        bool same = memcmp(want, rgba, (size_t)W * H * 4) == 0;
        free(rgba);
        if (!same)
            fail_msg("--interop %s and --interop %s give different pictures", *p, first);
    }
    free(want);
}

static void bad_flags(void **state)
{
    (void)state;
    static const char *const cases[][3] = {
        {"--grid", "8", NULL},         {"--grid", "5000", NULL}, {"--grid=12x", NULL, NULL},
        {"--grid", NULL, NULL},        {"--vorticity", "-1", NULL},
        {"--vorticity=nan", NULL, NULL}, {"--bogus", NULL, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *args[] = {"--headless", cases[i][0], cases[i][1], NULL};
        int rc = run_demo(binary, args);
        if (rc != 2)
            fail_msg("cugl-fluids %s %s exited with %d, not 2", cases[i][0],
                     cases[i][1] ? cases[i][1] : "", rc);
    }
}

int main(int argc, char **argv)
{
    binary = run_demo_setup(argc, argv, "CUGL_FLUIDS_BINARY");
    dev = cugl_test_device();
    if (cugl_stream_create(&stream, dev, NULL) != CUGL_OK ||
        cugl_module_load_data(&module, dev, cugl_fluids_fatbin, cugl_fluids_fatbin_size) !=
            CUGL_OK ||
        cugl_device_memory_resource_create(&mr, dev, NULL) != CUGL_OK) {
        printf("Bail out! %s\n", cugl_last_error());
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(projection_noise),
        cmocka_unit_test(projection_blobs_odd),
        cmocka_unit_test(advect_constant),
        cmocka_unit_test(filter_weights),
        cmocka_unit_test(advect_reference),
        run_demo_each_interop(path),
        cmocka_unit_test(paths_agree),
        cmocka_unit_test(bad_flags),
    };
    int rc = run_demo_tests(tests, NULL, NULL);
    cugl_stream_sync(stream);
    cugl_memory_resource_release(mr);
    cugl_module_release(module);
    cugl_stream_release(stream);
    return rc;
}
