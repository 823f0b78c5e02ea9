/*
 * heap_owners.c - who holds the heap: an LD_PRELOAD library that keeps
 * every live malloc'd block with the code that asked for it, and writes,
 * every HEAP_OWNERS_PERIOD seconds (default 5) and at exit, the live bytes
 * and blocks of each call site to HEAP_OWNERS_OUT (default stderr; "%p" in
 * it: the process id).
 *
 * A block's call site is the first return address on its stack outside the
 * C library, the C++ runtime and this file: the code of a program or of a
 * library (libcugl, the GL or CUDA driver) that called malloc, directly or
 * through strdup, fopen or operator new. A report:
 *
 *   t <seconds since start> <live bytes> <live blocks>
 *   site <file>+0x<offset> <symbol or -> <live bytes> <live blocks>
 *   ...
 *   end
 *
 * tests/tools/heap_growth.py compares two reports of one run: which sites
 * grew. Used for the soak's heap figures (the demos' --soak); not a test.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

#define API __attribute__((visibility("default")))

enum { BLOCK_SLOTS = 1 << 23, SITE_SLOTS = 1 << 16, DEPTH = 12 };

static struct block {
    void *ptr; /* NULL: empty; TOMB: deleted */
    size_t size;
    uint32_t site;
} *blocks;
static struct site {
    void *pc;
    size_t bytes, count;
} *sites;
#define TOMB ((void *)1)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static __thread int busy; /* inside this file: allocations not tracked */
static int ready;
static uintptr_t skip_lo[8], skip_hi[8]; /* libc, libstdc++, libgcc_s, this */
static int nskip;
static struct timespec start;

static size_t hash(const void *p, size_t slots)
{
    return (size_t)(((uintptr_t)p >> 4) * 0x9e3779b97f4a7c15u) & (slots - 1);
}

/* Slot 0 is for blocks of no known caller (every frame skipped, or the
 * table full); the others are found by the caller's address. */
static uint32_t site_index(void *pc)
{
    if (!pc)
        return 0;
    size_t i = hash(pc, SITE_SLOTS);
    for (size_t n = 0; n < SITE_SLOTS; i = (i + 1) & (SITE_SLOTS - 1), n++) {
        if (i == 0)
            continue;
        if (sites[i].pc == pc)
            return (uint32_t)i;
        if (!sites[i].pc) {
            sites[i].pc = pc;
            return (uint32_t)i;
        }
    }
    return 0;
}

static bool skipped(void *pc)
{
    for (int i = 0; i < nskip; i++)
        if ((uintptr_t)pc >= skip_lo[i] && (uintptr_t)pc < skip_hi[i])
            return true;
    return false;
}

/* The loaded segments of the library holding `symbol_in_it`. */
static int find_range(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    uintptr_t base = *(uintptr_t *)data;
    if (info->dlpi_addr != base || nskip >= 8)
        return 0;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_LOAD) {
            uintptr_t a = base + info->dlpi_phdr[i].p_vaddr;
            lo = a < lo ? a : lo;
            hi = a + info->dlpi_phdr[i].p_memsz > hi ? a + info->dlpi_phdr[i].p_memsz : hi;
        }
    skip_lo[nskip] = lo;
    skip_hi[nskip] = hi;
    nskip++;
    return 1;
}

static void add_skip(uintptr_t symbol_in_it)
{
    Dl_info info;
    if (!dladdr((const void *)symbol_in_it, &info) || !info.dli_fbase)
        return;
    uintptr_t base = (uintptr_t)info.dli_fbase;
    dl_iterate_phdr(find_range, &base);
}

static void track(void *ptr, size_t size)
{
    if (!ready || busy || !ptr)
        return;
    busy = 1;
    void *stack[DEPTH];
    int n = backtrace(stack, DEPTH);
    void *pc = NULL;
    for (int i = 1; i < n && !pc; i++)
        if (!skipped(stack[i]))
            pc = stack[i];
    pthread_mutex_lock(&lock);
    uint32_t s = site_index(pc);
    for (size_t i = hash(ptr, BLOCK_SLOTS), k = 0; k < BLOCK_SLOTS; i = (i + 1) & (BLOCK_SLOTS - 1), k++)
        if (blocks[i].ptr == NULL || blocks[i].ptr == TOMB) {
            blocks[i] = (struct block){ptr, size, s};
            sites[s].bytes += size;
            sites[s].count++;
            break;
        }
    pthread_mutex_unlock(&lock);
    busy = 0;
}

static void untrack(void *ptr)
{
    if (!ready || !ptr)
        return;
    pthread_mutex_lock(&lock);
    for (size_t i = hash(ptr, BLOCK_SLOTS), k = 0; k < BLOCK_SLOTS; i = (i + 1) & (BLOCK_SLOTS - 1), k++) {
        if (blocks[i].ptr == NULL)
            break;
        if (blocks[i].ptr == ptr) {
            sites[blocks[i].site].bytes -= blocks[i].size;
            sites[blocks[i].site].count--;
            blocks[i].ptr = TOMB;
            break;
        }
    }
    pthread_mutex_unlock(&lock);
}

API void *malloc(size_t size)
{
    void *p = __libc_malloc(size);
    track(p, size);
    return p;
}

API void *calloc(size_t n, size_t size)
{
    void *p = __libc_calloc(n, size);
    track(p, n * size);
    return p;
}

API void *realloc(void *old, size_t size)
{
    void *p = __libc_realloc(old, size);
    if (p || size == 0) { /* refused: the old block stays as it was */
        untrack(old);
        track(p, size);
    }
    return p;
}

API void free(void *p)
{
    untrack(p);
    __libc_free(p);
}

API void *memalign(size_t align, size_t size)
{
    void *p = __libc_memalign(align, size);
    track(p, size);
    return p;
}

API void *aligned_alloc(size_t align, size_t size)
{
    return memalign(align, size);
}

API int posix_memalign(void **out, size_t align, size_t size)
{
    void *p = __libc_memalign(align, size);
    if (!p)
        return 12; /* ENOMEM */
    track(p, size);
    *out = p;
    return 0;
}

static void report(void)
{
    busy = 1;
    const char *path = getenv("HEAP_OWNERS_OUT");
    char name[4096];
    const char *pid = path ? strstr(path, "%p") : NULL;
    if (pid) {
        snprintf(name, sizeof name, "%.*s%ld%s", (int)(pid - path), path, (long)getpid(), pid + 2);
        path = name;
    }
    FILE *f = path && *path ? fopen(path, "a") : stderr;
    if (!f) {
        busy = 0;
        return;
    }
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    pthread_mutex_lock(&lock);
    size_t bytes = 0, count = 0;
    for (size_t i = 0; i < SITE_SLOTS; i++) {
        bytes += sites[i].bytes;
        count += sites[i].count;
    }
    fprintf(f, "t %.1f %zu %zu\n",
            (double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) * 1e-9,
            bytes, count);
    for (size_t i = 0; i < SITE_SLOTS; i++) {
        if (!sites[i].count)
            continue;
        Dl_info info;
        const char *file = "?", *sym = "-";
        uintptr_t off = (uintptr_t)sites[i].pc;
        if (sites[i].pc && dladdr(sites[i].pc, &info) && info.dli_fname) {
            file = strrchr(info.dli_fname, '/') ? strrchr(info.dli_fname, '/') + 1 : info.dli_fname;
            off -= (uintptr_t)info.dli_fbase;
            if (info.dli_sname)
                sym = info.dli_sname;
        }
        fprintf(f, "site %s+0x%lx %s %zu %zu\n", *file ? file : "main", (unsigned long)off, sym,
                sites[i].bytes, sites[i].count);
    }
    pthread_mutex_unlock(&lock);
    fprintf(f, "end\n");
    if (f != stderr)
        fclose(f);
    busy = 0;
}

static void *reporter(void *arg)
{
    (void)arg;
    const char *v = getenv("HEAP_OWNERS_PERIOD");
    int period = v && atoi(v) > 0 ? atoi(v) : 5;
    for (;;) {
        sleep((unsigned)period);
        report();
    }
    return NULL;
}

__attribute__((constructor)) static void init(void)
{
    busy = 1;
    blocks = mmap(NULL, sizeof *blocks * BLOCK_SLOTS, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    sites = mmap(NULL, sizeof *sites * SITE_SLOTS, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (blocks == MAP_FAILED || sites == MAP_FAILED)
        return;
    void *stack[2];
    backtrace(stack, 2); /* loads libgcc_s now, not inside a tracked call */
    add_skip((uintptr_t)__libc_malloc);
    add_skip((uintptr_t)init);
    void *cxx = dlopen("libstdc++.so.6", RTLD_NOLOAD | RTLD_LAZY);
    if (cxx) {
        void *sym = dlsym(cxx, "_Znwm");
        if (sym)
            add_skip((uintptr_t)sym);
    }
    void *gcc = dlopen("libgcc_s.so.1", RTLD_NOLOAD | RTLD_LAZY);
    if (gcc) {
        void *sym = dlsym(gcc, "_Unwind_Backtrace");
        if (sym)
            add_skip((uintptr_t)sym);
    }
    clock_gettime(CLOCK_MONOTONIC, &start);
    ready = 1;
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_create(&t, &attr, reporter, NULL);
    busy = 0;
}

__attribute__((destructor)) static void fini(void)
{
    report();
}
