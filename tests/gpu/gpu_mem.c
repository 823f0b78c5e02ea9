/*
 * gpu_mem.c - see gpu_mem.h.
 */
#include <dlfcn.h>

#include "gpu_mem.h"

static struct {
    CUresult (*mem_alloc)(CUdeviceptr *, size_t);
    CUresult (*mem_free)(CUdeviceptr);
    CUresult (*memcpy_dtoh)(void *, CUdeviceptr, size_t);
    CUresult (*memcpy_htod)(CUdeviceptr, const void *, size_t);
    CUresult (*memset_d32)(CUdeviceptr, unsigned int, size_t);
    CUresult (*host_alloc)(void **, size_t, unsigned int);
    CUresult (*host_get_device_pointer)(CUdeviceptr *, void *, unsigned int);
    CUresult (*free_host)(void *);
    CUresult (*ctx_synchronize)(void);
    CUresult (*ctx_get_current)(CUcontext *);
    CUresult (*get_error_name)(CUresult, const char **);
    CUresult (*mem_alloc_managed)(CUdeviceptr *, size_t, unsigned int);
    CUresult (*mem_alloc_from_pool_async)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
    CUresult (*stream_synchronize)(CUstream);
    CUresult (*mem_get_allocation_granularity)(size_t *, const CUmemAllocationProp *,
                                               CUmemAllocationGranularity_flags);
    CUresult (*mem_import_from_shareable_handle)(CUmemGenericAllocationHandle *, void *,
                                                 CUmemAllocationHandleType);
    CUresult (*mem_address_reserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr,
                                    unsigned long long);
    CUresult (*mem_address_free)(CUdeviceptr, size_t);
    CUresult (*mem_map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
                        unsigned long long);
    CUresult (*mem_unmap)(CUdeviceptr, size_t);
    CUresult (*mem_set_access)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
    CUresult (*mem_release)(CUmemGenericAllocationHandle);
    CUresult (*memcpy_3d)(const CUDA_MEMCPY3D *);
} drv;

static void resolve(void *lib, void **slot, const char *name)
{
    *slot = dlsym(lib, name);
    if (!*slot) {
        printf("Bail out! the CUDA driver library has no %s\n", name);
        exit(1);
    }
}

void gpu_mem_init(void)
{
    /* The library libcugl loaded (already in the process: the same one);
     * under the fault shim (tests/fault), which wraps only what libcugl
     * resolves through it, the real one it forwards to. */
    const char *path = getenv("CUGL_FAULT_REAL");
    if (!path || !*path)
        path = getenv("CUGL_LIBCUDA");
    if (path && strstr(path, "cuda_fault"))
        path = NULL;
    if (!path || !*path)
        path = "libcuda.so.1";
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        printf("Bail out! cannot load %s: %s\n", path, why ? why : "unknown reason");
        exit(1);
    }
    resolve(lib, (void **)&drv.mem_alloc, "cuMemAlloc_v2");
    resolve(lib, (void **)&drv.mem_free, "cuMemFree_v2");
    resolve(lib, (void **)&drv.memcpy_dtoh, "cuMemcpyDtoH_v2");
    resolve(lib, (void **)&drv.memcpy_htod, "cuMemcpyHtoD_v2");
    resolve(lib, (void **)&drv.memset_d32, "cuMemsetD32_v2");
    resolve(lib, (void **)&drv.memcpy_3d, "cuMemcpy3D_v2");
    resolve(lib, (void **)&drv.host_alloc, "cuMemHostAlloc");
    resolve(lib, (void **)&drv.host_get_device_pointer, "cuMemHostGetDevicePointer_v2");
    resolve(lib, (void **)&drv.free_host, "cuMemFreeHost");
    resolve(lib, (void **)&drv.ctx_synchronize, "cuCtxSynchronize");
    resolve(lib, (void **)&drv.ctx_get_current, "cuCtxGetCurrent");
    resolve(lib, (void **)&drv.get_error_name, "cuGetErrorName");
    resolve(lib, (void **)&drv.mem_alloc_managed, "cuMemAllocManaged");
    resolve(lib, (void **)&drv.mem_alloc_from_pool_async, "cuMemAllocFromPoolAsync");
    resolve(lib, (void **)&drv.stream_synchronize, "cuStreamSynchronize");
    resolve(lib, (void **)&drv.mem_get_allocation_granularity, "cuMemGetAllocationGranularity");
    resolve(lib, (void **)&drv.mem_import_from_shareable_handle,
            "cuMemImportFromShareableHandle");
    resolve(lib, (void **)&drv.mem_address_reserve, "cuMemAddressReserve");
    resolve(lib, (void **)&drv.mem_address_free, "cuMemAddressFree");
    resolve(lib, (void **)&drv.mem_map, "cuMemMap");
    resolve(lib, (void **)&drv.mem_unmap, "cuMemUnmap");
    resolve(lib, (void **)&drv.mem_set_access, "cuMemSetAccess");
    resolve(lib, (void **)&drv.mem_release, "cuMemRelease");
}

static void check(CUresult r, const char *call)
{
    if (r == CUDA_SUCCESS)
        return;
    const char *name = NULL;
    if (drv.get_error_name(r, &name) != CUDA_SUCCESS || !name)
        name = "unknown CUresult";
    fail_msg("%s failed: %s (%d)", call, name, (int)r);
}

CUdeviceptr gpu_alloc(size_t bytes)
{
    CUdeviceptr p = 0;
    check(drv.mem_alloc(&p, bytes), "cuMemAlloc_v2");
    return p;
}

void gpu_free(CUdeviceptr ptr)
{
    if (ptr)
        check(drv.mem_free(ptr), "cuMemFree_v2");
}

void gpu_fill_u32(CUdeviceptr dst, uint32_t value, size_t count)
{
    check(drv.memset_d32(dst, value, count), "cuMemsetD32_v2");
    check(drv.ctx_synchronize(), "cuCtxSynchronize");
}

void gpu_write(CUdeviceptr dst, const void *src, size_t bytes)
{
    check(drv.memcpy_htod(dst, src, bytes), "cuMemcpyHtoD_v2");
    check(drv.ctx_synchronize(), "cuCtxSynchronize");
}

void gpu_read(void *dst, CUdeviceptr src, size_t bytes)
{
    check(drv.memcpy_dtoh(dst, src, bytes), "cuMemcpyDtoH_v2");
}

void gpu_copy3d(const CUDA_MEMCPY3D *copy)
{
    check(drv.memcpy_3d(copy), "cuMemcpy3D_v2");
    /* From pageable host memory the copy returns once the bytes are staged,
     * its DMA perhaps still running: a kernel on another stream read the
     * old contents of an array's last rows (two H200 under 32 tests). */
    check(drv.ctx_synchronize(), "cuCtxSynchronize");
}

void *gpu_host_alloc_mapped(size_t bytes, CUdeviceptr *device_ptr)
{
    void *p = NULL;
    check(drv.host_alloc(&p, bytes, CU_MEMHOSTALLOC_DEVICEMAP), "cuMemHostAlloc");
    memset(p, 0, bytes);
    check(drv.host_get_device_pointer(device_ptr, p, 0), "cuMemHostGetDevicePointer_v2");
    return p;
}

void gpu_host_free(void *ptr)
{
    if (ptr)
        check(drv.free_host(ptr), "cuMemFreeHost");
}

CUdeviceptr gpu_managed_alloc(size_t bytes)
{
    CUdeviceptr p = 0;
    check(drv.mem_alloc_managed(&p, bytes, CU_MEM_ATTACH_GLOBAL), "cuMemAllocManaged");
    return p;
}

CUdeviceptr gpu_pool_alloc(void *pool, size_t bytes, void *stream)
{
    CUdeviceptr p = 0;
    check(drv.mem_alloc_from_pool_async(&p, bytes, (CUmemoryPool)pool, (CUstream)stream),
          "cuMemAllocFromPoolAsync");
    check(drv.stream_synchronize((CUstream)stream), "cuStreamSynchronize");
    return p;
}

/* What cugl's exportable memory resource asks cuMemCreate for. */
static CUmemAllocationProp exportable_prop(int ordinal)
{
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = ordinal;
    return prop;
}

size_t gpu_vmm_granularity(int ordinal)
{
    CUmemAllocationProp prop = exportable_prop(ordinal);
    size_t g = 0;
    check(drv.mem_get_allocation_granularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED),
          "cuMemGetAllocationGranularity");
    return g;
}

CUdeviceptr gpu_map_imported_fd(int fd, size_t bytes, int ordinal)
{
    CUmemGenericAllocationHandle handle = 0;
    check(drv.mem_import_from_shareable_handle(&handle, (void *)(intptr_t)fd,
                                               CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
          "cuMemImportFromShareableHandle");
    CUdeviceptr p = 0;
    check(drv.mem_address_reserve(&p, bytes, 0, 0, 0), "cuMemAddressReserve");
    check(drv.mem_map(p, bytes, 0, handle, 0), "cuMemMap");
    /* The mapping keeps the memory; the imported handle is not needed. */
    check(drv.mem_release(handle), "cuMemRelease");
    CUmemAccessDesc access;
    memset(&access, 0, sizeof access);
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = ordinal;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    check(drv.mem_set_access(p, bytes, &access, 1), "cuMemSetAccess");
    return p;
}

void gpu_unmap_imported(CUdeviceptr ptr, size_t bytes)
{
    check(drv.mem_unmap(ptr, bytes), "cuMemUnmap");
    check(drv.mem_address_free(ptr, bytes), "cuMemAddressFree");
}

void *gpu_current_context(void)
{
    CUcontext ctx = NULL;
    check(drv.ctx_get_current(&ctx), "cuCtxGetCurrent");
    return (void *)ctx;
}

void gpu_not_applicable(const char *why)
{
    printf("# not applicable: %s\n", why);
    fflush(stdout);
}

bool gpu_memory_kind_applies(const cugl_device_properties *props, cugl_memory_kind kind,
                             const char *what)
{
    const char *missing = NULL;
    if (kind == CUGL_MEMORY_DEVICE && !props->memory_pools_supported)
        missing = "stream-ordered memory pools";
    else if (kind == CUGL_MEMORY_MANAGED && !props->managed_memory)
        missing = "managed memory";
    else if (kind == CUGL_MEMORY_EXPORTABLE && (!props->virtual_memory_management_supported ||
                                                !props->handle_type_posix_fd_supported))
        missing = "virtual memory management with POSIX file descriptors";
    if (!missing)
        return true;
    char why[160];
    snprintf(why, sizeof why, "%s: the device has no %s", what, missing);
    gpu_not_applicable(why);
    return false;
}
