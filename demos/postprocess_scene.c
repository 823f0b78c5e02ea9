/*
 * postprocess_scene.c - see postprocess_scene.h. The objects are built on
 * the CPU once: flat-shaded quads as triangle pairs, the knot a tube swept
 * along a (2, 3) torus knot in its Frenet frame.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cglm/cglm.h>

#include "postprocess_scene.h"

extern const unsigned char cugl_shader_postprocess_scene_vert[];
extern const unsigned char cugl_shader_postprocess_scene_frag[];

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

/* The floor, a cube and the knot, one after the other in a vertex buffer. */
static cugl_status make_vertices(pp_scene *p, const char *who)
{
    size_t count = FLOOR_VERTICES + CUBE_VERTICES + KNOT_VERTICES;
    vertex *v = malloc(count * sizeof *v);
    if (!v)
        return cugl_report_error(CUGL_ERROR_OUT_OF_MEMORY, who,
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
    return cugl_app_check_gl(who, "making the scene's vertex buffer");
}

cugl_status pp_scene_create(pp_scene *s, const char *who)
{
    *s = (pp_scene){0};
    cugl_status st = cugl_app_program(&s->program, "postprocess_scene",
                                      (const char *)cugl_shader_postprocess_scene_vert,
                                      (const char *)cugl_shader_postprocess_scene_frag);
    return st != CUGL_OK ? st : make_vertices(s, who);
}

void pp_scene_destroy(pp_scene *s)
{
    if (s->vao)
        glDeleteVertexArrays(1, &s->vao);
    if (s->vbo)
        glDeleteBuffers(1, &s->vbo);
    if (s->program)
        glDeleteProgram(s->program);
    *s = (pp_scene){0};
}

void pp_scene_camera(cugl_app_camera *camera)
{
    cugl_app_camera_init(camera);
    camera->target[1] = -0.15f;
    camera->distance = 6.2f;
    camera->pitch = 0.42f;
    camera->z_near = 0.1f;
    camera->z_far = 60.0f;
}

/* model: column-major, as a cglm mat4 holds it. */
static void draw_object(const float *model, const float tint[3], GLint first, GLsizei count)
{
    glUniformMatrix4fv(0, 1, GL_FALSE, model);
    glUniform3fv(5, 1, tint);
    glDrawArrays(GL_TRIANGLES, first, count);
}

void pp_scene_draw(const pp_scene *s, const cugl_app_camera *camera, float time, int width,
                   int height)
{
    float view[16], proj[16], eye[3];
    cugl_app_camera_matrices(view, proj, camera, (float)width / (float)height);
    cugl_app_camera_eye(eye, camera);
    glViewport(0, 0, width, height);
    glClearColor(background[0], background[1], background[2], 1.0f);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
    glEnable(GL_DEPTH_TEST);
    glUseProgram(s->program);
    glUniformMatrix4fv(1, 1, GL_FALSE, view);
    glUniformMatrix4fv(2, 1, GL_FALSE, proj);
    glUniform3fv(3, 1, eye);
    glUniform3fv(4, 1, light_dir);
    glUniform3fv(6, 1, background);
    glBindVertexArray(s->vao);

    /* The knot turns, the cubes circle it. */
    float a = SPIN * time;
    mat4 m;
    glm_translate_make(m, (vec3){0.0f, FLOOR_Y, 0.0f});
    draw_object(m[0], white, s->floor_first, FLOOR_VERTICES);

    glm_translate_make(m, (vec3){0.0f, 0.15f, 0.0f});
    glm_rotate_y(m, a, m);
    glm_rotate_x(m, 0.35f * sinf(0.8f * a), m);
    glm_scale_uni(m, KNOT_SCALE);
    draw_object(m[0], white, s->knot_first, KNOT_VERTICES);

    for (int i = 0; i < CUBES; i++) {
        float phi = 0.5f * a + GLM_PIf * 2.0f * (float)i / CUBES;
        glm_translate_make(m, (vec3){CUBE_ORBIT * cosf(phi),
                                     CUBE_Y + 0.12f * sinf(2.0f * a + (float)i),
                                     CUBE_ORBIT * sinf(phi)});
        glm_rotate(m, 1.3f * a + (float)i, (vec3){0.6f, 1.0f, 0.2f});
        glm_scale_uni(m, CUBE_SIZE);
        draw_object(m[0], cube_tints[i], s->cube_first, CUBE_VERTICES);
    }
    glBindVertexArray(0);
    glDisable(GL_DEPTH_TEST);
}
