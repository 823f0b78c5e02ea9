/*
 * strided_copy.h - the parameters of cugl's strided copy kernels, shared by
 * the device code (strided_copy.cu) and the host code that plans a copy
 * (lib/core/copy.c). Plain C, the same layout on both sides.
 */
#ifndef CUGL_KERNELS_STRIDED_COPY_H
#define CUGL_KERNELS_STRIDED_COPY_H

#include <stdint.h>

/* Dimensions a launch handles; the host loops over any beyond these. */
#define CUGL_COPY_MAX_DIMS 12

/* Threads per block of the rows kernel. */
#define CUGL_COPY_THREADS 256

/* Elements each thread of the rows kernel moves along a row, all loads
 * before all stores; the host sizes a block's chunk of a row by it. */
#define CUGL_COPY_UNROLL 4

/*
 * The transpose kernel: square tiles of 64 elements a side (32 for 16-byte
 * elements, whose 64-tile would not fit the static shared memory), 512
 * threads, and two tiles per block along b. Measured on an H200 on a
 * 16384^2 float transpose: 0.82 of a contiguous copy's speed, against 0.48
 * for 32-tiles of 256 threads, one per block, with checked indices.
 */
#define CUGL_COPY_TRANSPOSE_THREADS 512
#define CUGL_COPY_TILE(itemsize) ((itemsize) <= 8 ? 64 : 32)
#define CUGL_COPY_TILES_PER_BLOCK 2

typedef struct cugl_copy_params {
    uint64_t src; /* byte address of element (0, ..., 0) */
    uint64_t dst;
    int64_t extent[CUGL_COPY_MAX_DIMS];
    int64_t src_stride[CUGL_COPY_MAX_DIMS]; /* in elements */
    int64_t dst_stride[CUGL_COPY_MAX_DIMS];
    /* rows: the product of the extents of dims 0 .. ndim-2.
     * transpose: the product of the extents of the dims other than a, b. */
    int64_t outer;
    int32_t ndim;
    int32_t a;   /* transpose: the dimension the destination is contiguous in */
    int32_t b;   /* transpose: the dimension the source is contiguous in */
    int32_t tpr; /* rows: threads per row, a power of two dividing the block */
} cugl_copy_params;

#endif /* CUGL_KERNELS_STRIDED_COPY_H */
