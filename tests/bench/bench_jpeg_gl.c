/*
 * bench_jpeg_gl.c - the frame server's JPEG encoder in GL compute shaders
 * (lib/app/serve/jpeg_gl.c) on this GL context's GPU, against libjpeg-turbo on
 * one CPU thread, for a picture with a simulation's detail at 1920x1080
 * and 3840x2160, quality 85: encodes back to back (four in flight, as the
 * server has them), the GPU's time of each pass and of the whole encode
 * (medians over the last 100 of 130), bytes and PSNR against libjpeg-turbo's.
 * Exits 77 without a GPU under GL (llvmpipe runs the shaders on the CPU).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <turbojpeg.h>

#include <glad/gl.h>

#include "cugl/app.h"
#include "jpeg_gl.h"

enum { RUNS = 130, WARM = 30, FLIGHT = 4, QUALITY = 85 };

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static uint8_t *picture(int w, int h)
{
    uint8_t *p = malloc((size_t)w * h * 4);
    unsigned r = 1;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint8_t *q = p + ((size_t)y * w + x) * 4;
            r = r * 1103515245u + 12345u;
            double fx = (double)x / w, fy = (double)y / h;
            double v = 0.5 + 0.5 * sin(40 * fx * fx + 25 * fy) * cos(30 * fy * fx);
            q[0] = (uint8_t)(255 * v);
            q[1] = (uint8_t)(255 * fx * v + (r >> 29));
            q[2] = (uint8_t)(255 * (1 - v) * fy);
            q[3] = 255;
        }
    return p;
}

static double psnr_of(const unsigned char *jpeg, size_t size, const uint8_t *rgba, int w, int h)
{
    tjhandle tj = tjInitDecompress();
    uint8_t *rgb = malloc((size_t)w * h * 3);
    double sum = 0;
    if (tjDecompress2(tj, jpeg, (unsigned long)size, rgb, w, 0, h, TJPF_RGB, 0) == 0) {
        for (size_t i = 0; i < (size_t)w * h; i++)
            for (int c = 0; c < 3; c++) {
                double d = (double)rgb[i * 3 + c] - rgba[i * 4 + c];
                sum += d * d;
            }
    } else {
        sum = -1;
    }
    free(rgb);
    tjDestroy(tj);
    return sum < 0 ? -1 : 10 * log10(255.0 * 255.0 / (sum / ((double)w * h * 3) + 1e-12));
}

static int run(cugl__jpeg_gl *e, int w, int h)
{
    uint8_t *rgba = picture(w, h);
    GLuint tex;
    glCreateTextures(GL_TEXTURE_2D, 1, &tex);
    glTextureStorage2D(tex, 1, GL_RGBA8, w, h);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glTextureSubImage2D(tex, 0, 0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, rgba);
    cugl__jpeg_gl_out out[FLIGHT] = {0};
    GLsync fences[FLIGHT] = {0};
    static double total[RUNS], pass[JPEG_GL_PASSES][RUNS];
    unsigned char *jpeg = NULL;
    size_t size = 0;
    char why[256];
    double start = 0;
    for (int i = 0; i < RUNS + FLIGHT; i++) {
        int k = i % FLIGHT;
        if (fences[k]) { /* encode i - FLIGHT: done? */
            glClientWaitSync(fences[k], GL_SYNC_FLUSH_COMMANDS_BIT, 10000000000ull);
            glDeleteSync(fences[k]);
            fences[k] = NULL;
            double p[JPEG_GL_PASSES];
            int n = i - FLIGHT;
            total[n] = cugl__jpeg_gl_gpu_ms(&out[k], p);
            for (int j = 0; j < JPEG_GL_PASSES; j++)
                pass[j][n] = p[j];
            bool overflowed;
            free(jpeg);
            double whole;
            jpeg = cugl__jpeg_gl_collect(&out[k], &size, &whole, &overflowed);
            if (!jpeg) {
                fprintf(stderr, "bench_jpeg_gl: no JPEG (%s)\n",
                        overflowed ? "overflowed" : "memory");
                return 1;
            }
        }
        if (i == WARM)
            start = now_ms();
        if (i < RUNS) {
            if (!cugl__jpeg_gl_encode(e, &out[k], tex, w, h, false, QUALITY, why, sizeof why)) {
                fprintf(stderr, "bench_jpeg_gl: %s\n", why);
                return 1;
            }
            fences[k] = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
        }
    }
    double wall = (now_ms() - start) / (RUNS - WARM);
    double gl_db = psnr_of(jpeg, size, rgba, w, h);
    /* libjpeg-turbo, one thread, from the RGBA in host memory. */
    tjhandle tj = tjInitCompress();
    unsigned char *theirs = NULL;
    unsigned long theirs_size = 0;
    double times[9];
    for (int i = 0; i < 9; i++) {
        double t0 = now_ms();
        tjCompress2(tj, rgba, w, 0, h, TJPF_RGBA, &theirs, &theirs_size, TJSAMP_420, QUALITY, 0);
        times[i] = now_ms() - t0;
    }
    double cpu_ms = median(times, 9), cpu_db = psnr_of(theirs, theirs_size, rgba, w, h);
    double t = median(total + WARM, RUNS - WARM), p[JPEG_GL_PASSES];
    for (int j = 0; j < JPEG_GL_PASSES; j++)
        p[j] = median(pass[j] + WARM, RUNS - WARM);
    printf("| %dx%d | %.3f | %.3f / %.3f / %.3f / %.3f / %.3f | %.3f | %.1f | %zu, %.2f dB | %lu, "
           "%.2f dB | %.1fx |\n",
           w, h, t, p[0], p[1], p[2], p[3], p[4], wall, cpu_ms, size, gl_db, theirs_size, cpu_db,
           cpu_ms / t);
    tjFree(theirs);
    tjDestroy(tj);
    free(jpeg);
    for (int k = 0; k < FLIGHT; k++)
        cugl__jpeg_gl_out_free(&out[k]);
    glDeleteTextures(1, &tex);
    free(rgba);
    return 0;
}

int main(void)
{
    cugl_app_context *ctx = NULL;
    if (cugl_app_context_create(&ctx, &(cugl_app_context_desc){.mode = CUGL_APP_HEADLESS,
                                                               .width = 64,
                                                               .height = 64,
                                                               .cuda_device = -1}) != CUGL_OK) {
        printf("1..0 # SKIP no headless GL context: %s\n", cugl_last_error());
        return 77;
    }
    if (!gladLoadGL(cugl_app_gl_proc)) {
        fprintf(stderr, "bench_jpeg_gl: GLAD cannot load GL\n");
        return 1;
    }
    const char *renderer = (const char *)glGetString(GL_RENDERER);
    if (!renderer || strstr(renderer, "llvmpipe") || strstr(renderer, "softpipe")) {
        printf("1..0 # SKIP GL renders on the CPU (%s)\n", renderer ? renderer : "?");
        cugl_app_context_destroy(ctx);
        return 77;
    }
    char why[256];
    cugl__jpeg_gl *e = cugl__jpeg_gl_open(why, sizeof why);
    if (!e) {
        fprintf(stderr, "bench_jpeg_gl: %s\n", why);
        return 1;
    }
    printf("JPEG by GL compute shaders on %s, quality %d, 4:2:0; GPU ms medians of %d "
           "encodes back to back\n\n",
           renderer, QUALITY, RUNS - WARM);
    printf("| size | GPU ms an encode | DCT / code / place / code in place / copy | wall ms an encode "
           "| libjpeg-turbo ms (1 thread) | bytes, PSNR | libjpeg-turbo's | CPU / GPU |\n");
    printf("|---|---|---|---|---|---|---|---|\n");
    int rc = run(e, 1920, 1080) || run(e, 3840, 2160);
    cugl__jpeg_gl_close(e);
    cugl_app_context_destroy(ctx);
    return rc;
}
