/*
 * An IPC event shared with another process.
 *
 * CUDA cannot be used in a child forked after the parent initialised it, so
 * the process forks first, before any cugl call, and both sides initialise
 * on their own. The parent launches a kernel that spins until a flag in
 * mapped host memory is set, records an IPC event behind it and sends the
 * exported descriptor down a pipe. The child imports it, finds it not
 * complete (the kernel still spins), says so up a second pipe, then blocks
 * in cugl_event_sync. Only then does the parent set the flag; the child's
 * sync returns, it reports, and exits 0.
 *
 * No side waits forever: the parent polls the pipe with a timeout and
 * always releases the kernel in the teardown; the child gives up on a
 * closed pipe (the parent skipped or failed before exporting) and carries
 * an alarm. The child writes nothing to stdout, the parent's TAP stream.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpu_kernels.h"
#include "gpu_proc.h"

enum {
    PARENT_WAIT_MS = 30000, /* for each message from the child */
    CHILD_WAIT_MS = 90000,  /* for the descriptor */
    CHILD_LIMIT_S = 100,    /* the child's alarm */
};

/* The child's messages, one byte each. */
enum {
    MSG_NOT_DONE = 'N', /* imported; the query says not complete */
    MSG_DONE_EARLY = 'D', /* imported; the query says complete: wrong */
    MSG_SYNCED = 'S',   /* the sync returned and the event is complete */
    MSG_FAILED = 'F',   /* a call failed; the reason is on stderr */
};

static pid_t child = -1;
static int to_child = -1, from_child = -1;

/* Read exactly n bytes within timeout_ms: n, 0 at end of file before any
 * byte, -1 (errno set) on error, timeout or a short read. */
static ssize_t read_full(int fd, void *buf, size_t n, long timeout_ms)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    size_t got = 0;
    while (got < n) {
        long left = timeout_ms - gpu_ms_since(&t0);
        if (left <= 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, (int)left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        ssize_t k = read(fd, (char *)buf + got, n - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -1;
        if (k == 0) {
            if (got == 0)
                return 0;
            errno = EPIPE;
            return -1;
        }
        got += (size_t)k;
    }
    return (ssize_t)n;
}

static bool write_full(int fd, const void *buf, size_t n)
{
    size_t put = 0;
    while (put < n) {
        ssize_t k = write(fd, (const char *)buf + put, n - put);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return false;
        put += (size_t)k;
    }
    return true;
}

/* Wait for the child with a deadline; it is gone afterwards. */
static int reap_child(long timeout_ms)
{
    int status = gpu_reap_child(child, timeout_ms, NULL);
    child = -1;
    return status;
}

/* ------------------------------------------------------------------ child */

static void say(int fd, char msg)
{
    if (!write_full(fd, &msg, 1))
        fprintf(stderr, "event-ipc child: cannot write to the parent: %s\n", strerror(errno));
}

static int child_main(int in_fd, int out_fd)
{
    /* stdout carries the parent's TAP output: keep it clean. */
    dup2(STDERR_FILENO, STDOUT_FILENO);
    alarm(CHILD_LIMIT_S);

    cugl_event_ipc_descriptor d;
    ssize_t r = read_full(in_fd, &d, sizeof d, CHILD_WAIT_MS);
    if (r == 0)
        return 0; /* the parent exported nothing: it skipped, or failed before */
    if (r < 0) {
        fprintf(stderr, "event-ipc child: no descriptor from the parent: %s\n", strerror(errno));
        return 1;
    }

    const char *step = "";
    int count = 0;
    cugl_device *dev = NULL;
    cugl_event *e = NULL;
    bool done = true;
    float ms = 0;
    if (cugl_device_count(&count) != CUGL_OK) {
        step = "cugl_device_count";
        goto fail;
    }
    if (count < 1) {
        step = "the child sees no device";
        goto fail;
    }
    if (cugl_device_get(&dev, 0) != CUGL_OK || cugl_device_set_current(dev) != CUGL_OK) {
        step = "device 0";
        goto fail;
    }
    if (cugl_event_ipc_import(&e, dev, &d) != CUGL_OK || !e) {
        step = "cugl_event_ipc_import";
        goto fail;
    }
    if (!cugl_event_is_ipc_enabled(e) || cugl_event_is_timing_enabled(e) ||
        cugl_event_is_blocking_sync(e) != d.blocking_sync || cugl_event_device(e) != dev ||
        !cugl_event_handle(e)) {
        step = "the imported event's flags";
        goto fail;
    }
    /* Imported events are treated as recorded; they have no timing. */
    if (cugl_event_elapsed_ms(&ms, e, e) != CUGL_ERROR_INVALID_STATE) {
        step = "cugl_event_elapsed_ms on an imported event (expected INVALID_STATE)";
        goto fail;
    }
    if (cugl_event_query(e, &done) != CUGL_OK) {
        step = "cugl_event_query";
        goto fail;
    }
    if (done) {
        fprintf(stderr, "event-ipc child: the event is complete while the kernel spins\n");
        say(out_fd, MSG_DONE_EARLY);
        return 1;
    }
    say(out_fd, MSG_NOT_DONE);

    /* Blocks until the parent sets the flag and its kernel ends. */
    if (cugl_event_sync(e) != CUGL_OK) {
        step = "cugl_event_sync";
        goto fail;
    }
    done = false;
    if (cugl_event_query(e, &done) != CUGL_OK || !done) {
        step = "cugl_event_query after the sync";
        goto fail;
    }
    cugl_event_release(e);
    say(out_fd, MSG_SYNCED);
    return 0;

fail:
    fprintf(stderr, "event-ipc child: %s: %s\n", step, cugl_last_error());
    say(out_fd, MSG_FAILED);
    return 1;
}

/* ----------------------------------------------------------------- parent */

static cugl_device *dev;

/* The sharing test's objects; its teardown undoes them whatever happened. */
static volatile int *flag;
static CUdeviceptr flag_dev;
static cugl_stream *stream;
static cugl_event *event;

static int share_teardown(void **state)
{
    (void)state;
    /* Let the kernel end, so nothing (here or in the child) waits forever. */
    if (flag)
        __atomic_store_n(flag, 1, __ATOMIC_SEQ_CST);
    if (stream) {
        cugl_stream_sync(stream);
        cugl_stream_release(stream);
        stream = NULL;
    }
    cugl_event_release(event);
    event = NULL;
    if (flag) {
        gpu_host_free((void *)flag);
        flag = NULL;
    }
    return 0;
}

static const char *describe(char msg)
{
    switch (msg) {
    case MSG_DONE_EARLY:
        return "the child saw the event complete while the kernel still spins";
    case MSG_FAILED:
        return "a call in the child failed (its message is on stderr)";
    default:
        return "the child sent an unexpected message";
    }
}

static void event_signals_another_process(void **state)
{
    (void)state;
    cugl_device_properties p;
    assert_ok(cugl_device_get_properties(dev, &p));
    if (!p.ipc_event_supported) {
        /* The child sees the pipe close at the end and exits. */
        gpu_not_applicable("the device has no IPC events");
        return;
    }

    flag = gpu_host_alloc_mapped(sizeof(int), &flag_dev);
    assert_int_equal(*flag, 0);
    assert_ok(cugl_stream_create(&stream, dev, NULL));
    cugl_event_desc desc = {.ipc = true, .blocking_sync = true};
    assert_ok(cugl_event_create(&event, dev, &desc));
    assert_true(cugl_event_is_ipc_enabled(event));
    assert_false(cugl_event_is_timing_enabled(event));

    cugl_kernel *k = gpu_kernel("cugl_test_spin_until");
    void *args[] = {&flag_dev};
    cugl_launch_config c = {.grid = {1}, .block = {1}};
    cugl_status st = cugl_launch(stream, &c, k, args, 1);
    cugl_kernel_release(k);
    assert_status(st, CUGL_OK);
    assert_ok(cugl_event_record(event, stream));

    bool done = true;
    assert_ok(cugl_event_query(event, &done));
    assert_false(done);

    cugl_event_ipc_descriptor d;
    memset(&d, 0, sizeof d);
    assert_ok(cugl_event_ipc_export(event, &d));
    assert_true(d.blocking_sync);
    if (!write_full(to_child, &d, sizeof d))
        fail_msg("cannot send the descriptor to the child: %s", strerror(errno));

    char msg = 0;
    ssize_t r = read_full(from_child, &msg, 1, PARENT_WAIT_MS);
    if (r != 1)
        fail_msg("no word from the child after the descriptor: %s",
                 r == 0 ? "it closed the pipe" : strerror(errno));
    if (msg != MSG_NOT_DONE)
        fail_msg("%s ('%c')", describe(msg), msg);

    /* Not here either: the kernel spins until the flag is set. */
    assert_ok(cugl_event_query(event, &done));
    assert_false(done);
    __atomic_store_n(flag, 1, __ATOMIC_SEQ_CST);

    r = read_full(from_child, &msg, 1, PARENT_WAIT_MS);
    if (r != 1)
        fail_msg("the child did not return from cugl_event_sync: %s",
                 r == 0 ? "it closed the pipe" : strerror(errno));
    if (msg != MSG_SYNCED)
        fail_msg("%s ('%c')", describe(msg), msg);

    assert_ok(cugl_event_sync(event));
    assert_ok(cugl_event_query(event, &done));
    assert_true(done);
    assert_ok(cugl_stream_sync(stream));

    int status = reap_child(PARENT_WAIT_MS);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("the child ended with wait status 0x%x", (unsigned)status);
}

static void export_needs_an_ipc_event(void **state)
{
    (void)state;
    cugl_event *e = NULL;
    assert_ok(cugl_event_create(&e, dev, NULL));
    cugl_event_ipc_descriptor d;
    memset(&d, 0x5a, sizeof d);
    assert_status(cugl_event_ipc_export(e, &d), CUGL_ERROR_INVALID_STATE);
    assert_error_mentions("cugl_event_ipc_export: the event was not created IPC-enabled");
    cugl_event_release(e);

    cugl_event_desc desc = {.ipc = true};
    assert_ok(cugl_event_create(&e, dev, &desc));
    assert_status(cugl_event_ipc_export(e, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_error_mentions("cugl_event_ipc_export: descriptor is NULL");
    cugl_event_release(e);

    cugl_event *imported = (cugl_event *)&d;
    assert_status(cugl_event_ipc_import(&imported, dev, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_null(imported);
    assert_error_mentions("cugl_event_ipc_import: descriptor is NULL");
}

int main(void)
{
    int down[2], up[2];
    if (pipe(down) != 0 || pipe(up) != 0) {
        printf("Bail out! pipe: %s\n", strerror(errno));
        return 1;
    }
    fflush(NULL);
    child = fork();
    if (child < 0) {
        printf("Bail out! fork: %s\n", strerror(errno));
        return 1;
    }
    if (child == 0) {
        close(down[1]);
        close(up[0]);
        _exit(child_main(down[0], up[1]));
    }
    close(down[0]);
    close(up[1]);
    to_child = down[1];
    from_child = up[0];
    signal(SIGPIPE, SIG_IGN);

    /* Exits 77 without a driver or device: the pipe closes and the child,
     * which has not touched CUDA, sees that and exits. */
    dev = cugl_test_device();
    gpu_mem_init();
    gpu_test_module(dev);

    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(event_signals_another_process, share_teardown),
        cmocka_unit_test(export_needs_an_ipc_event),
    };
    int rc = cugl_test_run(tests);

    /* A child still waiting for a descriptor sees the pipe close and exits. */
    close(to_child);
    if (child > 0)
        reap_child(PARENT_WAIT_MS);
    close(from_child);
    return rc;
}
