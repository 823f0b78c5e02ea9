/*
 * gpu_mem.h - device memory for the GPU tests, straight from the driver.
 *
 * The tests take the few driver entry points they need from libcuda.so.1
 * themselves (the exported, versioned names) to allocate buffers, fill them
 * and read results back without going through cugl, so that cugl's own
 * memory API is checked against the driver rather than against itself.
 *
 * Call gpu_mem_init() once, after cugl_test_device() succeeded, so that the
 * device's primary context is current on the calling thread. Every other
 * helper fails the running cmocka test (fail_msg) when the driver fails.
 */
#ifndef CUGL_TEST_GPU_MEM_H
#define CUGL_TEST_GPU_MEM_H

#include <cuda.h>

#include "cugl_test.h"

/*
 * Resolve the entry points from the library libcugl uses (CUGL_LIBCUDA, else
 * libcuda.so.1); prints "Bail out!" and exits 1 on failure.
 */
void gpu_mem_init(void);

/* cuMemAlloc; the contents are undefined. */
CUdeviceptr gpu_alloc(size_t bytes);
void gpu_free(CUdeviceptr ptr);

/* Set `count` words to `value`, then wait for the whole context, so that
 * work queued afterwards on any stream sees the values. */
void gpu_fill_u32(CUdeviceptr dst, uint32_t value, size_t count);

/* Copy host to device, then wait for the whole context (as gpu_fill_u32). */
void gpu_write(CUdeviceptr dst, const void *src, size_t bytes);

/*
 * Copy device to host (cuMemcpyDtoH, on the legacy default stream, which
 * does not wait for non-blocking streams: synchronize the stream that wrote
 * `src` first).
 */
void gpu_read(void *dst, CUdeviceptr src, size_t bytes);

/* cuMemcpy3D: the driver's own copy, to check cugl's array copies against;
 * then a wait for the whole context, as gpu_write. */
void gpu_copy3d(const CUDA_MEMCPY3D *copy);

/* Pinned, device-mapped, zeroed host memory and its device address. */
void *gpu_host_alloc_mapped(size_t bytes, CUdeviceptr *device_ptr);
void gpu_host_free(void *ptr);

/* cuMemAllocManaged (attached globally); free it with gpu_free. */
CUdeviceptr gpu_managed_alloc(size_t bytes);

/* cuMemAllocFromPoolAsync from `pool` (a CUmemoryPool) ordered on `stream`
 * (a CUstream), then a wait for that stream. */
CUdeviceptr gpu_pool_alloc(void *pool, size_t bytes, void *stream);

/* The granularity cuMemCreate recommends for device memory of `ordinal`
 * that can be exported as a POSIX file descriptor. */
size_t gpu_vmm_granularity(int ordinal);

/*
 * Import an allocation exported as a POSIX file descriptor
 * (cuMemImportFromShareableHandle) and map all `bytes` of it, read-write for
 * device `ordinal`, at an address of its own. The descriptor stays the
 * caller's. gpu_unmap_imported unmaps it and frees the address range.
 */
CUdeviceptr gpu_map_imported_fd(int fd, size_t bytes, int ordinal);
void gpu_unmap_imported(CUdeviceptr ptr, size_t bytes);

/*
 * Say (as a TAP comment) why the running test does not apply here; the
 * caller then returns, and the test counts as passed. cmocka 1.1's skip()
 * prints "not ok N # SKIP", which meson's TAP parser counts as a failure.
 */
void gpu_not_applicable(const char *why);

/*
 * Whether the device has what memory of `kind` needs (pools for device
 * memory, managed memory, virtual memory management with POSIX fds for
 * exportable memory); where not, says so (gpu_not_applicable, naming the
 * case `what`) and returns false.
 */
bool gpu_memory_kind_applies(const cugl_device_properties *props, cugl_memory_kind kind,
                             const char *what);

/* The CUcontext current on the calling thread (cuCtxGetCurrent). */
void *gpu_current_context(void);

#endif /* CUGL_TEST_GPU_MEM_H */
