/*
 * Strided memory views without a GPU: creation and its checks, copies
 * between views of host memory (the copy planner that device copies use too:
 * axis flips, ordering, merging, element widening and splitting), checked
 * element by element against the layout oracle over thousands of random
 * layout pairs, and DLPack import and export of CPU tensors.
 * CUGL_TEST_SEED and CUGL_TEST_CASES override the seed and the case count.
 */
#include "dlpack_compat.h"

#include "cugl_test.h"
#include "layout_oracle.h"

static uint64_t seed = 0xc0b1e5eedull;
static long cases = 2000;

/* Host memory wrapped in a buffer (no driver needed: host memory). */
static cugl_buffer *host_buffer(void *p, size_t size)
{
    cugl_buffer *b = NULL;
    assert_ok(cugl_buffer_from_handle(&b, (uint64_t)(uintptr_t)p, size, NULL));
    assert_true(cugl_buffer_is_host_accessible(b));
    return b;
}

static void shuffle(oracle_rng *r, int *p, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)oracle_range(r, 0, i), t = p[i];
        p[i] = p[j];
        p[j] = t;
    }
}

/*
 * A random layout of `shape`: a dense layout in a random axis order over a
 * larger shape, sliced with random steps (some negative) to `shape`.
 * Memory for it: the layout's slice offset is placed so no offset is
 * negative.
 */
static cugl_layout random_layout_of(oracle_rng *r, int ndim, const int64_t *shape,
                                    int64_t itemsize, bool broadcast)
{
    int64_t big[8];
    int perm[8];
    for (int i = 0; i < ndim; i++)
        big[i] = shape[i] * oracle_range(r, 1, 3) + oracle_range(r, 0, 2);
    shuffle(r, perm, ndim);
    cugl_layout l;
    assert_ok(cugl_layout_dense(&l, ndim, big, itemsize, CUGL_ORDER_CUSTOM, perm));
    cugl_slice s[8];
    for (int i = 0; i < ndim; i++) {
        if (shape[i] == 0) {
            s[i] = CUGL_SLICE(0, 0, 1);
            continue;
        }
        int64_t step = big[i] >= 2 * shape[i] && oracle_range(r, 0, 1) ? 2 : 1;
        if (oracle_range(r, 0, 3) == 0)
            step = -step;
        int64_t span = (shape[i] - 1) * (step < 0 ? -step : step) + 1;
        int64_t first = oracle_range(r, 0, big[i] - span);
        s[i] = step > 0 ? CUGL_SLICE(first, first + span, step)
                        : CUGL_SLICE(first + span - 1, first - 1 < 0 ? -big[i] - 1 : first - 1,
                                     step);
    }
    assert_ok(cugl_layout_sliced(&l, &l, ndim, s));
    for (int i = 0; i < ndim; i++)
        assert_int_equal(l.shape[i], shape[i]);
    if (broadcast && ndim > 0) {
        /* A source with stride-0 axes: some extents read one element. */
        cugl_layout b = l;
        for (int i = 0; i < ndim; i++)
            if (oracle_range(r, 0, 2) == 0)
                b.strides[i] = 0;
        assert_ok(cugl_layout_validate(&b));
        l = b;
    }
    return l;
}

static void fill_pattern(uint8_t *p, size_t n, uint8_t salt)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(i * 131 + salt + (i >> 8));
}

/* Random host-to-host copies, checked element by element. */
static void random_copies_match_the_oracle(void **state)
{
    (void)state;
    static const int64_t itemsizes[] = {1, 2, 3, 4, 6, 8, 12, 16, 32};
    oracle_rng rng = {seed};
    static int64_t idx_offs_s[4096], idx_offs_d[4096];
    for (long c = 0; c < cases; c++) {
        int ndim = (int)oracle_range(&rng, 0, 4);
        int64_t shape[8];
        for (int i = 0; i < ndim; i++)
            shape[i] = oracle_range(&rng, 0, 12) == 0 ? 0 : oracle_range(&rng, 1, 6);
        int64_t is = itemsizes[oracle_range(&rng, 0, 8)];
        cugl_layout sl = random_layout_of(&rng, ndim, shape, is, oracle_range(&rng, 0, 3) == 0);
        cugl_layout dl = random_layout_of(&rng, ndim, shape, is, false);
        int64_t sneed, dneed;
        assert_ok(cugl_layout_required_size_in_bytes(&sl, &sneed));
        assert_ok(cugl_layout_required_size_in_bytes(&dl, &dneed));
        /* Misaligned bases exercise the element splitting. */
        size_t salign = oracle_range(&rng, 0, 1) ? 0 : (size_t)oracle_range(&rng, 1, 15);
        size_t dalign = oracle_range(&rng, 0, 1) ? 0 : (size_t)oracle_range(&rng, 1, 15);
        uint8_t *smem = malloc((size_t)sneed + 32), *dmem = malloc((size_t)dneed + 32);
        uint8_t *expect = malloc((size_t)dneed + 32);
        fill_pattern(smem, (size_t)sneed + 32, 7);
        fill_pattern(dmem, (size_t)dneed + 32, 99);
        memcpy(expect, dmem, (size_t)dneed + 32);

        int64_t n = oracle_enumerate(&sl, idx_offs_s);
        assert_int_equal(oracle_enumerate(&dl, idx_offs_d), n);
        for (int64_t k = 0; k < n; k++)
            memcpy(expect + dalign + idx_offs_d[k] * is, smem + salign + idx_offs_s[k] * is,
                   (size_t)is);

        cugl_buffer *sb = host_buffer(smem + salign, (size_t)sneed);
        cugl_buffer *db = host_buffer(dmem + dalign, (size_t)dneed);
        cugl_view *sv, *dv;
        assert_ok(cugl_view_from_buffer(&sv, sb, &sl, (cugl_dtype){0}, true));
        assert_ok(cugl_view_from_buffer(&dv, db, &dl, (cugl_dtype){0}, false));
        if (oracle_range(&rng, 0, 1))
            assert_ok(cugl_view_copy_from(dv, sv, NULL, NULL));
        else
            assert_ok(cugl_view_copy_to(sv, dv, NULL, NULL));
        if (memcmp(dmem, expect, (size_t)dneed + 32) != 0) {
            size_t at = 0;
            while (dmem[at] == expect[at])
                at++;
            fail_msg("case %ld: ndim %d itemsize %lld: byte %zu is %u, expected %u", c, ndim,
                     (long long)is, at, dmem[at], expect[at]);
        }
        cugl_view_release(sv);
        cugl_view_release(dv);
        cugl_buffer_release(sb);
        cugl_buffer_release(db);
        free(smem);
        free(dmem);
        free(expect);
    }
}

/* cugl_live_objects follows what is made and released to its last
 * reference; a view keeps its buffer alive, and counted, after the caller's
 * release. Host buffers hold no bytes from a memory resource. */
static void live_counts_follow_objects(void **state)
{
    (void)state;
    const int64_t objects = cugl_live_objects(), bytes = cugl_live_bytes();
    float data[8] = {0};
    cugl_buffer *b = host_buffer(data, sizeof data);
    assert_int_equal(cugl_live_objects(), objects + 1);
    int64_t shape[] = {8};
    cugl_layout l;
    assert_ok(cugl_layout_init(&l, 1, shape, NULL, 4));
    cugl_view *v;
    assert_ok(cugl_view_from_buffer(&v, b, &l, CUGL_DTYPE_F32, false));
    assert_int_equal(cugl_live_objects(), objects + 2);
    cugl_buffer_release(b);
    assert_int_equal(cugl_live_objects(), objects + 2);
    cugl_view *refused = NULL;
    int64_t too_long[] = {9};
    assert_ok(cugl_layout_init(&l, 1, too_long, NULL, 4));
    assert_int_equal(cugl_view_from_buffer(&refused, b, &l, CUGL_DTYPE_F32, false),
                     CUGL_ERROR_INVALID_ARGUMENT);
    assert_null(refused);
    assert_int_equal(cugl_live_objects(), objects + 2);
    cugl_view_release(v);
    assert_int_equal(cugl_live_objects(), objects);
    assert_int_equal(cugl_live_bytes(), bytes);
}

/* Views: attributes, the buffer they keep, views of views. */
static void views_of_host_memory(void **state)
{
    (void)state;
    float data[6 * 4];
    for (int i = 0; i < 24; i++)
        data[i] = (float)i;
    cugl_buffer *b = host_buffer(data, sizeof data);
    int64_t shape[] = {6, 4};
    cugl_layout l, t;
    assert_ok(cugl_layout_init(&l, 2, shape, NULL, 4));
    cugl_view *v, *w;
    assert_ok(cugl_view_from_buffer(&v, b, &l, CUGL_DTYPE_F32, false));
    cugl_buffer_release(b); /* the view keeps it */
    assert_ptr_equal(cugl_view_buffer(v), b);
    assert_int_equal(cugl_view_ptr(v), (uint64_t)(uintptr_t)data);
    assert_int_equal(cugl_view_device_id(v), -1);
    assert_false(cugl_view_is_device_accessible(v));
    assert_true(cugl_view_is_host_accessible(v));
    assert_false(cugl_view_readonly(v));
    assert_int_equal(cugl_view_ndim(v), 2);
    assert_int_equal(cugl_view_shape(v)[1], 4);
    assert_int_equal(cugl_view_strides(v)[0], 4);
    assert_int_equal(cugl_view_dtype(v).bits, 32);

    /* v[1::2, ::-1]: ptr moves to element (1, 3). */
    cugl_slice s[] = {CUGL_SLICE(1, 6, 2), CUGL_SLICE_STEP(-1)};
    assert_ok(cugl_layout_sliced(&t, &l, 2, s));
    assert_ok(cugl_view_view(&w, v, &t, (cugl_dtype){0}));
    assert_int_equal(cugl_view_ptr(w), (uint64_t)(uintptr_t)&data[1 * 4 + 3]);
    assert_int_equal(cugl_view_dtype(w).code, CUGL_DTYPE_FLOAT); /* kept */
    cugl_view_release(w);

    /* The same bytes as uint8 x 4 per float: a repacked layout. */
    assert_ok(cugl_layout_repacked(&t, &l, 1, 0, -1, true));
    assert_ok(cugl_view_view(&w, v, &t, CUGL_DTYPE_U8));
    assert_int_equal(cugl_view_shape(w)[1], 16);
    cugl_view_release(w);
    cugl_view_release(v);
}

/* Rows contiguous on both sides, but source rows 5 apart: the copy may not
 * widen elements past the row (a 16-byte element would straddle rows). */
static void widening_respects_every_stride(void **state)
{
    (void)state;
    _Alignas(16) int32_t src[3 * 5], dst[3 * 4 + 4];
    for (int i = 0; i < 15; i++)
        src[i] = i;
    memset(dst, 0xff, sizeof dst);
    cugl_buffer *sb = host_buffer(src, sizeof src), *db = host_buffer(dst, sizeof dst);
    int64_t shape[] = {3, 4}, sstr[] = {5, 1};
    cugl_layout sl, dl;
    assert_ok(cugl_layout_init(&sl, 2, shape, sstr, 4));
    assert_ok(cugl_layout_init(&dl, 2, shape, NULL, 4));
    cugl_view *sv, *dv;
    assert_ok(cugl_view_from_buffer(&sv, sb, &sl, CUGL_DTYPE_I32, false));
    assert_ok(cugl_view_from_buffer(&dv, db, &dl, CUGL_DTYPE_I32, false));
    assert_ok(cugl_view_copy_from(dv, sv, NULL, NULL));
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 4; c++)
            assert_int_equal(dst[r * 4 + c], r * 5 + c);
    for (int i = 12; i < 16; i++)
        assert_int_equal(dst[i], -1);
    cugl_view_release(sv);
    cugl_view_release(dv);
    cugl_buffer_release(sb);
    cugl_buffer_release(db);
}

typedef struct err_case {
    const char *what;
    cugl_status (*call)(void);
    cugl_status status;
    const char *message;
} err_case;

static float mem[64];
static cugl_buffer *buf;
static cugl_view *v44, *v44_ro, *v22, *v44_u8x4, *out_view;
static cugl_layout l44, l44_t, l22, lneg, lbig;

static cugl_status e01(void) { return cugl_view_from_buffer(NULL, buf, &l44, CUGL_DTYPE_F32, false); }
static cugl_status e02(void) { return cugl_view_from_buffer(&out_view, NULL, &l44, CUGL_DTYPE_F32, false); }
static cugl_status e03(void) { return cugl_view_from_buffer(&out_view, buf, NULL, CUGL_DTYPE_F32, false); }
static cugl_status e04(void) { return cugl_view_from_buffer(&out_view, buf, &l44, CUGL_DTYPE_U8, false); }
static cugl_status e05(void) { return cugl_view_from_buffer(&out_view, buf, &lbig, CUGL_DTYPE_F32, false); }
static cugl_status e06(void) { return cugl_view_from_buffer(&out_view, buf, &lneg, CUGL_DTYPE_F32, false); }
static cugl_status e07(void)
{
    return cugl_view_from_buffer(&out_view, buf, &l44, (cugl_dtype){CUGL_DTYPE_FLOAT, 12, 1}, false);
}
static cugl_status e08(void) { return cugl_view_copy_from(v44_ro, v44, NULL, NULL); }
static cugl_status e09(void) { return cugl_view_copy_from(v44, v22, NULL, NULL); }
static cugl_status e10(void) { return cugl_view_copy_from(v44, v44_u8x4, NULL, NULL); }
static cugl_status e11(void) { return cugl_view_copy_from(NULL, v44, NULL, NULL); }
static cugl_status e12(void) { return cugl_view_copy_to(NULL, v44, NULL, NULL); }
static cugl_status e13(void)
{
    /* v44 and its transpose share memory. */
    cugl_view *t;
    cugl_status st = cugl_view_view(&t, v44, &l44_t, (cugl_dtype){0});
    if (st == CUGL_OK) {
        st = cugl_view_copy_from(v44, t, NULL, NULL);
        cugl_view_release(t);
    }
    return st;
}
static cugl_status e14(void)
{
    cugl_layout b;
    int64_t shape[] = {4, 4};
    int64_t strides[] = {0, 1};
    cugl_layout_init(&b, 2, shape, strides, 4);
    cugl_view *t;
    cugl_status st = cugl_view_view(&t, v22, &b, (cugl_dtype){0});
    if (st == CUGL_OK) {
        st = cugl_view_copy_from(t, v44, NULL, NULL);
        cugl_view_release(t);
    }
    return st;
}
static cugl_status e15(void)
{
    return cugl_view_copy_from(v44, v22, NULL, &(cugl_view_copy_desc){.blocking = 7});
}
static cugl_status e16(void) { return cugl_view_view(&out_view, NULL, &l44, CUGL_DTYPE_F32); }
static cugl_status e17(void) { return cugl_view_from_dlpack(&out_view, NULL, NULL); }
static cugl_status e18(void)
{
    DLManagedTensor *t;
    return cugl_view_to_dlpack(&t, v44_ro);
}
static cugl_status e19(void)
{
    DLManagedTensor *t;
    cugl_view *u;
    cugl_status st = cugl_view_view(&u, v44, &l44, (cugl_dtype){0});
    cugl_view *w = NULL;
    if (st == CUGL_OK) {
        cugl_layout raw = l44;
        st = cugl_view_from_buffer(&w, buf, &raw, (cugl_dtype){0}, false);
        if (st == CUGL_OK)
            st = cugl_view_to_dlpack(&t, w);
    }
    cugl_view_release(w);
    cugl_view_release(u);
    return st;
}

static const err_case errors[] = {
    {"from_buffer out NULL", e01, CUGL_ERROR_INVALID_ARGUMENT, "cugl_view_from_buffer: out is NULL"},
    {"from_buffer buffer NULL", e02, CUGL_ERROR_INVALID_ARGUMENT,
     "cugl_view_from_buffer: buffer is NULL"},
    {"from_buffer layout NULL", e03, CUGL_ERROR_INVALID_ARGUMENT,
     "cugl_view_from_buffer: layout is NULL"},
    {"dtype size", e04, CUGL_ERROR_INVALID_ARGUMENT,
     "cugl_view_from_buffer: the dtype has 1 bytes but the layout's itemsize is 4; repack the "
     "layout first (cugl_layout_repacked)"},
    {"buffer too small", e05, CUGL_ERROR_INVALID_ARGUMENT,
     "cugl_view_from_buffer: the layout needs 400 bytes but the buffer has 256"},
    {"negative offsets", e06, CUGL_ERROR_INVALID_ARGUMENT,
     "cugl_view_from_buffer: the layout reaches before the start of the buffer (to element "
     "offset -3)"},
    {"dtype not whole bytes", e07, CUGL_ERROR_INVALID_ARGUMENT,
     "cugl_view_from_buffer: dtype has 12 bits x 1 lanes; cugl views need whole bytes"},
    {"read-only destination", e08, CUGL_ERROR_INVALID_ARGUMENT,
     "cugl_view_copy_from: the destination view is read-only"},
    {"shape mismatch", e09, CUGL_ERROR_INVALID_ARGUMENT,
     "cugl_view_copy_from: shapes differ: the source is (2, 2), the destination (4, 4) "
     "(broadcast the source with cugl_layout_broadcast_to)"},
    {"dtype mismatch", e10, CUGL_ERROR_INVALID_ARGUMENT,
     "cugl_view_copy_from: dtypes differ (code 1, 8 bits x 4 to code 2, 32 bits x 1); a copy "
     "does not convert"},
    {"copy_from dst NULL", e11, CUGL_ERROR_INVALID_ARGUMENT, "cugl_view_copy_from: dst is NULL"},
    {"copy_to src NULL", e12, CUGL_ERROR_INVALID_ARGUMENT, "cugl_view_copy_to: src is NULL"},
    {"overlap", e13, CUGL_ERROR_INVALID_ARGUMENT, "overlap in memory"},
    {"broadcast destination", e14, CUGL_ERROR_INVALID_ARGUMENT,
     "cugl_view_copy_from: the destination layout maps several indices to one element (a "
     "broadcast); a copy into it would be ambiguous"},
    {"blocking", e15, CUGL_ERROR_INVALID_ARGUMENT,
     "cugl_view_copy_from: blocking 7 is not a cugl_blocking"},
    {"view of NULL", e16, CUGL_ERROR_INVALID_ARGUMENT, "cugl_view_view: view is NULL"},
    {"from_dlpack NULL", e17, CUGL_ERROR_INVALID_ARGUMENT, "cugl_view_from_dlpack: tensor is NULL"},
    {"read-only unversioned export", e18, CUGL_ERROR_INVALID_ARGUMENT,
     "cugl_view_to_dlpack: the view is read-only and an unversioned DLPack tensor cannot say so; "
     "use cugl_view_to_dlpack_versioned"},
    {"untyped export", e19, CUGL_ERROR_NOT_SUPPORTED,
     "cugl_view_to_dlpack: the view is untyped; DLPack needs a dtype (make one with "
     "cugl_view_view)"},
};

static void every_error_branch(void **state)
{
    (void)state;
    buf = host_buffer(mem, sizeof mem);
    int64_t s44[] = {4, 4}, s22[] = {2, 2}, big[] = {10, 10}, neg[] = {-1, 1};
    assert_ok(cugl_layout_init(&l44, 2, s44, NULL, 4));
    int perm[] = {1, 0};
    assert_ok(cugl_layout_permuted(&l44_t, &l44, perm));
    assert_ok(cugl_layout_init(&l22, 2, s22, NULL, 4));
    l22.slice_offset = 20; /* away from v44's 16 floats */
    assert_ok(cugl_layout_init(&lbig, 2, big, NULL, 4));
    assert_ok(cugl_layout_init(&lneg, 2, s44, neg, 4));
    assert_ok(cugl_view_from_buffer(&v44, buf, &l44, CUGL_DTYPE_F32, false));
    assert_ok(cugl_view_from_buffer(&v44_ro, buf, &l44, CUGL_DTYPE_F32, true));
    assert_ok(cugl_view_from_buffer(&v22, buf, &l22, CUGL_DTYPE_F32, false));
    cugl_layout l44_u8 = l44;
    l44_u8.slice_offset = 32;
    assert_ok(cugl_view_from_buffer(&v44_u8x4, buf, &l44_u8, (cugl_dtype){CUGL_DTYPE_UINT, 8, 4},
                                    false));
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++) {
        cugl_clear_error();
        out_view = NULL;
        cugl_status st = errors[i].call();
        if (st != errors[i].status)
            fail_msg("%s: returned %s (%s)", errors[i].what, cugl_status_name(st),
                     cugl_last_error());
        if (!strstr(cugl_last_error(), errors[i].message))
            fail_msg("%s: message\n  \"%s\", expected\n  \"%s\"", errors[i].what,
                     cugl_last_error(), errors[i].message);
        assert_null(out_view);
    }
    cugl_view_release(v44);
    cugl_view_release(v44_ro);
    cugl_view_release(v22);
    cugl_view_release(v44_u8x4);
    cugl_buffer_release(buf);
}

/* --- DLPack, CPU tensors --- */

static int deleted;

static void count_delete(DLManagedTensor *self)
{
    deleted++;
    free(self->manager_ctx);
}

static void count_delete_versioned(struct DLManagedTensorVersioned *self);


static void count_delete_versioned(struct DLManagedTensorVersioned *self)
{
    deleted++;
    free(self->manager_ctx);
}

static void dlpack_cpu_round_trip(void **state)
{
    (void)state;
    /* A 3 x 4 int32 tensor, seen reversed along its rows: negative strides. */
    int32_t *data = malloc(12 * sizeof *data);
    for (int i = 0; i < 12; i++)
        data[i] = i * 10;
    int64_t shape[] = {3, 4}, strides[] = {-4, 1};
    DLManagedTensor t = {
        .dl_tensor = {.data = data, .device = {kDLCPU, 0}, .ndim = 2,
                      .dtype = {kDLInt, 32, 1}, .shape = shape, .strides = strides,
                      .byte_offset = 8 * sizeof(int32_t)},
        .manager_ctx = data,
        .deleter = count_delete,
    };
    deleted = 0;
    cugl_view *v;
    assert_ok(cugl_view_from_dlpack(&v, &t, NULL));
    assert_int_equal(cugl_view_ptr(v), (uint64_t)(uintptr_t)&data[8]);
    assert_int_equal(cugl_view_device_id(v), -1);
    assert_int_equal(cugl_view_strides(v)[0], -4);
    assert_int_equal(cugl_view_dtype(v).code, CUGL_DTYPE_INT);

    /* Copy it into a dense tensor: rows come out in reverse. */
    int32_t dense[12] = {0};
    cugl_buffer *db = host_buffer(dense, sizeof dense);
    cugl_layout dl;
    assert_ok(cugl_layout_init(&dl, 2, shape, NULL, 4));
    cugl_view *dv;
    assert_ok(cugl_view_from_buffer(&dv, db, &dl, CUGL_DTYPE_I32, false));
    cugl_buffer_release(db);
    assert_ok(cugl_view_copy_from(dv, v, NULL, NULL));
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 4; c++)
            assert_int_equal(dense[r * 4 + c], ((2 - r) * 4 + c) * 10);

    /* Export and import again: the same element (1, 2). */
    DLManagedTensor *out;
    assert_ok(cugl_view_to_dlpack(&out, v));
    assert_int_equal(out->dl_tensor.device.device_type, kDLCPU);
    assert_int_equal(out->dl_tensor.ndim, 2);
    assert_int_equal(out->dl_tensor.strides[0], -4);
    const int32_t *base = (const int32_t *)((const char *)out->dl_tensor.data +
                                            out->dl_tensor.byte_offset);
    assert_int_equal(base[1 * out->dl_tensor.strides[0] + 2 * out->dl_tensor.strides[1]], 60);
    cugl_view_release(v); /* the export keeps it, and the view keeps the tensor */
    assert_int_equal(deleted, 0);
    cugl_view *again;
    assert_ok(cugl_view_from_dlpack(&again, out, NULL));
    assert_int_equal(cugl_view_ptr(again), (uint64_t)(uintptr_t)&data[8]);
    cugl_view_release(again); /* calls out's deleter, which releases v, which deletes t */
    assert_int_equal(deleted, 1);

    /* A versioned, read-only tensor is imported read-only. */
    int32_t *more = malloc(4 * sizeof *more);
    int64_t four[] = {4};
    struct DLManagedTensorVersioned vt = {
        .version = {1, 0},
        .manager_ctx = more,
        .deleter = count_delete_versioned,
        .flags = 1, /* read-only */
        .dl_tensor = {.data = more, .device = {kDLCPU, 0}, .ndim = 1,
                      .dtype = {kDLFloat, 32, 1}, .shape = four},
    };
    assert_ok(cugl_view_from_dlpack_versioned(&v, &vt, NULL));
    assert_true(cugl_view_readonly(v));
    struct DLManagedTensorVersioned *vout;
    assert_ok(cugl_view_to_dlpack_versioned(&vout, v));
    assert_int_equal(vout->version.major, 1);
    assert_int_equal(vout->flags & 1, 1);
    vout->deleter(vout);
    cugl_view_release(v);
    assert_int_equal(deleted, 2);

    /* Refusals leave the tensor with the caller. */
    vt.version.major = 2;
    assert_status(cugl_view_from_dlpack_versioned(&v, &vt, NULL), CUGL_ERROR_NOT_SUPPORTED);
    assert_error_mentions("DLPack 2.0");
    t.dl_tensor.device.device_type = kDLOpenCL;
    assert_status(cugl_view_from_dlpack(&v, &t, NULL), CUGL_ERROR_NOT_SUPPORTED);
    assert_error_mentions("device type 4");
    t.dl_tensor.device.device_type = kDLCUDA;
    assert_status(cugl_view_from_dlpack(&v, &t, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_error_mentions("consumer_stream is NULL");
    t.dl_tensor.device.device_type = kDLCPU;
    t.dl_tensor.dtype.bits = 4;
    assert_status(cugl_view_from_dlpack(&v, &t, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_error_mentions("whole bytes");
    assert_int_equal(deleted, 2);
    cugl_view_release(dv);
}

/* Defects an outside bad-input run found in imports and wraps of foreign
 * memory: tensors and ranges a copy would later read out of bounds or
 * through NULL, and a device that does not exist, are refused at once. */
static void outside_run_defects(void **state)
{
    (void)state;
    int64_t shape[] = {4};
    int32_t data[4] = {1, 2, 3, 4};
    int deleted_before = deleted;
    DLManagedTensor t = {
        .dl_tensor = {.data = data, .device = {kDLCPU, 0}, .ndim = 1,
                      .dtype = {kDLInt, 32, 1}, .shape = shape},
        .manager_ctx = NULL, /* count_delete frees it */
        .deleter = count_delete,
    };
    cugl_view *v = NULL;
    /* NULL data with elements. */
    t.dl_tensor.data = NULL;
    assert_status(cugl_view_from_dlpack(&v, &t, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_error_mentions("data is NULL, yet it has 4 elements");
    assert_null(v);
    /* NULL data with no element is an empty view. */
    shape[0] = 0;
    assert_ok(cugl_view_from_dlpack(&v, &t, NULL));
    cugl_view_release(v);
    assert_int_equal(deleted, deleted_before + 1);
    shape[0] = 4;
    /* A byte offset that wraps the pointer, and elements that run past the end. */
    t.dl_tensor.data = data;
    t.dl_tensor.byte_offset = UINT64_MAX - 2;
    assert_status(cugl_view_from_dlpack(&v, &t, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_error_mentions("wraps around the address space");
    t.dl_tensor.data = (void *)(uintptr_t)(UINT64_MAX - 64);
    t.dl_tensor.byte_offset = 60;
    assert_status(cugl_view_from_dlpack(&v, &t, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_error_mentions("run past the end of the address space");
    /* A CUDA device that does not exist (here, where there may be none). */
    t.dl_tensor.data = data;
    t.dl_tensor.byte_offset = 0;
    t.dl_tensor.device = (DLDevice){kDLCUDA, 4096};
    assert_status(cugl_view_from_dlpack(&v, &t, &(cugl_dlpack_import_desc){.no_sync = true}),
                  CUGL_ERROR_INVALID_ARGUMENT);
    assert_error_mentions("the tensor is on CUDA device 4096");
    t.dl_tensor.device = (DLDevice){kDLCUDA, -1};
    assert_status(cugl_view_from_dlpack(&v, &t, &(cugl_dlpack_import_desc){.no_sync = true}),
                  CUGL_ERROR_INVALID_ARGUMENT);
    assert_int_equal(deleted, deleted_before + 1); /* refusals leave the tensor to the caller */

    /* Ranges that wrap the address space. */
    cugl_buffer *b = NULL;
    assert_status(cugl_buffer_from_handle(&b, UINT64_MAX - 15, 17, NULL),
                  CUGL_ERROR_INVALID_ARGUMENT);
    assert_error_mentions("wraps around the address space");
    assert_null(b);
    assert_status(cugl_buffer_from_handle(&b, 4096, SIZE_MAX, NULL), CUGL_ERROR_INVALID_ARGUMENT);

    /* A NULL shape out of an array's size getter, with no array either. */
    cugl_array_shape(NULL, NULL);
}

/* Overlap is decided by elements, not byte ranges: a buffer's even columns
 * copied into its odd columns share no element and copy exactly; views
 * that do share one are still refused. */
static void interleaved_views_do_not_overlap(void **state)
{
    (void)state;
    int32_t data[6 * 8];
    for (int i = 0; i < 48; i++)
        data[i] = i;
    cugl_buffer *b = host_buffer(data, sizeof data);
    cugl_layout l, even, odd, shifted;
    assert_ok(cugl_layout_init(&l, 2, (int64_t[]){6, 8}, NULL, 4));
    cugl_slice evens[] = {CUGL_SLICE_ALL, CUGL_SLICE(0, 8, 2)};
    cugl_slice odds[] = {CUGL_SLICE_ALL, CUGL_SLICE(1, 8, 2)};
    cugl_slice rows[] = {CUGL_SLICE(1, 6, 1), CUGL_SLICE(0, 8, 2)};
    assert_ok(cugl_layout_sliced(&even, &l, 2, evens));
    assert_ok(cugl_layout_sliced(&odd, &l, 2, odds));
    cugl_view *all, *ve, *vo, *vs;
    assert_ok(cugl_view_from_buffer(&all, b, &l, CUGL_DTYPE_I32, false));
    assert_ok(cugl_view_view(&ve, all, &even, (cugl_dtype){0}));
    assert_ok(cugl_view_view(&vo, all, &odd, (cugl_dtype){0}));
    assert_ok(cugl_view_copy_from(vo, ve, NULL, NULL));
    for (int r = 0; r < 6; r++)
        for (int c = 0; c < 8; c++)
            assert_int_equal(data[r * 8 + c], r * 8 + (c & ~1));
    /* Rows 1-5 of the even columns against rows 0-4 of them: 4 rows shared. */
    assert_ok(cugl_layout_sliced(&shifted, &l, 2, rows));
    assert_ok(cugl_view_view(&vs, all, &shifted, (cugl_dtype){0}));
    cugl_view *top = NULL;
    cugl_slice top_rows[] = {CUGL_SLICE(0, 5, 1), CUGL_SLICE(0, 8, 2)};
    cugl_layout t;
    assert_ok(cugl_layout_sliced(&t, &l, 2, top_rows));
    assert_ok(cugl_view_view(&top, all, &t, (cugl_dtype){0}));
    assert_status(cugl_view_copy_from(vs, top, NULL, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_error_mentions("overlap");
    cugl_view_release(top);
    cugl_view_release(vs);
    cugl_view_release(vo);
    cugl_view_release(ve);
    cugl_view_release(all);
    cugl_buffer_release(b);
}

int main(void)
{
    const char *s = getenv("CUGL_TEST_SEED"), *n = getenv("CUGL_TEST_CASES");
    if (s)
        seed = strtoull(s, NULL, 0);
    if (n)
        cases = strtol(n, NULL, 10);
    printf("# seed 0x%llx, %ld random copies\n", (unsigned long long)seed, cases);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(views_of_host_memory),
        cmocka_unit_test(widening_respects_every_stride),
        cmocka_unit_test(every_error_branch),
        cmocka_unit_test(dlpack_cpu_round_trip),
        cmocka_unit_test(outside_run_defects),
        cmocka_unit_test(live_counts_follow_objects),
        cmocka_unit_test(interleaved_views_do_not_overlap),
        cmocka_unit_test(random_copies_match_the_oracle),
    };
    return cugl_test_run(tests);
}
