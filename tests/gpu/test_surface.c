/*
 * Surfaces on a real GPU: kernels write arrays with the surface flag (a
 * plain 2-D array and a mipmap level) through surface objects and read
 * them back exactly; other resources are refused with a message.
 */
#include "texture_test.h"

static void launch_2d(const char *name, void **args, size_t nargs, unsigned w, unsigned h)
{
    cugl_kernel *k = kernel(name);
    cugl_launch_config c = {.grid = {(w + 15) / 16, (h + 15) / 16}, .block = {16, 16}};
    cugl_status st = cugl_launch(stream, &c, k, args, nargs);
    cugl_kernel_release(k);
    if (st != CUGL_OK)
        fail_msg("launch %s: %s", name, cugl_last_error());
    assert_ok(cugl_stream_sync(stream));
}

/* A kernel writes x + 1000 y + base through the surface; read back exactly. */
static void write_through_surface(cugl_array *a, float base, const char *what)
{
    size_t shape[3];
    cugl_array_shape(a, shape);
    unsigned w = (unsigned)shape[0], h = (unsigned)shape[1];
    cugl_surface *s = NULL;
    assert_ok(cugl_surface_create(&s, dev,
                                  &(cugl_resource_desc){.kind = CUGL_RESOURCE_ARRAY,
                                                        .array = a}));
    assert_ptr_equal(cugl_surface_array(s), a);
    assert_ptr_equal(cugl_surface_device(s), dev);
    uint64_t handle = cugl_surface_handle(s);
    assert_true(handle != 0);
    void *args[] = {&handle, &w, &h, &base};
    launch_2d("cugl_surf_write_2d", args, 4, w, h);
    float *got = malloc((size_t)w * h * sizeof *got);
    assert_non_null(got);
    assert_ok(cugl_array_copy_to_host(got, (size_t)w * h * sizeof *got, a, stream));
    assert_ok(cugl_stream_sync(stream));
    for (unsigned y = 0; y < h; y++)
        for (unsigned x = 0; x < w; x++) {
            float want = (float)x + 1000.0f * (float)y + base;
            if (got[y * w + x] != want) {
                float g = got[y * w + x];
                free(got);
                fail_msg("%s: element (%u, %u) is %g, expected %g", what, x, y, (double)g,
                         (double)want);
            }
        }
    free(got);
    cugl_surface_release(s);
}

static void surfaces_write_and_read(void **state)
{
    (void)state;
    enum { SW = 37, SH = 19 };
    cugl_array *a = new_array(&(cugl_array_desc){.ndim = 2, .shape = {SW, SH},
                                                 .format = CUGL_FORMAT_F32,
                                                 .surface_load_store = true});
    write_through_surface(a, 0.5f, "surface write");

    /* What the host put there, a kernel reads through the surface. */
    float values[SW * SH], got[SW * SH];
    for (int i = 0; i < SW * SH; i++)
        values[i] = 0.25f * (float)i - 100.0f;
    upload(a, values);
    cugl_surface *s = NULL;
    assert_ok(cugl_surface_create(&s, dev,
                                  &(cugl_resource_desc){.kind = CUGL_RESOURCE_ARRAY,
                                                        .array = a}));
    CUdeviceptr out = gpu_alloc(sizeof got);
    uint64_t handle = cugl_surface_handle(s);
    unsigned w = SW, h = SH;
    void *args[] = {&handle, &w, &h, &out};
    launch_2d("cugl_surf_read_2d", args, 4, w, h);
    gpu_read(got, out, sizeof got);
    gpu_free(out);
    for (int i = 0; i < SW * SH; i++)
        if (got[i] != values[i])
            fail_msg("surface read: element %d is %g, expected %g", i, (double)got[i],
                     (double)values[i]);
    /* The surface keeps its array alive. */
    cugl_array_release(a);
    assert_false(cugl_surface_is_closed(s));
    cugl_surface_release(s);

    /* One level of a mipmapped array, through its own surface. */
    cugl_mipmapped_array *m = NULL;
    assert_ok(cugl_mipmapped_array_create(
        &m, dev,
        &(cugl_array_desc){.ndim = 2, .shape = {16, 16}, .format = CUGL_FORMAT_F32,
                           .surface_load_store = true},
        3));
    cugl_array *level = NULL;
    assert_ok(cugl_mipmapped_array_get_level(&level, m, 1));
    assert_true(cugl_array_is_surface_load_store(level));
    cugl_mipmapped_array_release(m);
    write_through_surface(level, 7.0f, "surface write to mipmap level 1");
    cugl_array_release(level);
}

static void surfaces_are_refused_for_other_resources(void **state)
{
    (void)state;
    cugl_array *plain = new_array(
        &(cugl_array_desc){.ndim = 2, .shape = {8, 8}, .format = CUGL_FORMAT_F32});
    cugl_surface *s = (cugl_surface *)&props;
    assert_status(cugl_surface_create(&s, dev,
                                      &(cugl_resource_desc){.kind = CUGL_RESOURCE_ARRAY,
                                                            .array = plain}),
                  CUGL_ERROR_INVALID_ARGUMENT);
    assert_null(s);
    expect_message("cugl_surface_create: the array was not created with surface_load_store; "
                   "set cugl_array_desc.surface_load_store to bind it to a surface");
    cugl_buffer *b = new_buffer(4096);
    assert_status(cugl_surface_create(&s, dev,
                                      &(cugl_resource_desc){.kind = CUGL_RESOURCE_LINEAR,
                                                            .buffer = b,
                                                            .format = CUGL_FORMAT_F32}),
                  CUGL_ERROR_INVALID_ARGUMENT);
    expect_message("cugl_surface_create: a surface writes an array; resource.kind is "
                   "CUGL_RESOURCE_LINEAR (for one level of a mipmapped array, pass the level "
                   "from cugl_mipmapped_array_get_level as an array)");
    cugl_array_close(plain);
    assert_status(cugl_surface_create(&s, dev,
                                      &(cugl_resource_desc){.kind = CUGL_RESOURCE_ARRAY,
                                                            .array = plain}),
                  CUGL_ERROR_CLOSED);
    expect_message("cugl_surface_create: the array has been closed");
    cugl_buffer_release(b);
    cugl_array_release(plain);
}


int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(surfaces_write_and_read),
        cmocka_unit_test(surfaces_are_refused_for_other_resources),
    };
    return texture_test_run(tests);
}
