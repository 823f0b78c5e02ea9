/*
 * Argument validation of every public function that can be reached without
 * a GPU: NULL outputs, NULL objects, empty names. Each case checks the
 * status and that the message names the function and the argument. The
 * checks come before the driver is touched, so this runs anywhere.
 * (Out-of-range values and closed objects need a device: see tests/gpu.)
 */
#include "cugl_test.h"

static cugl_device_properties props;
static cugl_launch_config config = {.grid = {1}, .block = {1}};
static bool flag;
static int count;
static float ms;
static size_t size_value;
static cugl_device *dev;
static cugl_stream *stream;
static cugl_event *event;
static cugl_semaphore *semaphore;
static cugl_module *module;
static cugl_kernel *kernel;
static cugl_event_ipc_descriptor ipc;
static const char image[] = "not a module";

/* Every case here is refused as an invalid argument. */
#define CASE(id, expr, message) CUGL_TEST_CASE(id, expr, CUGL_ERROR_INVALID_ARGUMENT, message)
#define ROW(id, expr, message) CUGL_TEST_ROW(id, expr, CUGL_ERROR_INVALID_ARGUMENT, message)

/* X(id, expr, message) */
#define ARG_CASES(X)                                                                            \
    X(c01, cugl_device_count(NULL), "cugl_device_count: count is NULL")                         \
    X(c02, cugl_device_get(NULL, 0), "cugl_device_get: out is NULL")                            \
    X(c03, cugl_device_get_current(NULL), "cugl_device_get_current: out is NULL")               \
    X(c04, cugl_device_get_properties(NULL, &props), "cugl_device_get_properties: device is NULL") \
    X(c05, cugl_device_set_current(NULL), "cugl_device_set_current: device is NULL")            \
    X(c06, cugl_device_sync(NULL), "cugl_device_sync: device is NULL")                          \
    X(c07, cugl_device_memory_info(NULL, &size_value, NULL),                                    \
      "cugl_device_memory_info: device is NULL")                                                \
    X(c08, cugl_driver_version(NULL), "cugl_driver_version: version is NULL")                   \
    X(c09, cugl_stream_create(NULL, dev, NULL), "cugl_stream_create: out is NULL")              \
    X(c10, cugl_stream_create(&stream, NULL, NULL), "cugl_stream_create: device is NULL")       \
    X(c11, cugl_stream_from_handle(NULL, NULL), "cugl_stream_from_handle: out is NULL")         \
    X(c12, cugl_device_default_stream(NULL, dev), "cugl_device_default_stream: out is NULL")    \
    X(c13, cugl_device_default_stream(&stream, NULL),                                           \
      "cugl_device_default_stream: device is NULL")                                             \
    X(c14, cugl_stream_sync(NULL), "cugl_stream_sync: stream is NULL")                          \
    X(c15, cugl_stream_query(NULL, &flag), "cugl_stream_query: stream is NULL")                 \
    X(c16, cugl_stream_wait_event(NULL, event), "cugl_stream_wait_event: stream is NULL")       \
    X(c17, cugl_stream_wait_stream(NULL, stream), "cugl_stream_wait_stream: stream is NULL")    \
    X(c18, cugl_stream_record(NULL, event), "cugl_stream_record: stream is NULL")               \
    X(c19, cugl_event_create(NULL, dev, NULL), "cugl_event_create: out is NULL")                \
    X(c20, cugl_event_create(&event, NULL, NULL), "cugl_event_create: device is NULL")          \
    X(c21, cugl_event_record(NULL, stream), "cugl_event_record: event is NULL")                 \
    X(c22, cugl_event_sync(NULL), "cugl_event_sync: event is NULL")                             \
    X(c23, cugl_event_query(NULL, &flag), "cugl_event_query: event is NULL")                    \
    X(c24, cugl_event_elapsed_ms(NULL, event, event), "cugl_event_elapsed_ms: ms is NULL")      \
    X(c25, cugl_event_elapsed_ms(&ms, NULL, event), "cugl_event_elapsed_ms: start is NULL")     \
    X(c27, cugl_event_ipc_export(NULL, &ipc), "cugl_event_ipc_export: event is NULL")           \
    X(c28, cugl_event_ipc_import(NULL, dev, &ipc), "cugl_event_ipc_import: out is NULL")        \
    X(c29, cugl_event_ipc_import(&event, NULL, &ipc), "cugl_event_ipc_import: device is NULL")  \
    X(c30, cugl_module_load_data(NULL, dev, image, sizeof image),                               \
      "cugl_module_load_data: out is NULL")                                                     \
    X(c31, cugl_module_load_data(&module, NULL, image, sizeof image),                           \
      "cugl_module_load_data: device is NULL")                                                  \
    X(c32, cugl_module_get_kernel(NULL, module, "k"), "cugl_module_get_kernel: out is NULL")    \
    X(c33, cugl_module_get_kernel(&kernel, NULL, "k"), "cugl_module_get_kernel: module is NULL") \
    X(c34, cugl_kernel_num_args(NULL, &size_value), "cugl_kernel_num_args: kernel is NULL")     \
    X(c35, cugl_kernel_max_threads_per_block(NULL, &count),                                     \
      "cugl_kernel_max_threads_per_block: kernel is NULL")                                      \
    X(c36, cugl_launch(NULL, &config, kernel, NULL, 0), "cugl_launch: stream is NULL")       \
    X(c37, cugl_semaphore_import_fd(NULL, dev, 3), "cugl_semaphore_import_fd: out is NULL")    \
    X(c38, cugl_semaphore_import_fd(&semaphore, NULL, 3),                                      \
      "cugl_semaphore_import_fd: device is NULL")                                               \
    X(c39, cugl_semaphore_signal(NULL, stream), "cugl_semaphore_signal: semaphore is NULL")    \
    X(c40, cugl_semaphore_wait(NULL, stream), "cugl_semaphore_wait: semaphore is NULL")

ARG_CASES(CASE)

static const cugl_test_case cases[] = {ARG_CASES(ROW)};

static void null_arguments_are_refused(void **state)
{
    (void)state;
    cugl_test_run_cases(cases, sizeof cases / sizeof cases[0], NULL);
}

/* Out-parameters are cleared on failure, so a caller never sees garbage. */
static void outputs_are_cleared_on_failure(void **state)
{
    (void)state;
    stream = (cugl_stream *)&props;
    assert_status(cugl_stream_create(&stream, NULL, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_null(stream);
    event = (cugl_event *)&props;
    assert_status(cugl_event_create(&event, NULL, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_null(event);
    module = (cugl_module *)&props;
    assert_status(cugl_module_load_data(&module, NULL, image, 1), CUGL_ERROR_INVALID_ARGUMENT);
    assert_null(module);
    ms = 42.0f;
    assert_status(cugl_event_elapsed_ms(&ms, NULL, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_true(ms == 0.0f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(null_arguments_are_refused),
        cmocka_unit_test(outputs_are_cleared_on_failure),
    };
    return cugl_test_run(tests);
}
