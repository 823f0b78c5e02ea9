// Kernels the texture and surface tests launch through cugl's module API.
// Texture and surface objects arrive as the 64-bit values cugl hands out
// (cudaTextureObject_t and cudaSurfaceObject_t are unsigned long long).

// How cugl_tex_sample reads: which fetch function, and what the coordinate's
// components mean.
enum {
    SAMPLE_FETCH = 0,      // tex1Dfetch(x as an integer index)
    SAMPLE_1D = 1,         // tex1D(x)
    SAMPLE_2D = 2,         // tex2D(x, y)
    SAMPLE_3D = 3,         // tex3D(x, y, z)
    SAMPLE_2D_LOD = 4,     // tex2DLod(x, y, level w)
    SAMPLE_1D_LAYERED = 5, // tex1DLayered(x, layer y)
    SAMPLE_2D_LAYERED = 6, // tex2DLayered(x, y, layer z)
    SAMPLE_CUBEMAP = 7,    // texCubemap(direction x, y, z)
};

template <typename T>
__device__ T sample(cudaTextureObject_t tex, int mode, float4 c)
{
    switch (mode) {
    case SAMPLE_FETCH:
        return tex1Dfetch<T>(tex, (int)c.x);
    case SAMPLE_1D:
        return tex1D<T>(tex, c.x);
    case SAMPLE_2D:
        return tex2D<T>(tex, c.x, c.y);
    case SAMPLE_3D:
        return tex3D<T>(tex, c.x, c.y, c.z);
    case SAMPLE_2D_LOD:
        return tex2DLod<T>(tex, c.x, c.y, c.w);
    case SAMPLE_1D_LAYERED:
        return tex1DLayered<T>(tex, c.x, (int)c.y);
    case SAMPLE_2D_LAYERED:
        return tex2DLayered<T>(tex, c.x, c.y, (int)c.z);
    default:
        return texCubemap<T>(tex, c.x, c.y, c.z);
    }
}

// out[i] = the texture at coords[i], for a texture read as one float.
extern "C" __global__ void cugl_tex_sample(cudaTextureObject_t tex, int mode,
                                           const float4 *coords, float *out, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = sample<float>(tex, mode, coords[i]);
}

// The same for a texture read as four floats.
extern "C" __global__ void cugl_tex_sample4(cudaTextureObject_t tex, int mode,
                                            const float4 *coords, float4 *out, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = sample<float4>(tex, mode, coords[i]);
}

// Writes x + 1000 y + base to every element of a width x height f32 surface
// (one channel); surface x coordinates are in bytes.
extern "C" __global__ void cugl_surf_write_2d(cudaSurfaceObject_t surf, unsigned width,
                                              unsigned height, float base)
{
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height)
        surf2Dwrite((float)x + 1000.0f * (float)y + base, surf, (int)(x * sizeof(float)),
                    (int)y);
}

// Reads every element of a width x height f32 surface into out (row-major):
// what a kernel sees of the array through a surface.
extern "C" __global__ void cugl_surf_read_2d(cudaSurfaceObject_t surf, unsigned width,
                                             unsigned height, float *out)
{
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height)
        out[y * width + x] = surf2Dread<float>(surf, (int)(x * sizeof(float)), (int)y);
}
