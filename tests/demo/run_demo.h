/*
 * run_demo.h - what the demo tests share: the command line and the skip
 * rule (no driver, no device, no headless GL on the GPU), a folder for the
 * demos' files, the --interop paths and a test per path, running a demo
 * binary with its output kept out of the TAP stream, reading back what it
 * wrote, comparing pictures, and copies between host and device memory for
 * the tests that launch a demo's kernels themselves.
 */
#ifndef CUGL_DEMO_RUN_DEMO_H
#define CUGL_DEMO_RUN_DEMO_H

#include <stddef.h>
#include <stdint.h>

#include "cugl_test.h"

/*
 * The --interop paths, the rows of libcugl-app's list but auto
 * (CUGL_APP_INTEROP_LIST), then NULL: a path added there is tested on every
 * demo. The first is the one the other paths' output is compared with.
 */
extern const char *const *const run_demo_interops;

/*
 * The demo binary, argv[1]; unless it is the only argument, print
 * "usage: <argv[0]> <binary_arg>" and exit 99. Then exit 77 unless there
 * are a CUDA device and a headless GL context on it (CUGL_TEST_NO_SKIP=1
 * makes that a failure), and make the folder for the demo's output:
 * $CUGL_DEMO_TEST_DIR when set (kept), else a new one under $TMPDIR or
 * /tmp (removed by run_demo_tests when every test passed).
 */
const char *run_demo_setup(int argc, char **argv, const char *binary_arg);

/*
 * A row of a run_demo_tests table that stands for one test per --interop
 * path, in the order of run_demo_interops: `f` runs with *state the path's
 * name ("map"), as the test <path>_<f> (map_path, shared_path, host_path
 * for a function named `path`).
 */
#define run_demo_each_interop(f) {#f, f, NULL, NULL, &run_demo__each_interop}
extern char run_demo__each_interop;

/*
 * Run the array `tests` as one cmocka group with TAP output, each
 * run_demo_each_interop row made a test per path; `group_setup` must leave
 * its state NULL, as cmocka would pass that state to every test. Then
 * remove the folder, unless it was given or a test failed (its path goes to
 * stderr). Returns cmocka's result: the number of tests that failed.
 */
#define run_demo_tests(tests, group_setup, group_teardown)                                       \
    run_demo__tests(tests, sizeof(tests) / sizeof((tests)[0]), group_setup, group_teardown)
int run_demo__tests(const struct CMUnitTest *tests, size_t count, CMFixtureFunction group_setup,
                    CMFixtureFunction group_teardown);

/*
 * The path of a file in the folder, its name printf'd from `format`, in a
 * static buffer; the last 8 results stay valid.
 */
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
const char *run_demo_path(const char *format, ...);

/*
 * Run `binary` with `args` (NULL-terminated, argv[0] excluded) and return
 * its exit status (128 + the signal if it died of one). Its stdout goes to
 * stderr, so that the test's TAP output stays clean.
 */
int run_demo(const char *binary, const char *const *args);

/* The same, with its stdout written to the file `stdout_path` (NULL: to stderr). */
int run_demo_to(const char *binary, const char *const *args, const char *stdout_path);

/* One headless run of a demo, for run_demo_headless. */
typedef struct run_demo_args {
    const char *interop;      /* --interop */
    int width, height;        /* --size */
    int frames;               /* --frames */
    const char *screenshot;   /* --screenshot */
    const char *const *extra; /* the demo's own flags, NULL-terminated; NULL: none */
} run_demo_args;

/*
 * Run `binary` --headless as `a` says; fail the test with "<demo> --interop
 * <path> --size <W>x<H> <extra...> exited with <status>" unless it exits 0.
 */
void run_demo_headless(const char *binary, const run_demo_args *a);

/* Read a PNG the demo wrote; fails the test unless it is width x height. */
uint8_t *run_demo_read_png(const char *path, int width, int height);

/* Read a file of exactly `count` floats (--dump-vertices); fails the test otherwise. */
float *run_demo_read_floats(const char *path, size_t count);

/*
 * Fail the test when more than 1 pixel in 1000 of the RGBA8 images `got`
 * and `want` (both width x height, rows packed) has a channel more than one
 * level off. Prints the first 5 such pixels and a count, each line after
 * `what`, which the failure's message also starts with.
 */
void run_demo_expect_close(const uint8_t *got, const uint8_t *want, int width, int height,
                           const char *what);

/*
 * Fail the test unless the PNGs `other` and `reference` (both width x
 * height) hold the same pixels; the message names `what` and counts the
 * pixels that differ. The same picture from every --interop path.
 */
void run_demo_expect_same_png(const char *other, const char *reference, int width, int height,
                              const char *what);

/* Copy host memory of the buffer's size into `dst`, or `src` into host memory, and wait. */
void run_demo_upload(cugl_buffer *dst, const void *data, cugl_stream *stream);
void run_demo_download(void *data, cugl_buffer *src, cugl_stream *stream);

#endif /* CUGL_DEMO_RUN_DEMO_H */
