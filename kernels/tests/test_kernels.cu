// Kernels the GPU tests launch through cugl's module API. Each writes a
// result that the test can predict exactly.
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

extern "C" __global__ void cugl_test_iota(unsigned *out, unsigned n, unsigned scale)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = i * scale;
}

// Sleeps about `ns` nanoseconds on one thread, then writes `value` to *out:
// long-running work whose completion a test can observe.
extern "C" __global__ void cugl_test_sleep_then_write(unsigned long long ns, unsigned *out,
                                                      unsigned value)
{
    unsigned long long start = 0, now = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        __nanosleep(100000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
    *(volatile unsigned *)out = value;
}

// out[i] = in[i] + add: what a second stream does with the first one's data.
extern "C" __global__ void cugl_test_add(const unsigned *in, unsigned *out, unsigned n,
                                         unsigned add)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i] + add;
}

// Spins until the host (through mapped pinned memory) sets *flag.
extern "C" __global__ void cugl_test_spin_until(volatile int *flag)
{
    while (*flag == 0)
        __nanosleep(1000);
}

// Round-trips n words through dynamic shared memory, reversed per block.
extern "C" __global__ void cugl_test_shared_reverse(unsigned *out, unsigned n)
{
    extern __shared__ unsigned words[];
    for (unsigned i = threadIdx.x; i < n; i += blockDim.x)
        words[i] = i;
    __syncthreads();
    for (unsigned i = threadIdx.x; i < n; i += blockDim.x)
        out[blockIdx.x * n + i] = words[n - 1 - i];
}

// Writes each block's rank within its cluster (0 where clusters do not exist).
extern "C" __global__ void cugl_test_cluster_rank(unsigned *out)
{
    unsigned rank = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    rank = cg::this_cluster().block_rank();
#endif
    if (threadIdx.x == 0)
        out[blockIdx.x] = rank;
}
