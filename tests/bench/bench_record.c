/*
 * bench_record.c - the recorder (cugl/app_record.h) while a program
 * renders: what keeping a video costs the render loop, and what the
 * encoders make of the frames beside x264.
 *
 * usage: bench_record [--seconds S] [--runs WxH@FPS,...] [--codecs C,...]
 *                     [--ffmpeg PATH] [--any-gl] [--same-bytes]
 *
 *   --seconds S   each run's length (default 10; the goals' figure is 60)
 *   --runs        sizes and rates (default 1920x1080@60,3840x2160@30)
 *   --codecs      of h264, vp8, vp9 (default: every one this build has)
 *   --ffmpeg      the peer: ffmpeg with libx264 (-preset veryfast) encodes
 *                 the same frames at the same bitrate, and decodes every
 *                 file against them (its psnr filter); without, no peer
 *   --any-gl      a headless context on any GL (Mesa), not a CUDA device's
 *   --same-bytes  record as cugl_app_recorder_desc.same_bytes asks (the
 *                 encoders on fewer threads, the same bytes each run)
 *
 * A headless context renders tests/serve/pattern.h's moving picture (a
 * compute shader: waves and drifting grain, as a simulation's detail) at
 * the run's size, paced at its rate, for S seconds: first alone, then
 * recorded in each codec at the recorder's default bitrate (0.1 bit a
 * pixel a frame) without keeping every frame, so that a frame the encoder
 * cannot take is dropped and counted. For each: the render loop's time a
 * frame (drawing, cugl_app_recorder_frame, present and glFinish: the GPU's
 * copy and read-back included), its mean and 99th percentile, and the
 * ratio to the loop alone; frames late for the pace; frames dropped; the
 * encoder thread's time a frame; the process's CPU time a frame above the
 * loop alone's (the encoding, on every thread it uses); the bitrate
 * written. With --ffmpeg: x264's CPU time a frame on the same frames, and
 * each file's PSNR against the pattern (ffmpeg's psnr filter, all planes).
 * Goals: at 1920x1080 and 60 frames a second the loop's time up by at
 * most 10% (H.264 and VP8) and no frame dropped; at 3840x2160 and 30 up by
 * at most 15%; each codec's PSNR at least x264's at the same bitrate less
 * 1 dB. Exits 77 where no headless context can be made.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cugl/app.h>

#include "pattern.h"
#include "pattern_gl.h"
#include "test_gl.h"

enum { MAX_RUNS = 8 };

typedef struct size_rate {
    int width, height;
    double fps;
} size_rate;

/* What one run measured. */
typedef struct measured {
    double mean_ms, p99_ms;   /* the render loop's time a frame */
    long frames, late;        /* frames rendered; late for the pace */
    double cpu_ms;            /* the process's CPU time a frame */
    cugl_app_record_counts counts;
} measured;

static const char *const codec_names[] = {NULL, "h264", "vp8", "vp9"};
static const char *const codec_titles[] = {"none", "H.264", "VP8", "VP9"};

static double now_ms(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A run of `seconds` at r's size and rate, recorded into `path` in
 * `codec` (a cugl_app_record_codec) at `kbps` where path is not NULL. */
static bool same_bytes;

static bool run(cugl_app_context *ctx, size_rate r, double seconds, const char *path, int codec,
                int kbps, measured *m)
{
    *m = (measured){0};
    cugl_app_recorder *rec = NULL;
    cugl_app_recorder_desc desc = {.fps = r.fps,
                                   .kbps = kbps,
                                   .codec = (cugl_app_record_codec)codec,
                                   .same_bytes = same_bytes};
    if (path && cugl_app_recorder_create(&rec, ctx, path, &desc) != CUGL_OK) {
        fprintf(stderr, "bench_record: %s\n", cugl_last_error());
        return false;
    }
    long n = lround(seconds * r.fps);
    double *ms = malloc((size_t)n * sizeof *ms);
    if (!ms) {
        cugl_app_recorder_close(rec);
        return false;
    }
    GLuint fbo = cugl_app_context_framebuffer(ctx);
    double step = 1e3 / r.fps, next = now_ms(CLOCK_MONOTONIC);
    double cpu0 = now_ms(CLOCK_PROCESS_CPUTIME_ID);
    bool ok = true;
    for (long i = 0; i < n && ok; i++) {
        double t0 = now_ms(CLOCK_MONOTONIC);
        ok = draw_pattern(fbo, r.width, r.height, i) &&
             (!rec || cugl_app_recorder_frame(rec) == CUGL_OK) &&
             cugl_app_context_present(ctx) == CUGL_OK;
        glFinish();
        double t1 = now_ms(CLOCK_MONOTONIC);
        ms[i] = t1 - t0;
        next += step;
        if (t1 > next) {
            m->late++;
            next = t1;
        } else {
            double wait = next - t1;
            nanosleep(&(struct timespec){.tv_sec = (time_t)(wait / 1e3),
                                         .tv_nsec = (long)(fmod(wait, 1e3) * 1e6)},
                      NULL);
        }
    }
    if (!ok)
        fprintf(stderr, "bench_record: a frame failed: %s\n", cugl_last_error());
    if (rec) {
        cugl_app_recorder_counts(rec, &m->counts);
        if (cugl_app_recorder_close(rec) != CUGL_OK) {
            fprintf(stderr, "bench_record: %s\n", cugl_last_error());
            ok = false;
        }
    }
    /* The CPU time to the close: the frames in flight are encoded there. */
    m->cpu_ms = (now_ms(CLOCK_PROCESS_CPUTIME_ID) - cpu0) / (double)n;
    m->frames = n;
    double sum = 0;
    for (long i = 0; i < n; i++)
        sum += ms[i];
    m->mean_ms = sum / (double)n;
    qsort(ms, (size_t)n, sizeof *ms, by_value);
    m->p99_ms = ms[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1];
    free(ms);
    return ok;
}

/* Frames 0 .. n-1 of the pattern, RGBA rows top first, into `fd`. */
static bool write_frames(int fd, int w, int h, long n)
{
    uint8_t *row = malloc((size_t)w * 4);
    bool ok = row != NULL;
    for (long f = 0; f < n && ok; f++)
        for (int y = 0; y < h && ok; y++) {
            pattern_row(row, y, w, f);
            size_t left = (size_t)w * 4;
            const uint8_t *p = row;
            while (left > 0 && ok) {
                ssize_t k = write(fd, p, left);
                ok = k > 0;
                p += k > 0 ? k : 0;
                left -= k > 0 ? (size_t)k : 0;
            }
        }
    free(row);
    return ok;
}

/* ffmpeg with `args` (after the raw frames' description of its input 0,
 * read from a pipe), fed n frames of the pattern; its exit status, its
 * CPU time (user and system, ms) and the end of its stderr in `log`. */
static int ffmpeg_on_frames(const char *ffmpeg, size_rate r, long n, const char *const *args,
                            double *cpu_ms, char *log, size_t log_size)
{
    char size[32], rate[32], logpath[] = "/tmp/bench-record-ffmpeg-XXXXXX";
    snprintf(size, sizeof size, "%dx%d", r.width, r.height);
    snprintf(rate, sizeof rate, "%g", r.fps);
    int logfd = mkstemp(logpath);
    if (logfd < 0)
        return -1;
    unlink(logpath); /* read through logfd; gone with it */
    int in[2];
    if (pipe(in) != 0) {
        close(logfd);
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        close(in[0]);
        close(in[1]);
        close(logfd);
        return -1;
    }
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(logfd, 2);
        close(in[1]);
        const char *argv[40] = {ffmpeg,  "-hide_banner", "-loglevel", "info", "-y",
                                "-f",    "rawvideo",     "-pix_fmt",  "rgba", "-s",
                                size,    "-framerate",   rate,        "-i",   "pipe:0"};
        int k = 15;
        for (int i = 0; args[i] && k < 39; i++)
            argv[k++] = args[i];
        argv[k] = NULL;
        execv(ffmpeg, (char *const *)argv);
        _exit(127);
    }
    close(in[0]);
    signal(SIGPIPE, SIG_IGN);
    write_frames(in[1], r.width, r.height, n);
    close(in[1]);
    int status = 0;
    struct rusage before, after;
    getrusage(RUSAGE_CHILDREN, &before);
    waitpid(pid, &status, 0);
    getrusage(RUSAGE_CHILDREN, &after); /* the children waited for: this one more */
    *cpu_ms = (double)(after.ru_utime.tv_sec - before.ru_utime.tv_sec +
                       after.ru_stime.tv_sec - before.ru_stime.tv_sec) * 1e3 +
              (double)(after.ru_utime.tv_usec - before.ru_utime.tv_usec +
                       after.ru_stime.tv_usec - before.ru_stime.tv_usec) / 1e3;
    log[0] = '\0';
    FILE *f = fdopen(logfd, "r");
    if (f) {
        fseek(f, 0, SEEK_END);
        long end = ftell(f);
        fseek(f, end > (long)log_size - 1 ? end - (long)log_size + 1 : 0, SEEK_SET);
        size_t got = fread(log, 1, log_size - 1, f);
        log[got] = '\0';
        fclose(f);
    } else {
        close(logfd);
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The PSNR (all planes, dB) of the video at `path` against the pattern's
 * first n frames, by ffmpeg's psnr filter; NAN where it cannot say. */
static double psnr_of(const char *ffmpeg, const char *path, size_rate r, long n)
{
    const char *args[] = {"-i", path, "-lavfi", "[1:v][0:v]psnr", "-f", "null", "-", NULL};
    char log[4096];
    double cpu;
    if (ffmpeg_on_frames(ffmpeg, r, n, args, &cpu, log, sizeof log) != 0)
        return NAN;
    const char *at = strstr(log, "average:");
    return at ? strtod(at + 8, NULL) : NAN;
}

static bool parse_runs(const char *text, size_rate *runs, int *count)
{
    *count = 0;
    for (const char *p = text; *p && *count < MAX_RUNS;) {
        size_rate r;
        int used = 0;
        if (sscanf(p, "%dx%d@%lf%n", &r.width, &r.height, &r.fps, &used) != 3 || r.width < 16 ||
            r.height < 16 || r.width > CUGL_APP_RECORD_MAX_SIZE ||
            r.height > CUGL_APP_RECORD_MAX_SIZE || !(r.fps >= 1 && r.fps <= 60))
            return false;
        runs[(*count)++] = r;
        p += used;
        if (*p == ',')
            p++;
        else if (*p)
            return false;
    }
    return *count > 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: bench_record [--seconds S] [--runs WxH@FPS,...] [--codecs C,...] "
                    "[--ffmpeg PATH] [--any-gl] [--same-bytes]\n");
    return 2;
}

/* One codec's runs' table rows and goals. */
static void report(size_rate r, int codec, const measured *alone, const measured *m,
                   double mbit, double psnr, double peer_psnr)
{
    double ratio = m->mean_ms / alone->mean_ms;
    printf("| %dx%d @ %g | %s | %.2f / %.2f ms | %.3f | %ld | %ld | %.2f ms | %.2f ms | %.1f | ",
           r.width, r.height, r.fps, codec_titles[codec], m->mean_ms, m->p99_ms, ratio, m->late,
           m->counts.dropped, m->counts.encode_ms, m->cpu_ms - alone->cpu_ms, mbit);
    if (isnan(psnr))
        printf("- |\n");
    else
        printf("%.2f dB |\n", psnr);
    double bound = r.width * r.height > 1920 * 1080 ? 1.15 : 1.10;
    bool met = ratio <= bound && m->counts.dropped == 0;
    printf("goal: %dx%d @ %g %s: the loop's time up by at most %.0f%%, no frame dropped: "
           "%+.1f%%, %ld dropped, %s\n",
           r.width, r.height, r.fps, codec_titles[codec], (bound - 1) * 100, (ratio - 1) * 100,
           m->counts.dropped, met ? "met" : "MISSED");
    if (!isnan(psnr) && !isnan(peer_psnr))
        printf("goal: %dx%d %s PSNR at least x264's less 1 dB: %.2f against %.2f, %s\n",
               r.width, r.height, codec_titles[codec], psnr, peer_psnr,
               psnr >= peer_psnr - 1.0 ? "met" : "MISSED");
}

/* x264 on the same frames at `kbps`: its CPU time a frame and PSNR. */
static void peer(const char *ffmpeg, size_rate r, long n, int kbps, const char *dir,
                 double *cpu_ms, double *psnr)
{
    char out[512], rate[32], log[2048];
    snprintf(out, sizeof out, "%s/x264.mp4", dir);
    snprintf(rate, sizeof rate, "%dk", kbps);
    const char *args[] = {"-c:v", "libx264", "-preset", "veryfast", "-b:v", rate, "-pix_fmt",
                          "yuv420p", out, NULL};
    *psnr = NAN;
    if (ffmpeg_on_frames(ffmpeg, r, n, args, cpu_ms, log, sizeof log) != 0) {
        printf("# x264 failed: %s\n", log);
        *cpu_ms = NAN;
        return;
    }
    *cpu_ms /= (double)n;
    *psnr = psnr_of(ffmpeg, out, r, n);
    unlink(out);
}

/* After the loop alone (`alone`): the peer, then each codec's run. */
static void measure_codecs(cugl_app_context *ctx, size_rate r, double seconds,
                           const measured *alone, const bool codecs[4], const char *ffmpeg,
                           const char *dir, int *failed)
{
    printf("| %dx%d @ %g | none | %.2f / %.2f ms | 1 | %ld | | | | | |\n", r.width, r.height,
           r.fps, alone->mean_ms, alone->p99_ms, alone->late);
    /* The recorder's default bitrate (0.1 bit a pixel a frame, at least
     * 500 kbit/s), given to each encoder. */
    int kbps = (int)fmax(500, lround(0.1 * r.width * r.height * r.fps / 1000.0));
    double peer_cpu = NAN, peer_psnr = NAN;
    if (ffmpeg) {
        peer(ffmpeg, r, alone->frames, kbps, dir, &peer_cpu, &peer_psnr);
        printf("| %dx%d @ %g | x264 veryfast (ffmpeg) | | | | | | %.2f ms | %.1f | %.2f dB |\n",
               r.width, r.height, r.fps, peer_cpu, kbps / 1e3, peer_psnr);
    }
    for (int c = 1; c < 4; c++) {
        if (!codecs[c])
            continue;
        char path[600];
        snprintf(path, sizeof path, "%s/run.%s", dir, c == 1 ? "mp4" : "webm");
        measured m;
        if (!run(ctx, r, seconds, path, c, kbps, &m)) {
            /* A codec this build lacks was named on stderr, and is left out. */
            *failed |= cugl_last_status() != CUGL_ERROR_NOT_SUPPORTED;
            continue;
        }
        struct stat st;
        double mbit = stat(path, &st) == 0 ? (double)st.st_size * 8 / 1e6 / seconds : 0;
        double psnr = ffmpeg ? psnr_of(ffmpeg, path, r, m.frames) : NAN;
        report(r, c, alone, &m, mbit, psnr, peer_psnr);
        unlink(path);
    }
}

int main(int argc, char **argv)
{
    double seconds = 10;
    size_rate runs[MAX_RUNS];
    int run_count = 0;
    parse_runs("1920x1080@60,3840x2160@30", runs, &run_count);
    bool codecs[4] = {false, true, true, true};
    const char *ffmpeg = NULL;
    bool any_gl = false;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--seconds") == 0 && v) {
            seconds = atof(v);
            i++;
            if (!(seconds >= 0.5 && seconds <= 3600))
                return usage();
        } else if (strcmp(argv[i], "--runs") == 0 && v) {
            if (!parse_runs(v, runs, &run_count))
                return usage();
            i++;
        } else if (strcmp(argv[i], "--codecs") == 0 && v) {
            for (int c = 1; c < 4; c++)
                codecs[c] = strstr(v, codec_names[c]) != NULL;
            i++;
        } else if (strcmp(argv[i], "--ffmpeg") == 0 && v) {
            ffmpeg = v[0] ? v : NULL;
            i++;
        } else if (strcmp(argv[i], "--any-gl") == 0) {
            any_gl = true;
        } else if (strcmp(argv[i], "--same-bytes") == 0) {
            same_bytes = true;
        } else {
            return usage();
        }
    }
    char dir[] = "/tmp/bench-record-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("bench_record: mkdtemp");
        return 1;
    }
    printf("# %ld cores; %g s a run; %s; the peer: %s\n", sysconf(_SC_NPROCESSORS_ONLN),
           seconds, same_bytes ? "the same bytes each run (fewer threads)" : "every thread",
           ffmpeg ? ffmpeg : "none (no --ffmpeg)");
    printf("| size @ fps | codec | loop time, mean / p99 | ratio | late | dropped | encoder "
           "a frame | CPU a frame above the loop's | Mbit/s | PSNR |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|\n");
    int failed = 0;
    for (int k = 0; k < run_count; k++) {
        size_rate r = runs[k];
        cugl_app_context *ctx = NULL;
        cugl_app_context_desc desc = {.mode = CUGL_APP_HEADLESS, .width = r.width,
                                      .height = r.height, .cuda_device = any_gl ? -1 : 0};
        if (cugl_app_context_create(&ctx, &desc) != CUGL_OK) {
            printf("1..0 # SKIP no headless context: %s\n", cugl_last_error());
            rmdir(dir);
            return 77;
        }
        test_gl_load();
        if (k == 0)
            printf("# GL: %s, %s\n", cugl_app_context_vendor(ctx), cugl_app_context_renderer(ctx));
        measured alone;
        /* A warm-up (the shader, the driver's first frames), then alone. */
        bool ok = run(ctx, r, 1.0, NULL, 0, 0, &alone) && run(ctx, r, seconds, NULL, 0, 0, &alone);
        if (ok)
            measure_codecs(ctx, r, seconds, &alone, codecs, ffmpeg, dir, &failed);
        cugl_app_context_destroy(ctx);
        pattern_gl_forget();
        failed |= !ok;
    }
    rmdir(dir);
    return failed;
}
