/*
 * meet.c - MPI's errors as cugl's, and waiting for a collective with a
 * deadline.
 *
 * A blocking collective waits for ever for a rank that never comes. The
 * compositor's first collective of each call is non-blocking instead, and
 * is tested until it completes or the deadline passes: a rank that is
 * missing then gives a message on the ranks that came, not a hang. The
 * test spins for the first millisecond (a meeting of ranks that are all
 * there takes microseconds) and then sleeps 100 us between tests, so a
 * long wait costs no core.
 */
#include <math.h>
#include <stdio.h>
#include <time.h>

#include "mpi_internal.h"

cugl_status cugl__mpi_fail(cugl_status status, const char *who, int err, const char *what)
{
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0, cls = 0;
    if (MPI_Error_string(err, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error %d", err);
    MPI_Error_class(err, &cls);
    return cugl__fail(status, who, "%s: %s (MPI error class %d)", what, text, cls);
}

cugl_status cugl__mpi_check_ready(const char *who)
{
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (!initialized)
        return cugl__fail(CUGL_ERROR_INVALID_STATE, who,
                                 "MPI is not initialised: call MPI_Init first");
    if (finalized)
        return cugl__fail(CUGL_ERROR_INVALID_STATE, who, "MPI has been finalised");
    return CUGL_OK;
}

cugl_status cugl__mpi_wait(MPI_Request *req, double timeout, int size, const char *who,
                           const char *what)
{
    double start = MPI_Wtime();
    for (;;) {
        int done = 0;
        int err = MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (err != MPI_SUCCESS)
            return cugl__mpi_fail(CUGL_ERROR_INVALID_STATE, who, err, what);
        if (done)
            return CUGL_OK;
        double waited = MPI_Wtime() - start;
        if (timeout >= 0 && waited >= timeout)
            return cugl__fail(
                CUGL_ERROR_NOT_READY, who,
                "%s: not every rank of the %d joined within %.1f s (a rank that never calls, "
                "is stuck elsewhere or has died); the collective is abandoned",
                what, size, timeout);
        if (waited > 1e-3)
            nanosleep(&(struct timespec){.tv_nsec = 100000}, NULL);
    }
}

CUGL_API cugl_status cugl_mpi_wait(MPI_Request *req, MPI_Comm comm, double timeout_seconds,
                                   const char *what)
{
    if (!req || !what)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "%s is NULL",
                                 !req ? "req" : "what");
    if (isnan(timeout_seconds))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "%s: the timeout is NaN",
                                 what);
    cugl_status st = cugl__mpi_check_ready(__func__);
    if (st != CUGL_OK)
        return st;
    int size = 0;
    if (comm == MPI_COMM_NULL || MPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                                 "%s: comm is not a communicator", what);
    return cugl__mpi_wait(req, timeout_seconds, size, __func__, what);
}
