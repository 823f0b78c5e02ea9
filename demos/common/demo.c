/*
 * demo.c - see demo.h.
 */
#include "demo.h"
#include "target.h"

#if CUGL_APP_HAS_UI
#include <cugl/app_ui.h>
#endif
#if CUGL_APP_HAS_SERVE
#include <cugl/app_serve.h>
#endif

#include <dirent.h>
#include <malloc.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* SIGINT or SIGTERM while serving: finish the frame, then exit cleanly. */
static volatile sig_atomic_t stop_asked;

static void ask_stop(int sig)
{
    (void)sig;
    stop_asked = 1;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int demo_fail(const demo *d, const char *what)
{
    fprintf(stderr, "%s: %s: %s\n", d->info->program, what, cugl_last_error());
    return 1;
}

static int no_gpu(const demo *d, const char *why)
{
    fprintf(stderr,
            "%s: this demo needs an NVIDIA GPU with CUDA and its driver, and found none:\n"
            "  %s\n",
            d->info->program, why);
    return 1;
}

/* Device `ordinal` (named by `flag` in messages), initialized and current;
 * DEMO_RUN or the exit status. */
static int use_device(demo *d, cugl_device **out, const char *flag, int ordinal, int count)
{
    if (ordinal >= count) {
        fprintf(stderr, "%s: %s %d: this machine has %d CUDA device%s (0 to %d)\n",
                d->info->program, flag, ordinal, count, count == 1 ? "" : "s", count - 1);
        return DEMO_EXIT_USAGE;
    }
    if (cugl_device_get(out, ordinal) != CUGL_OK || cugl_device_set_current(*out) != CUGL_OK)
        return demo_fail(d, "cannot use the CUDA device");
    return DEMO_RUN;
}

/* The GL GPU of --device and CUDA's devices, the first made current;
 * DEMO_RUN or the exit status. */
static int set_up_devices(demo *d)
{
    int count = 0;
    cugl_status st = cugl_device_count(&count);
    if (st == CUGL_ERROR_NO_DRIVER || st == CUGL_ERROR_NO_DEVICE)
        return no_gpu(d, cugl_last_error());
    if (st != CUGL_OK)
        return demo_fail(d, "cannot count the CUDA devices");
    if (count == 0)
        return no_gpu(d, "the CUDA driver sees no device");
    int rc = use_device(d, &d->gl_device, "--device", d->opt.device, count);
    if (rc != DEMO_RUN)
        return rc;
    const char *flag = d->opt.compute_count > 1 ? "--devices" : "--compute-device";
    d->device_count = d->opt.compute_count ? d->opt.compute_count : 1;
    d->devices[0] = d->gl_device;
    for (int i = 0; i < d->opt.compute_count && rc == DEMO_RUN; i++) {
        rc = use_device(d, &d->devices[i], flag, d->opt.compute[i], count);
        d->remote = d->remote || d->opt.compute[i] != d->opt.device;
    }
    d->device = d->devices[0];
    if (rc == DEMO_RUN && cugl_device_set_current(d->device) != CUGL_OK)
        rc = demo_fail(d, "cannot use the CUDA device");
    return rc;
}

/* A device's name, for messages. */
static const char *device_name(cugl_device *device, cugl_device_properties *p)
{
    return cugl_device_get_properties(device, p) == CUGL_OK ? p->name : "unknown";
}

/*
 * CUDA on GPUs other than the GL GPU: which paths reach GL from there. The
 * map path maps for the GL GPU only; shared memory needs a peer path from
 * each device to the GL GPU; host copies suit one device. Writes why not
 * into `why` and returns false.
 */
static bool path_reaches_gl(demo *d, demo_interop path, char *why, size_t size)
{
    if (!d->remote)
        return true;
    switch (path) {
    case CUGL_APP_INTEROP_AUTO:
        return true; /* choose_interop picks one that does */
    case CUGL_APP_INTEROP_MAP:
        snprintf(why, size,
                 "--interop map maps GL objects for CUDA on the GL GPU (device %d) only; with "
                 "CUDA on another device use --interop shared (or host)",
                 d->opt.device);
        return false;
    case CUGL_APP_INTEROP_SHARED:
        for (int i = 0; i < d->device_count; i++) {
            bool peer = true;
            if (d->opt.compute[i] == d->opt.device)
                continue;
            if (cugl_device_can_access_peer(&peer, d->devices[i], d->gl_device) != CUGL_OK ||
                !peer) {
                snprintf(why, size,
                         "device %d has no peer path to the GL GPU (device %d), so it cannot "
                         "write the memory GL draws from; %s",
                         d->opt.compute[i], d->opt.device,
                         d->device_count == 1 ? "--interop host copies through host memory"
                                              : "leave it out of --devices");
                return false;
            }
        }
        return true;
    case CUGL_APP_INTEROP_HOST:
        if (d->device_count == 1)
            return true;
        snprintf(why, size, "--interop host copies from one device only; --devices with %d "
                            "devices needs --interop shared",
                 d->device_count);
        return false;
    }
    return false;
}

/* F1 (GLFW_KEY_F1) hides and shows the panel. */
enum { DEMO_KEY_PANEL = 290 };

/* The UI panel: in windows, and headless with --ui. */
static int set_up_panel(demo *d)
{
    if (!d->opt.ui && d->headless)
        return DEMO_RUN;
#if CUGL_APP_HAS_UI
    if (cugl_app_ui_create(&d->ui, d->ctx) == CUGL_OK) {
        d->ui_shown = true;
        d->plot_frame = -1;
        return DEMO_RUN;
    }
    if (d->opt.ui)
        return demo_fail(d, "--ui: cannot make the UI panel");
    fprintf(stderr, "%s: no UI panel: %s\n", d->info->program, cugl_last_error());
    return DEMO_RUN;
#else
    if (d->opt.ui) {
        fprintf(stderr, "%s: --ui: this build has no UI panel (it needs Debian's libimgui-dev)\n",
                d->info->program);
        return DEMO_EXIT_USAGE;
    }
    return DEMO_RUN;
#endif
}

#if CUGL_APP_HAS_UI
/* The panel over the finished frame: the demo's path and size, the frame
 * phases of the last timed frame with a plot of frame times, and the
 * demo's own widgets. */
static void draw_panel(demo *d, const demo_callbacks *cb, void *user)
{
    cugl_app_ui *ui = d->ui;
    cugl_app_ui_begin(ui, d->dt, d->info->name);
    cugl_app_ui_text(ui, "--interop %s, %d x %d", demo_interop_name(d->opt.interop), d->width,
                     d->height);
    double gpu[CUGL_APP_TIMER_MAX_PHASES], cpu[CUGL_APP_TIMER_MAX_PHASES], frame_ms = 0;
    long timed = cugl_app_timer_last(gpu, cpu, &frame_ms, d->timer);
    if (timed >= 0) {
        if (timed != d->plot_frame) {
            memmove(d->plot, d->plot + 1, sizeof d->plot - sizeof d->plot[0]);
            d->plot[DEMO_PLOT_FRAMES - 1] = (float)frame_ms;
            d->plot_frame = timed;
        }
        cugl_app_ui_text(ui, "frame %.2f ms (%.0f fps)", frame_ms,
                         frame_ms > 0 ? 1000.0 / frame_ms : 0.0);
        cugl_app_ui_plot(ui, "frame ms", d->plot, DEMO_PLOT_FRAMES, 0.0f);
        cugl_app_phase_stats stats[CUGL_APP_TIMER_MAX_PHASES];
        cugl_app_timer_stats(stats, NULL, NULL, d->timer);
        for (int p = 0; p < CUGL_APP_TIMER_MAX_PHASES; p++)
            if (stats[p].name)
                cugl_app_ui_text(ui, "  %-10s GPU %.3f ms  CPU %.3f ms", stats[p].name, gpu[p],
                                 cpu[p]);
    }
    if (cb->panel)
        cb->panel(d, user, ui);
    glBindFramebuffer(GL_FRAMEBUFFER, cugl_app_context_framebuffer(d->ctx));
    glViewport(0, 0, d->width, d->height);
    if (cugl_app_ui_end(ui) != CUGL_OK && !d->ui_failed) {
        fprintf(stderr, "%s: UI panel: %s\n", d->info->program, cugl_last_error());
        d->ui_failed = true;
    }
}
#endif

/* --serve: the frames to web browsers, their input back. */
static int set_up_server(demo *d)
{
    if (!d->opt.serve)
        return DEMO_RUN;
#if CUGL_APP_HAS_SERVE
    const char *token = d->opt.serve_token ? d->opt.serve_token : getenv("CUGL_SERVE_TOKEN");
    cugl_app_server_desc desc = {
        .address = d->opt.serve_address,
        .port = d->opt.serve_port,
        .token = token,
        .name = d->info->program,
    };
    if (cugl_app_server_create(&d->server, d->ctx, &desc) != CUGL_OK)
        return demo_fail(d, "--serve");
    const char *address;
    for (int i = 0; (address = cugl_app_server_address(d->server, i)); i++) {
        bool v6 = strchr(address, ':') != NULL;
        printf("%s: serving on http://%s%s%s:%d/%s%s\n", d->info->program, v6 ? "[" : "",
               address, v6 ? "]" : "", cugl_app_server_port(d->server),
               token && *token ? "?token=" : "", token && *token ? token : "");
    }
    fflush(stdout);
    struct sigaction sa = {.sa_handler = ask_stop};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    return DEMO_RUN;
#else
    fprintf(stderr, "%s: --serve: this build has no frame server (it needs Debian's "
                    "libwebsockets-dev and libturbojpeg0-dev)\n",
            d->info->program);
    return DEMO_EXIT_USAGE;
#endif
}

#if CUGL_APP_HAS_SERVE
/* The frame to the viewers, with the timer's phases as the page's text. */
static void serve_frame(demo *d)
{
    char stats[CUGL_APP_SERVE_MAX_STATS] = "";
    double gpu[CUGL_APP_TIMER_MAX_PHASES], cpu[CUGL_APP_TIMER_MAX_PHASES], frame_ms = 0;
    if (d->timer && cugl_app_timer_last(gpu, cpu, &frame_ms, d->timer) >= 0) {
        cugl_app_phase_stats ph[CUGL_APP_TIMER_MAX_PHASES];
        cugl_app_timer_stats(ph, NULL, NULL, d->timer);
        int n = snprintf(stats, sizeof stats, "--interop %s, frame %.2f ms",
                         demo_interop_name(d->opt.interop), frame_ms);
        for (int p = 0; p < CUGL_APP_TIMER_MAX_PHASES && n > 0 && (size_t)n < sizeof stats; p++)
            if (ph[p].name)
                n += snprintf(stats + n, sizeof stats - (size_t)n,
                              "\n  %-10s GPU %.3f ms  CPU %.3f ms", ph[p].name, gpu[p], cpu[p]);
    }
    cugl_app_server_set_stats(d->server, stats);
    if (cugl_app_server_frame(d->server) != CUGL_OK && !d->server_failed) {
        fprintf(stderr, "%s: --serve: %s\n", d->info->program, cugl_last_error());
        d->server_failed = true;
    }
}
#endif

/* --input replays a file of events; --save-input records this run's. */
static int set_up_input(demo *d)
{
    /* Recording first: a replay's events of frame 0 are applied at once. */
    if (d->opt.save_input && cugl_app_context_record(d->ctx, d->opt.save_input) != CUGL_OK)
        return demo_fail(d, "--save-input");
    if (d->opt.input) {
        cugl_app_event *events = NULL;
        size_t count = 0;
        cugl_status st = cugl_app_events_read(&events, &count, d->opt.input);
        if (st == CUGL_OK)
            st = cugl_app_context_replay(d->ctx, events, count);
        cugl_app_events_free(events);
        if (st != CUGL_OK)
            return demo_fail(d, "--input");
        printf("%s: replaying %zu input events from %s\n", d->info->program, count,
               d->opt.input);
    }
    return DEMO_RUN;
}

/* --interop auto: the fastest path this context and CUDA's devices share,
 * and why. */
static int choose_interop(demo *d)
{
    cugl_app_interop choice;
    char reason[768];
    if (cugl_app_choose_interop(&choice, reason, sizeof reason, d->ctx, d->gl_device) != CUGL_OK)
        return demo_fail(d, "cannot choose the interop path");
    d->opt.interop = choice;
    if (d->remote) {
        /* The choice for the GL GPU; from another device, shared memory if
         * GL imports it there and a peer path leads to it, else host. */
        char why[1024];
        cugl_device_properties p;
        if (d->opt.interop == CUGL_APP_INTEROP_MAP)
            /* Shared memory was tried first and refused; a mapping is the
             * GL GPU's alone. */
            snprintf(why, sizeof why,
                     "GL cannot import memory here (%s), and a mapping serves only CUDA on the "
                     "GL GPU (device %d); drawing through host copies",
                     reason, d->opt.device);
        if (d->opt.interop == CUGL_APP_INTEROP_SHARED &&
            path_reaches_gl(d, CUGL_APP_INTEROP_SHARED, why, sizeof why)) {
            snprintf(reason, sizeof reason,
                     "CUDA on device %d writes memory of the GL GPU (device %d, %s) over their "
                     "peer path, and GL imports it",
                     d->opt.compute[0], d->opt.device, device_name(d->gl_device, &p));
        } else if (d->device_count == 1) {
            /* A reason longer than the line holds is cut. */
            if (d->opt.interop != CUGL_APP_INTEROP_HOST &&
                snprintf(reason, sizeof reason, "%s", why) >= (int)sizeof reason)
                reason[sizeof reason - 1] = '\0';
            d->opt.interop = CUGL_APP_INTEROP_HOST;
        } else {
            fprintf(stderr, "%s: --devices: no interop path reaches GL: %s\n", d->info->program,
                    d->opt.interop == CUGL_APP_INTEROP_HOST ? reason : why);
            return 1;
        }
    }
    printf("%s: --interop auto: %s: %s\n", d->info->program, demo_interop_name(d->opt.interop),
           reason);
    return DEMO_RUN;
}

/* Where CUDA runs, when not on the GL GPU alone. */
static void print_devices(demo *d)
{
    if (!d->opt.compute_count)
        return;
    cugl_device_properties p;
    printf("%s: CUDA on device", d->info->program);
    for (int i = 0; i < d->device_count; i++)
        printf("%s %d", i ? "," : d->device_count > 1 ? "s" : "", d->opt.compute[i]);
    printf(" (%s); GL on device %d (%s)\n", device_name(d->device, &p), d->opt.device,
           device_name(d->gl_device, &p));
}

int demo_start(demo *d, const demo_info *info, int argc, char **argv)
{
    *d = (demo){.info = info};
    /* The usage tells what this build of libcugl-app lacks. */
    demo_info built = *info;
    built.without_ui = !CUGL_APP_HAS_UI;
    built.without_serve = !CUGL_APP_HAS_SERVE;
    int rc = demo_options_parse(&d->opt, &built, argc, argv, stdout, stderr);
    if (rc == DEMO_RUN)
        rc = set_up_devices(d);
    if (rc != DEMO_RUN)
        return rc;

    char title[128];
    snprintf(title, sizeof title, "cugl %s (--interop %s)", info->name,
             demo_interop_name(d->opt.interop));
    cugl_app_context_desc desc = {
        .mode = d->opt.headless ? CUGL_APP_HEADLESS : CUGL_APP_AUTO,
        .width = d->opt.width,
        .height = d->opt.height,
        .title = title,
        .no_vsync = d->opt.bench,
        .cuda_device = d->opt.device,
    };
    if (cugl_app_context_create(&d->ctx, &desc) != CUGL_OK)
        return demo_fail(d, "cannot create a GL context");
    if (!gladLoadGL(cugl_app_gl_proc)) {
        fprintf(stderr, "%s: GLAD cannot load GL from the new context\n", info->program);
        return demo_finish(d, 1);
    }
    d->headless = cugl_app_context_is_headless(d->ctx);
    if (d->headless && !d->opt.headless)
        printf("%s: no display; rendering headless\n", info->program);
    bool interop_auto = d->opt.interop == CUGL_APP_INTEROP_AUTO;
    if (interop_auto && (rc = choose_interop(d)) != DEMO_RUN)
        return demo_finish(d, rc);
    char why[512];
    if (!interop_auto &&
        !path_reaches_gl(d, d->opt.interop, why, sizeof why)) {
        fprintf(stderr, "%s: %s\n", d->info->program, why);
        return demo_finish(d, d->opt.interop == CUGL_APP_INTEROP_SHARED ? 1 : DEMO_EXIT_USAGE);
    }
    print_devices(d);

    /* Served, a demo runs until it is stopped, on the clock. */
    bool served = d->opt.serve;
    d->frames = d->opt.frames ? d->opt.frames : d->headless && !served ? DEMO_HEADLESS_FRAMES : 0;
    d->screenshot = d->opt.screenshot;
    if (!d->screenshot && d->headless && !served) {
        snprintf(d->default_screenshot, sizeof d->default_screenshot, "%s.png", info->name);
        d->screenshot = d->default_screenshot;
    }
    d->fixed_step = d->opt.frames > 0 || d->opt.screenshot || (d->headless && !served) ||
                    d->opt.record || d->opt.input;
    d->pipelined = (d->opt.pipelined || (!d->headless && !d->fixed_step)) && !d->opt.record;
    if ((rc = set_up_input(d)) != DEMO_RUN)
        return demo_finish(d, rc);
    if (d->opt.record) {
        rc = demo_recorder_open(&d->recorder, info->program, info->name, d->opt.record);
        if (rc != 0)
            return demo_finish(d, rc);
    }

    if (cugl_stream_create(&d->stream, d->device, NULL) != CUGL_OK)
        return demo_finish(d, demo_fail(d, "cannot create a CUDA stream"));
    if ((rc = set_up_panel(d)) != DEMO_RUN)
        return demo_finish(d, rc);
    if ((d->opt.bench || d->ui || d->opt.serve) &&
        cugl_app_timer_create(&d->timer, d->stream) != CUGL_OK)
        return demo_finish(d, demo_fail(d, "cannot create the frame timer"));
    if ((rc = set_up_server(d)) != DEMO_RUN)
        return demo_finish(d, rc);

    int w, h;
    cugl_app_context_size(d->ctx, &w, &h);
    printf("%s: %dx%d, %s on %s, --interop %s%s\n", info->program, w, h,
           cugl_app_context_platform(d->ctx), cugl_app_context_renderer(d->ctx),
           demo_interop_name(d->opt.interop),
           d->pipelined && d->opt.interop == CUGL_APP_INTEROP_SHARED ? ", pipelined" : "");
    return DEMO_RUN;
}

cugl_status demo_load_module(demo *d, const unsigned char *fatbin, size_t size)
{
    return cugl_module_load_data(&d->module, d->device, fatbin, size);
}

cugl_status demo_kernel(cugl_kernel **out, demo *d, const char *name)
{
    return cugl_module_get_kernel(out, d->module, name);
}

/* Timing is a side line: a refusal is reported once and the frame goes on. */
static void timer_result(demo *d, cugl_status st)
{
    if (st != CUGL_OK && !d->timer_failed) {
        fprintf(stderr, "%s: frame timer: %s\n", d->info->program, cugl_last_error());
        d->timer_failed = true;
    }
}

void demo_phase_begin(demo *d, int phase, const char *name, bool cuda)
{
    if (d->timing)
        timer_result(d, cugl_app_timer_begin(d->timer, phase, name, cuda));
}

void demo_phase_end(demo *d, int phase)
{
    if (d->timing)
        timer_result(d, cugl_app_timer_end(d->timer, phase));
}

cugl_launch_config demo_grid_2d(int width, int height)
{
    return (cugl_launch_config){
        .grid = {((unsigned)width + 15) / 16, ((unsigned)height + 15) / 16, 1},
        .block = {16, 16, 1},
    };
}

/* Bind the context's framebuffer at its current size and call render. */
static cugl_status render_frame(demo *d, const demo_callbacks *cb, void *user)
{
    cugl_app_context_size(d->ctx, &d->width, &d->height);
    if (d->width <= 0 || d->height <= 0)
        return CUGL_OK; /* a minimised window */
    glBindFramebuffer(GL_FRAMEBUFFER, cugl_app_context_framebuffer(d->ctx));
    glViewport(0, 0, d->width, d->height);
    cugl_status st = cb->render(d, user);
    if (st != CUGL_OK)
        return st;
    char what[32];
    snprintf(what, sizeof what, "frame %ld", d->frame);
    return cugl_app_check_gl(d->info->program, what);
}

static cugl_status write_screenshot(demo *d)
{
    cugl_status st = cugl_app_screenshot(d->ctx, d->screenshot);
    if (st == CUGL_OK)
        printf("%s: wrote %s (frame %ld, %dx%d)\n", d->info->program, d->screenshot, d->frame,
               d->width, d->height);
    return st;
}

/* --record: this frame, read back, to the recorder. */
static cugl_status record_frame(demo *d)
{
    size_t size = (size_t)d->width * (size_t)d->height * 4;
    if (size > d->record_size) {
        uint8_t *p = realloc(d->record_pixels, size);
        if (!p)
            return cugl_report_error(CUGL_ERROR_OUT_OF_MEMORY, d->info->program,
                                     "cannot hold a %dx%d frame", d->width, d->height);
        d->record_pixels = p;
        d->record_size = size;
    }
    cugl_status st = cugl_app_read_pixels(d->record_pixels, size, d->ctx);
    if (st != CUGL_OK)
        return st;
    return demo_recorder_frame(&d->recorder, d->record_pixels, d->width, d->height, d->frame);
}

/*
 * Wait for the frame DEMO_FRAMES_IN_FLIGHT back, then fence this one. A
 * swap with vsync paces a window, but headless (or with vsync off) nothing
 * else stops the CPU from queueing frames far ahead of the GPU, when frame
 * times would count submissions only and GPU timings arrive too late for
 * the timer's ring.
 */
static void wait_fence(GLsync fence)
{
    GLenum r;
    do
        r = glClientWaitSync(fence, GL_SYNC_FLUSH_COMMANDS_BIT, 100000000);
    while (r == GL_TIMEOUT_EXPIRED);
}

/*
 * At most DEMO_FRAMES_IN_FLIGHT frames queued. On the host path, none:
 * nothing orders the next frame's CUDA work after this frame's GL work, so
 * the GPU would run the two at once, sharing its time between them (each
 * API's timings then span the other's work too, and the frame is no
 * faster).
 */
static void pace(demo *d)
{
    GLsync *fence = &d->in_flight[d->frame % DEMO_FRAMES_IN_FLIGHT];
    if (*fence) {
        wait_fence(*fence);
        glDeleteSync(*fence);
    }
    *fence = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
    if (d->opt.interop == CUGL_APP_INTEROP_HOST)
        wait_fence(*fence);
}

static int run_frames(demo *d, const demo_callbacks *cb, void *user);

int demo_camera_view_get(const cugl_app_camera *camera, float *view)
{
    const float v[6] = {camera->yaw,       camera->pitch,     camera->distance,
                        camera->target[0], camera->target[1], camera->target[2]};
    memcpy(view, v, sizeof v);
    return 6;
}

const char *demo_camera_view_set(cugl_app_camera *camera, const float *view, int count)
{
    if (count != 3 && count != 6)
        return "is not yaw,pitch,distance or yaw,pitch,distance,x,y,z";
    if (!(view[2] > 0.0f))
        return "has a distance that is not positive";
    camera->yaw = view[0];
    camera->pitch = view[1];
    camera->distance = view[2];
    if (count == 6)
        memcpy(camera->target, &view[3], 3 * sizeof(float));
    return NULL;
}

/* --view at the start: 0, or the status to exit with after a message. A
 * demo has a view (callbacks or a camera) exactly when its usage offers
 * --view (demo_info.view), or the usage would not be true of it. */
static int apply_view(demo *d, const demo_callbacks *cb, void *user)
{
    if (!d->info->view != !(cb->view_set || cb->camera)) {
        fprintf(stderr, "%s: the usage %s --view, but the demo %s a view\n", d->info->program,
                d->info->view ? "offers" : "leaves out", d->info->view ? "has no" : "has");
        return 1;
    }
    if (d->opt.view_count == 0)
        return 0;
    const char *why = cb->view_set ? cb->view_set(d, user, d->opt.view, d->opt.view_count)
                                   : demo_camera_view_set(cb->camera, d->opt.view, d->opt.view_count);
    if (!why)
        return 0;
    fprintf(stderr, "%s: --view %s\n", d->info->program, why);
    return DEMO_EXIT_USAGE;
}

/* After a replay or a recorded run, the view it led to, as a --view that
 * starts there. */
static void print_view(demo *d, const demo_callbacks *cb, void *user)
{
    if ((!cb->view_get && !cb->camera) ||
        !(d->opt.input || d->opt.save_input || d->opt.view_count || d->opt.serve))
        return;
    float v[DEMO_MAX_VIEW];
    int n = cb->view_get ? cb->view_get(d, user, v) : demo_camera_view_get(cb->camera, v);
    printf("%s: --view ", d->info->program);
    for (int i = 0; i < n; i++)
        printf("%s%.9g", i ? "," : "", (double)v[i]);
    printf("\n");
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/*
 * A hand-over on this run's path with almost nothing else to do: a small
 * scratch target, turn after turn as a frame takes it (CUDA takes it,
 * fills a word, gives it back; GL takes it, clears a word, gives it back),
 * the turns queued as fast as they are accepted and then waited for. A
 * turn's cost is the batch's wall time over its turns; the median of 5
 * batches. In lockstep each turn waits for the last one's GL work;
 * pipelined (shared memory), nobody waits in the steady state. -1 where it
 * cannot be measured.
 */
static double measure_handover(demo *d, bool pipelined)
{
    enum { BATCHES = 5, TURNS = 40 };
    cugl_app_target *tp = NULL;
    bool keep = d->pipelined;
    d->pipelined = pipelined;
    d->handover_probe = true;
    cugl_status st = demo_target_create_buffer(&tp, d, 4096, CUGL_APP_TO_GL, NULL);
    if (st == CUGL_OK && pipelined)
        st = demo_target_pipeline(tp, d);
    double batch[BATCHES];
    const uint32_t zero = 0;
    /* One batch to warm up, then the ones measured. */
    for (int b = -1; b < BATCHES && st == CUGL_OK; b++) {
        double t0 = now_seconds();
        for (int i = 0; i < TURNS && st == CUGL_OK; i++) {
            demo_io io;
            st = demo_targets_cuda_begin(d, &tp, 1, &io);
            cugl_buffer *word = NULL;
            if (st == CUGL_OK)
                st = cugl_buffer_from_handle(&word, io.dest.ptr, 4, NULL);
            if (st == CUGL_OK)
                st = cugl_buffer_fill(word, &zero, 4, d->stream);
            cugl_buffer_release(word);
            if (st == CUGL_OK)
                st = demo_targets_cuda_end(d, &tp, 1);
            if (st == CUGL_OK)
                st = cugl_app_target_gl_begin(tp);
            if (st == CUGL_OK) {
                glClearNamedBufferSubData(cugl_app_target_gl_name(tp), GL_R32UI, 0, 4,
                                          GL_RED_INTEGER, GL_UNSIGNED_INT, &zero);
                st = cugl_app_target_gl_end(tp);
            }
            glFlush();
        }
        glFinish();
        if (st == CUGL_OK)
            st = cugl_stream_sync(d->stream);
        if (b >= 0)
            batch[b] = (now_seconds() - t0) * 1e3 / TURNS;
    }
    cugl_app_target_destroy(tp);
    d->pipelined = keep;
    d->handover_probe = false;
    if (st != CUGL_OK) {
        fprintf(stderr, "%s: --bench: cannot measure the hand-over: %s\n", d->info->program,
                cugl_last_error());
        return -1;
    }
    qsort(batch, BATCHES, sizeof batch[0], cmp_double);
    return batch[BATCHES / 2];
}

int demo_run(demo *d, const demo_callbacks *cb, void *user)
{
    int rc = apply_view(d, cb, user);
    if (rc != 0)
        return rc;
    d->handover_ms = d->handover_pipelined_ms = -1;
    if (d->opt.bench) {
        d->handover_ms = measure_handover(d, false);
        if (d->opt.interop != CUGL_APP_INTEROP_HOST && !d->remote)
            d->handover_pipelined_ms = measure_handover(d, true);
        /* The frames count from here. */
        d->lockstep_frames = d->lockstep_mark = 0;
    }
    rc = run_frames(d, cb, user);
    if (rc == 0)
        print_view(d, cb, user);
    return rc;
}

/* A served headless demo (no vsync) shows DEMO_SERVE_HZ frames a second,
 * not as many as the GPU makes. */
static void serve_pace(demo *d, double *next_s)
{
    (void)d;
    double now = now_seconds();
    *next_s = *next_s > now - 0.1 ? *next_s + 1.0 / DEMO_SERVE_HZ : now;
    double wait = *next_s - now;
    if (wait > 0)
        nanosleep(&(struct timespec){.tv_sec = (time_t)wait,
                                     .tv_nsec = (long)((wait - (double)(time_t)wait) * 1e9)},
                  NULL);
}

/* The resident host memory of this process in KiB; -1 if unknown. */
static long resident_kib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, resident = -1;
    if (f) {
        if (fscanf(f, "%ld %ld", &size, &resident) != 2)
            resident = -1;
        fclose(f);
    }
    return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* The bytes malloc has handed out and not had back; -1 if unknown. Unlike
 * the resident size, it moves by what is allocated, not by pages. */
static long long heap_bytes(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
    struct mallinfo2 mi = mallinfo2();
    return (long long)(mi.uordblks + mi.hblkhd);
#else
    return -1;
#endif
}

/* The file descriptors this process has open; -1 if unknown. */
static int open_files(void)
{
    DIR *dir = opendir("/proc/self/fd");
    if (!dir)
        return -1;
    int n = -1; /* the directory's own descriptor */
    for (struct dirent *e; (e = readdir(dir)) != NULL;)
        if (e->d_name[0] != '.')
            n++;
    closedir(dir);
    return n;
}

/*
 * --soak: one line of what the process holds and how fast it runs, for a
 * long run to show what grows. Device memory is the whole device's (the
 * driver counts no other way): meaningful where the demo runs alone.
 */
static void soak_line(demo *d)
{
    qsort(d->soak_ms, (size_t)d->soak_count, sizeof d->soak_ms[0], cmp_double);
    double median = d->soak_count ? d->soak_ms[d->soak_count / 2] : 0;
    size_t free_bytes = 0, total_bytes = 0;
    bool mem = cugl_device_memory_info(d->gl_device, &free_bytes, &total_bytes) == CUGL_OK;
    long long objects = cugl_live_objects(), bytes = cugl_live_bytes();
    double handover = measure_handover(d, false);
    printf("soak: frame %ld: host %ld KiB, heap %lld bytes, %d files, device %.1f MiB used, "
           "cugl %lld objects %lld bytes, frame %.3f ms (median of %ld), hand-over %.3f ms\n",
           d->frame + 1, resident_kib(), heap_bytes(), open_files(),
           mem ? (double)(total_bytes - free_bytes) / (1 << 20) : -1.0, objects, bytes, median,
           d->soak_count, handover);
    fflush(stdout);
    d->soak_count = 0;
}

static int run_frames(demo *d, const demo_callbacks *cb, void *user)
{
    enum { SOAK_KEPT = 1 << 16 };
    if (d->opt.soak) {
        long n = d->opt.soak < SOAK_KEPT ? d->opt.soak : SOAK_KEPT;
        d->soak_ms = malloc((size_t)n * sizeof *d->soak_ms);
        if (!d->soak_ms)
            return demo_fail(d, "--soak: out of host memory");
    }
    d->start_s = now_seconds();
    double next_s = 0;
    double previous_s = d->start_s;
    bool shot = false;
    char what[64];
    for (d->frame = 0; d->frames == 0 || d->frame < d->frames; d->frame++) {
        if (cugl_app_context_should_close(d->ctx) || stop_asked)
            break;
        double now_s = now_seconds();
        if (d->fixed_step) {
            d->time = (float)d->frame / DEMO_STEP_HZ;
            d->dt = 1.0f / DEMO_STEP_HZ;
        } else {
            d->time = (float)(now_s - d->start_s);
            d->dt = (float)(now_s - previous_s);
        }
        previous_s = now_s;

        if (d->timer) {
            cugl_app_timer_frame_begin(d->timer);
            d->timing = true;
        }
        bool panel_key = cugl_app_key_down(d->ctx, DEMO_KEY_PANEL);
        if (panel_key && !d->ui_key_was_down)
            d->ui_shown = !d->ui_shown;
        d->ui_key_was_down = panel_key;
        if (cb->update)
            cb->update(d, user);
        d->exact_frame = d->screenshot && d->frame == d->frames - 1;
        snprintf(what, sizeof what, "frame %ld", d->frame);
        if (render_frame(d, cb, user) != CUGL_OK)
            return demo_fail(d, what);
#if CUGL_APP_HAS_UI
        if (d->ui && d->ui_shown && d->width > 0 && d->height > 0)
            draw_panel(d, cb, user);
#endif
        if (d->opt.record && d->width > 0 && d->height > 0 && record_frame(d) != CUGL_OK)
            return demo_fail(d, "--record: cannot write the frame");
#if CUGL_APP_HAS_SERVE
        if (d->server)
            serve_frame(d);
#endif
        if (d->screenshot && d->frame == d->frames - 1) {
            if (write_screenshot(d) != CUGL_OK)
                return demo_fail(d, "cannot write the screenshot");
            shot = true;
        }
        demo_phase_begin(d, DEMO_PHASE_PRESENT, "present", false);
        if (cugl_app_context_present(d->ctx) != CUGL_OK)
            return demo_fail(d, "cannot present the frame");
        pace(d);
        demo_phase_end(d, DEMO_PHASE_PRESENT);
        if (d->timer) {
            cugl_app_timer_frame_end(d->timer);
            d->timing = false;
        }
        if (d->server && d->headless && !d->opt.bench)
            serve_pace(d, &next_s);
        if (d->soak_ms) {
            /* Past SOAK_KEPT frames a line, the median is of the first. */
            if (d->soak_count < SOAK_KEPT)
                d->soak_ms[d->soak_count++] = (now_seconds() - now_s) * 1e3;
            if ((d->frame + 1) % d->opt.soak == 0)
                soak_line(d);
        }
    }
    if (d->screenshot && !shot && !stop_asked) {
        /* The window closed first: what was shown is gone with the swap, so
         * render the last frame again (same time, same view) and read it. */
        if (d->frame == 0) {
            fprintf(stderr, "%s: the window closed before the first frame; no screenshot\n",
                    d->info->program);
            return 0;
        }
        d->frame--;
        d->exact_frame = true;
        if (render_frame(d, cb, user) != CUGL_OK)
            return demo_fail(d, "rendering the screenshot");
        if (write_screenshot(d) != CUGL_OK)
            return demo_fail(d, "cannot write the screenshot");
    }
    return 0;
}

static void release_retired(demo_retired *r)
{
    for (int i = 0; i < r->count; i++) {
        cugl_texture_release(r->textures[i]);
        cugl_surface_release(r->surfaces[i]);
        r->textures[i] = NULL;
        r->surfaces[i] = NULL;
    }
    r->count = 0;
}

cugl_status demo_retire(demo *d, cugl_texture *const *textures, cugl_surface *const *surfaces,
                        int count)
{
    bool any = false;
    for (int i = 0; i < count; i++)
        any = any || textures[i] || surfaces[i];
    if (!any)
        return CUGL_OK;
    /* Free the batches the stream has passed; take a free slot, else wait
     * for the oldest (the next after the last one taken). */
    demo_retired *slot = NULL;
    for (int i = 0; i < DEMO_RETIRED; i++) {
        demo_retired *r = &d->retired[i];
        bool done = false;
        if (r->count && cugl_event_query(r->passed, &done) == CUGL_OK && done)
            release_retired(r);
        if (!slot && !r->count)
            slot = r;
    }
    cugl_status st = CUGL_OK;
    if (!slot) {
        slot = &d->retired[d->retired_next];
        st = cugl_event_sync(slot->passed);
        release_retired(slot);
    }
    d->retired_next = (int)(slot - d->retired + 1) % DEMO_RETIRED;
    if (st == CUGL_OK && !slot->passed)
        st = cugl_event_create(&slot->passed, d->device, &(cugl_event_desc){.timing = false});
    if (st == CUGL_OK)
        st = cugl_event_record(slot->passed, d->stream);
    for (int i = 0; i < count; i++) {
        slot->textures[i] = textures[i];
        slot->surfaces[i] = surfaces[i];
    }
    slot->count = count;
    if (st != CUGL_OK) {
        /* Without an event to wait on, wait for the stream itself. */
        cugl_stream_sync(d->stream);
        release_retired(slot);
    }
    return st;
}

/* Phases that hand the frame from one API to the other (map, unmap,
 * waits, signals, the host path's copies) or wait for the GPU (present);
 * the others are work. */
static bool handover_phase(int phase)
{
    return phase == DEMO_PHASE_ACQUIRE || phase == DEMO_PHASE_RELEASE ||
           phase == DEMO_PHASE_HANDOFF || phase == DEMO_PHASE_PRESENT;
}

/*
 * --bench: the frame against its floor. Lockstep: GL's GPU work + CUDA's
 * GPU work + one hand-over; pipelined: the larger of the two + one
 * hand-over that nobody waits for; each hand-over as measured before the
 * first frame, the work as the medians of the phases' GPU times.
 */
static void print_floor(demo *d)
{
    cugl_app_phase_summary ph[CUGL_APP_TIMER_MAX_PHASES];
    cugl_app_frame_summary fr;
    if (cugl_app_timer_summary(ph, &fr, d->timer) != CUGL_OK || !fr.frames)
        return;
    /* The host path's hand-over phases are copies: its work. */
    bool host = d->opt.interop == CUGL_APP_INTEROP_HOST;
    double gl = 0, cuda = 0, waits = 0;
    for (int p = 0; p < CUGL_APP_TIMER_MAX_PHASES; p++) {
        if (!ph[p].name || !ph[p].samples)
            continue;
        if (p == DEMO_PHASE_PRESENT || (handover_phase(p) && !host))
            waits += ph[p].gpu.median_ms;
        else if (ph[p].cuda)
            cuda += ph[p].gpu.median_ms;
        else
            gl += ph[p].gpu.median_ms;
    }
    /* Pipelined where every turn but the kept frame's was. */
    bool pipelined = d->pipelined && d->handover_pipelined_ms >= 0 && d->lockstep_frames <= 1;
    printf("work (GPU, medians): GL %.3f ms, CUDA %.3f ms%s; hand-over phases %.3f ms "
           "(waiting for the other API included)\n",
           gl, cuda, host ? " (the host copies included)" : "", waits);
    if (d->handover_ms < 0)
        return;
    double lock = gl + cuda + d->handover_ms;
    printf("hand-over before the first frame: %.3f ms lockstep", d->handover_ms);
    if (d->handover_pipelined_ms >= 0)
        printf(", %.3f ms pipelined (not waited for)", d->handover_pipelined_ms);
    printf("\nfloor: lockstep %.3f ms", lock);
    double floor = lock;
    if (d->handover_pipelined_ms >= 0) {
        double pipe = (gl > cuda ? gl : cuda) + d->handover_pipelined_ms;
        printf(", pipelined %.3f ms", pipe);
        if (pipelined)
            floor = pipe;
    }
    printf("\nframe: median %.3f ms [p10 %.3f, p90 %.3f], %.2fx the %s floor; "
           "CPU in no phase %.3f ms\n",
           fr.wall.median_ms, fr.wall.p10_ms, fr.wall.p90_ms, fr.wall.median_ms / floor,
           pipelined ? "pipelined" : "lockstep", fr.outside.median_ms);
}

int demo_finish(demo *d, int status)
{
    if (d->opt.save_input && d->ctx) {
        if (cugl_app_context_record(d->ctx, NULL) != CUGL_OK)
            status = demo_fail(d, "--save-input");
        else if (status == 0)
            printf("%s: wrote the input events to %s\n", d->info->program, d->opt.save_input);
    }
    demo_recorder_close(&d->recorder);
    free(d->record_pixels);
    free(d->soak_ms);
    d->soak_ms = NULL;
    d->record_pixels = NULL;
#if CUGL_APP_HAS_UI
    cugl_app_ui_destroy(d->ui);
    d->ui = NULL;
#endif
#if CUGL_APP_HAS_SERVE
    cugl_app_server_destroy(d->server);
    d->server = NULL;
#endif
    if (d->timer) {
        if (status == 0 && d->opt.bench) {
            printf("%s: --interop %s, %dx%d on %s\n", d->info->program,
                   demo_interop_name(d->opt.interop), d->width, d->height,
                   cugl_app_context_renderer(d->ctx));
            print_devices(d);
            cugl_app_timer_print(d->timer, stdout);
            print_floor(d);
        }
        cugl_app_timer_destroy(d->timer);
    }
    for (int i = 0; i < DEMO_FRAMES_IN_FLIGHT; i++)
        if (d->in_flight[i])
            glDeleteSync(d->in_flight[i]);
    if (d->stream)
        cugl_stream_sync(d->stream);
    for (int i = 0; i < DEMO_RETIRED; i++) {
        release_retired(&d->retired[i]);
        cugl_event_release(d->retired[i].passed);
    }
    cugl_module_release(d->module);
    cugl_stream_release(d->stream);
    cugl_app_context_destroy(d->ctx);
    return status;
}
