/*
 * peer.c - several devices: whether one device can reach another's memory,
 * turning that on, and memory resources whose allocations other devices
 * may use (a device pool's access, cuMemPoolSetAccess, as cuda.core's
 * peer_accessible_by; each exportable allocation mapped for its peers,
 * cuMemSetAccess). The GL GPU's memory written by CUDA on another GPU
 * rests on these.
 */
#include <stdio.h>
#include <string.h>

#include "core_internal.h"

/* A device argument that is initialized: its primary context exists. */
static cugl_status check_initialized(const cugl_device *d, const char *name, const char *who)
{
    if (!d)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "%s is NULL", name);
    if (!atomic_load(&((cugl_device *)d)->primary))
        return cugl__fail(CUGL_ERROR_INVALID_STATE, who,
                          "device %d is not initialized; call cugl_device_set_current() "
                          "first",
                          d->ordinal);
    return CUGL_OK;
}

/* Whether `d` reaches `peer`'s memory; a device reaches its own. */
static cugl_status can_access(bool *out, const cugl_device *d, const cugl_device *peer,
                              const char *who)
{
    *out = true;
    if (d->handle == peer->handle)
        return CUGL_OK;
    int can = 0;
    CUGL__TRY(CUGL_CU_AS(who, cuDeviceCanAccessPeer, &can, d->handle, peer->handle));
    *out = can != 0;
    return CUGL_OK;
}

/* NOT_SUPPORTED where `d` has no path to `peer`'s memory. */
static cugl_status check_path(const cugl_device *d, const cugl_device *peer, const char *who)
{
    bool can = false;
    CUGL__TRY(can_access(&can, d, peer, who));
    if (can)
        return CUGL_OK;
    return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who,
                      "device %d cannot reach device %d's memory: there is no peer path "
                      "between them (cuDeviceCanAccessPeer is 0); copy through host memory "
                      "instead",
                      d->ordinal, peer->ordinal);
}

CUGL_API cugl_status cugl_device_can_access_peer(bool *out, cugl_device *device,
                                                 cugl_device *peer)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = false;
    CUGL__CHECK_NOT_NULL(device);
    CUGL__CHECK_NOT_NULL(peer);
    CUGL__TRY(cugl__driver_load(__func__));
    return can_access(out, device, peer, __func__);
}

CUGL_API cugl_status cugl_device_enable_peer_access(cugl_device *device, cugl_device *peer)
{
    /* The arguments first, then the devices' state. */
    CUGL__CHECK_NOT_NULL(device);
    CUGL__CHECK_NOT_NULL(peer);
    CUGL__CHECK_ARG(device->handle != peer->handle,
                    "device and peer are both device %d, which reaches its own memory",
                    device->ordinal);
    CUGL__TRY(check_initialized(device, "device", __func__));
    CUGL__TRY(check_initialized(peer, "peer", __func__));
    CUGL__TRY(check_path(device, peer, __func__));
    CUGL__TRY(cugl__device_activate(device, __func__));
    CUresult r = cugl__cu.cuCtxEnablePeerAccess(atomic_load(&peer->primary), 0);
    if (r == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
        return CUGL_OK;
    return cugl__cu_status(r, __func__, "cuCtxEnablePeerAccess");
}

static CUmemAccessDesc access_of(int ordinal, bool on)
{
    return (CUmemAccessDesc){
        .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = ordinal},
        .flags = on ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE : CU_MEM_ACCESS_FLAGS_PROT_NONE,
    };
}

cugl_status cugl__mr_set_access(const cugl_memory_resource *mr, uint64_t ptr, size_t bytes,
                                const char *who)
{
    CUmemAccessDesc access[CUGL_MAX_PEERS + 1];
    access[0] = access_of(mr->device_id, true);
    for (int i = 0; i < mr->peer_count; i++)
        access[i + 1] = access_of(mr->peers[i], true);
    return CUGL_CU_AS(who, cuMemSetAccess, (CUdeviceptr)ptr, bytes, access,
                      (size_t)mr->peer_count + 1);
}

/* A device pool: every listed peer gets read-write access, those listed
 * before and not now lose it. */
static cugl_status set_pool_access(cugl_memory_resource *mr, const int *ordinals, int count,
                                   const char *who)
{
    CUmemAccessDesc access[2 * CUGL_MAX_PEERS];
    int n = 0;
    for (int i = 0; i < count; i++)
        access[n++] = access_of(ordinals[i], true);
    for (int i = 0; i < mr->peer_count; i++) {
        bool kept = false;
        for (int j = 0; j < count; j++)
            kept |= ordinals[j] == mr->peers[i];
        if (!kept)
            access[n++] = access_of(mr->peers[i], false);
    }
    if (n == 0)
        return CUGL_OK;
    return CUGL_CU_AS(who, cuMemPoolSetAccess, mr->pool, access, (size_t)n);
}

CUGL_API cugl_status cugl_memory_resource_set_peer_access(cugl_memory_resource *mr,
                                                          cugl_device *const *devices, int count)
{
    static const char who[] = "cugl_memory_resource_set_peer_access";
    CUGL__CHECK_NOT_NULL(mr);
    if (mr->closed)
        return cugl__fail(CUGL_ERROR_CLOSED, who, "the memory resource has been closed");
    CUGL__CHECK_ARG(count >= 0 && count <= CUGL_MAX_PEERS && (devices || count == 0),
                    "count is %d; 0 to %d devices, and devices not NULL", count, CUGL_MAX_PEERS);
    bool pool = mr->kind == CUGL_MEMORY_DEVICE && mr->pool;
    if (!pool && mr->kind != CUGL_MEMORY_EXPORTABLE)
        return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who,
                          "only device pools and exportable memory resources take peers (this "
                          "one is of kind %d)",
                          (int)mr->kind);
    int ordinals[CUGL_MAX_PEERS];
    int n = 0;
    for (int i = 0; i < count; i++) {
        char name[32];
        snprintf(name, sizeof name, "devices[%d]", i);
        CUGL__TRY(check_initialized(devices[i], name, who));
        int o = devices[i]->ordinal;
        bool seen = o == mr->device_id;
        for (int j = 0; j < n; j++)
            seen |= ordinals[j] == o;
        if (seen)
            continue; /* its own device always has access; twice is once */
        CUGL__TRY(check_path(devices[i], mr->device, who));
        ordinals[n++] = o;
    }
    if (pool)
        CUGL__TRY(set_pool_access(mr, ordinals, n, who));
    memcpy(mr->peers, ordinals, (size_t)n * sizeof ordinals[0]);
    mr->peer_count = n;
    return CUGL_OK;
}

CUGL_API int cugl_memory_resource_peer_access(const cugl_memory_resource *mr, int *ordinals,
                                              int capacity)
{
    if (!mr)
        return 0;
    for (int i = 0; i < mr->peer_count && i < capacity && ordinals; i++)
        ordinals[i] = mr->peers[i];
    return mr->peer_count;
}
