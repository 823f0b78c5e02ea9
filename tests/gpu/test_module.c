/*
 * Modules, kernels and launches on a real GPU: the embedded fatbin, kernel
 * lookup and parameter counts, launches checked word by word, every launch
 * limit cugl enforces (with the numbers in the message, and nothing run),
 * dynamic shared memory above 48 KiB, cluster and cooperative launches,
 * PTX text (compiled by the driver, and its JIT log on failure), images
 * that are not modules, and the lifetime rules between modules and kernels.
 */
#include "gpu_kernels.h"

static cugl_device *dev;
static cugl_device_properties props;
static cugl_module *module;
static cugl_stream *stream;

#define SENTINEL 0xdeadbeefu

/* The n words at `p`, read after synchronizing the test stream. */
static unsigned *read_words(CUdeviceptr p, size_t n)
{
    assert_ok(cugl_stream_sync(stream));
    unsigned *host = malloc(n * sizeof *host);
    assert_non_null(host);
    gpu_read(host, p, n * sizeof *host);
    return host;
}

/* Fails (after freeing `host`) at the first word that is not `expect(i)`. */
#define CHECK_WORDS(host, n, expect_expr)                                                   \
    do {                                                                                    \
        for (size_t i_ = 0; i_ < (n); i_++) {                                               \
            size_t i = i_;                                                                  \
            (void)i;                                                                        \
            unsigned want_ = (unsigned)(expect_expr);                                       \
            if ((host)[i] != want_) {                                                       \
                unsigned got_ = (host)[i];                                                  \
                free(host);                                                                 \
                fail_msg("word %zu is %u (0x%x), expected %u", i, got_, got_, want_);       \
            }                                                                               \
        }                                                                                   \
    } while (0)

static void fatbin_loads(void **state)
{
    (void)state;
    assert_non_null(module);
    assert_non_null(cugl_module_handle(module));
    assert_ptr_equal(cugl_module_device(module), dev);
    assert_false(cugl_module_is_closed(module));
}

static void kernels_by_name(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        size_t num_args;
    } kernels[] = {
        {"cugl_test_iota", 3},          {"cugl_test_sleep_then_write", 3},
        {"cugl_test_add", 4},           {"cugl_test_spin_until", 1},
        {"cugl_test_shared_reverse", 2}, {"cugl_test_cluster_rank", 1},
    };
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++) {
        cugl_kernel *k = NULL;
        assert_ok(cugl_module_get_kernel(&k, module, kernels[i].name));
        assert_non_null(k);
        assert_string_equal(cugl_kernel_name(k), kernels[i].name);
        assert_non_null(cugl_kernel_handle(k));
        assert_false(cugl_kernel_is_closed(k));
        size_t n = 99;
        assert_ok(cugl_kernel_num_args(k, &n));
        if (n != kernels[i].num_args)
            fail_msg("%s: %zu arguments, expected %zu", kernels[i].name, n,
                     kernels[i].num_args);
        int threads = 0;
        assert_ok(cugl_kernel_max_threads_per_block(k, &threads));
        assert_true(threads >= 256 && threads <= props.max_threads_per_block);
        cugl_kernel_release(k);
    }
}

static void unknown_kernel_is_refused(void **state)
{
    (void)state;
    cugl_kernel *k = (cugl_kernel *)&props;
    assert_status(cugl_module_get_kernel(&k, module, "cugl_no_such_kernel"),
                  CUGL_ERROR_INVALID_ARGUMENT);
    assert_null(k);
    assert_error_mentions("cugl_module_get_kernel: the module has no kernel named "
                          "'cugl_no_such_kernel'");
    assert_int_equal(cugl_last_cuda_result(), CUDA_ERROR_NOT_FOUND);

    k = (cugl_kernel *)&props;
    assert_status(cugl_module_get_kernel(&k, module, ""), CUGL_ERROR_INVALID_ARGUMENT);
    assert_null(k);
    assert_error_mentions("cugl_module_get_kernel: name is empty");
}

static void iota_writes_every_word(void **state)
{
    (void)state;
    const unsigned n = 100000, guard = 300, scale = 3;
    CUdeviceptr out = gpu_alloc((n + guard) * sizeof(unsigned));
    gpu_fill_u32(out, SENTINEL, n + guard);
    cugl_kernel *k = gpu_kernel("cugl_test_iota");
    cugl_launch_config c = {.grid = {(n + 255) / 256}, .block = {256}};
    unsigned nn = n, sc = scale;
    void *args[] = {&out, &nn, &sc};
    assert_ok(cugl_launch(stream, &c, k, args, 3));
    cugl_kernel_release(k);
    unsigned *host = read_words(out, n + guard);
    gpu_free(out);
    /* Every word below n, and none past it. */
    CHECK_WORDS(host, n + guard, i < n ? i * scale : SENTINEL);
    free(host);
}

/* A launch cugl must refuse, with a message that has the numbers. */
struct refusal {
    char what[64];
    cugl_launch_config config;
    size_t num_args;
    bool null_args;
    bool null_arg1;
    cugl_status status;
    char message[256];
};

static size_t add_refusal(struct refusal *r, size_t n, const char *what,
                          cugl_launch_config config, size_t num_args, cugl_status status,
                          const char *fmt, ...) __attribute__((format(printf, 7, 8)));

static size_t add_refusal(struct refusal *r, size_t n, const char *what,
                          cugl_launch_config config, size_t num_args, cugl_status status,
                          const char *fmt, ...)
{
    memset(&r[n], 0, sizeof r[n]);
    snprintf(r[n].what, sizeof r[n].what, "%s", what);
    r[n].config = config;
    r[n].num_args = num_args;
    r[n].status = status;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r[n].message, sizeof r[n].message, fmt, ap);
    va_end(ap);
    return n + 1;
}

static void launch_limits_are_enforced(void **state)
{
    (void)state;
    const cugl_device_properties *p = &props;
    const unsigned ok_grid = 4;
    struct refusal r[32];
    size_t n = 0;
    cugl_launch_config base = {.grid = {ok_grid}, .block = {256}};
    cugl_launch_config c;

    n = add_refusal(r, n, "2 args", base, 2, CUGL_ERROR_INVALID_ARGUMENT,
                    "cugl_launch: kernel 'cugl_test_iota' takes 3 arguments, 2 given");
    n = add_refusal(r, n, "4 args", base, 4, CUGL_ERROR_INVALID_ARGUMENT,
                    "cugl_launch: kernel 'cugl_test_iota' takes 3 arguments, 4 given");
    n = add_refusal(r, n, "0 args", base, 0, CUGL_ERROR_INVALID_ARGUMENT,
                    "cugl_launch: kernel 'cugl_test_iota' takes 3 arguments, 0 given");
    n = add_refusal(r, n, "args NULL", base, 3, CUGL_ERROR_INVALID_ARGUMENT,
                    "cugl_launch: args is NULL but num_args is 3");
    r[n - 1].null_args = true;
    n = add_refusal(r, n, "args[1] NULL", base, 3, CUGL_ERROR_INVALID_ARGUMENT,
                    "cugl_launch: args[1] is NULL");
    r[n - 1].null_arg1 = true;

    c = base, c.grid[0] = 0;
    n = add_refusal(r, n, "grid x 0", c, 3, CUGL_ERROR_INVALID_ARGUMENT,
                    "cugl_launch: grid x is 0; it must be >= 1");
    c = base, c.block[0] = 0;
    n = add_refusal(r, n, "block x 0", c, 3, CUGL_ERROR_INVALID_ARGUMENT,
                    "cugl_launch: block x is 0; it must be >= 1");
    c = base, c.grid[0] = (uint32_t)p->max_grid_dim[0] + 1;
    n = add_refusal(r, n, "grid x too big", c, 3, CUGL_ERROR_INVALID_ARGUMENT,
                    "grid x is %u; device %s allows at most %d", c.grid[0], p->name,
                    p->max_grid_dim[0]);
    c = base, c.grid[1] = (uint32_t)p->max_grid_dim[1] + 1;
    n = add_refusal(r, n, "grid y too big", c, 3, CUGL_ERROR_INVALID_ARGUMENT,
                    "grid y is %u; device %s allows at most %d", c.grid[1], p->name,
                    p->max_grid_dim[1]);
    c = base, c.grid[2] = (uint32_t)p->max_grid_dim[2] + 1;
    n = add_refusal(r, n, "grid z too big", c, 3, CUGL_ERROR_INVALID_ARGUMENT,
                    "grid z is %u; device %s allows at most %d", c.grid[2], p->name,
                    p->max_grid_dim[2]);
    c = base, c.block[0] = 2 * (uint32_t)p->max_block_dim[0];
    n = add_refusal(r, n, "block x too big", c, 3, CUGL_ERROR_INVALID_ARGUMENT,
                    "block x is %u; device %s allows at most %d", c.block[0], p->name,
                    p->max_block_dim[0]);
    c = base, c.block[0] = 1, c.block[1] = (uint32_t)p->max_block_dim[1] + 1;
    n = add_refusal(r, n, "block y too big", c, 3, CUGL_ERROR_INVALID_ARGUMENT,
                    "block y is %u; device %s allows at most %d", c.block[1], p->name,
                    p->max_block_dim[1]);
    c = base, c.block[0] = 1, c.block[2] = (uint32_t)p->max_block_dim[2] + 1;
    n = add_refusal(r, n, "block z too big", c, 3, CUGL_ERROR_INVALID_ARGUMENT,
                    "block z is %u; device %s allows at most %d", c.block[2], p->name,
                    p->max_block_dim[2]);
    /* Each extent within its limit, the product above the device's. */
    c = base, c.block[0] = (uint32_t)p->max_block_dim[0], c.block[1] = 2;
    n = add_refusal(r, n, "too many threads", c, 3, CUGL_ERROR_INVALID_ARGUMENT,
                    "block %ux2x1 has %u threads; device %s allows %d per block", c.block[0],
                    2 * c.block[0], p->name, p->max_threads_per_block);
    c = base, c.shared_mem_bytes = p->max_shared_memory_per_block_optin + 1;
    n = add_refusal(r, n, "shared memory", c, 3, CUGL_ERROR_INVALID_ARGUMENT,
                    "%zu dynamic); device %s allows %zu per block", c.shared_mem_bytes,
                    p->name, p->max_shared_memory_per_block_optin);
    c = base, c.grid[0] = 8, c.cluster[0] = 3;
    n = add_refusal(r, n, "cluster x 3 of 8", c, 3, CUGL_ERROR_INVALID_ARGUMENT,
                    "cugl_launch: cluster x (3) does not divide grid x (8)");
    c = base, c.grid[0] = 8, c.grid[1] = 3, c.cluster[1] = 2;
    n = add_refusal(r, n, "cluster y 2 of 3", c, 3, CUGL_ERROR_INVALID_ARGUMENT,
                    "cugl_launch: cluster y (2) does not divide grid y (3)");
    if (p->cluster_launch) {
        c = base, c.grid[0] = 16, c.cluster[0] = 16;
        n = add_refusal(r, n, "cluster of 16", c, 3, CUGL_ERROR_INVALID_ARGUMENT,
                        "cugl_launch: cluster 16x1x1 has 16 blocks; at most 8 are portable");
    } else {
        c = base, c.grid[0] = 8, c.cluster[0] = 2;
        n = add_refusal(r, n, "cluster unsupported", c, 3, CUGL_ERROR_NOT_SUPPORTED,
                        "has no cluster launch");
    }
    if (!p->cooperative_launch) {
        c = base, c.cooperative = true;
        n = add_refusal(r, n, "cooperative unsupported", c, 3, CUGL_ERROR_NOT_SUPPORTED,
                        "has no cooperative launch");
    }
    assert_true(n <= sizeof r / sizeof r[0]);

    /* Every case would write the buffer if it ran. */
    const unsigned words = 4096;
    CUdeviceptr out = gpu_alloc(words * sizeof(unsigned));
    gpu_fill_u32(out, SENTINEL, words);
    cugl_kernel *k = gpu_kernel("cugl_test_iota");
    unsigned count = 1024, scale = 1;
    void *args[4] = {&out, &count, &scale, &scale};
    void *args_null1[3] = {&out, NULL, &scale};
    for (size_t i = 0; i < n; i++) {
        cugl_clear_error();
        void **a = r[i].null_args ? NULL : r[i].null_arg1 ? args_null1 : args;
        cugl_status st = cugl_launch(stream, &r[i].config, k, a, r[i].num_args);
        if (st != r[i].status)
            fail_msg("%s: returned %s, expected %s (%s)", r[i].what, cugl_status_name(st),
                     cugl_status_name(r[i].status), cugl_last_error());
        if (!strstr(cugl_last_error(), r[i].message))
            fail_msg("%s: message \"%s\" does not mention \"%s\"", r[i].what,
                     cugl_last_error(), r[i].message);
        if (strncmp(cugl_last_error(), "cugl_launch: ", 13) != 0)
            fail_msg("%s: message \"%s\" does not name cugl_launch", r[i].what,
                     cugl_last_error());
    }
    cugl_kernel_release(k);

    /* Nothing ran. */
    unsigned *host = read_words(out, words);
    gpu_free(out);
    CHECK_WORDS(host, words, SENTINEL);
    free(host);
}

/* cugl_test_shared_reverse: out[b * n + i] = n - 1 - i, through shared memory. */
static void run_shared_reverse(cugl_kernel *k, unsigned n_words)
{
    const unsigned blocks = 3;
    size_t total = (size_t)blocks * n_words;
    CUdeviceptr out = gpu_alloc(total * sizeof(unsigned));
    gpu_fill_u32(out, SENTINEL, total);
    cugl_launch_config c = {
        .grid = {blocks}, .block = {256}, .shared_mem_bytes = (size_t)n_words * 4};
    void *args[] = {&out, &n_words};
    cugl_status st = cugl_launch(stream, &c, k, args, 2);
    if (st != CUGL_OK) {
        gpu_free(out);
        fail_msg("%u words (%zu bytes) of shared memory: %s: %s", n_words, c.shared_mem_bytes,
                 cugl_status_name(st), cugl_last_error());
    }
    unsigned *host = read_words(out, total);
    gpu_free(out);
    CHECK_WORDS(host, total, n_words - 1 - i % n_words);
    free(host);
}

static void large_dynamic_shared_memory(void **state)
{
    (void)state;
    assert_true(props.max_shared_memory_per_block_optin > 64 * 1024);
    const unsigned optin_words = (unsigned)(props.max_shared_memory_per_block_optin / 4);
    /* Rising, falling, and up to the device's limit, on one kernel object. */
    const unsigned words[] = {256, 16384, 24576, 12288, 16384, optin_words};
    cugl_kernel *k = gpu_kernel("cugl_test_shared_reverse");
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        run_shared_reverse(k, words[i]);
    cugl_kernel_release(k);

    /* 64 KiB on a fresh kernel object: opted in at its first launch. */
    k = gpu_kernel("cugl_test_shared_reverse");
    run_shared_reverse(k, 16384);
    cugl_kernel_release(k);
}

static void cluster_launch(void **state)
{
    (void)state;
    const unsigned grid = 16;
    CUdeviceptr out = gpu_alloc(grid * sizeof(unsigned));
    cugl_kernel *k = gpu_kernel("cugl_test_cluster_rank");
    void *args[] = {&out};

    /* Without clusters every block is rank 0. */
    gpu_fill_u32(out, SENTINEL, grid);
    cugl_launch_config plain = {.grid = {grid}, .block = {32}};
    assert_ok(cugl_launch(stream, &plain, k, args, 1));
    unsigned *host = read_words(out, grid);
    CHECK_WORDS(host, grid, 0);
    free(host);

    if (!props.cluster_launch) {
        cugl_launch_config c = {.grid = {8}, .block = {32}, .cluster = {2}};
        assert_status(cugl_launch(stream, &c, k, args, 1), CUGL_ERROR_NOT_SUPPORTED);
        cugl_kernel_release(k);
        gpu_free(out);
        gpu_not_applicable("the device has no cluster launch");
        return;
    }

    static const unsigned sizes[] = {1, 2, 4, 8};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        const unsigned cl = sizes[s];
        gpu_fill_u32(out, SENTINEL, grid);
        cugl_launch_config c = {.grid = {grid}, .block = {32}, .cluster = {cl}};
        assert_ok(cugl_launch(stream, &c, k, args, 1));
        host = read_words(out, grid);
        CHECK_WORDS(host, grid, i % cl);
        free(host);
    }

    /* The brief's case: grid 8, cluster 2 gives 0,1,0,1,... */
    gpu_fill_u32(out, SENTINEL, grid);
    cugl_launch_config c = {.grid = {8}, .block = {32}, .cluster = {2}};
    assert_ok(cugl_launch(stream, &c, k, args, 1));
    host = read_words(out, grid);
    CHECK_WORDS(host, grid, i < 8 ? i % 2 : SENTINEL);
    free(host);

    cugl_kernel_release(k);
    gpu_free(out);
}

static void cooperative_launch(void **state)
{
    (void)state;
    if (!props.cooperative_launch) {
        gpu_not_applicable("the device has no cooperative launch");
        return;
    }
    const unsigned n = 1024, scale = 5;
    CUdeviceptr out = gpu_alloc(n * sizeof(unsigned));
    gpu_fill_u32(out, SENTINEL, n);
    cugl_kernel *k = gpu_kernel("cugl_test_iota");
    unsigned nn = n, sc = scale;
    void *args[] = {&out, &nn, &sc};
    cugl_launch_config c = {.grid = {n / 256}, .block = {256}, .cooperative = true};
    assert_ok(cugl_launch(stream, &c, k, args, 3));
    cugl_kernel_release(k);
    unsigned *host = read_words(out, n);
    gpu_free(out);
    CHECK_WORDS(host, n, i * scale);
    free(host);
}

static const char good_ptx[] =
    ".version 7.0\n"
    ".target sm_75\n"
    ".address_size 64\n"
    "\n"
    ".visible .entry cugl_ptx_fill(\n"
    "    .param .u64 cugl_ptx_fill_out,\n"
    "    .param .u32 cugl_ptx_fill_value\n"
    ")\n"
    "{\n"
    "    .reg .b32 %r<6>;\n"
    "    .reg .b64 %rd<5>;\n"
    "\n"
    "    ld.param.u64 %rd1, [cugl_ptx_fill_out];\n"
    "    ld.param.u32 %r1, [cugl_ptx_fill_value];\n"
    "    cvta.to.global.u64 %rd2, %rd1;\n"
    "    mov.u32 %r2, %ctaid.x;\n"
    "    mov.u32 %r3, %ntid.x;\n"
    "    mov.u32 %r4, %tid.x;\n"
    "    mad.lo.s32 %r5, %r2, %r3, %r4;\n"
    "    mul.wide.u32 %rd3, %r5, 4;\n"
    "    add.s64 %rd4, %rd2, %rd3;\n"
    "    add.s32 %r5, %r5, %r1;\n"
    "    st.global.u32 [%rd4], %r5;\n"
    "    ret;\n"
    "}\n";

/* The same with one line that is not an instruction. */
static const char bad_ptx[] =
    ".version 7.0\n"
    ".target sm_75\n"
    ".address_size 64\n"
    "\n"
    ".visible .entry cugl_ptx_fill(\n"
    "    .param .u64 cugl_ptx_fill_out\n"
    ")\n"
    "{\n"
    "    .reg .b64 %rd<3>;\n"
    "\n"
    "    ld.param.u64 %rd1, [cugl_ptx_fill_out];\n"
    "    cvta.to.global.u64 %rd2, %rd1;\n"
    "    cugl_bogus_op.u32 [%rd2], 1;\n"
    "    ret;\n"
    "}\n";

static void ptx_text_loads_and_runs(void **state)
{
    (void)state;
    cugl_module *m = NULL;
    assert_ok(cugl_module_load_data(&m, dev, good_ptx, sizeof good_ptx));
    assert_non_null(m);
    assert_non_null(cugl_module_handle(m));
    cugl_kernel *k = NULL;
    assert_ok(cugl_module_get_kernel(&k, m, "cugl_ptx_fill"));
    size_t na = 0;
    assert_ok(cugl_kernel_num_args(k, &na));
    assert_int_equal(na, 2);

    const unsigned blocks = 4, threads = 128, n = blocks * threads, value = 1000;
    CUdeviceptr out = gpu_alloc(n * sizeof(unsigned));
    gpu_fill_u32(out, SENTINEL, n);
    unsigned v = value;
    void *args[] = {&out, &v};
    cugl_launch_config c = {.grid = {blocks}, .block = {threads}};
    assert_ok(cugl_launch(stream, &c, k, args, 2));
    unsigned *host = read_words(out, n);
    gpu_free(out);
    CHECK_WORDS(host, n, i + value);
    free(host);
    cugl_kernel_release(k);
    cugl_module_release(m);
}

static void invalid_ptx_reports_the_jit_log(void **state)
{
    (void)state;
    cugl_module *m = (cugl_module *)&props;
    cugl_clear_error();
    assert_status(cugl_module_load_data(&m, dev, bad_ptx, sizeof bad_ptx), CUGL_ERROR_CUDA);
    assert_null(m);
    assert_int_equal(cugl_last_cuda_result(), CUDA_ERROR_INVALID_PTX);
    /* The JIT log, not just the error name, follows the call. */
    assert_error_mentions("cugl_module_load_data: cuModuleLoadDataEx failed: ");
    assert_error_mentions("cugl_bogus_op");
    assert_error_mentions("error");
}

static void garbage_is_not_a_module(void **state)
{
    (void)state;
    /* NUL-terminated: the driver may read anything without a known magic as PTX. */
    static const unsigned char binary[] = {0x01, 0x02, 0x03, 0x04, 0xfe, 0xfd, 0xfc, 0xfb,
                                           0x55, 0xaa, 0x55, 0xaa, 0x10, 0x20, 0x30, 0x00};
    static const char text[] = "this is not a module image";
    const struct {
        const char *what;
        const void *image;
        size_t size;
    } cases[] = {
        {"binary", binary, sizeof binary},
        {"text", text, sizeof text},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cugl_module *m = (cugl_module *)&props;
        cugl_clear_error();
        cugl_status st = cugl_module_load_data(&m, dev, cases[i].image, cases[i].size);
        if (st != CUGL_ERROR_CUDA)
            fail_msg("%s: returned %s, expected CUGL_ERROR_CUDA (%s)", cases[i].what,
                     cugl_status_name(st), cugl_last_error());
        assert_null(m);
        assert_int_not_equal(cugl_last_cuda_result(), 0);
        assert_error_mentions("cugl_module_load_data: cuModuleLoadDataEx failed: ");
        assert_true(strlen(cugl_last_error()) >
                    strlen("cugl_module_load_data: cuModuleLoadDataEx failed: "));
    }

    cugl_module *m = (cugl_module *)&props;
    assert_status(cugl_module_load_data(&m, dev, text, 0), CUGL_ERROR_INVALID_ARGUMENT);
    assert_null(m);
    assert_error_mentions("cugl_module_load_data: size is 0");

    /* The device is fine afterwards. */
    assert_ok(cugl_device_sync(dev));
}

static cugl_module *load_own_module(void)
{
    cugl_module *m = NULL;
    assert_ok(cugl_module_load_data(&m, dev, cugl_test_kernels_fatbin,
                                    cugl_test_kernels_fatbin_size));
    assert_non_null(m);
    return m;
}

static void iota_with(cugl_kernel *k, unsigned scale)
{
    const unsigned n = 2000;
    CUdeviceptr out = gpu_alloc(n * sizeof(unsigned));
    gpu_fill_u32(out, SENTINEL, n);
    unsigned nn = n, sc = scale;
    void *args[] = {&out, &nn, &sc};
    cugl_launch_config c = {.grid = {(n + 255) / 256}, .block = {256}};
    cugl_status st = cugl_launch(stream, &c, k, args, 3);
    if (st != CUGL_OK) {
        gpu_free(out);
        fail_msg("launch returned %s: %s", cugl_status_name(st), cugl_last_error());
    }
    unsigned *host = read_words(out, n);
    gpu_free(out);
    CHECK_WORDS(host, n, i * scale);
    free(host);
}

static void closed_module_closes_its_kernels(void **state)
{
    (void)state;
    cugl_module *m = load_own_module();
    cugl_kernel *k = NULL;
    assert_ok(cugl_module_get_kernel(&k, m, "cugl_test_iota"));
    iota_with(k, 2);

    cugl_module_close(m);
    assert_true(cugl_module_is_closed(m));
    assert_null(cugl_module_handle(m));
    cugl_module_close(m); /* twice is fine */
    assert_true(cugl_kernel_is_closed(k));
    assert_null(cugl_kernel_handle(k));
    assert_string_equal(cugl_kernel_name(k), "cugl_test_iota");

    const char *closed_msg = "kernel 'cugl_test_iota': its module has been closed";
    size_t na = 0;
    assert_status(cugl_kernel_num_args(k, &na), CUGL_ERROR_CLOSED);
    assert_error_mentions("cugl_kernel_num_args: ");
    assert_error_mentions(closed_msg);
    int threads = 0;
    assert_status(cugl_kernel_max_threads_per_block(k, &threads), CUGL_ERROR_CLOSED);
    assert_error_mentions("cugl_kernel_max_threads_per_block: ");
    assert_error_mentions(closed_msg);

    const unsigned n = 256;
    CUdeviceptr out = gpu_alloc(n * sizeof(unsigned));
    gpu_fill_u32(out, SENTINEL, n);
    unsigned nn = n, sc = 1;
    void *args[] = {&out, &nn, &sc};
    cugl_launch_config c = {.grid = {1}, .block = {256}};
    assert_status(cugl_launch(stream, &c, k, args, 3), CUGL_ERROR_CLOSED);
    assert_error_mentions("cugl_launch: ");
    assert_error_mentions(closed_msg);
    unsigned *host = read_words(out, n);
    gpu_free(out);
    CHECK_WORDS(host, n, SENTINEL);
    free(host);

    cugl_kernel *k2 = (cugl_kernel *)&props;
    assert_status(cugl_module_get_kernel(&k2, m, "cugl_test_iota"), CUGL_ERROR_CLOSED);
    assert_null(k2);
    assert_error_mentions("cugl_module_get_kernel: the module has been closed");

    cugl_kernel_release(k);
    cugl_module_release(m);
}

static void closed_kernel_leaves_module_open(void **state)
{
    (void)state;
    cugl_module *m = load_own_module();
    cugl_kernel *a = NULL, *b = NULL;
    assert_ok(cugl_module_get_kernel(&a, m, "cugl_test_iota"));
    assert_ok(cugl_module_get_kernel(&b, m, "cugl_test_iota"));
    cugl_kernel_close(a);
    cugl_kernel_close(a); /* twice is fine */
    assert_true(cugl_kernel_is_closed(a));
    assert_null(cugl_kernel_handle(a));
    size_t na = 0;
    assert_status(cugl_kernel_num_args(a, &na), CUGL_ERROR_CLOSED);
    assert_error_mentions("kernel 'cugl_test_iota': the kernel has been closed");

    assert_false(cugl_module_is_closed(m));
    assert_false(cugl_kernel_is_closed(b));
    iota_with(b, 4);
    cugl_kernel_release(a);
    cugl_kernel_release(b);
    cugl_module_release(m);
}

static void kernel_keeps_module_alive(void **state)
{
    (void)state;
    cugl_module *m = load_own_module();
    cugl_kernel *k = NULL;
    assert_ok(cugl_module_get_kernel(&k, m, "cugl_test_iota"));
    /* The kernel's reference keeps the module loaded. */
    cugl_module_release(m);
    assert_false(cugl_kernel_is_closed(k));
    assert_non_null(cugl_kernel_handle(k));
    size_t na = 0;
    assert_ok(cugl_kernel_num_args(k, &na));
    assert_int_equal(na, 3);
    iota_with(k, 7);
    /* A retained kernel survives one release too. */
    assert_ptr_equal(cugl_kernel_retain(k), k);
    cugl_kernel_release(k);
    iota_with(k, 8);
    cugl_kernel_release(k); /* the last reference: unloads the module */
}

int main(void)
{
    dev = cugl_test_device();
    gpu_mem_init();
    module = gpu_test_module(dev);
    if (cugl_device_get_properties(dev, &props) != CUGL_OK ||
        cugl_stream_create(&stream, dev, NULL) != CUGL_OK) {
        printf("Bail out! %s\n", cugl_last_error());
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fatbin_loads),
        cmocka_unit_test(kernels_by_name),
        cmocka_unit_test(unknown_kernel_is_refused),
        cmocka_unit_test(iota_writes_every_word),
        cmocka_unit_test(launch_limits_are_enforced),
        cmocka_unit_test(large_dynamic_shared_memory),
        cmocka_unit_test(cluster_launch),
        cmocka_unit_test(cooperative_launch),
        cmocka_unit_test(ptx_text_loads_and_runs),
        cmocka_unit_test(invalid_ptx_reports_the_jit_log),
        cmocka_unit_test(garbage_is_not_a_module),
        cmocka_unit_test(closed_module_closes_its_kernels),
        cmocka_unit_test(closed_kernel_leaves_module_open),
        cmocka_unit_test(kernel_keeps_module_alive),
    };
    return cugl_test_run(tests);
}
