/*
 * texture_test.h - what the texture and surface tests share: the device,
 * stream, memory and the test kernels (kernels/tests/texture_kernels.cu)
 * made by texture_test_run, and helpers that fail the test on an error.
 */
#ifndef CUGL_TEXTURE_TEST_H
#define CUGL_TEXTURE_TEST_H

#include "gpu_kernels.h"

extern cugl_device *dev;
extern cugl_device_properties props;
extern cugl_stream *stream;
extern cugl_memory_resource *device_mr;
extern cugl_module *kernels;

/* How cugl_tex_sample reads (kernels/tests/texture_kernels.cu). */
enum {
    SAMPLE_FETCH = 0,
    SAMPLE_1D = 1,
    SAMPLE_2D = 2,
    SAMPLE_3D = 3,
    SAMPLE_2D_LOD = 4,
    SAMPLE_1D_LAYERED = 5,
    SAMPLE_2D_LAYERED = 6,
    SAMPLE_CUBEMAP = 7,
};

/* A float4 of the kernels: x, y, z and a level or layer. */
typedef struct coord {
    float x, y, z, w;
} coord;

/*
 * The filtering hardware blends with weights of 8 fractional bits (CUDA
 * programming guide, "Linear Filtering"). Every position sampled here puts
 * each weight at 0, 0.5 or 1, which that format holds exactly, and the
 * texels are small integers whose blends fp32 holds exactly. The tolerance
 * only absorbs the rounding order of the hardware's multiply-adds: a few
 * fp32 ulps at the largest value used (about 100).
 */
#define TOLERANCE 1e-4f

/* Fail unless the last error is exactly `want`. */
void expect_message(const char *want);
/* A device buffer of `size` bytes, allocated and ready. */
cugl_buffer *new_buffer(size_t size);
/* The first offset into `b` whose address is texture_alignment aligned. */
size_t aligned_offset(const cugl_buffer *b);
cugl_array *new_array(const cugl_array_desc *d);
/* The array's bytes from the host, and wait. */
void upload(cugl_array *a, const void *bytes);
cugl_texture *texture_over(const cugl_resource_desc *r, const cugl_texture_desc *d);
cugl_texture *texture_of(cugl_array *a, const cugl_texture_desc *d);
/* A kernel of the test module; the caller releases it. */
cugl_kernel *kernel(const char *name);
/* Sample `n` coordinates; out gets n x channels floats (1 or 4 channels). */
void sample(const cugl_texture *t, int mode, const coord *coords, unsigned n, int channels,
            float *out);
/* Fail with the coordinate when got and want differ by more than `tolerance`. */
void expect_close(const float *got, const float *want, size_t n, float tolerance,
                  const char *what, const coord *coords, int channels);

/* Set up the device and the rest, run `tests` with TAP output, free them. */
#define texture_test_run(tests) texture_test__run(tests, sizeof(tests) / sizeof((tests)[0]))
int texture_test__run(const struct CMUnitTest *tests, size_t count);

#endif /* CUGL_TEXTURE_TEST_H */
