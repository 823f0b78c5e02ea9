/*
 * Events on a real GPU: creation options, query and sync around long
 * kernels, timing (bounds and consistency), the states in which timing is
 * refused, IPC export of a non-IPC event and the closed state.
 * (Sharing an event with another process is in test_event_ipc.c.)
 */
#include "gpu_kernels.h"

static cugl_device *dev;
static cugl_stream *stream;
static CUdeviceptr scratch; /* one word the sleep kernel writes */

static cugl_event *make_event(bool timing, bool blocking_sync, bool ipc)
{
    cugl_event_desc d = {.timing = timing, .blocking_sync = blocking_sync, .ipc = ipc};
    cugl_event *e = NULL;
    assert_ok(cugl_event_create(&e, dev, &d));
    assert_non_null(e);
    return e;
}

static void sleep_on(cugl_stream *s, unsigned ms) { gpu_launch_sleep(s, GPU_MS(ms), scratch, ms); }

static void create_options(void **state)
{
    (void)state;
    static const struct {
        bool timing, blocking_sync, ipc;
    } cases[] = {
        {false, false, false}, {true, false, false}, {false, true, false},
        {true, true, false},   {false, false, true}, {false, true, true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cugl_event *e = make_event(cases[i].timing, cases[i].blocking_sync, cases[i].ipc);
        assert_int_equal(cugl_event_is_timing_enabled(e), cases[i].timing);
        assert_int_equal(cugl_event_is_blocking_sync(e), cases[i].blocking_sync);
        assert_int_equal(cugl_event_is_ipc_enabled(e), cases[i].ipc);
        assert_ptr_equal(cugl_event_device(e), dev);
        assert_non_null(cugl_event_handle(e));
        assert_false(cugl_event_is_closed(e));
        /* Each kind records, completes and reports it. */
        sleep_on(stream, 5);
        assert_ok(cugl_event_record(e, stream));
        assert_ok(cugl_event_sync(e));
        bool done = false;
        assert_ok(cugl_event_query(e, &done));
        assert_true(done);
        cugl_event_release(e);
    }

    /* NULL desc: the defaults. */
    cugl_event *e = NULL;
    assert_ok(cugl_event_create(&e, dev, NULL));
    assert_false(cugl_event_is_timing_enabled(e));
    assert_false(cugl_event_is_blocking_sync(e));
    assert_false(cugl_event_is_ipc_enabled(e));
    cugl_event_release(e);
}

static void ipc_with_timing_is_refused(void **state)
{
    (void)state;
    cugl_event_desc d = {.timing = true, .ipc = true};
    cugl_event *e = (cugl_event *)&d;
    assert_status(cugl_event_create(&e, dev, &d), CUGL_ERROR_INVALID_ARGUMENT);
    assert_null(e);
    assert_error_mentions("cugl_event_create: an IPC-enabled event cannot record timing");
}

static void query_before_and_after_sync(void **state)
{
    (void)state;
    /* Never recorded: complete. */
    cugl_event *e = make_event(false, false, false);
    bool done = false;
    assert_ok(cugl_event_query(e, &done));
    assert_true(done);
    assert_ok(cugl_event_sync(e));

    /* Recorded behind a 200 ms kernel: not yet, then after the sync, yes. */
    CUdeviceptr word = gpu_alloc(sizeof(unsigned));
    gpu_fill_u32(word, 0, 1);
    gpu_launch_sleep(stream, GPU_MS(200), word, 99);
    assert_ok(cugl_stream_record(stream, e));
    assert_ok(cugl_event_query(e, &done));
    assert_false(done);
    assert_ok(cugl_event_sync(e));
    assert_ok(cugl_event_query(e, &done));
    assert_true(done);
    /* The event completed with the kernel: its write is there. */
    unsigned v = 0;
    gpu_read(&v, word, sizeof v);
    assert_int_equal(v, 99);
    gpu_free(word);

    /* Recording again resets it to the new work. */
    sleep_on(stream, 100);
    assert_ok(cugl_event_record(e, stream));
    assert_ok(cugl_event_query(e, &done));
    assert_false(done);
    assert_ok(cugl_event_sync(e));
    assert_ok(cugl_event_query(e, &done));
    assert_true(done);
    cugl_event_release(e);
}

static void blocking_sync_event_waits(void **state)
{
    (void)state;
    cugl_event *e = make_event(false, true, false);
    CUdeviceptr word = gpu_alloc(sizeof(unsigned));
    gpu_fill_u32(word, 0, 1);
    gpu_launch_sleep(stream, GPU_MS(100), word, 5);
    assert_ok(cugl_event_record(e, stream));
    assert_ok(cugl_event_sync(e));
    bool done = false;
    assert_ok(cugl_event_query(e, &done));
    assert_true(done);
    unsigned v = 0;
    gpu_read(&v, word, sizeof v);
    assert_int_equal(v, 5);
    gpu_free(word);
    cugl_event_release(e);
}

static void timing_measures_a_sleep(void **state)
{
    (void)state;
    cugl_event *start = make_event(true, false, false);
    cugl_event *end = make_event(true, false, false);
    assert_ok(cugl_event_record(start, stream));
    sleep_on(stream, 20);
    assert_ok(cugl_event_record(end, stream));
    assert_ok(cugl_event_sync(end));
    float ms = -1.0f;
    assert_ok(cugl_event_elapsed_ms(&ms, start, end));
    if (!(ms >= 15.0f && ms < 1000.0f))
        fail_msg("a 20 ms kernel measured %.3f ms", (double)ms);
    cugl_event_release(start);
    cugl_event_release(end);
}

static void timing_intervals_add_up(void **state)
{
    (void)state;
    cugl_event *start = make_event(true, false, false);
    cugl_event *mid = make_event(true, false, false);
    cugl_event *end = make_event(true, true, false);
    assert_ok(cugl_event_record(start, stream));
    sleep_on(stream, 10);
    assert_ok(cugl_event_record(mid, stream));
    sleep_on(stream, 15);
    assert_ok(cugl_event_record(end, stream));
    assert_ok(cugl_event_sync(end));

    float whole = 0, first = 0, second = 0;
    assert_ok(cugl_event_elapsed_ms(&whole, start, end));
    assert_ok(cugl_event_elapsed_ms(&first, start, mid));
    assert_ok(cugl_event_elapsed_ms(&second, mid, end));
    if (!(first >= 8.0f && second >= 12.0f && whole >= 20.0f && whole < 1000.0f))
        fail_msg("intervals %.3f + %.3f, whole %.3f ms", (double)first, (double)second,
                 (double)whole);
    float diff = first + second - whole;
    if (diff < 0)
        diff = -diff;
    if (diff > 0.5f)
        fail_msg("intervals %.3f + %.3f ms do not add up to %.3f ms", (double)first,
                 (double)second, (double)whole);
    cugl_event_release(start);
    cugl_event_release(mid);
    cugl_event_release(end);
}

static void elapsed_before_completion_is_not_ready(void **state)
{
    (void)state;
    cugl_event *start = make_event(true, false, false);
    cugl_event *end = make_event(true, false, false);
    assert_ok(cugl_event_record(start, stream));
    sleep_on(stream, 300);
    assert_ok(cugl_event_record(end, stream));
    float ms = -1.0f;
    assert_status(cugl_event_elapsed_ms(&ms, start, end), CUGL_ERROR_NOT_READY);
    assert_error_mentions("cugl_event_elapsed_ms: the events have not completed yet");
    assert_int_equal(cugl_last_cuda_result(), CUDA_ERROR_NOT_READY);
    /* Once complete, the same pair measures. */
    assert_ok(cugl_event_sync(end));
    assert_ok(cugl_event_elapsed_ms(&ms, start, end));
    if (!(ms >= 250.0f && ms < 5000.0f))
        fail_msg("a 300 ms kernel measured %.3f ms", (double)ms);
    cugl_event_release(start);
    cugl_event_release(end);
}

static void elapsed_refused_states(void **state)
{
    (void)state;
    cugl_event *timed = make_event(true, false, false);
    cugl_event *timed2 = make_event(true, false, false);
    cugl_event *untimed = make_event(false, false, false);
    cugl_event *never = make_event(true, false, false); /* timing, never recorded */
    assert_ok(cugl_event_record(timed, stream));
    assert_ok(cugl_event_record(untimed, stream));
    assert_ok(cugl_event_record(timed2, stream));
    assert_ok(cugl_stream_sync(stream));

    const struct {
        cugl_event *start, *end;
        cugl_status status;
        const char *message;
    } cases[] = {
        {untimed, timed, CUGL_ERROR_INVALID_STATE,
         "cugl_event_elapsed_ms: timing is disabled on the start event"},
        {timed, untimed, CUGL_ERROR_INVALID_STATE,
         "cugl_event_elapsed_ms: timing is disabled on the end event"},
        {untimed, untimed, CUGL_ERROR_INVALID_STATE,
         "cugl_event_elapsed_ms: timing is disabled on the start event"},
        {never, timed, CUGL_ERROR_INVALID_STATE,
         "cugl_event_elapsed_ms: the start event has never been recorded"},
        {timed, never, CUGL_ERROR_INVALID_STATE,
         "cugl_event_elapsed_ms: the end event has never been recorded"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        float ms = 42.0f;
        cugl_clear_error();
        cugl_status st = cugl_event_elapsed_ms(&ms, cases[i].start, cases[i].end);
        if (st != cases[i].status)
            fail_msg("case %zu returned %s, expected %s (%s)", i, cugl_status_name(st),
                     cugl_status_name(cases[i].status), cugl_last_error());
        assert_error_mentions(cases[i].message);
        assert_true(ms == 0.0f);
    }

    /* The valid pair among them measures (recorded back to back: ~0 ms). */
    float ms = -1.0f;
    assert_ok(cugl_event_elapsed_ms(&ms, timed, timed2));
    assert_true(ms >= 0.0f && ms < 100.0f);

    cugl_event_release(timed);
    cugl_event_release(timed2);
    cugl_event_release(untimed);
    cugl_event_release(never);
}

static void export_of_non_ipc_event_is_refused(void **state)
{
    (void)state;
    cugl_event *e = make_event(false, false, false);
    cugl_event_ipc_descriptor d;
    assert_status(cugl_event_ipc_export(e, &d), CUGL_ERROR_INVALID_STATE);
    assert_error_mentions("cugl_event_ipc_export: the event was not created IPC-enabled");
    cugl_event_release(e);
    cugl_event *t = make_event(true, false, false);
    assert_status(cugl_event_ipc_export(t, &d), CUGL_ERROR_INVALID_STATE);
    cugl_event_release(t);
}

/* Every call on a closed event. */
static cugl_event *closed, *other;
static float ms_out;
static bool flag;
static cugl_event_ipc_descriptor descriptor;

static cugl_status call_record(void) { return cugl_event_record(closed, stream); }
static cugl_status call_stream_record(void) { return cugl_stream_record(stream, closed); }
static cugl_status call_sync(void) { return cugl_event_sync(closed); }
static cugl_status call_query(void) { return cugl_event_query(closed, &flag); }
static cugl_status call_elapsed_start(void) { return cugl_event_elapsed_ms(&ms_out, closed, other); }
static cugl_status call_elapsed_end(void) { return cugl_event_elapsed_ms(&ms_out, other, closed); }
static cugl_status call_export(void) { return cugl_event_ipc_export(closed, &descriptor); }
static cugl_status call_wait(void) { return cugl_stream_wait_event(stream, closed); }

static const cugl_test_call closed_calls[] = {
    {"cugl_event_record", call_record},
    {"cugl_stream_record", call_stream_record},
    {"cugl_event_sync", call_sync},
    {"cugl_event_query", call_query},
    {"cugl_event_elapsed_ms", call_elapsed_start},
    {"cugl_event_elapsed_ms", call_elapsed_end},
    {"cugl_event_ipc_export", call_export},
    {"cugl_stream_wait_event", call_wait},
};

static void closed_event_refuses_everything(void **state)
{
    (void)state;
    /* IPC-enabled, so that export would otherwise succeed. */
    closed = make_event(false, false, true);
    other = make_event(true, false, false);
    assert_ok(cugl_event_record(other, stream));
    assert_ok(cugl_event_record(closed, stream));
    assert_ok(cugl_stream_sync(stream));

    cugl_event_close(closed);
    assert_true(cugl_event_is_closed(closed));
    assert_null(cugl_event_handle(closed));
    cugl_event_close(closed); /* twice is fine */
    assert_true(cugl_event_is_closed(closed));

    cugl_test_expect_closed(closed_calls, sizeof closed_calls / sizeof closed_calls[0], "event");

    /* The stream and the other event are unharmed. */
    assert_ok(cugl_event_record(other, stream));
    assert_ok(cugl_event_sync(other));
    assert_ok(cugl_stream_sync(stream));

    /* Release after close is fine, also with an extra reference. */
    assert_ptr_equal(cugl_event_retain(closed), closed);
    cugl_event_release(closed);
    assert_true(cugl_event_is_closed(closed));
    cugl_event_release(closed);
    closed = NULL;
    cugl_event_release(other);
    other = NULL;
}

static void retain_keeps_event_open(void **state)
{
    (void)state;
    cugl_event *e = make_event(false, false, false);
    assert_ptr_equal(cugl_event_retain(e), e);
    cugl_event_release(e);
    assert_false(cugl_event_is_closed(e));
    assert_ok(cugl_event_record(e, stream));
    assert_ok(cugl_event_sync(e));
    cugl_event_release(e);
}

int main(void)
{
    dev = cugl_test_device();
    gpu_mem_init();
    gpu_test_module(dev);
    if (cugl_stream_create(&stream, dev, NULL) != CUGL_OK) {
        printf("Bail out! %s\n", cugl_last_error());
        return 1;
    }
    scratch = gpu_alloc(sizeof(unsigned));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(create_options),
        cmocka_unit_test(ipc_with_timing_is_refused),
        cmocka_unit_test(query_before_and_after_sync),
        cmocka_unit_test(blocking_sync_event_waits),
        cmocka_unit_test(timing_measures_a_sleep),
        cmocka_unit_test(timing_intervals_add_up),
        cmocka_unit_test(elapsed_before_completion_is_not_ready),
        cmocka_unit_test(elapsed_refused_states),
        cmocka_unit_test(export_of_non_ipc_event_is_refused),
        cmocka_unit_test(closed_event_refuses_everything),
        cmocka_unit_test(retain_keeps_event_open),
    };
    return cugl_test_run(tests);
}
