/*
 * Behaviour without a usable driver. Meson runs this with CUGL_LIBCUDA
 * pointing at a file that does not exist, and again at the CUDA Toolkit's
 * stub libcuda; CUGL_TEST_EXPECT holds what the message must say. Every
 * entry point that needs the driver must return CUGL_ERROR_NO_DRIVER with
 * that message, every time, from any thread, and nothing may crash.
 */
#include <pthread.h>

#include "cugl_test.h"

static const char *expect;

static cugl_device *dev;
static cugl_stream *stream;
static int value;

static cugl_status call_count(void) { return cugl_device_count(&value); }
static cugl_status call_get(void) { return cugl_device_get(&dev, 0); }
static cugl_status call_current(void) { return cugl_device_get_current(&dev); }
static cugl_status call_version(void) { return cugl_driver_version(&value); }
static cugl_status call_from_handle(void) { return cugl_stream_from_handle(&stream, NULL); }

static const struct {
    const char *name;
    cugl_status (*call)(void);
} entry_points[] = {
    {"cugl_device_count", call_count},
    {"cugl_device_get", call_get},
    {"cugl_device_get_current", call_current},
    {"cugl_driver_version", call_version},
    {"cugl_stream_from_handle", call_from_handle},
};

static void every_entry_point_reports_no_driver(void **state)
{
    (void)state;
    /* Twice: the first call loads, the second reports the stored failure. */
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < sizeof entry_points / sizeof entry_points[0]; i++) {
            cugl_clear_error();
            dev = (cugl_device *)&value;
            assert_status(entry_points[i].call(), CUGL_ERROR_NO_DRIVER);
            assert_int_equal(cugl_last_status(), CUGL_ERROR_NO_DRIVER);
            /* The message names the function that was called... */
            if (strncmp(cugl_last_error(), entry_points[i].name,
                        strlen(entry_points[i].name)) != 0)
                fail_msg("message \"%s\" does not start with %s", cugl_last_error(),
                         entry_points[i].name);
            /* ...and the reason. */
            assert_error_mentions(expect);
        }
    }
    assert_null(stream);
    assert_int_equal(value, 0);
}

static void device_count_is_zeroed(void **state)
{
    (void)state;
    value = 5;
    assert_status(cugl_device_count(&value), CUGL_ERROR_NO_DRIVER);
    assert_int_equal(value, 0);
}

static void *count_on_thread(void *arg)
{
    int n = -1;
    *(cugl_status *)arg = cugl_device_count(&n);
    if (!strstr(cugl_last_error(), expect))
        *(cugl_status *)arg = CUGL_ERROR_CUDA; /* wrong message: flag it */
    return NULL;
}

static void concurrent_first_use_is_safe(void **state)
{
    (void)state;
    enum { N = 8 };
    pthread_t threads[N];
    cugl_status results[N];
    for (int i = 0; i < N; i++)
        assert_int_equal(pthread_create(&threads[i], NULL, count_on_thread, &results[i]), 0);
    for (int i = 0; i < N; i++) {
        assert_int_equal(pthread_join(threads[i], NULL), 0);
        assert_int_equal(results[i], CUGL_ERROR_NO_DRIVER);
    }
}

int main(void)
{
    expect = getenv("CUGL_TEST_EXPECT");
    if (!expect || !getenv("CUGL_LIBCUDA")) {
        printf("Bail out! set CUGL_LIBCUDA and CUGL_TEST_EXPECT\n");
        return 1;
    }
    /* Threads first: the very first use of the driver happens concurrently. */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(concurrent_first_use_is_safe),
        cmocka_unit_test(every_entry_point_reports_no_driver),
        cmocka_unit_test(device_count_is_zeroed),
    };
    return cugl_test_run(tests);
}
