/*
 * cugl-volume. First its kernels alone, launched here through cugl on a
 * 32^3 grid:
 *   - the density the fill kernel writes, against the C function (1e-5:
 *     sinf, cosf and expf may differ in the last bits);
 *   - the hardware's trilinear filter, read through the demo's texture
 *     setup: sweeps across single texels, where the weight the hardware
 *     used can be read off (always the fraction rounded to 8 bits), and
 *     random points in 3-D, clamped edges included, against the
 *     reference's emulation of the filter (volume_reference.h), every one
 *     within 1e-6;
 *   - 64x64 and 61x47 images of that grid (three views), from the render
 *     kernel through a surface into an array and into linear memory: the
 *     two byte for byte the same, and against the CPU ray march of the same
 *     grid, read back from the array: at most 1 pixel in 1000 may have a
 *     channel more than one level off.
 * Then the demo, headless, 3 frames at 160x96 on each --interop path,
 * against the CPU reference of its own 256^3 grid and camera (the same
 * bound), identical across the paths and not blank; and at 203x117 (partial
 * blocks, a shared texture's pitch longer than its rows).
 *
 * The bound: the march rounds as the kernel's does and the filter is
 * emulated, so samples differ only in their last bits (the order of the
 * filter's multiply-adds; for the demo's own grid, also the density's
 * sinf, cosf and expf). An 8-bit channel is the rounded sum of many
 * samples' shares: such a difference moves it by a level only where the
 * sum sits next to a rounding boundary, and at most one level. One pixel
 * in 1000 leaves room for such coincidences (an early ray termination one
 * step apart among them), not for a wrong ray, step, transfer function or
 * filter.
 *
 * usage: test_demo_volume CUGL_VOLUME_BINARY
 */
#include <math.h>
#include <stdlib.h>

#include <cugl/app.h>

#include "cugl_test.h"

#include "reference.h"
#include "run_demo.h"
#include "volume_reference.h"

extern const unsigned char cugl_volume_fatbin[];
extern const size_t cugl_volume_fatbin_size;

enum { GRID_N = 32, DEMO_W = 160, DEMO_H = 96, ODD_W = 203, ODD_H = 117, FRAMES = 3 };

static const char *binary;
static cugl_device *dev;
static cugl_stream *stream;
static cugl_memory_resource *mr;
static cugl_module *module;

/* ---- helpers ------------------------------------------------------------- */

static cugl_kernel *kernel(const char *name)
{
    cugl_kernel *k = NULL;
    assert_ok(cugl_module_get_kernel(&k, module, name));
    return k;
}

static cugl_buffer *device_buffer(size_t size)
{
    cugl_buffer *buf = NULL;
    assert_ok(cugl_memory_resource_allocate(&buf, mr, size, stream));
    return buf;
}

static void *xmalloc(size_t size)
{
    void *p = malloc(size);
    assert_non_null(p);
    return p;
}

/* A grid the fill kernel made, in a 3-D array under the demo's texture. */
typedef struct gpu_grid {
    int n;
    float *written;      /* what the kernel wrote into memory */
    float *texels;       /* what the array holds, read back */
    cugl_texture *texture;
} gpu_grid;

static gpu_grid grid;

static void make_grid(int n)
{
    size_t count = (size_t)n * n * n, size = count * sizeof(float);
    grid = (gpu_grid){.n = n, .written = xmalloc(size), .texels = xmalloc(size)};
    cugl_buffer *samples = device_buffer(size);
    uint64_t ptr = cugl_buffer_handle(samples);
    void *args[] = {&ptr, &n};
    unsigned blocks = (unsigned)(n + 7) / 8;
    cugl_kernel *fill = kernel("volume_fill");
    cugl_launch_config launch = {.grid = {blocks, blocks, blocks}, .block = {8, 8, 8}};
    assert_ok(cugl_launch(stream, &launch, fill, args, 2));
    cugl_array *array = NULL;
    assert_ok(cugl_array_create(&array, dev,
                                &(cugl_array_desc){.ndim = 3,
                                                   .shape = {(size_t)n, (size_t)n, (size_t)n},
                                                   .format = CUGL_FORMAT_F32,
                                                   .num_channels = 1}));
    assert_ok(cugl_array_copy_from_buffer(array, samples, stream));
    run_demo_download(grid.written, samples, stream);
    assert_ok(cugl_array_copy_to_host(grid.texels, size, array, stream));
    assert_ok(cugl_stream_sync(stream));
    /* As the demo makes it (demos/volume.c). */
    assert_ok(cugl_texture_create(
        &grid.texture, dev, &(cugl_resource_desc){.kind = CUGL_RESOURCE_ARRAY, .array = array},
        &(cugl_texture_desc){
            .address_mode = {CUGL_ADDRESS_CLAMP, CUGL_ADDRESS_CLAMP, CUGL_ADDRESS_CLAMP},
            .filter_mode = CUGL_FILTER_LINEAR,
            .read_mode = CUGL_READ_ELEMENT_TYPE,
            .normalized_coords = true,
        }));
    cugl_array_release(array);
    cugl_buffer_release(samples);
    cugl_kernel_release(fill);
}

static int group_setup(void **state)
{
    (void)state;
    assert_ok(cugl_stream_create(&stream, dev, NULL));
    assert_ok(cugl_device_memory_resource_create(&mr, dev, NULL));
    assert_ok(cugl_module_load_data(&module, dev, cugl_volume_fatbin, cugl_volume_fatbin_size));
    make_grid(GRID_N);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    cugl_stream_sync(stream);
    cugl_texture_release(grid.texture);
    free(grid.written);
    free(grid.texels);
    cugl_module_release(module);
    cugl_memory_resource_release(mr);
    cugl_stream_release(stream);
    return 0;
}

/* The camera of the demo's frame `frame` at width x height (demos/volume.c). */
static volume_params demo_camera(long frame, int width, int height)
{
    cugl_app_camera cam;
    cugl_app_camera_init(&cam);
    cam.distance = VOLUME_CAMERA_DISTANCE;
    cam.yaw += volume_spin(demo_reference_time(frame));
    float eye[3];
    cugl_app_camera_eye(eye, &cam);
    return volume_params_for(eye, cam.target, cam.fov_y, width, height, VOLUME_STEP);
}

/* ---- the kernels alone ---------------------------------------------------- */

static void fill_writes_the_density(void **state)
{
    (void)state;
    int n = grid.n;
    size_t count = (size_t)n * n * n;
    float *want = xmalloc(count * sizeof *want);
    volume_reference_grid(want, n);
    double worst = 0;
    size_t worst_at = 0;
    for (size_t i = 0; i < count; i++) {
        double d = fabs((double)grid.written[i] - (double)want[i]);
        if (!(d <= worst)) {
            worst = d;
            worst_at = i;
        }
    }
    printf("# %d^3 grid: worst difference %.3g at texel %zu: got %.9g, want %.9g\n", n, worst,
           worst_at, (double)grid.written[worst_at], (double)want[worst_at]);
    free(want);
    if (!(worst <= 1e-5))
        fail_msg("the fill kernel's density differs from the reference by %g", worst);
    if (memcmp(grid.written, grid.texels, count * sizeof(float)) != 0)
        fail_msg("the 3-D array does not hold what was copied into it");
}

/* The hardware filter at `count` points (x, y, z normalized) into got[]. */
static void sample(const float *uvw, unsigned count, float *got)
{
    cugl_buffer *coords = device_buffer((size_t)count * 3 * sizeof(float));
    cugl_buffer *out = device_buffer((size_t)count * sizeof(float));
    run_demo_upload(coords, uvw, stream);
    uint64_t tex = cugl_texture_handle(grid.texture), in_ptr = cugl_buffer_handle(coords),
             out_ptr = cugl_buffer_handle(out);
    void *args[] = {&tex, &in_ptr, &out_ptr, &count};
    cugl_kernel *k = kernel("volume_sample");
    cugl_launch_config launch = {.grid = {(count + 255) / 256}, .block = {256}};
    assert_ok(cugl_launch(stream, &launch, k, args, 4));
    run_demo_download(got, out, stream);
    cugl_kernel_release(k);
    cugl_buffer_release(coords);
    cugl_buffer_release(out);
}

/* A small deterministic generator (xorshift32) for the sample points. */
static float next_unit(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return (float)(*s >> 8) * (1.0f / 16777216.0f);
}

enum { SWEEP_TEXELS = 6, SWEEP_STEPS = 700, RANDOM_POINTS = 20000 };

/*
 * Where to sweep: SWEEP_TEXELS intervals (x, x + 1) along x, spread over the
 * grid, whose two texels differ by at least 0.1, so that a weight can be
 * read off the result precisely.
 */
static void pick_sweeps(int at[][3])
{
    const int n = grid.n;
    long candidates = 0, picked = 0;
    for (int pass = 0; pass < 2; pass++) {
        long seen = 0;
        for (int k = 0; k < n; k++)
            for (int j = 0; j < n; j++)
                for (int i = 0; i + 1 < n; i++) {
                    size_t t = ((size_t)k * (size_t)n + (size_t)j) * (size_t)n + (size_t)i;
                    if (fabsf(grid.texels[t + 1] - grid.texels[t]) < 0.1f)
                        continue;
                    /* the second pass takes every (candidates / SWEEP_TEXELS)th */
                    if (pass == 1 && picked < SWEEP_TEXELS &&
                        seen == picked * (candidates / SWEEP_TEXELS)) {
                        at[picked][0] = i;
                        at[picked][1] = j;
                        at[picked][2] = k;
                        picked++;
                    }
                    seen++;
                }
        candidates = seen;
    }
    if (picked < SWEEP_TEXELS)
        fail_msg("the %d^3 grid has only %ld neighbouring texels 0.1 apart", n, candidates);
}

/*
 * Sweeps along x through texel intervals, y and z at texel centres (their
 * weights 0): the result is T0 + w (T1 - T0), and w is read off.
 */
static void filter_weights_are_8_bit(void **state)
{
    (void)state;
    const int n = grid.n;
    unsigned count = SWEEP_TEXELS * SWEEP_STEPS;
    float *uvw = xmalloc((size_t)count * 3 * sizeof(float)), *got = xmalloc(count * sizeof(float));
    int at[SWEEP_TEXELS][3];
    pick_sweeps(at);
    for (unsigned s = 0; s < SWEEP_TEXELS; s++)
        for (unsigned i = 0; i < SWEEP_STEPS; i++) {
            float *c = uvw + 3 * (s * SWEEP_STEPS + i);
            float x = (float)at[s][0] + 0.5f + (float)i / (float)SWEEP_STEPS;
            c[0] = x / (float)n;
            c[1] = ((float)at[s][1] + 0.5f) / (float)n;
            c[2] = ((float)at[s][2] + 0.5f) / (float)n;
        }
    sample(uvw, count, got);
    long rounded = 0, truncated = 0, other = 0, shown = 0;
    for (unsigned s = 0; s < SWEEP_TEXELS; s++) {
        size_t row = ((size_t)at[s][2] * (size_t)n + (size_t)at[s][1]) * (size_t)n;
        float t0 = grid.texels[row + (size_t)at[s][0]];
        float t1 = grid.texels[row + (size_t)at[s][0] + 1];
        for (unsigned i = 0; i < SWEEP_STEPS; i++) {
            const float *c = uvw + 3 * (s * SWEEP_STEPS + i);
            float x = c[0] * (float)n - 0.5f;
            float frac256 = (x - floorf(x)) * 256.0f;
            double w256 = ((double)got[s * SWEEP_STEPS + i] - t0) / ((double)t1 - t0) * 256.0;
            bool is_round = fabs(w256 - roundf(frac256)) < 0.05;
            bool is_trunc = fabs(w256 - floorf(frac256)) < 0.05;
            rounded += is_round;
            truncated += is_trunc;
            if (!is_round && !is_trunc)
                other++;
            if (!is_round && shown++ < 5)
                printf("# sweep %u (texels %d %d %d): texel x %.7f, fraction x 256 = %.4f, the "
                       "hardware's weight x 256 = %.4f\n",
                       s, at[s][0], at[s][1], at[s][2], (double)x, (double)frac256, w256);
        }
    }
    printf("# %u weights read off: %ld as rounded, %ld as truncated (the two agree where the "
           "fraction x 256 is whole), %ld neither\n",
           count, rounded, truncated, other);
    free(uvw);
    free(got);
    if (rounded != (long)count)
        fail_msg("the hardware's weights are the fraction rounded to 8 bits at only %ld of %u "
                 "points",
                 rounded, count);
}

/* Random points in 3-D, some outside [0, 1] (clamped addressing). */
static void filter_matches_emulation(void **state)
{
    (void)state;
    const struct volume_grid g = {grid.texels, grid.n};
    unsigned count = RANDOM_POINTS;
    float *uvw = xmalloc((size_t)count * 3 * sizeof(float)), *got = xmalloc(count * sizeof(float));
    uint32_t seed = 12345;
    for (unsigned i = 0; i < 3 * count; i++)
        uvw[i] = -0.05f + 1.1f * next_unit(&seed);
    sample(uvw, count, got);
    long off = 0;
    double worst = 0;
    for (unsigned i = 0; i < count; i++) {
        const float *c = uvw + 3 * i;
        float want = volume_reference_fetch(&g, c[0], c[1], c[2]);
        double d = fabs((double)got[i] - (double)want);
        worst = d > worst ? d : worst;
        /* A weight one 256th off moves a value by that share of a texel
         * difference, far more than the order of fp32 additions does. */
        if (!(d <= 1e-6) && off++ < 5)
            printf("# (%.7f, %.7f, %.7f): got %.9g, the emulation %.9g\n", (double)c[0],
                   (double)c[1], (double)c[2], (double)got[i], (double)want);
    }
    printf("# %u random points: %ld more than 1e-6 from the emulation, the worst %.3g off\n",
           count, off, worst);
    free(uvw);
    free(got);
    if (off)
        fail_msg("%ld of %u filtered samples differ from the emulation", off, count);
}

/*
 * Render p with the one kernel into both kinds of destination: a surface
 * on an array, and linear memory.
 */
static void render_both(const volume_params *p, uint8_t *surface_img, uint8_t *linear_img)
{
    uint64_t tex = cugl_texture_handle(grid.texture);
    cugl_launch_config launch = {
        .grid = {((unsigned)p->width + 15) / 16, ((unsigned)p->height + 15) / 16, 1},
        .block = {16, 16, 1},
    };
    size_t size = (size_t)p->width * (size_t)p->height * 4;
    volume_params params = *p;
    cugl_kernel *k = kernel("volume_render");

    cugl_array *array = NULL;
    cugl_surface *surface = NULL;
    assert_ok(cugl_array_create(&array, dev,
                                &(cugl_array_desc){.ndim = 2,
                                                   .shape = {(size_t)p->width, (size_t)p->height},
                                                   .format = CUGL_FORMAT_U8,
                                                   .num_channels = 4,
                                                   .surface_load_store = true}));
    cugl_resource_desc resource = {.kind = CUGL_RESOURCE_ARRAY, .array = array};
    assert_ok(cugl_surface_create(&surface, dev, &resource));
    demo_dest dest = {.surface = cugl_surface_handle(surface)};
    assert_ok(cugl_launch(stream, &launch, k, (void *[]){&dest, &tex, &params}, 3));
    assert_ok(cugl_array_copy_to_host(surface_img, size, array, stream));
    assert_ok(cugl_stream_sync(stream));
    cugl_surface_release(surface);
    cugl_array_release(array);

    cugl_buffer *image = device_buffer(size);
    dest = (demo_dest){.ptr = cugl_buffer_handle(image), .pitch = (uint64_t)p->width * 4};
    assert_ok(cugl_launch(stream, &launch, k, (void *[]){&dest, &tex, &params}, 3));
    run_demo_download(linear_img, image, stream);
    cugl_kernel_release(k);
    cugl_buffer_release(image);
}

static void check_render(int w, int h, long frame)
{
    volume_params p = demo_camera(frame, w, h);
    size_t size = (size_t)w * h * 4;
    uint8_t *surface_img = xmalloc(size), *linear_img = xmalloc(size), *want = xmalloc(size);
    render_both(&p, surface_img, linear_img);
    if (memcmp(surface_img, linear_img, size) != 0)
        fail_msg("%dx%d, frame %ld: the surface and linear destinations hold different images", w,
                 h, frame);
    const struct volume_grid g = {grid.texels, grid.n};
    volume_reference_render(want, &g, &p, 0);
    char what[64];
    snprintf(what, sizeof what, "kernel %dx%d of a %d^3 grid, frame %ld", w, h, grid.n, frame);
    run_demo_expect_close(linear_img, want, w, h, what);
    free(surface_img);
    free(linear_img);
    free(want);
}

static void kernels_match_reference(void **state)
{
    (void)state;
    for (long frame = 0; frame < 1200; frame += 400)
        check_render(64, 64, frame);
    check_render(61, 47, 150);
}

/* ---- the demo -------------------------------------------------------------- */

static float *demo_grid; /* the reference's VOLUME_N^3 grid, made once */

static const char *screenshot_of(const char *interop, int w, int h)
{
    return run_demo_path("volume-%s-%dx%d.png", interop, w, h);
}

/* Pixels that are not the background: the volume is in the picture. */
static long foreground_pixels(const uint8_t *rgba, int w, int h)
{
    const int bg[3] = {(int)lroundf(VOLUME_BG_R * 255.0f), (int)lroundf(VOLUME_BG_G * 255.0f),
                       (int)lroundf(VOLUME_BG_B * 255.0f)};
    long n = 0;
    for (int i = 0; i < w * h; i++)
        n += abs(rgba[4 * i] - bg[0]) + abs(rgba[4 * i + 1] - bg[1]) +
                 abs(rgba[4 * i + 2] - bg[2]) > 24;
    return n;
}

static void check_path(const char *interop, int w, int h)
{
    const char *png = screenshot_of(interop, w, h);
    run_demo_headless(binary, &(run_demo_args){.interop = interop, .width = w, .height = h,
                                               .frames = FRAMES, .screenshot = png});
    uint8_t *got = run_demo_read_png(png, w, h);

    if (!demo_grid) {
        size_t count = (size_t)VOLUME_N * VOLUME_N * VOLUME_N;
        demo_grid = xmalloc(count * sizeof(float));
        volume_reference_grid(demo_grid, VOLUME_N);
    }
    const struct volume_grid g = {demo_grid, VOLUME_N};
    volume_params p = demo_camera(FRAMES - 1, w, h);
    uint8_t *want = xmalloc((size_t)w * h * 4);
    volume_reference_render(want, &g, &p, 1);
    char what[64];
    snprintf(what, sizeof what, "--interop %s --size %dx%d", interop, w, h);
    long fg = foreground_pixels(got, w, h);
    printf("# %s: %ld of %d pixels show the volume\n", what, fg, w * h);
    if (fg * 10 < (long)w * h)
        fail_msg("%s: only %ld of %d pixels show the volume", what, fg, w * h);
    run_demo_expect_close(got, want, w, h, what);
    free(got);
    free(want);
}

static void path(void **state)
{
    check_path(*state, DEMO_W, DEMO_H);
}

static void paths_agree_at(int w, int h)
{
    const char *first = run_demo_interops[0];
    for (const char *const *p = run_demo_interops + 1; *p; p++) {
        char what[64];
        snprintf(what, sizeof what, "%dx%d: --interop %s against --interop %s", w, h, *p, first);
        run_demo_expect_same_png(screenshot_of(*p, w, h), screenshot_of(first, w, h), w, h, what);
    }
}

static void paths_agree(void **state)
{
    (void)state;
    paths_agree_at(DEMO_W, DEMO_H);
}

static void odd_size(void **state)
{
    (void)state;
    for (const char *const *p = run_demo_interops; *p; p++)
        check_path(*p, ODD_W, ODD_H);
    paths_agree_at(ODD_W, ODD_H);
}

int main(int argc, char **argv)
{
    binary = run_demo_setup(argc, argv, "CUGL_VOLUME_BINARY");
    dev = cugl_test_device();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fill_writes_the_density),
        cmocka_unit_test(filter_weights_are_8_bit),
        cmocka_unit_test(filter_matches_emulation),
        cmocka_unit_test(kernels_match_reference),
        run_demo_each_interop(path),
        cmocka_unit_test(paths_agree),
        cmocka_unit_test(odd_size),
    };
    int rc = run_demo_tests(tests, group_setup, group_teardown);
    free(demo_grid);
    return rc;
}
