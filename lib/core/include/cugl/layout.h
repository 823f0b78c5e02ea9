/**
 * @file cugl/layout.h
 * Strided layouts: how an n-dimensional index maps to memory.
 *
 * The C form of cuda.core's StridedLayout. A layout is a plain value: shape
 * and strides (in elements, NumPy order: axis 0 is the slowest in C order),
 * an item size in bytes and a slice offset in elements. Element
 * (i0, ..., in-1) lies at byte
 *
 *     (slice_offset + i0 * strides[0] + ... + in-1 * strides[n-1]) * itemsize
 *
 * from the start of the memory the layout describes. Operations never
 * change their input: each writes a new layout to `out` (which may be the
 * input itself) or leaves `out` untouched and returns a status with a
 * message. All index arithmetic is checked for overflow: a layout whose
 * offsets or size in bytes do not fit in int64_t is refused.
 *
 * Read the fields freely; build layouts only with the functions here, which
 * check what they produce. Functions that take a layout check it again.
 * @thread_safety Layouts are values; every function is reentrant.
 */
#ifndef CUGL_LAYOUT_H
#define CUGL_LAYOUT_H

#include "cugl/error.h"

CUGL_BEGIN_DECLS

/** The most axes a layout has. */
#define CUGL_LAYOUT_MAX_NDIM 64

/** A strided layout: the mapping above. */
typedef struct cugl_layout {
    int ndim;                              /**< axes, 0 (a scalar) to CUGL_LAYOUT_MAX_NDIM */
    int64_t shape[CUGL_LAYOUT_MAX_NDIM];   /**< extents, ndim of them */
    int64_t strides[CUGL_LAYOUT_MAX_NDIM]; /**< in elements, ndim of them */
    int64_t itemsize;                      /**< bytes per element, > 0 */
    int64_t slice_offset;                  /**< in elements */
} cugl_layout;

/** Orders of dense layouts. */
typedef enum cugl_order {
    CUGL_ORDER_C = 0,      /**< row-major: the last axis is the fastest */
    CUGL_ORDER_F = 1,      /**< column-major: the first axis is the fastest */
    CUGL_ORDER_K = 2,      /**< keep: the stride order of a given layout */
    CUGL_ORDER_CUSTOM = 3, /**< the permutation given: its last axis is the fastest */
} cugl_order;

/** One entry of a slicing: a range of an axis, or one index that drops it. */
typedef struct cugl_slice {
    bool is_index;  /**< true: take element `index` and drop the axis */
    int64_t index;  /**< negative counts from the end */
    bool has_start; /**< false: the start of the axis in the step's direction */
    bool has_stop;  /**< false: its end in the step's direction */
    int64_t start;  /**< Python semantics: negative counts from the end, clamped */
    int64_t stop;   /**< the end, excluded; as start */
    int64_t step;   /**< nonzero; negative walks backwards */
} cugl_slice;

/** The whole axis, ::1. */
#define CUGL_SLICE_ALL ((cugl_slice){.step = 1})
/** start:stop:step with both ends given: a, b and s. */
#define CUGL_SLICE(a, b, s) \
    ((cugl_slice){.has_start = true, .start = (a), .has_stop = true, .stop = (b), .step = (s)})
/** The whole axis with step s, as Python's slice(None, None, s). */
#define CUGL_SLICE_STEP(s) ((cugl_slice){.step = (s)})
/** The one index i: the axis is dropped. */
#define CUGL_SLICE_INDEX(i) ((cugl_slice){.is_index = true, .index = (i)})

/**
 * A layout from a shape, strides in elements (NULL: C order, dense) and an
 * item size. ndim 0 is a scalar.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; ndim outside [0, 64]; a
 *   negative extent; itemsize <= 0; offsets or sizes that overflow int64).
 * @thread_safety Any thread: layouts are values the caller owns.
 * @param[out] out receives the layout; untouched on failure.
 * @param ndim the number of axes, 0 to CUGL_LAYOUT_MAX_NDIM.
 * @param shape ndim extents; may be NULL when ndim is 0.
 * @param strides ndim strides in elements, or NULL for a dense C-order layout.
 * @param itemsize bytes per element, positive.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_layout_init(cugl_layout *out, int ndim, const int64_t *shape,
                                      const int64_t *strides, int64_t itemsize);

/**
 * The same from strides in bytes, which must be multiples of itemsize.
 * @errors as cugl_layout_init; a byte stride not divisible by itemsize.
 * @thread_safety Any thread: layouts are values the caller owns.
 * @param[out] out receives the layout; untouched on failure.
 * @param ndim the number of axes, 0 to CUGL_LAYOUT_MAX_NDIM.
 * @param shape ndim extents.
 * @param byte_strides ndim strides in bytes, or NULL for a dense C-order layout.
 * @param itemsize bytes per element, positive.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_layout_init_bytes(cugl_layout *out, int ndim, const int64_t *shape,
                                            const int64_t *byte_strides, int64_t itemsize);

/**
 * A dense layout (no gaps, slice offset 0) of `shape`, in C order, F order
 * or the axis permutation `perm` (CUGL_ORDER_CUSTOM; perm[ndim-1] is the
 * fastest axis). `perm` is ignored for the other orders.
 * @errors as cugl_layout_init; CUGL_ORDER_K (needs a layout: use
 *   cugl_layout_dense_like); a perm that is not a permutation.
 * @thread_safety Any thread: layouts are values the caller owns.
 * @param[out] out receives the layout; untouched on failure.
 * @param ndim the number of axes.
 * @param shape ndim extents.
 * @param itemsize bytes per element.
 * @param order CUGL_ORDER_C, CUGL_ORDER_F or CUGL_ORDER_CUSTOM.
 * @param perm with CUGL_ORDER_CUSTOM, ndim axes from the slowest to the fastest; else ignored (may
 *   be NULL).
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_layout_dense(cugl_layout *out, int ndim, const int64_t *shape,
                                       int64_t itemsize, cugl_order order, const int *perm);

/**
 * A dense layout with the shape and item size of `other`, in the order
 * asked; CUGL_ORDER_K keeps `other`'s stride order.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; an invalid layout; an order that
 *   is not a cugl_order; a perm that is not a permutation).
 * @thread_safety Any thread: layouts are values the caller owns.
 * @param[out] out receives the layout (it may be the input itself); untouched on failure.
 * @param other the layout whose shape and item size are taken.
 * @param order the order, CUGL_ORDER_K for other's.
 * @param perm with CUGL_ORDER_CUSTOM, the axes from the slowest to the fastest; else ignored.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_layout_dense_like(cugl_layout *out, const cugl_layout *other,
                                            cugl_order order, const int *perm);

/**
 * Same as cugl_layout_dense_like(out, layout, order, perm).
 * @errors as cugl_layout_dense_like.
 * @thread_safety Any thread: layouts are values the caller owns.
 * @param[out] out receives the layout (it may be the input itself); untouched on failure.
 * @param layout the layout.
 * @param order the order, CUGL_ORDER_K for the layout's own.
 * @param perm with CUGL_ORDER_CUSTOM, the axes from the slowest to the fastest; else ignored.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_layout_to_dense(cugl_layout *out, const cugl_layout *layout,
                                          cugl_order order, const int *perm);

/* --- properties (of a valid layout; an invalid one answers 0 / false) --- */

/**
 * The number of elements (1 for a scalar, 0 if an extent is 0).
 * @thread_safety Any thread: layouts are values the caller owns.
 * @param layout the layout.
 * @return the number of elements; 0 for NULL or an invalid layout.
 */
CUGL_API int64_t cugl_layout_volume(const cugl_layout *layout);

/**
 * Strides in bytes, written to `byte_strides` (ndim entries).
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; an invalid layout; a stride in
 *   bytes that overflows int64).
 * @thread_safety Any thread: layouts are values the caller owns.
 * @param layout the layout.
 * @param[out] byte_strides receives ndim strides in bytes.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_layout_strides_in_bytes(const cugl_layout *layout,
                                                  int64_t *byte_strides);

/**
 * The slice offset in bytes.
 * @thread_safety Any thread: layouts are values the caller owns.
 * @param layout the layout.
 * @return slice_offset * itemsize; 0 for NULL or an invalid layout.
 */
CUGL_API int64_t cugl_layout_slice_offset_in_bytes(const cugl_layout *layout);

/**
 * The axes from the slowest to the fastest stride (by magnitude; ties keep
 * axis order), written to `axes` (ndim entries).
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; an invalid layout).
 * @thread_safety Any thread: layouts are values the caller owns.
 * @param layout the layout.
 * @param[out] axes receives ndim axis numbers.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_layout_stride_order(const cugl_layout *layout, int *axes);

/**
 * Whether no two indices share an offset. A sufficient test: it may answer
 * false for unusual hand-made strides that happen to be unique, never true
 * for a layout that is not.
 * @thread_safety Any thread: layouts are values the caller owns.
 * @param layout the layout.
 * @return true when no two indices share an offset (as the test can tell); false for NULL.
 */
CUGL_API bool cugl_layout_is_unique(const cugl_layout *layout);

/* Contiguity ignores the strides of axes of extent 1, as NumPy does; a
 * layout of volume 0 or 1 is contiguous in every order. */
/**
 * Whether the layout is contiguous in C order (row-major).
 * @thread_safety Any thread: layouts are values the caller owns.
 * @param layout the layout.
 * @return true if so; false for NULL or an invalid layout.
 */
CUGL_API bool cugl_layout_is_contiguous_c(const cugl_layout *layout);
/**
 * Whether the layout is contiguous in Fortran order (column-major).
 * @thread_safety Any thread: layouts are values the caller owns.
 * @param layout the layout.
 * @return true if so; false for NULL or an invalid layout.
 */
CUGL_API bool cugl_layout_is_contiguous_f(const cugl_layout *layout);
/**
 * Contiguous in some axis order (a permutation of a dense layout).
 * @thread_safety Any thread: layouts are values the caller owns.
 * @param layout the layout.
 * @return true if so; false for NULL or an invalid layout.
 */
CUGL_API bool cugl_layout_is_contiguous_any(const cugl_layout *layout);
/**
 * Contiguous in some order and a slice offset of 0.
 * @thread_safety Any thread: layouts are values the caller owns.
 * @param layout the layout.
 * @return true if so; false for NULL or an invalid layout.
 */
CUGL_API bool cugl_layout_is_dense(const cugl_layout *layout);

/**
 * The smallest and largest element offsets (including the slice offset);
 * (0, -1) for a layout of volume 0.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL layout; both outputs NULL; an invalid layout).
 * @thread_safety Any thread: layouts are values the caller owns.
 * @param layout the layout.
 * @param[out] min_offset receives the smallest element offset, in elements; may be NULL.
 * @param[out] max_offset receives the largest element offset, in elements; may be NULL.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_layout_offset_bounds(const cugl_layout *layout, int64_t *min_offset,
                                               int64_t *max_offset);

/**
 * Bytes memory must hold for every element: (max_offset + 1) * itemsize,
 * 0 for volume 0.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; an invalid layout; an element lies
 *   at a negative offset: the size is ambiguous).
 * @thread_safety Any thread: layouts are values the caller owns.
 * @param layout the layout.
 * @param[out] size receives the size in bytes.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_layout_required_size_in_bytes(const cugl_layout *layout,
                                                        int64_t *size);

/**
 * Whether shape, strides, item size and slice offset are equal.
 * @thread_safety Any thread: layouts are values the caller owns.
 * @param a a layout.
 * @param b another.
 * @return true if they are equal; false if not, or either is NULL.
 */
CUGL_API bool cugl_layout_equal(const cugl_layout *a, const cugl_layout *b);

/* --- operations: each writes a new layout, `out` may alias the input --- */

/**
 * The same elements with a new shape, in C index order, without copying:
 * one extent may be -1 (inferred). Refused when the strides cannot express
 * the new shape (NumPy's reshape with copy=False).
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; an invalid layout; ndim outside
 *   [0, 64]; a negative extent other than one -1; another volume; strides that
 *   cannot express the new shape).
 * @thread_safety Any thread: layouts are values the caller owns.
 * @param[out] out receives the layout (it may be the input itself); untouched on failure.
 * @param layout the layout.
 * @param ndim the new number of axes.
 * @param shape ndim new extents; one may be -1.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_layout_reshaped(cugl_layout *out, const cugl_layout *layout,
                                          int ndim, const int64_t *shape);

/**
 * Axes reordered: axis i of the result is axis axes[i] of the input.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; an invalid layout; axes not a
 *   permutation of the layout's axes).
 * @thread_safety Any thread: layouts are values the caller owns.
 * @param[out] out receives the layout (it may be the input itself); untouched on failure.
 * @param layout the layout.
 * @param axes ndim axis numbers, a permutation.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_layout_permuted(cugl_layout *out, const cugl_layout *layout,
                                          const int *axes);

/**
 * Axes start..end (inclusive; negative counts from the end) merged into
 * one, where the strides allow it without a copy. A scalar becomes shape (1).
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; an invalid layout; an axis outside
 *   the layout; start after end; axes whose strides do not merge).
 * @thread_safety Any thread: layouts are values the caller owns.
 * @param[out] out receives the layout (it may be the input itself); untouched on failure.
 * @param layout the layout.
 * @param start_axis the first axis to merge; negative counts from the end.
 * @param end_axis the last axis to merge; negative counts from the end.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_layout_flattened(cugl_layout *out, const cugl_layout *layout,
                                           int start_axis, int end_axis);

/**
 * Axes of extent 1 removed; volume 0 gives shape (0) with stride 0.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; an invalid layout).
 * @thread_safety Any thread: layouts are values the caller owns.
 * @param[out] out receives the layout (it may be the input itself); untouched on failure.
 * @param layout the layout.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_layout_squeezed(cugl_layout *out, const cugl_layout *layout);

/**
 * Axes of extent 1 inserted at the given positions of the result (negative
 * counts from the end of the result), as NumPy's expand_dims.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; an invalid layout; naxes negative
 *   or a result of more than 64 axes; a position out of range or repeated).
 * @thread_safety Any thread: layouts are values the caller owns.
 * @param[out] out receives the layout (it may be the input itself); untouched on failure.
 * @param layout the layout.
 * @param naxes the number of axes to insert, >= 0.
 * @param axes naxes positions in the result, each once.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_layout_unsqueezed(cugl_layout *out, const cugl_layout *layout,
                                            int naxes, const int *axes);

/**
 * Broadcast to `shape` (NumPy rules, aligned at the last axis): extents of 1
 * stretch with stride 0; new leading axes have stride 0.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; an invalid layout; ndim below the
 *   layout's or above 64; a negative extent; an extent the layout's cannot stretch to).
 * @thread_safety Any thread: layouts are values the caller owns.
 * @param[out] out receives the layout (it may be the input itself); untouched on failure.
 * @param layout the layout.
 * @param ndim the result's number of axes, at least the layout's.
 * @param shape ndim extents.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_layout_broadcast_to(cugl_layout *out, const cugl_layout *layout,
                                              int ndim, const int64_t *shape);

/**
 * The same bytes seen with another item size, packing or unpacking along
 * `axis` (negative counts from the end), whose stride must be 1. Packing
 * needs the axis extent, the other strides and the slice offset divisible by
 * the ratio and `data_ptr` (the memory's address, 0 if unknown) aligned to
 * the new item size. keep_dim false drops the axis when packing leaves it of
 * extent 1.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; an invalid layout; a condition above
 *   not met, with the reason).
 * @thread_safety Any thread: layouts are values the caller owns.
 * @param[out] out receives the layout (it may be the input itself); untouched on failure.
 * @param layout the layout.
 * @param itemsize the new item size in bytes, positive.
 * @param data_ptr the memory's address, for the alignment check; 0 if unknown.
 * @param axis the axis to pack or unpack along; negative counts from the end.
 * @param keep_dim false to drop the axis when packing leaves it of extent 1.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_layout_repacked(cugl_layout *out, const cugl_layout *layout,
                                          int64_t itemsize, uint64_t data_ptr, int axis,
                                          bool keep_dim);

/**
 * The largest item size, at most `max_itemsize`, that cugl_layout_repacked
 * accepts for this layout along `axis` (at least the layout's own).
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; an invalid layout; max_itemsize
 *   below the layout's item size; an axis outside the layout).
 * @thread_safety Any thread: layouts are values the caller owns.
 * @param[out] itemsize receives the item size: the layout's own, doubled for as long as
 *   cugl_layout_repacked accepts it and it stays within max_itemsize.
 * @param layout the layout.
 * @param max_itemsize the largest item size to consider, at least the layout's.
 * @param data_ptr the memory's address, for the alignment check; 0 if unknown.
 * @param axis the axis to pack along (within the layout's axes); negative counts from the end.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_layout_max_compatible_itemsize(int64_t *itemsize,
                                                         const cugl_layout *layout,
                                                         int64_t max_itemsize,
                                                         uint64_t data_ptr, int axis);

/**
 * Basic indexing: one entry per leading axis (fewer than ndim leaves the
 * rest whole); ranges keep an axis, indices drop it. A range of length 0
 * gives a layout whose strides are all 0.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; an invalid layout; nslices negative
 *   or above ndim; an index out of range; a step of 0).
 * @thread_safety Any thread: layouts are values the caller owns.
 * @param[out] out receives the layout (it may be the input itself); untouched on failure.
 * @param layout the layout.
 * @param nslices the number of entries, at most ndim.
 * @param slices nslices ranges or indices, one per leading axis.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_layout_sliced(cugl_layout *out, const cugl_layout *layout,
                                        int nslices, const cugl_slice *slices);

/**
 * Check a layout built by hand; the message says what is wrong.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; what is wrong with the layout).
 * @thread_safety Any thread: layouts are values the caller owns.
 * @param layout the layout.
 * @return CUGL_OK for a valid layout, else CUGL_ERROR_INVALID_ARGUMENT with what is wrong.
 */
CUGL_API cugl_status cugl_layout_validate(const cugl_layout *layout);

CUGL_END_DECLS

#endif /* CUGL_LAYOUT_H */
