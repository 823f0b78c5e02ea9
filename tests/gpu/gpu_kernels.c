/*
 * gpu_kernels.c - see gpu_kernels.h.
 */
#include "gpu_kernels.h"

static cugl_module *module;

cugl_module *gpu_test_module(cugl_device *device)
{
    if (!module && cugl_module_load_data(&module, device, cugl_test_kernels_fatbin,
                                         cugl_test_kernels_fatbin_size) != CUGL_OK) {
        printf("Bail out! cannot load the test kernels: %s\n", cugl_last_error());
        exit(1);
    }
    return module;
}

cugl_kernel *gpu_kernel(const char *name)
{
    cugl_kernel *k = NULL;
    assert_non_null(module);
    assert_ok(cugl_module_get_kernel(&k, module, name));
    assert_non_null(k);
    return k;
}

unsigned gpu_blocks_for(unsigned n) { return (n + 255) / 256; }

static void launch_1d(cugl_stream *stream, const char *name, unsigned blocks, unsigned threads,
                      void **args, size_t num_args)
{
    cugl_kernel *k = gpu_kernel(name);
    cugl_launch_config c = {.grid = {blocks}, .block = {threads}};
    cugl_status st = cugl_launch(stream, &c, k, args, num_args);
    cugl_kernel_release(k);
    if (st != CUGL_OK)
        fail_msg("launching %s returned %s: %s", name, cugl_status_name(st), cugl_last_error());
}

void gpu_launch_iota(cugl_stream *stream, CUdeviceptr out, unsigned n, unsigned scale)
{
    void *args[] = {&out, &n, &scale};
    launch_1d(stream, "cugl_test_iota", gpu_blocks_for(n), 256, args, 3);
}

void gpu_launch_sleep(cugl_stream *stream, unsigned long long ns, CUdeviceptr out,
                      unsigned value)
{
    void *args[] = {&ns, &out, &value};
    launch_1d(stream, "cugl_test_sleep_then_write", 1, 1, args, 3);
}

void gpu_launch_add(cugl_stream *stream, CUdeviceptr in, CUdeviceptr out, unsigned n,
                    unsigned add)
{
    void *args[] = {&in, &out, &n, &add};
    launch_1d(stream, "cugl_test_add", gpu_blocks_for(n), 256, args, 4);
}
