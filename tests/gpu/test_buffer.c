/*
 * Buffers on a real GPU: owning and non-owning buffers over foreign memory
 * (what the driver says of device, pinned, managed and malloc'ed memory),
 * copies and their size rule, fills byte by byte, the closed state, the
 * streams memory is freed on, file-descriptor export (proved by mapping the
 * descriptor a second time) and DLPack tensors that keep their buffer.
 * (Every resource kind: test_memory.c. IPC: test_buffer_ipc.c.)
 */
#include <dlpack/dlpack.h>
#include <unistd.h>

#include "gpu_bytes.h"
#include "gpu_kernels.h"

static cugl_device *dev;
static int ordinal;
static cugl_device_properties props;
static cugl_stream *stream;
static cugl_memory_resource *device_mr; /* the current pool */
static CUdeviceptr scratch;             /* the word the sleep kernel writes */

static cugl_memory_resource *own_pool(void)
{
    cugl_device_memory_desc d = {.own_pool = true};
    cugl_memory_resource *mr = NULL;
    assert_ok(cugl_device_memory_resource_create(&mr, dev, &d));
    return mr;
}

static cugl_buffer *allocate(cugl_memory_resource *mr, size_t n)
{
    cugl_buffer *b = NULL;
    assert_ok(cugl_memory_resource_allocate(&b, mr, n, stream));
    assert_non_null(b);
    return b;
}

static uint64_t used(cugl_memory_resource *mr) { return pool_stats(mr).used_current; }

/* A new stream kept busy for `ms` by the sleep kernel. */
static cugl_stream *busy_stream(unsigned ms)
{
    cugl_stream *s = NULL;
    assert_ok(cugl_stream_create(&s, dev, NULL));
    gpu_launch_sleep(s, GPU_MS(ms), scratch, ms);
    return s;
}

static bool is_done(cugl_stream *s)
{
    bool done = false;
    assert_ok(cugl_stream_query(s, &done));
    return done;
}

static void finish_busy_stream(cugl_stream *s)
{
    assert_ok(cugl_stream_sync(s));
    cugl_stream_release(s);
}

/* ------------------------------------------------------- from_handle */

/* With a resource the buffer owns the memory: closing it frees it there. */
static void from_handle_with_a_resource_owns_the_memory(void **state)
{
    (void)state;
    const size_t n = 65536;
    cugl_memory_resource *mr = own_pool();
    void *pool = cugl_memory_resource_pool_handle(mr);
    void *raw_stream = cugl_stream_handle(stream);

    /* Closed on a stream. */
    CUdeviceptr p = gpu_pool_alloc(pool, n, raw_stream);
    assert_true(used(mr) >= n);
    cugl_buffer *b = NULL;
    assert_ok(cugl_buffer_from_handle(&b, (uint64_t)p, n, mr));
    assert_ptr_equal(cugl_buffer_memory_resource(b), mr);
    assert_int_equal(cugl_buffer_handle(b), (uint64_t)p);
    assert_int_equal(cugl_buffer_size(b), n);
    assert_int_equal(cugl_buffer_device_id(b), ordinal);
    assert_true(cugl_buffer_is_device_accessible(b));
    assert_false(cugl_buffer_is_host_accessible(b));
    assert_false(cugl_buffer_is_managed(b));
    const uint32_t word = 0x600dcafeu;
    assert_ok(cugl_buffer_fill(b, &word, sizeof word, stream));
    assert_ok(cugl_stream_sync(stream));
    uint32_t last = 0;
    gpu_read(&last, p + n - sizeof last, sizeof last);
    assert_int_equal(last, word);
    assert_ok(cugl_buffer_close(b, stream));
    assert_ok(cugl_stream_sync(stream));
    assert_int_equal(used(mr), 0);
    cugl_buffer_release(b);

    /* Released without a deallocation stream: freed after the context
     * drained, on the legacy default stream. */
    p = gpu_pool_alloc(pool, n, raw_stream);
    assert_ok(cugl_buffer_from_handle(&b, (uint64_t)p, n, mr));
    assert_true(used(mr) >= n);
    cugl_buffer_release(b);
    assert_ok(cugl_device_sync(dev));
    assert_int_equal(used(mr), 0);

    /* A raw pointer goes back through the resource without a buffer. */
    p = gpu_pool_alloc(pool, n, raw_stream);
    assert_true(used(mr) >= n);
    assert_ok(cugl_memory_resource_deallocate(mr, (uint64_t)p, n, stream));
    assert_ok(cugl_stream_sync(stream));
    assert_int_equal(used(mr), 0);
    cugl_memory_resource_release(mr);
}

enum foreign { FOREIGN_DEVICE, FOREIGN_PINNED, FOREIGN_MANAGED, FOREIGN_MALLOC };

typedef struct foreign_case {
    const char *name;
    enum foreign kind;
    bool device_accessible, host_accessible, managed;
    bool on_device; /* device_id is the device's ordinal; else -1 */
} foreign_case;

/* cuPointerGetAttributes tells the kinds apart. Pinned memory belongs to no
 * device (as cugl's pinned resources); managed memory reports the device it
 * was allocated on; memory the driver does not know is host-only. */
static const foreign_case foreign_cases[] = {
    {"cuMemAlloc", FOREIGN_DEVICE, true, false, false, true},
    {"cuMemHostAlloc", FOREIGN_PINNED, true, true, false, false},
    {"cuMemAllocManaged", FOREIGN_MANAGED, true, true, true, true},
    {"malloc", FOREIGN_MALLOC, false, true, false, false},
};

typedef struct foreign_memory {
    uint64_t ptr;
    void *host; /* the CPU's view, NULL for device memory */
} foreign_memory;

static foreign_memory foreign_alloc(enum foreign kind, size_t n)
{
    foreign_memory m = {0, NULL};
    CUdeviceptr unused;
    switch (kind) {
    case FOREIGN_DEVICE:
        m.ptr = gpu_alloc(n);
        break;
    case FOREIGN_PINNED:
        m.host = gpu_host_alloc_mapped(n, &unused);
        break;
    case FOREIGN_MANAGED:
        m.ptr = gpu_managed_alloc(n);
        m.host = (void *)(uintptr_t)m.ptr;
        break;
    case FOREIGN_MALLOC:
        m.host = malloc(n);
        assert_non_null(m.host);
        break;
    }
    if (!m.ptr)
        m.ptr = (uint64_t)(uintptr_t)m.host;
    return m;
}

static void foreign_free(enum foreign kind, foreign_memory *m)
{
    if (kind == FOREIGN_PINNED)
        gpu_host_free(m->host);
    else if (kind == FOREIGN_MALLOC)
        free(m->host);
    else
        gpu_free((CUdeviceptr)m->ptr);
}

static void foreign_write(foreign_memory *m, size_t n, unsigned seed)
{
    uint8_t *bytes = malloc(n);
    assert_non_null(bytes);
    write_pattern(bytes, n, seed);
    if (m->host)
        memcpy(m->host, bytes, n);
    else
        gpu_write((CUdeviceptr)m->ptr, bytes, n);
    free(bytes);
}

static void foreign_expect(foreign_memory *m, size_t n, unsigned seed, const char *what)
{
    uint8_t *bytes = malloc(n);
    assert_non_null(bytes);
    if (m->host)
        memcpy(bytes, m->host, n);
    else
        gpu_read(bytes, (CUdeviceptr)m->ptr, n);
    expect_pattern(bytes, n, seed, what);
    free(bytes);
}

/* Without a resource the buffer only describes the memory: cugl's copies
 * read it, and closing the buffer leaves it to its owner. */
static void from_handle_without_a_resource_describes_foreign_memory(void **state)
{
    (void)state;
    const size_t n = 4096 + 5;
    for (size_t i = 0; i < sizeof foreign_cases / sizeof foreign_cases[0]; i++) {
        const foreign_case *c = &foreign_cases[i];
        if (c->kind == FOREIGN_MANAGED && !props.managed_memory) {
            gpu_not_applicable("the device has no managed memory");
            continue;
        }
        foreign_memory m = foreign_alloc(c->kind, n);
        foreign_write(&m, n, 1);

        cugl_buffer *b = NULL;
        assert_ok(cugl_buffer_from_handle(&b, m.ptr, n, NULL));
        assert_null(cugl_buffer_memory_resource(b));
        assert_int_equal(cugl_buffer_handle(b), m.ptr);
        assert_int_equal(cugl_buffer_size(b), n);
        if (cugl_buffer_is_device_accessible(b) != c->device_accessible ||
            cugl_buffer_is_host_accessible(b) != c->host_accessible ||
            cugl_buffer_is_managed(b) != c->managed ||
            cugl_buffer_device_id(b) != (c->on_device ? ordinal : -1))
            fail_msg("%s: device/host accessible %d/%d, managed %d, device_id %d; expected "
                     "%d/%d, %d, %d",
                     c->name, cugl_buffer_is_device_accessible(b),
                     cugl_buffer_is_host_accessible(b), cugl_buffer_is_managed(b),
                     cugl_buffer_device_id(b), c->device_accessible, c->host_accessible,
                     c->managed, c->on_device ? ordinal : -1);

        /* cugl copies it out (a host-to-host copy for malloc'ed memory). */
        staging out = staging_new(n);
        assert_ok(cugl_buffer_copy_from(out.buffer, b, stream));
        assert_ok(cugl_stream_sync(stream));
        expect_pattern(out.host, n, 1, c->name);

        /* Without a resource, copy_to cannot make the destination. */
        cugl_buffer *dst = NULL;
        assert_status(cugl_buffer_copy_to(&dst, b, stream), CUGL_ERROR_INVALID_ARGUMENT);
        assert_null(dst);
        assert_error_mentions("cugl_buffer_copy_to: *dst is NULL and the source buffer has no "
                              "memory resource");

        assert_ok(cugl_buffer_close(b, NULL));
        assert_true(cugl_buffer_is_closed(b));
        assert_int_equal(cugl_buffer_handle(b), 0);
        cugl_buffer_release(b);

        /* The memory is still its owner's, and usable. */
        foreign_expect(&m, n, 1, c->name);
        foreign_write(&m, n, 2);
        foreign_expect(&m, n, 2, c->name);
        staging_free(&out);
        foreign_free(c->kind, &m);
    }
}

/* ------------------------------------------------------------- copies */

static void copy_to_a_given_destination(void **state)
{
    (void)state;
    const size_t n = 3 * 4096 + 1;
    staging in = staging_new(n), out = staging_new(n);
    write_pattern(in.host, n, 3);
    cugl_buffer *a = allocate(device_mr, n), *b = allocate(device_mr, n);
    assert_ok(cugl_buffer_copy_from(a, in.buffer, stream));
    cugl_buffer *dst = b;
    assert_ok(cugl_buffer_copy_to(&dst, a, stream));
    assert_ptr_equal(dst, b); /* the given buffer, not a new one */
    assert_ok(cugl_buffer_copy_to(&out.buffer, b, stream));
    assert_ok(cugl_stream_sync(stream));
    expect_pattern(out.host, n, 3, "copy_to into a given buffer");
    cugl_buffer_release(a);
    cugl_buffer_release(b);
    staging_free(&in);
    staging_free(&out);
}

static void copy_to_allocates_from_the_source_resource(void **state)
{
    (void)state;
    const size_t n = 4096 + 3;
    cugl_memory_resource *mr = own_pool();
    staging in = staging_new(n), out = staging_new(n);
    write_pattern(in.host, n, 4);
    cugl_buffer *a = allocate(mr, n);
    assert_ok(cugl_buffer_copy_from(a, in.buffer, stream));
    cugl_buffer *made = NULL;
    assert_ok(cugl_buffer_copy_to(&made, a, stream));
    assert_non_null(made);
    assert_ptr_equal(cugl_buffer_memory_resource(made), mr);
    assert_int_equal(cugl_buffer_size(made), n);
    assert_int_not_equal(cugl_buffer_handle(made), cugl_buffer_handle(a));
    assert_ok(cugl_stream_sync(stream));
    assert_true(used(mr) >= 2 * n);
    assert_ok(cugl_buffer_copy_from(out.buffer, made, stream));
    assert_ok(cugl_stream_sync(stream));
    expect_pattern(out.host, n, 4, "the buffer copy_to allocated");
    cugl_buffer_release(made);
    cugl_buffer_release(a);
    assert_ok(cugl_stream_sync(stream));
    assert_int_equal(used(mr), 0);
    staging_free(&in);
    staging_free(&out);
    cugl_memory_resource_release(mr);
}

static void copy_sizes_must_match(void **state)
{
    (void)state;
    cugl_buffer *a = allocate(device_mr, 100), *c = allocate(device_mr, 101);
    const uint8_t x = 0x11, y = 0x22;
    assert_ok(cugl_buffer_fill(a, &x, 1, stream));
    assert_ok(cugl_buffer_fill(c, &y, 1, stream));

    assert_status(cugl_buffer_copy_from(c, a, stream), CUGL_ERROR_INVALID_ARGUMENT);
    assert_error_mentions("cugl_buffer_copy_from: buffer sizes differ: src has 100 bytes, dst "
                          "has 101");
    cugl_buffer *dst = c;
    assert_status(cugl_buffer_copy_to(&dst, a, stream), CUGL_ERROR_INVALID_ARGUMENT);
    assert_error_mentions("cugl_buffer_copy_to: buffer sizes differ: src has 100 bytes, dst "
                          "has 101");
    assert_ptr_equal(dst, c);
    assert_status(cugl_buffer_copy_from(a, c, stream), CUGL_ERROR_INVALID_ARGUMENT);
    assert_error_mentions("src has 101 bytes, dst has 100");

    /* Nothing was copied. */
    assert_ok(cugl_stream_sync(stream));
    uint8_t bytes[101];
    gpu_read(bytes, (CUdeviceptr)cugl_buffer_handle(c), 101);
    expect_bytes(bytes, 101, y, "the destination of refused copies");
    gpu_read(bytes, (CUdeviceptr)cugl_buffer_handle(a), 100);
    expect_bytes(bytes, 100, x, "the source of refused copies");
    cugl_buffer_release(a);
    cugl_buffer_release(c);
}

/* --------------------------------------------------------------- fills */

enum fill_target { FILL_DEVICE, FILL_PINNED, FILL_MANAGED };

static void fill_patterns_byte_by_byte(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        enum fill_target target;
    } targets[] = {{"device", FILL_DEVICE}, {"pinned", FILL_PINNED}, {"managed", FILL_MANAGED}};
    const uint8_t v1 = 0xa7;
    const uint16_t v2 = 0xbeefu;
    const uint32_t v4 = 0x12345678u;
    const struct {
        const void *value;
        size_t size;
    } patterns[] = {{&v1, 1}, {&v2, 2}, {&v4, 4}};
    const size_t n = 4096 + 12; /* a multiple of 4, not of a page */

    for (size_t t = 0; t < sizeof targets / sizeof targets[0]; t++) {
        cugl_memory_resource *mr = NULL;
        if (targets[t].target == FILL_DEVICE) {
            mr = cugl_memory_resource_retain(device_mr);
        } else if (targets[t].target == FILL_PINNED) {
            assert_ok(cugl_pinned_memory_resource_create(&mr, dev, NULL));
        } else {
            if (!props.managed_memory) {
                gpu_not_applicable("the device has no managed memory");
                continue;
            }
            assert_ok(cugl_managed_memory_resource_create(&mr, dev, NULL));
        }
        cugl_buffer *b = allocate(mr, n);
        uint8_t *bytes = malloc(n);
        assert_non_null(bytes);
        for (size_t k = 0; k < sizeof patterns / sizeof patterns[0]; k++) {
            assert_ok(cugl_buffer_fill(b, patterns[k].value, patterns[k].size, stream));
            assert_ok(cugl_stream_sync(stream));
            if (cugl_buffer_is_host_accessible(b))
                memcpy(bytes, host_bytes(b), n);
            else
                gpu_read(bytes, (CUdeviceptr)cugl_buffer_handle(b), n);
            const uint8_t *v = patterns[k].value;
            for (size_t i = 0; i < n; i++)
                if (bytes[i] != v[i % patterns[k].size])
                    fail_msg("%s, %zu-byte pattern: byte %zu is 0x%02x, expected 0x%02x",
                             targets[t].name, patterns[k].size, i, bytes[i],
                             v[i % patterns[k].size]);
        }
        free(bytes);
        cugl_buffer_release(b);
        assert_ok(cugl_stream_sync(stream));
        cugl_memory_resource_release(mr);
    }
}

static void fill_refuses_what_does_not_fit(void **state)
{
    (void)state;
    cugl_buffer *six = allocate(device_mr, 6), *five = allocate(device_mr, 5);
    const uint8_t mark = 0x77;
    assert_ok(cugl_buffer_fill(six, &mark, 1, stream));
    assert_ok(cugl_buffer_fill(five, &mark, 1, stream));
    const uint64_t value = 0x0102030405060708ull;

    assert_status(cugl_buffer_fill(six, &value, 4, stream), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_buffer_fill: the buffer's size (6 bytes) is "
                                           "not divisible by the pattern's (4)");
    assert_status(cugl_buffer_fill(five, &value, 2, stream), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_buffer_fill: the buffer's size (5 bytes) is "
                                           "not divisible by the pattern's (2)");
    static const size_t bad_sizes[] = {0, 3, 8};
    for (size_t i = 0; i < sizeof bad_sizes / sizeof bad_sizes[0]; i++) {
        assert_status(cugl_buffer_fill(six, &value, bad_sizes[i], stream),
                      CUGL_ERROR_INVALID_ARGUMENT);
        char expected[128];
        snprintf(expected, sizeof expected,
                 "cugl_buffer_fill: value_size is %zu; the pattern must be 1, 2 or 4 bytes",
                 bad_sizes[i]);
        assert_string_equal(cugl_last_error(), expected);
    }
    /* A 2-byte pattern fits six bytes. */
    const uint16_t half = 0x0a0bu;
    assert_ok(cugl_buffer_fill(six, &half, 2, stream));
    assert_ok(cugl_stream_sync(stream));
    uint8_t got[6];
    gpu_read(got, (CUdeviceptr)cugl_buffer_handle(six), 6);
    for (size_t i = 0; i < 6; i++)
        assert_int_equal(got[i], ((const uint8_t *)&half)[i % 2]);
    gpu_read(got, (CUdeviceptr)cugl_buffer_handle(five), 5);
    expect_bytes(got, 5, mark, "a buffer whose fills were refused");
    cugl_buffer_release(six);
    cugl_buffer_release(five);
}

static void fill_refuses_host_only_memory(void **state)
{
    (void)state;
    uint8_t *host = malloc(64);
    assert_non_null(host);
    memset(host, 0x42, 64);
    cugl_buffer *b = NULL;
    assert_ok(cugl_buffer_from_handle(&b, (uint64_t)(uintptr_t)host, 64, NULL));
    assert_false(cugl_buffer_is_device_accessible(b));
    const uint8_t v = 0;
    assert_status(cugl_buffer_fill(b, &v, 1, stream), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_buffer_fill: the buffer is host memory the "
                                           "device cannot reach; fill it on the host");
    assert_ok(cugl_stream_sync(stream));
    expect_bytes(host, 64, 0x42, "host memory whose fill was refused");
    cugl_buffer_release(b);
    free(host);
}

/* ------------------------------------------------------------ closing */

static cugl_buffer *closed_buffer, *open_buffer, *slot;
static cugl_buffer_ipc_descriptor ipc;
static DLManagedTensor *tensor;
static int fd;
static size_t allocation_size;
static const uint8_t byte = 1;

#define CLOSED_CALLS(X)                                                    \
    X(z01, cugl_buffer_copy_to(&slot, closed_buffer, stream))             \
    X(z02, cugl_buffer_copy_to(&closed_buffer, open_buffer, stream))      \
    X(z03, cugl_buffer_copy_from(closed_buffer, open_buffer, stream))     \
    X(z04, cugl_buffer_copy_from(open_buffer, closed_buffer, stream))     \
    X(z05, cugl_buffer_fill(closed_buffer, &byte, 1, stream))             \
    X(z06, cugl_buffer_set_deallocation_stream(closed_buffer, stream))    \
    X(z07, cugl_buffer_ipc_export(closed_buffer, &ipc))                   \
    X(z08, cugl_buffer_export_fd(closed_buffer, &fd, &allocation_size))   \
    X(z09, cugl_buffer_to_dlpack(&tensor, closed_buffer))

#define CLOSED_CASE(id, expr) \
    static cugl_status id(void) { return (expr); }
#define CLOSED_ROW(id, expr) {#expr, id},

CLOSED_CALLS(CLOSED_CASE)

static void closed_buffer_refuses_everything(void **state)
{
    (void)state;
    static const struct {
        const char *expr;
        cugl_status (*call)(void);
    } calls[] = {CLOSED_CALLS(CLOSED_ROW)};
    const size_t n = 4096;
    cugl_memory_resource *mr = own_pool();
    closed_buffer = allocate(mr, n);
    open_buffer = allocate(mr, n);
    assert_ok(cugl_buffer_close(closed_buffer, stream));
    assert_true(cugl_buffer_is_closed(closed_buffer));
    assert_int_equal(cugl_buffer_size(closed_buffer), 0);
    assert_int_equal(cugl_buffer_handle(closed_buffer), 0);
    assert_null(cugl_buffer_memory_resource(closed_buffer));
    assert_ok(cugl_stream_sync(stream));
    uint64_t open_only = used(mr);
    assert_true(open_only >= n);

    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        cugl_clear_error();
        slot = NULL;
        tensor = NULL;
        cugl_status st = calls[i].call();
        if (st != CUGL_ERROR_CLOSED || !strstr(cugl_last_error(), "has been closed"))
            fail_msg("%s returned %s (%s), expected CUGL_ERROR_CLOSED", calls[i].expr,
                     cugl_status_name(st), cugl_last_error());
        assert_null(slot);
        assert_null(tensor);
    }

    /* Closing again, with or without a stream, changes nothing. */
    assert_ok(cugl_buffer_close(closed_buffer, stream));
    assert_ok(cugl_buffer_close(closed_buffer, NULL));
    assert_true(cugl_buffer_is_closed(closed_buffer));
    assert_ok(cugl_stream_sync(stream));
    assert_int_equal(used(mr), open_only);

    /* Another reference sees the same closed buffer; release is fine. */
    assert_ptr_equal(cugl_buffer_retain(closed_buffer), closed_buffer);
    cugl_buffer_release(closed_buffer);
    assert_true(cugl_buffer_is_closed(closed_buffer));
    cugl_buffer_release(closed_buffer);
    closed_buffer = NULL;

    /* A reference more keeps the open buffer through one release. */
    cugl_buffer_retain(open_buffer);
    cugl_buffer_release(open_buffer);
    assert_false(cugl_buffer_is_closed(open_buffer));
    assert_int_equal(cugl_buffer_size(open_buffer), n);
    cugl_buffer_release(open_buffer);
    open_buffer = NULL;
    assert_ok(cugl_stream_sync(stream));
    assert_int_equal(used(mr), 0);
    cugl_memory_resource_release(mr);
}

static void close_with_a_closed_stream_leaves_the_buffer_open(void **state)
{
    (void)state;
    const size_t n = 4096;
    cugl_memory_resource *mr = own_pool();
    cugl_buffer *b = allocate(mr, n);
    uint64_t handle = cugl_buffer_handle(b);
    cugl_stream *s = NULL;
    assert_ok(cugl_stream_create(&s, dev, NULL));
    cugl_stream_close(s);

    assert_status(cugl_buffer_close(b, s), CUGL_ERROR_CLOSED);
    assert_string_equal(cugl_last_error(), "cugl_buffer_close: the stream has been closed; the "
                                           "buffer was not freed");
    assert_false(cugl_buffer_is_closed(b));
    assert_int_equal(cugl_buffer_size(b), n);
    assert_int_equal(cugl_buffer_handle(b), handle);
    assert_ptr_equal(cugl_buffer_memory_resource(b), mr);
    assert_status(cugl_buffer_set_deallocation_stream(b, s), CUGL_ERROR_CLOSED);
    assert_error_mentions("cugl_buffer_set_deallocation_stream: the stream has been closed");
    assert_ok(cugl_stream_sync(stream));
    assert_true(used(mr) >= n);

    /* Still usable, and closed properly afterwards. */
    const uint32_t word = 0xfeedf00du;
    assert_ok(cugl_buffer_fill(b, &word, sizeof word, stream));
    assert_ok(cugl_stream_sync(stream));
    uint32_t got = 0;
    gpu_read(&got, (CUdeviceptr)handle, sizeof got);
    assert_int_equal(got, word);
    assert_ok(cugl_buffer_close(b, stream));
    assert_ok(cugl_stream_sync(stream));
    assert_int_equal(used(mr), 0);
    cugl_buffer_release(b);
    cugl_stream_release(s);
    cugl_memory_resource_release(mr);
}

/*
 * Which stream frees the memory. A kernel keeps another stream busy for a
 * second: a free ordered on an idle stream returns at once and leaves it
 * busy, while the fallback (no open stream) drains the whole context first
 * and finds it done. Pool statistics show the memory back once the chosen
 * stream is synchronised.
 */
static void close_frees_on_the_given_stream(void **state)
{
    (void)state;
    const size_t n = MiB;
    cugl_memory_resource *mr = own_pool();
    cugl_buffer *b = allocate(mr, n);
    assert_ok(cugl_stream_sync(stream));
    cugl_stream *s2 = NULL;
    assert_ok(cugl_stream_create(&s2, dev, NULL));
    cugl_stream *busy = busy_stream(1000);

    assert_ok(cugl_buffer_close(b, s2));
    assert_false(is_done(busy));
    assert_ok(cugl_stream_sync(s2));
    assert_int_equal(used(mr), 0);
    assert_false(is_done(busy));

    finish_busy_stream(busy);
    cugl_buffer_release(b);
    cugl_stream_release(s2);
    cugl_memory_resource_release(mr);
}

static void release_frees_on_the_deallocation_stream(void **state)
{
    (void)state;
    const size_t n = MiB;
    cugl_memory_resource *mr = own_pool();
    cugl_buffer *b = allocate(mr, n);
    assert_ok(cugl_stream_sync(stream));
    cugl_stream *s2 = NULL;
    assert_ok(cugl_stream_create(&s2, dev, NULL));
    assert_ok(cugl_buffer_set_deallocation_stream(b, s2));
    cugl_stream *busy = busy_stream(1000);

    cugl_buffer_release(b);
    assert_false(is_done(busy));
    assert_ok(cugl_stream_sync(s2));
    assert_int_equal(used(mr), 0);

    finish_busy_stream(busy);
    cugl_stream_release(s2);
    cugl_memory_resource_release(mr);
}

/* The buffer holds a reference to its deallocation stream. */
static void buffer_keeps_its_deallocation_stream(void **state)
{
    (void)state;
    const size_t n = MiB;
    cugl_memory_resource *mr = own_pool();
    cugl_buffer *b = allocate(mr, n);
    assert_ok(cugl_stream_sync(stream));
    cugl_stream *s2 = NULL;
    assert_ok(cugl_stream_create(&s2, dev, NULL));
    assert_ok(cugl_buffer_set_deallocation_stream(b, s2));
    cugl_stream_release(s2); /* the buffer's reference keeps it open */
    cugl_stream *busy = busy_stream(1000);

    cugl_buffer_release(b);
    assert_false(is_done(busy));
    assert_ok(cugl_device_sync(dev));
    assert_int_equal(used(mr), 0);

    finish_busy_stream(busy);
    cugl_memory_resource_release(mr);
}

static void closed_deallocation_stream_falls_back_to_a_context_sync(void **state)
{
    (void)state;
    const size_t n = MiB;
    cugl_memory_resource *mr = own_pool();
    cugl_stream *s1 = NULL;
    assert_ok(cugl_stream_create(&s1, dev, NULL));
    cugl_buffer *b = NULL;
    assert_ok(cugl_memory_resource_allocate(&b, mr, n, s1));
    assert_ok(cugl_stream_sync(s1));
    cugl_stream_close(s1); /* the allocation stream was the deallocation stream */
    cugl_stream *busy = busy_stream(300);

    cugl_buffer_release(b);
    assert_true(is_done(busy));
    assert_ok(cugl_device_sync(dev));
    assert_int_equal(used(mr), 0);

    finish_busy_stream(busy);
    cugl_stream_release(s1);
    cugl_memory_resource_release(mr);
}

/* ----------------------------------------------------- file descriptors */

/*
 * The descriptor is the memory: imported again with the raw driver and
 * mapped at a second address, it reads what was written through the buffer,
 * and what is written through it shows in the buffer.
 */
static void export_fd_shares_the_memory(void **state)
{
    (void)state;
    if (!props.virtual_memory_management_supported || !props.handle_type_posix_fd_supported) {
        gpu_not_applicable("the device has no VMM with POSIX file descriptors");
        return;
    }
    cugl_memory_resource *mr = NULL;
    assert_ok(cugl_exportable_memory_resource_create(&mr, dev));
    const size_t granularity = gpu_vmm_granularity(ordinal);
    assert_true(granularity > 0);
    static const size_t sizes[] = {1, 4096, MiB + 3};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        const size_t n = sizes[i];
        cugl_buffer *b = allocate(mr, n);
        assert_int_equal(cugl_buffer_size(b), n);
        staging in = staging_new(n), out = staging_new(n);
        write_pattern(in.host, n, 5);
        assert_ok(cugl_buffer_copy_from(b, in.buffer, stream));
        assert_ok(cugl_stream_sync(stream));

        int f = -1;
        size_t bytes = 0;
        assert_ok(cugl_buffer_export_fd(b, &f, &bytes));
        assert_true(f >= 0);
        if (bytes < n || bytes % granularity != 0 || bytes - n >= granularity)
            fail_msg("%zu bytes: allocation size %zu, granularity %zu", n, bytes, granularity);

        CUdeviceptr second = gpu_map_imported_fd(f, bytes, ordinal);
        assert_int_not_equal(second, cugl_buffer_handle(b));
        memset(out.host, 0, n);
        gpu_read(out.host, second, n);
        expect_pattern(out.host, n, 5, "the exported memory mapped a second time");

        write_pattern(in.host, n, 6);
        gpu_write(second, in.host, n);
        assert_ok(cugl_buffer_copy_from(out.buffer, b, stream));
        assert_ok(cugl_stream_sync(stream));
        expect_pattern(out.host, n, 6, "the buffer after a write through the second mapping");
        gpu_unmap_imported(second, bytes);

        /* A new descriptor each call; the allocation size is optional. */
        int g = -1;
        assert_ok(cugl_buffer_export_fd(b, &g, NULL));
        assert_true(g >= 0);
        assert_int_not_equal(g, f);
        assert_int_equal(close(f), 0);
        assert_int_equal(close(g), 0);

        cugl_buffer_release(b);
        staging_free(&in);
        staging_free(&out);
    }

    cugl_buffer *empty = allocate(mr, 0);
    int f = 7;
    assert_status(cugl_buffer_export_fd(empty, &f, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_int_equal(f, -1);
    assert_string_equal(cugl_last_error(),
                        "cugl_buffer_export_fd: an empty buffer has no memory to export");
    cugl_buffer_release(empty);
    cugl_memory_resource_release(mr);
}

static void export_fd_needs_an_exportable_buffer(void **state)
{
    (void)state;
    cugl_buffer *pooled = allocate(device_mr, 64);
    CUdeviceptr raw = gpu_alloc(64);
    cugl_buffer *foreign = NULL;
    assert_ok(cugl_buffer_from_handle(&foreign, (uint64_t)raw, 64, NULL));
    cugl_buffer *both[] = {pooled, foreign};
    for (size_t i = 0; i < 2; i++) {
        int f = 7;
        size_t bytes = 7;
        assert_status(cugl_buffer_export_fd(both[i], &f, &bytes), CUGL_ERROR_INVALID_STATE);
        assert_int_equal(f, -1);
        assert_error_mentions("cugl_buffer_export_fd: the buffer does not come from an "
                              "exportable memory resource");
        assert_status(cugl_buffer_export_fd(both[i], NULL, &bytes), CUGL_ERROR_INVALID_ARGUMENT);
        assert_error_mentions("cugl_buffer_export_fd: fd is NULL");
    }
    cugl_buffer_release(pooled);
    cugl_buffer_release(foreign);
    gpu_free(raw);
}

/* --------------------------------------------------------------- DLPack */

enum dl_source { DL_DEVICE, DL_PINNED, DL_MANAGED, DL_MALLOC };

/*
 * The tensor describes the buffer and keeps it: with the caller's reference
 * dropped the data is still readable through the tensor, and the memory
 * goes back to its pool only when the deleter runs.
 */
static void dlpack_tensor_keeps_the_buffer(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        enum dl_source source;
        DLDeviceType type;
    } cases[] = {
        {"device", DL_DEVICE, kDLCUDA},
        {"pinned", DL_PINNED, kDLCUDAHost},
        {"managed", DL_MANAGED, kDLCUDAManaged},
        {"malloc", DL_MALLOC, kDLCPU},
    };
    const size_t n = 4096 + 7;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cugl_memory_resource *mr = NULL;
        cugl_managed_memory_desc on_device = {.preferred_location = CUGL_LOCATION_DEVICE};
        uint8_t *host = NULL;
        cugl_buffer *b = NULL;
        switch (cases[i].source) {
        case DL_DEVICE:
            mr = own_pool();
            break;
        case DL_PINNED:
            assert_ok(cugl_pinned_memory_resource_create(&mr, dev, NULL));
            break;
        case DL_MANAGED:
            if (!props.managed_memory) {
                gpu_not_applicable("the device has no managed memory");
                continue;
            }
            assert_ok(cugl_managed_memory_resource_create(&mr, dev, &on_device));
            break;
        case DL_MALLOC:
            host = malloc(n);
            assert_non_null(host);
            assert_ok(cugl_buffer_from_handle(&b, (uint64_t)(uintptr_t)host, n, NULL));
            break;
        }
        if (mr)
            b = allocate(mr, n);
        bool pooled = mr && cugl_memory_resource_pool_handle(mr);

        staging in = staging_new(n);
        write_pattern(in.host, n, 7);
        assert_ok(cugl_buffer_copy_from(b, in.buffer, stream));
        assert_ok(cugl_stream_sync(stream));
        staging_free(&in);

        DLManagedTensor *t = NULL;
        assert_ok(cugl_buffer_to_dlpack(&t, b));
        assert_non_null(t);
        const DLTensor *x = &t->dl_tensor;
        int expected_id = cases[i].source == DL_DEVICE || cases[i].source == DL_MANAGED
                              ? ordinal
                              : 0;
        if ((uint64_t)(uintptr_t)x->data != cugl_buffer_handle(b) ||
            x->device.device_type != cases[i].type || x->device.device_id != expected_id)
            fail_msg("%s: data %p (buffer 0x%llx), device type %d id %d; expected type %d id %d",
                     cases[i].name, x->data, (unsigned long long)cugl_buffer_handle(b),
                     (int)x->device.device_type, x->device.device_id, (int)cases[i].type,
                     expected_id);
        assert_int_equal(x->ndim, 1);
        assert_int_equal(x->dtype.code, kDLUInt);
        assert_int_equal(x->dtype.bits, 8);
        assert_int_equal(x->dtype.lanes, 1);
        assert_non_null(x->shape);
        assert_int_equal(x->shape[0], (int64_t)n);
        assert_null(x->strides);
        assert_int_equal(x->byte_offset, 0);
        assert_non_null(t->deleter);

        cugl_buffer_release(b);
        if (pooled) {
            assert_ok(cugl_stream_sync(stream));
            assert_true(used(mr) >= n);
        }
        uint8_t *bytes = malloc(n);
        assert_non_null(bytes);
        if (cases[i].type == kDLCUDA)
            gpu_read(bytes, (CUdeviceptr)(uintptr_t)x->data, n);
        else
            memcpy(bytes, x->data, n);
        expect_pattern(bytes, n, 7, cases[i].name);
        free(bytes);

        t->deleter(t);
        if (pooled) {
            assert_ok(cugl_stream_sync(stream));
            assert_int_equal(used(mr), 0);
        }
        cugl_memory_resource_release(mr);
        free(host);
    }
}

int main(void)
{
    dev = cugl_test_device();
    gpu_mem_init();
    gpu_test_module(dev);
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
    scratch = gpu_alloc(sizeof(unsigned));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(from_handle_with_a_resource_owns_the_memory),
        cmocka_unit_test(from_handle_without_a_resource_describes_foreign_memory),
        cmocka_unit_test(copy_to_a_given_destination),
        cmocka_unit_test(copy_to_allocates_from_the_source_resource),
        cmocka_unit_test(copy_sizes_must_match),
        cmocka_unit_test(fill_patterns_byte_by_byte),
        cmocka_unit_test(fill_refuses_what_does_not_fit),
        cmocka_unit_test(fill_refuses_host_only_memory),
        cmocka_unit_test(closed_buffer_refuses_everything),
        cmocka_unit_test(close_with_a_closed_stream_leaves_the_buffer_open),
        cmocka_unit_test(close_frees_on_the_given_stream),
        cmocka_unit_test(release_frees_on_the_deallocation_stream),
        cmocka_unit_test(buffer_keeps_its_deallocation_stream),
        cmocka_unit_test(closed_deallocation_stream_falls_back_to_a_context_sync),
        cmocka_unit_test(export_fd_shares_the_memory),
        cmocka_unit_test(export_fd_needs_an_exportable_buffer),
        cmocka_unit_test(dlpack_tensor_keeps_the_buffer),
    };
    return cugl_test_run(tests);
}
