/*
 * copy.c - copies between strided layouts, in any direction.
 *
 * A copy is first reduced to a plan: extents of 1 dropped, destination
 * strides made positive, dimensions ordered by destination stride (the
 * last is the fastest) and merged where both sides are contiguous, element
 * sizes adjusted to what the addresses allow. Then:
 *
 *   device to device   one cuMemcpy when the plan is one contiguous run;
 *                      otherwise the strided copy kernels (kernels/lib)
 *   two devices        one cuMemcpyPeer across, each side gathered or
 *                      scattered by the kernels on its own device where
 *                      it is not dense, the other device's on a stream of
 *                      cugl's own ordered with the caller's
 *   host and device    one cuMemcpy, or cuMemcpy2D/3D when the plan is
 *                      pitched; otherwise the host side is packed by the
 *                      CPU into a dense staging buffer in the plan's order,
 *                      moved in one transfer, and the device side is
 *                      scattered or gathered by the kernels
 *   host to host       the CPU
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_internal.h"
#include "strided_copy.h"

extern const unsigned char cugl_strided_copy_fatbin[];
extern const size_t cugl_strided_copy_fatbin_size;

typedef struct plan {
    int ndim;
    int64_t n[CUGL_LAYOUT_MAX_NDIM + 1];
    int64_t ss[CUGL_LAYOUT_MAX_NDIM + 1]; /* source strides, in elements */
    int64_t ds[CUGL_LAYOUT_MAX_NDIM + 1]; /* destination strides, in elements */
    uint64_t src, dst;                     /* byte addresses of element 0 */
    int64_t itemsize;
} plan;

static int64_t abs64(int64_t v) { return v < 0 ? -v : v; }

/* Merge each dimension into the next faster one where both sides allow. */
static void merge(plan *p)
{
    int k = 0;
    for (int i = 1; i < p->ndim; i++) {
        if (p->ds[k] == p->ds[i] * p->n[i] && p->ss[k] == p->ss[i] * p->n[i]) {
            p->n[k] *= p->n[i];
            p->ss[k] = p->ss[i];
            p->ds[k] = p->ds[i];
        } else {
            k++;
            p->n[k] = p->n[i];
            p->ss[k] = p->ss[i];
            p->ds[k] = p->ds[i];
        }
    }
    p->ndim = p->ndim ? k + 1 : 0;
}

static int64_t largest_pow2_dividing(uint64_t v, int64_t limit)
{
    int64_t u = limit;
    while (u > 1 && v % (uint64_t)u != 0)
        u /= 2;
    return u;
}

/*
 * The plan of a copy between two layouts of the same shape and item size,
 * of volume > 0, whose elements start at byte addresses src_base and
 * dst_base (the buffers' addresses; the slice offsets are added here).
 */
static void plan_build(plan *p, const cugl_layout *src, uint64_t src_base,
                       const cugl_layout *dst, uint64_t dst_base)
{
    int64_t is = src->itemsize;
    p->itemsize = is;
    p->src = src_base + (uint64_t)(src->slice_offset * is);
    p->dst = dst_base + (uint64_t)(dst->slice_offset * is);
    p->ndim = 0;
    for (int i = 0; i < src->ndim; i++) {
        if (src->shape[i] == 1)
            continue;
        int64_t n = src->shape[i], ss = src->strides[i], ds = dst->strides[i];
        if (ds < 0) {
            /* Walk the axis backwards on both sides. */
            p->dst += (uint64_t)((n - 1) * ds * is);
            p->src += (uint64_t)((n - 1) * ss * is);
            ds = -ds;
            ss = -ss;
        }
        int k = p->ndim++;
        /* Insertion by destination stride, slowest first; ties by source. */
        while (k > 0 && (p->ds[k - 1] < ds || (p->ds[k - 1] == ds && abs64(p->ss[k - 1]) < abs64(ss)))) {
            p->n[k] = p->n[k - 1];
            p->ss[k] = p->ss[k - 1];
            p->ds[k] = p->ds[k - 1];
            k--;
        }
        p->n[k] = n;
        p->ss[k] = ss;
        p->ds[k] = ds;
    }
    merge(p);
    if (p->ndim == 0) {
        /* One element. */
        p->ndim = 1;
        p->n[0] = 1;
        p->ss[0] = p->ds[0] = 1;
    }

    /* Element sizes the kernels have: 1, 2, 4, 8 or 16 bytes, aligned. An
     * element that is not one of them, or not aligned, becomes several
     * smaller ones along a new fastest dimension. */
    int64_t unit = largest_pow2_dividing((uint64_t)is, 16);
    unit = largest_pow2_dividing(p->src | p->dst | (uint64_t)unit, unit);
    if (unit < is) {
        int64_t k = is / unit;
        for (int i = 0; i < p->ndim; i++) {
            p->ss[i] *= k;
            p->ds[i] *= k;
        }
        p->n[p->ndim] = k;
        p->ss[p->ndim] = 1;
        p->ds[p->ndim] = 1;
        p->ndim++;
        p->itemsize = unit;
        merge(p);
    }

    /* Wider elements along a fastest dimension contiguous on both sides. */
    int last = p->ndim - 1;
    if (p->ndim > 0 && p->ss[last] == 1 && p->ds[last] == 1) {
        for (int64_t f = 16 / p->itemsize; f > 1; f /= 2) {
            int64_t wide = p->itemsize * f;
            bool ok = p->n[last] % f == 0 && p->src % (uint64_t)wide == 0 &&
                      p->dst % (uint64_t)wide == 0;
            for (int i = 0; ok && i < last; i++)
                ok = p->ss[i] % f == 0 && p->ds[i] % f == 0;
            if (!ok)
                continue;
            p->n[last] /= f;
            for (int i = 0; i < last; i++) {
                p->ss[i] /= f;
                p->ds[i] /= f;
            }
            p->itemsize = wide;
            break;
        }
    }
}

static int64_t plan_volume(const plan *p)
{
    int64_t v = 1;
    for (int i = 0; i < p->ndim; i++)
        v *= p->n[i];
    return v;
}

static bool one_run(const plan *p)
{
    return p->ndim == 1 && p->ss[0] == 1 && p->ds[0] == 1;
}

/* Whether the destination is dense in the plan's order. */
static bool dst_dense(const plan *p)
{
    int64_t want = 1;
    for (int i = p->ndim - 1; i >= 0; i--) {
        if (p->ds[i] != want)
            return false;
        want *= p->n[i];
    }
    return true;
}

static bool src_dense(const plan *p)
{
    int64_t want = 1;
    for (int i = p->ndim - 1; i >= 0; i--) {
        if (p->ss[i] != want)
            return false;
        want *= p->n[i];
    }
    return true;
}

/* The same plan with the source (or destination) replaced by a dense
 * buffer at `addr` in the plan's order. */
static plan with_dense_side(const plan *p, uint64_t addr, bool source)
{
    plan q = *p;
    int64_t s = 1;
    for (int i = p->ndim - 1; i >= 0; i--) {
        if (source)
            q.ss[i] = s;
        else
            q.ds[i] = s;
        s *= p->n[i];
    }
    if (source)
        q.src = addr;
    else
        q.dst = addr;
    return q;
}

/* --- CPU copies --- */

static void cpu_copy(const plan *p)
{
    const int last = p->ndim - 1;
    const size_t is = (size_t)p->itemsize;
    const bool runs = p->ss[last] == 1 && p->ds[last] == 1;
    int64_t idx[CUGL_LAYOUT_MAX_NDIM + 1] = {0};
    for (;;) {
        int64_t so = 0, dof = 0;
        for (int i = 0; i < last; i++) {
            so += idx[i] * p->ss[i];
            dof += idx[i] * p->ds[i];
        }
        const char *s = (const char *)(uintptr_t)p->src + so * (int64_t)is;
        char *d = (char *)(uintptr_t)p->dst + dof * (int64_t)is;
        if (runs) {
            memcpy(d, s, (size_t)p->n[last] * is);
        } else {
            for (int64_t j = 0; j < p->n[last]; j++)
                memcpy(d + j * p->ds[last] * (int64_t)is, s + j * p->ss[last] * (int64_t)is, is);
        }
        int i = last - 1;
        while (i >= 0 && ++idx[i] == p->n[i])
            idx[i--] = 0;
        if (i < 0)
            return;
    }
}

/* --- the kernels, loaded once per device --- */

static cugl__kernel_set kernels = {
    .what = "the strided copy kernels",
    .fatbin = cugl_strided_copy_fatbin,
    .fatbin_size = &cugl_strided_copy_fatbin_size,
};

static int log2_of(int64_t v)
{
    int l = 0;
    while ((int64_t)1 << l < v)
        l++;
    return l;
}

/* Slots: rows by log2 of the element size (0..4), then transpose. */
static cugl_status get_kernel(cugl_device *dev, bool transpose, int64_t itemsize,
                              cugl_kernel **out, const char *who)
{
    char name[48];
    snprintf(name, sizeof name, "cugl_copy_%s_%lld", transpose ? "transpose" : "rows",
             (long long)itemsize);
    return cugl__kernel_get(&kernels, dev, (transpose ? 5 : 0) + log2_of(itemsize), name, out,
                            who);
}

static uint32_t min_u32(int64_t a, int64_t b) { return (uint32_t)(a < b ? a : b); }

/* Launch one kernel over the last `ndim` (<= CUGL_COPY_MAX_DIMS) dims of p. */
static cugl_status launch_tail(const plan *p, int first, uint64_t src, uint64_t dst,
                               cugl_stream *stream, const char *who)
{
    cugl_copy_params k;
    memset(&k, 0, sizeof k);
    k.ndim = p->ndim - first;
    k.src = src;
    k.dst = dst;
    for (int i = 0; i < k.ndim; i++) {
        k.extent[i] = p->n[first + i];
        k.src_stride[i] = p->ss[first + i];
        k.dst_stride[i] = p->ds[first + i];
    }
    int a = k.ndim - 1, b = -1;
    for (int i = 0; i < k.ndim - 1; i++)
        if (k.extent[i] >= 8 && (b < 0 || abs64(k.src_stride[i]) < abs64(k.src_stride[b])))
            b = i;
    /* Transpose when the source is contiguous along another dimension than
     * the destination: reading along a would touch a new line per element. */
    bool transpose = b >= 0 && k.extent[a] >= 8 && abs64(k.src_stride[a]) > 1 &&
                     abs64(k.src_stride[b]) < abs64(k.src_stride[a]);
    cugl_launch_config cfg = {.block = {CUGL_COPY_THREADS}};
    k.outer = 1;
    if (transpose) {
        k.a = a;
        k.b = b;
        for (int i = 0; i < k.ndim; i++)
            if (i != a && i != b)
                k.outer *= k.extent[i];
        int64_t tile = CUGL_COPY_TILE(p->itemsize);
        int64_t tiles_a = (k.extent[a] + tile - 1) / tile;
        int64_t tiles_b = (k.extent[b] + tile - 1) / tile;
        int64_t groups_b = (tiles_b + CUGL_COPY_TILES_PER_BLOCK - 1) / CUGL_COPY_TILES_PER_BLOCK;
        cfg.block[0] = CUGL_COPY_TRANSPOSE_THREADS;
        cfg.grid[0] = min_u32(tiles_a, 0x7fffffff);
        cfg.grid[1] = min_u32(groups_b, 65535);
        cfg.grid[2] = min_u32(k.outer, 65535);
    } else {
        int64_t n = k.extent[a];
        int tpr = 1;
        while (tpr < CUGL_COPY_THREADS && tpr < n)
            tpr *= 2;
        k.tpr = tpr;
        for (int i = 0; i < a; i++)
            k.outer *= k.extent[i];
        int64_t chunk = (int64_t)tpr * CUGL_COPY_UNROLL;
        int64_t row_blocks = (k.outer + CUGL_COPY_THREADS / tpr - 1) / (CUGL_COPY_THREADS / tpr);
        cfg.grid[0] = min_u32((n + chunk - 1) / chunk, 0x7fffffff);
        cfg.grid[1] = min_u32(row_blocks, 65535);
    }
    cugl_kernel *kernel = NULL;
    CUGL__TRY(get_kernel(stream->device, transpose, p->itemsize, &kernel, who));
    void *args[] = {&k};
    cugl_status st = cugl_launch(stream, &cfg, kernel, args, 1);
    if (st != CUGL_OK)
        return cugl__fail(st, who, "the strided copy kernel failed: %s", cugl_last_error());
    return CUGL_OK;
}

/* Copy on the device: p's addresses are both reachable from it. */
static cugl_status device_copy(const plan *p, cugl_stream *stream, const char *who)
{
    if (one_run(p))
        return CUGL_CU_AS(who, cuMemcpyAsync, (CUdeviceptr)p->dst, (CUdeviceptr)p->src,
                          (size_t)(p->n[0] * p->itemsize), stream->handle);
    /* Dimensions beyond what one launch takes are walked here. */
    int first = p->ndim > CUGL_COPY_MAX_DIMS ? p->ndim - CUGL_COPY_MAX_DIMS : 0;
    int64_t idx[CUGL_LAYOUT_MAX_NDIM + 1] = {0};
    for (;;) {
        int64_t so = 0, dof = 0;
        for (int i = 0; i < first; i++) {
            so += idx[i] * p->ss[i];
            dof += idx[i] * p->ds[i];
        }
        CUGL__TRY(launch_tail(p, first, p->src + (uint64_t)(so * p->itemsize),
                              p->dst + (uint64_t)(dof * p->itemsize), stream, who));
        int i = first - 1;
        while (i >= 0 && ++idx[i] == p->n[i])
            idx[i--] = 0;
        if (i < 0)
            return CUGL_OK;
    }
}

/* A pitched copy (cuMemcpy2D/3D) where the plan is one: at most three
 * dimensions, the fastest contiguous on both sides, the others positive
 * pitches (and slice pitches a whole number of rows). */
static bool pitched(const plan *p, bool src_host, bool dst_host, CUDA_MEMCPY3D *c)
{
    int last = p->ndim - 1;
    if (p->ndim < 2 || p->ndim > 3 || p->ss[last] != 1 || p->ds[last] != 1)
        return false;
    int64_t is = p->itemsize, row = p->n[last] * is;
    int64_t sp = p->ss[last - 1] * is, dp = p->ds[last - 1] * is;
    if (sp < row || dp < row)
        return false;
    int64_t sh = p->n[last - 1], dh = p->n[last - 1];
    if (p->ndim == 3) {
        if (p->ss[0] <= 0 || p->ss[0] % p->ss[1] != 0 || p->ds[0] % p->ds[1] != 0)
            return false;
        sh = p->ss[0] / p->ss[1];
        dh = p->ds[0] / p->ds[1];
        if (sh < p->n[1] || dh < p->n[1])
            return false;
    }
    memset(c, 0, sizeof *c);
    c->srcMemoryType = src_host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_UNIFIED;
    c->dstMemoryType = dst_host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_UNIFIED;
    c->srcHost = (const void *)(uintptr_t)p->src;
    c->srcDevice = (CUdeviceptr)p->src;
    c->dstHost = (void *)(uintptr_t)p->dst;
    c->dstDevice = (CUdeviceptr)p->dst;
    c->srcPitch = (size_t)sp;
    c->dstPitch = (size_t)dp;
    c->srcHeight = (size_t)sh;
    c->dstHeight = (size_t)dh;
    c->WidthInBytes = (size_t)row;
    c->Height = (size_t)p->n[last - 1];
    c->Depth = p->ndim == 3 ? (size_t)p->n[0] : 1;
    return true;
}

/* Device temporaries: from the allocator, or the device's current pool. */
static cugl_status temp_alloc(cugl_memory_resource *mr, size_t size, cugl_stream *stream,
                              uint64_t *ptr, const char *who)
{
    if (mr)
        return cugl__mr_allocate(mr, size, stream, ptr, who);
    CUdeviceptr p = 0;
    CUGL__TRY(CUGL_CU_AS(who, cuMemAllocAsync, &p, size, stream->handle));
    *ptr = p;
    return CUGL_OK;
}

static void temp_free(cugl_memory_resource *mr, uint64_t ptr, size_t size, cugl_stream *stream,
                      const char *who)
{
    if (mr)
        cugl__mr_deallocate(mr, ptr, size, stream, who);
    else
        cugl__free_async(ptr, size, stream, who);
}

/*
 * A host transfer the driver can make in one call: one contiguous run, or a
 * pitched copy (the driver may refuse a pitch beyond its limits: then the
 * caller stages). Otherwise allocates the host staging buffer, of the
 * plan's volume: pageable memory, which the driver has copied out of when
 * an upload returns, and into when a download returns.
 */
static bool direct_or_stage(const plan *p, bool src_host, cugl_stream *stream, void **stage,
                            cugl_status *st, const char *who)
{
    size_t bytes = (size_t)(plan_volume(p) * p->itemsize);
    CUDA_MEMCPY3D c;
    *stage = NULL;
    if (one_run(p)) {
        *st = CUGL_CU_AS(who, cuMemcpyAsync, (CUdeviceptr)p->dst, (CUdeviceptr)p->src, bytes,
                         stream->handle);
        return true;
    }
    if (pitched(p, src_host, !src_host, &c) &&
        cugl__cu.cuMemcpy3DAsync(&c, stream->handle) == CUDA_SUCCESS) {
        *st = CUGL_OK;
        return true;
    }
    *stage = malloc(bytes);
    *st = *stage ? CUGL_OK
                 : cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, who,
                              "cannot allocate %zu bytes of staging", bytes);
    return !*stage;
}

static cugl_status host_to_device(const plan *p, cugl_stream *stream, cugl_memory_resource *mr,
                                  const char *who)
{
    size_t bytes = (size_t)(plan_volume(p) * p->itemsize);
    void *stage;
    cugl_status st;
    if (direct_or_stage(p, true, stream, &stage, &st, who))
        return st;
    /* Pack on the CPU in the plan's order. */
    plan pack = with_dense_side(p, (uint64_t)(uintptr_t)stage, false);
    cpu_copy(&pack);
    if (dst_dense(p)) {
        st = CUGL_CU_AS(who, cuMemcpyAsync, (CUdeviceptr)p->dst, (CUdeviceptr)(uintptr_t)stage,
                        bytes, stream->handle);
    } else {
        uint64_t tmp = 0;
        st = temp_alloc(mr, bytes, stream, &tmp, who);
        if (st == CUGL_OK) {
            st = CUGL_CU_AS(who, cuMemcpyAsync, (CUdeviceptr)tmp, (CUdeviceptr)(uintptr_t)stage,
                            bytes, stream->handle);
            plan scatter = with_dense_side(p, tmp, true);
            if (st == CUGL_OK)
                st = device_copy(&scatter, stream, who);
            temp_free(mr, tmp, bytes, stream, who);
        }
    }
    free(stage);
    return st;
}

static cugl_status device_to_host(const plan *p, cugl_stream *stream, cugl_memory_resource *mr,
                                  const char *who)
{
    size_t bytes = (size_t)(plan_volume(p) * p->itemsize);
    void *stage;
    cugl_status st;
    if (direct_or_stage(p, false, stream, &stage, &st, who))
        return st;
    /* Gather on the device in the plan's order, move it, scatter on the CPU. */
    if (src_dense(p)) {
        st = CUGL_CU_AS(who, cuMemcpyAsync, (CUdeviceptr)(uintptr_t)stage, (CUdeviceptr)p->src,
                        bytes, stream->handle);
    } else {
        uint64_t tmp = 0;
        st = temp_alloc(mr, bytes, stream, &tmp, who);
        if (st == CUGL_OK) {
            plan gather = with_dense_side(p, tmp, false);
            st = device_copy(&gather, stream, who);
            if (st == CUGL_OK)
                st = CUGL_CU_AS(who, cuMemcpyAsync, (CUdeviceptr)(uintptr_t)stage,
                                (CUdeviceptr)tmp, bytes, stream->handle);
            temp_free(mr, tmp, bytes, stream, who);
        }
    }
    if (st == CUGL_OK) {
        plan scatter = with_dense_side(p, (uint64_t)(uintptr_t)stage, true);
        cpu_copy(&scatter);
    }
    free(stage);
    return st;
}

/* --- between two devices --- */

/* A copy between the memory of `stream`'s device and another's: the other
 * device's share of the work (gathering its side dense, or scattering
 * into it) runs on a stream of cugl's own there, `away`, ordered with
 * `stream` both ways; the crossing itself is one driver copy on `stream`. */
typedef struct across {
    cugl_stream *stream, *away;
    cugl_device *src_device, *dst_device;
    cugl_memory_resource *mr;
    const char *who;
} across;

/* One driver copy of `bytes` from one device's memory to the other's, on
 * x->stream: a peer copy between the two primary contexts, which needs no
 * access of either device to the other's memory (nor its pool's). */
static cugl_status across_move(const across *x, uint64_t dst, uint64_t src, size_t bytes)
{
    CUGL__TRY(cugl__device_activate(x->stream->device, x->who));
    return CUGL_CU_AS(x->who, cuMemcpyPeerAsync, (CUdeviceptr)dst,
                      atomic_load(&x->dst_device->primary), (CUdeviceptr)src,
                      atomic_load(&x->src_device->primary), bytes, x->stream->handle);
}

/* Where temporaries on `s`'s device come from: the allocator where it is
 * that device's, else (NULL) the device's current pool. */
static cugl_memory_resource *across_mr(const across *x, const cugl_stream *s)
{
    return x->mr && x->mr->device_id == s->device->ordinal ? x->mr : NULL;
}

static cugl_status across_alloc(const across *x, cugl_stream *s, size_t size, uint64_t *ptr)
{
    CUGL__TRY(cugl__device_activate(s->device, x->who));
    return temp_alloc(across_mr(x, s), size, s, ptr, x->who);
}

static void across_free(const across *x, cugl_stream *s, uint64_t ptr, size_t size)
{
    if (!ptr)
        return;
    cugl__device_activate(s->device, x->who);
    temp_free(across_mr(x, s), ptr, size, s, x->who);
}

/* `stream` waits for `other`'s work so far; nothing where there is no
 * `away` stream (nothing runs on the other device). */
static cugl_status across_wait(const across *x, cugl_stream *stream, cugl_stream *other)
{
    return x->away ? cugl__stream_wait(stream, other, x->who) : CUGL_OK;
}

/* `p` on `s`, a stream of the device whose memory both of p's sides are. */
static cugl_status across_kernel(const across *x, cugl_stream *s, const plan *p)
{
    CUGL__TRY(cugl__device_activate(s->device, x->who));
    return device_copy(p, s, x->who);
}

/*
 * `p`'s source is on `src_stream`'s device, its destination on
 * `dst_stream`'s (x->stream or x->away; x->stream for both where the
 * other device has nothing to do). The source is
 * gathered dense on its device where it is not; one driver copy moves it
 * across on x->stream, into the destination where that is dense, else into
 * a dense temporary scattered on the destination's device.
 */
static cugl_status across_steps(const across *x, const plan *p, cugl_stream *src_stream,
                                cugl_stream *dst_stream)
{
    size_t bytes = (size_t)(plan_volume(p) * p->itemsize);
    bool src_away = src_stream == x->away;
    uint64_t gathered = 0, landed = 0, from = p->src;
    cugl_status st = CUGL_OK;
    if (!src_dense(p)) {
        st = across_alloc(x, src_stream, bytes, &gathered);
        plan gather = with_dense_side(p, gathered, false);
        if (st == CUGL_OK)
            st = across_kernel(x, src_stream, &gather);
        if (st == CUGL_OK && src_away)
            st = across_wait(x, x->stream, x->away);
        from = gathered;
    }
    if (st == CUGL_OK && !dst_dense(p)) {
        st = across_alloc(x, dst_stream, bytes, &landed);
        if (st == CUGL_OK && !src_away)
            st = across_wait(x, x->stream, x->away);
    }
    if (st == CUGL_OK)
        st = across_move(x, landed ? landed : p->dst, from, bytes);
    /* What x->away does next reads or frees what the crossing used. */
    cugl_status handed = across_wait(x, x->away, x->stream);
    if (st == CUGL_OK)
        st = handed;
    if (st == CUGL_OK && landed) {
        plan scatter = with_dense_side(p, landed, true);
        st = across_kernel(x, dst_stream, &scatter);
    }
    across_free(x, dst_stream, landed, bytes);
    across_free(x, src_stream, gathered, bytes);
    return st;
}

static cugl_status copy_across(const plan *p, cugl_stream *stream, cugl_memory_resource *mr,
                               int src_device, int dst_device, const char *who)
{
    bool src_here = src_device == stream->device->ordinal;
    cugl_device *other = NULL;
    CUGL__TRY(cugl_device_get(&other, src_here ? dst_device : src_device));
    across x = {.stream = stream,
                .mr = mr,
                .who = who,
                .src_device = src_here ? stream->device : other,
                .dst_device = src_here ? other : stream->device};
    /* The other device's side, where it is not dense, is its work (none
     * where both are: one driver copy). */
    if (src_here ? dst_dense(p) : src_dense(p))
        return across_steps(&x, p, stream, stream);
    CUGL__TRY(cugl_stream_create(&x.away, other, NULL));
    /* The other device starts after what `stream` has queued so far. */
    cugl_status st = cugl__stream_wait(x.away, stream, who);
    if (st == CUGL_OK)
        st = across_steps(&x, p, src_here ? stream : x.away, src_here ? x.away : stream);
    /* And `stream`'s next work after all of it. The stream is released at
     * once: the driver destroys it when its work is done. */
    cugl_status end = cugl__stream_wait(stream, x.away, who);
    cugl_stream_release(x.away);
    cugl__device_activate(stream->device, who);
    return st != CUGL_OK ? st : end;
}

cugl_status cugl__strided_copy(const cugl__copy_side *dst, const cugl__copy_side *src,
                               cugl_stream *stream, cugl_memory_resource *allocator,
                               cugl_blocking blocking, const char *who)
{
    if (cugl_layout_volume(&dst->layout) == 0)
        return CUGL_OK;
    plan p;
    plan_build(&p, &src->layout, src->base, &dst->layout, dst->base);
    if (!src->device_accessible && !dst->device_accessible) {
        /* Host to host: work already queued may still write the source. */
        if (stream)
            CUGL__TRY(CUGL_CU_AS(who, cuStreamSynchronize, stream->handle));
        cpu_copy(&p);
        return CUGL_OK;
    }
    bool wait = blocking == CUGL_BLOCKING_YES ||
                (blocking == CUGL_BLOCKING_DEFAULT &&
                 (!src->device_accessible || !dst->device_accessible));
    CUGL__TRY(cugl__device_activate(stream->device, who));
    cugl_status st;
    if (src->device_accessible && dst->device_accessible && src->device_id >= 0 &&
        dst->device_id >= 0 && src->device_id != dst->device_id) {
        st = copy_across(&p, stream, allocator, src->device_id, dst->device_id, who);
    } else if (src->device_accessible && dst->device_accessible) {
        st = device_copy(&p, stream, who);
    } else if (dst->device_accessible) {
        st = host_to_device(&p, stream, allocator, who);
    } else {
        st = device_to_host(&p, stream, allocator, who);
    }
    if (st == CUGL_OK && wait)
        st = CUGL_CU_AS(who, cuStreamSynchronize, stream->handle);
    return st;
}
