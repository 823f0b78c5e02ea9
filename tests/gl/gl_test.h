/*
 * gl_test.h - the gl suite's tests of libcugl-app share one headless
 * context (Mesa here, NVIDIA's EGL device on the GPU machine) of W x H, made
 * current before the tests run, and skip (77) only when none can be made.
 */
#ifndef CUGL_GL_TEST_H
#define CUGL_GL_TEST_H

#include "app_test.h"

enum { W = 64, H = 48 };

static cugl_app_context *ctx;

static inline void make_current(void) { assert_ok(cugl_app_context_make_current(ctx)); }

/* Make the context and the temporary folder, run `tests`, free both. */
#define gl_test_run(tests, prefix) gl_test__run(tests, sizeof(tests) / sizeof((tests)[0]), prefix)

static inline int gl_test__run(const struct CMUnitTest *tests, size_t count, const char *prefix)
{
    ctx = app_test_headless(W, H);
    app_test_dir_make(prefix);
    cmocka_set_message_output(CM_OUTPUT_TAP);
    int failed = _cmocka_run_group_tests("tests", tests, count, NULL, NULL);
    cugl_app_context_destroy(ctx);
    app_test_dir_remove();
    return failed;
}

#endif /* CUGL_GL_TEST_H */
