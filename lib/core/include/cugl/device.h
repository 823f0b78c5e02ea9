/**
 * @file cugl/device.h
 * CUDA devices: enumeration, properties, primary context.
 *
 * The first call of any cugl function that needs the driver loads
 * libcuda.so.1 (or the file named by the environment variable CUGL_LIBCUDA)
 * and initialises it. Without a driver every such call returns
 * CUGL_ERROR_NO_DRIVER with the reason in cugl_last_error().
 *
 * Devices are process-wide objects owned by cugl; they are never released.
 * As with cuda.core's Device, a device must be made current once
 * (cugl_device_set_current) before streams, events, modules or memory are
 * created on it. Functions that take a device make its primary context
 * current on the calling thread.
 */
#ifndef CUGL_DEVICE_H
#define CUGL_DEVICE_H

#include "cugl/error.h"

CUGL_BEGIN_DECLS

/** What cugl_device_get_properties reports. Sizes in bytes. */
typedef struct cugl_device_properties {
    char name[256];                           /**< the device's name ("NVIDIA H200") */
    uint8_t uuid[16];                         /**< its UUID, as GL_EXT_memory_object reports it */
    char pci_bus_id[32];                      /**< "0000:65:00.0" */
    int compute_capability_major;             /**< compute capability, major */
    int compute_capability_minor;             /**< compute capability, minor */
    size_t total_memory;                      /**< device memory */
    int multiprocessor_count;                 /**< streaming multiprocessors */
    int warp_size;                            /**< threads a warp */
    int max_threads_per_block;                /**< threads a block at most */
    int max_block_dim[3];                     /**< a block's largest extents */
    int max_grid_dim[3];                      /**< a grid's largest extents */
    size_t max_shared_memory_per_block;       /**< without opt-in */
    size_t max_shared_memory_per_block_optin; /**< with opt-in, the launch limit */
    int clock_rate_khz;                       /**< the SM clock */
    int memory_clock_rate_khz;                /**< the memory clock */
    int memory_bus_width_bits;                /**< the memory bus's width */
    int l2_cache_bytes;                       /**< L2 cache */
    int max_texture_1d_width;                 /**< CUDA array backed */
    int max_texture_2d[2];                    /**< width, height */
    int max_texture_2d_linear[3];             /**< width, height, pitch in bytes */
    int max_texture_3d[3];                    /**< width, height, depth */
    int max_texture_2d_layered[3];            /**< width, height, layers */
    int max_texture_cubemap_width;            /**< a cube face's width and height */
    int max_surface_1d_width;                 /**< surface width, 1-D */
    int max_surface_2d[2];                    /**< surface width, height */
    int max_surface_3d[3];                    /**< surface width, height, depth */
    size_t texture_alignment;                 /**< base address alignment of textures */
    size_t texture_pitch_alignment;           /**< pitch alignment of pitch2d textures */
    int stream_priority_least;                /**< numerically largest, lowest priority */
    int stream_priority_greatest;             /**< numerically smallest, highest priority */
    bool integrated;                          /**< shares memory with the host */
    bool can_map_host_memory;                 /**< maps pinned host memory for kernels */
    bool unified_addressing;                  /**< one address space with the host */
    bool managed_memory;                      /**< allocates managed memory */
    bool concurrent_managed_access;           /**< CPU and GPU use managed memory at once */
    bool pageable_memory_access;              /**< kernels read pageable host memory */
    bool memory_pools_supported;              /**< stream-ordered memory pools */
    bool cooperative_launch;                  /**< cooperative launches */
    bool cluster_launch;                      /**< thread block clusters */
    bool ipc_event_supported;                 /**< events shared between processes */
    bool virtual_memory_management_supported; /**< cuMemCreate and friends (VMM) */
    bool handle_type_posix_fd_supported;      /**< VMM allocations exportable as fds */
    bool memory_pool_posix_fd_supported;      /**< memory pools shareable as fds (IPC) */
} cugl_device_properties;

/**
 * The number of CUDA devices. 0 (and CUGL_OK) when a driver is present but
 * sees no device.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (count NULL), CUGL_ERROR_NO_DRIVER,
 *   CUGL_ERROR_CUDA (the driver cannot enumerate its devices).
 * @thread_safety Any thread.
 * @param[out] count receives the number of CUDA devices.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_device_count(int *count);

/**
 * The device with the given ordinal.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (out NULL, ordinal negative or not
 *   below the count), CUGL_ERROR_NO_DRIVER, CUGL_ERROR_NO_DEVICE, CUGL_ERROR_CUDA.
 * @thread_safety Any thread.
 * @pointer_lifetime The device lives until the process exits.
 * @param[out] out receives the device (process-wide; never released).
 * @param ordinal its CUDA ordinal, from 0.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_device_get(cugl_device **out, int ordinal);

/**
 * The device whose primary context is current on the calling thread.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (out NULL), CUGL_ERROR_INVALID_STATE
 *   (no cugl device is current on this thread), CUGL_ERROR_NO_DRIVER, CUGL_ERROR_CUDA.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param[out] out receives the device current on this thread.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_device_get_current(cugl_device **out);

/**
 * The ordinal of a device; -1 for NULL.
 * @thread_safety Any thread.
 * @param device the device, or NULL.
 * @return its CUDA ordinal; -1 for NULL.
 */
CUGL_API int cugl_device_ordinal(const cugl_device *device);

/**
 * Fill `props` with the device's properties (read once, then cached).
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL), CUGL_ERROR_CUDA.
 * @thread_safety Any thread.
 * @param device the device.
 * @param[out] props receives its properties.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_device_get_properties(cugl_device *device,
                                                cugl_device_properties *props);

/**
 * Retain the device's primary context (once) and make it current on the
 * calling thread, as cuda.core's Device.set_current().
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL), CUGL_ERROR_CUDA.
 * @thread_safety Any thread.
 * @param device the device.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_device_set_current(cugl_device *device);

/**
 * Whether cugl_device_set_current has been called for the device.
 * @thread_safety Any thread.
 * @param device the device, or NULL.
 * @return true once its primary context is retained; false for NULL.
 */
CUGL_API bool cugl_device_is_initialized(const cugl_device *device);

/**
 * Whether `device` can read and write `peer`'s memory directly
 * (cuDeviceCanAccessPeer: NVLink or PCIe peer-to-peer); a device reaches its
 * own. Neither device needs to be initialized.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL), CUGL_ERROR_NO_DRIVER,
 *   CUGL_ERROR_CUDA.
 * @thread_safety Any thread.
 * @param[out] out receives whether device reaches peer's memory.
 * @param device the device that would access.
 * @param peer the device whose memory it would access.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_device_can_access_peer(bool *out, cugl_device *device,
                                                 cugl_device *peer);

/**
 * Let work on `device` (its primary context) use `peer`'s memory by
 * pointer: buffers and views of `peer`'s memory in kernels and copies on a
 * stream of `device`. Idempotent. Both devices must be initialized.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; the same device),
 *   CUGL_ERROR_INVALID_STATE (a device not initialized: which),
 *   CUGL_ERROR_NOT_SUPPORTED (no peer path between them: the message says
 *   so and that host copies remain), CUGL_ERROR_CUDA.
 * @thread_safety Any thread.
 * @param device the device whose work will use peer's memory.
 * @param peer the device whose memory it uses.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_device_enable_peer_access(cugl_device *device, cugl_device *peer);

/**
 * Wait until all work on the device (its primary context) has completed.
 * @errors CUGL_ERROR_INVALID_ARGUMENT, CUGL_ERROR_INVALID_STATE (device not
 *   initialized), CUGL_ERROR_CUDA (an asynchronous error surfaced).
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param device the device.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_device_sync(cugl_device *device);

/**
 * Free and total device memory in bytes, as the driver sees them now.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (device NULL; both outputs NULL),
 *   CUGL_ERROR_INVALID_STATE (device not initialized), CUGL_ERROR_CUDA.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param device the device.
 * @param[out] free_bytes receives the free device memory, or NULL (not both NULL).
 * @param[out] total_bytes receives the total device memory, or NULL (not both NULL).
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_device_memory_info(cugl_device *device, size_t *free_bytes,
                                             size_t *total_bytes);

/**
 * The objects this process holds through libcugl: created and not yet
 * released to their last reference (buffers, arrays, mipmapped arrays,
 * views, streams, events, memory resources, graphics resources, textures,
 * surfaces, modules and kernels; not devices, which live as long as the
 * process). Counted by the library, so a leak check measures this process
 * alone, where the device's free memory moves with every process on it.
 * @thread_safety Any thread; a count taken while other threads create or
 *   release objects is a count of some moment between.
 * @return the number of live objects.
 */
CUGL_API int64_t cugl_live_objects(void);

/**
 * The bytes this process holds from memory resources: allocated and not yet
 * given back (the size each deallocation names), on every device and of
 * every kind (device, pinned, managed, exportable, imported).
 * @thread_safety Any thread; as cugl_live_objects().
 * @return the number of live bytes.
 */
CUGL_API int64_t cugl_live_bytes(void);

/**
 * The raw CUdevice (an int) of the device; -1 for NULL.
 * @thread_safety Any thread.
 * @param device the device, or NULL.
 * @return the CUdevice; -1 for NULL.
 */
CUGL_API int cugl_device_handle(const cugl_device *device);

/**
 * The raw CUcontext of the primary context; NULL until initialized.
 * @thread_safety Any thread.
 * @param device the device, or NULL.
 * @return its primary CUcontext; NULL before it is initialized, and for NULL.
 */
CUGL_API void *cugl_device_context_handle(const cugl_device *device);

/**
 * The driver's version, e.g. 13000 for CUDA 13.0.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL), CUGL_ERROR_NO_DRIVER.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param[out] version receives the driver's CUDA version (12080 for 12.8).
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_driver_version(int *version);

CUGL_END_DECLS

#endif /* CUGL_DEVICE_H */
