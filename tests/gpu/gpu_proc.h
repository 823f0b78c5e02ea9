/*
 * gpu_proc.h - child processes for the inter-process tests: waiting with a
 * deadline, so that a broken test fails instead of hanging.
 */
#ifndef CUGL_TEST_GPU_PROC_H
#define CUGL_TEST_GPU_PROC_H

#include <stdbool.h>
#include <sys/types.h>
#include <time.h>

/* Milliseconds since `t0` (CLOCK_MONOTONIC). */
long gpu_ms_since(const struct timespec *t0);

/*
 * Wait up to timeout_ms for `pid`; kill it after that. Returns its wait
 * status; *timed_out (may be NULL) says whether it had to be killed.
 */
int gpu_reap_child(pid_t pid, long timeout_ms, bool *timed_out);

/* The file descriptors this process has open (the entries of /proc/self/fd,
 * less the one reading them takes); -1 where they cannot be read. */
int gpu_open_fds(void);

#endif /* CUGL_TEST_GPU_PROC_H */
