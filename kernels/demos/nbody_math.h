/*
 * nbody_math.h - the nbody demo's physics, shared by its kernel (nbody.cu),
 * the demo and the tests: the force law and the integrator (host and
 * device), and the initial conditions (host only).
 *
 * Units with G = 1. Body i at p_i with mass m_i feels
 *   a_i = sum_j m_j (p_j - p_i) / (|p_j - p_i|^2 + eps^2)^(3/2)
 * over all j, itself included: its own term is 0 because eps > 0. A step
 * of fixed length dt is semi-implicit (symplectic) Euler,
 *   v' = v + a dt,  p' = p + v' dt,
 * so p' - p is exactly v' dt up to rounding: GL colours each body by that
 * displacement, read from the two position buffers, and needs no copy of
 * the velocities. Bodies are 4 floats each: positions x, y, z, mass;
 * velocities x, y, z, 0.
 *
 * An interaction counts as 20 floating-point operations, the figure
 * customary for this kernel since GPU Gems 3 (chapter 31), so a step of n
 * bodies is 20 n^2 of them. On the GPU it is 12 FP32 instructions (3
 * subtractions, 3 multiply-adds for the squared distance, 3 multiplications
 * for m / d^3, 3 multiply-adds into the acceleration) and one inverse
 * square root.
 */
#ifndef CUGL_NBODY_MATH_H
#define CUGL_NBODY_MATH_H

#include "demo_math.h"

enum {
    NBODY_DEFAULT_BODIES = 65536,
    NBODY_MAX_BODIES = 1 << 24, /* 512 MiB of bodies; 10^14 flops a step */
    NBODY_BLOCK = 512,          /* threads a block, bodies a shared-memory tile */
    NBODY_SPLIT = 4,            /* threads that share a body, each a part of every tile */
    NBODY_LANES = NBODY_BLOCK / NBODY_SPLIT, /* a block's bodies, times those a thread steps */
    NBODY_WIDE = 2,             /* bodies a thread of nbody_step2 steps */
    NBODY_FLOPS_PER_INTERACTION = 20,
};

#define NBODY_DT 0.006f        /* the time step: one a frame */
#define NBODY_SOFTENING 0.05f  /* eps: keeps close encounters finite */

/* 1 / sqrt(x) for x > 0: one MUFU instruction on the GPU (about 2 ulp). */
DEMO_FN float nbody_rsqrt(float x)
{
#ifdef __CUDA_ARCH__
    float r;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
#else
    return 1.0f / sqrtf(x);
#endif
}

/*
 * Bodies a thread steps, for `count` bodies on a GPU of `sms`
 * multiprocessors: NBODY_WIDE (the kernel nbody_step2, where one
 * shared-memory load serves that many interactions) where that still gives
 * every multiprocessor a block, else 1 (nbody_step, whose twice as many
 * blocks keep more multiprocessors busy). Either computes the same bits.
 */
DEMO_FN int nbody_per_thread(long count, int sms)
{
    return count / (NBODY_LANES * NBODY_WIDE) >= sms ? NBODY_WIDE : 1;
}

/* The blocks of a step of `count` bodies, `per_thread` a thread. */
DEMO_FN long nbody_blocks(long count, int per_thread)
{
    return (count + (long)NBODY_LANES * per_thread - 1) / ((long)NBODY_LANES * per_thread);
}

/* a += the pull of a body of mass qm at q on a body at p. */
DEMO_FN void nbody_accumulate(float a[3], float px, float py, float pz, float qx, float qy,
                              float qz, float qm, float eps2)
{
    float dx = qx - px, dy = qy - py, dz = qz - pz;
    /* eps2 first: nvcc makes the sum three multiply-adds. */
    float d2 = eps2 + dx * dx + dy * dy + dz * dz;
    float inv = nbody_rsqrt(d2);
    float s = qm * (inv * inv * inv);
    a[0] += dx * s;
    a[1] += dy * s;
    a[2] += dz * s;
}

/* One step of a body: velocity from the acceleration, then position. */
DEMO_FN void nbody_integrate(float p[4], float v[4], const float a[3], float dt)
{
    for (int c = 0; c < 3; c++) {
        v[c] += a[c] * dt;
        p[c] += v[c] * dt;
    }
}

#ifndef __CUDACC__
#include <stdint.h>

/*
 * The initial conditions: two spiral galaxies on a collision course, each
 * a heavy central body, a small bulge of bodies on circular orbits in
 * random planes, and a thin exponential disc with two log-spiral arms
 * rotating on circular orbits, all from a fixed-seed generator. The first
 * galaxy takes 60% of the bodies and the first body of each galaxy is its
 * centre. Masses do not depend on n: a galaxy's disc weighs the same with
 * 1,000 bodies as with a million.
 */

/* Bulge orbits stay this far from their centre, where dt still resolves them. */
#define NBODY_BULGE_INNER 0.06f

typedef struct nbody_galaxy {
    float tilt, turn;      /* the disc's normal: +y turned about x, then about y */
    float sense;           /* +1 or -1: which way the disc turns about its normal */
    float central_mass, bulge_mass, disc_mass;
    float bulge_radius;
    float scale_length;    /* of the exponential disc */
    float inner, outer;    /* the disc's radii */
} nbody_galaxy;

/* splitmix64: the generator; its upper 24 bits make a float in [0, 1). */
static inline float nbody_uniform(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (float)(z >> 40) * (1.0f / 16777216.0f);
}

/* Roughly normal, mean 0, deviation 1: a sum of four uniforms. */
static inline float nbody_normalish(uint64_t *state)
{
    float s = 0.0f;
    for (int i = 0; i < 4; i++)
        s += nbody_uniform(state);
    return (s - 2.0f) * 1.7320508f;
}

/* The fraction of an exponential disc's mass within r (scale length h). */
static inline float nbody_disc_fraction(float r, float h)
{
    return 1.0f - (1.0f + r / h) * expf(-r / h);
}

/* The speed of a circular orbit at radius r about `mass` under softening eps. */
static inline float nbody_circular_speed(float mass, float r, float eps)
{
    float d2 = r * r + eps * eps;
    return sqrtf(mass * r * r / (d2 * sqrtf(d2)));
}

/* v rotated from the galaxy's frame (disc in xz, normal +y) to the world's. */
static inline void nbody_orient(float out[3], const float v[3], const nbody_galaxy *g)
{
    float ct = cosf(g->tilt), st = sinf(g->tilt), cu = cosf(g->turn), su = sinf(g->turn);
    float y = v[1] * ct - v[2] * st, z = v[1] * st + v[2] * ct; /* about x */
    out[0] = v[0] * cu + z * su;                                 /* about y */
    out[1] = y;
    out[2] = -v[0] * su + z * cu;
}

/* Bodies [first, first + count) as galaxy g at `center` moving at `drift`. */
static inline void nbody_make_galaxy(float *pos, float *vel, long first, long count,
                                     const nbody_galaxy *g, const float center[3],
                                     const float drift[3], uint64_t *rng)
{
    if (count <= 0)
        return;
    long bulge = (count - 1) / 10, disc = count - 1 - bulge;
    float bulge_mass = bulge ? g->bulge_mass : 0.0f, disc_mass = disc ? g->disc_mass : 0.0f;
    float h = g->scale_length;
    float f_in = nbody_disc_fraction(g->inner, h), f_out = nbody_disc_fraction(g->outer, h);
    for (long k = 0; k < count; k++) {
        float local_p[3] = {0.0f, 0.0f, 0.0f}, local_v[3] = {0.0f, 0.0f, 0.0f};
        float mass = g->central_mass, r = 0.0f;
        if (k > 0 && k <= bulge) {
            /* Uniform in a ball; a circular orbit in a random plane. */
            mass = bulge_mass / (float)bulge;
            r = g->bulge_radius * cbrtf(nbody_uniform(rng)) + NBODY_BULGE_INNER;
            float cz = 2.0f * nbody_uniform(rng) - 1.0f, phi = 6.2831853f * nbody_uniform(rng);
            float sz = sqrtf(1.0f - cz * cz);
            float n[3] = {sz * cosf(phi), sz * sinf(phi), cz};
            /* Some direction across n, from another random vector. */
            float w[3] = {nbody_normalish(rng), nbody_normalish(rng), nbody_normalish(rng)};
            float t[3] = {n[1] * w[2] - n[2] * w[1], n[2] * w[0] - n[0] * w[2],
                          n[0] * w[1] - n[1] * w[0]};
            float tl = sqrtf(t[0] * t[0] + t[1] * t[1] + t[2] * t[2]);
            if (tl < 1e-6f) {
                t[0] = -n[1];
                t[1] = n[0];
                t[2] = 0.0f;
                tl = sqrtf(t[0] * t[0] + t[1] * t[1]) + 1e-12f;
            }
            float fb = r >= g->bulge_radius ? 1.0f
                                            : (r / g->bulge_radius) * (r / g->bulge_radius) *
                                                  (r / g->bulge_radius);
            float v = nbody_circular_speed(g->central_mass + bulge_mass * fb, r,
                                           NBODY_SOFTENING);
            for (int c = 0; c < 3; c++) {
                local_p[c] = n[c] * r;
                local_v[c] = t[c] / tl * v;
            }
        } else if (k > bulge) {
            mass = disc_mass / (float)disc;
            /* Exponential disc: the radius is Gamma(2, h), kept to [inner, outer]. */
            do
                r = -h * (logf(1.0f - nbody_uniform(rng)) + logf(1.0f - nbody_uniform(rng)));
            while (r < g->inner || r > g->outer);
            /* Two log-spiral arms hold 75% of the disc, the rest lies between. */
            float theta = 6.2831853f * nbody_uniform(rng);
            if (nbody_uniform(rng) < 0.75f)
                theta = (nbody_uniform(rng) < 0.5f ? 0.0f : 3.1415927f) +
                        2.4f * logf(r / h) + 0.28f * nbody_normalish(rng);
            float ang = g->sense * theta;
            local_p[0] = r * cosf(ang);
            local_p[1] = 0.012f * nbody_normalish(rng) * (1.0f + r);
            local_p[2] = -r * sinf(ang);
            float enclosed = g->central_mass + bulge_mass +
                             disc_mass * (nbody_disc_fraction(r, h) - f_in) / (f_out - f_in);
            float v = nbody_circular_speed(enclosed, r, NBODY_SOFTENING);
            /* Along d/dang of (r cos, 0, -r sin), times the sense. */
            local_v[0] = -g->sense * v * sinf(ang) + 0.02f * nbody_normalish(rng);
            local_v[1] = 0.01f * nbody_normalish(rng);
            local_v[2] = -g->sense * v * cosf(ang) + 0.02f * nbody_normalish(rng);
        }
        float world_p[3], world_v[3];
        nbody_orient(world_p, local_p, g);
        nbody_orient(world_v, local_v, g);
        float *p = pos + 4 * (first + k), *v = vel + 4 * (first + k);
        for (int c = 0; c < 3; c++) {
            p[c] = center[c] + world_p[c];
            v[c] = drift[c] + world_v[c];
        }
        p[3] = mass;
        v[3] = 0.0f;
    }
}

/* n bodies: positions (x, y, z, mass) and velocities (x, y, z, 0), 4n floats each. */
static inline void nbody_initial_conditions(float *pos, float *vel, long n)
{
    /* Heavy centres keep the light discs from buckling into bars before
     * the galaxies meet; the encounter then pulls out tidal tails. */
    static const nbody_galaxy a = {
        .tilt = 0.45f, .turn = 0.3f, .sense = 1.0f,
        .central_mass = 1.0f, .bulge_mass = 0.06f, .disc_mass = 0.14f,
        .bulge_radius = 0.16f, .scale_length = 0.42f, .inner = 0.14f, .outer = 1.4f,
    };
    static const nbody_galaxy b = {
        .tilt = -0.5f, .turn = 1.2f, .sense = -1.0f,
        .central_mass = 0.65f, .bulge_mass = 0.04f, .disc_mass = 0.09f,
        .bulge_radius = 0.13f, .scale_length = 0.33f, .inner = 0.12f, .outer = 1.1f,
    };
    const float sep[3] = {3.6f, 0.0f, -0.9f}; /* b's position less a's */
    const float rel[3] = {-0.42f, 0.1f, 0.52f}; /* b's velocity less a's */
    /* In the centre-of-mass frame, so that the pair stays in view. */
    float ma = a.central_mass + a.bulge_mass + a.disc_mass;
    float mb = b.central_mass + b.bulge_mass + b.disc_mass;
    float pa[3], pb[3], va[3], vb[3];
    for (int c = 0; c < 3; c++) {
        pa[c] = -sep[c] * mb / (ma + mb);
        pb[c] = sep[c] * ma / (ma + mb);
        va[c] = -rel[c] * mb / (ma + mb);
        vb[c] = rel[c] * ma / (ma + mb);
    }
    uint64_t rng = 0x6E626F6479ull; /* "nbody" */
    long na = n - n * 2 / 5;
    nbody_make_galaxy(pos, vel, 0, na, &a, pa, va, &rng);
    nbody_make_galaxy(pos, vel, na, n - na, &b, pb, vb, &rng);
}
#endif /* !__CUDACC__ */

#endif /* CUGL_NBODY_MATH_H */
