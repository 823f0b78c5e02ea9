/*
 * serve_app: a program that embeds libcugl-app and serves its frames
 * (cugl/app_serve.h), with GL alone, so that it runs on Mesa where no CUDA
 * is: a headless context shows an 8 x 8 board of coloured squares whose
 * colours follow an orbit camera's yaw and pitch, so a drag in a browser
 * changes the picture. It prints "serving on http://ADDR:PORT/" once the
 * server listens, and "view YAW PITCH" whenever the view changes.
 *
 * usage: serve_app [--address A] [--port N] [--token T] [--size WxH]
 *                  [--frames N] [--screenshot FILE] [--burst N] [--rate HZ] [--animate]
 *                  [--check-pattern]
 *                  [--encoder auto|cpu|gpu|nvjpeg] [--codec auto|jpeg|video]
 *                  [--cert FILE --key FILE]
 *   --address A     where to listen (cugl_app_server_desc.address); a line
 *                   "serving on ..." for each address bound
 *   --frames N      exit after N frames (default: when stdin closes)
 *   --screenshot F  write frame 0 as a PNG (the picture before any input)
 *   --burst N       render N frames back to back, then wait: 60 frames a
 *                   second on average, unevenly spaced (default 1: even)
 *   --rate HZ       frames a second on average (default 60; 0: as many as
 *                   it can)
 *   --animate       draw pattern.h's moving picture (frame N's is known to
 *                   a viewer) instead of the board, on the GPU
 *   --check-pattern with --animate: read each frame back and compare it
 *                   with pattern.h's, pixel by pixel; exit 1 where one differs
 *   --encoder E     cugl_app_server_desc.encoder; gpu or nvjpeg where that
 *                   encoder cannot be had: "skipped", exit 77
 *   --codec C       cugl_app_server_desc.codec
 *   --cert, --key   HTTPS and WSS with this certificate and key (PEM)
 * It prints "renderer: GL_RENDERER" and "encoder: NAME (why)" once serving.
 */
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <glad/gl.h>

#include <cugl/app.h>
#include <cugl/app_serve.h>

#include "pattern.h"
#include "pattern_gl.h"

static void die(const char *what)
{
    fprintf(stderr, "serve_app: %s: %s (%s)\n", what, cugl_last_error(),
            cugl_status_name(cugl_last_status()));
    exit(1);
}

/* The board: square (i, j) has a colour of its place and the view. */
static void draw(const cugl_app_camera *cam, int w, int h)
{
    glEnable(GL_SCISSOR_TEST);
    for (int j = 0; j < 8; j++) {
        for (int i = 0; i < 8; i++) {
            float a = cam->yaw + 0.7f * (float)i, b = cam->pitch * 2.0f + 0.5f * (float)j;
            glClearColor(0.5f + 0.5f * sinf(a), 0.5f + 0.5f * cosf(b),
                         (float)((i + j) % 2) * 0.8f, 1.0f);
            glScissor(i * w / 8, j * h / 8, (i + 1) * w / 8 - i * w / 8,
                      (j + 1) * h / 8 - j * h / 8);
            glClear(GL_COLOR_BUFFER_BIT);
        }
    }
    glDisable(GL_SCISSOR_TEST);
}

/* --check-pattern: the framebuffer read back against pattern_row, each
 * pixel exactly; exits 1 at the first that differs. */
static void check_pattern(cugl_app_context *ctx, int w, int h, long frame)
{
    uint8_t *got = malloc((size_t)w * (size_t)h * 4), *want = malloc((size_t)w * 4);
    if (!got || !want)
        die("no memory to check the pattern");
    if (cugl_app_read_pixels(got, (size_t)w * (size_t)h * 4, ctx) != CUGL_OK)
        die("cannot read the frame back");
    for (int y = 0; y < h; y++) {
        pattern_row(want, y, w, frame);
        const uint8_t *row = got + (size_t)y * (size_t)w * 4; /* rows top first */
        for (int x = 0; x < w; x++) {
            if (memcmp(row + 4 * x, want + 4 * x, 4) != 0) {
                fprintf(stderr,
                        "serve_app: frame %ld, pixel (%d, %d) from the top: %u %u %u %u, "
                        "pattern.h has %u %u %u %u\n",
                        frame, x, y, row[4 * x], row[4 * x + 1], row[4 * x + 2], row[4 * x + 3],
                        want[4 * x], want[4 * x + 1], want[4 * x + 2], want[4 * x + 3]);
                exit(1);
            }
        }
    }
    free(got);
    free(want);
}

/* Whether stdin has closed (the parent went away). */
static bool stdin_closed(void)
{
    struct pollfd p = {.fd = 0, .events = POLLIN};
    if (poll(&p, 1, 0) <= 0)
        return false;
    char buf[256];
    return read(0, buf, sizeof buf) <= 0;
}

int main(int argc, char **argv)
{
    cugl_app_server_desc desc = {.name = "serve_app"};
    int w = 320, h = 240;
    long frames = 0, burst = 1;
    double rate = 60;
    const char *screenshot = NULL;
    bool animate = false, check = false;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--address") == 0 && v)
            desc.address = argv[++i];
        else if (strcmp(argv[i], "--port") == 0 && v)
            desc.port = atoi(argv[++i]);
        else if (strcmp(argv[i], "--token") == 0 && v)
            desc.token = argv[++i];
        else if (strcmp(argv[i], "--size") == 0 && v && sscanf(argv[++i], "%dx%d", &w, &h) == 2)
            ;
        else if (strcmp(argv[i], "--frames") == 0 && v)
            frames = atol(argv[++i]);
        else if (strcmp(argv[i], "--screenshot") == 0 && v)
            screenshot = argv[++i];
        else if (strcmp(argv[i], "--animate") == 0)
            animate = true;
        else if (strcmp(argv[i], "--check-pattern") == 0)
            check = true;
        else if (strcmp(argv[i], "--cert") == 0 && v)
            desc.cert = argv[++i];
        else if (strcmp(argv[i], "--key") == 0 && v)
            desc.key = argv[++i];
        else if (strcmp(argv[i], "--codec") == 0 && v) {
            const char *c = argv[++i];
            desc.codec = strcmp(c, "video") == 0  ? CUGL_APP_SERVE_CODEC_VIDEO
                         : strcmp(c, "jpeg") == 0 ? CUGL_APP_SERVE_CODEC_JPEG
                                                  : CUGL_APP_SERVE_CODEC_AUTO;
        } else if (strcmp(argv[i], "--encoder") == 0 && v) {
            const char *e = argv[++i];
            desc.encoder = strcmp(e, "gpu") == 0      ? CUGL_APP_SERVE_ENCODER_GPU
                           : strcmp(e, "nvjpeg") == 0 ? CUGL_APP_SERVE_ENCODER_NVJPEG
                           : strcmp(e, "cpu") == 0    ? CUGL_APP_SERVE_ENCODER_CPU
                                                      : CUGL_APP_SERVE_ENCODER_AUTO;
        }
        else if (strcmp(argv[i], "--rate") == 0 && v && (rate = atof(argv[++i])) >= 0)
            ;
        else if (strcmp(argv[i], "--burst") == 0 && v && (burst = atol(argv[++i])) > 0)
            ;
        else {
            fprintf(stderr, "serve_app: bad argument '%s'\n", argv[i]);
            return 2;
        }
    }
    cugl_app_context *ctx = NULL;
    cugl_status st = cugl_app_context_create(
        &ctx, &(cugl_app_context_desc){
                  .mode = CUGL_APP_HEADLESS, .width = w, .height = h, .cuda_device = -1});
    if (st == CUGL_ERROR_NOT_SUPPORTED) {
        printf("serve_app: skipped: %s\n", cugl_last_error());
        return 77;
    }
    if (st != CUGL_OK)
        die("cannot make a headless GL context");
    if (!gladLoadGL(cugl_app_gl_proc))
        die("GLAD cannot load GL from the context");
    cugl_app_server *server = NULL;
    st = cugl_app_server_create(&server, ctx, &desc);
    if (st == CUGL_ERROR_NOT_SUPPORTED && (desc.encoder == CUGL_APP_SERVE_ENCODER_GPU ||
                                           desc.encoder == CUGL_APP_SERVE_ENCODER_NVJPEG)) {
        printf("serve_app: skipped: %s\n", cugl_last_error());
        return 77;
    }
    if (st != CUGL_OK)
        die("cannot serve");
    const char *address;
    for (int i = 0; (address = cugl_app_server_address(server, i)); i++)
        printf("serving on %s://%s%s%s:%d/\n", cugl_app_server_is_https(server) ? "https" : "http",
               strchr(address, ':') ? "[" : "", address,
               strchr(address, ':') ? "]" : "", cugl_app_server_port(server));
    printf("renderer: %s\n", (const char *)glGetString(GL_RENDERER));
    const char *why = NULL, *encoder = cugl_app_server_encoder(server, &why);
    printf("encoder: %s (%s)\n", encoder, why);
    fflush(stdout);

    cugl_app_camera cam;
    cugl_app_camera_init(&cam);
    float yaw = cam.yaw, pitch = cam.pitch;
    double next_s = 0;
    for (long f = 0; frames == 0 || f < frames; f++) {
        if (frames == 0 && stdin_closed())
            break;
        if (cugl_app_context_should_close(ctx)) { /* as a demo stops */
            printf("closing: the context asks to\n");
            break;
        }
        cugl_app_camera_update(&cam, ctx, 1.0f / 60.0f);
        if (cam.yaw != yaw || cam.pitch != pitch) {
            yaw = cam.yaw;
            pitch = cam.pitch;
            printf("view %.4f %.4f\n", (double)yaw, (double)pitch);
            fflush(stdout);
        }
        int fw, fh;
        cugl_app_context_size(ctx, &fw, &fh);
        glBindFramebuffer(GL_FRAMEBUFFER, cugl_app_context_framebuffer(ctx));
        glViewport(0, 0, fw, fh);
        if (animate) {
            long number = cugl_app_context_frame(ctx);
            if (!draw_pattern(cugl_app_context_framebuffer(ctx), fw, fh, number))
                die("cannot build the pattern's shader");
            if (check)
                check_pattern(ctx, fw, fh, number);
        } else
            draw(&cam, fw, fh);
        if (f == 0 && screenshot && cugl_app_screenshot(ctx, screenshot) != CUGL_OK)
            die("cannot write the screenshot");
        char stats[64];
        snprintf(stats, sizeof stats, "yaw %.3f pitch %.3f", (double)yaw, (double)pitch);
        cugl_app_server_set_stats(server, stats);
        if (cugl_app_server_frame(server) != CUGL_OK)
            die("cannot serve the frame");
        if (cugl_app_context_present(ctx) != CUGL_OK)
            die("cannot present");
        if (rate > 0 && (f + 1) % burst == 0) { /* `rate` frames a second, where it can */
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            double t = (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
            next_s = next_s > t - 0.1 ? next_s + (double)burst / rate : t;
            if (next_s > t)
                nanosleep(&(struct timespec){.tv_nsec = (long)((next_s - t) * 1e9)}, NULL);
        }
    }
    long encoded, sent, dropped;
    cugl_app_server_counts(server, &encoded, &sent, &dropped);
    printf("frames encoded %ld, sent %ld, dropped %ld\n", encoded, sent, dropped);
    cugl_app_server_destroy(server);
    cugl_app_context_destroy(ctx);
    return 0;
}
