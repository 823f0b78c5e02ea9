/**
 * @file cugl/view.h
 * Strided memory views: typed, strided windows onto memory,
 * and copies between them for any strides.
 *
 * The C form of cuda.core's StridedMemoryView. A view is a buffer, a layout
 * (cugl/layout.h) and a dtype; it holds a reference to the buffer (or to the
 * DLPack tensor it came from) for as long as it lives. Unlike cuda.core,
 * copies between views work: host to device, device to host, device to
 * device (and host to host), with any strides on either side.
 */
#ifndef CUGL_VIEW_H
#define CUGL_VIEW_H

#include "cugl/error.h"
#include "cugl/layout.h"

CUGL_BEGIN_DECLS

struct DLManagedTensor;          /* <dlpack/dlpack.h> */
struct DLManagedTensorVersioned; /* <dlpack/dlpack.h>, DLPack 1.0 and newer */

/** A strided view of a buffer: a layout, a dtype and a read-only flag. */
typedef struct cugl_view cugl_view;

/** Kinds of element, with DLPack's type codes. */
typedef enum cugl_dtype_code {
    CUGL_DTYPE_INT = 0,    /**< signed integers */
    CUGL_DTYPE_UINT = 1,   /**< unsigned integers */
    CUGL_DTYPE_FLOAT = 2,  /**< IEEE floating point */
    CUGL_DTYPE_OPAQUE = 3, /**< bytes without a type */
    CUGL_DTYPE_BFLOAT = 4,  /**< bfloat16 */
    CUGL_DTYPE_COMPLEX = 5, /**< complex floating point */
    CUGL_DTYPE_BOOL = 6,    /**< booleans */
} cugl_dtype_code;

/**
 * An element type: `bits` per lane (a multiple of 8), `lanes` per element.
 * A zero-initialised dtype means "untyped": opaque bytes of the layout's
 * item size.
 */
typedef struct cugl_dtype {
    uint8_t code; /**< cugl_dtype_code */
    uint8_t bits;   /**< bits a lane, a multiple of 8 */
    uint16_t lanes; /**< lanes an element (1 for scalars) */
} cugl_dtype;

/** A one-lane dtype of code c and b bits. */
#define CUGL_DTYPE_OF(c, b) ((cugl_dtype){(uint8_t)(c), (uint8_t)(b), 1})
#define CUGL_DTYPE_U8 CUGL_DTYPE_OF(CUGL_DTYPE_UINT, 8)    /**< uint8 */
#define CUGL_DTYPE_I32 CUGL_DTYPE_OF(CUGL_DTYPE_INT, 32)   /**< int32 */
#define CUGL_DTYPE_U32 CUGL_DTYPE_OF(CUGL_DTYPE_UINT, 32)  /**< uint32 */
#define CUGL_DTYPE_F16 CUGL_DTYPE_OF(CUGL_DTYPE_FLOAT, 16) /**< float16 */
#define CUGL_DTYPE_F32 CUGL_DTYPE_OF(CUGL_DTYPE_FLOAT, 32) /**< float32 */
#define CUGL_DTYPE_F64 CUGL_DTYPE_OF(CUGL_DTYPE_FLOAT, 64) /**< float64 */

/**
 * A view of `buffer` through `layout`, whose offsets must lie within the
 * buffer (none negative). The dtype's size must equal the layout's item
 * size; a zero dtype is untyped. No synchronisation is performed.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; invalid layout; dtype size
 *   differs from the item size; the layout needs more bytes than the buffer
 *   has, both sizes in the message; negative offsets), CUGL_ERROR_CLOSED.
 * @pointer_lifetime The caller owns one reference; the view holds the buffer.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param[out] out receives the view (it holds a reference to the buffer); NULL on failure.
 * @param buffer the memory.
 * @param layout how indices map to it.
 * @param dtype the element type; zero for untyped.
 * @param readonly true to refuse copies into the view.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_view_from_buffer(cugl_view **out, cugl_buffer *buffer,
                                           const cugl_layout *layout, cugl_dtype dtype,
                                           bool readonly);

/**
 * A new view of the same memory with another layout and dtype (NULL layout:
 * keep it; zero dtype: keep the view's when the item size is unchanged).
 * The result is read-only when this view is.
 * @errors as cugl_view_from_buffer.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param[out] out receives the new view of the same buffer; NULL on failure.
 * @param view the view whose buffer it sees.
 * @param layout the new layout, over the same buffer; NULL keeps the view's.
 * @param dtype the new element type; zero keeps the view's when its size still fits.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_view_view(cugl_view **out, cugl_view *view, const cugl_layout *layout,
                                    cugl_dtype dtype);

/** How a DLPack tensor is imported. Zero-initialise for the defaults. */
typedef struct cugl_dlpack_import_desc {
    /** The stream that will use the data. Where the producer's stream is
     * given too, an event recorded on it is waited on by this one, so the
     * producer's pending work comes first. Required for CUDA tensors unless
     * no_sync is set: without it the ordering would be a guess. */
    cugl_stream *consumer_stream;
    cugl_stream *producer_stream; /**< NULL: the producer made the data ready */
    bool no_sync;                 /**< the caller orders the work (cuda.core's -1) */
    bool readonly;                /**< import read-only even if writable */
} cugl_dlpack_import_desc;

/**
 * A view of a DLPack tensor (devices kDLCPU, kDLCUDA, kDLCUDAHost,
 * kDLCUDAManaged). The view takes ownership: its last release calls the
 * tensor's deleter. On failure the tensor stays the caller's.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; ndim above 64; negative
 *   extents; a dtype that is not whole bytes; a CUDA tensor without a
 *   consumer stream and without no_sync), CUGL_ERROR_NOT_SUPPORTED (another
 *   device type; a versioned tensor of another major version),
 *   CUGL_ERROR_CUDA.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param[out] out receives the view; NULL on failure.
 * @param tensor the tensor; the view takes it over on success only.
 * @param desc the streams and flags, or NULL (CPU tensors need none).
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_view_from_dlpack(cugl_view **out, struct DLManagedTensor *tensor,
                                           const cugl_dlpack_import_desc *desc);

/**
 * The same for DLPack 1.x's versioned tensor; its read-only flag is kept.
 * @errors as cugl_view_from_dlpack.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param[out] out receives the view; NULL on failure.
 * @param tensor the tensor; the view takes it over on success only.
 * @param desc the streams and flags, or NULL (CPU tensors need none).
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_view_from_dlpack_versioned(cugl_view **out,
                                                     struct DLManagedTensorVersioned *tensor,
                                                     const cugl_dlpack_import_desc *desc);

/**
 * Export the view as a DLPack tensor, zero-copy: shape and strides in
 * elements, the data pointer of the buffer with the slice offset as
 * byte_offset. The tensor holds a reference to the view; its deleter drops
 * it. A read-only view cannot be exported unversioned (DLPack 0.x has no
 * read-only flag): use the versioned export.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; read-only view), CUGL_ERROR_CLOSED,
 *   CUGL_ERROR_NOT_SUPPORTED (an untyped view: DLPack needs a dtype),
 *   CUGL_ERROR_OUT_OF_MEMORY.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param[out] out receives the tensor; call its deleter when done.
 * @param view the view to export.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_view_to_dlpack(struct DLManagedTensor **out, cugl_view *view);

/** The same as DLPack 1.x's versioned tensor, with its read-only flag set
 * for read-only views.
 * @errors as cugl_view_to_dlpack.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param[out] out receives the tensor; call its deleter when done.
 * @param view the view to export.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_view_to_dlpack_versioned(struct DLManagedTensorVersioned **out,
                                                   cugl_view *view);

/** Whether a copy waits for its completion before returning. */
typedef enum cugl_blocking {
    CUGL_BLOCKING_DEFAULT = 0, /**< device to device: no; with host memory: yes */
    CUGL_BLOCKING_YES = 1,     /**< always wait for the copy to finish */
    CUGL_BLOCKING_NO = 2, /**< where it can; staging through host memory waits anyway */
} cugl_blocking;

/** Options of a copy; zero-initialise for the defaults. */
typedef struct cugl_view_copy_desc {
    /** Device temporaries come from here (NULL: the device's current pool). */
    cugl_memory_resource *allocator;
    cugl_blocking blocking; /**< whether the call returns only once the copy is done */
} cugl_view_copy_desc;

/**
 * Copy `src` into `dst`, on `stream`, element by element in index order:
 * the shapes must be equal and the dtypes' sizes too (broadcast a source
 * with cugl_layout_broadcast_to first). Either side may have any strides.
 * Contiguous pairs take one cuMemcpy, pitched ones cuMemcpy2D/3D, the rest
 * cugl's strided copy kernel (tiled through shared memory for transposes);
 * host memory that needs packing is packed by the CPU around one transfer.
 * Views on two devices (both initialized) take a stream of either: one
 * driver copy crosses between them (no peer access needed), and a side
 * that is not dense is gathered or scattered on its own device first, the
 * other device's on a stream of cugl's own that waits for `stream`'s work
 * so far and that `stream` waits for; its temporaries come from `desc`'s
 * allocator where it is that device's, else the device's current pool.
 * @param stream may be NULL for a copy between two views of host memory.
 * @param desc NULL for the defaults.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; `dst` read-only; shape or dtype
 *   mismatch; the stream on another device than the views', or for views
 *   on two devices on neither; device-to-device views whose memory
 *   overlaps, which would corrupt the data), CUGL_ERROR_INVALID_STATE (views
 *   on two devices, one not initialized), CUGL_ERROR_CLOSED,
 *   CUGL_ERROR_OUT_OF_MEMORY (temporaries), CUGL_ERROR_CUDA.
 * @thread_safety Any thread.
 * @param dst the view written.
 * @param src the view read.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_view_copy_from(cugl_view *dst, cugl_view *src, cugl_stream *stream,
                                         const cugl_view_copy_desc *desc);

/**
 * The same with the views the other way round: copies `src` into `dst`.
 * @errors as cugl_view_copy_from.
 * @thread_safety Any thread; an object must not be closed while another thread uses it.
 * @param src the view read.
 * @param dst the view written.
 * @param stream as cugl_view_copy_from.
 * @param desc as cugl_view_copy_from.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_view_copy_to(cugl_view *src, cugl_view *dst, cugl_stream *stream,
                                       const cugl_view_copy_desc *desc);

/**
 * The address of element (0, ..., 0): the buffer's plus the slice offset.
 * @thread_safety Any thread.
 * @param view the view, or NULL.
 * @return the address of element 0 (the buffer's plus the slice offset); 0 for NULL
 *   and once the buffer is closed.
 */
CUGL_API uint64_t cugl_view_ptr(const cugl_view *view);
/**
 * The device ordinal; -1 for memory only the host can reach.
 * @thread_safety Any thread.
 * @param view the view, or NULL.
 * @return its buffer's device ordinal; -1 for host memory and for NULL.
 */
CUGL_API int cugl_view_device_id(const cugl_view *view);
/**
 * Whether kernels can use its memory.
 * @thread_safety Any thread.
 * @param view the view, or NULL.
 * @return true if so; false for NULL.
 */
CUGL_API bool cugl_view_is_device_accessible(const cugl_view *view);
/**
 * Whether the CPU can use its memory by pointer.
 * @thread_safety Any thread.
 * @param view the view, or NULL.
 * @return true if so; false for NULL.
 */
CUGL_API bool cugl_view_is_host_accessible(const cugl_view *view);
/**
 * Whether copies into the view are refused.
 * @thread_safety Any thread.
 * @param view the view, or NULL.
 * @return true for a read-only view; false for NULL.
 */
CUGL_API bool cugl_view_readonly(const cugl_view *view);
/**
 * @thread_safety Any thread.
 * @param view the view, or NULL.
 * @return its element type; zero for NULL.
 */
CUGL_API cugl_dtype cugl_view_dtype(const cugl_view *view);
/**
 * The layout (shape, strides in elements, item size, slice offset).
 * @thread_safety Any thread.
 * @param view the view, or NULL.
 * @return its layout, held by the view; NULL for NULL.
 */
CUGL_API const cugl_layout *cugl_view_layout(const cugl_view *view);
/**
 * @thread_safety Any thread.
 * @param view the view, or NULL.
 * @return its number of axes; 0 for NULL.
 */
CUGL_API int cugl_view_ndim(const cugl_view *view);
/**
 * The shape of the view: its extent along each axis.
 * @thread_safety Any thread.
 * @param view the view, or NULL.
 * @return its extents (ndim of them), held by the view; NULL for NULL.
 */
CUGL_API const int64_t *cugl_view_shape(const cugl_view *view);
/**
 * @thread_safety Any thread.
 * @param view the view, or NULL.
 * @return its strides in elements (ndim of them), held by the view; NULL for NULL.
 */
CUGL_API const int64_t *cugl_view_strides(const cugl_view *view);
/**
 * The exporting object: the buffer given to cugl_view_from_buffer, or the
 * buffer cugl made around an imported DLPack tensor (which owns the tensor).
 * No reference is taken.
 * @thread_safety Any thread.
 * @param view the view, or NULL.
 * @return its buffer (no reference taken); NULL for NULL.
 */
CUGL_API cugl_buffer *cugl_view_buffer(const cugl_view *view);

/**
 * Take another reference.
 * @thread_safety Any thread: references are counted atomically.
 * @param view the view, or NULL.
 * @return view.
 */
CUGL_API cugl_view *cugl_view_retain(cugl_view *view);
/**
 * Drop a reference; the last one drops the view's buffer. NULL is a no-op.
 * @thread_safety Any thread: references are counted atomically.
 * @param view the view, or NULL (no-op).
 */
CUGL_API void cugl_view_release(cugl_view *view);

CUGL_END_DECLS

#endif /* CUGL_VIEW_H */
