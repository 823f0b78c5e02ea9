#!/bin/sh
# nbody over several GPUs: cugl-nbody --devices 0..N-1 --headless --bench for
# N = 1, 2, 4, 8 (as many as this machine has) at each body count, with the
# picture drawn by GL on device 0 every frame; interactions per second (the
# step on every device, fork to join, CUDA events), frame time, and the
# speed-up over one GPU. Exits 77 without a GPU or with one device.
#
# usage: bench_nbody_scaling.sh CUGL_NBODY CUGL_DEVICES [BODIES...]
#   (default bodies: 65536 262144; frames: $NBODY_FRAMES, default 40)
set -u
nbody=$1
devices_bin=$2
shift 2
bodies=${*:-65536 262144}
frames=${NBODY_FRAMES:-40}

count=$("$devices_bin" 2>/dev/null | grep -c '^Device [0-9]*:')
if [ "$count" -lt 2 ]; then
    echo "bench_nbody_scaling: skipped: $count CUDA device(s); this compares 1 GPU with several"
    exit 77
fi
"$devices_bin" | grep '^Device'

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
out=$dir/out.txt
echo
echo "| bodies | GPUs | interactions/s | step ms | frame ms | speed-up |"
echo "|---|---|---|---|---|---|"
for n in $bodies; do
    base=
    for g in 1 2 4 8; do
        [ "$g" -le "$count" ] || break
        list=$(seq -s, 0 $((g - 1)))
        if ! "$nbody" --headless --bench --interop shared --size 1280x720 --frames "$frames" \
            --bodies "$n" --devices "$list" --screenshot "$dir/nbody.png" >"$out" 2>&1; then
            cat "$out" >&2
            echo "bench_nbody_scaling: cugl-nbody --bodies $n --devices $list failed" >&2
            exit 1
        fi
        rate=$(sed -n 's/.*: \([0-9.e+]*\) interactions\/s.*/\1/p' "$out")
        step=$(sed -n 's/.*steps: \([0-9.]*\) ms a step.*/\1/p' "$out")
        frame=$(sed -n 's/.* frames, \([0-9.]*\) ms a frame.*/\1/p' "$out")
        [ -n "$base" ] || base=$rate
        up=$(awk -v a="$rate" -v b="$base" 'BEGIN { printf "%.2fx", a / b }')
        echo "| $n | $g | $rate | $step | $frame | $up |"
        eval "up_${n}_${g}=$up"
    done
done
echo
for n in $bodies; do
    eval "two=\${up_${n}_2:-}"
    [ -n "$two" ] && [ "$n" = 262144 ] &&
        awk -v u="${two%x}" 'BEGIN { printf "goal: 2 GPUs >= 1.8x at 262144 bodies: %.2fx, %s\n",
                                     u, (u >= 1.8 ? "met" : "MISSED") }'
    eval "four=\${up_${n}_4:-}"
    [ -n "$four" ] &&
        awk -v u="${four%x}" -v n="$n" 'BEGIN { printf "goal: 4 GPUs >= 3.4x at %s bodies: %.2fx, %s\n",
                                                n, u, (u >= 3.4 ? "met" : "MISSED") }'
    eval "eight=\${up_${n}_8:-}"
    [ -n "$eight" ] && [ "$n" = 1048576 ] &&
        awk -v u="${eight%x}" 'BEGIN { printf "goal: 8 GPUs >= 6.5x at 1048576 bodies: %.2fx, %s\n",
                                       u, (u >= 6.5 ? "met" : "MISSED") }'
done
exit 0
