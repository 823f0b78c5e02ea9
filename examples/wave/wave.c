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
 * Where there is no CUDA device, the CPU computes the same wave and the
 * host path shows it (copied into the target from host memory).
 * Exit status: 0, 1 on a failure, 2 on a bad command line.
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

/* The wave on the CPU (wave_math.h): the program's reference for --check,
 * and its simulation where there is no CUDA device. Three fields take turns
 * as the one before, now and next. */
typedef struct cpu_wave {
    int w, h, prev, cur, next;
    float *f[3];
} cpu_wave;

static cpu_wave cpu_wave_create(int w, int h)
{
    size_t n = (size_t)w * h;
    cpu_wave c = {w, h, 0, 1, 2, {calloc(n, 4), calloc(n, 4), calloc(n, 4)}};
    if (!c.f[0] || !c.f[1] || !c.f[2]) {
        fprintf(stderr, "wave: out of memory for %dx%d fields\n", w, h);
        exit(1);
    }
    return c;
}

static void cpu_wave_step(cpu_wave *c, int stones, int at[][2])
{
    int w = c->w, h = c->h;
    size_t n = (size_t)w * h;
    for (int s = 0; s < stones; s++)
        for (size_t i = 0; i < n; i++)
            c->f[c->cur][i] = wave_dropped(c->f[c->cur][i], (int)(i % w), (int)(i / w), at[s][0],
                                           at[s][1]);
    for (size_t i = 0; i < n; i++)
        c->f[c->next][i] = wave_next(c->f[c->prev], c->f[c->cur], w, h, (int)(i % w), (int)(i / w));
    int t = c->prev;
    c->prev = c->cur;
    c->cur = c->next;
    c->next = t;
}

/* The picture of the field now, row 0 first (GL's bottom row), or, with
 * `top_down`, as a screenshot's rows run. */
static void cpu_wave_picture(const cpu_wave *c, uint8_t *rgba, bool top_down)
{
    for (int y = 0; y < c->h; y++)
        for (int x = 0; x < c->w; x++)
            wave_colour(rgba + ((size_t)(top_down ? c->h - 1 - y : y) * c->w + x) * 4,
                        c->f[c->cur][(size_t)y * c->w + x]);
}

static void cpu_wave_destroy(cpu_wave *c)
{
    for (int i = 0; i < 3; i++)
        free(c->f[i]);
}

/* The CPU's frames, as the program's (scripted stones only), and the last
 * picture compared byte for byte with the screenshot's pixels. */
static int check(const options *o, const uint8_t *picture)
{
    size_t bytes = (size_t)o->width * o->height * 4;
    cpu_wave c = cpu_wave_create(o->width, o->height);
    uint8_t *want = malloc(bytes);
    for (long frame = 0; frame < o->frames; frame++) {
        int at[1][2];
        cpu_wave_step(&c, scripted_stone(frame, o->width, o->height, &at[0][0], &at[0][1]), at);
    }
    cpu_wave_picture(&c, want, true);
    size_t differ = 0;
    for (size_t i = 0; i < bytes; i++)
        differ += want[i] != picture[i];
    printf("wave: --check: %zu of %zu bytes differ from the CPU's picture\n", differ, bytes);
    cpu_wave_destroy(&c);
    free(want);
    return differ == 0 ? 0 : 1;
}

/* The wave on the GPU: the kernels of wave.cu, loaded from the fatbin the
 * program carries, over three fields in device memory. */
typedef struct gpu_wave {
    int w, h, prev, cur, next;
    cugl_stream *stream;
    cugl_module *module;
    cugl_kernel *step, *drop, *draw;
    cugl_memory_resource *mr;
    cugl_buffer *field[3];
    cugl_launch_config grid;
} gpu_wave;

static void gpu_wave_create(gpu_wave *g, cugl_device *dev, int w, int h)
{
    *g = (gpu_wave){.w = w, .h = h, .prev = 0, .cur = 1, .next = 2,
                    .grid = {.grid = {(uint32_t)(w + 15) / 16, (uint32_t)(h + 15) / 16, 1},
                             .block = {16, 16, 1}}};
    const float zero = 0.0f;
    CHECK(cugl_device_set_current(dev));
    CHECK(cugl_stream_create(&g->stream, dev, NULL));
    CHECK(cugl_module_load_data(&g->module, dev, wave_fatbin,
                                (size_t)(wave_fatbin_end - wave_fatbin)));
    CHECK(cugl_module_get_kernel(&g->step, g->module, "wave_step"));
    CHECK(cugl_module_get_kernel(&g->drop, g->module, "wave_drop"));
    CHECK(cugl_module_get_kernel(&g->draw, g->module, "wave_draw"));
    CHECK(cugl_device_memory_resource_create(&g->mr, dev, NULL));
    for (int i = 0; i < 3; i++) {
        CHECK(cugl_memory_resource_allocate(&g->field[i], g->mr, (size_t)w * h * 4, g->stream));
        CHECK(cugl_buffer_fill(g->field[i], &zero, 4, g->stream));
    }
}

static void gpu_wave_step(gpu_wave *g, int stones, int at[][2])
{
    for (int i = 0; i < stones; i++) {
        uint64_t f = cugl_buffer_handle(g->field[g->cur]);
        void *args[] = {&f, &g->w, &g->h, &at[i][0], &at[i][1]};
        CHECK(cugl_launch(g->stream, &g->grid, g->drop, args, 5));
    }
    uint64_t p = cugl_buffer_handle(g->field[g->prev]), c = cugl_buffer_handle(g->field[g->cur]),
             n = cugl_buffer_handle(g->field[g->next]);
    void *args[] = {&p, &c, &n, &g->w, &g->h};
    CHECK(cugl_launch(g->stream, &g->grid, g->step, args, 5));
    int t = g->prev;
    g->prev = g->cur;
    g->cur = g->next;
    g->next = t;
}

/* CUDA writes the picture into the target; GL shows it. */
static void gpu_wave_draw(gpu_wave *g, cugl_app_target *image)
{
    cugl_app_access a;
    CHECK(cugl_app_target_cuda_begin(image, g->stream, &a));
    uint64_t shown = cugl_buffer_handle(g->field[g->cur]);
    void *args[] = {&a, &shown, &g->w, &g->h};
    CHECK(cugl_launch(g->stream, &g->grid, g->draw, args, 4));
    CHECK(cugl_app_target_cuda_end(image, g->stream));
}

static void gpu_wave_destroy(gpu_wave *g)
{
    for (int i = 0; i < 3; i++)
        cugl_buffer_release(g->field[i]);
    cugl_memory_resource_release(g->mr);
    cugl_kernel_release(g->step);
    cugl_kernel_release(g->drop);
    cugl_kernel_release(g->draw);
    cugl_module_release(g->module);
    cugl_stream_release(g->stream);
}

/* The picture computed on the CPU, shown through the host path: copied
 * into the target from host memory (a view of height x width x 4 bytes). */
static void cpu_wave_draw(const cpu_wave *c, cugl_app_target *image, uint8_t *rgba)
{
    cugl_buffer *b;
    cugl_layout l;
    cugl_view *v;
    cpu_wave_picture(c, rgba, false);
    CHECK(cugl_buffer_from_handle(&b, (uint64_t)(uintptr_t)rgba, (size_t)c->w * c->h * 4, NULL));
    CHECK(cugl_layout_init_bytes(&l, 3, (int64_t[]){c->h, c->w, 4}, NULL, 1));
    CHECK(cugl_view_from_buffer(&v, b, &l, (cugl_dtype){CUGL_DTYPE_UINT, 8, 1}, true));
    CHECK(cugl_app_target_copy_from(image, v, NULL));
    cugl_view_release(v);
    cugl_buffer_release(b);
}

int main(int argc, char **argv)
{
    options o = parse(argc, argv);
    int w = o.width, h = o.height;

    /* The GPU's wave where there is a CUDA device; the CPU's elsewhere. */
    cugl_device *dev = NULL;
    cugl_status st = cugl_device_get(&dev, 0);
    bool on_gpu = st == CUGL_OK;
    if (st != CUGL_ERROR_NO_DRIVER && st != CUGL_ERROR_NO_DEVICE)
        CHECK(st);
    if (!on_gpu)
        printf("wave: %s: the CPU computes the wave\n", cugl_last_error());
    gpu_wave gpu = {0};
    cpu_wave cpu = {0};
    uint8_t *rgba = NULL;
    cugl_app_context *ctx;
    CHECK(cugl_app_context_create(&ctx, &(cugl_app_context_desc){
                                            .mode = o.headless ? CUGL_APP_HEADLESS : CUGL_APP_AUTO,
                                            .width = w, .height = h, .title = "wave",
                                            .cuda_device = on_gpu ? 0 : -1}));
    if (on_gpu) {
        gpu_wave_create(&gpu, dev, w, h);
    } else {
        cpu = cpu_wave_create(w, h);
        rgba = malloc((size_t)w * h * 4);
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

    double cursor[2] = {0, 0};
    bool held = false;
    uint8_t *picture = o.check ? malloc((size_t)w * h * 4) : NULL;
    if ((!on_gpu && !rgba) || (o.check && !picture)) {
        fprintf(stderr, "wave: out of memory for a %dx%d picture\n", w, h);
        return 1;
    }
    for (long frame = 0; (o.frames == 0 || frame < o.frames) &&
                         !cugl_app_context_should_close(ctx);
         frame++) {
        /* Stones: the run's own, and a click or a drag of the left button. */
        int stones = 0, at[64][2];
        stones += scripted_stone(frame, w, h, &at[0][0], &at[0][1]);
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
        if (on_gpu) {
            gpu_wave_step(&gpu, stones, at);
            gpu_wave_draw(&gpu, image);
        } else {
            cpu_wave_step(&cpu, stones, at);
            cpu_wave_draw(&cpu, image, rgba);
        }
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
    if (on_gpu)
        gpu_wave_destroy(&gpu);
    else
        cpu_wave_destroy(&cpu);
    free(rgba);
    cugl_app_context_destroy(ctx);
    return rc;
}
