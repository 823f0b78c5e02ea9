/*
 * cugl-postprocess: GL renders a lit, turning 3-D scene (a torus knot and
 * five cubes over a chequered floor) into a texture; CUDA filters it into
 * a second texture, which GL shows with a full-window blit. The filters
 * (postprocess_math.h): none, a separable Gaussian blur, Sobel edges, or
 * the blur and then edges. The images cross between GL and CUDA by
 * --interop's path:
 *
 *   map     both textures registered once (the scene read-only, the result
 *           write-discard with surface load/store) and mapped together in
 *           one call every frame; the kernels sample the scene through a
 *           texture object on its array and write the result through a
 *           surface object on the other
 *   shared  GL copies the scene into CUDA memory it imports as a buffer
 *           (cugl/app_shared.h); the kernels read that linear memory and
 *           write the memory of a shared texture, which GL copies into the
 *           texture on the GPU; nothing is mapped
 *   host    GL reads the scene into pinned host memory; CUDA copies it to
 *           the device, filters, and copies the result back; GL uploads it
 *
 * The three paths run the same kernels on the same bytes, so they show the
 * same picture.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cglm/cglm.h>

#include "common/demo.h"
#include "common/target.h"
#include "postprocess_math.h"

extern const unsigned char cugl_postprocess_fatbin[];
extern const size_t cugl_postprocess_fatbin_size;
extern const unsigned char cugl_shader_postprocess_scene_vert[];
extern const unsigned char cugl_shader_postprocess_scene_frag[];

/* Timer phases beyond demo.h's. */
enum {
    PHASE_SCENE = 5, /* GL draws the scene into its texture */
    PHASE_COPY = 6,  /* shared, host: GL copies the scene out of it */
};

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
    .controls = "  1 2 3 4                          filter: none, blur, edges, both\n"
                "  + -                              blur radius\n"
                "  left drag, arrow keys, W/A/S/D   orbit\n"
                "  right drag                       pan\n"
                "  wheel                            zoom\n"
                "  R                                reset the camera\n"
                "  Escape                           quit\n",
    .extra = flags,
};

/* ---- The scene --------------------------------------------------------------- */

typedef struct vertex {
    float position[3], normal[3], colour[3];
} vertex;

enum {
    FLOOR_TILES = 24,   /* a chequerboard of FLOOR_TILES^2 squares */
    KNOT_SEGMENTS = 384, /* rings along the knot */
    KNOT_SIDES = 24,     /* vertices around each ring */
    CUBES = 5,
    FLOOR_VERTICES = FLOOR_TILES * FLOOR_TILES * 6,
    CUBE_VERTICES = 36,
    KNOT_VERTICES = KNOT_SEGMENTS * KNOT_SIDES * 6,
};

#define FLOOR_HALF 9.6f  /* the floor spans [-9.6, 9.6] in x and z */
#define FLOOR_Y -1.25f
#define KNOT_SCALE 0.36f
#define KNOT_TUBE 0.35f  /* the tube's radius, in knot units */
#define CUBE_SIZE 0.55f
#define CUBE_ORBIT 2.2f
#define CUBE_Y -0.7f
#define SPIN 0.7f        /* radians per second */

static const float background[3] = {0.05f, 0.06f, 0.09f};
static const float light_dir[3] = {0.45f, 1.0f, 0.3f};
static const float white[3] = {1.0f, 1.0f, 1.0f};
static const float cube_tints[CUBES][3] = {
    {0.92f, 0.26f, 0.21f}, {0.30f, 0.80f, 0.36f}, {0.26f, 0.46f, 0.96f},
    {0.96f, 0.80f, 0.26f}, {0.80f, 0.31f, 0.86f},
};

/* Two triangles over corners a b c d (in order around the quad). */
static vertex *put_quad(vertex *v, const vertex *a, const vertex *b, const vertex *c,
                        const vertex *d)
{
    const vertex *order[6] = {a, b, c, a, c, d};
    for (int i = 0; i < 6; i++)
        *v++ = *order[i];
    return v;
}

static vertex *make_floor(vertex *v)
{
    float step = 2.0f * FLOOR_HALF / FLOOR_TILES;
    for (int j = 0; j < FLOOR_TILES; j++) {
        for (int i = 0; i < FLOOR_TILES; i++) {
            float shade = (i + j) % 2 ? 0.82f : 0.2f;
            float x0 = -FLOOR_HALF + step * (float)i, z0 = -FLOOR_HALF + step * (float)j;
            vertex c[4];
            for (int k = 0; k < 4; k++) {
                c[k] = (vertex){{x0 + (k == 1 || k == 2 ? step : 0.0f), 0.0f,
                                 z0 + (k >= 2 ? step : 0.0f)},
                                {0.0f, 1.0f, 0.0f},
                                {shade, shade, shade * 0.95f}};
            }
            v = put_quad(v, &c[0], &c[1], &c[2], &c[3]);
        }
    }
    return v;
}

/* A unit cube about the origin, flat-shaded, white (the tint colours it). */
static vertex *make_cube(vertex *v)
{
    for (int axis = 0; axis < 3; axis++) {
        for (int sign = -1; sign <= 1; sign += 2) {
            int u = (axis + 1) % 3, w = (axis + 2) % 3;
            vertex c[4];
            for (int k = 0; k < 4; k++) {
                c[k] = (vertex){{0}, {0}, {1.0f, 1.0f, 1.0f}};
                c[k].position[axis] = 0.5f * (float)sign;
                c[k].position[u] = k == 1 || k == 2 ? 0.5f : -0.5f;
                c[k].position[w] = (k >= 2 ? 0.5f : -0.5f) * (float)sign;
                c[k].normal[axis] = (float)sign;
            }
            v = put_quad(v, &c[0], &c[1], &c[2], &c[3]);
        }
    }
    return v;
}

/* The (2, 3) torus knot, a trefoil: the tube's centre line at parameter t. */
static void knot_point(double t, double p[3])
{
    double r = 2.0 + cos(3.0 * t);
    p[0] = r * cos(2.0 * t);
    p[1] = r * sin(2.0 * t);
    p[2] = -sin(3.0 * t);
}

static void normalize3(double v[3])
{
    double n = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    for (int i = 0; i < 3; i++)
        v[i] /= n;
}

static void cross3(const double a[3], const double b[3], double out[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

/*
 * Ring i of the tube: KNOT_SIDES vertices around the centre line, in the
 * plane of the curve's normal and binormal (a Frenet frame from the
 * neighbouring points, closed since the curve is), coloured along the knot.
 */
static void knot_ring(int i, vertex ring[KNOT_SIDES])
{
    const double two_pi = 6.283185307179586;
    double h = two_pi / KNOT_SEGMENTS, t = h * i;
    double prev[3], p[3], next[3], tangent[3], bend[3], binormal[3], normal[3];
    knot_point(t - h, prev);
    knot_point(t, p);
    knot_point(t + h, next);
    for (int k = 0; k < 3; k++) {
        tangent[k] = next[k] - prev[k];
        bend[k] = next[k] + prev[k] - 2.0 * p[k];
    }
    normalize3(tangent);
    cross3(tangent, bend, binormal);
    normalize3(binormal);
    cross3(binormal, tangent, normal);
    float colour[3];
    for (int k = 0; k < 3; k++)
        colour[k] = (float)(0.55 + 0.45 * cos(t + two_pi * 0.33 * k));
    for (int j = 0; j < KNOT_SIDES; j++) {
        double phi = two_pi * j / KNOT_SIDES;
        vertex *v = &ring[j];
        for (int k = 0; k < 3; k++) {
            double n = cos(phi) * normal[k] + sin(phi) * binormal[k];
            v->position[k] = (float)(p[k] + KNOT_TUBE * n);
            v->normal[k] = (float)n;
            v->colour[k] = colour[k];
        }
    }
}

static vertex *make_knot(vertex *v)
{
    vertex first[KNOT_SIDES], a[KNOT_SIDES], b[KNOT_SIDES];
    knot_ring(0, first);
    memcpy(a, first, sizeof a);
    for (int i = 0; i < KNOT_SEGMENTS; i++) {
        if (i + 1 < KNOT_SEGMENTS)
            knot_ring(i + 1, b);
        else
            memcpy(b, first, sizeof b);
        for (int j = 0; j < KNOT_SIDES; j++) {
            int k = (j + 1) % KNOT_SIDES;
            v = put_quad(v, &a[j], &b[j], &b[k], &a[k]);
        }
        memcpy(a, b, sizeof a);
    }
    return v;
}

/* ---- The demo's state -------------------------------------------------------- */

typedef struct postprocess {
    /* The scene: one vertex buffer, each object a range of it. */
    GLuint program, vao, vbo;
    GLint floor_first, cube_first, knot_first;
    cugl_app_camera camera;

    cugl_kernel *copy, *blur_rows, *blur_columns, *edges;
    pp_filter filter;
    int radius;
    bool key_was_down[8];
    cugl_memory_resource *device_mr, *pinned_mr;

    /* Everything below has the frame's size (frame_create). */
    int width, height;
    GLuint fbo, scene, depth; /* the scene's framebuffer and its colour texture */
    GLuint result;            /* the texture GL shows: made here (map, host) or shared's */
    cugl_buffer *rows;        /* the blur's intermediate image, float4 */
    cugl_buffer *blurred;     /* the blurred image that "both" takes edges of */

    /* map: the registered textures; this frame's texture and surface
     * objects (retired with demo_retire once the kernels are queued) */
    cugl_graphics_resource *scene_resource, *result_resource;
    cugl_texture *texture;
    cugl_surface *surface;

    /* shared: the scene's copy (a buffer) and the result (a texture) */
    cugl_app_shared *scene_shared, *result_shared;
    size_t scene_pitch;

    /* host */
    cugl_buffer *scene_pinned, *scene_device, *result_device, *result_pinned;
} postprocess;

static cugl_status gl_check(const char *what)
{
    GLenum e = glGetError();
    if (e == GL_NO_ERROR)
        return CUGL_OK;
    return cugl_report_error(CUGL_ERROR_GL, info.program, "%s: GL error 0x%04x", what, e);
}

/* The floor, a cube and the knot, one after the other in a vertex buffer. */
static cugl_status make_scene(postprocess *p)
{
    size_t count = FLOOR_VERTICES + CUBE_VERTICES + KNOT_VERTICES;
    vertex *v = malloc(count * sizeof *v);
    if (!v)
        return cugl_report_error(CUGL_ERROR_OUT_OF_MEMORY, info.program,
                                 "cannot allocate %zu vertices", count);
    p->floor_first = 0;
    p->cube_first = (GLint)(make_floor(v) - v);
    p->knot_first = (GLint)(make_cube(v + p->cube_first) - v);
    make_knot(v + p->knot_first);
    glCreateBuffers(1, &p->vbo);
    glNamedBufferStorage(p->vbo, (GLsizeiptr)(count * sizeof *v), v, 0);
    free(v);
    glCreateVertexArrays(1, &p->vao);
    glVertexArrayVertexBuffer(p->vao, 0, p->vbo, 0, sizeof(vertex));
    for (GLuint a = 0; a < 3; a++) {
        glEnableVertexArrayAttrib(p->vao, a);
        glVertexArrayAttribFormat(p->vao, a, 3, GL_FLOAT, GL_FALSE, a * 3 * sizeof(float));
        glVertexArrayAttribBinding(p->vao, a, 0);
    }
    return gl_check("making the scene's vertex buffer");
}

/* model: column-major, as a cglm mat4 holds it. */
static void draw_object(const float *model, const float tint[3], GLint first, GLsizei count)
{
    glUniformMatrix4fv(0, 1, GL_FALSE, model);
    glUniform3fv(5, 1, tint);
    glDrawArrays(GL_TRIANGLES, first, count);
}

/* The scene at d->time into p->fbo: the knot turns, the cubes circle it. */
static void draw_scene(postprocess *p, demo *d)
{
    demo_phase_begin(d, PHASE_SCENE, "scene", false);
    float view[16], proj[16], eye[3];
    cugl_app_camera_matrices(&p->camera, (float)p->width / (float)p->height, view, proj);
    cugl_app_camera_eye(&p->camera, eye);
    glBindFramebuffer(GL_FRAMEBUFFER, p->fbo);
    glViewport(0, 0, p->width, p->height);
    glClearColor(background[0], background[1], background[2], 1.0f);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
    glEnable(GL_DEPTH_TEST);
    glUseProgram(p->program);
    glUniformMatrix4fv(1, 1, GL_FALSE, view);
    glUniformMatrix4fv(2, 1, GL_FALSE, proj);
    glUniform3fv(3, 1, eye);
    glUniform3fv(4, 1, light_dir);
    glUniform3fv(6, 1, background);
    glBindVertexArray(p->vao);

    float a = SPIN * d->time;
    mat4 m;
    glm_translate_make(m, (vec3){0.0f, FLOOR_Y, 0.0f});
    draw_object(m[0], white, p->floor_first, FLOOR_VERTICES);

    glm_translate_make(m, (vec3){0.0f, 0.15f, 0.0f});
    glm_rotate_y(m, a, m);
    glm_rotate_x(m, 0.35f * sinf(0.8f * a), m);
    glm_scale_uni(m, KNOT_SCALE);
    draw_object(m[0], white, p->knot_first, KNOT_VERTICES);

    for (int i = 0; i < CUBES; i++) {
        float phi = 0.5f * a + GLM_PIf * 2.0f * (float)i / CUBES;
        glm_translate_make(m, (vec3){CUBE_ORBIT * cosf(phi),
                                     CUBE_Y + 0.12f * sinf(2.0f * a + (float)i),
                                     CUBE_ORBIT * sinf(phi)});
        glm_rotate(m, 1.3f * a + (float)i, (vec3){0.6f, 1.0f, 0.2f});
        glm_scale_uni(m, CUBE_SIZE);
        draw_object(m[0], cube_tints[i], p->cube_first, CUBE_VERTICES);
    }
    glBindVertexArray(0);
    glDisable(GL_DEPTH_TEST);
    demo_phase_end(d, PHASE_SCENE);
}

static void scene_camera(cugl_app_camera *camera)
{
    cugl_app_camera_init(camera);
    camera->target[1] = -0.15f;
    camera->distance = 6.2f;
    camera->pitch = 0.42f;
    camera->z_near = 0.1f;
    camera->z_far = 60.0f;
}

/* ---- Textures and memory of the frame's size ---------------------------------- */

static cugl_status make_texture(GLuint *texture, int width, int height)
{
    glCreateTextures(GL_TEXTURE_2D, 1, texture);
    glTextureStorage2D(*texture, 1, GL_RGBA8, width, height);
    glTextureParameteri(*texture, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTextureParameteri(*texture, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTextureParameteri(*texture, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTextureParameteri(*texture, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    return gl_check("making an RGBA8 texture");
}

/* The scene's framebuffer: an RGBA8 texture and a depth renderbuffer. */
static cugl_status make_framebuffer(postprocess *p)
{
    cugl_status st = make_texture(&p->scene, p->width, p->height);
    if (st != CUGL_OK)
        return st;
    glCreateRenderbuffers(1, &p->depth);
    glNamedRenderbufferStorage(p->depth, GL_DEPTH_COMPONENT24, p->width, p->height);
    glCreateFramebuffers(1, &p->fbo);
    glNamedFramebufferTexture(p->fbo, GL_COLOR_ATTACHMENT0, p->scene, 0);
    glNamedFramebufferRenderbuffer(p->fbo, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, p->depth);
    GLenum status = glCheckNamedFramebufferStatus(p->fbo, GL_FRAMEBUFFER);
    if (status != GL_FRAMEBUFFER_COMPLETE)
        return cugl_report_error(CUGL_ERROR_GL, info.program,
                                 "the scene's %dx%d framebuffer is incomplete (0x%04x)", p->width,
                                 p->height, status);
    return gl_check("making the scene's framebuffer");
}

static cugl_status make_map(postprocess *p, demo *d)
{
    cugl_status st = make_texture(&p->result, p->width, p->height);
    if (st == CUGL_OK)
        st = cugl_graphics_resource_from_gl_image(&p->scene_resource, d->device, p->scene,
                                                  CUGL_GL_TEXTURE_2D, CUGL_GRAPHICS_READ_ONLY);
    if (st == CUGL_OK)
        st = cugl_graphics_resource_from_gl_image(
            &p->result_resource, d->device, p->result, CUGL_GL_TEXTURE_2D,
            CUGL_GRAPHICS_WRITE_DISCARD | CUGL_GRAPHICS_SURFACE_LOAD_STORE);
    return st;
}

static cugl_status make_shared(postprocess *p, demo *d)
{
    /* Rows 256-byte aligned, as the shared texture's are. */
    p->scene_pitch = ((size_t)p->width * 4 + 255) / 256 * 256;
    cugl_status st = cugl_app_shared_buffer_create(&p->scene_shared, d->device,
                                                   p->scene_pitch * (size_t)p->height);
    if (st == CUGL_OK)
        st = cugl_app_shared_texture_create(&p->result_shared, d->device, GL_RGBA8, p->width,
                                            p->height);
    if (st != CUGL_OK)
        return st;
    p->result = cugl_app_shared_gl_name(p->result_shared);
    size_t pitch = cugl_app_shared_pitch(p->result_shared);
    /* The kernels write whole texels at row starts: 4-byte aligned. */
    if (pitch < (size_t)p->width * 4 || pitch % 4 != 0)
        return cugl_report_error(CUGL_ERROR_INVALID_STATE, info.program,
                                 "the shared %dx%d RGBA8 texture has a pitch of %zu bytes",
                                 p->width, p->height, pitch);
    return CUGL_OK;
}

static cugl_status make_host(postprocess *p, demo *d)
{
    size_t size = (size_t)p->width * (size_t)p->height * 4;
    cugl_status st = make_texture(&p->result, p->width, p->height);
    if (st == CUGL_OK)
        st = cugl_memory_resource_allocate(&p->scene_pinned, p->pinned_mr, size, d->stream);
    if (st == CUGL_OK)
        st = cugl_memory_resource_allocate(&p->result_pinned, p->pinned_mr, size, d->stream);
    if (st == CUGL_OK)
        st = cugl_memory_resource_allocate(&p->scene_device, p->device_mr, size, d->stream);
    if (st == CUGL_OK)
        st = cugl_memory_resource_allocate(&p->result_device, p->device_mr, size, d->stream);
    return st;
}

/* Free what frame_create made; the GL context is current. */
static void frame_destroy(postprocess *p, demo *d)
{
    /* Kernels still queued may use the texture and surface objects and the memory. */
    if (d->stream)
        cugl_stream_sync(d->stream);
    cugl_texture_release(p->texture);
    cugl_surface_release(p->surface);
    cugl_graphics_resource *resources[2] = {p->scene_resource, p->result_resource};
    for (int i = 0; i < 2; i++) {
        if (resources[i]) {
            cugl_graphics_resource_close(resources[i], d->stream);
            cugl_graphics_resource_release(resources[i]);
        }
    }
    if (p->result_shared)
        p->result = 0; /* the shared texture's own */
    cugl_app_shared_destroy(p->scene_shared);
    cugl_app_shared_destroy(p->result_shared);
    cugl_buffer *buffers[] = {p->rows,          p->blurred,       p->scene_pinned,
                              p->scene_device,  p->result_device, p->result_pinned};
    for (size_t i = 0; i < sizeof buffers / sizeof buffers[0]; i++)
        cugl_buffer_release(buffers[i]);
    if (p->fbo)
        glDeleteFramebuffers(1, &p->fbo);
    if (p->depth)
        glDeleteRenderbuffers(1, &p->depth);
    GLuint textures[2] = {p->scene, p->result};
    for (int i = 0; i < 2; i++)
        if (textures[i])
            glDeleteTextures(1, &textures[i]);
    p->width = p->height = 0;
    p->fbo = p->depth = p->scene = p->result = 0;
    p->rows = p->blurred = NULL;
    p->scene_resource = p->result_resource = NULL;
    p->texture = NULL;
    p->surface = NULL;
    p->scene_shared = p->result_shared = NULL;
    p->scene_pinned = p->scene_device = p->result_device = p->result_pinned = NULL;
}

/* The scene's framebuffer, the filters' intermediates and the path's objects. */
static cugl_status frame_create(postprocess *p, demo *d, int width, int height)
{
    p->width = width;
    p->height = height;
    size_t pixels = (size_t)width * (size_t)height;
    cugl_status st = make_framebuffer(p);
    if (st == CUGL_OK)
        st = cugl_memory_resource_allocate(&p->rows, p->device_mr, pixels * 16, d->stream);
    if (st == CUGL_OK)
        st = cugl_memory_resource_allocate(&p->blurred, p->device_mr, pixels * 4, d->stream);
    if (st == CUGL_OK) {
        switch (d->opt.interop) {
        case DEMO_INTEROP_MAP:
            st = make_map(p, d);
            break;
        case DEMO_INTEROP_SHARED:
            st = make_shared(p, d);
            break;
        case DEMO_INTEROP_HOST:
            st = make_host(p, d);
            break;
        }
    }
    if (st != CUGL_OK)
        frame_destroy(p, d);
    return st;
}

/* ---- The filters ----------------------------------------------------------------- */

/* The kernels of p->filter from src to dst, on d->stream. */
static cugl_status run_filters(postprocess *p, demo *d, pp_source src, pp_dest dst)
{
    int w = p->width, h = p->height;
    cugl_launch_config grid = demo_grid_2d(w, h);
    pp_blur blur = pp_blur_make(p->radius);
    uint64_t rows = cugl_buffer_handle(p->rows), rows_pitch = (uint64_t)w * 16;
    uint64_t blurred = cugl_buffer_handle(p->blurred), blurred_pitch = (uint64_t)w * 4;
    /* "both" blurs into p->blurred and takes the edges of that. */
    pp_dest blur_to = dst;
    pp_source edges_of = src;
    if (p->filter == PP_FILTER_BOTH) {
        blur_to = (pp_dest){.ptr = blurred, .pitch = blurred_pitch};
        edges_of = (pp_source){.ptr = blurred, .pitch = blurred_pitch};
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

/* map: a texture object on the scene's array, a surface on the result's. */
static cugl_status map_objects(postprocess *p, demo *d)
{
    cugl_array *scene = NULL, *result = NULL;
    cugl_status st = cugl_graphics_resource_array(&scene, p->scene_resource, 0, 0);
    if (st == CUGL_OK)
        st = cugl_graphics_resource_array(&result, p->result_resource, 0, 0);
    if (st == CUGL_OK)
        st = cugl_texture_create(
            &p->texture, d->device,
            &(cugl_resource_desc){.kind = CUGL_RESOURCE_ARRAY, .array = scene},
            &(cugl_texture_desc){
                .address_mode = {CUGL_ADDRESS_CLAMP, CUGL_ADDRESS_CLAMP, CUGL_ADDRESS_CLAMP},
                .filter_mode = CUGL_FILTER_POINT,
                .read_mode = CUGL_READ_ELEMENT_TYPE,
            });
    if (st == CUGL_OK)
        st = cugl_surface_create(
            &p->surface, d->device,
            &(cugl_resource_desc){.kind = CUGL_RESOURCE_ARRAY, .array = result});
    /* The texture and the surface hold the arrays; the unmap closes them. */
    cugl_array_release(scene);
    cugl_array_release(result);
    return st;
}

static cugl_status filter_map(postprocess *p, demo *d)
{
    cugl_graphics_resource *both[2] = {p->scene_resource, p->result_resource};
    demo_phase_begin(d, DEMO_PHASE_ACQUIRE, "map", true);
    cugl_status st = cugl_graphics_map(both, 2, d->stream);
    if (st == CUGL_OK) {
        st = map_objects(p, d);
        if (st != CUGL_OK) {
            /* No kernel used what map_objects made before it failed. */
            cugl_texture_release(p->texture);
            cugl_surface_release(p->surface);
            p->texture = NULL;
            p->surface = NULL;
            cugl_graphics_unmap(both, 2, d->stream);
        }
    }
    demo_phase_end(d, DEMO_PHASE_ACQUIRE);
    if (st != CUGL_OK)
        return st;
    pp_source src = {.texture = cugl_texture_handle(p->texture)};
    pp_dest dst = {.surface = cugl_surface_handle(p->surface)};
    st = run_filters(p, d, src, dst);
    /* Unmap even when a launch failed. */
    demo_phase_begin(d, DEMO_PHASE_RELEASE, "unmap", true);
    cugl_status end = cugl_graphics_unmap(both, 2, d->stream);
    demo_phase_end(d, DEMO_PHASE_RELEASE);
    cugl_status retire = demo_retire(d, p->texture, p->surface);
    p->texture = NULL;
    p->surface = NULL;
    if (st == CUGL_OK)
        st = end;
    return st != CUGL_OK ? st : retire;
}

/* shared: GL copies the scene into the buffer CUDA reads, once CUDA has
 * read the last one. */
static cugl_status copy_scene_out(postprocess *p, demo *d)
{
    demo_phase_begin(d, PHASE_COPY, "copy-out", false);
    cugl_status st = cugl_app_shared_gl_begin(p->scene_shared);
    if (st == CUGL_OK) {
        glBindBuffer(GL_PIXEL_PACK_BUFFER, cugl_app_shared_gl_name(p->scene_shared));
        glPixelStorei(GL_PACK_ALIGNMENT, 4);
        glPixelStorei(GL_PACK_ROW_LENGTH, (GLint)(p->scene_pitch / 4));
        glGetTextureImage(p->scene, 0, GL_RGBA, GL_UNSIGNED_BYTE,
                          (GLsizei)cugl_app_shared_size(p->scene_shared), NULL);
        glPixelStorei(GL_PACK_ROW_LENGTH, 0);
        glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
        st = gl_check("glGetTextureImage into the shared buffer");
    }
    if (st == CUGL_OK)
        st = cugl_app_shared_gl_end(p->scene_shared);
    demo_phase_end(d, PHASE_COPY);
    return st;
}

static cugl_status filter_shared(postprocess *p, demo *d)
{
    cugl_status st = copy_scene_out(p, d);
    if (st != CUGL_OK)
        return st;
    demo_phase_begin(d, DEMO_PHASE_ACQUIRE, "wait-gl", true);
    st = cugl_app_shared_cuda_begin(p->scene_shared, d->stream);
    if (st == CUGL_OK)
        st = cugl_app_shared_cuda_begin(p->result_shared, d->stream);
    demo_phase_end(d, DEMO_PHASE_ACQUIRE);
    if (st != CUGL_OK)
        return st;
    pp_source src = {.ptr = cugl_buffer_handle(cugl_app_shared_buffer(p->scene_shared)),
                     .pitch = p->scene_pitch};
    pp_dest dst = {.ptr = cugl_buffer_handle(cugl_app_shared_buffer(p->result_shared)),
                   .pitch = cugl_app_shared_pitch(p->result_shared)};
    st = run_filters(p, d, src, dst);
    /* Both sides' events: GL may overwrite the scene's copy, and show the result. */
    demo_phase_begin(d, DEMO_PHASE_RELEASE, "signal-gl", true);
    cugl_status end = cugl_app_shared_cuda_end(p->scene_shared, d->stream);
    if (end == CUGL_OK)
        end = cugl_app_shared_cuda_end(p->result_shared, d->stream);
    demo_phase_end(d, DEMO_PHASE_RELEASE);
    if (st == CUGL_OK)
        st = end;
    if (st != CUGL_OK)
        return st;
    demo_phase_begin(d, DEMO_PHASE_HANDOFF, "wait-cuda", false);
    st = cugl_app_shared_gl_begin(p->result_shared);
    demo_phase_end(d, DEMO_PHASE_HANDOFF);
    return st;
}

static void *host_pointer(const cugl_buffer *pinned)
{
    return (void *)(uintptr_t)cugl_buffer_handle(pinned);
}

static cugl_status filter_host(postprocess *p, demo *d)
{
    size_t size = (size_t)p->width * (size_t)p->height * 4;
    demo_phase_begin(d, PHASE_COPY, "readback", false);
    glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
    glPixelStorei(GL_PACK_ALIGNMENT, 4);
    glPixelStorei(GL_PACK_ROW_LENGTH, 0);
    glGetTextureImage(p->scene, 0, GL_RGBA, GL_UNSIGNED_BYTE, (GLsizei)size,
                      host_pointer(p->scene_pinned));
    demo_phase_end(d, PHASE_COPY);
    cugl_status st = gl_check("glGetTextureImage into pinned memory");
    if (st != CUGL_OK)
        return st;

    demo_phase_begin(d, DEMO_PHASE_ACQUIRE, "to-device", true);
    st = cugl_buffer_copy_from(p->scene_device, p->scene_pinned, d->stream);
    demo_phase_end(d, DEMO_PHASE_ACQUIRE);
    if (st != CUGL_OK)
        return st;
    pp_source src = {.ptr = cugl_buffer_handle(p->scene_device), .pitch = (uint64_t)p->width * 4};
    pp_dest dst = {.ptr = cugl_buffer_handle(p->result_device), .pitch = (uint64_t)p->width * 4};
    st = run_filters(p, d, src, dst);
    if (st != CUGL_OK)
        return st;
    demo_phase_begin(d, DEMO_PHASE_RELEASE, "to-host", true);
    st = cugl_buffer_copy_from(p->result_pinned, p->result_device, d->stream);
    if (st == CUGL_OK)
        st = cugl_stream_sync(d->stream);
    demo_phase_end(d, DEMO_PHASE_RELEASE);
    if (st != CUGL_OK)
        return st;

    demo_phase_begin(d, DEMO_PHASE_HANDOFF, "upload", false);
    glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
    glTextureSubImage2D(p->result, 0, 0, 0, p->width, p->height, GL_RGBA, GL_UNSIGNED_BYTE,
                        host_pointer(p->result_pinned));
    demo_phase_end(d, DEMO_PHASE_HANDOFF);
    return gl_check("glTextureSubImage2D from pinned memory");
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
    if (cugl_app_key_down(d->ctx, 'R'))
        scene_camera(&p->camera); /* this scene's view, not the library's default */
    static const int keys[8] = {'1', '2', '3', '4', '=', KEY_KP_ADD, '-', KEY_KP_SUBTRACT};
    bool changed = false;
    for (int i = 0; i < 8; i++) {
        bool down = cugl_app_key_down(d->ctx, keys[i]);
        bool pressed = down && !p->key_was_down[i];
        p->key_was_down[i] = down;
        if (!pressed)
            continue;
        if (i < 4)
            p->filter = (pp_filter)i;
        else if (i < 6)
            p->radius = p->radius < PP_MAX_RADIUS ? p->radius + 1 : PP_MAX_RADIUS;
        else
            p->radius = p->radius > 1 ? p->radius - 1 : 1;
        changed = true;
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
    draw_scene(p, d);
    switch (d->opt.interop) {
    case DEMO_INTEROP_MAP:
        st = filter_map(p, d);
        break;
    case DEMO_INTEROP_SHARED:
        st = filter_shared(p, d);
        break;
    case DEMO_INTEROP_HOST:
        st = filter_host(p, d);
        break;
    }
    if (st != CUGL_OK)
        return st;
    glBindFramebuffer(GL_FRAMEBUFFER, cugl_app_context_framebuffer(d->ctx));
    glViewport(0, 0, d->width, d->height);
    demo_phase_begin(d, DEMO_PHASE_DRAW, "draw", false);
    st = cugl_app_blit(d->ctx, p->result, false);
    demo_phase_end(d, DEMO_PHASE_DRAW);
    cugl_status end = d->opt.interop == DEMO_INTEROP_SHARED
                          ? cugl_app_shared_gl_end(p->result_shared)
                          : CUGL_OK;
    return st != CUGL_OK ? st : end;
}

/* Everything the frames use; 0, or 1 after saying what failed. */
static int postprocess_create(postprocess *p, demo *d)
{
    p->filter = initial.filter;
    p->radius = initial.radius;
    scene_camera(&p->camera);
    if (demo_load_module(d, cugl_postprocess_fatbin, cugl_postprocess_fatbin_size) != CUGL_OK ||
        demo_kernel(&p->copy, d, "pp_copy") != CUGL_OK ||
        demo_kernel(&p->blur_rows, d, "pp_blur_rows") != CUGL_OK ||
        demo_kernel(&p->blur_columns, d, "pp_blur_columns") != CUGL_OK ||
        demo_kernel(&p->edges, d, "pp_edges") != CUGL_OK)
        return demo_fail(d, "cannot load the kernels");
    if (cugl_app_program(&p->program, "postprocess_scene",
                         (const char *)cugl_shader_postprocess_scene_vert,
                         (const char *)cugl_shader_postprocess_scene_frag) != CUGL_OK)
        return demo_fail(d, "cannot build the shaders");
    if (make_scene(p) != CUGL_OK)
        return demo_fail(d, "cannot make the scene");
    if (cugl_device_memory_resource_create(&p->device_mr, d->device, NULL) != CUGL_OK ||
        cugl_legacy_pinned_memory_resource_create(&p->pinned_mr, d->device) != CUGL_OK)
        return demo_fail(d, "cannot create the memory resources");
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
    cugl_memory_resource_release(p->pinned_mr);
    cugl_kernel *kernels[] = {p->copy, p->blur_rows, p->blur_columns, p->edges};
    for (int i = 0; i < 4; i++)
        cugl_kernel_release(kernels[i]);
    if (p->vao)
        glDeleteVertexArrays(1, &p->vao);
    if (p->vbo)
        glDeleteBuffers(1, &p->vbo);
    if (p->program)
        glDeleteProgram(p->program);
}

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
        rc = demo_run(&d, &(demo_callbacks){.update = update, .render = render}, &p);
    }
    postprocess_destroy(&p, &d);
    return demo_finish(&d, rc);
}
