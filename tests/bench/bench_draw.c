/*
 * bench_draw.c - the mesh drawer (cugl_app_draw_mesh) against a minimal
 * hand-written GL draw of the same data, side by side in one run.
 *
 * usage: bench_draw [--grid N] [--frames F] [--size WxH] [--any-gl]
 *
 *   --grid N     a height field of N x N quads: 2 N^2 triangles, (N + 1)^2
 *                vertices (default 1000: 2M triangles)
 *   --frames F   draws of each, alternating (default 60)
 *   --size WxH   the framebuffer (default 1920x1080)
 *   --any-gl     a headless context on any GL (Mesa); without it, on CUDA
 *                device 0's GL, falling back to any GL where there is none
 *
 * The mesh (positions, a scalar a vertex, indices) is in targets of the
 * context's fastest path (cugl/app_target.h), drawn by cugl_app_draw_mesh
 * with its colour map and flat shading, its targets' GL turn each draw
 * included. The hand-written draw has the same data in GL buffers of its
 * own, read as vertex attributes and an element buffer, and the same
 * fragment work (the map's texture, the face's normal). Each draw is timed
 * on the GPU (GL_TIME_ELAPSED) and by the clock (the call and glFinish);
 * the medians and their ratio are printed, with the goal: the drawer's GPU
 * time at most 1.2 times the hand-written one's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cugl/app.h>

#include "test_gl.h"

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

/* The height field: positions (x, y, z), scalars, indices. */
typedef struct mesh_data {
    float *p, *s;
    uint32_t *idx;
    size_t vertices, triangles;
} mesh_data;

static bool make_mesh(mesh_data *m, int n)
{
    m->vertices = (size_t)(n + 1) * (size_t)(n + 1);
    m->triangles = 2 * (size_t)n * (size_t)n;
    m->p = malloc(m->vertices * 3 * sizeof(float));
    m->s = malloc(m->vertices * sizeof(float));
    m->idx = malloc(m->triangles * 3 * sizeof(uint32_t));
    if (!m->p || !m->s || !m->idx)
        return false;
    for (int j = 0; j <= n; j++)
        for (int i = 0; i <= n; i++) {
            size_t v = (size_t)j * (size_t)(n + 1) + (size_t)i;
            float x = -0.9f + 1.8f * (float)i / (float)n, y = -0.9f + 1.8f * (float)j / (float)n;
            float z = 0.3f * sinf(6 * x) * cosf(5 * y);
            m->p[3 * v] = x;
            m->p[3 * v + 1] = y;
            m->p[3 * v + 2] = z;
            m->s[v] = z / 0.6f + 0.5f;
        }
    size_t k = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            uint32_t a = (uint32_t)(j * (n + 1) + i), b = a + 1, c = a + (uint32_t)(n + 1),
                     d = c + 1;
            uint32_t quad[6] = {a, b, c, c, b, d};
            memcpy(m->idx + k, quad, sizeof quad);
            k += 6;
        }
    return true;
}

/* The hand-written draw: attributes, an element buffer, the same fragment work. */
static const char *hand_vs =
    "#version 450 core\n"
    "layout(location = 0) in vec3 position;\n"
    "layout(location = 1) in float scalar;\n"
    "out float value;\n"
    "noperspective out vec3 ndc;\n"
    "void main() { gl_Position = vec4(position, 1.0); ndc = gl_Position.xyz; value = scalar; }\n";
static const char *hand_fs =
    "#version 450 core\n"
    "in float value;\n"
    "noperspective in vec3 ndc;\n"
    "layout(binding = 0) uniform sampler2D colormap;\n"
    "out vec4 colour;\n"
    "void main() {\n"
    "    vec4 c = texelFetch(colormap, ivec2(int(clamp(value, 0.0, 1.0) * 255.0 + 0.5), 0), 0);\n"
    "    vec3 n = normalize(cross(dFdx(ndc), dFdy(ndc)));\n"
    "    colour = vec4(c.rgb * (0.35 + 0.65 * abs(n.z)), c.a);\n"
    "}\n";

typedef struct hand {
    GLuint program, vao, buffers[3], colormap;
} hand;

static bool make_hand(hand *h, const mesh_data *m)
{
    GLuint program = 0;
    if (cugl_app_program(&program, "hand-written mesh", hand_vs, hand_fs) != CUGL_OK) {
        fprintf(stderr, "bench_draw: %s\n", cugl_last_error());
        return false;
    }
    h->program = program;
    glCreateBuffers(3, h->buffers);
    glNamedBufferStorage(h->buffers[0], (GLsizeiptr)(m->vertices * 3 * sizeof(float)), m->p, 0);
    glNamedBufferStorage(h->buffers[1], (GLsizeiptr)(m->vertices * sizeof(float)), m->s, 0);
    glNamedBufferStorage(h->buffers[2], (GLsizeiptr)(m->triangles * 3 * sizeof(uint32_t)),
                         m->idx, 0);
    glCreateVertexArrays(1, &h->vao);
    glVertexArrayVertexBuffer(h->vao, 0, h->buffers[0], 0, 3 * sizeof(float));
    glVertexArrayVertexBuffer(h->vao, 1, h->buffers[1], 0, sizeof(float));
    glVertexArrayElementBuffer(h->vao, h->buffers[2]);
    for (GLuint a = 0; a < 2; a++) {
        glEnableVertexArrayAttrib(h->vao, a);
        glVertexArrayAttribFormat(h->vao, a, a ? 1 : 3, GL_FLOAT, GL_FALSE, 0);
        glVertexArrayAttribBinding(h->vao, a, a);
    }
    uint8_t table[1024];
    cugl_app_colormap_table(CUGL_APP_COLORMAP_CUGL, table);
    glCreateTextures(GL_TEXTURE_2D, 1, &h->colormap);
    glTextureStorage2D(h->colormap, 1, GL_RGBA8, 256, 1);
    glTextureSubImage2D(h->colormap, 0, 0, 0, 256, 1, GL_RGBA, GL_UNSIGNED_BYTE, table);
    return glGetError() == GL_NO_ERROR;
}

static void draw_hand(const hand *h, const mesh_data *m)
{
    glUseProgram(h->program);
    glBindVertexArray(h->vao);
    glBindTextureUnit(0, h->colormap);
    glEnable(GL_DEPTH_TEST);
    glDrawElements(GL_TRIANGLES, (GLsizei)(m->triangles * 3), GL_UNSIGNED_INT, NULL);
    glDisable(GL_DEPTH_TEST);
    glBindVertexArray(0);
    glUseProgram(0);
}

/* One timed draw of either: GPU ms (a timer query) and wall ms (the call
 * and glFinish: where GL runs on the CPU, as Mesa's llvmpipe, the only
 * figure that counts the drawing). */
static bool timed(bool drawer, const cugl_app_mesh_desc *desc, const hand *h,
                  const mesh_data *m, GLuint query, double *gpu_ms, double *cpu_ms)
{
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
    glFinish();
    double t0 = now_ms();
    glBeginQuery(GL_TIME_ELAPSED, query);
    if (drawer) {
        if (cugl_app_draw_mesh(desc, m->vertices, m->triangles, NULL) != CUGL_OK) {
            fprintf(stderr, "bench_draw: %s\n", cugl_last_error());
            glEndQuery(GL_TIME_ELAPSED);
            return false;
        }
    } else {
        draw_hand(h, m);
    }
    glEndQuery(GL_TIME_ELAPSED);
    glFinish();
    *cpu_ms = now_ms() - t0;
    GLuint64 ns = 0;
    glGetQueryObjectui64v(query, GL_QUERY_RESULT, &ns);
    *gpu_ms = (double)ns / 1e6;
    return true;
}

static int usage(void)
{
    fprintf(stderr, "usage: bench_draw [--grid N] [--frames F] [--size WxH] [--any-gl]\n");
    return 2;
}

int main(int argc, char **argv)
{
    int grid = 1000, frames = 60, w = 1920, h = 1080;
    bool any_gl = false;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--grid") == 0 && v) {
            grid = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--frames") == 0 && v) {
            frames = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--size") == 0 && v) {
            if (sscanf(argv[++i], "%dx%d", &w, &h) != 2)
                return usage();
        } else if (strcmp(argv[i], "--any-gl") == 0) {
            any_gl = true;
        } else {
            return usage();
        }
    }
    if (grid < 1 || grid > 4000 || frames < 1 || frames > 100000 || w < 16 || h < 16 ||
        w > 8192 || h > 8192)
        return usage();
    cugl_app_context *ctx = NULL;
    cugl_app_context_desc desc = {.mode = CUGL_APP_HEADLESS, .width = w, .height = h,
                                  .cuda_device = any_gl ? -1 : 0};
    if (cugl_app_context_create(&ctx, &desc) != CUGL_OK) {
        desc.cuda_device = -1; /* no CUDA device here: any GL */
        if (any_gl || cugl_app_context_create(&ctx, &desc) != CUGL_OK) {
            printf("1..0 # SKIP no headless context: %s\n", cugl_last_error());
            return 77;
        }
    }
    test_gl_load();
    mesh_data m = {0};
    hand hw = {0};
    if (!make_mesh(&m, grid) || !make_hand(&hw, &m)) {
        fprintf(stderr, "bench_draw: no memory for the mesh, or GL refused it\n");
        return 1;
    }
    cugl_app_target *t[3] = {NULL};
    const void *data[3] = {m.p, m.s, m.idx};
    const size_t sizes[3] = {m.vertices * 3 * sizeof(float), m.vertices * sizeof(float),
                             m.triangles * 3 * sizeof(uint32_t)};
    for (int i = 0; i < 3; i++)
        if (cugl_app_target_create(&t[i], ctx, &(cugl_app_target_desc){
                                                   .kind = CUGL_APP_TARGET_BUFFER,
                                                   .size = sizes[i],
                                                   .initial = data[i]}) != CUGL_OK) {
            fprintf(stderr, "bench_draw: %s\n", cugl_last_error());
            return 1;
        }
    const cugl_app_mesh_desc mesh = {.positions = t[0], .scalars = t[1], .indices = t[2]};
    printf("# GL: %s, %s; %dx%d; %zu triangles, %zu vertices; the targets' path: %s\n",
           cugl_app_context_vendor(ctx), cugl_app_context_renderer(ctx), w, h, m.triangles,
           m.vertices, cugl_app_interop_name(cugl_app_target_interop(t[0])));
    glBindFramebuffer(GL_FRAMEBUFFER, cugl_app_context_framebuffer(ctx));
    glViewport(0, 0, w, h);
    GLuint query = 0;
    glCreateQueries(GL_TIME_ELAPSED, 1, &query);
    double *gpu[2], *cpu[2];
    for (int k = 0; k < 2; k++) {
        gpu[k] = calloc((size_t)frames, sizeof(double));
        cpu[k] = calloc((size_t)frames, sizeof(double));
        if (!gpu[k] || !cpu[k])
            return 1;
    }
    bool ok = true;
    for (int f = -3; f < frames && ok; f++) /* 3 warm-up rounds first */
        for (int k = 0; k < 2 && ok; k++) {
            double g = 0, c = 0;
            ok = timed(k == 0, &mesh, &hw, &m, query, &g, &c);
            if (f >= 0) {
                gpu[k][f] = g;
                cpu[k][f] = c;
            }
        }
    if (!ok)
        return 1;
    double g_drawer = median(gpu[0], frames), g_hand = median(gpu[1], frames);
    double c_drawer = median(cpu[0], frames), c_hand = median(cpu[1], frames);
    printf("| draw | GPU ms, median | wall ms (the call and glFinish), median |\n"
           "|---|---|---|\n");
    printf("| cugl_app_draw_mesh | %.3f | %.3f |\n", g_drawer, c_drawer);
    printf("| hand-written GL | %.3f | %.3f |\n", g_hand, c_hand);
    double ratio = g_drawer / g_hand;
    printf("goal: the drawer's GPU time at most 1.2 times the hand-written draw's: %.2f, %s\n",
           ratio, ratio <= 1.2 ? "met" : "MISSED");
    for (int i = 0; i < 3; i++)
        cugl_app_target_destroy(t[i]);
    glDeleteQueries(1, &query);
    cugl_app_context_destroy(ctx);
    free(m.p);
    free(m.s);
    free(m.idx);
    for (int k = 0; k < 2; k++) {
        free(gpu[k]);
        free(cpu[k]);
    }
    return 0;
}
