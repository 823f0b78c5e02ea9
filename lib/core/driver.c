/*
 * driver.c - load libcuda once and resolve its entry points.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_internal.h"

cugl__driver_table cugl__cu;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static cugl_status load_status;
static int load_cu_result;
static char load_reason[768];
static int driver_version;

static void set_reason(cugl_status status, int cu_result, const char *fmt, ...)
    CUGL__PRINTF(3, 4);

static void set_reason(cugl_status status, int cu_result, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(load_reason, sizeof load_reason, fmt, ap);
    va_end(ap);
    load_status = status;
    load_cu_result = cu_result;
}

const char *cugl__cu_error_name(CUresult r)
{
    const char *name = NULL;
    if (cugl__cu.cuGetErrorName && cugl__cu.cuGetErrorName(r, &name) == CUDA_SUCCESS && name)
        return name;
    return "CUDA_ERROR_UNKNOWN";
}

/*
 * cuGetProcAddress has two ABIs: the one of CUDA 11.3 and, from 12.0 on,
 * cuGetProcAddress_v2 with a query result. Both are reached through this.
 */
static PFN_cuGetProcAddress_v12000 proc_address_v2;
static PFN_cuGetProcAddress_v11030 proc_address_v1;

static CUresult proc_address(const char *name, int version, void **pfn)
{
    if (proc_address_v2) {
        CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SUCCESS;
        CUresult r = proc_address_v2(name, pfn, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM,
                                     &found);
        if (r == CUDA_SUCCESS && found != CU_GET_PROC_ADDRESS_SUCCESS) {
            *pfn = NULL;
            return CUDA_ERROR_NOT_FOUND;
        }
        return r;
    }
    return proc_address_v1(name, pfn, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM);
}

/* false (with the reason set) when a required entry point is missing. */
static bool resolve(const char *path, const char *name, int version, void **pfn,
                    bool required)
{
    *pfn = NULL;
    CUresult r = proc_address(name, version, pfn);
    if (r == CUDA_SUCCESS && *pfn)
        return true;
    *pfn = NULL;
    if (!required)
        return true;
    if (r == CUDA_ERROR_STUB_LIBRARY) {
        set_reason(CUGL_ERROR_NO_DRIVER, r,
                   "%s is the CUDA Toolkit's stub library, not a driver; "
                   "install the NVIDIA driver",
                   path);
    } else {
        set_reason(CUGL_ERROR_NO_DRIVER, r,
                   "the CUDA driver in %s lacks %s (ABI of CUDA %d.%d): the driver is "
                   "too old, update it",
                   path, name, version / 1000, version % 1000 / 10);
    }
    return false;
}

static void load(void)
{
    const char *path = getenv("CUGL_LIBCUDA");
    if (!path || !*path)
        path = "libcuda.so.1";

    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        set_reason(CUGL_ERROR_NO_DRIVER, 0,
                   "no CUDA driver: cannot load %s (%s); install the NVIDIA driver", path,
                   why ? why : "unknown reason");
        return;
    }
    *(void **)&proc_address_v2 = dlsym(lib, "cuGetProcAddress_v2");
    if (!proc_address_v2)
        *(void **)&proc_address_v1 = dlsym(lib, "cuGetProcAddress");
    if (!proc_address_v2 && !proc_address_v1) {
        set_reason(CUGL_ERROR_NO_DRIVER, 0,
                   "%s has no cuGetProcAddress: the driver is older than CUDA 11.3, or "
                   "the file is not libcuda",
                   path);
        return;
    }

#define CUGL__RESOLVE_REQUIRED(name, version) \
    if (!resolve(path, #name, version, (void **)&cugl__cu.name, true)) return;
#define CUGL__RESOLVE_OPTIONAL(name, version) \
    resolve(path, #name, version, (void **)&cugl__cu.name, false);
    CUGL_DRIVER_REQUIRED(CUGL__RESOLVE_REQUIRED)
    CUGL_DRIVER_OPTIONAL(CUGL__RESOLVE_OPTIONAL)
#undef CUGL__RESOLVE_REQUIRED
#undef CUGL__RESOLVE_OPTIONAL

    CUresult r = cugl__cu.cuInit(0);
    if (r == CUDA_ERROR_NO_DEVICE) {
        /* A driver without devices: cugl_device_count says 0. */
        set_reason(CUGL_OK, r, "the CUDA driver found no device");
    } else if (r == CUDA_ERROR_STUB_LIBRARY) {
        set_reason(CUGL_ERROR_NO_DRIVER, r,
                   "%s is the CUDA Toolkit's stub library, not a driver; install the "
                   "NVIDIA driver",
                   path);
        return;
    } else if (r != CUDA_SUCCESS) {
        const char *text = NULL;
        cugl__cu.cuGetErrorString(r, &text);
        set_reason(CUGL_ERROR_NO_DRIVER, r, "cuInit failed: %s (%s)", cugl__cu_error_name(r),
                   text ? text : "no description");
        return;
    }
    r = cugl__cu.cuDriverGetVersion(&driver_version);
    if (r != CUDA_SUCCESS) {
        const char *text = NULL;
        cugl__cu.cuGetErrorString(r, &text);
        set_reason(CUGL_ERROR_NO_DRIVER, r, "cuDriverGetVersion failed: %s (%s)",
                   cugl__cu_error_name(r), text ? text : "no description");
        return;
    }
    /* The library stays loaded for the life of the process, as it must:
     * every resolved pointer points into it. */
}

cugl_status cugl__driver_load(const char *who)
{
    pthread_once(&load_once, load);
    if (load_status != CUGL_OK)
        return cugl__fail_cu(load_status, load_cu_result, who, "%s", load_reason);
    return CUGL_OK;
}

bool cugl__driver_available(void)
{
    pthread_once(&load_once, load);
    return load_status == CUGL_OK;
}

int cugl__driver_version(void) { return driver_version; }

bool cugl__driver_has_devices(void)
{
    return load_status == CUGL_OK && load_cu_result != CUDA_ERROR_NO_DEVICE;
}

static cugl_status status_of(CUresult r)
{
    switch (r) {
    case CUDA_ERROR_OUT_OF_MEMORY:
        return CUGL_ERROR_OUT_OF_MEMORY;
    case CUDA_ERROR_NOT_READY:
        return CUGL_ERROR_NOT_READY;
    case CUDA_ERROR_NOT_SUPPORTED:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
        return CUGL_ERROR_NOT_SUPPORTED;
    case CUDA_ERROR_NO_DEVICE:
        return CUGL_ERROR_NO_DEVICE;
    case CUDA_ERROR_STUB_LIBRARY:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
        return CUGL_ERROR_NO_DRIVER;
    default:
        return CUGL_ERROR_CUDA;
    }
}

cugl_status cugl__cu_status(CUresult r, const char *who, const char *call)
{
    if (r == CUDA_SUCCESS)
        return CUGL_OK;
    const char *text = NULL;
    if (!cugl__cu.cuGetErrorString || cugl__cu.cuGetErrorString(r, &text) != CUDA_SUCCESS)
        text = NULL;
    return cugl__fail_cu(status_of(r), (int)r, who, "%s failed: %s (%s)", call,
                         cugl__cu_error_name(r), text ? text : "no description");
}
