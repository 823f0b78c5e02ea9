/*
 * driver.h - the CUDA driver entry points libcugl uses, resolved at run time.
 *
 * libcugl never links libcuda: it dlopens libcuda.so.1 once, takes
 * cuGetProcAddress from it and resolves everything below by base name and
 * the CUDA version whose ABI the PFN typedef describes. The required table
 * must resolve completely; optional entries may stay NULL and are checked
 * where they are used.
 */
#ifndef CUGL_CORE_DRIVER_H
#define CUGL_CORE_DRIVER_H

#include <cuda.h>
#include <cudaTypedefs.h>

#include "cugl/error.h"

/* X(name, version): the entry point `name`, PFN_name_v<version>. */
#define CUGL_DRIVER_REQUIRED(X)             \
    X(cuInit, 2000)                         \
    X(cuDriverGetVersion, 2020)             \
    X(cuGetErrorName, 6000)                 \
    X(cuGetErrorString, 6000)               \
    X(cuDeviceGetCount, 2000)               \
    X(cuDeviceGet, 2000)                    \
    X(cuDeviceGetName, 2000)                \
    X(cuDeviceGetUuid, 11040)               \
    X(cuDeviceGetPCIBusId, 4010)            \
    X(cuDeviceTotalMem, 3020)               \
    X(cuDeviceGetAttribute, 2000)           \
    X(cuDevicePrimaryCtxRetain, 7000)       \
    X(cuDevicePrimaryCtxRelease, 11000)     \
    X(cuCtxGetCurrent, 4000)                \
    X(cuCtxSetCurrent, 4000)                \
    X(cuCtxSynchronize, 2000)               \
    X(cuCtxEnablePeerAccess, 4000)          \
    X(cuDeviceCanAccessPeer, 4000)          \
    X(cuCtxGetStreamPriorityRange, 5050)    \
    X(cuMemGetInfo, 3020)                   \
    X(cuStreamCreateWithPriority, 5050)     \
    X(cuStreamDestroy, 4000)                \
    X(cuStreamSynchronize, 2000)            \
    X(cuStreamQuery, 2000)                  \
    X(cuStreamWaitEvent, 3020)              \
    X(cuStreamGetCtx, 9020)                 \
    X(cuStreamGetFlags, 5050)               \
    X(cuStreamGetPriority, 5050)            \
    X(cuEventCreate, 2000)                  \
    X(cuEventDestroy, 4000)                 \
    X(cuEventRecord, 2000)                  \
    X(cuEventSynchronize, 2000)             \
    X(cuEventQuery, 2000)                   \
    X(cuEventElapsedTime, 2000)             \
    X(cuIpcGetEventHandle, 4010)            \
    X(cuIpcOpenEventHandle, 4010)           \
    X(cuModuleLoadDataEx, 2010)             \
    X(cuModuleUnload, 2000)                 \
    X(cuModuleGetFunction, 2000)            \
    X(cuFuncGetAttribute, 2020)             \
    X(cuFuncSetAttribute, 9000)             \
    X(cuLaunchKernel, 4000)                 \
    X(cuMemAllocAsync, 11020)               \
    X(cuMemFreeAsync, 11020)                \
    X(cuMemAllocFromPoolAsync, 11020)       \
    X(cuMemPoolCreate, 11020)               \
    X(cuMemPoolDestroy, 11020)              \
    X(cuMemPoolSetAttribute, 11020)         \
    X(cuMemPoolGetAttribute, 11020)         \
    X(cuMemPoolSetAccess, 11020)            \
    X(cuMemPoolTrimTo, 11020)               \
    X(cuDeviceGetMemPool, 11020)            \
    X(cuMemPoolExportToShareableHandle, 11020) \
    X(cuMemPoolImportFromShareableHandle, 11020) \
    X(cuMemPoolExportPointer, 11020)        \
    X(cuMemPoolImportPointer, 11020)        \
    X(cuMemAllocHost, 3020)                 \
    X(cuMemHostAlloc, 2020)                 \
    X(cuMemFreeHost, 2000)                  \
    X(cuMemHostRegister, 6050)              \
    X(cuMemHostUnregister, 4000)            \
    X(cuMemHostGetDevicePointer, 3020)      \
    X(cuMemAllocManaged, 6000)              \
    X(cuMemFree, 3020)                      \
    X(cuMemcpyAsync, 4000)                  \
    X(cuMemcpyPeerAsync, 4000)              \
    X(cuMemcpy2DAsync, 3020)                \
    X(cuMemcpy3DAsync, 3020)                \
    X(cuMemsetD8Async, 3020)                \
    X(cuMemsetD16Async, 3020)               \
    X(cuMemsetD32Async, 3020)               \
    X(cuPointerGetAttributes, 7000)         \
    X(cuMemGetAddressRange, 3020)           \
    X(cuMemCreate, 10020)                   \
    X(cuMemRelease, 10020)                  \
    X(cuMemAddressReserve, 10020)           \
    X(cuMemAddressFree, 10020)              \
    X(cuMemMap, 10020)                      \
    X(cuMemUnmap, 10020)                    \
    X(cuMemSetAccess, 10020)                \
    X(cuMemGetAllocationGranularity, 10020) \
    X(cuMemExportToShareableHandle, 10020)  \
    X(cuMemRetainAllocationHandle, 11000)   \
    X(cuArray3DCreate, 3020)                \
    X(cuArrayDestroy, 2000)                 \
    X(cuArray3DGetDescriptor, 3020)         \
    X(cuMipmappedArrayCreate, 5000)         \
    X(cuMipmappedArrayDestroy, 5000)        \
    X(cuMipmappedArrayGetLevel, 5000)       \
    X(cuTexObjectCreate, 5000)              \
    X(cuTexObjectDestroy, 5000)             \
    X(cuSurfObjectCreate, 5000)             \
    X(cuSurfObjectDestroy, 5000)            \
    X(cuGraphicsUnregisterResource, 3000)   \
    X(cuGraphicsMapResources, 3000)         \
    X(cuGraphicsUnmapResources, 3000)       \
    X(cuGraphicsResourceGetMappedPointer, 3020) \
    X(cuGraphicsSubResourceGetMappedArray, 3000) \
    X(cuGraphicsResourceSetMapFlags, 6050)

#define CUGL_DRIVER_OPTIONAL(X)             \
    X(cuLaunchKernelEx, 11060)              \
    X(cuFuncGetParamInfo, 12040)            \
    X(cuMemAdvise, 12020)                   \
    X(cuGraphicsGLRegisterBuffer, 3000)     \
    X(cuGraphicsGLRegisterImage, 3000)      \
    X(cuGLGetDevices, 6050)                 \
    X(cuImportExternalSemaphore, 10000)     \
    X(cuDestroyExternalSemaphore, 10000)    \
    X(cuSignalExternalSemaphoresAsync, 10000) \
    X(cuWaitExternalSemaphoresAsync, 10000)

/*
 * The GL interop entry points, typed here because cudaGL.h includes GL's
 * headers, which libcugl never does (GLuint and GLenum are unsigned int).
 */
typedef CUresult(CUDAAPI *PFN_cuGraphicsGLRegisterBuffer_v3000)(CUgraphicsResource *resource,
                                                                unsigned int buffer,
                                                                unsigned int flags);
typedef CUresult(CUDAAPI *PFN_cuGraphicsGLRegisterImage_v3000)(CUgraphicsResource *resource,
                                                               unsigned int image,
                                                               unsigned int target,
                                                               unsigned int flags);
enum { CUGL__GL_DEVICE_LIST_ALL = 1 }; /* CU_GL_DEVICE_LIST_ALL */
typedef CUresult(CUDAAPI *PFN_cuGLGetDevices_v6050)(unsigned int *count, CUdevice *devices,
                                                    unsigned int capacity,
                                                    unsigned int device_list);

typedef struct cugl__driver_table {
#define CUGL__DRIVER_FIELD(name, version) PFN_##name##_v##version name;
    CUGL_DRIVER_REQUIRED(CUGL__DRIVER_FIELD)
    CUGL_DRIVER_OPTIONAL(CUGL__DRIVER_FIELD)
#undef CUGL__DRIVER_FIELD
} cugl__driver_table;

/* The resolved table; valid only after cugl__driver_load() returned CUGL_OK. */
extern cugl__driver_table cugl__cu;

/*
 * Load and initialise the driver once per process (thread-safe). Returns
 * CUGL_OK, or the stored failure, with its reason set as the calling thread's
 * last error, prefixed by `who`.
 */
cugl_status cugl__driver_load(const char *who);

/* Load the driver like cugl__driver_load, reporting nothing: whether it is there. */
bool cugl__driver_available(void);

/* The driver version cuDriverGetVersion reported at load. */
int cugl__driver_version(void);

/* false when the driver loaded but cuInit found no device. */
bool cugl__driver_has_devices(void);

/*
 * Turn a CUresult into a status. On failure sets the thread's last error to
 * "<who>: <call> failed: CUDA_ERROR_X (description)" and keeps the CUresult.
 */
cugl_status cugl__cu_status(CUresult result, const char *who, const char *call);

/* "CUDA_ERROR_X" for a CUresult (cuGetErrorName). */
const char *cugl__cu_error_name(CUresult result);

/* Call a driver entry point and turn its result into a cugl_status. */
#define CUGL_CU(fn, ...) cugl__cu_status(cugl__cu.fn(__VA_ARGS__), __func__, #fn)

/* The same, for a helper that reports on behalf of the public function `who`. */
#define CUGL_CU_AS(who, fn, ...) cugl__cu_status(cugl__cu.fn(__VA_ARGS__), (who), #fn)

#endif /* CUGL_CORE_DRIVER_H */
