/*
 * The frame server under load: a demo served headless with --bench (no
 * pacing: it renders as fast as it can) at 1280x720 and 1920x1080, and a
 * viewer of the tests' own (tests/serve/ws_client.c) on the same host.
 * For each size:
 *   - the demo's own frame time (--bench) without a viewer, then with one;
 *   - frames per second and megabytes per second the viewer receives;
 *   - input to picture: an event sent, until the first frame whose header
 *     counts it ("events"), the JPEG not decoded; median and worst of 40.
 * Goals: 1280x720 at >= 60 frames a second, 1920x1080 at >= 30, the
 * demo's frame time up by at most 10% while serving, input to picture at
 * most 100 ms. Exits 77 where the demo cannot run (no GPU).
 *
 * usage: bench_serve CUGL_DEMO [--interop PATH]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cugl/cugl.h>

#include "ws_client.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void sleep_s(double s)
{
    nanosleep(&(struct timespec){.tv_sec = (time_t)s, .tv_nsec = (long)((s - (time_t)s) * 1e9)},
              NULL);
}

typedef struct program {
    pid_t pid;
    char out[64]; /* its stdout */
} program;

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = calloc(1, 1 << 20);
    if (buf)
        (void)!fread(buf, 1, (1 << 20) - 1, f);
    fclose(f);
    return buf;
}

/* Start the demo serving at `size`; returns its port, and exits 1 on a failure. */
static int start(program *p, const char *demo, const char *size, const char *interop)
{
    snprintf(p->out, sizeof p->out, "/tmp/bench_serve-%d.txt", (int)getpid());
    const char *args[] = {demo,      "--headless", "--bench",     "--size",
                          size,      "--serve",    "127.0.0.1:0", interop ? "--interop" : NULL,
                          interop,   NULL};
    p->pid = fork();
    if (p->pid == 0) {
        if (!freopen(p->out, "w", stdout))
            _exit(127);
        execv(demo, (char *const *)args);
        _exit(127);
    }
    double end = now_s() + 60;
    while (now_s() < end) {
        int status;
        if (waitpid(p->pid, &status, WNOHANG) == p->pid) {
            char *out = slurp(p->out);
            fprintf(stderr, "%s", out ? out : "");
            free(out);
            fprintf(stderr, "bench_serve: %s exited before serving\n", demo);
            exit(1);
        }
        char *out = slurp(p->out);
        const char *at = out ? strstr(out, "serving on http://") : NULL;
        const char *colon = at ? strchr(at + 18, ':') : NULL;
        int port = colon ? atoi(colon + 1) : 0;
        free(out);
        if (port > 0)
            return port;
        sleep_s(0.05);
    }
    fprintf(stderr, "bench_serve: %s did not serve within 60 s\n", demo);
    kill(p->pid, SIGKILL);
    exit(1);
}

/* Stop it; its --bench frame time in ms. */
static double stop(program *p)
{
    kill(p->pid, SIGTERM);
    int status;
    waitpid(p->pid, &status, 0);
    char *out = slurp(p->out);
    unlink(p->out);
    const char *at = out ? strstr(out, " ms a frame") : NULL;
    double ms = -1;
    if (at) {
        const char *start = at;
        while (start > out && start[-1] != ' ')
            start--;
        ms = atof(start);
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || ms <= 0) {
        fprintf(stderr, "bench_serve: the demo did not end cleanly with its timings:\n%s",
                out ? out : "");
        exit(1);
    }
    free(out);
    return ms;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

enum { LATENCY_SAMPLES = 40 };

typedef struct result {
    double alone_ms, served_ms, fps, mb_s, latency_median_ms, latency_worst_ms;
} result;

static void run_size(result *r, const char *demo, const char *size, const char *interop)
{
    program p;
    start(&p, demo, size, interop);
    sleep_s(6);
    r->alone_ms = stop(&p);

    int port = start(&p, demo, size, interop);
    ws_client *c = ws_client_open(port, NULL);
    if (!c || !ws_client_wait_frames(c, 10, 30)) {
        fprintf(stderr, "bench_serve: no frames at %s\n", size);
        exit(1);
    }
    ws_client_run(c, 1.0);
    long f0 = ws_client_frames(c);
    long long b0 = ws_client_bytes(c);
    double t0 = now_s();
    ws_client_run(c, 5.0);
    double dt = now_s() - t0;
    r->fps = (double)(ws_client_frames(c) - f0) / dt;
    r->mb_s = (double)(ws_client_bytes(c) - b0) / dt / 1e6;

    double lat[LATENCY_SAMPLES];
    for (int i = 0; i < LATENCY_SAMPLES; i++) {
        char line[64];
        snprintf(line, sizeof line, "0 move %d %d\n", 10 + i, 20 + i);
        double sent = now_s();
        ws_client_send(c, line);
        double end = sent + 5;
        while (ws_client_header_number(c, "events") < i + 1 && now_s() < end)
            ws_client_run(c, 0.0005);
        lat[i] = (now_s() - sent) * 1e3;
        ws_client_run(c, 0.02);
    }
    qsort(lat, LATENCY_SAMPLES, sizeof lat[0], cmp_double);
    r->latency_median_ms = lat[LATENCY_SAMPLES / 2];
    r->latency_worst_ms = lat[LATENCY_SAMPLES - 1];
    r->served_ms = stop(&p);
    ws_client_close(c);
}

int main(int argc, char **argv)
{
    if (argc != 2 && !(argc == 4 && strcmp(argv[2], "--interop") == 0)) {
        fprintf(stderr, "usage: bench_serve CUGL_DEMO [--interop PATH]\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    const char *interop = argc == 4 ? argv[3] : NULL;
    static const char *const sizes[] = {"1280x720", "1920x1080"};
    static const double goal_fps[] = {60, 30};
    int devices = 0;
    if (cugl_device_count(&devices) != CUGL_OK || devices == 0) {
        printf("bench_serve: skipped: no CUDA device for the demo\n");
        return 77;
    }
    result r[2];
    for (int i = 0; i < 2; i++)
        run_size(&r[i], argv[1], sizes[i], interop);
    printf("\n%s served to one viewer on the same host (--interop %s)\n", argv[1],
           interop ? interop : "auto");
    printf("| size | frame ms alone | frame ms served | served / alone | fps received | "
           "MB/s | input to picture, median | worst |\n");
    printf("|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < 2; i++)
        printf("| %s | %.3f | %.3f | %.2f | %.1f | %.1f | %.1f ms | %.1f ms |\n", sizes[i],
               r[i].alone_ms, r[i].served_ms, r[i].served_ms / r[i].alone_ms, r[i].fps,
               r[i].mb_s, r[i].latency_median_ms, r[i].latency_worst_ms);
    for (int i = 0; i < 2; i++) {
        printf("goal: %s at >= %.0f fps: %.1f, %s\n", sizes[i], goal_fps[i], r[i].fps,
               r[i].fps >= goal_fps[i] ? "met" : "MISSED");
        double rise = r[i].served_ms / r[i].alone_ms - 1;
        printf("goal: %s frame time up <= 10%% while serving: %+.1f%%, %s\n", sizes[i],
               100 * rise, rise <= 0.10 ? "met" : "MISSED");
        printf("goal: %s input to picture <= 100 ms: median %.1f ms, worst %.1f ms, %s\n",
               sizes[i], r[i].latency_median_ms, r[i].latency_worst_ms,
               r[i].latency_worst_ms <= 100 ? "met" : "MISSED");
    }
    return 0;
}
