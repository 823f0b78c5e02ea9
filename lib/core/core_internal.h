/*
 * core_internal.h - what the files of libcugl share and users never see.
 */
#ifndef CUGL_CORE_INTERNAL_H
#define CUGL_CORE_INTERNAL_H

#include <stdatomic.h>

#include "cugl/cugl.h"
#include "driver.h"

/* The one check / report / propagate idiom of every library (cugl__fail,
 * CUGL__CHECK_ARG, CUGL__CHECK_NOT_NULL, CUGL__TRY, CUGL__TRY_OWN). */
#include "check.h"

/* cugl__fail, keeping the CUresult that caused it. */
cugl_status cugl__fail_cu(cugl_status status, int cu_result, const char *who,
                          const char *fmt, ...) CUGL__PRINTF(4, 5);

/* Reference counts: every object starts at 1; immortal objects use -1. */
typedef struct cugl__ref {
    atomic_int count;
} cugl__ref;

/* The counts behind cugl_live_objects and cugl_live_bytes (live.c). */
extern atomic_llong cugl__live_object_count;
extern atomic_llong cugl__live_byte_count;

static inline void cugl__live_add(atomic_llong *counter, long long n)
{
    atomic_fetch_add_explicit(counter, n, memory_order_relaxed);
}

static inline void cugl__ref_init(cugl__ref *r)
{
    atomic_init(&r->count, 1);
    cugl__live_add(&cugl__live_object_count, 1);
}

/* An object freed by its constructor's failure, never handed out. */
static inline void cugl__ref_discard(cugl__ref *r)
{
    (void)r;
    cugl__live_add(&cugl__live_object_count, -1);
}

static inline void cugl__ref_init_immortal(cugl__ref *r) { atomic_init(&r->count, -1); }

static inline void cugl__ref_inc(cugl__ref *r)
{
    if (atomic_load_explicit(&r->count, memory_order_relaxed) >= 0)
        atomic_fetch_add_explicit(&r->count, 1, memory_order_relaxed);
}

/* true when this dropped the last reference. */
static inline bool cugl__ref_dec(cugl__ref *r)
{
    if (atomic_load_explicit(&r->count, memory_order_relaxed) < 0)
        return false;
    if (atomic_fetch_sub_explicit(&r->count, 1, memory_order_acq_rel) != 1)
        return false;
    cugl__live_add(&cugl__live_object_count, -1);
    return true;
}

/*
 * Who a buffer or array belongs to when cugl does not own its memory (a
 * graphics mapping, an imported tensor, a mipmapped array). At close,
 * on_close runs once (a mapping unmaps; its failure is the close's), then
 * release drops `owner`. Either hook may be NULL.
 */
typedef struct cugl__owner {
    void *owner;
    cugl_status (*on_close)(void *owner, cugl_stream *stream);
    void (*release)(void *owner);
} cugl__owner;

/* Run the hooks once (the owner is forgotten first); on_close's status. */
static inline cugl_status cugl__owner_close(cugl__owner *o, cugl_stream *stream)
{
    cugl__owner hold = *o;
    *o = (cugl__owner){0};
    cugl_status st = hold.on_close ? hold.on_close(hold.owner, stream) : CUGL_OK;
    if (hold.release)
        hold.release(hold.owner);
    return st;
}

/* Devices (device.c). */
struct cugl_device {
    int ordinal;
    CUdevice handle;
    _Atomic(CUcontext) primary; /* NULL until set_current */
    cugl_device_properties props;
    atomic_bool props_loaded;
};

/*
 * Make the device's primary context current on this thread. Fails with
 * CUGL_ERROR_INVALID_STATE, naming `who`, when the device was never
 * initialized with cugl_device_set_current.
 */
cugl_status cugl__device_activate(cugl_device *device, const char *who);

/* Cached properties; loads them on first use. */
cugl_status cugl__device_props(cugl_device *device, const char *who,
                               const cugl_device_properties **props);

/* The cugl device whose primary context is `ctx`, or NULL. */
cugl_device *cugl__device_from_context(CUcontext ctx);

/* Streams (stream.c). */
struct cugl_stream {
    cugl__ref ref;
    CUstream handle;
    cugl_device *device;
    bool owned;
    bool closed;
    bool nonblocking;
    int priority;
};

/* Check a stream argument: not NULL, not closed. */
cugl_status cugl__stream_check(const cugl_stream *stream, const char *who);
/* Make the stream's device current where the driver reads its handle
 * against the current context: a default stream's handle (the legacy or
 * per-thread stream) names the default stream of whatever context is
 * current, so a default stream of device 1 used while device 0 is current
 * would order the work on device 0's. Other streams carry their context. */
cugl_status cugl__stream_enter(const cugl_stream *stream, const char *who);
/* Whether two stream objects order work on the same driver stream (two
 * devices' default streams share a handle but are not the same stream). */
bool cugl__same_stream(const cugl_stream *a, const cugl_stream *b);
/* `stream` waits for the work queued on `other` so far (either device's),
 * failures reported as `who`. */
cugl_status cugl__stream_wait(cugl_stream *stream, cugl_stream *other, const char *who);

/* Events (event.c). */
struct cugl_event {
    cugl__ref ref;
    CUevent handle;
    cugl_device *device;
    bool closed;
    bool timing;
    bool blocking_sync;
    bool ipc;
    bool recorded;
};

cugl_status cugl__event_check(const cugl_event *event, const char *who);

/* Record `event` on `stream`, reporting failures as `who`. */
cugl_status cugl__event_record(cugl_event *event, cugl_stream *stream, const char *who);

/* The most devices one memory resource may name as peers. */
enum { CUGL_MAX_PEERS = 64 };

/* Memory resources (memory.c). Each kind is a table of operations. */
typedef struct cugl__mr_ops {
    /* Allocate `size` > 0 bytes; `stream` may be NULL where not stream-ordered. */
    cugl_status (*allocate)(cugl_memory_resource *mr, size_t size, cugl_stream *stream,
                            uint64_t *ptr, const char *who);
    /* Free; never called for ptr 0. Must free even when the resource is closed. */
    cugl_status (*deallocate)(cugl_memory_resource *mr, uint64_t ptr, size_t size,
                              cugl_stream *stream, const char *who);
} cugl__mr_ops;

struct cugl_memory_resource {
    cugl__ref ref;
    const cugl__mr_ops *ops;
    cugl_memory_kind kind;
    cugl_device *device;
    int device_id; /* -1: host memory of no device */
    bool closed;
    bool device_accessible;
    bool host_accessible;
    bool managed;
    bool stream_ordered; /* allocate/deallocate need a stream */
    bool ipc;            /* buffers can be exported (an IPC pool) */
    bool imported;       /* opened from another process: cannot allocate */
    CUmemoryPool pool;   /* NULL where there is none */
    bool owns_pool;
    size_t max_size;         /* own pool: its limit; 0 = none */
    CUmemLocation preferred; /* managed: advised location */
    size_t granularity;      /* exportable: allocation granularity */
    /* Other devices that may read and write its memory (peer.c): a pool's
     * access, or what each exportable allocation is mapped for. */
    int peers[CUGL_MAX_PEERS];
    int peer_count;
};

/* Map [ptr, ptr + bytes) read-write for the resource's own device and its
 * peers (peer.c): exportable allocations. */
cugl_status cugl__mr_set_access(const cugl_memory_resource *mr, uint64_t ptr, size_t bytes,
                                const char *who);

/* Allocate / free through a resource (size 0 and ptr 0 need no driver). */
cugl_status cugl__mr_allocate(cugl_memory_resource *mr, size_t size, cugl_stream *stream,
                              uint64_t *ptr, const char *who);
/* cuMemFreeAsync of `size` bytes at `ptr` on `stream`; where it fails, a
 * second try and then cuMemFree, so that the memory is not lost; the first
 * failure is reported. */
cugl_status cugl__free_async(uint64_t ptr, size_t size, cugl_stream *stream, const char *who);
cugl_status cugl__mr_deallocate(cugl_memory_resource *mr, uint64_t ptr, size_t size,
                                cugl_stream *stream, const char *who);

/* Buffers (buffer.c). */
struct cugl_buffer {
    cugl__ref ref;
    uint64_t ptr;
    size_t size;
    cugl_memory_resource *mr;       /* owning resource (a reference), or NULL */
    cugl_stream *dealloc_stream;    /* a reference, or NULL */
    int device_id;
    bool device_accessible;
    bool host_accessible;
    bool managed;
    bool closed;
    cugl__owner owner; /* memory cugl does not own: whose it is */
};

/* Check a buffer argument: not NULL, not closed. */
cugl_status cugl__buffer_check(const cugl_buffer *buffer, const char *who);

/*
 * A new buffer that owns [ptr, ptr + size), memory of `mr` (a reference is
 * taken; and to `stream`, if not NULL, as the deallocation stream).
 */
cugl_status cugl__buffer_new(cugl_buffer **out, uint64_t ptr, size_t size,
                             cugl_memory_resource *mr, cugl_stream *stream, const char *who);

/* Where memory cugl does not own can be reached from. */
typedef struct cugl__memory_access {
    int device_id; /* -1: no device's */
    bool device, host, managed;
} cugl__memory_access;

/*
 * The one constructor of buffers over memory cugl does not own (a mapped
 * GL buffer, an imported tensor, cugl_buffer_from_handle): [ptr, ptr +
 * size), reachable as `access` says, or as the driver says when access is
 * NULL. The buffer takes `owner` only on success; it never frees the
 * memory itself.
 */
cugl_status cugl__buffer_wrap(cugl_buffer **out, uint64_t ptr, size_t size,
                              const cugl__memory_access *access, cugl__owner owner,
                              const char *who);

/* ---- Arrays and mipmapped arrays (array.c), read by texture.c ---------- */

struct cugl_array {
    cugl__ref ref;
    CUarray handle;
    cugl_device *device;
    cugl_array_desc desc; /* num_channels resolved to 1, 2 or 4 */
    size_t element_size;
    size_t size_bytes;
    bool owned; /* false: a mipmap level or a graphics mapping, never destroyed here */
    bool closed;
    /* A mipmap level: its mipmapped array, whose reference `owner` holds;
     * the level counts as closed once the mipmapped array is. */
    cugl_mipmapped_array *parent;
    cugl__owner owner; /* an array cugl does not own: whose it is */
    /* The driver's array has CUDA_ARRAY3D_SURFACE_LDST: cugl's own copy
     * kernels may bind a surface, whatever desc.surface_load_store says. */
    bool ldst;
    /* The copy kernels' texture and surface objects (array_copy.c), 0 until
     * first used; destroyed at close. */
    uint64_t copy_texture, copy_surface;
};

struct cugl_mipmapped_array {
    cugl__ref ref;
    CUmipmappedArray handle;
    cugl_device *device;
    cugl_array_desc desc; /* level 0; num_channels resolved */
    unsigned num_levels;
    bool closed;
};

/* *r = a * b; false (and *r untouched) on overflow. */
static inline bool cugl__mul_size(size_t a, size_t b, size_t *r)
{
    if (a != 0 && b > SIZE_MAX / a)
        return false;
    *r = a * b;
    return true;
}

/* Check an array argument: not NULL, not closed (nor a level of a closed mipmap). */
cugl_status cugl__array_check(const cugl_array *array, const char *who);

/* The driver's format of a valid cugl_format. */
CUarray_format cugl__format_to_cu(cugl_format format);

/* Whether `format` is one of CUGL_FORMAT_LIST, and a floating-point one. */
bool cugl__format_valid(cugl_format format);
bool cugl__format_is_float(cugl_format format);

/* CUGL_OK, or INVALID_ARGUMENT "<what> <n> is not a cugl_format (first to last)". */
cugl_status cugl__format_check(cugl_format format, const char *what, const char *who);

/* Shared by array.c, array_copy.c and mipmap.c: the extent a copy of the
 * whole array covers (x, y, z: 1 where the array has no such axis); a
 * description's checks, alone and against the device's limits; the
 * driver's descriptor of a checked description. */
void cugl__array_extent(const cugl_array_desc *d, size_t e[3]);
/* Destroy the texture and surface objects the copy kernels made, if any. */
void cugl__array_copy_objects_destroy(cugl_array *a);
cugl_status cugl__array_desc_check(const cugl_array_desc *d, const char *who);
cugl_status cugl__array_limits_check(const cugl_array_desc *d, const cugl_device_properties *p,
                                     const char *who);
CUDA_ARRAY3D_DESCRIPTOR cugl__array_cu_desc(const cugl_array_desc *d);

/*
 * A non-owning array over `handle`, which lives on `device` (initialized):
 * shape, format, channels and flags are read back with
 * cuArray3DGetDescriptor, with the CUDA_ARRAY3D_* `flags` added to those
 * the driver reports (a graphics registration's surface flag, which the
 * descriptor may not repeat). The array never destroys `handle`; it holds
 * `owner` (e.g. a graphics mapping, a mipmapped array) until it is closed
 * (cugl__owner_close). On failure nothing is held: the caller keeps its
 * reference to the owner. Arrays' counterpart of cugl__buffer_wrap.
 */
cugl_status cugl__array_wrap(cugl_array **out, CUarray handle, cugl_device *device,
                             unsigned flags, cugl__owner owner, const char *who);

/* Views (view.c), read by dlpack.c. */
struct cugl_view {
    cugl__ref ref;
    cugl_buffer *buffer; /* a reference */
    cugl_layout layout;
    cugl_dtype dtype;
    bool readonly;
};

/* A view of `buffer` (a reference is taken); a zero dtype is untyped. */
cugl_status cugl__view_new(cugl_view **out, cugl_buffer *buffer, const cugl_layout *layout,
                           cugl_dtype dtype, bool readonly, const char *who);

/* Check a view argument named `name`: not NULL, its buffer not closed. */
cugl_status cugl__view_check(const cugl_view *view, const char *name, const char *who);

/* Layouts (layout.c), reporting failures as `who`. */
cugl_status cugl__layout_init(cugl_layout *out, int ndim, const int64_t *shape,
                              const int64_t *strides, int64_t itemsize, const char *who);
/* Check a layout; its offset bounds to `min_offset`/`max_offset` (NULL: not wanted). */
cugl_status cugl__layout_check(const cugl_layout *layout, const char *who, int64_t *min_offset,
                               int64_t *max_offset);

/* Strided copies (copy.c). One side of a copy: a layout over memory at
 * `base` (the buffer's address; the layout's slice offset is added). */
typedef struct cugl__copy_side {
    cugl_layout layout;
    uint64_t base;
    bool device_accessible;
    int device_id; /* the memory's device; -1: none (host memory) */
} cugl__copy_side;

/* The library's own kernels (kernels/lib): one fatbin, loaded once per
 * device on first use; each kernel a slot, looked up once by name. */
#define CUGL__KERNEL_DEVICES 64
#define CUGL__KERNEL_SLOTS 32
typedef struct cugl__kernel_set {
    const char *what; /* "the strided copy kernels", for messages */
    const unsigned char *fatbin;
    const size_t *fatbin_size;
    cugl_module *module[CUGL__KERNEL_DEVICES];
    cugl_kernel *kernel[CUGL__KERNEL_DEVICES][CUGL__KERNEL_SLOTS];
} cugl__kernel_set;
cugl_status cugl__kernel_get(cugl__kernel_set *set, cugl_device *dev, int slot,
                             const char *name, cugl_kernel **out, const char *who);

/*
 * Copy every element of `src` into `dst` (same shape and item size, checked
 * by the caller, as are devices, overlap and a unique destination) on
 * `stream`, waiting as `blocking` says.
 */
cugl_status cugl__strided_copy(const cugl__copy_side *dst, const cugl__copy_side *src,
                               cugl_stream *stream, cugl_memory_resource *allocator,
                               cugl_blocking blocking, const char *who);

#endif /* CUGL_CORE_INTERNAL_H */
