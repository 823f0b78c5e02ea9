/*
 * demo.c - a demo's life: demo_start sets up (the command line, the devices,
 * the GL context, the panel, the server, input replay), demo_finish tears down.
 * The rest, by subject: devices.c, live.c, loop.c, bench.c; what every file
 * uses (the clock, failures, timer phases): base.c.
 */
#include "demo_internal.h"

#include <stdlib.h>
#include <string.h>

static int start(demo *d, const demo_info *info, int argc, char **argv);

/* libcugl-app's notices (GL's debug output, the frame server's encoder
 * falling back), on the terminal as the demo's own lines are. */
static void print_notice(const char *message, void *user_data)
{
    const demo *d = user_data;
    fprintf(stderr, "%s: %s\n", d->info->program, message);
}

int demo_start(demo *d, const demo_info *info, int argc, char **argv)
{
    *d = (demo){.info = info, .rank_count = 1};
    cugl_app_set_message_callback(print_notice, d, NULL, NULL);
    int rc = start(d, info, argc, argv);
    if (!d->mpi)
        return rc;
    /* Every rank learns how every rank's start went; where another's
     * failed, this one's is undone. */
    bool made = rc == DEMO_RUN;
    rc = d->mpi->started(d, rc);
    if (made && rc != DEMO_RUN)
        demo_finish(d, rc);
    return rc;
}

static int start(demo *d, const demo_info *info, int argc, char **argv)
{
    /* The usage tells what this build of libcugl-app lacks. */
    demo_info built = *info;
    built.without_ui = !CUGL_APP_HAS_UI;
    built.without_serve = !CUGL_APP_HAS_SERVE;
    int rc = demo_options_parse(&d->opt, &built, argc, argv, stdout, stderr);
    if (rc == DEMO_RUN && d->opt.mpi) {
        d->mpi = info->mpi;
        rc = d->mpi->start(d); /* d->info now names the rank */
        if (rc != DEMO_RUN)
            d->mpi = NULL; /* start left MPI; nothing more to agree on */
    }
    if (rc == DEMO_RUN)
        rc = demo__set_up_devices(d);
    if (rc != DEMO_RUN)
        return rc;
    info = d->info;

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
    if (interop_auto && (rc = demo__choose_interop(d)) != DEMO_RUN)
        return demo_finish(d, rc);
    char why[512];
    if (!interop_auto &&
        !demo__path_reaches_gl(d, d->opt.interop, why, sizeof why)) {
        fprintf(stderr, "%s: %s\n", d->info->program, why);
        return demo_finish(d, d->opt.interop == CUGL_APP_INTEROP_SHARED ? 1 : DEMO_EXIT_USAGE);
    }
    demo__print_devices(d);

    /* Served, a demo runs until it is stopped, on the clock. */
    bool served = d->opt.serve;
    d->frames = d->opt.frames ? d->opt.frames : d->headless && !served ? DEMO_HEADLESS_FRAMES : 0;
    d->screenshot = d->opt.screenshot;
    if (!d->screenshot && d->headless && !served && d->rank == 0) {
        snprintf(d->default_screenshot, sizeof d->default_screenshot, "%s.png", info->name);
        d->screenshot = d->default_screenshot;
    }
    d->keeps_last = d->screenshot != NULL;
    d->fixed_step = d->opt.frames > 0 || d->opt.screenshot || (d->headless && !served) ||
                    d->opt.record || d->opt.input;
    d->pipelined = (d->opt.pipelined || (!d->headless && !d->fixed_step)) && !d->opt.record;
    if ((rc = demo__set_up_input(d)) != DEMO_RUN)
        return demo_finish(d, rc);
    if (d->opt.record) {
        rc = demo_record_is_video(d->opt.record)
                 /* A replayed run (--input) records the same bytes each time. */
                 ? demo_recorder_open_video(&d->recorder, info->program, d->ctx, d->opt.record,
                                            d->opt.record_codec, d->opt.record_kbps,
                                            d->opt.input != NULL)
                 : demo_recorder_open(&d->recorder, info->program, info->name, d->opt.record);
        if (rc != 0)
            return demo_finish(d, rc);
    }

    if (cugl_stream_create(&d->stream, d->device, NULL) != CUGL_OK)
        return demo_finish(d, demo_fail(d, "cannot create a CUDA stream"));
    if ((rc = demo__set_up_panel(d)) != DEMO_RUN)
        return demo_finish(d, rc);
    if ((d->opt.bench || demo__live_panel(d) || d->opt.serve) &&
        cugl_app_timer_create(&d->timer, d->stream) != CUGL_OK)
        return demo_finish(d, demo_fail(d, "cannot create the frame timer"));
    if ((rc = demo__set_up_server(d)) != DEMO_RUN)
        return demo_finish(d, rc);

    int w, h;
    cugl_app_context_size(d->ctx, &w, &h);
    printf("%s: %dx%d, %s on %s, --interop %s%s\n", info->program, w, h,
           cugl_app_context_platform(d->ctx), cugl_app_context_renderer(d->ctx),
           demo_interop_name(d->opt.interop),
           d->pipelined && d->opt.interop != CUGL_APP_INTEROP_MAP ? ", pipelined" : "");
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

int demo_finish(demo *d, int status)
{
    if (d->opt.save_input && d->ctx) {
        if (cugl_app_context_record(d->ctx, NULL) != CUGL_OK)
            status = demo_fail(d, "--save-input");
        else if (status == 0)
            printf("%s: wrote the input events to %s\n", d->info->program, d->opt.save_input);
    }
    if (demo_recorder_close(&d->recorder) != 0 && status == 0)
        status = 1;
    free(d->record_pixels);
    d->record_pixels = NULL;
    demo__bench_end(d);
    demo__live_end(d);
    if (d->timer) {
        if (status == 0 && d->opt.bench && d->rank == 0) {
            printf("%s: --interop %s, %dx%d on %s\n", d->info->program,
                   demo_interop_name(d->opt.interop), d->width, d->height,
                   cugl_app_context_renderer(d->ctx));
            demo__print_devices(d);
            cugl_app_timer_print(d->timer, stdout);
            demo__print_floor(d);
        }
        cugl_app_timer_destroy(d->timer);
    }
    for (int i = 0; i < DEMO_FRAMES_IN_FLIGHT; i++)
        if (d->in_flight[i])
            glDeleteSync(d->in_flight[i]);
    if (d->stream)
        cugl_stream_sync(d->stream);
    if (d->mpi)
        status = d->mpi->finish(d, status);
    cugl_module_release(d->module);
    cugl_stream_release(d->stream);
    cugl_app_context_destroy(d->ctx);
    cugl_app_set_message_callback(NULL, NULL, NULL, NULL); /* d goes */
    return status;
}
