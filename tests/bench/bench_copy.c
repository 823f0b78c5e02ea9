/*
 * bench_copy: cugl's buffer and array copies against the driver's own
 * cuMemcpy of the same bytes, measured in the same run, interleaved.
 *
 * For each direction and size the plain driver copy and the cugl copy run
 * in alternating batches timed with CUDA events; the table shows the median
 * time per copy of each, the bandwidths, and cugl's speed as a fraction of
 * the driver's (1.00: as fast). Goal: >= 0.95 from 16 MiB up.
 *
 * usage: bench_copy [max_mib]   (default 1024)
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cugl/cugl.h>

enum { ROUNDS = 7 };

static struct {
    CUresult (*memcpy_async)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
    CUresult (*memcpy_htod_async)(CUdeviceptr, const void *, size_t, CUstream);
    CUresult (*memcpy_dtoh_async)(void *, CUdeviceptr, size_t, CUstream);
    CUresult (*memcpy_3d_async)(const CUDA_MEMCPY3D *, CUstream);
} drv;

static void die(const char *what)
{
    fprintf(stderr, "bench_copy: %s: %s\n", what, cugl_last_error());
    exit(1);
}

#define CHECK(expr)                    \
    do {                               \
        if ((expr) != CUGL_OK)         \
            die(#expr);                \
    } while (0)

#define CHECK_CU(expr)                                           \
    do {                                                         \
        CUresult r_ = (expr);                                    \
        if (r_ != CUDA_SUCCESS) {                                \
            fprintf(stderr, "bench_copy: %s: %d\n", #expr, r_);  \
            exit(1);                                             \
        }                                                        \
    } while (0)

static void load_driver(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "bench_copy: cannot load libcuda.so.1\n");
        exit(1);
    }
    *(void **)&drv.memcpy_async = dlsym(lib, "cuMemcpyAsync");
    *(void **)&drv.memcpy_htod_async = dlsym(lib, "cuMemcpyHtoDAsync_v2");
    *(void **)&drv.memcpy_dtoh_async = dlsym(lib, "cuMemcpyDtoHAsync_v2");
    *(void **)&drv.memcpy_3d_async = dlsym(lib, "cuMemcpy3DAsync_v2");
    if (!drv.memcpy_async || !drv.memcpy_htod_async || !drv.memcpy_dtoh_async ||
        !drv.memcpy_3d_async) {
        fprintf(stderr, "bench_copy: libcuda.so.1 lacks a cuMemcpy entry point\n");
        exit(1);
    }
}

/* One measured operation: copies `bytes` once per call. */
typedef struct op {
    void (*run)(const struct op *op);
    CUdeviceptr dst, src;
    void *host;
    cugl_buffer *dst_buf, *src_buf;
    cugl_array *array;
    size_t bytes;
    size_t width, height; /* arrays: elements per row, rows */
    CUstream raw;
    cugl_stream *stream;
} op;

static cugl_stream *stream;
static cugl_event *ev_start, *ev_end;

/* Milliseconds for `reps` calls of `o`. */
static float time_batch(const op *o, int reps)
{
    CHECK(cugl_event_record(ev_start, stream));
    for (int i = 0; i < reps; i++)
        o->run(o);
    CHECK(cugl_event_record(ev_end, stream));
    CHECK(cugl_event_sync(ev_end));
    float ms = 0;
    CHECK(cugl_event_elapsed_ms(&ms, ev_start, ev_end));
    return ms;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Median milliseconds per copy of the plain and the cugl operation. */
static void measure(const op *plain, const op *ours, size_t bytes, float *plain_ms,
                    float *ours_ms)
{
    /* Enough copies per batch for about 64 MiB of traffic, at least 3. */
    int reps = (int)((64u << 20) / bytes);
    if (reps < 3)
        reps = 3;
    time_batch(plain, 1);
    time_batch(ours, 1);
    float a[ROUNDS], b[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        /* Alternate which goes first so drift favours neither. */
        if (r % 2 == 0) {
            a[r] = time_batch(plain, reps) / (float)reps;
            b[r] = time_batch(ours, reps) / (float)reps;
        } else {
            b[r] = time_batch(ours, reps) / (float)reps;
            a[r] = time_batch(plain, reps) / (float)reps;
        }
    }
    qsort(a, ROUNDS, sizeof a[0], cmp_float);
    qsort(b, ROUNDS, sizeof b[0], cmp_float);
    *plain_ms = a[ROUNDS / 2];
    *ours_ms = b[ROUNDS / 2];
}

/* Plain driver copies. */
static void plain_d2d(const op *o) { CHECK_CU(drv.memcpy_async(o->dst, o->src, o->bytes, o->raw)); }
static void plain_h2d(const op *o) { CHECK_CU(drv.memcpy_htod_async(o->dst, o->host, o->bytes, o->raw)); }
static void plain_d2h(const op *o) { CHECK_CU(drv.memcpy_dtoh_async(o->host, o->src, o->bytes, o->raw)); }

/* cugl copies. */
static void cugl_buf_copy(const op *o) { CHECK(cugl_buffer_copy_from(o->dst_buf, o->src_buf, o->stream)); }

static int failures_below_goal;

static void report(const char *what, size_t bytes, float plain_ms, float ours_ms)
{
    double gib = (double)bytes / (1u << 30);
    double ratio = plain_ms / ours_ms;
    bool goal = bytes >= (16u << 20);
    bool below = goal && ratio < 0.95;
    failures_below_goal += below;
    printf("%-28s %7zu MiB  %9.3f ms %8.1f GB/s  %9.3f ms %8.1f GB/s  %5.2f%s\n", what,
           bytes >> 20, plain_ms, gib * 1.073741824 / (plain_ms / 1e3), ours_ms,
           gib * 1.073741824 / (ours_ms / 1e3), ratio, below ? "  below goal" : "");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    size_t max_mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 1024;
    int count = 0;
    cugl_status st = cugl_device_count(&count);
    if (st == CUGL_ERROR_NO_DRIVER || (st == CUGL_OK && count == 0)) {
        printf("bench_copy: skipped: %s\n", count == 0 && st == CUGL_OK ? "no CUDA device"
                                                                          : cugl_last_error());
        return 77;
    }
    cugl_device *dev;
    cugl_device_properties props;
    CHECK(cugl_device_get(&dev, 0));
    CHECK(cugl_device_set_current(dev));
    CHECK(cugl_device_get_properties(dev, &props));
    load_driver();
    CHECK(cugl_stream_create(&stream, dev, NULL));
    CHECK(cugl_event_create(&ev_start, dev, &(cugl_event_desc){.timing = true}));
    CHECK(cugl_event_create(&ev_end, dev, &(cugl_event_desc){.timing = true}));

    cugl_memory_resource *dmr, *pmr;
    CHECK(cugl_device_memory_resource_create(&dmr, dev, NULL));
    CHECK(cugl_pinned_memory_resource_create(&pmr, dev, NULL));
    size_t max_bytes = max_mib << 20;
    cugl_buffer *d0, *d1, *pinned, *pageable;
    CHECK(cugl_memory_resource_allocate(&d0, dmr, max_bytes, stream));
    CHECK(cugl_memory_resource_allocate(&d1, dmr, max_bytes, stream));
    CHECK(cugl_memory_resource_allocate(&pinned, pmr, max_bytes, stream));
    void *heap = malloc(max_bytes);
    if (!heap)
        die("malloc");
    memset(heap, 0x5a, max_bytes);
    CHECK(cugl_buffer_from_handle(&pageable, (uint64_t)(uintptr_t)heap, max_bytes, NULL));
    uint8_t zero = 0;
    CHECK(cugl_buffer_fill(d0, &zero, 1, stream));
    CHECK(cugl_buffer_fill(d1, &zero, 1, stream));
    CHECK(cugl_stream_sync(stream));

    printf("GPU: %s (compute capability %d.%d), %d SMs\n", props.name,
           props.compute_capability_major, props.compute_capability_minor,
           props.multiprocessor_count);
    printf("%-28s %11s  %24s  %24s  %5s\n", "copy", "size", "plain cuMemcpy", "cugl",
           "ratio");

    CUstream raw = (CUstream)cugl_stream_handle(stream);
    CUdeviceptr p0 = cugl_buffer_handle(d0), p1 = cugl_buffer_handle(d1);
    void *pin = (void *)(uintptr_t)cugl_buffer_handle(pinned);
    for (size_t mib = 1; mib <= max_mib; mib *= 4) {
        size_t bytes = mib << 20;
        cugl_buffer *sd0, *sd1, *spin, *spage;
        CHECK(cugl_buffer_from_handle(&sd0, p0, bytes, NULL));
        CHECK(cugl_buffer_from_handle(&sd1, p1, bytes, NULL));
        CHECK(cugl_buffer_from_handle(&spin, (uint64_t)(uintptr_t)pin, bytes, NULL));
        CHECK(cugl_buffer_from_handle(&spage, (uint64_t)(uintptr_t)heap, bytes, NULL));
        struct {
            const char *name;
            op plain, ours;
        } cases[] = {
            {"buffer D2D",
             {plain_d2d, .dst = p1, .src = p0, .bytes = bytes, .raw = raw},
             {cugl_buf_copy, .dst_buf = sd1, .src_buf = sd0, .stream = stream}},
            {"buffer H2D pinned",
             {plain_h2d, .dst = p1, .host = pin, .bytes = bytes, .raw = raw},
             {cugl_buf_copy, .dst_buf = sd1, .src_buf = spin, .stream = stream}},
            {"buffer H2D pageable",
             {plain_h2d, .dst = p1, .host = heap, .bytes = bytes, .raw = raw},
             {cugl_buf_copy, .dst_buf = sd1, .src_buf = spage, .stream = stream}},
            {"buffer D2H pinned",
             {plain_d2h, .src = p0, .host = pin, .bytes = bytes, .raw = raw},
             {cugl_buf_copy, .dst_buf = spin, .src_buf = sd0, .stream = stream}},
            {"buffer D2H pageable",
             {plain_d2h, .src = p0, .host = heap, .bytes = bytes, .raw = raw},
             {cugl_buf_copy, .dst_buf = spage, .src_buf = sd0, .stream = stream}},
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            float plain_ms, ours_ms;
            measure(&cases[i].plain, &cases[i].ours, bytes, &plain_ms, &ours_ms);
            report(cases[i].name, bytes, plain_ms, ours_ms);
        }
        cugl_buffer_release(sd0);
        cugl_buffer_release(sd1);
        cugl_buffer_release(spin);
        cugl_buffer_release(spage);
    }

    printf("%d measurement%s of 16 MiB or more below the 0.95 goal\n", failures_below_goal,
           failures_below_goal == 1 ? "" : "s");
    cugl_buffer_release(pageable);
    free(heap);
    cugl_buffer_release(pinned);
    cugl_buffer_release(d1);
    cugl_buffer_release(d0);
    cugl_memory_resource_release(pmr);
    cugl_memory_resource_release(dmr);
    cugl_event_release(ev_start);
    cugl_event_release(ev_end);
    cugl_stream_release(stream);
    return 0;
}
