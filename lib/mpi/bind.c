/*
 * bind.c - which GPU a rank takes, and whether MPI takes device pointers.
 */
#include <stdio.h>
#include <string.h>

#include "mpi_internal.h"

#if defined(CUGL_MPI_HAVE_MPI_EXT)
#include <mpi-ext.h> /* after mpi.h, which it needs */
#endif

CUGL_API cugl_status cugl_mpi_bind(cugl_mpi_binding *out, MPI_Comm comm,
                                   const cugl_mpi_bind_desc *desc)
{
    if (!out)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "out is NULL");
    *out = (cugl_mpi_binding){0};
    cugl_status st = cugl__mpi_check_ready(__func__);
    if (st != CUGL_OK)
        return st;
    if (comm == MPI_COMM_NULL)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "comm is MPI_COMM_NULL");
    cugl_mpi_bind_desc d = desc ? *desc : (cugl_mpi_bind_desc){0};

    /* Every rank takes part in the split before anything else can fail, so
     * no rank is left waiting in it. */
    MPI_Comm local = MPI_COMM_NULL;
    int err = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
    if (err != MPI_SUCCESS)
        return cugl__mpi_fail(CUGL_ERROR_INVALID_STATE, __func__, err,
                              "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)");
    MPI_Comm_rank(comm, &out->rank);
    MPI_Comm_size(comm, &out->size);
    MPI_Comm_rank(local, &out->local_rank);
    MPI_Comm_size(local, &out->local_size);
    MPI_Comm_free(&local);

    if (d.device_count < 0)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                                 "device_count %d is negative", d.device_count);
    int count = d.device_count;
    if (count == 0) {
        st = cugl_device_count(&count);
        if (st != CUGL_OK)
            return cugl__fail(st, __func__, "counting the devices: %s", cugl_last_error());
        if (count == 0)
            return cugl__fail(CUGL_ERROR_NO_DEVICE, __func__,
                                     "the CUDA driver sees no device for local rank %d",
                                     out->local_rank);
    }
    if (d.fixed && (d.device < 0 || d.device >= count))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                                 "device %d is not one of the %d devices (0 .. %d)", d.device,
                                 count, count - 1);
    out->device = d.fixed ? d.device : out->local_rank % count;
    return CUGL_OK;
}

/* The first line of the library's version text, into out. */
static void library_name(char *out, size_t size)
{
    char text[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0;
    if (MPI_Get_library_version(text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "an MPI library");
    text[strcspn(text, "\n,")] = '\0';
    snprintf(out, size, "%.*s", size > 0 ? (int)size - 1 : 0, text); /* cut to fit */
}

CUGL_API cugl_status cugl_mpi_cuda_aware(bool *aware, char *reason, size_t reason_size)
{
    if (!aware)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "aware is NULL");
    if (!reason && reason_size)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                                 "reason is NULL with reason_size %zu", reason_size);
    char name[128];
    library_name(name, sizeof name);
#if defined(OMPI_HAVE_MPI_EXT_CUDA) && OMPI_HAVE_MPI_EXT_CUDA
    *aware = MPIX_Query_cuda_support() != 0;
    if (reason_size)
        snprintf(reason, reason_size,
                 "%s: MPIX_Query_cuda_support() says %s: device buffers %s", name,
                 *aware ? "yes" : "no",
                 *aware ? "may go to MPI directly" : "go through host memory");
#else
    *aware = false;
    if (reason_size)
        snprintf(reason, reason_size,
                 "%s: no run-time query of CUDA support (MPIX_Query_cuda_support in "
                 "<mpi-ext.h>) was built in, so it is taken for not CUDA-aware: device buffers "
                 "go through host memory",
                 name);
#endif
    return CUGL_OK;
}
