/*
 * A frame server seen from outside, as a browser and as hostile clients
 * see it: a program is started serving on a port the system picks, with a
 * token, and this test plays the page (tests/serve/ws_client.c, on
 * libwebsockets) and worse:
 *
 *   - the page is served with the token, refused (403) without it or with
 *     another, and other paths are 404;
 *   - frames arrive, decode to the program's size, and match its own
 *     picture of the same frame within JPEG's tolerance;
 *   - a WebSocket with a bad token is refused; three viewers at once all
 *     get frames;
 *   - a drag sent as event lines reaches the program's input;
 *   - each viewer has at most `window` (2) frames unacknowledged, and its
 *     header carries what the server measured of its link;
 *   - hostile viewers that never ack, ack frames never sent to them, ack
 *     out of order or flood acks neither stall another viewer nor grow
 *     the program's memory;
 *   - garbage bytes, an oversized message, a line that is no event, a
 *     binary message, a `close` event and 200 connections opened and
 *     dropped each lose only their own connection: a new viewer still gets
 *     frames, and the program exits cleanly at the end;
 *   - a viewer's flood of events loses that viewer alone (a burst of moves
 *     is none), and a viewer's Escape does not end the program.
 *
 * usage: test_serve app SERVE_APP
 *        test_serve demo CUGL_DEMO [--interop PATH ...]
 * In `app` mode the program is tests/serve/serve_app (GL only: runs on
 * Mesa), whose picture before any input is its --screenshot; in `demo`
 * mode a demo, headless, compared with its --record pictures, its input
 * kept with --save-input. Exits 77 where the program reports it cannot run
 * here (no GL, or no GPU for a demo).
 */
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "app_test.h"

#include "ws_client.h"

#define TOKEN "s3cret-Token_1.2"
enum { W = 192, H = 144 };

static bool demo_mode;
static const char *binary, *demo_name;
static char **extra_args;
static int extra_count;
static pid_t child = -1;
static int child_stdin = -1;
static int port;
static char record[320]; /* demo mode: the --record folder */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void sleep_ms(long ms)
{
    nanosleep(&(struct timespec){.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000}, NULL);
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = malloc(1 << 20);
    size_t n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    if (buf)
        buf[n] = '\0';
    return buf;
}

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

/* Under AddressSanitizer, freed blocks wait in a quarantine (256 MB) before
 * their memory is used again, so the program's memory grows with every
 * message it takes and frees (by 5 to 8 MB over a flood of acks it keeps
 * nothing of, on the GPU): ack_floods could not tell a kept flood from a
 * freed one. The program gets a quarantine of 1 MB, which still catches a
 * block used just after it is freed. */
static void small_quarantine(void)
{
#ifdef UNDER_ASAN
    const char *was = getenv("ASAN_OPTIONS");
    char options[1024];
    snprintf(options, sizeof options, "%s%squarantine_size_mb=1", was ? was : "",
             was && *was ? ":" : "");
    setenv("ASAN_OPTIONS", options, 1);
#endif
}

/* Start the program; its stdout goes to out.txt. Returns the port it
 * serves on, 0 if it reported it cannot run here (exit 77), or exits 1. */
static int start_program(void)
{
    char size[32];
    snprintf(size, sizeof size, "%dx%d", W, H);
    const char *args[64];
    int n = 0;
    args[n++] = binary;
    static char input[320], shot[320];
    snprintf(record, sizeof record, "%s", tmp_path("record"));
    snprintf(input, sizeof input, "%s", tmp_path("input.txt"));
    snprintf(shot, sizeof shot, "%s", tmp_path("shot.png"));
    if (demo_mode) {
        const char *const fixed[] = {"--headless", "--size", size, "--serve", "127.0.0.1:0",
                                     "--serve-token", TOKEN, "--record", record,
                                     "--save-input", input};
        for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
            args[n++] = fixed[i];
    } else {
        /* Frames in bursts of 3: a rate from the gaps between frames, not
         * from frames over time, is wrong by far. */
        const char *const fixed[] = {"--port", "0", "--token", TOKEN, "--size", size,
                                     "--screenshot", shot, "--burst", "3"};
        for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
            args[n++] = fixed[i];
    }
    for (int i = 0; i < extra_count; i++)
        args[n++] = extra_args[i];
    args[n] = NULL;
    fprintf(stderr, "running");
    for (int i = 0; i < n; i++)
        fprintf(stderr, " %s", args[i]);
    fprintf(stderr, "\n");

    int in[2];
    if (pipe(in) != 0) {
        printf("Bail out! pipe\n");
        exit(1);
    }
    small_quarantine();
    child = fork();
    if (child == 0) {
        dup2(in[0], 0);
        close(in[1]);
        int out = open(tmp_path("out.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(out, 1);
        execv(binary, (char *const *)args);
        _exit(127);
    }
    close(in[0]);
    child_stdin = in[1];
    double end = now_s() + 60;
    while (now_s() < end) {
        int status;
        if (waitpid(child, &status, WNOHANG) == child) {
            child = -1;
            char *out = read_file(tmp_path("out.txt"));
            fprintf(stderr, "%s", out ? out : "");
            free(out);
            if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
                return 0;
            printf("Bail out! %s exited with status %d before serving\n", binary,
                   WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
            exit(1);
        }
        char *out = read_file(tmp_path("out.txt"));
        const char *at = out ? strstr(out, "serving on http://") : NULL;
        const char *colon = at ? strchr(at + 18, ':') : NULL;
        int p = colon ? atoi(colon + 1) : 0;
        free(out);
        if (p > 0)
            return p;
        sleep_ms(50);
    }
    printf("Bail out! %s did not say where it serves within 60 s\n", binary);
    kill(child, SIGKILL);
    exit(1);
}

/* Stop the program and return its exit status: serve_app stops when its
 * stdin closes, a demo on SIGTERM (as from a terminal's kill). */
static int stop_program(void)
{
    if (child < 0)
        return -1;
    close(child_stdin);
    if (demo_mode)
        kill(child, SIGTERM);
    int status = 0;
    double end = now_s() + 30;
    while (waitpid(child, &status, WNOHANG) != child) {
        if (now_s() > end) {
            kill(child, SIGKILL);
            waitpid(child, &status, 0);
            break;
        }
        sleep_ms(20);
    }
    child = -1;
    char *out = read_file(tmp_path("out.txt"));
    fprintf(stderr, "the program's output:\n%s", out ? out : "");
    free(out);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static bool program_alive(void)
{
    int status;
    return child > 0 && waitpid(child, &status, WNOHANG) == 0;
}

/* The program's own picture of frame `frame`, RGBA8 top to bottom. */
static uint8_t *reference_of(long frame, int *w, int *h)
{
    char path[512];
    if (demo_mode)
        snprintf(path, sizeof path, "%s/%s-%06ld.png", record, demo_name, frame);
    else
        snprintf(path, sizeof path, "%s", tmp_path("shot.png"));
    uint8_t *rgba = NULL;
    if (cugl_app_read_png(&rgba, w, h, path) != CUGL_OK) {
        fprintf(stderr, "cannot read %s: %s\n", path, cugl_last_error());
        return NULL;
    }
    return rgba;
}

/* The mean absolute difference of the RGB channels. */
/* PSNR over R, G and B of `a` against `b` (w x h RGBA), in dB. */
static double psnr_of(const uint8_t *a, const uint8_t *b, int w, int h)
{
    double se = 0;
    for (long i = 0; i < (long)w * h; i++)
        for (int c = 0; c < 3; c++) {
            double d = (double)a[4 * i + c] - (double)b[4 * i + c];
            se += d * d;
        }
    return se <= 0 ? 99.0 : 10 * log10(255.0 * 255.0 * 3.0 * (double)w * h / se);
}

static double mean_difference(const uint8_t *a, const uint8_t *b, int w, int h)
{
    double sum = 0;
    for (long i = 0; i < (long)w * h; i++)
        for (int c = 0; c < 3; c++)
            sum += fabs((double)a[4 * i + c] - (double)b[4 * i + c]);
    return sum / ((double)w * h * 3);
}

/* ---- The tests ------------------------------------------------------------------ */

static void page_and_token(void **state)
{
    (void)state;
    assert_int_equal(raw_http_status(port, "/?token=" TOKEN), 200);
    assert_int_equal(raw_http_status(port, "/index.html?token=" TOKEN), 200);
    assert_int_equal(raw_http_status(port, "/"), 403);
    assert_int_equal(raw_http_status(port, "/?token=s3cret-Token_1.3"), 403);
    assert_int_equal(raw_http_status(port, "/?token=" TOKEN "x"), 403);
    assert_int_equal(raw_http_status(port, "/secrets?token=" TOKEN), 404);
}

/* JPEG at quality 85, 4:2:0: the mean error of a channel stays small. */
#define JPEG_TOLERANCE 6.0

static void frames_match_the_picture(void **state)
{
    (void)state;
    ws_client *c = ws_client_open(port, TOKEN);
    assert_non_null(c);
    if (!ws_client_wait_frames(c, 5, 30))
        fail_msg("5 frames did not arrive in 30 s (%ld did)", ws_client_frames(c));
    int w = 0, h = 0, rw = 0, rh = 0;
    uint8_t *got = ws_client_decode(c, &w, &h);
    assert_non_null(got);
    assert_int_equal(w, W);
    assert_int_equal(h, H);
    assert_int_equal((int)ws_client_header_number(c, "width"), W);
    assert_int_equal((int)ws_client_header_number(c, "height"), H);
    long frame = (long)ws_client_header_number(c, "frame");
    assert_true(frame >= 0);
    uint8_t *want = reference_of(frame, &rw, &rh);
    assert_non_null(want);
    assert_int_equal(rw, W);
    assert_int_equal(rh, H);
    double diff = mean_difference(got, want, W, H);
    printf("# frame %ld: mean difference %.2f levels from the program's picture\n", frame, diff);
    if (diff > JPEG_TOLERANCE)
        fail_msg("frame %ld differs from the program's picture by %.2f levels on average "
                 "(at most %.1f)", frame, diff, JPEG_TOLERANCE);
    /* The server's estimate of what a page shows (measured on one of the
     * level's frames a second, every other pixel), beside the test's own
     * measure of this frame; -1 where the GPU made the JPEG. */
    double estimate = ws_client_picture_number(c, "psnr"), own = psnr_of(got, want, W, H);
    printf("# PSNR %.2f dB here, the server's estimate %.2f\n", own, estimate);
    if (estimate != -1 && !(estimate > 0 && fabs(estimate - own) <= 3))
        fail_msg("the server's PSNR estimate %.2f dB is not within 3 dB of this frame's %.2f",
                 estimate, own);
    free(got);
    free(want);
    ws_client_close(c);
}

/* The header's fps over the server's time, weighted by how long each value
 * stood. */
typedef struct fps_seen {
    double last_t, weighted, span;
} fps_seen;

static void note_fps(void *user, const uint8_t *m, size_t size)
{
    fps_seen *s = user;
    double t = ws_message_number(m, size, "time"), fps = ws_message_number(m, size, "fps");
    if (fps < 0 || t <= 0)
        return; /* no header with an fps and a time */
    /* Each value is the rate of the time before it: it stands for the
     * time since the header before. Weighted forwards, a value from before
     * a stall (the server sends nothing while it renders nothing) would
     * stand for the stall too. */
    if (s->last_t > 0) {
        s->weighted += fps * (t - s->last_t);
        s->span += t - s->last_t;
    }
    s->last_t = t;
}

/* The header's fps is the program's rendering rate: frames rendered over
 * time, read from the frame numbers the viewer sees over 3 s and the times
 * the server took them (the header's "time"), against the header's fps
 * over the same 3 s. The header gives the rate of the last half second,
 * which swings where the GPU is shared by tests that start and end: its
 * last value alone may be far from the 3 s rate. The server's clock, not
 * the viewer's: on a loaded machine frames arrive late by amounts that
 * vary, and the viewer's clock would count that as rendering. (With tests
 * of three builds on one GPU the header said 20 to 25% more than was
 * rendered, until it weighted each value over the time before it and the
 * server's half second ended at the frame, not at its last close.) */
static void header_fps_is_the_rendering_rate(void **state)
{
    (void)state;
    ws_client *c = ws_client_open(port, TOKEN);
    assert_non_null(c);
    assert_true(ws_client_wait_frames(c, 3, 30));
    ws_client_run(c, 1.0);
    assert_true(ws_client_wait_frames(c, 1, 10));
    fps_seen seen = {0};
    ws_client_on_frame(c, note_fps, &seen);
    double f0 = ws_client_header_number(c, "frame"), t0 = ws_client_header_number(c, "time");
    ws_client_run(c, 3.0);
    assert_true(ws_client_wait_frames(c, 1, 10));
    double f1 = ws_client_header_number(c, "frame"), t1 = ws_client_header_number(c, "time");
    assert_true(t0 > 0 && t1 > t0);
    double rate = (f1 - f0) / (t1 - t0), last = ws_client_header_number(c, "fps");
    double fps = seen.span > 0 ? seen.weighted / seen.span : last;
    printf("# frames %.0f to %.0f in %.2f s: %.1f frames a second; the header says %.1f over "
           "that time (%.1f at its end)\n", f0, f1, t1 - t0, rate, fps, last);
    assert_true(rate > 0);
    if (fabs(fps - rate) > 0.15 * rate + 2)
        fail_msg("the header's fps is %.1f over 3 s; the program renders %.1f frames a second",
                 fps, rate);
    ws_client_close(c);
}

/* A program that renders faster than a display shows (serve_app --rate 0)
 * has at most 80 frames a second copied for its viewers, in bursts of up
 * to 4: a viewer that acks at once gets no more. */
static void copies_at_most_80_a_second(void **state)
{
    (void)state;
    ws_client *c = ws_client_open(port, TOKEN);
    assert_non_null(c);
    assert_true(ws_client_wait_frames(c, 3, 30));
    long got0 = ws_client_frames(c);
    double f0 = ws_client_header_number(c, "frame"), t0 = ws_client_header_number(c, "time");
    ws_client_run(c, 3.0);
    long got = ws_client_frames(c) - got0;
    double f1 = ws_client_header_number(c, "frame"), t1 = ws_client_header_number(c, "time");
    assert_true(t1 > t0);
    double span = t1 - t0, rendered = (f1 - f0) / span;
    printf("# the program renders %.0f frames a second; the viewer got %ld frames in %.2f s\n",
           rendered, got, span);
    if (rendered < 2 * 80)
        skip(); /* too slow here (a sanitizer) for a cap to show */
    if (got > (long)(80 * span) + 5)
        fail_msg("%ld frames in %.2f s: more than 80 a second", got, span);
    assert_true(got >= 3 * (long)span); /* and frames still come */
    ws_client_close(c);
}

/* The program's resident memory, kB; -1 if unknown. */
static long program_rss_kb(void)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", (int)child);
    char *status = read_file(path);
    const char *at = status ? strstr(status, "VmRSS:") : NULL;
    long kb = at ? atol(at + 6) : -1;
    free(status);
    return kb;
}

enum { WINDOW = 2 };

/* What a viewer saw: the most frames it had unacknowledged, by the
 * header's count. */
typedef struct seen {
    int most_unacked;
    long frames;
    long numbers[2]; /* of the first two frames */
} seen;

static void note_frame(void *user, const uint8_t *m, size_t size)
{
    seen *s = user;
    int unacked = (int)ws_message_number(m, size, "unacked");
    if (unacked > s->most_unacked)
        s->most_unacked = unacked;
    if (s->frames < 2)
        s->numbers[s->frames] = (long)ws_message_number(m, size, "frame");
    s->frames++;
}

/* An honest viewer never has more than the window unacknowledged, and its
 * header says what the server measured of its link. */
static void window_and_link_measures(void **state)
{
    (void)state;
    ws_client *c = ws_client_open(port, TOKEN);
    seen got = {0};
    ws_client_on_frame(c, note_frame, &got);
    if (!ws_client_wait_frames(c, 60, 30))
        fail_msg("60 frames did not arrive in 30 s (%ld did)", ws_client_frames(c));
    printf("# %ld frames, at most %d unacknowledged; rtt %.2f ms, %.1f MB/s, window %.0f\n",
           got.frames, got.most_unacked, ws_client_header_number(c, "rtt_ms"),
           ws_client_header_number(c, "throughput") / 1e6, ws_client_header_number(c, "window"));
    assert_true(got.most_unacked >= 1 && got.most_unacked <= WINDOW);
    assert_int_equal((int)ws_client_header_number(c, "window"), WINDOW);
    assert_true(ws_client_header_number(c, "rtt_ms") >= 0);
    /* 0 until a frame big enough to time has crossed the link. */
    assert_true(ws_client_header_number(c, "throughput") >= 0);
    ws_client_close(c);
}

/* A viewer's frames over a span, and the server's: how many frames it
 * got, and how many the server copied for its viewers meanwhile (the
 * header's "copied", from the frames it got): what it could have got,
 * whatever else shares the GPU and the cores. */
typedef struct {
    long got;
    long copied;
} span_frames;

static span_frames span_begin(ws_client *good)
{
    return (span_frames){ws_client_frames(good), (long)ws_client_header_number(good, "copied")};
}

static span_frames span_end(ws_client *good, span_frames begin)
{
    return (span_frames){ws_client_frames(good) - begin.got,
                         (long)ws_client_header_number(good, "copied") - begin.copied};
}

/* The fewest frames a viewer beside hostile ones must get in a span: a
 * quarter of those the server copied in it, and 1 at least. (Not of what
 * the program rendered: nvJPEG's thread encodes apart from the program,
 * and on a GPU shared by many tests a viewer got a third of the frames a
 * program rendered, at times a sixth; nor by the header's fps, which
 * lagged such a GPU: a demo that gave a viewer 7 frames in a second said
 * 36 frames a second then.) */
static long least_frames(span_frames span)
{
    return span.copied / 4 > 1 ? span.copied / 4 : 1;
}

/* A viewer's frames over `seconds` while `other` is run alongside. */
static span_frames frames_beside(ws_client *good, ws_client *other, double seconds)
{
    span_frames begin = span_begin(good);
    double end = now_s() + seconds;
    while (now_s() < end) {
        ws_client_run(good, 0.01);
        if (other)
            ws_client_run(other, 0.01);
    }
    return span_end(good, begin);
}

/* A good viewer and one that never acks, each with its first frames. */
static void open_good_and_silent(ws_client **good, ws_client **bad)
{
    *good = ws_client_open(port, TOKEN);
    *bad = ws_client_open(port, TOKEN);
    ws_client_set_acks(*bad, WS_ACK_NEVER);
    assert_true(ws_client_wait_frames(*good, 3, 30));
    assert_true(ws_client_wait_frames(*bad, 1, 30));
}

/* A viewer that never acks gets the window's frames and no more; a good
 * viewer beside it gets frames as without it. */
static void never_acking_viewer(void **state)
{
    (void)state;
    ws_client *good, *bad;
    open_good_and_silent(&good, &bad);
    span_frames span = frames_beside(good, bad, 2.0);
    long least = least_frames(span);
    printf("# beside a viewer that never acks: %ld frames in 2 s of %ld copied (at least "
           "%ld); it got %ld\n", span.got, span.copied, least, ws_client_frames(bad));
    assert_true(span.got >= least);
    assert_int_equal(ws_client_frames(bad), WINDOW);
    assert_false(ws_client_closed(bad));
    /* Once it acks, frames come again. */
    ws_client_set_acks(bad, WS_ACK_EACH);
    char ack[64];
    snprintf(ack, sizeof ack, "ack %.0f 0\n", ws_client_header_number(bad, "frame"));
    ws_client_send(bad, ack);
    if (!ws_client_wait_frames(bad, 10, 10))
        fail_msg("after its ack the viewer got %ld frames", ws_client_frames(bad));
    ws_client_close(bad);
    ws_client_close(good);
}

/* Acks of frames never sent, and acks that lie, close that viewer alone;
 * acks out of order are taken (the later one counts). */
static void lying_acks(void **state)
{
    (void)state;
    static const char *const lies[] = {
        "ack 99999999 0\n",   /* not sent yet */
        "ack %.0f -5\n",      /* held for negative time */
        "ack %.0f 1e9\n",     /* held for 11 days */
        "ack %.0f\n",         /* no time */
        "ack frame 0\n",
        "ack %.0f 0 extra\n",
    };
    ws_client *good = ws_client_open(port, TOKEN);
    assert_true(ws_client_wait_frames(good, 2, 30));
    for (size_t i = 0; i < sizeof lies / sizeof lies[0]; i++) {
        ws_client *bad = ws_client_open(port, TOKEN);
        ws_client_set_acks(bad, WS_ACK_NEVER);
        assert_true(ws_client_wait_frames(bad, 1, 30));
        char line[64];
        snprintf(line, sizeof line, lies[i], ws_client_header_number(bad, "frame"));
        ws_client_send(bad, line);
        for (double end = now_s() + 2.0; !ws_client_closed(bad) && now_s() < end;)
            ws_client_run(bad, 0.02);
        if (!ws_client_closed(bad))
            fail_msg("'%.*s' did not close the viewer", (int)strlen(line) - 1, line);
        ws_client_close(bad);
    }
    /* Out of order: the second frame's ack, then the first's. */
    ws_client *odd = ws_client_open(port, TOKEN);
    seen got = {0};
    ws_client_on_frame(odd, note_frame, &got);
    ws_client_set_acks(odd, WS_ACK_NEVER);
    assert_true(ws_client_wait_frames(odd, WINDOW, 30));
    assert_true(got.numbers[1] > got.numbers[0]);
    char acks[96];
    snprintf(acks, sizeof acks, "ack %ld 1\nack %ld 2\n", got.numbers[1], got.numbers[0]);
    ws_client_send(odd, acks);
    assert_true(ws_client_wait_frames(odd, 1, 10));
    assert_false(ws_client_closed(odd));
    ws_client_close(odd);
    span_frames after = frames_beside(good, NULL, 1.0);
    long least = least_frames(after);
    printf("# after the lying viewers: %ld frames in 1 s of %ld copied\n", after.got,
           after.copied);
    if (after.got < least)
        fail_msg("after the lying viewers a viewer got %ld frames in 1 s of %ld copied, fewer "
                 "than %ld", after.got, after.copied, least);
    ws_client_close(good);
}

/* `bad` sends `flood` (n bytes) as often as it can for `seconds` while
 * `good` watches: the messages sent, and `good`'s frames. */
static long flood_acks(ws_client *bad, ws_client *good, const char *flood, double seconds,
                       span_frames *got)
{
    double end = now_s() + seconds;
    span_frames begin = span_begin(good);
    long messages = 0;
    while (now_s() < end && !ws_client_closed(bad)) {
        while (ws_client_send(bad, flood))
            messages++;
        ws_client_run(bad, 0.002);
        ws_client_run(good, 0.002);
    }
    *got = span_end(good, begin);
    return messages;
}

/* A viewer flooding acks (every line valid, all but the first stale):
 * a good viewer still gets frames, the program's memory stays. The memory
 * over two floods of 3 s: what a flood keeps (its messages, about 10 MB
 * each) grows in both, where the encoder's own buffers grow once when they
 * do (nvJPEG's, by 16 MB where three test builds shared the GPU). */
static void ack_floods(void **state)
{
    (void)state;
    ws_client *good, *bad;
    open_good_and_silent(&good, &bad);
    long rss0 = program_rss_kb();
    char flood[4000];
    size_t n = 0;
    double frame = ws_client_header_number(bad, "frame");
    while (n + 24 < sizeof flood)
        n += (size_t)snprintf(flood + n, sizeof flood - n, "ack %.0f 0\n", frame);
    span_frames got;
    long messages = flood_acks(bad, good, flood, 3.0, &got);
    long rss1 = program_rss_kb();
    printf("# %ld messages of %zu bytes of acks in 3 s; the good viewer got %ld frames of %ld "
           "copied; the program's memory %ld kB, then %ld kB\n", messages, n, got.got,
           got.copied, rss0, rss1);
    assert_false(ws_client_closed(bad));
    assert_true(messages > 100);
    assert_true(got.got >= least_frames(got));
    /* A demo's own memory moves with its GPU work; serve_app's does not. */
    if (!demo_mode) {
        long again = flood_acks(bad, good, flood, 3.0, &got), rss2 = program_rss_kb();
        printf("# %ld messages more in 3 s; the good viewer got %ld frames of %ld copied; "
               "the program's memory %ld kB\n", again, got.got, got.copied, rss2);
        assert_false(ws_client_closed(bad));
        assert_true(got.got >= least_frames(got));
        assert_true(rss0 > 0 && rss1 > 0 && rss2 > 0);
        if (rss1 - rss0 >= 64 * 1024 || rss2 - rss1 >= 4 * 1024)
            fail_msg("the program's memory grew by %ld kB over the first flood (%ld messages) "
                     "and %ld kB over the second (%ld): at most 65536 and 4096",
                     rss1 - rss0, messages, rss2 - rss1, again);
    }
    ws_client_close(bad);
    ws_client_close(good);
}

static void bad_token_is_refused(void **state)
{
    (void)state;
    ws_client *c = ws_client_open(port, "wrong");
    assert_non_null(c);
    assert_false(ws_client_wait_open(c, 10));
    assert_int_equal(ws_client_frames(c), 0);
    ws_client_close(c);
    c = ws_client_open(port, NULL);
    assert_false(ws_client_wait_open(c, 10));
    ws_client_close(c);
}

/* Every refused upgrade is answered with an HTTP status, and none opens
 * a WebSocket: the token first, then the subprotocol, then the path. */
static void refused_upgrades_get_a_status(void **state)
{
    (void)state;
    static const struct {
        const char *path, *token, *subprotocols;
        int status;
    } cases[] = {
        {"/ws", NULL, "cugl-frames", 403},
        {"/ws", "wrong", "cugl-frames", 403},
        {"/ws", TOKEN "x", "cugl-frames", 403},
        {"/ws", NULL, NULL, 403},
        {"/ws", TOKEN, NULL, 400},
        {"/ws", TOKEN, "", 400},
        {"/ws", TOKEN, "chat", 400},
        {"/ws", TOKEN, "cugl-frames-2, chat", 400},
        {"/ws", "wrong", "chat", 403},
        {"/other", TOKEN, "cugl-frames", 404},
        {"/", TOKEN, "cugl-frames", 404},
        {"/ws", TOKEN, "chat, cugl-frames", 101},
        {"/ws", TOKEN, "cugl-frames", 101},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int fd = raw_connect(port);
        assert_true(fd >= 0);
        int got = raw_upgrade_to(fd, cases[i].path, cases[i].token, cases[i].subprotocols);
        if (got != cases[i].status)
            fail_msg("upgrade to %s, token %s, subprotocols \"%s\": HTTP %d, want %d",
                     cases[i].path, cases[i].token ? cases[i].token : "(none)",
                     cases[i].subprotocols ? cases[i].subprotocols : "(no header)", got,
                     cases[i].status);
        /* A refusal ends the connection; nothing is sent as a WebSocket. */
        if (got != 101)
            assert_true(raw_closed_by_peer(fd, 5));
        close(fd);
    }
}

static void several_viewers(void **state)
{
    (void)state;
    ws_client *c[3];
    for (int i = 0; i < 3; i++) {
        c[i] = ws_client_open(port, TOKEN);
        assert_non_null(c[i]);
    }
    double end = now_s() + 30;
    bool all = false;
    while (!all && now_s() < end) {
        all = true;
        for (int i = 0; i < 3; i++) {
            ws_client_run(c[i], 0.05);
            all = all && ws_client_frames(c[i]) >= 3;
        }
    }
    for (int i = 0; i < 3; i++) {
        if (ws_client_frames(c[i]) < 3)
            fail_msg("viewer %d got %ld frames of 3", i, ws_client_frames(c[i]));
        ws_client_close(c[i]);
    }
}

/* A drag from (40, 40) to (120, 80): the orbit camera turns. */
static const char drag[] = "0 move 40 40\n0 button left down\n0 move 60 50\n0 move 80 60\n"
                           "0 move 100 70\n0 move 120 80\n0 button left up\n";

/* Messages of each kind a viewer got: with a picture, and headers alone. */
typedef struct message_kinds {
    long pictures, headers;
} message_kinds;

static void count_kinds(void *user, const uint8_t *m, size_t size)
{
    message_kinds *k = user;
    if (size < 4)
        return;
    size_t n = (size_t)m[0] | (size_t)m[1] << 8 | (size_t)m[2] << 16 | (size_t)m[3] << 24;
    if (n + 4 >= size)
        k->headers++;
    else
        k->pictures++;
}

/* Sent line by line, as a page sends it, a frame apart. */
static void send_lines(ws_client *c, const char *text)
{
    char lines[256];
    snprintf(lines, sizeof lines, "%s", text);
    for (char *line = strtok(lines, "\n"); line; line = strtok(NULL, "\n")) {
        char msg[64];
        snprintf(msg, sizeof msg, "%s\n", line);
        ws_client_send(c, msg);
        ws_client_run(c, 0.05);
    }
}

/* serve_app's picture stands still until input turns the view: once the
 * viewer has it (and a better level of it, where its link has room), it
 * gets headers alone; a changed picture comes again. The server's test for
 * "still" is a hash of the picture: the pixels' on the CPU encoder, a GL
 * compute shader's with nvJPEG. serve_app's alone: a demo's picture moves. */
static void still_picture_is_sent_once(void **state)
{
    (void)state;
    ws_client *c = ws_client_open(port, TOKEN);
    assert_non_null(c);
    message_kinds k = {0};
    ws_client_on_frame(c, count_kinds, &k);
    assert_true(ws_client_wait_frames(c, 3, 30));
    /* The better levels come as the link is measured: until a second
     * passes without a picture (2 s at least; at most 10: a picture sent
     * every frame never ends them, and fails below). Under TSan they took
     * more than 2 s, and came more than half a second apart. */
    double settle = now_s() + 10;
    ws_client_run(c, 2.0);
    message_kinds before;
    do {
        before = k;
        ws_client_run(c, 1.0);
    } while (k.pictures > before.pictures && now_s() < settle);
    before = k;
    ws_client_run(c, 1.5);
    long pictures = k.pictures - before.pictures, headers = k.headers - before.headers;
    printf("# still: %ld pictures and %ld headers alone in 1.5 s\n", pictures, headers);
    if (headers < 20 || pictures > 2)
        fail_msg("a still picture: %ld pictures and %ld headers alone in 1.5 s (at most 2, and "
                 "at least 20)", pictures, headers);
    /* The drag's pictures: 3 at least, within 5 s (a loaded machine
     * renders slowly; a still picture's stream would send none). */
    before = k;
    send_lines(c, drag);
    double turned = now_s(), waited;
    do {
        ws_client_run(c, 0.1);
        pictures = k.pictures - before.pictures;
        waited = now_s() - turned;
    } while (pictures < 3 && waited < 5);
    printf("# after a drag: %ld pictures in %.1f s\n", pictures, waited);
    if (pictures < 3)
        fail_msg("the view turned, and the viewer got %ld pictures in %.1f s", pictures, waited);
    assert_false(ws_client_closed(c));
    ws_client_close(c);
}

static void input_reaches_the_program(void **state)
{
    (void)state;
    ws_client *c = ws_client_open(port, TOKEN);
    assert_true(ws_client_wait_frames(c, 2, 30));
    send_lines(c, drag);
    ws_client_run(c, 0.5);
    if (!demo_mode) {
        /* The board follows the view: frames after the drag differ from the
         * picture before it. */
        double diff = 0, end = now_s() + 10;
        int w, h, rw, rh;
        uint8_t *want = reference_of(0, &rw, &rh);
        assert_non_null(want);
        while (diff < 3 * JPEG_TOLERANCE && now_s() < end) {
            ws_client_wait_frames(c, 1, 5);
            uint8_t *got = ws_client_decode(c, &w, &h);
            if (got && w == rw && h == rh)
                diff = mean_difference(got, want, w, h);
            free(got);
        }
        free(want);
        printf("# after the drag: mean difference %.2f levels\n", diff);
        assert_true(diff >= 3 * JPEG_TOLERANCE);
        char *out = read_file(tmp_path("out.txt"));
        assert_non_null(out);
        assert_non_null(strstr(out, "\nview "));
        free(out);
    }
    assert_false(ws_client_closed(c));
    ws_client_close(c);
}

static void hostile_clients_lose_only_themselves(void **state)
{
    (void)state;
    /* Garbage instead of HTTP. */
    int fd = raw_connect(port);
    assert_true(fd >= 0);
    char garbage[4096];
    srand(7);
    for (size_t i = 0; i < sizeof garbage; i++)
        garbage[i] = (char)rand();
    (void)!send(fd, garbage, sizeof garbage, MSG_NOSIGNAL);
    assert_true(raw_closed_by_peer(fd, 10));
    close(fd);

    /* After an upgrade: an oversized message, a line that is no event, a
     * binary message, a close event, an event of a bad resize. */
    static const struct {
        int opcode;
        uint64_t claimed;
        const char *payload;
    } bad[] = {
        {1, 1u << 20, "0 move 1 1\n"},
        {1, 0, "hello, server"},
        {2, 0, "0 move 1 1"},
        {1, 0, "0 close"},
        {1, 0, "0 resize 100000 100000"},
        {1, 0, "0 move 1e300 5"},
        {9 /* ping */, 0, "0123456789012345678901234567890123456789012345678901234567890123456789"
                          "01234567890123456789012345678901234567890123456789012345678901234567"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        fd = raw_connect(port);
        assert_true(fd >= 0);
        assert_int_equal(raw_upgrade(fd, TOKEN), 101);
        size_t len = strlen(bad[i].payload);
        raw_send_frame(fd, bad[i].opcode, bad[i].claimed ? bad[i].claimed : len, bad[i].payload,
                       len);
        if (bad[i].claimed) { /* and keep sending, up to the claim */
            static char filler[65536];
            memset(filler, '0', sizeof filler);
            for (int k = 0; k < 20 && send(fd, filler, sizeof filler, MSG_NOSIGNAL) > 0; k++)
                ;
        }
        if (!raw_closed_by_peer(fd, 10))
            fail_msg("bad message %zu (opcode %d, '%.20s') did not end its connection", i,
                     bad[i].opcode, bad[i].payload);
        close(fd);
    }

    /* Many connections opened and dropped, some halfway through the upgrade. */
    for (int i = 0; i < 200; i++) {
        fd = raw_connect(port);
        if (fd < 0)
            fail_msg("connection %d was not accepted", i);
        if (i % 3 == 1)
            (void)!send(fd, "GET /ws?token=" TOKEN " HTTP/1.1\r\nUpgr", 40, MSG_NOSIGNAL);
        else if (i % 3 == 2)
            raw_upgrade(fd, TOKEN);
        close(fd);
    }
    assert_true(program_alive());

    /* A viewer still gets frames. */
    ws_client *c = ws_client_open(port, TOKEN);
    if (!ws_client_wait_frames(c, 3, 30))
        fail_msg("after the hostile clients a viewer got %ld frames of 3", ws_client_frames(c));
    ws_client_close(c);
}

/* Escape closes a program where its window reports it; a viewer's Escape
 * (the page sends it, and leaves full-window mode with it) is not passed
 * on, as a viewer's close is refused: the program goes on, the viewer too. */
static void viewer_escape_does_not_close(void **state)
{
    (void)state;
    ws_client *c = ws_client_open(port, TOKEN);
    assert_true(ws_client_wait_frames(c, 2, 30));
    ws_client_send(c, "0 key escape down\n0 key escape up\n");
    ws_client_send(c, "0 key 256 down\n");
    long before = ws_client_frames(c);
    if (!ws_client_wait_frames(c, before + 10, 30) || !program_alive())
        fail_msg("after a viewer's Escape the program %s; the viewer got %ld frames more",
                 program_alive() ? "runs" : "ended", ws_client_frames(c) - before);
    assert_false(ws_client_closed(c));
    ws_client_send(c, "0 key 256 up\n");
    ws_client_close(c);
}

/* One viewer's flood of events loses that viewer alone: each has its share
 * of the events waiting for a present (CUGL_APP_EVENT_MAX_PENDING over
 * CUGL_APP_SERVE_MAX_VIEWERS), where before a flooder filled the queue and
 * whoever pushed next was sent away. Moves merge, so a burst of them is
 * no flood. */
static void event_floods_lose_only_the_flooder(void **state)
{
    (void)state;
    ws_client *good = ws_client_open(port, TOKEN), *moves = ws_client_open(port, TOKEN);
    assert_true(ws_client_wait_frames(good, 2, 30));
    assert_true(ws_client_wait_frames(moves, 2, 30));
    /* 12 messages of 363 scrolls: 4,356 events, more than the context takes
     * between two presents. */
    static char scrolls[363 * 11 + 1], glide[280 * 14 + 1];
    for (int i = 0; i < 363; i++)
        memcpy(scrolls + 11 * i, "0 scroll 1\n", 11);
    for (int i = 0; i < 280; i++)
        snprintf(glide + 14 * i, 15, "0 move %d %d\n", 100 + i, 10 + i % 80);
    for (int round = 0; round < 3; round++) {
        ws_client *bad = ws_client_open(port, TOKEN);
        assert_true(ws_client_wait_open(bad, 30));
        for (int m = 0; m < 12 && !ws_client_closed(bad); m++)
            ws_client_send(bad, scrolls);
        ws_client_send(moves, glide); /* 280 moves at once */
        for (int k = 0; k < 20; k++) { /* and a move each 10 ms, as a hand */
            char line[64];
            snprintf(line, sizeof line, "0 move %d %d\n", 10 + k, 20 + k);
            ws_client_send(good, line);
            ws_client_run(good, 0.005);
            ws_client_run(bad, 0.005);
            ws_client_run(moves, 0.001);
        }
        double end = now_s() + 10;
        while (!ws_client_closed(bad) && now_s() < end)
            ws_client_run(bad, 0.05);
        if (!ws_client_closed(bad))
            fail_msg("round %d: a viewer that sent 4,356 events at once stays", round);
        ws_client_close(bad);
        if (ws_client_closed(good) || ws_client_closed(moves))
            fail_msg("round %d: beside a flood, a viewer of %s was sent away", round,
                     ws_client_closed(good) ? "a move each 10 ms" : "280 moves at once");
    }
    long got = ws_client_frames(good);
    if (!ws_client_wait_frames(good, got + 5, 30))
        fail_msg("after the floods the viewer got %ld frames more", ws_client_frames(good) - got);
    assert_true(program_alive());
    ws_client_close(moves);
    ws_client_close(good);
}

/* The JSON of the first message with a picture. */
static void grab_picture_header(void *user, const uint8_t *m, size_t size)
{
    char *out = user;
    if (out[0] || size < 4)
        return;
    size_t n = (size_t)m[0] | (size_t)m[1] << 8 | (size_t)m[2] << 16 | (size_t)m[3] << 24;
    if (n + 4 >= size || n >= 4096)
        return; /* a header alone, or too long */
    memcpy(out, m + 4, n);
    out[n] = '\0';
}

/* The program names its encoder and why; frames say the same. */
static void encoder_is_named(void **state)
{
    (void)state;
    char *out = read_file(tmp_path("out.txt"));
    assert_non_null(out);
    /* serve_app: "encoder: NAME (why)"; a demo: "PROGRAM: JPEG by NAME: why". */
    const char *at = strstr(out, demo_mode ? "JPEG by " : "encoder: ");
    if (!at)
        fail_msg("the program does not name its encoder:\n%s", out);
    char name[32] = "", why[256] = "";
    if (demo_mode)
        assert_int_equal(sscanf(at, "JPEG by %31[^:]: %255[^\n]", name, why), 2);
    else
        assert_int_equal(sscanf(at, "encoder: %31s (%255[^)\n]", name, why), 2);
    printf("# encoder %s: %s\n", name, why);
    assert_true(strcmp(name, "gl-compute") == 0 || strcmp(name, "nvjpeg") == 0 ||
                strcmp(name, "libjpeg-turbo") == 0);
    assert_true(strlen(why) > 10);
    free(out);
    /* A picture's header names the same encoder. */
    char header[4096] = "";
    ws_client *c = ws_client_open(port, TOKEN);
    ws_client_on_frame(c, grab_picture_header, header);
    double end = now_s() + 30;
    while (!header[0] && now_s() < end && !ws_client_closed(c))
        ws_client_run(c, 0.05);
    ws_client_close(c);
    char want[64];
    snprintf(want, sizeof want, "\"encoder\":\"%s\"", name);
    if (!strstr(header, want))
        fail_msg("a picture's header has not %s: %.300s", want, header);
    /* And how close the picture is: libjpeg-turbo's JPEGs are measured;
     * a GPU's say why not. */
    const char *psnr = strstr(header, "\"psnr\":");
    assert_non_null(psnr);
    double db = atof(psnr + 7);
    printf("# the header's PSNR: %.300s\n", psnr);
    if (strcmp(name, "libjpeg-turbo") == 0)
        assert_true(db > 15 && db < 100);
    else
        assert_true(db == -1 && strstr(header, "\"psnr_why\":\"the GPU makes these JPEGs"));
}

static void exits_cleanly(void **state)
{
    (void)state;
    int rc = stop_program();
    assert_int_equal(rc, 0);
    char *out = read_file(tmp_path("out.txt"));
    assert_non_null(out);
    if (demo_mode) {
        /* The drag entered the demo's input as a window's would. */
        char *input = read_file(tmp_path("input.txt"));
        assert_non_null(input);
        assert_non_null(strstr(input, " button left down"));
        assert_non_null(strstr(input, " move 120 80"));
        assert_non_null(strstr(input, " button left up"));
        free(input);
    } else {
        long encoded = 0, sent = 0, dropped = 0;
        const char *at = strstr(out, "frames encoded");
        assert_non_null(at);
        assert_int_equal(sscanf(at, "frames encoded %ld, sent %ld, dropped %ld", &encoded, &sent,
                                &dropped), 3);
        printf("# frames encoded %ld, sent %ld, dropped %ld\n", encoded, sent, dropped);
        assert_true(encoded > 0 && sent > 0);
    }
    free(out);
}

static void remove_dir(const char *path)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", path);
}

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[1], "app") != 0 && strcmp(argv[1], "demo") != 0 &&
                     strcmp(argv[1], "unpaced") != 0 && strcmp(argv[1], "encoder") != 0)) {
        printf("usage: %s app SERVE_APP [ARGS...] | encoder SERVE_APP [ARGS...] | "
               "unpaced SERVE_APP [ARGS...] | demo CUGL_DEMO [--every-case] [ARGS...]\n",
               argv[0]);
        return 99;
    }
    demo_mode = strcmp(argv[1], "demo") == 0;
    /* serve_app as fast as it can renders: the copies' cap. */
    bool unpaced = strcmp(argv[1], "unpaced") == 0;
    /* serve_app with another encoder (ARGS name it), where the server's
     * own cases ran already with the first (a sanitized build's): the
     * cases of the program alone, as for a demo. */
    bool encoder_only = strcmp(argv[1], "encoder") == 0;
    binary = argv[2];
    bool every = !encoder_only &&
                 (!demo_mode || (argc > 3 && strcmp(argv[3], "--every-case") == 0));
    int first_extra = demo_mode && every ? 4 : 3;
    extra_args = argv + first_extra;
    extra_count = argc - first_extra;
    const char *base = strrchr(binary, '/');
    base = base ? base + 1 : binary;
    demo_name = strncmp(base, "cugl-", 5) == 0 ? base + 5 : base;
    signal(SIGPIPE, SIG_IGN);
    int devices = 0;
    if (demo_mode && (cugl_device_count(&devices) != CUGL_OK || devices == 0))
        cugl_test_skip_all("no CUDA device for the demo");
    app_test_dir_make("cugl-serve");
    if (demo_mode)
        mkdir(tmp_path("record"), 0755);
    port = start_program();
    if (port == 0) {
        /* Its own words say why: "...: skipped: REASON". */
        char *out = read_file(tmp_path("out.txt")), why[512] = "the program cannot run here";
        const char *at = out ? strstr(out, "skipped: ") : NULL;
        if (at)
            snprintf(why, sizeof why, "%.*s", (int)strcspn(at + 9, "\n"), at + 9);
        free(out);
        remove_dir(app_test_dir);
        cugl_test_skip_all(why);
    }
    /* The server's own cases (acks, windows, floods: seconds of waiting
     * each) are the same whoever feeds it frames: serve_app always runs
     * them, a demo where --every-case asks (meson: one demo on each path);
     * the cases of the program itself run for every demo. */
    const struct CMUnitTest every_case[] = {
        cmocka_unit_test(page_and_token),
        cmocka_unit_test(frames_match_the_picture),
        cmocka_unit_test(header_fps_is_the_rendering_rate),
        cmocka_unit_test(window_and_link_measures),
        cmocka_unit_test(never_acking_viewer),
        cmocka_unit_test(lying_acks),
        cmocka_unit_test(ack_floods),
        cmocka_unit_test(bad_token_is_refused),
        cmocka_unit_test(refused_upgrades_get_a_status),
        cmocka_unit_test(several_viewers),
        cmocka_unit_test(still_picture_is_sent_once),
        cmocka_unit_test(input_reaches_the_program),
        cmocka_unit_test(hostile_clients_lose_only_themselves),
        cmocka_unit_test(event_floods_lose_only_the_flooder),
        cmocka_unit_test(viewer_escape_does_not_close),
        cmocka_unit_test(encoder_is_named),
        cmocka_unit_test(exits_cleanly),
    };
    /* Every case, less the still picture's for a demo (it would skip, and
     * under CUGL_TEST_NO_SKIP a skip fails). */
    struct CMUnitTest cases[sizeof every_case / sizeof every_case[0]];
    size_t count = 0;
    for (size_t i = 0; i < sizeof every_case / sizeof every_case[0]; i++)
        if (!demo_mode || every_case[i].test_func != still_picture_is_sent_once)
            cases[count++] = every_case[i];
    const struct CMUnitTest program_cases[] = {
        cmocka_unit_test(page_and_token),
        cmocka_unit_test(frames_match_the_picture),
        cmocka_unit_test(header_fps_is_the_rendering_rate),
        cmocka_unit_test(several_viewers),
        cmocka_unit_test(input_reaches_the_program),
        cmocka_unit_test(hostile_clients_lose_only_themselves),
        cmocka_unit_test(viewer_escape_does_not_close),
        cmocka_unit_test(encoder_is_named),
        cmocka_unit_test(exits_cleanly),
    };
    const struct CMUnitTest unpaced_cases[] = {
        cmocka_unit_test(copies_at_most_80_a_second),
        cmocka_unit_test(exits_cleanly),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    int failed = unpaced ? cmocka_run_group_tests_name("unpaced", unpaced_cases, NULL, NULL)
                 : !every
                     ? cmocka_run_group_tests_name("program", program_cases, NULL, NULL)
                     : _cmocka_run_group_tests("every case", cases, count, NULL, NULL);
    if (child > 0)
        stop_program();
    if (failed == 0)
        remove_dir(app_test_dir);
    else
        fprintf(stderr, "the files are in %s\n", app_test_dir);
    return failed;
}
