/*
 * cugl-nbody --mpi on a GPU machine, its ranks started by run_mpi.sh:
 *
 *   - 1, 2 and 4 ranks sharing one GPU (and 2 ranks on two GPUs, where
 *     there are two), on each --interop path for 2 ranks: the positions
 *     after the last step (--dump-vertices, rank 0) equal one process's
 *     bit for bit, the kernel being the same for every body whatever its
 *     slice; and rank 0's picture (--screenshot) equals one process's. The
 *     picture is bit for bit where GL's additive blend is the same
 *     arithmetic split or whole: one process adds rank 1's sprites onto
 *     rank 0's, the composite adds the two sums, which are the same
 *     integers where the blender adds each sprite's rounded light to the
 *     8-bit value stored (GL does not promise it). blend_splits_exactly
 *     asks this GPU: it blends a gradient of sprites' light onto two
 *     backgrounds. Where it splits exactly the picture must be equal bit
 *     for bit; elsewhere each channel within BLEND_LEVELS levels, on at
 *     most 1 pixel in 100 (the counts are printed either way);
 *   - input replayed on rank 0 (--input: a drag and the wheel) moves every
 *     rank's view: the picture and the --view printed at the end are one
 *     process's with the same input, and differ from the picture without;
 *   - the ranks take GPUs by local rank, or all the --device given;
 *   - --bench: the job's rates, the composite's and the exchange's times
 *     and bytes (printed here as the figures of this GPU);
 *   - --serve on rank 0 alone: one "serving on" line, the page answers;
 *   - a rank killed in the frames ends the job soon (mpirun's doing); a
 *     rank stopped (SIGSTOP) as it starts makes the others give up after
 *     --mpi-timeout with a message naming the step, and end the job.
 *
 * Skipped (77) without a CUDA device with headless GL, or without mpirun.
 * usage: test_nbody_mpi RUN_MPI MPIRUN CUGL_NBODY
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <glad/gl.h>

#include <cugl/app.h>

#include "cugl_test.h"

#include "run_demo.h"

extern char **environ;

enum { W = 192, H = 144, FRAMES = 6, BODIES = 4500, BLEND_LEVELS = 2 };
#define BODIES_TEXT "4500" /* 9 tiles of 512: 4 ranks take 2, 2, 2 and 3 */

static const char *run_mpi, *mpirun, *nbody;
static int devices;
static bool blend_exact; /* blend_splits_exactly found it so */

/* --- Running jobs ----------------------------------------------------------------- */

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

/* run_mpi.sh MPIRUN ranks nbody --mpi args..., in a process group of its
 * own, stdout and stderr into `out`. */
static pid_t start_job(int ranks, const char *const *args, const char *out)
{
    char count[16];
    snprintf(count, sizeof count, "%d", ranks);
    char *argv[48] = {(char *)run_mpi, (char *)mpirun, count, (char *)nbody, "--mpi"};
    int n = 5;
    fprintf(stderr, "running mpirun -np %d %s --mpi", ranks, nbody);
    for (; *args; args++) {
        assert_true(n + 1 < (int)(sizeof argv / sizeof argv[0]));
        argv[n++] = (char *)*args;
        fprintf(stderr, " %s", *args);
    }
    fprintf(stderr, "\n");
    fflush(NULL);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out, O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    pid_t pid;
    int e = posix_spawn(&pid, run_mpi, &actions, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (e != 0)
        fail_msg("cannot run %s: %s", run_mpi, strerror(e));
    return pid;
}

/* The job's exit status, or -1 (the job killed) when it runs past `limit` s. */
static int wait_job(pid_t pid, double limit)
{
    double end = now_s() + limit;
    int status;
    for (;;) {
        pid_t got = waitpid(pid, &status, WNOHANG);
        if (got == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (got < 0 && errno != EINTR)
            fail_msg("waitpid: %s", strerror(errno));
        if (now_s() > end) {
            kill(-pid, SIGKILL);
            waitpid(pid, &status, 0);
            return -1;
        }
        sleep_s(0.05);
    }
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return calloc(1, 1);
    char *buf = malloc(1 << 20);
    assert_non_null(buf);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* Print the job's output as TAP comments. */
static void show(const char *path)
{
    char *text = read_text(path);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
        printf("#   %s\n", line);
    free(text);
}

/* A job of `ranks` that must exit 0 within 300 s; its output in `out`. */
static void run_job(int ranks, const char *const *args, const char *out)
{
    int rc = wait_job(start_job(ranks, args, out), 300);
    if (rc != 0) {
        show(out);
        fail_msg("mpirun -np %d %s --mpi ... %s", ranks, nbody,
                 rc < 0 ? "did not end within 300 s" : "failed");
    }
}

/* Wait until `out` holds `text`, at most `limit` s; the text from there. */
static char *wait_for(const char *out, const char *text, double limit, pid_t job)
{
    double end = now_s() + limit;
    for (;;) {
        char *all = read_text(out);
        char *at = strstr(all, text);
        if (at) {
            char *copy = strdup(at);
            free(all);
            return copy;
        }
        free(all);
        /* A job that ended will not print it: say so now, not at the limit. */
        int status;
        if (waitpid(job, &status, WNOHANG) == job) {
            show(out);
            fail_msg("the job ended (exit status %d) before \"%s\" appeared",
                     WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), text);
        }
        if (now_s() > end)
            break;
        sleep_s(0.1);
    }
    kill(-job, SIGKILL); /* no job outlives the test */
    waitpid(job, NULL, 0);
    show(out);
    fail_msg("\"%s\" did not appear within %.0f s", text, limit);
    return NULL;
}

/* --- Pictures and positions ------------------------------------------------------- */

/* One process's run: its picture and positions. */
static void one_process(const char *interop, const char *tag, const char *input)
{
    const char *extra[] = {"--bodies", BODIES_TEXT, "--dump-vertices",
                           run_demo_path("one-%s-%s.pos", interop, tag),
                           input ? "--input" : NULL, input, NULL};
    int rc = run_demo_to(nbody,
                         (const char *const[]){"--headless", "--frames", "6", "--size",
                                               "192x144", "--interop", interop, "--screenshot",
                                               run_demo_path("one-%s-%s.png", interop, tag),
                                               extra[0], extra[1], extra[2], extra[3],
                                               extra[4], extra[5], NULL},
                         run_demo_path("one-%s-%s.txt", interop, tag));
    if (rc != 0) {
        show(run_demo_path("one-%s-%s.txt", interop, tag));
        fail_msg("one process, --interop %s: exit status %d", interop, rc);
    }
}

/* The same on `ranks` ranks. */
static void on_ranks(int ranks, const char *interop, const char *tag, const char *input)
{
    run_job(ranks,
            (const char *const[]){"--headless", "--frames", "6", "--size", "192x144",
                                  "--interop", interop, "--bodies", BODIES_TEXT, "--screenshot",
                                  run_demo_path("mpi-%s-%s.png", interop, tag), "--dump-vertices",
                                  run_demo_path("mpi-%s-%s.pos", interop, tag),
                                  input ? "--input" : NULL, input, NULL},
            run_demo_path("mpi-%s-%s.txt", interop, tag));
}

/* Rank 0's picture against one process's: bit for bit where the blend
 * splits exactly, else within BLEND_LEVELS on 1 pixel in 100 at most. */
static void same_picture(const char *got_path, const char *want_path, const char *what)
{
    uint8_t *got = run_demo_read_png(got_path, W, H), *want = run_demo_read_png(want_path, W, H);
    long differ = 0, lit = 0;
    int worst = 0;
    for (long i = 0; i < (long)W * H; i++) {
        int d = 0;
        for (int c = 0; c < 4; c++) {
            int diff = abs(got[4 * i + c] - want[4 * i + c]);
            d = diff > d ? diff : d;
        }
        differ += d > 0;
        worst = d > worst ? d : worst;
        lit += want[4 * i] + want[4 * i + 1] + want[4 * i + 2] > 30;
    }
    printf("# %s: %ld of %ld pixels differ (the worst by %d levels); %ld pixels lit\n", what,
           differ, (long)W * H, worst, lit);
    free(got);
    free(want);
    if (lit < 100)
        fail_msg("%s: the reference lights only %ld pixels: the test sees no galaxies", what,
                 lit);
    if (blend_exact && differ)
        fail_msg("%s: %ld pixels differ from one process's picture, where this GPU's blend "
                 "splits exactly",
                 what, differ);
    if (worst > BLEND_LEVELS || differ * 100 > (long)W * H)
        fail_msg("%s: %ld pixels differ, the worst by %d levels (at most %d levels on 1 pixel "
                 "in 100)",
                 what, differ, worst, BLEND_LEVELS);
}

static void same_positions(const char *got_path, const char *want_path, const char *what)
{
    float *got = run_demo_read_floats(got_path, (size_t)BODIES * 4);
    float *want = run_demo_read_floats(want_path, (size_t)BODIES * 4);
    long differ = 0;
    for (long i = 0; i < BODIES; i++)
        differ += memcmp(got + 4 * i, want + 4 * i, 4 * sizeof(float)) != 0;
    free(got);
    free(want);
    if (differ)
        fail_msg("%s: %ld of %d bodies are not where one process puts them", what, differ,
                 BODIES);
}

/* `ranks` ranks against one process on `interop`. */
static void ranks_equal_one_process(int ranks, const char *interop)
{
    char tag[16], what[96];
    snprintf(tag, sizeof tag, "%d", ranks);
    one_process(interop, "ref", NULL);
    on_ranks(ranks, interop, tag, NULL);
    snprintf(what, sizeof what, "%d ranks, --interop %s", ranks, interop);
    same_positions(run_demo_path("mpi-%s-%s.pos", interop, tag),
                   run_demo_path("one-%s-ref.pos", interop), what);
    same_picture(run_demo_path("mpi-%s-%s.png", interop, tag),
                 run_demo_path("one-%s-ref.png", interop), what);
}

/* --- The blend probe -------------------------------------------------------------- */

/*
 * Whether this GPU's additive blend splits exactly: a gradient of
 * sprites' light (every colour and alpha of a 64 x 64 quad, drawn four
 * times with different scales) blended with GL_SRC_ALPHA, GL_ONE onto a
 * cleared 0 and onto a background b must give min(255, b + the first) in
 * every channel, as the composite computes it.
 */
static bool blend_splits(void)
{
    cugl_app_context *ctx = NULL;
    assert_ok(cugl_app_context_create(
        &ctx, &(cugl_app_context_desc){.mode = CUGL_APP_HEADLESS, .width = 64, .height = 64}));
    assert_true(gladLoadGL(cugl_app_gl_proc));
    static const char *vs = "#version 450 core\n"
                            "void main() {\n"
                            "  vec2 p = vec2(gl_VertexID & 1, gl_VertexID >> 1) * 4.0 - 1.0;\n"
                            "  gl_Position = vec4(p, 0.0, 1.0);\n"
                            "}\n";
    static const char *fs = "#version 450 core\n"
                            "layout(location = 0) uniform float scale;\n"
                            "out vec4 colour;\n"
                            "void main() {\n"
                            "  vec2 t = gl_FragCoord.xy / 64.0;\n"
                            "  colour = vec4(fract(t.x * 7.31 * scale), fract(t.y * 5.17 + scale),\n"
                            "                fract((t.x + t.y) * 3.7 * scale), t.x * t.y);\n"
                            "}\n";
    GLuint program = 0;
    assert_ok(cugl_app_program(&program, "blend probe", vs, fs));
    GLuint vao, tex[2], fb[2];
    glCreateVertexArrays(1, &vao);
    glCreateTextures(GL_TEXTURE_2D, 2, tex);
    glCreateFramebuffers(2, fb);
    static const float background[4] = {37.0f / 255, 200.0f / 255, 3.0f / 255, 1.0f};
    uint8_t px[2][64 * 64 * 4];
    for (int k = 0; k < 2; k++) {
        glTextureStorage2D(tex[k], 1, GL_RGBA8, 64, 64);
        glNamedFramebufferTexture(fb[k], GL_COLOR_ATTACHMENT0, tex[k], 0);
        glBindFramebuffer(GL_FRAMEBUFFER, fb[k]);
        glViewport(0, 0, 64, 64);
        if (k == 0)
            glClearColor(0, 0, 0, 0);
        else
            glClearColor(background[0], background[1], background[2], background[3]);
        glClear(GL_COLOR_BUFFER_BIT);
        glEnable(GL_BLEND);
        glBlendFunc(GL_SRC_ALPHA, GL_ONE);
        glUseProgram(program);
        glBindVertexArray(vao);
        for (int pass = 0; pass < 4; pass++) {
            glUniform1f(0, 1.0f + 0.37f * (float)pass);
            glDrawArrays(GL_TRIANGLE_STRIP, 0, 3);
        }
        glDisable(GL_BLEND);
        glReadPixels(0, 0, 64, 64, GL_RGBA, GL_UNSIGNED_BYTE, px[k]);
    }
    assert_int_equal(glGetError(), GL_NO_ERROR);
    const int b[4] = {37, 200, 3, 255};
    long off = 0;
    for (int i = 0; i < 64 * 64 * 4; i++) {
        int want = px[0][i] + b[i % 4];
        off += px[1][i] != (want > 255 ? 255 : want);
    }
    printf("# the blend on a background: %ld of %d channels differ from the sum on black\n",
           off, 64 * 64 * 4);
    glDeleteFramebuffers(2, fb);
    glDeleteTextures(2, tex);
    glDeleteVertexArrays(1, &vao);
    glDeleteProgram(program);
    cugl_app_context_destroy(ctx);
    return off == 0;
}

static void blend_splits_exactly(void **state)
{
    (void)state;
    blend_exact = blend_splits();
    printf("# this GPU's additive blend %s: the pictures must be %s\n",
           blend_exact ? "splits exactly" : "does not split exactly",
           blend_exact ? "equal bit for bit" : "within the tolerance");
}

/* --- The tests -------------------------------------------------------------------- */

static void one_rank(void **state)
{
    (void)state;
    ranks_equal_one_process(1, "map");
}

static void two_ranks_every_path(void **state)
{
    (void)state;
    for (const char *const *p = run_demo_interops; *p; p++)
        ranks_equal_one_process(2, *p);
}

static void four_ranks(void **state)
{
    (void)state;
    ranks_equal_one_process(4, "map");
    ranks_equal_one_process(4, "shared");
}

/* The GPU each rank took, from its "--mpi: on" line. */
static int gpu_of(const char *out, int rank, int ranks)
{
    char key[64];
    snprintf(key, sizeof key, "[rank %d/%d]: --mpi: on ", rank, ranks);
    char *text = read_text(out), *at = strstr(text, key);
    char *gpu = at ? strstr(at, ", GPU ") : NULL;
    int g = gpu ? atoi(gpu + 6) : -1;
    free(text);
    if (g < 0) {
        show(out);
        fail_msg("rank %d did not say which GPU it took", rank);
    }
    return g;
}

static void binding(void **state)
{
    (void)state;
    const char *out = run_demo_path("binding.txt");
    run_job(2, (const char *const[]){"--headless", "--frames", "1", "--size", "64x48",
                                     "--bodies", "512", "--screenshot",
                                     run_demo_path("binding.png"), NULL},
            out);
    int want1 = devices > 1 ? 1 : 0;
    assert_int_equal(gpu_of(out, 0, 2), 0);
    assert_int_equal(gpu_of(out, 1, 2), want1);
    run_job(2, (const char *const[]){"--headless", "--frames", "1", "--size", "64x48",
                                     "--bodies", "512", "--device", devices > 1 ? "1" : "0",
                                     "--screenshot", run_demo_path("binding.png"), NULL},
            out);
    assert_int_equal(gpu_of(out, 0, 2), want1);
    assert_int_equal(gpu_of(out, 1, 2), want1);
}

static void two_gpus(void **state)
{
    (void)state;
    if (devices < 2) {
        printf("# one CUDA device: the ranks share it (the runs above)\n");
        skip();
    }
    /* Rank 1 on device 1 (its local rank); one process on device 0. */
    ranks_equal_one_process(2, "shared");
    assert_int_equal(gpu_of(run_demo_path("mpi-shared-2.txt"), 1, 2), 1);
}

static void input_reaches_every_rank(void **state)
{
    (void)state;
    char input[1024]; /* run_demo_path's buffers are reused */
    snprintf(input, sizeof input, "%s", run_demo_path("drag.txt"));
    FILE *f = fopen(input, "w");
    assert_non_null(f);
    fputs("0 move 60 50\n1 button left down\n2 move 100 62\n3 move 140 70\n"
          "4 button left up\n4 scroll 2\n",
          f);
    fclose(f);
    one_process("map", "ref", NULL);
    one_process("map", "drag", input);
    on_ranks(2, "map", "drag", input);
    same_positions(run_demo_path("mpi-map-drag.pos"), run_demo_path("one-map-drag.pos"),
                   "2 ranks with input");
    same_picture(run_demo_path("mpi-map-drag.png"), run_demo_path("one-map-drag.png"),
                 "2 ranks with input");
    /* The input moved the view: the picture is not the one without. */
    uint8_t *a = run_demo_read_png(run_demo_path("one-map-ref.png"), W, H);
    uint8_t *b = run_demo_read_png(run_demo_path("one-map-drag.png"), W, H);
    bool moved = memcmp(a, b, (size_t)W * H * 4) != 0;
    free(a);
    free(b);
    if (!moved)
        fail_msg("%s", "the drag did not change one process's picture: the test proves nothing");
    char *one = read_text(run_demo_path("one-map-drag.txt"));
    char *mpi = read_text(run_demo_path("mpi-map-drag.txt"));
    char *v1 = strstr(one, ": --view "), *v2 = strstr(mpi, "[rank 0/2]: --view ");
    if (!v1 || !v2) {
        show(run_demo_path("mpi-map-drag.txt"));
        fail_msg("%s", "no --view printed after the replay");
    }
    v1 += strlen(": --view ");
    v2 += strlen("[rank 0/2]: --view ");
    size_t n1 = strcspn(v1, "\n"), n2 = strcspn(v2, "\n");
    if (n1 != n2 || memcmp(v1, v2, n1) != 0)
        fail_msg("the view after the input: %.*s in one process, %.*s on 2 ranks", (int)n1, v1,
                 (int)n2, v2);
    if (strstr(mpi, "[rank 1/2]: --view"))
        fail_msg("%s", "rank 1 printed a view: the input is rank 0's alone");
    free(one);
    free(mpi);
}

/* Lines of `out` that hold `text`, printed; fails where there is none. */
static void expect_line(const char *out, const char *text)
{
    char *all = read_text(out);
    bool found = false;
    for (char *line = strtok(all, "\n"); line; line = strtok(NULL, "\n"))
        if (strstr(line, text)) {
            printf("# %s\n", line);
            found = true;
        }
    free(all);
    if (!found) {
        show(out);
        fail_msg("no line with \"%s\"", text);
    }
}

static void bench(void **state)
{
    (void)state;
    const char *out = run_demo_path("bench.txt");
    run_job(2, (const char *const[]){"--headless", "--bench", "--frames", "60", "--size",
                                     "1920x1080", "--screenshot", run_demo_path("bench.png"),
                                     NULL},
            out);
    expect_line(out, "[rank 0/2]: 65536 bodies, ");
    expect_line(out, "[rank 0/2]: --mpi: 2 ranks on ");
    expect_line(out, "interactions/s");
    expect_line(out, "with every step drawn");
    expect_line(out, ":   composite ");
    expect_line(out, ":   exchange ");
    expect_line(out, " ms a frame");
    char *all = read_text(out);
    bool others = strstr(all, "[rank 1/2]: --mpi: 2 ranks on ") != NULL;
    free(all);
    if (others)
        fail_msg("%s", "rank 1 printed --bench's figures: rank 0 prints them for all");
}

/* A GET of `path` on 127.0.0.1:port: the HTTP status, or -1. */
static int http_status(int port, const char *path)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(0x7f000001)};
    int status = -1;
    if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
        char req[256], buf[64] = "";
        int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                          "Connection: close\r\n\r\n", path);
        if (write(fd, req, (size_t)n) == n && read(fd, buf, sizeof buf - 1) > 12)
            status = atoi(buf + 9);
    }
    close(fd);
    return status;
}

static void serve_on_rank_0(void **state)
{
    (void)state;
    const char *out = run_demo_path("serve.txt");
    pid_t pid = start_job(2,
                          (const char *const[]){"--headless", "--serve", "127.0.0.1:0",
                                                "--serve-token", "t0k", "--frames", "600",
                                                "--size", "160x120", "--bodies", "2048", NULL},
                          out);
    char *at = wait_for(out, "serving on http://127.0.0.1:", 120, pid);
    int port = atoi(at + strlen("serving on http://127.0.0.1:"));
    free(at);
    int ok = http_status(port, "/?token=t0k"), refused = http_status(port, "/");
    int rc = wait_job(pid, 120);
    char *all = read_text(out);
    int lines = 0;
    for (char *p = all; (p = strstr(p, "serving on http://")); p++)
        lines++;
    bool rank0 = strstr(all, "[rank 0/2]: serving on http://127.0.0.1:") != NULL;
    free(all);
    if (rc != 0 || ok != 200 || refused != 403 || lines != 1 || !rank0) {
        show(out);
        fail_msg("--serve with --mpi: exit status %d, the page %d (want 200), without the "
                 "token %d (want 403), %d \"serving on\" lines (want 1, rank 0's: %s)",
                 rc, ok, refused, lines, rank0 ? "yes" : "no");
    }
}

/* Rank 1's pid, from its "--mpi: on HOST (pid N)" line. */
static pid_t pid_of_rank_1(const char *out, pid_t job)
{
    char *at = wait_for(out, "[rank 1/2]: --mpi: on ", 120, job);
    char *p = strstr(at, "(pid ");
    pid_t pid = p ? (pid_t)atol(p + 5) : 0;
    free(at);
    assert_true(pid > 0);
    return pid;
}

static const char *const long_run[] = {"--headless", "--frames", "100000", "--size", "96x72",
                                       "--bodies", "2048", "--mpi-timeout", "4", NULL};

static void rank_dies(void **state)
{
    (void)state;
    const char *out = run_demo_path("dies.txt");
    pid_t pid = start_job(2, long_run, out);
    pid_t victim = pid_of_rank_1(out, pid);
    free(wait_for(out, "[rank 0/2]: --mpi: compositing", 120, pid));
    sleep_s(2); /* in the frames */
    double t0 = now_s();
    kill(victim, SIGKILL);
    int rc = wait_job(pid, 60);
    double took = now_s() - t0;
    printf("# the job ended %.1f s after rank 1 was killed, exit status %d\n", took, rc);
    if (rc <= 0 || took > 30) {
        show(out);
        fail_msg("a rank killed in the frames: exit status %d after %.1f s (want an error "
                 "within 30 s)",
                 rc, took);
    }
}

/*
 * A rank that stops (SIGSTOP) as soon as it has its GPU: the others give
 * up after --mpi-timeout, naming the step, and end the job. (Stopped
 * within the frames, a rank might stop inside the compositor's exchange,
 * which is MPI's blocking collective once every rank has met: MPI's to
 * handle, as cugl/mpi.h says; the deadline before it is the same as here.)
 */
static void rank_stuck(void **state)
{
    (void)state;
    const char *out = run_demo_path("stuck.txt");
    pid_t pid = start_job(2, long_run, out);
    double end = now_s() + 120;
    pid_t victim = 0;
    while (!victim && now_s() < end) {
        char *all = read_text(out), *at = strstr(all, "[rank 1/2]: --mpi: on ");
        char *p = at ? strstr(at, "(pid ") : NULL;
        victim = p ? (pid_t)atol(p + 5) : 0;
        free(all);
        if (!victim)
            sleep_s(0.005);
    }
    if (victim <= 0) {
        wait_job(pid, 0);
        show(out);
        fail_msg("%s", "rank 1 did not say where it runs");
    }
    double t0 = now_s();
    kill(victim, SIGSTOP);
    int rc = wait_job(pid, 60);
    double took = now_s() - t0;
    kill(victim, SIGKILL);
    char *all = read_text(out);
    bool said = strstr(all, "[rank 0/2]: --mpi: ") &&
                strstr(all, "not every rank of the 2 joined within 4.0 s") &&
                strstr(all, "ending every rank");
    free(all);
    printf("# the job ended %.1f s after rank 1 stopped, exit status %d\n", took, rc);
    if (rc <= 0 || took > 40 || !said) {
        show(out);
        fail_msg("a rank stopped: exit status %d after %.1f s, %s", rc, took,
                 said ? "with the message" : "without rank 0's message of the timeout");
    }
}

int main(int argc, char **argv)
{
    /* --two-gpus: that case alone (the multi-gpu suite's); else the rest. */
    bool two = argc == 5 && strcmp(argv[4], "--two-gpus") == 0;
    if (argc != 4 && !two) {
        fprintf(stderr, "usage: %s RUN_MPI MPIRUN CUGL_NBODY [--two-gpus]\n", argv[0]);
        return 99;
    }
    run_mpi = argv[1];
    mpirun = argv[2];
    nbody = run_demo_setup(2, (char *[]){argv[0], argv[3], NULL}, "CUGL_NBODY");
    if (!mpirun[0] || access(mpirun, X_OK) != 0)
        cugl_test_skip_all("no mpirun (Debian: openmpi-bin)");
    assert_ok(cugl_device_count(&devices));
    unsetenv("CUGL_SERVE_TOKEN");
    setenv("CUGL_MPI_TEST_LIMIT", "300", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(blend_splits_exactly), /* first: the pictures' rule */
        cmocka_unit_test(one_rank),
        cmocka_unit_test(two_ranks_every_path),
        cmocka_unit_test(four_ranks),
        cmocka_unit_test(binding),
        cmocka_unit_test(input_reaches_every_rank),
        cmocka_unit_test(bench),
        cmocka_unit_test(serve_on_rank_0),
        cmocka_unit_test(rank_dies),
        cmocka_unit_test(rank_stuck),
    };
    const struct CMUnitTest two_gpu_tests[] = {
        cmocka_unit_test(blend_splits_exactly),
        cmocka_unit_test(two_gpus),
    };
    if (two)
        return run_demo_tests(two_gpu_tests, NULL, NULL);
    return run_demo_tests(tests, NULL, NULL);
}
