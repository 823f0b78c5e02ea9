#!/bin/sh
# A build without MPI: cugl-nbody --mpi says why it is not there and exits
# with status 2, before it looks for a GPU (so this runs anywhere). TAP.
#   mpi_off.sh CUGL_NBODY
set -u
out=$("$1" --mpi --headless --frames 1 2>&1)
rc=$?
echo "1..1"
if [ "$rc" -eq 2 ] && printf '%s\n' "$out" | grep -q '^cugl-nbody: --mpi: not in this build: MPI compositing (the Meson feature mpi) is off'; then
    echo "ok 1 - --mpi without MPI in the build: exit status 2 and why"
else
    printf '%s\n' "$out" | sed 's/^/# /'
    echo "not ok 1 - --mpi without MPI in the build: exit status $rc (want 2 and why)"
    exit 1
fi
