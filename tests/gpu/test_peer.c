/*
 * Several GPUs: peer queries and access, memory of device 0 written by
 * device 1 (a device pool opened to it, exportable memory mapped for it),
 * copies between the two devices' buffers and strided views (on either
 * device's stream), a stream of device 0 waiting for an event of device
 * 1, and each device's objects used with the other device's streams; each
 * refusal with its message.
 * Skipped (77) with fewer than two CUDA devices (CUGL_TEST_NO_SKIP=1: a
 * failure), so it runs in its own suite, multi-gpu.
 */
#include "cugl_test.h"
#include "gpu_bytes.h"

enum { N = 4 * 1024 * 1024 };

static cugl_device *dev0, *dev1;
static cugl_stream *stream0, *stream1;

/* `n` pattern bytes from the host into `b` on `s`, and wait. */
static void put(cugl_buffer *b, unsigned seed, cugl_stream *s)
{
    uint8_t *host = malloc(cugl_buffer_size(b));
    assert_non_null(host);
    write_pattern(host, cugl_buffer_size(b), seed);
    cugl_buffer *h = NULL;
    assert_ok(cugl_buffer_from_handle(&h, (uint64_t)(uintptr_t)host, cugl_buffer_size(b), NULL));
    assert_ok(cugl_buffer_copy_from(b, h, s));
    assert_ok(cugl_stream_sync(s));
    cugl_buffer_release(h);
    free(host);
}

/* Fail unless `b` holds the pattern of `seed`, read on `s`. */
static void expect(cugl_buffer *b, unsigned seed, cugl_stream *s, const char *what)
{
    uint8_t *host = calloc(1, cugl_buffer_size(b));
    assert_non_null(host);
    cugl_buffer *h = NULL;
    assert_ok(cugl_buffer_from_handle(&h, (uint64_t)(uintptr_t)host, cugl_buffer_size(b), NULL));
    assert_ok(cugl_buffer_copy_from(h, b, s));
    assert_ok(cugl_stream_sync(s));
    expect_pattern(host, cugl_buffer_size(b), seed, what);
    cugl_buffer_release(h);
    free(host);
}

static void peers_and_refusals(void **state)
{
    (void)state;
    bool can = false;
    assert_ok(cugl_device_can_access_peer(&can, dev1, dev0));
    print_message("# device 1 reaches device 0's memory: %s\n", can ? "yes" : "no");
    assert_true(can);
    assert_ok(cugl_device_can_access_peer(&can, dev0, dev0));
    assert_true(can);
    assert_ok(cugl_device_enable_peer_access(dev1, dev0));
    assert_ok(cugl_device_enable_peer_access(dev1, dev0)); /* idempotent */
    assert_status(cugl_device_enable_peer_access(dev0, dev0), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(),
                        "cugl_device_enable_peer_access: device and peer are both device 0, "
                        "which reaches its own memory");
    assert_status(cugl_device_enable_peer_access(NULL, dev0), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_device_enable_peer_access: device is NULL");
    assert_status(cugl_device_can_access_peer(NULL, dev0, dev1), CUGL_ERROR_INVALID_ARGUMENT);

    cugl_memory_resource *pinned = NULL;
    assert_ok(cugl_legacy_pinned_memory_resource_create(&pinned, dev0));
    assert_status(cugl_memory_resource_set_peer_access(pinned, &dev1, 1), CUGL_ERROR_NOT_SUPPORTED);
    assert_error_mentions("only device pools and exportable memory resources take peers");
    cugl_memory_resource_release(pinned);
}

/* A device pool of device 0 opened to device 1: device 1 writes it. */
static void pool_written_by_the_other_device(void **state)
{
    (void)state;
    cugl_memory_resource *pool = NULL;
    assert_ok(cugl_device_memory_resource_create(&pool, dev0,
                                                 &(cugl_device_memory_desc){.own_pool = true}));
    assert_ok(cugl_memory_resource_set_peer_access(pool, (cugl_device *[]){dev1, dev0, dev1}, 3));
    int peers[4] = {-1};
    assert_int_equal(cugl_memory_resource_peer_access(pool, peers, 4), 1);
    assert_int_equal(peers[0], 1);
    cugl_buffer *on0 = NULL, *on1 = NULL;
    assert_ok(cugl_memory_resource_allocate(&on0, pool, N, stream0));
    assert_ok(cugl_stream_sync(stream0));
    cugl_memory_resource *mr1 = NULL;
    assert_ok(cugl_device_memory_resource_create(&mr1, dev1, NULL));
    assert_ok(cugl_memory_resource_allocate(&on1, mr1, N, stream1));
    put(on1, 11, stream1);
    /* Device 1's stream copies into device 0's memory. */
    assert_ok(cugl_buffer_copy_from(on0, on1, stream1));
    assert_ok(cugl_stream_sync(stream1));
    expect(on0, 11, stream0, "device 0's pool memory written from device 1");
    /* Device 1's pool is closed to device 0 until opened; then the other way. */
    put(on0, 12, stream0);
    assert_status(cugl_buffer_copy_from(on1, on0, stream0), CUGL_ERROR_CUDA);
    assert_ok(cugl_memory_resource_set_peer_access(mr1, &dev0, 1));
    assert_ok(cugl_buffer_copy_from(on1, on0, stream0));
    assert_ok(cugl_stream_sync(stream0));
    expect(on1, 12, stream1, "device 1's memory written from device 0");
    assert_ok(cugl_memory_resource_set_peer_access(mr1, NULL, 0));
    /* Closing the access again. */
    assert_ok(cugl_memory_resource_set_peer_access(pool, NULL, 0));
    assert_int_equal(cugl_memory_resource_peer_access(pool, NULL, 0), 0);
    assert_ok(cugl_buffer_close(on0, stream0));
    assert_ok(cugl_buffer_close(on1, stream1));
    cugl_buffer_release(on0);
    cugl_buffer_release(on1);
    cugl_memory_resource_release(pool);
    cugl_memory_resource_release(mr1);
}

/* Exportable memory of device 0 mapped for device 1 (what GL imports). */
static void exportable_memory_for_the_other_device(void **state)
{
    (void)state;
    cugl_memory_resource *mr = NULL;
    assert_ok(cugl_exportable_memory_resource_create(&mr, dev0));
    assert_ok(cugl_memory_resource_set_peer_access(mr, &dev1, 1));
    cugl_buffer *shared = NULL, *on1 = NULL;
    assert_ok(cugl_memory_resource_allocate(&shared, mr, N, stream0));
    cugl_memory_resource *mr1 = NULL;
    assert_ok(cugl_device_memory_resource_create(&mr1, dev1, NULL));
    assert_ok(cugl_memory_resource_allocate(&on1, mr1, N, stream1));
    put(on1, 21, stream1);
    assert_ok(cugl_buffer_copy_from(shared, on1, stream1));
    assert_ok(cugl_stream_sync(stream1));
    expect(shared, 21, stream0, "exportable memory of device 0 written from device 1");
    assert_ok(cugl_buffer_close(shared, stream0));
    assert_ok(cugl_buffer_close(on1, stream1));
    cugl_buffer_release(shared);
    cugl_buffer_release(on1);
    cugl_memory_resource_release(mr);
    cugl_memory_resource_release(mr1);
}

/*
 * Cross-device ordering: frame after frame, device 1 writes a history
 * buffer of device 0 and records an event; device 0's stream waits for it
 * and copies the frame out. No copy may show a stale frame.
 */
static void streams_wait_for_the_other_device(void **state)
{
    (void)state;
    enum { FRAMES = 16 };
    cugl_memory_resource *pool = NULL, *mr1 = NULL;
    assert_ok(cugl_device_memory_resource_create(&pool, dev0,
                                                 &(cugl_device_memory_desc){.own_pool = true}));
    assert_ok(cugl_memory_resource_set_peer_access(pool, &dev1, 1));
    assert_ok(cugl_device_memory_resource_create(&mr1, dev1, NULL));
    cugl_buffer *frame = NULL, *copy = NULL, *source[2] = {NULL, NULL};
    assert_ok(cugl_memory_resource_allocate(&frame, pool, N, stream0));
    assert_ok(cugl_memory_resource_allocate(&copy, pool, N, stream0));
    for (int i = 0; i < 2; i++) {
        assert_ok(cugl_memory_resource_allocate(&source[i], mr1, N, stream1));
        put(source[i], 30u + (unsigned)i, stream1);
    }
    assert_ok(cugl_stream_sync(stream0));
    cugl_event *written = NULL;
    assert_ok(cugl_event_create(&written, dev1, NULL));
    for (int f = 0; f < FRAMES; f++) {
        assert_ok(cugl_buffer_copy_from(frame, source[f % 2], stream1));
        assert_ok(cugl_event_record(written, stream1));
        assert_ok(cugl_stream_wait_event(stream0, written));
        assert_ok(cugl_buffer_copy_from(copy, frame, stream0));
        char what[64];
        snprintf(what, sizeof what, "frame %d as device 0 sees it", f);
        expect(copy, 30u + (unsigned)(f % 2), stream0, what);
    }
    cugl_event_release(written);
    cugl_buffer *all[] = {frame, copy, source[0], source[1]};
    for (int i = 0; i < 4; i++) {
        assert_ok(cugl_buffer_close(all[i], i < 2 ? stream0 : stream1));
        cugl_buffer_release(all[i]);
    }
    cugl_memory_resource_release(pool);
    cugl_memory_resource_release(mr1);
}

/*
 * A stream of the other device, with objects of device 0, while device 0
 * is current. Where the driver can do the work on that stream (a pool
 * allocation, a fill, a buffer copy), it is done there and the data is
 * right; where it cannot (an event recorded on another device's stream, an
 * array or a view copy ordered on it), the refusal names the function and
 * both devices. Default streams are the sharp case: their handle names the
 * default stream of whichever context is current, so each call must make
 * the stream's device current, and two devices' default streams are two
 * streams, not one.
 */
static void stream_of_the_other_device(void **state)
{
    (void)state;
    enum { SMALL = 64 * 1024 };
    cugl_stream *default0 = NULL, *default1 = NULL;
    assert_ok(cugl_device_default_stream(&default0, dev0));
    assert_ok(cugl_device_default_stream(&default1, dev1));
    assert_ok(cugl_device_set_current(dev0));

    /* Device 0's pool, allocated on device 1's stream, filled there once
     * the pool is open to device 1 (closed, the driver refuses the fill). */
    cugl_memory_resource *pool = NULL;
    assert_ok(cugl_device_memory_resource_create(&pool, dev0,
                                                 &(cugl_device_memory_desc){.own_pool = true}));
    cugl_buffer *b = NULL;
    assert_ok(cugl_memory_resource_allocate(&b, pool, SMALL, stream1));
    assert_int_equal(cugl_buffer_device_id(b), 0);
    const uint32_t word = 0x5A17C0DEu;
    assert_status(cugl_buffer_fill(b, &word, sizeof word, stream1), CUGL_ERROR_CUDA);
    assert_error_mentions("cugl_buffer_fill: cuMemsetD32Async failed");
    assert_ok(cugl_memory_resource_set_peer_access(pool, &dev1, 1));
    assert_ok(cugl_buffer_fill(b, &word, sizeof word, stream1));
    assert_ok(cugl_stream_sync(stream1));
    uint32_t *host = malloc(SMALL);
    assert_non_null(host);
    cugl_buffer *h = NULL;
    assert_ok(cugl_buffer_from_handle(&h, (uint64_t)(uintptr_t)host, SMALL, NULL));
    assert_ok(cugl_buffer_copy_from(h, b, stream0));
    assert_ok(cugl_stream_sync(stream0));
    for (size_t i = 0; i < SMALL / 4; i++)
        if (host[i] != word)
            fail_msg("word %zu of the fill on device 1's stream is 0x%08x", i, host[i]);

    /* The same on device 1's default stream, with device 0 current. */
    put(b, 41, default1);
    assert_ok(cugl_device_set_current(dev0));
    expect(b, 41, default1, "device 0's buffer written and read on device 1's default stream");

    /* Events: recorded on a stream of their own device only; waited for
     * from either. Device 1's default stream with device 0 current. */
    cugl_event *ev0 = NULL, *ev1 = NULL;
    assert_ok(cugl_event_create(&ev0, dev0, NULL));
    assert_ok(cugl_event_create(&ev1, dev1, NULL));
    assert_ok(cugl_device_set_current(dev0));
    assert_status(cugl_event_record(ev0, stream1), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(),
                        "cugl_event_record: the event belongs to device 0 and the stream to "
                        "device 1; an event is recorded on a stream of its own device (a "
                        "stream of another device can wait for it)");
    assert_status(cugl_stream_record(default1, ev0), CUGL_ERROR_INVALID_ARGUMENT);
    assert_error_mentions("cugl_stream_record: the event belongs to device 0");
    assert_ok(cugl_event_record(ev1, default1));
    assert_ok(cugl_stream_wait_event(default0, ev1));
    assert_ok(cugl_event_sync(ev1));
    bool done = false;
    assert_ok(cugl_stream_query(default1, &done));
    assert_ok(cugl_stream_sync(default1));
    assert_ok(cugl_stream_query(default1, &done));
    assert_true(done);

    /* Two devices' default streams are two streams: one waits on the other. */
    assert_ok(cugl_stream_wait_stream(default0, default1));
    assert_ok(cugl_stream_wait_stream(default1, default0));
    assert_status(cugl_stream_wait_stream(default1, default1), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_stream_wait_stream: a stream cannot wait on itself");

    /* Arrays and views are worked on by their own device. */
    cugl_array *array = NULL;
    assert_ok(cugl_array_create(&array, dev0,
                                &(cugl_array_desc){.ndim = 1, .shape = {SMALL},
                                                   .format = CUGL_FORMAT_U8}));
    assert_status(cugl_array_copy_from_host(array, host, SMALL, stream1),
                  CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(),
                        "cugl_array_copy_from_host: the stream is on device 1, the array on "
                        "device 0");
    cugl_buffer *b2 = NULL;
    assert_ok(cugl_memory_resource_allocate(&b2, pool, SMALL, stream0));
    cugl_layout layout;
    assert_ok(cugl_layout_init(&layout, 1, (int64_t[]){SMALL}, NULL, 1));
    cugl_view *src = NULL, *dst = NULL;
    assert_ok(cugl_view_from_buffer(&src, b, &layout, CUGL_DTYPE_U8, true));
    assert_ok(cugl_view_from_buffer(&dst, b2, &layout, CUGL_DTYPE_U8, false));
    assert_status(cugl_view_copy_from(dst, src, stream1, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(),
                        "cugl_view_copy_from: the stream is on device 1 but the views are on "
                        "device 0");

    /* Given back on device 1's default stream, device 0 current. */
    cugl_view_release(src);
    cugl_view_release(dst);
    cugl_array_release(array);
    assert_ok(cugl_device_set_current(dev0));
    assert_ok(cugl_buffer_close(b, default1));
    assert_ok(cugl_buffer_close(b2, stream0));
    assert_ok(cugl_stream_sync(default1));
    assert_ok(cugl_stream_sync(stream0));
    cugl_pool_stats stats;
    assert_ok(cugl_memory_resource_pool_stats(pool, &stats));
    assert_int_equal(stats.used_current, 0);
    cugl_buffer_release(b2);
    cugl_buffer_release(b);
    cugl_buffer_release(h);
    free(host);
    cugl_event_release(ev0);
    cugl_event_release(ev1);
    cugl_memory_resource_release(pool);
}

/*
 * cugl_view_copy_from between the two devices' memory, each way, on
 * either device's stream: dense to dense (one driver copy), a transposed
 * source (gathered on its own device), every other column of the
 * destination (scattered on its own), and both at once; element by
 * element against the CPU, the destination's gaps untouched. The
 * destination is filled just before and read back just after, ordered
 * with the copy's stream by stream waits alone: the copy is ordered with
 * the stream's work on both sides. Nothing is left alive by a copy once
 * the devices' copy kernels are loaded, and a blocking copy has finished
 * when it returns.
 */
enum { ROWS = 300, COLS = 200 };
static const uint32_t GAP = 0xFFFFFFFFu;

/* The ROWS x COLS source's element (r, c). */
static uint32_t at(int64_t r, int64_t c) { return (uint32_t)(r * 1000 + c); }

typedef struct shaped {
    const char *name;
    bool transposed_src, stepped_dst;
} shaped;

/* How many of the destination's elements (in `host`, rows x cols, twice
 * as wide where stepped) are not what the copy of kind `k` leaves. */
static int64_t wrong_elements(const uint32_t *host, const shaped *k, int64_t rows, int64_t cols,
                              int64_t *first_r, int64_t *first_c)
{
    int64_t wrong = 0, width = cols * (k->stepped_dst ? 2 : 1);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < width; c++) {
            uint32_t want = GAP;
            if (!k->stepped_dst || c % 2 == 0) {
                int64_t j = k->stepped_dst ? c / 2 : c;
                want = k->transposed_src ? at(j, r) : at(r, j);
            }
            if (host[r * width + c] != want && wrong++ == 0) {
                *first_r = r;
                *first_c = c;
            }
        }
    return wrong;
}

static void copy_between(cugl_buffer *src_buf, cugl_buffer *dst_buf, const shaped *k,
                         cugl_stream *s, cugl_blocking blocking, cugl_memory_resource *mr,
                         uint32_t *host, bool check_live)
{
    /* The destination's own stream fills it and reads it back (its pool is
     * not open to the other device); `s` waits for the one and the other
     * for `s`. */
    cugl_stream *own = cugl_buffer_device_id(dst_buf) == 0 ? stream0 : stream1;
    int on = cugl_device_ordinal(cugl_stream_device(s));
    /* The source: A (ROWS x COLS), or A's transpose (COLS x ROWS). */
    int64_t rows = k->transposed_src ? COLS : ROWS, cols = k->transposed_src ? ROWS : COLS;
    cugl_layout sl, dl;
    assert_ok(cugl_layout_init(&sl, 2, (int64_t[]){rows, cols},
                               k->transposed_src ? (int64_t[]){1, COLS} : NULL, 4));
    /* The destination: dense, or every other column of a twice-wide array. */
    assert_ok(cugl_layout_init(&dl, 2, (int64_t[]){rows, cols},
                               k->stepped_dst ? (int64_t[]){2 * cols, 2} : NULL, 4));
    cugl_view *src = NULL, *dst = NULL;
    assert_ok(cugl_view_from_buffer(&src, src_buf, &sl, CUGL_DTYPE_U32, true));
    assert_ok(cugl_view_from_buffer(&dst, dst_buf, &dl, CUGL_DTYPE_U32, false));
    size_t span = (size_t)rows * (size_t)cols * 4 * (k->stepped_dst ? 2 : 1);
    cugl_buffer *span_buf = NULL, *h = NULL;
    assert_ok(cugl_buffer_from_handle(&span_buf, cugl_buffer_handle(dst_buf), span, NULL));
    assert_ok(cugl_buffer_from_handle(&h, (uint64_t)(uintptr_t)host, span, NULL));
    assert_ok(cugl_buffer_fill(span_buf, &GAP, sizeof GAP, own));
    if (own != s)
        assert_ok(cugl_stream_wait_stream(s, own));

    int64_t live = cugl_live_objects();
    cugl_status st = cugl_view_copy_from(
        dst, src, s, &(cugl_view_copy_desc){.allocator = mr, .blocking = blocking});
    if (st != CUGL_OK)
        fail_msg("%s on device %d's stream: %s", k->name, on, cugl_last_error());
    if (check_live && cugl_live_objects() != live)
        fail_msg("%s on device %d's stream left %lld objects alive", k->name, on,
                 (long long)(cugl_live_objects() - live));
    if (blocking == CUGL_BLOCKING_YES) {
        bool done = false;
        assert_ok(cugl_stream_query(s, &done));
        assert_true(done);
    }
    if (own != s)
        assert_ok(cugl_stream_wait_stream(own, s));
    assert_ok(cugl_buffer_copy_from(h, span_buf, own));
    assert_ok(cugl_stream_sync(own));
    int64_t first_r = -1, first_c = -1;
    int64_t wrong = wrong_elements(host, k, rows, cols, &first_r, &first_c);
    if (wrong)
        fail_msg("%s on device %d's stream (device %d to %d): %lld elements wrong, the first at "
                 "(%lld, %lld)",
                 k->name, on, cugl_buffer_device_id(src_buf), cugl_buffer_device_id(dst_buf),
                 (long long)wrong, (long long)first_r, (long long)first_c);
    if (!check_live)
        print_message("# %s, device %d to %d on device %d's stream: %d x %d elements\n", k->name,
                      cugl_buffer_device_id(src_buf), cugl_buffer_device_id(dst_buf), on,
                      (int)rows, (int)cols);
    cugl_buffer_release(h);
    cugl_buffer_release(span_buf);
    cugl_view_release(src);
    cugl_view_release(dst);
}

static void views_copied_between_devices(void **state)
{
    (void)state;
    static const shaped kinds[] = {
        {"dense to dense", false, false},
        {"a transposed source", true, false},
        {"every other column of the destination", false, true},
        {"a transposed source into every other column", true, true},
    };
    size_t bytes = (size_t)ROWS * COLS * 4, wide = 2 * bytes;
    uint32_t *host = malloc(wide);
    assert_non_null(host);
    for (int64_t r = 0; r < ROWS; r++)
        for (int64_t c = 0; c < COLS; c++)
            host[r * COLS + c] = at(r, c);
    cugl_device *devs[2] = {dev0, dev1};
    cugl_stream *streams[2] = {stream0, stream1};
    cugl_memory_resource *mrs[2] = {NULL, NULL};
    cugl_buffer *a[2] = {NULL, NULL}, *out[2] = {NULL, NULL};
    for (int d = 0; d < 2; d++) {
        assert_ok(cugl_device_set_current(devs[d]));
        assert_ok(cugl_device_memory_resource_create(&mrs[d], devs[d], NULL));
        assert_ok(cugl_memory_resource_allocate(&a[d], mrs[d], bytes, streams[d]));
        assert_ok(cugl_memory_resource_allocate(&out[d], mrs[d], wide, streams[d]));
        cugl_buffer *h = NULL;
        assert_ok(cugl_buffer_from_handle(&h, (uint64_t)(uintptr_t)host, bytes, NULL));
        assert_ok(cugl_buffer_copy_from(a[d], h, streams[d]));
        assert_ok(cugl_stream_sync(streams[d]));
        cugl_buffer_release(h);
    }
    /* Twice: the second round holds each copy to leaving nothing alive
     * (the first loads each device's copy kernels, kept for the process). */
    for (int round = 0; round < 2; round++) {
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
            for (int from = 0; from < 2; from++)
                for (int on = 0; on < 2; on++)
                    copy_between(a[from], out[1 - from], &kinds[k], streams[on],
                                 CUGL_BLOCKING_DEFAULT, NULL, host, round == 1);
        /* Blocking, with the allocator of the destination's device (the
         * source's temporaries then come from its own device's pool). */
        copy_between(a[1], out[0], &kinds[3], stream1, CUGL_BLOCKING_YES, mrs[0], host, round == 1);
        copy_between(a[0], out[1], &kinds[3], stream1, CUGL_BLOCKING_YES, mrs[1], host, round == 1);
    }

    for (int d = 0; d < 2; d++) {
        assert_ok(cugl_buffer_close(a[d], streams[d]));
        assert_ok(cugl_buffer_close(out[d], streams[d]));
        assert_ok(cugl_stream_sync(streams[d]));
        cugl_buffer_release(a[d]);
        cugl_buffer_release(out[d]);
        cugl_memory_resource_release(mrs[d]);
    }
    free(host);
    assert_ok(cugl_device_set_current(dev0));
}

int main(void)
{
    int count = 0;
    cugl_status st = cugl_device_count(&count);
    if (st == CUGL_ERROR_NO_DRIVER || st == CUGL_ERROR_NO_DEVICE)
        cugl_test_skip_all(cugl_last_error());
    if (st == CUGL_OK && count < 2) {
        char why[64];
        snprintf(why, sizeof why, "%d CUDA device; this suite needs two", count);
        cugl_test_skip_all(why);
    }
    if (st != CUGL_OK || cugl_device_get(&dev0, 0) != CUGL_OK ||
        cugl_device_get(&dev1, 1) != CUGL_OK) {
        printf("Bail out! %s\n", cugl_last_error());
        return 1;
    }
    /* A device not initialized is refused by name. */
    cugl_memory_resource *pool = NULL;
    if (cugl_device_set_current(dev0) != CUGL_OK ||
        cugl_device_memory_resource_create(&pool, dev0, &(cugl_device_memory_desc){.own_pool = true}) !=
            CUGL_OK) {
        printf("Bail out! %s\n", cugl_last_error());
        return 1;
    }
    if (!cugl_device_is_initialized(dev1) &&
        (cugl_memory_resource_set_peer_access(pool, &dev1, 1) != CUGL_ERROR_INVALID_STATE ||
         strcmp(cugl_last_error(), "cugl_memory_resource_set_peer_access: device 1 is not "
                                   "initialized; call cugl_device_set_current() first") != 0)) {
        printf("Bail out! an uninitialized device was not refused: %s\n", cugl_last_error());
        return 1;
    }
    cugl_memory_resource_release(pool);
    if (cugl_device_set_current(dev1) != CUGL_OK || cugl_stream_create(&stream1, dev1, NULL) != CUGL_OK ||
        cugl_device_set_current(dev0) != CUGL_OK || cugl_stream_create(&stream0, dev0, NULL) != CUGL_OK) {
        printf("Bail out! %s\n", cugl_last_error());
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(peers_and_refusals),
        cmocka_unit_test(pool_written_by_the_other_device),
        cmocka_unit_test(exportable_memory_for_the_other_device),
        cmocka_unit_test(streams_wait_for_the_other_device),
        cmocka_unit_test(stream_of_the_other_device),
        cmocka_unit_test(views_copied_between_devices),
    };
    int failed = cugl_test_run(tests);
    cugl_stream_release(stream0);
    cugl_stream_release(stream1);
    return failed;
}
