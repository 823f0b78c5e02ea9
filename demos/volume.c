/*
 * cugl-volume: a procedural density (a torus holding a gyroid lattice, and
 * a glowing core) is sampled once into a 256^3 CUDA array; every frame a
 * CUDA kernel ray-marches it through a 3-D texture object (trilinear
 * filtering, normalized coordinates, clamped edges), compositing front to
 * back through a transfer function with early ray termination, into a GL
 * texture that GL shows with a full-window blit. The scene turns slowly on
 * its own (by the frame number in a fixed-step run) until the mouse takes
 * the orbit camera. How the image reaches GL is --interop's choice
 * (common/target.h): a surface on the mapped texture, or linear memory.
 */
#include "common/demo.h"

#if CUGL_APP_HAS_UI
#include <cugl/app_ui.h>
#endif
#include "common/target.h"
#include "volume_math.h"

extern const unsigned char cugl_volume_fatbin[];
extern const size_t cugl_volume_fatbin_size;

static const demo_info info = {
    .program = "cugl-volume",
    .name = "volume",
    .summary = "CUDA ray-marches a 256^3 density through a trilinearly filtered 3-D texture\n"
               "into a GL texture every frame; GL shows it.",
    .view = DEMO_VIEW_ORBIT,
    .controls = "  left drag, arrow keys, W/A/S/D   orbit (a drag or the wheel stops the turning)\n"
                "  right drag                       pan\n"
                "  wheel                            zoom\n"
                "  R                                reset the camera\n"
                "  Escape                           quit\n",
};

typedef struct volume {
    cugl_app_target *image; /* RGBA8, the framebuffer's size */
    cugl_texture *grid;  /* the density, a VOLUME_N^3 f32 array, filtered */
    cugl_kernel *fill_kernel, *render_kernel;
    cugl_app_camera camera;
    bool spinning; /* the scene turns on its own until the mouse moves the camera */
} volume;

static void camera_reset(volume *v)
{
    cugl_app_camera_init(&v->camera);
    v->camera.distance = VOLUME_CAMERA_DISTANCE;
}

/*
 * The density into a 3-D array, once: a kernel samples it into device
 * memory, which is copied into the array; a texture object then filters it.
 */
static cugl_status make_grid(volume *v, demo *d)
{
    const int n = VOLUME_N;
    const size_t size = (size_t)n * n * n * sizeof(float);
    cugl_memory_resource *mr = NULL;
    cugl_buffer *samples = NULL;
    cugl_array *array = NULL;
    cugl_status st = cugl_device_memory_resource_create(&mr, d->device, NULL);
    if (st == CUGL_OK)
        st = cugl_memory_resource_allocate(&samples, mr, size, d->stream);
    if (st == CUGL_OK) {
        uint64_t ptr = cugl_buffer_handle(samples);
        int count = n;
        void *args[] = {&ptr, &count};
        unsigned blocks = (unsigned)(n + 7) / 8;
        cugl_launch_config launch = {.grid = {blocks, blocks, blocks}, .block = {8, 8, 8}};
        st = cugl_launch(d->stream, &launch, v->fill_kernel, args, 2);
    }
    if (st == CUGL_OK)
        st = cugl_array_create(&array, d->device,
                               &(cugl_array_desc){.ndim = 3,
                                                  .shape = {(size_t)n, (size_t)n, (size_t)n},
                                                  .format = CUGL_FORMAT_F32,
                                                  .num_channels = 1});
    if (st == CUGL_OK)
        st = cugl_array_copy_from_buffer(array, samples, d->stream);
    if (st == CUGL_OK)
        st = cugl_texture_create(
            &v->grid, d->device, &(cugl_resource_desc){.kind = CUGL_RESOURCE_ARRAY, .array = array},
            &(cugl_texture_desc){
                .address_mode = {CUGL_ADDRESS_CLAMP, CUGL_ADDRESS_CLAMP, CUGL_ADDRESS_CLAMP},
                .filter_mode = CUGL_FILTER_LINEAR,
                .read_mode = CUGL_READ_ELEMENT_TYPE,
                .normalized_coords = true,
            });
    /* The samples go once the copy has run; the texture holds the array. */
    cugl_status sync = cugl_stream_sync(d->stream);
    cugl_buffer_release(samples);
    cugl_memory_resource_release(mr);
    cugl_array_release(array);
    return st != CUGL_OK ? st : sync;
}

static int volume_create(volume *v, demo *d)
{
    camera_reset(v);
    v->spinning = true;
    if (demo_load_module(d, cugl_volume_fatbin, cugl_volume_fatbin_size) != CUGL_OK ||
        demo_kernel(&v->fill_kernel, d, "volume_fill") != CUGL_OK ||
        demo_kernel(&v->render_kernel, d, "volume_render") != CUGL_OK)
        return demo_fail(d, "cannot load the kernels");
    if (make_grid(v, d) != CUGL_OK)
        return demo_fail(d, "cannot make the density grid");
    printf("%s: a %d^3 f32 density grid (%zu MiB), ray step %g\n", info.program, VOLUME_N,
           (size_t)VOLUME_N * VOLUME_N * VOLUME_N * sizeof(float) >> 20, (double)VOLUME_STEP);
    int w, h;
    cugl_app_context_size(d->ctx, &w, &h);
    cugl_status st = demo_target_create_texture(&v->image, d, w, h, CUGL_APP_TO_GL);
    if (st != CUGL_OK)
        return demo_target_fail(d, st, "the texture");
    return 0;
}

static void volume_destroy(volume *v)
{
    cugl_app_target_destroy(v->image);
    cugl_texture_release(v->grid);
    cugl_kernel_release(v->fill_kernel);
    cugl_kernel_release(v->render_kernel);
}

static void update(demo *d, void *user)
{
    volume *v = user;
    const cugl_app_input *in = cugl_app_context_input(d->ctx);
    if (v->spinning && (in->left || in->right || in->scroll != 0.0)) {
        /* The mouse takes over where the turning has got to. */
        v->camera.yaw += volume_spin(d->time);
        v->spinning = false;
    }
    if (demo_camera_was_reset(d)) /* the camera's own reset is not this scene's */
        camera_reset(v);
    else
        cugl_app_camera_update(&v->camera, d->ctx, d->dt);
}

/* This frame's camera: the user's, turned by the spin while it lasts. */
static volume_params frame_params(const volume *v, const demo *d)
{
    cugl_app_camera cam = v->camera;
    if (v->spinning)
        cam.yaw += volume_spin(d->time);
    float eye[3];
    cugl_app_camera_eye(eye, &cam);
    return volume_params_for(eye, cam.target, cam.fov_y, d->width, d->height, VOLUME_STEP);
}

/* This frame's image into the texture (or its memory). */
static cugl_status march(demo *d, void *user, const demo_dest *dest)
{
    volume *v = user;
    volume_params p = frame_params(v, d);
    uint64_t grid = cugl_texture_handle(v->grid);
    cugl_launch_config launch = demo_grid_2d(p.width, p.height);
    void *args[] = {(void *)dest, &grid, &p};
    return cugl_launch(d->stream, &launch, v->render_kernel, args, 3);
}

static cugl_status render(demo *d, void *user)
{
    volume *v = user;
    return demo_target_render_fullscreen(&v->image, d, march, user);
}

/* --view: the orbit camera, turned as far as the spin has got; a view set
 * stops the spin. */
static int view_get(demo *d, void *user, float *view)
{
    const volume *v = user;
    cugl_app_camera cam = v->camera;
    if (v->spinning)
        cam.yaw += volume_spin(d->time);
    return demo_camera_view_get(&cam, view);
}

static const char *view_set(demo *d, void *user, const float *view, int count)
{
    (void)d;
    volume *v = user;
    v->spinning = false;
    return demo_camera_view_set(&v->camera, view, count);
}

#if CUGL_APP_HAS_UI
/* The panel: whether the volume turns by itself. */
static void panel(demo *d, void *user, cugl_app_ui *ui)
{
    volume *v = user;
    bool turning = v->spinning;
    if (cugl_app_ui_checkbox(ui, "turning", &turning) && !turning) {
        /* Stop where the turning has got to, as a drag does. */
        v->camera.yaw += volume_spin(d->time);
        v->spinning = false;
    } else if (turning && !v->spinning) {
        v->camera.yaw -= volume_spin(d->time);
        v->spinning = true;
    }
}
#endif

int main(int argc, char **argv)
{
    demo d;
    int rc = demo_start(&d, &info, argc, argv);
    if (rc != DEMO_RUN)
        return rc;
    volume v = {0};
    rc = volume_create(&v, &d);
    if (rc == 0)
        rc = demo_run(&d,
                      &(demo_callbacks){.update = update,
                                        .render = render,
                                        .view_get = view_get,
                                        .view_set = view_set,
                                        .panel = DEMO_PANEL(panel)},
                      &v);
    volume_destroy(&v);
    return demo_finish(&d, rc);
}
