/*
 * cugl-postprocess's filters against the CPU reference (postprocess_reference.c):
 *
 * - the kernels themselves on a synthetic image (sharp shapes, gradients,
 *   noise): read through a texture object on a CUDA array and written
 *   through a surface (the map path's way), and read and written as pitched
 *   linear memory (the shared and host paths' way), every filter, radii
 *   from 1 to the largest, an image smaller than the blur; at most 1 pixel
 *   in 1000 may have a channel more than one level off (the math is written
 *   to match bit for bit, and the counts say whether it does);
 * - the demo, run headless for 3 frames at 256x256 with each filter on
 *   each --interop path: the unfiltered scene is a picture, not a blank;
 *   each filtered screenshot matches the reference applied to the
 *   unfiltered screenshot of the same frame; every path gives identical
 *   screenshots; the same at 203x117 (partial blocks, padded pitches);
 * - bad --filter and --radius values exit with status 2.
 *
 * usage: test_demo_postprocess CUGL_POSTPROCESS_BINARY
 */
#include <stdlib.h>

#include "cugl_test.h"

#include "postprocess_reference.h"
#include "run_demo.h"

extern const unsigned char cugl_postprocess_fatbin[];
extern const size_t cugl_postprocess_fatbin_size;

enum { W = 256, H = 256, ODD_W = 203, ODD_H = 117, FRAMES = 3, RADIUS = 5 };

static const char *binary;
static const char *const filter_names[] = {"none", "blur", "edges", "both"};

static struct {
    cugl_device *device;
    cugl_stream *stream;
    cugl_module *module;
    cugl_kernel *copy, *blur_rows, *blur_columns, *edges;
    cugl_memory_resource *device_mr, *pinned_mr;
} gpu;

/* ---- Comparing images ------------------------------------------------------ */

static void expect_reference(const uint8_t *got, const uint8_t *in, int w, int h, pp_filter f,
                             int radius, const char *what)
{
    uint8_t *want = malloc((size_t)w * h * 4);
    assert_non_null(want);
    assert_true(postprocess_reference(want, in, w, h, f, radius));
    run_demo_expect_close(got, want, w, h, what);
    free(want);
}

/* ---- The kernels on a synthetic image -------------------------------------- */

/* Shapes with sharp edges over gradients, with noise in one corner. */
static uint8_t *synthetic(int w, int h)
{
    uint8_t *p = malloc((size_t)w * h * 4);
    assert_non_null(p);
    uint32_t seed = 12345;
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            uint8_t *px = p + ((size_t)y * w + x) * 4;
            px[0] = (uint8_t)(255 * x / (w > 1 ? w - 1 : 1));
            px[1] = (uint8_t)(255 * y / (h > 1 ? h - 1 : 1));
            px[2] = (uint8_t)((x / 7 + y / 5) % 2 ? 230 : 20);
            px[3] = (uint8_t)(200 + (x + y) % 56);
            int dx = x - w / 2, dy = y - h / 2, r = (w < h ? w : h) / 3;
            if (dx * dx + dy * dy < r * r) {
                px[0] = 250;
                px[1] = 40;
            }
            if (x < w / 4 && y < h / 4) {
                for (int c = 0; c < 3; c++) {
                    seed = seed * 1664525u + 1013904223u;
                    px[c] = (uint8_t)(seed >> 24);
                }
            }
        }
    }
    return p;
}

static void launch(cugl_kernel *k, void **args, size_t n, int w, int h)
{
    cugl_launch_config grid = {
        .grid = {((unsigned)w + 15) / 16, ((unsigned)h + 15) / 16, 1},
        .block = {16, 16, 1},
    };
    assert_ok(cugl_launch(gpu.stream, &grid, k, args, n));
}

/* The demo's sequence of kernels (run_filters in demos/postprocess.c). */
static void run_filters(pp_filter f, int radius, demo_source src, demo_dest dst, int w, int h)
{
    size_t pixels = (size_t)w * h;
    cugl_buffer *rows_buffer, *blurred_buffer;
    assert_ok(cugl_memory_resource_allocate(&rows_buffer, gpu.device_mr, pixels * 16, gpu.stream));
    assert_ok(cugl_memory_resource_allocate(&blurred_buffer, gpu.device_mr, pixels * 4,
                                            gpu.stream));
    uint64_t rows = cugl_buffer_handle(rows_buffer), rows_pitch = (uint64_t)w * 16;
    uint64_t blurred = cugl_buffer_handle(blurred_buffer);
    pp_blur blur = pp_blur_make(radius);
    demo_dest blur_to = dst;
    demo_source edges_of = src;
    if (f == PP_FILTER_BOTH) {
        blur_to = (demo_dest){.ptr = blurred, .pitch = (uint64_t)w * 4};
        edges_of = (demo_source){.ptr = blurred, .pitch = (uint64_t)w * 4};
    }
    if (f == PP_FILTER_NONE)
        launch(gpu.copy, (void *[]){&src, &dst, &w, &h}, 4, w, h);
    if (f == PP_FILTER_BLUR || f == PP_FILTER_BOTH) {
        launch(gpu.blur_rows, (void *[]){&src, &rows, &rows_pitch, &w, &h, &blur}, 6, w, h);
        launch(gpu.blur_columns, (void *[]){&rows, &rows_pitch, &blur_to, &w, &h, &blur}, 6, w,
               h);
    }
    if (f == PP_FILTER_EDGES || f == PP_FILTER_BOTH)
        launch(gpu.edges, (void *[]){&edges_of, &dst, &w, &h}, 4, w, h);
    assert_ok(cugl_stream_sync(gpu.stream));
    cugl_buffer_release(rows_buffer);
    cugl_buffer_release(blurred_buffer);
}

/* Texture object on one CUDA array in, surface object on another out. */
static void filter_arrays(uint8_t *out, const uint8_t *in, int w, int h, pp_filter f,
                          int radius)
{
    size_t size = (size_t)w * h * 4;
    cugl_array_desc desc = {
        .ndim = 2, .shape = {(size_t)w, (size_t)h, 0}, .format = CUGL_FORMAT_U8, .num_channels = 4};
    cugl_array *src, *dst;
    assert_ok(cugl_array_create(&src, gpu.device, &desc));
    desc.surface_load_store = true;
    assert_ok(cugl_array_create(&dst, gpu.device, &desc));
    assert_ok(cugl_array_copy_from_host(src, in, size, gpu.stream));
    cugl_texture *texture;
    cugl_surface *surface;
    assert_ok(cugl_texture_create(
        &texture, gpu.device, &(cugl_resource_desc){.kind = CUGL_RESOURCE_ARRAY, .array = src},
        &(cugl_texture_desc){.filter_mode = CUGL_FILTER_POINT,
                             .read_mode = CUGL_READ_ELEMENT_TYPE}));
    assert_ok(cugl_surface_create(
        &surface, gpu.device, &(cugl_resource_desc){.kind = CUGL_RESOURCE_ARRAY, .array = dst}));
    run_filters(f, radius, (demo_source){.texture = cugl_texture_handle(texture)},
                (demo_dest){.surface = cugl_surface_handle(surface)}, w, h);
    assert_ok(cugl_array_copy_to_host(out, size, dst, gpu.stream));
    assert_ok(cugl_stream_sync(gpu.stream));
    cugl_texture_release(texture);
    cugl_surface_release(surface);
    cugl_array_release(src);
    cugl_array_release(dst);
}

/*
 * Pitched linear memory in and out, rows `pitch` bytes apart (more than a
 * row). The padding of the output's rows must come back untouched.
 */
static void filter_linear(uint8_t *out, const uint8_t *in, int w, int h, pp_filter f,
                          int radius)
{
    size_t row = (size_t)w * 4, pitch = row + 68, size = pitch * (size_t)h;
    cugl_buffer *staging, *src, *dst;
    assert_ok(cugl_memory_resource_allocate(&staging, gpu.pinned_mr, size, gpu.stream));
    assert_ok(cugl_memory_resource_allocate(&src, gpu.device_mr, size, gpu.stream));
    assert_ok(cugl_memory_resource_allocate(&dst, gpu.device_mr, size, gpu.stream));
    uint8_t *host = (uint8_t *)(uintptr_t)cugl_buffer_handle(staging);
    for (int y = 0; y < h; y++)
        memcpy(host + y * pitch, in + y * row, row);
    assert_ok(cugl_buffer_copy_from(src, staging, gpu.stream));
    assert_ok(cugl_buffer_fill(dst, &(uint8_t){0xa5}, 1, gpu.stream));
    run_filters(f, radius, (demo_source){.ptr = cugl_buffer_handle(src), .pitch = pitch},
                (demo_dest){.ptr = cugl_buffer_handle(dst), .pitch = pitch}, w, h);
    assert_ok(cugl_buffer_copy_from(staging, dst, gpu.stream));
    assert_ok(cugl_stream_sync(gpu.stream));
    for (int y = 0; y < h; y++) {
        memcpy(out + y * row, host + y * pitch, row);
        for (size_t i = row; i < pitch; i++)
            if (host[y * pitch + i] != 0xa5)
                fail_msg("row %d's padding byte %zu was written", y, i - row);
    }
    cugl_buffer_release(staging);
    cugl_buffer_release(src);
    cugl_buffer_release(dst);
}

static const struct {
    pp_filter filter;
    int radius;
} kernel_cases[] = {
    {PP_FILTER_NONE, 1},  {PP_FILTER_BLUR, 1},  {PP_FILTER_BLUR, 6},
    {PP_FILTER_BLUR, PP_MAX_RADIUS}, {PP_FILTER_EDGES, 6}, {PP_FILTER_BOTH, 3},
};

static void check_kernels(bool arrays)
{
    static const int sizes[][2] = {{ODD_W, ODD_H}, {20, 9}};
    for (size_t s = 0; s < 2; s++) {
        int w = sizes[s][0], h = sizes[s][1];
        uint8_t *in = synthetic(w, h), *out = malloc((size_t)w * h * 4);
        assert_non_null(out);
        for (size_t i = 0; i < sizeof kernel_cases / sizeof kernel_cases[0]; i++) {
            pp_filter f = kernel_cases[i].filter;
            int radius = kernel_cases[i].radius;
            if (arrays)
                filter_arrays(out, in, w, h, f, radius);
            else
                filter_linear(out, in, w, h, f, radius);
            char what[96];
            snprintf(what, sizeof what, "%s, %s radius %d, %dx%d",
                     arrays ? "texture to surface" : "linear memory", filter_names[f], radius,
                     w, h);
            expect_reference(out, in, w, h, f, radius, what);
        }
        free(in);
        free(out);
    }
}

static void kernels_on_arrays(void **state)
{
    (void)state;
    check_kernels(true);
}

static void kernels_on_linear_memory(void **state)
{
    (void)state;
    check_kernels(false);
}

/* ---- The demo ------------------------------------------------------------------ */

static const char *screenshot_of(const char *interop, pp_filter f, int w, int h)
{
    return run_demo_path("postprocess-%s-%s-%dx%d.png", interop, filter_names[f], w, h);
}

/* Run the demo; its screenshot, rows top to bottom. */
static uint8_t *run_path(const char *interop, pp_filter f, int w, int h)
{
    const char *png = screenshot_of(interop, f, w, h);
    char radius[16];
    snprintf(radius, sizeof radius, "%d", RADIUS);
    const char *const extra[] = {"--filter", filter_names[f], "--radius", radius, NULL};
    run_demo_headless(binary, &(run_demo_args){.interop = interop, .width = w, .height = h,
                                               .frames = FRAMES, .screenshot = png,
                                               .extra = extra});
    return run_demo_read_png(png, w, h);
}

/* Pixels whose brightest channel exceeds `level`. */
static long brighter_than(const uint8_t *p, int w, int h, int level)
{
    long n = 0;
    for (long i = 0; i < (long)w * h; i++) {
        int m = p[i * 4] > p[i * 4 + 1] ? p[i * 4] : p[i * 4 + 1];
        m = p[i * 4 + 2] > m ? p[i * 4 + 2] : m;
        n += m > level;
    }
    return n;
}

/* The scene shows: lit floor and objects over a dark background. */
static void expect_scene(const uint8_t *p, int w, int h)
{
    long bright = brighter_than(p, w, h, 128), dark = (long)w * h - brighter_than(p, w, h, 40);
    long colourful = 0;
    for (long i = 0; i < (long)w * h; i++) {
        int r = p[i * 4], g = p[i * 4 + 1], b = p[i * 4 + 2];
        colourful += abs(r - g) > 60 || abs(g - b) > 60 || abs(r - b) > 60;
    }
    printf("# the scene at %dx%d: %ld bright, %ld dark, %ld colourful pixels\n", w, h, bright,
           dark, colourful);
    if (bright * 10 < (long)w * h || dark * 10 < (long)w * h || colourful * 50 < (long)w * h)
        fail_msg("the unfiltered screenshot does not look like the scene");
}

/* Each filter on one path: a scene, and the reference of it. */
static void check_filters(const char *interop, int w, int h, const pp_filter *filters, size_t n)
{
    uint8_t *scene = run_path(interop, PP_FILTER_NONE, w, h);
    expect_scene(scene, w, h);
    for (size_t i = 0; i < n; i++) {
        uint8_t *got = run_path(interop, filters[i], w, h);
        char what[96];
        snprintf(what, sizeof what, "--interop %s --filter %s at %dx%d", interop,
                 filter_names[filters[i]], w, h);
        expect_reference(got, scene, w, h, filters[i], RADIUS, what);
        if (filters[i] != PP_FILTER_BLUR && brighter_than(got, w, h, 100) * 100 < (long)w * h)
            fail_msg("%s: hardly an edge shows", what);
        free(got);
    }
    free(scene);
}

/* Every path's screenshot the first path's. */
static void expect_paths_agree(pp_filter f, int w, int h)
{
    const char *first = run_demo_interops[0];
    for (const char *const *p = run_demo_interops + 1; *p; p++) {
        char what[96];
        snprintf(what, sizeof what, "--interop %s against --interop %s, --filter %s, %dx%d", *p,
                 first, filter_names[f], w, h);
        run_demo_expect_same_png(screenshot_of(*p, f, w, h), screenshot_of(first, f, w, h), w, h,
                                 what);
    }
}

static const pp_filter filtered[] = {PP_FILTER_BLUR, PP_FILTER_EDGES, PP_FILTER_BOTH};

static void path(void **state)
{
    check_filters(*state, W, H, filtered, 3);
}

static void paths_agree(void **state)
{
    (void)state;
    for (int f = PP_FILTER_NONE; f <= PP_FILTER_BOTH; f++)
        expect_paths_agree((pp_filter)f, W, H);
}

static void odd_size(void **state)
{
    (void)state;
    const pp_filter both[] = {PP_FILTER_BOTH};
    for (const char *const *p = run_demo_interops; *p; p++)
        check_filters(*p, ODD_W, ODD_H, both, 1);
    expect_paths_agree(PP_FILTER_NONE, ODD_W, ODD_H);
    expect_paths_agree(PP_FILTER_BOTH, ODD_W, ODD_H);
}

static void bad_flags(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"--filter", "sharpen"}, {"--filter", ""}, {"--radius", "0"},
        {"--radius", "33"},      {"--radius", "x"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = run_demo(binary, (const char *const[]){"--headless", "--frames", "1",
                                                         cases[i][0], cases[i][1], NULL});
        if (rc != 2)
            fail_msg("cugl-postprocess %s '%s' exited with %d, not 2", cases[i][0], cases[i][1],
                     rc);
    }
}

/* Keys pressed and released between two frames, as on a slow frame: each
 * press counts (2 picks blur, = twice widens the radius by 2, - narrows it
 * by 1), though the held state of no frame shows the key down. */
static void presses_within_a_frame(void **state)
{
    (void)state;
    const char *input = run_demo_path("presses.txt"), *out = run_demo_path("presses.out");
    FILE *f = fopen(input, "w");
    assert_non_null(f);
    fputs("2 key 2 down\n2 key 2 up\n"
          "3 key = down\n3 key = up\n3 key = down\n3 key = up\n3 key - down\n3 key - up\n",
          f);
    assert_int_equal(fclose(f), 0);
    int rc = run_demo_to(binary, (const char *const[]){"--headless", "--frames", "5", "--size",
                                                        "64x64", "--input", input, NULL},
                         out);
    assert_int_equal(rc, 0);
    char line[256], last[256] = "";
    f = fopen(out, "r");
    assert_non_null(f);
    while (fgets(line, sizeof line, f))
        if (strstr(line, "--filter "))
            snprintf(last, sizeof last, "%s", strstr(line, "--filter "));
    fclose(f);
    last[strcspn(last, "\n")] = '\0';
    if (strcmp(last, "--filter blur --radius 7") != 0)
        fail_msg("after 2, =, = and - within frames 2 and 3 the demo ended at '%s', not "
                 "'--filter blur --radius 7'", last);
}

/* The device, a stream and the demo's kernels, for the kernel tests. */
static void set_up_gpu(void)
{
    if (cugl_device_get(&gpu.device, 0) != CUGL_OK ||
        cugl_device_set_current(gpu.device) != CUGL_OK ||
        cugl_stream_create(&gpu.stream, gpu.device, NULL) != CUGL_OK ||
        cugl_module_load_data(&gpu.module, gpu.device, cugl_postprocess_fatbin,
                              cugl_postprocess_fatbin_size) != CUGL_OK ||
        cugl_module_get_kernel(&gpu.copy, gpu.module, "pp_copy") != CUGL_OK ||
        cugl_module_get_kernel(&gpu.blur_rows, gpu.module, "pp_blur_rows") != CUGL_OK ||
        cugl_module_get_kernel(&gpu.blur_columns, gpu.module, "pp_blur_columns") != CUGL_OK ||
        cugl_module_get_kernel(&gpu.edges, gpu.module, "pp_edges") != CUGL_OK ||
        cugl_device_memory_resource_create(&gpu.device_mr, gpu.device, NULL) != CUGL_OK ||
        cugl_legacy_pinned_memory_resource_create(&gpu.pinned_mr, gpu.device) != CUGL_OK) {
        printf("Bail out! %s\n", cugl_last_error());
        exit(1);
    }
}

static void tear_down_gpu(void)
{
    cugl_kernel_release(gpu.copy);
    cugl_kernel_release(gpu.blur_rows);
    cugl_kernel_release(gpu.blur_columns);
    cugl_kernel_release(gpu.edges);
    cugl_module_release(gpu.module);
    cugl_memory_resource_release(gpu.device_mr);
    cugl_memory_resource_release(gpu.pinned_mr);
    cugl_stream_release(gpu.stream);
}

int main(int argc, char **argv)
{
    binary = run_demo_setup(argc, argv, "CUGL_POSTPROCESS_BINARY");
    set_up_gpu();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kernels_on_arrays),
        cmocka_unit_test(kernels_on_linear_memory),
        run_demo_each_interop(path),
        cmocka_unit_test(paths_agree),
        cmocka_unit_test(odd_size),
        cmocka_unit_test(bad_flags),
        cmocka_unit_test(presses_within_a_frame),
    };
    int rc = run_demo_tests(tests, NULL, NULL);
    tear_down_gpu();
    return rc;
}
