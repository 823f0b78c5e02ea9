// The nbody demo's kernel: one all-pairs gravity step (nbody_math.h).

#include "nbody_math.h"

// A step of the bodies first .. first + count - 1 of n (the slice of one
// GPU when several share the work; 0 and n on one): R bodies a thread (1:
// nbody_step, NBODY_WIDE: nbody_step2; nbody_per_thread chooses),
// NBODY_BLOCK threads a block, ceil(count / (NBODY_BLOCK R)) blocks; thread
// t of block b steps bodies first + (b R + r) NBODY_BLOCK + t, r = 0 ..
// R - 1. pos_in holds all n bodies, pos_out receives the
// slice's at the same indices, and vel holds the slice's velocities only
// (vel[0] is body first's). Each block walks over all bodies a tile at a
// time: its threads load one tile of NBODY_BLOCK positions and masses into
// shared memory, every thread adds the pull of the whole tile to each of
// its bodies' accelerations (one shared-memory load serving R
// interactions), and the block moves to the next tile.
// Slots of the last tile past n hold a body of mass 0, whose pull is 0, so
// the inner loop has no bounds test. Bodies past the slice are stepped but
// not written. A body's result does not depend on the slice it is in, nor
// on how many bodies a thread steps: its sum runs over the bodies in order.
//
// pos_in and pos_out are different buffers (the ping-pong), so no thread
// reads a position another has overwritten; each thread reads and writes
// only its own bodies' velocities.
template <int R>
__device__ __forceinline__ void step(const float4 *__restrict__ pos_in,
                                     float4 *__restrict__ pos_out, float4 *__restrict__ vel,
                                     int n, int first, int count, float dt, float eps2)
{
    __shared__ float4 tile[NBODY_BLOCK];
    int own[R];
    float4 me[R];
    float a[R][3];
#pragma unroll
    for (int r = 0; r < R; r++) {
        own[r] = (int)((blockIdx.x * R + r) * NBODY_BLOCK + threadIdx.x);
        int i = first + own[r];
        me[r] = own[r] < count && i < n ? pos_in[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        a[r][0] = a[r][1] = a[r][2] = 0.0f;
    }
    for (int base = 0; base < n; base += NBODY_BLOCK) {
        int j = base + (int)threadIdx.x;
        tile[threadIdx.x] = j < n ? pos_in[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        __syncthreads();
#pragma unroll 16
        for (int k = 0; k < NBODY_BLOCK; k++) {
            float4 q = tile[k];
#pragma unroll
            for (int r = 0; r < R; r++)
                nbody_accumulate(a[r], me[r].x, me[r].y, me[r].z, q.x, q.y, q.z, q.w, eps2);
        }
        __syncthreads(); // the tile is read by all before it is replaced
    }
#pragma unroll
    for (int r = 0; r < R; r++) {
        int i = first + own[r];
        if (own[r] >= count || i >= n)
            continue;
        float4 v4 = vel[own[r]];
        float p[4] = {me[r].x, me[r].y, me[r].z, me[r].w}, v[4] = {v4.x, v4.y, v4.z, v4.w};
        nbody_integrate(p, v, a[r], dt);
        vel[own[r]] = make_float4(v[0], v[1], v[2], v[3]);
        pos_out[i] = make_float4(p[0], p[1], p[2], p[3]);
    }
}

extern "C" __global__ void __launch_bounds__(NBODY_BLOCK)
    nbody_step(const float4 *__restrict__ pos_in, float4 *__restrict__ pos_out,
               float4 *__restrict__ vel, int n, int first, int count, float dt, float eps2)
{
    step<1>(pos_in, pos_out, vel, n, first, count, dt, eps2);
}

extern "C" __global__ void __launch_bounds__(NBODY_BLOCK)
    nbody_step2(const float4 *__restrict__ pos_in, float4 *__restrict__ pos_out,
                float4 *__restrict__ vel, int n, int first, int count, float dt, float eps2)
{
    step<NBODY_WIDE>(pos_in, pos_out, vel, n, first, count, dt, eps2);
}
