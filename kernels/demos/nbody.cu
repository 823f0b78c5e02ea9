// The nbody demo's kernel: one all-pairs gravity step (nbody_math.h).

#include "nbody_math.h"

// A step of the bodies first .. first + count - 1 of n (the slice of one
// GPU when several share the work; 0 and n on one): R bodies a thread (1:
// nbody_step, NBODY_WIDE: nbody_step2; nbody_per_thread chooses),
// NBODY_BLOCK threads a block, nbody_blocks(count, R) blocks. A block
// steps NBODY_LANES R bodies, each shared by NBODY_SPLIT threads: thread t
// of block b is lane t % NBODY_LANES of part t / NBODY_LANES, and steps
// bodies first + (b R + r) NBODY_LANES + lane, r = 0 .. R - 1. pos_in holds
// all n bodies, pos_out receives the slice's at the same indices, and vel
// holds the slice's velocities only (vel[0] is body first's).
//
// Each block walks over all bodies a tile at a time: its threads load one
// tile of NBODY_BLOCK positions and masses into shared memory, every thread
// adds the pull of its part of the tile (NBODY_LANES bodies in a row) to
// each of its bodies' accelerations (one shared-memory load serving R
// interactions), and the block moves to the next tile. At the end the
// parts' sums meet in shared memory and part 0 adds them in order, steps
// the bodies and writes them. Sharing a body between threads gives a GPU
// NBODY_SPLIT times the warps to hide latency with where bodies are few
// (65,536 bodies are 256 threads a multiprocessor on an H100, one body a
// thread). Slots of the last tile past n hold a body of mass 0, whose pull
// is 0, so the inner loop has no bounds test. Bodies past the slice are
// stepped but not written.
//
// A body's result depends neither on the slice it is in nor on R: each
// part sums its bodies of every tile in order, tiles start at body 0
// whatever the slice, and the parts are added in order.
//
// pos_in and pos_out are different buffers (the ping-pong), so no thread
// reads a position another has overwritten; each body's velocity is read
// and written by one thread (its part 0).
template <int R>
__device__ __forceinline__ void step(const float4 *__restrict__ pos_in,
                                     float4 *__restrict__ pos_out, float4 *__restrict__ vel,
                                     int n, int first, int count, float dt, float eps2)
{
    __shared__ float4 tile[NBODY_BLOCK];
    // Parts 1 .. NBODY_SPLIT - 1's sums, a lane's consecutive to the next lane's.
    __shared__ float sums[NBODY_SPLIT - 1][R * 3][NBODY_LANES];
    int lane = (int)threadIdx.x % NBODY_LANES, part = (int)threadIdx.x / NBODY_LANES;
    int own[R];
    float4 me[R];
    float a[R][3];
#pragma unroll
    for (int r = 0; r < R; r++) {
        own[r] = (int)(blockIdx.x * R + r) * NBODY_LANES + lane;
        int i = first + own[r];
        me[r] = own[r] < count && i < n ? pos_in[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        a[r][0] = a[r][1] = a[r][2] = 0.0f;
    }
    const float4 *mine = tile + part * NBODY_LANES;
    for (int base = 0; base < n; base += NBODY_BLOCK) {
        int j = base + (int)threadIdx.x;
        tile[threadIdx.x] = j < n ? pos_in[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        __syncthreads();
#pragma unroll 16
        for (int k = 0; k < NBODY_LANES; k++) {
            float4 q = mine[k];
#pragma unroll
            for (int r = 0; r < R; r++)
                nbody_accumulate(a[r], me[r].x, me[r].y, me[r].z, q.x, q.y, q.z, q.w, eps2);
        }
        __syncthreads(); // the tile is read by all before it is replaced
    }
    if (part > 0) {
#pragma unroll
        for (int r = 0; r < R; r++)
            for (int c = 0; c < 3; c++)
                sums[part - 1][r * 3 + c][lane] = a[r][c];
    }
    __syncthreads();
    if (part > 0)
        return;
#pragma unroll
    for (int r = 0; r < R; r++) {
        for (int s = 0; s < NBODY_SPLIT - 1; s++)
            for (int c = 0; c < 3; c++)
                a[r][c] += sums[s][r * 3 + c][lane];
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
