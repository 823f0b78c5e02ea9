/*
 * fault_shim.c - see fault_shim.h.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault_shim.h"

#define SHIM_API __attribute__((visibility("default")))

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void *real_lib;
static PFN_cuGetProcAddress_v12000 real_proc_v2;
static PFN_cuGetProcAddress_v11030 real_proc_v1;

static bool configured;
static bool armed = true; /* cugl_fault_arm */
static long fail_call;        /* 0: none */
static const char *fail_func; /* NULL: none */
static long fail_occurrence = 1;
static CUresult fail_result = CUDA_ERROR_OUT_OF_MEMORY;
static long calls, func_calls;
static int failed_index = -1;
static long failed_call;
static void *failed_caller;

static void configure(void)
{
    const char *v = getenv("CUGL_FAULT_CALL");
    fail_call = v ? atol(v) : 0;
    fail_func = getenv("CUGL_FAULT_FUNC");
    if (fail_func && !*fail_func)
        fail_func = NULL;
    v = getenv("CUGL_FAULT_OCCURRENCE");
    fail_occurrence = v ? atol(v) : 1;
    v = getenv("CUGL_FAULT_RESULT");
    if (v) {
        static const struct {
            const char *name;
            CUresult r;
        } results[] = {{"oom", CUDA_ERROR_OUT_OF_MEMORY},
                       {"invalid", CUDA_ERROR_INVALID_VALUE},
                       {"launch", CUDA_ERROR_LAUNCH_FAILED},
                       {"not_permitted", CUDA_ERROR_NOT_PERMITTED},
                       {"unknown", CUDA_ERROR_UNKNOWN}};
        fail_result = (CUresult)atoi(v);
        for (size_t i = 0; i < sizeof results / sizeof results[0]; i++)
            if (strcmp(v, results[i].name) == 0)
                fail_result = results[i].r;
    }
    configured = true;
}

bool fault_hit(int index, void *caller, CUresult *result)
{
    const char *name = fault_entries[index].name;
    if (strcmp(name, "cuGetErrorName") == 0 || strcmp(name, "cuGetErrorString") == 0)
        return false;
    pthread_mutex_lock(&lock);
    if (!configured)
        configure();
    if (!armed) {
        pthread_mutex_unlock(&lock);
        return false;
    }
    calls++;
    bool hit = false;
    if (failed_index < 0) {
        if (fail_call && calls == fail_call)
            hit = true;
        else if (fail_func && strcmp(fail_func, name) == 0 && ++func_calls == fail_occurrence)
            hit = true;
        if (hit) {
            failed_index = index;
            failed_call = calls;
            failed_caller = caller;
            *result = fail_result;
        }
    }
    pthread_mutex_unlock(&lock);
    return hit;
}

SHIM_API const char *cugl_fault_failed(void)
{
    pthread_mutex_lock(&lock);
    const char *name = failed_index >= 0 ? fault_entries[failed_index].name : NULL;
    pthread_mutex_unlock(&lock);
    return name;
}

SHIM_API void cugl_fault_arm(int on)
{
    pthread_mutex_lock(&lock);
    armed = on != 0;
    pthread_mutex_unlock(&lock);
}

SHIM_API long cugl_fault_calls(void)
{
    pthread_mutex_lock(&lock);
    long n = calls;
    pthread_mutex_unlock(&lock);
    return n;
}

static bool load_real(void)
{
    if (real_lib)
        return true;
    const char *path = getenv("CUGL_FAULT_REAL");
    real_lib = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!real_lib)
        return false;
    *(void **)&real_proc_v2 = dlsym(real_lib, "cuGetProcAddress_v2");
    *(void **)&real_proc_v1 = dlsym(real_lib, "cuGetProcAddress");
    return real_proc_v2 || real_proc_v1;
}

/* The wrapper for `symbol`, with the real entry point kept; or the real one
 * where the shim has no wrapper. */
static void *wrap(const char *symbol, void *found)
{
    for (int i = 0; i < fault_entry_count; i++)
        if (strcmp(fault_entries[i].name, symbol) == 0) {
            fault_real[i] = found;
            return fault_entries[i].wrapper;
        }
    return found;
}

SHIM_API CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
                                              cuuint64_t flags,
                                              CUdriverProcAddressQueryResult *found)
{
    pthread_mutex_lock(&lock);
    bool ok = load_real() && real_proc_v2;
    pthread_mutex_unlock(&lock);
    if (!ok)
        return CUDA_ERROR_NOT_FOUND;
    CUresult r = real_proc_v2(symbol, pfn, version, flags, found);
    if (r == CUDA_SUCCESS && pfn && *pfn) {
        pthread_mutex_lock(&lock);
        *pfn = wrap(symbol, *pfn);
        pthread_mutex_unlock(&lock);
    }
    return r;
}

/* cuda.h names cuGetProcAddress_v2 so; the older ABI keeps the plain name. */
#undef cuGetProcAddress
SHIM_API CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int version,
                                           cuuint64_t flags)
{
    pthread_mutex_lock(&lock);
    bool ok = load_real() && real_proc_v1;
    pthread_mutex_unlock(&lock);
    if (!ok)
        return CUDA_ERROR_NOT_FOUND;
    CUresult r = real_proc_v1(symbol, pfn, version, flags);
    if (r == CUDA_SUCCESS && pfn && *pfn) {
        pthread_mutex_lock(&lock);
        *pfn = wrap(symbol, *pfn);
        pthread_mutex_unlock(&lock);
    }
    return r;
}

__attribute__((destructor)) static void write_log(void)
{
    const char *path = getenv("CUGL_FAULT_LOG");
    if (!path || !*path)
        return;
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    fprintf(f, "calls %ld\n", calls);
    if (failed_index >= 0) {
        Dl_info info;
        const char *file = "?";
        long offset = 0;
        if (dladdr(failed_caller, &info) && info.dli_fname) {
            file = strrchr(info.dli_fname, '/') ? strrchr(info.dli_fname, '/') + 1
                                                : info.dli_fname;
            offset = (long)((char *)failed_caller - (char *)info.dli_fbase);
        }
        fprintf(f, "failed %s %ld %s+0x%lx\n", fault_entries[failed_index].name, failed_call,
                file, offset);
    }
    fclose(f);
}
