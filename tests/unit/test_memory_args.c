/*
 * Argument validation of the memory resource and buffer API, and what
 * buffers do without a driver: every check that comes before the driver is
 * touched, each with its status and exact message; the empty non-owning
 * buffer (handle 0, size 0) that needs no driver; closing; the getters on
 * NULL; DLPack of an empty buffer. Runs anywhere.
 * (Allocations, statistics and everything that needs a device: tests/gpu.)
 */
#include <dlpack/dlpack.h>

#include "cugl_test.h"

static cugl_device *dev;
static cugl_stream *stream;
static cugl_memory_resource *mr;
static cugl_buffer *buffer;
static cugl_buffer *slot; /* NULL: copy_to's "allocate one" */
static cugl_buffer *empty;  /* from_handle(0, 0, NULL): open, needs no driver */
static cugl_buffer *closed; /* the same, closed */
static cugl_pool_stats stats;
static cugl_buffer_ipc_descriptor ipc;
static DLManagedTensor *tensor;
static int fd;
static size_t allocation_size;
static const uint8_t byte = 0xab;

/*
 * A zeroed block passed where a check needs a non-NULL device or resource
 * whose contents the call never reads: the argument that fails is checked
 * first. Were the order to change, the zeroes read as an uninitialized
 * device or an open, non-imported resource, and the message would differ.
 */
static max_align_t stand_in[4096 / sizeof(max_align_t)];
#define STAND_IN_DEVICE ((cugl_device *)(void *)stand_in)
#define STAND_IN_MR ((cugl_memory_resource *)(void *)stand_in)

static const cugl_managed_memory_desc location_3 = {.preferred_location = (cugl_location_kind)3};
static const cugl_managed_memory_desc location_minus_1 = {
    .preferred_location = (cugl_location_kind)-1};

#define CASE CUGL_TEST_CASE
#define ROW CUGL_TEST_ROW

#define INVALID CUGL_ERROR_INVALID_ARGUMENT
#define STATE CUGL_ERROR_INVALID_STATE
#define CLOSED CUGL_ERROR_CLOSED

/* X(id, expr, status, message) */
#define MEMORY_CASES(X)                                                                         \
    X(m01, cugl_device_memory_resource_create(NULL, dev, NULL), INVALID,                        \
      "cugl_device_memory_resource_create: out is NULL")                                        \
    X(m02, cugl_device_memory_resource_create(&mr, NULL, NULL), INVALID,                        \
      "cugl_device_memory_resource_create: device is NULL")                                     \
    X(m03, cugl_pinned_memory_resource_create(NULL, dev, NULL), INVALID,                        \
      "cugl_pinned_memory_resource_create: out is NULL")                                        \
    X(m04, cugl_pinned_memory_resource_create(&mr, NULL, NULL), INVALID,                        \
      "cugl_pinned_memory_resource_create: device is NULL")                                     \
    X(m05, cugl_managed_memory_resource_create(NULL, dev, NULL), INVALID,                       \
      "cugl_managed_memory_resource_create: out is NULL")                                       \
    X(m06, cugl_managed_memory_resource_create(&mr, NULL, NULL), INVALID,                       \
      "cugl_managed_memory_resource_create: device is NULL")                                    \
    X(m07, cugl_managed_memory_resource_create(&mr, NULL, &location_3), INVALID,                \
      "cugl_managed_memory_resource_create: preferred_location 3 is not a cugl_location_kind")  \
    X(m08, cugl_managed_memory_resource_create(&mr, NULL, &location_minus_1), INVALID,          \
      "cugl_managed_memory_resource_create: preferred_location -1 is not a cugl_location_kind") \
    X(m09, cugl_legacy_pinned_memory_resource_create(NULL, dev), INVALID,                       \
      "cugl_legacy_pinned_memory_resource_create: out is NULL")                                 \
    X(m10, cugl_legacy_pinned_memory_resource_create(&mr, NULL), INVALID,                       \
      "cugl_legacy_pinned_memory_resource_create: device is NULL")                              \
    X(m11, cugl_exportable_memory_resource_create(NULL, dev), INVALID,                          \
      "cugl_exportable_memory_resource_create: out is NULL")                                    \
    X(m12, cugl_exportable_memory_resource_create(&mr, NULL), INVALID,                          \
      "cugl_exportable_memory_resource_create: device is NULL")                                 \
    X(m13, cugl_memory_resource_allocate(NULL, mr, 16, stream), INVALID,                        \
      "cugl_memory_resource_allocate: out is NULL")                                             \
    X(m14, cugl_memory_resource_allocate(&buffer, NULL, 16, stream), INVALID,                   \
      "cugl_memory_resource_allocate: mr is NULL")                                              \
    X(m15, cugl_memory_resource_deallocate(NULL, 0, 0, stream), INVALID,                        \
      "cugl_memory_resource_deallocate: mr is NULL")                                            \
    X(m16, cugl_memory_resource_pool_stats(NULL, &stats), INVALID,                              \
      "cugl_memory_resource_pool_stats: mr is NULL")                                            \
    X(m17, cugl_memory_resource_trim(NULL, 0), INVALID, "cugl_memory_resource_trim: mr is NULL") \
    X(m18, cugl_memory_resource_export_fd(NULL, &fd), INVALID,                                  \
      "cugl_memory_resource_export_fd: mr is NULL")                                             \
    X(m19, cugl_device_memory_resource_import_fd(NULL, dev, 3), INVALID,                        \
      "cugl_device_memory_resource_import_fd: out is NULL")                                     \
    X(m20, cugl_device_memory_resource_import_fd(&mr, NULL, 3), INVALID,                        \
      "cugl_device_memory_resource_import_fd: device is NULL")                                  \
    X(m21, cugl_device_memory_resource_import_fd(&mr, NULL, -1), INVALID,                       \
      "cugl_device_memory_resource_import_fd: device is NULL")                                  \
    X(m22, cugl_device_memory_resource_import_fd(&mr, STAND_IN_DEVICE, -1), INVALID,            \
      "cugl_device_memory_resource_import_fd: fd -1 is not a file descriptor")

#define BUFFER_CASES(X)                                                                         \
    X(b01, cugl_buffer_from_handle(NULL, 0, 0, NULL), INVALID,                                  \
      "cugl_buffer_from_handle: out is NULL")                                                   \
    X(b02, cugl_buffer_from_handle(&buffer, 0, 16, NULL), INVALID,                              \
      "cugl_buffer_from_handle: ptr is 0 but size is 16")                                       \
    X(b03, cugl_buffer_copy_to(NULL, empty, stream), INVALID, "cugl_buffer_copy_to: dst is NULL") \
    X(b04, cugl_buffer_copy_to(&slot, NULL, stream), INVALID,                                   \
      "cugl_buffer_copy_to: src is NULL")                                                       \
    X(b05, cugl_buffer_copy_to(&slot, empty, NULL), INVALID,                                    \
      "cugl_buffer_copy_to: stream is NULL")                                                    \
    X(b06, cugl_buffer_copy_from(NULL, empty, stream), INVALID,                                 \
      "cugl_buffer_copy_from: dst is NULL")                                                     \
    X(b07, cugl_buffer_copy_from(empty, NULL, stream), INVALID,                                 \
      "cugl_buffer_copy_from: src is NULL")                                                     \
    X(b08, cugl_buffer_copy_from(empty, empty, NULL), INVALID,                                  \
      "cugl_buffer_copy_from: stream is NULL")                                                  \
    X(b09, cugl_buffer_fill(NULL, &byte, 1, stream), INVALID, "cugl_buffer_fill: buffer is NULL") \
    X(b10, cugl_buffer_fill(empty, NULL, 1, stream), INVALID, "cugl_buffer_fill: value is NULL") \
    X(b11, cugl_buffer_fill(empty, &byte, 1, NULL), INVALID, "cugl_buffer_fill: stream is NULL") \
    X(b12, cugl_buffer_set_deallocation_stream(NULL, stream), INVALID,                          \
      "cugl_buffer_set_deallocation_stream: buffer is NULL")                                    \
    X(b13, cugl_buffer_set_deallocation_stream(empty, NULL), INVALID,                           \
      "cugl_buffer_set_deallocation_stream: stream is NULL")                                    \
    X(b14, cugl_buffer_ipc_export(NULL, &ipc), INVALID, "cugl_buffer_ipc_export: buffer is NULL") \
    X(b15, cugl_buffer_ipc_export(empty, NULL), INVALID,                                        \
      "cugl_buffer_ipc_export: descriptor is NULL")                                             \
    X(b16, cugl_buffer_ipc_export(empty, &ipc), STATE,                                          \
      "cugl_buffer_ipc_export: the buffer's memory resource is not IPC-enabled (allocate from " \
      "a device memory resource created with ipc = true)")                                      \
    X(b17, cugl_buffer_ipc_import(NULL, mr, &ipc, stream), INVALID,                             \
      "cugl_buffer_ipc_import: out is NULL")                                                    \
    X(b18, cugl_buffer_ipc_import(&buffer, NULL, &ipc, stream), INVALID,                        \
      "cugl_buffer_ipc_import: mr is NULL")                                                     \
    X(b19, cugl_buffer_ipc_import(&buffer, STAND_IN_MR, NULL, stream), INVALID,                 \
      "cugl_buffer_ipc_import: descriptor is NULL")                                             \
    X(b20, cugl_buffer_export_fd(NULL, &fd, &allocation_size), INVALID,                         \
      "cugl_buffer_export_fd: buffer is NULL")                                                  \
    X(b21, cugl_buffer_export_fd(empty, NULL, &allocation_size), INVALID,                       \
      "cugl_buffer_export_fd: fd is NULL")                                                      \
    X(b22, cugl_buffer_export_fd(empty, &fd, &allocation_size), STATE,                          \
      "cugl_buffer_export_fd: the buffer does not come from an exportable memory resource "     \
      "(cugl_exportable_memory_resource_create)")                                               \
    X(b23, cugl_buffer_to_dlpack(NULL, empty), INVALID, "cugl_buffer_to_dlpack: out is NULL")   \
    X(b24, cugl_buffer_to_dlpack(&tensor, NULL), INVALID, "cugl_buffer_to_dlpack: buffer is NULL")

/* A closed buffer refuses everything but the getters, close and release;
 * the closed check comes before the stream's. */
#define CLOSED_CASES(X)                                                                         \
    X(k01, cugl_buffer_copy_to(&slot, closed, stream), CLOSED,                                  \
      "cugl_buffer_copy_to: the buffer has been closed")                                        \
    X(k02, cugl_buffer_copy_from(closed, empty, stream), CLOSED,                                \
      "cugl_buffer_copy_from: the buffer has been closed")                                      \
    X(k03, cugl_buffer_copy_from(empty, closed, stream), CLOSED,                                \
      "cugl_buffer_copy_from: the buffer has been closed")                                      \
    X(k04, cugl_buffer_fill(closed, &byte, 1, stream), CLOSED,                                  \
      "cugl_buffer_fill: the buffer has been closed")                                           \
    X(k05, cugl_buffer_set_deallocation_stream(closed, stream), CLOSED,                         \
      "cugl_buffer_set_deallocation_stream: the buffer has been closed")                        \
    X(k06, cugl_buffer_ipc_export(closed, &ipc), CLOSED,                                        \
      "cugl_buffer_ipc_export: the buffer has been closed")                                     \
    X(k07, cugl_buffer_export_fd(closed, &fd, &allocation_size), CLOSED,                        \
      "cugl_buffer_export_fd: the buffer has been closed")                                      \
    X(k08, cugl_buffer_to_dlpack(&tensor, closed), CLOSED,                                      \
      "cugl_buffer_to_dlpack: the buffer has been closed")

MEMORY_CASES(CASE)
BUFFER_CASES(CASE)
CLOSED_CASES(CASE)

/* A failing call never leaves a buffer in *dst. */
static void no_buffer_stored(const cugl_test_case *c)
{
    if (slot)
        fail_msg("%s stored a buffer in *dst although it failed", c->expr);
}

static void run_cases(const cugl_test_case *cases, size_t n)
{
    slot = NULL;
    cugl_test_run_cases(cases, n, no_buffer_stored);
}

static void memory_resource_arguments(void **state)
{
    (void)state;
    static const cugl_test_case cases[] = {MEMORY_CASES(ROW)};
    run_cases(cases, sizeof cases / sizeof cases[0]);
}

static void buffer_arguments(void **state)
{
    (void)state;
    static const cugl_test_case cases[] = {BUFFER_CASES(ROW)};
    run_cases(cases, sizeof cases / sizeof cases[0]);
}

static void closed_buffer_refuses_everything(void **state)
{
    (void)state;
    static const cugl_test_case cases[] = {CLOSED_CASES(ROW)};
    run_cases(cases, sizeof cases / sizeof cases[0]);
    assert_null(tensor);
}

/* Out-parameters are cleared on failure, so a caller never sees garbage. */
static void outputs_are_cleared_on_failure(void **state)
{
    (void)state;
    cugl_memory_resource *garbage_mr = STAND_IN_MR;
    cugl_buffer *garbage_buffer = (cugl_buffer *)(void *)stand_in;

    static cugl_status (*const creates[])(cugl_memory_resource **, cugl_device *) = {
        cugl_legacy_pinned_memory_resource_create,
        cugl_exportable_memory_resource_create,
    };
    for (size_t i = 0; i < sizeof creates / sizeof creates[0]; i++) {
        mr = garbage_mr;
        assert_status(creates[i](&mr, NULL), CUGL_ERROR_INVALID_ARGUMENT);
        assert_null(mr);
    }
    mr = garbage_mr;
    assert_status(cugl_device_memory_resource_create(&mr, NULL, NULL), INVALID);
    assert_null(mr);
    mr = garbage_mr;
    assert_status(cugl_pinned_memory_resource_create(&mr, NULL, NULL), INVALID);
    assert_null(mr);
    mr = garbage_mr;
    assert_status(cugl_managed_memory_resource_create(&mr, NULL, NULL), INVALID);
    assert_null(mr);
    mr = garbage_mr;
    assert_status(cugl_device_memory_resource_import_fd(&mr, NULL, 3), INVALID);
    assert_null(mr);

    buffer = garbage_buffer;
    assert_status(cugl_memory_resource_allocate(&buffer, NULL, 16, NULL), INVALID);
    assert_null(buffer);
    buffer = garbage_buffer;
    assert_status(cugl_buffer_from_handle(&buffer, 0, 16, NULL), INVALID);
    assert_null(buffer);
    buffer = garbage_buffer;
    assert_status(cugl_buffer_ipc_import(&buffer, NULL, &ipc, NULL), INVALID);
    assert_null(buffer);

    tensor = (DLManagedTensor *)(void *)stand_in;
    assert_status(cugl_buffer_to_dlpack(&tensor, NULL), INVALID);
    assert_null(tensor);

    fd = 42;
    assert_status(cugl_buffer_export_fd(empty, &fd, NULL), STATE);
    assert_int_equal(fd, -1);
    mr = NULL;
    buffer = NULL;
}

static void empty_buffer_needs_no_driver(void **state)
{
    (void)state;
    cugl_buffer *b = NULL;
    assert_ok(cugl_buffer_from_handle(&b, 0, 0, NULL));
    assert_non_null(b);
    assert_int_equal(cugl_buffer_handle(b), 0);
    assert_int_equal(cugl_buffer_size(b), 0);
    assert_int_equal(cugl_buffer_device_id(b), -1);
    assert_null(cugl_buffer_memory_resource(b));
    assert_false(cugl_buffer_is_managed(b));
    assert_false(cugl_buffer_is_closed(b));

    /* A reference more keeps it open through one release. */
    assert_ptr_equal(cugl_buffer_retain(b), b);
    cugl_buffer_release(b);
    assert_false(cugl_buffer_is_closed(b));
    cugl_buffer_release(b);
}

static void close_is_idempotent(void **state)
{
    (void)state;
    cugl_buffer *b = NULL;
    assert_ok(cugl_buffer_from_handle(&b, 0, 0, NULL));
    assert_ok(cugl_buffer_close(b, NULL));
    assert_true(cugl_buffer_is_closed(b));
    assert_int_equal(cugl_buffer_handle(b), 0);
    assert_int_equal(cugl_buffer_size(b), 0);
    assert_null(cugl_buffer_memory_resource(b));
    assert_ok(cugl_buffer_close(b, NULL));
    assert_true(cugl_buffer_is_closed(b));
    /* A closed buffer still takes and drops references. */
    assert_ptr_equal(cugl_buffer_retain(b), b);
    cugl_buffer_release(b);
    assert_true(cugl_buffer_is_closed(b));
    cugl_buffer_release(b);

    assert_ok(cugl_buffer_close(NULL, NULL));
    assert_ok(cugl_buffer_close(NULL, stream));
}

static void getters_on_null(void **state)
{
    (void)state;
    assert_int_equal(cugl_buffer_handle(NULL), 0);
    assert_int_equal(cugl_buffer_size(NULL), 0);
    assert_int_equal(cugl_buffer_device_id(NULL), -1);
    assert_null(cugl_buffer_memory_resource(NULL));
    assert_false(cugl_buffer_is_device_accessible(NULL));
    assert_false(cugl_buffer_is_host_accessible(NULL));
    assert_false(cugl_buffer_is_managed(NULL));
    assert_true(cugl_buffer_is_closed(NULL));
    assert_null(cugl_buffer_retain(NULL));
    cugl_buffer_release(NULL);

    assert_int_equal(cugl_memory_resource_kind(NULL), 0);
    assert_false(cugl_memory_resource_is_device_accessible(NULL));
    assert_false(cugl_memory_resource_is_host_accessible(NULL));
    assert_false(cugl_memory_resource_is_managed(NULL));
    assert_false(cugl_memory_resource_is_ipc_enabled(NULL));
    assert_false(cugl_memory_resource_is_stream_ordered(NULL));
    assert_int_equal(cugl_memory_resource_device_id(NULL), -1);
    assert_null(cugl_memory_resource_device(NULL));
    assert_null(cugl_memory_resource_pool_handle(NULL));
    assert_true(cugl_memory_resource_is_closed(NULL));
    assert_null(cugl_memory_resource_retain(NULL));
    cugl_memory_resource_close(NULL);
    cugl_memory_resource_release(NULL);
}

/* The tensor of an empty buffer: shape [0], no data, and a reference to the
 * buffer that its deleter drops (a leak or a double free shows under the
 * sanitizers). */
static void dlpack_of_an_empty_buffer(void **state)
{
    (void)state;
    cugl_buffer *b = NULL;
    assert_ok(cugl_buffer_from_handle(&b, 0, 0, NULL));
    DLManagedTensor *t = NULL;
    assert_ok(cugl_buffer_to_dlpack(&t, b));
    assert_non_null(t);
    assert_null(t->dl_tensor.data);
    assert_int_equal(t->dl_tensor.ndim, 1);
    assert_non_null(t->dl_tensor.shape);
    assert_int_equal(t->dl_tensor.shape[0], 0);
    assert_null(t->dl_tensor.strides);
    assert_int_equal(t->dl_tensor.byte_offset, 0);
    assert_int_equal(t->dl_tensor.dtype.code, kDLUInt);
    assert_int_equal(t->dl_tensor.dtype.bits, 8);
    assert_int_equal(t->dl_tensor.dtype.lanes, 1);
    assert_non_null(t->deleter);

    cugl_buffer_release(b); /* the tensor's reference keeps it */
    assert_false(cugl_buffer_is_closed((cugl_buffer *)t->manager_ctx));
    t->deleter(t);
}

static int make_buffers(void **state)
{
    (void)state;
    if (cugl_buffer_from_handle(&empty, 0, 0, NULL) != CUGL_OK ||
        cugl_buffer_from_handle(&closed, 0, 0, NULL) != CUGL_OK ||
        cugl_buffer_close(closed, NULL) != CUGL_OK)
        return -1;
    return 0;
}

static int release_buffers(void **state)
{
    (void)state;
    cugl_buffer_release(empty);
    cugl_buffer_release(closed);
    empty = closed = NULL;
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(memory_resource_arguments),
        cmocka_unit_test(buffer_arguments),
        cmocka_unit_test(closed_buffer_refuses_everything),
        cmocka_unit_test(outputs_are_cleared_on_failure),
        cmocka_unit_test(empty_buffer_needs_no_driver),
        cmocka_unit_test(close_is_idempotent),
        cmocka_unit_test(getters_on_null),
        cmocka_unit_test(dlpack_of_an_empty_buffer),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, make_buffers, release_buffers);
}
