/*
 * Exhaustion on a real GPU: device, pinned and exportable memory allocated
 * until the driver refuses; GL buffers registered, and streams, events,
 * texture objects and surface objects created, until it refuses or a cap is
 * reached. A refusal must be a clean cugl error whose message names the
 * public function (and, for memory, the size asked for); once everything is
 * given back, the same calls work again, checked on the values they move.
 * The figures reached are printed as TAP comments.
 *
 * Everything a test makes goes on one stack on the heap, which the teardown
 * empties: a failed assertion leaves the test by longjmp, and the next test
 * must still find the device's memory free. The test runs alone (meson's
 * is_parallel: false): while it holds the device, any other would fail.
 */
#include <time.h>
#include <unistd.h>

#include "test_gl.h"

#include "gpu_bytes.h"
#include "gpu_kernels.h"

extern const unsigned char cugl_texture_kernels_fatbin[];
extern const size_t cugl_texture_kernels_fatbin_size;

#define GiB ((size_t)1 << 30)

static cugl_device *dev;
static cugl_device_properties props;
static cugl_stream *stream;
static cugl_module *texture_kernels;
static cugl_app_context *ctx; /* NULL where no GL context on the device can be made */

/* ---- What a test holds ---------------------------------------------------- */

typedef struct held_item {
    void *object;
    void (*drop)(void *object);
} held_item;

static struct {
    held_item *items;
    size_t count, capacity;
} held;

/* Hold `object` until release_to gives it back with `drop`; NULL holds nothing. */
static void *keep(void *object, void (*drop)(void *object))
{
    if (!object)
        return NULL;
    if (held.count == held.capacity) {
        size_t capacity = held.capacity ? held.capacity * 2 : 1024;
        held_item *items = realloc(held.items, capacity * sizeof *items);
        if (!items) {
            drop(object);
            fail_msg("cannot hold %zu objects", capacity);
        }
        held.items = items;
        held.capacity = capacity;
    }
    held.items[held.count++] = (held_item){object, drop};
    return object;
}

/* Give back, newest first, everything held after the first `mark` objects:
 * views before the buffers they view, textures before their array. */
static void release_to(size_t mark)
{
    while (held.count > mark) {
        held_item item = held.items[--held.count];
        item.drop(item.object);
    }
}

/* Each case's time, from its setup to its teardown, as a TAP comment. */
static struct timespec case_start;

static int start_clock(void **state)
{
    (void)state;
    clock_gettime(CLOCK_MONOTONIC, &case_start);
    return 0;
}

static int release_all(void **state)
{
    (void)state;
    release_to(0);
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    print_message("# %.2f s\n", (double)(now.tv_sec - case_start.tv_sec) +
                                    (double)(now.tv_nsec - case_start.tv_nsec) / 1e9);
    return 0;
}

static void drop_buffer(void *p) { cugl_buffer_release(p); }
static void drop_memory_resource(void *p) { cugl_memory_resource_release(p); }
static void drop_host(void *p) { gpu_host_free(p); }
static void drop_device_words(void *p) { gpu_free((CUdeviceptr)(uintptr_t)p); }
static void drop_graphics(void *p) { cugl_graphics_resource_release(p); }
static void drop_stream(void *p) { cugl_stream_release(p); }
static void drop_event(void *p) { cugl_event_release(p); }
static void drop_array(void *p) { cugl_array_release(p); }
static void drop_texture(void *p) { cugl_texture_release(p); }
static void drop_surface(void *p) { cugl_surface_release(p); }

static void drop_gl_buffer(void *p)
{
    GLuint name = (GLuint)(uintptr_t)p;
    glDeleteBuffers(1, &name);
}

/* Held pinned staging memory of n bytes; *buffer is a buffer over it. */
static uint8_t *held_staging(size_t n, cugl_buffer **buffer)
{
    staging s = staging_new(n);
    keep(s.host, drop_host);
    *buffer = keep(s.buffer, drop_buffer);
    return s.host;
}

/* A held, non-owning buffer over `size` bytes of `b` from `offset`. */
static cugl_buffer *held_view(const cugl_buffer *b, size_t offset, size_t size)
{
    cugl_buffer *v = NULL;
    assert_ok(cugl_buffer_from_handle(&v, cugl_buffer_handle(b) + offset, size, NULL));
    return keep(v, drop_buffer);
}

/* Held device memory for n 32-bit words, straight from the driver. */
static CUdeviceptr held_device_words(size_t n)
{
    CUdeviceptr p = gpu_alloc(n * sizeof(uint32_t));
    keep((void *)(uintptr_t)p, drop_device_words);
    return p;
}

/* A refused call: a status cugl knows, the thread's last error recording
 * it, and a message that begins with the public function's name. */
static void expect_named_refusal(cugl_status st, const char *function)
{
    if (st == CUGL_OK || strcmp(cugl_status_name(st), "CUGL_STATUS_UNKNOWN") == 0)
        fail_msg("%s returned %d, not a cugl error", function, (int)st);
    if (cugl_last_status() != st)
        fail_msg("%s returned %s, but the last error records %s", function,
                 cugl_status_name(st), cugl_status_name(cugl_last_status()));
    char want[96];
    snprintf(want, sizeof want, "%s: ", function);
    if (strncmp(cugl_last_error(), want, strlen(want)) != 0)
        fail_msg("%s returned %s with the message \"%s\", which does not begin \"%s\"", function,
                 cugl_status_name(st), cugl_last_error(), want);
}

/* ---- Memory --------------------------------------------------------------- */

/* The sizes asked for, largest first: the large ones fill the memory
 * quickly, the smaller ones what is left between them. */
static const size_t sizes[] = {GiB, 256 * MiB, 64 * MiB, 16 * MiB};
#define NUM_SIZES (sizeof sizes / sizeof sizes[0])

/* More than any machine has: refused at once, however much is free. */
#define ABSURD_BYTES ((size_t)1 << 50)

/* A bound on allocations, so that a resource that never refuses cannot
 * loop for ever: at these sizes, more than any device's memory holds. */
enum { MAX_ALLOCATIONS = 1 << 14 };

typedef struct memory_case {
    const char *name;
    cugl_memory_kind kind;
    cugl_status (*make)(cugl_memory_resource **out);
    bool current_pool; /* the device's pool, the process's, not the resource's own */
} memory_case;

static cugl_status make_device_current(cugl_memory_resource **out)
{
    return cugl_device_memory_resource_create(out, dev, NULL);
}

static cugl_status make_device_own(cugl_memory_resource **out)
{
    return cugl_device_memory_resource_create(out, dev,
                                              &(cugl_device_memory_desc){.own_pool = true});
}

static cugl_status make_pinned(cugl_memory_resource **out)
{
    return cugl_pinned_memory_resource_create(out, dev, NULL);
}

static cugl_status make_exportable(cugl_memory_resource **out)
{
    return cugl_exportable_memory_resource_create(out, dev);
}

static const memory_case memory_cases[] = {
    {"device memory, the device's current pool", CUGL_MEMORY_DEVICE, make_device_current, true},
    {"device memory, a pool of its own", CUGL_MEMORY_DEVICE, make_device_own, false},
    {"pinned host memory", CUGL_MEMORY_PINNED, make_pinned, false},
    {"exportable device memory", CUGL_MEMORY_EXPORTABLE, make_exportable, false},
};
#define NUM_MEMORY_CASES (sizeof memory_cases / sizeof memory_cases[0])

/* The number after `key` at the start of a line of `path` (NULL: the first
 * line's), or SIZE_MAX where there is none ("max" in a cgroup file). */
static size_t file_number(const char *path, const char *key)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return SIZE_MAX;
    char line[256];
    unsigned long long value = 0;
    bool found = false;
    size_t k = key ? strlen(key) : 0;
    while (!found && fgets(line, sizeof line, f)) {
        if (key && strncmp(line, key, k) != 0)
            continue;
        found = sscanf(line + k, "%llu", &value) == 1;
        if (!key)
            break;
    }
    fclose(f);
    return found && value < SIZE_MAX ? (size_t)value : SIZE_MAX;
}

/*
 * The most pinned host memory to take: three quarters of the least of the
 * physical memory, what the kernel says is available and this cgroup's
 * limit. Pinning until the driver refuses could otherwise take the whole
 * host, and past the cgroup's limit the OOM killer answers, not the driver.
 */
static size_t pinned_cap(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    size_t least = pages > 0 && page > 0 ? (size_t)pages * (size_t)page : SIZE_MAX;
    size_t available_kib = file_number("/proc/meminfo", "MemAvailable:");
    if (available_kib < SIZE_MAX / 1024 && available_kib * 1024 < least)
        least = available_kib * 1024;
    size_t cgroup = file_number("/sys/fs/cgroup/memory.max", NULL);
    if (cgroup < least)
        least = cgroup;
    return least / 4 * 3;
}

/* A refused allocation: out of memory, no buffer, and a message that names
 * the function and the size asked for, as memory.c writes it. */
static void expect_out_of_memory(cugl_status st, const cugl_buffer *b, size_t size)
{
    if (st != CUGL_ERROR_OUT_OF_MEMORY)
        fail_msg("allocating %zu bytes returned %s, expected CUGL_ERROR_OUT_OF_MEMORY (%s)",
                 size, cugl_status_name(st), cugl_last_error());
    assert_null(b);
    expect_named_refusal(st, "cugl_memory_resource_allocate");
    char want[128];
    snprintf(want, sizeof want,
             "cugl_memory_resource_allocate: out of memory: cannot allocate %zu bytes ", size);
    if (strncmp(cugl_last_error(), want, strlen(want)) != 0)
        fail_msg("message \"%s\" does not begin \"%s\"", cugl_last_error(), want);
}

/*
 * Allocate from `mr`, each size until it is refused, holding every buffer,
 * no more than `cap` bytes in all. Returns whether the smallest size was
 * refused: the memory is full.
 */
static bool fill(cugl_memory_resource *mr, size_t cap, size_t *count, size_t *bytes)
{
    bool refused = false;
    *count = 0;
    *bytes = 0;
    for (size_t i = 0; i < NUM_SIZES; i++) {
        refused = false;
        while (*count < MAX_ALLOCATIONS && sizes[i] <= cap - *bytes) {
            cugl_buffer *b = NULL;
            cugl_clear_error();
            cugl_status st = cugl_memory_resource_allocate(&b, mr, sizes[i], stream);
            if (st != CUGL_OK) {
                expect_out_of_memory(st, b, sizes[i]);
                refused = true;
                break;
            }
            keep(b, drop_buffer);
            ++*count;
            *bytes += sizes[i];
        }
    }
    return refused;
}

static void expect_words(const uint8_t *p, size_t n, uint32_t word, const char *what)
{
    for (size_t i = 0; i + sizeof word <= n; i += sizeof word)
        if (memcmp(p + i, &word, sizeof word) != 0)
            fail_msg("%s: bytes %zu to %zu of %zu are %02x %02x %02x %02x, expected the word "
                     "0x%08x",
                     what, i, i + 3, n, p[i], p[i + 1], p[i + 2], p[i + 3], word);
}

/*
 * After everything was given back: the largest size is granted again, and
 * a fill and copies through that memory move exact bytes.
 */
static void works_again(const memory_case *c, cugl_memory_resource *mr)
{
    const size_t n = 16 * MiB, big_size = sizes[0];
    const uint32_t word = 0x5a3c96e1u;
    cugl_buffer *big = NULL, *small = NULL, *in, *out;
    assert_ok(cugl_memory_resource_allocate(&big, mr, big_size, stream));
    keep(big, drop_buffer);
    assert_ok(cugl_memory_resource_allocate(&small, mr, n, stream));
    keep(small, drop_buffer);
    uint8_t *in_host = held_staging(n, &in), *out_host = held_staging(n, &out);
    write_pattern(in_host, n, 7);

    assert_ok(cugl_buffer_fill(big, &word, sizeof word, stream));
    assert_ok(cugl_buffer_copy_from(small, in, stream));
    cugl_buffer *tail = held_view(big, big_size - n, n);
    assert_ok(cugl_buffer_copy_from(tail, small, stream));
    assert_ok(cugl_buffer_copy_from(out, held_view(big, 0, n), stream));
    assert_ok(cugl_stream_sync(stream));
    char what[160];
    snprintf(what, sizeof what, "%s: the first %zu bytes of a fill of %zu", c->name, n,
             big_size);
    expect_words(out_host, n, word, what);

    assert_ok(cugl_buffer_copy_from(out, tail, stream));
    assert_ok(cugl_stream_sync(stream));
    snprintf(what, sizeof what, "%s: data copied host, buffer, end of a %zu-byte buffer, host",
             c->name, big_size);
    expect_pattern(out_host, n, 7, what);
}

/* Give the buffers back, and the pool's memory to the driver. */
static void give_back(cugl_memory_resource *mr, size_t mark)
{
    release_to(mark);
    assert_ok(cugl_stream_sync(stream));
    assert_ok(cugl_memory_resource_trim(mr, 0));
}

static void memory_until_refused(void **state)
{
    const memory_case *c = *state;
    if (!gpu_memory_kind_applies(&props, c->kind, c->name))
        return;
    const int64_t bytes_before = cugl_live_bytes(), objects_before = cugl_live_objects();
    cugl_memory_resource *mr = NULL;
    assert_ok(c->make(&mr));
    keep(mr, drop_memory_resource);
    size_t mark = held.count;

    cugl_buffer *absurd = NULL;
    cugl_clear_error();
    cugl_status st = cugl_memory_resource_allocate(&absurd, mr, ABSURD_BYTES, stream);
    keep(absurd, drop_buffer);
    expect_out_of_memory(st, absurd, ABSURD_BYTES);

    size_t cap = c->kind == CUGL_MEMORY_PINNED ? pinned_cap() : SIZE_MAX;
    size_t count = 0, bytes = 0;
    bool full = fill(mr, cap, &count, &bytes);
    assert_true(bytes > 0);
    if (full)
        print_message("# %s: refused after %zu allocations, %zu bytes (%.1f GiB)\n", c->name,
                      count, bytes, (double)bytes / (double)GiB);
    else if (c->kind == CUGL_MEMORY_PINNED)
        print_message("# %s: not refused within the cap of %zu bytes (%.1f GiB, 3/4 of what "
                      "the host can spare): %zu allocations, %zu bytes held\n",
                      c->name, cap, (double)cap / (double)GiB, count, bytes);
    else
        fail_msg("%s: %zu allocations, %zu bytes, and the driver refused none", c->name, count,
                 bytes);

    give_back(mr, mark);
    /* A pool of the resource's own keeps nothing once trimmed; for the
     * device's current pool, cugl's own counts checked at the end speak. */
    if (cugl_memory_resource_pool_handle(mr)) {
        cugl_pool_stats s = pool_stats(mr);
        if (s.used_current != 0 || s.used_high < bytes ||
            (!c->current_pool && s.reserved_current != 0))
            fail_msg("%s: after giving back and trimming, %llu bytes used and %llu reserved; "
                     "used high %llu, %zu bytes were held",
                     c->name, (unsigned long long)s.used_current,
                     (unsigned long long)s.reserved_current, (unsigned long long)s.used_high,
                     bytes);
    }
    works_again(c, mr);
    give_back(mr, mark);
    release_to(mark - 1);

    /* What this process holds through cugl: the device's free memory
     * moves with other processes and with tools inside this one. */
    if (cugl_live_bytes() != bytes_before || cugl_live_objects() != objects_before)
        fail_msg("%s: cugl held %lld bytes and %lld objects before, %lld and %lld after "
                 "everything was given back",
                 c->name, (long long)bytes_before, (long long)objects_before,
                 (long long)cugl_live_bytes(), (long long)cugl_live_objects());
}

/* ---- GL buffer registrations ---------------------------------------------- */

/* A bound, not a goal: the driver has refused none up to 100,000. */
enum { MAX_REGISTRATIONS = 20000, GL_BUFFER_BYTES = 256 };

/* A held GL buffer of `size` bytes of immutable storage (0 if GL refused it). */
static GLuint held_gl_buffer(size_t size, const void *data)
{
    GLuint name = 0;
    glCreateBuffers(1, &name);
    keep((void *)(uintptr_t)name, drop_gl_buffer);
    if (name)
        glNamedBufferStorage(name, (GLsizeiptr)size, data, GL_DYNAMIC_STORAGE_BIT);
    return glGetError() == GL_NO_ERROR ? name : 0;
}

static void gl_buffers_until_refused(void **state)
{
    (void)state;
    if (!ctx) {
        gpu_not_applicable("no GL context on the CUDA device");
        return;
    }
    while (glGetError() != GL_NO_ERROR)
        continue;
    size_t registered = 0;
    cugl_status st = CUGL_OK;
    while (registered < MAX_REGISTRATIONS) {
        GLuint name = held_gl_buffer(GL_BUFFER_BYTES, NULL);
        if (!name) {
            print_message("# GL refused buffer %zu before CUDA refused a registration\n",
                          registered + 1);
            break;
        }
        cugl_graphics_resource *r = NULL;
        cugl_clear_error();
        st = cugl_graphics_resource_from_gl_buffer(&r, dev, name, CUGL_GRAPHICS_NONE);
        if (st != CUGL_OK) {
            assert_null(r);
            break;
        }
        keep(r, drop_graphics);
        registered++;
    }
    if (st != CUGL_OK) {
        expect_named_refusal(st, "cugl_graphics_resource_from_gl_buffer");
        print_message("# GL buffers: %zu registered, then %s: %s\n", registered,
                      cugl_status_name(st), cugl_last_error());
    } else {
        print_message("# GL buffers: %zu registered, none refused\n", registered);
    }
    release_to(0);

    /* Registering and mapping work again: CUDA writes, GL reads. */
    enum { N = 1 << 16 };
    GLuint name = held_gl_buffer(N, NULL);
    assert_true(name != 0);
    cugl_graphics_resource *r = NULL;
    assert_ok(cugl_graphics_resource_from_gl_buffer(&r, dev, name, CUGL_GRAPHICS_WRITE_DISCARD));
    keep(r, drop_graphics);
    cugl_buffer *in = NULL, *mapped = NULL;
    uint8_t *in_host = held_staging(N, &in);
    write_pattern(in_host, N, 11);
    assert_ok(cugl_graphics_resource_map(&mapped, r, stream));
    keep(mapped, drop_buffer);
    assert_int_equal(cugl_buffer_size(mapped), N);
    assert_ok(cugl_buffer_copy_from(mapped, in, stream));
    assert_ok(cugl_buffer_close(mapped, NULL)); /* unmaps, after the copy */
    assert_false(cugl_graphics_resource_is_mapped(r));
    uint8_t *got = keep(malloc(N), free);
    assert_non_null(got);
    glGetNamedBufferSubData(name, 0, N, got);
    assert_int_equal(glGetError(), GL_NO_ERROR);
    expect_pattern(got, N, 11, "GL's view of what CUDA wrote after the registrations");
}

/* ---- Streams, events, textures, surfaces ---------------------------------- */

/* Far more than a program uses; the driver may never refuse before it.
 * Of these it refuses streams alone, an H100 at about 147,000, but making
 * them takes 70 s there (100 s under ASan): a refused creation is the
 * fault sweep's (tests/fault), as every driver call's failure is. */
enum { MAX_OBJECTS = 50000 };

/* What textures and surfaces are made over: 1-channel floats. */
enum { IMAGE_W = 16, IMAGE_H = 8, IMAGE_N = IMAGE_W * IMAGE_H };
static cugl_array *image;

/* cugl_tex_sample's mode for tex2D (kernels/tests/texture_kernels.cu). */
enum { SAMPLE_2D = 2 };

typedef struct object_case {
    const char *name;
    const char *creator; /* the public function that makes one */
    cugl_status (*create)(void **out);
    void (*drop)(void *object);
    void (*works)(void *object); /* checks one on values read back */
} object_case;

static cugl_status make_stream(void **out)
{
    cugl_stream *s = NULL;
    cugl_status st = cugl_stream_create(&s, dev, NULL);
    *out = s;
    return st;
}

static cugl_status make_event(void **out)
{
    cugl_event *e = NULL;
    cugl_status st = cugl_event_create(&e, dev, NULL);
    *out = e;
    return st;
}

static cugl_status make_texture(void **out)
{
    cugl_texture *t = NULL;
    cugl_status st = cugl_texture_create(
        &t, dev, &(cugl_resource_desc){.kind = CUGL_RESOURCE_ARRAY, .array = image}, NULL);
    *out = t;
    return st;
}

static cugl_status make_surface(void **out)
{
    cugl_surface *s = NULL;
    cugl_status st = cugl_surface_create(
        &s, dev, &(cugl_resource_desc){.kind = CUGL_RESOURCE_ARRAY, .array = image});
    *out = s;
    return st;
}

static void launch_texture_kernel(const char *name, const cugl_launch_config *config,
                                  void **args, size_t num_args)
{
    cugl_kernel *k = NULL;
    assert_ok(cugl_module_get_kernel(&k, texture_kernels, name));
    cugl_status st = cugl_launch(stream, config, k, args, num_args);
    cugl_kernel_release(k);
    if (st != CUGL_OK)
        fail_msg("launching %s returned %s: %s", name, cugl_status_name(st), cugl_last_error());
}

/* A kernel on the stream writes i * 3 to every word. */
static void stream_works(void *object)
{
    cugl_stream *s = object;
    enum { N = 4096 };
    CUdeviceptr out = held_device_words(N);
    gpu_fill_u32(out, 0xdeadbeefu, N);
    gpu_launch_iota(s, out, N, 3);
    assert_ok(cugl_stream_sync(s));
    uint32_t *got = keep(malloc(N * sizeof *got), free);
    assert_non_null(got);
    gpu_read(got, out, N * sizeof *got);
    for (uint32_t i = 0; i < N; i++)
        if (got[i] != i * 3)
            fail_msg("a new stream: word %u is %u, expected %u", i, got[i], i * 3);
}

/* The event completes with a kernel that sleeps, then writes. */
static void event_works(void *object)
{
    cugl_event *e = object;
    CUdeviceptr word = held_device_words(1);
    gpu_fill_u32(word, 0, 1);
    gpu_launch_sleep(stream, GPU_MS(2), word, 0xe7e7u);
    assert_ok(cugl_event_record(e, stream));
    assert_ok(cugl_event_sync(e));
    bool done = false;
    assert_ok(cugl_event_query(e, &done));
    assert_true(done);
    uint32_t got = 0;
    gpu_read(&got, word, sizeof got);
    assert_int_equal(got, 0xe7e7u);
}

/* Point sampling at every texel's centre returns the texel. */
static void texture_works(void *object)
{
    float texels[IMAGE_N], got[IMAGE_N];
    struct {
        float x, y, z, w;
    } at[IMAGE_N];
    for (unsigned i = 0; i < IMAGE_N; i++) {
        texels[i] = 0.25f * (float)i + 1.0f;
        at[i].x = (float)(i % IMAGE_W) + 0.5f;
        at[i].y = (float)(i / IMAGE_W) + 0.5f;
        at[i].z = at[i].w = 0.0f;
    }
    assert_ok(cugl_array_copy_from_host(image, texels, sizeof texels, stream));
    CUdeviceptr coords = held_device_words(IMAGE_N * 4); /* four floats a texel */
    CUdeviceptr out = held_device_words(IMAGE_N);
    gpu_write(coords, at, sizeof at);
    uint64_t handle = cugl_texture_handle(object);
    assert_true(handle != 0);
    int mode = SAMPLE_2D;
    unsigned n = IMAGE_N;
    void *args[] = {&handle, &mode, &coords, &out, &n};
    launch_texture_kernel("cugl_tex_sample", &(cugl_launch_config){.grid = {1}, .block = {n}},
                          args, 5);
    assert_ok(cugl_stream_sync(stream));
    gpu_read(got, out, sizeof got);
    for (unsigned i = 0; i < IMAGE_N; i++)
        if (got[i] != texels[i])
            fail_msg("a new texture: texel (%u, %u) read as %g, expected %g", i % IMAGE_W,
                     i / IMAGE_W, (double)got[i], (double)texels[i]);
}

/* A kernel writes x + 1000 y + 0.5 through the surface; the array holds it. */
static void surface_works(void *object)
{
    uint64_t handle = cugl_surface_handle(object);
    assert_true(handle != 0);
    unsigned w = IMAGE_W, h = IMAGE_H;
    float base = 0.5f;
    void *args[] = {&handle, &w, &h, &base};
    launch_texture_kernel("cugl_surf_write_2d",
                          &(cugl_launch_config){.grid = {1, 1, 1}, .block = {w, h, 1}}, args, 4);
    float got[IMAGE_N];
    assert_ok(cugl_array_copy_to_host(got, sizeof got, image, stream));
    assert_ok(cugl_stream_sync(stream));
    for (unsigned i = 0; i < IMAGE_N; i++) {
        float want = (float)(i % IMAGE_W) + 1000.0f * (float)(i / IMAGE_W) + base;
        if (got[i] != want)
            fail_msg("a new surface: element (%u, %u) is %g, expected %g", i % IMAGE_W,
                     i / IMAGE_W, (double)got[i], (double)want);
    }
}

static const object_case object_cases[] = {
    {"streams", "cugl_stream_create", make_stream, drop_stream, stream_works},
    {"events", "cugl_event_create", make_event, drop_event, event_works},
    {"texture objects", "cugl_texture_create", make_texture, drop_texture, texture_works},
    {"surface objects", "cugl_surface_create", make_surface, drop_surface, surface_works},
};
#define NUM_OBJECT_CASES (sizeof object_cases / sizeof object_cases[0])

static void objects_until_refused(void **state)
{
    const object_case *c = *state;
    image = NULL;
    assert_ok(cugl_array_create(&image, dev,
                                &(cugl_array_desc){.ndim = 2,
                                                   .shape = {IMAGE_W, IMAGE_H},
                                                   .format = CUGL_FORMAT_F32,
                                                   .num_channels = 1,
                                                   .surface_load_store = true}));
    keep(image, drop_array);
    size_t mark = held.count, made = 0;
    cugl_status st = CUGL_OK;
    while (made < MAX_OBJECTS) {
        void *object = NULL;
        cugl_clear_error();
        st = c->create(&object);
        if (st != CUGL_OK) {
            assert_null(object);
            break;
        }
        keep(object, c->drop);
        made++;
    }
    if (st != CUGL_OK) {
        expect_named_refusal(st, c->creator);
        print_message("# %s: %zu made, then %s: %s\n", c->name, made, cugl_status_name(st),
                      cugl_last_error());
    } else {
        print_message("# %s: %zu made, none refused\n", c->name, made);
    }
    release_to(mark);

    void *object = NULL;
    assert_ok(c->create(&object));
    keep(object, c->drop);
    c->works(object);
    release_to(0);
}

/* ---- main ----------------------------------------------------------------- */

static void bail_out(void)
{
    printf("Bail out! %s\n", cugl_last_error());
    exit(1);
}

int main(void)
{
    dev = cugl_test_device();
    if (cugl_device_get_properties(dev, &props) != CUGL_OK ||
        cugl_stream_create(&stream, dev, NULL) != CUGL_OK)
        bail_out();
    gpu_mem_init();
    gpu_test_module(dev);
    if (cugl_module_load_data(&texture_kernels, dev, cugl_texture_kernels_fatbin,
                              cugl_texture_kernels_fatbin_size) != CUGL_OK)
        bail_out();
    cugl_status st = cugl_app_context_create(
        &ctx, &(cugl_app_context_desc){.mode = CUGL_APP_HEADLESS, .width = 64, .height = 64,
                                       .cuda_device = cugl_device_ordinal(dev)});
    if (st == CUGL_ERROR_NOT_SUPPORTED)
        printf("# no GL context: %s\n", cugl_last_error());
    else if (st != CUGL_OK)
        bail_out();
    else
        test_gl_load();

    struct CMUnitTest tests[NUM_MEMORY_CASES + 1 + NUM_OBJECT_CASES];
    size_t n = 0;
    for (size_t i = 0; i < NUM_MEMORY_CASES; i++)
        tests[n++] = (struct CMUnitTest){.name = memory_cases[i].name,
                                         .test_func = memory_until_refused,
                                         .setup_func = start_clock,
                                         .teardown_func = release_all,
                                         .initial_state = (void *)&memory_cases[i]};
    tests[n++] = (struct CMUnitTest){.name = "GL buffer registrations",
                                     .test_func = gl_buffers_until_refused,
                                     .setup_func = start_clock,
                                     .teardown_func = release_all};
    for (size_t i = 0; i < NUM_OBJECT_CASES; i++)
        tests[n++] = (struct CMUnitTest){.name = object_cases[i].name,
                                         .test_func = objects_until_refused,
                                         .setup_func = start_clock,
                                         .teardown_func = release_all,
                                         .initial_state = (void *)&object_cases[i]};
    int failed = cugl_test_run(tests);

    free(held.items);
    cugl_module_release(texture_kernels);
    cugl_stream_release(stream);
    cugl_app_context_destroy(ctx);
    return failed;
}
