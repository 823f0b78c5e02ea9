/*
 * gpu_proc.c - see gpu_proc.h.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>

#include "gpu_proc.h"

long gpu_ms_since(const struct timespec *t0)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long)(now.tv_sec - t0->tv_sec) * 1000 + (now.tv_nsec - t0->tv_nsec) / 1000000;
}

int gpu_reap_child(pid_t pid, long timeout_ms, bool *timed_out)
{
    int status = 0;
    if (timed_out)
        *timed_out = false;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid || (r < 0 && errno != EINTR))
            break;
        if (gpu_ms_since(&t0) > timeout_ms) {
            if (timed_out)
                *timed_out = true;
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            break;
        }
        struct timespec pause = {0, 10 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    return status;
}

int gpu_open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1;
}
