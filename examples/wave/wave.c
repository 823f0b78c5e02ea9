/*
 * wave.c - a program of one's own on an installed cugl: a 2-D wave field
 * simulated by its own kernels (wave.cu, built to a fatbin that the
 * program carries), drawn live through a cugl_app_target on whichever
 * interop path works here, steered with the mouse (a click or drag drops a
 * stone), and served to a browser with --serve. It uses no GL of its own.
 *
 * usage: wave [--headless] [--size WxH] [--frames N] [--interop auto|map|shared|host]
 *             [--serve PORT] [--screenshot FILE.png] [--check]
 *   --frames N  stop after N frames (headless: 120); a stone falls every 40
 *   --check     at the end, compute the same frames on the CPU (wave_math.h)
 *               and compare the last picture byte for byte
 * Exit status: 0, 1 on a failure, 2 on a bad command line, 77 where there
 * is no CUDA device (the message says so).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cugl/app.h>

#include "wave_math.h"

/* The kernels' fatbin, carried by the program (fatbin.c). */
extern const unsigned char wave_fatbin[], wave_fatbin_end[];

#define CHECK(call)                                                           \
    do {                                                                      \
        if ((call) != CUGL_OK) {                                              \
            fprintf(stderr, "wave: %s: %s\n", #call, cugl_last_error());      \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

typedef struct options {
    bool headless, check;
    int width, height;
    long frames;
    int port;
    cugl_app_interop interop;
    const char *screenshot;
} options;

static void usage_error(const char *what)
{
    fprintf(stderr, "wave: %s\nusage: wave [--headless] [--size WxH] [--frames N] "
                    "[--interop auto|map|shared|host] [--serve PORT] [--screenshot FILE.png] "
                    "[--check]\n",
            what);
    exit(2);
}

static options parse(int argc, char **argv)
{
    options o = {.width = 640, .height = 480, .port = -1};
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--headless") == 0)
            o.headless = true;
        else if (strcmp(argv[i], "--check") == 0)
            o.check = true;
        else if (strcmp(argv[i], "--size") == 0 && v && ++i &&
                 sscanf(v, "%dx%d", &o.width, &o.height) == 2 && o.width > 2 && o.height > 2)
            ;
        else if (strcmp(argv[i], "--frames") == 0 && v && ++i && (o.frames = atol(v)) > 0)
            ;
        else if (strcmp(argv[i], "--serve") == 0 && v && ++i && (o.port = atoi(v)) >= 0)
            ;
        else if (strcmp(argv[i], "--screenshot") == 0 && v && ++i)
            o.screenshot = v;
        else if (strcmp(argv[i], "--interop") == 0 && v && ++i) {
            o.interop = (cugl_app_interop)-1;
            for (int p = CUGL_APP_INTEROP_AUTO; p <= CUGL_APP_INTEROP_HOST; p++)
                if (strcmp(v, cugl_app_interop_name((cugl_app_interop)p)) == 0)
                    o.interop = (cugl_app_interop)p;
            if ((int)o.interop < 0)
                usage_error("--interop takes auto, map, shared or host");
        } else {
            usage_error(argv[i]);
        }
    }
    if (o.frames == 0 && (o.headless || o.check))
        o.frames = 120;
    return o;
}

/* The stones of a run: every 40th frame one falls at a place of the frame
 * number's (the same on the GPU and in the check); the mouse adds more. */
static bool scripted_stone(long frame, int w, int h, int *x, int *y)
{
    if (frame % 40 != 0)
        return false;
    *x = (int)(w / 4 + (frame * 37) % (w / 2));
    *y = (int)(h / 4 + (frame * 23) % (h / 2));
    return true;
}

/* The CPU's frames, as the GPU's (scripted stones only), and the last
 * picture compared byte for byte with the screenshot's pixels. */
static int check(const options *o, const uint8_t *picture)
{
    int w = o->width, h = o->height;
    size_t n = (size_t)w * h;
    float *f[3] = {calloc(n, 4), calloc(n, 4), calloc(n, 4)};
    uint8_t *want = malloc(n * 4);
    int prev = 0, cur = 1, next = 2, sx, sy;
    for (long frame = 0; frame < o->frames; frame++) {
        if (scripted_stone(frame, w, h, &sx, &sy))
            for (size_t i = 0; i < n; i++)
                f[cur][i] = wave_dropped(f[cur][i], (int)(i % w), (int)(i / w), sx, sy);
        for (size_t i = 0; i < n; i++)
            f[next][i] = wave_next(f[prev], f[cur], w, h, (int)(i % w), (int)(i / w));
        int t = prev;
        prev = cur;
        cur = next;
        next = t;
    }
    /* The screenshot's rows run top to bottom; the field's row 0 is GL's bottom. */
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            wave_colour(want + ((size_t)(h - 1 - y) * w + x) * 4, f[cur][(size_t)y * w + x]);
    size_t differ = 0;
    for (size_t i = 0; i < n * 4; i++)
        differ += want[i] != picture[i];
    printf("wave: --check: %zu of %zu bytes differ from the CPU's picture\n", differ, n * 4);
    for (int i = 0; i < 3; i++)
        free(f[i]);
    free(want);
    return differ == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    options o = parse(argc, argv);
    int w = o.width, h = o.height;
    cugl_device *dev = NULL;
    cugl_status st = cugl_device_get(&dev, 0);
    if (st == CUGL_ERROR_NO_DRIVER || st == CUGL_ERROR_NO_DEVICE) {
        printf("wave: no CUDA device here, and the wave is CUDA's: %s\n", cugl_last_error());
        return 77;
    }
    CHECK(st);
    CHECK(cugl_device_set_current(dev));
    cugl_stream *stream;
    CHECK(cugl_stream_create(&stream, dev, NULL));

    cugl_app_context *ctx;
    CHECK(cugl_app_context_create(&ctx, &(cugl_app_context_desc){
                                            .mode = o.headless ? CUGL_APP_HEADLESS : CUGL_APP_AUTO,
                                            .width = w, .height = h, .title = "wave"}));
    cugl_module *module;
    cugl_kernel *step, *drop, *draw;
    CHECK(cugl_module_load_data(&module, dev, wave_fatbin, (size_t)(wave_fatbin_end - wave_fatbin)));
    CHECK(cugl_module_get_kernel(&step, module, "wave_step"));
    CHECK(cugl_module_get_kernel(&drop, module, "wave_drop"));
    CHECK(cugl_module_get_kernel(&draw, module, "wave_draw"));

    /* Three fields, taking turns as the one before, now and next. */
    cugl_memory_resource *mr;
    cugl_buffer *field[3];
    const float zero = 0.0f;
    CHECK(cugl_device_memory_resource_create(&mr, dev, NULL));
    for (int i = 0; i < 3; i++) {
        CHECK(cugl_memory_resource_allocate(&field[i], mr, (size_t)w * h * 4, stream));
        CHECK(cugl_buffer_fill(field[i], &zero, 4, stream));
    }

    cugl_app_target *image;
    CHECK(cugl_app_target_create(&image, ctx, &(cugl_app_target_desc){
                                                  .width = w, .height = h,
                                                  .interop = o.interop}));
    printf("wave: %dx%d, --interop %s: %s\n", w, h,
           cugl_app_interop_name(cugl_app_target_interop(image)), cugl_app_target_reason(image));
#if CUGL_APP_HAS_SERVE
    cugl_app_server *server = NULL;
    if (o.port >= 0) {
        CHECK(cugl_app_server_create(&server, ctx, &(cugl_app_server_desc){.port = o.port,
                                                                            .name = "wave"}));
        printf("wave: serving on http://127.0.0.1:%d/\n", cugl_app_server_port(server));
    }
#else
    if (o.port >= 0)
        usage_error("--serve: this cugl was built without its frame server");
#endif
    fflush(stdout);

    cugl_launch_config grid = {.grid = {(uint32_t)(w + 15) / 16, (uint32_t)(h + 15) / 16, 1},
                               .block = {16, 16, 1}};
    int prev = 0, cur = 1, next = 2;
    double cursor[2] = {0, 0};
    bool held = false;
    uint8_t *picture = o.check ? malloc((size_t)w * h * 4) : NULL;
    for (long frame = 0; (o.frames == 0 || frame < o.frames) &&
                         !cugl_app_context_should_close(ctx);
         frame++) {
        /* Stones: the run's own, and a click or a drag of the left button. */
        int sx, sy, stones = 0, at[64][2];
        if (scripted_stone(frame, w, h, &sx, &sy)) {
            at[stones][0] = sx;
            at[stones++][1] = sy;
        }
        size_t count = 0;
        const cugl_app_event *ev = cugl_app_context_events(ctx, &count, NULL);
        for (size_t i = 0; i < count && stones < 64; i++) {
            if (ev[i].type == CUGL_APP_EVENT_MOVE) {
                cursor[0] = ev[i].x;
                cursor[1] = ev[i].y;
            } else if (ev[i].type == CUGL_APP_EVENT_BUTTON && ev[i].code == 0) {
                held = ev[i].down;
            } else {
                continue;
            }
            if (held) { /* rows of the picture run bottom to top */
                at[stones][0] = (int)cursor[0];
                at[stones++][1] = h - 1 - (int)cursor[1];
            }
        }
        for (int i = 0; i < stones; i++) {
            uint64_t f = cugl_buffer_handle(field[cur]);
            void *args[] = {&f, &w, &h, &at[i][0], &at[i][1]};
            CHECK(cugl_launch(stream, &grid, drop, args, 5));
        }
        uint64_t p = cugl_buffer_handle(field[prev]), c = cugl_buffer_handle(field[cur]),
                 n = cugl_buffer_handle(field[next]);
        void *step_args[] = {&p, &c, &n, &w, &h};
        CHECK(cugl_launch(stream, &grid, step, step_args, 5));
        int t = prev;
        prev = cur;
        cur = next;
        next = t;

        /* CUDA writes the picture; GL shows it. */
        cugl_app_access a;
        CHECK(cugl_app_target_cuda_begin(image, stream, &a));
        uint64_t shown = cugl_buffer_handle(field[cur]);
        void *draw_args[] = {&a, &shown, &w, &h};
        CHECK(cugl_launch(stream, &grid, draw, draw_args, 4));
        CHECK(cugl_app_target_cuda_end(image, stream));
        CHECK(cugl_app_context_bind_framebuffer(ctx));
        CHECK(cugl_app_target_draw(image));
#if CUGL_APP_HAS_SERVE
        if (server)
            CHECK(cugl_app_server_frame(server));
#endif
        if (o.frames != 0 && frame + 1 == o.frames && o.screenshot)
            CHECK(cugl_app_screenshot(ctx, o.screenshot));
        if (o.frames != 0 && frame + 1 == o.frames && picture)
            CHECK(cugl_app_read_pixels(picture, (size_t)w * h * 4, ctx));
        CHECK(cugl_app_context_present(ctx));
    }

    int rc = picture ? check(&o, picture) : 0;
    free(picture);
#if CUGL_APP_HAS_SERVE
    cugl_app_server_destroy(server);
#endif
    cugl_app_target_destroy(image);
    for (int i = 0; i < 3; i++)
        cugl_buffer_release(field[i]);
    cugl_memory_resource_release(mr);
    cugl_kernel_release(step);
    cugl_kernel_release(drop);
    cugl_kernel_release(draw);
    cugl_module_release(module);
    cugl_stream_release(stream);
    cugl_app_context_destroy(ctx);
    return rc;
}
