#!/bin/sh
# cugl-nbody --mpi on bad input, where no GPU is needed to see it: each case
# must end soon, with an exit status that is not 0, and with a message on
# every rank that names what is wrong. TAP.
#
#   1. a rank without a GPU (CUDA_VISIBLE_DEVICES empty for rank 1; where
#      there is no GPU at all, rank 0 has none either): every rank names
#      rank 1 and says it cannot take a GPU;
#   2. --bodies that differ between the ranks, and 3. --size: every rank
#      names the option and both values, before any rank takes a GPU;
#   4. a rank that joins MPI and never comes to the demo's first meeting:
#      rank 0 gives up after --mpi-timeout with a message, and the job ends.
#
#   nbody_errors.sh RUN_MPI MPIRUN CUGL_NBODY MPI_IDLE
set -u
# Paths as given, absolute: the jobs run in a folder of their own.
abs() { case $1 in /* | '') echo "$1" ;; *) echo "$PWD/$1" ;; esac }
run_mpi=$(abs "$1")
mpirun=$(abs "$2")
nbody=$(abs "$3")
idle=$(abs "$4")

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
out=$dir/out.txt
failed=0
n=0

# run LIMIT ARGS...: the job's output into $out, its status into $rc and
# its seconds into $elapsed; a job still running after LIMIT s is ended.
run() {
    limit=$1
    shift
    start=$(date +%s)
    (cd "$dir" && CUGL_MPI_TEST_LIMIT=$limit "$run_mpi" "$mpirun" "$@") >"$out" 2>&1
    rc=$?
    elapsed=$(($(date +%s) - start))
    if [ "$rc" -eq 77 ]; then
        grep '^1\.\.0 # SKIP' "$out" | head -n 1
        exit 77
    fi
}

# check NAME MAX_SECONDS PATTERN...: the last job ended with a status
# other than 0 within MAX_SECONDS, and its output holds every pattern but
# those written !PATTERN, which it must not hold.
check() {
    name=$1
    max=$2
    shift 2
    n=$((n + 1))
    why=
    [ "$rc" -ne 0 ] || why="the job exited 0"
    grep -q 'did not finish within' "$out" && why="the job hung"
    [ "$elapsed" -le "$max" ] || why="${why:+$why; }it took $elapsed s (at most $max)"
    for pattern in "$@"; do
        case $pattern in
        !*) ! grep -qF -- "${pattern#!}" "$out" || why="${why:+$why; }\"${pattern#!}\"" ;;
        *) grep -qF -- "$pattern" "$out" || why="${why:+$why; }no \"$pattern\"" ;;
        esac
    done
    if [ -z "$why" ]; then
        echo "ok $n - $name (exit status $rc, $elapsed s)"
    else
        sed 's/^/# /' "$out"
        echo "not ok $n - $name: $why"
        failed=$((failed + 1))
    fi
}

echo "1..4"

run 120 1 "$nbody" --mpi --headless --frames 2 --bodies 1000 --size 64x48 \
    : -np 1 env CUDA_VISIBLE_DEVICES= "$nbody" --mpi --headless --frames 2 --bodies 1000 \
    --size 64x48
check "a rank without a GPU" 60 \
    "cugl-nbody[rank 0/2]: --mpi: rank 1 failed to take a GPU: cugl_mpi_bind:" \
    "cugl-nbody[rank 1/2]: --mpi: rank 1 (this one) failed to take a GPU: cugl_mpi_bind:" \
    "cugl-nbody[rank 0/2]: --mpi: every rank stops" \
    "cugl-nbody[rank 1/2]: --mpi: every rank stops"

run 120 1 "$nbody" --mpi --headless --bodies 1000 : -np 1 "$nbody" --mpi --headless --bodies 2000
check "--bodies that differ between ranks" 60 \
    "cugl-nbody[rank 0/2]: --mpi: --bodies differs between ranks: 1000 on rank 0, 2000 on rank 1" \
    "cugl-nbody[rank 1/2]: --mpi: --bodies differs between ranks: 1000 on rank 0, 2000 on rank 1" \
    "!take a GPU"

run 120 1 "$nbody" --mpi --headless --size 64x48 : -np 2 "$nbody" --mpi --headless --size 64x49
check "--size that differs between ranks" 60 \
    "cugl-nbody[rank 0/3]: --mpi: --size differs between ranks: 64x48 on rank 0, 64x49 on rank 1" \
    "cugl-nbody[rank 2/3]: --mpi: --size differs between ranks: 64x48 on rank 0, 64x49 on rank 1"

run 120 1 "$nbody" --mpi --headless --mpi-timeout 3 : -np 1 "$idle" 100
check "a rank that never comes" 40 \
    "cugl-nbody[rank 0/2]: --mpi: cugl_mpi_wait: meeting the other ranks: not every rank of the 2 joined within 3.0 s" \
    "ending every rank"

[ "$failed" -eq 0 ]
