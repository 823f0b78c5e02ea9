/*
 * Strided view copies on the GPU, in all three directions, for transposed,
 * permuted 3-D, sliced-with-step, negative-stride and broadcast layouts,
 * each compared byte by byte (guard bytes included) with a host reference
 * computed from the layout oracle. Then DLPack round trips of device views
 * and the consumer-stream ordering rule.
 */
#include <dlpack/dlpack.h>

#include "gpu_kernels.h"
#include "layout_oracle.h"

static cugl_device *dev;
static cugl_stream *stream;
static cugl_memory_resource *dmr, *pmr;

static int setup(void **state)
{
    (void)state;
    gpu_mem_init();
    gpu_test_module(dev);
    if (cugl_stream_create(&stream, dev, NULL) != CUGL_OK ||
        cugl_device_memory_resource_create(&dmr, dev, NULL) != CUGL_OK ||
        cugl_pinned_memory_resource_create(&pmr, dev, NULL) != CUGL_OK)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    cugl_memory_resource_release(pmr);
    cugl_memory_resource_release(dmr);
    cugl_stream_release(stream);
    return 0;
}

typedef enum where { DEVICE, PAGEABLE, PINNED } where;
static const char *where_name[] = {"device", "pageable host", "pinned host"};

/* Memory of `size` bytes in `w`, with its host mirror for checking. */
typedef struct region {
    where w;
    size_t size;
    cugl_buffer *buf;
    void *heap; /* PAGEABLE */
} region;

static region region_new(where w, size_t size)
{
    region r = {.w = w, .size = size};
    if (w == DEVICE) {
        assert_ok(cugl_memory_resource_allocate(&r.buf, dmr, size, stream));
    } else if (w == PINNED) {
        assert_ok(cugl_memory_resource_allocate(&r.buf, pmr, size, stream));
    } else {
        r.heap = malloc(size);
        assert_non_null(r.heap);
        assert_ok(cugl_buffer_from_handle(&r.buf, (uint64_t)(uintptr_t)r.heap, size, NULL));
        assert_false(cugl_buffer_is_device_accessible(r.buf));
    }
    assert_ok(cugl_stream_sync(stream));
    return r;
}

static void region_write(region *r, const void *bytes)
{
    assert_ok(cugl_stream_sync(stream));
    if (r->w == DEVICE)
        gpu_write(cugl_buffer_handle(r->buf), bytes, r->size);
    else
        memcpy((void *)(uintptr_t)cugl_buffer_handle(r->buf), bytes, r->size);
}

static void region_read(region *r, void *bytes)
{
    assert_ok(cugl_stream_sync(stream));
    if (r->w == DEVICE)
        gpu_read(bytes, cugl_buffer_handle(r->buf), r->size);
    else
        memcpy(bytes, (const void *)(uintptr_t)cugl_buffer_handle(r->buf), r->size);
}

static void region_free(region *r)
{
    cugl_buffer_release(r->buf);
    free(r->heap);
}

typedef struct copy_case {
    const char *name;
    cugl_layout src, dst;
} copy_case;

static int64_t *offs_s, *offs_d;

/* Copy src -> dst between `from` and `to`, check every byte of dst. */
static void run_case(const copy_case *c, where from, where to)
{
    int64_t sneed, dneed;
    assert_ok(cugl_layout_required_size_in_bytes(&c->src, &sneed));
    assert_ok(cugl_layout_required_size_in_bytes(&c->dst, &dneed));
    size_t ssize = (size_t)sneed + 64, dsize = (size_t)dneed + 64;
    uint8_t *pattern = malloc(ssize), *before = malloc(dsize), *expect = malloc(dsize),
            *got = malloc(dsize);
    for (size_t i = 0; i < ssize; i++)
        pattern[i] = (uint8_t)(i * 7 + (i >> 9) * 13 + 1);
    memset(before, 0xee, dsize);
    memcpy(expect, before, dsize);
    int64_t n = oracle_enumerate(&c->src, offs_s);
    assert_int_equal(oracle_enumerate(&c->dst, offs_d), n);
    int64_t is = c->src.itemsize;
    for (int64_t k = 0; k < n; k++)
        memcpy(expect + offs_d[k] * is, pattern + offs_s[k] * is, (size_t)is);

    region rs = region_new(from, ssize), rd = region_new(to, dsize);
    region_write(&rs, pattern);
    region_write(&rd, before);
    cugl_view *sv, *dv;
    assert_ok(cugl_view_from_buffer(&sv, rs.buf, &c->src, (cugl_dtype){0}, true));
    assert_ok(cugl_view_from_buffer(&dv, rd.buf, &c->dst, (cugl_dtype){0}, false));
    assert_ok(cugl_view_copy_from(dv, sv, stream, NULL));
    region_read(&rd, got);
    if (memcmp(got, expect, dsize) != 0) {
        size_t at = 0;
        while (got[at] == expect[at])
            at++;
        fail_msg("%s, %s -> %s: byte %zu of %zu is 0x%02x, expected 0x%02x", c->name,
                 where_name[from], where_name[to], at, dsize, got[at], expect[at]);
    }
    cugl_view_release(sv);
    cugl_view_release(dv);
    region_free(&rs);
    region_free(&rd);
    free(pattern);
    free(before);
    free(expect);
    free(got);
}

static cugl_layout dense(int ndim, const int64_t *shape, int64_t itemsize)
{
    cugl_layout l;
    assert_ok(cugl_layout_init(&l, ndim, shape, NULL, itemsize));
    return l;
}

static cugl_layout permuted(cugl_layout l, const int *perm)
{
    assert_ok(cugl_layout_permuted(&l, &l, perm));
    return l;
}

static cugl_layout sliced(cugl_layout l, int n, const cugl_slice *s)
{
    assert_ok(cugl_layout_sliced(&l, &l, n, s));
    return l;
}

/* The cases, for one item size. Sizes are not multiples of the 32 x 32 tile. */
static int build_cases(copy_case *cases, int64_t is)
{
    int n = 0;
    int64_t hw[] = {333, 517}, wh[] = {517, 333};
    int t2[] = {1, 0};
    /* A transposed source into a dense destination, and the reverse. */
    cases[n++] = (copy_case){"2-D transpose", permuted(dense(2, wh, is), t2), dense(2, hw, is)};
    cases[n++] = (copy_case){"2-D transpose into", dense(2, hw, is), permuted(dense(2, wh, is), t2)};
    /* A 3-D permutation: element (i, j, k) of the source at (j, k, i). */
    int64_t s3[] = {45, 23, 37}, d3[] = {23, 37, 45};
    cases[n++] = (copy_case){"3-D permute", permuted(dense(3, s3, is), (int[]){1, 2, 0}),
                             dense(3, d3, is)};
    /* Every other row, and every third column walked backwards. */
    int64_t big[] = {400, 300};
    cugl_slice rows[] = {CUGL_SLICE_STEP(2)};
    cases[n++] = (copy_case){"every other row", sliced(dense(2, big, is), 1, rows),
                             dense(2, (int64_t[]){200, 300}, is)};
    cugl_slice cols[] = {CUGL_SLICE_ALL, CUGL_SLICE_STEP(-3)};
    cases[n++] = (copy_case){"every third column reversed", sliced(dense(2, big, is), 2, cols),
                             dense(2, (int64_t[]){400, 100}, is)};
    /* Both axes reversed, into a destination reversed along one. */
    cugl_slice rev[] = {CUGL_SLICE_STEP(-1), CUGL_SLICE_STEP(-1)};
    cugl_slice rev1[] = {CUGL_SLICE_ALL, CUGL_SLICE_STEP(-1)};
    cases[n++] = (copy_case){"negative strides", sliced(dense(2, hw, is), 2, rev),
                             sliced(dense(2, hw, is), 2, rev1)};
    /* One row broadcast to all rows, and one column to all columns. */
    cugl_layout row = dense(2, (int64_t[]){1, 517}, is), col = dense(2, (int64_t[]){333, 1}, is);
    cugl_layout brow, bcol;
    assert_ok(cugl_layout_broadcast_to(&brow, &row, 2, hw));
    assert_ok(cugl_layout_broadcast_to(&bcol, &col, 2, hw));
    cases[n++] = (copy_case){"broadcast row", brow, dense(2, hw, is)};
    cases[n++] = (copy_case){"broadcast column", bcol, permuted(dense(2, wh, is), t2)};
    /* More dimensions than one launch takes: 14 axes of 2, reversed. */
    int64_t s14[14];
    int p14[14];
    for (int i = 0; i < 14; i++) {
        s14[i] = 2;
        p14[i] = 13 - i;
    }
    cugl_layout l14 = dense(14, s14, is);
    cugl_layout l14t = permuted(dense(14, s14, is), p14);
    cases[n++] = (copy_case){"14 axes reversed", l14t, l14};
    /* A contiguous copy: one cuMemcpy. */
    cases[n++] = (copy_case){"contiguous", dense(2, hw, is), dense(2, hw, is)};
    return n;
}

static void copies_in_all_directions(void **state)
{
    (void)state;
    static const int64_t itemsizes[] = {1, 2, 4, 8, 12, 16};
    /* The largest case has 400 x 300 elements; the 333 x 517 ones more. */
    offs_s = malloc(sizeof(int64_t) * 333 * 517);
    offs_d = malloc(sizeof(int64_t) * 333 * 517);
    const where pairs[][2] = {{DEVICE, DEVICE},   {PAGEABLE, DEVICE}, {DEVICE, PAGEABLE},
                              {PINNED, DEVICE},   {DEVICE, PINNED},   {PAGEABLE, PAGEABLE}};
    int total = 0;
    for (size_t i = 0; i < sizeof itemsizes / sizeof itemsizes[0]; i++) {
        copy_case cases[16];
        int n = build_cases(cases, itemsizes[i]);
        for (int c = 0; c < n; c++)
            for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++, total++)
                run_case(&cases[c], pairs[p][0], pairs[p][1]);
    }
    print_message("# %d copies checked\n", total);
    free(offs_s);
    free(offs_d);
}

/* Device-to-device views sharing memory are refused; a view onto itself is a no-op. */
static void overlapping_device_copies_are_refused(void **state)
{
    (void)state;
    int64_t shape[] = {64, 64};
    cugl_buffer *b;
    assert_ok(cugl_memory_resource_allocate(&b, dmr, 64 * 64 * 4, stream));
    cugl_layout l = dense(2, shape, 4), t = permuted(l, (int[]){1, 0});
    cugl_view *v, *vt;
    assert_ok(cugl_view_from_buffer(&v, b, &l, CUGL_DTYPE_F32, false));
    assert_ok(cugl_view_from_buffer(&vt, b, &t, CUGL_DTYPE_F32, false));
    assert_status(cugl_view_copy_from(v, vt, stream, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_error_mentions("overlap in memory");
    assert_ok(cugl_view_copy_from(v, v, stream, NULL));
    /* A stream is required for device memory. */
    assert_status(cugl_view_copy_from(v, vt, NULL, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_error_mentions("stream is NULL");
    cugl_view_release(v);
    cugl_view_release(vt);
    cugl_buffer_release(b);
}

/* Temporaries from a given resource: a host-to-device copy that needs a
 * device scatter allocates from it, and gives it back. */
static void temporaries_come_from_the_allocator(void **state)
{
    (void)state;
    cugl_memory_resource *own;
    assert_ok(cugl_device_memory_resource_create(&own, dev,
                                                 &(cugl_device_memory_desc){.own_pool = true}));
    int64_t wh[] = {128, 256};
    cugl_layout src = permuted(dense(2, wh, 4), (int[]){1, 0});
    cugl_layout dst =
        sliced(dense(2, (int64_t[]){512, 128}, 4), 1, (cugl_slice[]){CUGL_SLICE_STEP(2)});
    region rs = region_new(PAGEABLE, 256 * 128 * 4), rd = region_new(DEVICE, 512 * 128 * 4);
    cugl_view *sv, *dv;
    assert_ok(cugl_view_from_buffer(&sv, rs.buf, &src, CUGL_DTYPE_F32, false));
    assert_ok(cugl_view_from_buffer(&dv, rd.buf, &dst, CUGL_DTYPE_F32, false));
    assert_ok(cugl_view_copy_from(dv, sv, stream, &(cugl_view_copy_desc){.allocator = own}));
    cugl_pool_stats st;
    assert_ok(cugl_memory_resource_pool_stats(own, &st));
    assert_true(st.used_high >= 256 * 128 * 4); /* the staging buffer came from it */
    assert_int_equal(st.used_current, 0);      /* and went back */
    /* A closed allocator is refused before anything is copied or made. */
    cugl_memory_resource *closed;
    assert_ok(cugl_device_memory_resource_create(&closed, dev, NULL));
    cugl_memory_resource_close(closed);
    long long objects = cugl_live_objects();
    assert_status(cugl_view_copy_from(dv, sv, stream, &(cugl_view_copy_desc){.allocator = closed}),
                  CUGL_ERROR_CLOSED);
    assert_string_equal(cugl_last_error(), "cugl_view_copy_from: the allocator has been closed");
    assert_int_equal(cugl_live_objects(), objects);
    cugl_memory_resource_release(closed);
    cugl_view_release(sv);
    cugl_view_release(dv);
    region_free(&rs);
    region_free(&rd);
    cugl_memory_resource_release(own);
}

/* A device view exported to DLPack and imported back sees the same memory. */
static void dlpack_device_round_trip(void **state)
{
    (void)state;
    int64_t shape[] = {16, 8};
    cugl_buffer *b;
    assert_ok(cugl_memory_resource_allocate(&b, dmr, 16 * 8 * 4, stream));
    gpu_launch_iota(stream, cugl_buffer_handle(b), 16 * 8, 1); /* word i holds i */
    cugl_layout l = sliced(dense(2, shape, 4), 2,
                           (cugl_slice[]){CUGL_SLICE(1, 16, 3), CUGL_SLICE_STEP(-2)});
    cugl_view *v;
    assert_ok(cugl_view_from_buffer(&v, b, &l, CUGL_DTYPE_U32, false));
    cugl_buffer_release(b);
    DLManagedTensor *t;
    assert_ok(cugl_view_to_dlpack(&t, v));
    assert_int_equal(t->dl_tensor.device.device_type, kDLCUDA);
    assert_int_equal(t->dl_tensor.device.device_id, cugl_device_ordinal(dev));
    assert_int_equal(t->dl_tensor.dtype.code, kDLUInt);
    assert_int_equal(t->dl_tensor.shape[0], 5);
    assert_int_equal(t->dl_tensor.shape[1], 4);
    assert_int_equal(t->dl_tensor.strides[0], 24);
    assert_int_equal(t->dl_tensor.strides[1], -2);
    assert_int_equal((uint64_t)(uintptr_t)t->dl_tensor.data + t->dl_tensor.byte_offset,
                     cugl_view_ptr(v));
    cugl_view *back;
    /* A CUDA tensor without a consumer stream is ambiguous. */
    assert_status(cugl_view_from_dlpack(&back, t, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_ok(cugl_view_from_dlpack(&back, t, &(cugl_dlpack_import_desc){.consumer_stream = stream}));
    assert_int_equal(cugl_view_ptr(back), cugl_view_ptr(v));
    assert_int_equal(cugl_view_device_id(back), cugl_device_ordinal(dev));
    assert_true(cugl_view_is_device_accessible(back));
    assert_false(cugl_view_is_host_accessible(back));
    assert_int_equal(cugl_view_ndim(back), 2);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(cugl_view_shape(back)[i], cugl_view_shape(v)[i]);
        assert_int_equal(cugl_view_strides(back)[i], cugl_view_strides(v)[i]);
    }
    cugl_view_release(v);
    /* Reading through the imported view works after the original is gone:
     * element (r, c) is word (1 + 3r) * 8 + (7 - 2c). */
    uint32_t host[5 * 4];
    cugl_buffer *hb;
    assert_ok(cugl_buffer_from_handle(&hb, (uint64_t)(uintptr_t)host, sizeof host, NULL));
    cugl_layout hl = dense(2, (int64_t[]){5, 4}, 4);
    cugl_view *hv;
    assert_ok(cugl_view_from_buffer(&hv, hb, &hl, CUGL_DTYPE_U32, false));
    assert_ok(cugl_view_copy_to(back, hv, stream, NULL));
    for (int r = 0; r < 5; r++)
        for (int c = 0; c < 4; c++)
            assert_int_equal(host[r * 4 + c], (1 + 3 * r) * 8 + (7 - 2 * c));
    cugl_view_release(hv);
    cugl_buffer_release(hb);
    cugl_view_release(back);
}

/* The consumer-stream rule: data a producer stream is still writing is
 * ready on the consumer stream once the import returns. */
static void dlpack_consumer_waits_for_the_producer(void **state)
{
    (void)state;
    cugl_stream *producer;
    assert_ok(cugl_stream_create(&producer, dev, NULL));
    size_t n = 1 << 20;
    cugl_buffer *b;
    assert_ok(cugl_memory_resource_allocate(&b, dmr, n * 4, producer));
    assert_ok(cugl_stream_sync(producer));
    /* The producer sleeps 100 ms, then fills with 7s. */
    gpu_launch_sleep(producer, GPU_MS(100), cugl_buffer_handle(b), 0);
    uint32_t seven = 7;
    assert_ok(cugl_buffer_fill(b, &seven, 4, producer));
    cugl_layout l = dense(1, (int64_t[]){(int64_t)n}, 4);
    cugl_view *v;
    assert_ok(cugl_view_from_buffer(&v, b, &l, CUGL_DTYPE_U32, false));
    DLManagedTensor *t;
    assert_ok(cugl_view_to_dlpack(&t, v));
    cugl_view *imported;
    assert_ok(cugl_view_from_dlpack(&imported, t, &(cugl_dlpack_import_desc){
                                                     .consumer_stream = stream,
                                                     .producer_stream = producer}));
    /* Read on the consumer stream only. */
    uint32_t *host = malloc(n * 4);
    cugl_buffer *hb;
    assert_ok(cugl_buffer_from_handle(&hb, (uint64_t)(uintptr_t)host, n * 4, NULL));
    cugl_view *hv;
    assert_ok(cugl_view_from_buffer(&hv, hb, &l, CUGL_DTYPE_U32, false));
    assert_ok(cugl_view_copy_from(hv, imported, stream, NULL));
    for (size_t i = 0; i < n; i++)
        if (host[i] != 7)
            fail_msg("element %zu is %u: the consumer read before the producer wrote", i, host[i]);
    cugl_view_release(hv);
    cugl_buffer_release(hb);
    free(host);
    cugl_view_release(imported);
    cugl_view_release(v);
    cugl_buffer_release(b);
    cugl_stream_release(producer);
}

int main(void)
{
    dev = cugl_test_device(); /* skips (77) without a driver or device */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(copies_in_all_directions),
        cmocka_unit_test(overlapping_device_copies_are_refused),
        cmocka_unit_test(temporaries_come_from_the_allocator),
        cmocka_unit_test(dlpack_device_round_trip),
        cmocka_unit_test(dlpack_consumer_waits_for_the_producer),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, setup, teardown);
}
