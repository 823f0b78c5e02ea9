/*
 * run_demo.c - see run_demo.h.
 */
#include "run_demo.h"

#include <dirent.h>
#include <errno.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cugl/app.h>

#include "cugl_test.h"

extern char **environ;

static char dir[512];
static bool dir_given;

void run_demo_setup(void)
{
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
        return;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/cugl-demo-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        printf("Bail out! mkdtemp %s: %s\n", dir, strerror(errno));
        exit(1);
    }
}

const char *run_demo_path(const char *name)
{
    static char paths[8][sizeof dir + 1 + 256];
    static unsigned next;
    char *p = paths[next++ % 8];
    snprintf(p, sizeof paths[0], "%s/%s", dir, name);
    return p;
}

int run_demo(const char *binary, const char *const *args)
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

void run_demo_cleanup(int failed)
{
    if (dir_given || !dir[0])
        return;
    if (failed) {
        fprintf(stderr, "the demos' output is kept in %s\n", dir);
        return;
    }
    remove_tree(dir);
}

uint8_t *run_demo_read_png(const char *path, int width, int height)
{
    uint8_t *rgba = NULL;
    int w = 0, h = 0;
    assert_ok(cugl_app_read_png(path, &rgba, &w, &h));
    if (w != width || h != height)
        fail_msg("%s is %dx%d, not %dx%d", path, w, h, width, height);
    return rgba;
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
