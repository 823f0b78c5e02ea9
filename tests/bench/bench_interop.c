/*
 * The interop benchmark: what a frame costs on each path from CUDA to GL.
 *
 *  1. Mapping: K = 1, 2, 4, 8 registered GL buffers mapped and unmapped
 *     each frame, one by one (a driver call each) and batched (one call for
 *     all). Goal: 8 batched cost at most 1.2x one.
 *  2. Updates of 1, 16, 64 and 256 MiB: CUDA fills the bytes GL then uses
 *     (GL copies 4 bytes out of them, so it really waits for the data), by
 *     map/unmap of a registered buffer, by map-free shared memory (events and
 *     fences, nothing mapped; each side waiting for the other every frame, and
 *     pipelined, GL one frame behind) and through pinned host memory (CUDA ->
 *     host -> glNamedBufferSubData). Goal: map-free at least 8x faster than
 *     map/unmap at 16 MiB.
 *
 * Each figure is the median over rounds of the mean wall time per frame of
 * a batch of frames that ends with both sides idle (glFinish and a stream
 * sync), the paths alternating round by round. Exits 77 without a GPU or an
 * EGL display on it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cugl/app.h>
#include <cugl/app_shared.h>

enum { ROUNDS = 7 };

static cugl_device *dev;
static cugl_stream *stream;

static void die(const char *what)
{
    fprintf(stderr, "bench_interop: %s: %s\n", what, cugl_last_error());
    exit(1);
}

#define CHECK(expr)              \
    do {                         \
        if ((expr) != CUGL_OK)   \
            die(#expr);          \
    } while (0)

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

static void idle(void)
{
    glFinish();
    CHECK(cugl_stream_sync(stream));
}

static GLuint gl_buffer(size_t size)
{
    GLuint b = 0;
    glCreateBuffers(1, &b);
    glNamedBufferStorage(b, (GLsizeiptr)size, NULL, GL_DYNAMIC_STORAGE_BIT);
    return b;
}

/* ---- 1. Mapping K resources -------------------------------------------------- */

static void frame_map(cugl_graphics_resource **rs, int k, bool batched)
{
    if (batched) {
        CHECK(cugl_graphics_map(rs, (size_t)k, stream));
        CHECK(cugl_graphics_unmap(rs, (size_t)k, stream));
    } else {
        for (int i = 0; i < k; i++)
            CHECK(cugl_graphics_map(rs + i, 1, stream));
        for (int i = 0; i < k; i++)
            CHECK(cugl_graphics_unmap(rs + i, 1, stream));
    }
}

static void bench_mapping(void)
{
    enum { K = 8, FRAMES = 200 };
    GLuint names[K];
    cugl_graphics_resource *rs[K];
    for (int i = 0; i < K; i++) {
        names[i] = gl_buffer(1 << 20);
        CHECK(cugl_graphics_resource_from_gl_buffer(&rs[i], dev, names[i], 0));
    }
    const int ks[] = {1, 2, 4, 8};
    double one_by_one[4], batched[4];
    for (int ki = 0; ki < 4; ki++) {
        double t[2][ROUNDS];
        for (int r = 0; r < ROUNDS; r++) {
            for (int mode = 0; mode < 2; mode++) {
                frame_map(rs, ks[ki], mode);
                idle();
                double t0 = now_us();
                for (int f = 0; f < FRAMES; f++)
                    frame_map(rs, ks[ki], mode);
                idle();
                t[mode][r] = (now_us() - t0) / FRAMES;
            }
        }
        one_by_one[ki] = median(t[0], ROUNDS);
        batched[ki] = median(t[1], ROUNDS);
    }
    printf("\nMap and unmap per frame (1 MiB GL buffers), microseconds\n");
    printf("| resources | one by one | batched | batched / one resource |\n");
    printf("|---|---|---|---|\n");
    for (int ki = 0; ki < 4; ki++)
        printf("| %d | %.1f | %.1f | %.2f |\n", ks[ki], one_by_one[ki], batched[ki],
               batched[ki] / batched[0]);
    printf("goal: 8 batched <= 1.2x one resource: %.2fx, %s\n", batched[3] / batched[0],
           batched[3] <= 1.2 * batched[0] ? "met" : "MISSED");
    for (int i = 0; i < K; i++)
        cugl_graphics_resource_release(rs[i]);
    glDeleteBuffers(K, names);
}

/* ---- 2. Updates through each path ---------------------------------------------- */

typedef struct paths {
    size_t size;
    GLuint sink; /* GL copies 4 bytes of each update here */
    /* map */
    GLuint mapped_name;
    cugl_graphics_resource *mapped;
    /* shared: in lockstep, and pipelined */
    cugl_app_shared *shared, *piped;
    /* host */
    GLuint host_name;
    cugl_buffer *device_buf, *pinned;
    cugl_memory_resource *device_mr, *pinned_mr;
} paths;

static const uint32_t fill_value = 0x3f800000u;

static void frame_update(paths *p, int path)
{
    switch (path) {
    case 0: { /* map/unmap */
        cugl_buffer *b = NULL;
        CHECK(cugl_graphics_resource_map(&b, p->mapped, stream));
        CHECK(cugl_buffer_fill(b, &fill_value, 4, stream));
        cugl_buffer_release(b); /* unmaps */
        glCopyNamedBufferSubData(p->mapped_name, p->sink, (GLintptr)(p->size - 4), 0, 4);
        break;
    }
    case 1: /* map-free shared memory, in lockstep */
    case 2: { /* pipelined */
        cugl_app_shared *sh = path == 1 ? p->shared : p->piped;
        CHECK(cugl_app_shared_cuda_begin(sh, stream));
        cugl_buffer *b = cugl_app_shared_buffer(sh);
        CHECK(cugl_buffer_fill(b, &fill_value, 4, stream));
        CHECK(cugl_app_shared_cuda_end(sh, stream));
        CHECK(cugl_app_shared_gl_begin(sh));
        glCopyNamedBufferSubData(cugl_app_shared_gl_name(sh), p->sink, (GLintptr)(p->size - 4),
                                 0, 4);
        CHECK(cugl_app_shared_gl_end(sh));
        break;
    }
    default: /* through host memory */
        CHECK(cugl_buffer_fill(p->device_buf, &fill_value, 4, stream));
        CHECK(cugl_buffer_copy_to(&p->pinned, p->device_buf, stream));
        CHECK(cugl_stream_sync(stream));
        glNamedBufferSubData(p->host_name, 0, (GLsizeiptr)p->size,
                             (const void *)(uintptr_t)cugl_buffer_handle(p->pinned));
        glCopyNamedBufferSubData(p->host_name, p->sink, (GLintptr)(p->size - 4), 0, 4);
        break;
    }
}

static void bench_updates(void)
{
    enum { PATHS = 4 };
    const size_t mib[] = {1, 16, 64, 256};
    static const char *const names[PATHS] = {"map/unmap", "map-free, lockstep",
                                             "map-free, pipelined", "host memory"};
    double result[4][PATHS];
    bool shared_ok = true;
    for (int si = 0; si < 4; si++) {
        paths p = {.size = mib[si] << 20};
        p.sink = gl_buffer(4);
        p.mapped_name = gl_buffer(p.size);
        CHECK(cugl_graphics_resource_from_gl_buffer(&p.mapped, dev, p.mapped_name,
                                                    CUGL_GRAPHICS_WRITE_DISCARD));
        cugl_status st = cugl_app_shared_buffer_create(&p.shared, dev, p.size);
        if (st == CUGL_ERROR_NOT_SUPPORTED) {
            if (shared_ok)
                printf("map-free shared memory: not supported here: %s\n", cugl_last_error());
            shared_ok = false;
        } else {
            CHECK(st);
            CHECK(cugl_app_shared_buffer_create(&p.piped, dev, p.size));
            CHECK(cugl_app_shared_set_pipelined(p.piped, true));
        }
        p.host_name = gl_buffer(p.size);
        CHECK(cugl_device_memory_resource_create(&p.device_mr, dev, NULL));
        CHECK(cugl_legacy_pinned_memory_resource_create(&p.pinned_mr, dev));
        CHECK(cugl_memory_resource_allocate(&p.device_buf, p.device_mr, p.size, stream));
        CHECK(cugl_memory_resource_allocate(&p.pinned, p.pinned_mr, p.size, stream));

        int frames = p.size >= (64u << 20) ? 10 : 40;
        double t[PATHS][ROUNDS];
        for (int r = 0; r < ROUNDS; r++) {
            for (int path = 0; path < PATHS; path++) {
                t[path][r] = 0;
                if ((path == 1 || path == 2) && !shared_ok)
                    continue;
                frame_update(&p, path);
                idle();
                double t0 = now_us();
                for (int f = 0; f < frames; f++)
                    frame_update(&p, path);
                idle();
                t[path][r] = (now_us() - t0) / frames;
                /* Every path delivered the bytes. */
                uint32_t got = 0;
                glGetNamedBufferSubData(p.sink, 0, 4, &got);
                if (got != fill_value) {
                    fprintf(stderr, "bench_interop: %s: GL saw 0x%08x, expected 0x%08x\n",
                            names[path], got, fill_value);
                    exit(1);
                }
                glClearNamedBufferData(p.sink, GL_R32UI, GL_RED_INTEGER, GL_UNSIGNED_INT, NULL);
            }
        }
        for (int path = 0; path < PATHS; path++)
            result[si][path] = median(t[path], ROUNDS);

        cugl_graphics_resource_release(p.mapped);
        cugl_app_shared_destroy(p.shared);
        cugl_app_shared_destroy(p.piped);
        cugl_buffer_release(p.device_buf);
        cugl_buffer_release(p.pinned);
        cugl_memory_resource_release(p.device_mr);
        cugl_memory_resource_release(p.pinned_mr);
        GLuint del[] = {p.sink, p.mapped_name, p.host_name};
        glDeleteBuffers(3, del);
    }
    printf("\nOne update per frame (CUDA writes the bytes, GL uses them), microseconds\n");
    printf("| size | %s | %s | %s | %s | map/unmap / pipelined |\n", names[0], names[1],
           names[2], names[3]);
    printf("|---|---|---|---|---|---|\n");
    for (int si = 0; si < 4; si++)
        printf("| %zu MiB | %.1f | %.1f | %.1f | %.1f | %.1fx |\n", mib[si], result[si][0],
               result[si][1], result[si][2], result[si][3],
               shared_ok ? result[si][0] / result[si][2] : 0.0);
    if (shared_ok)
        printf("goal: map-free >= 8x faster than map/unmap at 16 MiB: lockstep %.1fx, "
               "pipelined %.1fx, %s\n",
               result[1][0] / result[1][1], result[1][0] / result[1][2],
               result[1][0] >= 8 * result[1][2] ? "met (pipelined)" : "MISSED");
}

int main(void)
{
    int count = 0;
    cugl_status st = cugl_device_count(&count);
    if (st == CUGL_ERROR_NO_DRIVER || (st == CUGL_OK && count == 0)) {
        printf("bench_interop: skipped: %s\n", st == CUGL_OK ? "no CUDA device" : cugl_last_error());
        return 77;
    }
    CHECK(st);
    CHECK(cugl_device_get(&dev, 0));
    CHECK(cugl_device_set_current(dev));
    cugl_app_context *ctx = NULL;
    st = cugl_app_context_create(&ctx, &(cugl_app_context_desc){.mode = CUGL_APP_HEADLESS,
                                                                .width = 64,
                                                                .height = 64,
                                                                .cuda_device = 0});
    if (st == CUGL_ERROR_NOT_SUPPORTED) {
        printf("bench_interop: skipped: %s\n", cugl_last_error());
        return 77;
    }
    CHECK(st);
    char name[256];
    cugl_device_properties props;
    CHECK(cugl_device_get_properties(dev, &props));
    snprintf(name, sizeof name, "%s", props.name);
    printf("bench_interop on %s; GL: %s (%s)\n", name, cugl_app_context_renderer(ctx),
           cugl_app_context_platform(ctx));
    CHECK(cugl_stream_create(&stream, dev, NULL));
    bench_mapping();
    bench_updates();
    cugl_stream_release(stream);
    cugl_app_context_destroy(ctx);
    return 0;
}
