// The sinewave demo's kernel: every frame it writes the n x n vertex grid
// (position and normal, 6 floats a vertex) into the buffer GL draws.
#include "sinewave_math.h"

// One thread per vertex, 2-D blocks over (i, j); out holds n * n * 6 floats.
extern "C" __global__ void sinewave_vertices(float *out, int n, float t)
{
    int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    int j = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    if (i >= n || j >= n)
        return;
    sinewave_vertex(out + ((size_t)j * (size_t)n + (size_t)i) * SINEWAVE_VERTEX_FLOATS, i, j,
                    n, t);
}
