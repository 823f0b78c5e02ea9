/*
 * texture_test.c - see texture_test.h.
 */
#include <math.h>

#include "texture_test.h"

extern const unsigned char cugl_texture_kernels_fatbin[];
extern const size_t cugl_texture_kernels_fatbin_size;

cugl_device *dev;
cugl_device_properties props;
cugl_stream *stream;
cugl_memory_resource *device_mr;
cugl_module *kernels;

void expect_message(const char *want)
{
    if (strcmp(cugl_last_error(), want) != 0)
        fail_msg("message \"%s\", expected \"%s\"", cugl_last_error(), want);
}

cugl_buffer *new_buffer(size_t size)
{
    cugl_buffer *b = NULL;
    assert_ok(cugl_memory_resource_allocate(&b, device_mr, size, stream));
    assert_ok(cugl_stream_sync(stream));
    return b;
}

/* The first offset into `b` whose address is texture_alignment aligned. */
size_t aligned_offset(const cugl_buffer *b)
{
    uint64_t a = props.texture_alignment, p = cugl_buffer_handle(b);
    return a ? (size_t)((a - p % a) % a) : 0;
}

cugl_array *new_array(const cugl_array_desc *d)
{
    cugl_array *a = NULL;
    assert_ok(cugl_array_create(&a, dev, d));
    return a;
}

void upload(cugl_array *a, const void *bytes)
{
    assert_ok(cugl_array_copy_from_host(a, bytes, cugl_array_size_bytes(a), stream));
    assert_ok(cugl_stream_sync(stream));
}

cugl_texture *texture_over(const cugl_resource_desc *r, const cugl_texture_desc *d)
{
    cugl_texture *t = NULL;
    cugl_status st = cugl_texture_create(&t, dev, r, d);
    if (st != CUGL_OK)
        fail_msg("cugl_texture_create: %s", cugl_last_error());
    assert_true(cugl_texture_handle(t) != 0);
    return t;
}

cugl_texture *texture_of(cugl_array *a, const cugl_texture_desc *d)
{
    return texture_over(&(cugl_resource_desc){.kind = CUGL_RESOURCE_ARRAY, .array = a}, d);
}

cugl_kernel *kernel(const char *name)
{
    cugl_kernel *k = NULL;
    assert_ok(cugl_module_get_kernel(&k, kernels, name));
    return k;
}

/* Sample `n` coordinates; out gets n x channels floats (1 or 4 channels). */
void sample(const cugl_texture *t, int mode, const coord *coords, unsigned n,
                   int channels, float *out)
{
    CUdeviceptr dc = gpu_alloc(n * sizeof *coords);
    CUdeviceptr dout = gpu_alloc(n * (size_t)channels * sizeof(float));
    gpu_write(dc, coords, n * sizeof *coords);
    uint64_t tex = cugl_texture_handle(t);
    assert_true(tex != 0);
    cugl_kernel *k = kernel(channels == 4 ? "cugl_tex_sample4" : "cugl_tex_sample");
    void *args[] = {&tex, &mode, &dc, &dout, &n};
    cugl_launch_config c = {.grid = {(n + 63) / 64}, .block = {64}};
    cugl_status st = cugl_launch(stream, &c, k, args, 5);
    cugl_kernel_release(k);
    if (st != CUGL_OK)
        fail_msg("launch: %s", cugl_last_error());
    assert_ok(cugl_stream_sync(stream));
    gpu_read(out, dout, n * (size_t)channels * sizeof(float));
    gpu_free(dc);
    gpu_free(dout);
}

void expect_close(const float *got, const float *want, size_t n, float tolerance,
                         const char *what, const coord *coords, int channels)
{
    for (size_t i = 0; i < n; i++)
        if (!(fabsf(got[i] - want[i]) <= tolerance)) {
            const coord *c = &coords[i / (size_t)channels];
            fail_msg("%s: sample %zu at (%g, %g, %g, %g) is %.9g, expected %.9g", what, i,
                     (double)c->x, (double)c->y, (double)c->z, (double)c->w, (double)got[i],
                     (double)want[i]);
        }
}


int texture_test__run(const struct CMUnitTest *tests, size_t count)
{
    dev = cugl_test_device();
    gpu_mem_init();
    if (cugl_device_get_properties(dev, &props) != CUGL_OK ||
        cugl_stream_create(&stream, dev, NULL) != CUGL_OK ||
        cugl_device_memory_resource_create(&device_mr, dev, NULL) != CUGL_OK ||
        cugl_module_load_data(&kernels, dev, cugl_texture_kernels_fatbin,
                              cugl_texture_kernels_fatbin_size) != CUGL_OK) {
        printf("Bail out! %s\n", cugl_last_error());
        return 1;
    }
    cmocka_set_message_output(CM_OUTPUT_TAP);
    int rc = _cmocka_run_group_tests("tests", tests, count, NULL, NULL);
    cugl_module_release(kernels);
    cugl_memory_resource_release(device_mr);
    cugl_stream_release(stream);
    return rc;
}
