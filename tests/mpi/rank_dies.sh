#!/bin/sh
# A rank that dies while the others composite: the job must end, and soon
# (MPI's runtime ends it), not wait for the compositor's timeout (20 s)
# or hang. TAP.
#   rank_dies.sh RUN_MPI MPIRUN PROGRAM
set -u
run_mpi=$1
mpirun=$2
program=$3
start=$(date +%s)
out=$(CUGL_MPI_TEST_LIMIT=120 "$run_mpi" "$mpirun" 3 "$program" --rank-dies 2>&1)
rc=$?
elapsed=$(($(date +%s) - start))
if [ "$rc" -eq 77 ]; then
    printf '%s\n' "$out" | grep '^1\.\.0 # SKIP' | head -n 1
    exit 77
fi
printf '%s\n' "$out" | sed 's/^/# /'
echo "1..1"
why=
[ "$rc" -ne 0 ] || why="the job exited 0"
printf '%s\n' "$out" | grep -q 'ends now, without MPI_Finalize' || why="no rank died"
printf '%s\n' "$out" | grep -q 'was not ended by' && why="a rank went on after the death"
printf '%s\n' "$out" | grep -q 'did not finish within' && why="the job hung"
[ "$elapsed" -lt 15 ] || why="the job took $elapsed s to end"
if [ -z "$why" ]; then
    echo "ok 1 - a rank that dies ends the job in $elapsed s (exit status $rc)"
else
    echo "not ok 1 - a rank that dies: $why (exit status $rc, $elapsed s)"
    exit 1
fi
