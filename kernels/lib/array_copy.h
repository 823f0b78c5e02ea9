/*
 * array_copy.h - the parameters of cugl's array copy kernels, shared by the
 * device code (array_copy.cu) and the host code that picks them
 * (lib/core/array_copy.c). Plain C, the same layout on both sides.
 */
#ifndef CUGL_KERNELS_ARRAY_COPY_H
#define CUGL_KERNELS_ARRAY_COPY_H

#include <stdint.h>

/* How the array is addressed; z is the driver's third copy coordinate:
 * depth, layer, face, or layer * 6 + face. */
enum {
    CUGL_ARRAY_KIND_1D,
    CUGL_ARRAY_KIND_2D,
    CUGL_ARRAY_KIND_3D,
    CUGL_ARRAY_KIND_1D_LAYERED,
    CUGL_ARRAY_KIND_2D_LAYERED,
    CUGL_ARRAY_KIND_CUBE,
    CUGL_ARRAY_KIND_CUBE_LAYERED,
};

/* Threads per block. A block covers a tile of the region: at most 64 bytes
 * of a row (the width of the arrays' 64 x 8 byte tiles) times as many rows
 * as the threads allow, so that each tile is written whole by one block. */
#define CUGL_ARRAY_COPY_THREADS 256

/* Elements each thread moves along a row, a block's width apart, all loads
 * before all stores: narrow elements need more in flight. */
#define CUGL_ARRAY_COPY_VEC(size) ((size) <= 2 ? 8 : (size) == 4 ? 4 : (size) == 8 ? 2 : 1)

typedef struct cugl_array_copy_params {
    uint64_t object;   /* the array's texture or surface object */
    uint64_t linear;   /* byte address of the region's first element */
    uint64_t pitch;    /* bytes from one row of the linear side to the next */
    uint64_t slice;    /* bytes from one slice (z) to the next */
    int32_t x0, y0, z0; /* the region's offset in the array, in elements */
    int32_t width, height, depth; /* the region's extent */
    int32_t kind;      /* CUGL_ARRAY_KIND_* */
    int32_t face_size; /* cube maps: the width of a face */
} cugl_array_copy_params;

#endif /* CUGL_KERNELS_ARRAY_COPY_H */
