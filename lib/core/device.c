/*
 * device.c - device enumeration, properties and the primary context.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core_internal.h"

static pthread_once_t table_once = PTHREAD_ONCE_INIT;
static cugl_device *table;
static int table_count;
static CUresult table_result;

/* Serialises primary-context retains so each device retains exactly once. */
static pthread_mutex_t retain_lock = PTHREAD_MUTEX_INITIALIZER;

static void build_table(void)
{
    int count = 0;
    if (cugl__driver_has_devices()) {
        table_result = cugl__cu.cuDeviceGetCount(&count);
        if (table_result != CUDA_SUCCESS)
            return;
    }
    if (count == 0)
        return;
    table = calloc((size_t)count, sizeof *table);
    if (!table) {
        table_result = CUDA_ERROR_OUT_OF_MEMORY;
        return;
    }
    for (int i = 0; i < count; i++) {
        table[i].ordinal = i;
        table_result = cugl__cu.cuDeviceGet(&table[i].handle, i);
        if (table_result != CUDA_SUCCESS) {
            free(table);
            table = NULL;
            return;
        }
    }
    table_count = count;
}

/* Load the driver and enumerate the devices once. */
static cugl_status devices(const char *who)
{
    CUGL__TRY(cugl__driver_load(who));
    pthread_once(&table_once, build_table);
    if (table_result != CUDA_SUCCESS)
        return cugl__cu_status(table_result, who, "cuDeviceGetCount/cuDeviceGet");
    return CUGL_OK;
}

CUGL_API cugl_status cugl_driver_version(int *version)
{
    CUGL__CHECK_NOT_NULL(version);
    CUGL__TRY(cugl__driver_load(__func__));
    *version = cugl__driver_version();
    return CUGL_OK;
}

CUGL_API cugl_status cugl_device_count(int *count)
{
    CUGL__CHECK_NOT_NULL(count);
    *count = 0;
    CUGL__TRY(devices(__func__));
    *count = table_count;
    return CUGL_OK;
}

CUGL_API cugl_status cugl_device_get(cugl_device **out, int ordinal)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = NULL;
    CUGL__TRY(devices(__func__));
    if (table_count == 0)
        return cugl__fail(CUGL_ERROR_NO_DEVICE, __func__,
                          "the CUDA driver found no device (asked for device %d)", ordinal);
    CUGL__CHECK_ARG(ordinal >= 0 && ordinal < table_count,
                    "device ordinal %d is out of range: %d device%s present", ordinal,
                    table_count, table_count == 1 ? " is" : "s are");
    *out = &table[ordinal];
    return CUGL_OK;
}

cugl_device *cugl__device_from_context(CUcontext ctx)
{
    if (!ctx)
        return NULL;
    for (int i = 0; i < table_count; i++)
        if (atomic_load(&table[i].primary) == ctx)
            return &table[i];
    return NULL;
}

CUGL_API cugl_status cugl_device_get_current(cugl_device **out)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = NULL;
    CUGL__TRY(devices(__func__));
    CUcontext ctx = NULL;
    CUGL__TRY(CUGL_CU(cuCtxGetCurrent, &ctx));
    cugl_device *dev = cugl__device_from_context(ctx);
    if (!dev)
        return cugl__fail(CUGL_ERROR_INVALID_STATE, __func__,
                          ctx ? "the current context is not a device's primary context "
                                "set by cugl_device_set_current()"
                              : "no device is current on this thread; call "
                                "cugl_device_set_current() first");
    *out = dev;
    return CUGL_OK;
}

CUGL_API int cugl_device_ordinal(const cugl_device *device)
{
    return device ? device->ordinal : -1;
}

CUGL_API int cugl_device_handle(const cugl_device *device)
{
    return device ? (int)device->handle : -1;
}

CUGL_API void *cugl_device_context_handle(const cugl_device *device)
{
    return device ? (void *)atomic_load(&((cugl_device *)device)->primary) : NULL;
}

CUGL_API bool cugl_device_is_initialized(const cugl_device *device)
{
    return cugl_device_context_handle(device) != NULL;
}

CUGL_API cugl_status cugl_device_set_current(cugl_device *device)
{
    CUGL__CHECK_NOT_NULL(device);
    CUcontext ctx = atomic_load(&device->primary);
    if (!ctx) {
        pthread_mutex_lock(&retain_lock);
        ctx = atomic_load(&device->primary);
        cugl_status st = CUGL_OK;
        if (!ctx) {
            st = CUGL_CU(cuDevicePrimaryCtxRetain, &ctx, device->handle);
            if (st == CUGL_OK)
                atomic_store(&device->primary, ctx);
        }
        pthread_mutex_unlock(&retain_lock);
        CUGL__TRY(st);
    }
    return CUGL_CU(cuCtxSetCurrent, ctx);
}

cugl_status cugl__device_activate(cugl_device *device, const char *who)
{
    CUcontext ctx = atomic_load(&device->primary);
    if (!ctx)
        return cugl__fail(CUGL_ERROR_INVALID_STATE, who,
                          "device %d is not initialized; call cugl_device_set_current() "
                          "first",
                          device->ordinal);
    CUcontext cur = NULL;
    CUGL__TRY(CUGL_CU_AS(who, cuCtxGetCurrent, &cur));
    if (cur != ctx)
        CUGL__TRY(CUGL_CU_AS(who, cuCtxSetCurrent, ctx));
    return CUGL_OK;
}

CUGL_API cugl_status cugl_device_sync(cugl_device *device)
{
    CUGL__CHECK_NOT_NULL(device);
    CUGL__TRY(cugl__device_activate(device, __func__));
    return cugl__cu_status(cugl__cu.cuCtxSynchronize(), __func__, "cuCtxSynchronize");
}

CUGL_API cugl_status cugl_device_memory_info(cugl_device *device, size_t *free_bytes,
                                             size_t *total_bytes)
{
    CUGL__CHECK_NOT_NULL(device);
    CUGL__CHECK_ARG(free_bytes || total_bytes, "free_bytes and total_bytes are both NULL");
    CUGL__TRY(cugl__device_activate(device, __func__));
    size_t f = 0, t = 0;
    CUGL__TRY(CUGL_CU(cuMemGetInfo, &f, &t));
    if (free_bytes)
        *free_bytes = f;
    if (total_bytes)
        *total_bytes = t;
    return CUGL_OK;
}

/* The integer attributes of `p`. */
static cugl_status load_ints(CUdevice d, const char *who, cugl_device_properties *p)
{
    struct {
        CUdevice_attribute attr;
        int *value;
    } ints[] = {
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &p->compute_capability_major},
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &p->compute_capability_minor},
        {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &p->multiprocessor_count},
        {CU_DEVICE_ATTRIBUTE_WARP_SIZE, &p->warp_size},
        {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &p->max_threads_per_block},
        {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, &p->max_block_dim[0]},
        {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, &p->max_block_dim[1]},
        {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, &p->max_block_dim[2]},
        {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, &p->max_grid_dim[0]},
        {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, &p->max_grid_dim[1]},
        {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, &p->max_grid_dim[2]},
        {CU_DEVICE_ATTRIBUTE_CLOCK_RATE, &p->clock_rate_khz},
        {CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, &p->memory_clock_rate_khz},
        {CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, &p->memory_bus_width_bits},
        {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &p->l2_cache_bytes},
        {CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH, &p->max_texture_1d_width},
        {CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH, &p->max_texture_2d[0]},
        {CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT, &p->max_texture_2d[1]},
        {CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH, &p->max_texture_2d_linear[0]},
        {CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT, &p->max_texture_2d_linear[1]},
        {CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH, &p->max_texture_2d_linear[2]},
        {CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH, &p->max_texture_3d[0]},
        {CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT, &p->max_texture_3d[1]},
        {CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH, &p->max_texture_3d[2]},
        {CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH, &p->max_texture_2d_layered[0]},
        {CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT, &p->max_texture_2d_layered[1]},
        {CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS, &p->max_texture_2d_layered[2]},
        {CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH, &p->max_texture_cubemap_width},
        {CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH, &p->max_surface_1d_width},
        {CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH, &p->max_surface_2d[0]},
        {CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT, &p->max_surface_2d[1]},
        {CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH, &p->max_surface_3d[0]},
        {CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT, &p->max_surface_3d[1]},
        {CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH, &p->max_surface_3d[2]},
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        CUGL__TRY(CUGL_CU_AS(who, cuDeviceGetAttribute, ints[i].value, ints[i].attr, d));
    return CUGL_OK;
}

/* The sizes of `p`, and its flags (attributes newer than the driver: "no"). */
static cugl_status load_sizes_and_flags(CUdevice d, const char *who, cugl_device_properties *p)
{
    struct {
        CUdevice_attribute attr;
        size_t *value;
    } sizes[] = {
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, &p->max_shared_memory_per_block},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
         &p->max_shared_memory_per_block_optin},
        {CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT, &p->texture_alignment},
        {CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT, &p->texture_pitch_alignment},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        int v = 0;
        CUGL__TRY(CUGL_CU_AS(who, cuDeviceGetAttribute, &v, sizes[i].attr, d));
        *sizes[i].value = (size_t)v;
    }

    struct {
        CUdevice_attribute attr;
        bool *value;
    } flags[] = {
        {CU_DEVICE_ATTRIBUTE_INTEGRATED, &p->integrated},
        {CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, &p->can_map_host_memory},
        {CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, &p->unified_addressing},
        {CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, &p->managed_memory},
        {CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, &p->concurrent_managed_access},
        {CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, &p->pageable_memory_access},
        {CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, &p->memory_pools_supported},
        {CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, &p->cooperative_launch},
        {CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, &p->cluster_launch},
        {CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED, &p->ipc_event_supported},
        {CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
         &p->virtual_memory_management_supported},
        {CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
         &p->handle_type_posix_fd_supported},
    };
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        int v = 0;
        /* Attributes newer than the driver read as "no". */
        if (cugl__cu.cuDeviceGetAttribute(&v, flags[i].attr, d) != CUDA_SUCCESS)
            v = 0;
        *flags[i].value = v != 0;
    }
    int pool_handles = 0;
    if (cugl__cu.cuDeviceGetAttribute(&pool_handles,
                                      CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES,
                                      d) != CUDA_SUCCESS)
        pool_handles = 0;
    p->memory_pool_posix_fd_supported =
        (pool_handles & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) != 0;
    return CUGL_OK;
}

/* The stream priority range: a property of a context; the primary
 * context's range is the device's. Without one, read it through a
 * temporary retain. */
static cugl_status load_priority_range(CUdevice d, const char *who, cugl_device_properties *p)
{
    CUcontext ctx = NULL;
    CUGL__TRY(CUGL_CU_AS(who, cuDevicePrimaryCtxRetain, &ctx, d));
    CUcontext prev = NULL;
    cugl_status st = CUGL_CU_AS(who, cuCtxGetCurrent, &prev);
    if (st == CUGL_OK)
        st = CUGL_CU_AS(who, cuCtxSetCurrent, ctx);
    if (st == CUGL_OK) {
        st = CUGL_CU_AS(who, cuCtxGetStreamPriorityRange, &p->stream_priority_least,
                        &p->stream_priority_greatest);
        cugl__cu.cuCtxSetCurrent(prev);
    }
    cugl__cu.cuDevicePrimaryCtxRelease(d);
    return st;
}

static cugl_status load_props(cugl_device *device, const char *who, cugl_device_properties *p)
{
    CUdevice d = device->handle;
    memset(p, 0, sizeof *p);
    CUGL__TRY(CUGL_CU_AS(who, cuDeviceGetName, p->name, (int)sizeof p->name, d));
    CUuuid uuid;
    CUGL__TRY(CUGL_CU_AS(who, cuDeviceGetUuid, &uuid, d));
    memcpy(p->uuid, uuid.bytes, sizeof p->uuid);
    CUGL__TRY(CUGL_CU_AS(who, cuDeviceGetPCIBusId, p->pci_bus_id, (int)sizeof p->pci_bus_id, d));
    CUGL__TRY(CUGL_CU_AS(who, cuDeviceTotalMem, &p->total_memory, d));
    CUGL__TRY(load_ints(d, who, p));
    CUGL__TRY(load_sizes_and_flags(d, who, p));
    return load_priority_range(d, who, p);
}

cugl_status cugl__device_props(cugl_device *device, const char *who,
                               const cugl_device_properties **props)
{
    if (!atomic_load_explicit(&device->props_loaded, memory_order_acquire)) {
        /* Two threads may both load; they write the same values. */
        cugl_device_properties p;
        CUGL__TRY(load_props(device, who, &p));
        pthread_mutex_lock(&retain_lock);
        if (!atomic_load(&device->props_loaded)) {
            device->props = p;
            atomic_store_explicit(&device->props_loaded, true, memory_order_release);
        }
        pthread_mutex_unlock(&retain_lock);
    }
    *props = &device->props;
    return CUGL_OK;
}

CUGL_API cugl_status cugl_device_get_properties(cugl_device *device,
                                                cugl_device_properties *props)
{
    CUGL__CHECK_NOT_NULL(device);
    CUGL__CHECK_NOT_NULL(props);
    const cugl_device_properties *p;
    CUGL__TRY(cugl__device_props(device, __func__, &p));
    *props = *p;
    return CUGL_OK;
}
