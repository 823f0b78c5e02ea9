/**
 * @file cugl/memory.h
 * Memory resources: where buffers come from.
 *
 * A memory resource allocates buffers and takes their memory back, ordered on
 * a stream, as cuda.core's MemoryResource family does:
 *
 *   device       stream-ordered device memory, from the device's current pool
 *                or from a pool of its own (maximum size, IPC)
 *   pinned       page-locked host memory the device can reach; stream-ordered
 *                from a host pool where the driver has one, else cuMemHostAlloc
 *   managed      managed (unified) memory with a preferred location
 *   legacy       synchronous cuMemAllocHost
 *   exportable   device memory made with cuMemCreate with a POSIX file
 *                descriptor handle, so that another API (GL) or process can
 *                import it: what map-free GL interop uses
 *
 * Every buffer holds a reference to its resource. Closing a resource refuses
 * further allocations; memory already handed out stays valid until its
 * buffers are closed.
 */
#ifndef CUGL_MEMORY_H
#define CUGL_MEMORY_H

#include "cugl/error.h"

CUGL_BEGIN_DECLS

/** What kind of memory a resource allocates. */
typedef enum cugl_memory_kind {
    CUGL_MEMORY_DEVICE = 1,        /**< device memory from a pool */
    CUGL_MEMORY_PINNED = 2,        /**< pinned host memory from a pool */
    CUGL_MEMORY_MANAGED = 3,       /**< managed (unified) memory */
    CUGL_MEMORY_LEGACY_PINNED = 4, /**< pinned host memory, cuMemAllocHost */
    CUGL_MEMORY_EXPORTABLE = 5,    /**< device memory exportable as a file descriptor */
    CUGL_MEMORY_REGISTERED = 6,    /**< host memory of the caller's, page-locked
                                    *   (cugl_buffer_register_host) */
} cugl_memory_kind;

/** Options of a device memory resource; zero-initialise for the defaults. */
typedef struct cugl_device_memory_desc {
    /** false (default): allocate from the device's current pool, whose release
     * threshold is raised so that freed memory stays reserved and is reused.
     * true: create a pool owned by the resource (implied by max_size and ipc). */
    bool own_pool;
    /** own pool: upper bound of its reserved memory, at least the device's
     * allocation granularity; 0 = none */
    size_t max_size;
    bool ipc;        /**< own pool: shareable with other processes (POSIX fd) */
} cugl_device_memory_desc;

/** Options of a pinned memory resource; zero-initialise for the defaults. */
typedef struct cugl_pinned_memory_desc {
    size_t max_size; /**< host pool: upper bound of its reserved memory; 0 = none */
} cugl_pinned_memory_desc;

/** Where managed memory prefers to live. */
typedef enum cugl_location_kind {
    CUGL_LOCATION_NONE = 0,   /**< no preference (the default) */
    CUGL_LOCATION_DEVICE = 1, /**< the resource's device */
    CUGL_LOCATION_HOST = 2,   /**< host memory */
} cugl_location_kind;

/** Options of a managed memory resource; zero-initialise for the defaults. */
typedef struct cugl_managed_memory_desc {
    cugl_location_kind preferred_location; /**< where the memory prefers to live */
} cugl_managed_memory_desc;

/** Pool statistics, in bytes. */
typedef struct cugl_pool_stats {
    uint64_t reserved_current; /**< backing memory the pool holds now */
    uint64_t reserved_high;    /**< its high watermark */
    uint64_t used_current;     /**< memory handed out in live allocations */
    uint64_t used_high;        /**< its high watermark */
} cugl_pool_stats;

/**
 * A device memory resource on `device` (which must be initialized).
 * @param desc NULL for the defaults (the device's current pool).
 * @errors CUGL_ERROR_INVALID_ARGUMENT, CUGL_ERROR_INVALID_STATE (device not
 *   initialized), CUGL_ERROR_NOT_SUPPORTED (no memory pools on the device;
 *   IPC without POSIX fd handles), CUGL_ERROR_CUDA.
 * @pointer_lifetime The caller owns one reference.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param[out] out receives the resource; NULL on failure.
 * @param device the device (initialized).
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_device_memory_resource_create(cugl_memory_resource **out,
                                                        cugl_device *device,
                                                        const cugl_device_memory_desc *desc);

/**
 * A pinned host memory resource whose memory `device` can reach.
 * @errors as cugl_device_memory_resource_create.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param[out] out receives the resource; NULL on failure.
 * @param device the device (initialized).
 * @param desc its options, or NULL for the defaults.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_pinned_memory_resource_create(cugl_memory_resource **out,
                                                        cugl_device *device,
                                                        const cugl_pinned_memory_desc *desc);

/**
 * A managed memory resource; the preferred location is advised per
 * allocation.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (unknown location),
 *   CUGL_ERROR_INVALID_STATE, CUGL_ERROR_NOT_SUPPORTED (no managed memory).
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param[out] out receives the resource; NULL on failure.
 * @param device the device (initialized).
 * @param desc its options, or NULL for the defaults.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_managed_memory_resource_create(cugl_memory_resource **out,
                                                         cugl_device *device,
                                                         const cugl_managed_memory_desc *desc);

/**
 * A synchronous pinned host memory resource (cuMemAllocHost). Its stream
 * arguments may be NULL: allocation and deallocation are immediate
 * (deallocation first waits for the stream, when one is given).
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL), CUGL_ERROR_INVALID_STATE (device
 *   not initialized), CUGL_ERROR_OUT_OF_MEMORY, CUGL_ERROR_CUDA.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param[out] out receives the resource; NULL on failure.
 * @param device the device (initialized).
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_legacy_pinned_memory_resource_create(cugl_memory_resource **out,
                                                               cugl_device *device);

/**
 * An exportable memory resource: each buffer is its own cuMemCreate
 * allocation with a POSIX file descriptor handle, mapped read-write for the
 * device and for the devices given to cugl_memory_resource_set_peer_access
 * before it was made; sizes are rounded up to the allocation granularity.
 * Deallocation waits for the stream, then unmaps and releases.
 * @errors CUGL_ERROR_NOT_SUPPORTED (no virtual memory management or POSIX
 *   fd handles on the device), as cugl_device_memory_resource_create.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param[out] out receives the resource; NULL on failure.
 * @param device the device (initialized).
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_exportable_memory_resource_create(cugl_memory_resource **out,
                                                            cugl_device *device);

/**
 * Page-lock `size` bytes of host memory the caller owns (cuMemHostRegister,
 * portable to every context) and wrap them in a buffer: copies between it
 * and device memory are then DMA that a stream runs without the CPU, as
 * with pinned memory, into memory another API may own (a persistently
 * mapped GL buffer). The buffer's memory resource (kind
 * CUGL_MEMORY_REGISTERED) is its own and allocates nothing. Closing the
 * buffer, or releasing its last reference, unregisters the memory (after
 * the stream given to close, when one is); the memory stays the caller's
 * and must outlive the buffer. Its bytes count in cugl_live_bytes while
 * registered.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; size 0; memory already
 *   registered, or that the driver cannot page-lock), CUGL_ERROR_CUDA.
 * @pointer_lifetime The caller owns one reference to the buffer.
 * @thread_safety Any thread.
 * @param[out] out receives the buffer; NULL on failure.
 * @param device the device (initialized) whose context registers it.
 * @param ptr the memory's first byte.
 * @param size its size in bytes.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_buffer_register_host(cugl_buffer **out, cugl_device *device,
                                               void *ptr, size_t size);

/**
 * Allocate `size` bytes (0 gives an empty buffer with handle 0), ordered on
 * `stream`: the memory may be used by work queued on the stream after this
 * call. The buffer keeps `stream` as its deallocation stream.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; NULL stream where the resource is
 *   stream-ordered), CUGL_ERROR_CLOSED (resource or stream),
 *   CUGL_ERROR_INVALID_STATE (an imported IPC pool: it cannot allocate),
 *   CUGL_ERROR_OUT_OF_MEMORY (with the size and the pool's limit),
 *   CUGL_ERROR_CUDA.
 * @pointer_lifetime The caller owns one reference to the buffer.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param[out] out receives the buffer; NULL on failure.
 * @param mr the resource.
 * @param size bytes to allocate.
 * @param stream the stream the allocation is ordered on; NULL only where the resource is not
 *   stream-ordered.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_memory_resource_allocate(cugl_buffer **out,
                                                   cugl_memory_resource *mr, size_t size,
                                                   cugl_stream *stream);

/**
 * Return memory this resource allocated (a raw pointer and its size, for
 * memory that is not wrapped in a buffer), ordered on `stream`.
 * Normally closing the buffer does this.
 * @errors CUGL_ERROR_INVALID_ARGUMENT, CUGL_ERROR_CLOSED (stream), CUGL_ERROR_CUDA.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param mr the resource that allocated the memory.
 * @param ptr the memory's address; 0 is a no-op.
 * @param size its size in bytes, as allocated.
 * @param stream the stream the deallocation is ordered on; NULL only where the resource is not
 *   stream-ordered.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_memory_resource_deallocate(cugl_memory_resource *mr, uint64_t ptr,
                                                     size_t size, cugl_stream *stream);

/**
 * Current and peak use of the resource's pool.
 * @errors CUGL_ERROR_INVALID_ARGUMENT, CUGL_ERROR_CLOSED,
 *   CUGL_ERROR_NOT_SUPPORTED (the resource has no pool: managed, legacy,
 *   exportable, or pinned without a host pool).
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param mr a resource with a pool.
 * @param[out] stats receives the pool's statistics.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_memory_resource_pool_stats(cugl_memory_resource *mr,
                                                     cugl_pool_stats *stats);

/**
 * Give the pool's unused reserved memory back to the system, keeping at
 * least `keep_bytes` reserved. Call after synchronising the streams that
 * freed memory. No-op (CUGL_OK) for resources without a pool.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL), CUGL_ERROR_CLOSED, CUGL_ERROR_CUDA.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param mr a resource with a pool.
 * @param keep_bytes the reserved bytes to keep.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_memory_resource_trim(cugl_memory_resource *mr, size_t keep_bytes);

/**
 * Export an IPC-enabled device pool as a POSIX file descriptor (a new one
 * each call; the caller closes it). Send it to another process (SCM_RIGHTS,
 * or inheritance across fork/exec), which opens it with
 * cugl_device_memory_resource_import_fd.
 * @errors CUGL_ERROR_INVALID_ARGUMENT, CUGL_ERROR_CLOSED,
 *   CUGL_ERROR_INVALID_STATE (the resource is not IPC-enabled, or was imported),
 *   CUGL_ERROR_CUDA.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param mr an IPC-enabled device pool.
 * @param[out] fd receives a new file descriptor; the caller closes it.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_memory_resource_export_fd(cugl_memory_resource *mr, int *fd);

/**
 * Open a pool exported by another process. The resource cannot allocate; it
 * imports buffers (cugl_buffer_ipc_import). `fd` stays the caller's. Its
 * last release waits for the device's queued work (the frees of its
 * buffers among it): a pool destroyed before those frees keeps a driver
 * file descriptor open for good.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (negative fd), CUGL_ERROR_INVALID_STATE
 *   (device not initialized), CUGL_ERROR_CUDA (not an exported pool).
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param[out] out receives the resource; NULL on failure.
 * @param device the device the pool is on.
 * @param fd the descriptor the other process exported (not taken over).
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_device_memory_resource_import_fd(cugl_memory_resource **out,
                                                           cugl_device *device, int fd);

/**
 * @thread_safety Any thread.
 * @param mr the resource, or NULL.
 * @return its kind; 0 for NULL.
 */
CUGL_API cugl_memory_kind cugl_memory_resource_kind(const cugl_memory_resource *mr);
/**
 * Whether kernels can use its memory.
 * @thread_safety Any thread.
 * @param mr the resource, or NULL.
 * @return true if so; false for NULL.
 */
CUGL_API bool cugl_memory_resource_is_device_accessible(const cugl_memory_resource *mr);
/**
 * Whether the CPU can use its memory by pointer.
 * @thread_safety Any thread.
 * @param mr the resource, or NULL.
 * @return true if so; false for NULL.
 */
CUGL_API bool cugl_memory_resource_is_host_accessible(const cugl_memory_resource *mr);
/**
 * Whether it allocates managed memory.
 * @thread_safety Any thread.
 * @param mr the resource, or NULL.
 * @return true if so; false for NULL.
 */
CUGL_API bool cugl_memory_resource_is_managed(const cugl_memory_resource *mr);
/**
 * Whether its pool can be shared with other processes.
 * @thread_safety Any thread.
 * @param mr the resource, or NULL.
 * @return true if so; false for NULL.
 */
CUGL_API bool cugl_memory_resource_is_ipc_enabled(const cugl_memory_resource *mr);
/**
 * Whether allocations are ordered on streams (device, pinned with a pool).
 * @thread_safety Any thread.
 * @param mr the resource, or NULL.
 * @return true if so; false for NULL.
 */
CUGL_API bool cugl_memory_resource_is_stream_ordered(const cugl_memory_resource *mr);
/**
 * The device ordinal; -1 for host memory that belongs to no device.
 * @thread_safety Any thread.
 * @param mr the resource, or NULL.
 * @return its device's ordinal; -1 for NULL.
 */
CUGL_API int cugl_memory_resource_device_id(const cugl_memory_resource *mr);
/**
 * @thread_safety Any thread.
 * @param mr the resource, or NULL.
 * @return its device (no reference taken); NULL for NULL.
 */
CUGL_API cugl_device *cugl_memory_resource_device(const cugl_memory_resource *mr);
/**
 * The raw CUmemoryPool, or NULL for resources without a pool.
 * @thread_safety Any thread.
 * @param mr the resource, or NULL.
 * @return its CUmemoryPool; NULL without a pool, after close, and for NULL.
 */
CUGL_API void *cugl_memory_resource_pool_handle(const cugl_memory_resource *mr);

/**
 * Whether the resource has been closed.
 * @thread_safety Any thread.
 * @param mr the resource, or NULL.
 * @return true once closed, and for NULL.
 */
CUGL_API bool cugl_memory_resource_is_closed(const cugl_memory_resource *mr);
/**
 * Refuse further allocations and give the owned pool's unused memory back;
 * idempotent. The pool itself is destroyed with the last reference, which
 * buffers still using it hold.
 * @thread_safety Any thread, once no other thread uses the object.
 * @param mr the resource, or NULL (no-op).
 */
CUGL_API void cugl_memory_resource_close(cugl_memory_resource *mr);
/**
 * Take another reference.
 * @thread_safety Any thread: references are counted atomically.
 * @param mr the resource, or NULL.
 * @return mr.
 */
CUGL_API cugl_memory_resource *cugl_memory_resource_retain(cugl_memory_resource *mr);
/**
 * @thread_safety Any thread: references are counted atomically.
 * @param mr the resource, or NULL (no-op).
 */
CUGL_API void cugl_memory_resource_release(cugl_memory_resource *mr);

/**
 * Let `devices` (count of them; initialized) read and write the memory of
 * `mr` besides its own device: a device pool's memory, all of it, from now
 * on (cuMemPoolSetAccess, as cuda.core's peer_accessible_by; devices listed
 * before and not now lose access), or an exportable resource's allocations
 * made from now on (each mapped for them with cuMemSetAccess). The
 * resource's own device is always allowed; a device listed twice counts
 * once; count 0 leaves the own device alone.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; count out of 0 to 64),
 *   CUGL_ERROR_CLOSED, CUGL_ERROR_INVALID_STATE (a device not initialized:
 *   which), CUGL_ERROR_NOT_SUPPORTED (another kind of resource; a device
 *   with no peer path to the resource's), CUGL_ERROR_CUDA.
 * @thread_safety Any thread; not concurrently with allocations from `mr`.
 * @param mr a device pool or an exportable resource.
 * @param devices the devices to open its memory to, count of them (initialized).
 * @param count how many; 0 leaves only the own device.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_memory_resource_set_peer_access(cugl_memory_resource *mr,
                                                          cugl_device *const *devices,
                                                          int count);

/**
 * The devices that `mr`'s memory is open to besides its own: their
 * ordinals into ordinals[capacity] (as many as fit); returns how many there
 * are. 0 for NULL.
 * @errors none.
 * @thread_safety Any thread.
 * @param mr the resource, or NULL.
 * @param[out] ordinals receives up to capacity ordinals (may be NULL with capacity 0).
 * @param capacity the room at ordinals.
 * @return the number of such devices; 0 for NULL.
 */
CUGL_API int cugl_memory_resource_peer_access(const cugl_memory_resource *mr, int *ordinals,
                                              int capacity);

CUGL_END_DECLS

#endif /* CUGL_MEMORY_H */
