/*
 * bench_copy: cugl's buffer and array copies against the driver's plain
 * cuMemcpy of the same bytes in the same direction, in the same run: D2D,
 * H2D and D2H (pinned and pageable host memory), 1 MiB to 1 GiB. Array
 * copies are also shown against the driver's own cuMemcpy3D into the same
 * array, which isolates cugl's overhead from the array layout's cost.
 * Goal: 0.95 of the plain copy's speed from 16 MiB up.
 *
 * Then every format x channel count at 16, 64 and 256 MiB, arrays made as
 * cugl_array_create makes them: array to a device buffer against a linear
 * device copy of the same bytes, goal 0.9, and device buffer to array,
 * goal 0.8; the driver's cuMemcpy3D of the same array beside them, against
 * the same linear copy.
 *
 * usage: bench_copy [max_mib]   (default 1024)
 */
#include "bench.h"

typedef enum dir { D2D, H2D, D2H } dir;

typedef struct plain_copy {
    dir d;
    CUdeviceptr dst, src;
    void *host;
    size_t bytes;
} plain_copy;

static void run_plain(const void *ctx)
{
    const plain_copy *c = ctx;
    CUstream s = bench_raw_stream();
    if (c->d == D2D)
        BENCH_CHECK_CU(bench_drv.memcpy_async(c->dst, c->src, c->bytes, s));
    else if (c->d == H2D)
        BENCH_CHECK_CU(bench_drv.memcpy_htod_async(c->dst, c->host, c->bytes, s));
    else
        BENCH_CHECK_CU(bench_drv.memcpy_dtoh_async(c->host, c->src, c->bytes, s));
}

typedef struct raw_array_copy {
    CUDA_MEMCPY3D desc;
} raw_array_copy;

static void run_raw_array(const void *ctx)
{
    const raw_array_copy *c = ctx;
    BENCH_CHECK_CU(bench_drv.memcpy_3d_async(&c->desc, bench_raw_stream()));
}

typedef enum cugl_kind { BUF_COPY, ARR_FROM_BUF, ARR_TO_BUF, ARR_FROM_HOST, ARR_TO_HOST } cugl_kind;

typedef struct cugl_copy {
    cugl_kind k;
    cugl_buffer *dst, *src;
    cugl_array *array;
    void *host;
    size_t bytes;
} cugl_copy;

static void run_cugl(const void *ctx)
{
    const cugl_copy *c = ctx;
    switch (c->k) {
    case BUF_COPY:
        BENCH_CHECK(cugl_buffer_copy_from(c->dst, c->src, bench_stream));
        break;
    case ARR_FROM_BUF:
        BENCH_CHECK(cugl_array_copy_from_buffer(c->array, c->src, bench_stream));
        break;
    case ARR_TO_BUF:
        BENCH_CHECK(cugl_array_copy_to_buffer(c->dst, c->array, bench_stream));
        break;
    case ARR_FROM_HOST:
        BENCH_CHECK(cugl_array_copy_from_host(c->array, c->host, c->bytes, bench_stream));
        break;
    case ARR_TO_HOST:
        BENCH_CHECK(cugl_array_copy_to_host(c->host, c->bytes, c->array, bench_stream));
        break;
    }
}

/* The driver's own copy between `host_or_dev` (row-packed) and the array
 * of `elem`-byte elements. */
static raw_array_copy raw_array_elem(cugl_array *a, bool to_array, bool host, uint64_t ptr,
                                     size_t width, size_t height, size_t elem)
{
    raw_array_copy r;
    memset(&r, 0, sizeof r);
    CUDA_MEMCPY3D *d = &r.desc;
    CUmemorytype t = host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
    if (to_array) {
        d->srcMemoryType = t;
        d->srcHost = (void *)(uintptr_t)ptr;
        d->srcDevice = (CUdeviceptr)ptr;
        d->srcPitch = width * elem;
        d->srcHeight = height;
        d->dstMemoryType = CU_MEMORYTYPE_ARRAY;
        d->dstArray = (CUarray)cugl_array_handle(a);
    } else {
        d->dstMemoryType = t;
        d->dstHost = (void *)(uintptr_t)ptr;
        d->dstDevice = (CUdeviceptr)ptr;
        d->dstPitch = width * elem;
        d->dstHeight = height;
        d->srcMemoryType = CU_MEMORYTYPE_ARRAY;
        d->srcArray = (CUarray)cugl_array_handle(a);
    }
    d->WidthInBytes = width * elem;
    d->Height = height;
    d->Depth = 1;
    return r;
}

static raw_array_copy raw_array(cugl_array *a, bool to_array, bool host, uint64_t ptr,
                                size_t width, size_t height)
{
    return raw_array_elem(a, to_array, host, ptr, width, height, 4);
}

/* One array copy of cugl's against the linear copy of the same bytes, and
 * the driver's copy of the same array against it too. Returns 1 when cugl's
 * is below `goal`. */
static int format_row(const char *what, cugl_kind k, cugl_array *a, cugl_buffer *buf,
                      CUdeviceptr p0, CUdeviceptr p1, size_t width, size_t height,
                      size_t elem, double goal)
{
    size_t bytes = width * height * elem;
    bool to_array = k == ARR_FROM_BUF;
    plain_copy plain = {D2D, p1, p0, NULL, bytes};
    cugl_copy ours = {k, to_array ? NULL : buf, to_array ? buf : NULL, a, NULL, bytes};
    raw_array_copy raw = raw_array_elem(a, to_array, false, to_array ? p0 : p1, width, height,
                                        elem);
    float plain_ms, ours_ms, plain2_ms, raw_ms;
    bench_measure((bench_op){run_plain, &plain}, (bench_op){run_cugl, &ours}, bytes, &plain_ms,
                  &ours_ms);
    bench_measure((bench_op){run_plain, &plain}, (bench_op){run_raw_array, &raw}, bytes,
                  &plain2_ms, &raw_ms);
    double gb = (double)bytes / 1e9, ratio = plain_ms / ours_ms;
    bool below = ratio < goal;
    printf("%-24s %4zu MiB  linear %7.1f GB/s  cugl %7.1f GB/s %5.2f  cuMemcpy3D %7.1f GB/s "
           "%5.2f%s\n",
           what, bytes >> 20, gb / (plain_ms / 1e3), gb / (ours_ms / 1e3), ratio,
           gb / (raw_ms / 1e3), plain2_ms / raw_ms, below ? "  below goal" : "");
    fflush(stdout);
    return below;
}

/* Every format x channel count, both ways. */
static int format_table(cugl_device *dev, cugl_buffer *d0, cugl_buffer *d1, size_t max_mib)
{
    bench_header("array copies by format: cugl and cuMemcpy3D against a linear device copy");
    CUdeviceptr p0 = cugl_buffer_handle(d0), p1 = cugl_buffer_handle(d1);
    static const int channels[] = {1, 2, 4};
    int below = 0;
    for (size_t mib = 16; mib <= max_mib && mib <= 256; mib *= 4) {
        size_t bytes = mib << 20;
        for (int f = CUGL_FORMAT_FIRST; f <= CUGL_FORMAT_LAST; f++)
            for (int c = 0; c < 3; c++) {
                size_t elem = cugl_format_size((cugl_format)f) * (size_t)channels[c];
                size_t width = 4096, height = bytes / (width * elem);
                cugl_buffer *buf;
                BENCH_CHECK(cugl_buffer_from_handle(&buf, p0, bytes, NULL));
                cugl_buffer *out;
                BENCH_CHECK(cugl_buffer_from_handle(&out, p1, bytes, NULL));
                cugl_array *a;
                BENCH_CHECK(cugl_array_create(
                    &a, dev,
                    &(cugl_array_desc){.ndim = 2, .shape = {width, height},
                                       .format = (cugl_format)f,
                                       .num_channels = channels[c]}));
                char what[64];
                snprintf(what, sizeof what, "%s x%d read", cugl_format_name(f), channels[c]);
                below += format_row(what, ARR_TO_BUF, a, out, p0, p1, width, height, elem, 0.9);
                snprintf(what, sizeof what, "%s x%d write", cugl_format_name(f), channels[c]);
                below += format_row(what, ARR_FROM_BUF, a, buf, p0, p1, width, height, elem, 0.8);
                cugl_array_release(a);
                cugl_buffer_release(buf);
                cugl_buffer_release(out);
            }
    }
    return below;
}

int main(int argc, char **argv)
{
    size_t max_mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 1024;
    cugl_device *dev = bench_init("bench_copy");
    cugl_memory_resource *dmr, *pmr;
    BENCH_CHECK(cugl_device_memory_resource_create(&dmr, dev, NULL));
    BENCH_CHECK(cugl_pinned_memory_resource_create(&pmr, dev, NULL));
    size_t max_bytes = max_mib << 20;
    cugl_buffer *d0, *d1, *pinned;
    BENCH_CHECK(cugl_memory_resource_allocate(&d0, dmr, max_bytes, bench_stream));
    BENCH_CHECK(cugl_memory_resource_allocate(&d1, dmr, max_bytes, bench_stream));
    BENCH_CHECK(cugl_memory_resource_allocate(&pinned, pmr, max_bytes, bench_stream));
    uint8_t zero = 0;
    BENCH_CHECK(cugl_buffer_fill(d0, &zero, 1, bench_stream));
    BENCH_CHECK(cugl_buffer_fill(d1, &zero, 1, bench_stream));
    BENCH_CHECK(cugl_stream_sync(bench_stream));
    void *heap = malloc(max_bytes);
    if (!heap)
        bench_die("malloc");
    memset(heap, 0x5a, max_bytes);
    memset((void *)(uintptr_t)cugl_buffer_handle(pinned), 0x5a, max_bytes);

    bench_header("plain cuMemcpy");
    CUdeviceptr p0 = cugl_buffer_handle(d0), p1 = cugl_buffer_handle(d1);
    void *pin = (void *)(uintptr_t)cugl_buffer_handle(pinned);
    int below = 0;
    for (size_t mib = 1; mib <= max_mib; mib *= 4) {
        size_t bytes = mib << 20;
        double goal = bytes >= (16u << 20) ? 0.95 : 0;
        /* Buffers the size of this round, over the big allocations. */
        cugl_buffer *sd0, *sd1, *spin, *spage;
        BENCH_CHECK(cugl_buffer_from_handle(&sd0, p0, bytes, NULL));
        BENCH_CHECK(cugl_buffer_from_handle(&sd1, p1, bytes, NULL));
        BENCH_CHECK(cugl_buffer_from_handle(&spin, (uint64_t)(uintptr_t)pin, bytes, NULL));
        BENCH_CHECK(cugl_buffer_from_handle(&spage, (uint64_t)(uintptr_t)heap, bytes, NULL));
        /* An RGBA8 array 4096 texels wide holding the same bytes, writable
         * by the kernels. */
        size_t width = 4096, height = bytes / (width * 4);
        cugl_array *arr;
        BENCH_CHECK(cugl_array_create(&arr, dev,
                                      &(cugl_array_desc){.ndim = 2,
                                                         .shape = {width, height},
                                                         .format = CUGL_FORMAT_U8,
                                                         .num_channels = 4,
                                                         .surface_load_store = true}));
        struct {
            const char *name;
            plain_copy plain;
            cugl_copy ours;
        } cases[] = {
            {"buffer D2D", {D2D, p1, p0, NULL, bytes}, {BUF_COPY, sd1, sd0, NULL, NULL, bytes}},
            {"buffer H2D pinned", {H2D, p1, 0, pin, bytes}, {BUF_COPY, sd1, spin, NULL, NULL, bytes}},
            {"buffer H2D pageable", {H2D, p1, 0, heap, bytes}, {BUF_COPY, sd1, spage, NULL, NULL, bytes}},
            {"buffer D2H pinned", {D2H, 0, p0, pin, bytes}, {BUF_COPY, spin, sd0, NULL, NULL, bytes}},
            {"buffer D2H pageable", {D2H, 0, p0, heap, bytes}, {BUF_COPY, spage, sd0, NULL, NULL, bytes}},
            {"array from device buffer", {D2D, p1, p0, NULL, bytes}, {ARR_FROM_BUF, NULL, sd0, arr, NULL, bytes}},
            {"array to device buffer", {D2D, p1, p0, NULL, bytes}, {ARR_TO_BUF, sd1, NULL, arr, NULL, bytes}},
            {"array from pinned host", {H2D, p1, 0, pin, bytes}, {ARR_FROM_HOST, NULL, NULL, arr, pin, bytes}},
            {"array from pageable host", {H2D, p1, 0, heap, bytes}, {ARR_FROM_HOST, NULL, NULL, arr, heap, bytes}},
            {"array to pinned host", {D2H, 0, p0, pin, bytes}, {ARR_TO_HOST, NULL, NULL, arr, pin, bytes}},
            {"array to pageable host", {D2H, 0, p0, heap, bytes}, {ARR_TO_HOST, NULL, NULL, arr, heap, bytes}},
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            float plain_ms, ours_ms;
            bench_measure((bench_op){run_plain, &cases[i].plain},
                          (bench_op){run_cugl, &cases[i].ours}, bytes, &plain_ms, &ours_ms);
            below += bench_report(cases[i].name, bytes, plain_ms, ours_ms, goal);
        }
        /* cugl's array copies against the driver's cuMemcpy3D of the same array. */
        struct {
            const char *name;
            raw_array_copy raw;
            cugl_copy ours;
        } arrays[] = {
            {"  vs cuMemcpy3D: from buffer", raw_array(arr, true, false, p0, width, height),
             {ARR_FROM_BUF, NULL, sd0, arr, NULL, bytes}},
            {"  vs cuMemcpy3D: to buffer", raw_array(arr, false, false, p1, width, height),
             {ARR_TO_BUF, sd1, NULL, arr, NULL, bytes}},
            {"  vs cuMemcpy3D: from pinned", raw_array(arr, true, true, (uint64_t)(uintptr_t)pin, width, height),
             {ARR_FROM_HOST, NULL, NULL, arr, pin, bytes}},
            {"  vs cuMemcpy3D: to pinned", raw_array(arr, false, true, (uint64_t)(uintptr_t)pin, width, height),
             {ARR_TO_HOST, NULL, NULL, arr, pin, bytes}},
        };
        for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) {
            float plain_ms, ours_ms;
            bench_measure((bench_op){run_raw_array, &arrays[i].raw},
                          (bench_op){run_cugl, &arrays[i].ours}, bytes, &plain_ms, &ours_ms);
            below += bench_report(arrays[i].name, bytes, plain_ms, ours_ms, goal);
        }
        cugl_array_release(arr);
        cugl_buffer_release(sd0);
        cugl_buffer_release(sd1);
        cugl_buffer_release(spin);
        cugl_buffer_release(spage);
    }
    printf("%d measurement%s of 16 MiB or more below the 0.95 goal\n", below,
           below == 1 ? "" : "s");
    int fmt_below = format_table(dev, d0, d1, max_mib);
    printf("%d format measurement%s below their goal (reads 0.9, writes 0.8)\n", fmt_below,
           fmt_below == 1 ? "" : "s");
    free(heap);
    cugl_buffer_release(pinned);
    cugl_buffer_release(d1);
    cugl_buffer_release(d0);
    cugl_memory_resource_release(pmr);
    cugl_memory_resource_release(dmr);
    bench_fini();
    return 0;
}
