/*
 * layout_oracle.h - an independent model of strided layouts for the tests:
 * it enumerates every multi-index and computes offsets directly, with no
 * code shared with lib/core/layout.c. Layouts here stay small (volume up to
 * a few thousand), so brute force is cheap.
 */
#ifndef CUGL_TEST_LAYOUT_ORACLE_H
#define CUGL_TEST_LAYOUT_ORACLE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cugl/layout.h>

/* A deterministic generator (xorshift64*), so failures reproduce by seed. */
typedef struct oracle_rng {
    uint64_t s;
} oracle_rng;

static inline uint64_t oracle_next(oracle_rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 2685821657736338717ull;
}

/* Uniform in [lo, hi]. */
static inline int64_t oracle_range(oracle_rng *r, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(oracle_next(r) % (uint64_t)(hi - lo + 1));
}

/* The volume; only called for layouts known to be small, or empty. */
static inline int64_t oracle_volume(int ndim, const int64_t *shape)
{
    for (int i = 0; i < ndim; i++)
        if (shape[i] == 0)
            return 0;
    int64_t v = 1;
    for (int i = 0; i < ndim; i++)
        v *= shape[i];
    return v;
}

/* Offset of a multi-index, straight from the definition. */
static inline int64_t oracle_offset(const cugl_layout *l, const int64_t *idx)
{
    int64_t off = l->slice_offset;
    for (int i = 0; i < l->ndim; i++)
        off += idx[i] * l->strides[i];
    return off;
}

/* Advance a multi-index in C order (last axis fastest); false at the end. */
static inline bool oracle_next_index(int ndim, const int64_t *shape, int64_t *idx)
{
    for (int i = ndim - 1; i >= 0; i--) {
        if (++idx[i] < shape[i])
            return true;
        idx[i] = 0;
    }
    return false;
}

/*
 * Offsets of every element in C index order, into `out` (volume entries).
 * Returns the volume.
 */
static inline int64_t oracle_enumerate(const cugl_layout *l, int64_t *out)
{
    int64_t vol = oracle_volume(l->ndim, l->shape);
    if (vol == 0)
        return 0;
    int64_t idx[CUGL_LAYOUT_MAX_NDIM] = {0};
    int64_t n = 0;
    do
        out[n++] = oracle_offset(l, idx);
    while (oracle_next_index(l->ndim, l->shape, idx));
    return n;
}

/* Whether the C-order offsets are first, first+1, ... */
static inline bool oracle_consecutive(const int64_t *offs, int64_t n)
{
    for (int64_t i = 1; i < n; i++)
        if (offs[i] != offs[0] + i)
            return false;
    return true;
}

static inline int oracle_cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Whether all offsets differ (sorts a copy). */
static inline bool oracle_distinct(const int64_t *offs, int64_t n, int64_t *scratch)
{
    memcpy(scratch, offs, (size_t)n * sizeof *offs);
    qsort(scratch, (size_t)n, sizeof *scratch, oracle_cmp64);
    for (int64_t i = 1; i < n; i++)
        if (scratch[i] == scratch[i - 1])
            return false;
    return true;
}

/* The layout with its axes reordered: axis k of the result is axis p[k]. */
static inline cugl_layout oracle_permute(const cugl_layout *l, const int *p)
{
    cugl_layout r = *l;
    for (int k = 0; k < l->ndim; k++) {
        r.shape[k] = l->shape[p[k]];
        r.strides[k] = l->strides[p[k]];
    }
    return r;
}

/* Whether some axis order walks the elements contiguously (brute force). */
static inline bool oracle_contiguous_any(const cugl_layout *l, int64_t *offs)
{
    int64_t vol = oracle_volume(l->ndim, l->shape);
    if (vol <= 1)
        return true;
    int p[CUGL_LAYOUT_MAX_NDIM], n = l->ndim;
    for (int i = 0; i < n; i++)
        p[i] = i;
    /* Heap's algorithm over all permutations (ndim is small here). */
    int c[CUGL_LAYOUT_MAX_NDIM] = {0};
    cugl_layout r = oracle_permute(l, p);
    oracle_enumerate(&r, offs);
    if (oracle_consecutive(offs, vol))
        return true;
    for (int i = 1; i < n;) {
        if (c[i] < i) {
            int j = i % 2 == 0 ? 0 : c[i];
            int t = p[j];
            p[j] = p[i];
            p[i] = t;
            r = oracle_permute(l, p);
            oracle_enumerate(&r, offs);
            if (oracle_consecutive(offs, vol))
                return true;
            c[i]++;
            i = 1;
        } else {
            c[i] = 0;
            i++;
        }
    }
    return false;
}

/*
 * The indices a Python slice start:stop:step selects from range(n), listed
 * by walking every candidate: a formulation of its documented semantics,
 * not a length formula.
 */
static inline int64_t oracle_slice(const cugl_slice *s, int64_t n, int64_t *picked)
{
    int64_t step = s->step;
    int64_t lo = step > 0 ? 0 : -1, hi = step > 0 ? n : n - 1;
    int64_t b = s->has_start ? s->start : (step > 0 ? 0 : n - 1);
    int64_t e = s->has_stop ? s->stop : (step > 0 ? n : -1);
    if (s->has_start && b < 0)
        b = b + n < lo ? lo : b + n;
    else if (b > hi)
        b = hi;
    if (s->has_stop && e < 0)
        e = e + n < lo ? lo : e + n;
    else if (e > hi)
        e = hi;
    int64_t count = 0;
    for (int64_t i = b; step > 0 ? i < e : i > e; i += step)
        picked[count++] = i;
    return count;
}

#endif /* CUGL_TEST_LAYOUT_ORACLE_H */
