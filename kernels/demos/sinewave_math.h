/*
 * sinewave_math.h - the sinewave demo's surface, shared by its kernel
 * (sinewave.cu) and the C reference the tests compare it with.
 *
 * An n x n grid over [-1, 1]^2 in the xz plane; vertex (i, j) lies at
 * x = -1 + 2i/(n-1), z = -1 + 2j/(n-1), height
 *   y = A sin(k x + t) cos(k z + t),
 * with the analytic unit normal (-dy/dx, 1, -dy/dz) / |...|. Vertices are
 * stored row by row (j outer), each as 6 floats: position xyz, normal xyz.
 */
#ifndef CUGL_SINEWAVE_MATH_H
#define CUGL_SINEWAVE_MATH_H

#include "demo_math.h"

enum {
    SINEWAVE_N = 512,           /* grid vertices along x and along z */
    SINEWAVE_VERTEX_FLOATS = 6, /* position xyz, normal xyz */
};

#define SINEWAVE_AMPLITUDE 0.25f
#define SINEWAVE_FREQUENCY 4.0f

/* Vertex (i, j) of the n x n grid at time t seconds, into out[0..5]. */
DEMO_FN void sinewave_vertex(float *out, int i, int j, int n, float t)
{
    float step = 2.0f / (float)(n - 1);
    float x = -1.0f + step * (float)i;
    float z = -1.0f + step * (float)j;
    float sx = sinf(SINEWAVE_FREQUENCY * x + t), cx = cosf(SINEWAVE_FREQUENCY * x + t);
    float sz = sinf(SINEWAVE_FREQUENCY * z + t), cz = cosf(SINEWAVE_FREQUENCY * z + t);
    float dydx = SINEWAVE_AMPLITUDE * SINEWAVE_FREQUENCY * cx * cz;
    float dydz = -SINEWAVE_AMPLITUDE * SINEWAVE_FREQUENCY * sx * sz;
    float inv_len = 1.0f / sqrtf(dydx * dydx + 1.0f + dydz * dydz);
    out[0] = x;
    out[1] = SINEWAVE_AMPLITUDE * sx * cz;
    out[2] = z;
    out[3] = -dydx * inv_len;
    out[4] = inv_len;
    out[5] = -dydz * inv_len;
}

#endif /* CUGL_SINEWAVE_MATH_H */
