/*
 * test_compositor.c - libcugl-mpi's compositor, run by mpirun with 1 to 4
 * ranks (run_mpi.sh), each rank with a headless GL context (Mesa here).
 *
 * A scene of triangles, each owned by one rank, flat depths all different
 * (so no two parts tie) and integer colours: every rank draws its own
 * parts, the compositor makes the picture on the root, and the root draws
 * the whole scene alone into a framebuffer of its own with GL's depth test
 * (or GL's additive blend); the two must be equal pixel for pixel. Also:
 * equal depths (the smaller colour wins), a root that is not rank 0, GL
 * state kept, the bytes and times reported, ranks that disagree or refuse
 * (an error on every rank, with the facts), a rank that never comes (a
 * timeout with a message, at create and at a composite), bad arguments,
 * cugl_mpi_wait's deadline, the binding of ranks to devices, and, where
 * there is a CUDA device, the pixels through its pinned memory. `--rank-dies` runs one scenario alone:
 * a rank that ends without MPI_Finalize (rank_dies.sh).
 *
 * Output is TAP from rank 0; every check's failure is printed by the rank
 * that saw it, as a comment, and a test fails when any rank's check did.
 * A watchdog on each rank ends the run with a message when a test makes no
 * progress for CUGL_MPI_TEST_WATCHDOG seconds (90), so a hang in MPI shows
 * where it is.
 */
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <glad/gl.h> /* the test's own GL loader */

#include <cugl/mpi.h>

enum { W = 97, H = 61, PARTS = 12 };

static int rank, size;
static cugl_app_context *ctx;
static GLuint program, vao, vbo;
static GLint colour_loc;

/* ---- TAP over ranks, and the watchdog --------------------------------------- */

static int tests_run, tests_failed, checks_failed_here;
static const char *volatile phase = "start";
static unsigned watchdog_seconds = 90;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void check_failed(int line, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    printf("# rank %d, %s, line %d: %s\n", rank, phase, line, text);
    fflush(stdout);
    checks_failed_here++;
}

#define CHECK(cond, ...)                                \
    do {                                                \
        if (!(cond))                                    \
            check_failed(__LINE__, __VA_ARGS__);        \
    } while (0)

/* A call's status and, where `needle` is not NULL, that its message says it. */
static void check_status(int line, const char *expr, cugl_status got, cugl_status want,
                         const char *needle)
{
    if (got != want)
        check_failed(line, "%s returned %s, expected %s (%s)", expr, cugl_status_name(got),
                     cugl_status_name(want), cugl_last_error());
    if (needle && !strstr(cugl_last_error(), needle))
        check_failed(line, "%s: message \"%s\" does not say \"%s\"", expr, cugl_last_error(),
                     needle);
}

#define CHECK_STATUS(expr, want, needle)                                      \
    do {                                                                      \
        cugl_clear_error();                                                   \
        cugl_status got_ = (expr);                                            \
        check_status(__LINE__, #expr, got_, want, needle);                    \
    } while (0)

static void on_alarm(int sig)
{
    (void)sig;
    char text[256];
    int n = snprintf(text, sizeof text,
                     "Bail out! rank %d: watchdog: no progress in \"%s\" for %u s\n", rank,
                     phase, watchdog_seconds);
    if (n > 0)
        (void)!write(STDOUT_FILENO, text, (size_t)n);
    _exit(1);
}

static void begin(const char *name)
{
    phase = name;
    alarm(watchdog_seconds);
    checks_failed_here = 0;
}

/* Every rank's checks of the test: one TAP line from rank 0. */
static void end(void)
{
    int bad = checks_failed_here > 0, any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    tests_run++;
    tests_failed += any;
    if (rank == 0) {
        printf("%s %d - %s (%d ranks)\n", any ? "not ok" : "ok", tests_run, phase, size);
        fflush(stdout);
    }
    alarm(0);
}

static void skip(const char *name, const char *why)
{
    tests_run++;
    if (rank == 0) {
        printf("ok %d - %s # SKIP %s\n", tests_run, name, why);
        fflush(stdout);
    }
}

/* ---- The scene ----------------------------------------------------------------- */

typedef struct part {
    float xy[3][2];
    float z;
    uint8_t rgba[4];
} part;

static part scene[PARTS];

static uint32_t next_random(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

/*
 * PARTS triangles, part k owned by rank k % size. Depths: k's place in a
 * shuffle of 0 .. 15, as (2 place + 1) / 32 - 1 in clip space, all
 * different and exact in float. Colours: opaque for depth mode; 0 .. 110 a
 * channel for additive mode, so that overlaps of three or more saturate.
 */
static void make_scene(uint32_t seed, bool additive)
{
    int order[16];
    for (int i = 0; i < 16; i++)
        order[i] = i;
    for (int i = 15; i > 0; i--) {
        int j = (int)(next_random(&seed) % (uint32_t)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (int k = 0; k < PARTS; k++) {
        part *p = &scene[k];
        for (int v = 0; v < 3; v++)
            for (int a = 0; a < 2; a++)
                p->xy[v][a] = -1.3f + 2.6f * (float)(next_random(&seed) % 1000) / 1000.0f;
        p->z = (float)(2 * order[k] + 1) / 32.0f - 1.0f;
        for (int c = 0; c < 4; c++)
            p->rgba[c] = (uint8_t)(additive ? next_random(&seed) % 111
                                            : (c == 3 ? 255 : next_random(&seed) % 256));
    }
}

static const uint8_t background[4] = {16, 32, 48, 255};

static void setup_drawing(void)
{
    static const char *vs = "#version 450 core\n"
                            "layout(location = 0) in vec3 pos;\n"
                            "void main() { gl_Position = vec4(pos, 1.0); }\n";
    static const char *fs = "#version 450 core\n"
                            "uniform vec4 colour;\n"
                            "out vec4 o;\n"
                            "void main() { o = colour; }\n";
    if (cugl_app_program(&program, "test-part", vs, fs) != CUGL_OK) {
        printf("Bail out! rank %d: %s\n", rank, cugl_last_error());
        exit(1);
    }
    colour_loc = glGetUniformLocation(program, "colour");
    glCreateVertexArrays(1, &vao);
    glCreateBuffers(1, &vbo);
    glNamedBufferStorage(vbo, sizeof(float) * 9 * PARTS, NULL, GL_DYNAMIC_STORAGE_BIT);
    glVertexArrayVertexBuffer(vao, 0, vbo, 0, 3 * sizeof(float));
    glVertexArrayAttribFormat(vao, 0, 3, GL_FLOAT, GL_FALSE, 0);
    glEnableVertexArrayAttrib(vao, 0);
    glVertexArrayAttribBinding(vao, 0, 0);
}

/* Draw the parts of `owner` (-1: all) into `fb`: depth-tested or added. */
static void draw(GLuint fb, int owner, bool additive)
{
    float v[9 * PARTS];
    for (int k = 0; k < PARTS; k++)
        for (int i = 0; i < 3; i++) {
            v[9 * k + 3 * i] = scene[k].xy[i][0];
            v[9 * k + 3 * i + 1] = scene[k].xy[i][1];
            v[9 * k + 3 * i + 2] = scene[k].z;
        }
    glNamedBufferSubData(vbo, 0, sizeof v, v);
    glBindFramebuffer(GL_FRAMEBUFFER, fb);
    glViewport(0, 0, W, H);
    glDisable(GL_SCISSOR_TEST);
    if (additive) {
        glClearColor(0, 0, 0, 0);
    } else {
        glClearColor(background[0] / 255.0f, background[1] / 255.0f, background[2] / 255.0f,
                     background[3] / 255.0f);
    }
    glClearDepth(1.0);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
    if (additive) {
        glDisable(GL_DEPTH_TEST);
        glEnable(GL_BLEND);
        glBlendEquation(GL_FUNC_ADD);
        glBlendFunc(GL_ONE, GL_ONE);
    } else {
        glEnable(GL_DEPTH_TEST);
        glDepthFunc(GL_LESS);
        glDisable(GL_BLEND);
    }
    glUseProgram(program);
    glBindVertexArray(vao);
    for (int k = 0; k < PARTS; k++) {
        if (owner >= 0 && k % size != owner)
            continue;
        const uint8_t *c = scene[k].rgba;
        glUniform4f(colour_loc, c[0] / 255.0f, c[1] / 255.0f, c[2] / 255.0f, c[3] / 255.0f);
        glDrawArrays(GL_TRIANGLES, 3 * k, 3);
    }
    glDisable(GL_BLEND);
    glDisable(GL_DEPTH_TEST);
    glFinish();
}

/* The RGBA8 pixels of `fb`, rows bottom to top. */
static void read_fb(GLuint fb, uint8_t *out)
{
    glBindFramebuffer(GL_READ_FRAMEBUFFER, fb);
    glPixelStorei(GL_PACK_ALIGNMENT, 4);
    glReadnPixels(0, 0, W, H, GL_RGBA, GL_UNSIGNED_BYTE, W * H * 4, out);
}

/* A framebuffer of the context's formats (RGBA8, depth 24), or colour alone. */
static GLuint make_fb(bool with_depth, GLuint *colour, GLuint *depth)
{
    GLuint fb;
    glCreateFramebuffers(1, &fb);
    glCreateRenderbuffers(1, colour);
    glNamedRenderbufferStorage(*colour, GL_RGBA8, W, H);
    glNamedFramebufferRenderbuffer(fb, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, *colour);
    *depth = 0;
    if (with_depth) {
        glCreateRenderbuffers(1, depth);
        glNamedRenderbufferStorage(*depth, GL_DEPTH_COMPONENT24, W, H);
        glNamedFramebufferRenderbuffer(fb, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, *depth);
    }
    return fb;
}

static void free_fb(GLuint fb, GLuint colour, GLuint depth)
{
    glDeleteFramebuffers(1, &fb);
    glDeleteRenderbuffers(1, &colour);
    if (depth)
        glDeleteRenderbuffers(1, &depth);
}

static uint8_t mine[W * H * 4], composite[W * H * 4], reference[W * H * 4];

/* Pixels of `a` and `b` that differ; the first printed. */
static int compare(const uint8_t *a, const uint8_t *b, const char *what)
{
    int differ = 0;
    for (int i = 0; i < W * H; i++)
        if (memcmp(a + 4 * i, b + 4 * i, 4) != 0 && differ++ == 0)
            printf("# rank %d: %s: first difference at (%d, %d) from the bottom left: %u %u "
                   "%u %u, the reference %u %u %u %u\n",
                   rank, what, i % W, i / W, a[4 * i], a[4 * i + 1], a[4 * i + 2],
                   a[4 * i + 3], b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]);
    return differ;
}

static cugl_status make(cugl_mpi_compositor **c, cugl_mpi_composite_mode mode, int root)
{
    return cugl_mpi_compositor_create(c, MPI_COMM_WORLD, ctx,
                                      &(cugl_mpi_compositor_desc){
                                          .mode = mode,
                                          .root = root,
                                          .timeout_seconds = 30,
                                      });
}

/* ---- The tests --------------------------------------------------------------- */

/*
 * One scene in `mode` composited on `root` and compared with the root's
 * own drawing of the whole scene; and that the ranks' pictures met (a
 * rank's pixel covered by another rank's part in the composite).
 */
static void composite_equals_one_process(cugl_mpi_compositor *c, uint32_t seed, int root,
                                         bool additive)
{
    make_scene(seed, additive);
    GLuint fb = cugl_app_context_framebuffer(ctx);
    draw(fb, rank, additive);
    read_fb(fb, mine);

    /* State a caller may have set, which the composite must keep and
     * whose scissor must not clip the root's blit. */
    glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, 3);
    glEnable(GL_SCISSOR_TEST);
    glScissor(1, 1, 2, 2);
    cugl_status st = cugl_mpi_compositor_composite(c, fb);
    CHECK(st == CUGL_OK, "composite: %s", cugl_last_error());
    GLint read = -1, pack = -1, row = -1;
    glGetIntegerv(GL_READ_FRAMEBUFFER_BINDING, &read);
    glGetIntegerv(GL_PACK_ALIGNMENT, &pack);
    glGetIntegerv(GL_UNPACK_ROW_LENGTH, &row);
    CHECK(read == 0 && pack == 1 && row == 3 && glIsEnabled(GL_SCISSOR_TEST),
          "GL state changed: read framebuffer %d, pack alignment %d, unpack row length %d, "
          "scissor %d",
          read, pack, row, glIsEnabled(GL_SCISSOR_TEST));
    glDisable(GL_SCISSOR_TEST);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
    CHECK(glGetError() == GL_NO_ERROR, "a GL error after the composite");

    /* Everyone gets the reference, to count where its own picture was changed. */
    GLuint rc, rd, ref = make_fb(true, &rc, &rd);
    draw(ref, -1, additive);
    read_fb(ref, reference);
    free_fb(ref, rc, rd);
    if (rank == root) {
        read_fb(fb, composite);
        CHECK(compare(composite, reference, "the composite") == 0,
              "the composite differs from one process's picture");
        const uint8_t *image = cugl_mpi_compositor_image(c);
        CHECK(image != NULL, "no image on the root");
        if (image)
            CHECK(compare(image, reference, "the root's image") == 0,
                  "cugl_mpi_compositor_image differs from one process's picture");
    } else {
        CHECK(cugl_mpi_compositor_image(c) == NULL, "an image on rank %d, not the root",
              rank);
    }
    /* The composite is more than any one rank's picture: pixels each rank
     * drew that came out otherwise (hidden by a nearer part of another
     * rank, or added to). */
    int changed = 0, all = 0, saturated = 0;
    for (int i = 0; i < W * H * 4; i += 4) {
        bool drawn = additive ? (mine[i] | mine[i + 1] | mine[i + 2] | mine[i + 3]) != 0
                              : memcmp(mine + i, background, 4) != 0;
        changed += drawn && memcmp(mine + i, reference + i, 4) != 0;
        for (int k = 0; k < 4; k++)
            saturated += reference[i + k] == 255 && additive;
    }
    MPI_Allreduce(&changed, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (size > 1)
        CHECK(all > 100, "only %d pixels of the ranks' pictures changed in the composite: "
              "the scene does not overlap across ranks", all);
    if (additive)
        CHECK(saturated > 100, "only %d channels saturate in the additive scene", saturated);
}

/* What the composite cost, against what MPI must have moved. */
static void check_stats(cugl_mpi_compositor *c, long composites, int root, bool additive)
{
    cugl_mpi_composite_stats s;
    CHECK(cugl_mpi_compositor_stats(&s, c) == CUGL_OK, "stats: %s", cugl_last_error());
    uint64_t image = (uint64_t)W * H * (additive ? 4 : 8);
    int n = W * H, piece = n / size + (rank < n % size);
    CHECK(s.composites == composites, "%ld composites, expected %ld", s.composites,
          composites);
    CHECK(s.image_bytes == image, "image_bytes %llu, expected %llu",
          (unsigned long long)s.image_bytes, (unsigned long long)image);
    CHECK(s.gather_bytes == (rank == root ? 0 : (uint64_t)piece * 4),
          "gather_bytes %llu, this rank's piece is %d pixels",
          (unsigned long long)s.gather_bytes, piece);
    CHECK(s.bytes_sent == s.reduce_bytes + s.gather_bytes, "bytes_sent is not their sum");
    CHECK(s.reduce_bytes <= 2 * image, "reduce_bytes %llu, over twice the image (%llu)",
          (unsigned long long)s.reduce_bytes, (unsigned long long)image);
    CHECK(s.bytes_sent <= 2 * image, "bytes_sent %llu, over twice the image (%llu)",
          (unsigned long long)s.bytes_sent, (unsigned long long)image);
    if (size == 1)
        CHECK(s.reduce_bytes == 0, "one rank combined %llu bytes",
              (unsigned long long)s.reduce_bytes);
    unsigned long long sum = 0, mine_bytes = s.reduce_bytes;
    MPI_Allreduce(&mine_bytes, &sum, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum >= (unsigned long long)(size - 1) * image,
          "the ranks combined %llu bytes in all, less than (ranks - 1) x image = %llu", sum,
          (unsigned long long)(size - 1) * image);
    CHECK(s.seconds > 0 && s.mpi_seconds >= 0 && s.readback_seconds >= 0 &&
              s.readback_seconds + s.mpi_seconds + s.write_seconds <= s.seconds * 1.0001,
          "times: %g s = %g + %g + %g", s.seconds, s.readback_seconds, s.mpi_seconds,
          s.write_seconds);
    if (rank == 0)
        printf("# %d ranks, %s: rank 0 combined %llu bytes and gathered %llu (image %llu), "
               "all ranks combined %llu; %.3f ms\n",
               size, additive ? "additive" : "depth", mine_bytes,
               (unsigned long long)s.gather_bytes, (unsigned long long)image, sum,
               s.seconds * 1e3);
}

static void test_depth(void)
{
    begin("depth: the composite equals one process's picture");
    cugl_mpi_compositor *c = NULL;
    CHECK_STATUS(make(&c, CUGL_MPI_COMPOSITE_DEPTH, 0), CUGL_OK, NULL);
    if (c) {
        CHECK(strcmp(cugl_mpi_compositor_transport(c), "host") == 0, "transport \"%s\"",
              cugl_mpi_compositor_transport(c));
        composite_equals_one_process(c, 1, 0, false);
        check_stats(c, 1, 0, false);
        /* Again, another scene, the same compositor. */
        composite_equals_one_process(c, 2, 0, false);
        check_stats(c, 2, 0, false);
    }
    cugl_mpi_compositor_destroy(c);
    end();
}

static void test_depth_last_root(void)
{
    begin("depth: the last rank is the root");
    cugl_mpi_compositor *c = NULL;
    CHECK_STATUS(make(&c, CUGL_MPI_COMPOSITE_DEPTH, size - 1), CUGL_OK, NULL);
    if (c) {
        composite_equals_one_process(c, 3, size - 1, false);
        check_stats(c, 1, size - 1, false);
    }
    cugl_mpi_compositor_destroy(c);
    end();
}

static void test_additive(void)
{
    begin("additive: the composite equals one process's blend");
    cugl_mpi_compositor *c = NULL;
    CHECK_STATUS(make(&c, CUGL_MPI_COMPOSITE_ADD, 0), CUGL_OK, NULL);
    if (c) {
        composite_equals_one_process(c, 4, 0, true);
        check_stats(c, 1, 0, true);
    }
    cugl_mpi_compositor_destroy(c);
    end();
}

/* Every rank the same depth over the whole picture: the smallest colour,
 * as R + 256 G + 65536 B + 2^24 A, wins, whichever rank holds it. */
static void test_ties(void)
{
    begin("depth: equal depths, the smaller colour wins");
    cugl_mpi_compositor *c = NULL;
    CHECK_STATUS(make(&c, CUGL_MPI_COMPOSITE_DEPTH, 0), CUGL_OK, NULL);
    uint8_t want[4] = {0};
    uint32_t least = UINT32_MAX;
    for (int r = 0; r < size; r++) {
        /* Colours whose order by the rule is not the ranks' order. */
        uint8_t col[4] = {(uint8_t)(200 - 37 * r), (uint8_t)(90 + 50 * (r % 2)),
                          (uint8_t)((5 * r + 3) % 7 * 10), 255};
        uint32_t key = col[0] | (uint32_t)col[1] << 8 | (uint32_t)col[2] << 16 |
                       (uint32_t)col[3] << 24;
        if (key < least) {
            least = key;
            memcpy(want, col, 4);
        }
        if (r == rank) {
            for (int k = 0; k < PARTS; k++) {
                part *p = &scene[k];
                memset(p, 0, sizeof *p);
                p->z = 0.25f;
                p->xy[0][0] = p->xy[0][1] = p->xy[1][1] = p->xy[2][0] = -3;
                p->xy[1][0] = p->xy[2][1] = 9;
                memcpy(p->rgba, col, 4);
            }
        }
    }
    if (c) {
        GLuint fb = cugl_app_context_framebuffer(ctx);
        draw(fb, -1, false);
        CHECK_STATUS(cugl_mpi_compositor_composite(c, fb), CUGL_OK, NULL);
        if (rank == 0) {
            read_fb(fb, composite);
            int wrong = 0;
            for (int i = 0; i < W * H; i++)
                wrong += memcmp(composite + 4 * i, want, 4) != 0;
            CHECK(wrong == 0, "%d pixels are not %u %u %u %u (first: %u %u %u %u)", wrong,
                  want[0], want[1], want[2], want[3], composite[0], composite[1],
                  composite[2], composite[3]);
        }
    }
    cugl_mpi_compositor_destroy(c);
    end();
}

/* Ranks that disagree, or refuse: the same error on every rank. */
static void test_disagree(void)
{
    begin("create: ranks that disagree or refuse fail on every rank");
    cugl_mpi_compositor *c = NULL;
    char want[160];
    if (size == 1) {
        CHECK_STATUS(make(&c, CUGL_MPI_COMPOSITE_DEPTH, 1), CUGL_ERROR_INVALID_ARGUMENT,
                     "cugl_mpi_compositor_create: root 1 is not a rank of the communicator "
                     "(0 .. 0)");
        CHECK(c == NULL, "a compositor after a refusal");
        end();
        return;
    }
    int last = size - 1;
    cugl_mpi_compositor_desc d = {.width = rank == last ? W - 1 : W, .timeout_seconds = 30};
    snprintf(want, sizeof want,
             "cugl_mpi_compositor_create: width differs between ranks: %d on rank %d, %d on "
             "rank 0",
             W - 1, last, W);
    CHECK_STATUS(cugl_mpi_compositor_create(&c, MPI_COMM_WORLD, ctx, &d),
                 CUGL_ERROR_INVALID_ARGUMENT, want);
    CHECK(c == NULL, "a compositor after a disagreement");

    d = (cugl_mpi_compositor_desc){.mode = rank == 1 ? CUGL_MPI_COMPOSITE_ADD : 0,
                                   .root = rank == 0 ? 1 : 0,
                                   .timeout_seconds = 30};
    snprintf(want, sizeof want,
             "cugl_mpi_compositor_create: mode differs between ranks: 0 on rank 0, 1 on rank "
             "1; root differs between ranks: 0 on rank 1, 1 on rank 0");
    CHECK_STATUS(cugl_mpi_compositor_create(&c, MPI_COMM_WORLD, ctx, &d),
                 CUGL_ERROR_INVALID_ARGUMENT, want);

    /* The last rank passes no context: its message says so, the others' name it. */
    if (rank == last)
        snprintf(want, sizeof want, "cugl_mpi_compositor_create: ctx is NULL");
    else
        snprintf(want, sizeof want,
                 "cugl_mpi_compositor_create: rank %d of %d refused "
                 "(CUGL_ERROR_INVALID_ARGUMENT; its own message says why)",
                 last, size);
    CHECK_STATUS(cugl_mpi_compositor_create(&c, MPI_COMM_WORLD, rank == last ? NULL : ctx,
                                            &(cugl_mpi_compositor_desc){.timeout_seconds = 30}),
                 CUGL_ERROR_INVALID_ARGUMENT, want);
    CHECK(c == NULL, "a compositor after a refusal");
    end();
}

/* A rank whose framebuffer cannot be composited fails every rank's
 * composite, and the next composite works. */
static void test_composite_refused(void)
{
    begin("composite: one rank's refusal fails every rank, then it works again");
    cugl_mpi_compositor *c = NULL;
    CHECK_STATUS(make(&c, CUGL_MPI_COMPOSITE_DEPTH, 0), CUGL_OK, NULL);
    if (c) {
        int last = size - 1;
        GLuint colour, depth, no_depth = make_fb(false, &colour, &depth);
        GLuint fb = rank == last ? no_depth : cugl_app_context_framebuffer(ctx);
        char want[200];
        if (rank == last)
            snprintf(want, sizeof want,
                     "cugl_mpi_compositor_composite: framebuffer %u has no depth buffer", fb);
        else
            snprintf(want, sizeof want,
                     "cugl_mpi_compositor_composite: rank %d of %d could not take part "
                     "(CUGL_ERROR_INVALID_ARGUMENT; its own message says why)",
                     last, size);
        CHECK_STATUS(cugl_mpi_compositor_composite(c, fb), CUGL_ERROR_INVALID_ARGUMENT, want);
        free_fb(no_depth, colour, depth);
        CHECK_STATUS(cugl_mpi_compositor_composite(c, 12345), CUGL_ERROR_INVALID_ARGUMENT,
                     "framebuffer 12345 is not a framebuffer of this context");
        composite_equals_one_process(c, 5, 0, false);
        check_stats(c, 1, 0, false);
    }
    cugl_mpi_compositor_destroy(c);
    end();
}

static void test_arguments(void)
{
    begin("arguments");
    cugl_mpi_compositor *c = (cugl_mpi_compositor *)&c;
    /* These return at once on every rank (no rank joins). */
    CHECK_STATUS(cugl_mpi_compositor_create(NULL, MPI_COMM_WORLD, ctx, NULL),
                 CUGL_ERROR_INVALID_ARGUMENT, "cugl_mpi_compositor_create: out is NULL");
    CHECK_STATUS(cugl_mpi_compositor_create(&c, MPI_COMM_NULL, ctx, NULL),
                 CUGL_ERROR_INVALID_ARGUMENT,
                 "cugl_mpi_compositor_create: comm is MPI_COMM_NULL");
    CHECK(c == NULL, "out not cleared");
    /* These join, and fail on every rank. */
    CHECK_STATUS(cugl_mpi_compositor_create(&c, MPI_COMM_WORLD, ctx,
                                            &(cugl_mpi_compositor_desc){.width = -1}),
                 CUGL_ERROR_INVALID_ARGUMENT, "size -1 x 61 is not positive");
    CHECK_STATUS(cugl_mpi_compositor_create(&c, MPI_COMM_WORLD, ctx,
                                            &(cugl_mpi_compositor_desc){.mode = 7}),
                 CUGL_ERROR_INVALID_ARGUMENT, "mode 7 is neither");
    CHECK_STATUS(cugl_mpi_compositor_create(&c, MPI_COMM_WORLD, ctx,
                                            &(cugl_mpi_compositor_desc){.timeout_seconds = NAN}),
                 CUGL_ERROR_INVALID_ARGUMENT, "timeout_seconds is NaN");
    CHECK_STATUS(
        cugl_mpi_compositor_create(&c, MPI_COMM_WORLD, ctx,
                                   &(cugl_mpi_compositor_desc){.width = 65536, .height = 65536}),
        CUGL_ERROR_INVALID_ARGUMENT, "has more pixels than MPI counts in an int");
    CHECK(c == NULL, "a compositor after a refusal");

    CHECK_STATUS(cugl_mpi_compositor_composite(NULL, 0), CUGL_ERROR_INVALID_ARGUMENT,
                 "cugl_mpi_compositor_composite: c is NULL");
    cugl_mpi_composite_stats s;
    CHECK_STATUS(cugl_mpi_compositor_stats(&s, NULL), CUGL_ERROR_INVALID_ARGUMENT,
                 "cugl_mpi_compositor_stats: c is NULL");
    CHECK_STATUS(cugl_mpi_compositor_stats(NULL, NULL), CUGL_ERROR_INVALID_ARGUMENT,
                 "cugl_mpi_compositor_stats: out is NULL");
    CHECK(cugl_mpi_compositor_image(NULL) == NULL, "an image of NULL");
    CHECK(strcmp(cugl_mpi_compositor_transport(NULL), "") == 0, "a transport of NULL");
    cugl_mpi_compositor_destroy(NULL);
    CHECK(strcmp(cugl_mpi_composite_mode_name(CUGL_MPI_COMPOSITE_DEPTH), "depth") == 0 &&
              strcmp(cugl_mpi_composite_mode_name(CUGL_MPI_COMPOSITE_ADD), "add") == 0 &&
              strcmp(cugl_mpi_composite_mode_name((cugl_mpi_composite_mode)9), "invalid") == 0,
          "mode names");

    /* The default size is the context's; the statistics start at zero. */
    CHECK_STATUS(cugl_mpi_compositor_create(&c, MPI_COMM_WORLD, ctx, NULL), CUGL_OK, NULL);
    if (c) {
        CHECK(cugl_mpi_compositor_stats(&s, c) == CUGL_OK && s.composites == 0 &&
                  s.bytes_sent == 0 && s.seconds == 0,
              "stats before the first composite");
        CHECK(cugl_mpi_compositor_image(c) == NULL, "an image before the first composite");
    }
    cugl_mpi_compositor_destroy(c);
    end();
}

static void test_bind(void)
{
    begin("bind: ranks spread over devices by local rank");
    cugl_mpi_binding b;
    CHECK_STATUS(cugl_mpi_bind(&b, MPI_COMM_WORLD, &(cugl_mpi_bind_desc){.device_count = 2}),
                 CUGL_OK, NULL);
    /* One host: the local ranks are the ranks, in order. */
    CHECK(b.rank == rank && b.size == size && b.local_rank == rank && b.local_size == size &&
              b.device == rank % 2,
          "binding: rank %d of %d, local %d of %d, device %d", b.rank, b.size, b.local_rank,
          b.local_size, b.device);
    CHECK_STATUS(cugl_mpi_bind(&b, MPI_COMM_WORLD,
                               &(cugl_mpi_bind_desc){.device_count = 3, .fixed = true,
                                                     .device = 2}),
                 CUGL_OK, NULL);
    CHECK(b.device == 2, "a fixed device 2 gave %d", b.device);
    CHECK_STATUS(cugl_mpi_bind(&b, MPI_COMM_WORLD,
                               &(cugl_mpi_bind_desc){.device_count = 2, .fixed = true,
                                                     .device = 5}),
                 CUGL_ERROR_INVALID_ARGUMENT,
                 "cugl_mpi_bind: device 5 is not one of the 2 devices (0 .. 1)");
    CHECK_STATUS(cugl_mpi_bind(&b, MPI_COMM_WORLD, &(cugl_mpi_bind_desc){.device_count = -1}),
                 CUGL_ERROR_INVALID_ARGUMENT, "cugl_mpi_bind: device_count -1 is negative");
    CHECK_STATUS(cugl_mpi_bind(NULL, MPI_COMM_WORLD, NULL), CUGL_ERROR_INVALID_ARGUMENT,
                 "cugl_mpi_bind: out is NULL");
    /* Devices counted by libcugl: without a driver, its status, named. */
    cugl_clear_error();
    cugl_status st = cugl_mpi_bind(&b, MPI_COMM_WORLD, NULL);
    if (st == CUGL_OK) {
        int count = 0;
        CHECK(cugl_device_count(&count) == CUGL_OK && b.device == b.local_rank % count,
              "device %d of %d for local rank %d", b.device, count, b.local_rank);
    } else {
        CHECK(st == CUGL_ERROR_NO_DRIVER || st == CUGL_ERROR_NO_DEVICE,
              "bind with the driver's count: %s (%s)", cugl_status_name(st),
              cugl_last_error());
        CHECK(strncmp(cugl_last_error(), "cugl_mpi_bind: ", 15) == 0, "message \"%s\"",
              cugl_last_error());
    }

    bool aware = true;
    char reason[512] = "";
    CHECK_STATUS(cugl_mpi_cuda_aware(&aware, reason, sizeof reason), CUGL_OK, NULL);
    CHECK(strstr(reason, "MPIX_Query_cuda_support") != NULL &&
              strstr(reason, aware ? "may go to MPI directly" : "go through host memory"),
          "reason \"%s\" for %s", reason, aware ? "CUDA-aware" : "not CUDA-aware");
    CHECK_STATUS(cugl_mpi_cuda_aware(&aware, NULL, 0), CUGL_OK, NULL);
    CHECK_STATUS(cugl_mpi_cuda_aware(NULL, NULL, 0), CUGL_ERROR_INVALID_ARGUMENT,
                 "cugl_mpi_cuda_aware: aware is NULL");
    CHECK_STATUS(cugl_mpi_cuda_aware(&aware, NULL, 8), CUGL_ERROR_INVALID_ARGUMENT,
                 "reason is NULL with reason_size 8");
    if (rank == 0)
        printf("# %s\n", reason);
    end();
}

/* With a CUDA device, the pixels pass through its pinned host memory. */
static void test_pinned(void)
{
    int count = 0;
    cugl_status st = cugl_device_count(&count);
    if (st != CUGL_OK || count == 0) {
        if (getenv("CUGL_TEST_NO_SKIP")) {
            begin("pinned host memory of each rank's device");
            CHECK(false, "no CUDA device, and CUGL_TEST_NO_SKIP is set: %s",
                  st != CUGL_OK ? cugl_last_error() : "the driver sees none");
            end();
            return;
        }
        skip("pinned host memory of each rank's device", "no CUDA device");
        return;
    }
    begin("pinned host memory of each rank's device");
    cugl_mpi_binding b;
    cugl_device *dev = NULL;
    CHECK_STATUS(cugl_mpi_bind(&b, MPI_COMM_WORLD, NULL), CUGL_OK, NULL);
    CHECK_STATUS(cugl_device_get(&dev, b.device), CUGL_OK, NULL);
    if (dev)
        CHECK_STATUS(cugl_device_set_current(dev), CUGL_OK, NULL);
    cugl_mpi_compositor *c = NULL;
    CHECK_STATUS(cugl_mpi_compositor_create(&c, MPI_COMM_WORLD, ctx,
                                            &(cugl_mpi_compositor_desc){
                                                .device = dev, .timeout_seconds = 30}),
                 CUGL_OK, NULL);
    if (c) {
        CHECK(strcmp(cugl_mpi_compositor_transport(c), "host-pinned") == 0,
              "transport \"%s\"", cugl_mpi_compositor_transport(c));
        composite_equals_one_process(c, 6, 0, false);
        check_stats(c, 1, 0, false);
    }
    cugl_mpi_compositor_destroy(c);
    end();
}

/*
 * The last rank ends without MPI_Finalize once the compositor is made,
 * while the others composite: MPI's runtime (Open MPI's mpirun) ends the
 * job. Run alone (--rank-dies) by rank_dies.sh, which checks that the job
 * ended, and soon, rather than waiting for the compositor's timeout.
 */
static int rank_dies(void)
{
    cugl_mpi_compositor *c = NULL;
    if (cugl_mpi_compositor_create(&c, MPI_COMM_WORLD, ctx,
                                   &(cugl_mpi_compositor_desc){.timeout_seconds = 20}) !=
        CUGL_OK) {
        printf("# rank %d: %s\n", rank, cugl_last_error());
        return 1;
    }
    if (rank == size - 1) {
        printf("# rank %d ends now, without MPI_Finalize\n", rank);
        fflush(stdout);
        _exit(3);
    }
    GLuint fb = cugl_app_context_framebuffer(ctx);
    for (int i = 0; i < 1000; i++) {
        if (cugl_mpi_compositor_composite(c, fb) != CUGL_OK) {
            printf("# rank %d, composite %d: %s\n", rank, i, cugl_last_error());
            break;
        }
    }
    printf("# rank %d was not ended by MPI's runtime\n", rank);
    fflush(stdout);
    _exit(1);
}

/*
 * The last rank never comes, at create and then at a composite: the
 * others give up after the timeout with a message. The collectives left
 * pending are on communicators of their own (duplicated here), so that
 * nothing later on MPI_COMM_WORLD can meet them.
 */
static void test_missing_rank(void)
{
    if (size == 1) {
        skip("a rank that never comes", "needs two ranks");
        skip("a rank that never comes to a composite", "needs two ranks");
        return;
    }
    int last = size - 1;
    begin("a rank that never comes");
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    if (rank != last) {
        cugl_mpi_compositor *c = NULL;
        double t0 = MPI_Wtime();
        char want[160];
        snprintf(want, sizeof want, "not every rank of the %d joined within 1.0 s", size);
        CHECK_STATUS(cugl_mpi_compositor_create(
                         &c, comm, ctx, &(cugl_mpi_compositor_desc){.timeout_seconds = 1.0}),
                     CUGL_ERROR_NOT_READY, want);
        double waited = MPI_Wtime() - t0;
        CHECK(waited >= 1.0 && waited < 20, "gave up after %.2f s", waited);
        CHECK(c == NULL, "a compositor after a timeout");
        if (rank == 0)
            printf("# %s\n", cugl_last_error());
    }
    end();

    begin("a rank that never comes to a composite");
    MPI_Comm comm2;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm2);
    cugl_mpi_compositor *c = NULL;
    CHECK_STATUS(cugl_mpi_compositor_create(&c, comm2, ctx,
                                            &(cugl_mpi_compositor_desc){.timeout_seconds = 1.0}),
                 CUGL_OK, NULL);
    if (c && rank != last) {
        GLuint fb = cugl_app_context_framebuffer(ctx);
        CHECK_STATUS(cugl_mpi_compositor_composite(c, fb), CUGL_ERROR_NOT_READY,
                     "composite 0: not every rank");
        CHECK_STATUS(cugl_mpi_compositor_composite(c, fb), CUGL_ERROR_INVALID_STATE,
                     "gave up waiting for the ranks");
    }
    cugl_mpi_compositor_destroy(c);
    end();
}

/*
 * cugl_mpi_wait, a program's own deadline: a collective every rank joins
 * completes; one the last rank joins only 1.5 s late times out on the
 * others after 0.3 s with the message, and completes when waited for
 * again without a limit; bad arguments are refused. On a communicator of
 * its own, so the late collective meets nothing else.
 */
static void test_wait(void)
{
    begin("cugl_mpi_wait: a deadline for a program's own collectives");
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    int value = rank == 0 ? 42 : -1;
    MPI_Request req;
    MPI_Ibcast(&value, 1, MPI_INT, 0, comm, &req);
    CHECK_STATUS(cugl_mpi_wait(&req, comm, 10.0, "all there"), CUGL_OK, NULL);
    CHECK(value == 42, "the broadcast brought %d, not 42", value);
    CHECK(req == MPI_REQUEST_NULL, "the request is not freed");

    if (size > 1) {
        int last = size - 1, sum = 0, one = 1;
        if (rank == last)
            nanosleep(&(struct timespec){.tv_sec = 1, .tv_nsec = 500000000}, NULL);
        MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm, &req);
        if (rank != last) {
            char want[160];
            snprintf(want, sizeof want,
                     "cugl_mpi_wait: the late one: not every rank of the %d joined within "
                     "0.3 s",
                     size);
            double t0 = MPI_Wtime();
            CHECK_STATUS(cugl_mpi_wait(&req, comm, 0.3, "the late one"), CUGL_ERROR_NOT_READY,
                         want);
            double waited = MPI_Wtime() - t0;
            CHECK(waited >= 0.3 && waited < 1.4, "gave up after %.2f s", waited);
        }
        CHECK_STATUS(cugl_mpi_wait(&req, comm, -1, "the late one again"), CUGL_OK, NULL);
        CHECK(sum == size, "the sum is %d, not %d", sum, size);
    }

    MPI_Request none = MPI_REQUEST_NULL;
    CHECK_STATUS(cugl_mpi_wait(&none, comm, 1.0, "nothing"), CUGL_OK, NULL);
    CHECK_STATUS(cugl_mpi_wait(NULL, comm, 1.0, "x"), CUGL_ERROR_INVALID_ARGUMENT,
                 "cugl_mpi_wait: req is NULL");
    CHECK_STATUS(cugl_mpi_wait(&none, comm, 1.0, NULL), CUGL_ERROR_INVALID_ARGUMENT,
                 "cugl_mpi_wait: what is NULL");
    CHECK_STATUS(cugl_mpi_wait(&none, comm, NAN, "x"), CUGL_ERROR_INVALID_ARGUMENT,
                 "x: the timeout is NaN");
    CHECK_STATUS(cugl_mpi_wait(&none, MPI_COMM_NULL, 1.0, "x"), CUGL_ERROR_INVALID_ARGUMENT,
                 "x: comm is not a communicator");
    MPI_Comm_free(&comm);
    end();
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *w = getenv("CUGL_MPI_TEST_WATCHDOG");
    if (w && atoi(w) > 0)
        watchdog_seconds = (unsigned)atoi(w);
    signal(SIGALRM, on_alarm);
    begin("making the contexts");

    /* Skip on every rank when any rank has no headless GL. */
    cugl_status st = cugl_app_context_create(&ctx, &(cugl_app_context_desc){
                                                       .mode = CUGL_APP_HEADLESS,
                                                       .width = W,
                                                       .height = H,
                                                       .cuda_device = -1,
                                                   });
    if (st == CUGL_OK && !gladLoadGL(cugl_app_gl_proc))
        st = cugl_report_error(CUGL_ERROR_GL, "test_compositor", "GLAD cannot load GL");
    int why = st == CUGL_OK ? 0 : st == CUGL_ERROR_NOT_SUPPORTED ? 1 : 2, worst = 0;
    char message[512];
    snprintf(message, sizeof message, "%s", cugl_last_error());
    MPI_Allreduce(&why, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (worst != 0) {
        if (why != 0)
            printf("# rank %d: %s\n", rank, message);
        /* CUGL_TEST_NO_SKIP (machines known to have GL): a skip is a failure. */
        if (worst == 1 && getenv("CUGL_TEST_NO_SKIP"))
            worst = 2;
        if (rank == 0)
            printf(worst == 1 ? "1..0 # SKIP no headless GL context: %s\n"
                              : "Bail out! a rank could not make its context: %s\n",
                   why ? message : "see the ranks' lines");
        fflush(stdout);
        MPI_Barrier(MPI_COMM_WORLD);
        cugl_app_context_destroy(ctx);
        MPI_Finalize();
        return worst == 1 ? 77 : 1;
    }
    setup_drawing();
    alarm(0);

    if (argc > 1 && strcmp(argv[1], "--rank-dies") == 0)
        return rank_dies();
    if (rank == 0) {
        printf("1..12\n# %d ranks, GL: %s\n", size, cugl_app_context_renderer(ctx));
        fflush(stdout);
    }
    test_arguments();
    test_wait();
    test_bind();
    test_depth();
    test_depth_last_root();
    test_additive();
    test_ties();
    test_disagree();
    test_composite_refused();
    test_pinned();
    test_missing_rank();

    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
    glDeleteProgram(program);
    glDeleteVertexArrays(1, &vao);
    glDeleteBuffers(1, &vbo);
    cugl_app_context_destroy(ctx);
    MPI_Finalize();
    return tests_failed ? 1 : 0;
}
