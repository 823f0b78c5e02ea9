// The nbody demo's kernel: one all-pairs gravity step (nbody_math.h).

#include "nbody_math.h"

// A step of the bodies first .. first + count - 1 of n (the slice of one
// GPU when several share the work; 0 and n on one): one thread per body of
// the slice, NBODY_BLOCK threads a block, ceil(count / NBODY_BLOCK) blocks.
// pos_in holds all n bodies, pos_out receives the slice's at the same
// indices, and vel holds the slice's velocities only (vel[0] is body
// first's). Each block walks over all bodies a tile at a time: its threads
// load one tile of NBODY_BLOCK positions and masses
// into shared memory, every thread adds the pull of the whole tile to its
// own body's acceleration, and the block moves to the next tile. Slots of
// the last tile past n hold a body of mass 0, whose pull is 0, so the
// inner loop has no bounds test. Threads past the slice load tiles but
// write nothing. A body's result does not depend on the slice it is in.
//
// pos_in and pos_out are different buffers (the ping-pong), so no thread
// reads a position another has overwritten; each thread reads and writes
// only its own velocity.
extern "C" __global__ void __launch_bounds__(NBODY_BLOCK)
    nbody_step(const float4 *__restrict__ pos_in, float4 *__restrict__ pos_out,
               float4 *__restrict__ vel, int n, int first, int count, float dt, float eps2)
{
    __shared__ float4 tile[NBODY_BLOCK];
    int own = (int)(blockIdx.x * NBODY_BLOCK + threadIdx.x);
    int i = first + own;
    bool mine = own < count && i < n;
    float4 me = mine ? pos_in[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float a[3] = {0.0f, 0.0f, 0.0f};
    for (int base = 0; base < n; base += NBODY_BLOCK) {
        int j = base + (int)threadIdx.x;
        tile[threadIdx.x] = j < n ? pos_in[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        __syncthreads();
#pragma unroll 32
        for (int k = 0; k < NBODY_BLOCK; k++) {
            float4 q = tile[k];
            nbody_accumulate(a, me.x, me.y, me.z, q.x, q.y, q.z, q.w, eps2);
        }
        __syncthreads(); // the tile is read by all before it is replaced
    }
    if (!mine)
        return;
    float4 v4 = vel[own];
    float p[4] = {me.x, me.y, me.z, me.w}, v[4] = {v4.x, v4.y, v4.z, v4.w};
    nbody_integrate(p, v, a, dt);
    vel[own] = make_float4(v[0], v[1], v[2], v[3]);
    pos_out[i] = make_float4(p[0], p[1], p[2], p[3]);
}
