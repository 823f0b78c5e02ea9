/*
 * Graphics interop on the GPU: GL objects of a headless EGL context on the
 * CUDA device, registered, mapped, written by CUDA and read back through GL
 * exactly (and the other way round), for every registrable format and
 * every target; the state machine and its errors; batched maps; map flags
 * between frames; 10,000 map/unmap cycles without growth in device memory.
 */
#include "test_gl.h"
#include <cugl/app_shared.h>
#include <glad/egl.h>

#include "gpu_bytes.h"
#include "gpu_kernels.h"

extern const unsigned char cugl_texture_kernels_fatbin[];
extern const size_t cugl_texture_kernels_fatbin_size;

static cugl_device *dev;
static cugl_stream *stream;
static cugl_app_context *ctx;

static void fail_gl(const char *what)
{
    GLenum e = glGetError();
    if (e != GL_NO_ERROR)
        fail_msg("%s: GL error 0x%x", what, e);
}

/* ---- Helpers: GL objects with immutable storage ------------------------- */

static GLuint gl_buffer(size_t size, const void *data)
{
    GLuint b = 0;
    glCreateBuffers(1, &b);
    glNamedBufferStorage(b, (GLsizeiptr)size, data, GL_DYNAMIC_STORAGE_BIT);
    fail_gl("glNamedBufferStorage");
    return b;
}

static cugl_graphics_resource *reg_buffer(GLuint name, unsigned flags)
{
    cugl_graphics_resource *r = NULL;
    assert_ok(cugl_graphics_resource_from_gl_buffer(&r, dev, name, flags));
    assert_non_null(r);
    return r;
}

static void assert_bytes_equal(const uint8_t *got, const uint8_t *want, size_t n,
                               const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i])
            fail_msg("%s: byte %zu is 0x%02x, expected 0x%02x", what, i, got[i], want[i]);
}

/* ---- Buffers ------------------------------------------------------------ */

static void cuda_writes_gl_reads_buffer(void **state)
{
    (void)state;
    enum { N = 1 << 20 };
    GLuint name = gl_buffer(N, NULL);
    cugl_graphics_resource *r = reg_buffer(name, CUGL_GRAPHICS_WRITE_DISCARD);
    assert_true(cugl_graphics_resource_is_buffer(r));
    assert_int_equal(cugl_graphics_resource_gl_name(r), name);
    assert_non_null(cugl_graphics_resource_handle(r));

    uint8_t *want = malloc(N), *got = malloc(N);
    assert_non_null(want);
    assert_non_null(got);
    write_pattern(want, N, 1);
    cugl_buffer *host = NULL;
    assert_ok(cugl_buffer_from_handle(&host, (uint64_t)(uintptr_t)want, N, NULL));

    cugl_buffer *mapped = NULL;
    assert_ok(cugl_graphics_resource_map(&mapped, r, stream));
    assert_true(cugl_graphics_resource_is_mapped(r));
    assert_int_equal(cugl_buffer_size(mapped), N);
    assert_true(cugl_buffer_handle(mapped) != 0);
    assert_true(cugl_buffer_is_device_accessible(mapped));
    assert_int_equal(cugl_buffer_device_id(mapped), 0);
    assert_null(cugl_buffer_memory_resource(mapped));
    assert_ok(cugl_buffer_copy_from(mapped, host, stream));
    /* Closing the mapped buffer unmaps, ordered after the copy. */
    assert_ok(cugl_buffer_close(mapped, NULL));
    assert_false(cugl_graphics_resource_is_mapped(r));
    assert_int_equal(cugl_buffer_handle(mapped), 0);
    cugl_buffer_release(mapped);

    glGetNamedBufferSubData(name, 0, N, got);
    fail_gl("glGetNamedBufferSubData");
    assert_bytes_equal(got, want, N, "GL's view of what CUDA wrote");

    cugl_buffer_release(host);
    cugl_graphics_resource_release(r);
    glDeleteBuffers(1, &name);
    free(want);
    free(got);
}

static void gl_writes_cuda_reads_buffer(void **state)
{
    (void)state;
    enum { N = 65536 + 12 };
    uint8_t *want = malloc(N), *got = calloc(1, N);
    assert_non_null(want);
    assert_non_null(got);
    write_pattern(want, N, 2);
    GLuint name = gl_buffer(N, NULL);
    cugl_graphics_resource *r = reg_buffer(name, CUGL_GRAPHICS_READ_ONLY);
    assert_int_equal(cugl_graphics_resource_map_flags(r), CUGL_GRAPHICS_READ_ONLY);
    glNamedBufferSubData(name, 0, N, want); /* GL writes before the map */
    fail_gl("glNamedBufferSubData");

    cugl_buffer *host = NULL;
    assert_ok(cugl_buffer_from_handle(&host, (uint64_t)(uintptr_t)got, N, NULL));
    cugl_buffer *mapped = NULL;
    assert_ok(cugl_graphics_resource_map(&mapped, r, stream));
    assert_ok(cugl_buffer_copy_to(&host, mapped, stream));
    assert_ok(cugl_graphics_resource_unmap(r, NULL));
    assert_ok(cugl_stream_sync(stream));
    assert_bytes_equal(got, want, N, "CUDA's view of what GL wrote");
    /* The buffer that map returned is closed by the unmap. */
    assert_true(cugl_buffer_is_closed(mapped));
    assert_int_equal(cugl_buffer_handle(mapped), 0);
    assert_int_equal(cugl_buffer_size(mapped), 0);
    assert_status(cugl_buffer_fill(mapped, &(uint8_t){1}, 1, stream), CUGL_ERROR_CLOSED);
    cugl_buffer_release(mapped);

    cugl_buffer_release(host);
    cugl_graphics_resource_release(r);
    glDeleteBuffers(1, &name);
    free(want);
    free(got);
}

/* ---- Images --------------------------------------------------------------- */

typedef struct gl_format {
    GLenum internal, format, type;
    const char *name;
    unsigned bytes;   /* per texel */
    bool is_float;    /* 32F: bytes must be finite floats to survive */
    bool is_half;
} gl_format;

#define F(internal, format, type, bytes, f32, f16) {internal, format, type, #internal, bytes, f32, f16}
static const gl_format formats[] = {
    F(GL_R8, GL_RED, GL_UNSIGNED_BYTE, 1, 0, 0),
    F(GL_RG8, GL_RG, GL_UNSIGNED_BYTE, 2, 0, 0),
    F(GL_RGBA8, GL_RGBA, GL_UNSIGNED_BYTE, 4, 0, 0),
    F(GL_R16, GL_RED, GL_UNSIGNED_SHORT, 2, 0, 0),
    F(GL_RG16, GL_RG, GL_UNSIGNED_SHORT, 4, 0, 0),
    F(GL_RGBA16, GL_RGBA, GL_UNSIGNED_SHORT, 8, 0, 0),
    F(GL_R16F, GL_RED, GL_HALF_FLOAT, 2, 0, 1),
    F(GL_RG16F, GL_RG, GL_HALF_FLOAT, 4, 0, 1),
    F(GL_RGBA16F, GL_RGBA, GL_HALF_FLOAT, 8, 0, 1),
    F(GL_R32F, GL_RED, GL_FLOAT, 4, 1, 0),
    F(GL_RG32F, GL_RG, GL_FLOAT, 8, 1, 0),
    F(GL_RGBA32F, GL_RGBA, GL_FLOAT, 16, 1, 0),
    F(GL_R8UI, GL_RED_INTEGER, GL_UNSIGNED_BYTE, 1, 0, 0),
    F(GL_RG8UI, GL_RG_INTEGER, GL_UNSIGNED_BYTE, 2, 0, 0),
    F(GL_RGBA8UI, GL_RGBA_INTEGER, GL_UNSIGNED_BYTE, 4, 0, 0),
    F(GL_R16UI, GL_RED_INTEGER, GL_UNSIGNED_SHORT, 2, 0, 0),
    F(GL_RG16UI, GL_RG_INTEGER, GL_UNSIGNED_SHORT, 4, 0, 0),
    F(GL_RGBA16UI, GL_RGBA_INTEGER, GL_UNSIGNED_SHORT, 8, 0, 0),
    F(GL_R32UI, GL_RED_INTEGER, GL_UNSIGNED_INT, 4, 0, 0),
    F(GL_RG32UI, GL_RG_INTEGER, GL_UNSIGNED_INT, 8, 0, 0),
    F(GL_RGBA32UI, GL_RGBA_INTEGER, GL_UNSIGNED_INT, 16, 0, 0),
    F(GL_R8I, GL_RED_INTEGER, GL_BYTE, 1, 0, 0),
    F(GL_RG8I, GL_RG_INTEGER, GL_BYTE, 2, 0, 0),
    F(GL_RGBA8I, GL_RGBA_INTEGER, GL_BYTE, 4, 0, 0),
    F(GL_R16I, GL_RED_INTEGER, GL_SHORT, 2, 0, 0),
    F(GL_RG16I, GL_RG_INTEGER, GL_SHORT, 4, 0, 0),
    F(GL_RGBA16I, GL_RGBA_INTEGER, GL_SHORT, 8, 0, 0),
    F(GL_R32I, GL_RED_INTEGER, GL_INT, 4, 0, 0),
    F(GL_RG32I, GL_RG_INTEGER, GL_INT, 8, 0, 0),
    F(GL_RGBA32I, GL_RGBA_INTEGER, GL_INT, 16, 0, 0),
};
#undef F

/* Texel bytes that every format keeps exactly: finite floats and halves. */
static void texels(uint8_t *p, size_t n, const gl_format *f, unsigned seed)
{
    write_pattern(p, n, seed);
    if (f->is_float) {
        for (size_t i = 0; i + 4 <= n; i += 4) {
            float v = (float)(p[i] | p[i + 1] << 8) / 64.0f - 300.0f;
            memcpy(p + i, &v, 4);
        }
    } else if (f->is_half) {
        /* Exponent field below 31: no infinities or NaNs. */
        for (size_t i = 1; i < n; i += 2)
            p[i] = (uint8_t)(p[i] & 0xBB);
    }
}

/* CUDA writes a mapped 2-D image of `f`; GL reads it back. */
static void write_image_2d(GLenum target, GLuint tex, const gl_format *f, int w, int h,
                           unsigned flags)
{
    size_t n = (size_t)w * h * f->bytes;
    uint8_t *want = malloc(n), *got = malloc(n);
    assert_non_null(want);
    assert_non_null(got);
    texels(want, n, f, (unsigned)f->internal);

    cugl_graphics_resource *r = NULL;
    cugl_status st = cugl_graphics_resource_from_gl_image(&r, dev, tex, target, flags);
    if (st != CUGL_OK)
        fail_msg("%s: registration failed: %s", f->name, cugl_last_error());
    cugl_array *a = NULL;
    assert_ok(cugl_graphics_resource_map_array(&a, r, stream, 0, 0));
    size_t shape[3];
    cugl_array_shape(a, shape);
    assert_int_equal(shape[0], (size_t)w);
    assert_int_equal(shape[1], (size_t)h);
    assert_int_equal(cugl_array_element_size(a), f->bytes);
    assert_ok(cugl_array_copy_from_host(a, want, n, stream));
    cugl_array_release(a); /* the last reference: closes, which unmaps */
    assert_false(cugl_graphics_resource_is_mapped(r));

    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    if (target == CUGL_GL_RENDERBUFFER) {
        GLuint fbo = 0;
        glCreateFramebuffers(1, &fbo);
        glNamedFramebufferRenderbuffer(fbo, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, tex);
        glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo);
        glReadBuffer(GL_COLOR_ATTACHMENT0);
        glReadPixels(0, 0, w, h, f->format, f->type, got);
        glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
        glDeleteFramebuffers(1, &fbo);
    } else {
        glGetTextureImage(tex, 0, f->format, f->type, (GLsizei)n, got);
    }
    fail_gl(f->name);
    char what[96];
    snprintf(what, sizeof what, "%s %s written by CUDA, read by GL", f->name,
             target == CUGL_GL_RENDERBUFFER ? "renderbuffer" : "texture");
    assert_bytes_equal(got, want, n, what);
    cugl_graphics_resource_release(r);
    free(want);
    free(got);
}

static void every_format_2d(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        const gl_format *f = &formats[i];
        GLuint tex = 0;
        glCreateTextures(GL_TEXTURE_2D, 1, &tex);
        glTextureStorage2D(tex, 1, f->internal, 37, 21);
        fail_gl(f->name);
        write_image_2d(CUGL_GL_TEXTURE_2D, tex, f, 37, 21, CUGL_GRAPHICS_NONE);
        glDeleteTextures(1, &tex);
    }
}

/* The driver registers GL_RGB8 and GL_SRGB8_ALPHA8 too, as graphics.h
 * says: their arrays are four unsigned bytes a texel. */
static void rgb8_and_srgb8_alpha8_register(void **state)
{
    (void)state;
    const GLenum internal[] = {GL_RGB8, GL_SRGB8_ALPHA8};
    for (int i = 0; i < 2; i++) {
        GLuint tex = 0;
        glCreateTextures(GL_TEXTURE_2D, 1, &tex);
        glTextureStorage2D(tex, 1, internal[i], 16, 8);
        fail_gl("glTextureStorage2D");
        cugl_graphics_resource *r = NULL;
        assert_ok(cugl_graphics_resource_from_gl_image(&r, dev, tex, CUGL_GL_TEXTURE_2D,
                                                        CUGL_GRAPHICS_NONE));
        cugl_array *a = NULL;
        assert_ok(cugl_graphics_resource_map_array(&a, r, stream, 0, 0));
        assert_int_equal(cugl_array_format(a), CUGL_FORMAT_U8);
        assert_int_equal(cugl_array_num_channels(a), 4);
        size_t shape[3];
        cugl_array_shape(a, shape);
        assert_int_equal(shape[0], 16);
        assert_int_equal(shape[1], 8);
        cugl_array_release(a); /* the last reference to the mapping's array unmaps */
        assert_false(cugl_graphics_resource_is_mapped(r));
        assert_ok(cugl_graphics_resource_close(r, stream));
        cugl_graphics_resource_release(r);
        glDeleteTextures(1, &tex);
    }
}

static void rectangle_and_renderbuffer(void **state)
{
    (void)state;
    const gl_format *rgba8 = &formats[2], *r32f = &formats[9];
    GLuint tex = 0;
    glCreateTextures(GL_TEXTURE_RECTANGLE, 1, &tex);
    glTextureStorage2D(tex, 1, GL_RGBA8, 50, 30);
    write_image_2d(CUGL_GL_TEXTURE_RECTANGLE, tex, rgba8, 50, 30, CUGL_GRAPHICS_NONE);
    glDeleteTextures(1, &tex);

    const gl_format *rb_formats[] = {rgba8, r32f};
    for (int i = 0; i < 2; i++) {
        GLuint rb = 0;
        glCreateRenderbuffers(1, &rb);
        glNamedRenderbufferStorage(rb, rb_formats[i]->internal, 33, 17);
        fail_gl("glNamedRenderbufferStorage");
        write_image_2d(CUGL_GL_RENDERBUFFER, rb, rb_formats[i], 33, 17,
                       CUGL_GRAPHICS_WRITE_DISCARD);
        glDeleteRenderbuffers(1, &rb);
    }
}

static void three_d_texture(void **state)
{
    (void)state;
    enum { W = 19, H = 11, D = 7 };
    size_t n = (size_t)W * H * D * 4;
    uint8_t *want = malloc(n), *got = malloc(n);
    assert_non_null(want);
    assert_non_null(got);
    write_pattern(want, n, 3);
    GLuint tex = 0;
    glCreateTextures(GL_TEXTURE_3D, 1, &tex);
    glTextureStorage3D(tex, 1, GL_RGBA8, W, H, D);
    cugl_graphics_resource *r = NULL;
    assert_ok(cugl_graphics_resource_from_gl_image(&r, dev, tex, CUGL_GL_TEXTURE_3D,
                                                   CUGL_GRAPHICS_NONE));
    cugl_array *a = NULL;
    assert_ok(cugl_graphics_resource_map_array(&a, r, stream, 0, 0));
    assert_int_equal(cugl_array_ndim(a), 3);
    assert_ok(cugl_array_copy_from_host(a, want, n, stream));
    cugl_array_close(a); /* unmaps */
    assert_false(cugl_graphics_resource_is_mapped(r));
    cugl_array_release(a);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glGetTextureImage(tex, 0, GL_RGBA, GL_UNSIGNED_BYTE, (GLsizei)n, got);
    fail_gl("glGetTextureImage 3D");
    assert_bytes_equal(got, want, n, "3-D texture written by CUDA");
    cugl_graphics_resource_release(r);
    glDeleteTextures(1, &tex);
    free(want);
    free(got);
}

/* Layers of a 2-D array texture and faces of a cube map: several arrays of
 * one mapping, each written by CUDA; all closed by one unmap. */
static void layers_and_cube_faces(void **state)
{
    (void)state;
    enum { W = 16, H = 16, L = 3 };
    const size_t layer_bytes = (size_t)W * H * 4;
    struct {
        GLenum gl_target;
        uint32_t target;
        int layers;
    } cases[] = {
        {GL_TEXTURE_2D_ARRAY, CUGL_GL_TEXTURE_2D_ARRAY, L},
        {GL_TEXTURE_CUBE_MAP, CUGL_GL_TEXTURE_CUBE_MAP, 6},
    };
    uint8_t *want = malloc(layer_bytes * 6), *got = malloc(layer_bytes * 6);
    assert_non_null(want);
    assert_non_null(got);
    for (int c = 0; c < 2; c++) {
        GLuint tex = 0;
        glCreateTextures(cases[c].gl_target, 1, &tex);
        if (cases[c].gl_target == GL_TEXTURE_2D_ARRAY)
            glTextureStorage3D(tex, 1, GL_RGBA8, W, H, L);
        else
            glTextureStorage2D(tex, 1, GL_RGBA8, W, H);
        fail_gl("storage");
        cugl_graphics_resource *r = NULL;
        assert_ok(cugl_graphics_resource_from_gl_image(&r, dev, tex, cases[c].target,
                                                       CUGL_GRAPHICS_NONE));
        assert_int_equal(cugl_graphics_resource_gl_target(r), cases[c].target);
        assert_ok(cugl_graphics_map(&r, 1, stream));
        cugl_array *arrays[6] = {0};
        for (int l = 0; l < cases[c].layers; l++) {
            assert_ok(cugl_graphics_resource_array(&arrays[l], r, (unsigned)l, 0));
            write_pattern(want + l * layer_bytes, layer_bytes, 100u + (unsigned)(c * 10 + l));
            assert_ok(cugl_array_copy_from_host(arrays[l], want + l * layer_bytes,
                                                layer_bytes, stream));
        }
        /* A layer (face) it does not have: refused, the mapping stays. */
        cugl_array *none = NULL;
        assert_status(cugl_graphics_resource_array(&none, r, (unsigned)cases[c].layers, 0),
                      CUGL_ERROR_INVALID_ARGUMENT);
        assert_null(none);
        assert_status(cugl_graphics_resource_array(&none, r, 0, 5), CUGL_ERROR_INVALID_ARGUMENT);
        assert_true(cugl_graphics_resource_is_mapped(r));
        assert_ok(cugl_graphics_unmap(&r, 1, NULL));
        for (int l = 0; l < cases[c].layers; l++) {
            assert_true(cugl_array_is_closed(arrays[l]));
            assert_null(cugl_array_handle(arrays[l]));
            cugl_array_release(arrays[l]);
        }
        glPixelStorei(GL_PACK_ALIGNMENT, 1);
        glGetTextureImage(tex, 0, GL_RGBA, GL_UNSIGNED_BYTE,
                          (GLsizei)(layer_bytes * (size_t)cases[c].layers), got);
        fail_gl("glGetTextureImage");
        assert_bytes_equal(got, want, layer_bytes * (size_t)cases[c].layers,
                           c == 0 ? "2-D array layers written by CUDA"
                                  : "cube map faces written by CUDA");
        cugl_graphics_resource_release(r);
        glDeleteTextures(1, &tex);
    }
    free(want);
    free(got);
}

/* A kernel writes the mapped array through a surface object. */
static void surface_on_a_mapped_texture(void **state)
{
    (void)state;
    enum { W = 45, H = 23 };
    GLuint tex = 0;
    glCreateTextures(GL_TEXTURE_2D, 1, &tex);
    glTextureStorage2D(tex, 1, GL_R32F, W, H);
    cugl_graphics_resource *r = NULL;
    assert_ok(cugl_graphics_resource_from_gl_image(
        &r, dev, tex, CUGL_GL_TEXTURE_2D,
        CUGL_GRAPHICS_SURFACE_LOAD_STORE | CUGL_GRAPHICS_WRITE_DISCARD));
    assert_int_equal(cugl_graphics_resource_flags(r),
                     CUGL_GRAPHICS_SURFACE_LOAD_STORE | CUGL_GRAPHICS_WRITE_DISCARD);
    cugl_array *a = NULL;
    assert_ok(cugl_graphics_resource_map_array(&a, r, stream, 0, 0));
    assert_true(cugl_array_is_surface_load_store(a));
    cugl_surface *s = NULL;
    assert_ok(cugl_surface_create(&s, dev,
                                  &(cugl_resource_desc){.kind = CUGL_RESOURCE_ARRAY, .array = a}));
    uint64_t handle = cugl_surface_handle(s);
    unsigned w = W, h = H;
    float base = 0.5f;
    void *args[] = {&handle, &w, &h, &base};
    cugl_module *m = NULL;
    assert_ok(cugl_module_load_data(&m, dev, cugl_texture_kernels_fatbin,
                                    cugl_texture_kernels_fatbin_size));
    cugl_kernel *k = NULL;
    assert_ok(cugl_module_get_kernel(&k, m, "cugl_surf_write_2d"));
    assert_ok(cugl_launch(stream,
                          &(cugl_launch_config){.grid = {(W + 15) / 16, (H + 15) / 16, 1},
                                                .block = {16, 16, 1}},
                          k, args, 4));
    cugl_surface_release(s);
    cugl_array_release(a); /* unmaps, after the kernel */
    float *got = malloc((size_t)W * H * sizeof *got);
    assert_non_null(got);
    glGetTextureImage(tex, 0, GL_RED, GL_FLOAT, W * H * (GLsizei)sizeof *got, got);
    fail_gl("glGetTextureImage");
    for (unsigned y = 0; y < H; y++)
        for (unsigned x = 0; x < W; x++) {
            float want = (float)x + 1000.0f * (float)y + base;
            if (got[y * W + x] != want)
                fail_msg("texel (%u, %u) is %g, expected %g", x, y, (double)got[y * W + x],
                         (double)want);
        }
    free(got);
    cugl_kernel_release(k);
    cugl_module_release(m);
    cugl_graphics_resource_release(r);
    glDeleteTextures(1, &tex);
}

/* ---- The state machine ---------------------------------------------------- */

static void states_and_errors(void **state)
{
    (void)state;
    GLuint name = gl_buffer(4096, NULL);
    GLuint tex = 0;
    glCreateTextures(GL_TEXTURE_2D, 1, &tex);
    glTextureStorage2D(tex, 1, GL_RGBA8, 8, 8);
    cugl_graphics_resource *r = reg_buffer(name, CUGL_GRAPHICS_NONE);
    cugl_graphics_resource *img = NULL;
    assert_ok(cugl_graphics_resource_from_gl_image(&img, dev, tex, CUGL_GL_TEXTURE_2D, 0));
    cugl_buffer *b = NULL;
    cugl_array *a = NULL;

    /* Registration refusals. */
    cugl_graphics_resource *bad = NULL;
    assert_status(cugl_graphics_resource_from_gl_buffer(&bad, dev, name, 0x10),
                  CUGL_ERROR_INVALID_ARGUMENT);
    assert_error_mentions("unknown flags 0x10");
    assert_status(cugl_graphics_resource_from_gl_buffer(&bad, dev, name,
                                                        CUGL_GRAPHICS_SURFACE_LOAD_STORE),
                  CUGL_ERROR_INVALID_ARGUMENT);
    assert_status(cugl_graphics_resource_from_gl_image(&bad, dev, tex, 0x0DE0 /* 1D */, 0),
                  CUGL_ERROR_INVALID_ARGUMENT);
    assert_error_mentions("target 0xde0 cannot be registered");
    assert_null(bad);

    /* Buffer vs image calls. */
    assert_status(cugl_graphics_resource_map_array(&a, r, stream, 0, 0),
                  CUGL_ERROR_INVALID_ARGUMENT);
    assert_status(cugl_graphics_resource_map(&b, img, stream), CUGL_ERROR_INVALID_ARGUMENT);
    assert_error_mentions("is an image");
    assert_status(cugl_graphics_resource_map(&b, r, NULL), CUGL_ERROR_INVALID_ARGUMENT);

    /* Unmap when not mapped; double map. */
    assert_status(cugl_graphics_resource_unmap(r, NULL), CUGL_ERROR_INVALID_STATE);
    assert_error_mentions("is not mapped");
    assert_status(cugl_graphics_resource_buffer(&b, r), CUGL_ERROR_INVALID_STATE);
    assert_ok(cugl_graphics_resource_map(&b, r, stream));
    cugl_buffer *b2 = NULL;
    assert_status(cugl_graphics_resource_map(&b2, r, stream), CUGL_ERROR_INVALID_STATE);
    assert_error_mentions("already mapped");
    assert_null(b2);
    assert_status(cugl_graphics_resource_set_map_flags(r, CUGL_GRAPHICS_READ_ONLY),
                  CUGL_ERROR_INVALID_STATE);
    /* A second view of the mapping, and an unmap-stream override. */
    assert_ok(cugl_graphics_resource_buffer(&b2, r));
    assert_int_equal(cugl_buffer_handle(b2), cugl_buffer_handle(b));
    cugl_stream *other = NULL;
    assert_ok(cugl_stream_create(&other, dev, NULL));
    assert_ok(cugl_graphics_resource_set_unmap_stream(r, other));
    /* Closing the second view does not unmap; closing the first does. */
    cugl_buffer_release(b2);
    assert_true(cugl_graphics_resource_is_mapped(r));
    cugl_buffer_release(b);
    assert_false(cugl_graphics_resource_is_mapped(r));
    assert_ok(cugl_stream_sync(other));

    /* Close while mapped unmaps first; afterwards everything is refused. */
    assert_ok(cugl_graphics_resource_map(&b, r, stream));
    assert_ok(cugl_graphics_resource_close(r, NULL));
    assert_true(cugl_graphics_resource_is_closed(r));
    assert_false(cugl_graphics_resource_is_mapped(r));
    assert_true(cugl_buffer_is_closed(b));
    assert_int_equal(cugl_buffer_handle(b), 0);
    assert_null(cugl_graphics_resource_handle(r));
    assert_ok(cugl_graphics_resource_close(r, NULL)); /* idempotent */
    assert_status(cugl_graphics_resource_map(&b2, r, stream), CUGL_ERROR_CLOSED);
    assert_error_mentions("has been closed");
    assert_status(cugl_graphics_resource_unmap(r, NULL), CUGL_ERROR_CLOSED);
    assert_status(cugl_graphics_resource_set_map_flags(r, 0), CUGL_ERROR_CLOSED);
    assert_status(cugl_graphics_map(&r, 1, stream), CUGL_ERROR_CLOSED);
    cugl_buffer_release(b);

    /* A layer the image does not have: refused, left unmapped. */
    assert_status(cugl_graphics_resource_map_array(&a, img, stream, 1, 0),
                  CUGL_ERROR_INVALID_ARGUMENT);
    assert_false(cugl_graphics_resource_is_mapped(img));
    assert_status(cugl_graphics_resource_map_array(&a, img, stream, 0, 3),
                  CUGL_ERROR_INVALID_ARGUMENT);
    assert_false(cugl_graphics_resource_is_mapped(img));

    cugl_stream_release(other);
    cugl_graphics_resource_release(r);
    cugl_graphics_resource_release(img);
    glDeleteBuffers(1, &name);
    glDeleteTextures(1, &tex);
}

/* Without a current GL context, registration explains itself. */
static void no_gl_context(void **state)
{
    (void)state;
    GLuint name = gl_buffer(256, NULL);
    EGLDisplay d = eglGetCurrentDisplay();
    assert_true(eglMakeCurrent(d, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT));
    cugl_graphics_resource *r = NULL;
    cugl_status st = cugl_graphics_resource_from_gl_buffer(&r, dev, name, 0);
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", cugl_last_error());
    int ordinals[4], count = -1;
    cugl_status st_devices = cugl_gl_devices(ordinals, 4, &count);
    assert_ok(cugl_app_context_make_current(ctx));
    if (st != CUGL_ERROR_INVALID_STATE)
        fail_msg("registration without a context: %s (%s)", cugl_status_name(st), msg);
    if (!strstr(msg, "no GL context"))
        fail_msg("message: %s", msg);
    assert_null(r);
    assert_int_equal(st_devices, CUGL_ERROR_INVALID_STATE);
    assert_int_equal(count, 0);
    /* With the context current, GL runs on device 0. */
    assert_ok(cugl_gl_devices(ordinals, 4, &count));
    assert_true(count >= 1);
    assert_int_equal(ordinals[0], 0);
    glDeleteBuffers(1, &name);
}

/* ---- Many resources, flags between frames, cycles ------------------------- */

static void many_in_one_call(void **state)
{
    (void)state;
    enum { K = 8, N = 4096 };
    GLuint names[K];
    cugl_graphics_resource *rs[K];
    for (int i = 0; i < K; i++) {
        names[i] = gl_buffer(N, NULL);
        rs[i] = reg_buffer(names[i], CUGL_GRAPHICS_WRITE_DISCARD);
    }
    /* Duplicates and an already mapped one are refused; nothing is mapped. */
    cugl_graphics_resource *dup[2] = {rs[0], rs[0]};
    assert_status(cugl_graphics_map(dup, 2, stream), CUGL_ERROR_INVALID_ARGUMENT);
    assert_error_mentions("are the same resource");
    assert_status(cugl_graphics_map(rs, 0, stream), CUGL_ERROR_INVALID_ARGUMENT);
    assert_ok(cugl_graphics_map(rs + 3, 1, stream));
    assert_status(cugl_graphics_map(rs, K, stream), CUGL_ERROR_INVALID_STATE);
    assert_error_mentions("resources[3]");
    assert_false(cugl_graphics_resource_is_mapped(rs[0]));
    assert_ok(cugl_graphics_resource_unmap(rs[3], NULL));
    assert_status(cugl_graphics_unmap(rs, K, NULL), CUGL_ERROR_INVALID_STATE);

    assert_ok(cugl_graphics_map(rs, K, stream));
    for (int i = 0; i < K; i++) {
        assert_true(cugl_graphics_resource_is_mapped(rs[i]));
        cugl_buffer *b = NULL;
        assert_ok(cugl_graphics_resource_buffer(&b, rs[i]));
        uint32_t v = 0x01010101u * (uint32_t)(i + 1);
        assert_ok(cugl_buffer_fill(b, &v, 4, stream));
        cugl_buffer_release(b); /* not the mapping's owner: stays mapped */
        assert_true(cugl_graphics_resource_is_mapped(rs[i]));
    }
    assert_ok(cugl_graphics_unmap(rs, K, NULL));
    uint8_t got[N];
    for (int i = 0; i < K; i++) {
        assert_false(cugl_graphics_resource_is_mapped(rs[i]));
        glGetNamedBufferSubData(names[i], 0, N, got);
        for (int j = 0; j < N; j++)
            if (got[j] != i + 1)
                fail_msg("buffer %d byte %d is %d, expected %d", i, j, got[j], i + 1);
        cugl_graphics_resource_release(rs[i]);
    }
    glDeleteBuffers(K, names);
}

/* nbody's ping-pong: one buffer read, the other written, swapped each frame. */
static void map_flags_between_frames(void **state)
{
    (void)state;
    enum { N = 1024 };
    GLuint names[2] = {gl_buffer(N * 4, NULL), gl_buffer(N * 4, NULL)};
    cugl_graphics_resource *rs[2] = {reg_buffer(names[0], 0), reg_buffer(names[1], 0)};
    uint32_t seed = 7;
    glNamedBufferSubData(names[0], 0, 4, &seed);
    for (int frame = 0; frame < 6; frame++) {
        cugl_graphics_resource *src = rs[frame & 1], *dst = rs[!(frame & 1)];
        assert_ok(cugl_graphics_resource_set_map_flags(src, CUGL_GRAPHICS_READ_ONLY));
        assert_ok(cugl_graphics_resource_set_map_flags(dst, CUGL_GRAPHICS_WRITE_DISCARD));
        assert_int_equal(cugl_graphics_resource_map_flags(dst), CUGL_GRAPHICS_WRITE_DISCARD);
        cugl_graphics_resource *both[2] = {src, dst};
        assert_ok(cugl_graphics_map(both, 2, stream));
        cugl_buffer *s = NULL, *d = NULL;
        assert_ok(cugl_graphics_resource_buffer(&s, src));
        assert_ok(cugl_graphics_resource_buffer(&d, dst));
        gpu_launch_add(stream, (CUdeviceptr)cugl_buffer_handle(s),
                       (CUdeviceptr)cugl_buffer_handle(d), 1, 1);
        cugl_buffer_release(s);
        cugl_buffer_release(d);
        assert_ok(cugl_graphics_unmap(both, 2, stream));
    }
    uint32_t got = 0;
    glGetNamedBufferSubData(names[0], 0, 4, &got);
    assert_int_equal(got, 7 + 6);
    assert_status(cugl_graphics_resource_set_map_flags(rs[0], CUGL_GRAPHICS_SURFACE_LOAD_STORE),
                  CUGL_ERROR_INVALID_ARGUMENT);
    cugl_graphics_resource_release(rs[0]);
    cugl_graphics_resource_release(rs[1]);
    glDeleteBuffers(2, names);
}

static void ten_thousand_cycles(void **state)
{
    (void)state;
    GLuint name = gl_buffer(1 << 16, NULL);
    GLuint tex = 0;
    glCreateTextures(GL_TEXTURE_2D, 1, &tex);
    glTextureStorage2D(tex, 1, GL_RGBA8, 64, 64);
    cugl_graphics_resource *r = reg_buffer(name, 0);
    cugl_graphics_resource *img = NULL;
    assert_ok(cugl_graphics_resource_from_gl_image(&img, dev, tex, CUGL_GL_TEXTURE_2D, 0));
    /* Warm up, then measure. */
    for (int i = 0; i < 100; i++) {
        cugl_buffer *b = NULL;
        assert_ok(cugl_graphics_resource_map(&b, r, stream));
        cugl_buffer_release(b);
    }
    assert_ok(cugl_stream_sync(stream));
    /* What this process holds through cugl, not the device's free memory:
     * other processes, and compute-sanitizer within this one, move that. */
    const int64_t objects_before = cugl_live_objects(), bytes_before = cugl_live_bytes();
    for (int i = 0; i < 10000; i++) {
        cugl_buffer *b = NULL;
        assert_ok(cugl_graphics_resource_map(&b, r, stream));
        cugl_buffer_release(b);
        if (i % 10 == 0) {
            cugl_array *a = NULL;
            assert_ok(cugl_graphics_resource_map_array(&a, img, stream, 0, 0));
            cugl_array_release(a);
        }
    }
    assert_ok(cugl_stream_sync(stream));
    print_message("# 10,000 buffer and 1,000 image map/unmap cycles: cugl objects %lld -> %lld, "
                  "bytes %lld -> %lld\n",
                  (long long)objects_before, (long long)cugl_live_objects(),
                  (long long)bytes_before, (long long)cugl_live_bytes());
    assert_int_equal(cugl_live_objects(), objects_before);
    assert_int_equal(cugl_live_bytes(), bytes_before);
    /* Each resource maps again: nothing was left mapped. */
    cugl_buffer *again = NULL;
    assert_ok(cugl_graphics_resource_map(&again, r, stream));
    cugl_buffer_release(again);
    cugl_graphics_resource_release(r);
    cugl_graphics_resource_release(img);
    glDeleteBuffers(1, &name);
    glDeleteTextures(1, &tex);
}


/* ---- Map-free shared memory ------------------------------------------------ */

static void shared_buffer_both_ways(void **state)
{
    (void)state;
    enum { N = 3 << 20 };
    cugl_app_shared *sh = NULL;
    assert_status(cugl_app_shared_buffer_create(&sh, dev, 0), CUGL_ERROR_INVALID_ARGUMENT);
    assert_ok(cugl_app_shared_buffer_create(&sh, dev, N));
    cugl_buffer *b = cugl_app_shared_buffer(sh);
    assert_true(cugl_buffer_size(b) >= N);
    assert_int_equal(cugl_app_shared_size(sh), N);
    GLuint name = cugl_app_shared_gl_name(sh);
    assert_true(glIsBuffer(name));
    uint8_t *want = malloc(N), *got = malloc(N);
    assert_non_null(want);
    assert_non_null(got);
    GLuint probe = gl_buffer(N, NULL);
    cugl_buffer *host = NULL;
    for (int frame = 0; frame < 3; frame++) {
        /* CUDA writes, GL reads. */
        write_pattern(want, N, 40u + (unsigned)frame);
        assert_ok(cugl_buffer_from_handle(&host, (uint64_t)(uintptr_t)want, N, NULL));
        assert_ok(cugl_app_shared_cuda_begin(sh, stream));
        cugl_buffer *view = NULL;
        assert_ok(cugl_buffer_from_handle(&view, cugl_buffer_handle(b), N, NULL));
        assert_ok(cugl_buffer_copy_from(view, host, stream));
        assert_ok(cugl_app_shared_cuda_end(sh, stream));
        assert_ok(cugl_app_shared_gl_begin(sh));
        /* GL reads on the GPU: NVIDIA's glGetBufferSubData of imported
         * memory can answer from a host copy made at an earlier read. */
        glCopyNamedBufferSubData(name, probe, 0, 0, N);
        glGetNamedBufferSubData(probe, 0, N, got);
        fail_gl("glCopyNamedBufferSubData");
        assert_ok(cugl_app_shared_gl_end(sh));
        assert_bytes_equal(got, want, N, "GL's view of CUDA's writes to shared memory");
        cugl_buffer_release(host);
        /* GL writes, CUDA reads. */
        write_pattern(want, N, 80u + (unsigned)frame);
        glNamedBufferSubData(name, 0, N, want);
        assert_ok(cugl_app_shared_gl_end(sh));
        assert_ok(cugl_app_shared_cuda_begin(sh, stream));
        memset(got, 0, N);
        assert_ok(cugl_buffer_from_handle(&host, (uint64_t)(uintptr_t)got, N, NULL));
        assert_ok(cugl_buffer_copy_to(&host, view, stream));
        assert_ok(cugl_stream_sync(stream));
        assert_bytes_equal(got, want, N, "CUDA's view of GL's writes to shared memory");
        cugl_buffer_release(host);
        cugl_buffer_release(view);
    }
    glDeleteBuffers(1, &probe);
    cugl_app_shared_destroy(sh);
    free(want);
    free(got);
}

/*
 * Where Vulkan makes the semaphores, neither side's begin blocks the CPU:
 * with about 50 ms of GL compute queued before gl_end, cuda_begin returns
 * while it still runs (a fence after it is unsignalled), and CUDA's copy
 * queued then waits on the GPU and reads what GL wrote last; gl_begin
 * likewise returns before CUDA's copy is done, and GL's read after it sees
 * CUDA's bytes. Then a side that ends twice before the other begins (GL
 * writing again after its gl_end) falls back to a CPU wait for the second
 * use, and the bytes still come out right.
 */
static void shared_waits_on_the_gpu(void **state)
{
    (void)state;
    enum { N = 1 << 20, WORDS = N / 4 };
    cugl_app_shared *sh = NULL;
    assert_ok(cugl_app_shared_buffer_create(&sh, dev, N));
    if (!cugl_app_shared_waits_on_gpu(sh)) {
        const char *why = cugl_app_shared_wait_reason(sh);
        cugl_app_shared_destroy(sh);
        if (getenv("CUGL_TEST_NO_SKIP"))
            fail_msg("the shared object waits on the CPU: %s", why);
        skip();
    }
    assert_string_equal(cugl_app_shared_wait_reason(sh), "");
    static const char *busy =
        "#version 450 core\n"
        "layout(local_size_x = 256) in;\n"
        "layout(std430, binding = 0) buffer Words { uint words[]; };\n"
        "layout(location = 0) uniform uint rounds;\n"
        "layout(location = 1) uniform uint seed;\n"
        "void main() {\n"
        "    uint i = gl_GlobalInvocationID.x;\n"
        "    float x = float(i & 7u);\n"
        "    for (uint r = 0u; r < rounds; r++) x = x * 0.999f + 0.5f;\n"
        "    words[i] = seed + i + (x < -1.0 ? 1u : 0u);\n" /* x stays positive */
        "}\n";
    GLuint program = 0;
    assert_ok(cugl_app_compute_program(&program, "busy", busy));
    GLuint name = cugl_app_shared_gl_name(sh), probe = gl_buffer(N, NULL);
    uint32_t *got = malloc(N);
    assert_non_null(got);
    cugl_buffer *b = cugl_app_shared_buffer(sh), *view = NULL, *host = NULL;
    assert_ok(cugl_buffer_from_handle(&view, cugl_buffer_handle(b), N, NULL));
    cugl_event *copied = NULL;
    assert_ok(cugl_event_create(&copied, dev, NULL));
    staging pinned = staging_new(N);
    for (int frame = 0; frame < 3; frame++) {
        uint32_t seed = 1000u * (uint32_t)(frame + 1);
        /* GL's turn: a long compute pass writes every word. */
        glUseProgram(program);
        glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, name);
        glUniform1ui(0, 20000000u); /* about 40 ms on an H100 */
        glUniform1ui(1, seed);
        glDispatchCompute(WORDS / 256, 1, 1);
        glUseProgram(0);
        fail_gl("the busy pass");
        assert_ok(cugl_app_shared_gl_end(sh));
        GLsync after = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
        glFlush();
        /* CUDA's turn, queued while GL still works. */
        assert_ok(cugl_app_shared_cuda_begin(sh, stream));
        GLint status = 0;
        glGetSynciv(after, GL_SYNC_STATUS, 1, NULL, &status);
        assert_int_equal(status, GL_UNSIGNALED);
        /* Into pinned memory: a copy to pageable memory would block. */
        memset(pinned.host, 0, N);
        assert_ok(cugl_buffer_copy_to(&pinned.buffer, view, stream));
        /* Then CUDA writes the next pattern for GL. */
        uint8_t fill = (uint8_t)(0x40 + frame);
        assert_ok(cugl_buffer_fill(view, &fill, 1, stream));
        assert_ok(cugl_event_record(copied, stream));
        assert_ok(cugl_app_shared_cuda_end(sh, stream));
        /* GL's wait is queued; CUDA's work is still behind GL's pass. */
        assert_ok(cugl_app_shared_gl_begin(sh));
        bool done = true;
        assert_ok(cugl_event_query(copied, &done));
        assert_false(done);
        glCopyNamedBufferSubData(name, probe, 0, 0, N);
        fail_gl("glCopyNamedBufferSubData");
        assert_ok(cugl_app_shared_gl_end(sh));
        /* GL writes again after its gl_end: that signal is still pending,
         * so the next cuda_begin waits for the fence on the CPU too. */
        glNamedBufferSubData(name, 0, 4, &seed);
        assert_ok(cugl_app_shared_gl_end(sh));
        assert_ok(cugl_stream_sync(stream));
        memcpy(got, pinned.host, N);
        for (uint32_t i = 0; i < WORDS; i++)
            if (got[i] != seed + i)
                fail_msg("frame %d: CUDA read word %u as %u, GL wrote %u", frame, i, got[i],
                         seed + i);
        glGetNamedBufferSubData(probe, 0, N, got);
        const uint8_t *bytes = (const uint8_t *)got;
        for (size_t i = 0; i < N; i++)
            if (bytes[i] != 0x40 + frame)
                fail_msg("frame %d: GL read byte %zu as 0x%02x, CUDA wrote 0x%02x", frame, i,
                         bytes[i], 0x40 + frame);
        assert_ok(cugl_app_shared_cuda_begin(sh, stream));
        assert_ok(cugl_buffer_from_handle(&host, (uint64_t)(uintptr_t)got, 4, NULL));
        cugl_buffer *first = NULL;
        assert_ok(cugl_buffer_from_handle(&first, cugl_buffer_handle(b), 4, NULL));
        assert_ok(cugl_buffer_copy_to(&host, first, stream));
        assert_ok(cugl_stream_sync(stream));
        assert_int_equal(got[0], seed);
        cugl_buffer_release(first);
        cugl_buffer_release(host);
        assert_ok(cugl_app_shared_cuda_end(sh, stream));
        assert_ok(cugl_app_shared_gl_begin(sh));
        glDeleteSync(after);
    }
    assert_ok(cugl_app_shared_gl_end(sh));
    cugl_event_release(copied);
    staging_free(&pinned);
    cugl_buffer_release(view);
    glDeleteBuffers(1, &probe);
    glDeleteProgram(program);
    cugl_app_shared_destroy(sh);
    free(got);
}

/* Each side takes its turn in order; a call out of turn names what to do. */
static void shared_turns_out_of_order(void **state)
{
    (void)state;
    cugl_app_shared *sh = NULL;
    assert_ok(cugl_app_shared_buffer_create(&sh, dev, 4096));
    assert_status(cugl_app_shared_cuda_end(sh, stream), CUGL_ERROR_INVALID_STATE);
    assert_string_equal(cugl_last_error(), "cugl_app_shared_cuda_end: CUDA's turn has not "
                                           "begun: call cugl_app_shared_cuda_begin first");
    assert_ok(cugl_app_shared_cuda_begin(sh, stream));
    assert_status(cugl_app_shared_gl_begin(sh), CUGL_ERROR_INVALID_STATE);
    assert_string_equal(cugl_last_error(), "cugl_app_shared_gl_begin: CUDA's turn has not "
                                           "ended: call cugl_app_shared_cuda_end first");
    assert_status(cugl_app_shared_gl_end(sh), CUGL_ERROR_INVALID_STATE);
    assert_string_equal(cugl_last_error(), "cugl_app_shared_gl_end: CUDA's turn has not "
                                           "ended: call cugl_app_shared_cuda_end first");
    assert_ok(cugl_app_shared_cuda_end(sh, stream));
    assert_ok(cugl_app_shared_gl_begin(sh));
    assert_status(cugl_app_shared_cuda_begin(sh, stream), CUGL_ERROR_INVALID_STATE);
    assert_string_equal(cugl_last_error(), "cugl_app_shared_cuda_begin: GL's turn has not "
                                           "ended: call cugl_app_shared_gl_end first");
    assert_ok(cugl_app_shared_gl_end(sh));
    assert_status(cugl_app_shared_cuda_begin(sh, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_shared_cuda_begin: stream is NULL");
    assert_status(cugl_app_shared_gl_begin(NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_shared_gl_begin: shared is NULL");
    cugl_stream *closed = NULL;
    assert_ok(cugl_stream_create(&closed, dev, NULL));
    cugl_stream_close(closed);
    assert_status(cugl_app_shared_cuda_begin(sh, closed), CUGL_ERROR_CLOSED);
    assert_string_equal(cugl_last_error(), "cugl_app_shared_cuda_begin: the stream has been "
                                           "closed");
    cugl_stream_release(closed);
    /* Back in turn, it works. */
    assert_ok(cugl_app_shared_cuda_begin(sh, stream));
    assert_ok(cugl_app_shared_cuda_end(sh, stream));
    assert_ok(cugl_app_shared_gl_begin(sh));
    assert_ok(cugl_app_shared_gl_end(sh));
    cugl_app_shared_destroy(sh);
}

static void shared_texture(void **state)
{
    (void)state;
    enum { W = 301, H = 77 };
    cugl_app_shared *sh = NULL;
    assert_status(cugl_app_shared_texture_create(&sh, dev, GL_RGB8, W, H),
                  CUGL_ERROR_INVALID_ARGUMENT);
    assert_null(sh);
    assert_status(cugl_app_shared_texture_create(&sh, dev, GL_RGBA8, 0, H),
                  CUGL_ERROR_INVALID_ARGUMENT);
    assert_ok(cugl_app_shared_texture_create(&sh, dev, GL_RGBA8, W, H));
    size_t pitch = cugl_app_shared_pitch(sh);
    assert_true(pitch >= W * 4);
    assert_int_equal(pitch % 256, 0);
    uint8_t *rows = malloc(pitch * H), *want = malloc(W * H * 4), *got = malloc(W * H * 4);
    assert_non_null(rows);
    assert_non_null(want);
    assert_non_null(got);
    write_pattern(rows, pitch * H, 9);
    for (int y = 0; y < H; y++)
        memcpy(want + (size_t)y * W * 4, rows + (size_t)y * pitch, W * 4);
    cugl_buffer *host = NULL, *view = NULL;
    assert_ok(cugl_buffer_from_handle(&host, (uint64_t)(uintptr_t)rows, pitch * H, NULL));
    assert_ok(cugl_buffer_from_handle(&view, cugl_buffer_handle(cugl_app_shared_buffer(sh)),
                                      pitch * H, NULL));
    assert_ok(cugl_app_shared_cuda_begin(sh, stream));
    assert_ok(cugl_buffer_copy_from(view, host, stream));
    assert_ok(cugl_app_shared_cuda_end(sh, stream));
    assert_ok(cugl_app_shared_gl_begin(sh));
    GLuint tex = cugl_app_shared_gl_name(sh);
    assert_true(glIsTexture(tex));
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glGetTextureImage(tex, 0, GL_RGBA, GL_UNSIGNED_BYTE, W * H * 4, got);
    fail_gl("glGetTextureImage");
    assert_ok(cugl_app_shared_gl_end(sh));
    assert_bytes_equal(got, want, W * H * 4, "shared texture written by CUDA");
    cugl_buffer_release(host);
    cugl_buffer_release(view);
    cugl_app_shared_destroy(sh);
    free(rows);
    free(want);
    free(got);
}

int main(void)
{
    dev = cugl_test_device();
    cugl_status st = cugl_app_context_create(
        &ctx, &(cugl_app_context_desc){.mode = CUGL_APP_HEADLESS, .width = 64, .height = 64,
                                       .cuda_device = 0});
    if (st == CUGL_ERROR_NOT_SUPPORTED)
        cugl_test_skip_all(cugl_last_error());
    if (st != CUGL_OK) {
        printf("Bail out! %s\n", cugl_last_error());
        return 1;
    }
    test_gl_load();
    /* The test's own EGL entry points, for no_gl_context's eglMakeCurrent. */
    if (!gladLoaderLoadEGL(EGL_NO_DISPLAY)) {
        printf("Bail out! GLAD cannot load EGL\n");
        return 1;
    }
    printf("# GL: %s, %s\n", cugl_app_context_renderer(ctx), cugl_app_context_platform(ctx));
    if (cugl_stream_create(&stream, dev, NULL) != CUGL_OK) {
        printf("Bail out! %s\n", cugl_last_error());
        return 1;
    }
    gpu_mem_init();
    gpu_test_module(dev);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cuda_writes_gl_reads_buffer),
        cmocka_unit_test(gl_writes_cuda_reads_buffer),
        cmocka_unit_test(every_format_2d),
        cmocka_unit_test(rgb8_and_srgb8_alpha8_register),
        cmocka_unit_test(rectangle_and_renderbuffer),
        cmocka_unit_test(three_d_texture),
        cmocka_unit_test(layers_and_cube_faces),
        cmocka_unit_test(surface_on_a_mapped_texture),
        cmocka_unit_test(states_and_errors),
        cmocka_unit_test(no_gl_context),
        cmocka_unit_test(many_in_one_call),
        cmocka_unit_test(map_flags_between_frames),
        cmocka_unit_test(ten_thousand_cycles),
        cmocka_unit_test(shared_buffer_both_ways),
        cmocka_unit_test(shared_waits_on_the_gpu),
        cmocka_unit_test(shared_turns_out_of_order),
        cmocka_unit_test(shared_texture),
    };
    int failed = cugl_test_run(tests);
    cugl_stream_release(stream);
    cugl_app_context_destroy(ctx);
    return failed;
}
