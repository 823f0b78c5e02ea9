/*
 * fuzz_layout: random bytes become a layout (valid or not, with extents and
 * strides that may overflow) and a chain of operations. Nothing may crash or
 * trip a sanitizer; every operation that succeeds must produce a layout that
 * validates, and, where it is small enough to enumerate, one that maps
 * indices to the offsets the oracle (layout_oracle.h) says.
 *
 * Built twice: with libFuzzer (clang, -DCUGL_LIBFUZZER), and as a bounded
 * seeded loop that runs anywhere:
 *   fuzz_layout [seconds]     (default 10; CUGL_TEST_SEED sets the seed)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cugl/layout.h>

#include "layout_oracle.h"

static size_t generate(oracle_rng *rng, uint8_t *buf, size_t cap);
static void run_one(const uint8_t *data, size_t size);

#include "fuzz_main.h"

enum { MAXVOL = 4096 };

static int64_t offs_a[MAXVOL], offs_b[MAXVOL];

/* Mostly small values, sometimes anything at all. */
static int64_t value(fuzz_reader *r, int64_t lo, int64_t hi)
{
    uint8_t sel = fuzz_u8(r);
    if (sel < 224)
        return lo + (int64_t)(fuzz_u8(r) % (uint64_t)(hi - lo + 1));
    if (sel < 240)
        return -(int64_t)(fuzz_u8(r) % 4) - 1;
    return fuzz_raw64(r);
}

static void violated(const char *op, const char *what)
{
    fprintf(stderr, "fuzz_layout: %s: %s\n", op, what);
    abort();
}

static int64_t small_volume(const cugl_layout *l)
{
    int64_t v = cugl_layout_volume(l);
    return v <= MAXVOL ? v : -1;
}

/* Check the result `t` of `op` on `l`. */
static void verify(const char *op, const cugl_layout *l, const cugl_layout *t, bool same_order)
{
    if (cugl_layout_validate(t) != CUGL_OK)
        violated(op, "the result does not validate");
    int64_t lo, hi;
    if (cugl_layout_offset_bounds(t, &lo, &hi) != CUGL_OK)
        violated(op, "no offset bounds for a valid layout");
    int64_t n = small_volume(t);
    if (n < 0)
        return;
    oracle_enumerate(t, offs_b);
    for (int64_t i = 0; i < n; i++)
        if (offs_b[i] < lo || offs_b[i] > hi)
            violated(op, "an offset lies outside the bounds");
    if (same_order) {
        if (small_volume(l) != n)
            violated(op, "the volume changed");
        oracle_enumerate(l, offs_a);
        for (int64_t i = 0; i < n; i++)
            if (offs_a[i] != offs_b[i])
                violated(op, "an element moved");
    }
}

static void run_one(const uint8_t *data, size_t size)
{
    fuzz_reader r = {data, size};
    cugl_layout l;
    memset(&l, 0, sizeof l);
    /* Sometimes a hand-made struct, to exercise validation. */
    bool raw = fuzz_u8(&r) < 32;
    int ndim = (int)(fuzz_u8(&r) % 7);
    int64_t shape[8], strides[8];
    for (int i = 0; i < ndim; i++) {
        shape[i] = value(&r, 0, 5);
        strides[i] = value(&r, -6, 6);
    }
    int64_t itemsize = raw ? value(&r, 0, 16) : (int64_t)1 << (fuzz_u8(&r) % 5);
    if (raw) {
        l.ndim = (int)(fuzz_u8(&r) % 70) - 2;
        for (int i = 0; i < ndim; i++) {
            l.shape[i] = shape[i];
            l.strides[i] = strides[i];
        }
        l.itemsize = itemsize;
        l.slice_offset = value(&r, 0, 30);
        if (cugl_layout_validate(&l) != CUGL_OK)
            return;
    } else if (cugl_layout_init(&l, ndim, shape, strides, itemsize) != CUGL_OK) {
        return;
    }

    for (int step = 0; step < 8 && r.n > 0; step++) {
        cugl_layout t;
        cugl_status st;
        const char *op = "";
        bool same_order = false;
        int n = l.ndim;
        switch (fuzz_u8(&r) % 11) {
        case 0: {
            op = "reshaped";
            int nd = (int)(fuzz_u8(&r) % 6);
            int64_t s[8];
            for (int i = 0; i < nd; i++)
                s[i] = value(&r, -1, 6);
            st = cugl_layout_reshaped(&t, &l, nd, s);
            same_order = true;
            break;
        }
        case 1: {
            op = "permuted";
            int p[CUGL_LAYOUT_MAX_NDIM];
            for (int i = 0; i < n; i++)
                p[i] = (int)(fuzz_u8(&r) % (n + 1));
            st = cugl_layout_permuted(&t, &l, p);
            if (st == CUGL_OK && small_volume(&t) > 0) {
                int64_t j[CUGL_LAYOUT_MAX_NDIM] = {0}, i[CUGL_LAYOUT_MAX_NDIM];
                do {
                    for (int k = 0; k < n; k++)
                        i[p[k]] = j[k];
                    if (oracle_offset(&t, j) != oracle_offset(&l, i))
                        violated(op, "an offset differs");
                } while (oracle_next_index(t.ndim, t.shape, j));
            }
            break;
        }
        case 2:
            op = "flattened";
            st = cugl_layout_flattened(&t, &l, (int)value(&r, -3, 3), (int)value(&r, -3, 3));
            same_order = true;
            break;
        case 3:
            op = "squeezed";
            st = cugl_layout_squeezed(&t, &l);
            same_order = true;
            break;
        case 4: {
            op = "unsqueezed";
            int a[3], na = (int)(fuzz_u8(&r) % 4);
            for (int i = 0; i < na; i++)
                a[i] = (int)value(&r, -4, 4);
            st = cugl_layout_unsqueezed(&t, &l, na, a);
            same_order = true;
            break;
        }
        case 5: {
            op = "broadcast_to";
            int nd = n + (int)(fuzz_u8(&r) % 3);
            int64_t s[8];
            for (int i = 0; i < nd && i < 8; i++)
                s[i] = value(&r, 0, 4);
            st = nd <= 8 ? cugl_layout_broadcast_to(&t, &l, nd, s) : CUGL_ERROR_INVALID_ARGUMENT;
            break;
        }
        case 6:
            op = "repacked";
            st = cugl_layout_repacked(&t, &l, value(&r, 1, 32), (uint64_t)value(&r, 0, 64),
                                      (int)value(&r, -3, 3), fuzz_u8(&r) & 1);
            break;
        case 7: {
            op = "max_compatible_itemsize";
            int64_t best, most = value(&r, 1, 64);
            uint64_t ptr = (uint64_t)value(&r, 0, 64);
            int axis = (int)value(&r, -3, 3);
            st = cugl_layout_max_compatible_itemsize(&best, &l, most, ptr, axis);
            if (st == CUGL_OK && (best < l.itemsize || best > most ||
                                  cugl_layout_repacked(&t, &l, best, ptr, axis, true) != CUGL_OK))
                violated(op, "the size found does not repack");
            st = CUGL_ERROR_INVALID_ARGUMENT; /* nothing to chain */
            break;
        }
        case 8: {
            op = "sliced";
            int ns = (int)(fuzz_u8(&r) % (n + 2));
            cugl_slice s[CUGL_LAYOUT_MAX_NDIM + 2];
            for (int i = 0; i < ns; i++) {
                s[i] = (cugl_slice){.is_index = fuzz_u8(&r) < 40, .index = value(&r, -5, 5),
                                    .has_start = fuzz_u8(&r) & 1, .start = value(&r, -6, 6),
                                    .has_stop = fuzz_u8(&r) & 1, .stop = value(&r, -6, 6),
                                    .step = value(&r, -3, 3)};
            }
            st = cugl_layout_sliced(&t, &l, ns, s);
            break;
        }
        case 9: {
            op = "to_dense";
            int p[CUGL_LAYOUT_MAX_NDIM];
            for (int i = 0; i < n; i++)
                p[i] = n - 1 - i;
            st = cugl_layout_to_dense(&t, &l, (cugl_order)(fuzz_u8(&r) % 5), p);
            if (st == CUGL_OK && !cugl_layout_is_dense(&t))
                violated(op, "the result is not dense");
            break;
        }
        default: {
            op = "properties";
            int64_t need, lo, hi;
            int order[CUGL_LAYOUT_MAX_NDIM];
            cugl_layout_offset_bounds(&l, &lo, &hi);
            cugl_layout_stride_order(&l, order);
            bool unique = cugl_layout_is_unique(&l);
            bool c = cugl_layout_is_contiguous_c(&l);
            int64_t v = small_volume(&l);
            if (v > 0) {
                oracle_enumerate(&l, offs_a);
                if (c && !oracle_consecutive(offs_a, v))
                    violated(op, "contiguous_c is wrong");
                if (unique && !oracle_distinct(offs_a, v, offs_b))
                    violated(op, "is_unique is wrong");
            }
            if (cugl_layout_required_size_in_bytes(&l, &need) == CUGL_OK && v > 0 &&
                need != (hi + 1) * l.itemsize)
                violated(op, "required size is wrong");
            st = CUGL_ERROR_INVALID_ARGUMENT;
            break;
        }
        }
        if (st != CUGL_OK)
            continue;
        verify(op, &l, &t, same_order);
        l = t;
    }
}

/* Random bytes: libFuzzer finds structure by itself; the loop relies on volume. */
static size_t generate(oracle_rng *rng, uint8_t *buf, size_t cap)
{
    size_t n = (size_t)oracle_range(rng, 0, cap < 512 ? (int64_t)cap : 512);
    for (size_t i = 0; i < n; i++)
        buf[i] = (uint8_t)oracle_next(rng);
    return n;
}
