// cugl's array copy kernels: a region of a CUDA array to or from linear
// device memory, faster than the driver's 3-D copy.
//
//   surf_read_N / surf_write_N   arrays made with the surface flag, any
//                                format: the element's N bytes move as
//                                they are (surface loads and stores do not
//                                convert)
//   tex_read_<format>x<channels> any array, read through a texture object
//                                with point sampling at texel centres. The
//                                integer formats are read as integers
//                                (signed ones through the unsigned type of
//                                their size: the same low bits); f32 as
//                                floats; f16 as floats, turned back into
//                                their half bits exactly.
//
// Each thread moves CUGL_ARRAY_COPY_VEC elements of a row; a block covers a
// tile of the region (see CUGL_ARRAY_COPY_THREADS), the host picks its shape.
#include "array_copy.h"

namespace {

typedef cugl_array_copy_params params;

template <int K>
struct kind_c {
    static constexpr int value = K;
};

// Call f with the array's kind as a constant (kind_c<K>), so that each
// kind's addressing is compiled on its own, out of the loops.
template <typename F>
__device__ __forceinline__ void by_kind(int kind, F f)
{
    switch (kind) {
    case CUGL_ARRAY_KIND_1D: f(kind_c<CUGL_ARRAY_KIND_1D>()); break;
    case CUGL_ARRAY_KIND_2D: f(kind_c<CUGL_ARRAY_KIND_2D>()); break;
    case CUGL_ARRAY_KIND_3D: f(kind_c<CUGL_ARRAY_KIND_3D>()); break;
    case CUGL_ARRAY_KIND_1D_LAYERED: f(kind_c<CUGL_ARRAY_KIND_1D_LAYERED>()); break;
    case CUGL_ARRAY_KIND_2D_LAYERED: f(kind_c<CUGL_ARRAY_KIND_2D_LAYERED>()); break;
    case CUGL_ARRAY_KIND_CUBE: f(kind_c<CUGL_ARRAY_KIND_CUBE>()); break;
    default: f(kind_c<CUGL_ARRAY_KIND_CUBE_LAYERED>()); break;
    }
}

// Walk the thread's elements of the region: V along the row, a block's
// width apart, every load before the first store. load(x, y, z) and
// store(value, x, y, z) take region coordinates.
template <int V, typename Load, typename Store>
__device__ __forceinline__ void walk(const params &p, Load load, Store store)
{
    const int x0 = blockIdx.x * blockDim.x * V + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (y >= p.height)
        return;
    for (int z = blockIdx.z; z < p.depth; z += gridDim.z) {
        // Past the row's end, load its last element again: no branch
        // between the loads.
        decltype(load(0, 0, 0)) v[V];
#pragma unroll
        for (int i = 0; i < V; i++)
            v[i] = load(min(x0 + i * (int)blockDim.x, p.width - 1), y, z);
#pragma unroll
        for (int i = 0; i < V; i++) {
            int x = x0 + i * (int)blockDim.x;
            if (x < p.width)
                store(v[i], x, y, z);
        }
    }
}

template <typename T>
__device__ __forceinline__ T *linear_at(const params &p, int x, int y, int z)
{
    char *row = reinterpret_cast<char *>(p.linear) + (uint64_t)z * p.slice + (uint64_t)y * p.pitch;
    return reinterpret_cast<T *>(row) + x;
}

// --- surfaces: x in bytes ---

template <int K, typename T>
__device__ __forceinline__ T surf_load(const params &p, int x, int y, int z)
{
    cudaSurfaceObject_t s = p.object;
    int xb = x * (int)sizeof(T);
    if constexpr (K == CUGL_ARRAY_KIND_1D)
        return surf1Dread<T>(s, xb);
    else if constexpr (K == CUGL_ARRAY_KIND_2D)
        return surf2Dread<T>(s, xb, y);
    else if constexpr (K == CUGL_ARRAY_KIND_3D)
        return surf3Dread<T>(s, xb, y, z);
    else if constexpr (K == CUGL_ARRAY_KIND_1D_LAYERED)
        return surf1DLayeredread<T>(s, xb, z);
    else if constexpr (K == CUGL_ARRAY_KIND_2D_LAYERED)
        return surf2DLayeredread<T>(s, xb, y, z);
    else if constexpr (K == CUGL_ARRAY_KIND_CUBE)
        return surfCubemapread<T>(s, xb, y, z);
    else
        return surfCubemapLayeredread<T>(s, xb, y, z);
}

template <int K, typename T>
__device__ __forceinline__ void surf_store(const params &p, T v, int x, int y, int z)
{
    cudaSurfaceObject_t s = p.object;
    int xb = x * (int)sizeof(T);
    if constexpr (K == CUGL_ARRAY_KIND_1D)
        surf1Dwrite<T>(v, s, xb);
    else if constexpr (K == CUGL_ARRAY_KIND_2D)
        surf2Dwrite<T>(v, s, xb, y);
    else if constexpr (K == CUGL_ARRAY_KIND_3D)
        surf3Dwrite<T>(v, s, xb, y, z);
    else if constexpr (K == CUGL_ARRAY_KIND_1D_LAYERED)
        surf1DLayeredwrite<T>(v, s, xb, z);
    else if constexpr (K == CUGL_ARRAY_KIND_2D_LAYERED)
        surf2DLayeredwrite<T>(v, s, xb, y, z);
    else if constexpr (K == CUGL_ARRAY_KIND_CUBE)
        surfCubemapwrite<T>(v, s, xb, y, z);
    else
        surfCubemapLayeredwrite<T>(v, s, xb, y, z);
}

template <typename T>
__device__ void surf_read(const params &p)
{
    by_kind(p.kind, [&](auto k) {
        constexpr int K = decltype(k)::value;
        walk<CUGL_ARRAY_COPY_VEC(sizeof(T))>(
            p, [&](int x, int y, int z) { return surf_load<K, T>(p, x + p.x0, y + p.y0, z + p.z0); },
            [&](T v, int x, int y, int z) { *linear_at<T>(p, x, y, z) = v; });
    });
}

template <typename T>
__device__ void surf_write(const params &p)
{
    by_kind(p.kind, [&](auto k) {
        constexpr int K = decltype(k)::value;
        walk<CUGL_ARRAY_COPY_VEC(sizeof(T))>(
            p, [&](int x, int y, int z) { return *linear_at<const T>(p, x, y, z); },
            [&](T v, int x, int y, int z) { surf_store<K, T>(p, v, x + p.x0, y + p.y0, z + p.z0); });
    });
}

// --- textures: unnormalised coordinates at texel centres ---

template <int K, typename F>
__device__ __forceinline__ F tex_load(const params &p, int x, int y, int z)
{
    cudaTextureObject_t t = p.object;
    float fx = x + 0.5f, fy = y + 0.5f;
    if constexpr (K == CUGL_ARRAY_KIND_1D) {
        return tex1D<F>(t, fx);
    } else if constexpr (K == CUGL_ARRAY_KIND_2D) {
        return tex2D<F>(t, fx, fy);
    } else if constexpr (K == CUGL_ARRAY_KIND_3D) {
        return tex3D<F>(t, fx, fy, z + 0.5f);
    } else if constexpr (K == CUGL_ARRAY_KIND_1D_LAYERED) {
        return tex1DLayered<F>(t, fx, z);
    } else if constexpr (K == CUGL_ARRAY_KIND_2D_LAYERED) {
        return tex2DLayered<F>(t, fx, fy, z);
    } else {
        // A cube map is sampled by direction: the one through the texel's
        // centre on its face (the CUDA programming guide's cube map table,
        // with the major axis 1, so s and t are the face coordinates).
        float n = (float)p.face_size;
        float sc = 2.0f * fx / n - 1.0f, tc = 2.0f * fy / n - 1.0f;
        int face = z % 6;
        float dx, dy, dz;
        switch (face) {
        case 0: dx = 1.0f; dy = -tc; dz = -sc; break;
        case 1: dx = -1.0f; dy = -tc; dz = sc; break;
        case 2: dx = sc; dy = 1.0f; dz = tc; break;
        case 3: dx = sc; dy = -1.0f; dz = -tc; break;
        case 4: dx = sc; dy = -tc; dz = 1.0f; break;
        default: dx = -sc; dy = -tc; dz = -1.0f; break;
        }
        if constexpr (K == CUGL_ARRAY_KIND_CUBE)
            return texCubemap<F>(t, dx, dy, dz);
        else
            return texCubemapLayered<F>(t, dx, dy, dz, z / 6);
    }
}

// The bits of a half from a float that was made from one (by the texture
// unit): exact for every half, NaN payloads and subnormals included.
__device__ __forceinline__ unsigned short half_bits(float f)
{
    unsigned u = __float_as_uint(f);
    unsigned sign = (u >> 16) & 0x8000u, exp = (u >> 23) & 0xffu, mant = u & 0x7fffffu;
    if (exp == 0xffu) // inf, NaN
        return (unsigned short)(sign | 0x7c00u | (mant >> 13));
    if (exp == 0u) // zero (no half is a float subnormal)
        return (unsigned short)sign;
    if (exp >= 113u) // a normal half: exponent 1..30
        return (unsigned short)(sign | ((exp - 112u) << 10) | (mant >> 13));
    // A subnormal half: m x 2^-24 with m = 1.mant x 2^(exp - 103).
    return (unsigned short)(sign | ((mant | 0x800000u) >> (126u - exp)));
}

// Two and four halves, as their bits.
struct __align__(4) half2s { unsigned short x, y; };
struct __align__(8) half4s { unsigned short x, y, z, w; };

template <typename F, typename S>
__device__ __forceinline__ S half_stored(F v);
template <>
__device__ __forceinline__ unsigned short half_stored(float v) { return half_bits(v); }
template <>
__device__ __forceinline__ half2s half_stored(float2 v) { return {half_bits(v.x), half_bits(v.y)}; }
template <>
__device__ __forceinline__ half4s half_stored(float4 v)
{
    return {half_bits(v.x), half_bits(v.y), half_bits(v.z), half_bits(v.w)};
}

template <typename F>
__device__ void tex_read(const params &p)
{
    by_kind(p.kind, [&](auto k) {
        constexpr int K = decltype(k)::value;
        walk<CUGL_ARRAY_COPY_VEC(sizeof(F))>(
            p, [&](int x, int y, int z) { return tex_load<K, F>(p, x + p.x0, y + p.y0, z + p.z0); },
            [&](F v, int x, int y, int z) { *linear_at<F>(p, x, y, z) = v; });
    });
}

// f16: fetched as floats (F), stored as halves (S, of the element's size).
template <typename F, typename S>
__device__ void tex_read_half(const params &p)
{
    by_kind(p.kind, [&](auto k) {
        constexpr int K = decltype(k)::value;
        walk<CUGL_ARRAY_COPY_VEC(sizeof(S))>(
            p, [&](int x, int y, int z) { return tex_load<K, F>(p, x + p.x0, y + p.y0, z + p.z0); },
            [&](F v, int x, int y, int z) { *linear_at<S>(p, x, y, z) = half_stored<F, S>(v); });
    });
}

} // namespace

#define BOUNDS __global__ void __launch_bounds__(CUGL_ARRAY_COPY_THREADS)

#define SURF(n, T)                                                                    \
    extern "C" BOUNDS cugl_array_surf_read_##n(params p) { surf_read<T>(p); }         \
    extern "C" BOUNDS cugl_array_surf_write_##n(params p) { surf_write<T>(p); }
SURF(1, unsigned char)
SURF(2, unsigned short)
SURF(4, unsigned int)
SURF(8, uint2)
SURF(16, uint4)

#define TEX(name, F) \
    extern "C" BOUNDS cugl_array_tex_read_##name(params p) { tex_read<F>(p); }
TEX(u8x1, unsigned char)
TEX(u8x2, uchar2)
TEX(u8x4, uchar4)
TEX(u16x1, unsigned short)
TEX(u16x2, ushort2)
TEX(u16x4, ushort4)
TEX(u32x1, unsigned int)
TEX(u32x2, uint2)
TEX(u32x4, uint4)
TEX(f32x1, float)
TEX(f32x2, float2)
TEX(f32x4, float4)

#define TEX_HALF(name, F, S) \
    extern "C" BOUNDS cugl_array_tex_read_##name(params p) { tex_read_half<F, S>(p); }
TEX_HALF(f16x1, float, unsigned short)
TEX_HALF(f16x2, float2, half2s)
TEX_HALF(f16x4, float4, half4s)
