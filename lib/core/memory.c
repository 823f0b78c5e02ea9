/*
 * memory.c - memory resources: device and host pools, managed, legacy
 * pinned and exportable (VMM) memory, each a table of operations.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core_internal.h"

static const char *kind_name(cugl_memory_kind kind)
{
    switch (kind) {
    case CUGL_MEMORY_DEVICE:
        return "device";
    case CUGL_MEMORY_PINNED:
        return "pinned";
    case CUGL_MEMORY_MANAGED:
        return "managed";
    case CUGL_MEMORY_LEGACY_PINNED:
        return "legacy pinned";
    case CUGL_MEMORY_EXPORTABLE:
        return "exportable";
    case CUGL_MEMORY_REGISTERED:
        return "registered";
    }
    return "unknown";
}

/* Wait for `stream` (when given) before memory that is not stream-ordered is
 * freed, so that work queued on it has stopped using the memory. */
static cugl_status wait_stream(cugl_stream *stream, const char *who)
{
    if (!stream)
        return CUGL_OK;
    CUGL__TRY(cugl__stream_enter(stream, who));
    return CUGL_CU_AS(who, cuStreamSynchronize, stream->handle);
}

/* --- pools: device memory, and pinned host memory where the driver has it --- */

static cugl_status pool_allocate(cugl_memory_resource *mr, size_t size, cugl_stream *stream,
                                 uint64_t *ptr, const char *who)
{
    CUdeviceptr p = 0;
    if (mr->max_size && size > mr->max_size)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, who,
                          "out of memory: cannot allocate %zu bytes from the %s pool, which is "
                          "limited to %zu",
                          size, kind_name(mr->kind), mr->max_size);
    /* More device memory than the device has is out of memory, as the
     * exportable resource says it (the driver calls a size it cannot round
     * up an invalid value). */
    const cugl_device_properties *props = NULL;
    if (mr->kind == CUGL_MEMORY_DEVICE && cugl__device_props(mr->device, who, &props) == CUGL_OK &&
        props->total_memory && size > props->total_memory)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, who,
                          "out of memory: cannot allocate %zu bytes from the device pool: device "
                          "%d has %zu",
                          size, mr->device_id, props->total_memory);
    /* The pool is named; the stream may be another device's. */
    CUGL__TRY(cugl__stream_enter(stream, who));
    CUresult r = cugl__cu.cuMemAllocFromPoolAsync(&p, size, mr->pool, stream->handle);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) {
        cuuint64_t reserved = 0, used = 0;
        cugl__cu.cuMemPoolGetAttribute(mr->pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &reserved);
        cugl__cu.cuMemPoolGetAttribute(mr->pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used);
        char limit[48] = "no limit";
        if (mr->max_size)
            snprintf(limit, sizeof limit, "limit %zu", mr->max_size);
        return cugl__fail_cu(CUGL_ERROR_OUT_OF_MEMORY, r, who,
                             "out of memory: cannot allocate %zu bytes from the %s pool "
                             "(%llu bytes in use, %llu reserved, %s; cuMemAllocFromPoolAsync: "
                             "%s)",
                             size, kind_name(mr->kind), (unsigned long long)used,
                             (unsigned long long)reserved, limit, cugl__cu_error_name(r));
    }
    CUGL__TRY(cugl__cu_status(r, who, "cuMemAllocFromPoolAsync"));
    *ptr = p;
    return CUGL_OK;
}

cugl_status cugl__free_async(uint64_t ptr, size_t size, cugl_stream *stream, const char *who)
{
    /* Where it cannot be entered, the free is still tried (the memory's
     * pool knows its device) and the failure reported. */
    cugl_status entered = cugl__stream_enter(stream, who);
    CUresult r = cugl__cu.cuMemFreeAsync((CUdeviceptr)ptr, stream->handle);
    if (r == CUDA_SUCCESS)
        return entered;
    /* Not lost over one failure: once more, then synchronously (cuMemFree
     * takes stream-ordered memory too). The failure is still reported. */
    cugl_status st = cugl__cu_status(r, who, "cuMemFreeAsync");
    if (cugl__cu.cuMemFreeAsync((CUdeviceptr)ptr, stream->handle) != CUDA_SUCCESS &&
        (cugl__cu.cuStreamSynchronize(stream->handle) != CUDA_SUCCESS ||
         cugl__cu.cuMemFree((CUdeviceptr)ptr) != CUDA_SUCCESS))
        cugl__fail_cu(st, r, who,
                      "cuMemFreeAsync failed: %s, and so did a second try and cuMemFree: %zu "
                      "bytes at 0x%llx are lost",
                      cugl__cu_error_name(r), size, (unsigned long long)ptr);
    return st;
}

static cugl_status pool_deallocate(cugl_memory_resource *mr, uint64_t ptr, size_t size,
                                   cugl_stream *stream, const char *who)
{
    (void)mr;
    return cugl__free_async(ptr, size, stream, who);
}

static const cugl__mr_ops pool_ops = {pool_allocate, pool_deallocate};

/* --- pinned host memory without a pool: cuMemHostAlloc --- */

static cugl_status host_alloc_allocate(cugl_memory_resource *mr, size_t size,
                                       cugl_stream *stream, uint64_t *ptr, const char *who)
{
    (void)mr;
    (void)stream;
    void *p = NULL;
    CUGL__TRY(CUGL_CU_AS(who, cuMemHostAlloc, &p, size,
                         CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP));
    *ptr = (uint64_t)(uintptr_t)p;
    return CUGL_OK;
}

static cugl_status host_free(cugl_memory_resource *mr, uint64_t ptr, size_t size,
                             cugl_stream *stream, const char *who)
{
    (void)mr;
    (void)size;
    cugl_status st = wait_stream(stream, who);
    cugl_status st2 = CUGL_CU_AS(who, cuMemFreeHost, (void *)(uintptr_t)ptr);
    return st != CUGL_OK ? st : st2;
}

static const cugl__mr_ops host_alloc_ops = {host_alloc_allocate, host_free};

/* --- legacy pinned: cuMemAllocHost --- */

static cugl_status legacy_allocate(cugl_memory_resource *mr, size_t size, cugl_stream *stream,
                                   uint64_t *ptr, const char *who)
{
    (void)mr;
    (void)stream;
    void *p = NULL;
    CUGL__TRY(CUGL_CU_AS(who, cuMemAllocHost, &p, size));
    *ptr = (uint64_t)(uintptr_t)p;
    return CUGL_OK;
}

static const cugl__mr_ops legacy_ops = {legacy_allocate, host_free};

/* --- registered host memory: the caller's, page-locked (one buffer each) --- */

static cugl_status registered_allocate(cugl_memory_resource *mr, size_t size,
                                       cugl_stream *stream, uint64_t *ptr, const char *who)
{
    (void)mr;
    (void)stream;
    (void)ptr;
    return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who,
                      "a registered memory resource allocates nothing (%zu bytes asked): it "
                      "holds the memory cugl_buffer_register_host was given",
                      size);
}

static cugl_status registered_free(cugl_memory_resource *mr, uint64_t ptr, size_t size,
                                   cugl_stream *stream, const char *who)
{
    (void)mr;
    (void)size;
    cugl_status st = wait_stream(stream, who);
    cugl_status st2 = CUGL_CU_AS(who, cuMemHostUnregister, (void *)(uintptr_t)ptr);
    return st != CUGL_OK ? st : st2;
}

static const cugl__mr_ops registered_ops = {registered_allocate, registered_free};

/* --- managed memory --- */

static cugl_status managed_allocate(cugl_memory_resource *mr, size_t size, cugl_stream *stream,
                                    uint64_t *ptr, const char *who)
{
    (void)stream;
    CUdeviceptr p = 0;
    CUGL__TRY(CUGL_CU_AS(who, cuMemAllocManaged, &p, size, CU_MEM_ATTACH_GLOBAL));
    if (mr->preferred.type != CU_MEM_LOCATION_TYPE_INVALID && cugl__cu.cuMemAdvise) {
        cugl_status st = CUGL_CU_AS(who, cuMemAdvise, p, size,
                                    CU_MEM_ADVISE_SET_PREFERRED_LOCATION, mr->preferred);
        if (st != CUGL_OK) {
            cugl__cu.cuMemFree(p);
            return st;
        }
    }
    *ptr = p;
    return CUGL_OK;
}

static cugl_status managed_deallocate(cugl_memory_resource *mr, uint64_t ptr, size_t size,
                                      cugl_stream *stream, const char *who)
{
    (void)mr;
    (void)size;
    cugl_status st = wait_stream(stream, who);
    cugl_status st2 = CUGL_CU_AS(who, cuMemFree, (CUdeviceptr)ptr);
    return st != CUGL_OK ? st : st2;
}

static const cugl__mr_ops managed_ops = {managed_allocate, managed_deallocate};

/* --- exportable: cuMemCreate with a POSIX fd handle, reserved and mapped --- */

static size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

static cugl_status vmm_allocate(cugl_memory_resource *mr, size_t size, cugl_stream *stream,
                                uint64_t *ptr, const char *who)
{
    (void)stream;
    if (size > SIZE_MAX - mr->granularity)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "size %zu is too large", size);
    size_t bytes = round_up(size, mr->granularity);
    CUmemAllocationProp prop = {
        .type = CU_MEM_ALLOCATION_TYPE_PINNED,
        .requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
        .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = mr->device_id},
    };
    CUmemGenericAllocationHandle handle;
    CUresult r = cugl__cu.cuMemCreate(&handle, bytes, &prop, 0);
    if (r == CUDA_ERROR_OUT_OF_MEMORY || r == CUDA_ERROR_INVALID_VALUE) {
        /* The driver refuses sizes past the device's memory as invalid:
         * to the caller both are memory it cannot have. */
        const cugl_device_properties *p = NULL;
        size_t total = cugl__device_props(mr->device, who, &p) == CUGL_OK ? p->total_memory : 0;
        if (r == CUDA_ERROR_OUT_OF_MEMORY || (total && bytes > total))
            return cugl__fail_cu(CUGL_ERROR_OUT_OF_MEMORY, r, who,
                                 "out of memory: cannot allocate %zu bytes of exportable memory "
                                 "on device %d, which has %zu (cuMemCreate: %s)",
                                 size, mr->device_id, total, cugl__cu_error_name(r));
    }
    CUGL__TRY(cugl__cu_status(r, who, "cuMemCreate"));
    CUdeviceptr p = 0;
    cugl_status st = CUGL_CU_AS(who, cuMemAddressReserve, &p, bytes, mr->granularity, 0, 0);
    if (st == CUGL_OK) {
        st = CUGL_CU_AS(who, cuMemMap, p, bytes, 0, handle, 0);
        if (st == CUGL_OK) {
            st = cugl__mr_set_access(mr, p, bytes, who);
            if (st != CUGL_OK)
                cugl__cu.cuMemUnmap(p, bytes);
        }
        if (st != CUGL_OK)
            cugl__cu.cuMemAddressFree(p, bytes);
    }
    /* The mapping keeps the memory; the handle can be retrieved again from
     * the address (cuMemRetainAllocationHandle) when it is exported. */
    cugl__cu.cuMemRelease(handle);
    if (st == CUGL_OK)
        *ptr = p;
    return st;
}

static cugl_status vmm_deallocate(cugl_memory_resource *mr, uint64_t ptr, size_t size,
                                  cugl_stream *stream, const char *who)
{
    size_t bytes = round_up(size, mr->granularity);
    cugl_status st = wait_stream(stream, who);
    cugl_status st2 = CUGL_CU_AS(who, cuMemUnmap, (CUdeviceptr)ptr, bytes);
    cugl_status st3 = CUGL_CU_AS(who, cuMemAddressFree, (CUdeviceptr)ptr, bytes);
    return st != CUGL_OK ? st : st2 != CUGL_OK ? st2 : st3;
}

static const cugl__mr_ops vmm_ops = {vmm_allocate, vmm_deallocate};

/* --- construction --- */

static cugl_status mr_new(cugl_memory_resource **out, cugl_device *device,
                          cugl_memory_kind kind, const cugl__mr_ops *ops, const char *who)
{
    cugl_memory_resource *mr = calloc(1, sizeof *mr);
    if (!mr)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, who, "cannot allocate a memory resource");
    cugl__ref_init(&mr->ref);
    mr->ops = ops;
    mr->kind = kind;
    mr->device = device;
    mr->device_id = device->ordinal;
    *out = mr;
    return CUGL_OK;
}

/* Check the common arguments and make the device current. */
static cugl_status begin_create(cugl_memory_resource **out, cugl_device *device,
                                const cugl_device_properties **props, const char *who)
{
    if (!out)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "out is NULL");
    *out = NULL;
    if (!device)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "device is NULL");
    CUGL__TRY(cugl__device_activate(device, who));
    return cugl__device_props(device, who, props);
}

/* Freed memory stays in the pool for reuse instead of going back to the
 * driver at every synchronisation. */
static cugl_status keep_freed_memory(CUmemoryPool pool, const char *who)
{
    cuuint64_t threshold = ULLONG_MAX;
    return CUGL_CU_AS(who, cuMemPoolSetAttribute, pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                      &threshold);
}

/*
 * The driver exports allocations only from a pool that has itself been
 * shared (cuMemPoolExportPointer fails otherwise), so an IPC pool is
 * exported once at creation; the descriptor is not needed.
 */
static cugl_status share_once(CUmemoryPool pool, const char *who)
{
    int fd = -1;
    CUGL__TRY(CUGL_CU_AS(who, cuMemPoolExportToShareableHandle, &fd, pool,
                         CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    close(fd);
    return CUGL_OK;
}

CUGL_API cugl_status cugl_device_memory_resource_create(cugl_memory_resource **out,
                                                        cugl_device *device,
                                                        const cugl_device_memory_desc *desc)
{
    const cugl_device_properties *p;
    CUGL__TRY(begin_create(out, device, &p, __func__));
    cugl_device_memory_desc d = desc ? *desc : (cugl_device_memory_desc){0};
    if (!p->memory_pools_supported)
        return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, __func__,
                          "device %d (%s) has no stream-ordered memory pools", device->ordinal,
                          p->name);
    if (d.ipc && !p->memory_pool_posix_fd_supported)
        return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, __func__,
                          "device %d (%s) cannot share pools through POSIX file descriptors",
                          device->ordinal, p->name);
    bool own = d.own_pool || d.ipc || d.max_size != 0;

    CUmemoryPool pool = NULL;
    if (own) {
        CUmemPoolProps props = {
            .allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
            .handleTypes = d.ipc ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : CU_MEM_HANDLE_TYPE_NONE,
            .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = device->ordinal},
            .maxSize = d.max_size,
        };
        if (d.max_size) {
            /* Below one granule the driver would not hold the pool to it. */
            size_t granule = 0;
            CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
                                        .location = props.location};
            CUGL__TRY(CUGL_CU(cuMemGetAllocationGranularity, &granule, &prop,
                              CU_MEM_ALLOC_GRANULARITY_MINIMUM));
            if (d.max_size < granule)
                return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                                  "max_size %zu is below the allocation granularity of device "
                                  "%d, %zu bytes",
                                  d.max_size, device->ordinal, granule);
        }
        CUGL__TRY(CUGL_CU(cuMemPoolCreate, &pool, &props));
    } else {
        CUGL__TRY(CUGL_CU(cuDeviceGetMemPool, &pool, device->handle));
    }
    cugl_status st = keep_freed_memory(pool, __func__);
    if (st == CUGL_OK && d.ipc)
        st = share_once(pool, __func__);
    if (st == CUGL_OK)
        st = mr_new(out, device, CUGL_MEMORY_DEVICE, &pool_ops, __func__);
    if (st != CUGL_OK) {
        if (own)
            cugl__cu.cuMemPoolDestroy(pool);
        return st;
    }
    cugl_memory_resource *mr = *out;
    mr->pool = pool;
    mr->owns_pool = own;
    mr->max_size = own ? d.max_size : 0;
    mr->ipc = d.ipc;
    mr->device_accessible = true;
    mr->stream_ordered = true;
    return CUGL_OK;
}

CUGL_API cugl_status cugl_pinned_memory_resource_create(cugl_memory_resource **out,
                                                        cugl_device *device,
                                                        const cugl_pinned_memory_desc *desc)
{
    const cugl_device_properties *p;
    CUGL__TRY(begin_create(out, device, &p, __func__));
    cugl_pinned_memory_desc d = desc ? *desc : (cugl_pinned_memory_desc){0};

    /* A host pool needs a driver that has them (CUDA 12.6 and newer); older
     * drivers refuse the host location, and cuMemHostAlloc serves instead. */
    CUmemoryPool pool = NULL;
    if (p->memory_pools_supported) {
        CUmemPoolProps props = {
            .allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
            .location = {.type = CU_MEM_LOCATION_TYPE_HOST, .id = 0},
            .maxSize = d.max_size,
        };
        if (cugl__cu.cuMemPoolCreate(&pool, &props) != CUDA_SUCCESS)
            pool = NULL;
    }
    cugl_status st = CUGL_OK;
    if (pool) {
        CUmemAccessDesc access = {
            .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = device->ordinal},
            .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        };
        st = CUGL_CU(cuMemPoolSetAccess, pool, &access, 1);
        if (st == CUGL_OK)
            st = keep_freed_memory(pool, __func__);
    }
    if (st == CUGL_OK)
        st = mr_new(out, device, CUGL_MEMORY_PINNED, pool ? &pool_ops : &host_alloc_ops, __func__);
    if (st != CUGL_OK) {
        if (pool)
            cugl__cu.cuMemPoolDestroy(pool);
        return st;
    }
    cugl_memory_resource *mr = *out;
    mr->pool = pool;
    mr->owns_pool = pool != NULL;
    mr->max_size = pool ? d.max_size : 0;
    mr->device_id = -1;
    mr->device_accessible = true;
    mr->host_accessible = true;
    mr->stream_ordered = pool != NULL;
    return CUGL_OK;
}

CUGL_API cugl_status cugl_managed_memory_resource_create(cugl_memory_resource **out,
                                                         cugl_device *device,
                                                         const cugl_managed_memory_desc *desc)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = NULL;
    cugl_managed_memory_desc d = desc ? *desc : (cugl_managed_memory_desc){0};
    if (d.preferred_location != CUGL_LOCATION_NONE &&
        d.preferred_location != CUGL_LOCATION_DEVICE && d.preferred_location != CUGL_LOCATION_HOST)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "preferred_location %d is not a cugl_location_kind",
                          (int)d.preferred_location);
    const cugl_device_properties *p;
    CUGL__TRY(begin_create(out, device, &p, __func__));
    if (!p->managed_memory)
        return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, __func__,
                          "device %d (%s) has no managed memory", device->ordinal, p->name);
    CUGL__TRY(mr_new(out, device, CUGL_MEMORY_MANAGED, &managed_ops, __func__));
    cugl_memory_resource *mr = *out;
    if (d.preferred_location == CUGL_LOCATION_DEVICE)
        mr->preferred = (CUmemLocation){.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = device->ordinal};
    else if (d.preferred_location == CUGL_LOCATION_HOST)
        mr->preferred = (CUmemLocation){.type = CU_MEM_LOCATION_TYPE_HOST};
    mr->device_id = d.preferred_location == CUGL_LOCATION_DEVICE ? device->ordinal : -1;
    mr->device_accessible = true;
    mr->host_accessible = true;
    mr->managed = true;
    return CUGL_OK;
}

CUGL_API cugl_status cugl_legacy_pinned_memory_resource_create(cugl_memory_resource **out,
                                                               cugl_device *device)
{
    const cugl_device_properties *p;
    CUGL__TRY(begin_create(out, device, &p, __func__));
    CUGL__TRY(mr_new(out, device, CUGL_MEMORY_LEGACY_PINNED, &legacy_ops, __func__));
    cugl_memory_resource *mr = *out;
    mr->device_id = -1;
    mr->device_accessible = true;
    mr->host_accessible = true;
    return CUGL_OK;
}

CUGL_API cugl_status cugl_buffer_register_host(cugl_buffer **out, cugl_device *device,
                                               void *ptr, size_t size)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = NULL;
    CUGL__CHECK_NOT_NULL(device);
    CUGL__CHECK_NOT_NULL(ptr);
    CUGL__CHECK_ARG(size > 0, "size is 0");
    CUGL__CHECK_ARG((uintptr_t)ptr <= UINTPTR_MAX - size,
                    "%zu bytes at %p pass the end of the address space", size, ptr);
    CUGL__TRY(cugl__device_activate(device, __func__));
    CUresult r = cugl__cu.cuMemHostRegister(ptr, size, CU_MEMHOSTREGISTER_PORTABLE);
    if (r == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED || r == CUDA_ERROR_INVALID_VALUE)
        return cugl__fail_cu(CUGL_ERROR_INVALID_ARGUMENT, r, __func__,
                             "%zu bytes at %p: %s", size, ptr,
                             r == CUDA_ERROR_INVALID_VALUE
                                 ? "the driver cannot page-lock them (cuMemHostRegister: "
                                   "CUDA_ERROR_INVALID_VALUE)"
                                 : "some are registered already");
    CUGL__TRY(cugl__cu_status(r, __func__, "cuMemHostRegister"));
    cugl_memory_resource *mr = NULL;
    cugl_status st = mr_new(&mr, device, CUGL_MEMORY_REGISTERED, &registered_ops, __func__);
    if (st == CUGL_OK) {
        mr->device_id = -1;
        mr->device_accessible = true;
        mr->host_accessible = true;
        st = cugl__buffer_new(out, (uint64_t)(uintptr_t)ptr, size, mr, NULL, __func__);
    }
    cugl_memory_resource_release(mr); /* the buffer holds it */
    if (st != CUGL_OK) {
        cugl__cu.cuMemHostUnregister(ptr);
        return st;
    }
    cugl__live_add(&cugl__live_byte_count, (long long)size);
    return CUGL_OK;
}

CUGL_API cugl_status cugl_exportable_memory_resource_create(cugl_memory_resource **out,
                                                            cugl_device *device)
{
    const cugl_device_properties *p;
    CUGL__TRY(begin_create(out, device, &p, __func__));
    if (!p->virtual_memory_management_supported || !p->handle_type_posix_fd_supported)
        return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, __func__,
                          "device %d (%s) lacks %s", device->ordinal, p->name,
                          !p->virtual_memory_management_supported
                              ? "virtual memory management"
                              : "POSIX file descriptor handles");
    CUmemAllocationProp prop = {
        .type = CU_MEM_ALLOCATION_TYPE_PINNED,
        .requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
        .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = device->ordinal},
    };
    size_t granularity = 0;
    CUGL__TRY(CUGL_CU(cuMemGetAllocationGranularity, &granularity, &prop,
                      CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    if (granularity == 0)
        granularity = 2u << 20;
    CUGL__TRY(mr_new(out, device, CUGL_MEMORY_EXPORTABLE, &vmm_ops, __func__));
    (*out)->granularity = granularity;
    (*out)->device_accessible = true;
    return CUGL_OK;
}

CUGL_API cugl_status cugl_device_memory_resource_import_fd(cugl_memory_resource **out,
                                                           cugl_device *device, int fd)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = NULL;
    CUGL__CHECK_NOT_NULL(device);
    CUGL__CHECK_ARG(fd >= 0, "fd %d is not a file descriptor", fd);
    CUGL__TRY(cugl__device_activate(device, __func__));
    CUmemoryPool pool = NULL;
    CUGL__TRY(CUGL_CU(cuMemPoolImportFromShareableHandle, &pool, (void *)(intptr_t)fd,
                      CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    cugl_status st = mr_new(out, device, CUGL_MEMORY_DEVICE, &pool_ops, __func__);
    if (st != CUGL_OK) {
        cugl__cu.cuMemPoolDestroy(pool);
        return st;
    }
    cugl_memory_resource *mr = *out;
    mr->pool = pool;
    mr->owns_pool = true;
    mr->ipc = true;
    mr->imported = true;
    mr->device_accessible = true;
    mr->stream_ordered = true;
    return CUGL_OK;
}

/* --- use --- */

static cugl_status mr_check(const cugl_memory_resource *mr, const char *who)
{
    if (!mr)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "mr is NULL");
    if (mr->closed)
        return cugl__fail(CUGL_ERROR_CLOSED, who, "the %s memory resource has been closed",
                          kind_name(mr->kind));
    return CUGL_OK;
}

/* A stream is required where the resource orders its work on one; where it
 * does not, NULL is accepted. A given stream must be open. */
static cugl_status mr_stream_check(const cugl_memory_resource *mr, cugl_stream *stream,
                                   const char *who)
{
    if (!stream && !mr->stream_ordered)
        return CUGL_OK;
    if (!stream)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "stream is NULL; the %s memory resource orders its work on a stream",
                          kind_name(mr->kind));
    return cugl__stream_check(stream, who);
}

cugl_status cugl__mr_allocate(cugl_memory_resource *mr, size_t size, cugl_stream *stream,
                              uint64_t *ptr, const char *who)
{
    *ptr = 0;
    if (mr->imported)
        return cugl__fail(CUGL_ERROR_INVALID_STATE, who,
                          "the memory resource was imported from another process; it can "
                          "only import buffers (cugl_buffer_ipc_import)");
    if (size == 0)
        return CUGL_OK;
    CUGL__TRY(cugl__device_activate(mr->device, who));
    CUGL__TRY(mr->ops->allocate(mr, size, stream, ptr, who));
    cugl__live_add(&cugl__live_byte_count, (long long)size);
    return CUGL_OK;
}

cugl_status cugl__mr_deallocate(cugl_memory_resource *mr, uint64_t ptr, size_t size,
                                cugl_stream *stream, const char *who)
{
    if (ptr == 0)
        return CUGL_OK;
    /* Freed even where the device cannot be made current (the memory's
     * stream or pool knows its context): lost memory helps nobody. */
    cugl_status active = cugl__device_activate(mr->device, who);
    cugl_status st = mr->ops->deallocate(mr, ptr, size, stream, who);
    cugl__live_add(&cugl__live_byte_count, -(long long)size);
    return active != CUGL_OK ? active : st;
}

CUGL_API cugl_status cugl_memory_resource_allocate(cugl_buffer **out,
                                                   cugl_memory_resource *mr, size_t size,
                                                   cugl_stream *stream)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = NULL;
    CUGL__TRY(mr_check(mr, __func__));
    CUGL__TRY(mr_stream_check(mr, stream, __func__));
    uint64_t ptr = 0;
    CUGL__TRY(cugl__mr_allocate(mr, size, stream, &ptr, __func__));
    cugl_status st = cugl__buffer_new(out, ptr, size, mr, stream, __func__);
    if (st != CUGL_OK)
        cugl__mr_deallocate(mr, ptr, size, stream, __func__);
    return st;
}

CUGL_API cugl_status cugl_memory_resource_deallocate(cugl_memory_resource *mr, uint64_t ptr,
                                                     size_t size, cugl_stream *stream)
{
    CUGL__CHECK_NOT_NULL(mr);
    CUGL__TRY(mr_stream_check(mr, stream, __func__));
    return cugl__mr_deallocate(mr, ptr, size, stream, __func__);
}

CUGL_API cugl_status cugl_memory_resource_pool_stats(cugl_memory_resource *mr,
                                                     cugl_pool_stats *stats)
{
    if (stats)
        memset(stats, 0, sizeof *stats);
    CUGL__TRY(mr_check(mr, __func__));
    CUGL__CHECK_NOT_NULL(stats);
    if (!mr->pool)
        return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, __func__,
                          "the %s memory resource has no pool", kind_name(mr->kind));
    struct {
        CUmemPool_attribute attr;
        uint64_t *value;
    } rows[] = {
        {CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &stats->reserved_current},
        {CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &stats->reserved_high},
        {CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &stats->used_current},
        {CU_MEMPOOL_ATTR_USED_MEM_HIGH, &stats->used_high},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        cuuint64_t v = 0;
        CUGL__TRY(CUGL_CU(cuMemPoolGetAttribute, mr->pool, rows[i].attr, &v));
        *rows[i].value = v;
    }
    return CUGL_OK;
}

CUGL_API cugl_status cugl_memory_resource_trim(cugl_memory_resource *mr, size_t keep_bytes)
{
    CUGL__TRY(mr_check(mr, __func__));
    if (!mr->pool)
        return CUGL_OK;
    return CUGL_CU(cuMemPoolTrimTo, mr->pool, keep_bytes);
}

CUGL_API cugl_status cugl_memory_resource_export_fd(cugl_memory_resource *mr, int *fd)
{
    if (fd)
        *fd = -1;
    CUGL__TRY(mr_check(mr, __func__));
    CUGL__CHECK_NOT_NULL(fd);
    if (!mr->ipc || mr->imported)
        return cugl__fail(CUGL_ERROR_INVALID_STATE, __func__,
                          mr->imported ? "the memory resource was imported; only its owner "
                                         "exports it"
                                       : "the memory resource is not IPC-enabled (create it "
                                         "with cugl_device_memory_desc.ipc)");
    int handle = -1;
    CUGL__TRY(CUGL_CU(cuMemPoolExportToShareableHandle, &handle, mr->pool,
                      CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    *fd = handle;
    return CUGL_OK;
}

CUGL_API cugl_memory_kind cugl_memory_resource_kind(const cugl_memory_resource *mr)
{
    return mr ? mr->kind : (cugl_memory_kind)0;
}

CUGL_API bool cugl_memory_resource_is_device_accessible(const cugl_memory_resource *mr)
{
    return mr && mr->device_accessible;
}

CUGL_API bool cugl_memory_resource_is_host_accessible(const cugl_memory_resource *mr)
{
    return mr && mr->host_accessible;
}

CUGL_API bool cugl_memory_resource_is_managed(const cugl_memory_resource *mr)
{
    return mr && mr->managed;
}

CUGL_API bool cugl_memory_resource_is_ipc_enabled(const cugl_memory_resource *mr)
{
    return mr && mr->ipc;
}

CUGL_API bool cugl_memory_resource_is_stream_ordered(const cugl_memory_resource *mr)
{
    return mr && mr->stream_ordered;
}

CUGL_API int cugl_memory_resource_device_id(const cugl_memory_resource *mr)
{
    return mr ? mr->device_id : -1;
}

CUGL_API cugl_device *cugl_memory_resource_device(const cugl_memory_resource *mr)
{
    return mr ? mr->device : NULL;
}

CUGL_API void *cugl_memory_resource_pool_handle(const cugl_memory_resource *mr)
{
    return mr && !mr->closed ? (void *)mr->pool : NULL;
}

CUGL_API bool cugl_memory_resource_is_closed(const cugl_memory_resource *mr)
{
    return !mr || mr->closed;
}

CUGL_API void cugl_memory_resource_close(cugl_memory_resource *mr)
{
    if (!mr || mr->closed)
        return;
    /* Unused reserved memory goes back now. The pool itself lives until the
     * last buffer that holds the resource has returned its memory (see
     * release): freeing into a destroyed pool is not safe. */
    if (mr->owns_pool && mr->pool)
        cugl__cu.cuMemPoolTrimTo(mr->pool, 0);
    mr->closed = true;
}

CUGL_API cugl_memory_resource *cugl_memory_resource_retain(cugl_memory_resource *mr)
{
    if (mr)
        cugl__ref_inc(&mr->ref);
    return mr;
}

CUGL_API void cugl_memory_resource_release(cugl_memory_resource *mr)
{
    if (!mr || !cugl__ref_dec(&mr->ref))
        return;
    cugl_memory_resource_close(mr);
    /* No buffer refers to it any more; frees still queued on streams are
     * the driver's to finish, which it does before destroying the pool.
     * Except an imported pool: destroyed with a free of one of its imported
     * pointers still queued, the driver keeps a descriptor of /dev/nvidiactl
     * open for good (driver 580), one per pool. So those frees finish
     * first; a pool is imported once per process and peer, so the wait is
     * rare. Raw calls: a release leaves the thread's last error alone. */
    CUcontext primary = mr->imported ? atomic_load(&mr->device->primary) : NULL;
    CUcontext was = NULL;
    if (primary && mr->pool && cugl__cu.cuCtxGetCurrent(&was) == CUDA_SUCCESS &&
        (was == primary || cugl__cu.cuCtxSetCurrent(primary) == CUDA_SUCCESS)) {
        cugl__cu.cuCtxSynchronize();
        if (was != primary)
            cugl__cu.cuCtxSetCurrent(was);
    }
    if (mr->owns_pool && mr->pool)
        cugl__cu.cuMemPoolDestroy(mr->pool);
    free(mr);
}
