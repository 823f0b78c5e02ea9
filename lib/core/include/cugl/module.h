/**
 * @file cugl/module.h
 * Device code: modules, kernels and launches.
 *
 * A module is loaded from an image in memory: a fatbin, a cubin or PTX text
 * (NUL-terminated), as nvcc writes them. cugl's own kernels are fatbins
 * embedded in the library; an application embeds its own the same way:
 *
 *   nvcc -fatbin -gencode arch=compute_90,code=sm_90 -o my.fatbin my.cu
 *
 * then the file's bytes become an array of the program (the assembler's
 * .incbin, `xxd -i`, or a build step that writes a C array), and
 * cugl_module_load_data(&mod, dev, my_fatbin, my_fatbin_size) loads them.
 * Kernels declared extern "C" keep their names (cugl_module_get_kernel).
 * examples/wave in the source tree does all of it with make and CMake.
 */
#ifndef CUGL_MODULE_H
#define CUGL_MODULE_H

#include "cugl/error.h"

CUGL_BEGIN_DECLS

/** Grid, block and cluster extents; 0 in y or z means 1. */
typedef struct cugl_launch_config {
    uint32_t grid[3];  /**< blocks; grid[0] must be >= 1 */
    uint32_t block[3]; /**< threads; block[0] must be >= 1 */
    /** blocks per cluster; all 0 for no cluster. Each extent must divide the
     * grid's. Needs a device with cluster launch (compute capability 9.0+). */
    uint32_t cluster[3];
    size_t shared_mem_bytes; /**< dynamic shared memory per block */
    bool cooperative;        /**< all blocks resident at once (grid sync) */
} cugl_launch_config;

/**
 * Load a module image on `device` (which must be initialized). The image is
 * copied by the driver; it may be freed on return. A PTX image that fails to
 * compile reports the JIT log in the message.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL, size 0), CUGL_ERROR_INVALID_STATE
 *   (device not initialized), CUGL_ERROR_NOT_SUPPORTED (no code for this
 *   GPU), CUGL_ERROR_OUT_OF_MEMORY, CUGL_ERROR_CUDA (not an image).
 * @pointer_lifetime The caller owns one reference.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param[out] out receives the module; NULL on failure.
 * @param device the device to load it on.
 * @param image the image: a fatbin, a cubin, or NUL-terminated PTX.
 * @param size the image's size in bytes.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_module_load_data(cugl_module **out, cugl_device *device,
                                           const void *image, size_t size);

/**
 * Look up a kernel by its (extern "C" or mangled) name. The kernel holds a
 * reference to its module. Its parameter count is read here, once, by
 * asking the driver for one parameter past the last; compute-sanitizer
 * lists that expected CUDA_ERROR_INVALID_VALUE as an API error (run it with
 * --report-api-errors no).
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL, an empty name, no kernel of that
 *   name), CUGL_ERROR_CLOSED, CUGL_ERROR_OUT_OF_MEMORY, CUGL_ERROR_CUDA.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param[out] out receives the kernel (it holds a reference to the module); NULL on failure.
 * @param module the module.
 * @param name the kernel's name, as compiled (extern "C" names are unmangled).
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_module_get_kernel(cugl_kernel **out, cugl_module *module,
                                            const char *name);

/**
 * The raw CUmodule; NULL after close.
 * @thread_safety Any thread.
 * @param module the module, or NULL.
 * @return the CUmodule; NULL for NULL and after close.
 */
CUGL_API void *cugl_module_handle(const cugl_module *module);
/**
 * The device the module was loaded on.
 * @thread_safety Any thread.
 * @param module the module, or NULL.
 * @return the device it was loaded on (no reference taken); NULL for NULL.
 */
CUGL_API cugl_device *cugl_module_device(const cugl_module *module);
/**
 * Whether the module has been closed.
 * @thread_safety Any thread.
 * @param module the module, or NULL.
 * @return true once closed, and for NULL.
 */
CUGL_API bool cugl_module_is_closed(const cugl_module *module);

/**
 * Unload now; kernels taken from it then return CUGL_ERROR_CLOSED.
 * @thread_safety Any thread, once no other thread uses the object.
 * @param module the module, or NULL (no-op).
 */
CUGL_API void cugl_module_close(cugl_module *module);
/**
 * Take another reference.
 * @thread_safety Any thread: references are counted atomically.
 * @param module the module, or NULL.
 * @return module.
 */
CUGL_API cugl_module *cugl_module_retain(cugl_module *module);
/**
 * Drop a reference; the last one unloads and frees. Kernels hold references
 * to their module, so it stays loaded until they are released too.
 * @thread_safety Any thread: references are counted atomically.
 * @param module the module, or NULL (no-op).
 */
CUGL_API void cugl_module_release(cugl_module *module);

/**
 * The kernel's name as looked up.
 * @thread_safety Any thread.
 * @param kernel the kernel, or NULL.
 * @return its name, held by the kernel; NULL for NULL.
 */
CUGL_API const char *cugl_kernel_name(const cugl_kernel *kernel);

/**
 * The number of parameters the kernel takes.
 * @errors CUGL_ERROR_INVALID_ARGUMENT, CUGL_ERROR_CLOSED,
 *   CUGL_ERROR_NOT_SUPPORTED (the driver cannot tell; before CUDA 12.4).
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param kernel the kernel.
 * @param[out] count receives the number of its parameters.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_kernel_num_args(cugl_kernel *kernel, size_t *count);

/**
 * The most threads per block this kernel can be launched with (its
 * register use can make it fewer than the device's limit).
 * @errors CUGL_ERROR_INVALID_ARGUMENT, CUGL_ERROR_CLOSED (the kernel or its module).
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param kernel the kernel.
 * @param[out] threads receives the most threads a block of it can have on its device.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_kernel_max_threads_per_block(cugl_kernel *kernel, int *threads);

/**
 * The raw CUfunction; NULL after close.
 * @thread_safety Any thread.
 * @param kernel the kernel, or NULL.
 * @return the CUfunction; NULL for NULL and once it or its module is closed.
 */
CUGL_API void *cugl_kernel_handle(const cugl_kernel *kernel);
/**
 * Whether the kernel has been closed.
 * @thread_safety Any thread.
 * @param kernel the kernel, or NULL.
 * @return true once closed, and for NULL.
 */
CUGL_API bool cugl_kernel_is_closed(const cugl_kernel *kernel);
/**
 * Mark the kernel closed; idempotent. Its module stays loaded, and referenced,
 * until the kernel's last release.
 * @thread_safety Any thread, once no other thread uses the object.
 * @param kernel the kernel, or NULL (no-op).
 */
CUGL_API void cugl_kernel_close(cugl_kernel *kernel);
/**
 * Take another reference.
 * @thread_safety Any thread: references are counted atomically.
 * @param kernel the kernel, or NULL.
 * @return kernel.
 */
CUGL_API cugl_kernel *cugl_kernel_retain(cugl_kernel *kernel);
/**
 * Drop a reference; the last one frees the kernel and drops its module reference.
 * @thread_safety Any thread: references are counted atomically.
 * @param kernel the kernel, or NULL (no-op).
 */
CUGL_API void cugl_kernel_release(cugl_kernel *kernel);

/**
 * Launch `kernel` on `stream`. `args` holds one pointer per kernel parameter,
 * each pointing at the argument's value, as cuLaunchKernel takes them;
 * `num_args` is checked against the kernel when the driver can tell.
 * Grid, block, cluster and shared memory are checked against the device's
 * and the kernel's limits, each failure with the numbers in the message.
 * Shared memory above 48 KiB is opted into for the kernel.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL, a zero or oversized extent, too
 *   many threads, too much shared memory, a cluster that does not divide the
 *   grid or has more than 8 blocks, a wrong argument count, stream and kernel
 *   on different devices), CUGL_ERROR_CLOSED, CUGL_ERROR_NOT_SUPPORTED
 *   (cluster or cooperative launch on a device without it, or a driver older
 *   than CUDA 11.8), CUGL_ERROR_CUDA.
 * @thread_safety Any thread.
 * @param stream the stream the launch is ordered on.
 * @param config the grid, block, cluster, shared memory and cooperative flag.
 * @param kernel the kernel.
 * @param args pointers to each argument's value, num_args of them, none NULL; may be NULL when
 *   num_args is 0.
 * @param num_args the number of arguments; it must match the kernel's.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_launch(cugl_stream *stream, const cugl_launch_config *config,
                                 cugl_kernel *kernel, void **args, size_t num_args);

CUGL_END_DECLS

#endif /* CUGL_MODULE_H */
