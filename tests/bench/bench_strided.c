/*
 * bench_strided: strided view copies on the device (2-D transpose, 3-D
 * permutation, every other row) against a contiguous device-to-device
 * cuMemcpy of the same bytes, in the same run. Goals: 0.6 of the memcpy's
 * speed for the transpose and the permutation, 0.8 for the slice.
 *
 * usage: bench_strided [max_mib]   (sizes 64 MiB and 1 GiB, up to max_mib)
 */
#include "bench.h"

typedef struct plain_copy {
    CUdeviceptr dst, src;
    size_t bytes;
} plain_copy;

static void run_plain(const void *ctx)
{
    const plain_copy *c = ctx;
    BENCH_CHECK_CU(bench_drv.memcpy_async(c->dst, c->src, c->bytes, bench_raw_stream()));
}

typedef struct view_copy {
    cugl_view *dst, *src;
} view_copy;

static void run_view(const void *ctx)
{
    const view_copy *c = ctx;
    BENCH_CHECK(cugl_view_copy_from(c->dst, c->src, bench_stream, NULL));
}

static cugl_view *view_of(cugl_buffer *b, const cugl_layout *l)
{
    cugl_view *v;
    BENCH_CHECK(cugl_view_from_buffer(&v, b, l, CUGL_DTYPE_F32, false));
    return v;
}

int main(int argc, char **argv)
{
    size_t max_mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 1024;
    cugl_device *dev = bench_init("bench_strided");
    cugl_memory_resource *mr;
    BENCH_CHECK(cugl_device_memory_resource_create(&mr, dev, NULL));
    bench_header("contiguous cuMemcpy D2D");
    int below = 0;
    for (size_t mib = 64; mib <= max_mib; mib *= 16) {
        size_t bytes = mib << 20, n = bytes / 4;
        cugl_buffer *a, *b;
        /* The slice reads every other row of twice the bytes. */
        BENCH_CHECK(cugl_memory_resource_allocate(&a, mr, 2 * bytes, bench_stream));
        BENCH_CHECK(cugl_memory_resource_allocate(&b, mr, bytes, bench_stream));
        uint32_t zero = 0;
        BENCH_CHECK(cugl_buffer_fill(a, &zero, 4, bench_stream));
        BENCH_CHECK(cugl_buffer_fill(b, &zero, 4, bench_stream));
        plain_copy pc = {cugl_buffer_handle(b), cugl_buffer_handle(a), bytes};

        /* 2-D transpose: b = a^T, N x N. */
        int64_t side = 1;
        while (side * side < (int64_t)n)
            side *= 2;
        int64_t sq[] = {side, side};
        int tr[] = {1, 0};
        cugl_layout dense2, trans2;
        BENCH_CHECK(cugl_layout_init(&dense2, 2, sq, NULL, 4));
        BENCH_CHECK(cugl_layout_permuted(&trans2, &dense2, tr));

        /* 3-D permutation: b[i][j][k] = a[j][k][i]. */
        int64_t d3[] = {(int64_t)n / (256 * 512), 256, 512};
        int p3[] = {2, 0, 1};
        cugl_layout dense3, perm3, out3;
        BENCH_CHECK(cugl_layout_init(&dense3, 3, d3, NULL, 4));
        BENCH_CHECK(cugl_layout_permuted(&perm3, &dense3, p3));
        BENCH_CHECK(cugl_layout_dense_like(&out3, &perm3, CUGL_ORDER_C, NULL));

        /* Every other row of (2R, 4096) into (R, 4096). */
        int64_t rows[] = {2 * (int64_t)n / 4096, 4096};
        cugl_layout twice, every_other, out_rows;
        BENCH_CHECK(cugl_layout_init(&twice, 2, rows, NULL, 4));
        BENCH_CHECK(cugl_layout_sliced(&every_other, &twice, 1,
                                       (cugl_slice[]){CUGL_SLICE_STEP(2)}));
        BENCH_CHECK(cugl_layout_dense_like(&out_rows, &every_other, CUGL_ORDER_C, NULL));

        struct {
            const char *name;
            cugl_layout src, dst;
            double goal;
        } cases[] = {
            {"2-D transpose", trans2, dense2, 0.6},
            {"3-D permute (2, 0, 1)", perm3, out3, 0.6},
            {"every other row", every_other, out_rows, 0.8},
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            view_copy vc = {view_of(b, &cases[i].dst), view_of(a, &cases[i].src)};
            float plain_ms, ours_ms;
            bench_measure((bench_op){run_plain, &pc}, (bench_op){run_view, &vc}, bytes,
                          &plain_ms, &ours_ms);
            below += bench_report(cases[i].name, bytes, plain_ms, ours_ms, cases[i].goal);
            cugl_view_release(vc.dst);
            cugl_view_release(vc.src);
        }
        cugl_buffer_release(a);
        cugl_buffer_release(b);
    }
    printf("%d measurement%s below the goal\n", below, below == 1 ? "" : "s");
    cugl_memory_resource_release(mr);
    bench_fini();
    return 0;
}
