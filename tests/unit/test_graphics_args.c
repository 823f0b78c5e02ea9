/*
 * Graphics interop arguments that are refused before the driver is
 * touched: NULL outputs and objects, empty resource lists. Each case checks
 * the status and the exact message. Queries on NULL answer safely.
 * (Flags, targets, states and GL contexts need a device: tests/gpu.)
 */
#include "cugl_test.h"

static cugl_graphics_resource *res;
static cugl_graphics_resource *list[2];
static cugl_buffer *buf;
static cugl_array *arr;
static cugl_stream *stream;
static cugl_device *dev;
static int ordinals[2];
static int count;

#define CASE(id, expr, message) CUGL_TEST_CASE(id, expr, CUGL_ERROR_INVALID_ARGUMENT, message)
#define ROW(id, expr, message) CUGL_TEST_ROW(id, expr, CUGL_ERROR_INVALID_ARGUMENT, message)

/* X(id, expr, message) */
#define GRAPHICS_CASES(X)                                                                      \
    X(g01, cugl_graphics_resource_from_gl_buffer(NULL, dev, 1, 0),                             \
      "cugl_graphics_resource_from_gl_buffer: out is NULL")                                    \
    X(g02, cugl_graphics_resource_from_gl_buffer(&res, NULL, 1, 0),                            \
      "cugl_graphics_resource_from_gl_buffer: device is NULL")                                 \
    X(g03, cugl_graphics_resource_from_gl_image(NULL, dev, 1, 0x0DE1, 0),                      \
      "cugl_graphics_resource_from_gl_image: out is NULL")                                     \
    X(g04, cugl_graphics_resource_from_gl_image(&res, NULL, 1, 0x0DE1, 0),                     \
      "cugl_graphics_resource_from_gl_image: device is NULL")                                  \
    X(g05, cugl_graphics_resource_map(NULL, res, stream),                                      \
      "cugl_graphics_resource_map: out is NULL")                                               \
    X(g06, cugl_graphics_resource_map(&buf, NULL, stream),                                     \
      "cugl_graphics_resource_map: resource is NULL")                                          \
    X(g07, cugl_graphics_resource_map_array(NULL, res, stream, 0, 0),                          \
      "cugl_graphics_resource_map_array: out is NULL")                                         \
    X(g08, cugl_graphics_resource_map_array(&arr, NULL, stream, 0, 0),                         \
      "cugl_graphics_resource_map_array: resource is NULL")                                    \
    X(g09, cugl_graphics_map(NULL, 1, stream), "cugl_graphics_map: resources is NULL")         \
    X(g10, cugl_graphics_map(list, 0, stream), "cugl_graphics_map: count is 0")                \
    X(g11, cugl_graphics_map(list, 2, stream), "cugl_graphics_map: stream is NULL")            \
    X(g12, cugl_graphics_unmap(NULL, 1, NULL), "cugl_graphics_unmap: resources is NULL")       \
    X(g13, cugl_graphics_unmap(list, 0, NULL), "cugl_graphics_unmap: count is 0")              \
    X(g14, cugl_graphics_unmap(list, 2, NULL), "cugl_graphics_unmap: resources[0] is NULL")    \
    X(g15, cugl_graphics_resource_buffer(NULL, res), "cugl_graphics_resource_buffer: out is NULL") \
    X(g16, cugl_graphics_resource_buffer(&buf, NULL),                                          \
      "cugl_graphics_resource_buffer: resource is NULL")                                       \
    X(g17, cugl_graphics_resource_array(NULL, res, 0, 0),                                      \
      "cugl_graphics_resource_array: out is NULL")                                             \
    X(g18, cugl_graphics_resource_array(&arr, NULL, 0, 0),                                     \
      "cugl_graphics_resource_array: resource is NULL")                                        \
    X(g19, cugl_graphics_resource_unmap(NULL, NULL),                                           \
      "cugl_graphics_resource_unmap: resource is NULL")                                        \
    X(g20, cugl_graphics_resource_set_unmap_stream(NULL, NULL),                                \
      "cugl_graphics_resource_set_unmap_stream: resource is NULL")                             \
    X(g21, cugl_graphics_resource_set_map_flags(NULL, 0),                                      \
      "cugl_graphics_resource_set_map_flags: resource is NULL")                                \
    X(g22, cugl_gl_devices(ordinals, 2, NULL), "cugl_gl_devices: count is NULL")               \
    X(g23, cugl_gl_devices(NULL, 2, &count),                                                   \
      "cugl_gl_devices: ordinals is NULL or capacity (2) negative")                            \
    X(g24, cugl_gl_devices(ordinals, -1, &count),                                              \
      "cugl_gl_devices: ordinals is NULL or capacity (-1) negative")

GRAPHICS_CASES(CASE)

static const cugl_test_case cases[] = {GRAPHICS_CASES(ROW)};

static void null_arguments_are_refused(void **state)
{
    (void)state;
    cugl_test_run_cases(cases, sizeof cases / sizeof cases[0], NULL);
}

static void outputs_are_cleared_on_failure(void **state)
{
    (void)state;
    res = (cugl_graphics_resource *)&count;
    assert_status(cugl_graphics_resource_from_gl_buffer(&res, NULL, 1, 0),
                  CUGL_ERROR_INVALID_ARGUMENT);
    assert_null(res);
    buf = (cugl_buffer *)&count;
    assert_status(cugl_graphics_resource_map(&buf, NULL, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_null(buf);
    arr = (cugl_array *)&count;
    assert_status(cugl_graphics_resource_array(&arr, NULL, 0, 0), CUGL_ERROR_INVALID_ARGUMENT);
    assert_null(arr);
    count = 5;
    assert_status(cugl_gl_devices(NULL, -1, &count), CUGL_ERROR_INVALID_ARGUMENT);
    assert_int_equal(count, 0);
}

static void queries_on_null_are_safe(void **state)
{
    (void)state;
    assert_false(cugl_graphics_resource_is_mapped(NULL));
    assert_true(cugl_graphics_resource_is_closed(NULL));
    assert_false(cugl_graphics_resource_is_buffer(NULL));
    assert_int_equal(cugl_graphics_resource_flags(NULL), 0);
    assert_int_equal(cugl_graphics_resource_map_flags(NULL), 0);
    assert_int_equal(cugl_graphics_resource_gl_name(NULL), 0);
    assert_int_equal(cugl_graphics_resource_gl_target(NULL), 0);
    assert_null(cugl_graphics_resource_handle(NULL));
    assert_null(cugl_graphics_resource_device(NULL));
    assert_null(cugl_graphics_resource_retain(NULL));
    assert_ok(cugl_graphics_resource_close(NULL, NULL));
    cugl_graphics_resource_release(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(null_arguments_are_refused),
        cmocka_unit_test(outputs_are_cleared_on_failure),
        cmocka_unit_test(queries_on_null_are_safe),
    };
    return cugl_test_run(tests);
}
