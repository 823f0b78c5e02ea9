#!/bin/sh
# cugl-nbody --mpi: --headless --bench at 1920x1080, for each body count,
# one rank, one process without --mpi, 2 and 4 ranks sharing GPU 0
# (--device 0), and 2 ranks on two GPUs where there are two (a rank each,
# by local rank). A row: the step kernel (the slowest rank's, CUDA events)
# as interactions per second, the frame with every step drawn and
# composited as interactions per second, the composite and the exchange
# of positions (the slowest rank's means), and the drawn rate over one
# rank's. Exits 77 without a GPU or without mpirun.
#
# usage: bench_nbody_mpi.sh RUN_MPI MPIRUN CUGL_NBODY CUGL_DEVICES [BODIES...]
#   (default bodies: 65536 262144; frames: $NBODY_FRAMES, default 60)
set -u
run_mpi=$1
mpirun=$2
nbody=$3
devices_bin=$4
shift 4
bodies=${*:-65536 262144}
frames=${NBODY_FRAMES:-60}

count=$("$devices_bin" 2>/dev/null | grep -c '^Device [0-9]*:')
if [ "$count" -lt 1 ]; then
    echo "bench_nbody_mpi: skipped: no CUDA device"
    exit 77
fi
"$devices_bin" | grep '^Device'

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
out=$dir/out.txt

# field PATTERN: the number sed's PATTERN takes from $out, or "-".
field() {
    v=$(sed -n "$1" "$out" | head -n 1)
    echo "${v:--}"
}

echo
echo "| bodies | run | GPUs | step ms | interactions/s (step) | frame ms | interactions/s (drawn) | composite ms | exchange ms | drawn vs one rank |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for n in $bodies; do
    base=
    for run in 1 one 2 4 2gpus; do
        args="--headless --bench --size 1920x1080 --frames $frames --bodies $n --screenshot $dir/nbody.png"
        gpus=1
        case $run in
        one) cmd="$nbody $args" ;;
        2gpus)
            [ "$count" -ge 2 ] || continue
            gpus=2
            cmd="$run_mpi $mpirun 2 $nbody --mpi $args" ;;
        *) cmd="$run_mpi $mpirun $run $nbody --mpi --device 0 $args" ;;
        esac
        # shellcheck disable=SC2086
        $cmd >"$out" 2>&1
        rc=$?
        if [ "$rc" -eq 77 ]; then
            echo "bench_nbody_mpi: skipped: $(grep -m1 SKIP "$out")"
            exit 77
        fi
        if [ "$rc" -ne 0 ]; then
            cat "$out" >&2
            echo "bench_nbody_mpi: $cmd failed" >&2
            exit 1
        fi
        step=$(field 's/.*steps: \([0-9.]*\) ms a step.*/\1/p')
        rate=$(field 's/.*: \([0-9.e+]*\) interactions\/s.*/\1/p')
        frame=$(field 's/.*with every step drawn: .*(\([0-9.]*\) ms a frame.*/\1/p')
        drawn=$(field 's/.*with every step drawn: \([0-9.e+]*\) interactions a second.*/\1/p')
        comp=$(field 's/.*:   composite \([0-9.]*\) ms.*/\1/p')
        exch=$(field 's/.*:   exchange \([0-9.]*\) ms.*/\1/p')
        [ -n "$base" ] || base=$drawn
        up=$(awk -v a="$drawn" -v b="$base" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2fx", a / b; else print "-" }')
        case $run in
        one) label="one process, no --mpi" ;;
        1) label="1 rank" ;;
        2gpus) label="2 ranks, a GPU each" ;;
        *) label="$run ranks, one GPU" ;;
        esac
        echo "| $n | $label | $gpus | $step | $rate | $frame | $drawn | $comp | $exch | $up |"
        [ "$run" = 2gpus ] && eval "two_${n}=$up"
    done
done
echo
for n in $bodies; do
    eval "two=\${two_${n}:-}"
    [ -n "$two" ] &&
        awk -v u="${two%x}" -v n="$n" 'BEGIN { printf "goal: --mpi on 2 GPUs >= 1.8x one rank, every step drawn, %s bodies: %.2fx, %s\n",
                                                n, u, (u >= 1.8 ? "met" : "MISSED") }'
done
exit 0
