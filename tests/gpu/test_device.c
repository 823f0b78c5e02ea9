/*
 * Devices on a real GPU: enumeration, out-of-range ordinals, the properties
 * (checked for sanity and against what the driver reports elsewhere), the
 * primary context (current per thread), memory info and the driver version.
 */
#include <ctype.h>
#include <pthread.h>

#include "gpu_mem.h"

static cugl_device *dev;

static void count_is_at_least_one(void **state)
{
    (void)state;
    int count = -1;
    assert_ok(cugl_device_count(&count));
    assert_true(count >= 1);
    /* Device 0 is the one cugl_test_device() gave, every time. */
    cugl_device *d = NULL;
    assert_ok(cugl_device_get(&d, 0));
    assert_ptr_equal(d, dev);
    assert_int_equal(cugl_device_ordinal(d), 0);
    assert_true(cugl_device_handle(d) >= 0);
    for (int i = 0; i < count; i++) {
        assert_ok(cugl_device_get(&d, i));
        assert_non_null(d);
        assert_int_equal(cugl_device_ordinal(d), i);
    }
}

static void out_of_range_ordinals_are_refused(void **state)
{
    (void)state;
    int count = 0;
    assert_ok(cugl_device_count(&count));
    const int ordinals[] = {count, count + 1, -1, -1000};
    for (size_t i = 0; i < sizeof ordinals / sizeof ordinals[0]; i++) {
        cugl_device *d = dev;
        cugl_clear_error();
        assert_status(cugl_device_get(&d, ordinals[i]), CUGL_ERROR_INVALID_ARGUMENT);
        assert_null(d);
        char needle[64];
        snprintf(needle, sizeof needle, "cugl_device_get: device ordinal %d is out of range",
                 ordinals[i]);
        assert_error_mentions(needle);
        /* The message says how many devices there are. */
        snprintf(needle, sizeof needle, "%d device%s present", count,
                 count == 1 ? " is" : "s are");
        assert_error_mentions(needle);
    }
}

static bool is_power_of_two(size_t v) { return v != 0 && (v & (v - 1)) == 0; }

/* "DDDD:BB:DD.F" in hexadecimal; the domain may be wider than 4 digits. */
static bool is_pci_bus_id(const char *s)
{
    size_t n = 0;
    while (isxdigit((unsigned char)s[n]))
        n++;
    if (n < 4 || n > 8 || s[n] != ':')
        return false;
    s += n + 1;
    return isxdigit((unsigned char)s[0]) && isxdigit((unsigned char)s[1]) && s[2] == ':' &&
           isxdigit((unsigned char)s[3]) && isxdigit((unsigned char)s[4]) && s[5] == '.' &&
           isxdigit((unsigned char)s[6]) && s[7] == '\0';
}

static void pci_bus_id_pattern(void **state)
{
    (void)state;
    /* The checker itself, so a failure below means the device's value. */
    assert_true(is_pci_bus_id("0000:65:00.0"));
    assert_true(is_pci_bus_id("0000:1B:00.0"));
    assert_true(is_pci_bus_id("00010000:01:00.1"));
    assert_false(is_pci_bus_id("000:65:00.0"));
    assert_false(is_pci_bus_id("0000:65:00"));
    assert_false(is_pci_bus_id("0000:65:00.0 "));
    assert_false(is_pci_bus_id(""));
}

static void properties_are_sane(void **state)
{
    (void)state;
    cugl_device_properties p;
    memset(&p, 0, sizeof p);
    assert_ok(cugl_device_get_properties(dev, &p));

    assert_true(strlen(p.name) > 0);
    assert_true(strlen(p.name) < sizeof p.name);
    if (!(p.compute_capability_major > 7 ||
          (p.compute_capability_major == 7 && p.compute_capability_minor >= 5)))
        fail_msg("compute capability %d.%d is below 7.5", p.compute_capability_major,
                 p.compute_capability_minor);
    assert_true(p.compute_capability_minor >= 0 && p.compute_capability_minor < 10);

    assert_true(p.total_memory > ((size_t)1 << 30));
    size_t free_bytes = 0, total_bytes = 0;
    assert_ok(cugl_device_memory_info(dev, &free_bytes, &total_bytes));
    assert_int_equal(p.total_memory, total_bytes);

    assert_true(p.multiprocessor_count > 0);
    assert_int_equal(p.warp_size, 32);
    assert_true(p.max_threads_per_block >= 1024);
    for (int i = 0; i < 3; i++) {
        assert_true(p.max_block_dim[i] > 0);
        assert_true(p.max_grid_dim[i] > 0);
    }
    assert_true(p.max_block_dim[0] >= 1024);
    assert_true(p.max_block_dim[0] <= p.max_threads_per_block);
    assert_true(p.max_grid_dim[0] >= 65535);
    assert_true(p.max_shared_memory_per_block >= 48 * 1024);
    assert_true(p.max_shared_memory_per_block_optin >= p.max_shared_memory_per_block);
    assert_true(p.l2_cache_bytes > 0);

    assert_true(p.max_texture_1d_width >= 1024);
    assert_true(p.max_texture_2d[0] >= 1024);
    assert_true(p.max_texture_2d[1] >= 1024);
    assert_true(p.max_texture_2d_linear[0] >= 1024);
    assert_true(p.max_texture_2d_linear[1] >= 1024);
    assert_true(p.max_texture_2d_linear[2] >= 1024);
    for (int i = 0; i < 3; i++)
        assert_true(p.max_texture_3d[i] > 0);
    assert_true(p.max_texture_2d_layered[0] >= 1024);
    assert_true(p.max_texture_2d_layered[2] > 0);
    assert_true(p.max_texture_cubemap_width > 0);
    assert_true(p.max_surface_1d_width >= 1024);
    assert_true(p.max_surface_2d[0] >= 1024);
    assert_true(p.max_surface_2d[1] >= 1024);
    for (int i = 0; i < 3; i++)
        assert_true(p.max_surface_3d[i] > 0);
    assert_true(is_power_of_two(p.texture_alignment));
    assert_true(is_power_of_two(p.texture_pitch_alignment));

    bool any = false;
    for (size_t i = 0; i < sizeof p.uuid; i++)
        any = any || p.uuid[i] != 0;
    assert_true(any);

    if (!is_pci_bus_id(p.pci_bus_id))
        fail_msg("pci_bus_id \"%s\" is not of the form DDDD:BB:DD.F", p.pci_bus_id);

    if (p.stream_priority_greatest > p.stream_priority_least)
        fail_msg("stream priorities: greatest %d > least %d", p.stream_priority_greatest,
                 p.stream_priority_least);
    assert_true(p.stream_priority_greatest <= 0 && p.stream_priority_least >= 0);

    /* Read once, then cached: a second call gives the same values. */
    cugl_device_properties q;
    memset(&q, 0xff, sizeof q);
    assert_ok(cugl_device_get_properties(dev, &q));
    assert_string_equal(q.name, p.name);
    assert_memory_equal(q.uuid, p.uuid, sizeof p.uuid);
    assert_string_equal(q.pci_bus_id, p.pci_bus_id);
    assert_int_equal(q.total_memory, p.total_memory);
    assert_int_equal(q.multiprocessor_count, p.multiprocessor_count);
    assert_int_equal(q.stream_priority_greatest, p.stream_priority_greatest);
}

static void set_current_is_idempotent(void **state)
{
    (void)state;
    assert_true(cugl_device_is_initialized(dev));
    void *ctx = cugl_device_context_handle(dev);
    assert_non_null(ctx);
    assert_ptr_equal(gpu_current_context(), ctx);

    for (int i = 0; i < 3; i++) {
        assert_ok(cugl_device_set_current(dev));
        /* The same primary context, retained once, current on this thread. */
        assert_ptr_equal(cugl_device_context_handle(dev), ctx);
        assert_ptr_equal(gpu_current_context(), ctx);
        cugl_device *cur = NULL;
        assert_ok(cugl_device_get_current(&cur));
        assert_ptr_equal(cur, dev);
        assert_true(cugl_device_is_initialized(dev));
    }
}

/* What a fresh thread sees; asserted on the main thread. */
struct thread_report {
    cugl_status before;
    char before_message[256];
    cugl_device *before_out;
    cugl_status set;
    cugl_status after;
    cugl_device *after_out;
    void *context;
};

static void *fresh_thread(void *arg)
{
    struct thread_report *r = arg;
    r->before_out = (cugl_device *)arg;
    r->before = cugl_device_get_current(&r->before_out);
    snprintf(r->before_message, sizeof r->before_message, "%s", cugl_last_error());
    r->set = cugl_device_set_current(dev);
    r->after = cugl_device_get_current(&r->after_out);
    r->context = gpu_current_context();
    return NULL;
}

static void current_device_is_per_thread(void **state)
{
    (void)state;
    struct thread_report r;
    memset(&r, 0, sizeof r);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, fresh_thread, &r), 0);
    assert_int_equal(pthread_join(t, NULL), 0);

    /* A new thread has no current context until it sets one. */
    assert_int_equal(r.before, CUGL_ERROR_INVALID_STATE);
    assert_null(r.before_out);
    if (!strstr(r.before_message, "no device is current on this thread"))
        fail_msg("unexpected message \"%s\"", r.before_message);
    assert_int_equal(r.set, CUGL_OK);
    assert_int_equal(r.after, CUGL_OK);
    assert_ptr_equal(r.after_out, dev);
    assert_ptr_equal(r.context, cugl_device_context_handle(dev));

    /* This thread is unaffected. */
    cugl_device *cur = NULL;
    assert_ok(cugl_device_get_current(&cur));
    assert_ptr_equal(cur, dev);
}

static void other_devices_start_uninitialized(void **state)
{
    (void)state;
    int count = 0;
    assert_ok(cugl_device_count(&count));
    if (count < 2) {
        gpu_not_applicable("one device only");
        return;
    }
    cugl_device *d1 = NULL;
    assert_ok(cugl_device_get(&d1, 1));
    assert_false(cugl_device_is_initialized(d1));
    assert_null(cugl_device_context_handle(d1));

    cugl_stream *s = (cugl_stream *)d1;
    assert_status(cugl_stream_create(&s, d1, NULL), CUGL_ERROR_INVALID_STATE);
    assert_null(s);
    assert_error_mentions("cugl_stream_create: device 1 is not initialized");
    assert_status(cugl_device_sync(d1), CUGL_ERROR_INVALID_STATE);
    assert_error_mentions("cugl_device_sync: device 1 is not initialized");
    size_t f = 0;
    assert_status(cugl_device_memory_info(d1, &f, NULL), CUGL_ERROR_INVALID_STATE);
    assert_false(cugl_device_is_initialized(d1));

    /* Device 0 is still the current one. */
    cugl_device *cur = NULL;
    assert_ok(cugl_device_get_current(&cur));
    assert_ptr_equal(cur, dev);
}

static void device_sync_succeeds(void **state)
{
    (void)state;
    assert_ok(cugl_device_sync(dev));
    assert_ok(cugl_device_sync(dev));
}

static void memory_info_is_consistent(void **state)
{
    (void)state;
    size_t free_bytes = 0, total_bytes = 0;
    assert_ok(cugl_device_memory_info(dev, &free_bytes, &total_bytes));
    assert_true(total_bytes > ((size_t)1 << 30));
    assert_true(free_bytes > 0);
    assert_true(free_bytes <= total_bytes);

    /* Either output may be NULL; the other is still filled. */
    size_t only_total = 0, only_free = 0;
    assert_ok(cugl_device_memory_info(dev, NULL, &only_total));
    assert_int_equal(only_total, total_bytes);
    assert_ok(cugl_device_memory_info(dev, &only_free, NULL));
    assert_true(only_free > 0 && only_free <= total_bytes);

    /* Both NULL is an argument error. */
    assert_status(cugl_device_memory_info(dev, NULL, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_error_mentions("free_bytes and total_bytes are both NULL");

    /*
     * An allocation shows up in the free memory. It is large, because other
     * processes (meson runs tests in parallel) may free memory meanwhile:
     * a context that goes away returns well under 2 GiB.
     */
    size_t before = 0, after = 0;
    const size_t big = (size_t)2 << 30;
    assert_ok(cugl_device_memory_info(dev, &before, NULL));
    if (before < 4 * big) {
        gpu_not_applicable("less than 8 GiB free: no allocation check");
        return;
    }
    CUdeviceptr p = gpu_alloc(big);
    assert_ok(cugl_device_memory_info(dev, &after, NULL));
    gpu_free(p);
    assert_true(after < before);
}

static void driver_version_is_recent(void **state)
{
    (void)state;
    int version = 0;
    assert_ok(cugl_driver_version(&version));
    assert_true(version >= 12000);
    assert_int_equal(version % 10, 0);
}

int main(void)
{
    dev = cugl_test_device();
    gpu_mem_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(count_is_at_least_one),
        cmocka_unit_test(out_of_range_ordinals_are_refused),
        cmocka_unit_test(pci_bus_id_pattern),
        cmocka_unit_test(properties_are_sane),
        cmocka_unit_test(set_current_is_idempotent),
        cmocka_unit_test(current_device_is_per_thread),
        cmocka_unit_test(other_devices_start_uninitialized),
        cmocka_unit_test(device_sync_succeeds),
        cmocka_unit_test(memory_info_is_consistent),
        cmocka_unit_test(driver_version_is_recent),
    };
    return cugl_test_run(tests);
}
