/*
 * cugl-sinewave: every frame a CUDA kernel moves a 512 x 512 vertex grid, a
 * surface of sines, writing positions and normals straight into the vertex
 * buffer that GL then draws, lit, under an orbit camera. How the kernel's
 * output reaches the buffer is --interop's choice (common/target.h).
 */
#include <stdlib.h>

#include "common/demo.h"
#include "common/target.h"
#include "sinewave_math.h"

extern const unsigned char cugl_sinewave_fatbin[];
extern const size_t cugl_sinewave_fatbin_size;
extern const unsigned char cugl_shader_sinewave_vert[];
extern const unsigned char cugl_shader_sinewave_frag[];

static const demo_info info = {
    .program = "cugl-sinewave",
    .name = "sinewave",
    .summary = "CUDA animates a 512x512 vertex grid inside a GL vertex buffer; GL draws it lit.",
    .view = DEMO_VIEW_ORBIT,
    .controls = "  left drag, arrow keys, W/A/S/D   orbit\n"
                "  right drag                       pan\n"
                "  wheel                            zoom\n"
                "  R                                reset the camera\n"
                "  Escape                           quit\n",
    .dump_vertices = true,
};

typedef struct sinewave {
    cugl_app_target *vertices; /* SINEWAVE_N^2 vertices of 6 floats, written by CUDA */
    GLuint indices, vao, program;
    GLsizei index_count;
    cugl_kernel *kernel;
    cugl_app_camera camera;
} sinewave;

/* Two triangles per grid cell, counter-clockwise seen from above (+y). */
static cugl_status make_indices(sinewave *s)
{
    const uint32_t n = SINEWAVE_N;
    size_t count = (size_t)(n - 1) * (n - 1) * 6;
    uint32_t *index = malloc(count * sizeof *index);
    if (!index)
        return cugl_report_error(CUGL_ERROR_OUT_OF_MEMORY, info.program,
                                 "cannot allocate %zu indices", count);
    size_t k = 0;
    for (uint32_t j = 0; j + 1 < n; j++) {
        for (uint32_t i = 0; i + 1 < n; i++) {
            uint32_t v = j * n + i;
            uint32_t cell[6] = {v, v + n, v + 1, v + 1, v + n, v + n + 1};
            for (int c = 0; c < 6; c++)
                index[k++] = cell[c];
        }
    }
    glCreateBuffers(1, &s->indices);
    glNamedBufferStorage(s->indices, (GLsizeiptr)(count * sizeof *index), index, 0);
    free(index);
    s->index_count = (GLsizei)count;
    return cugl_app_check_gl(info.program, "making the index buffer");
}

/* Attribute 0: position, 1: normal, interleaved in the vertex buffer. */
static void make_vertex_array(sinewave *s)
{
    glCreateVertexArrays(1, &s->vao);
    glVertexArrayVertexBuffer(s->vao, 0, cugl_app_target_gl_name(s->vertices), 0,
                              SINEWAVE_VERTEX_FLOATS * sizeof(float));
    glVertexArrayElementBuffer(s->vao, s->indices);
    for (GLuint a = 0; a < 2; a++) {
        glEnableVertexArrayAttrib(s->vao, a);
        glVertexArrayAttribFormat(s->vao, a, 3, GL_FLOAT, GL_FALSE, a * 3 * sizeof(float));
        glVertexArrayAttribBinding(s->vao, a, 0);
    }
}

/* Everything the frames use; 0, or 1 after saying what failed. */
static int sinewave_create(sinewave *s, demo *d)
{
    cugl_app_camera_init(&s->camera);
    if (demo_load_module(d, cugl_sinewave_fatbin, cugl_sinewave_fatbin_size) != CUGL_OK ||
        demo_kernel(&s->kernel, d, "sinewave_vertices") != CUGL_OK)
        return demo_fail(d, "cannot load the kernel");
    if (cugl_app_program(&s->program, "sinewave", (const char *)cugl_shader_sinewave_vert,
                         (const char *)cugl_shader_sinewave_frag) != CUGL_OK)
        return demo_fail(d, "cannot build the shaders");
    if (make_indices(s) != CUGL_OK)
        return demo_fail(d, "cannot make the index buffer");
    size_t size = (size_t)SINEWAVE_N * SINEWAVE_N * SINEWAVE_VERTEX_FLOATS * sizeof(float);
    cugl_status st = demo_target_create_buffer(&s->vertices, d, size, CUGL_APP_TO_GL, NULL);
    if (st == CUGL_OK) /* the kernel writes every vertex, every frame */
        st = demo_target_pipeline(s->vertices, d);
    if (st != CUGL_OK)
        return demo_target_fail(d, st, "the vertex buffer");
    make_vertex_array(s);
    return 0;
}

static void sinewave_destroy(sinewave *s)
{
    cugl_app_target_destroy(s->vertices);
    glDeleteVertexArrays(1, &s->vao);
    glDeleteBuffers(1, &s->indices);
    glDeleteProgram(s->program);
    cugl_kernel_release(s->kernel);
}

static void update(demo *d, void *user)
{
    sinewave *s = user;
    cugl_app_camera_update(&s->camera, d->ctx, d->dt);
}

/* The grid at time d->time into the vertex buffer. */
static cugl_status write_vertices(demo *d, void *user, const demo_dest *dest)
{
    sinewave *s = user;
    uint64_t vertices = dest->ptr;
    int n = SINEWAVE_N;
    float t = d->time;
    void *args[] = {&vertices, &n, &t};
    cugl_launch_config grid = demo_grid_2d(n, n);
    return cugl_launch(d->stream, &grid, s->kernel, args, 3);
}

static cugl_status render(demo *d, void *user)
{
    sinewave *s = user;
    cugl_status st = demo_target_write(s->vertices, d, "cuda", write_vertices, s);
    if (st == CUGL_OK)
        st = cugl_app_target_gl_begin(s->vertices);
    if (st != CUGL_OK)
        return st;

    demo_phase_begin(d, DEMO_PHASE_DRAW, "draw", false);
    float view[16], proj[16], eye[3];
    cugl_app_camera_matrices(view, proj, &s->camera, (float)d->width / (float)d->height);
    cugl_app_camera_eye(eye, &s->camera);
    glClearColor(0.06f, 0.07f, 0.09f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
    glEnable(GL_DEPTH_TEST);
    glUseProgram(s->program);
    glUniformMatrix4fv(0, 1, GL_FALSE, view);
    glUniformMatrix4fv(1, 1, GL_FALSE, proj);
    glUniform3fv(2, 1, eye);
    glUniform3f(3, 0.4f, 1.0f, 0.3f);
    /* Pipelined, the buffer GL draws from changes from frame to frame. */
    glVertexArrayVertexBuffer(s->vao, 0, cugl_app_target_gl_name(s->vertices), 0,
                              SINEWAVE_VERTEX_FLOATS * sizeof(float));
    glBindVertexArray(s->vao);
    glDrawElements(GL_TRIANGLES, s->index_count, GL_UNSIGNED_INT, NULL);
    glBindVertexArray(0);
    demo_phase_end(d, DEMO_PHASE_DRAW);
    return cugl_app_target_gl_end(s->vertices);
}

/* --dump-vertices: the vertex buffer as GL holds it after the last frame. */
static int dump_vertices(sinewave *s, demo *d)
{
    if (demo_target_dump(s->vertices, d) != 0)
        return 1;
    printf("%s: wrote %s (%d x %d vertices of %d floats, time %g s)\n", info.program,
           d->opt.dump_vertices, SINEWAVE_N, SINEWAVE_N, SINEWAVE_VERTEX_FLOATS,
           (double)d->time);
    return 0;
}

int main(int argc, char **argv)
{
    demo d;
    int rc = demo_start(&d, &info, argc, argv);
    if (rc != DEMO_RUN)
        return rc;
    sinewave s = {0};
    rc = sinewave_create(&s, &d);
    if (rc == 0)
        rc = demo_run(&d,
                      &(demo_callbacks){.update = update,
                                        .render = render,
                                        .camera = &s.camera},
                      &s);
    if (rc == 0 && d.opt.dump_vertices)
        rc = dump_vertices(&s, &d);
    sinewave_destroy(&s);
    return demo_finish(&d, rc);
}
