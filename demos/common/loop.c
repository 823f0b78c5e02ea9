/*
 * loop.c - the frame loop: render, keep (screenshot, --record), pace and
 * present each frame; --view; frames in flight.
 */
#include "demo_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cugl_launch_config demo_grid_2d(int width, int height)
{
    return (cugl_launch_config){
        .grid = {((unsigned)width + 15) / 16, ((unsigned)height + 15) / 16, 1},
        .block = {16, 16, 1},
    };
}

/* Bind the context's framebuffer at its current size and call render.
 * With --mpi, every rank draws at rank 0's size into its own framebuffer,
 * and rank 0's then holds every rank's picture. */
static cugl_status render_frame(demo *d, const demo_callbacks *cb, void *user)
{
    uint32_t fb = cugl_app_context_framebuffer(d->ctx);
    cugl_status st = CUGL_OK;
    if (d->mpi)
        st = d->mpi->frame_target(d, &fb);
    else
        cugl_app_context_size(d->ctx, &d->width, &d->height);
    if (st != CUGL_OK || d->width <= 0 || d->height <= 0)
        return st; /* a minimised window draws nothing */
    glBindFramebuffer(GL_FRAMEBUFFER, fb);
    glViewport(0, 0, d->width, d->height);
    st = cb->render(d, user);
    if (st != CUGL_OK)
        return st;
    char what[32];
    snprintf(what, sizeof what, "frame %ld", d->frame);
    st = cugl_app_check_gl(d->info->program, what);
    if (st == CUGL_OK && d->mpi)
        st = d->mpi->composite(d, fb);
    return st;
}

static cugl_status write_screenshot(demo *d)
{
    cugl_status st = cugl_app_screenshot(d->ctx, d->screenshot);
    if (st == CUGL_OK)
        printf("%s: wrote %s (frame %ld, %dx%d)\n", d->info->program, d->screenshot, d->frame,
               d->width, d->height);
    return st;
}

/* --record: this frame, read back, to the recorder (a video file's
 * recorder reads it back itself, without waiting). */
static cugl_status record_frame(demo *d)
{
    if (d->recorder.video)
        return demo_recorder_video_frame(&d->recorder);
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

bool demo_camera_was_reset(const demo *d)
{
    return cugl_app_key_down(d->ctx, 'R') || cugl_app_key_presses(d->ctx, 'R') > 0;
}

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
    const char *why = cb->view_set
                          ? cb->view_set(d, user, d->opt.view, d->opt.view_count)
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
    if ((!cb->view_get && !cb->camera) || d->rank != 0 ||
        !(d->opt.input || d->opt.save_input || d->opt.view_count || d->opt.serve))
        return;
    float v[DEMO_MAX_VIEW];
    int n = cb->view_get ? cb->view_get(d, user, v) : demo_camera_view_get(cb->camera, v);
    printf("%s: --view ", d->info->program);
    for (int i = 0; i < n; i++)
        printf("%s%.9g", i ? "," : "", (double)v[i]);
    printf("\n");
}

int demo_run(demo *d, const demo_callbacks *cb, void *user)
{
    int rc = apply_view(d, cb, user);
    if (rc != 0)
        return rc;
    if ((rc = demo__bench_start(d)) != 0)
        return rc;
    if (d->mpi && (rc = d->mpi->run_begin(d)) != 0)
        return rc;
    rc = run_frames(d, cb, user);
    if (d->mpi)
        rc = d->mpi->run_end(d, rc);
    if (rc == 0)
        print_view(d, cb, user);
    return rc;
}

static int run_frames(demo *d, const demo_callbacks *cb, void *user)
{
    d->start_s = demo__now_seconds();
    double next_s = 0;
    double previous_s = d->start_s;
    bool shot = false;
    char what[64];
    for (d->frame = 0; d->frames == 0 || d->frame < d->frames; d->frame++) {
        bool stop = cugl_app_context_should_close(d->ctx) || demo__stop_asked;
        if (d->mpi && d->mpi->frame_stop(d, &stop) != CUGL_OK)
            return demo_fail(d, "--mpi");
        if (stop)
            break;
        double now_s = demo__now_seconds();
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
        demo__live_keys(d);
        /* With --mpi, rank 0's input moves every rank's view. */
        if (cb->update && d->rank == 0)
            cb->update(d, user);
        if (d->mpi && d->mpi->frame_view(d, cb, user) != CUGL_OK)
            return demo_fail(d, "--mpi");
        d->exact_frame = d->keeps_last && d->frame == d->frames - 1;
        snprintf(what, sizeof what, "frame %ld", d->frame);
        if (render_frame(d, cb, user) != CUGL_OK)
            return demo_fail(d, what);
        demo__draw_panel(d, cb, user);
        if (d->opt.record && d->width > 0 && d->height > 0 && record_frame(d) != CUGL_OK)
            return demo_fail(d, "--record: cannot write the frame");
        demo__serve_frame(d);
        if (d->keeps_last && d->frame == d->frames - 1) {
            if (d->screenshot && write_screenshot(d) != CUGL_OK)
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
        /* Short runs (a bounded run of at most twice the warm-up) count
         * every frame. */
        bool warm = d->frame >= DEMO_WARMUP_FRAMES ||
                    (d->frames > 0 && d->frames <= 2 * DEMO_WARMUP_FRAMES);
        demo__bench_frame(d, (demo__now_seconds() - now_s) * 1e3, warm && !d->exact_frame);
        demo__serve_pace(d, &next_s);
    }
    if (d->keeps_last && !shot && !demo__stop_asked) {
        /* The window closed first: what was shown is gone with the swap, so
         * render the last frame again (same time, same view) and read it. */
        if (d->frame == 0) {
            if (d->screenshot)
                fprintf(stderr, "%s: the window closed before the first frame; no screenshot\n",
                        d->info->program);
            return 0;
        }
        d->frame--;
        d->exact_frame = true;
        if (render_frame(d, cb, user) != CUGL_OK)
            return demo_fail(d, "rendering the screenshot");
        if (d->screenshot && write_screenshot(d) != CUGL_OK)
            return demo_fail(d, "cannot write the screenshot");
    }
    return 0;
}
