/*
 * app_test.h - what the tests of libcugl-app share: a temporary folder for
 * their files, PNG comparisons, and text as TAP comments.
 */
#ifndef CUGL_APP_TEST_H
#define CUGL_APP_TEST_H

#include <unistd.h>

#include "test_gl.h"

#include "cugl_test.h"

static char app_test_dir[256];

/* Make the folder (under $TMPDIR or /tmp); exit 1 when it cannot be made. */
static inline void app_test_dir_make(const char *prefix)
{
    const char *base = getenv("TMPDIR");
    snprintf(app_test_dir, sizeof app_test_dir, "%s/%s-XXXXXX", base && *base ? base : "/tmp",
             prefix);
    if (!mkdtemp(app_test_dir)) {
        printf("Bail out! mkdtemp %s failed\n", app_test_dir);
        exit(1);
    }
}

/*
 * A headless context of w x h, made current: exit 77 (skipped) where no
 * headless GL 4.5 context can be made, 1 on any other failure.
 */
static inline cugl_app_context *app_test_headless(int w, int h)
{
    cugl_app_context *ctx = NULL;
    cugl_status st = cugl_app_context_create(&ctx, &(cugl_app_context_desc){
                                                       .mode = CUGL_APP_HEADLESS,
                                                       .width = w,
                                                       .height = h,
                                                       .cuda_device = -1,
                                                   });
    if (st == CUGL_ERROR_NOT_SUPPORTED)
        cugl_test_skip_all(cugl_last_error());
    if (st != CUGL_OK) {
        printf("Bail out! %s\n", cugl_last_error());
        exit(1);
    }
    test_gl_load();
    return ctx;
}

/* Remove the folder (the tests remove their files). */
static inline void app_test_dir_remove(void) { rmdir(app_test_dir); }

/* A path in the folder, in a static buffer. */
static inline const char *tmp_path(const char *name)
{
    static char path[320];
    snprintf(path, sizeof path, "%s/%s", app_test_dir, name);
    return path;
}

/* Text of several lines as TAP comments. */
static inline void note(const char *text)
{
    for (const char *line = text; *line;) {
        size_t n = strcspn(line, "\n");
        print_message("# %.*s\n", (int)n, line);
        line += n + (line[n] == '\n');
    }
}

/* Fail unless the PNG at `path` is w x h and holds `want` (RGBA8, top row first). */
static inline void read_expect(const char *path, int w, int h, const uint8_t *want)
{
    uint8_t *got = NULL;
    int gw = 0, gh = 0;
    assert_ok(cugl_app_read_png(&got, &gw, &gh, path));
    assert_int_equal(gw, w);
    assert_int_equal(gh, h);
    assert_memory_equal(got, want, (size_t)w * h * 4);
    free(got);
}

#endif /* CUGL_APP_TEST_H */
