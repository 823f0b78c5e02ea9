/*
 * fuzz_dlpack: DLPack imports (cugl_view_from_dlpack and _versioned) of
 * tensors made from the input: any ndim, shapes and strides that are
 * negative or overflow, NULL or wrapping data, every device type and
 * dtype, versions and flags. Nothing may crash or trip a sanitizer; an
 * import either gives a view whose release calls the tensor's deleter
 * exactly once, or fails with a message and never calls it.
 */
#include <string.h>

#include <cugl/cugl.h>
#include "dlpack_compat.h"

#include "layout_oracle.h"

static size_t generate(oracle_rng *rng, uint8_t *buf, size_t cap);
static void run_one(const uint8_t *data, size_t size);

#include "fuzz_main.h"

static int deleted;
static void delete_plain(DLManagedTensor *t) { (void)t; deleted++; }
static void delete_versioned(struct DLManagedTensorVersioned *t) { (void)t; deleted++; }

static int64_t i64(fuzz_reader *r)
{
    uint8_t sel = fuzz_u8(r);
    if (sel < 200)
        return (int64_t)(fuzz_u8(r) % 9) - (sel < 20 ? 4 : 0);
    return fuzz_raw64(r);
}

static void run_one(const uint8_t *data, size_t size)
{
    fuzz_reader r = {data, size};
    static uint8_t memory[4096];
    static int64_t shape[80], strides[80];
    int ndim = (int)(int8_t)fuzz_u8(&r);
    for (int i = 0; i < 80; i++) {
        shape[i] = i64(&r);
        strides[i] = i64(&r);
    }
    uint8_t flags = fuzz_u8(&r);
    static const int devices[] = {kDLCPU, kDLCUDA, kDLCUDAHost, kDLCUDAManaged, kDLOpenCL,
                                  kDLROCM, 99};
    DLTensor t = {
        .data = (flags & 1) ? NULL : memory + fuzz_u8(&r),
        .device = {(DLDeviceType)devices[fuzz_u8(&r) % 7], (int32_t)(int8_t)fuzz_u8(&r)},
        .ndim = ndim,
        .dtype = {fuzz_u8(&r) % 6, fuzz_u8(&r), (uint16_t)(fuzz_u8(&r) % 5)},
        .shape = (flags & 2) ? NULL : shape,
        .strides = (flags & 4) ? NULL : strides,
        .byte_offset = (flags & 8) ? (uint64_t)i64(&r) : fuzz_u8(&r),
    };
    cugl_dlpack_import_desc desc = {.no_sync = true, .readonly = (flags & 16) != 0};
    cugl_view *v = (cugl_view *)&r;
    deleted = 0;
    cugl_status st;
    /* The view holds the tensor until it is released: both live to the end. */
    struct DLManagedTensorVersioned mv = {.version = {fuzz_u8(&r) % 3, 0},
                                          .deleter = delete_versioned,
                                          .flags = fuzz_u8(&r),
                                          .dl_tensor = t};
    DLManagedTensor m = {.dl_tensor = t, .deleter = delete_plain};
    if (flags & 32)
        st = cugl_view_from_dlpack_versioned(&v, &mv, &desc);
    else
        st = cugl_view_from_dlpack(&v, &m, (flags & 64) ? NULL : &desc);
    if (st != CUGL_OK) {
        if (v || deleted || !cugl_last_error()[0])
            FUZZ_VIOLATED("dlpack: a refusal left view %p, %d deleter calls, message '%s'",
                          (void *)v, deleted, cugl_last_error());
        return;
    }
    /* The view spans memory the tensor described: every element within it. */
    if (!v || cugl_view_ndim(v) != ndim)
        FUZZ_VIOLATED("dlpack: an import of %d dims gave %p", ndim, (void *)v);
    if (deleted)
        FUZZ_VIOLATED("dlpack: the deleter ran before the view was released");
    /* Host tensors whose elements lie in `memory`: copied out, every element
     * read (a view that reaches past what it was given trips ASan). */
    cugl_buffer *b = cugl_view_buffer(v);
    uint64_t lo = (uint64_t)(uintptr_t)memory, at = cugl_buffer_handle(b);
    int64_t volume = cugl_layout_volume(cugl_view_layout(v));
    if (!cugl_view_is_device_accessible(v) && at >= lo && at - lo <= sizeof memory &&
        cugl_buffer_size(b) <= sizeof memory - (at - lo) && volume > 0 && volume <= 4096) {
        static uint8_t dense[4096 * 64];
        size_t bytes = (size_t)volume * (size_t)cugl_view_layout(v)->itemsize;
        cugl_buffer *db = NULL;
        cugl_view *dv = NULL;
        cugl_layout dl;
        if (bytes <= sizeof dense &&
            cugl_buffer_from_handle(&db, (uint64_t)(uintptr_t)dense, bytes, NULL) == CUGL_OK &&
            cugl_layout_init(&dl, cugl_view_ndim(v), cugl_view_shape(v), NULL,
                             cugl_view_layout(v)->itemsize) == CUGL_OK &&
            cugl_view_from_buffer(&dv, db, &dl, cugl_view_dtype(v), false) == CUGL_OK &&
            cugl_view_copy_from(dv, v, NULL, NULL) != CUGL_OK && !cugl_last_error()[0])
            FUZZ_VIOLATED("dlpack: a copy refused without a message");
        cugl_view_release(dv);
        cugl_buffer_release(db);
    }
    cugl_view_release(v);
    if (deleted != 1)
        FUZZ_VIOLATED("dlpack: %d deleter calls after the release", deleted);
}

static size_t generate(oracle_rng *rng, uint8_t *buf, size_t cap)
{
    size_t n = (size_t)oracle_range(rng, 0, cap < 1024 ? (int64_t)cap : 1024);
    for (size_t i = 0; i < n; i++)
        buf[i] = (uint8_t)oracle_next(rng);
    if (n > 0 && oracle_range(rng, 0, 1)) /* mostly a few dimensions */
        buf[0] = (uint8_t)oracle_range(rng, 0, 4);
    return n;
}
