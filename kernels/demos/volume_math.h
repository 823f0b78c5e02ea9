/*
 * volume_math.h - the volume demo's scene and ray marcher, shared by its
 * kernels (volume.cu) and the C reference the tests compare them with.
 *
 * The scene: a density in the box [-1, 1]^3, a torus about the z axis
 * whose tube holds a gyroid lattice, and a soft glowing core in its hole.
 * It is sampled once into an n^3 grid, texel (i, j, k) at the centre
 * p = (2 (i + 1/2) / n - 1, ...), x fastest, and read back through a 3-D
 * texture with trilinear filtering, normalized coordinates (u = p / 2 + 1/2)
 * and clamped addressing.
 *
 * A pixel's ray leaves the eye through the pixel's centre, meets the box at
 * t_near .. t_far, and is sampled at t_near + (k + o) step, a fixed step
 * and an offset o in [0, 1) that a hash of the pixel dithers.
 * Each sample's density goes through the transfer function (a table of
 * colours and extinctions, linearly interpolated) and is composited front
 * to back:
 *   C += (1 - A) a c,  A += (1 - A) a,  a = min(extinction x step, 1),
 * until A reaches VOLUME_OPAQUE (early ray termination) or the ray leaves
 * the box; then the background shows through what is left: C += (1 - A) bg.
 *
 * Every operation of the march rounds as the C reference does
 * (demo_math.h), so with the same texture samples both give the same
 * pixels. The samples differ in kind: the GPU's filter blends with weights
 * of 8 fractional bits; the reference emulates that filter (volume_fetch,
 * defined by the test's reference, volume_reference.h). The density itself
 * uses sinf, cosf and expf, whose last bits may differ between the GPU and
 * the C library.
 */
#ifndef CUGL_VOLUME_MATH_H
#define CUGL_VOLUME_MATH_H

#include "demo_math.h"

enum {
    VOLUME_N = 256,          /* the demo's grid: VOLUME_N^3 texels */
    VOLUME_MAX_STEPS = 1024, /* a bound on any ray's samples */
    VOLUME_TF_ENTRIES = 8,   /* transfer function table entries, density 0 .. 1 */
};

#define VOLUME_STEP 0.005f          /* world units between samples (0.64 texels at 256) */
#define VOLUME_OPAQUE 0.99f         /* opacity at which a ray stops */
#define VOLUME_SPIN_SECONDS 20.0f   /* one turn of the scene until the user takes over */
#define VOLUME_CAMERA_DISTANCE 2.5f /* the demo's camera from the centre at the start */
#define VOLUME_TWO_PI 6.28318530717958647692f

#define VOLUME_TORUS_MAJOR 0.64f /* the ring's radius */
#define VOLUME_TORUS_MINOR 0.26f /* the tube's radius */
#define VOLUME_TORUS_EDGE 0.06f  /* width of the tube's soft wall */
#define VOLUME_GYROID_K 12.566370614359172f /* 2 pi x 2: four cells across the box */
#define VOLUME_GYROID_WIDTH 0.6f /* |gyroid| below this is inside a sheet */
#define VOLUME_CORE_WIDTH2 0.02f /* the core's Gaussian: exp(-r^2 / this) */

/* The background behind the volume. */
#define VOLUME_BG_R 0.035f
#define VOLUME_BG_G 0.04f
#define VOLUME_BG_B 0.06f

/* One frame's camera: a kernel argument, the same layout in C and CUDA. */
typedef struct volume_params {
    float eye[3];
    float forward[3];    /* unit vector from the eye to the target */
    float right[3];      /* screen x: unit vector x tan(fov_y / 2) x aspect */
    float up[3];         /* screen y: unit vector x tan(fov_y / 2) */
    float ndc_per_px[2]; /* 2 / width, 2 / height */
    float step;          /* world units between samples */
    int width, height;
} volume_params;

typedef struct volume_rgba {
    unsigned char r, g, b, a;
} volume_rgba;

/* ---- The density ---------------------------------------------------------- */

/* The density at p, in [0, 1]. */
DEMO_FN float volume_density(float x, float y, float z)
{
    float ring = sqrtf(x * x + y * y) - VOLUME_TORUS_MAJOR;
    float tube_d = sqrtf(ring * ring + z * z) - VOLUME_TORUS_MINOR;
    float tube = demo_clamp01(0.5f - tube_d / VOLUME_TORUS_EDGE);
    float k = VOLUME_GYROID_K;
    float g = sinf(k * x) * cosf(k * y) + sinf(k * y) * cosf(k * z) + sinf(k * z) * cosf(k * x);
    /* smooth across the sheet: no ridge for trilinear filtering to facet */
    float q = g / VOLUME_GYROID_WIDTH;
    float sheet = demo_clamp01(1.0f - q * q);
    /* a brighter lattice on three lobes around the ring: cos 3 theta, c = cos theta */
    float c = x / fmaxf(ring + VOLUME_TORUS_MAJOR, 1e-6f);
    float lobes = 0.6f + 0.4f * c * (4.0f * c * c - 3.0f);
    float core = expf(-(x * x + y * y + z * z) / VOLUME_CORE_WIDTH2);
    return demo_clamp01(tube * (0.1f + 0.9f * sheet * sheet * lobes) + core);
}

/* The density at the centre of texel (i, j, k) of an n^3 grid. */
DEMO_FN float volume_texel(int i, int j, int k, int n)
{
    float s = 2.0f / (float)n;
    return volume_density(((float)i + 0.5f) * s - 1.0f, ((float)j + 0.5f) * s - 1.0f,
                          ((float)k + 0.5f) * s - 1.0f);
}

/* ---- The camera (host side, shared by the demo and the tests) -------------- */

/* The turn of the scene at `time` seconds while it spins on its own. */
DEMO_FN float volume_spin(float time)
{
    return demo_mul(VOLUME_TWO_PI / VOLUME_SPIN_SECONDS, fmodf(time, VOLUME_SPIN_SECONDS));
}

/*
 * The parameters of a width x height image seen from `eye` looking at
 * `target` with +y up and a vertical field of view fov_y (radians): the
 * camera glm_lookat and glm_perspective describe (cugl_app_camera).
 */
DEMO_FN volume_params volume_params_for(const float eye[3], const float target[3], float fov_y,
                                        int width, int height, float step)
{
    volume_params p;
    float f[3], r[3], len;
    for (int a = 0; a < 3; a++) {
        p.eye[a] = eye[a];
        f[a] = target[a] - eye[a];
    }
    len = sqrtf(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
    for (int a = 0; a < 3; a++)
        f[a] /= len;
    /* right = forward x (0, 1, 0), up = right x forward */
    r[0] = -f[2];
    r[1] = 0.0f;
    r[2] = f[0];
    len = sqrtf(r[0] * r[0] + r[2] * r[2]);
    r[0] /= len;
    r[2] /= len;
    float tan_half = tanf(0.5f * fov_y);
    float aspect = (float)width / (float)height;
    p.up[0] = (r[1] * f[2] - r[2] * f[1]) * tan_half;
    p.up[1] = (r[2] * f[0] - r[0] * f[2]) * tan_half;
    p.up[2] = (r[0] * f[1] - r[1] * f[0]) * tan_half;
    for (int a = 0; a < 3; a++) {
        p.forward[a] = f[a];
        p.right[a] = r[a] * tan_half * aspect;
    }
    p.ndc_per_px[0] = 2.0f / (float)width;
    p.ndc_per_px[1] = 2.0f / (float)height;
    p.step = step;
    p.width = width;
    p.height = height;
    return p;
}

/* ---- The transfer function ------------------------------------------------ */

#ifdef __CUDACC__
#define VOLUME_TABLE static __constant__ const
#else
#define VOLUME_TABLE static const
#endif

/* Colour (r, g, b) and extinction per world unit at density i / 7. */
VOLUME_TABLE float volume_tf[VOLUME_TF_ENTRIES][4] = {
    {0.00f, 0.00f, 0.00f, 0.0f},  {0.10f, 0.16f, 0.60f, 1.0f},  {0.10f, 0.45f, 0.95f, 3.0f},
    {0.20f, 0.85f, 0.90f, 6.0f},  {0.55f, 0.95f, 0.55f, 10.0f}, {1.00f, 0.80f, 0.30f, 16.0f},
    {1.00f, 0.45f, 0.20f, 24.0f}, {1.00f, 0.95f, 0.85f, 40.0f},
};

/* The transfer function at density d: colour and extinction, into out[0..3]. */
DEMO_FN void volume_transfer(float d, float out[4])
{
    float s = demo_mul(demo_clamp01(d), (float)(VOLUME_TF_ENTRIES - 1));
    int i = (int)s;
    if (i > VOLUME_TF_ENTRIES - 2)
        i = VOLUME_TF_ENTRIES - 2;
    float f = demo_sub(s, (float)i);
    for (int c = 0; c < 4; c++)
        out[c] = demo_add(volume_tf[i][c], demo_mul(f, demo_sub(volume_tf[i + 1][c],
                                                                volume_tf[i][c])));
}

/* ---- The ray march ---------------------------------------------------------- */

/*
 * volume_fetch(tex, u, v, w): the texture at normalized coordinates. On
 * the GPU a tex3D read, trilinearly filtered by the hardware; in C the
 * test's reference, which emulates that filter on a copy of the grid.
 */
#ifdef __CUDACC__
typedef unsigned long long volume_texture; /* cudaTextureObject_t */
#define VOLUME_MARCH_FN static inline __device__
static inline __device__ float volume_fetch(volume_texture tex, float u, float v, float w)
{
    return tex3D<float>(tex, u, v, w);
}
#else
typedef const struct volume_grid *volume_texture;
float volume_fetch(volume_texture tex, float u, float v, float w);
#define VOLUME_MARCH_FN static inline
#endif

/* Where the ray o + t d meets [-1, 1]^3: t_near .. t_far, empty when t_near >= t_far. */
DEMO_FN void volume_box_hit(const float o[3], const float d[3], float *t_near, float *t_far)
{
    float t0 = 0.0f, t1 = 3.0e38f;
    for (int a = 0; a < 3; a++) {
        float inv = 1.0f / d[a];
        float ta = demo_mul(demo_sub(-1.0f, o[a]), inv);
        float tb = demo_mul(demo_sub(1.0f, o[a]), inv);
        t0 = fmaxf(t0, fminf(ta, tb));
        t1 = fminf(t1, fmaxf(ta, tb));
    }
    *t_near = t0;
    *t_far = t1;
}

/*
 * A fixed offset in [0, 1) of pixel (x, y)'s samples, in steps: rays that
 * all started on the box's faces would sample the same shells around the
 * eye and draw them as rings; dithered starts turn that into fine noise.
 * Integer arithmetic (a PCG hash), so both sides agree exactly.
 */
DEMO_FN float volume_dither(int x, int y)
{
    unsigned h = (unsigned)x * 73856093u ^ (unsigned)y * 19349663u;
    h = h * 747796405u + 2891336453u;
    h = ((h >> ((h >> 28u) + 4u)) ^ h) * 277803737u;
    h = (h >> 22u) ^ h;
    return (float)(h >> 8) * (1.0f / 16777216.0f);
}

/* The colour of pixel (x, y), y counted from the bottom row. */
VOLUME_MARCH_FN volume_rgba volume_pixel(volume_texture tex, int x, int y,
                                         const volume_params *p)
{
    float sx = demo_sub(demo_mul(demo_add((float)x, 0.5f), p->ndc_per_px[0]), 1.0f);
    float sy = demo_sub(demo_mul(demo_add((float)y, 0.5f), p->ndc_per_px[1]), 1.0f);
    float d[3];
    for (int a = 0; a < 3; a++)
        d[a] = demo_add(demo_add(p->forward[a], demo_mul(sx, p->right[a])),
                        demo_mul(sy, p->up[a]));
    float len = sqrtf(demo_add(demo_add(demo_mul(d[0], d[0]), demo_mul(d[1], d[1])),
                               demo_mul(d[2], d[2])));
    for (int a = 0; a < 3; a++)
        d[a] = d[a] / len;

    float t_near, t_far;
    volume_box_hit(p->eye, d, &t_near, &t_far);
    float col[3] = {0.0f, 0.0f, 0.0f}, alpha = 0.0f;
    float offset = volume_dither(x, y);
    for (int k = 0; k < VOLUME_MAX_STEPS && alpha < VOLUME_OPAQUE; k++) {
        float t = demo_add(t_near, demo_mul(demo_add((float)k, offset), p->step));
        if (!(t < t_far))
            break;
        float u[3];
        for (int a = 0; a < 3; a++)
            u[a] = demo_add(demo_mul(demo_add(p->eye[a], demo_mul(t, d[a])), 0.5f), 0.5f);
        float tf[4];
        volume_transfer(volume_fetch(tex, u[0], u[1], u[2]), tf);
        float a = fminf(demo_mul(tf[3], p->step), 1.0f);
        float w = demo_mul(demo_sub(1.0f, alpha), a);
        for (int c = 0; c < 3; c++)
            col[c] = demo_add(col[c], demo_mul(w, tf[c]));
        alpha = demo_add(alpha, w);
    }
    float rest = demo_sub(1.0f, alpha);
    volume_rgba out;
    out.r = demo_unorm8(demo_add(col[0], demo_mul(rest, VOLUME_BG_R)));
    out.g = demo_unorm8(demo_add(col[1], demo_mul(rest, VOLUME_BG_G)));
    out.b = demo_unorm8(demo_add(col[2], demo_mul(rest, VOLUME_BG_B)));
    out.a = 255;
    return out;
}

#endif /* CUGL_VOLUME_MATH_H */
