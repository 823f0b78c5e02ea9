/*
 * fault_shim.c - see fault_shim.h.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
static const char *fail_site; /* NULL: none; else "libcugl.so.0.1.0+0x1234" */
static CUresult fail_result = CUDA_ERROR_OUT_OF_MEMORY;
static long calls, func_calls;
static int failed_index = -1;
static long failed_call;
static void *failed_caller;

/* Every call site seen: the caller's address, the entry point it called,
 * its calls, and whether it is CUGL_FAULT_SITE (-1: not looked at yet).
 * Open addressing on the address; the lock guards it. */
enum { SITE_SLOTS = 8192 };
static struct site {
    void *caller;
    int index;
    long calls;
    int match;
} sites[SITE_SLOTS];
static bool sites_full;

/* "file+0xoffset" of a caller: the calling library's base name and the
 * offset in it. */
static void site_name(void *caller, char *out, size_t size)
{
    Dl_info info;
    const char *file = "?";
    long offset = 0;
    if (dladdr(caller, &info) && info.dli_fname) {
        file = strrchr(info.dli_fname, '/') ? strrchr(info.dli_fname, '/') + 1 : info.dli_fname;
        offset = (long)((char *)caller - (char *)info.dli_fbase);
    }
    snprintf(out, size, "%s+0x%lx", file, offset);
}

static struct site *site_of(void *caller, int index)
{
    size_t h = ((uintptr_t)caller >> 2) * 0x9e3779b97f4a7c15u % SITE_SLOTS;
    for (size_t i = 0; i < SITE_SLOTS; i++) {
        struct site *e = &sites[(h + i) % SITE_SLOTS];
        if (e->caller == caller)
            return e;
        if (!e->caller) {
            e->caller = caller;
            e->index = index;
            e->match = -1;
            return e;
        }
    }
    sites_full = true;
    return NULL;
}

static void configure(void)
{
    const char *v = getenv("CUGL_FAULT_CALL");
    fail_call = v ? atol(v) : 0;
    fail_func = getenv("CUGL_FAULT_FUNC");
    if (fail_func && !*fail_func)
        fail_func = NULL;
    fail_site = getenv("CUGL_FAULT_SITE");
    if (fail_site && !*fail_site)
        fail_site = NULL;
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
    struct site *site = site_of(caller, index);
    if (site)
        site->calls++;
    bool hit = false;
    if (failed_index < 0) {
        if (fail_call && calls == fail_call)
            hit = true;
        else if (fail_func && strcmp(fail_func, name) == 0 && ++func_calls == fail_occurrence)
            hit = true;
        else if (fail_site && site) {
            if (site->match < 0) {
                char here[512];
                site_name(caller, here, sizeof here);
                site->match = strcmp(here, fail_site) == 0;
            }
            hit = site->match && site->calls == fail_occurrence;
        }
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
            *(void **)&fault_real[i] = found; /* POSIX: dlsym's way */
            return *(void *const *)&fault_entries[i].wrapper; /* as dlsym gives it */
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
                                           cuuint64_t flags);
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
    /* "%p" in the name: this process's id, so that a child forked by the
     * program under test writes a log of its own. */
    char name[4096];
    const char *p = strstr(path, "%p");
    if (p)
        snprintf(name, sizeof name, "%.*s%ld%s", (int)(p - path), path, (long)getpid(), p + 2);
    else
        snprintf(name, sizeof name, "%s", path);
    FILE *f = fopen(name, "w");
    if (!f)
        return;
    fprintf(f, "calls %ld\n", calls);
    char where[512];
    if (failed_index >= 0) {
        site_name(failed_caller, where, sizeof where);
        fprintf(f, "failed %s %ld %s\n", fault_entries[failed_index].name, failed_call, where);
    }
    for (size_t i = 0; i < SITE_SLOTS; i++)
        if (sites[i].caller) {
            site_name(sites[i].caller, where, sizeof where);
            fprintf(f, "site %s %s %ld\n", where, fault_entries[sites[i].index].name,
                    sites[i].calls);
        }
    if (sites_full)
        fprintf(f, "sites-full\n");
    fclose(f);
}
