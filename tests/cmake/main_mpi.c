/*
 * A program of libcugl-mpi built against an installed cugl, with
 * pkg-config's cugl-mpi and with CMake's cugl::mpi: <mpi.h> is found and
 * MPI linked through what they bring, and nothing else. Built, not run
 * (running it is the mpi suite's).
 */
#include <stdio.h>

#include <cugl/mpi.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bool aware = false;
    char reason[256];
    cugl_status st = cugl_mpi_cuda_aware(&aware, reason, sizeof reason);
    printf("%s: %s\n", cugl_status_name(st), reason);
    MPI_Finalize();
    return st == CUGL_OK ? 0 : 1;
}
