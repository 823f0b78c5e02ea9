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
 *  3. Compute on another GPU, for each other device with a peer path to
 *     device 0 (GL's): updates of 1, 8, 16 and 64 MiB that CUDA on that
 *     device writes into device 0's map-free shared memory over the peer
 *     path, in lockstep and pipelined, beside one-GPU map/unmap in the same
 *     run, and the peer transfer alone (the same writes, no GL). Goals (two
 *     H200s over NVLink): 1 MiB lockstep at most 45 us and at least 7x
 *     faster than one-GPU map/unmap, 16 MiB at most 90 us, pipelined at
 *     most the transfer + 10 us.
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

#include "test_gl.h"
#include <cugl/app_shared.h>

enum { ROUNDS = 7 };

static cugl_device *dev;
static cugl_stream *stream;
static cugl_app_context *ctx;

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
    cugl_app_shared *shared;
    cugl_app_target *piped; /* shared memory, pipelined (rotating slots) */
    /* host */
    GLuint host_name;
    cugl_buffer *device_buf, *pinned;
    cugl_memory_resource *device_mr, *pinned_mr;
} paths;

static const uint32_t fill_value = 0x3f800000u;

/* A frame on map-free shared memory: CUDA fills it on `on`, GL copies its
 * last 4 bytes into `sink`. */
static void shared_frame(cugl_app_shared *sh, cugl_stream *on, GLuint sink, size_t size)
{
    CHECK(cugl_app_shared_cuda_begin(sh, on));
    CHECK(cugl_buffer_fill(cugl_app_shared_buffer(sh), &fill_value, 4, on));
    CHECK(cugl_app_shared_cuda_end(sh, on));
    CHECK(cugl_app_shared_gl_begin(sh));
    glCopyNamedBufferSubData(cugl_app_shared_gl_name(sh), sink, (GLintptr)(size - 4), 0, 4);
    CHECK(cugl_app_shared_gl_end(sh));
}

/* The same on a target (pipelined shared memory): CUDA fills it on `on`, GL
 * copies its last 4 bytes into `sink`. */
static void target_frame(cugl_app_target *t, cugl_stream *on, GLuint sink, size_t size)
{
    cugl_app_access a;
    cugl_buffer *b = NULL;
    CHECK(cugl_app_target_cuda_begin(t, on, &a));
    CHECK(cugl_buffer_from_handle(&b, a.ptr, size, NULL));
    CHECK(cugl_buffer_fill(b, &fill_value, 4, on));
    cugl_buffer_release(b);
    CHECK(cugl_app_target_cuda_end(t, on));
    CHECK(cugl_app_target_gl_begin(t));
    glCopyNamedBufferSubData(cugl_app_target_gl_name(t), sink, (GLintptr)(size - 4), 0, 4);
    CHECK(cugl_app_target_gl_end(t));
}

/* A pipelined buffer of shared memory that CUDA on `device` writes. */
static cugl_app_target *pipelined_target(cugl_device *device, size_t size)
{
    cugl_app_target *t = NULL;
    CHECK(cugl_app_target_create(&t, ctx, &(cugl_app_target_desc){
                                              .kind = CUGL_APP_TARGET_BUFFER,
                                              .interop = CUGL_APP_INTEROP_SHARED,
                                              .size = size,
                                              .device = device,
                                              .pipelined = true,
                                          }));
    return t;
}

/* Fail unless GL's sink got the bytes of the last update; then clear it. */
static void check_sink(GLuint sink, const char *what)
{
    uint32_t got = 0;
    glGetNamedBufferSubData(sink, 0, 4, &got);
    if (got != fill_value) {
        fprintf(stderr, "bench_interop: %s: GL saw 0x%08x, expected 0x%08x\n", what, got,
                fill_value);
        exit(1);
    }
    glClearNamedBufferData(sink, GL_R32UI, GL_RED_INTEGER, GL_UNSIGNED_INT, NULL);
}

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
        shared_frame(p->shared, stream, p->sink, p->size);
        break;
    case 2: /* pipelined */
        target_frame(p->piped, stream, p->sink, p->size);
        break;
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
            p.piped = pipelined_target(dev, p.size);
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
                check_sink(p.sink, names[path]);
            }
        }
        for (int path = 0; path < PATHS; path++)
            result[si][path] = median(t[path], ROUNDS);

        cugl_graphics_resource_release(p.mapped);
        cugl_app_shared_destroy(p.shared);
        cugl_app_target_destroy(p.piped);
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

/* ---- 3. Compute on another GPU ------------------------------------------------ */

enum { REMOTE_SIZES = 4, REMOTE_PATHS = 4 };

/* The peer transfer alone: `frames` fills of the memory from `on`, in one turn. */
static void fill_only(cugl_app_shared *sh, cugl_stream *on, int frames)
{
    CHECK(cugl_app_shared_cuda_begin(sh, on));
    for (int f = 0; f < frames; f++)
        CHECK(cugl_buffer_fill(cugl_app_shared_buffer(sh), &fill_value, 4, on));
    CHECK(cugl_app_shared_cuda_end(sh, on));
    CHECK(cugl_stream_sync(on));
    CHECK(cugl_app_shared_gl_begin(sh));
    CHECK(cugl_app_shared_gl_end(sh));
}

/* CUDA on device `ordinal` writing device 0's memory, against map/unmap on device 0. */
static void bench_remote_device(cugl_device *remote, int ordinal)
{
    const size_t mib[REMOTE_SIZES] = {1, 8, 16, 64};
    static const char *const names[REMOTE_PATHS] = {
        "one GPU: map/unmap", "other GPU: lockstep", "other GPU: pipelined", "transfer alone"};
    double result[REMOTE_SIZES][REMOTE_PATHS];
    cugl_stream *on = NULL;
    CHECK(cugl_stream_create(&on, remote, NULL));
    for (int si = 0; si < REMOTE_SIZES; si++) {
        size_t size = mib[si] << 20;
        GLuint sink = gl_buffer(4), mapped_name = gl_buffer(size);
        cugl_graphics_resource *mapped = NULL;
        CHECK(cugl_graphics_resource_from_gl_buffer(&mapped, dev, mapped_name,
                                                    CUGL_GRAPHICS_WRITE_DISCARD));
        cugl_app_shared *lock = NULL;
        CHECK(cugl_app_shared_buffer_create(&lock, dev, size));
        CHECK(cugl_app_shared_set_writers(lock, &remote, 1));
        cugl_app_target *piped = pipelined_target(remote, size);
        paths p = {.size = size, .sink = sink, .mapped_name = mapped_name, .mapped = mapped};

        int frames = size >= (64u << 20) ? 20 : 60;
        double t[REMOTE_PATHS][ROUNDS];
        for (int r = 0; r < ROUNDS; r++) {
            for (int path = 0; path < REMOTE_PATHS; path++) {
                if (path == 3) {
                    fill_only(lock, on, 1);
                    double t0 = now_us();
                    fill_only(lock, on, frames);
                    t[path][r] = (now_us() - t0) / frames;
                    continue;
                }
                for (int f = 0; f <= frames; f++) {
                    if (f == 1) { /* the first frame warms up */
                        idle();
                        CHECK(cugl_stream_sync(on));
                        t[path][r] = now_us();
                    }
                    if (path == 0)
                        frame_update(&p, 0);
                    else if (path == 1)
                        shared_frame(lock, on, sink, size);
                    else
                        target_frame(piped, on, sink, size);
                }
                idle();
                CHECK(cugl_stream_sync(on));
                t[path][r] = (now_us() - t[path][r]) / frames;
                check_sink(sink, names[path]);
            }
        }
        for (int path = 0; path < REMOTE_PATHS; path++)
            result[si][path] = median(t[path], ROUNDS);
        cugl_graphics_resource_release(mapped);
        cugl_app_shared_destroy(lock);
        cugl_app_target_destroy(piped);
        GLuint del[] = {sink, mapped_name};
        glDeleteBuffers(2, del);
    }
    cugl_stream_release(on);

    printf("\nCompute on device %d, GL on device 0: one update per frame, microseconds\n",
           ordinal);
    printf("| size | %s | %s | %s | %s | map/unmap / lockstep |\n", names[0], names[1],
           names[2], names[3]);
    printf("|---|---|---|---|---|---|\n");
    for (int si = 0; si < REMOTE_SIZES; si++)
        printf("| %zu MiB | %.1f | %.1f | %.1f | %.1f | %.1fx |\n", mib[si], result[si][0],
               result[si][1], result[si][2], result[si][3], result[si][0] / result[si][1]);
    double lock1 = result[0][1], ratio1 = result[0][0] / lock1, lock16 = result[2][1];
    printf("goal: 1 MiB lockstep <= 45 us: %.1f us, %s\n", lock1, lock1 <= 45 ? "met" : "MISSED");
    printf("goal: 1 MiB lockstep >= 7x faster than one-GPU map/unmap: %.1fx, %s\n", ratio1,
           ratio1 >= 7 ? "met" : "MISSED");
    printf("goal: 16 MiB lockstep <= 90 us: %.1f us, %s\n", lock16, lock16 <= 90 ? "met" : "MISSED");
    for (int si = 0; si < REMOTE_SIZES; si++) {
        double over = result[si][2] - result[si][3];
        printf("goal: %zu MiB pipelined <= transfer + 10 us: %.1f us over the transfer, %s\n",
               mib[si], over, over <= 10 ? "met" : "MISSED");
    }
}

/* Section 3 for every other device that has a peer path to device 0. */
static void bench_remote(int count)
{
    if (count < 2) {
        printf("\ncompute on another GPU: skipped: one CUDA device\n");
        return;
    }
    for (int i = 1; i < count; i++) {
        cugl_device *remote = NULL;
        bool peer = false;
        CHECK(cugl_device_get(&remote, i));
        CHECK(cugl_device_can_access_peer(&peer, remote, dev));
        if (!peer) {
            printf("\ncompute on device %d: skipped: no peer path to device 0\n", i);
            continue;
        }
        CHECK(cugl_device_set_current(remote)); /* initialized, for the writers list */
        CHECK(cugl_device_set_current(dev));
        bench_remote_device(remote, i);
    }
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
    ctx = NULL;
    st = cugl_app_context_create(&ctx, &(cugl_app_context_desc){.mode = CUGL_APP_HEADLESS,
                                                                .width = 64,
                                                                .height = 64,
                                                                .cuda_device = 0});
    if (st == CUGL_ERROR_NOT_SUPPORTED) {
        printf("bench_interop: skipped: %s\n", cugl_last_error());
        return 77;
    }
    CHECK(st);
    test_gl_load();
    char name[256];
    cugl_device_properties props;
    CHECK(cugl_device_get_properties(dev, &props));
    snprintf(name, sizeof name, "%s", props.name);
    printf("bench_interop on %s; GL: %s (%s)\n", name, cugl_app_context_renderer(ctx),
           cugl_app_context_platform(ctx));
    CHECK(cugl_stream_create(&stream, dev, NULL));
    bench_mapping();
    bench_updates();
    bench_remote(count);
    cugl_stream_release(stream);
    cugl_app_context_destroy(ctx);
    return 0;
}
