/*
 * mpi_idle.c - a rank that joins MPI and then takes part in nothing for
 * SECONDS (default 120): the peer that never comes, for the tests of
 * programs that must give up on it with a message instead of hanging.
 *
 * usage: mpi_idle [SECONDS]
 */
#include <mpi.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    unsigned seconds = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 120;
    sleep(seconds);
    MPI_Finalize();
    return 0;
}
