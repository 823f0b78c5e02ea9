/*
 * pixels.c - the pixel work on either side of the reduce-scatter: packing a
 * framebuffer's colour and depth into one 64-bit word a pixel, the two
 * operators MPI applies, and the colour taken back out for the gather.
 *
 * Depth mode packs a pixel as depth << 32 | colour, the colour read as the
 * number R + 256 G + 65536 B + 2^24 A. The nearer pixel is then simply the
 * smaller word, and where depths are equal the smaller colour wins: one
 * comparison, commutative and associative, so MPI may reduce in any order
 * (its schedules for commutative operators are its best ones) and still
 * give the same composite for any number of ranks.
 *
 * MPI calls the operators with no argument of ours, so what they combine
 * is counted in one process-wide counter (atomic: MPI may apply an
 * operator on a progress thread).
 */
#include <stdatomic.h>

#include "mpi_internal.h"

static _Atomic uint64_t reduced_bytes;

uint64_t cugl__mpi_reduced_bytes(void) { return atomic_load(&reduced_bytes); }

static void op_depth(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const uint64_t *a = in;
    uint64_t *b = inout;
    int n = *len;
    for (int i = 0; i < n; i++)
        b[i] = a[i] < b[i] ? a[i] : b[i];
    atomic_fetch_add(&reduced_bytes, (uint64_t)n * sizeof(uint64_t));
}

static void op_add(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const uint8_t *a = in;
    uint8_t *b = inout;
    size_t n = (size_t)*len * 4;
    for (size_t i = 0; i < n; i++) {
        unsigned s = (unsigned)a[i] + b[i];
        b[i] = (uint8_t)(s > 255 ? 255 : s);
    }
    atomic_fetch_add(&reduced_bytes, (uint64_t)n);
}

cugl_status cugl__mpi_op_create(MPI_Op *op, cugl_mpi_composite_mode mode, const char *who)
{
    int err = MPI_Op_create(mode == CUGL_MPI_COMPOSITE_DEPTH ? op_depth : op_add, 1, op);
    if (err != MPI_SUCCESS)
        return cugl__mpi_fail(CUGL_ERROR_INVALID_STATE, who, err, "MPI_Op_create");
    return CUGL_OK;
}

void cugl__mpi_pack_depth(uint64_t *out, const uint8_t *rgba, const uint32_t *depth,
                          size_t pixels)
{
    for (size_t i = 0; i < pixels; i++) {
        const uint8_t *p = rgba + 4 * i;
        uint32_t colour = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                          (uint32_t)p[3] << 24;
        out[i] = (uint64_t)depth[i] << 32 | colour;
    }
}

void cugl__mpi_unpack_colour(uint8_t *out, const uint64_t *in, size_t pixels)
{
    /* In place, front to back: pixel i's 4 bytes go where pixel i / 2's
     * word was, which has been read already. */
    for (size_t i = 0; i < pixels; i++) {
        uint64_t w = in[i];
        out[4 * i + 0] = (uint8_t)w;
        out[4 * i + 1] = (uint8_t)(w >> 8);
        out[4 * i + 2] = (uint8_t)(w >> 16);
        out[4 * i + 3] = (uint8_t)(w >> 24);
    }
}
