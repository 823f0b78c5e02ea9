/*
 * Textures on a real GPU. Sampling is checked against the
 * filtering formula of the CUDA programming guide computed on the host
 * (point: the texel under the coordinate; linear: the weighted sum of the
 * 2, 4 or 8 nearest texels, weights from the coordinate minus 0.5) for
 * every address mode, in 1D, 2D, 3D, four channels, layers, cube faces and
 * mipmap levels; normalized-float reads of u8; linear (tex1Dfetch) and
 * pitch2d buffer resources with their size and alignment checks; textures
 * keeping what they sample alive; what the hardware would get wrong refused
 * with a message; closed objects. Surfaces: test_surface.c.
 */
#include <math.h>

#include "texture_test.h"

/* ---- the host model of sampling ------------------------------------------ */

/* One float per texel, x fastest. */
typedef struct image {
    const float *texels;
    int n[3];
    int ndim;
} image;

/* The texel index an address mode reads for index i of n; -1: the border. */
static int address(int i, int n, cugl_address_mode m)
{
    switch (m) {
    case CUGL_ADDRESS_WRAP:
        return ((i % n) + n) % n;
    case CUGL_ADDRESS_MIRROR: {
        int p = ((i % (2 * n)) + 2 * n) % (2 * n);
        return p < n ? p : 2 * n - 1 - p;
    }
    case CUGL_ADDRESS_BORDER:
        return i < 0 || i >= n ? -1 : i;
    default:
        return i < 0 ? 0 : i >= n ? n - 1 : i;
    }
}

static float texel(const image *img, const int i[3], const cugl_address_mode m[3],
                   float border)
{
    int j[3] = {0, 0, 0};
    for (int a = 0; a < img->ndim; a++) {
        j[a] = address(i[a], img->n[a], m[a]);
        if (j[a] < 0)
            return border;
    }
    return img->texels[((size_t)j[2] * (size_t)img->n[1] + (size_t)j[1]) * (size_t)img->n[0] +
                       (size_t)j[0]];
}

/* What a texture returns at unnormalized position pos. */
static float model_sample(const image *img, const float pos[3], bool linear,
                          const cugl_address_mode m[3], float border)
{
    int i0[3] = {0, 0, 0};
    float w[3] = {0, 0, 0};
    for (int a = 0; a < img->ndim; a++) {
        float b = linear ? pos[a] - 0.5f : pos[a];
        float f = floorf(b);
        i0[a] = (int)f;
        w[a] = linear ? b - f : 0.0f;
    }
    float sum = 0.0f;
    for (int corner = 0; corner < 8; corner++) {
        float weight = 1.0f;
        int i[3];
        for (int a = 0; a < 3; a++) {
            int bit = (corner >> a) & 1;
            weight *= bit ? w[a] : 1.0f - w[a];
            i[a] = i0[a] + bit;
        }
        if (weight != 0.0f)
            sum += weight * texel(img, i, m, border);
    }
    return sum;
}

/* ---- 2D sampling, every address mode and filter ------------------------- */

#define W 4
#define H 4

static const char *const mode_names[] = {"clamp", "wrap", "mirror", "border"};

/*
 * Positions (in texels) where the weights are 0, 0.5 or 1 and a point
 * sample never sits on a texel edge; some outside the image on both sides.
 */
static const float point_xs[] = {0.5f, 1.25f, 2.75f, 3.5f, 4.25f, 4.5f, 5.75f, -0.5f, -0.75f,
                                 -1.25f};
static const float point_ys[] = {0.5f, 2.25f, 4.5f, -0.25f};
static const float linear_xs[] = {0.5f, 1.0f, 2.0f, 3.5f, 4.0f, 4.5f, 5.0f, 0.0f, -0.5f, -1.0f};
static const float linear_ys[] = {0.5f, 2.0f, 4.0f, -1.0f};

static void check_2d(cugl_texture *t, const image *img, bool linear,
                     const cugl_address_mode m[3], bool normalized, float border,
                     const char *what)
{
    const float *xs = linear ? linear_xs : point_xs, *ys = linear ? linear_ys : point_ys;
    enum { NX = sizeof point_xs / sizeof point_xs[0], NY = sizeof point_ys / sizeof point_ys[0] };
    coord coords[NX * NY];
    float want[NX * NY], got[NX * NY];
    unsigned n = 0;
    for (int j = 0; j < NY; j++)
        for (int i = 0; i < NX; i++, n++) {
            const float pos[3] = {xs[i], ys[j], 0};
            coords[n] = (coord){normalized ? xs[i] / W : xs[i], normalized ? ys[j] / H : ys[j],
                                0, 0};
            want[n] = model_sample(img, pos, linear, m, border);
        }
    sample(t, SAMPLE_2D, coords, n, 1, got);
    expect_close(got, want, n, TOLERANCE, what, coords, 1);
}

static void sampling_2d_every_address_mode_and_filter(void **state)
{
    (void)state;
    float texels[W * H];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            texels[y * W + x] = 1.0f + (float)x + 10.0f * (float)y;
    const image img = {texels, {W, H, 1}, 2};
    cugl_array *a = new_array(
        &(cugl_array_desc){.ndim = 2, .shape = {W, H}, .format = CUGL_FORMAT_F32});
    upload(a, texels);
    const float border = -7.0f;
    for (int mode = CUGL_ADDRESS_CLAMP; mode <= CUGL_ADDRESS_BORDER; mode++)
        for (int linear = 0; linear <= 1; linear++)
            for (int normalized = 1; normalized >= 0; normalized--) {
                cugl_address_mode m = (cugl_address_mode)mode;
                /* Wrap and mirror need normalized coordinates (refused below). */
                if (!normalized && (m == CUGL_ADDRESS_WRAP || m == CUGL_ADDRESS_MIRROR))
                    continue;
                const cugl_texture_desc d = {
                    .address_mode = {m, m, m},
                    .filter_mode = linear ? CUGL_FILTER_LINEAR : CUGL_FILTER_POINT,
                    .normalized_coords = normalized,
                    .border_color = {border, -8, -9, -10},
                };
                cugl_texture *t = texture_of(a, &d);
                char what[96];
                snprintf(what, sizeof what, "2D f32, %s, %s, %s coordinates", mode_names[mode],
                         linear ? "linear" : "point", normalized ? "normalized" : "texel");
                check_2d(t, &img, linear, d.address_mode, normalized, border, what);
                cugl_texture_desc back;
                assert_ok(cugl_texture_get_desc(t, &back));
                assert_int_equal(back.address_mode[1], m);
                assert_true(back.border_color[0] == border);
                cugl_texture_release(t);
            }
    cugl_texture *t = NULL;
    assert_status(cugl_texture_create(&t, dev,
                                      &(cugl_resource_desc){.kind = CUGL_RESOURCE_ARRAY,
                                                            .array = a},
                                      &(cugl_texture_desc){.address_mode = {CUGL_ADDRESS_WRAP}}),
                  CUGL_ERROR_INVALID_ARGUMENT);
    expect_message("cugl_texture_create: address_mode[0] is CUGL_ADDRESS_WRAP, which needs "
                   "normalized_coords (unnormalized coordinates only clamp or use the border)");
    cugl_array_release(a);
}

/* ---- 1D, 3D and four channels -------------------------------------------- */

static void sampling_1d_and_3d(void **state)
{
    (void)state;
    static const cugl_address_mode clamp[3] = {CUGL_ADDRESS_CLAMP, CUGL_ADDRESS_CLAMP,
                                               CUGL_ADDRESS_CLAMP};
    float line[8];
    for (int x = 0; x < 8; x++)
        line[x] = 3.0f * (float)x + 1.0f;
    const image img1 = {line, {8, 1, 1}, 1};
    cugl_array *a1 =
        new_array(&(cugl_array_desc){.ndim = 1, .shape = {8}, .format = CUGL_FORMAT_F32});
    upload(a1, line);
    static const float xs[] = {0.5f, 1.0f, 3.0f, 7.5f, 8.0f, -0.5f, 4.0f, 6.5f};
    for (int linear = 0; linear <= 1; linear++) {
        cugl_texture *t = texture_of(
            a1, &(cugl_texture_desc){.filter_mode = linear ? CUGL_FILTER_LINEAR
                                                           : CUGL_FILTER_POINT});
        coord coords[8];
        float want[8], got[8];
        for (int i = 0; i < 8; i++) {
            /* Point samples a quarter texel in, away from the edges. */
            float x = linear ? xs[i] : xs[i] + 0.25f;
            coords[i] = (coord){x, 0, 0, 0};
            want[i] = model_sample(&img1, (const float[3]){x, 0, 0}, linear, clamp, 0);
        }
        sample(t, SAMPLE_1D, coords, 8, 1, got);
        expect_close(got, want, 8, TOLERANCE, linear ? "1D linear" : "1D point", coords, 1);
        cugl_texture_release(t);
    }
    cugl_array_release(a1);

    float cube[4 * 4 * 4];
    for (int z = 0; z < 4; z++)
        for (int y = 0; y < 4; y++)
            for (int x = 0; x < 4; x++)
                cube[(z * 4 + y) * 4 + x] = 1.0f + (float)x + 4.0f * (float)y + 16.0f * (float)z;
    const image img3 = {cube, {4, 4, 4}, 3};
    cugl_array *a3 = new_array(
        &(cugl_array_desc){.ndim = 3, .shape = {4, 4, 4}, .format = CUGL_FORMAT_F32});
    upload(a3, cube);
    static const float ps[] = {0.5f, 1.0f, 2.0f, 3.5f, 4.0f};
    for (int linear = 0; linear <= 1; linear++) {
        cugl_texture *t = texture_of(
            a3, &(cugl_texture_desc){.filter_mode = linear ? CUGL_FILTER_LINEAR
                                                           : CUGL_FILTER_POINT});
        coord coords[125];
        float want[125], got[125];
        unsigned n = 0;
        for (int k = 0; k < 5; k++)
            for (int j = 0; j < 5; j++)
                for (int i = 0; i < 5; i++, n++) {
                    float off = linear ? 0.0f : 0.25f;
                    const float pos[3] = {ps[i] + off, ps[j] + off, ps[k] + off};
                    coords[n] = (coord){pos[0], pos[1], pos[2], 0};
                    want[n] = model_sample(&img3, pos, linear, clamp, 0);
                }
        sample(t, SAMPLE_3D, coords, n, 1, got);
        expect_close(got, want, n, TOLERANCE, linear ? "3D linear" : "3D point", coords, 1);
        cugl_texture_release(t);
    }
    cugl_array_release(a3);
}

static void sampling_four_channels(void **state)
{
    (void)state;
    enum { N = 3 };
    float texels[N * N * 4], planes[4][N * N];
    for (int y = 0; y < N; y++)
        for (int x = 0; x < N; x++)
            for (int c = 0; c < 4; c++) {
                float v = (1.0f + (float)x + 10.0f * (float)y) * (float)(c + 1);
                texels[(y * N + x) * 4 + c] = v;
                planes[c][y * N + x] = v;
            }
    cugl_array *a = new_array(&(cugl_array_desc){.ndim = 2, .shape = {N, N},
                                                 .format = CUGL_FORMAT_F32, .num_channels = 4});
    upload(a, texels);
    static const cugl_address_mode clamp[3] = {CUGL_ADDRESS_CLAMP, CUGL_ADDRESS_CLAMP,
                                               CUGL_ADDRESS_CLAMP};
    static const float ps[] = {0.5f, 1.0f, 1.5f, 2.0f, 3.0f};
    cugl_texture *t = texture_of(a, &(cugl_texture_desc){.filter_mode = CUGL_FILTER_LINEAR});
    coord coords[25];
    float want[25 * 4], got[25 * 4];
    unsigned n = 0;
    for (int j = 0; j < 5; j++)
        for (int i = 0; i < 5; i++, n++) {
            const float pos[3] = {ps[i], ps[j], 0};
            coords[n] = (coord){pos[0], pos[1], 0, 0};
            for (int c = 0; c < 4; c++) {
                const image img = {planes[c], {N, N, 1}, 2};
                want[n * 4 + (unsigned)c] = model_sample(&img, pos, true, clamp, 0);
            }
        }
    sample(t, SAMPLE_2D, coords, n, 4, got);
    expect_close(got, want, n * 4, TOLERANCE, "2D f32 x4 linear", coords, 4);
    cugl_texture_release(t);
    cugl_array_release(a);
}

/* u8 read as normalized float: c / 255, blended as floats. */
static void normalized_float_read_of_u8(void **state)
{
    (void)state;
    static const unsigned char values[4] = {0, 51, 204, 255};
    cugl_array *a =
        new_array(&(cugl_array_desc){.ndim = 2, .shape = {4, 1}, .format = CUGL_FORMAT_U8});
    upload(a, values);
    float unorm[4];
    for (int i = 0; i < 4; i++)
        unorm[i] = (float)values[i] / 255.0f;
    const image img = {unorm, {4, 1, 1}, 2};
    static const cugl_address_mode clamp[3] = {CUGL_ADDRESS_CLAMP, CUGL_ADDRESS_CLAMP,
                                               CUGL_ADDRESS_CLAMP};
    static const float xs[] = {0.5f, 1.5f, 2.5f, 3.5f, 1.0f, 2.0f, 3.0f};
    for (int linear = 0; linear <= 1; linear++) {
        cugl_texture *t = texture_of(
            a, &(cugl_texture_desc){.read_mode = CUGL_READ_NORMALIZED_FLOAT,
                                    .filter_mode = linear ? CUGL_FILTER_LINEAR
                                                          : CUGL_FILTER_POINT});
        unsigned n = linear ? 7 : 4;
        coord coords[7];
        float want[7], got[7];
        for (unsigned i = 0; i < n; i++) {
            coords[i] = (coord){xs[i], 0.5f, 0, 0};
            want[i] = model_sample(&img, (const float[3]){xs[i], 0.5f, 0}, linear, clamp, 0);
        }
        sample(t, SAMPLE_2D, coords, n, 1, got);
        /* Point samples: c / 255 within an ulp or two of the fp32 quotient.
         * Linear blends of 8-bit texels run through the filter's fixed-point
         * path: an H200 returned 0.1000076 for 0.1, an error of 2^-17, so
         * 2^-16 bounds it. */
        expect_close(got, want, n, linear ? 1.0f / 65536 : 1e-6f,
                     linear ? "u8 normalized, linear" : "u8 normalized", coords, 1);
        cugl_texture_release(t);
    }
    cugl_array_release(a);
}

/* ---- layers, cube faces, mipmap levels ------------------------------------- */

static void sampling_layers_and_cube_faces(void **state)
{
    (void)state;
    static const cugl_address_mode clamp[3] = {CUGL_ADDRESS_CLAMP, CUGL_ADDRESS_CLAMP,
                                               CUGL_ADDRESS_CLAMP};
    enum { L = 3 };
    float texels[L * 16];
    for (int l = 0; l < L; l++)
        for (int y = 0; y < 4; y++)
            for (int x = 0; x < 4; x++)
                texels[(l * 4 + y) * 4 + x] =
                    100.0f * (float)l + 1.0f + (float)x + 10.0f * (float)y;
    cugl_array *a = new_array(&(cugl_array_desc){.ndim = 2, .shape = {4, 4},
                                                 .format = CUGL_FORMAT_F32, .layers = L});
    upload(a, texels);
    cugl_texture *t = texture_of(a, &(cugl_texture_desc){.filter_mode = CUGL_FILTER_LINEAR});
    static const float ps[] = {0.5f, 2.0f, 3.5f};
    coord coords[L * 9];
    float want[L * 9], got[L * 9];
    unsigned n = 0;
    for (int l = 0; l < L; l++)
        for (int j = 0; j < 3; j++)
            for (int i = 0; i < 3; i++, n++) {
                const image img = {texels + l * 16, {4, 4, 1}, 2};
                coords[n] = (coord){ps[i], ps[j], (float)l, 0};
                want[n] = model_sample(&img, (const float[3]){ps[i], ps[j], 0}, true, clamp, 0);
            }
    sample(t, SAMPLE_2D_LAYERED, coords, n, 1, got);
    expect_close(got, want, n, TOLERANCE, "2D layered, linear within a layer", coords, 1);
    cugl_texture_release(t);
    cugl_array_release(a);

    float line[2 * 8];
    for (int l = 0; l < 2; l++)
        for (int x = 0; x < 8; x++)
            line[l * 8 + x] = 100.0f * (float)l + (float)x;
    a = new_array(&(cugl_array_desc){.ndim = 1, .shape = {8}, .format = CUGL_FORMAT_F32,
                                     .layers = 2});
    upload(a, line);
    t = texture_of(a, NULL);
    n = 0;
    for (int l = 0; l < 2; l++)
        for (int x = 0; x < 8; x++, n++) {
            coords[n] = (coord){(float)x + 0.5f, (float)l, 0, 0};
            want[n] = line[l * 8 + x];
        }
    sample(t, SAMPLE_1D_LAYERED, coords, n, 1, got);
    expect_close(got, want, n, 0.0f, "1D layered, point", coords, 1);
    cugl_texture_release(t);
    cugl_array_release(a);

    /* Each face one value; a direction along an axis reads its face. */
    float faces[6 * 16];
    for (int f = 0; f < 6; f++)
        for (int i = 0; i < 16; i++)
            faces[f * 16 + i] = 10.0f * (float)(f + 1);
    a = new_array(&(cugl_array_desc){.ndim = 2, .shape = {4, 4}, .format = CUGL_FORMAT_F32,
                                     .cubemap = true});
    upload(a, faces);
    t = texture_of(a, &(cugl_texture_desc){.normalized_coords = true, .seamless_cubemap = true});
    static const coord directions[6] = {{1, 0, 0, 0},  {-1, 0, 0, 0}, {0, 1, 0, 0},
                                        {0, -1, 0, 0}, {0, 0, 1, 0},  {0, 0, -1, 0}};
    static const float face_values[6] = {10, 20, 30, 40, 50, 60};
    sample(t, SAMPLE_CUBEMAP, directions, 6, 1, got);
    expect_close(got, face_values, 6, 0.0f, "cube map faces +x -x +y -y +z -z", directions, 1);
    cugl_texture_release(t);
    cugl_array_release(a);
}

/* Level l of an 8x8 mipmap holds (l + 1) x 10 everywhere. */
static cugl_mipmapped_array *constant_levels(cugl_format format)
{
    cugl_mipmapped_array *m = NULL;
    assert_ok(cugl_mipmapped_array_create(
        &m, dev, &(cugl_array_desc){.ndim = 2, .shape = {8, 8}, .format = format}, 4));
    for (unsigned l = 0; l < 4; l++) {
        cugl_array *level = NULL;
        assert_ok(cugl_mipmapped_array_get_level(&level, m, l));
        float v[64];
        unsigned short u[64];
        for (int i = 0; i < 64; i++) {
            v[i] = 10.0f * (float)(l + 1);
            u[i] = (unsigned short)(10 * (l + 1));
        }
        upload(level, format == CUGL_FORMAT_F32 ? (const void *)v : (const void *)u);
        cugl_array_release(level);
    }
    return m;
}

static void check_lods(cugl_texture *t, const float *lods, const float *want, unsigned n,
                       const char *what)
{
    coord coords[8];
    float got[8];
    for (unsigned i = 0; i < n; i++)
        coords[i] = (coord){0.5f, 0.5f, 0, lods[i]};
    sample(t, SAMPLE_2D_LOD, coords, n, 1, got);
    expect_close(got, want, n, TOLERANCE, what, coords, 1);
}

static void sampling_mipmap_levels(void **state)
{
    (void)state;
    cugl_mipmapped_array *m = constant_levels(CUGL_FORMAT_F32);
    const cugl_resource_desc r = {.kind = CUGL_RESOURCE_MIPMAPPED_ARRAY, .mipmapped_array = m};

    /* max_mipmap_level_clamp 0: every level reachable (num_levels - 1). */
    cugl_texture *t = texture_over(&r, &(cugl_texture_desc){.normalized_coords = true});
    cugl_texture_desc back;
    assert_ok(cugl_texture_get_desc(t, &back));
    assert_true(back.max_mipmap_level_clamp == 3.0f);
    check_lods(t, (const float[]){0, 1, 2, 3, 6}, (const float[]){10, 20, 30, 40, 40}, 5,
               "mipmap levels, point, default clamps");
    /* The mipmap keeps living in the texture after the caller lets go. */
    cugl_mipmapped_array_release(m);
    check_lods(t, (const float[]){0, 3}, (const float[]){10, 40}, 2,
               "mipmap levels after the mipmapped array was released");
    cugl_texture_release(t);
}

static void mipmap_clamps_and_linear_mipmap_filter(void **state)
{
    (void)state;
    cugl_mipmapped_array *m = constant_levels(CUGL_FORMAT_F32);
    const cugl_resource_desc r = {.kind = CUGL_RESOURCE_MIPMAPPED_ARRAY, .mipmapped_array = m};
    cugl_texture *t = texture_over(
        &r, &(cugl_texture_desc){.normalized_coords = true, .max_mipmap_level_clamp = 1});
    check_lods(t, (const float[]){0, 1, 3}, (const float[]){10, 20, 20}, 3,
               "max_mipmap_level_clamp 1");
    cugl_texture_release(t);
    t = texture_over(&r, &(cugl_texture_desc){.normalized_coords = true,
                                              .min_mipmap_level_clamp = 2});
    check_lods(t, (const float[]){0, 3}, (const float[]){30, 40}, 2, "min_mipmap_level_clamp 2");
    cugl_texture_release(t);
    /* Halfway between levels, linear mipmap filtering averages them. */
    t = texture_over(&r, &(cugl_texture_desc){.normalized_coords = true,
                                              .mipmap_filter_mode = CUGL_FILTER_LINEAR,
                                              .disable_trilinear_optimization = true});
    check_lods(t, (const float[]){0.5f, 1.5f, 2.5f, 2.0f}, (const float[]){15, 25, 35, 30}, 4,
               "linear mipmap filtering");
    cugl_texture_release(t);
    cugl_mipmapped_array_release(m);
}

/* ---- buffer resources ------------------------------------------------------ */

static void linear_resources_fetch_elements(void **state)
{
    (void)state;
    enum { N = 256 };
    cugl_buffer *b = new_buffer(N * 4 + props.texture_alignment + 64);
    size_t off = aligned_offset(b);
    float values[N];
    for (int i = 0; i < N; i++)
        values[i] = 3.0f * (float)i + 1.0f;
    gpu_write(cugl_buffer_handle(b) + off, values, sizeof values);

    cugl_texture *t = texture_over(&(cugl_resource_desc){.kind = CUGL_RESOURCE_LINEAR,
                                                         .buffer = b,
                                                         .format = CUGL_FORMAT_F32,
                                                         .offset = off,
                                                         .size_bytes = sizeof values},
                                   NULL);
    coord coords[N];
    float got[N];
    for (int i = 0; i < N; i++)
        coords[i] = (coord){(float)i, 0, 0, 0};
    sample(t, SAMPLE_FETCH, coords, N, 1, got);
    expect_close(got, values, N, 0.0f, "linear f32, tex1Dfetch", coords, 1);
    cugl_texture_release(t);

    /* Four channels: element i is values[4i .. 4i + 3]. */
    t = texture_over(&(cugl_resource_desc){.kind = CUGL_RESOURCE_LINEAR, .buffer = b,
                                           .format = CUGL_FORMAT_F32, .num_channels = 4,
                                           .offset = off, .size_bytes = sizeof values},
                     NULL);
    sample(t, SAMPLE_FETCH, coords, N / 4, 4, got);
    expect_close(got, values, N, 0.0f, "linear f32 x4, tex1Dfetch", coords, 4);
    cugl_texture_release(t);

    /* Size 0: the rest of the buffer; 0 channels: one. */
    t = texture_over(&(cugl_resource_desc){.kind = CUGL_RESOURCE_LINEAR, .buffer = b,
                                           .format = CUGL_FORMAT_U8, .offset = off},
                     NULL);
    cugl_resource_desc back;
    assert_ok(cugl_texture_get_resource(t, &back));
    assert_int_equal(back.size_bytes, cugl_buffer_size(b) - off);
    assert_int_equal(back.num_channels, 1);
    assert_ptr_equal(back.buffer, b);
    /* The buffer stays alive in the texture after the caller lets go. */
    cugl_buffer_release(b);
    cugl_texture_release(t);
}

typedef struct refusal {
    const char *what;
    cugl_resource_desc resource;
    cugl_texture_desc options;
    cugl_status status;
    char message[512];
} refusal;

static void expect_refusals(const refusal *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        cugl_texture *t = (cugl_texture *)&props;
        cugl_clear_error();
        cugl_status st = cugl_texture_create(&t, dev, &cases[i].resource, &cases[i].options);
        if (st != cases[i].status || strcmp(cugl_last_error(), cases[i].message) != 0)
            fail_msg("%s: %s \"%s\", expected %s \"%s\"", cases[i].what, cugl_status_name(st),
                     cugl_last_error(), cugl_status_name(cases[i].status), cases[i].message);
        assert_null(t);
    }
}

static void linear_resources_are_checked(void **state)
{
    (void)state;
    cugl_buffer *b = new_buffer(1024 + props.texture_alignment);
    size_t off = aligned_offset(b);
    size_t avail = cugl_buffer_size(b) - off;
    cugl_buffer *closed = new_buffer(1024);
    assert_ok(cugl_buffer_close(closed, NULL));
    unsigned char *plain = malloc(1024);
    assert_non_null(plain);
    cugl_buffer *host_only = NULL;
    assert_ok(cugl_buffer_from_handle(&host_only, (uint64_t)(uintptr_t)plain, 1024, NULL));

#define LIN(...) {.kind = CUGL_RESOURCE_LINEAR, .format = CUGL_FORMAT_F32, __VA_ARGS__}
    refusal cases[] = {
        {"larger than the buffer", LIN(.buffer = b, .offset = off, .size_bytes = avail + 4),
         {.filter_mode = CUGL_FILTER_POINT}, CUGL_ERROR_INVALID_ARGUMENT, ""},
        {"less than an element", LIN(.buffer = b, .offset = off, .size_bytes = 2),
         {.filter_mode = CUGL_FILTER_POINT}, CUGL_ERROR_INVALID_ARGUMENT,
         "cugl_texture_create: resource.size_bytes 2 is less than one element (4 bytes: 1 x "
         "f32)"},
        {"not whole elements", LIN(.buffer = b, .offset = off, .size_bytes = 6),
         {.filter_mode = CUGL_FILTER_POINT}, CUGL_ERROR_INVALID_ARGUMENT,
         "cugl_texture_create: resource.size_bytes 6 is not a multiple of the element size 4"},
        {"offset beyond the buffer", LIN(.buffer = b, .offset = cugl_buffer_size(b) + 1),
         {.filter_mode = CUGL_FILTER_POINT}, CUGL_ERROR_INVALID_ARGUMENT, ""},
        {"host-only memory", LIN(.buffer = host_only), {.filter_mode = CUGL_FILTER_POINT},
         CUGL_ERROR_INVALID_ARGUMENT,
         "cugl_texture_create: the buffer is host memory the device cannot read; textures need "
         "device, pinned or managed memory"},
        {"a closed buffer", LIN(.buffer = closed), {.filter_mode = CUGL_FILTER_POINT},
         CUGL_ERROR_CLOSED, "cugl_texture_create: the buffer has been closed"},
        {"linear filtering", LIN(.buffer = b, .offset = off), {.filter_mode = CUGL_FILTER_LINEAR},
         CUGL_ERROR_INVALID_ARGUMENT,
         "cugl_texture_create: a linear resource is read with tex1Dfetch, which does not filter; "
         "use CUGL_FILTER_POINT, or a pitch2d or array resource"},
    };
#undef LIN
    snprintf(cases[0].message, sizeof cases[0].message,
             "cugl_texture_create: resource.size_bytes %zu exceeds the buffer's %zu bytes after "
             "offset %zu",
             avail + 4, avail, off);
    snprintf(cases[3].message, sizeof cases[3].message,
             "cugl_texture_create: resource.offset %zu is beyond the buffer's %zu bytes",
             cugl_buffer_size(b) + 1, cugl_buffer_size(b));
    expect_refusals(cases, sizeof cases / sizeof cases[0]);

    if (props.texture_alignment > 4) {
        refusal misaligned = {"misaligned",
                              {.kind = CUGL_RESOURCE_LINEAR, .format = CUGL_FORMAT_F32,
                               .buffer = b, .offset = off + 4, .size_bytes = 64},
                              {.filter_mode = CUGL_FILTER_POINT},
                              CUGL_ERROR_INVALID_ARGUMENT,
                              ""};
        snprintf(misaligned.message, sizeof misaligned.message,
                 "cugl_texture_create: the address 0x%llx (buffer + offset %zu) is not a "
                 "multiple of the device's texture_alignment, %zu bytes",
                 (unsigned long long)(cugl_buffer_handle(b) + off + 4), off + 4,
                 props.texture_alignment);
        expect_refusals(&misaligned, 1);
    } else {
        gpu_not_applicable("texture_alignment is at most 4 bytes");
    }
    cugl_buffer_release(host_only);
    free(plain);
    cugl_buffer_release(closed);
    cugl_buffer_release(b);
}

static size_t round_up(size_t v, size_t to) { return to ? (v + to - 1) / to * to : v; }

static void pitch2d_resources_sample_and_are_checked(void **state)
{
    (void)state;
    enum { PW = 10, PH = 6 };
    size_t pitch = round_up(PW * 4, props.texture_pitch_alignment);
    cugl_buffer *b = new_buffer(pitch * PH + props.texture_alignment);
    size_t off = aligned_offset(b);
    unsigned char *rows = calloc(pitch * PH, 1);
    assert_non_null(rows);
    float tight[PW * PH];
    for (int y = 0; y < PH; y++)
        for (int x = 0; x < PW; x++) {
            float v = 1.0f + (float)x + 10.0f * (float)y;
            tight[y * PW + x] = v;
            memcpy(rows + (size_t)y * pitch + (size_t)x * 4, &v, 4);
        }
    gpu_write(cugl_buffer_handle(b) + off, rows, pitch * PH);
    free(rows);
    const cugl_resource_desc r = {.kind = CUGL_RESOURCE_PITCH2D, .buffer = b,
                                  .format = CUGL_FORMAT_F32, .offset = off,
                                  .width = PW, .height = PH, .pitch_bytes = pitch};
    const image img = {tight, {PW, PH, 1}, 2};
    static const cugl_address_mode clamp[3] = {CUGL_ADDRESS_CLAMP, CUGL_ADDRESS_CLAMP,
                                               CUGL_ADDRESS_CLAMP};
    for (int linear = 0; linear <= 1; linear++) {
        cugl_texture *t = texture_over(
            &r, &(cugl_texture_desc){.filter_mode = linear ? CUGL_FILTER_LINEAR
                                                           : CUGL_FILTER_POINT});
        coord coords[PW * PH];
        float want[PW * PH], got[PW * PH];
        unsigned n = 0;
        for (int y = 0; y < PH; y++)
            for (int x = 0; x < PW; x++, n++) {
                /* Linear: between texels (weights 0.5); point: a quarter in. */
                float px = linear ? (float)x + 1.0f : (float)x + 0.25f;
                float py = linear ? (float)y + 0.5f : (float)y + 0.75f;
                coords[n] = (coord){px, py, 0, 0};
                want[n] = model_sample(&img, (const float[3]){px, py, 0}, linear, clamp, 0);
            }
        sample(t, SAMPLE_2D, coords, n, 1, got);
        expect_close(got, want, n, TOLERANCE, linear ? "pitch2d linear" : "pitch2d point",
                     coords, 1);
        cugl_texture_release(t);
    }

    refusal cases[3];
    size_t ncases = 0;
    cugl_resource_desc big = r;
    big.height = PH + props.texture_alignment / pitch + 2;
    cases[ncases] = (refusal){"beyond the buffer", big, {.filter_mode = CUGL_FILTER_POINT},
                              CUGL_ERROR_INVALID_ARGUMENT, ""};
    snprintf(cases[ncases++].message, sizeof cases[0].message,
             "cugl_texture_create: resource.pitch_bytes %zu x height %zu exceeds the buffer's "
             "%zu bytes after offset %zu",
             pitch, big.height, cugl_buffer_size(b) - off, off);
    if (props.texture_pitch_alignment > 4) {
        cugl_resource_desc odd = r;
        odd.pitch_bytes = pitch + 4;
        odd.height = PH - 1;
        cases[ncases] = (refusal){"pitch not aligned", odd, {.filter_mode = CUGL_FILTER_POINT},
                                  CUGL_ERROR_INVALID_ARGUMENT, ""};
        snprintf(cases[ncases++].message, sizeof cases[0].message,
                 "cugl_texture_create: resource.pitch_bytes %zu is not a multiple of the "
                 "device's texture_pitch_alignment, %zu bytes",
                 pitch + 4, props.texture_pitch_alignment);
    } else {
        gpu_not_applicable("texture_pitch_alignment is at most 4 bytes");
    }
    cases[ncases++] = (refusal){
        "u8 read as element type, linear filtering",
        {.kind = CUGL_RESOURCE_PITCH2D, .buffer = b, .format = CUGL_FORMAT_U8, .offset = off,
         .width = PW, .height = PH, .pitch_bytes = pitch},
        {.filter_mode = CUGL_FILTER_LINEAR},
        CUGL_ERROR_INVALID_ARGUMENT,
        "cugl_texture_create: linear filtering of u8 data read as element type is not done by "
        "the hardware; read it as CUGL_READ_NORMALIZED_FLOAT or use a float format"};
    expect_refusals(cases, ncases);

    /* Wider than the device allows: a buffer large enough that only the limit refuses. */
    size_t wide = (size_t)props.max_texture_2d_linear[0] + 1;
    size_t wide_pitch = round_up(wide * 4, props.texture_pitch_alignment);
    cugl_buffer *wb = new_buffer(wide_pitch + props.texture_alignment);
    size_t woff = aligned_offset(wb);
    refusal too_wide = {"wider than the device allows",
                        {.kind = CUGL_RESOURCE_PITCH2D, .buffer = wb,
                         .format = CUGL_FORMAT_F32, .offset = woff, .width = wide,
                         .height = 1, .pitch_bytes = wide_pitch},
                        {.filter_mode = CUGL_FILTER_POINT},
                        CUGL_ERROR_INVALID_ARGUMENT,
                        ""};
    snprintf(too_wide.message, sizeof too_wide.message,
             "cugl_texture_create: a pitch2d image of %zux1 elements, pitch %zu bytes, exceeds "
             "the limits of %s: %dx%d, pitch %d bytes",
             wide, wide_pitch, props.name, props.max_texture_2d_linear[0],
             props.max_texture_2d_linear[1], props.max_texture_2d_linear[2]);
    expect_refusals(&too_wide, 1);
    cugl_buffer_release(wb);
    cugl_buffer_release(b);
}

/* ---- what the hardware would get wrong, with arrays and mipmaps --------- */

static void silent_mistakes_are_refused(void **state)
{
    (void)state;
    cugl_array *bytes = new_array(
        &(cugl_array_desc){.ndim = 2, .shape = {4, 4}, .format = CUGL_FORMAT_U8});
    cugl_array *words = new_array(
        &(cugl_array_desc){.ndim = 2, .shape = {4, 4}, .format = CUGL_FORMAT_I32});
    cugl_mipmapped_array *mip = constant_levels(CUGL_FORMAT_F32);
    cugl_mipmapped_array *umip = constant_levels(CUGL_FORMAT_U16);
#define ARR(a) {.kind = CUGL_RESOURCE_ARRAY, .array = (a)}
#define MIPR(m) {.kind = CUGL_RESOURCE_MIPMAPPED_ARRAY, .mipmapped_array = (m)}
    const refusal cases[] = {
        {"u8 read as element type, linear", ARR(bytes), {.filter_mode = CUGL_FILTER_LINEAR},
         CUGL_ERROR_INVALID_ARGUMENT,
         "cugl_texture_create: linear filtering of u8 data read as element type is not done by "
         "the hardware; read it as CUGL_READ_NORMALIZED_FLOAT or use a float format"},
        {"i32 read as normalized float", ARR(words),
         {.read_mode = CUGL_READ_NORMALIZED_FLOAT}, CUGL_ERROR_INVALID_ARGUMENT,
         "cugl_texture_create: CUGL_READ_NORMALIZED_FLOAT converts 8- and 16-bit integers "
         "only; i32 data would be returned unconverted"},
        {"mipmap without normalized coordinates", MIPR(mip), {.filter_mode = CUGL_FILTER_POINT},
         CUGL_ERROR_INVALID_ARGUMENT,
         "cugl_texture_create: a mipmapped array is sampled with normalized coordinates; set "
         "normalized_coords"},
        {"u16 mipmap read as element type, linear between levels", MIPR(umip),
         {.normalized_coords = true, .mipmap_filter_mode = CUGL_FILTER_LINEAR},
         CUGL_ERROR_INVALID_ARGUMENT,
         "cugl_texture_create: linear mipmap filtering of u16 data read as element type is not "
         "done by the hardware; read it as CUGL_READ_NORMALIZED_FLOAT or use a float format"},
        {"min clamp past the last level", MIPR(mip),
         {.normalized_coords = true, .min_mipmap_level_clamp = 5}, CUGL_ERROR_INVALID_ARGUMENT,
         "cugl_texture_create: min_mipmap_level_clamp 5 exceeds the last level, 3"},
        {"seamless filtering of a 2D array", ARR(bytes),
         {.seamless_cubemap = true, .read_mode = CUGL_READ_NORMALIZED_FLOAT},
         CUGL_ERROR_INVALID_ARGUMENT,
         "cugl_texture_create: seamless_cubemap needs a cube-map array or mipmapped array, and "
         "the resource is not a cube map"},
    };
#undef ARR
#undef MIPR
    expect_refusals(cases, sizeof cases / sizeof cases[0]);
    /* The allowed neighbours of those cases. */
    cugl_texture *t = texture_of(bytes, &(cugl_texture_desc){
                                            .filter_mode = CUGL_FILTER_LINEAR,
                                            .read_mode = CUGL_READ_NORMALIZED_FLOAT});
    cugl_texture_release(t);
    t = texture_over(&(cugl_resource_desc){.kind = CUGL_RESOURCE_MIPMAPPED_ARRAY,
                                           .mipmapped_array = umip},
                     &(cugl_texture_desc){.normalized_coords = true,
                                          .mipmap_filter_mode = CUGL_FILTER_LINEAR,
                                          .read_mode = CUGL_READ_NORMALIZED_FLOAT});
    cugl_texture_release(t);
    cugl_mipmapped_array_release(umip);
    cugl_mipmapped_array_release(mip);
    cugl_array_release(words);
    cugl_array_release(bytes);
}

/* ---- lifetime ---------------------------------------------------------------- */

static void texture_keeps_its_array_alive(void **state)
{
    (void)state;
    float texels[16];
    for (int i = 0; i < 16; i++)
        texels[i] = (float)i * 2.0f;
    cugl_array *a =
        new_array(&(cugl_array_desc){.ndim = 2, .shape = {4, 4}, .format = CUGL_FORMAT_F32});
    upload(a, texels);
    cugl_texture *t = texture_of(a, NULL);
    cugl_array_release(a); /* the texture holds the last reference now */
    coord coords[16];
    float got[16];
    for (int i = 0; i < 16; i++)
        coords[i] = (coord){(float)(i % 4) + 0.5f, (float)(i / 4) + 0.5f, 0, 0};
    sample(t, SAMPLE_2D, coords, 16, 1, got);
    expect_close(got, texels, 16, 0.0f, "sampled after the array was released", coords, 1);
    cugl_resource_desc back;
    assert_ok(cugl_texture_get_resource(t, &back));
    assert_int_equal(back.kind, CUGL_RESOURCE_ARRAY);
    assert_int_equal(cugl_array_size_bytes(back.array), sizeof texels);
    cugl_texture_release(t); /* and frees the array */
}

static void closed_textures_and_surfaces(void **state)
{
    (void)state;
    cugl_array *a = new_array(&(cugl_array_desc){.ndim = 2, .shape = {4, 4},
                                                 .format = CUGL_FORMAT_F32,
                                                 .surface_load_store = true});
    const cugl_resource_desc r = {.kind = CUGL_RESOURCE_ARRAY, .array = a};
    cugl_texture *t = texture_of(a, NULL);
    cugl_texture_close(t);
    cugl_texture_close(t); /* idempotent */
    assert_true(cugl_texture_is_closed(t));
    assert_int_equal(cugl_texture_handle(t), 0);
    cugl_texture_desc d;
    assert_status(cugl_texture_get_desc(t, &d), CUGL_ERROR_CLOSED);
    expect_message("cugl_texture_get_desc: the texture has been closed");
    cugl_texture_release(t);

    /* Closing the array under a texture and a surface closes them too. */
    t = texture_of(a, NULL);
    cugl_surface *s = NULL;
    assert_ok(cugl_surface_create(&s, dev, &r));
    cugl_array_close(a);
    assert_true(cugl_texture_is_closed(t));
    assert_int_equal(cugl_texture_handle(t), 0);
    cugl_resource_desc back;
    assert_status(cugl_texture_get_resource(t, &back), CUGL_ERROR_CLOSED);
    expect_message("cugl_texture_get_resource: the texture's array has been closed");
    assert_true(cugl_surface_is_closed(s));
    assert_int_equal(cugl_surface_handle(s), 0);
    cugl_texture *refused = (cugl_texture *)&props;
    assert_status(cugl_texture_create(&refused, dev, &r, NULL), CUGL_ERROR_CLOSED);
    expect_message("cugl_texture_create: the array has been closed");
    assert_null(refused);
    cugl_surface_close(s);
    cugl_surface_close(s);
    assert_null(cugl_surface_array(s));
    cugl_surface_release(s);
    cugl_texture_release(t);
    cugl_array_release(a);

    /* A closed mipmapped array and a closed buffer, likewise. */
    cugl_mipmapped_array *m = constant_levels(CUGL_FORMAT_F32);
    t = texture_over(&(cugl_resource_desc){.kind = CUGL_RESOURCE_MIPMAPPED_ARRAY,
                                           .mipmapped_array = m},
                     &(cugl_texture_desc){.normalized_coords = true});
    cugl_mipmapped_array_close(m);
    assert_true(cugl_texture_is_closed(t));
    cugl_texture_release(t);
    cugl_mipmapped_array_release(m);
    cugl_buffer *b = new_buffer(1024 + props.texture_alignment);
    t = texture_over(&(cugl_resource_desc){.kind = CUGL_RESOURCE_LINEAR, .buffer = b,
                                           .format = CUGL_FORMAT_F32,
                                           .offset = aligned_offset(b), .size_bytes = 1024},
                     NULL);
    assert_ok(cugl_buffer_close(b, NULL));
    assert_true(cugl_texture_is_closed(t));
    assert_status(cugl_texture_get_desc(t, &d), CUGL_ERROR_CLOSED);
    expect_message("cugl_texture_get_desc: the texture's buffer has been closed");
    cugl_texture_release(t);
    cugl_buffer_release(b);
}


int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sampling_2d_every_address_mode_and_filter),
        cmocka_unit_test(sampling_1d_and_3d),
        cmocka_unit_test(sampling_four_channels),
        cmocka_unit_test(normalized_float_read_of_u8),
        cmocka_unit_test(sampling_layers_and_cube_faces),
        cmocka_unit_test(sampling_mipmap_levels),
        cmocka_unit_test(mipmap_clamps_and_linear_mipmap_filter),
        cmocka_unit_test(linear_resources_fetch_elements),
        cmocka_unit_test(linear_resources_are_checked),
        cmocka_unit_test(pitch2d_resources_sample_and_are_checked),
        cmocka_unit_test(silent_mistakes_are_refused),
        cmocka_unit_test(texture_keeps_its_array_alive),
        cmocka_unit_test(closed_textures_and_surfaces),
    };
    return texture_test_run(tests);
}
