/*
 * gpu_kernels.h - the test kernels (kernels/tests/test_kernels.cu), loaded
 * once through cugl, and one-line launches of the common ones. Each launch
 * helper fails the running cmocka test when cugl refuses the launch.
 */
#ifndef CUGL_TEST_GPU_KERNELS_H
#define CUGL_TEST_GPU_KERNELS_H

#include "gpu_mem.h"

/* The embedded fatbin (generated from kernels/tests/test_kernels.cu). */
extern const unsigned char cugl_test_kernels_fatbin[];
extern const size_t cugl_test_kernels_fatbin_size;

/* Load the test module on `device` (once); bails out (exit 1) on failure. */
cugl_module *gpu_test_module(cugl_device *device);

/* A kernel of the test module; the caller releases it. */
cugl_kernel *gpu_kernel(const char *name);

/* Blocks of 256 threads covering n. */
unsigned gpu_blocks_for(unsigned n);

/* cugl_test_iota: out[i] = i * scale for i < n. */
void gpu_launch_iota(cugl_stream *stream, CUdeviceptr out, unsigned n, unsigned scale);

/* cugl_test_sleep_then_write: one thread sleeps `ns`, then *out = value. */
void gpu_launch_sleep(cugl_stream *stream, unsigned long long ns, CUdeviceptr out,
                      unsigned value);

/* cugl_test_add: out[i] = in[i] + add for i < n. */
void gpu_launch_add(cugl_stream *stream, CUdeviceptr in, CUdeviceptr out, unsigned n,
                    unsigned add);

#define GPU_MS(ms) ((unsigned long long)(ms) * 1000000ull)

#endif /* CUGL_TEST_GPU_KERNELS_H */
