/*
 * cugl-fluids: stable fluids (Stam 1999) on an N x N grid, 512 unless
 * --grid says otherwise (kernels/demos/fluids_math.h). Every frame CUDA
 * advects the velocity and the dye, reading them through the texture
 * unit's bilinear filter from CUDA arrays; adds the force and dye of three
 * rotating jets and of the mouse; makes the velocity divergence-free with
 * a Jacobi pressure solve; then colours the dye into an N x N RGBA8 GL
 * texture, which GL shows in a square in the middle of the window. How
 * the colours reach the texture is --interop's choice (common/target.h);
 * the simulation itself stays in CUDA memory on every path.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/demo.h"

#if CUGL_APP_HAS_UI
#include <cugl/app_ui.h>
#endif
#include "common/target.h"
#include "fluids_math.h"

extern const unsigned char cugl_fluids_fatbin[];
extern const size_t cugl_fluids_fatbin_size;

typedef struct fluids_options {
    int grid;
    float vorticity;
} fluids_options;

static fluids_options options = {.grid = FLUIDS_DEFAULT_GRID, .vorticity = 0.0f};

static const char *parse_grid(const char *value, void *user)
{
    long v;
    if (!demo_parse_long(value, FLUIDS_MIN_GRID, FLUIDS_MAX_GRID, &v))
        return "is not a number from 16 to 4096"; /* FLUIDS_MIN_GRID, FLUIDS_MAX_GRID */
    ((fluids_options *)user)->grid = (int)v;
    return NULL;
}

static const char *parse_strength(const char *value, void *user)
{
    char *end;
    float v = strtof(value, &end);
    if (!*value || *end || !(v >= 0.0f && v <= 100.0f)) /* NaN fails too */
        return "is not a number from 0 to 100";
    ((fluids_options *)user)->vorticity = v;
    return NULL;
}

static const demo_flag fluids_flags[] = {
    {"--grid", "N", "cells per side, 16 to 4096 (default 512)", parse_grid, &options},
    {"--vorticity", "S", "vorticity confinement per second, 0 to 100 (default 0: off)",
     parse_strength, &options},
    {0},
};

static const demo_info info = {
    .program = "cugl-fluids",
    .name = "fluids",
    .summary =
        "CUDA solves 2-D stable fluids on an N x N grid (semi-Lagrangian advection through\n"
        "the texture unit's bilinear filter, a Jacobi pressure solve) and colours the dye\n"
        "into an N x N GL texture every frame; GL shows it. Three rotating jets stir the\n"
        "fluid, from the frame number in a run with --frames or headless.\n"
        "\n"
        "Every --interop path carries the same RGBA8 image: map writes the registered\n"
        "texture through a surface, shared writes the rows of a shared texture, host\n"
        "downloads them to pinned memory and uploads them with glTextureSubImage2D.",
    .controls = "  left drag   push the fluid along the drag and pour dye\n"
                "  J           jets on or off\n"
                "  V           vorticity confinement on or off (at --vorticity, or 3)\n"
                "  R           clear the fluid\n"
                "  Escape      quit\n",
    .extra = fluids_flags,
};

/* Timer phases beyond the shared ones (demo.h): the two halves of a step. */
enum { PHASE_ADVECT = 5, PHASE_PRESSURE = 6 };

#define VORTICITY_ON_KEY 3.0f /* what V turns on when --vorticity left it at 0 */

enum {
    K_ADVECT,
    K_SPLATS,
    K_CURL,
    K_CONFINE,
    K_DIVERGENCE,
    K_JACOBI,
    K_GRADIENT,
    K_SHOW,
    K_COUNT,
};

static const char *const kernel_names[K_COUNT] = {
    [K_ADVECT] = "fluids_advect",
    [K_SPLATS] = "fluids_add_splats",
    [K_CURL] = "fluids_compute_curl",
    [K_CONFINE] = "fluids_confine_vorticity",
    [K_DIVERGENCE] = "fluids_compute_divergence",
    [K_JACOBI] = "fluids_jacobi_sweep",
    [K_GRADIENT] = "fluids_subtract_gradient",
    [K_SHOW] = "fluids_show",
};

typedef struct fluids {
    int n;                       /* cells per side */
    float vorticity;             /* confinement strength now; 0: off */
    float vorticity_on_key;      /* what V turns on */
    bool jets;                   /* the jets blow */
    bool clear;                  /* zero every field before the next step */
    long stepped_frame;          /* the frame last simulated */
    float dt;                    /* this step's length in seconds */
    fluids_splats splats;        /* this step's jets and mouse stroke */

    cugl_kernel *kernel[K_COUNT];
    cugl_memory_resource *mr;
    /* Fields in linear memory, row by row from the bottom: velocity (2
     * floats a cell), the advected velocity, dye (4 floats; the current
     * one is dye[dye_now]), divergence, pressure (ping-pong; the current
     * one, kept as the next solve's first guess, is pressure[pressure_now]),
     * and curl. */
    cugl_buffer *velocity, *velocity_next, *dye[2], *div, *pressure[2], *curl;
    int dye_now, pressure_now;
    /* Copies of velocity and dye that the advection samples, bilinearly. */
    cugl_array *velocity_array, *dye_array;
    cugl_texture *velocity_tex, *dye_tex;

    cugl_app_target *image; /* N x N RGBA8, what GL shows */
} fluids;

/* ---- set-up ------------------------------------------------------------------ */

static cugl_status make_field(cugl_buffer **out, fluids *f, demo *d, size_t bytes_per_cell)
{
    return cugl_memory_resource_allocate(out, f->mr, (size_t)f->n * (size_t)f->n * bytes_per_cell,
                                         d->stream);
}

/* An n x n float array of `channels` that a texture samples bilinearly. */
static cugl_status make_sampled(cugl_array **array, cugl_texture **texture, fluids *f, demo *d,
                                int channels)
{
    cugl_status st = cugl_array_create(
        array, d->device,
        &(cugl_array_desc){.ndim = 2,
                           .shape = {(size_t)f->n, (size_t)f->n},
                           .format = CUGL_FORMAT_F32,
                           .num_channels = channels});
    if (st != CUGL_OK)
        return st;
    /* Clamp addressing: a trace that leaves the box reads the wall's cell. */
    return cugl_texture_create(
        texture, d->device, &(cugl_resource_desc){.kind = CUGL_RESOURCE_ARRAY, .array = *array},
        &(cugl_texture_desc){.address_mode = {CUGL_ADDRESS_CLAMP, CUGL_ADDRESS_CLAMP},
                             .filter_mode = CUGL_FILTER_LINEAR});
}

static int fluids_create(fluids *f, demo *d, const fluids_options *o)
{
    f->n = o->grid;
    f->vorticity = o->vorticity;
    f->vorticity_on_key = o->vorticity > 0.0f ? o->vorticity : VORTICITY_ON_KEY;
    f->jets = true;
    f->clear = true;
    f->stepped_frame = -1;
    if (demo_load_module(d, cugl_fluids_fatbin, cugl_fluids_fatbin_size) != CUGL_OK)
        return demo_fail(d, "cannot load the kernels");
    for (int k = 0; k < K_COUNT; k++)
        if (demo_kernel(&f->kernel[k], d, kernel_names[k]) != CUGL_OK)
            return demo_fail(d, "cannot load the kernels");

    cugl_status st = cugl_device_memory_resource_create(&f->mr, d->device, NULL);
    if (st == CUGL_OK)
        st = make_field(&f->velocity, f, d, sizeof(fluids_vec2));
    if (st == CUGL_OK)
        st = make_field(&f->velocity_next, f, d, sizeof(fluids_vec2));
    for (int i = 0; i < 2 && st == CUGL_OK; i++)
        st = make_field(&f->dye[i], f, d, sizeof(fluids_vec4));
    for (int i = 0; i < 2 && st == CUGL_OK; i++)
        st = make_field(&f->pressure[i], f, d, sizeof(float));
    if (st == CUGL_OK)
        st = make_field(&f->div, f, d, sizeof(float));
    if (st == CUGL_OK)
        st = make_field(&f->curl, f, d, sizeof(float));
    if (st != CUGL_OK) {
        char what[96];
        snprintf(what, sizeof what, "cannot allocate the %dx%d fields", f->n, f->n);
        return demo_fail(d, what);
    }
    if (make_sampled(&f->velocity_array, &f->velocity_tex, f, d, 2) != CUGL_OK ||
        make_sampled(&f->dye_array, &f->dye_tex, f, d, 4) != CUGL_OK)
        return demo_fail(d, "cannot create the arrays and textures the advection samples");

    st = demo_target_create_texture(&f->image, d, f->n, f->n, CUGL_APP_TO_GL);
    if (st != CUGL_OK)
        return demo_target_fail(d, st, "the dye texture");
    printf("%s: %dx%d cells, %d pressure sweeps a step, vorticity confinement %g\n",
           info.program, f->n, f->n, FLUIDS_JACOBI_ITERATIONS, (double)f->vorticity);
    return 0;
}

static void fluids_destroy(fluids *f, demo *d)
{
    /* Queued kernels may still use the textures and the fields. */
    if (d->stream)
        cugl_stream_sync(d->stream);
    cugl_app_target_destroy(f->image);
    cugl_texture_release(f->velocity_tex);
    cugl_texture_release(f->dye_tex);
    cugl_array_release(f->velocity_array);
    cugl_array_release(f->dye_array);
    cugl_buffer *fields[] = {f->velocity,    f->velocity_next, f->dye[0], f->dye[1],
                             f->pressure[0], f->pressure[1],   f->div,    f->curl};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        cugl_buffer_release(fields[i]);
    cugl_memory_resource_release(f->mr);
    for (int k = 0; k < K_COUNT; k++)
        cugl_kernel_release(f->kernel[k]);
}

/* ---- input ------------------------------------------------------------------- */

/* The square, centred in the framebuffer, that shows the grid. */
static void square(const demo *d, int *x, int *y, int *side)
{
    *side = d->width < d->height ? d->width : d->height;
    *x = (d->width - *side) / 2;
    *y = (d->height - *side) / 2;
}

/* A left drag pushes the fluid along the drag and pours dye of a slowly turning hue. */
static void mouse_stroke(fluids *f, demo *d)
{
    const cugl_app_input *in = cugl_app_context_input(d->ctx);
    int sx, sy, side;
    square(d, &sx, &sy, &side);
    if (!in->left || side <= 0 || f->dt <= 0.0f || f->splats.count >= FLUIDS_MAX_SPLATS)
        return;
    /* The cursor counts rows from the top; the grid's y goes up. */
    float x = (float)(in->x - sx) / (float)side;
    float y = 1.0f - (float)(in->y - sy) / (float)side;
    if (x < 0.0f || x > 1.0f || y < 0.0f || y > 1.0f)
        return;
    float vx = (float)in->dx / (float)side / f->dt, vy = -(float)in->dy / (float)side / f->dt;
    float speed = sqrtf(vx * vx + vy * vy), most = 5.0f;
    if (speed > most) {
        vx *= most / speed;
        vy *= most / speed;
    }
    float hue = 0.1f * d->time, amount = 8.0f * f->dt;
    f->splats.splat[f->splats.count++] = (fluids_splat){
        .x = x,
        .y = y,
        .vx = vx,
        .vy = vy,
        .r = amount * (1.5f + 1.5f * cosf(FLUIDS_TWO_PI * hue)),
        .g = amount * (1.5f + 1.5f * cosf(FLUIDS_TWO_PI * (hue - 1.0f / 3.0f))),
        .b = amount * (1.5f + 1.5f * cosf(FLUIDS_TWO_PI * (hue - 2.0f / 3.0f))),
        .radius = 0.02f,
    };
}

static void update(demo *d, void *user)
{
    fluids *f = user;
    /* A fixed-step run steps 1/60 s a frame; a window the clock's time,
     * at most 1/30 s so that a stall does not blow the fluid away. */
    f->dt = fminf(d->dt, 1.0f / 30.0f);
    /* Each press toggles (GLFW_KEY_J is the character's code). */
    if (cugl_app_key_presses(d->ctx, 'J') % 2)
        f->jets = !f->jets;
    if (cugl_app_key_presses(d->ctx, 'V') % 2)
        f->vorticity = f->vorticity > 0.0f ? 0.0f : f->vorticity_on_key;
    if (cugl_app_key_presses(d->ctx, 'R'))
        f->clear = true;
    f->splats.count = 0;
    if (f->jets) {
        fluids_jets(f->splats.splat, d->time, f->dt);
        f->splats.count = FLUIDS_JETS;
    }
    mouse_stroke(f, d);
}

/* ---- a step ------------------------------------------------------------------ */

static cugl_status launch(fluids *f, demo *d, int kernel, void **args, size_t num_args)
{
    cugl_launch_config grid = demo_grid_2d(f->n, f->n);
    return cugl_launch(d->stream, &grid, f->kernel[kernel], args, num_args);
}

static cugl_status clear_fields(fluids *f, demo *d)
{
    const float zero = 0.0f;
    cugl_buffer *fields[] = {f->velocity, f->dye[0], f->dye[1], f->pressure[0], f->pressure[1]};
    cugl_status st = CUGL_OK;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0] && st == CUGL_OK; i++)
        st = cugl_buffer_fill(fields[i], &zero, sizeof zero, d->stream);
    return st;
}

/* Advection, the splats and vorticity confinement: into velocity_next and the other dye. */
static cugl_status advect(fluids *f, demo *d)
{
    cugl_status st = cugl_array_copy_from_buffer(f->velocity_array, f->velocity, d->stream);
    if (st == CUGL_OK)
        st = cugl_array_copy_from_buffer(f->dye_array, f->dye[f->dye_now], d->stream);
    if (st != CUGL_OK)
        return st;
    uint64_t velocity_tex = cugl_texture_handle(f->velocity_tex);
    uint64_t dye_tex = cugl_texture_handle(f->dye_tex);
    uint64_t velocity = cugl_buffer_handle(f->velocity);
    uint64_t next = cugl_buffer_handle(f->velocity_next);
    uint64_t dye_next = cugl_buffer_handle(f->dye[1 - f->dye_now]);
    uint64_t curl = cugl_buffer_handle(f->curl);
    int n = f->n;
    /* Lengths in the kernels are cells; the keep factors are per 1/60 s. */
    float dt_cells = f->dt * (float)n;
    float velocity_keep = powf(FLUIDS_VELOCITY_KEEP, DEMO_STEP_HZ * f->dt);
    float dye_keep = powf(FLUIDS_DYE_KEEP, DEMO_STEP_HZ * f->dt);
    void *advect_args[] = {&velocity_tex, &dye_tex, &velocity, &next, &dye_next,
                           &n,            &dt_cells, &velocity_keep, &dye_keep};
    st = launch(f, d, K_ADVECT, advect_args, 9);
    if (st == CUGL_OK && f->splats.count > 0) {
        void *args[] = {&next, &dye_next, &n, &f->splats};
        st = launch(f, d, K_SPLATS, args, 4);
    }
    if (st == CUGL_OK && f->vorticity > 0.0f) {
        float strength_dt = f->vorticity * f->dt;
        void *curl_args[] = {&next, &curl, &n};
        void *confine_args[] = {&next, &curl, &n, &strength_dt};
        st = launch(f, d, K_CURL, curl_args, 3);
        if (st == CUGL_OK)
            st = launch(f, d, K_CONFINE, confine_args, 4);
    }
    if (st == CUGL_OK)
        f->dye_now = 1 - f->dye_now;
    return st;
}

/* The projection: velocity = velocity_next - grad p, p from Jacobi sweeps. */
static cugl_status project(fluids *f, demo *d)
{
    uint64_t next = cugl_buffer_handle(f->velocity_next);
    uint64_t velocity = cugl_buffer_handle(f->velocity);
    uint64_t div = cugl_buffer_handle(f->div);
    int n = f->n;
    float weight = FLUIDS_JACOBI_WEIGHT;
    void *div_args[] = {&next, &div, &n};
    cugl_status st = launch(f, d, K_DIVERGENCE, div_args, 3);
    for (int s = 0; s < FLUIDS_JACOBI_ITERATIONS && st == CUGL_OK; s++) {
        uint64_t from = cugl_buffer_handle(f->pressure[f->pressure_now]);
        uint64_t to = cugl_buffer_handle(f->pressure[1 - f->pressure_now]);
        void *args[] = {&from, &div, &to, &n, &weight};
        st = launch(f, d, K_JACOBI, args, 5);
        if (st == CUGL_OK)
            f->pressure_now = 1 - f->pressure_now;
    }
    if (st == CUGL_OK) {
        uint64_t p = cugl_buffer_handle(f->pressure[f->pressure_now]);
        void *args[] = {&next, &p, &velocity, &n};
        st = launch(f, d, K_GRADIENT, args, 4);
    }
    return st;
}

static cugl_status simulate(fluids *f, demo *d)
{
    cugl_status st = CUGL_OK;
    if (f->clear) {
        st = clear_fields(f, d);
        f->clear = false;
    }
    if (st != CUGL_OK)
        return st;
    demo_phase_begin(d, PHASE_ADVECT, "advect", true);
    st = advect(f, d);
    demo_phase_end(d, PHASE_ADVECT);
    if (st != CUGL_OK)
        return st;
    demo_phase_begin(d, PHASE_PRESSURE, "pressure", true);
    st = project(f, d);
    demo_phase_end(d, PHASE_PRESSURE);
    return st;
}

/* The dye's colours into the texture (or its memory). */
static cugl_status colour_dye(demo *d, void *user, const demo_dest *dest)
{
    fluids *f = user;
    uint64_t dye = cugl_buffer_handle(f->dye[f->dye_now]);
    int n = f->n;
    void *args[] = {(void *)dest, &dye, &n};
    return launch(f, d, K_SHOW, args, 3);
}

static cugl_status render(demo *d, void *user)
{
    fluids *f = user;
    cugl_status st = CUGL_OK;
    /* One step a frame; the screenshot's second rendering of a frame shows it again. */
    if (f->stepped_frame != d->frame) {
        st = simulate(f, d);
        f->stepped_frame = d->frame;
    }
    if (st == CUGL_OK)
        st = demo_target_write(f->image, d, "show", colour_dye, f);
    if (st == CUGL_OK)
        st = cugl_app_target_gl_begin(f->image);
    if (st != CUGL_OK)
        return st;
    demo_phase_begin(d, DEMO_PHASE_DRAW, "draw", false);
    int x, y, side;
    square(d, &x, &y, &side);
    glClearColor(0.0f, 0.0f, 0.0f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    glViewport(x, y, side, side);
    /* The grid is drawn filtered, from the image's texture. */
    uint32_t texture = cugl_app_target_gl_name(f->image);
    st = texture ? cugl_app_blit(d->ctx, texture, true) : cugl_last_status();
    glViewport(0, 0, d->width, d->height);
    demo_phase_end(d, DEMO_PHASE_DRAW);
    cugl_status end = cugl_app_target_gl_end(f->image);
    return st != CUGL_OK ? st : end;
}

#if CUGL_APP_HAS_UI
/* The panel: the jets and vorticity confinement, as J and V set them. */
static void panel(demo *d, void *user, cugl_app_ui *ui)
{
    (void)d;
    fluids *f = user;
    cugl_app_ui_text(ui, "%d x %d cells", f->n, f->n);
    cugl_app_ui_checkbox(ui, "jets", &f->jets);
    cugl_app_ui_slider_float(ui, "vorticity", &f->vorticity, 0.0f, 100.0f);
}
#endif

int main(int argc, char **argv)
{
    const fluids_options *o = &options;
    demo d;
    int rc = demo_start(&d, &info, argc, argv);
    if (rc != DEMO_RUN)
        return rc;
    fluids f = {0};
    rc = fluids_create(&f, &d, o);
    if (rc == 0)
        rc = demo_run(&d,
                      &(demo_callbacks){.update = update,
                                        .render = render,
                                        .panel = DEMO_PANEL(panel)},
                      &f);
    fluids_destroy(&f, &d);
    return demo_finish(&d, rc);
}
