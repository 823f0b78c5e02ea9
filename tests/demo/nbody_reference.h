/*
 * nbody_reference.h - the nbody demo's physics on the CPU in double
 * precision: the formula of kernels/demos/nbody_math.h, written again
 * without sharing its code, for the tests to hold the kernel to.
 */
#ifndef CUGL_NBODY_REFERENCE_H
#define CUGL_NBODY_REFERENCE_H

/*
 * `steps` steps of n bodies, in place: pos holds x, y, z, mass and vel
 * x, y, z, 0 for each body (4 doubles a body). Each step is
 *   a_i = sum_j m_j (p_j - p_i) / (|p_j - p_i|^2 + eps^2)^(3/2),
 *   v_i += a_i dt,  p_i += v_i dt.
 */
void nbody_reference_steps(double *pos, double *vel, long n, int steps, double dt, double eps);

#endif /* CUGL_NBODY_REFERENCE_H */
