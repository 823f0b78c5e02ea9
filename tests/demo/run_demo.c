/*
 * run_demo.c - see run_demo.h.
 */
#include "run_demo.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cugl/app.h>

#include "options.h"

extern char **environ;

/* Every path but auto (the first row), which takes one of them. */
#define RUN_DEMO_INTEROP_NAME(id, value, name, help) name,
static const char *const every_interop[] = {CUGL_APP_INTEROP_LIST(RUN_DEMO_INTEROP_NAME) NULL};
#undef RUN_DEMO_INTEROP_NAME
const char *const *const run_demo_interops = every_interop + 1;

char run_demo__each_interop;

static char dir[512];
static bool dir_given;

const char *run_demo_setup(int argc, char **argv, const char *binary_arg)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s %s\n", argv[0], binary_arg);
        exit(99);
    }
    cugl_test_device();
    /* The demos render headless on device 0: skip where that cannot be. */
    cugl_app_context *ctx = NULL;
    cugl_status st = cugl_app_context_create(
        &ctx, &(cugl_app_context_desc){.mode = CUGL_APP_HEADLESS, .width = 16, .height = 16});
    if (st == CUGL_ERROR_NOT_SUPPORTED)
        cugl_test_skip_all(cugl_last_error());
    if (st != CUGL_OK) {
        printf("Bail out! cannot create a headless GL context: %s\n", cugl_last_error());
        exit(1);
    }
    cugl_app_context_destroy(ctx);

    const char *given = getenv("CUGL_DEMO_TEST_DIR");
    if (given && *given) {
        snprintf(dir, sizeof dir, "%s", given);
        dir_given = true;
        return argv[1];
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/cugl-demo-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        printf("Bail out! mkdtemp %s: %s\n", dir, strerror(errno));
        exit(1);
    }
    return argv[1];
}

const char *run_demo_path(const char *format, ...)
{
    static char paths[8][sizeof dir + 1 + 256];
    static unsigned next;
    char *p = paths[next++ % 8];
    int n = snprintf(p, sizeof paths[0], "%s/", dir);
    va_list ap;
    va_start(ap, format);
    vsnprintf(p + n, sizeof paths[0] - (size_t)n, format, ap);
    va_end(ap);
    return p;
}

int run_demo(const char *binary, const char *const *args)
{
    return run_demo_to(binary, args, NULL);
}

int run_demo_to(const char *binary, const char *const *args, const char *stdout_path)
{
    char *argv[32] = {(char *)binary};
    size_t n = 1;
    fprintf(stderr, "running %s", binary);
    for (; args[n - 1]; n++) {
        assert_true(n + 1 < sizeof argv / sizeof argv[0]);
        argv[n] = (char *)args[n - 1];
        fprintf(stderr, " %s", argv[n]);
    }
    fprintf(stderr, "\n");
    fflush(NULL);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (stdout_path)
        posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, stdout_path,
                                         O_WRONLY | O_CREAT | O_TRUNC, 0644);
    else
        posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
    pid_t pid;
    int e = posix_spawn(&pid, binary, &actions, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    if (e != 0)
        fail_msg("cannot run %s: %s", binary, strerror(e));
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            fail_msg("waitpid: %s", strerror(errno));
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void run_demo_headless(const char *binary, const run_demo_args *a)
{
    char size[32], frames[16];
    snprintf(size, sizeof size, "%dx%d", a->width, a->height);
    snprintf(frames, sizeof frames, "%d", a->frames);
    const char *args[32] = {"--headless",   "--frames",    frames,     "--size", size,
                            "--screenshot", a->screenshot, "--interop", a->interop};
    size_t n = 9;
    char extra[1024] = "";
    for (const char *const *e = a->extra; e && *e; e++) {
        assert_true(n + 1 < sizeof args / sizeof args[0]);
        args[n++] = *e;
        size_t used = strlen(extra);
        snprintf(extra + used, sizeof extra - used, " %s", *e);
    }
    int rc = run_demo(binary, args);
    if (rc != 0) {
        const char *slash = strrchr(binary, '/');
        fail_msg("%s --interop %s --size %s%s exited with %d", slash ? slash + 1 : binary,
                 a->interop, size, extra, rc);
    }
}

/* Remove `path` and, for a folder, everything in it (--record's folders). */
static void remove_tree(const char *path)
{
    DIR *d = opendir(path);
    if (!d) {
        unlink(path);
        return;
    }
    struct dirent *ent;
    while ((ent = readdir(d))) {
        if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0)
            continue;
        char child[4096];
        if (snprintf(child, sizeof child, "%s/%s", path, ent->d_name) < (int)sizeof child)
            remove_tree(child);
    }
    closedir(d);
    rmdir(path);
}

/* Remove the folder unless it was given or `failed`. */
static void cleanup(bool failed)
{
    if (dir_given || !dir[0])
        return;
    if (failed) {
        fprintf(stderr, "the demos' output is kept in %s\n", dir);
        return;
    }
    remove_tree(dir);
}

int run_demo__tests(const struct CMUnitTest *tests, size_t count, CMFixtureFunction group_setup,
                    CMFixtureFunction group_teardown)
{
    size_t paths = 0;
    while (run_demo_interops[paths])
        paths++;
    struct CMUnitTest *all = calloc(count * paths, sizeof *all);
    char(*names)[64] = calloc(count * paths, sizeof *names);
    if (!all || !names) {
        printf("Bail out! out of memory for %zu tests\n", count * paths);
        exit(1);
    }
    size_t n = 0;
    for (size_t i = 0; i < count; i++) {
        if (tests[i].initial_state != &run_demo__each_interop) {
            all[n++] = tests[i];
            continue;
        }
        for (size_t p = 0; p < paths; p++, n++) {
            snprintf(names[n], sizeof names[n], "%s_%s", run_demo_interops[p], tests[i].name);
            all[n] = tests[i];
            all[n].name = names[n];
            /* Read only: cmocka hands a test its state as a void **. */
            all[n].initial_state = (void *)(uintptr_t)run_demo_interops[p];
        }
    }
    cmocka_set_message_output(CM_OUTPUT_TAP);
    int rc = _cmocka_run_group_tests("tests", all, n, group_setup, group_teardown);
    free(all);
    free(names);
    cleanup(rc != 0);
    return rc;
}

uint8_t *run_demo_read_png(const char *path, int width, int height)
{
    uint8_t *rgba = NULL;
    int w = 0, h = 0;
    assert_ok(cugl_app_read_png(&rgba, &w, &h, path));
    if (w != width || h != height)
        fail_msg("%s is %dx%d, not %dx%d", path, w, h, width, height);
    return rgba;
}

float *run_demo_read_floats(const char *path, size_t count)
{
    size_t size = count * sizeof(float);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    float *v = malloc(size + 1);
    assert_non_null(v);
    size_t got = fread(v, 1, size + 1, f);
    fclose(f);
    if (got != size)
        fail_msg("%s has %zu bytes, not %zu", path, got, size);
    return v;
}

void run_demo_expect_close(const uint8_t *got, const uint8_t *want, int width, int height,
                           const char *what)
{
    long pixels = (long)width * height, off = 0, inexact = 0;
    int worst = 0;
    for (long i = 0; i < pixels; i++) {
        int d = 0;
        for (int c = 0; c < 4; c++) {
            int diff = abs(got[i * 4 + c] - want[i * 4 + c]);
            d = diff > d ? diff : d;
        }
        worst = d > worst ? d : worst;
        inexact += d > 0;
        if (d > 1 && off++ < 5)
            printf("# %s: pixel (%ld, %ld): got %u %u %u %u, want %u %u %u %u\n", what,
                   i % width, i / width, got[i * 4], got[i * 4 + 1], got[i * 4 + 2],
                   got[i * 4 + 3], want[i * 4], want[i * 4 + 1], want[i * 4 + 2],
                   want[i * 4 + 3]);
    }
    printf("# %s: %ld of %ld pixels differ, %ld by more than one level; the worst by %d\n",
           what, inexact, pixels, off, worst);
    if (off * 1000 > pixels)
        fail_msg("%s: %ld pixels of %ld differ from the reference by more than one level", what,
                 off, pixels);
}

void run_demo_expect_same_png(const char *other, const char *reference, int width, int height,
                              const char *what)
{
    uint8_t *a = run_demo_read_png(reference, width, height);
    uint8_t *b = run_demo_read_png(other, width, height);
    long differ = 0;
    for (long i = 0; i < (long)width * height; i++)
        differ += memcmp(a + i * 4, b + i * 4, 4) != 0;
    free(a);
    free(b);
    if (differ)
        fail_msg("%s: %ld of %ld pixels differ", what, differ, (long)width * height);
}

/* A cugl buffer over host memory, for cugl_buffer_copy_from. */
static cugl_buffer *host_buffer(const void *data, size_t size)
{
    cugl_buffer *host = NULL;
    assert_ok(cugl_buffer_from_handle(&host, (uint64_t)(uintptr_t)data, size, NULL));
    return host;
}

void run_demo_upload(cugl_buffer *dst, const void *data, cugl_stream *stream)
{
    cugl_buffer *host = host_buffer(data, cugl_buffer_size(dst));
    assert_ok(cugl_buffer_copy_from(dst, host, stream));
    assert_ok(cugl_stream_sync(stream));
    cugl_buffer_release(host);
}

void run_demo_download(void *data, cugl_buffer *src, cugl_stream *stream)
{
    cugl_buffer *host = host_buffer(data, cugl_buffer_size(src));
    assert_ok(cugl_buffer_copy_from(host, src, stream));
    assert_ok(cugl_stream_sync(stream));
    cugl_buffer_release(host);
}
