#!/bin/sh
# Run an MPI program on N ranks of this host:
#   run_mpi.sh MPIRUN N PROGRAM [ARGUMENTS...]
# MPIRUN is the mpirun Meson found, or '' (then one on PATH; without any,
# the run is skipped: a TAP skip plan and exit 77, which tap_skip.sh maps
# for Meson).
#
# With Open MPI: allowed as root (CI runs as root), more ranks than cores,
# no binding to cores, only shared memory and the process itself for
# messages (no network), and no single-copy (CMA) transfers, which
# containers often forbid. CUGL_MPI_TRANSPORTS=default leaves Open MPI's
# own choice of transports (for the benchmark, where CMA works).
# A run still going after CUGL_MPI_TEST_LIMIT seconds (300) is ended with a
# message; the programs have watchdogs of their own that say more.
set -u
mpirun=$1
n=$2
shift 2
if [ -z "$mpirun" ] || [ ! -x "$mpirun" ]; then
    mpirun=$(command -v mpirun || command -v mpiexec || true)
fi
if [ -z "$mpirun" ]; then
    if [ -n "${CUGL_TEST_NO_SKIP:-}" ]; then
        echo "Bail out! no mpirun or mpiexec, and CUGL_TEST_NO_SKIP is set"
        exit 1
    fi
    echo "1..0 # SKIP no mpirun or mpiexec on this machine (Debian: openmpi-bin)"
    exit 77
fi
limit=${CUGL_MPI_TEST_LIMIT:-300}
if "$mpirun" --version 2>&1 | grep -q 'Open MPI'; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_MCA_oob_tcp_if_include=lo
    if [ "${CUGL_MPI_TRANSPORTS:-}" != default ]; then
        export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
    fi
    set -- --oversubscribe --bind-to none "$@"
fi
timeout -k 10 "$limit" "$mpirun" -np "$n" "$@"
rc=$?
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    echo "Bail out! $mpirun -np $n $* did not finish within $limit s"
    exit 1
fi
exit "$rc"
