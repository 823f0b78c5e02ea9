/*
 * Memory resources on a real GPU: every kind allocates what it says, reports
 * what it is and moves bytes exactly (through cugl's copies and fills, the
 * CPU where the memory is host-accessible, and the raw driver); pool
 * statistics and trimming; a pool's size limit; a long allocate/free run
 * that must give every byte back; the closed state.
 * (Buffers: test_buffer.c. IPC pools: test_buffer_ipc.c.)
 */
#include "gpu_bytes.h"

static cugl_device *dev;
static int ordinal;
static cugl_device_properties props;
static cugl_stream *stream;
static cugl_memory_resource *device_mr; /* the current pool: device-side copies */

/* ---------------------------------------------------------- the kinds */

enum make {
    MAKE_DEVICE_CURRENT,
    MAKE_DEVICE_OWN,
    MAKE_DEVICE_LIMITED,
    MAKE_PINNED,
    MAKE_MANAGED,
    MAKE_MANAGED_DEVICE,
    MAKE_MANAGED_HOST,
    MAKE_LEGACY,
    MAKE_EXPORTABLE,
};

enum { POOL_NO, POOL_YES, POOL_IF_HOST_POOLS };

typedef struct kind_case {
    const char *name;
    enum make make;
    cugl_memory_kind kind;
    bool device_accessible, host_accessible, managed;
    bool on_device; /* device_id is the device's ordinal; else -1 */
    int pool;       /* POOL_*: has a pool and is stream-ordered */
} kind_case;

static const kind_case kinds[] = {
    {"device, current pool", MAKE_DEVICE_CURRENT, CUGL_MEMORY_DEVICE, true, false, false, true,
     POOL_YES},
    {"device, own pool", MAKE_DEVICE_OWN, CUGL_MEMORY_DEVICE, true, false, false, true, POOL_YES},
    {"device, own pool of at most 64 MiB", MAKE_DEVICE_LIMITED, CUGL_MEMORY_DEVICE, true, false,
     false, true, POOL_YES},
    /* A host pool where the driver has them (CUDA 12.6+), else cuMemHostAlloc. */
    {"pinned", MAKE_PINNED, CUGL_MEMORY_PINNED, true, true, false, false, POOL_IF_HOST_POOLS},
    {"managed, no preferred location", MAKE_MANAGED, CUGL_MEMORY_MANAGED, true, true, true, false,
     POOL_NO},
    {"managed, preferring the device", MAKE_MANAGED_DEVICE, CUGL_MEMORY_MANAGED, true, true, true,
     true, POOL_NO},
    {"managed, preferring the host", MAKE_MANAGED_HOST, CUGL_MEMORY_MANAGED, true, true, true,
     false, POOL_NO},
    {"legacy pinned", MAKE_LEGACY, CUGL_MEMORY_LEGACY_PINNED, true, true, false, false, POOL_NO},
    {"exportable", MAKE_EXPORTABLE, CUGL_MEMORY_EXPORTABLE, true, false, false, true, POOL_NO},
};

#define NUM_KINDS (sizeof kinds / sizeof kinds[0])

static cugl_memory_resource *make_mr(enum make m)
{
    cugl_memory_resource *mr = NULL;
    cugl_device_memory_desc own = {.own_pool = true};
    cugl_device_memory_desc limited = {.max_size = 64 * MiB};
    cugl_managed_memory_desc none = {.preferred_location = CUGL_LOCATION_NONE};
    cugl_managed_memory_desc on_device = {.preferred_location = CUGL_LOCATION_DEVICE};
    cugl_managed_memory_desc on_host = {.preferred_location = CUGL_LOCATION_HOST};
    switch (m) {
    case MAKE_DEVICE_CURRENT:
        assert_ok(cugl_device_memory_resource_create(&mr, dev, NULL));
        break;
    case MAKE_DEVICE_OWN:
        assert_ok(cugl_device_memory_resource_create(&mr, dev, &own));
        break;
    case MAKE_DEVICE_LIMITED:
        assert_ok(cugl_device_memory_resource_create(&mr, dev, &limited));
        break;
    case MAKE_PINNED:
        assert_ok(cugl_pinned_memory_resource_create(&mr, dev, NULL));
        break;
    case MAKE_MANAGED:
        assert_ok(cugl_managed_memory_resource_create(&mr, dev, &none));
        break;
    case MAKE_MANAGED_DEVICE:
        assert_ok(cugl_managed_memory_resource_create(&mr, dev, &on_device));
        break;
    case MAKE_MANAGED_HOST:
        assert_ok(cugl_managed_memory_resource_create(&mr, dev, &on_host));
        break;
    case MAKE_LEGACY:
        assert_ok(cugl_legacy_pinned_memory_resource_create(&mr, dev));
        break;
    case MAKE_EXPORTABLE:
        assert_ok(cugl_exportable_memory_resource_create(&mr, dev));
        break;
    }
    assert_non_null(mr);
    return mr;
}

/* Whether this device has what the kind needs; says why not otherwise. */
static bool has_pool(const kind_case *c, cugl_memory_resource *mr)
{
    if (c->pool == POOL_IF_HOST_POOLS)
        return cugl_memory_resource_pool_handle(mr) != NULL;
    return c->pool == POOL_YES;
}

static void check_resource(const kind_case *c, cugl_memory_resource *mr)
{
    bool pool = has_pool(c, mr);
    if (cugl_memory_resource_kind(mr) != c->kind ||
        cugl_memory_resource_is_device_accessible(mr) != c->device_accessible ||
        cugl_memory_resource_is_host_accessible(mr) != c->host_accessible ||
        cugl_memory_resource_is_managed(mr) != c->managed ||
        cugl_memory_resource_device_id(mr) != (c->on_device ? ordinal : -1) ||
        cugl_memory_resource_is_stream_ordered(mr) != pool)
        fail_msg("%s: kind %d, device/host accessible %d/%d, managed %d, device_id %d, "
                 "stream-ordered %d",
                 c->name, (int)cugl_memory_resource_kind(mr),
                 cugl_memory_resource_is_device_accessible(mr),
                 cugl_memory_resource_is_host_accessible(mr), cugl_memory_resource_is_managed(mr),
                 cugl_memory_resource_device_id(mr), cugl_memory_resource_is_stream_ordered(mr));
    assert_false(cugl_memory_resource_is_ipc_enabled(mr));
    assert_false(cugl_memory_resource_is_closed(mr));
    assert_ptr_equal(cugl_memory_resource_device(mr), dev);
    if (c->pool != POOL_IF_HOST_POOLS)
        assert_int_equal(cugl_memory_resource_pool_handle(mr) != NULL, pool);
}

static void check_buffer(const kind_case *c, cugl_memory_resource *mr, cugl_buffer *b, size_t n)
{
    assert_non_null(b);
    assert_false(cugl_buffer_is_closed(b));
    assert_int_equal(cugl_buffer_size(b), n);
    assert_ptr_equal(cugl_buffer_memory_resource(b), mr);
    if (n == 0)
        assert_int_equal(cugl_buffer_handle(b), 0);
    else
        assert_int_not_equal(cugl_buffer_handle(b), 0);
    if (cugl_buffer_device_id(b) != cugl_memory_resource_device_id(mr) ||
        cugl_buffer_is_device_accessible(b) != c->device_accessible ||
        cugl_buffer_is_host_accessible(b) != c->host_accessible ||
        cugl_buffer_is_managed(b) != c->managed)
        fail_msg("%s, %zu bytes: buffer device_id %d, device/host accessible %d/%d, managed %d",
                 c->name, n, cugl_buffer_device_id(b), cugl_buffer_is_device_accessible(b),
                 cugl_buffer_is_host_accessible(b), cugl_buffer_is_managed(b));
}

/*
 * One size of one kind: data in through a copy, a copy allocated by
 * copy_to, a fill, data out through copies and the raw driver; for
 * host-accessible memory also the CPU writing and reading it around a
 * round trip through device memory.
 */
static void round_trip(const kind_case *c, cugl_memory_resource *mr, size_t n)
{
    char what[160];
    cugl_buffer *b = NULL;
    assert_ok(cugl_memory_resource_allocate(&b, mr, n, stream));
    check_buffer(c, mr, b, n);

    cugl_buffer *copy = NULL;
    if (n == 0) {
        uint32_t word = 0x01020304u;
        assert_ok(cugl_buffer_fill(b, &word, sizeof word, stream));
        assert_ok(cugl_buffer_copy_to(&copy, b, stream));
        check_buffer(c, mr, copy, 0);
        assert_ok(cugl_buffer_close(copy, stream));
        assert_ok(cugl_buffer_close(b, stream));
        assert_true(cugl_buffer_is_closed(b));
        cugl_buffer_release(copy);
        cugl_buffer_release(b);
        return;
    }

    staging in = staging_new(n), out = staging_new(n);
    write_pattern(in.host, n, 1);
    assert_ok(cugl_buffer_copy_from(b, in.buffer, stream));
    assert_ok(cugl_buffer_copy_to(&copy, b, stream));
    check_buffer(c, mr, copy, n);
    assert_int_not_equal(cugl_buffer_handle(copy), cugl_buffer_handle(b));
    const uint8_t fill = 0x5a;
    assert_ok(cugl_buffer_fill(b, &fill, 1, stream));

    assert_ok(cugl_buffer_copy_from(out.buffer, copy, stream));
    assert_ok(cugl_stream_sync(stream));
    snprintf(what, sizeof what, "%s, %zu bytes: the copy made by copy_to", c->name, n);
    expect_pattern(out.host, n, 1, what);

    assert_ok(cugl_buffer_copy_from(out.buffer, b, stream));
    assert_ok(cugl_stream_sync(stream));
    snprintf(what, sizeof what, "%s, %zu bytes: the filled buffer", c->name, n);
    expect_bytes(out.host, n, fill, what);

    /* The driver, without cugl, reads what cugl wrote (device pointers). */
    if (!c->host_accessible || c->managed) {
        memset(out.host, 0, n);
        gpu_read(out.host, (CUdeviceptr)cugl_buffer_handle(copy), n);
        snprintf(what, sizeof what, "%s, %zu bytes: cuMemcpyDtoH of the copy", c->name, n);
        expect_pattern(out.host, n, 1, what);
    }

    if (c->host_accessible) {
        uint8_t *p = host_bytes(b);
        snprintf(what, sizeof what, "%s, %zu bytes: the fill read by the CPU", c->name, n);
        expect_bytes(p, n, fill, what);
        write_pattern(p, n, 2);
        cugl_buffer *d = NULL;
        assert_ok(cugl_memory_resource_allocate(&d, device_mr, n, stream));
        assert_ok(cugl_buffer_copy_from(d, b, stream));
        assert_ok(cugl_stream_sync(stream));
        memset(p, 0, n);
        assert_ok(cugl_buffer_copy_from(b, d, stream));
        assert_ok(cugl_stream_sync(stream));
        snprintf(what, sizeof what,
                 "%s, %zu bytes: CPU-written data back from a round trip through device memory",
                 c->name, n);
        expect_pattern(p, n, 2, what);
        assert_ok(cugl_buffer_close(d, stream));
        cugl_buffer_release(d);
    }

    assert_ok(cugl_buffer_close(copy, stream));
    assert_ok(cugl_buffer_close(b, stream));
    assert_true(cugl_buffer_is_closed(b));
    assert_int_equal(cugl_buffer_handle(b), 0);
    assert_int_equal(cugl_buffer_size(b), 0);
    assert_null(cugl_buffer_memory_resource(b));
    assert_ok(cugl_stream_sync(stream));
    cugl_buffer_release(copy);
    cugl_buffer_release(b);
    staging_free(&in);
    staging_free(&out);
}

static void every_kind_moves_bytes_exactly(void **state)
{
    (void)state;
    /* 1 MiB + 3: not a multiple of any page or granularity (exportable
     * memory is rounded up inside; the buffer keeps the exact size). */
    static const size_t sizes[] = {0, 1, 4096, MiB + 3};
    for (size_t k = 0; k < NUM_KINDS; k++) {
        const kind_case *c = &kinds[k];
        if (!gpu_memory_kind_applies(&props, c->kind, c->name))
            continue;
        cugl_memory_resource *mr = make_mr(c->make);
        check_resource(c, mr);
        if (c->pool == POOL_IF_HOST_POOLS)
            printf("# %s: %s\n", c->name,
                   has_pool(c, mr) ? "a host memory pool"
                                   : "cuMemHostAlloc (the driver has no host memory pools)");
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
            round_trip(c, mr, sizes[i]);
        cugl_memory_resource_release(mr);
    }
}

/* Stream-ordered resources need a stream; the others take NULL. */
static void stream_is_required_where_ordered(void **state)
{
    (void)state;
    for (size_t k = 0; k < NUM_KINDS; k++) {
        const kind_case *c = &kinds[k];
        if (!gpu_memory_kind_applies(&props, c->kind, c->name))
            continue;
        cugl_memory_resource *mr = make_mr(c->make);
        cugl_buffer *b = (cugl_buffer *)&props;
        if (cugl_memory_resource_is_stream_ordered(mr)) {
            assert_status(cugl_memory_resource_allocate(&b, mr, 64, NULL),
                          CUGL_ERROR_INVALID_ARGUMENT);
            assert_null(b);
            char needle[128];
            snprintf(needle, sizeof needle,
                     "cugl_memory_resource_allocate: stream is NULL; the %s memory resource "
                     "orders its work on a stream",
                     c->kind == CUGL_MEMORY_DEVICE ? "device" : "pinned");
            assert_error_mentions(needle);
            assert_status(cugl_memory_resource_deallocate(mr, 0, 0, NULL),
                          CUGL_ERROR_INVALID_ARGUMENT);
            assert_error_mentions("cugl_memory_resource_deallocate: stream is NULL");
        } else {
            assert_ok(cugl_memory_resource_allocate(&b, mr, 64, NULL));
            check_buffer(c, mr, b, 64);
            const uint8_t v = 0x3c;
            assert_ok(cugl_buffer_fill(b, &v, 1, stream));
            assert_ok(cugl_stream_sync(stream));
            uint8_t host[64];
            if (c->host_accessible)
                memcpy(host, host_bytes(b), sizeof host);
            else
                gpu_read(host, (CUdeviceptr)cugl_buffer_handle(b), sizeof host);
            expect_bytes(host, sizeof host, v, c->name);
            /* Deallocation without a stream is immediate. */
            assert_ok(cugl_buffer_close(b, NULL));
            cugl_buffer_release(b);
        }
        /* Freeing nothing is a no-op for every kind. */
        assert_ok(cugl_memory_resource_deallocate(mr, 0, 0, stream));
        cugl_memory_resource_release(mr);
    }
}

/* A closed stream is refused before anything is allocated. */
static void closed_stream_is_refused(void **state)
{
    (void)state;
    cugl_memory_resource *mr = make_mr(MAKE_DEVICE_OWN);
    cugl_stream *s = NULL;
    assert_ok(cugl_stream_create(&s, dev, NULL));
    cugl_stream_close(s);
    cugl_buffer *b = (cugl_buffer *)&props;
    assert_status(cugl_memory_resource_allocate(&b, mr, 64, s), CUGL_ERROR_CLOSED);
    assert_null(b);
    assert_error_mentions("cugl_memory_resource_allocate: the stream has been closed");
    assert_int_equal(pool_stats(mr).used_current, 0);
    cugl_stream_release(s);
    cugl_memory_resource_release(mr);
}

/* ----------------------------------------------------------- statistics */

static void pool_statistics_follow_allocations(void **state)
{
    (void)state;
    const size_t n = MiB + 3;
    for (size_t k = 0; k < NUM_KINDS; k++) {
        const kind_case *c = &kinds[k];
        if (!gpu_memory_kind_applies(&props, c->kind, c->name))
            continue;
        cugl_memory_resource *mr = make_mr(c->make);
        if (!has_pool(c, mr)) {
            cugl_pool_stats s;
            assert_status(cugl_memory_resource_pool_stats(mr, &s), CUGL_ERROR_NOT_SUPPORTED);
            assert_error_mentions("memory resource has no pool");
            /* Nothing to trim. */
            assert_ok(cugl_memory_resource_trim(mr, 0));
            cugl_memory_resource_release(mr);
            continue;
        }
        assert_status(cugl_memory_resource_pool_stats(mr, NULL), CUGL_ERROR_INVALID_ARGUMENT);
        assert_error_mentions("cugl_memory_resource_pool_stats: stats is NULL");

        assert_ok(cugl_stream_sync(stream));
        cugl_pool_stats before = pool_stats(mr);
        cugl_buffer *b = NULL;
        assert_ok(cugl_memory_resource_allocate(&b, mr, n, stream));
        assert_ok(cugl_stream_sync(stream));
        cugl_pool_stats during = pool_stats(mr);
        if (during.used_current < before.used_current + n)
            fail_msg("%s: used_current went from %llu to %llu after allocating %zu bytes",
                     c->name, (unsigned long long)before.used_current,
                     (unsigned long long)during.used_current, n);
        assert_true(during.used_high >= during.used_current);
        assert_true(during.reserved_current >= n);

        assert_ok(cugl_buffer_close(b, stream));
        assert_ok(cugl_stream_sync(stream));
        cugl_pool_stats after = pool_stats(mr);
        if (after.used_current != before.used_current)
            fail_msg("%s: used_current is %llu after the free, %llu before the allocation",
                     c->name, (unsigned long long)after.used_current,
                     (unsigned long long)before.used_current);
        /* The release threshold keeps freed memory reserved until a trim. */
        assert_true(after.reserved_current >= n);

        assert_ok(cugl_memory_resource_trim(mr, 0));
        cugl_pool_stats trimmed = pool_stats(mr);
        assert_true(trimmed.reserved_current <= after.reserved_current);
        assert_true(trimmed.reserved_high >= during.reserved_current);
        /* A pool of its own has nothing else outstanding: all of it goes. */
        if (c->make != MAKE_DEVICE_CURRENT && trimmed.reserved_current != 0)
            fail_msg("%s: %llu bytes still reserved after trimming an idle pool to 0", c->name,
                     (unsigned long long)trimmed.reserved_current);
        cugl_buffer_release(b);
        cugl_memory_resource_release(mr);
    }
}

/*
 * A pool's maximum size bounds what it reserves. This relies on the driver
 * enforcing CUmemPoolProps.maxSize (CUDA 12.2 and newer): an allocation
 * that would take the pool's reserved memory past it fails with
 * CUDA_ERROR_OUT_OF_MEMORY, whatever the device has free.
 */
static void pool_limit_is_enforced(void **state)
{
    (void)state;
    if (!props.memory_pools_supported) {
        gpu_not_applicable("the device has no stream-ordered memory pools");
        return;
    }
    const size_t limit = 64 * MiB;
    cugl_device_memory_desc desc = {.max_size = limit};
    cugl_memory_resource *mr = NULL;
    assert_ok(cugl_device_memory_resource_create(&mr, dev, &desc));
    assert_non_null(cugl_memory_resource_pool_handle(mr)); /* max_size implies a pool of its own */

    cugl_buffer *b = (cugl_buffer *)&props;
    assert_status(cugl_memory_resource_allocate(&b, mr, 2 * limit, stream),
                  CUGL_ERROR_OUT_OF_MEMORY);
    assert_null(b);
    assert_error_mentions("cugl_memory_resource_allocate: out of memory: cannot allocate "
                          "134217728 bytes from the device pool");
    assert_int_equal(pool_stats(mr).used_current, 0);

    /* Below the limit it allocates; two such allocations do not fit. */
    const size_t part = 48 * MiB;
    cugl_buffer *first = NULL, *second = (cugl_buffer *)&props;
    assert_ok(cugl_memory_resource_allocate(&first, mr, part, stream));
    assert_status(cugl_memory_resource_allocate(&second, mr, part, stream),
                  CUGL_ERROR_OUT_OF_MEMORY);
    assert_null(second);
    assert_error_mentions("cannot allocate 50331648 bytes");
    assert_ok(cugl_stream_sync(stream));
    cugl_pool_stats s = pool_stats(mr);
    if (s.reserved_high > limit)
        fail_msg("the pool reserved %llu bytes, more than its limit of %zu",
                 (unsigned long long)s.reserved_high, limit);

    /* The pool still works, and memory freed within it is reused. */
    const uint32_t word = 0xc0ffee11u;
    assert_ok(cugl_buffer_fill(first, &word, sizeof word, stream));
    assert_ok(cugl_buffer_close(first, stream));
    assert_ok(cugl_memory_resource_allocate(&second, mr, part, stream));
    assert_ok(cugl_buffer_fill(second, &word, sizeof word, stream));
    assert_ok(cugl_stream_sync(stream));
    uint32_t head[4];
    gpu_read(head, (CUdeviceptr)cugl_buffer_handle(second), sizeof head);
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(head[i], word);
    assert_ok(cugl_buffer_close(second, stream));
    assert_ok(cugl_stream_sync(stream));
    cugl_buffer_release(first);
    cugl_buffer_release(second);
    cugl_memory_resource_release(mr);
}

/* A limit below one allocation granule would not hold (the driver served
 * larger allocations from such a pool): refused at creation. And a buffer
 * whose resource was closed cannot allocate a copy of itself, in a message
 * that names the call made. */
static void pool_limit_below_a_granule(void **state)
{
    (void)state;
    if (!props.memory_pools_supported) {
        gpu_not_applicable("the device has no stream-ordered memory pools");
        return;
    }
    cugl_memory_resource *mr = (cugl_memory_resource *)&props;
    assert_status(cugl_device_memory_resource_create(&mr, dev,
                                                     &(cugl_device_memory_desc){.max_size = 4096}),
                  CUGL_ERROR_INVALID_ARGUMENT);
    assert_null(mr);
    assert_error_mentions("max_size 4096 is below the allocation granularity");

    /* An exportable allocation past the device's memory is out of memory,
     * as memory.h says, not an invalid argument. */
    if (props.virtual_memory_management_supported && props.handle_type_posix_fd_supported) {
        assert_ok(cugl_exportable_memory_resource_create(&mr, dev));
        cugl_buffer *huge = NULL;
        assert_status(cugl_memory_resource_allocate(&huge, mr, props.total_memory * 4, stream),
                      CUGL_ERROR_OUT_OF_MEMORY);
        assert_error_mentions("of exportable memory on device");
        assert_null(huge);
        cugl_memory_resource_release(mr);
    }

    assert_ok(cugl_device_memory_resource_create(&mr, dev, NULL));
    cugl_buffer *b = NULL, *copy = NULL;
    assert_ok(cugl_memory_resource_allocate(&b, mr, 4096, stream));
    cugl_memory_resource_close(mr);
    assert_status(cugl_buffer_copy_to(&copy, b, stream), CUGL_ERROR_CLOSED);
    assert_error_mentions("cugl_buffer_copy_to: *dst is NULL and the source buffer's memory "
                          "resource");
    assert_null(copy);
    assert_ok(cugl_buffer_close(b, stream));
    assert_ok(cugl_stream_sync(stream));
    cugl_buffer_release(b);
    cugl_memory_resource_release(mr);
}

/*
 * 10,000 allocations of mixed sizes, up to eight alive at once, each
 * touched by a fill: afterwards the pool holds nothing, once trimmed it
 * reserves nothing, and cugl counts no byte and no object still held.
 *
 * Measured on what this process holds (the pool's statistics, cugl's own
 * counts), not the device's free memory, which other processes and tools
 * inside this one (compute-sanitizer) move. A warm-up round first lets the
 * driver make what it makes on first use.
 */
static void allocations_give_all_memory_back(void **state)
{
    (void)state;
    if (!props.memory_pools_supported) {
        gpu_not_applicable("the device has no stream-ordered memory pools");
        return;
    }
    static const size_t sizes[] = {1, 100, 4096, 65539, MiB + 3, 3 * MiB, 257, 12345};
    enum { RING = 8, CYCLES = 10000, WARMUP = 64 };
    cugl_memory_resource *mr = make_mr(MAKE_DEVICE_OWN);
    cugl_buffer *ring[RING] = {NULL};
    uint64_t total = 0;
    int64_t bytes_before = 0, objects_before = 0;

    for (int round = 0; round < 2; round++) {
        int cycles = round == 0 ? WARMUP : CYCLES;
        if (round == 1) {
            bytes_before = cugl_live_bytes();
            objects_before = cugl_live_objects();
        }
        for (int i = 0; i < cycles; i++) {
            cugl_buffer **slot = &ring[i % RING];
            if (*slot) {
                assert_ok(cugl_buffer_close(*slot, stream));
                cugl_buffer_release(*slot);
                *slot = NULL;
            }
            size_t n = sizes[((size_t)i * 5u + (size_t)i / RING) % (sizeof sizes / sizeof sizes[0])];
            assert_ok(cugl_memory_resource_allocate(slot, mr, n, stream));
            const uint8_t v = (uint8_t)i;
            assert_ok(cugl_buffer_fill(*slot, &v, 1, stream));
            if (round == 1)
                total += n;
        }
        for (int i = 0; i < RING; i++) {
            assert_ok(cugl_buffer_close(ring[i], stream));
            cugl_buffer_release(ring[i]);
            ring[i] = NULL;
        }
        assert_ok(cugl_stream_sync(stream));
        assert_int_equal(pool_stats(mr).used_current, 0);
        assert_ok(cugl_memory_resource_trim(mr, 0));
        assert_int_equal(pool_stats(mr).reserved_current, 0);
    }
    printf("# %d cycles, %llu bytes allocated in all; cugl holds %lld bytes and %lld objects "
           "before, %lld and %lld after\n",
           (int)CYCLES, (unsigned long long)total, (long long)bytes_before,
           (long long)objects_before, (long long)cugl_live_bytes(),
           (long long)cugl_live_objects());
    assert_true(total > (uint64_t)800 * MiB);
    assert_int_equal(cugl_live_bytes(), bytes_before);
    assert_int_equal(cugl_live_objects(), objects_before);
    cugl_pool_stats s = pool_stats(mr);
    assert_true(s.used_high >= 3 * MiB);
    cugl_memory_resource_release(mr);
}

/* -------------------------------------------------------------- closing */

/* A closed resource refuses to allocate; what it handed out stays valid. */
static void closed_resource_keeps_its_buffers(void **state)
{
    (void)state;
    static const enum make makes[] = {MAKE_DEVICE_OWN, MAKE_DEVICE_CURRENT, MAKE_LEGACY};
    for (size_t k = 0; k < sizeof makes / sizeof makes[0]; k++) {
        cugl_memory_resource *mr = make_mr(makes[k]);
        const char *name = makes[k] == MAKE_LEGACY ? "legacy pinned" : "device";
        enum { n = 4096 };
        cugl_buffer *b = NULL;
        assert_ok(cugl_memory_resource_allocate(&b, mr, n, stream));
        assert_ok(cugl_stream_sync(stream));

        cugl_memory_resource_close(mr);
        assert_true(cugl_memory_resource_is_closed(mr));
        assert_null(cugl_memory_resource_pool_handle(mr));
        cugl_memory_resource_close(mr); /* idempotent */

        char needle[96];
        snprintf(needle, sizeof needle, "the %s memory resource has been closed", name);
        cugl_buffer *other = (cugl_buffer *)&props;
        assert_status(cugl_memory_resource_allocate(&other, mr, n, stream), CUGL_ERROR_CLOSED);
        assert_null(other);
        assert_error_mentions(needle);
        cugl_pool_stats s;
        assert_status(cugl_memory_resource_pool_stats(mr, &s), CUGL_ERROR_CLOSED);
        assert_error_mentions(needle);
        assert_status(cugl_memory_resource_trim(mr, 0), CUGL_ERROR_CLOSED);
        int fd = 7;
        assert_status(cugl_memory_resource_export_fd(mr, &fd), CUGL_ERROR_CLOSED);
        assert_status(cugl_buffer_from_handle(&other, cugl_buffer_handle(b), n, mr),
                      CUGL_ERROR_CLOSED);
        assert_null(other);
        assert_error_mentions("cugl_buffer_from_handle: the memory resource has been closed");

        /* The buffer's reference keeps the resource; its memory still works. */
        cugl_memory_resource_release(mr);
        assert_ptr_equal(cugl_buffer_memory_resource(b), mr);
        const uint32_t word = 0x5eed0000u + (uint32_t)k;
        assert_ok(cugl_buffer_fill(b, &word, sizeof word, stream));
        assert_ok(cugl_stream_sync(stream));
        uint32_t got[n / 4];
        if (makes[k] == MAKE_LEGACY)
            memcpy(got, host_bytes(b), n);
        else
            gpu_read(got, (CUdeviceptr)cugl_buffer_handle(b), n);
        for (size_t i = 0; i < n / 4; i++)
            assert_int_equal(got[i], word);
        assert_ok(cugl_buffer_close(b, stream));
        assert_ok(cugl_stream_sync(stream));
        cugl_buffer_release(b);
    }
}

static void non_ipc_pools_do_not_export(void **state)
{
    (void)state;
    static const enum make makes[] = {MAKE_DEVICE_CURRENT, MAKE_DEVICE_OWN, MAKE_LEGACY};
    for (size_t k = 0; k < sizeof makes / sizeof makes[0]; k++) {
        cugl_memory_resource *mr = make_mr(makes[k]);
        int fd = 7;
        assert_status(cugl_memory_resource_export_fd(mr, &fd), CUGL_ERROR_INVALID_STATE);
        assert_int_equal(fd, -1);
        assert_error_mentions("cugl_memory_resource_export_fd: the memory resource is not "
                              "IPC-enabled");
        assert_status(cugl_memory_resource_export_fd(mr, NULL), CUGL_ERROR_INVALID_ARGUMENT);
        assert_error_mentions("cugl_memory_resource_export_fd: fd is NULL");
        cugl_memory_resource_release(mr);
    }
}

/* Host memory of the test's own, registered: DMA both ways on a stream,
 * the buffer's own resource, refusals, and unregistered at the release
 * (registering the same bytes again then works). */
static void registered_host_memory_moves_bytes_and_lets_go(void **state)
{
    (void)state;
    enum { N = 1 << 20 };
    uint32_t *host = aligned_alloc(4096, N);
    assert_non_null(host);
    for (size_t i = 0; i < N / 4; i++)
        host[i] = (uint32_t)(i * 2654435761u);
    long long bytes = cugl_live_bytes();
    for (int round = 0; round < 2; round++) {
        cugl_buffer *reg = NULL, *d = NULL;
        assert_ok(cugl_buffer_register_host(&reg, dev, host, N));
        assert_int_equal(cugl_buffer_handle(reg), (uint64_t)(uintptr_t)host);
        assert_int_equal(cugl_buffer_size(reg), N);
        assert_true(cugl_buffer_is_host_accessible(reg));
        assert_true(cugl_buffer_is_device_accessible(reg));
        cugl_memory_resource *mr = cugl_buffer_memory_resource(reg);
        assert_int_equal(cugl_memory_resource_kind(mr), CUGL_MEMORY_REGISTERED);
        assert_int_equal(cugl_live_bytes(), bytes + N);
        /* The same bytes twice: refused while registered. */
        cugl_buffer *twice = NULL;
        assert_status(cugl_buffer_register_host(&twice, dev, host, N),
                      CUGL_ERROR_INVALID_ARGUMENT);
        assert_null(twice);
        assert_error_mentions("cugl_buffer_register_host: 1048576 bytes at");
        assert_error_mentions("registered already");
        /* It allocates nothing. */
        assert_status(cugl_memory_resource_allocate(&twice, mr, 16, stream),
                      CUGL_ERROR_NOT_SUPPORTED);
        /* Host -> device -> host through it, the device copy doubled. */
        assert_ok(cugl_memory_resource_allocate(&d, device_mr, N, stream));
        assert_ok(cugl_buffer_copy_from(d, reg, stream));
        assert_ok(cugl_stream_sync(stream)); /* before the host memory changes */
        memset(host, 0, N);
        assert_ok(cugl_buffer_copy_from(reg, d, stream));
        assert_ok(cugl_stream_sync(stream));
        for (size_t i = 0; i < N / 4; i++)
            if (host[i] != (uint32_t)(i * 2654435761u))
                fail_msg("round %d: word %zu is 0x%08x", round, i, host[i]);
        assert_ok(cugl_buffer_close(d, stream));
        cugl_buffer_release(d);
        cugl_buffer_release(reg); /* unregisters: the next round registers again */
        assert_int_equal(cugl_live_bytes(), bytes);
    }
    cugl_buffer *b = NULL;
    assert_status(cugl_buffer_register_host(&b, dev, host, 0), CUGL_ERROR_INVALID_ARGUMENT);
    assert_error_mentions("cugl_buffer_register_host: size is 0");
    assert_status(cugl_buffer_register_host(&b, dev, NULL, N), CUGL_ERROR_INVALID_ARGUMENT);
    assert_status(cugl_buffer_register_host(&b, NULL, host, N), CUGL_ERROR_INVALID_ARGUMENT);
    assert_status(cugl_buffer_register_host(NULL, dev, host, N), CUGL_ERROR_INVALID_ARGUMENT);
    free(host);
}

int main(void)
{
    dev = cugl_test_device();
    gpu_mem_init();
    ordinal = cugl_device_ordinal(dev);
    if (cugl_device_get_properties(dev, &props) != CUGL_OK ||
        cugl_stream_create(&stream, dev, NULL) != CUGL_OK) {
        printf("Bail out! %s\n", cugl_last_error());
        return 1;
    }
    if (!props.memory_pools_supported) {
        printf("Bail out! device %d has no memory pools; these tests need them\n", ordinal);
        return 1;
    }
    if (cugl_device_memory_resource_create(&device_mr, dev, NULL) != CUGL_OK) {
        printf("Bail out! %s\n", cugl_last_error());
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_kind_moves_bytes_exactly),
        cmocka_unit_test(stream_is_required_where_ordered),
        cmocka_unit_test(closed_stream_is_refused),
        cmocka_unit_test(pool_statistics_follow_allocations),
        cmocka_unit_test(pool_limit_is_enforced),
        cmocka_unit_test(pool_limit_below_a_granule),
        cmocka_unit_test(allocations_give_all_memory_back),
        cmocka_unit_test(closed_resource_keeps_its_buffers),
        cmocka_unit_test(non_ipc_pools_do_not_export),
        cmocka_unit_test(registered_host_memory_moves_bytes_and_lets_go),
    };
    return cugl_test_run(tests);
}
