// cugl's strided copy kernels: copy every element of an n-dimensional
// strided source into a strided destination of the same shape.
//
// The host (lib/core/copy.c) has already dropped extents of 1, made the
// destination's strides positive, ordered the dimensions by destination
// stride (the last is the fastest) and merged what is contiguous on both
// sides. Two kernels remain, each for element sizes 1, 2, 4, 8 and 16 bytes:
//
//   rows       the last dimension is walked by consecutive threads, so the
//              destination is written coalesced; short rows share a block.
//   transpose  the source is contiguous along another dimension (b) than the
//              destination (a): a square tile is read along b and written
//              along a through shared memory, coalesced on both sides.
#include "strided_copy.h"

namespace {

constexpr int kUnroll = CUGL_COPY_UNROLL;

struct alignas(16) bytes16 {
    uint4 v;
};

// Offsets of outer index `i` over dims [0, last) except `skip_a` and
// `skip_b`, the fastest of them last.
__device__ __forceinline__ void outer_offsets(const cugl_copy_params &p, int64_t i, int last,
                                              int skip_a, int skip_b, int64_t &so, int64_t &dof)
{
    so = 0;
    dof = 0;
    for (int d = last - 1; d >= 0; d--) {
        if (d == skip_a || d == skip_b)
            continue;
        int64_t e = p.extent[d];
        int64_t k;
        if (i < 0x7fffffff && e < 0x7fffffff) {
            // 32-bit division is several times cheaper than 64-bit.
            unsigned q = (unsigned)i / (unsigned)e;
            k = (int64_t)((unsigned)i - q * (unsigned)e);
            i = q;
        } else {
            k = i % e;
            i /= e;
        }
        so += k * p.src_stride[d];
        dof += k * p.dst_stride[d];
    }
}

template <typename T>
__device__ void copy_rows(const cugl_copy_params &p)
{
    const int last = p.ndim - 1;
    const int64_t n = p.extent[last];
    const int64_t ss = p.src_stride[last], ds = p.dst_stride[last];
    const int tpr = p.tpr;
    const int rows_per_block = blockDim.x / tpr;
    const int lane = threadIdx.x % tpr;
    const int64_t chunk = (int64_t)tpr * kUnroll;
    const int64_t j0 = blockIdx.x * chunk + lane;
    const T *src = reinterpret_cast<const T *>(p.src);
    T *dst = reinterpret_cast<T *>(p.dst);

    for (int64_t rb = blockIdx.y; rb * rows_per_block < p.outer; rb += gridDim.y) {
        int64_t row = rb * rows_per_block + threadIdx.x / tpr;
        if (row >= p.outer)
            continue;
        int64_t so, dof;
        outer_offsets(p, row, last, -1, -1, so, dof);
        const T *s = src + so;
        T *d = dst + dof;
        // All loads first, then all stores: several requests in flight.
        T v[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; u++) {
            int64_t j = j0 + u * tpr;
            if (j < n)
                v[u] = s[j * ss];
        }
#pragma unroll
        for (int u = 0; u < kUnroll; u++) {
            int64_t j = j0 + u * tpr;
            if (j < n)
                d[j * ds] = v[u];
        }
    }
}

template <typename T>
__device__ void copy_transpose(const cugl_copy_params &p)
{
    constexpr int tile = CUGL_COPY_TILE(sizeof(T));
    constexpr int rows = CUGL_COPY_TRANSPOSE_THREADS / tile;
    // The padding column keeps the column reads free of bank conflicts.
    __shared__ T buf[tile][tile + 1];
    const int a = p.a, b = p.b;
    const int64_t na = p.extent[a], nb = p.extent[b];
    const int64_t ssa = p.src_stride[a], ssb = p.src_stride[b];
    const int64_t dsa = p.dst_stride[a], dsb = p.dst_stride[b];
    const int tx = threadIdx.x % tile, ty = threadIdx.x / tile;
    const int64_t tiles_b = (nb + tile - 1) / tile;
    const int64_t groups_b = (tiles_b + CUGL_COPY_TILES_PER_BLOCK - 1) / CUGL_COPY_TILES_PER_BLOCK;
    const int64_t a0 = (int64_t)blockIdx.x * tile;
    const T *src = reinterpret_cast<const T *>(p.src);
    T *dst = reinterpret_cast<T *>(p.dst);

    // Loop bounds are the same for the whole block: the barriers are safe.
    for (int64_t z = blockIdx.z; z < p.outer; z += gridDim.z) {
        int64_t so, dof;
        outer_offsets(p, z, p.ndim, a, b, so, dof);
        for (int64_t g = blockIdx.y; g < groups_b; g += gridDim.y) {
            const int64_t tb_end = min(tiles_b, (g + 1) * CUGL_COPY_TILES_PER_BLOCK);
            for (int64_t tb = g * CUGL_COPY_TILES_PER_BLOCK; tb < tb_end; tb++) {
                const int64_t b0 = tb * tile;
                if (a0 + tile <= na && b0 + tile <= nb) {
                    // A whole tile: no bounds, pointers stepped (the common case).
                    const T *s = src + so + (a0 + ty) * ssa + (b0 + tx) * ssb;
#pragma unroll
                    for (int i = 0; i < tile / rows; i++)
                        buf[ty + i * rows][tx] = s[(int64_t)i * rows * ssa];
                    __syncthreads();
                    T *d = dst + dof + (b0 + ty) * dsb + (a0 + tx) * dsa;
#pragma unroll
                    for (int i = 0; i < tile / rows; i++)
                        d[(int64_t)i * rows * dsb] = buf[tx][ty + i * rows];
                    __syncthreads();
                    continue;
                }
                // Read along b, where the source is contiguous.
#pragma unroll
                for (int i = ty; i < tile; i += rows) {
                    int64_t ia = a0 + i, ib = b0 + tx;
                    if (ia < na && ib < nb)
                        buf[i][tx] = src[so + ia * ssa + ib * ssb];
                }
                __syncthreads();
                // Write along a, where the destination is contiguous.
#pragma unroll
                for (int i = ty; i < tile; i += rows) {
                    int64_t ib = b0 + i, ia = a0 + tx;
                    if (ia < na && ib < nb)
                        dst[dof + ia * dsa + ib * dsb] = buf[tx][i];
                }
                __syncthreads();
            }
        }
    }
}

} // namespace

#define CUGL_COPY_KERNELS(bytes, type)                                                    \
    extern "C" __global__ void __launch_bounds__(CUGL_COPY_THREADS)                       \
        cugl_copy_rows_##bytes(const cugl_copy_params p)                                  \
    {                                                                                     \
        copy_rows<type>(p);                                                               \
    }                                                                                     \
    extern "C" __global__ void __launch_bounds__(CUGL_COPY_TRANSPOSE_THREADS)             \
        cugl_copy_transpose_##bytes(const cugl_copy_params p)                             \
    {                                                                                     \
        copy_transpose<type>(p);                                                          \
    }

CUGL_COPY_KERNELS(1, uint8_t)
CUGL_COPY_KERNELS(2, uint16_t)
CUGL_COPY_KERNELS(4, uint32_t)
CUGL_COPY_KERNELS(8, uint2)
CUGL_COPY_KERNELS(16, bytes16)
