/*
 * cugl-julia: every frame a CUDA kernel colours a Julia set into a GL
 * texture, which GL shows with a full-window blit. The constant c travels
 * slowly around a circle, one step per frame. On the map path the kernel
 * writes the mapped texture through a surface object; on the shared and
 * host paths it writes linear memory, rows a pitch apart (common/target.h).
 */
#include <math.h>

#include "common/demo.h"

#if CUGL_APP_HAS_UI
#include <cugl/app_ui.h>
#endif
#include "common/target.h"
#include "julia_math.h"

extern const unsigned char cugl_julia_fatbin[];
extern const size_t cugl_julia_fatbin_size;

static const demo_info info = {
    .program = "cugl-julia",
    .name = "julia",
    .summary = "CUDA colours a Julia set into a GL texture every frame; GL shows it.",
    .view = "re,im,span: the centre on the complex plane and the\n"
            "width of the picture's shorter side (1e-5 to 20)",
    .controls = "  left drag   pan\n"
                "  wheel       zoom about the cursor\n"
                "  R           reset the view\n"
                "  Escape      quit\n",
};

typedef struct julia {
    cugl_app_target *image; /* RGBA8, the framebuffer's size */
    cugl_kernel *kernel;
    julia_view view;
} julia;

static int julia_create(julia *j, demo *d)
{
    j->view = julia_view_default();
    if (demo_load_module(d, cugl_julia_fatbin, cugl_julia_fatbin_size) != CUGL_OK ||
        demo_kernel(&j->kernel, d, "julia_render") != CUGL_OK)
        return demo_fail(d, "cannot load the kernel");
    int w, h;
    cugl_app_context_size(d->ctx, &w, &h);
    cugl_status st = demo_target_create_texture(&j->image, d, w, h, CUGL_APP_TO_GL);
    if (st != CUGL_OK)
        return demo_target_fail(d, st, "the texture");
    return 0;
}

static void julia_destroy(julia *j)
{
    cugl_app_target_destroy(j->image);
    cugl_kernel_release(j->kernel);
}

/* Left drag pans, the wheel zooms keeping the point under the cursor. */
static void update(demo *d, void *user)
{
    julia *j = user;
    const cugl_app_input *in = cugl_app_context_input(d->ctx);
    int w, h;
    cugl_app_context_size(d->ctx, &w, &h);
    if (w <= 0 || h <= 0)
        return;
    if (cugl_app_key_presses(d->ctx, 'R')) /* GLFW_KEY_R is the character's code */
        j->view = julia_view_default();
    float scale = j->view.span / (float)(w < h ? w : h);
    if (in->left) {
        j->view.center_re -= (float)in->dx * scale;
        j->view.center_im += (float)in->dy * scale; /* rows go down, the imaginary axis up */
    }
    if (in->scroll != 0.0) {
        float px = (float)in->x - 0.5f * (float)w, py = 0.5f * (float)h - (float)in->y;
        float re = j->view.center_re + px * scale, im = j->view.center_im + py * scale;
        j->view.span = fminf(fmaxf(j->view.span * powf(0.85f, (float)in->scroll), 1e-5f), 20.0f);
        scale = j->view.span / (float)(w < h ? w : h);
        j->view.center_re = re - px * scale;
        j->view.center_im = im - py * scale;
    }
}

/* This frame's image into the texture (or its memory). */
static cugl_status colour_pixels(demo *d, void *user, const demo_dest *dest)
{
    julia *j = user;
    int w = d->width, h = d->height;
    julia_params p = julia_params_for(&j->view, d->frame, w, h);
    cugl_launch_config grid = demo_grid_2d(w, h);
    void *args[] = {(void *)dest, &w, &h, &p};
    return cugl_launch(d->stream, &grid, j->kernel, args, 4);
}

static cugl_status render(demo *d, void *user)
{
    julia *j = user;
    return demo_target_render_fullscreen(&j->image, d, colour_pixels, user);
}

/* --view: the centre's real and imaginary parts, and the span. */
static int view_get(demo *d, void *user, float *view)
{
    (void)d;
    const julia *j = user;
    view[0] = j->view.center_re;
    view[1] = j->view.center_im;
    view[2] = j->view.span;
    return 3;
}

static const char *view_set(demo *d, void *user, const float *view, int count)
{
    (void)d;
    julia *j = user;
    if (count != 3)
        return "is not re,im,span (the centre and the plane's span)";
    if (!(view[2] >= 1e-5f && view[2] <= 20.0f))
        return "has a span that is not from 1e-5 to 20";
    j->view = (julia_view){view[0], view[1], view[2]};
    return NULL;
}

#if CUGL_APP_HAS_UI
/* The panel: where the view is. */
static void panel(demo *d, void *user, cugl_app_ui *ui)
{
    (void)d;
    const julia *j = user;
    cugl_app_ui_text(ui, "centre %.6g %+.6gi, span %.4g", (double)j->view.center_re,
                     (double)j->view.center_im, (double)j->view.span);
}
#endif

int main(int argc, char **argv)
{
    demo d;
    int rc = demo_start(&d, &info, argc, argv);
    if (rc != DEMO_RUN)
        return rc;
    julia j = {0};
    rc = julia_create(&j, &d);
    if (rc == 0)
        rc = demo_run(&d,
                      &(demo_callbacks){.update = update,
                                        .render = render,
                                        .view_get = view_get,
                                        .view_set = view_set,
                                        .panel = DEMO_PANEL(panel)},
                      &j);
    julia_destroy(&j);
    return demo_finish(&d, rc);
}
