/*
 * module.c - load device code, look up kernels, launch them.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core_internal.h"

struct cugl_module {
    cugl__ref ref;
    CUmodule handle;
    cugl_device *device;
    bool closed;
};

struct cugl_kernel {
    cugl__ref ref;
    CUfunction handle;
    cugl_module *module;
    int max_threads;            /* CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK */
    size_t static_shared_bytes; /* CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES */
    long num_args;              /* -1 where the driver cannot tell */
    bool closed;
    char name[];
};

CUGL_API cugl_status cugl_module_load_data(cugl_module **out, cugl_device *device,
                                           const void *image, size_t size)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = NULL;
    CUGL__CHECK_NOT_NULL(device);
    CUGL__CHECK_NOT_NULL(image);
    CUGL__CHECK_ARG(size > 0, "size is 0");
    CUGL__TRY(cugl__device_activate(device, __func__));

    cugl_module *m = calloc(1, sizeof *m);
    if (!m)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, __func__, "cannot allocate a module");
    char log[2048] = "";
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *vals[] = {log, (void *)(uintptr_t)sizeof log};
    CUresult r = cugl__cu.cuModuleLoadDataEx(&m->handle, image, 2, opts, vals);
    if (r != CUDA_SUCCESS) {
        free(m);
        if (r == CUDA_ERROR_NO_BINARY_FOR_GPU) {
            const cugl_device_properties *p;
            if (cugl__device_props(device, __func__, &p) == CUGL_OK)
                return cugl__fail_cu(CUGL_ERROR_NOT_SUPPORTED, r, __func__,
                                     "the image has no code for device %d (%s, compute "
                                     "capability %d.%d); rebuild with its architecture in "
                                     "cuda_archs",
                                     device->ordinal, p->name, p->compute_capability_major,
                                     p->compute_capability_minor);
        }
        if (log[0])
            return cugl__fail_cu(r == CUDA_ERROR_OUT_OF_MEMORY ? CUGL_ERROR_OUT_OF_MEMORY
                                                               : CUGL_ERROR_CUDA,
                                 r, __func__, "cuModuleLoadDataEx failed: %s", log);
        return cugl__cu_status(r, __func__, "cuModuleLoadDataEx");
    }
    cugl__ref_init(&m->ref);
    m->device = device;
    *out = m;
    return CUGL_OK;
}

static cugl_status module_check(const cugl_module *m, const char *who)
{
    if (!m)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "module is NULL");
    if (m->closed)
        return cugl__fail(CUGL_ERROR_CLOSED, who, "the module has been closed");
    return CUGL_OK;
}

static cugl_status kernel_check(const cugl_kernel *k, const char *who)
{
    if (!k)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "kernel is NULL");
    if (k->closed || k->module->closed)
        return cugl__fail(CUGL_ERROR_CLOSED, who, "kernel '%s': %s has been closed", k->name,
                          k->closed ? "the kernel" : "its module");
    return CUGL_OK;
}

/* The parameter count, or -1 where the driver cannot tell (before 12.4). */
static cugl_status count_params(CUfunction f, const char *who, long *count)
{
    *count = -1;
    if (!cugl__cu.cuFuncGetParamInfo)
        return CUGL_OK;
    /* The driver answers CUDA_ERROR_INVALID_VALUE past the last parameter. */
    size_t n = 0, offset, size;
    CUresult r;
    while ((r = cugl__cu.cuFuncGetParamInfo(f, n, &offset, &size)) == CUDA_SUCCESS)
        n++;
    if (r != CUDA_ERROR_INVALID_VALUE)
        return cugl__cu_status(r, who, "cuFuncGetParamInfo");
    *count = (long)n;
    return CUGL_OK;
}

CUGL_API cugl_status cugl_module_get_kernel(cugl_kernel **out, cugl_module *module,
                                            const char *name)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = NULL;
    CUGL__TRY(module_check(module, __func__));
    CUGL__CHECK_NOT_NULL(name);
    CUGL__CHECK_ARG(name[0] != '\0', "name is empty");

    CUfunction f = NULL;
    CUresult r = cugl__cu.cuModuleGetFunction(&f, module->handle, name);
    if (r == CUDA_ERROR_NOT_FOUND)
        return cugl__fail_cu(CUGL_ERROR_INVALID_ARGUMENT, r, __func__,
                             "the module has no kernel named '%s' (C++ kernels need "
                             "extern \"C\" or their mangled name)",
                             name);
    CUGL__TRY(cugl__cu_status(r, __func__, "cuModuleGetFunction"));

    int max_threads = 0, static_shared = 0;
    CUGL__TRY(CUGL_CU(cuFuncGetAttribute, &max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                      f));
    CUGL__TRY(CUGL_CU(cuFuncGetAttribute, &static_shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f));
    long num_args;
    CUGL__TRY(count_params(f, __func__, &num_args));

    size_t len = strlen(name);
    cugl_kernel *k = calloc(1, sizeof *k + len + 1);
    if (!k)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, __func__, "cannot allocate a kernel");
    cugl__ref_init(&k->ref);
    k->handle = f;
    k->module = cugl_module_retain(module);
    k->max_threads = max_threads;
    k->static_shared_bytes = (size_t)static_shared;
    k->num_args = num_args;
    memcpy(k->name, name, len + 1);
    *out = k;
    return CUGL_OK;
}

CUGL_API void *cugl_module_handle(const cugl_module *module)
{
    return module && !module->closed ? (void *)module->handle : NULL;
}

CUGL_API cugl_device *cugl_module_device(const cugl_module *module)
{
    return module ? module->device : NULL;
}

CUGL_API bool cugl_module_is_closed(const cugl_module *module)
{
    return !module || module->closed;
}

CUGL_API void cugl_module_close(cugl_module *module)
{
    if (!module || module->closed)
        return;
    cugl__cu.cuModuleUnload(module->handle);
    module->handle = NULL;
    module->closed = true;
}

CUGL_API cugl_module *cugl_module_retain(cugl_module *module)
{
    if (module)
        cugl__ref_inc(&module->ref);
    return module;
}

CUGL_API void cugl_module_release(cugl_module *module)
{
    if (!module || !cugl__ref_dec(&module->ref))
        return;
    cugl_module_close(module);
    free(module);
}

CUGL_API const char *cugl_kernel_name(const cugl_kernel *kernel)
{
    return kernel ? kernel->name : NULL;
}

CUGL_API cugl_status cugl_kernel_num_args(cugl_kernel *kernel, size_t *count)
{
    CUGL__TRY(kernel_check(kernel, __func__));
    CUGL__CHECK_NOT_NULL(count);
    *count = 0;
    if (kernel->num_args < 0)
        return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, __func__,
                          "the driver cannot report kernel parameters (needs CUDA 12.4)");
    *count = (size_t)kernel->num_args;
    return CUGL_OK;
}

CUGL_API cugl_status cugl_kernel_max_threads_per_block(cugl_kernel *kernel, int *threads)
{
    CUGL__TRY(kernel_check(kernel, __func__));
    CUGL__CHECK_NOT_NULL(threads);
    *threads = kernel->max_threads;
    return CUGL_OK;
}

CUGL_API void *cugl_kernel_handle(const cugl_kernel *kernel)
{
    return kernel && !kernel->closed && !kernel->module->closed ? (void *)kernel->handle
                                                                 : NULL;
}

CUGL_API bool cugl_kernel_is_closed(const cugl_kernel *kernel)
{
    return !kernel || kernel->closed || kernel->module->closed;
}

CUGL_API void cugl_kernel_close(cugl_kernel *kernel)
{
    if (!kernel || kernel->closed)
        return;
    kernel->closed = true;
    kernel->handle = NULL;
}

CUGL_API cugl_kernel *cugl_kernel_retain(cugl_kernel *kernel)
{
    if (kernel)
        cugl__ref_inc(&kernel->ref);
    return kernel;
}

CUGL_API void cugl_kernel_release(cugl_kernel *kernel)
{
    if (!kernel || !cugl__ref_dec(&kernel->ref))
        return;
    cugl_module_release(kernel->module);
    free(kernel);
}

/*
 * Raise the kernel's dynamic shared memory limit to at least `bytes`. The
 * limit belongs to the driver's function, which every wrapper of the same
 * kernel shares, so it is only ever raised, under a lock.
 */
static cugl_status opt_in_shared(cugl_kernel *k, size_t bytes)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    int current = 0;
    cugl_status st = CUGL_CU_AS("cugl_launch", cuFuncGetAttribute, &current,
                                CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, k->handle);
    if (st == CUGL_OK && (size_t)current < bytes)
        st = CUGL_CU_AS("cugl_launch", cuFuncSetAttribute, k->handle,
                        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)bytes);
    pthread_mutex_unlock(&lock);
    return st;
}

/* Check the config against the device and kernel; fills in the 1s for 0s. */
static cugl_status check_config(const cugl_launch_config *in, const cugl_kernel *k,
                                const cugl_device_properties *p, cugl_launch_config *c)
{
    static const char axis[] = "xyz";
    const char *who = "cugl_launch";
    *c = *in;
    if (c->grid[0] == 0)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "grid x is 0; it must be >= 1");
    if (c->block[0] == 0)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "block x is 0; it must be >= 1");
    bool cluster = c->cluster[0] || c->cluster[1] || c->cluster[2];
    uint64_t threads = 1, cluster_blocks = 1;
    for (int i = 0; i < 3; i++) {
        if (i > 0 && c->grid[i] == 0)
            c->grid[i] = 1;
        if (i > 0 && c->block[i] == 0)
            c->block[i] = 1;
        if (cluster && c->cluster[i] == 0)
            c->cluster[i] = 1;
        if (c->grid[i] > (uint32_t)p->max_grid_dim[i])
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "grid %c is %u; device %s allows at most %d", axis[i],
                              c->grid[i], p->name, p->max_grid_dim[i]);
        if (c->block[i] > (uint32_t)p->max_block_dim[i])
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "block %c is %u; device %s allows at most %d", axis[i],
                              c->block[i], p->name, p->max_block_dim[i]);
        if (cluster && c->grid[i] % c->cluster[i] != 0)
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "cluster %c (%u) does not divide grid %c (%u)", axis[i],
                              c->cluster[i], axis[i], c->grid[i]);
        threads *= c->block[i];
        cluster_blocks *= cluster ? c->cluster[i] : 1;
    }
    if (threads > (uint64_t)p->max_threads_per_block)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "block %ux%ux%u has %llu threads; device %s allows %d per block",
                          c->block[0], c->block[1], c->block[2], (unsigned long long)threads,
                          p->name, p->max_threads_per_block);
    if (threads > (uint64_t)k->max_threads)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "block %ux%ux%u has %llu threads; kernel '%s' allows at most %d "
                          "(its register use limits it)",
                          c->block[0], c->block[1], c->block[2], (unsigned long long)threads,
                          k->name, k->max_threads);
    if (k->static_shared_bytes + c->shared_mem_bytes > p->max_shared_memory_per_block_optin)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "kernel '%s' asks for %zu bytes of shared memory (%zu static + %zu "
                          "dynamic); device %s allows %zu per block",
                          k->name, k->static_shared_bytes + c->shared_mem_bytes,
                          k->static_shared_bytes, c->shared_mem_bytes, p->name,
                          p->max_shared_memory_per_block_optin);
    if (cluster && !p->cluster_launch)
        return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who,
                          "device %s (compute capability %d.%d) has no cluster launch", p->name,
                          p->compute_capability_major, p->compute_capability_minor);
    if (cluster && cluster_blocks > 8)
        /* 8 is the portable cluster size; more needs a non-portable opt-in. */
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "cluster %ux%ux%u has %llu blocks; at most 8 are portable",
                          c->cluster[0], c->cluster[1], c->cluster[2],
                          (unsigned long long)cluster_blocks);
    if (c->cooperative && !p->cooperative_launch)
        return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who,
                          "device %s has no cooperative launch", p->name);
    return CUGL_OK;
}

CUGL_API cugl_status cugl_launch(cugl_stream *stream, const cugl_launch_config *config,
                                 cugl_kernel *kernel, void **args, size_t num_args)
{
    CUGL__TRY(cugl__stream_check(stream, __func__));
    CUGL__CHECK_NOT_NULL(config);
    CUGL__TRY(kernel_check(kernel, __func__));
    CUGL__CHECK_ARG(args || num_args == 0, "args is NULL but num_args is %zu", num_args);
    cugl_device *dev = kernel->module->device;
    CUGL__CHECK_ARG(stream->device == dev,
                    "kernel '%s' is loaded on device %d but the stream is on device %d",
                    kernel->name, dev->ordinal, cugl_device_ordinal(stream->device));
    const cugl_device_properties *p;
    CUGL__TRY(cugl__device_props(dev, __func__, &p));
    cugl_launch_config c;
    CUGL__TRY(check_config(config, kernel, p, &c));

    CUGL__CHECK_ARG(kernel->num_args < 0 || (size_t)kernel->num_args == num_args,
                    "kernel '%s' takes %ld argument%s, %zu given", kernel->name,
                    kernel->num_args, kernel->num_args == 1 ? "" : "s", num_args);
    for (size_t i = 0; i < num_args; i++)
        CUGL__CHECK_ARG(args[i] != NULL, "args[%zu] is NULL", i);

    CUGL__TRY(cugl__device_activate(dev, __func__));
    if (c.shared_mem_bytes + kernel->static_shared_bytes > p->max_shared_memory_per_block)
        CUGL__TRY(opt_in_shared(kernel, c.shared_mem_bytes));

    bool cluster = c.cluster[0] != 0;
    if (!cluster && !c.cooperative)
        return CUGL_CU(cuLaunchKernel, kernel->handle, c.grid[0], c.grid[1], c.grid[2],
                       c.block[0], c.block[1], c.block[2], (unsigned)c.shared_mem_bytes,
                       stream->handle, args, NULL);

    if (!cugl__cu.cuLaunchKernelEx)
        return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, __func__,
                          "cluster and cooperative launches need cuLaunchKernelEx (CUDA "
                          "11.8 drivers or newer)");
    CUlaunchAttribute attrs[2];
    unsigned n = 0;
    memset(attrs, 0, sizeof attrs);
    if (cluster) {
        attrs[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        attrs[n].value.clusterDim.x = c.cluster[0];
        attrs[n].value.clusterDim.y = c.cluster[1];
        attrs[n].value.clusterDim.z = c.cluster[2];
        n++;
    }
    if (c.cooperative) {
        attrs[n].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
        attrs[n].value.cooperative = 1;
        n++;
    }
    CUlaunchConfig lc = {
        .gridDimX = c.grid[0],
        .gridDimY = c.grid[1],
        .gridDimZ = c.grid[2],
        .blockDimX = c.block[0],
        .blockDimY = c.block[1],
        .blockDimZ = c.block[2],
        .sharedMemBytes = (unsigned)c.shared_mem_bytes,
        .hStream = stream->handle,
        .attrs = attrs,
        .numAttrs = n,
    };
    return CUGL_CU(cuLaunchKernelEx, &lc, kernel->handle, args, NULL);
}
