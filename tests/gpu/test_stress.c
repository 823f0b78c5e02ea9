/*
 * Eight threads on one GPU at once. Each, for CUGL_STRESS_ITERATIONS
 * iterations (default 2000), makes streams and events, allocates from a
 * pool all threads share and from one of its own, fills and copies
 * buffers, copies a transposed and an every-other-column view, and maps a
 * GL buffer of its own GL context to write it; every result is read back
 * and compared word for word with a pattern of the thread and iteration.
 * Between those, calls that must fail: each thread checks right away that
 * its last error is the message of its own call, and before the next one
 * that other threads' failures meanwhile left it alone. At the end the
 * shared pool has nothing in use and no file descriptor is left open.
 *
 * cmocka's asserts are not thread-safe: threads count what went wrong and
 * keep the first message; the main thread asserts.
 *
 * A hang is reported, not left to the test runner's timeout: when no thread
 * has finished a call for CUGL_STRESS_STALL_SECONDS (default 120), the main
 * thread prints where each thread is (its iteration and the last call it
 * finished, or the barrier it waits at) and aborts.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "test_gl.h"

#include "cugl_test.h"
#include "gpu_proc.h"

#if defined(__GNUC__)
#define PRINTF_LIKE(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define PRINTF_LIKE(fmt, args)
#endif

enum {
    THREADS = 8,
    DEFAULT_ITERATIONS = 2000,
    /* The matrix each iteration copies: not multiples of the strided copy's
     * 32 x 32 tile; COLS even for the every-other-column view. */
    ROWS = 75,
    COLS = 130,
    CELLS = ROWS * COLS,
    MATRIX_BYTES = CELLS * 4,
    HALF_BYTES = MATRIX_BYTES / 2,
    /* A buffer of an odd size below this, so no two allocations match. */
    SCRATCH_MAX = 1 << 16,
    /* Every so many iterations a thread registers a new GL buffer. */
    REGISTER_EVERY = 64,
    /* Every so many iterations the threads meet for the lockstep check. */
    LOCKSTEP_EVERY = 250,
    MESSAGE_MAX = 512,
    DEFAULT_STALL_SECONDS = 120,
};

static cugl_device *dev;
static int priority_least, priority_greatest;
static cugl_memory_resource *shared_pool;
/* The matrix (ROWS x COLS), the same memory transposed (stored COLS x
 * ROWS), its even columns, and a dense ROWS x COLS / 2: values, built once. */
static cugl_layout rows_layout, transposed_layout, even_columns_layout, half_layout;

/*
 * One GL context per thread. libcugl-app keeps nothing per process for a
 * headless context but GLAD's tables of entry points, which every
 * cugl_app_context_create fills again; EGL's entry points do not depend on
 * the context (EGL 1.5), so the tables serve every context, and creating
 * contexts one at a time, before any thread calls GL, keeps the refills
 * from racing with calls through them.
 */
static pthread_mutex_t gl_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t barrier;
static atomic_bool setup_failed;

typedef struct worker {
    int id;
    long iterations;
    pthread_t thread;
    cugl_app_context *gl;
    cugl_memory_resource *own_pool;
    GLuint gl_buffer;
    cugl_graphics_resource *resource;
    uint32_t *src, *want, *got; /* CELLS words each */
    uint8_t *bytes;             /* SCRATCH_MAX */
    /* What cugl_last_error() and cugl_last_status() must say now. */
    cugl_status expect_status;
    char expect_message[MESSAGE_MAX];
    /* Read by the main thread once the thread has ended. */
    long ops, bad_calls;
    long failed_calls; /* calls that should have worked */
    long wrong_errors; /* a refusal's status or message, or a message that changed */
    long wrong_data;   /* words or bytes read back that differ from the pattern */
    char first_problem[MESSAGE_MAX];
    /* Where the thread is, for the watchdog (read while the thread runs). */
    atomic_long beats;          /* calls finished */
    atomic_long at_iteration;
    _Atomic(const char *) last; /* the last call finished, or where it waits */
    atomic_int last_line;
    atomic_bool finished;
} worker;

static worker workers[THREADS];

/* ---- Recording what went wrong ------------------------------------------ */

PRINTF_LIKE(3, 4)
static void problem(worker *w, long *counter, const char *fmt, ...)
{
    (*counter)++;
    if (w->first_problem[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->first_problem, sizeof w->first_problem, fmt, ap);
    va_end(ap);
}

/* The thread finished a call (or reached a wait): the watchdog's news. */
static void beat(worker *w, const char *what, int line)
{
    atomic_store_explicit(&w->last, what, memory_order_relaxed);
    atomic_store_explicit(&w->last_line, line, memory_order_relaxed);
    atomic_fetch_add_explicit(&w->beats, 1, memory_order_relaxed);
}

static bool call_ok(worker *w, cugl_status st, const char *expr, int line)
{
    beat(w, expr, line);
    if (st == CUGL_OK) {
        w->ops++;
        return true;
    }
    problem(w, &w->failed_calls, "line %d: %s returned %s: %s", line, expr,
            cugl_status_name(st), cugl_last_error());
    w->expect_status = cugl_last_status();
    snprintf(w->expect_message, sizeof w->expect_message, "%s", cugl_last_error());
    return false;
}

/* A call that must work; on failure the iteration stops where it is. */
#define TRY(w, expr)                                  \
    do {                                              \
        if (!call_ok((w), (expr), #expr, __LINE__))   \
            goto done;                                \
    } while (0)

/* The thread's last error is still the one it expects. */
static void still_mine(worker *w, const char *when)
{
    const char *now = cugl_last_error();
    if (cugl_last_status() != w->expect_status || strcmp(now, w->expect_message) != 0)
        problem(w, &w->wrong_errors, "%s: last error \"%s\" (%s), expected \"%s\" (%s)", when,
                now, cugl_status_name(cugl_last_status()), w->expect_message,
                cugl_status_name(w->expect_status));
}

/* A refused call returned `want` and left exactly this thread's message. */
PRINTF_LIKE(6, 7)
static void refused(worker *w, const char *expr, int line, cugl_status got, cugl_status want,
                    const char *fmt, ...)
{
    beat(w, expr, line);
    w->bad_calls++;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->expect_message, sizeof w->expect_message, fmt, ap);
    va_end(ap);
    w->expect_status = want;
    if (got != want)
        problem(w, &w->wrong_errors, "%s returned %s, expected %s (%s)", expr,
                cugl_status_name(got), cugl_status_name(want), cugl_last_error());
    else
        still_mine(w, expr);
}

/* A call that must fail: first the message of the previous one, which the
 * calls in between (this thread's successes, other threads' failures) must
 * have left alone, then this one's. */
#define BAD(w, expr, status, ...)                                     \
    do {                                                              \
        still_mine((w), "before " #expr);                             \
        refused((w), #expr, __LINE__, (expr), (status), __VA_ARGS__); \
    } while (0)

/* ---- Patterns and checks ------------------------------------------------- */

/* Word k of thread t's matrix in iteration `it`. */
static uint32_t word(int t, long it, size_t k)
{
    uint32_t x = ((uint32_t)k * 0x9E3779B1u) ^ ((uint32_t)t * 0x85EBCA77u) ^
                 ((uint32_t)it * 0xC2B2AE3Du);
    x ^= x >> 15;
    x *= 0x2C1B3C6Du;
    x ^= x >> 12;
    x *= 0x297A2D39u;
    x ^= x >> 15;
    return x;
}

static void check_words(worker *w, const uint32_t *want, size_t n, const char *what, long it)
{
    size_t wrong = 0, first = 0;
    for (size_t k = 0; k < n; k++)
        if (w->got[k] != want[k] && wrong++ == 0)
            first = k;
    if (!wrong)
        return;
    w->wrong_data += (long)wrong - 1;
    problem(w, &w->wrong_data,
            "iteration %ld, %s: %zu of %zu words wrong, word %zu is 0x%08x, expected 0x%08x",
            it, what, wrong, n, first, w->got[first], want[first]);
}

/* Copy `bytes` of `src` into host memory `dst` on `stream` and wait. */
static bool read_back(worker *w, void *dst, cugl_buffer *src, size_t bytes, cugl_stream *stream)
{
    cugl_buffer *host = NULL;
    bool ok = call_ok(w, cugl_buffer_from_handle(&host, (uint64_t)(uintptr_t)dst, bytes, NULL),
                      "cugl_buffer_from_handle (host)", __LINE__) &&
              call_ok(w, cugl_buffer_copy_to(&host, src, stream), "cugl_buffer_copy_to (host)",
                      __LINE__) &&
              call_ok(w, cugl_stream_sync(stream), "cugl_stream_sync", __LINE__);
    cugl_buffer_release(host);
    return ok;
}

/* The matrix as the transposed view stores it: column after column. */
static void want_transposed(worker *w)
{
    for (size_t r = 0; r < ROWS; r++)
        for (size_t j = 0; j < COLS; j++)
            w->want[j * ROWS + r] = w->src[r * COLS + j];
}

/* ---- One iteration --------------------------------------------------------- */

/* Everything an iteration makes: it releases all of it. */
typedef struct made {
    cugl_stream *stream, *copy_stream;
    cugl_event *copied, *viewed;
    cugl_buffer *a, *b, *c, *d, *e, *scratch, *mapped;
    cugl_view *rows, *even_columns, *transposed, *half;
} made;

static void release_made(made *m)
{
    cugl_view_release(m->rows);
    cugl_view_release(m->even_columns);
    cugl_view_release(m->transposed);
    cugl_view_release(m->half);
    cugl_buffer_release(m->mapped);
    cugl_buffer_release(m->a);
    cugl_buffer_release(m->b);
    cugl_buffer_release(m->c);
    cugl_buffer_release(m->d);
    cugl_buffer_release(m->e);
    cugl_buffer_release(m->scratch);
    cugl_event_release(m->copied);
    cugl_event_release(m->viewed);
    cugl_stream_release(m->copy_stream);
    cugl_stream_release(m->stream);
    *m = (made){0};
}

/* A new GL buffer, registered; the old one unregistered and deleted. */
static bool renew_gl_buffer(worker *w)
{
    if (w->resource) {
        cugl_status st = cugl_graphics_resource_close(w->resource, NULL);
        cugl_graphics_resource_release(w->resource);
        w->resource = NULL;
        if (!call_ok(w, st, "cugl_graphics_resource_close", __LINE__))
            return false;
    }
    glDeleteBuffers(1, &w->gl_buffer);
    glCreateBuffers(1, &w->gl_buffer);
    glNamedBufferStorage(w->gl_buffer, MATRIX_BYTES, NULL, GL_DYNAMIC_STORAGE_BIT);
    GLenum e = glGetError();
    if (e != GL_NO_ERROR) {
        problem(w, &w->failed_calls, "glNamedBufferStorage: GL error 0x%x", e);
        return false;
    }
    return call_ok(w,
                   cugl_graphics_resource_from_gl_buffer(&w->resource, dev, w->gl_buffer,
                                                         CUGL_GRAPHICS_NONE),
                   "cugl_graphics_resource_from_gl_buffer", __LINE__);
}

static void iteration(worker *w, long it)
{
    const int t = w->id;
    made m = {0};
    cugl_buffer *upload = NULL;
    const size_t scratch_size = 2 * (size_t)((t * 131 + it * 17) % (SCRATCH_MAX / 2)) + 1;
    const uint32_t fill = word(t, it, CELLS);
    const uint8_t byte = (uint8_t)(t * 37 + it * 11 + 1);
    for (size_t k = 0; k < CELLS; k++)
        w->src[k] = word(t, it, k);

    TRY(w, cugl_stream_create(&m.stream, dev, NULL));
    TRY(w, cugl_stream_create(&m.copy_stream, dev, NULL));
    cugl_stream *no_stream = NULL;
    BAD(w, cugl_stream_create(&no_stream, dev, &(cugl_stream_desc){.priority = 1000 + t}),
        CUGL_ERROR_INVALID_ARGUMENT,
        "cugl_stream_create: priority %d is outside the device's range [%d, %d] (lower is "
        "higher priority)",
        1000 + t, priority_greatest, priority_least);
    if (no_stream)
        problem(w, &w->wrong_errors, "a refused cugl_stream_create made a stream");
    cugl_stream_release(no_stream);
    TRY(w, cugl_event_create(&m.copied, dev, NULL));
    TRY(w, cugl_event_create(&m.viewed, dev, NULL));

    /* a, c and the scratch buffer from the shared pool; b and d from the thread's. */
    TRY(w, cugl_memory_resource_allocate(&m.a, shared_pool, MATRIX_BYTES, m.stream));
    TRY(w, cugl_memory_resource_allocate(&m.b, w->own_pool, MATRIX_BYTES, m.stream));
    TRY(w, cugl_memory_resource_allocate(&m.c, shared_pool, MATRIX_BYTES, m.stream));
    TRY(w, cugl_memory_resource_allocate(&m.d, w->own_pool, HALF_BYTES, m.stream));
    TRY(w, cugl_memory_resource_allocate(&m.scratch, shared_pool, scratch_size, m.stream));
    BAD(w, cugl_memory_resource_allocate(NULL, shared_pool, scratch_size, m.stream),
        CUGL_ERROR_INVALID_ARGUMENT, "cugl_memory_resource_allocate: out is NULL");

    /* Fills. */
    TRY(w, cugl_buffer_fill(m.b, &fill, 4, m.stream));
    TRY(w, cugl_buffer_fill(m.scratch, &byte, 1, m.stream));
    BAD(w, cugl_buffer_fill(m.b, &fill, 5 + (size_t)t, m.stream), CUGL_ERROR_INVALID_ARGUMENT,
        "cugl_buffer_fill: value_size is %zu; the pattern must be 1, 2 or 4 bytes",
        5 + (size_t)t);
    if (!read_back(w, w->got, m.b, MATRIX_BYTES, m.stream))
        goto done;
    for (size_t k = 0; k < CELLS; k++)
        w->want[k] = fill;
    check_words(w, w->want, CELLS, "a filled buffer of the thread's pool", it);
    if (!read_back(w, w->bytes, m.scratch, scratch_size, m.stream))
        goto done;
    size_t wrong_bytes = 0, first_wrong = 0;
    for (size_t k = 0; k < scratch_size; k++)
        if (w->bytes[k] != byte && wrong_bytes++ == 0)
            first_wrong = k;
    if (wrong_bytes) {
        w->wrong_data += (long)wrong_bytes - 1;
        problem(w, &w->wrong_data,
                "iteration %ld: %zu bytes of the %zu-byte scratch buffer wrong, byte %zu is "
                "0x%02x, expected 0x%02x",
                it, wrong_bytes, scratch_size, first_wrong, w->bytes[first_wrong], byte);
    }

    /* Buffer copies: host to a, a to b, a to a new buffer of a's pool. */
    TRY(w, cugl_buffer_from_handle(&upload, (uint64_t)(uintptr_t)w->src, MATRIX_BYTES, NULL));
    TRY(w, cugl_buffer_copy_from(m.a, upload, m.stream));
    TRY(w, cugl_buffer_copy_to(&m.b, m.a, m.stream));
    TRY(w, cugl_buffer_copy_to(&m.e, m.a, m.stream));
    if (cugl_buffer_memory_resource(m.e) != shared_pool)
        problem(w, &w->failed_calls, "cugl_buffer_copy_to did not allocate from a's pool");
    BAD(w, cugl_buffer_copy_from(m.a, m.scratch, m.stream), CUGL_ERROR_INVALID_ARGUMENT,
        "cugl_buffer_copy_from: buffer sizes differ: src has %zu bytes, dst has %d",
        scratch_size, MATRIX_BYTES);

    /* Strided views, copied on a second stream once the first is done. */
    TRY(w, cugl_event_record(m.copied, m.stream));
    TRY(w, cugl_stream_wait_event(m.copy_stream, m.copied));
    TRY(w, cugl_view_from_buffer(&m.rows, m.b, &rows_layout, CUGL_DTYPE_U32, true));
    TRY(w, cugl_view_view(&m.even_columns, m.rows, &even_columns_layout, (cugl_dtype){0}));
    TRY(w, cugl_view_from_buffer(&m.transposed, m.c, &transposed_layout, CUGL_DTYPE_U32, false));
    TRY(w, cugl_view_from_buffer(&m.half, m.d, &half_layout, CUGL_DTYPE_U32, false));
    const cugl_view_copy_desc desc = {.allocator = shared_pool};
    TRY(w, cugl_view_copy_from(m.transposed, m.rows, m.copy_stream, &desc));
    TRY(w, cugl_view_copy_to(m.even_columns, m.half, m.copy_stream, &desc));
    BAD(w,
        cugl_view_copy_from(m.transposed, m.rows, m.copy_stream,
                            &(cugl_view_copy_desc){.blocking = (cugl_blocking)(10 + t)}),
        CUGL_ERROR_INVALID_ARGUMENT, "cugl_view_copy_from: blocking %d is not a cugl_blocking",
        10 + t);
    TRY(w, cugl_event_record(m.viewed, m.copy_stream));
    TRY(w, cugl_stream_wait_event(m.stream, m.viewed));
    TRY(w, cugl_event_sync(m.viewed));
    bool complete = false;
    TRY(w, cugl_event_query(m.viewed, &complete));
    if (!complete)
        problem(w, &w->failed_calls, "iteration %ld: an event synchronised is not complete", it);
    BAD(w, cugl_event_query(m.viewed, NULL), CUGL_ERROR_INVALID_ARGUMENT,
        "cugl_event_query: done is NULL");

    /* Every copy, read back. */
    if (!read_back(w, w->got, m.b, MATRIX_BYTES, m.stream))
        goto done;
    check_words(w, w->src, CELLS, "host to shared pool to the thread's pool", it);
    if (!read_back(w, w->got, m.e, MATRIX_BYTES, m.stream))
        goto done;
    check_words(w, w->src, CELLS, "a copy into a new buffer", it);
    if (!read_back(w, w->got, m.c, MATRIX_BYTES, m.stream))
        goto done;
    want_transposed(w);
    check_words(w, w->want, CELLS, "the transposed view", it);
    if (!read_back(w, w->got, m.d, HALF_BYTES, m.stream))
        goto done;
    for (size_t r = 0; r < ROWS; r++)
        for (size_t j = 0; j < COLS / 2; j++)
            w->want[r * (COLS / 2) + j] = w->src[r * COLS + 2 * j];
    check_words(w, w->want, CELLS / 2, "every other column", it);

    cugl_layout unused;
    BAD(w,
        cugl_layout_dense(&unused, 2, (int64_t[]){ROWS, COLS}, 4, (cugl_order)(100 + t), NULL),
        CUGL_ERROR_INVALID_ARGUMENT, "cugl_layout_dense: order %d is not a cugl_order", 100 + t);
    cugl_buffer *nothing = NULL;
    BAD(w, cugl_buffer_from_handle(&nothing, 0, (size_t)t + 1, NULL),
        CUGL_ERROR_INVALID_ARGUMENT, "cugl_buffer_from_handle: ptr is 0 but size is %zu",
        (size_t)t + 1);
    cugl_buffer_release(nothing);
    TRY(w, cugl_buffer_close(m.e, m.stream));
    BAD(w, cugl_buffer_fill(m.e, &fill, 4, m.stream), CUGL_ERROR_CLOSED,
        "cugl_buffer_fill: the buffer has been closed");

    /* GL: the transposed matrix into the thread's mapped GL buffer. */
    if (it % REGISTER_EVERY == 0 && !renew_gl_buffer(w))
        goto done;
    TRY(w, cugl_graphics_resource_map(&m.mapped, w->resource, m.stream));
    cugl_buffer *again = NULL;
    BAD(w, cugl_graphics_resource_map(&again, w->resource, m.stream), CUGL_ERROR_INVALID_STATE,
        "cugl_graphics_resource_map: resources[0] (GL buffer %u) is already mapped; unmap it "
        "first",
        w->gl_buffer);
    cugl_buffer_release(again);
    TRY(w, cugl_buffer_copy_from(m.mapped, m.c, m.stream));
    want_transposed(w);
    if (!read_back(w, w->got, m.mapped, MATRIX_BYTES, m.stream))
        goto done;
    check_words(w, w->want, CELLS, "the mapped GL buffer, read by CUDA", it);
    BAD(w, cugl_graphics_map(&w->resource, 0, m.stream), CUGL_ERROR_INVALID_ARGUMENT,
        "cugl_graphics_map: count is 0");
    TRY(w, cugl_graphics_resource_unmap(w->resource, m.stream));
    if (!cugl_buffer_is_closed(m.mapped))
        problem(w, &w->failed_calls, "the mapped buffer is open after the unmap");
    cugl_buffer_release(m.mapped);
    m.mapped = NULL;
    memset(w->got, 0, MATRIX_BYTES);
    glGetNamedBufferSubData(w->gl_buffer, 0, MATRIX_BYTES, w->got);
    GLenum gl_error = glGetError();
    if (gl_error != GL_NO_ERROR)
        problem(w, &w->failed_calls, "glGetNamedBufferSubData: GL error 0x%x", gl_error);
    check_words(w, w->want, CELLS, "the GL buffer, read by GL", it);
    cugl_graphics_resource *image = NULL;
    BAD(w,
        cugl_graphics_resource_from_gl_image(&image, dev, w->gl_buffer, 0x1000u + (unsigned)t,
                                             CUGL_GRAPHICS_NONE),
        CUGL_ERROR_INVALID_ARGUMENT,
        "cugl_graphics_resource_from_gl_image: target 0x%x cannot be registered; use "
        "GL_TEXTURE_2D, GL_TEXTURE_RECTANGLE, GL_TEXTURE_CUBE_MAP, GL_TEXTURE_3D, "
        "GL_TEXTURE_2D_ARRAY or GL_RENDERBUFFER",
        0x1000u + (unsigned)t);
    cugl_graphics_resource_release(image);

    /* Everything back: the thread's pool is its alone, so exactly empty. */
    cugl_buffer_release(upload);
    upload = NULL;
    cugl_stream *stream = m.stream;
    m.stream = NULL;
    release_made(&m);
    cugl_pool_stats stats;
    bool synced = call_ok(w, cugl_stream_sync(stream), "cugl_stream_sync", __LINE__) &&
                  call_ok(w, cugl_memory_resource_pool_stats(w->own_pool, &stats),
                          "cugl_memory_resource_pool_stats", __LINE__);
    if (synced && stats.used_current != 0)
        problem(w, &w->failed_calls, "iteration %ld: the thread's pool has %llu bytes in use",
                it, (unsigned long long)stats.used_current);
    cugl_stream_close(stream);
    cugl_buffer *late = NULL;
    BAD(w, cugl_memory_resource_allocate(&late, w->own_pool, 64, stream), CUGL_ERROR_CLOSED,
        "cugl_memory_resource_allocate: the stream has been closed");
    cugl_buffer_release(late);
    cugl_stream_release(stream);
    return;
done:
    cugl_buffer_release(upload);
    release_made(&m);
}

/*
 * The threads in lockstep, so that failures surely come between: odd
 * threads fail while even ones hold no error (after a success), then even
 * threads fail while odd ones hold their own.
 */
static void lockstep(worker *w)
{
    const bool odd = w->id & 1;
    cugl_device_properties props;
    cugl_clear_error();
    w->expect_status = CUGL_OK;
    w->expect_message[0] = '\0';
    call_ok(w, cugl_device_get_properties(dev, &props), "cugl_device_get_properties", __LINE__);
    for (int turn = 0; turn < 2; turn++) {
        const bool failing = (turn == 0) == odd;
        beat(w, "the lockstep barrier", __LINE__);
        pthread_barrier_wait(&barrier);
        if (failing) {
            cugl_layout unused;
            BAD(w,
                cugl_layout_dense(&unused, 1, (int64_t[]){4}, 4, (cugl_order)(300 + w->id),
                                  NULL),
                CUGL_ERROR_INVALID_ARGUMENT, "cugl_layout_dense: order %d is not a cugl_order",
                300 + w->id);
        }
        beat(w, "the lockstep barrier", __LINE__);
        pthread_barrier_wait(&barrier);
        if (!failing)
            still_mine(w, odd ? "lockstep, after the even threads failed"
                              : "lockstep, after the odd threads failed");
    }
}

/* ---- Threads -------------------------------------------------------------- */

static bool setup(worker *w)
{
    w->src = malloc(MATRIX_BYTES);
    w->want = malloc(MATRIX_BYTES);
    w->got = malloc(MATRIX_BYTES);
    w->bytes = malloc(SCRATCH_MAX);
    if (!w->src || !w->want || !w->got || !w->bytes) {
        problem(w, &w->failed_calls, "out of host memory");
        return false;
    }
    if (!call_ok(w, cugl_device_set_current(dev), "cugl_device_set_current", __LINE__) ||
        !call_ok(w,
                 cugl_device_memory_resource_create(&w->own_pool, dev,
                                                    &(cugl_device_memory_desc){.own_pool = true}),
                 "cugl_device_memory_resource_create", __LINE__))
        return false;
    pthread_mutex_lock(&gl_lock);
    cugl_status st = cugl_app_context_create(
        &w->gl, &(cugl_app_context_desc){.mode = CUGL_APP_HEADLESS, .width = 16, .height = 16,
                                         .cuda_device = cugl_device_ordinal(dev)});
    if (st == CUGL_OK)
        test_gl_load();
    pthread_mutex_unlock(&gl_lock);
    return call_ok(w, st, "cugl_app_context_create", __LINE__);
}

static void teardown(worker *w)
{
    if (w->gl) {
        if (w->resource)
            call_ok(w, cugl_graphics_resource_close(w->resource, NULL),
                    "cugl_graphics_resource_close", __LINE__);
        cugl_graphics_resource_release(w->resource);
        glDeleteBuffers(1, &w->gl_buffer);
        pthread_mutex_lock(&gl_lock);
        cugl_app_context_destroy(w->gl);
        pthread_mutex_unlock(&gl_lock);
    }
    cugl_memory_resource_release(w->own_pool);
    free(w->src);
    free(w->want);
    free(w->got);
    free(w->bytes);
    w->src = w->want = w->got = NULL;
    w->bytes = NULL;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    if (!setup(w))
        atomic_store(&setup_failed, true);
    /* Every context is made before any thread calls GL (see gl_lock). */
    beat(w, "the barrier after set-up", __LINE__);
    pthread_barrier_wait(&barrier);
    if (!atomic_load(&setup_failed))
        for (long it = 0; it < w->iterations; it++) {
            atomic_store_explicit(&w->at_iteration, it, memory_order_relaxed);
            if (w->failed_calls == 0)
                iteration(w, it);
            if ((it + 1) % LOCKSTEP_EVERY == 0 || it + 1 == w->iterations)
                lockstep(w);
        }
    teardown(w);
    beat(w, "its end", __LINE__);
    atomic_store(&w->finished, true);
    return NULL;
}

static int stall_seconds;

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Wait for the threads; abort with where each one is when none has
 * finished a call for stall_seconds. */
static void watch(const char *name)
{
    long last_total = -1;
    double last_change = seconds();
    for (;;) {
        long total = 0;
        int running = 0;
        for (int t = 0; t < THREADS; t++) {
            total += atomic_load_explicit(&workers[t].beats, memory_order_relaxed);
            running += !atomic_load(&workers[t].finished);
        }
        if (!running)
            return;
        if (total != last_total) {
            last_total = total;
            last_change = seconds();
        } else if (seconds() - last_change > stall_seconds) {
            printf("# %s: no thread finished a call for %d s (CUGL_STRESS_STALL_SECONDS); "
                   "where they are:\n", name, stall_seconds);
            for (int t = 0; t < THREADS; t++) {
                worker *w = &workers[t];
                const char *last = atomic_load_explicit(&w->last, memory_order_relaxed);
                printf("#   thread %d: %s, iteration %ld of %ld, %ld calls; last: %s "
                       "(line %d)\n", t, atomic_load(&w->finished) ? "ended" : "running",
                       atomic_load_explicit(&w->at_iteration, memory_order_relaxed),
                       w->iterations, atomic_load_explicit(&w->beats, memory_order_relaxed),
                       last ? last : "nothing yet",
                       atomic_load_explicit(&w->last_line, memory_order_relaxed));
            }
            printf("Bail out! %s: the threads stalled\n", name);
            fflush(stdout);
            abort();
        }
        struct timespec tick = {.tv_nsec = 200 * 1000 * 1000};
        nanosleep(&tick, NULL);
    }
}

/* Run THREADS threads for `iterations` each and check what they counted. */
static void run_round(long iterations, const char *name)
{
    assert_int_equal(pthread_barrier_init(&barrier, NULL, THREADS), 0);
    atomic_store(&setup_failed, false);
    for (int t = 0; t < THREADS; t++) {
        workers[t] = (worker){.id = t, .iterations = iterations};
        if (pthread_create(&workers[t].thread, NULL, worker_main, &workers[t]) != 0)
            fail_msg("%s: cannot start thread %d", name, t);
    }
    watch(name);
    for (int t = 0; t < THREADS; t++)
        pthread_join(workers[t].thread, NULL);
    pthread_barrier_destroy(&barrier);
    for (int t = 0; t < THREADS; t++) {
        const worker *w = &workers[t];
        if (w->failed_calls || w->wrong_errors || w->wrong_data)
            fail_msg("%s, thread %d: %ld failed calls, %ld wrong errors, %ld wrong words or bytes; "
                     "first: %s",
                     name, t, w->failed_calls, w->wrong_errors, w->wrong_data,
                     w->first_problem);
    }
}

/* A count from the environment, from 1 to max, or `fallback` if unset. */
static long count_wanted(const char *var, long fallback, long max)
{
    const char *s = getenv(var);
    if (!s || !*s)
        return fallback;
    char *end = NULL;
    long n = strtol(s, &end, 10);
    if (*end || n < 1 || n > max) {
        printf("Bail out! %s is \"%s\"; give a count from 1 to %ld\n", var, s, max);
        exit(1);
    }
    return n;
}

static long iterations_per_thread;

static void eight_threads(void **state)
{
    (void)state;
    /* The main thread's own failure, which the threads' must leave alone. */
    cugl_clear_error();
    cugl_layout unused;
    assert_status(cugl_layout_dense(&unused, 1, (int64_t[]){4}, 4, (cugl_order)99, NULL),
                  CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_layout_dense: order 99 is not a cugl_order");

    /* One iteration first: what the driver opens once a process (files of
     * the device, the EGL display) is open before the count. */
    run_round(1, "warm-up");
    assert_ok(cugl_device_sync(dev));
    const int fds_before = gpu_open_fds();
    const int64_t objects_before = cugl_live_objects(), bytes_before = cugl_live_bytes();

    const double start = seconds();
    run_round(iterations_per_thread, "stress");
    const double elapsed = seconds() - start;

    assert_ok(cugl_device_sync(dev));
    cugl_pool_stats stats;
    assert_ok(cugl_memory_resource_pool_stats(shared_pool, &stats));
    if (stats.used_current != 0)
        fail_msg("the shared pool has %llu bytes in use after every buffer was released",
                 (unsigned long long)stats.used_current);
    if (cugl_live_objects() != objects_before || cugl_live_bytes() != bytes_before)
        fail_msg("cugl held %lld objects and %lld bytes before the threads, %lld and %lld after",
                 (long long)objects_before, (long long)bytes_before,
                 (long long)cugl_live_objects(), (long long)cugl_live_bytes());
    const int fds_after = gpu_open_fds();
    if (fds_after != fds_before)
        fail_msg("%d file descriptors open before the threads ran, %d after", fds_before,
                 fds_after);
    assert_string_equal(cugl_last_error(), "cugl_layout_dense: order 99 is not a cugl_order");
    assert_int_equal(cugl_last_status(), CUGL_ERROR_INVALID_ARGUMENT);

    long ops = 0, bad_calls = 0;
    for (int t = 0; t < THREADS; t++) {
        ops += workers[t].ops;
        bad_calls += workers[t].bad_calls;
    }
    print_message("# %d threads x %ld iterations: %ld operations, %ld bad calls checked, "
                  "%.1f s; shared pool peak %llu bytes, %d file descriptors\n",
                  THREADS, iterations_per_thread, ops, bad_calls, elapsed,
                  (unsigned long long)stats.used_high, fds_after);
}

/* The layouts every thread copies through; a failure is a broken build. */
static void make_layouts(void)
{
    cugl_layout stored;
    if (cugl_layout_init(&rows_layout, 2, (int64_t[]){ROWS, COLS}, NULL, 4) != CUGL_OK ||
        cugl_layout_init(&stored, 2, (int64_t[]){COLS, ROWS}, NULL, 4) != CUGL_OK ||
        cugl_layout_permuted(&transposed_layout, &stored, (int[]){1, 0}) != CUGL_OK ||
        cugl_layout_sliced(&even_columns_layout, &rows_layout, 2,
                           (cugl_slice[]){CUGL_SLICE_ALL, CUGL_SLICE_STEP(2)}) != CUGL_OK ||
        cugl_layout_init(&half_layout, 2, (int64_t[]){ROWS, COLS / 2}, NULL, 4) != CUGL_OK) {
        printf("Bail out! %s\n", cugl_last_error());
        exit(1);
    }
}

int main(void)
{
    iterations_per_thread = count_wanted("CUGL_STRESS_ITERATIONS", DEFAULT_ITERATIONS, 10000000);
    stall_seconds = (int)count_wanted("CUGL_STRESS_STALL_SECONDS", DEFAULT_STALL_SECONDS, 86400);
    dev = cugl_test_device();
    /* Headless GL on this device, or skip as the graphics test does. */
    cugl_app_context *probe = NULL;
    cugl_status st = cugl_app_context_create(
        &probe, &(cugl_app_context_desc){.mode = CUGL_APP_HEADLESS, .width = 16, .height = 16,
                                         .cuda_device = cugl_device_ordinal(dev)});
    if (st == CUGL_ERROR_NOT_SUPPORTED)
        cugl_test_skip_all(cugl_last_error());
    if (st != CUGL_OK) {
        printf("Bail out! %s\n", cugl_last_error());
        return 1;
    }
    test_gl_load();
    printf("# GL: %s, %s\n", cugl_app_context_renderer(probe),
           cugl_app_context_platform(probe));
    cugl_app_context_destroy(probe);

    cugl_device_properties props;
    st = cugl_device_get_properties(dev, &props);
    if (st == CUGL_OK)
        st = cugl_device_memory_resource_create(&shared_pool, dev,
                                                &(cugl_device_memory_desc){.own_pool = true});
    if (st == CUGL_ERROR_NOT_SUPPORTED)
        cugl_test_skip_all(cugl_last_error());
    if (st != CUGL_OK) {
        printf("Bail out! %s\n", cugl_last_error());
        return 1;
    }
    priority_least = props.stream_priority_least;
    priority_greatest = props.stream_priority_greatest;
    make_layouts();

    const struct CMUnitTest tests[] = {
        cmocka_unit_test(eight_threads),
    };
    int failed = cugl_test_run(tests);
    cugl_memory_resource_release(shared_pool);
    return failed;
}
