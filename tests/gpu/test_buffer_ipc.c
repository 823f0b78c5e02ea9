/*
 * A buffer of an IPC-enabled pool shared with another process.
 *
 * The parent fills a buffer, exports its pool as a file descriptor and the
 * buffer as a descriptor, then runs this executable again with
 * `--child <fd> <descriptor in hex>`: fork, then exec at once, because CUDA
 * must not be used in a child forked after the parent initialised it; exec
 * gives a clean process, which inherits the descriptor (FD_CLOEXEC cleared
 * between fork and exec). The child imports the pool and the buffer, checks
 * the parent's bytes, writes its own, closes the buffer and exits 0; the
 * parent then finds the child's bytes in its buffer.
 *
 * The child also checks what an imported pool refuses (allocating,
 * exporting itself or its buffers, bad descriptors); the parent what a
 * pool that is not IPC-enabled, or not imported, refuses. The child writes
 * nothing to stdout, the parent's TAP stream; it reports on stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpu_bytes.h"
#include "gpu_proc.h"

#define SHARED_SIZE (MiB + 12)

enum {
    PARENT_SEED = 11,
    CHILD_SEED = 12,
    CHILD_LIMIT_S = 60,     /* the child's alarm */
    PARENT_WAIT_MS = 90000, /* for the child to exit; then it is killed */
};

/* This executable: argv[0] where it is a path, else the kernel's link. */
static const char *self_exe = "/proc/self/exe";

static void to_hex(const void *data, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    const uint8_t *p = data;
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[p[i] >> 4];
        out[2 * i + 1] = digits[p[i] & 15];
    }
    out[2 * n] = '\0';
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

static bool from_hex(const char *hex, void *data, size_t n)
{
    if (strlen(hex) != 2 * n)
        return false;
    uint8_t *p = data;
    for (size_t i = 0; i < n; i++) {
        int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        p[i] = (uint8_t)(hi << 4 | lo);
    }
    return true;
}

/* ------------------------------------------------------------------ child */

#if defined(__GNUC__)
static int child_says(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#endif

static int child_says(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("buffer-ipc child: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 1;
}

/* A call that must succeed. */
#define CHILD_OK(expr)                                                              \
    do {                                                                            \
        if ((expr) != CUGL_OK)                                                      \
            return child_says("%s failed: %s", #expr, cugl_last_error());          \
    } while (0)

/* A call that must fail with `status` and a message that mentions `needle`. */
#define CHILD_REFUSED(expr, status, needle)                                          \
    do {                                                                             \
        cugl_status child__st = (expr);                                              \
        if (child__st != (status) || !strstr(cugl_last_error(), (needle)))           \
            return child_says("%s returned %s (\"%s\"), expected %s mentioning \"%s\"", \
                              #expr, cugl_status_name(child__st), cugl_last_error(),  \
                              cugl_status_name(status), (needle));                   \
    } while (0)

static int child_main(const char *fd_text, const char *hex)
{
    /* stdout carries the parent's TAP output: keep it clean. */
    dup2(STDERR_FILENO, STDOUT_FILENO);
    alarm(CHILD_LIMIT_S);

    char *end = NULL;
    long fd = strtol(fd_text, &end, 10);
    if (*fd_text == '\0' || *end != '\0' || fd < 0 || fd > 1 << 20)
        return child_says("\"%s\" is not a file descriptor", fd_text);
    cugl_buffer_ipc_descriptor d;
    if (!from_hex(hex, &d, sizeof d))
        return child_says("\"%s\" is not a descriptor in hex", hex);
    if (d.size != SHARED_SIZE)
        return child_says("the descriptor says %llu bytes, expected %zu",
                          (unsigned long long)d.size, (size_t)SHARED_SIZE);
    const size_t n = SHARED_SIZE;

    cugl_device *dev = cugl_test_device(); /* exits 77 (a failure to the parent) without one */
    cugl_stream *s = NULL;
    CHILD_OK(cugl_stream_create(&s, dev, NULL));

    cugl_memory_resource *imported = NULL;
    CHILD_OK(cugl_device_memory_resource_import_fd(&imported, dev, (int)fd));
    close((int)fd); /* the descriptor stays the caller's */
    if (cugl_memory_resource_kind(imported) != CUGL_MEMORY_DEVICE ||
        !cugl_memory_resource_is_ipc_enabled(imported) ||
        !cugl_memory_resource_is_device_accessible(imported) ||
        cugl_memory_resource_is_host_accessible(imported) ||
        !cugl_memory_resource_is_stream_ordered(imported) ||
        cugl_memory_resource_device_id(imported) != cugl_device_ordinal(dev) ||
        !cugl_memory_resource_pool_handle(imported))
        return child_says("the imported resource does not describe an IPC device pool");

    /* An imported pool imports; it neither allocates nor exports. */
    cugl_buffer *other = NULL;
    CHILD_REFUSED(cugl_memory_resource_allocate(&other, imported, 64, s),
                  CUGL_ERROR_INVALID_STATE,
                  "cugl_memory_resource_allocate: the memory resource was imported from "
                  "another process");
    int again = 7;
    CHILD_REFUSED(cugl_memory_resource_export_fd(imported, &again), CUGL_ERROR_INVALID_STATE,
                  "only its owner exports it");
    if (again != -1)
        return child_says("export_fd left %d in *fd after refusing", again);

    /* Descriptors are checked before the driver sees them. */
    cugl_buffer_ipc_descriptor zero = d;
    zero.size = 0;
    CHILD_REFUSED(cugl_buffer_ipc_import(&other, imported, &zero, s),
                  CUGL_ERROR_INVALID_ARGUMENT, "cugl_buffer_ipc_import: the descriptor's size is 0");
    CHILD_REFUSED(cugl_buffer_ipc_import(&other, imported, &d, NULL), CUGL_ERROR_INVALID_ARGUMENT,
                  "cugl_buffer_ipc_import: stream is NULL");

    cugl_buffer *shared = NULL;
    CHILD_OK(cugl_buffer_ipc_import(&shared, imported, &d, s));
    if (cugl_buffer_size(shared) != n || cugl_buffer_handle(shared) == 0 ||
        cugl_buffer_memory_resource(shared) != imported ||
        cugl_buffer_device_id(shared) != cugl_device_ordinal(dev) ||
        !cugl_buffer_is_device_accessible(shared) || cugl_buffer_is_host_accessible(shared))
        return child_says("the imported buffer: %zu bytes at 0x%llx, device %d",
                          cugl_buffer_size(shared),
                          (unsigned long long)cugl_buffer_handle(shared),
                          cugl_buffer_device_id(shared));
    cugl_buffer_ipc_descriptor re;
    CHILD_REFUSED(cugl_buffer_ipc_export(shared, &re), CUGL_ERROR_INVALID_STATE,
                  "cugl_buffer_ipc_export:");

    /* Read the parent's bytes, then write the child's. */
    cugl_memory_resource *pinned = NULL;
    cugl_buffer *host = NULL;
    CHILD_OK(cugl_pinned_memory_resource_create(&pinned, dev, NULL));
    CHILD_OK(cugl_memory_resource_allocate(&host, pinned, n, s));
    CHILD_OK(cugl_buffer_copy_from(host, shared, s));
    CHILD_OK(cugl_stream_sync(s));
    const uint8_t *p = host_bytes(host);
    for (size_t i = 0; i < n; i++)
        if (p[i] != pattern_byte(i, PARENT_SEED))
            return child_says("byte %zu of the shared buffer is 0x%02x, the parent wrote 0x%02x",
                              i, p[i], pattern_byte(i, PARENT_SEED));
    write_pattern(host_bytes(host), n, CHILD_SEED);
    CHILD_OK(cugl_buffer_copy_from(shared, host, s));
    CHILD_OK(cugl_stream_sync(s));

    /* The import must be gone before the parent frees the memory. */
    CHILD_OK(cugl_buffer_close(shared, s));
    CHILD_OK(cugl_stream_sync(s));
    cugl_buffer_release(shared);

    /* A descriptor that claims more than the allocation holds is refused
     * (and the import it made is undone). */
    cugl_buffer_ipc_descriptor big = d;
    big.size = (uint64_t)1 << 46; /* far more than any pool reserves */
    CHILD_REFUSED(cugl_buffer_ipc_import(&other, imported, &big, s), CUGL_ERROR_INVALID_ARGUMENT,
                  "the descriptor claims 70368744177664 bytes but the shared allocation holds");
    if (other)
        return child_says("ipc_import stored a buffer although it failed");
    CHILD_OK(cugl_stream_sync(s));

    cugl_buffer_release(host);
    cugl_memory_resource_release(pinned);
    cugl_memory_resource_release(imported);
    cugl_stream_release(s);
    return 0;
}

/* ----------------------------------------------------------------- parent */

static cugl_device *dev;
static cugl_stream *stream;
static pid_t child = -1;
static int pool_fd = -1;

/* Wait for the child with a deadline; it is gone afterwards. */
static int reap_child(long timeout_ms, bool *timed_out)
{
    int status = gpu_reap_child(child, timeout_ms, timed_out);
    child = -1;
    return status;
}

/* Whatever happened, no child is left running and the descriptor is closed. */
static int share_teardown(void **state)
{
    (void)state;
    if (child > 0) {
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
        child = -1;
    }
    if (pool_fd >= 0) {
        close(pool_fd);
        pool_fd = -1;
    }
    return 0;
}

static cugl_memory_resource *ipc_pool_or_explain(void)
{
    cugl_device_memory_desc desc = {.ipc = true};
    cugl_memory_resource *mr = NULL;
    cugl_status st = cugl_device_memory_resource_create(&mr, dev, &desc);
    if (st == CUGL_ERROR_NOT_SUPPORTED) {
        gpu_not_applicable(cugl_last_error());
        return NULL;
    }
    assert_status(st, CUGL_OK);
    assert_non_null(mr);
    return mr;
}

static void buffer_shared_with_another_process(void **state)
{
    (void)state;
    cugl_memory_resource *mr = ipc_pool_or_explain();
    if (!mr)
        return;
    assert_true(cugl_memory_resource_is_ipc_enabled(mr));
    assert_int_equal(cugl_memory_resource_kind(mr), CUGL_MEMORY_DEVICE);
    assert_non_null(cugl_memory_resource_pool_handle(mr));

    const size_t n = SHARED_SIZE;
    cugl_buffer *b = NULL;
    assert_ok(cugl_memory_resource_allocate(&b, mr, n, stream));
    staging in = staging_new(n), out = staging_new(n);
    write_pattern(in.host, n, PARENT_SEED);
    assert_ok(cugl_buffer_copy_from(b, in.buffer, stream));
    /* The importer may touch the memory only once its allocation completed. */
    assert_ok(cugl_stream_sync(stream));

    assert_ok(cugl_memory_resource_export_fd(mr, &pool_fd));
    assert_true(pool_fd >= 0);
    cugl_buffer_ipc_descriptor d;
    memset(&d, 0, sizeof d);
    assert_ok(cugl_buffer_ipc_export(b, &d));
    assert_int_equal(d.size, n);

    char fd_text[16], hex[2 * sizeof d + 1];
    snprintf(fd_text, sizeof fd_text, "%d", pool_fd);
    to_hex(&d, sizeof d, hex);
    char *args[] = {(char *)self_exe, (char *)"--child", fd_text, hex, NULL};
    fflush(NULL);
    child = fork();
    if (child < 0)
        fail_msg("fork: %s", strerror(errno));
    if (child == 0) {
        /* Only async-signal-safe calls until exec. */
        int flags = fcntl(pool_fd, F_GETFD);
        if (flags < 0 || fcntl(pool_fd, F_SETFD, flags & ~FD_CLOEXEC) < 0)
            _exit(126);
        execv(self_exe, args);
        _exit(127);
    }
    bool timed_out = false;
    int status = reap_child(PARENT_WAIT_MS, &timed_out);
    if (timed_out)
        fail_msg("the child did not finish within %d ms and was killed", (int)PARENT_WAIT_MS);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("the child %s %d (its reason is on stderr; 126/127: it could not exec)",
                 WIFEXITED(status) ? "exited with status" : "was killed by signal",
                 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));

    /* The child's bytes, in the parent's buffer. */
    assert_ok(cugl_buffer_copy_from(out.buffer, b, stream));
    assert_ok(cugl_stream_sync(stream));
    expect_pattern(out.host, n, CHILD_SEED, "the shared buffer after the child wrote it");

    assert_ok(cugl_buffer_close(b, stream));
    assert_ok(cugl_stream_sync(stream));
    assert_int_equal(pool_stats(mr).used_current, 0);
    cugl_buffer_release(b);
    staging_free(&in);
    staging_free(&out);
    cugl_memory_resource_release(mr);
}

/* Pools that are not IPC-enabled export nothing; an IPC pool exports what
 * it has, each time a new descriptor. */
static void export_needs_an_ipc_pool(void **state)
{
    (void)state;
    cugl_device_memory_desc own = {.own_pool = true};
    cugl_memory_resource *plain[3] = {NULL, NULL, NULL};
    assert_ok(cugl_device_memory_resource_create(&plain[0], dev, NULL));
    assert_ok(cugl_device_memory_resource_create(&plain[1], dev, &own));
    assert_ok(cugl_legacy_pinned_memory_resource_create(&plain[2], dev));
    for (size_t i = 0; i < 3; i++) {
        assert_false(cugl_memory_resource_is_ipc_enabled(plain[i]));
        cugl_buffer *b = NULL;
        assert_ok(cugl_memory_resource_allocate(&b, plain[i], 64, stream));
        cugl_buffer_ipc_descriptor d;
        assert_status(cugl_buffer_ipc_export(b, &d), CUGL_ERROR_INVALID_STATE);
        assert_error_mentions("cugl_buffer_ipc_export: the buffer's memory resource is not "
                              "IPC-enabled");
        int fd = 7;
        assert_status(cugl_memory_resource_export_fd(plain[i], &fd), CUGL_ERROR_INVALID_STATE);
        assert_int_equal(fd, -1);
        assert_error_mentions("cugl_memory_resource_export_fd: the memory resource is not "
                              "IPC-enabled");
        cugl_buffer_release(b);
        cugl_memory_resource_release(plain[i]);
    }

    cugl_memory_resource *mr = ipc_pool_or_explain();
    if (!mr)
        return;
    cugl_buffer *empty = NULL, *b = NULL;
    assert_ok(cugl_memory_resource_allocate(&empty, mr, 0, stream));
    assert_ok(cugl_memory_resource_allocate(&b, mr, 64, stream));
    cugl_buffer_ipc_descriptor d;
    assert_status(cugl_buffer_ipc_export(empty, &d), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(),
                        "cugl_buffer_ipc_export: an empty buffer has no memory to share");
    assert_status(cugl_buffer_ipc_export(b, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_buffer_ipc_export: descriptor is NULL");
    int f = -1, g = -1;
    assert_ok(cugl_memory_resource_export_fd(mr, &f));
    assert_ok(cugl_memory_resource_export_fd(mr, &g));
    assert_true(f >= 0 && g >= 0);
    assert_int_not_equal(f, g);
    assert_int_equal(close(f), 0);
    assert_int_equal(close(g), 0);
    cugl_buffer_release(empty);
    cugl_buffer_release(b);
    assert_ok(cugl_stream_sync(stream));
    cugl_memory_resource_release(mr);
}

/* Buffers are imported only into a pool opened with import_fd. */
static void import_needs_an_imported_pool(void **state)
{
    (void)state;
    cugl_memory_resource *mr = NULL;
    assert_status(cugl_device_memory_resource_import_fd(&mr, dev, -1), CUGL_ERROR_INVALID_ARGUMENT);
    assert_null(mr);
    assert_string_equal(cugl_last_error(),
                        "cugl_device_memory_resource_import_fd: fd -1 is not a file descriptor");

    mr = ipc_pool_or_explain();
    if (!mr)
        return;
    cugl_device_memory_desc own = {.own_pool = true};
    cugl_memory_resource *plain = NULL;
    assert_ok(cugl_device_memory_resource_create(&plain, dev, &own));
    cugl_buffer *b = NULL;
    assert_ok(cugl_memory_resource_allocate(&b, mr, 4096, stream));
    assert_ok(cugl_stream_sync(stream));
    cugl_buffer_ipc_descriptor d;
    assert_ok(cugl_buffer_ipc_export(b, &d));

    cugl_memory_resource *targets[] = {mr, plain};
    for (size_t i = 0; i < 2; i++) {
        cugl_buffer *x = b;
        assert_status(cugl_buffer_ipc_import(&x, targets[i], &d, stream),
                      CUGL_ERROR_INVALID_ARGUMENT);
        assert_null(x);
        assert_string_equal(cugl_last_error(), "cugl_buffer_ipc_import: mr is not a pool "
                                               "imported with "
                                               "cugl_device_memory_resource_import_fd");
    }
    cugl_buffer_release(b);
    assert_ok(cugl_stream_sync(stream));
    cugl_memory_resource_release(plain);
    cugl_memory_resource_release(mr);
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--child") == 0)
        return child_main(argv[2], argv[3]);

    if (argc > 0 && strchr(argv[0], '/'))
        self_exe = argv[0];

    dev = cugl_test_device();
    gpu_mem_init();
    if (cugl_stream_create(&stream, dev, NULL) != CUGL_OK) {
        printf("Bail out! %s\n", cugl_last_error());
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(buffer_shared_with_another_process, share_teardown),
        cmocka_unit_test(export_needs_an_ipc_pool),
        cmocka_unit_test(import_needs_an_imported_pool),
    };
    return cugl_test_run(tests);
}
