/*
 * fault_scenario.c - one round of what the suites do (device, stream,
 * events, pools, buffers, copies, arrays and their kernel copies, pageable
 * host copies, textures, surfaces, a module and a launch, a strided view
 * copy, a registered GL buffer mapped and unmapped, shared memory; then
 * streams waiting on each other and timed events, managed memory, an IPC
 * pool and buffer exported and imported, an exportable buffer's file
 * descriptor, a mipmapped array's level, a GL texture mapped as an array),
 * run under the fault shim (fault_shim.h) with one driver call failed.
 *
 * A warm-up round first (not counted: caches and modules load there); then
 * the shim is armed for round 1, which stops at the first failed step;
 * then disarmed for round 2, which must pass whole with exact data. After
 * a failed step:
 *   - the status is not CUGL_OK and cugl_last_error() starts with the name
 *     of the public function called and names the driver call that failed;
 *   - everything made so far is released, and round 2 works;
 *   - the process's open file descriptors and the device pool's memory in
 *     use are back to where they were before round 1; unless the failed
 *     call was one of the clean-up's (a pool the driver would not destroy
 *     keeps what it holds), which is printed, not a defect.
 * Each broken rule is a line "DEFECT: ..." on stderr and exit status 1; a
 * failed step whose call reports success where the data is wrong is one
 * too. Exit 0 otherwise; 77 without a device or GL.
 *
 * usage: fault_scenario [load]   (CUGL_LIBCUDA names the shim)
 *   load: only load the driver (cugl_device_count), the shim armed from
 *   the start: a failure there must be reported naming the call.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_gl.h"
#include <cugl/app_shared.h>
#include <cugl/cugl.h>

extern const unsigned char cugl_test_kernels_fatbin[];
extern const size_t cugl_test_kernels_fatbin_size;

enum { N = 16 << 20, WORDS = N / 4, W = 1024, H = N / 4 / 1024, GLN = 1 << 20 };

static const char *(*shim_failed)(void);
static void (*shim_arm)(int on);
static int defects;
static cugl_app_context *ctx;
/* The failed call was one of those that release what round 1 made: what
 * it was to release may stay (a pool the driver would not destroy keeps
 * its memory and descriptors), so the leak checks only report. */
static bool failed_in_release;

#define DEFECT(...)                                                                             \
    do {                                                                                        \
        fprintf(stderr, "DEFECT: " __VA_ARGS__);                                                \
        fputc('\n', stderr);                                                                    \
        defects++;                                                                              \
    } while (0)

/* A step's status: true to go on. A failure must be named by `fn` and name
 * the driver call the shim failed. */
static bool step(cugl_status st, const char *fn, bool counted)
{
    if (st == CUGL_OK)
        return true;
    const char *msg = cugl_last_error();
    const char *drv = shim_failed ? shim_failed() : NULL;
    size_t len = strlen(fn);
    fprintf(stderr, "# %s failed (driver call %s): %s\n", fn, drv ? drv : "none", msg);
    if (!counted)
        DEFECT("%s failed with no injected failure: %s", fn, msg);
    if (strncmp(msg, fn, len) != 0 || msg[len] != ':')
        DEFECT("%s's failure is not named by it: \"%s\"", fn, msg);
    if (drv && !strstr(msg, drv))
        DEFECT("%s's failure does not name the failed %s: \"%s\"", fn, drv, msg);
    return false;
}

#define STEP(call, fn)                                                                          \
    do {                                                                                        \
        if (!step((call), (fn), counted))                                                       \
            goto out;                                                                           \
    } while (0)

static bool all_words(const uint32_t *w, size_t n, uint32_t value, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (w[i] != value) {
            DEFECT("%s: word %zu is 0x%x, not 0x%x", what, i, w[i], value);
            return false;
        }
    return true;
}

/* The open file descriptors, as a set of numbers below FDS; returns how
 * many there are. */
enum { FDS = 4096 };
static int open_fds(bool *open)
{
    memset(open, 0, FDS * sizeof *open);
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    int self = dirfd(d), n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        int fd = atoi(e->d_name);
        if (e->d_name[0] != '.' && fd != self && fd >= 0 && fd < FDS) {
            open[fd] = true;
            n++;
        }
    }
    closedir(d);
    return n;
}

/* What the descriptors open in `now` and not in `before` point at. */
static void name_new_fds(const bool *before, const bool *now)
{
    for (int fd = 0; fd < FDS; fd++) {
        if (!now[fd] || before[fd])
            continue;
        char link[64], target[256];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, target, sizeof target - 1);
        target[n > 0 ? n : 0] = '\0';
        fprintf(stderr, "# still open: fd %d -> %s\n", fd, target);
    }
}

/* One round; `counted`: the shim may fail a call in it. Returns whether it
 * got to the end. */
static bool run_round(bool counted)
{
    bool done = false;
    cugl_device *dev = NULL;
    cugl_stream *s = NULL;
    cugl_event *e = NULL;
    cugl_memory_resource *dmr = NULL, *pmr = NULL;
    cugl_buffer *a = NULL, *b = NULL, *h = NULL, *mapped = NULL;
    cugl_array *arr = NULL, *sarr = NULL;
    cugl_texture *tex = NULL;
    cugl_surface *surf = NULL;
    cugl_module *mod = NULL;
    cugl_kernel *k = NULL;
    cugl_view *vsrc = NULL, *vdst = NULL;
    cugl_graphics_resource *res = NULL;
    cugl_app_shared *sh = NULL;
    cugl_stream *s2 = NULL;
    cugl_event *e2 = NULL;
    cugl_memory_resource *mmr = NULL, *ipc = NULL, *ipc_in = NULL, *xmr = NULL;
    cugl_buffer *mb = NULL, *ib = NULL, *ib_in = NULL, *xb = NULL;
    cugl_mipmapped_array *mip = NULL;
    cugl_array *level = NULL, *img_arr = NULL;
    cugl_graphics_resource *img = NULL;
    int pool_fd = -1, buffer_fd = -1;
    GLuint glbuf = 0, gltex = 0;
    uint32_t *host = malloc(N), *back = malloc(N), *glread = malloc(GLN);
    if (!host || !back || !glread) {
        DEFECT("no host memory");
        goto out;
    }

    STEP(cugl_device_get(&dev, 0), "cugl_device_get");
    STEP(cugl_device_set_current(dev), "cugl_device_set_current");
    STEP(cugl_stream_create(&s, dev, NULL), "cugl_stream_create");
    STEP(cugl_event_create(&e, dev, &(cugl_event_desc){.timing = true}), "cugl_event_create");
    STEP(cugl_device_memory_resource_create(&dmr, dev, NULL),
         "cugl_device_memory_resource_create");
    STEP(cugl_pinned_memory_resource_create(&pmr, dev, NULL),
         "cugl_pinned_memory_resource_create");
    STEP(cugl_memory_resource_allocate(&a, dmr, N, s), "cugl_memory_resource_allocate");
    STEP(cugl_memory_resource_allocate(&b, dmr, N, s), "cugl_memory_resource_allocate");
    STEP(cugl_memory_resource_allocate(&h, pmr, N, s), "cugl_memory_resource_allocate");

    /* Fill, copy, copy out. */
    uint32_t word = 0x5eed0001u;
    STEP(cugl_buffer_fill(a, &word, 4, s), "cugl_buffer_fill");
    STEP(cugl_buffer_copy_from(b, a, s), "cugl_buffer_copy_from");
    STEP(cugl_buffer_copy_from(h, b, s), "cugl_buffer_copy_from");
    STEP(cugl_event_record(e, s), "cugl_event_record");
    STEP(cugl_event_sync(e), "cugl_event_sync");
    if (!all_words((const uint32_t *)(uintptr_t)cugl_buffer_handle(h), WORDS, word,
                   "buffer copies"))
        goto out;

    /* An array: the kernels' copies both ways, then pageable host memory. */
    STEP(cugl_array_create(&arr, dev,
                           &(cugl_array_desc){.ndim = 2, .shape = {W, H},
                                              .format = CUGL_FORMAT_U32}),
         "cugl_array_create");
    STEP(cugl_array_copy_from_buffer(arr, a, s), "cugl_array_copy_from_buffer");
    word = 0;
    STEP(cugl_buffer_fill(b, &word, 4, s), "cugl_buffer_fill");
    STEP(cugl_array_copy_to_buffer(b, arr, s), "cugl_array_copy_to_buffer");
    STEP(cugl_buffer_copy_from(h, b, s), "cugl_buffer_copy_from");
    STEP(cugl_stream_sync(s), "cugl_stream_sync");
    if (!all_words((const uint32_t *)(uintptr_t)cugl_buffer_handle(h), WORDS, 0x5eed0001u,
                   "array copies"))
        goto out;
    for (size_t i = 0; i < WORDS; i++)
        host[i] = (uint32_t)i * 2654435761u;
    STEP(cugl_array_copy_from_host(arr, host, N, s), "cugl_array_copy_from_host");
    memset(back, 0, N);
    STEP(cugl_array_copy_to_host(back, N, arr, s), "cugl_array_copy_to_host");
    STEP(cugl_stream_sync(s), "cugl_stream_sync");
    if (memcmp(back, host, N) != 0) {
        DEFECT("pageable host copies through the array differ");
        goto out;
    }

    /* A texture on it; a surface on an array made for one. */
    cugl_resource_desc on_arr = {.kind = CUGL_RESOURCE_ARRAY, .array = arr};
    STEP(cugl_texture_create(&tex, dev, &on_arr,
                             &(cugl_texture_desc){.filter_mode = CUGL_FILTER_POINT,
                                                  .read_mode = CUGL_READ_ELEMENT_TYPE}),
         "cugl_texture_create");
    STEP(cugl_array_create(&sarr, dev,
                           &(cugl_array_desc){.ndim = 2, .shape = {64, 64},
                                              .format = CUGL_FORMAT_U8, .num_channels = 4,
                                              .surface_load_store = true}),
         "cugl_array_create");
    STEP(cugl_surface_create(&surf, dev,
                             &(cugl_resource_desc){.kind = CUGL_RESOURCE_ARRAY, .array = sarr}),
         "cugl_surface_create");

    /* A module and a launch: out[i] = i * 3. */
    STEP(cugl_module_load_data(&mod, dev, cugl_test_kernels_fatbin,
                               cugl_test_kernels_fatbin_size),
         "cugl_module_load_data");
    STEP(cugl_module_get_kernel(&k, mod, "cugl_test_iota"), "cugl_module_get_kernel");
    uint64_t out_ptr = cugl_buffer_handle(b);
    unsigned n = WORDS, scale = 3;
    void *args[] = {&out_ptr, &n, &scale};
    STEP(cugl_launch(s, &(cugl_launch_config){.grid = {(WORDS + 255) / 256}, .block = {256}}, k,
                     args, 3),
         "cugl_launch");

    /* A strided view copy (every other word of a into b's first half). */
    cugl_layout strided, dense;
    int64_t half = WORDS / 2, two = 2;
    STEP(cugl_layout_init(&strided, 1, &half, &two, 4), "cugl_layout_init");
    STEP(cugl_layout_init(&dense, 1, &half, NULL, 4), "cugl_layout_init");
    STEP(cugl_view_from_buffer(&vsrc, b, &strided, CUGL_DTYPE_U32, true),
         "cugl_view_from_buffer");
    STEP(cugl_view_from_buffer(&vdst, a, &dense, CUGL_DTYPE_U32, false),
         "cugl_view_from_buffer");
    STEP(cugl_view_copy_from(vdst, vsrc, s, NULL), "cugl_view_copy_from");
    STEP(cugl_buffer_copy_from(h, a, s), "cugl_buffer_copy_from");
    STEP(cugl_stream_sync(s), "cugl_stream_sync");
    const uint32_t *got = (const uint32_t *)(uintptr_t)cugl_buffer_handle(h);
    for (size_t i = 0; i < (size_t)half; i++)
        if (got[i] != (uint32_t)(2 * i * 3)) {
            DEFECT("launch and strided copy: word %zu is %u, not %zu", i, got[i], 2 * i * 3);
            goto out;
        }

    /* GL: a registered buffer, mapped, written, unmapped, read by GL. */
    glCreateBuffers(1, &glbuf);
    glNamedBufferStorage(glbuf, GLN, NULL, GL_DYNAMIC_STORAGE_BIT);
    STEP(cugl_graphics_resource_from_gl_buffer(&res, dev, glbuf, 0),
         "cugl_graphics_resource_from_gl_buffer");
    STEP(cugl_graphics_resource_map(&mapped, res, s), "cugl_graphics_resource_map");
    word = 0xa11ce5edu;
    STEP(cugl_buffer_fill(mapped, &word, 4, s), "cugl_buffer_fill");
    STEP(cugl_graphics_resource_unmap(res, s), "cugl_graphics_resource_unmap");
    cugl_buffer_release(mapped); /* closed by the unmap */
    mapped = NULL;
    glGetNamedBufferSubData(glbuf, 0, GLN, glread);
    if (!all_words(glread, GLN / 4, word, "the mapped GL buffer"))
        goto out;

    /* Shared memory: CUDA's turn, then GL's. */
    STEP(cugl_app_shared_buffer_create(&sh, dev, GLN), "cugl_app_shared_buffer_create");
    STEP(cugl_app_shared_cuda_begin(sh, s), "cugl_app_shared_cuda_begin");
    word = 0x0ddba11u;
    STEP(cugl_buffer_fill(cugl_app_shared_buffer(sh), &word, 4, s), "cugl_buffer_fill");
    STEP(cugl_app_shared_cuda_end(sh, s), "cugl_app_shared_cuda_end");
    STEP(cugl_app_shared_gl_begin(sh), "cugl_app_shared_gl_begin");
    glGetNamedBufferSubData(cugl_app_shared_gl_name(sh), 0, GLN, glread);
    STEP(cugl_app_shared_gl_end(sh), "cugl_app_shared_gl_end");
    if (!all_words(glread, GLN / 4, word, "the shared buffer"))
        goto out;

    /* A second stream waits for the first, through an event and directly;
     * the time between two events. */
    STEP(cugl_stream_create(&s2, dev, &(cugl_stream_desc){.priority = 0}), "cugl_stream_create");
    STEP(cugl_event_create(&e2, dev, &(cugl_event_desc){.timing = true}), "cugl_event_create");
    STEP(cugl_event_record(e, s), "cugl_event_record");
    word = 0x7e57ab1eu;
    STEP(cugl_buffer_fill(a, &word, 4, s), "cugl_buffer_fill");
    STEP(cugl_event_record(e2, s), "cugl_event_record");
    STEP(cugl_stream_wait_event(s2, e2), "cugl_stream_wait_event");
    STEP(cugl_stream_wait_stream(s2, s), "cugl_stream_wait_stream");
    STEP(cugl_buffer_copy_from(h, a, s2), "cugl_buffer_copy_from");
    STEP(cugl_stream_sync(s2), "cugl_stream_sync");
    bool idle = false;
    STEP(cugl_stream_query(s2, &idle), "cugl_stream_query");
    STEP(cugl_event_query(e2, &idle), "cugl_event_query");
    float ms = -1;
    STEP(cugl_event_elapsed_ms(&ms, e, e2), "cugl_event_elapsed_ms");
    if (!idle || ms < 0) {
        DEFECT("a synced stream's event not done (%d), or %g ms between two events", idle,
               (double)ms);
        goto out;
    }
    if (!all_words((const uint32_t *)(uintptr_t)cugl_buffer_handle(h), WORDS, word,
                   "the copy on the waiting stream"))
        goto out;

    /* Managed memory, filled by the device, read by the host. */
    STEP(cugl_managed_memory_resource_create(
             &mmr, dev, &(cugl_managed_memory_desc){.preferred_location = CUGL_LOCATION_DEVICE}),
         "cugl_managed_memory_resource_create");
    STEP(cugl_memory_resource_allocate(&mb, mmr, GLN, s), "cugl_memory_resource_allocate");
    word = 0x3a3a3a3au;
    STEP(cugl_buffer_fill(mb, &word, 4, s), "cugl_buffer_fill");
    STEP(cugl_stream_sync(s), "cugl_stream_sync");
    if (!all_words((const uint32_t *)(uintptr_t)cugl_buffer_handle(mb), GLN / 4, word,
                   "managed memory"))
        goto out;

    /* An IPC pool and its buffer, exported and imported here (what another
     * process would do), read through the import. */
    STEP(cugl_device_memory_resource_create(&ipc, dev, &(cugl_device_memory_desc){.ipc = true}),
         "cugl_device_memory_resource_create");
    STEP(cugl_memory_resource_allocate(&ib, ipc, N, s), "cugl_memory_resource_allocate");
    word = 0x1bc1bc1bu;
    STEP(cugl_buffer_fill(ib, &word, 4, s), "cugl_buffer_fill");
    STEP(cugl_stream_sync(s), "cugl_stream_sync");
    STEP(cugl_memory_resource_export_fd(ipc, &pool_fd), "cugl_memory_resource_export_fd");
    cugl_buffer_ipc_descriptor ipc_desc;
    STEP(cugl_buffer_ipc_export(ib, &ipc_desc), "cugl_buffer_ipc_export");
    STEP(cugl_device_memory_resource_import_fd(&ipc_in, dev, pool_fd),
         "cugl_device_memory_resource_import_fd");
    STEP(cugl_buffer_ipc_import(&ib_in, ipc_in, &ipc_desc, s), "cugl_buffer_ipc_import");
    STEP(cugl_buffer_copy_from(h, ib_in, s), "cugl_buffer_copy_from");
    STEP(cugl_stream_sync(s), "cugl_stream_sync");
    if (!all_words((const uint32_t *)(uintptr_t)cugl_buffer_handle(h), WORDS, word,
                   "the imported IPC buffer"))
        goto out;

    /* An exportable buffer's file descriptor. */
    STEP(cugl_exportable_memory_resource_create(&xmr, dev),
         "cugl_exportable_memory_resource_create");
    STEP(cugl_memory_resource_allocate(&xb, xmr, GLN, s), "cugl_memory_resource_allocate");
    size_t xsize = 0;
    STEP(cugl_buffer_export_fd(xb, &buffer_fd, &xsize), "cugl_buffer_export_fd");
    if (buffer_fd < 0 || xsize < GLN) {
        DEFECT("an exported buffer: fd %d, %zu bytes", buffer_fd, xsize);
        goto out;
    }

    /* A mipmapped array's level 1, written and read back. */
    STEP(cugl_mipmapped_array_create(&mip, dev,
                                     &(cugl_array_desc){.ndim = 2, .shape = {256, 256},
                                                        .format = CUGL_FORMAT_U32},
                                     3),
         "cugl_mipmapped_array_create");
    STEP(cugl_mipmapped_array_get_level(&level, mip, 1), "cugl_mipmapped_array_get_level");
    STEP(cugl_array_copy_from_host(level, host, 128 * 128 * 4, s), "cugl_array_copy_from_host");
    memset(back, 0, 128 * 128 * 4);
    STEP(cugl_array_copy_to_host(back, 128 * 128 * 4, level, s), "cugl_array_copy_to_host");
    STEP(cugl_stream_sync(s), "cugl_stream_sync");
    if (memcmp(back, host, 128 * 128 * 4) != 0) {
        DEFECT("a mipmapped array's level does not read back what was written");
        goto out;
    }

    /* A GL texture mapped as an array, written by CUDA, read by GL. */
    glCreateTextures(GL_TEXTURE_2D, 1, &gltex);
    glTextureStorage2D(gltex, 1, GL_RGBA8, 64, 64);
    STEP(cugl_graphics_resource_from_gl_image(&img, dev, gltex, CUGL_GL_TEXTURE_2D, 0),
         "cugl_graphics_resource_from_gl_image");
    STEP(cugl_graphics_resource_map_array(&img_arr, img, s, 0, 0),
         "cugl_graphics_resource_map_array");
    STEP(cugl_array_copy_from_host(img_arr, host, 64 * 64 * 4, s), "cugl_array_copy_from_host");
    STEP(cugl_graphics_resource_unmap(img, s), "cugl_graphics_resource_unmap");
    cugl_array_release(img_arr); /* closed by the unmap */
    img_arr = NULL;
    glGetTextureImage(gltex, 0, GL_RGBA, GL_UNSIGNED_BYTE, 64 * 64 * 4, glread);
    if (memcmp(glread, host, 64 * 64 * 4) != 0) {
        DEFECT("the mapped GL texture does not hold what CUDA wrote");
        goto out;
    }
    done = true;

out:;
    /* Everything made so far goes, whatever failed. */
    bool failed_before = shim_failed() != NULL;
    if (s)
        cugl_stream_sync(s);
    if (s2)
        cugl_stream_sync(s2);
    cugl_array_release(img_arr);
    if (img) {
        cugl_graphics_resource_close(img, s);
        cugl_graphics_resource_release(img);
    }
    if (gltex)
        glDeleteTextures(1, &gltex);
    cugl_array_release(level);
    cugl_mipmapped_array_release(mip);
    if (buffer_fd >= 0)
        close(buffer_fd);
    if (pool_fd >= 0)
        close(pool_fd);
    cugl_buffer_release(xb);
    cugl_memory_resource_release(xmr);
    cugl_buffer_release(ib_in);
    cugl_memory_resource_release(ipc_in);
    cugl_buffer_release(ib);
    cugl_memory_resource_release(ipc);
    cugl_buffer_release(mb);
    cugl_memory_resource_release(mmr);
    cugl_event_release(e2);
    cugl_stream_release(s2);
    cugl_app_shared_destroy(sh);
    cugl_buffer_release(mapped);
    if (res) {
        cugl_graphics_resource_close(res, s);
        cugl_graphics_resource_release(res);
    }
    if (glbuf)
        glDeleteBuffers(1, &glbuf);
    cugl_view_release(vdst);
    cugl_view_release(vsrc);
    cugl_kernel_release(k);
    cugl_module_release(mod);
    cugl_surface_release(surf);
    cugl_texture_release(tex);
    cugl_array_release(sarr);
    cugl_array_release(arr);
    cugl_buffer_release(h);
    cugl_buffer_release(b);
    cugl_buffer_release(a);
    cugl_memory_resource_release(pmr);
    cugl_memory_resource_release(dmr);
    cugl_event_release(e);
    cugl_stream_release(s);
    free(host);
    free(back);
    free(glread);
    if (counted && !failed_before && shim_failed())
        failed_in_release = true;
    return done;
}

/* What the device's default pool has handed out. */
static uint64_t pool_used(void)
{
    cugl_device *dev = NULL;
    cugl_memory_resource *mr = NULL;
    cugl_pool_stats stats = {0};
    if (cugl_device_get(&dev, 0) != CUGL_OK ||
        cugl_device_memory_resource_create(&mr, dev, NULL) != CUGL_OK ||
        cugl_memory_resource_pool_stats(mr, &stats) != CUGL_OK)
        DEFECT("cannot read the pool's statistics: %s", cugl_last_error());
    cugl_memory_resource_release(mr);
    return stats.used_current;
}

int main(int argc, char **argv)
{
    /* The shim, as libcugl will load it (the same file: the same copy). */
    const char *path = getenv("CUGL_LIBCUDA");
    void *shim = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
    if (shim) {
        *(void **)&shim_failed = dlsym(shim, "cugl_fault_failed");
        *(void **)&shim_arm = dlsym(shim, "cugl_fault_arm");
    }
    if (!shim_failed || !shim_arm) {
        fprintf(stderr, "fault_scenario: CUGL_LIBCUDA does not name the fault shim\n");
        return 2;
    }
    /* "load": a failure while libcugl loads the driver must say which call. */
    bool at_load = argc > 1 && strcmp(argv[1], "load") == 0;
    if (!at_load)
        shim_arm(0);
    int count = 0;
    cugl_status st = cugl_device_count(&count);
    if (at_load) {
        const char *drv = shim_failed();
        printf("load: %s (failed: %s)\n", st == CUGL_OK ? "ok" : cugl_last_error(),
               drv ? drv : "nothing");
        if (drv && (st == CUGL_OK || !strstr(cugl_last_error(), drv)))
            DEFECT("a failed %s while loading the driver: status %d, \"%s\"", drv, (int)st,
                   cugl_last_error());
        return defects ? 1 : 0;
    }
    if (st != CUGL_OK || count == 0) {
        printf("fault_scenario: no device: %s\n", cugl_last_error());
        return 77;
    }
    if (cugl_app_context_create(&ctx, &(cugl_app_context_desc){.mode = CUGL_APP_HEADLESS,
                                                                .width = 64,
                                                                .height = 64,
                                                                .cuda_device = 0}) !=
        CUGL_OK) {
        printf("fault_scenario: no GL context: %s\n", cugl_last_error());
        return 77;
    }
    test_gl_load();
    if (!run_round(false)) {
        fprintf(stderr, "fault_scenario: the warm-up round failed\n");
        return 2;
    }
    static bool fds_before[FDS], fds_after[FDS];
    int fds = open_fds(fds_before);
    uint64_t used = pool_used();
    shim_arm(1);
    bool whole = run_round(true);
    shim_arm(0);
    printf("round 1: %s (failed: %s)\n", whole ? "whole" : "stopped",
           shim_failed() ? shim_failed() : "nothing");
    /* For the sweep: what the driver keeps of a release it failed is not
     * cugl's leak (a leak report of its memory alone is judged by it). */
    if (failed_in_release)
        printf("failed in a release: %s\n", shim_failed());
    fflush(stdout);
    if (!run_round(false))
        DEFECT("round 2 did not carry on after the failure");
    int fds_now = open_fds(fds_after);
    uint64_t used_now = pool_used();
    if (failed_in_release && (fds_now != fds || used_now != used)) {
        printf("a release's %s failed: open files %d before, %d after; the pool's memory in "
               "use %llu before, %llu after\n",
               shim_failed(), fds, fds_now, (unsigned long long)used,
               (unsigned long long)used_now);
    } else {
        if (fds_now != fds) {
            DEFECT("open file descriptors: %d before, %d after", fds, fds_now);
            name_new_fds(fds_before, fds_after);
        }
        if (used_now != used)
            DEFECT("the pool's memory in use: %llu bytes before, %llu after",
                   (unsigned long long)used, (unsigned long long)used_now);
    }
    cugl_app_context_destroy(ctx);
    return defects ? 1 : 0;
}
