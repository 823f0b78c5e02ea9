/*
 * Streams on a real GPU: creation options read back from the driver,
 * priority limits, wrapping foreign handles, the default stream, ordering
 * across streams (through an event and through wait_stream, checked on the
 * data) and the closed state.
 */
#include "gpu_kernels.h"

static cugl_device *dev;
static cugl_device_properties props;

/* A wrapper of the same CUstream: what the driver says about it. */
static cugl_stream *rewrap(cugl_stream *s)
{
    cugl_stream *w = NULL;
    assert_ok(cugl_stream_from_handle(&w, cugl_stream_handle(s)));
    assert_non_null(w);
    assert_ptr_equal(cugl_stream_handle(w), cugl_stream_handle(s));
    return w;
}

/* Launch iota on `s`, sync it, read back and check every word. */
static void check_stream_runs_work(cugl_stream *s, unsigned scale)
{
    const unsigned n = 4096;
    CUdeviceptr buf = gpu_alloc(n * sizeof(unsigned));
    gpu_fill_u32(buf, 0xdeadbeefu, n);
    gpu_launch_iota(s, buf, n, scale);
    assert_ok(cugl_stream_sync(s));
    bool done = false;
    assert_ok(cugl_stream_query(s, &done));
    assert_true(done);
    unsigned *host = malloc(n * sizeof *host);
    assert_non_null(host);
    gpu_read(host, buf, n * sizeof *host);
    gpu_free(buf);
    for (unsigned i = 0; i < n; i++)
        if (host[i] != i * scale) {
            unsigned got = host[i];
            free(host);
            fail_msg("word %u is %u, expected %u", i, got, i * scale);
        }
    free(host);
}

struct create_case {
    const char *what;
    bool use_desc;
    bool blocking;
    int priority; /* INT_MIN: the device's greatest priority */
};

#define GREATEST (-2147483647 - 1)

static void create_and_read_back(void **state)
{
    (void)state;
    static const struct create_case cases[] = {
        {"NULL desc", false, false, 0},
        {"zero desc", true, false, 0},
        {"blocking", true, true, 0},
        {"greatest priority", true, false, GREATEST},
        {"blocking, greatest priority", true, true, GREATEST},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct create_case *c = &cases[i];
        int priority = c->priority == GREATEST ? props.stream_priority_greatest : c->priority;
        cugl_stream_desc desc = {.blocking = c->blocking, .priority = priority};
        cugl_stream *s = NULL;
        assert_ok(cugl_stream_create(&s, dev, c->use_desc ? &desc : NULL));
        assert_non_null(s);
        assert_false(cugl_stream_is_closed(s));
        assert_non_null(cugl_stream_handle(s));
        assert_ptr_equal(cugl_stream_device(s), dev);
        if (cugl_stream_is_nonblocking(s) != !c->blocking ||
            cugl_stream_priority(s) != priority)
            fail_msg("%s: nonblocking %d priority %d, expected %d and %d", c->what,
                     cugl_stream_is_nonblocking(s), cugl_stream_priority(s), !c->blocking,
                     priority);

        /* The driver agrees: from_handle reads flags and priority from it. */
        cugl_stream *w = rewrap(s);
        if (cugl_stream_is_nonblocking(w) != !c->blocking || cugl_stream_priority(w) != priority)
            fail_msg("%s: the driver reports nonblocking %d priority %d, expected %d and %d",
                     c->what, cugl_stream_is_nonblocking(w), cugl_stream_priority(w),
                     !c->blocking, priority);
        assert_ptr_equal(cugl_stream_device(w), dev);
        cugl_stream_release(w);

        /* An idle stream is done. */
        bool done = false;
        assert_ok(cugl_stream_query(s, &done));
        assert_true(done);
        check_stream_runs_work(s, (unsigned)i + 2);
        cugl_stream_release(s);
    }
}

static void priority_out_of_range_is_refused(void **state)
{
    (void)state;
    const int bad[] = {props.stream_priority_least + 1, props.stream_priority_greatest - 1,
                       props.stream_priority_least + 100};
    char range[64];
    snprintf(range, sizeof range, "range [%d, %d]", props.stream_priority_greatest,
             props.stream_priority_least);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cugl_stream_desc desc = {.priority = bad[i]};
        cugl_stream *s = (cugl_stream *)&desc;
        assert_status(cugl_stream_create(&s, dev, &desc), CUGL_ERROR_INVALID_ARGUMENT);
        assert_null(s);
        char needle[64];
        snprintf(needle, sizeof needle, "cugl_stream_create: priority %d is outside", bad[i]);
        assert_error_mentions(needle);
        assert_error_mentions(range);
    }
}

static void query_busy_stream(void **state)
{
    (void)state;
    cugl_stream *s = NULL;
    assert_ok(cugl_stream_create(&s, dev, NULL));
    CUdeviceptr word = gpu_alloc(sizeof(unsigned));
    gpu_fill_u32(word, 0, 1);
    gpu_launch_sleep(s, GPU_MS(200), word, 42);
    bool done = true;
    assert_ok(cugl_stream_query(s, &done));
    assert_false(done);
    assert_ok(cugl_stream_sync(s));
    assert_ok(cugl_stream_query(s, &done));
    assert_true(done);
    unsigned v = 0;
    gpu_read(&v, word, sizeof v);
    assert_int_equal(v, 42);
    gpu_free(word);
    cugl_stream_release(s);
}

static void from_handle_does_not_own(void **state)
{
    (void)state;
    cugl_stream *s = NULL;
    assert_ok(cugl_stream_create(&s, dev, NULL));
    void *h = cugl_stream_handle(s);

    /* Closed explicitly, then released. */
    cugl_stream *w1 = rewrap(s);
    assert_ptr_equal(cugl_stream_device(w1), dev);
    assert_true(cugl_stream_is_nonblocking(w1));
    assert_int_equal(cugl_stream_priority(w1), 0);
    check_stream_runs_work(w1, 5);
    cugl_stream_close(w1);
    assert_true(cugl_stream_is_closed(w1));
    assert_null(cugl_stream_handle(w1));
    cugl_stream_release(w1);

    /* Released without a close. */
    cugl_stream *w2 = rewrap(s);
    cugl_stream_release(w2);

    /* The original is untouched and still works. */
    assert_false(cugl_stream_is_closed(s));
    assert_ptr_equal(cugl_stream_handle(s), h);
    check_stream_runs_work(s, 6);
    cugl_stream_release(s);
}

static void default_stream_works(void **state)
{
    (void)state;
    cugl_stream *d = NULL, *again = NULL;
    assert_ok(cugl_device_default_stream(&d, dev));
    assert_non_null(d);
    assert_ok(cugl_device_default_stream(&again, dev));
    assert_ptr_equal(again, d);
    assert_ptr_equal(cugl_stream_handle(d), (void *)CU_STREAM_LEGACY);
    assert_ptr_equal(cugl_stream_device(d), dev);
    assert_false(cugl_stream_is_nonblocking(d));
    assert_int_equal(cugl_stream_priority(d), 0);
    check_stream_runs_work(d, 7);

    /* Close and release are no-ops on it. */
    cugl_stream_close(d);
    cugl_stream_release(d);
    assert_false(cugl_stream_is_closed(d));
    assert_ptr_equal(cugl_stream_handle(d), (void *)CU_STREAM_LEGACY);
    check_stream_runs_work(d, 8);

    /* Wrapping NULL gives the legacy default stream of the current device. */
    cugl_stream *w = NULL;
    assert_ok(cugl_stream_from_handle(&w, NULL));
    assert_non_null(w);
    assert_false(cugl_stream_is_closed(w));
    assert_ptr_equal(cugl_stream_device(w), dev);
    assert_false(cugl_stream_is_nonblocking(w));
    check_stream_runs_work(w, 9);
    cugl_stream_release(w);
}

static void wait_on_itself_is_refused(void **state)
{
    (void)state;
    cugl_stream *s = NULL;
    assert_ok(cugl_stream_create(&s, dev, NULL));
    assert_status(cugl_stream_wait_stream(s, s), CUGL_ERROR_INVALID_ARGUMENT);
    assert_error_mentions("cugl_stream_wait_stream: a stream cannot wait on itself");
    /* Also through another wrapper of the same CUstream. */
    cugl_stream *w = rewrap(s);
    assert_status(cugl_stream_wait_stream(s, w), CUGL_ERROR_INVALID_ARGUMENT);
    assert_error_mentions("a stream cannot wait on itself");
    cugl_stream_release(w);
    check_stream_runs_work(s, 3);
    cugl_stream_release(s);
}

/* Waiting on an event that was never recorded does not block. */
static void wait_on_unrecorded_event(void **state)
{
    (void)state;
    cugl_stream *s = NULL;
    cugl_event *e = NULL;
    assert_ok(cugl_stream_create(&s, dev, NULL));
    assert_ok(cugl_event_create(&e, dev, NULL));
    assert_ok(cugl_stream_wait_event(s, e));
    check_stream_runs_work(s, 4);
    cugl_event_release(e);
    cugl_stream_release(s);
}

enum { ORDER_N = 1 << 20, ORDER_ADD = 1000, ORDER_SCALE = 3, ORDER_FIRST = 7 };

/*
 * Stream A: sleep 50 ms then a[0] = 7, then a[1 + i] = 3 i. Stream B is
 * ordered after that (by `order`), then b[i] = a[i] + 1000. Only B is
 * synchronized. Without the ordering, B would read a's initial zeros while
 * A still sleeps.
 */
static void check_ordering(void (*order)(cugl_stream *a, cugl_stream *b))
{
    cugl_stream *a = NULL, *b = NULL;
    assert_ok(cugl_stream_create(&a, dev, NULL));
    assert_ok(cugl_stream_create(&b, dev, NULL));
    const unsigned words = ORDER_N + 1;
    CUdeviceptr abuf = gpu_alloc(words * sizeof(unsigned));
    CUdeviceptr bbuf = gpu_alloc(words * sizeof(unsigned));
    gpu_fill_u32(abuf, 0, words);
    gpu_fill_u32(bbuf, 0xdeadbeefu, words);

    gpu_launch_sleep(a, GPU_MS(50), abuf, ORDER_FIRST);
    gpu_launch_iota(a, abuf + sizeof(unsigned), ORDER_N, ORDER_SCALE);
    order(a, b);
    gpu_launch_add(b, abuf, bbuf, words, ORDER_ADD);
    assert_ok(cugl_stream_sync(b));

    /* B waited for all of A's work, and A has nothing after it. */
    bool done = false;
    assert_ok(cugl_stream_query(a, &done));
    assert_true(done);

    unsigned *host = malloc(words * sizeof *host);
    assert_non_null(host);
    gpu_read(host, bbuf, words * sizeof *host);
    unsigned bad = 0, first_bad = 0, got = 0, want = 0;
    for (unsigned i = 0; i < words; i++) {
        unsigned expect = (i == 0 ? ORDER_FIRST : (i - 1) * ORDER_SCALE) + ORDER_ADD;
        if (host[i] != expect && bad++ == 0) {
            first_bad = i;
            got = host[i];
            want = expect;
        }
    }
    free(host);
    gpu_free(abuf);
    gpu_free(bbuf);
    cugl_stream_release(a);
    cugl_stream_release(b);
    if (bad)
        fail_msg("%u of %u words wrong; word %u is %u, expected %u", bad, words, first_bad, got,
                 want);
}

static void order_by_event(cugl_stream *a, cugl_stream *b)
{
    cugl_event *e = NULL;
    assert_ok(cugl_event_create(&e, dev, NULL));
    assert_ok(cugl_event_record(e, a));
    assert_ok(cugl_stream_wait_event(b, e));
    /* The wait holds what it needs: the event may go at once. */
    cugl_event_release(e);
}

static void order_by_stream_record(cugl_stream *a, cugl_stream *b)
{
    cugl_event *e = NULL;
    assert_ok(cugl_event_create(&e, dev, NULL));
    assert_ok(cugl_stream_record(a, e));
    assert_ok(cugl_stream_wait_event(b, e));
    cugl_event_release(e);
}

static void order_by_wait_stream(cugl_stream *a, cugl_stream *b)
{
    assert_ok(cugl_stream_wait_stream(b, a));
}

static void ordering_through_event(void **state)
{
    (void)state;
    check_ordering(order_by_event);
}

static void ordering_through_stream_record(void **state)
{
    (void)state;
    check_ordering(order_by_stream_record);
}

static void ordering_through_wait_stream(void **state)
{
    (void)state;
    check_ordering(order_by_wait_stream);
}

/* Every call on a closed stream. */
static cugl_stream *closed, *open_stream;
static cugl_event *event;
static cugl_kernel *iota;
static bool flag;

static cugl_status call_sync(void) { return cugl_stream_sync(closed); }
static cugl_status call_query(void) { return cugl_stream_query(closed, &flag); }
static cugl_status call_wait_event(void) { return cugl_stream_wait_event(closed, event); }
static cugl_status call_wait_stream(void) { return cugl_stream_wait_stream(closed, open_stream); }
static cugl_status call_waited_on(void) { return cugl_stream_wait_stream(open_stream, closed); }
static cugl_status call_stream_record(void) { return cugl_stream_record(closed, event); }
static cugl_status call_event_record(void) { return cugl_event_record(event, closed); }

static cugl_status call_launch(void)
{
    static CUdeviceptr out;
    static unsigned n = 1, scale = 1;
    void *args[] = {&out, &n, &scale};
    cugl_launch_config c = {.grid = {1}, .block = {1}};
    return cugl_launch(closed, &c, iota, args, 3);
}

static const cugl_test_call closed_calls[] = {
    {"cugl_stream_sync", call_sync},
    {"cugl_stream_query", call_query},
    {"cugl_stream_wait_event", call_wait_event},
    {"cugl_stream_wait_stream", call_wait_stream},
    {"cugl_stream_wait_stream", call_waited_on},
    {"cugl_stream_record", call_stream_record},
    {"cugl_event_record", call_event_record},
    {"cugl_launch", call_launch},
};

static void closed_stream_refuses_everything(void **state)
{
    (void)state;
    assert_ok(cugl_stream_create(&closed, dev, NULL));
    assert_ok(cugl_stream_create(&open_stream, dev, NULL));
    assert_ok(cugl_event_create(&event, dev, NULL));
    iota = gpu_kernel("cugl_test_iota");

    cugl_stream_close(closed);
    assert_true(cugl_stream_is_closed(closed));
    assert_null(cugl_stream_handle(closed));
    cugl_stream_close(closed); /* twice is fine */
    assert_true(cugl_stream_is_closed(closed));

    cugl_test_expect_closed(closed_calls, sizeof closed_calls / sizeof closed_calls[0], "stream");

    /* The other objects are unharmed. */
    check_stream_runs_work(open_stream, 11);
    assert_ok(cugl_event_record(event, open_stream));
    assert_ok(cugl_event_sync(event));

    /* A retained closed stream stays closed; release after close is fine. */
    assert_ptr_equal(cugl_stream_retain(closed), closed);
    cugl_stream_release(closed);
    assert_true(cugl_stream_is_closed(closed));
    cugl_stream_release(closed);
    closed = NULL;

    cugl_kernel_release(iota);
    cugl_event_release(event);
    cugl_stream_release(open_stream);
}

static void retain_keeps_stream_open(void **state)
{
    (void)state;
    cugl_stream *s = NULL;
    assert_ok(cugl_stream_create(&s, dev, NULL));
    assert_ptr_equal(cugl_stream_retain(s), s);
    cugl_stream_release(s);
    assert_false(cugl_stream_is_closed(s));
    check_stream_runs_work(s, 12);
    cugl_stream_release(s);
}

int main(void)
{
    dev = cugl_test_device();
    gpu_mem_init();
    gpu_test_module(dev);
    if (cugl_device_get_properties(dev, &props) != CUGL_OK) {
        printf("Bail out! %s\n", cugl_last_error());
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(create_and_read_back),
        cmocka_unit_test(priority_out_of_range_is_refused),
        cmocka_unit_test(query_busy_stream),
        cmocka_unit_test(from_handle_does_not_own),
        cmocka_unit_test(default_stream_works),
        cmocka_unit_test(wait_on_itself_is_refused),
        cmocka_unit_test(wait_on_unrecorded_event),
        cmocka_unit_test(ordering_through_event),
        cmocka_unit_test(ordering_through_stream_record),
        cmocka_unit_test(ordering_through_wait_stream),
        cmocka_unit_test(closed_stream_refuses_everything),
        cmocka_unit_test(retain_keeps_stream_open),
    };
    return cugl_test_run(tests);
}
