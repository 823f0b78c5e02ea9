/*
 * nbody_reference.c - see nbody_reference.h.
 */
#include "nbody_reference.h"

#include <math.h>
#include <stdlib.h>

void nbody_reference_steps(double *pos, double *vel, long n, int steps, double dt, double eps)
{
    double *acc = malloc((size_t)n * 3 * sizeof *acc);
    if (!acc)
        abort();
    for (int s = 0; s < steps; s++) {
        /* All accelerations from the old positions, then the updates. */
        for (long i = 0; i < n; i++) {
            const double *p = pos + 4 * i;
            double ax = 0.0, ay = 0.0, az = 0.0;
            for (long j = 0; j < n; j++) {
                const double *q = pos + 4 * j;
                double dx = q[0] - p[0], dy = q[1] - p[1], dz = q[2] - p[2];
                double d2 = dx * dx + dy * dy + dz * dz + eps * eps;
                double s3 = q[3] / (d2 * sqrt(d2));
                ax += dx * s3;
                ay += dy * s3;
                az += dz * s3;
            }
            acc[3 * i] = ax;
            acc[3 * i + 1] = ay;
            acc[3 * i + 2] = az;
        }
        for (long i = 0; i < n; i++)
            for (int c = 0; c < 3; c++) {
                vel[4 * i + c] += acc[3 * i + c] * dt;
                pos[4 * i + c] += vel[4 * i + c] * dt;
            }
    }
    free(acc);
}
