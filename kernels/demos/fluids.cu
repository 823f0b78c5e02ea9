// The fluids demo's kernels (fluids_math.h): one thread per cell of the
// n x n grid, fields row by row, row 0 at the bottom. A step runs
// advect, splat, (curl, confine), divergence, jacobi (many times) and
// project; show then colours the dye into the texture GL draws.

#include "fluids_math.h"

#define FLUIDS_CELL(x, y, n)                                                    \
    int x = (int)(blockIdx.x * blockDim.x + threadIdx.x);                      \
    int y = (int)(blockIdx.y * blockDim.y + threadIdx.y);                      \
    if (x >= (n) || y >= (n))                                                  \
        return;

// Semi-Lagrangian advection of velocity and dye. The trace starts from the
// cell's own velocity, read exactly from linear memory; the values where it
// ends come from the texture unit's bilinear filter over CUDA arrays that
// hold copies of the same fields (float2 and float4, clamp addressing,
// unnormalized coordinates). `keep` scales what arrives (dissipation).
extern "C" __global__ void fluids_advect(cudaTextureObject_t velocity_tex,
                                         cudaTextureObject_t dye_tex,
                                         const fluids_vec2 *velocity, fluids_vec2 *velocity_out,
                                         fluids_vec4 *dye_out, int n, float dt_cells,
                                         float velocity_keep, float dye_keep)
{
    FLUIDS_CELL(x, y, n)
    int i = fluids_at(x, y, n);
    fluids_vec2 p = fluids_backtrace(x, y, velocity[i], dt_cells);
    float2 v = tex2D<float2>(velocity_tex, p.x, p.y);
    float4 d = tex2D<float4>(dye_tex, p.x, p.y);
    fluids_vec2 vo;
    vo.x = demo_mul(v.x, velocity_keep);
    vo.y = demo_mul(v.y, velocity_keep);
    fluids_vec4 dout;
    dout.x = demo_mul(d.x, dye_keep);
    dout.y = demo_mul(d.y, dye_keep);
    dout.z = demo_mul(d.z, dye_keep);
    dout.w = demo_mul(d.w, dye_keep);
    velocity_out[i] = vo;
    dye_out[i] = dout;
}

// The step's jets and mouse strokes, added in place.
extern "C" __global__ void fluids_add_splats(fluids_vec2 *velocity, fluids_vec4 *dye, int n,
                                        fluids_splats splats)
{
    FLUIDS_CELL(x, y, n)
    int i = fluids_at(x, y, n);
    fluids_vec2 v = velocity[i];
    fluids_vec4 d = dye[i];
    fluids_splat_cell(&v, &d, x, y, n, &splats);
    velocity[i] = v;
    dye[i] = d;
}

extern "C" __global__ void fluids_compute_curl(const fluids_vec2 *velocity, float *curl, int n)
{
    FLUIDS_CELL(x, y, n)
    curl[fluids_at(x, y, n)] = fluids_curl(velocity, x, y, n);
}

// In place: each cell reads only its own velocity (and the curl, a
// separate field), so no thread reads what another writes.
extern "C" __global__ void fluids_confine_vorticity(fluids_vec2 *velocity, const float *curl, int n,
                                             float strength_dt)
{
    FLUIDS_CELL(x, y, n)
    int i = fluids_at(x, y, n);
    velocity[i] = fluids_confine(velocity[i], curl, x, y, n, strength_dt);
}

extern "C" __global__ void fluids_compute_divergence(const fluids_vec2 *velocity, float *div, int n)
{
    FLUIDS_CELL(x, y, n)
    div[fluids_at(x, y, n)] = fluids_divergence(velocity, x, y, n);
}

// One sweep: p_out from p_in (two buffers; a sweep never writes what it reads).
extern "C" __global__ void fluids_jacobi_sweep(const float *p_in, const float *div, float *p_out,
                                               int n, float weight)
{
    FLUIDS_CELL(x, y, n)
    p_out[fluids_at(x, y, n)] = fluids_jacobi(p_in, div, x, y, n, weight);
}

extern "C" __global__ void fluids_subtract_gradient(const fluids_vec2 *velocity, const float *p,
                                             fluids_vec2 *velocity_out, int n)
{
    FLUIDS_CELL(x, y, n)
    velocity_out[fluids_at(x, y, n)] = fluids_project(velocity, p, x, y, n);
}

// The dye as RGBA8 into the frame's image (demo_dest): a surface on the
// mapped GL texture's array, or linear memory.
extern "C" __global__ void fluids_show(demo_dest dest, const fluids_vec4 *dye, int n)
{
    FLUIDS_CELL(x, y, n)
    fluids_rgba8 c = fluids_colour(dye[fluids_at(x, y, n)]);
    demo_store(dest, x, y, make_uchar4(c.r, c.g, c.b, c.a));
}
