/*
 * bench.h - what the benchmarks share: the raw driver entry points of the
 * baselines, timing with CUDA events, interleaved medians, the table.
 *
 * A benchmark compares a plain driver operation with cugl's doing the same
 * work, in the same run: both run in alternating batches, each batch timed
 * with events, and the median per operation of each is reported together
 * with their ratio (plain time / cugl time: 1.00 is as fast).
 */
#ifndef CUGL_BENCH_H
#define CUGL_BENCH_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cugl/cugl.h>

enum { BENCH_ROUNDS = 7 };

static struct {
    CUresult (*memcpy_async)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
    CUresult (*memcpy_htod_async)(CUdeviceptr, const void *, size_t, CUstream);
    CUresult (*memcpy_dtoh_async)(void *, CUdeviceptr, size_t, CUstream);
    CUresult (*memcpy_3d_async)(const CUDA_MEMCPY3D *, CUstream);
} bench_drv;

static cugl_stream *bench_stream;
static cugl_event *bench_ev[2];

static void bench_die(const char *what)
{
    fprintf(stderr, "bench: %s: %s\n", what, cugl_last_error());
    exit(1);
}

#define BENCH_CHECK(expr)          \
    do {                           \
        if ((expr) != CUGL_OK)     \
            bench_die(#expr);      \
    } while (0)

#define BENCH_CHECK_CU(expr)                                     \
    do {                                                         \
        CUresult r_ = (expr);                                    \
        if (r_ != CUDA_SUCCESS) {                                \
            fprintf(stderr, "bench: %s: CUresult %d\n", #expr, r_); \
            exit(1);                                             \
        }                                                        \
    } while (0)

/*
 * Device 0, made current, with a stream and two timing events; exits 77
 * (skipped) without a driver or device. Prints the GPU's name.
 */
static cugl_device *bench_init(const char *name)
{
    int count = 0;
    cugl_status st = cugl_device_count(&count);
    if (st == CUGL_ERROR_NO_DRIVER || (st == CUGL_OK && count == 0)) {
        printf("%s: skipped: %s\n", name, st == CUGL_OK ? "no CUDA device" : cugl_last_error());
        exit(77);
    }
    cugl_device *dev;
    cugl_device_properties p;
    BENCH_CHECK(cugl_device_get(&dev, 0));
    BENCH_CHECK(cugl_device_set_current(dev));
    BENCH_CHECK(cugl_device_get_properties(dev, &p));
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "%s: cannot load libcuda.so.1\n", name);
        exit(1);
    }
    *(void **)&bench_drv.memcpy_async = dlsym(lib, "cuMemcpyAsync");
    *(void **)&bench_drv.memcpy_htod_async = dlsym(lib, "cuMemcpyHtoDAsync_v2");
    *(void **)&bench_drv.memcpy_dtoh_async = dlsym(lib, "cuMemcpyDtoHAsync_v2");
    *(void **)&bench_drv.memcpy_3d_async = dlsym(lib, "cuMemcpy3DAsync_v2");
    if (!bench_drv.memcpy_async || !bench_drv.memcpy_htod_async ||
        !bench_drv.memcpy_dtoh_async || !bench_drv.memcpy_3d_async) {
        fprintf(stderr, "%s: libcuda.so.1 lacks a cuMemcpy entry point\n", name);
        exit(1);
    }
    BENCH_CHECK(cugl_stream_create(&bench_stream, dev, NULL));
    for (int i = 0; i < 2; i++)
        BENCH_CHECK(cugl_event_create(&bench_ev[i], dev, &(cugl_event_desc){.timing = true}));
    printf("%s on %s (compute capability %d.%d, %d SMs, %.0f GiB)\n", name, p.name,
           p.compute_capability_major, p.compute_capability_minor, p.multiprocessor_count,
           (double)p.total_memory / (1u << 30));
    return dev;
}

static void bench_fini(void)
{
    cugl_event_release(bench_ev[0]);
    cugl_event_release(bench_ev[1]);
    cugl_stream_release(bench_stream);
}

static CUstream bench_raw_stream(void) { return (CUstream)cugl_stream_handle(bench_stream); }

/* An operation: run(ctx) queues one repetition on bench_stream. */
typedef struct bench_op {
    void (*run)(const void *ctx);
    const void *ctx;
} bench_op;

static float bench_batch(bench_op op, int reps)
{
    BENCH_CHECK(cugl_event_record(bench_ev[0], bench_stream));
    for (int i = 0; i < reps; i++)
        op.run(op.ctx);
    BENCH_CHECK(cugl_event_record(bench_ev[1], bench_stream));
    BENCH_CHECK(cugl_event_sync(bench_ev[1]));
    float ms = 0;
    BENCH_CHECK(cugl_event_elapsed_ms(&ms, bench_ev[0], bench_ev[1]));
    return ms / (float)reps;
}

static int bench_cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/*
 * Median milliseconds per repetition of `plain` and `ours`, in alternating
 * batches (which goes first alternates too, so drift favours neither).
 * Batches carry about 64 MiB of traffic, at least 3 repetitions.
 */
static void bench_measure(bench_op plain, bench_op ours, size_t bytes, float *plain_ms,
                          float *ours_ms)
{
    int reps = (int)((64u << 20) / bytes);
    if (reps < 3)
        reps = 3;
    bench_batch(plain, 1);
    bench_batch(ours, 1);
    float a[BENCH_ROUNDS], b[BENCH_ROUNDS];
    for (int r = 0; r < BENCH_ROUNDS; r++) {
        if (r % 2 == 0) {
            a[r] = bench_batch(plain, reps);
            b[r] = bench_batch(ours, reps);
        } else {
            b[r] = bench_batch(ours, reps);
            a[r] = bench_batch(plain, reps);
        }
    }
    qsort(a, BENCH_ROUNDS, sizeof a[0], bench_cmp_float);
    qsort(b, BENCH_ROUNDS, sizeof b[0], bench_cmp_float);
    *plain_ms = a[BENCH_ROUNDS / 2];
    *ours_ms = b[BENCH_ROUNDS / 2];
}

static void bench_header(const char *plain_name)
{
    printf("%-30s %9s  %24s  %24s  %5s\n", "operation", "size", plain_name, "cugl", "ratio");
}

/* One row; returns whether it falls short of `goal` (0: no goal). */
static bool bench_report(const char *what, size_t bytes, float plain_ms, float ours_ms,
                         double goal)
{
    double gb = (double)bytes / 1e9;
    double ratio = plain_ms / ours_ms;
    bool below = goal > 0 && ratio < goal;
    printf("%-30s %5zu MiB  %9.3f ms %8.1f GB/s  %9.3f ms %8.1f GB/s  %5.2f%s\n", what,
           bytes >> 20, plain_ms, gb / (plain_ms / 1e3), ours_ms, gb / (ours_ms / 1e3), ratio,
           below ? "  below goal" : "");
    fflush(stdout);
    return below;
}

#endif /* CUGL_BENCH_H */
