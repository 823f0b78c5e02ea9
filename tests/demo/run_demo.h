/*
 * run_demo.h - what the demo tests share: the skip rule (no driver, no
 * device, no headless GL on the GPU), a folder for the demos' files, and
 * running a demo binary with its output kept out of the TAP stream.
 */
#ifndef CUGL_DEMO_RUN_DEMO_H
#define CUGL_DEMO_RUN_DEMO_H

#include <stdint.h>

/*
 * Exit 77 unless there are a CUDA device and a headless GL context on it
 * (CUGL_TEST_NO_SKIP=1 makes that a failure); then make the folder for the
 * demo's output: $CUGL_DEMO_TEST_DIR when set (kept), else a new one under
 * $TMPDIR or /tmp (removed by run_demo_cleanup when every test passed).
 */
void run_demo_setup(void);

/* The folder's path joined with `name`, in a static buffer per call slot. */
const char *run_demo_path(const char *name);

/*
 * Run `binary` with `args` (NULL-terminated, argv[0] excluded) and return
 * its exit status (128 + the signal if it died of one). Its stdout goes to
 * stderr, so that the test's TAP output stays clean.
 */
int run_demo(const char *binary, const char *const *args);

/* Remove the folder unless it was given or `failed`. */
void run_demo_cleanup(int failed);

/* Read a PNG the demo wrote; fails the test unless it is width x height. */
uint8_t *run_demo_read_png(const char *path, int width, int height);

/*
 * Fail the test unless the PNGs `other` and `reference` (both width x
 * height) hold the same pixels; the message names `what` and counts the
 * pixels that differ. The same picture from every --interop path.
 */
void run_demo_expect_same_png(const char *other, const char *reference, int width, int height,
                              const char *what);

#endif /* CUGL_DEMO_RUN_DEMO_H */
