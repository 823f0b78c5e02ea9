/*
 * internal.h - what the files of libcugl share and users never see.
 */
#ifndef CUGL_CORE_INTERNAL_H
#define CUGL_CORE_INTERNAL_H

#include <stdatomic.h>

#include "cugl/cugl.h"
#include "driver.h"

#if defined(__GNUC__)
#define CUGL__PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define CUGL__PRINTF(fmt, args)
#endif

/*
 * Record a failure: sets the thread's last error to "<who>: <message>",
 * calls the error callback and returns `status`.
 */
cugl_status cugl__fail(cugl_status status, const char *who, const char *fmt, ...)
    CUGL__PRINTF(3, 4);

/* The same, keeping the CUresult that caused it. */
cugl_status cugl__fail_cu(cugl_status status, int cu_result, const char *who,
                          const char *fmt, ...) CUGL__PRINTF(4, 5);

/* Argument checks that return from the calling function on failure. */
#define CUGL__CHECK_ARG(cond, ...)                                                  \
    do {                                                                            \
        if (!(cond))                                                                \
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, __VA_ARGS__);  \
    } while (0)

#define CUGL__CHECK_NOT_NULL(p) CUGL__CHECK_ARG((p) != NULL, "%s is NULL", #p)

#define CUGL__TRY(expr)                    \
    do {                                   \
        cugl_status cugl__st = (expr);     \
        if (cugl__st != CUGL_OK)           \
            return cugl__st;               \
    } while (0)

/* Reference counts: every object starts at 1; immortal objects use -1. */
typedef struct cugl__ref {
    atomic_int count;
} cugl__ref;

static inline void cugl__ref_init(cugl__ref *r) { atomic_init(&r->count, 1); }
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
    return atomic_fetch_sub_explicit(&r->count, 1, memory_order_acq_rel) == 1;
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
    CUmemLocation preferred; /* managed: advised location */
    size_t granularity;      /* exportable: allocation granularity */
};

/* Allocate / free through a resource (size 0 and ptr 0 need no driver). */
cugl_status cugl__mr_allocate(cugl_memory_resource *mr, size_t size, cugl_stream *stream,
                              uint64_t *ptr, const char *who);
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
    /* Called once at close for buffers that belong to something else (a
     * graphics mapping, an imported tensor); then `owner` is dropped. */
    void (*on_close)(void *owner, cugl_stream *stream);
    void (*owner_release)(void *owner);
    void *owner;
};

/* Check a buffer argument: not NULL, not closed. */
cugl_status cugl__buffer_check(const cugl_buffer *buffer, const char *who);

/*
 * A new buffer over [ptr, ptr + size). With `mr` it owns the memory (takes a
 * reference to mr and, if not NULL, to `stream` as deallocation stream).
 * Accessibility comes from `mr`, or from the driver when mr is NULL.
 */
cugl_status cugl__buffer_new(cugl_buffer **out, uint64_t ptr, size_t size,
                             cugl_memory_resource *mr, cugl_stream *stream, const char *who);

#endif /* CUGL_CORE_INTERNAL_H */
