/*
 * Status names and descriptions, the per-thread last error and the error
 * callback. Needs no driver: failures are provoked with NULL arguments.
 */
#include <pthread.h>

#include "cugl_test.h"

static const struct {
    cugl_status status;
    const char *name;
} names[] = {
    {CUGL_OK, "CUGL_OK"},
    {CUGL_ERROR_INVALID_ARGUMENT, "CUGL_ERROR_INVALID_ARGUMENT"},
    {CUGL_ERROR_CLOSED, "CUGL_ERROR_CLOSED"},
    {CUGL_ERROR_INVALID_STATE, "CUGL_ERROR_INVALID_STATE"},
    {CUGL_ERROR_NOT_SUPPORTED, "CUGL_ERROR_NOT_SUPPORTED"},
    {CUGL_ERROR_OUT_OF_MEMORY, "CUGL_ERROR_OUT_OF_MEMORY"},
    {CUGL_ERROR_NO_DRIVER, "CUGL_ERROR_NO_DRIVER"},
    {CUGL_ERROR_NO_DEVICE, "CUGL_ERROR_NO_DEVICE"},
    {CUGL_ERROR_NOT_READY, "CUGL_ERROR_NOT_READY"},
    {CUGL_ERROR_CUDA, "CUGL_ERROR_CUDA"},
    {CUGL_ERROR_GL, "CUGL_ERROR_GL"},
};

static void status_names(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        assert_string_equal(cugl_status_name(names[i].status), names[i].name);
    assert_string_equal(cugl_status_name((cugl_status)999), "CUGL_STATUS_UNKNOWN");
    assert_string_equal(cugl_status_name((cugl_status)-1), "CUGL_STATUS_UNKNOWN");
}

static void status_descriptions_are_distinct(void **state)
{
    (void)state;
    size_t n = sizeof names / sizeof names[0];
    for (size_t i = 0; i < n; i++) {
        const char *a = cugl_status_description(names[i].status);
        assert_true(strlen(a) > 5);
        for (size_t j = i + 1; j < n; j++)
            assert_string_not_equal(a, cugl_status_description(names[j].status));
    }
    assert_string_equal(cugl_status_description((cugl_status)999), "not a cugl status");
}

static void last_error_names_function_and_argument(void **state)
{
    (void)state;
    cugl_clear_error();
    assert_string_equal(cugl_last_error(), "");
    assert_int_equal(cugl_last_status(), CUGL_OK);

    assert_status(cugl_device_count(NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_device_count: count is NULL");
    assert_int_equal(cugl_last_status(), CUGL_ERROR_INVALID_ARGUMENT);
    assert_int_equal(cugl_last_cuda_result(), 0);

    /* A success does not clear it; cugl_clear_error does. */
    assert_string_equal(cugl_status_name(CUGL_OK), "CUGL_OK");
    assert_string_equal(cugl_last_error(), "cugl_device_count: count is NULL");
    cugl_clear_error();
    assert_string_equal(cugl_last_error(), "");
    assert_int_equal(cugl_last_status(), CUGL_OK);
}

static void *fail_on_thread(void *arg)
{
    (void)arg;
    cugl_clear_error();
    cugl_stream_sync(NULL);
    static _Thread_local char copy[256];
    snprintf(copy, sizeof copy, "%s", cugl_last_error());
    return copy;
}

static void last_error_is_per_thread(void **state)
{
    (void)state;
    assert_status(cugl_device_get(NULL, 0), CUGL_ERROR_INVALID_ARGUMENT);
    pthread_t t;
    void *other = NULL;
    assert_int_equal(pthread_create(&t, NULL, fail_on_thread, NULL), 0);
    assert_int_equal(pthread_join(t, &other), 0);
    assert_string_equal((const char *)other, "cugl_stream_sync: stream is NULL");
    /* This thread's message is untouched by the other thread's failure. */
    assert_string_equal(cugl_last_error(), "cugl_device_get: out is NULL");
}

struct seen {
    int calls;
    cugl_status status;
    char message[256];
    void *user;
};

static void record(cugl_status status, const char *message, void *user)
{
    struct seen *s = user;
    s->calls++;
    s->status = status;
    s->user = user;
    snprintf(s->message, sizeof s->message, "%s", message);
}

static void callback_sees_every_failure(void **state)
{
    (void)state;
    struct seen a = {0}, b = {0};
    cugl_error_callback prev = record;
    void *prev_user = (void *)1;
    cugl_set_error_callback(record, &a, &prev, &prev_user);
    assert_true(prev == NULL);
    assert_null(prev_user);

    cugl_event_sync(NULL);
    cugl_stream_query(NULL, NULL);
    assert_int_equal(a.calls, 2);
    assert_int_equal(a.status, CUGL_ERROR_INVALID_ARGUMENT);
    assert_ptr_equal(a.user, &a);
    assert_string_equal(a.message, "cugl_stream_query: stream is NULL");

    /* Swapping returns the previous callback and its data. */
    cugl_set_error_callback(record, &b, &prev, &prev_user);
    assert_true(prev == record);
    assert_ptr_equal(prev_user, &a);
    cugl_module_get_kernel(NULL, NULL, "k");
    assert_int_equal(a.calls, 2);
    assert_int_equal(b.calls, 1);
    assert_string_equal(b.message, "cugl_module_get_kernel: out is NULL");

    /* Successful calls do not call it; removing it stops the calls. */
    cugl_status_name(CUGL_OK);
    cugl_set_error_callback(NULL, NULL, NULL, NULL);
    cugl_event_sync(NULL);
    assert_int_equal(b.calls, 1);
}

static void release_and_close_accept_null(void **state)
{
    (void)state;
    cugl_clear_error();
    cugl_stream_release(NULL);
    cugl_stream_close(NULL);
    cugl_event_release(NULL);
    cugl_event_close(NULL);
    cugl_module_release(NULL);
    cugl_module_close(NULL);
    cugl_kernel_release(NULL);
    cugl_kernel_close(NULL);
    cugl_semaphore_release(NULL);
    cugl_semaphore_close(NULL);
    assert_true(cugl_semaphore_is_closed(NULL));
    assert_null(cugl_semaphore_device(NULL));
    assert_null(cugl_stream_retain(NULL));
    assert_null(cugl_event_retain(NULL));
    assert_true(cugl_stream_is_closed(NULL));
    assert_true(cugl_event_is_closed(NULL));
    assert_true(cugl_module_is_closed(NULL));
    assert_true(cugl_kernel_is_closed(NULL));
    assert_null(cugl_stream_handle(NULL));
    assert_null(cugl_event_handle(NULL));
    assert_null(cugl_kernel_name(NULL));
    assert_int_equal(cugl_device_ordinal(NULL), -1);
    assert_int_equal(cugl_device_handle(NULL), -1);
    assert_false(cugl_device_is_initialized(NULL));
    /* None of these is a failure. */
    assert_string_equal(cugl_last_error(), "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(status_names),
        cmocka_unit_test(status_descriptions_are_distinct),
        cmocka_unit_test(last_error_names_function_and_argument),
        cmocka_unit_test(last_error_is_per_thread),
        cmocka_unit_test(callback_sees_every_failure),
        cmocka_unit_test(release_and_close_accept_null),
    };
    return cugl_test_run(tests);
}
