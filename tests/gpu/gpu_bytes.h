/*
 * gpu_bytes.h - byte patterns and pinned staging memory for the memory and
 * buffer tests: data is written and checked byte by byte, so that a copy
 * that drops, shifts or repeats a byte cannot pass.
 */
#ifndef CUGL_TEST_GPU_BYTES_H
#define CUGL_TEST_GPU_BYTES_H

#include "gpu_mem.h"

#define MiB ((size_t)1 << 20)

/* A byte pattern that differs between neighbours, pages and seeds. */
static inline uint8_t pattern_byte(size_t i, unsigned seed)
{
    return (uint8_t)((i * 131u + (i >> 12) * 7u + seed * 29u + 1u) % 251u);
}

static inline void write_pattern(uint8_t *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = pattern_byte(i, seed);
}

static inline void expect_pattern(const uint8_t *p, size_t n, unsigned seed, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != pattern_byte(i, seed))
            fail_msg("%s: byte %zu of %zu is 0x%02x, expected 0x%02x", what, i, n, p[i],
                     pattern_byte(i, seed));
}

static inline void expect_bytes(const uint8_t *p, size_t n, uint8_t value, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != value)
            fail_msg("%s: byte %zu of %zu is 0x%02x, expected 0x%02x", what, i, n, p[i], value);
}

/* The CPU address of host-accessible buffer memory. */
static inline uint8_t *host_bytes(const cugl_buffer *b)
{
    return (uint8_t *)(uintptr_t)cugl_buffer_handle(b);
}

/* Pinned host memory from the driver, seen by cugl as a non-owning buffer. */
typedef struct staging {
    uint8_t *host;
    cugl_buffer *buffer;
} staging;

static inline staging staging_new(size_t n)
{
    CUdeviceptr unused;
    staging s = {gpu_host_alloc_mapped(n, &unused), NULL};
    assert_ok(cugl_buffer_from_handle(&s.buffer, (uint64_t)(uintptr_t)s.host, n, NULL));
    return s;
}

static inline void staging_free(staging *s)
{
    cugl_buffer_release(s->buffer);
    gpu_host_free(s->host);
    s->buffer = NULL;
    s->host = NULL;
}

/* Pool statistics, with the invariants that hold at any time. */
static inline cugl_pool_stats pool_stats(cugl_memory_resource *mr)
{
    cugl_pool_stats s;
    memset(&s, 0xff, sizeof s);
    assert_ok(cugl_memory_resource_pool_stats(mr, &s));
    assert_true(s.reserved_high >= s.reserved_current);
    assert_true(s.used_high >= s.used_current);
    assert_true(s.reserved_current >= s.used_current);
    return s;
}

#endif /* CUGL_TEST_GPU_BYTES_H */
