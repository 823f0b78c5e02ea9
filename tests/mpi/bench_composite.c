/*
 * bench_composite.c - what a composite costs: run by mpirun (run_mpi.sh)
 * on N ranks, each with a headless GL context of WIDTH x HEIGHT (1920 x
 * 1080 unless given) that has drawn a few overlapping triangles, for both
 * modes. Each round starts with a barrier, so a round's time is the
 * composite's alone; a round takes as long as its slowest rank. Printed:
 * the median, 10th and 90th percentile over the rounds of that slowest
 * rank's time, and of its MPI part; each rank's bytes combined and
 * gathered against the image's size (the binary-swap bound is 2x).
 *
 *   bench_composite [ROUNDS [WIDTH HEIGHT]]     (ROUNDS: 50)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glad/gl.h> /* the test's own GL loader */

#include <cugl/mpi.h>

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double percentile(double *v, int n, int p)
{
    qsort(v, (size_t)n, sizeof *v, compare_doubles);
    int i = (p * n + 99) / 100 - 1;
    return v[i < 0 ? 0 : i >= n ? n - 1 : i];
}

/* A few overlapping triangles, depths by rank, so every rank's picture counts. */
static void draw(int rank, int size, bool additive)
{
    static const char *vs = "#version 450 core\n"
                            "uniform vec3 shift;\n"
                            "const vec2 p[3] = vec2[3](vec2(-0.9, -0.8), vec2(0.8, -0.6), "
                            "vec2(-0.2, 0.9));\n"
                            "void main() { gl_Position = vec4(p[gl_VertexID] + shift.xy, "
                            "shift.z, 1.0); }\n";
    static const char *fs = "#version 450 core\n"
                            "uniform vec4 colour;\n"
                            "out vec4 o;\n"
                            "void main() { o = colour; }\n";
    static GLuint program, vao;
    if (!program) {
        if (cugl_app_program(&program, "bench-part", vs, fs) != CUGL_OK) {
            printf("Bail out! %s\n", cugl_last_error());
            exit(1);
        }
        glCreateVertexArrays(1, &vao);
    }
    glClearColor(0, 0, 0, additive ? 0.0f : 1.0f);
    glClearDepth(1.0);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
    if (additive) {
        glEnable(GL_BLEND);
        glBlendFunc(GL_ONE, GL_ONE);
    } else {
        glEnable(GL_DEPTH_TEST);
    }
    glUseProgram(program);
    glBindVertexArray(vao);
    float s = size > 1 ? (float)rank / (float)(size - 1) : 0.0f;
    glUniform3f(glGetUniformLocation(program, "shift"), 0.3f * s - 0.15f, 0.2f - 0.3f * s,
                0.5f - 0.8f * s);
    glUniform4f(glGetUniformLocation(program, "colour"), s, 0.5f, 1.0f - s, 1.0f);
    glDrawArrays(GL_TRIANGLES, 0, 3);
    glDisable(GL_BLEND);
    glDisable(GL_DEPTH_TEST);
    glFinish();
}

static int run(cugl_app_context *ctx, int rank, int size, int rounds, bool additive)
{
    cugl_mpi_compositor *c = NULL;
    cugl_mpi_composite_mode mode = additive ? CUGL_MPI_COMPOSITE_ADD : CUGL_MPI_COMPOSITE_DEPTH;
    if (cugl_mpi_compositor_create(&c, MPI_COMM_WORLD, ctx,
                                   &(cugl_mpi_compositor_desc){.mode = mode}) != CUGL_OK) {
        printf("Bail out! rank %d: %s\n", rank, cugl_last_error());
        return 1;
    }
    GLuint fb = cugl_app_context_framebuffer(ctx);
    draw(rank, size, additive);
    double *total = calloc((size_t)rounds, sizeof *total);
    double *mpi = calloc((size_t)rounds, sizeof *mpi);
    cugl_mpi_composite_stats s = {0};
    int failed = 0;
    for (int i = -3; i < rounds && !failed; i++) { /* three rounds to warm up */
        MPI_Barrier(MPI_COMM_WORLD);
        failed = cugl_mpi_compositor_composite(c, fb) != CUGL_OK;
        if (failed)
            printf("Bail out! rank %d: %s\n", rank, cugl_last_error());
        cugl_mpi_compositor_stats(&s, c);
        double mine[2] = {s.seconds, s.mpi_seconds}, slowest[2];
        MPI_Allreduce(mine, slowest, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (i >= 0) {
            total[i] = slowest[0];
            mpi[i] = slowest[1];
        }
    }
    unsigned long long bytes[3] = {s.reduce_bytes, s.gather_bytes, s.bytes_sent};
    unsigned long long *all = calloc(3 * (size_t)size, sizeof *all);
    MPI_Gather(bytes, 3, MPI_UNSIGNED_LONG_LONG, all, 3, MPI_UNSIGNED_LONG_LONG, 0,
               MPI_COMM_WORLD);
    if (rank == 0 && !failed) {
        int w = 0, h = 0;
        cugl_app_context_size(ctx, &w, &h);
        printf("%s, %d x %d, %d ranks, %s memory: a composite %.2f ms (p10 %.2f, p90 %.2f), "
               "of which MPI %.2f ms (p10 %.2f, p90 %.2f), over %d rounds\n",
               additive ? "additive (RGBA8)" : "depth (RGBA8 + 32-bit depth)", w, h, size,
               cugl_mpi_compositor_transport(c), percentile(total, rounds, 50) * 1e3,
               percentile(total, rounds, 10) * 1e3, percentile(total, rounds, 90) * 1e3,
               percentile(mpi, rounds, 50) * 1e3, percentile(mpi, rounds, 10) * 1e3,
               percentile(mpi, rounds, 90) * 1e3, rounds);
        for (int r = 0; r < size; r++) {
            double x = (double)all[3 * r + 2] / (double)s.image_bytes;
            printf("  rank %d sent %llu bytes (%llu combined in the reduce-scatter, %llu "
                   "gathered) = %.3f x the image (%llu bytes)%s\n",
                   r, all[3 * r + 2], all[3 * r], all[3 * r + 1], x,
                   (unsigned long long)s.image_bytes, x <= 2.0 ? "" : ": OVER the 2x bound");
            failed |= x > 2.0;
        }
        fflush(stdout);
    }
    free(all);
    free(total);
    free(mpi);
    cugl_mpi_compositor_destroy(c);
    return failed;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = argc > 1 ? atoi(argv[1]) : 50;
    int width = argc > 3 ? atoi(argv[2]) : 1920, height = argc > 3 ? atoi(argv[3]) : 1080;
    if (rounds < 1 || width < 1 || height < 1) {
        if (rank == 0)
            printf("usage: bench_composite [ROUNDS [WIDTH HEIGHT]]\n");
        MPI_Finalize();
        return 2;
    }
    cugl_app_context *ctx = NULL;
    cugl_status st = cugl_app_context_create(&ctx, &(cugl_app_context_desc){
                                                       .mode = CUGL_APP_HEADLESS,
                                                       .width = width,
                                                       .height = height,
                                                       .cuda_device = -1,
                                                   });
    if (st == CUGL_OK && !gladLoadGL(cugl_app_gl_proc))
        st = cugl_report_error(CUGL_ERROR_GL, "bench_composite", "GLAD cannot load GL");
    int bad = st != CUGL_OK, any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any) {
        if (bad)
            printf("rank %d: no headless GL context: %s\n", rank, cugl_last_error());
        cugl_app_context_destroy(ctx);
        MPI_Finalize();
        return 77;
    }
    if (rank == 0) {
        bool aware = false;
        char reason[512];
        cugl_mpi_cuda_aware(&aware, reason, sizeof reason);
        printf("GL: %s; %s\n", cugl_app_context_renderer(ctx), reason);
    }
    int failed = run(ctx, rank, size, rounds, false);
    failed |= run(ctx, rank, size, rounds, true);
    cugl_app_context_destroy(ctx);
    MPI_Finalize();
    return failed;
}
