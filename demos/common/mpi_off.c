/*
 * mpi_off.c - --mpi where this build has no MPI (demo_mpi.h): it says why, and
 * the demo exits as after a bad command line. DEMO_MPI_WHY is the build's
 * reason (lib/mpi/meson.build).
 */
#include "demo_mpi.h"

static int start(demo *d)
{
    fprintf(stderr, "%s: --mpi: not in this build: MPI compositing (the Meson feature mpi) is %s\n",
            d->info->program, DEMO_MPI_WHY);
    return DEMO_EXIT_USAGE;
}

const demo_mpi_backend demo_mpi = {.start = start};
