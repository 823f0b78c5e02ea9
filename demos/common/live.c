/*
 * live.c - what makes a demo live beyond its window: the UI panel (F1),
 * the frame server (--serve) and its pace, and input replay and saving
 * (--input, --save-input).
 */
#include "demo_internal.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* SIGINT or SIGTERM while serving: finish the frame, then exit cleanly. */
volatile sig_atomic_t demo__stop_asked;

static void ask_stop(int sig)
{
    (void)sig;
    demo__stop_asked = 1;
}

void demo__stop_on_signals(void)
{
    struct sigaction sa = {.sa_handler = ask_stop};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* The UI panel: in windows, and headless with --ui. */
int demo__set_up_panel(demo *d)
{
    if (!d->opt.ui && d->headless)
        return DEMO_RUN;
#if CUGL_APP_HAS_UI
    if (cugl_app_ui_create(&d->live.ui, d->ctx) == CUGL_OK) {
        d->live.ui_shown = true;
        d->live.plot_frame = -1;
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

void demo__live_keys(demo *d)
{
    if (cugl_app_key_presses(d->ctx, CUGL_APP_KEY_F1) % 2) /* hides and shows it */
        d->live.ui_shown = !d->live.ui_shown;
}

bool demo__live_panel(const demo *d)
{
    return d->live.ui != NULL;
}

void demo__live_end(demo *d)
{
    (void)d; /* with neither the panel nor the server built */
#if CUGL_APP_HAS_UI
    cugl_app_ui_destroy(d->live.ui);
    d->live.ui = NULL;
#endif
#if CUGL_APP_HAS_SERVE
    cugl_app_server_destroy(d->live.server);
    d->live.server = NULL;
#endif
}

#if CUGL_APP_HAS_UI
/* The panel's contents: the demo's path and size, the frame phases of the
 * last timed frame with a plot of frame times, and the demo's own widgets. */
static void panel(demo *d, const demo_callbacks *cb, void *user)
{
    cugl_app_ui *ui = d->live.ui;
    cugl_app_ui_begin(ui, d->dt, d->info->name);
    cugl_app_ui_text(ui, "--interop %s, %d x %d", demo_interop_name(d->opt.interop), d->width,
                     d->height);
    double gpu[CUGL_APP_TIMER_MAX_PHASES], cpu[CUGL_APP_TIMER_MAX_PHASES], frame_ms = 0;
    long timed = cugl_app_timer_last(gpu, cpu, &frame_ms, d->timer);
    if (timed >= 0) {
        if (timed != d->live.plot_frame) {
            memmove(d->live.plot, d->live.plot + 1, sizeof d->live.plot - sizeof d->live.plot[0]);
            d->live.plot[DEMO_PLOT_FRAMES - 1] = (float)frame_ms;
            d->live.plot_frame = timed;
        }
        cugl_app_ui_text(ui, "frame %.2f ms (%.0f fps)", frame_ms,
                         frame_ms > 0 ? 1000.0 / frame_ms : 0.0);
        cugl_app_ui_plot(ui, "frame ms", d->live.plot, DEMO_PLOT_FRAMES, 0.0f);
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
    if (cugl_app_ui_end(ui) != CUGL_OK && !d->live.ui_failed) {
        fprintf(stderr, "%s: UI panel: %s\n", d->info->program, cugl_last_error());
        d->live.ui_failed = true;
    }
}
#endif

void demo__draw_panel(demo *d, const demo_callbacks *cb, void *user)
{
#if CUGL_APP_HAS_UI
    if (d->live.ui && d->live.ui_shown && d->width > 0 && d->height > 0)
        panel(d, cb, user);
#else
    (void)d;
    (void)cb;
    (void)user;
#endif
}

/* --serve: the frames to web browsers, their input back. */
int demo__set_up_server(demo *d)
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
        .codec = d->opt.serve_codec,
        .cert = d->opt.serve_cert,
        .key = d->opt.serve_key,
    };
    if (cugl_app_server_create(&d->live.server, d->ctx, &desc) != CUGL_OK)
        return demo_fail(d, "--serve");
    const char *address;
    for (int i = 0; (address = cugl_app_server_address(d->live.server, i)); i++) {
        bool v6 = strchr(address, ':') != NULL;
        printf("%s: serving on %s://%s%s%s:%d/%s%s\n", d->info->program,
               cugl_app_server_is_https(d->live.server) ? "https" : "http", v6 ? "[" : "", address,
               v6 ? "]" : "", cugl_app_server_port(d->live.server),
               token && *token ? "?token=" : "", token && *token ? token : "");
    }
    const char *why = NULL, *encoder = cugl_app_server_encoder(d->live.server, &why);
    printf("%s: JPEG by %s: %s\n", d->info->program, encoder, why);
    fflush(stdout);
    demo__stop_on_signals();
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
static void serve(demo *d)
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
    cugl_app_server_set_stats(d->live.server, stats);
    if (cugl_app_server_frame(d->live.server) != CUGL_OK && !d->live.server_failed) {
        fprintf(stderr, "%s: --serve: %s\n", d->info->program, cugl_last_error());
        d->live.server_failed = true;
    }
}
#endif

void demo__serve_frame(demo *d)
{
#if CUGL_APP_HAS_SERVE
    if (!d->live.server)
        return;
    /* Timed as the phase --mpi's exchange takes where there is none. */
    if (!d->mpi)
        demo_phase_begin(d, DEMO_PHASE_EXCHANGE, "serve", false);
    serve(d);
    if (!d->mpi)
        demo_phase_end(d, DEMO_PHASE_EXCHANGE);
#else
    (void)d;
#endif
}

/* --input replays a file of events; --save-input records this run's. */
int demo__set_up_input(demo *d)
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

/* A served headless demo (no vsync) shows DEMO_SERVE_HZ frames a second,
 * not as many as the GPU makes. */
void demo__serve_pace(demo *d, double *next_s)
{
    if (!d->live.server || !d->headless || d->opt.bench)
        return;
    double now = demo__now_seconds();
    *next_s = *next_s > now - 0.1 ? *next_s + 1.0 / DEMO_SERVE_HZ : now;
    double wait = *next_s - now;
    if (wait > 0)
        nanosleep(&(struct timespec){.tv_sec = (time_t)wait,
                                     .tv_nsec = (long)((wait - (double)(time_t)wait) * 1e9)},
                  NULL);
}
