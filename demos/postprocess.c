/*
 * cugl-postprocess: GL renders a lit, turning 3-D scene (a torus knot and
 * five cubes over a chequered floor) into a texture; CUDA filters it into
 * a second texture, which GL shows with a full-window blit. The filters
 * (postprocess_math.h): none, a separable Gaussian blur, Sobel edges, or
 * the blur and then edges. The two images are interop targets
 * (common/target.h): the scene is GL's to write and CUDA's to read
 * (DEMO_FROM_GL), the result the other way round, and CUDA takes both in
 * one turn: on the map path they are mapped together in one call, the
 * kernels sampling the scene through a texture object and writing the
 * result through a surface. The scene itself is postprocess_scene.c.
 *
 * Every path runs the same kernels on the same bytes, so they show the
 * same picture.
 */
#include <string.h>

#include "common/demo.h"
#include "common/target.h"
#include "postprocess_math.h"
#include "postprocess_scene.h"

#if CUGL_APP_HAS_UI
#include <cugl/app_ui.h>
#endif

extern const unsigned char cugl_postprocess_fatbin[];
extern const size_t cugl_postprocess_fatbin_size;

/* A timer phase beyond demo.h's: GL draws the scene into its texture. */
enum { PHASE_SCENE = 6 };

/* GLFW's keypad codes; the other keys' codes are their characters. */
enum { KEY_KP_SUBTRACT = 333, KEY_KP_ADD = 334 };

static const char *const filter_names[] = {"none", "blur", "edges", "both"};

/* What --filter and --radius ask for: the first frame's settings. */
typedef struct settings {
    pp_filter filter;
    int radius;
} settings;

static settings initial = {PP_FILTER_EDGES, PP_DEFAULT_RADIUS};

static const char *parse_filter(const char *value, void *user)
{
    settings *s = user;
    for (int i = 0; i < 4; i++) {
        if (strcmp(value, filter_names[i]) == 0) {
            s->filter = (pp_filter)i;
            return NULL;
        }
    }
    return "is not none, blur, edges or both";
}

static const char *parse_radius(const char *value, void *user)
{
    static char why[64];
    settings *s = user;
    long n;
    if (!demo_parse_long(value, 1, PP_MAX_RADIUS, &n)) {
        snprintf(why, sizeof why, "is not a number from 1 to %d", PP_MAX_RADIUS);
        return why;
    }
    s->radius = (int)n;
    return NULL;
}

static const demo_flag flags[] = {
    {"--filter", "NAME", "none, blur, edges (default), or both: blur, then edges", parse_filter,
     &initial},
    {"--radius", "N", "the blur's radius in pixels, 1 to 32 (default 6)", parse_radius, &initial},
    {NULL, NULL, NULL, NULL, NULL},
};

static const demo_info info = {
    .program = "cugl-postprocess",
    .name = "postprocess",
    .summary =
        "GL renders a lit 3-D scene into a texture; CUDA filters it (a Gaussian blur, Sobel\n"
        "edges) into a second texture that GL shows. --interop map maps both textures;\n"
        "shared: GL copies the scene into CUDA memory and CUDA writes a shared texture's\n"
        "memory; host: both images cross through pinned host memory.",
    .view = DEMO_VIEW_ORBIT,
    .controls = "  1 2 3 4                          filter: none, blur, edges, both\n"
                "  + -                              blur radius\n"
                "  left drag, arrow keys, W/A/S/D   orbit\n"
                "  right drag                       pan\n"
                "  wheel                            zoom\n"
                "  R                                reset the camera\n"
                "  Escape                           quit\n",
    .extra = flags,
};

/* ---- The demo's state -------------------------------------------------------- */

typedef struct postprocess {
    pp_scene scene_gl;
    cugl_app_camera camera;

    cugl_kernel *copy, *blur_rows, *blur_columns, *edges;
    pp_filter filter;
    int radius;
    cugl_memory_resource *device_mr;

    /* Everything below has the frame's size (frame_create). */
    int width, height;
    GLuint fbo, depth;     /* the scene's framebuffer: the scene's texture and a depth buffer */
    cugl_app_target *scene;  /* GL renders it, CUDA filters it */
    cugl_app_target *result; /* CUDA writes it, GL shows it */
    cugl_buffer *rows;     /* the blur's intermediate image, float4 */
    cugl_buffer *blurred;  /* the blurred image that "both" takes edges of */
} postprocess;

/* ---- Images and memory of the frame's size ------------------------------------- */

/* The scene's framebuffer: its target's texture and a depth renderbuffer. */
static cugl_status make_framebuffer(postprocess *p)
{
    glCreateRenderbuffers(1, &p->depth);
    glNamedRenderbufferStorage(p->depth, GL_DEPTH_COMPONENT24, p->width, p->height);
    glCreateFramebuffers(1, &p->fbo);
    glNamedFramebufferTexture(p->fbo, GL_COLOR_ATTACHMENT0, cugl_app_target_gl_name(p->scene),
                              0);
    glNamedFramebufferRenderbuffer(p->fbo, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, p->depth);
    GLenum status = glCheckNamedFramebufferStatus(p->fbo, GL_FRAMEBUFFER);
    if (status != GL_FRAMEBUFFER_COMPLETE)
        return cugl_report_error(CUGL_ERROR_GL, info.program,
                                 "the scene's %dx%d framebuffer is incomplete (0x%04x)", p->width,
                                 p->height, status);
    return cugl_app_check_gl(info.program, "making the scene's framebuffer");
}

/* Free what frame_create made; the GL context is current. */
static void frame_destroy(postprocess *p, demo *d)
{
    /* Kernels still queued may use the memory (the targets wait for them too). */
    if (d->stream)
        cugl_stream_sync(d->stream);
    cugl_app_target_destroy(p->scene);
    cugl_app_target_destroy(p->result);
    p->scene = p->result = NULL;
    cugl_buffer_release(p->rows);
    cugl_buffer_release(p->blurred);
    if (p->fbo)
        glDeleteFramebuffers(1, &p->fbo);
    if (p->depth)
        glDeleteRenderbuffers(1, &p->depth);
    p->width = p->height = 0;
    p->fbo = p->depth = 0;
    p->rows = p->blurred = NULL;
}

/* The two images, the scene's framebuffer and the filters' intermediates. */
static cugl_status frame_create(postprocess *p, demo *d, int width, int height)
{
    p->width = width;
    p->height = height;
    size_t pixels = (size_t)width * (size_t)height;
    cugl_status st = demo_target_create_texture(&p->scene, d, width, height, CUGL_APP_FROM_GL);
    if (st == CUGL_OK)
        st = demo_target_create_texture(&p->result, d, width, height, CUGL_APP_TO_GL);
    if (st == CUGL_OK)
        st = make_framebuffer(p);
    if (st == CUGL_OK)
        st = cugl_memory_resource_allocate(&p->rows, p->device_mr, pixels * 16, d->stream);
    if (st == CUGL_OK)
        st = cugl_memory_resource_allocate(&p->blurred, p->device_mr, pixels * 4, d->stream);
    if (st != CUGL_OK)
        frame_destroy(p, d);
    return st;
}

/* ---- The filters ----------------------------------------------------------------- */

/* The kernels of p->filter from src to dst, on d->stream. */
static cugl_status run_filters(postprocess *p, demo *d, demo_source src, demo_dest dst)
{
    int w = p->width, h = p->height;
    cugl_launch_config grid = demo_grid_2d(w, h);
    pp_blur blur = pp_blur_make(p->radius);
    uint64_t rows = cugl_buffer_handle(p->rows), rows_pitch = (uint64_t)w * 16;
    uint64_t blurred = cugl_buffer_handle(p->blurred), blurred_pitch = (uint64_t)w * 4;
    /* "both" blurs into p->blurred and takes the edges of that. */
    demo_dest blur_to = dst;
    demo_source edges_of = src;
    if (p->filter == PP_FILTER_BOTH) {
        blur_to = (demo_dest){.ptr = blurred, .pitch = blurred_pitch};
        edges_of = (demo_source){.ptr = blurred, .pitch = blurred_pitch};
    }
    cugl_status st = CUGL_OK;
    demo_phase_begin(d, DEMO_PHASE_CUDA, "cuda", true);
    if (p->filter == PP_FILTER_NONE) {
        void *args[] = {&src, &dst, &w, &h};
        st = cugl_launch(d->stream, &grid, p->copy, args, 4);
    }
    if (p->filter == PP_FILTER_BLUR || p->filter == PP_FILTER_BOTH) {
        void *rows_args[] = {&src, &rows, &rows_pitch, &w, &h, &blur};
        void *columns_args[] = {&rows, &rows_pitch, &blur_to, &w, &h, &blur};
        st = cugl_launch(d->stream, &grid, p->blur_rows, rows_args, 6);
        if (st == CUGL_OK)
            st = cugl_launch(d->stream, &grid, p->blur_columns, columns_args, 6);
    }
    if (st == CUGL_OK && (p->filter == PP_FILTER_EDGES || p->filter == PP_FILTER_BOTH)) {
        void *args[] = {&edges_of, &dst, &w, &h};
        st = cugl_launch(d->stream, &grid, p->edges, args, 4);
    }
    demo_phase_end(d, DEMO_PHASE_CUDA);
    return st;
}

/* GL's scene to CUDA, filtered into the result, which GL gets back. */
static cugl_status filter(postprocess *p, demo *d)
{
    cugl_status st = cugl_app_target_gl_end(p->scene);
    if (st != CUGL_OK)
        return st;
    cugl_app_target *both[2] = {p->scene, p->result};
    demo_io io[2];
    st = demo_targets_cuda_begin(d, both, 2, io);
    if (st != CUGL_OK)
        return st;
    st = run_filters(p, d, io[0].source, io[1].dest);
    /* GL gets the images back even when a launch failed. */
    cugl_status end = demo_targets_cuda_end(d, both, 2);
    return st != CUGL_OK ? st : end;
}

/* ---- Frames --------------------------------------------------------------------- */

static void print_settings(const postprocess *p)
{
    printf("%s: --filter %s --radius %d\n", info.program, filter_names[p->filter], p->radius);
}

/* Keys 1 to 4 pick the filter, + and - change the radius; the camera as sinewave's. */
static void update(demo *d, void *user)
{
    postprocess *p = user;
    cugl_app_camera_update(&p->camera, d->ctx, d->dt);
    if (demo_camera_was_reset(d))
        pp_scene_camera(&p->camera); /* this scene's view, not the library's default */
    static const int keys[8] = {'1', '2', '3', '4', '=', KEY_KP_ADD, '-', KEY_KP_SUBTRACT};
    bool changed = false;
    /* Every press counts, in the order of the keys above within a frame. */
    for (int i = 0; i < 8; i++) {
        for (int n = cugl_app_key_presses(d->ctx, keys[i]); n > 0; n--) {
            if (i < 4)
                p->filter = (pp_filter)i;
            else if (i < 6)
                p->radius = p->radius < PP_MAX_RADIUS ? p->radius + 1 : PP_MAX_RADIUS;
            else
                p->radius = p->radius > 1 ? p->radius - 1 : 1;
            changed = true;
        }
    }
    if (changed)
        print_settings(p);
}

static cugl_status render(demo *d, void *user)
{
    postprocess *p = user;
    cugl_status st = CUGL_OK;
    if (p->width != d->width || p->height != d->height) {
        /* The window was resized: everything of the new size. */
        frame_destroy(p, d);
        st = frame_create(p, d, d->width, d->height);
    }
    if (st != CUGL_OK)
        return st;
    st = cugl_app_target_gl_begin(p->scene);
    if (st != CUGL_OK)
        return st;
    demo_phase_begin(d, PHASE_SCENE, "scene", false);
    glBindFramebuffer(GL_FRAMEBUFFER, p->fbo);
    pp_scene_draw(&p->scene_gl, &p->camera, d->time, p->width, p->height);
    demo_phase_end(d, PHASE_SCENE);
    st = filter(p, d);
    if (st != CUGL_OK)
        return st;
    glBindFramebuffer(GL_FRAMEBUFFER, cugl_app_context_framebuffer(d->ctx));
    glViewport(0, 0, d->width, d->height);
    demo_phase_begin(d, DEMO_PHASE_DRAW, "draw", false);
    st = cugl_app_target_draw(p->result);
    demo_phase_end(d, DEMO_PHASE_DRAW);
    return st;
}

/* Everything the frames use; 0, or 1 after saying what failed. */
static int postprocess_create(postprocess *p, demo *d)
{
    p->filter = initial.filter;
    p->radius = initial.radius;
    pp_scene_camera(&p->camera);
    if (demo_load_module(d, cugl_postprocess_fatbin, cugl_postprocess_fatbin_size) != CUGL_OK ||
        demo_kernel(&p->copy, d, "pp_copy") != CUGL_OK ||
        demo_kernel(&p->blur_rows, d, "pp_blur_rows") != CUGL_OK ||
        demo_kernel(&p->blur_columns, d, "pp_blur_columns") != CUGL_OK ||
        demo_kernel(&p->edges, d, "pp_edges") != CUGL_OK)
        return demo_fail(d, "cannot load the kernels");
    if (pp_scene_create(&p->scene_gl, info.program) != CUGL_OK)
        return demo_fail(d, "cannot make the scene");
    if (cugl_device_memory_resource_create(&p->device_mr, d->device, NULL) != CUGL_OK)
        return demo_fail(d, "cannot create the memory resource");
    int w, h;
    cugl_app_context_size(d->ctx, &w, &h);
    cugl_status st = frame_create(p, d, w, h);
    if (st != CUGL_OK)
        return demo_target_fail(d, st, "the textures");
    return 0;
}

static void postprocess_destroy(postprocess *p, demo *d)
{
    frame_destroy(p, d);
    cugl_memory_resource_release(p->device_mr);
    cugl_kernel *kernels[] = {p->copy, p->blur_rows, p->blur_columns, p->edges};
    for (int i = 0; i < 4; i++)
        cugl_kernel_release(kernels[i]);
    pp_scene_destroy(&p->scene_gl);
}

#if CUGL_APP_HAS_UI
/* The panel: the filter and the blur's radius, as keys 1-4 and +/- set them. */
static void panel(demo *d, void *user, cugl_app_ui *ui)
{
    (void)d;
    postprocess *p = user;
    int filter = (int)p->filter;
    bool changed = cugl_app_ui_combo(ui, "filter", &filter, filter_names, 4);
    changed |= cugl_app_ui_slider_int(ui, "blur radius", &p->radius, 1, PP_MAX_RADIUS);
    p->filter = (pp_filter)filter;
    if (changed)
        print_settings(p);
}
#endif

int main(int argc, char **argv)
{
    demo d;
    int rc = demo_start(&d, &info, argc, argv);
    if (rc != DEMO_RUN)
        return rc;
    postprocess p = {0};
    rc = postprocess_create(&p, &d);
    if (rc == 0) {
        print_settings(&p);
        rc = demo_run(&d,
                      &(demo_callbacks){.update = update,
                                        .render = render,
                                        .camera = &p.camera,
                                        .panel = DEMO_PANEL(panel)},
                      &p);
    }
    postprocess_destroy(&p, &d);
    return demo_finish(&d, rc);
}
