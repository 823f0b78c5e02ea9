/*
 * What CUDA writes and GL shows (cugl/app_target.h) on the GPU, on every
 * path: images of every format, volumes and buffers written by a kernel
 * wherever the path puts them (linear memory, or a surface on a mapped
 * array) and read back through GL exactly; an image drawn to the
 * framebuffer; a mesh drawn from buffers CUDA wrote and a volume from
 * memory CUDA copied in (cugl/app_draw.h);
 * images GL draws read by CUDA; two targets in one turn with
 * swapped uses; pipelining (GL sees the turn before, then its own once
 * off); auto's choice and its reason; the turn's state machine; 200
 * create-and-destroy cycles without growth in cugl's live objects.
 */
#include <math.h>

#include "test_gl.h"

#include "cugl_test.h"

extern const unsigned char cugl_target_kernels_fatbin[];
extern const size_t cugl_target_kernels_fatbin_size;

static cugl_device *dev;
static cugl_stream *stream;
static cugl_app_context *ctx;
static cugl_module *module;
static cugl_kernel *write_kernel, *read_kernel;

enum { W = 37, H = 19, D = 5 };

static const cugl_app_interop paths[] = {CUGL_APP_INTEROP_MAP, CUGL_APP_INTEROP_SHARED,
                                         CUGL_APP_INTEROP_HOST};
enum { PATHS = sizeof paths / sizeof paths[0] };

/* The formats: components, bytes a component, GL's pixel format and type. */
static const struct {
    cugl_app_format format;
    const char *name;
    int components, size;
    GLenum gl_format, gl_type;
} formats[] = {
    {CUGL_APP_FORMAT_RGBA8, "RGBA8", 4, 1, GL_RGBA, GL_UNSIGNED_BYTE},
    {CUGL_APP_FORMAT_RGBA16F, "RGBA16F", 4, 2, GL_RGBA, GL_HALF_FLOAT},
    {CUGL_APP_FORMAT_RGBA32F, "RGBA32F", 4, 4, GL_RGBA, GL_FLOAT},
    {CUGL_APP_FORMAT_R32F, "R32F", 1, 4, GL_RED, GL_FLOAT},
};

/* The half of k / 2 (k < 251: exact), as its bits. */
static uint16_t half_of(unsigned k)
{
    if (k == 0)
        return 0;
    int e = 0;
    double m = frexp(0.5 * k, &e); /* 0.5 <= m < 1, value = m 2^e */
    unsigned exponent = (unsigned)(e - 1 + 15);
    unsigned mantissa = (unsigned)lround((m * 2.0 - 1.0) * 1024.0);
    return (uint16_t)(exponent << 10 | mantissa);
}

/* The bytes cugl_target_write puts in texel (x, y, z), rows tight. */
static void expected(uint8_t *out, int w, int h, int d, int components, int size, unsigned seed)
{
    size_t texel = (size_t)components * size;
    for (int z = 0; z < d; z++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                uint8_t *p = out + (((size_t)z * h + y) * w + x) * texel;
                for (int c = 0; c < components; c++) {
                    unsigned k = ((unsigned)x * 3u + (unsigned)y * 5u + (unsigned)z * 7u +
                                  (unsigned)c + seed) %
                                 251u;
                    if (size == 1) {
                        p[c] = (uint8_t)k;
                    } else if (size == 2) {
                        uint16_t bits = half_of(k);
                        memcpy(p + 2 * c, &bits, 2);
                    } else {
                        float v = 0.5f * (float)k;
                        memcpy(p + 4 * c, &v, 4);
                    }
                }
            }
}

static void launch_write(const cugl_app_access *a, int w, int h, int d, int components, int size,
                         unsigned seed)
{
    cugl_launch_config grid = {.grid = {(uint32_t)(w + 15) / 16, (uint32_t)(h + 15) / 16,
                                        (uint32_t)d},
                               .block = {16, 16, 1}};
    cugl_app_access access = *a;
    void *args[] = {&access, &w, &h, &d, &components, &size, &seed};
    assert_ok(cugl_launch(stream, &grid, write_kernel, args, 7));
}

/* Where got and want first differ, as a message in `why`; false if they do not. */
static bool differ(const uint8_t *got, const uint8_t *want, size_t n, const char *what, char *why,
                   size_t size)
{
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i]) {
            size_t from = i / 16 * 16;
            char g[40] = "", w[40] = "";
            for (size_t j = from; j < from + 16 && j < n; j++) {
                snprintf(g + strlen(g), sizeof g - strlen(g), "%02x", got[j]);
                snprintf(w + strlen(w), sizeof w - strlen(w), "%02x", want[j]);
            }
            snprintf(why, size, "%s: byte %zu is 0x%02x, expected 0x%02x (bytes %zu on: %s, "
                                "expected %s)",
                     what, i, got[i], want[i], from, g, w);
            return true;
        }
    return false;
}

static void expect_bytes(const uint8_t *got, const uint8_t *want, size_t n, const char *what)
{
    char why[256];
    if (differ(got, want, n, what, why, sizeof why))
        fail_msg("%s", why);
}

/* A GL buffer's first n bytes, through a copy on the GPU into a buffer of
 * GL's own: NVIDIA's GL keeps a CPU copy of an imported buffer it has read
 * once, and reads it again from there after CUDA wrote the memory. */
static void read_gl_buffer(uint32_t name, size_t offset, size_t n, void *out)
{
    GLuint copy = 0;
    glCreateBuffers(1, &copy);
    glNamedBufferStorage(copy, (GLsizeiptr)n, NULL, 0);
    glCopyNamedBufferSubData(name, copy, (GLintptr)offset, 0, (GLsizeiptr)n);
    glGetNamedBufferSubData(copy, 0, (GLsizeiptr)n, out);
    assert_int_equal(glGetError(), GL_NO_ERROR);
    glDeleteBuffers(1, &copy);
}

static cugl_app_target *make(cugl_app_interop path, cugl_app_target_desc desc)
{
    desc.interop = path;
    cugl_app_target *t = NULL;
    cugl_status st = cugl_app_target_create(&t, ctx, &desc);
    if (st != CUGL_OK)
        fail_msg("--interop %s: %s", cugl_app_interop_name(path), cugl_last_error());
    assert_int_equal(cugl_app_target_interop(t), path);
    return t;
}

/* ---- CUDA writes, GL reads -------------------------------------------------- */

static void images_and_volumes_every_format(void **state)
{
    (void)state;
    size_t most = (size_t)W * H * D * 16;
    uint8_t *want = malloc(most), *got = malloc(most);
    assert_true(want && got);
    int failures = 0;
    for (int p = 0; p < PATHS; p++)
        for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++)
            for (int volume = 0; volume < 2; volume++) {
                int d = volume ? D : 1;
                cugl_app_target *t = make(
                    paths[p], (cugl_app_target_desc){
                                  .kind = volume ? CUGL_APP_TARGET_VOLUME : CUGL_APP_TARGET_IMAGE,
                                  .format = formats[f].format,
                                  .width = W,
                                  .height = H,
                                  .depth = d,
                              });
                unsigned seed = (unsigned)(p * 10 + f * 2 + volume);
                cugl_app_access a;
                assert_ok(cugl_app_target_cuda_begin(t, stream, &a));
                assert_true(a.ptr || a.surface);
                launch_write(&a, W, H, d, formats[f].components, formats[f].size, seed);
                assert_ok(cugl_app_target_cuda_end(t, stream));
                assert_ok(cugl_app_target_gl_begin(t));
                size_t n = (size_t)W * H * d * formats[f].components * formats[f].size;
                memset(got, 0xee, n);
                glPixelStorei(GL_PACK_ALIGNMENT, 1);
                glGetTextureImage(cugl_app_target_gl_name(t), 0, formats[f].gl_format,
                                  formats[f].gl_type, (GLsizei)n, got);
                assert_int_equal(glGetError(), GL_NO_ERROR);
                assert_ok(cugl_app_target_gl_end(t));
                expected(want, W, H, d, formats[f].components, formats[f].size, seed);
                char what[96];
                snprintf(what, sizeof what, "--interop %s, %s %s", cugl_app_interop_name(paths[p]),
                         formats[f].name, volume ? "volume" : "image");
                char why[256];
                if (differ(got, want, n, what, why, sizeof why)) {
                    print_error("%s\n", why);
                    failures++;
                }
                cugl_app_target_destroy(t);
            }
    free(want);
    free(got);
    assert_int_equal(failures, 0);
}

/* cugl_app_target_draw puts the image on the framebuffer, texel for pixel. */
static void draw_shows_the_image(void **state)
{
    (void)state;
    int fw = 0, fh = 0;
    cugl_app_context_size(ctx, &fw, &fh);
    uint8_t *want = malloc((size_t)fw * fh * 4), *got = malloc((size_t)fw * fh * 4);
    for (int p = 0; p < PATHS; p++) {
        cugl_app_target *t = make(paths[p], (cugl_app_target_desc){.width = fw, .height = fh});
        cugl_app_access a;
        assert_ok(cugl_app_target_cuda_begin(t, stream, &a));
        launch_write(&a, fw, fh, 1, 4, 1, 40u + (unsigned)p);
        assert_ok(cugl_app_target_cuda_end(t, stream));
        glBindFramebuffer(GL_FRAMEBUFFER, cugl_app_context_framebuffer(ctx));
        glViewport(0, 0, fw, fh);
        assert_ok(cugl_app_target_draw(t));
        assert_ok(cugl_app_read_pixels(got, (size_t)fw * fh * 4, ctx));
        /* read_pixels gives rows top to bottom; the image's row 0 is GL's bottom. */
        expected(want, fw, fh, 1, 4, 1, 40u + (unsigned)p);
        for (int y = 0; y < fh; y++) {
            char what[64];
            snprintf(what, sizeof what, "--interop %s, drawn row %d",
                     cugl_app_interop_name(paths[p]), y);
            expect_bytes(got + (size_t)(fh - 1 - y) * fw * 4, want + (size_t)y * fw * 4,
                         (size_t)fw * 4, what);
        }
        cugl_app_target_destroy(t);
    }
    free(want);
    free(got);
}

/* A buffer with initial contents; CUDA reads them, writes them over. */
static void buffers_start_with_their_contents(void **state)
{
    (void)state;
    enum { N = 4099 };
    uint8_t initial[N], want[N], got[N];
    for (int i = 0; i < N; i++)
        initial[i] = (uint8_t)(i * 29 + 3);
    for (int p = 0; p < PATHS; p++) {
        cugl_app_target *t = make(paths[p], (cugl_app_target_desc){.kind = CUGL_APP_TARGET_BUFFER,
                                                                   .size = N,
                                                                   .initial = initial});
        assert_ok(cugl_app_target_gl_begin(t));
        read_gl_buffer(cugl_app_target_gl_name(t), 0, N, got);
        assert_ok(cugl_app_target_gl_end(t));
        expect_bytes(got, initial, N, "GL's first look");
        /* CUDA reads what the buffer holds. */
        assert_ok(cugl_app_target_set_cuda_use(t, CUGL_APP_CUDA_READS));
        cugl_app_access a;
        assert_ok(cugl_app_target_cuda_begin(t, stream, &a));
        assert_true(a.ptr != 0 && a.size >= N);
        cugl_buffer *view = NULL, *host = NULL;
        assert_ok(cugl_buffer_from_handle(&view, a.ptr, N, NULL));
        assert_ok(cugl_buffer_from_handle(&host, (uint64_t)(uintptr_t)got, N, NULL));
        memset(got, 0, N);
        assert_ok(cugl_buffer_copy_from(host, view, stream));
        assert_ok(cugl_stream_sync(stream));
        cugl_buffer_release(view);
        cugl_buffer_release(host);
        assert_ok(cugl_app_target_cuda_end(t, stream));
        expect_bytes(got, initial, N, "CUDA's first look");
        /* Then writes it. */
        assert_ok(cugl_app_target_set_cuda_use(t, CUGL_APP_CUDA_WRITES));
        assert_ok(cugl_app_target_cuda_begin(t, stream, &a));
        launch_write(&a, N, 1, 1, 1, 1, 7);
        assert_ok(cugl_app_target_cuda_end(t, stream));
        assert_ok(cugl_app_target_gl_begin(t));
        read_gl_buffer(cugl_app_target_gl_name(t), 0, N, got);
        assert_ok(cugl_app_target_gl_end(t));
        expected(want, N, 1, 1, 1, 1, 7);
        expect_bytes(got, want, N, cugl_app_interop_name(paths[p]));
        cugl_app_target_destroy(t);
    }
}

/* CUDA's turn on `t` (a buffer): `n` bytes of host memory copied to where
 * the path puts the buffer (a.ptr), on the stream. */
static void cuda_writes(cugl_app_target *t, const void *data, size_t n)
{
    cugl_app_access a;
    assert_ok(cugl_app_target_cuda_begin(t, stream, &a));
    assert_true(a.ptr != 0 && a.size >= n);
    cugl_buffer *dst = NULL, *src = NULL;
    assert_ok(cugl_buffer_from_handle(&dst, a.ptr, n, NULL));
    assert_ok(cugl_buffer_from_handle(&src, (uint64_t)(uintptr_t)data, n, NULL));
    assert_ok(cugl_buffer_copy_from(dst, src, stream));
    assert_ok(cugl_stream_sync(stream));
    cugl_buffer_release(src);
    cugl_buffer_release(dst);
    assert_ok(cugl_app_target_cuda_end(t, stream));
}

/* A mesh (cugl_app_draw_mesh) from buffers CUDA wrote, on every path: a
 * quad by indices whose two triangles have scalars 0.5 and 1, unlit, each
 * pixel inside its triangle the colour map's entry (as gl-draw checks on
 * Mesa), outside the clear colour. */
static void mesh_from_what_cuda_wrote(void **state)
{
    (void)state;
    static const float pos[] = {-0.8f, -0.8f, 0, 0.8f, -0.8f, 0, -0.8f, 0.8f, 0,
                                -0.8f, 0.8f,  0, 0.8f, -0.8f, 0, 0.8f,  0.8f, 0};
    static const float sc[] = {0.5f, 0.5f, 0.5f, 1, 1, 1};
    static const uint32_t idx[] = {0, 1, 2, 3, 4, 5};
    uint8_t table[1024];
    assert_ok(cugl_app_colormap_table(CUGL_APP_COLORMAP_CUGL, table));
    const uint8_t *half = table + 4 * 128, *top = table + 4 * 255;
    int fw = 0, fh = 0;
    cugl_app_context_size(ctx, &fw, &fh);
    uint8_t *got = malloc((size_t)fw * fh * 4);
    for (int p = 0; p < PATHS; p++) {
        cugl_app_target *t[3];
        const void *data[3] = {pos, sc, idx};
        const size_t sizes[3] = {sizeof pos, sizeof sc, sizeof idx};
        for (int i = 0; i < 3; i++) {
            t[i] = make(paths[p], (cugl_app_target_desc){.kind = CUGL_APP_TARGET_BUFFER,
                                                         .size = sizes[i]});
            cuda_writes(t[i], data[i], sizes[i]);
        }
        glBindFramebuffer(GL_FRAMEBUFFER, cugl_app_context_framebuffer(ctx));
        glViewport(0, 0, fw, fh);
        glClearColor(0, 0, 1, 1);
        glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
        const cugl_app_mesh_desc mesh = {.positions = t[0], .scalars = t[1], .indices = t[2],
                                         .shading = CUGL_APP_SHADING_NONE};
        assert_ok(cugl_app_draw_mesh(&mesh, 6, 2, NULL));
        assert_ok(cugl_app_read_pixels(got, (size_t)fw * fh * 4, ctx));
        /* Clip-space points well inside each triangle, and one outside both. */
        const struct {
            float x, y;
            const uint8_t *want;
        } probes[] = {{-0.6f, -0.6f, half}, {0.6f, 0.6f, top}, {0.9f, -0.9f, NULL}};
        static const uint8_t blue[4] = {0, 0, 255, 255};
        for (int k = 0; k < 3; k++) {
            int col = (int)((probes[k].x * 0.5f + 0.5f) * fw);
            int row = (int)((probes[k].y * 0.5f + 0.5f) * fh);
            const uint8_t *c = got + ((size_t)(fh - 1 - row) * fw + (size_t)col) * 4;
            const uint8_t *w = probes[k].want ? probes[k].want : blue;
            if (c[0] != w[0] || c[1] != w[1] || c[2] != w[2])
                fail_msg("--interop %s, the mesh at (%.1f, %.1f): %u %u %u, want %u %u %u",
                         cugl_app_interop_name(paths[p]), (double)probes[k].x,
                         (double)probes[k].y, c[0], c[1], c[2], w[0], w[1], w[2]);
        }
        for (int i = 0; i < 3; i++)
            cugl_app_target_destroy(t[i]);
    }
    free(got);
}

/* A volume (cugl_app_draw_volume) from device memory CUDA copied in
 * (cugl_app_target_copy_from), on every path: 4 x 4 x 4 R32F, 1 where x
 * is 0 or 1, else 0, through the box -0.5 .. 0.5 along z, opaque: the
 * map's last entry where the values are 1, the clear colour where 0. */
static void volume_from_what_cuda_wrote(void **state)
{
    (void)state;
    float v[4][4][4];
    for (int z = 0; z < 4; z++)
        for (int y = 0; y < 4; y++)
            for (int x = 0; x < 4; x++)
                v[z][y][x] = x < 2 ? 1.0f : 0.0f;
    uint8_t table[1024];
    assert_ok(cugl_app_colormap_table(CUGL_APP_COLORMAP_CUGL, table));
    cugl_memory_resource *mr = NULL;
    cugl_buffer *dbuf = NULL, *host = NULL;
    cugl_layout l;
    cugl_view *view = NULL;
    const int64_t shape[4] = {4, 4, 4, 1};
    assert_ok(cugl_device_memory_resource_create(&mr, dev, NULL));
    assert_ok(cugl_memory_resource_allocate(&dbuf, mr, sizeof v, stream));
    assert_ok(cugl_buffer_from_handle(&host, (uint64_t)(uintptr_t)v, sizeof v, NULL));
    assert_ok(cugl_buffer_copy_from(dbuf, host, stream));
    assert_ok(cugl_stream_sync(stream));
    assert_ok(cugl_layout_init_bytes(&l, 4, shape, NULL, 4));
    assert_ok(cugl_view_from_buffer(&view, dbuf, &l, (cugl_dtype){CUGL_DTYPE_FLOAT, 32, 1}, true));
    int fw = 0, fh = 0;
    cugl_app_context_size(ctx, &fw, &fh);
    uint8_t *got = malloc((size_t)fw * fh * 4);
    for (int p = 0; p < PATHS; p++) {
        cugl_app_target *t = make(paths[p], (cugl_app_target_desc){
                                                .kind = CUGL_APP_TARGET_VOLUME,
                                                .format = CUGL_APP_FORMAT_R32F,
                                                .width = 4,
                                                .height = 4,
                                                .depth = 4});
        assert_ok(cugl_app_target_copy_from(t, view, stream));
        glBindFramebuffer(GL_FRAMEBUFFER, cugl_app_context_framebuffer(ctx));
        glViewport(0, 0, fw, fh);
        glClearColor(0, 0, 1, 1);
        glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
        const cugl_app_volume_desc vd = {.volume = t, .min = {-0.5f, -0.5f, -0.5f},
                                         .max = {0.5f, 0.5f, 0.5f}, .density = 1};
        assert_ok(cugl_app_draw_volume(&vd, NULL));
        assert_ok(cugl_app_read_pixels(got, (size_t)fw * fh * 4, ctx));
        static const uint8_t blue[4] = {0, 0, 255, 255};
        const struct {
            float x, y;
            const uint8_t *want;
        } probes[] = {{-0.3f, 0, table + 4 * 255}, {0.3f, 0, blue}, {-0.3f, 0.8f, blue}};
        for (int k = 0; k < 3; k++) {
            int col = (int)((probes[k].x * 0.5f + 0.5f) * fw);
            int row = (int)((probes[k].y * 0.5f + 0.5f) * fh);
            const uint8_t *c = got + ((size_t)(fh - 1 - row) * fw + (size_t)col) * 4;
            const uint8_t *w = probes[k].want;
            if (c[0] != w[0] || c[1] != w[1] || c[2] != w[2])
                fail_msg("--interop %s, the volume at (%.1f, %.1f): %u %u %u, want %u %u %u",
                         cugl_app_interop_name(paths[p]), (double)probes[k].x,
                         (double)probes[k].y, c[0], c[1], c[2], w[0], w[1], w[2]);
        }
        cugl_app_target_destroy(t);
    }
    free(got);
    cugl_view_release(view);
    cugl_buffer_release(host);
    cugl_buffer_release(dbuf);
    cugl_memory_resource_release(mr);
}

/* ---- GL writes, CUDA reads ------------------------------------------------- */

static void gl_draws_cuda_reads(void **state)
{
    (void)state;
    uint8_t *image = malloc((size_t)W * H * 4), *got = malloc((size_t)W * H * 4);
    for (int i = 0; i < W * H * 4; i++)
        image[i] = (uint8_t)(i * 7 + 1);
    for (int p = 0; p < PATHS; p++) {
        cugl_app_target *t = make(paths[p], (cugl_app_target_desc){.direction = CUGL_APP_FROM_GL,
                                                                   .width = W,
                                                                   .height = H});
        for (int frame = 0; frame < 3; frame++) {
            image[0] = (uint8_t)frame;
            assert_ok(cugl_app_target_gl_begin(t));
            glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
            glTextureSubImage2D(cugl_app_target_gl_name(t), 0, 0, 0, W, H, GL_RGBA,
                                GL_UNSIGNED_BYTE, image);
            assert_int_equal(glGetError(), GL_NO_ERROR);
            assert_ok(cugl_app_target_gl_end(t));
            cugl_app_access a;
            assert_ok(cugl_app_target_cuda_begin(t, stream, &a));
            assert_true(a.ptr || a.texture);
            cugl_memory_resource *mr = NULL;
            cugl_buffer *out = NULL, *host = NULL;
            assert_ok(cugl_device_memory_resource_create(&mr, dev, NULL));
            assert_ok(cugl_memory_resource_allocate(&out, mr, (size_t)W * H * 4, stream));
            int w = W, h = H;
            uint64_t out_ptr = cugl_buffer_handle(out);
            void *args[] = {&a, &w, &h, &out_ptr};
            cugl_launch_config grid = {.grid = {(W + 15) / 16, (H + 15) / 16, 1},
                                       .block = {16, 16, 1}};
            assert_ok(cugl_launch(stream, &grid, read_kernel, args, 4));
            assert_ok(cugl_app_target_cuda_end(t, stream));
            assert_ok(cugl_buffer_from_handle(&host, (uint64_t)(uintptr_t)got, (size_t)W * H * 4,
                                              NULL));
            assert_ok(cugl_buffer_copy_from(host, out, stream));
            assert_ok(cugl_stream_sync(stream));
            cugl_buffer_release(host);
            cugl_buffer_close(out, stream);
            cugl_buffer_release(out);
            cugl_memory_resource_release(mr);
            char what[64];
            snprintf(what, sizeof what, "--interop %s, frame %d", cugl_app_interop_name(paths[p]),
                     frame);
            expect_bytes(got, image, (size_t)W * H * 4, what);
        }
        cugl_app_target_destroy(t);
    }
    free(image);
    free(got);
}

/* ---- Turns ----------------------------------------------------------------- */

/* nbody's pair: CUDA reads one buffer and writes the other, in one turn,
 * the uses swapped each step; GL sees each step's output. */
static void two_targets_one_turn(void **state)
{
    (void)state;
    enum { N = 1024 };
    uint8_t got[N], want[N];
    for (int p = 0; p < PATHS; p++) {
        cugl_app_target *pair[2];
        for (int i = 0; i < 2; i++)
            pair[i] = make(paths[p], (cugl_app_target_desc){.kind = CUGL_APP_TARGET_BUFFER,
                                                            .size = N});
        for (int step = 0; step < 4; step++) {
            cugl_app_target *src = pair[step % 2], *dst = pair[1 - step % 2];
            assert_ok(cugl_app_target_set_cuda_use(src, CUGL_APP_CUDA_READS));
            assert_ok(cugl_app_target_set_cuda_use(dst, CUGL_APP_CUDA_WRITES));
            cugl_app_target *both[2] = {src, dst};
            cugl_app_access a[2];
            assert_ok(cugl_app_targets_cuda_begin(both, 2, stream, a));
            assert_true(a[0].ptr && a[1].ptr && a[0].ptr != a[1].ptr);
            launch_write(&a[1], N, 1, 1, 1, 1, (unsigned)step);
            assert_ok(cugl_app_targets_cuda_end(both, 2, stream));
            assert_ok(cugl_app_targets_gl_begin(both, 2));
            read_gl_buffer(cugl_app_target_gl_name(dst), 0, N, got);
            assert_ok(cugl_app_targets_gl_end(both, 2));
            expected(want, N, 1, 1, 1, 1, (unsigned)step);
            expect_bytes(got, want, N, cugl_app_interop_name(paths[p]));
        }
        for (int i = 0; i < 2; i++)
            cugl_app_target_destroy(pair[i]);
    }
}

/* Pipelined, GL sees what CUDA wrote a turn earlier (the latest on the
 * first); turned off, the turn's own. */
static void pipelining(void **state)
{
    (void)state;
    enum { N = 4096 };
    for (int p = 0; p < 3; p++) {
        cugl_app_target *t = make(paths[p], (cugl_app_target_desc){.kind = CUGL_APP_TARGET_BUFFER,
                                                                   .size = N,
                                                                   .pipelined = true});
        assert_true(cugl_app_target_is_pipelined(t));
        uint64_t ptrs[3] = {0};
        for (uint32_t frame = 0; frame < 12; frame++) {
            if (frame == 9)
                assert_ok(cugl_app_target_set_pipelined(t, false));
            cugl_app_access a;
            assert_ok(cugl_app_target_cuda_begin(t, stream, &a));
            if (frame < 3)
                ptrs[frame] = a.ptr;
            cugl_buffer *view = NULL;
            uint32_t v = 1000 + frame;
            assert_ok(cugl_buffer_from_handle(&view, a.ptr, N, NULL));
            assert_ok(cugl_buffer_fill(view, &v, 4, stream));
            cugl_buffer_release(view);
            assert_ok(cugl_app_target_cuda_end(t, stream));
            assert_ok(cugl_app_target_gl_begin(t));
            uint32_t got = 0;
            read_gl_buffer(cugl_app_target_gl_name(t), N - 4, 4, &got);
            assert_ok(cugl_app_target_gl_end(t));
            uint32_t want = frame == 0 || frame >= 9 ? 1000 + frame : 1000 + frame - 1;
            if (got != want)
                fail_msg("--interop %s, frame %u: GL saw %u, expected %u",
                         cugl_app_interop_name(paths[p]), frame, got, want);
        }
        /* The slots rotated: CUDA wrote a copy GL was not drawing (map and
         * host: 2 copies, shared memory: 3). */
        assert_true(ptrs[0] != ptrs[1]);
        if (paths[p] == CUGL_APP_INTEROP_SHARED)
            assert_true(ptrs[2] != ptrs[0] && ptrs[2] != ptrs[1]);
        assert_int_equal(cugl_app_target_lockstep_turns(t), 3);
        cugl_app_target_destroy(t);
    }
    /* A target GL draws for CUDA is never pipelined. */
    cugl_app_target *t = NULL;
    assert_status(cugl_app_target_create(&t, ctx, &(cugl_app_target_desc){
                                                      .direction = CUGL_APP_FROM_GL,
                                                      .width = 8,
                                                      .height = 8,
                                                      .pipelined = true}),
                  CUGL_ERROR_INVALID_ARGUMENT);
    assert_null(t);
}

/* auto takes a path that works and says why. */
static void auto_says_why(void **state)
{
    (void)state;
    cugl_app_target *t = NULL;
    assert_ok(cugl_app_target_create(&t, ctx, &(cugl_app_target_desc){.width = 8, .height = 8}));
    cugl_app_interop chosen = cugl_app_target_interop(t);
    printf("# auto: %s: %s\n", cugl_app_interop_name(chosen), cugl_app_target_reason(t));
    assert_true(chosen == CUGL_APP_INTEROP_MAP || chosen == CUGL_APP_INTEROP_SHARED ||
                chosen == CUGL_APP_INTEROP_HOST);
    assert_true(strlen(cugl_app_target_reason(t)) > 20);
    cugl_app_target_destroy(t);
}

/* The one rule for CUDA on other GPUs: with GL's own device as the only
 * writer it chooses as cugl_app_choose_interop does, and says the same;
 * a path asked for is taken as it is; bad arguments are refused by name.
 * (Writers on another GPU: the multi-gpu suite, through the demos.) */
static void one_rule_on_one_gpu(void **state)
{
    (void)state;
    cugl_app_interop plain = CUGL_APP_INTEROP_AUTO, ruled = CUGL_APP_INTEROP_AUTO;
    char why_plain[768], why_ruled[768];
    assert_ok(cugl_app_choose_interop(&plain, why_plain, sizeof why_plain, ctx, dev));
    assert_ok(cugl_app_choose_interop_for(&ruled, why_ruled, sizeof why_ruled, ctx, dev, &dev, 1,
                                          CUGL_APP_INTEROP_AUTO));
    assert_int_equal(ruled, plain);
    assert_string_equal(why_ruled, why_plain);
    assert_ok(cugl_app_choose_interop_for(&ruled, NULL, 0, ctx, dev, NULL, 0,
                                          CUGL_APP_INTEROP_AUTO));
    assert_int_equal(ruled, plain);
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        assert_ok(cugl_app_choose_interop_for(&ruled, why_ruled, sizeof why_ruled, ctx, dev, &dev,
                                              1, paths[i]));
        assert_int_equal(ruled, paths[i]);
        assert_non_null(strstr(why_ruled, "asked for"));
    }
    ruled = CUGL_APP_INTEROP_HOST;
    assert_status(cugl_app_choose_interop_for(&ruled, NULL, 0, ctx, dev, &dev, -1,
                                              CUGL_APP_INTEROP_AUTO),
                  CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_choose_interop_for: -1 writers; 0 to 17");
    assert_status(cugl_app_choose_interop_for(&ruled, NULL, 0, ctx, dev, NULL, 1,
                                              CUGL_APP_INTEROP_AUTO),
                  CUGL_ERROR_INVALID_ARGUMENT);
    assert_status(cugl_app_choose_interop_for(&ruled, NULL, 0, ctx, dev, &dev, 1,
                                              (cugl_app_interop)42),
                  CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(),
                        "cugl_app_choose_interop_for: asked is 42, no cugl_app_interop");
    assert_int_equal(ruled, CUGL_APP_INTEROP_HOST); /* left as it was */
}

/* Turns out of order are refused with a message, and nothing is left open. */
static void turns_in_order(void **state)
{
    (void)state;
    for (int p = 0; p < PATHS; p++) {
        cugl_app_target *t = make(paths[p], (cugl_app_target_desc){.width = 8, .height = 8});
        cugl_app_access a;
        assert_status(cugl_app_target_cuda_end(t, stream), CUGL_ERROR_INVALID_STATE);
        assert_string_equal(cugl_last_error(),
                            "cugl_app_target_cuda_end: cugl_app_targets_cuda_end: target 0: "
                            "CUDA's turn has not begun");
        assert_status(cugl_app_target_gl_end(t), CUGL_ERROR_INVALID_STATE);
        assert_ok(cugl_app_target_cuda_begin(t, stream, &a));
        assert_status(cugl_app_target_cuda_begin(t, stream, &a), CUGL_ERROR_INVALID_STATE);
        assert_status(cugl_app_target_gl_begin(t), CUGL_ERROR_INVALID_STATE);
        assert_status(cugl_app_target_draw(t), CUGL_ERROR_INVALID_STATE);
        assert_status(cugl_app_target_set_pipelined(t, true), CUGL_ERROR_INVALID_STATE);
        cugl_stream *other = NULL;
        assert_ok(cugl_stream_create(&other, dev, NULL));
        assert_status(cugl_app_target_cuda_end(t, other), CUGL_ERROR_INVALID_ARGUMENT);
        cugl_stream_release(other);
        assert_ok(cugl_app_target_cuda_end(t, stream));
        /* A closed stream is refused, and the refusal leaves no turn open:
         * the next turn on a good stream begins. */
        cugl_stream *closed = NULL;
        assert_ok(cugl_stream_create(&closed, dev, NULL));
        cugl_stream_close(closed);
        long long objects = cugl_live_objects();
        assert_status(cugl_app_target_cuda_begin(t, closed, &a), CUGL_ERROR_CLOSED);
        assert_string_equal(cugl_last_error(),
                            "cugl_app_target_cuda_begin: cugl_app_targets_cuda_begin: the "
                            "stream has been closed");
        assert_int_equal(cugl_live_objects(), objects);
        cugl_stream_release(closed);
        assert_ok(cugl_app_target_cuda_begin(t, stream, &a));
        assert_ok(cugl_app_target_cuda_end(t, stream));
        cugl_app_target *twice[2] = {t, t};
        assert_status(cugl_app_targets_cuda_begin(twice, 2, stream, &a),
                      CUGL_ERROR_INVALID_ARGUMENT);
        assert_string_equal(cugl_last_error(),
                            "cugl_app_targets_cuda_begin: targets 0 and 1 are the same");
        cugl_app_target_destroy(t);
    }
}

/* Targets made and destroyed leave nothing behind. */
static void no_leaks(void **state)
{
    (void)state;
    for (int p = 0; p < PATHS; p++) {
        long long objects = cugl_live_objects(), bytes = cugl_live_bytes();
        for (int i = 0; i < 200; i++) {
            cugl_app_target *t = make(paths[p], (cugl_app_target_desc){.width = 64, .height = 32,
                                                                       .pipelined = i % 2});
            cugl_app_access a;
            assert_ok(cugl_app_target_cuda_begin(t, stream, &a));
            launch_write(&a, 64, 32, 1, 4, 1, 1);
            assert_ok(cugl_app_target_cuda_end(t, stream));
            assert_ok(cugl_app_target_draw(t));
            cugl_app_target_destroy(t);
        }
        assert_ok(cugl_stream_sync(stream));
        if (cugl_live_objects() != objects || cugl_live_bytes() != bytes)
            fail_msg("--interop %s: cugl holds %lld objects and %lld bytes after 200 targets, "
                     "%lld and %lld before",
                     cugl_app_interop_name(paths[p]), cugl_live_objects(), cugl_live_bytes(),
                     objects, bytes);
    }
}

int main(void)
{
    dev = cugl_test_device();
    cugl_status st = cugl_app_context_create(
        &ctx, &(cugl_app_context_desc){.mode = CUGL_APP_HEADLESS, .width = 96, .height = 64,
                                       .cuda_device = cugl_device_ordinal(dev)});
    if (st == CUGL_ERROR_NOT_SUPPORTED)
        cugl_test_skip_all(cugl_last_error());
    if (st != CUGL_OK) {
        printf("Bail out! %s\n", cugl_last_error());
        return 1;
    }
    test_gl_load();
    if (cugl_stream_create(&stream, dev, NULL) != CUGL_OK ||
        cugl_module_load_data(&module, dev, cugl_target_kernels_fatbin,
                              cugl_target_kernels_fatbin_size) != CUGL_OK ||
        cugl_module_get_kernel(&write_kernel, module, "cugl_target_write") != CUGL_OK ||
        cugl_module_get_kernel(&read_kernel, module, "cugl_target_read_rgba8") != CUGL_OK) {
        printf("Bail out! %s\n", cugl_last_error());
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(images_and_volumes_every_format),
        cmocka_unit_test(draw_shows_the_image),
        cmocka_unit_test(buffers_start_with_their_contents),
        cmocka_unit_test(mesh_from_what_cuda_wrote),
        cmocka_unit_test(volume_from_what_cuda_wrote),
        cmocka_unit_test(gl_draws_cuda_reads),
        cmocka_unit_test(two_targets_one_turn),
        cmocka_unit_test(pipelining),
        cmocka_unit_test(auto_says_why),
        cmocka_unit_test(one_rule_on_one_gpu),
        cmocka_unit_test(turns_in_order),
        cmocka_unit_test(no_leaks),
    };
    int failed = cugl_test_run(tests);
    cugl_kernel_release(write_kernel);
    cugl_kernel_release(read_kernel);
    cugl_module_release(module);
    cugl_stream_release(stream);
    cugl_app_context_destroy(ctx);
    return failed;
}
