/*
 * Garbage handed to the IPC imports, and export/import cycles that leave
 * nothing behind.
 *
 * An import of something that was never exported (random bytes, zeros,
 * 0xff, a descriptor with every bit flipped, one meant for another pool; a
 * file descriptor that is no pool) must fail with a status and a message
 * that names the call, leave its output NULL and leave the caller's
 * descriptor open. Some stale descriptors still name what the driver keeps
 * (a freed buffer of a pool that an importer holds open; a released
 * event's slot): those may import, whole, or be refused; the test says
 * which. A valid buffer descriptor with its tail zeroed goes to a process
 * of its own, since the driver was seen to crash on it.
 *
 * The GL half of map-free interop imports CUDA's memory with
 * glImportMemoryFdEXT and closes the descriptor itself when GL refuses it;
 * so GL must report garbage as an error and leave the descriptor open, or
 * that close would be a second one.
 *
 * Then 10,000 cycles of exporting a pool and a buffer and importing them,
 * and 10,000 shared GL buffers made and destroyed, must end with as many
 * open file descriptors as they began with and the pool as empty as it was.
 *
 * Where imports happen: a process may not be allowed to import what it
 * exported itself (the driver refuses to open its own IPC events). main()
 * tries once (a pool, a buffer of it, an event); where the driver refuses,
 * or hands back the exporter's own pool, pointer or event instead of a new
 * mapping, the imports run in one long-lived child: this executable again
 * (fork, then exec at once, because CUDA must not be used in a child forked
 * after the parent initialised it), which takes requests over a socket, the
 * file descriptors passed with SCM_RIGHTS, and answers each with the
 * status, the message and its count of open descriptors. Either way the
 * checks are the same: they ask the importer (importer_run, here or there)
 * and read its reply. A child writes nothing to stdout, the parent's TAP
 * stream. CUGL_TEST_IPC_CHILD=1 takes the child where this process could
 * import too, to try that path.
 */
#define _DEFAULT_SOURCE /* CMSG_SPACE, for passing descriptors */

#include "test_gl.h"
#include <cugl/app_shared.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpu_bytes.h"
#include "gpu_proc.h"

enum {
    CYCLES = 10000,
    CYCLE_BYTES = 64 << 10,
    REPLY_WAIT_MS = 60000, /* for one answer of the importer */
    CHILD_LIMIT_S = 290,   /* the importer's alarm: within meson's 300 s */
};

/* This executable: argv[0] where it is a path, else the kernel's link. */
static const char *self_exe = "/proc/self/exe";


static bool fd_is_open(int fd) { return fd >= 0 && fcntl(fd, F_GETFD) != -1; }

/* Bytes that look random and are the same at every run (xorshift32). */
static void noise(uint8_t *p, size_t n, uint32_t seed)
{
    uint32_t x = seed;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        p[i] = (uint8_t)x;
    }
}

static void flip(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)~p[i];
}

/* Zero the second half of the bytes up to the last nonzero one: a cut that
 * changes the descriptor whatever part of it the driver fills. */
static void cut_tail(uint8_t *p, size_t n)
{
    size_t used = n;
    while (used > 0 && p[used - 1] == 0)
        used--;
    memset(p + used / 2, 0, n - used / 2);
}

/* ---------------------------------------------------------- the importer */

/* What the importer is asked to do. */
typedef enum op {
    OP_OPEN,   /* import the pool of the descriptor sent into `slot` */
    OP_IMPORT, /* import `buffer` into the pool of `slot`, check it, close it */
    OP_EVENT,  /* import `event`, then release it */
    OP_CLOSE,  /* release the pool of `slot` */
    OP_CYCLE,  /* OP_OPEN, OP_IMPORT and OP_CLOSE at once, in no slot */
    OP_CYCLE_NO_WAIT, /* OP_CYCLE, the buffer and the pool released at once:
                       * the buffer's free still queued as the pool goes */
    OP_COUNT,  /* nothing: the reply counts the importer's descriptors */
} op;

enum { SLOTS = 4 };

typedef struct request {
    op op;
    int slot;
    cugl_buffer_ipc_descriptor buffer;
    cugl_event_ipc_descriptor event;
} request;

typedef struct reply {
    cugl_status status;  /* the first failure, or CUGL_OK */
    bool out_null;       /* the failed call left its output NULL */
    bool fd_open;        /* the descriptor passed in, if it was open, still is */
    int fds;             /* the importer's open descriptors afterwards */
    uint64_t size;       /* the size of the buffer imported */
    char message[512];   /* cugl_last_error() of the first failure */
} reply;

static struct {
    cugl_device *dev;
    cugl_stream *stream;
    cugl_memory_resource *pools[SLOTS];
} imp;

static void importer_init(cugl_device *d)
{
    imp.dev = d;
    if (cugl_stream_create(&imp.stream, d, NULL) != CUGL_OK) {
        printf("Bail out! %s\n", cugl_last_error());
        exit(1);
    }
}

static void note_failure(reply *rp, cugl_status st)
{
    if (st == CUGL_OK || rp->status != CUGL_OK)
        return;
    rp->status = st;
    snprintf(rp->message, sizeof rp->message, "%s", cugl_last_error());
}

/* Import the buffer `d` describes into `mr`, then close it again. */
/* Import a buffer and give it back: closed and its stream waited for, or
 * (wait false) released with its free still queued. */
static void import_and_close(cugl_memory_resource *mr, const cugl_buffer_ipc_descriptor *d,
                             reply *rp, bool wait)
{
    cugl_buffer *b = (cugl_buffer *)rp; /* must come back NULL on failure */
    cugl_status st = cugl_buffer_ipc_import(&b, mr, d, imp.stream);
    note_failure(rp, st);
    if (st != CUGL_OK) {
        rp->out_null = b == NULL;
        /* What a failed import mapped is freed on the stream. */
        cugl_stream_sync(imp.stream);
        return;
    }
    rp->size = cugl_buffer_size(b);
    if (wait) {
        note_failure(rp, cugl_buffer_close(b, imp.stream));
        note_failure(rp, cugl_stream_sync(imp.stream));
    }
    cugl_buffer_release(b);
}

/* Do what `rq` asks with `fd` (-1: none), which stays the caller's. */
static void importer_run(const request *rq, int fd, reply *rp)
{
    memset(rp, 0, sizeof *rp);
    rp->out_null = true;
    bool was_open = fd_is_open(fd);
    cugl_clear_error();
    cugl_memory_resource **slot = &imp.pools[rq->slot >= 0 && rq->slot < SLOTS ? rq->slot : 0];
    switch (rq->op) {
    case OP_OPEN:
        cugl_memory_resource_release(*slot);
        *slot = (cugl_memory_resource *)rp;
        note_failure(rp, cugl_device_memory_resource_import_fd(slot, imp.dev, fd));
        rp->out_null = *slot == NULL;
        if (rp->status != CUGL_OK)
            *slot = NULL;
        break;
    case OP_IMPORT:
        import_and_close(*slot, &rq->buffer, rp, true);
        break;
    case OP_EVENT: {
        cugl_event *e = (cugl_event *)rp;
        note_failure(rp, cugl_event_ipc_import(&e, imp.dev, &rq->event));
        rp->out_null = e == NULL;
        if (rp->status == CUGL_OK)
            cugl_event_release(e);
        break;
    }
    case OP_CLOSE:
        cugl_memory_resource_release(*slot);
        *slot = NULL;
        break;
    case OP_CYCLE:
    case OP_CYCLE_NO_WAIT: {
        cugl_memory_resource *mr = NULL;
        note_failure(rp, cugl_device_memory_resource_import_fd(&mr, imp.dev, fd));
        if (mr)
            import_and_close(mr, &rq->buffer, rp, rq->op == OP_CYCLE);
        cugl_memory_resource_release(mr);
        break;
    }
    case OP_COUNT:
        break;
    }
    rp->fd_open = !was_open || fd_is_open(fd);
    rp->fds = gpu_open_fds();
}

/* One message of exactly n bytes and the descriptor it carries, if any. */
static bool send_message(int sock, const void *buf, size_t n, int fd)
{
    union {
        struct cmsghdr h;
        char space[CMSG_SPACE(sizeof(int))];
    } control;
    struct iovec iov = {(void *)buf, n};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    if (fd >= 0) {
        memset(&control, 0, sizeof control);
        m.msg_control = control.space;
        m.msg_controllen = sizeof control.space;
        struct cmsghdr *c = CMSG_FIRSTHDR(&m);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof fd);
    }
    ssize_t k;
    do
        k = sendmsg(sock, &m, MSG_NOSIGNAL);
    while (k < 0 && errno == EINTR);
    return k == (ssize_t)n;
}

/* Receive one message of n bytes within timeout_ms (-1: no limit); *fd
 * (may be NULL) gets the descriptor it carried, else -1. Returns n, 0 at
 * end of file, -1 (errno set) on error, timeout or a message of another size. */
static ssize_t recv_message(int sock, void *buf, size_t n, int *fd, int timeout_ms)
{
    if (fd)
        *fd = -1;
    struct pollfd p = {.fd = sock, .events = POLLIN};
    int r;
    do
        r = poll(&p, 1, timeout_ms);
    while (r < 0 && errno == EINTR);
    if (r == 0)
        errno = ETIMEDOUT;
    if (r <= 0)
        return -1;
    union {
        struct cmsghdr h;
        char space[CMSG_SPACE(sizeof(int))];
    } control;
    struct iovec iov = {buf, n};
    struct msghdr m = {.msg_iov = &iov,
                       .msg_iovlen = 1,
                       .msg_control = control.space,
                       .msg_controllen = sizeof control.space};
    ssize_t k;
    do
        k = recvmsg(sock, &m, 0);
    while (k < 0 && errno == EINTR);
    for (struct cmsghdr *c = k > 0 ? CMSG_FIRSTHDR(&m) : NULL; c; c = CMSG_NXTHDR(&m, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            int got;
            memcpy(&got, CMSG_DATA(c), sizeof got);
            if (fd)
                *fd = got;
            else
                close(got);
        }
    if (k > 0 && (size_t)k != n) {
        errno = EPROTO;
        return -1;
    }
    return k;
}

/* The child: answer requests until the parent closes its end. */
static int importer_main(const char *sock_text)
{
    /* stdout carries the parent's TAP output: keep it clean. */
    dup2(STDERR_FILENO, STDOUT_FILENO);
    alarm(CHILD_LIMIT_S);
    char *end = NULL;
    long sock = strtol(sock_text, &end, 10);
    if (*sock_text == '\0' || *end != '\0' || sock < 0 || sock > 1 << 20) {
        fprintf(stderr, "ipc-garbage importer: \"%s\" is not a socket\n", sock_text);
        return 1;
    }
    importer_init(cugl_test_device()); /* exits 77 without one: the parent reports it */
    for (;;) {
        request rq;
        int fd = -1;
        ssize_t r = recv_message((int)sock, &rq, sizeof rq, &fd, -1);
        if (r == 0)
            return 0;
        if (r < 0) {
            fprintf(stderr, "ipc-garbage importer: reading a request: %s\n", strerror(errno));
            return 1;
        }
        reply rp;
        importer_run(&rq, fd, &rp);
        if (fd >= 0)
            close(fd); /* the copy the message brought */
        if (!send_message((int)sock, &rp, sizeof rp, -1)) {
            fprintf(stderr, "ipc-garbage importer: answering: %s\n", strerror(errno));
            return 1;
        }
    }
}

/* ----------------------------------------------------------------- parent */

static cugl_device *dev;
static cugl_stream *stream;
static cugl_app_context *ctx;
static const char *no_gl;      /* why there is no GL context; NULL: there is one */
static char no_ipc_pools[512]; /* why IPC pools cannot be made; "": they can */
static bool ipc_events;        /* the device shares events */
static const cugl_device_memory_desc ipc_desc = {.ipc = true};

/* An importing child: its end of the socket and its process id. */
typedef struct importer {
    int sock;
    pid_t pid;
} importer;

/* The long-lived one; sock -1 while the imports happen in this process. */
static importer child = {-1, -1};

static void importer_start(importer *im)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) != 0 ||
        fcntl(sv[0], F_SETFD, FD_CLOEXEC) != 0) {
        printf("Bail out! socketpair: %s\n", strerror(errno));
        exit(1);
    }
    char sock_text[16];
    snprintf(sock_text, sizeof sock_text, "%d", sv[1]);
    char *args[] = {(char *)self_exe, (char *)"--importer", sock_text, NULL};
    fflush(NULL);
    im->pid = fork();
    if (im->pid < 0) {
        printf("Bail out! fork: %s\n", strerror(errno));
        exit(1);
    }
    if (im->pid == 0) {
        execv(self_exe, args);
        _exit(127);
    }
    close(sv[1]);
    im->sock = sv[0];
}

/* The importer reads end of file and exits; its wait status (0: none ran). */
static int importer_stop(importer *im)
{
    if (im->pid < 0)
        return 0;
    close(im->sock);
    int status = gpu_reap_child(im->pid, REPLY_WAIT_MS, NULL);
    *im = (importer){-1, -1};
    return status;
}

/* A request answered in this process, wherever the importer is. */
static reply here(const request *rq, int fd)
{
    reply rp;
    importer_run(rq, fd, &rp);
    return rp;
}

/* Ask an importing child; false when no answer came (errno says why; 0:
 * it exited). `fd` (-1: none) stays the caller's. */
static bool try_ask(importer *im, const request *rq, int fd, reply *rp)
{
    if (!send_message(im->sock, rq, sizeof *rq, fd))
        return false;
    errno = 0;
    return recv_message(im->sock, rp, sizeof *rp, NULL, REPLY_WAIT_MS) == (ssize_t)sizeof *rp;
}

/* Ask the importer, wherever it is. */
static reply ask(const request *rq, int fd)
{
    if (child.sock < 0)
        return here(rq, fd);
    reply rp;
    if (!try_ask(&child, rq, fd, &rp))
        fail_msg("no answer from the importing process: %s (its reason, if any, is on "
                 "stderr)",
                 errno ? strerror(errno) : "it exited");
    return rp;
}

static void expect_done(const reply *rp, const char *what)
{
    if (rp->status != CUGL_OK)
        fail_msg("%s: %s (%s)", what, cugl_status_name(rp->status), rp->message);
}

/* `who` refused `what`: a status, a message that begins with its name, no
 * output, and the caller's descriptor, if it was open, open still. */
static void expect_refused(const reply *rp, const char *who, const char *what)
{
    size_t n = strlen(who);
    if (rp->status == CUGL_OK)
        fail_msg("%s: %s accepted it", what, who);
    if (strncmp(rp->message, who, n) != 0 || rp->message[n] != ':')
        fail_msg("%s: %s returned %s with the message \"%s\", which does not begin with "
                 "its name",
                 what, who, cugl_status_name(rp->status), rp->message);
    if (!rp->out_null)
        fail_msg("%s: %s failed but left its output set", what, who);
    if (!rp->fd_open)
        fail_msg("%s: %s closed the caller's file descriptor", what, who);
}

/* `what` is stale but may still name what the driver keeps: refused as
 * garbage is, or imported whole (`size` bytes for a buffer, else 0). */
static void expect_refused_or_whole(const reply *rp, const char *who, const char *what,
                                    uint64_t size)
{
    if (rp->status != CUGL_OK) {
        expect_refused(rp, who, what);
        print_message("# %s: refused\n", what);
        return;
    }
    if (rp->size != size)
        fail_msg("%s: imported as %llu bytes, the descriptor says %llu", what,
                 (unsigned long long)rp->size, (unsigned long long)size);
    print_message("# %s: the driver still opens it\n", what);
}

/* An IPC pool; NULL, and the test does not apply, where there are none. */
static cugl_memory_resource *ipc_pool(void)
{
    if (no_ipc_pools[0]) {
        gpu_not_applicable(no_ipc_pools);
        return NULL;
    }
    cugl_memory_resource *mr = NULL;
    assert_ok(cugl_device_memory_resource_create(&mr, dev, &ipc_desc));
    return mr;
}

/* A buffer whose allocation has completed: another process may map it now. */
static cugl_buffer *ready_buffer(cugl_memory_resource *mr, size_t n)
{
    cugl_buffer *b = NULL;
    assert_ok(cugl_memory_resource_allocate(&b, mr, n, stream));
    assert_ok(cugl_stream_sync(stream));
    return b;
}

static void free_buffer(cugl_buffer *b)
{
    assert_ok(cugl_buffer_close(b, stream));
    assert_ok(cugl_stream_sync(stream));
    cugl_buffer_release(b);
}

static int export_pool(cugl_memory_resource *mr)
{
    int fd = -1;
    assert_ok(cugl_memory_resource_export_fd(mr, &fd));
    assert_true(fd >= 0);
    return fd;
}

/* Descriptors that are no file, or no pool: /dev/null, a pipe, a file. */
typedef struct junk_fds {
    int closed; /* a number that was a descriptor and is not any more */
    int null_fd;
    int pipe[2];
    FILE *file; /* a temporary file with 4 KiB in it */
} junk_fds;

static junk_fds junk_open(void)
{
    junk_fds j;
    j.closed = dup(STDERR_FILENO);
    assert_true(j.closed >= 0);
    close(j.closed);
    j.null_fd = open("/dev/null", O_RDWR);
    assert_true(j.null_fd >= 0);
    assert_int_equal(pipe(j.pipe), 0);
    j.file = tmpfile();
    assert_non_null(j.file);
    uint8_t bytes[4096];
    noise(bytes, sizeof bytes, 7);
    assert_int_equal(fwrite(bytes, 1, sizeof bytes, j.file), sizeof bytes);
    assert_int_equal(fflush(j.file), 0);
    return j;
}

static void junk_close(junk_fds *j)
{
    close(j->null_fd);
    close(j->pipe[0]);
    close(j->pipe[1]);
    fclose(j->file);
}

/* ------------------------------------------------- garbage IPC descriptors */

enum { SLOT_A, SLOT_B, SLOT_GONE, SLOT_SCRATCH };

static void garbage_buffer_descriptors(void **state)
{
    (void)state;
    cugl_memory_resource *a = ipc_pool();
    if (!a)
        return;
    cugl_memory_resource *b = ipc_pool(), *gone = ipc_pool();
    cugl_buffer *pad = ready_buffer(a, 4096), *shared = ready_buffer(a, MiB + 12);
    cugl_buffer *lost = ready_buffer(gone, 4096);
    cugl_buffer_ipc_descriptor valid, stale;
    assert_ok(cugl_buffer_ipc_export(shared, &valid));
    assert_ok(cugl_buffer_ipc_export(lost, &stale));
    uint64_t used = pool_stats(a).used_current;

    cugl_memory_resource *pools[] = {a, b, gone};
    for (int s = SLOT_A; s <= SLOT_GONE; s++) {
        int fd = export_pool(pools[s]);
        reply rp = ask(&(request){.op = OP_OPEN, .slot = s}, fd);
        close(fd);
        expect_done(&rp, "importing an exported pool");
    }
    /* The descriptor imports: what follows fails by what was done to it. */
    reply rp = ask(&(request){.op = OP_IMPORT, .slot = SLOT_A, .buffer = valid}, -1);
    expect_done(&rp, "importing the valid descriptor");
    assert_int_equal(rp.size, valid.size);

    /* The pool goes, its buffer first, after the importer opened it. */
    free_buffer(lost);
    cugl_memory_resource_release(gone);

    typedef struct bad {
        const char *what;
        int slot;
        cugl_buffer_ipc_descriptor d;
    } bad;
    bad cases[7];
    size_t n = 0;
    cases[n] = (bad){"random bytes", SLOT_A, valid};
    noise(cases[n++].d.data, sizeof valid.data, 0x9e3779b9u);
    cases[n++] = (bad){"all zeros", SLOT_A, {{0}, 0, 0}};
    cases[n++] = (bad){"zero bytes with the valid size", SLOT_A, {{0}, valid.size, 0}};
    cases[n] = (bad){"all 0xff", SLOT_A, valid};
    memset(&cases[n++].d, 0xff, sizeof valid);
    cases[n] = (bad){"every bit of a valid one flipped", SLOT_A, valid};
    flip(cases[n++].d.data, sizeof valid.data);
    cases[n++] = (bad){"a buffer of a pool since released, into another pool", SLOT_A, stale};
    cases[n++] = (bad){"a valid one, into another pool", SLOT_B, valid};
    for (size_t i = 0; i < n; i++) {
        rp = ask(&(request){.op = OP_IMPORT, .slot = cases[i].slot, .buffer = cases[i].d}, -1);
        expect_refused(&rp, "cugl_buffer_ipc_import", cases[i].what);
    }
    /* The importer's pool keeps the released pool's memory, where the
     * freed buffer may still be found. */
    rp = ask(&(request){.op = OP_IMPORT, .slot = SLOT_GONE, .buffer = stale}, -1);
    expect_refused_or_whole(&rp, "cugl_buffer_ipc_import",
                            "a freed buffer of a released pool, into the importer's open "
                            "import of it",
                            stale.size);

    /* None of it touched the pool or the imported pools. */
    rp = ask(&(request){.op = OP_IMPORT, .slot = SLOT_A, .buffer = valid}, -1);
    expect_done(&rp, "importing the valid descriptor after the garbage");
    assert_int_equal(pool_stats(a).used_current, used);

    for (int s = SLOT_A; s <= SLOT_GONE; s++)
        ask(&(request){.op = OP_CLOSE, .slot = s}, -1);
    free_buffer(shared);
    free_buffer(pad);
    assert_int_equal(pool_stats(a).used_current, 0);
    cugl_memory_resource_release(a);
    cugl_memory_resource_release(b);
}

/*
 * A valid buffer descriptor with its tail zeroed (the second half of its
 * bytes up to the last nonzero one). The driver (580, on an H100) crashes
 * in cuMemPoolImportPointer on this one; cugl refuses it first, by the
 * descriptor's check. It goes to an importer of its own, always another
 * process, so that a crash fails this test alone.
 *
 * Also: two exports of one buffer are the same bytes, whatever the
 * exporter's stack held (the driver writes fewer bytes than it reserves;
 * they were once this process's stack).
 */
/* Fill a stretch of the stack below the caller with `byte`. */
static __attribute__((noinline)) void scribble_stack(int byte)
{
    volatile unsigned char junk[8192];
    memset((void *)junk, byte, sizeof junk);
    __asm__ volatile("" : : "r"(junk) : "memory");
}

static void cut_buffer_descriptor(void **state)
{
    (void)state;
    cugl_memory_resource *mr = ipc_pool();
    if (!mr)
        return;
    /* Not the pool's first allocation, so that the cut does not turn it
     * into a descriptor of the buffer at offset 0. */
    cugl_buffer *pad = ready_buffer(mr, 4096), *b = ready_buffer(mr, MiB + 12);
    cugl_buffer_ipc_descriptor d, again;
    memset(&d, 0xaa, sizeof d);
    assert_ok(cugl_buffer_ipc_export(b, &d));
    scribble_stack(0x55);
    memset(&again, 0x55, sizeof again);
    assert_ok(cugl_buffer_ipc_export(b, &again));
    if (memcmp(&d, &again, sizeof d) != 0)
        fail_msg("two exports of one buffer differ: the descriptor carries bytes the driver "
                 "did not write");
    cut_tail(d.data, sizeof d.data);
    int fd = export_pool(mr);

    importer own = {-1, -1};
    importer_start(&own);
    reply opened = {.status = CUGL_ERROR_INVALID_STATE, .message = "no answer"}, imported;
    bool open = try_ask(&own, &(request){.op = OP_OPEN, .slot = SLOT_A}, fd, &opened) &&
                opened.status == CUGL_OK;
    bool answered = open && try_ask(&own, &(request){.op = OP_IMPORT, .slot = SLOT_A, .buffer = d},
                                    -1, &imported);
    int status = importer_stop(&own);
    close(fd);
    expect_done(&opened, "importing the pool");
    if (!answered)
        fail_msg("a valid descriptor with its tail zeroed: the importing process %s %d in "
                 "cugl_buffer_ipc_import",
                 WIFSIGNALED(status) ? "was killed by signal" : "exited with status",
                 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    expect_refused(&imported, "cugl_buffer_ipc_import", "a valid descriptor with its tail zeroed");
    if (!strstr(imported.message, "the descriptor is damaged"))
        fail_msg("a cut descriptor: refused as \"%s\", not by its check", imported.message);
    free_buffer(b);
    free_buffer(pad);
    cugl_memory_resource_release(mr);
}

static void garbage_pool_fds(void **state)
{
    (void)state;
    int before = gpu_open_fds(), importer_before = ask(&(request){.op = OP_COUNT}, -1).fds;
    junk_fds j = junk_open();

    /* No pool at all: refused in any process, so here. */
    const struct {
        const char *what;
        int fd;
    } plain[] = {
        {"fd -1", -1},
        {"a closed fd", j.closed},
        {"/dev/null", j.null_fd},
        {"the read end of a pipe", j.pipe[0]},
        {"the write end of a pipe", j.pipe[1]},
        {"a regular file", fileno(j.file)},
    };
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
        reply rp = here(&(request){.op = OP_OPEN, .slot = SLOT_SCRATCH}, plain[i].fd);
        expect_refused(&rp, "cugl_device_memory_resource_import_fd", plain[i].what);
    }
    /* Still the same pipe. */
    char c = 'x';
    assert_int_equal(write(j.pipe[1], &c, 1), 1);
    c = 0;
    assert_int_equal(read(j.pipe[0], &c, 1), 1);
    assert_int_equal(c, 'x');

    /* The descriptor of a pool since released: it keeps what the driver
     * shares, so it may open, and the freed buffer be found in it. */
    cugl_memory_resource *mr = ipc_pool();
    if (mr) {
        cugl_buffer *buf = ready_buffer(mr, 4096);
        cugl_buffer_ipc_descriptor d;
        assert_ok(cugl_buffer_ipc_export(buf, &d));
        int fd = export_pool(mr);
        free_buffer(buf);
        cugl_memory_resource_release(mr);
        reply rp = ask(&(request){.op = OP_OPEN, .slot = SLOT_SCRATCH}, fd);
        close(fd);
        expect_refused_or_whole(&rp, "cugl_device_memory_resource_import_fd",
                                "the descriptor of a pool since released", 0);
        if (rp.status == CUGL_OK) {
            rp = ask(&(request){.op = OP_IMPORT, .slot = SLOT_SCRATCH, .buffer = d}, -1);
            expect_refused_or_whole(&rp, "cugl_buffer_ipc_import",
                                    "a freed buffer, through that descriptor", d.size);
            ask(&(request){.op = OP_CLOSE, .slot = SLOT_SCRATCH}, -1);
        }
    }
    /* The descriptor of an allocation (what GL imports), not of a pool. */
    cugl_memory_resource *vmm = NULL;
    cugl_status st = cugl_exportable_memory_resource_create(&vmm, dev);
    if (st == CUGL_ERROR_NOT_SUPPORTED) {
        print_message("# no exportable memory to try: %s\n", cugl_last_error());
    } else {
        assert_status(st, CUGL_OK);
        cugl_buffer *buf = NULL;
        assert_ok(cugl_memory_resource_allocate(&buf, vmm, 4096, stream));
        int fd = -1;
        assert_ok(cugl_buffer_export_fd(buf, &fd, NULL));
        reply rp = ask(&(request){.op = OP_OPEN, .slot = SLOT_SCRATCH}, fd);
        close(fd);
        expect_refused(&rp, "cugl_device_memory_resource_import_fd",
                       "the descriptor of an allocation, not of a pool");
        free_buffer(buf);
        cugl_memory_resource_release(vmm);
    }

    junk_close(&j);
    assert_int_equal(gpu_open_fds(), before);
    assert_int_equal(ask(&(request){.op = OP_COUNT}, -1).fds, importer_before);
}

static void garbage_event_descriptors(void **state)
{
    (void)state;
    if (!ipc_events) {
        gpu_not_applicable("the device has no IPC events");
        return;
    }
    cugl_event *e = NULL, *gone = NULL;
    cugl_event_desc desc = {.ipc = true};
    assert_ok(cugl_event_create(&e, dev, &desc));
    assert_ok(cugl_event_create(&gone, dev, &desc));
    assert_ok(cugl_event_record(e, stream));
    assert_ok(cugl_event_record(gone, stream));
    assert_ok(cugl_stream_sync(stream));
    cugl_event_ipc_descriptor valid, stale;
    assert_ok(cugl_event_ipc_export(e, &valid));
    assert_ok(cugl_event_ipc_export(gone, &stale));
    cugl_event_release(gone);
    reply rp = ask(&(request){.op = OP_EVENT, .event = valid}, -1);
    expect_done(&rp, "importing the valid event descriptor");

    /* The handle's bytes are garbage; blocking_sync stays a bool. */
    typedef struct bad {
        const char *what;
        cugl_event_ipc_descriptor d;
    } bad;
    bad cases[4];
    size_t n = 0;
    cases[n] = (bad){"random bytes", valid};
    noise(cases[n++].d.handle, sizeof valid.handle, 0x85ebca6bu);
    cases[n++] = (bad){"all zeros", {{0}, false}};
    cases[n] = (bad){"all 0xff", valid};
    memset(cases[n++].d.handle, 0xff, sizeof valid.handle);
    cases[n] = (bad){"every bit of a valid one flipped", valid};
    flip(cases[n++].d.handle, sizeof valid.handle);
    for (size_t i = 0; i < n; i++) {
        rp = ask(&(request){.op = OP_EVENT, .event = cases[i].d}, -1);
        expect_refused(&rp, "cugl_event_ipc_import", cases[i].what);
    }
    /* Handles name a slot of the exporter's shared events: a released
     * event's slot, or the one a cut handle falls on, may still open. */
    cugl_event_ipc_descriptor cut = valid;
    cut_tail(cut.handle, sizeof cut.handle);
    rp = ask(&(request){.op = OP_EVENT, .event = cut}, -1);
    expect_refused_or_whole(&rp, "cugl_event_ipc_import",
                            "a valid event handle with its tail zeroed", 0);
    rp = ask(&(request){.op = OP_EVENT, .event = stale}, -1);
    expect_refused_or_whole(&rp, "cugl_event_ipc_import",
                            "the handle of an event since released", 0);

    rp = ask(&(request){.op = OP_EVENT, .event = valid}, -1);
    expect_done(&rp, "importing the valid event descriptor after the garbage");
    cugl_event_release(e);
}

/* ----------------------------------------------- cycles that leak nothing */

/* Export a new buffer and its pool; the importer opens both, closes both
 * (how: OP_CYCLE or OP_CYCLE_NO_WAIT). */
static void one_ipc_cycle(cugl_memory_resource *mr, op how)
{
    cugl_buffer *b = ready_buffer(mr, CYCLE_BYTES);
    int fd = export_pool(mr);
    cugl_buffer_ipc_descriptor d;
    assert_ok(cugl_buffer_ipc_export(b, &d));
    reply rp = ask(&(request){.op = how, .buffer = d}, fd);
    close(fd);
    expect_done(&rp, "an export/import cycle");
    assert_int_equal(rp.size, CYCLE_BYTES);
    free_buffer(b);
}

static double seconds_since(const struct timespec *t0) { return gpu_ms_since(t0) / 1000.0; }

static void ten_thousand_ipc_cycles(void **state)
{
    (void)state;
    cugl_memory_resource *mr = ipc_pool();
    if (!mr)
        return;
    uint64_t used = pool_stats(mr).used_current;
    /* The first import may open what the driver keeps for the next ones. */
    one_ipc_cycle(mr, OP_CYCLE);
    int here_before = gpu_open_fds(), there_before = ask(&(request){.op = OP_COUNT}, -1).fds;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < CYCLES; i++)
        one_ipc_cycle(mr, OP_CYCLE);
    double s = seconds_since(&t0);
    int here_after = gpu_open_fds(), there_after = ask(&(request){.op = OP_COUNT}, -1).fds;
    print_message("# %d IPC cycles (pool and buffer exported, imported, closed) in %.1f s: "
                  "open fds %d -> %d here, %d -> %d in the importer%s\n",
                  CYCLES, s, here_before, here_after, there_before, there_after,
                  child.sock < 0 ? " (this process)" : "");
    assert_int_equal(here_after, here_before);
    assert_int_equal(there_after, there_before);
    assert_int_equal(pool_stats(mr).used_current, used);
    cugl_memory_resource_release(mr);
}

/* The importer releases the imported buffer and at once its pool, with the
 * buffer's free still queued on its stream. A process that imports its own
 * pool that way lost a descriptor of /dev/nvidiactl to the driver (580)
 * for every pool, until the release of an imported pool learnt to wait for
 * those frees (fault_scenario, which imports in-process, found it). Where
 * the importer is the child, the driver was seen to keep nothing either
 * way; the count must stay flat wherever the importer runs. */
static void ipc_cycles_nobody_waits(void **state)
{
    (void)state;
    cugl_memory_resource *mr = ipc_pool();
    if (!mr)
        return;
    uint64_t used = pool_stats(mr).used_current;
    enum { N = 1000 };
    /* The first import may open what the driver keeps for the next ones. */
    one_ipc_cycle(mr, OP_CYCLE_NO_WAIT);
    int before = ask(&(request){.op = OP_COUNT}, -1).fds;
    for (int i = 0; i < N; i++)
        one_ipc_cycle(mr, OP_CYCLE_NO_WAIT);
    int after = ask(&(request){.op = OP_COUNT}, -1).fds;
    print_message("# %d IPC cycles released without waiting: open fds in the importer %d -> %d%s\n",
                  N, before, after, child.sock < 0 ? " (this process)" : "");
    assert_int_equal(after, before);
    assert_int_equal(pool_stats(mr).used_current, used);
    cugl_memory_resource_release(mr);
}

/* A shared buffer made (exported by CUDA, imported by GL), one turn of
 * each side, destroyed. */
static cugl_status one_shared_cycle(void)
{
    cugl_app_shared *sh = NULL;
    cugl_status st = cugl_app_shared_buffer_create(&sh, dev, CYCLE_BYTES);
    if (st != CUGL_OK)
        return st;
    assert_ok(cugl_app_shared_cuda_begin(sh, stream));
    assert_ok(cugl_app_shared_cuda_end(sh, stream));
    assert_ok(cugl_app_shared_gl_begin(sh));
    assert_ok(cugl_app_shared_gl_end(sh));
    cugl_app_shared_destroy(sh);
    return CUGL_OK;
}

static void ten_thousand_shared_cycles(void **state)
{
    (void)state;
    if (no_gl) {
        gpu_not_applicable(no_gl);
        return;
    }
    /* The first also opens what the drivers keep for the next ones. */
    cugl_status st = one_shared_cycle();
    if (st == CUGL_ERROR_NOT_SUPPORTED) {
        gpu_not_applicable(cugl_last_error());
        return;
    }
    assert_status(st, CUGL_OK);
    int before = gpu_open_fds();
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < CYCLES; i++)
        assert_ok(one_shared_cycle());
    double s = seconds_since(&t0);
    int after = gpu_open_fds();
    print_message("# %d shared GL buffers (exported by CUDA, imported by GL, one turn each, "
                  "destroyed) in %.1f s: open fds %d -> %d\n",
                  CYCLES, s, before, after);
    assert_int_equal(after, before);
}

/* --------------------------------------------- garbage for GL's import */

/*
 * cugl_app_shared imports CUDA's descriptor with glImportMemoryFdEXT,
 * which owns it only on success, and closes it when GL reports an error.
 * So GL must report garbage as an error and leave the descriptor open.
 * Not tried: fd -1, which NVIDIA's GL (580) takes without an error; cugl
 * never passes it, since a failed export stops before GL. This runs last:
 * NVIDIA's GL reports each refused import as GL_OUT_OF_MEMORY, after which
 * the context's state is undefined, and on 580 later imports in it fail.
 */
static void garbage_gl_memory_fds(void **state)
{
    (void)state;
    if (no_gl) {
        gpu_not_applicable(no_gl);
        return;
    }
    if (!GLAD_GL_EXT_memory_object_fd) {
        gpu_not_applicable("GL lacks GL_EXT_memory_object_fd");
        return;
    }
    int before = gpu_open_fds();
    junk_fds j = junk_open();
    cugl_memory_resource *mr = no_ipc_pools[0] ? NULL : ipc_pool();
    int pool_fd = mr ? export_pool(mr) : -1;

    const struct {
        const char *what;
        int fd;
    } cases[] = {
        {"a closed fd", j.closed},
        {"/dev/null", j.null_fd},
        {"the read end of a pipe", j.pipe[0]},
        {"a regular file", fileno(j.file)},
        {"a pool's descriptor, not an allocation's", pool_fd},
    };
    size_t n = sizeof cases / sizeof cases[0] - (mr ? 0 : 1);
    for (size_t i = 0; i < n; i++) {
        bool was_open = fd_is_open(cases[i].fd);
        cugl_app_drain_gl_errors();
        GLuint memory = 0;
        glCreateMemoryObjectsEXT(1, &memory);
        GLint dedicated = GL_TRUE;
        glMemoryObjectParameterivEXT(memory, GL_DEDICATED_MEMORY_OBJECT_EXT, &dedicated);
        assert_ok(cugl_app_check_gl(__func__, "glCreateMemoryObjectsEXT"));
        glImportMemoryFdEXT(memory, 2 * MiB, GL_HANDLE_TYPE_OPAQUE_FD_EXT, cases[i].fd);
        cugl_status st = cugl_app_check_gl(__func__, "glImportMemoryFdEXT");
        bool open_after = fd_is_open(cases[i].fd);
        glDeleteMemoryObjectsEXT(1, &memory);
        if (st == CUGL_OK)
            fail_msg("%s: GL imported it as memory", cases[i].what);
        assert_int_equal(st, CUGL_ERROR_GL);
        assert_error_mentions("glImportMemoryFdEXT: GL error");
        if (was_open && !open_after)
            fail_msg("%s: GL refused the descriptor but closed it, so cugl_app_shared's close "
                     "after a refused import would be a second one",
                     cases[i].what);
    }

    junk_close(&j);
    if (mr) {
        close(pool_fd);
        cugl_memory_resource_release(mr);
    }
    assert_int_equal(gpu_open_fds(), before);
}

/* ------------------------------------------------------------------- main */

/*
 * Whether this process can import what it exported itself: a pool (of
 * `mr`, an IPC pool, or NULL where there are none), a buffer of it and an
 * event, each as a mapping of its own. Where not, `why` says what refused.
 * Import results that alias the exporter's own objects are left unreleased:
 * releasing them would free the exporter's.
 */
static bool imports_here(cugl_memory_resource *mr, char *why, size_t n)
{
    why[0] = '\0';
    if (mr) {
        cugl_memory_resource *in = NULL;
        cugl_buffer *b = NULL, *got = NULL;
        cugl_buffer_ipc_descriptor d;
        int fd = -1;
        if (cugl_memory_resource_allocate(&b, mr, 4096, stream) != CUGL_OK ||
            cugl_stream_sync(stream) != CUGL_OK ||
            cugl_memory_resource_export_fd(mr, &fd) != CUGL_OK ||
            cugl_buffer_ipc_export(b, &d) != CUGL_OK) {
            printf("Bail out! %s\n", cugl_last_error());
            exit(1);
        }
        bool alias = false;
        if (cugl_device_memory_resource_import_fd(&in, dev, fd) != CUGL_OK) {
            snprintf(why, n, "%s", cugl_last_error());
        } else if (cugl_memory_resource_pool_handle(in) == cugl_memory_resource_pool_handle(mr)) {
            snprintf(why, n, "importing a pool gives back the exporter's own");
            alias = true;
        } else if (cugl_buffer_ipc_import(&got, in, &d, stream) != CUGL_OK) {
            snprintf(why, n, "%s", cugl_last_error());
        } else if (cugl_buffer_handle(got) == cugl_buffer_handle(b)) {
            snprintf(why, n, "importing a buffer gives back the exporter's own pointer");
            alias = true;
        } else {
            cugl_buffer_release(got);
        }
        close(fd);
        cugl_stream_sync(stream);
        if (!alias)
            cugl_memory_resource_release(in);
        cugl_buffer_release(b);
        cugl_stream_sync(stream);
    }
    if (!why[0] && ipc_events) {
        cugl_event *e = NULL, *got = NULL;
        cugl_event_ipc_descriptor d;
        if (cugl_event_create(&e, dev, &(cugl_event_desc){.ipc = true}) != CUGL_OK ||
            cugl_event_record(e, stream) != CUGL_OK || cugl_stream_sync(stream) != CUGL_OK ||
            cugl_event_ipc_export(e, &d) != CUGL_OK) {
            printf("Bail out! %s\n", cugl_last_error());
            exit(1);
        }
        if (cugl_event_ipc_import(&got, dev, &d) != CUGL_OK)
            snprintf(why, n, "%s", cugl_last_error());
        else if (cugl_event_handle(got) == cugl_event_handle(e))
            snprintf(why, n, "importing an event gives back the exporter's own");
        else
            cugl_event_release(got);
        cugl_event_release(e);
    }
    return !why[0];
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--importer") == 0)
        return importer_main(argv[2]);
    if (argc > 0 && strchr(argv[0], '/'))
        self_exe = argv[0];

    dev = cugl_test_device();
    cugl_device_properties props;
    if (cugl_stream_create(&stream, dev, NULL) != CUGL_OK ||
        cugl_device_get_properties(dev, &props) != CUGL_OK) {
        printf("Bail out! %s\n", cugl_last_error());
        return 1;
    }
    ipc_events = props.ipc_event_supported;
    cugl_memory_resource *mr = NULL;
    cugl_status st = cugl_device_memory_resource_create(&mr, dev, &ipc_desc);
    if (st == CUGL_ERROR_NOT_SUPPORTED) {
        snprintf(no_ipc_pools, sizeof no_ipc_pools, "%s", cugl_last_error());
    } else if (st != CUGL_OK) {
        printf("Bail out! %s\n", cugl_last_error());
        return 1;
    }

    importer_init(dev);
    char why[512];
    if (getenv("CUGL_TEST_IPC_CHILD")) {
        printf("# imports run in a child process, as CUGL_TEST_IPC_CHILD asks\n");
        importer_start(&child);
    } else if (imports_here(mr, why, sizeof why)) {
        printf("# imports run in this process\n");
    } else {
        printf("# imports run in a child process; here: %s\n", why);
        importer_start(&child);
    }
    cugl_memory_resource_release(mr);

    /* After the child started: it inherits none of GL's descriptors. */
    static char no_gl_why[512];
    st = cugl_app_context_create(&ctx, &(cugl_app_context_desc){
                                           .mode = CUGL_APP_HEADLESS,
                                           .width = 64,
                                           .height = 64,
                                           .cuda_device = cugl_device_ordinal(dev),
                                       });
    if (st == CUGL_ERROR_NOT_SUPPORTED) {
        snprintf(no_gl_why, sizeof no_gl_why, "no GL context: %s", cugl_last_error());
        no_gl = no_gl_why;
    } else if (st != CUGL_OK) {
        printf("Bail out! %s\n", cugl_last_error());
        return 1;
    } else {
        test_gl_load();
        printf("# GL: %s, %s\n", cugl_app_context_renderer(ctx), cugl_app_context_platform(ctx));
    }

    const struct CMUnitTest tests[] = {
        cmocka_unit_test(garbage_buffer_descriptors),
        cmocka_unit_test(cut_buffer_descriptor),
        cmocka_unit_test(garbage_pool_fds),
        cmocka_unit_test(garbage_event_descriptors),
        cmocka_unit_test(ten_thousand_ipc_cycles),
        cmocka_unit_test(ipc_cycles_nobody_waits),
        cmocka_unit_test(ten_thousand_shared_cycles),
        cmocka_unit_test(garbage_gl_memory_fds), /* last: see there */
    };
    int failed = cugl_test_run(tests);

    int status = importer_stop(&child);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        printf("# the importing process ended with wait status 0x%x\n", (unsigned)status);
        failed = 1;
    }
    for (int s = 0; s < SLOTS; s++)
        cugl_memory_resource_release(imp.pools[s]);
    cugl_stream_release(imp.stream);
    cugl_app_context_destroy(ctx);
    cugl_stream_release(stream);
    return failed;
}
