/*
 * cugl_test.h - what every cugl test executable shares: cmocka with TAP
 * output, status assertions that print the library's message, and the
 * skip rule (exit 77 only when there is no driver, device or EGL display).
 */
#ifndef CUGL_TEST_H
#define CUGL_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <cugl/cugl.h>

/* Meson's code for "skipped". */
#define CUGL_TEST_SKIP 77

/* Assert a call returned `expected`; on mismatch print both names and the message. */
#define assert_status(expr, expected)                                                   \
    do {                                                                                \
        cugl_status cugl_test__got = (expr);                                            \
        if (cugl_test__got != (expected))                                               \
            fail_msg("%s returned %s, expected %s (last error: %s)", #expr,             \
                     cugl_status_name(cugl_test__got), cugl_status_name(expected),      \
                     cugl_last_error());                                                \
    } while (0)

#define assert_ok(expr) assert_status(expr, CUGL_OK)

/* Assert the thread's last error mentions `needle`. */
#define assert_error_mentions(needle)                                                   \
    do {                                                                                \
        if (!strstr(cugl_last_error(), (needle)))                                       \
            fail_msg("last error \"%s\" does not mention \"%s\"", cugl_last_error(),    \
                     (needle));                                                         \
    } while (0)

/*
 * Print the TAP skip plan and exit 77. Where a GPU is known to be present
 * (the GPU machine), CUGL_TEST_NO_SKIP=1 turns a skip into a failure, so a
 * broken loader cannot pass for a missing driver.
 */
static inline void cugl_test_skip_all(const char *why)
{
    if (getenv("CUGL_TEST_NO_SKIP")) {
        printf("Bail out! would skip, but CUGL_TEST_NO_SKIP is set: %s\n", why);
        exit(1);
    }
    printf("1..0 # SKIP %s\n", why);
    fflush(stdout);
    exit(CUGL_TEST_SKIP);
}

/*
 * Device 0, made current, or exit 77 when there is no driver or no device.
 * Any other failure is a test failure (exit 1 with the message).
 */
static inline cugl_device *cugl_test_device(void)
{
    int count = 0;
    cugl_status st = cugl_device_count(&count);
    if (st == CUGL_ERROR_NO_DRIVER)
        cugl_test_skip_all(cugl_last_error());
    if (st != CUGL_OK) {
        printf("Bail out! cugl_device_count: %s\n", cugl_last_error());
        exit(1);
    }
    if (count == 0)
        cugl_test_skip_all("no CUDA device");
    cugl_device *dev = NULL;
    if (cugl_device_get(&dev, 0) != CUGL_OK || cugl_device_set_current(dev) != CUGL_OK) {
        printf("Bail out! %s\n", cugl_last_error());
        exit(1);
    }
    return dev;
}

/*
 * Table-driven checks: each case is a call, the status it must return and
 * the exact message it must leave. In an X-macro list of
 * X(id, expr, status, message), CUGL_TEST_CASE defines the calls and
 * CUGL_TEST_ROW makes the rows of a cugl_test_case table.
 */
typedef struct cugl_test_case {
    const char *expr;
    cugl_status (*call)(void);
    cugl_status status;
    const char *message; /* exact expected last error */
} cugl_test_case;

#define CUGL_TEST_CASE(id, expr, status, message) \
    static cugl_status id(void) { return (expr); }
#define CUGL_TEST_ROW(id, expr, status, message) {#expr, id, status, message},

/* Run every case; `after` (may be NULL) checks more once each has run. */
static inline void cugl_test_run_cases(const cugl_test_case *cases, size_t n,
                                       void (*after)(const cugl_test_case *c))
{
    for (size_t i = 0; i < n; i++) {
        cugl_clear_error();
        cugl_status st = cases[i].call();
        if (st != cases[i].status)
            fail_msg("%s returned %s, expected %s (%s)", cases[i].expr, cugl_status_name(st),
                     cugl_status_name(cases[i].status), cugl_last_error());
        if (strcmp(cugl_last_error(), cases[i].message) != 0)
            fail_msg("%s: message \"%s\", expected \"%s\"", cases[i].expr, cugl_last_error(),
                     cases[i].message);
        if (after)
            after(&cases[i]);
    }
}

/* A public call on some object, named for the message it must give. */
typedef struct cugl_test_call {
    const char *name;
    cugl_status (*call)(void);
} cugl_test_call;

/* Each call returns CUGL_ERROR_CLOSED with "<name>: the <object> has been closed". */
static inline void cugl_test_expect_closed(const cugl_test_call *calls, size_t n,
                                           const char *object)
{
    for (size_t i = 0; i < n; i++) {
        cugl_clear_error();
        cugl_status st = calls[i].call();
        if (st != CUGL_ERROR_CLOSED)
            fail_msg("call %zu (%s) returned %s, expected CUGL_ERROR_CLOSED (%s)", i,
                     calls[i].name, cugl_status_name(st), cugl_last_error());
        char expect[160];
        snprintf(expect, sizeof expect, "%s: the %s has been closed", calls[i].name, object);
        if (strcmp(cugl_last_error(), expect) != 0)
            fail_msg("%s: message \"%s\", expected \"%s\"", calls[i].name, cugl_last_error(),
                     expect);
    }
}

/* Run a table of tests with TAP output. */
#define cugl_test_run(tests) \
    (cmocka_set_message_output(CM_OUTPUT_TAP), cmocka_run_group_tests(tests, NULL, NULL))

#endif /* CUGL_TEST_H */
