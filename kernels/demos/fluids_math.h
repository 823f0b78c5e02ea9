/*
 * fluids_math.h - the fluids demo's per-cell math, shared by its kernels
 * (fluids.cu), the demo (its jets) and the C reference the tests compare
 * the kernels with.
 *
 * Stable fluids (Stam 1999) on an n x n grid of cells over the unit
 * square, y up, cell (x, y) centred at ((x + 1/2) / n, (y + 1/2) / n).
 * Velocity (two floats, box widths per second) and dye (four floats:
 * red, green and blue amounts and an unused fourth) live at the centres.
 * A step:
 *
 *   advect      semi-Lagrangian: each cell takes the velocity and dye found
 *               where its fluid was dt ago, read with the texture unit's
 *               bilinear filter (clamp addressing: a trace that leaves the
 *               box reads the edge cell, so a constant field stays constant)
 *   splat       jets and the mouse add velocity and dye in Gaussian blobs
 *   confine     optional vorticity confinement
 *   project     divergence, a weighted Jacobi solve for the pressure, and
 *               the pressure gradient subtracted: the velocity becomes
 *               divergence-free
 *
 * The walls are solid and slippery. The projection is exact in its own
 * discretisation: central differences for both the divergence D and the
 * gradient G, with a ghost cell beyond each wall that mirrors the pressure
 * (p[-1] = p[0]) and reverses the velocity's normal component (u[-1] =
 * -u[0]: nothing crosses the wall). Then D = -G^T, and D G is the
 * wide Laplacian (1/4) (p[x+2] + p[x-2] + p[y+2] + p[y-2] - 4 p) on the
 * grid mirrored about its walls, which the Jacobi sweeps solve. At
 * convergence D(u - G p) is zero to rounding; the sweeps a frame can
 * afford leave the slowest modes partly unsolved, and the pressure is
 * kept from frame to frame as the next solve's first guess.
 *
 * The plain weight 1 leaves the period-4 mode (all four neighbours the
 * opposite of the cell) oscillating for ever; FLUIDS_JACOBI_WEIGHT < 1
 * damps every mode. The price of central differences on one grid is that
 * they do not see a velocity that alternates from cell to cell; the forces
 * here are smooth blobs, and the bilinear advection damps such a pattern.
 *
 * Lengths inside the kernels are in cells: a velocity v moves a trace by
 * v * dt * n cells (dt_cells = dt * n, computed once on the host). Only
 * add, subtract and multiply through demo_math.h (never fused) appear in
 * the advection's trace, the divergence, the Jacobi sweep and the
 * projection, so a C reference computes them bit for bit.
 */
#ifndef CUGL_FLUIDS_MATH_H
#define CUGL_FLUIDS_MATH_H

#include "demo_math.h"

#ifdef __cplusplus
#define FLUIDS_ALIGNAS(n) alignas(n)
#else
#define FLUIDS_ALIGNAS(n) _Alignas(n)
#endif

enum {
    FLUIDS_DEFAULT_GRID = 512,
    FLUIDS_MIN_GRID = 16,
    FLUIDS_MAX_GRID = 4096,
    FLUIDS_JACOBI_ITERATIONS = 50, /* pressure sweeps a frame */
    FLUIDS_MAX_SPLATS = 4,         /* the jets and the mouse */
    FLUIDS_JETS = 3,
};

#define FLUIDS_JACOBI_WEIGHT 0.8f
#define FLUIDS_VELOCITY_KEEP 0.999f /* velocity left after a step (at 60 steps a second) */
#define FLUIDS_DYE_KEEP 0.995f      /* dye left after a step */
#define FLUIDS_TWO_PI 6.28318530717958647692f

/* float2 and float4 of CUDA, the same size and alignment in C. */
typedef struct fluids_vec2 {
    FLUIDS_ALIGNAS(8) float x;
    float y;
} fluids_vec2;

typedef struct fluids_vec4 {
    FLUIDS_ALIGNAS(16) float x;
    float y, z, w;
} fluids_vec4;

/* A Gaussian blob of velocity and dye added in one step. */
typedef struct fluids_splat {
    float x, y;         /* centre in the unit square, y up */
    float vx, vy;       /* velocity added at the centre */
    float r, g, b;      /* dye added at the centre */
    float radius;       /* where the blob has fallen to 1/e */
} fluids_splat;

/* A step's splats: a kernel argument, the same layout in C and CUDA. */
typedef struct fluids_splats {
    fluids_splat splat[FLUIDS_MAX_SPLATS];
    int count;
} fluids_splats;

typedef struct fluids_rgba8 {
    unsigned char r, g, b, a;
} fluids_rgba8;

/* An index beyond the grid reflected about the wall it crossed (|k| < 2n). */
DEMO_FN int fluids_mirror(int k, int n)
{
    return k < 0 ? -k - 1 : k >= n ? 2 * n - 1 - k : k;
}

DEMO_FN int fluids_at(int x, int y, int n)
{
    return y * n + x;
}

/*
 * Where the fluid now at the centre of cell (x, y) was one step ago, in the
 * texture's coordinates (cells, texel centres at + 1/2).
 */
DEMO_FN fluids_vec2 fluids_backtrace(int x, int y, fluids_vec2 v, float dt_cells)
{
    fluids_vec2 p;
    p.x = demo_sub(demo_add((float)x, 0.5f), demo_mul(dt_cells, v.x));
    p.y = demo_sub(demo_add((float)y, 0.5f), demo_mul(dt_cells, v.y));
    return p;
}

/*
 * The divergence of cell (x, y), in velocity units (times one cell): half
 * the central differences, the normal component reversed beyond a wall.
 */
DEMO_FN float fluids_divergence(const fluids_vec2 *v, int x, int y, int n)
{
    int i = fluids_at(x, y, n);
    float right = x + 1 < n ? v[i + 1].x : -v[i].x;
    float left = x > 0 ? v[i - 1].x : -v[i].x;
    float top = y + 1 < n ? v[i + n].y : -v[i].y;
    float bottom = y > 0 ? v[i - n].y : -v[i].y;
    return demo_mul(0.5f, demo_add(demo_sub(right, left), demo_sub(top, bottom)));
}

/* One weighted Jacobi update of the pressure of cell (x, y). */
DEMO_FN float fluids_jacobi(const float *p, const float *div, int x, int y, int n, float weight)
{
    int i = fluids_at(x, y, n);
    float sum = demo_add(demo_add(p[fluids_at(fluids_mirror(x - 2, n), y, n)],
                                  p[fluids_at(fluids_mirror(x + 2, n), y, n)]),
                         demo_add(p[fluids_at(x, fluids_mirror(y - 2, n), n)],
                                  p[fluids_at(x, fluids_mirror(y + 2, n), n)]));
    float next = demo_sub(demo_mul(0.25f, sum), div[i]);
    return demo_add(p[i], demo_mul(weight, demo_sub(next, p[i])));
}

/* The velocity of cell (x, y) less the pressure gradient (D and G above). */
DEMO_FN fluids_vec2 fluids_project(const fluids_vec2 *v, const float *p, int x, int y, int n)
{
    int i = fluids_at(x, y, n);
    float gx = demo_mul(0.5f, demo_sub(p[fluids_at(fluids_mirror(x + 1, n), y, n)],
                                       p[fluids_at(fluids_mirror(x - 1, n), y, n)]));
    float gy = demo_mul(0.5f, demo_sub(p[fluids_at(x, fluids_mirror(y + 1, n), n)],
                                       p[fluids_at(x, fluids_mirror(y - 1, n), n)]));
    fluids_vec2 out;
    out.x = demo_sub(v[i].x, gx);
    out.y = demo_sub(v[i].y, gy);
    return out;
}

/* The vorticity dv/dx - du/dy of cell (x, y), times one cell. */
DEMO_FN float fluids_curl(const fluids_vec2 *v, int x, int y, int n)
{
    float dv = demo_sub(v[fluids_at(fluids_mirror(x + 1, n), y, n)].y,
                        v[fluids_at(fluids_mirror(x - 1, n), y, n)].y);
    float du = demo_sub(v[fluids_at(x, fluids_mirror(y + 1, n), n)].x,
                        v[fluids_at(x, fluids_mirror(y - 1, n), n)].x);
    return demo_mul(0.5f, demo_sub(dv, du));
}

/*
 * Vorticity confinement (Fedkiw, Stam and Jensen 2001): push the velocity
 * of cell (x, y) across the gradient of |curl|, towards the vortex's core,
 * which keeps the small whirls that the bilinear advection smooths away.
 */
DEMO_FN fluids_vec2 fluids_confine(fluids_vec2 v, const float *curl, int x, int y, int n,
                                   float strength_dt)
{
    float gx = demo_mul(0.5f, demo_sub(fabsf(curl[fluids_at(fluids_mirror(x + 1, n), y, n)]),
                                       fabsf(curl[fluids_at(fluids_mirror(x - 1, n), y, n)])));
    float gy = demo_mul(0.5f, demo_sub(fabsf(curl[fluids_at(x, fluids_mirror(y + 1, n), n)]),
                                       fabsf(curl[fluids_at(x, fluids_mirror(y - 1, n), n)])));
    float len = demo_add(sqrtf(demo_add(demo_mul(gx, gx), demo_mul(gy, gy))), 1e-6f);
    float s = demo_mul(strength_dt, curl[fluids_at(x, y, n)]);
    v.x = demo_add(v.x, demo_mul(s, gy / len));
    v.y = demo_sub(v.y, demo_mul(s, gx / len));
    return v;
}

/* Add the splats' velocity and dye to cell (x, y). */
DEMO_FN void fluids_splat_cell(fluids_vec2 *v, fluids_vec4 *dye, int x, int y, int n,
                               const fluids_splats *s)
{
    float px = ((float)x + 0.5f) / (float)n, py = ((float)y + 0.5f) / (float)n;
    for (int k = 0; k < s->count && k < FLUIDS_MAX_SPLATS; k++) {
        const fluids_splat *b = &s->splat[k];
        float dx = px - b->x, dy = py - b->y;
        float w = expf(-(dx * dx + dy * dy) / (b->radius * b->radius));
        v->x += w * b->vx;
        v->y += w * b->vy;
        dye->x += w * b->r;
        dye->y += w * b->g;
        dye->z += w * b->b;
    }
}

/*
 * The colour of a cell: the dye glows over a near-black backdrop, each
 * channel 1 - (1 - backdrop) exp(-dye), so that thick dye saturates
 * smoothly instead of clipping.
 */
DEMO_FN fluids_rgba8 fluids_colour(fluids_vec4 dye)
{
    fluids_rgba8 c;
    c.r = demo_unorm8(1.0f - 0.975f * expf(-fmaxf(dye.x, 0.0f)));
    c.g = demo_unorm8(1.0f - 0.970f * expf(-fmaxf(dye.y, 0.0f)));
    c.b = demo_unorm8(1.0f - 0.955f * expf(-fmaxf(dye.z, 0.0f)));
    c.a = 255;
    return c;
}

/*
 * The jets at time t (seconds) of a step dt long: FLUIDS_JETS nozzles on a
 * circle about the centre that turns slowly, each aimed past the centre
 * with a wobble, blowing dye of its own colour. out gets FLUIDS_JETS
 * splats; a fixed-step run (t = frame / 60) gets the same ones every time.
 */
DEMO_FN void fluids_jets(fluids_splat *out, float t, float dt)
{
    static const float colour[FLUIDS_JETS][3] = {
        {3.0f, 1.1f, 0.25f}, /* orange */
        {0.2f, 1.6f, 2.6f},  /* teal */
        {2.4f, 0.35f, 1.8f}, /* magenta */
    };
    for (int k = 0; k < FLUIDS_JETS; k++) {
        float a = FLUIDS_TWO_PI * (float)k / (float)FLUIDS_JETS + 0.35f * t;
        float aim = a + FLUIDS_TWO_PI * 0.5f + 0.6f + 0.35f * sinf(1.7f * t + 2.0f * (float)k);
        fluids_splat *s = &out[k];
        s->x = 0.5f + 0.36f * cosf(a);
        s->y = 0.5f + 0.36f * sinf(a);
        s->vx = 24.0f * dt * cosf(aim);
        s->vy = 24.0f * dt * sinf(aim);
        s->r = 6.0f * dt * colour[k][0];
        s->g = 6.0f * dt * colour[k][1];
        s->b = 6.0f * dt * colour[k][2];
        s->radius = 0.025f;
    }
}

#endif /* CUGL_FLUIDS_MATH_H */
