#!/bin/sh
# Each demo on each --interop path, and shared memory and the host path
# pipelined, headless at 1920x1080 with --bench: the mean frame against
# the floor the demo works out for that run (GL's and CUDA's GPU work, plus
# a hand-over measured before the first frame; pipelined, the larger of the
# two, the part of the smaller that the GPU did not run beside it in a
# probe before the first frame, and a hand-over nobody waits for), as a
# table, with the median frame beside it. Each case runs
# $DEMO_RUNS times (default 3): the table gives the median run's figures and
# the spread of frame / floor over the runs. Goals: every run of every case
# within 1.15x its floor, and with at most 0.1 ms of CPU time a frame in no
# phase. Exits 77 without a GPU. The turns wait on the CPU
# here (CUGL_APP_CPU_WAITS=1): with GPU-side waits the phases' GPU times
# include the waiting, and the floor cannot be taken from them.
#
# usage: bench_demo_frames.sh CUGL_DEVICES CUGL_DEMO...
#   (frames: $DEMO_FRAMES, default 300; runs: $DEMO_RUNS, default 3; the
#   cases: $DEMO_PATHS, default "map shared piped host hostpiped")
set -u
CUGL_APP_CPU_WAITS=1
export CUGL_APP_CPU_WAITS
devices_bin=$1
shift
frames=${DEMO_FRAMES:-300}
runs=${DEMO_RUNS:-3}
paths=${DEMO_PATHS:-map shared piped host hostpiped}
if ! "$devices_bin" 2>/dev/null | grep -q '^Device 0:'; then
    echo "bench_demo_frames: skipped: no CUDA device"
    exit 77
fi
"$devices_bin" | grep '^Device 0'
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
above=0 busy=0
echo
echo "| demo | path | frame ms (mean) | frame ms (median) | floor ms | frame / floor (median run) | spread over $runs runs | GL ms | CUDA ms | hand-over ms | GL and CUDA overlap % | CPU in no phase ms |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for demo in "$@"; do
    name=$(basename "$demo")
    for path in $paths; do
        flags="--interop $path"
        [ "$path" = piped ] && flags="--interop shared --pipelined"
        [ "$path" = hostpiped ] && flags="--interop host --pipelined"
        : >"$dir/rows.txt"
        run=1
        while [ "$run" -le "$runs" ]; do
            out="$dir/$path.$run.txt"
            if ! "$demo" --headless --bench --size 1920x1080 --frames "$frames" $flags \
                --screenshot "$dir/shot.png" >"$out" 2>&1; then
                cat "$out" >&2
                echo "bench_demo_frames: $demo $flags failed" >&2
                exit 1
            fi
            median=$(sed -n 's/^frame: median \([0-9.]*\) ms.*/\1/p' "$out")
            mean=$(sed -n 's/^frame: .*, mean \([0-9.]*\) ms.*/\1/p' "$out")
            overlap=$(sed -n 's/^GL and CUDA side by side: \([0-9.]*\)%.*/\1/p' "$out")
            outside=$(sed -n 's/^frame: .*; CPU in no phase \([0-9.]*\) ms.*/\1/p' "$out")
            ratio=$(sed -n 's/^frame: .*, \([0-9.]*\)x the .*/\1/p' "$out")
            gl=$(sed -n 's/^work (GPU, medians): GL \([0-9.]*\) ms.*/\1/p' "$out")
            cuda=$(sed -n 's/^work (GPU, medians): .*CUDA \([0-9.]*\) ms.*/\1/p' "$out")
            # The floor the demo set the frame against: pipelined only where
            # its turns were (nbody's and postprocess's stay in lockstep).
            which=$(sed -n 's/^frame: .*x the \([a-z]*\) floor.*/\1/p' "$out")
            base=$path
            [ "$path" = piped ] && base=shared
            [ "$path" = hostpiped ] && base=host
            if [ "$which" = pipelined ]; then
                floor=$(sed -n 's/^floor: .*pipelined \([0-9.]*\) ms.*/\1/p' "$out")
                hand=$(sed -n 's/^hand-over .*, \([0-9.]*\) ms pipelined.*/\1/p' "$out")
                label="$base, pipelined"
            elif [ "$path" = piped ] || [ "$path" = hostpiped ]; then
                floor=$(sed -n 's/^floor: lockstep \([0-9.]*\) ms.*/\1/p' "$out")
                hand=$(sed -n 's/^hand-over before the first frame: \([0-9.]*\) ms lockstep.*/\1/p' "$out")
                label="$base, --pipelined (turns stay lockstep)"
            else
                floor=$(sed -n 's/^floor: lockstep \([0-9.]*\) ms.*/\1/p' "$out")
                hand=$(sed -n 's/^hand-over before the first frame: \([0-9.]*\) ms lockstep.*/\1/p' "$out")
                label=$path
            fi
            if [ -z "$median" ] || [ -z "$mean" ] || [ -z "$ratio" ] || [ -z "$floor" ]; then
                cat "$out" >&2
                echo "bench_demo_frames: $demo $flags: no breakdown in its --bench output" >&2
                exit 1
            fi
            awk -v r="$ratio" 'BEGIN { exit !(r > 1.15) }' && above=$((above + 1))
            awk -v c="$outside" 'BEGIN { exit !(c > 0.1) }' && busy=$((busy + 1))
            echo "$ratio|$mean|$median|$floor|$gl|$cuda|$hand|${overlap:--}|$outside|$label" >>"$dir/rows.txt"
            run=$((run + 1))
        done
        # The median run by frame / floor, and the spread of all of them.
        sort -t '|' -k1,1g "$dir/rows.txt" >"$dir/sorted.txt"
        low=$(head -n 1 "$dir/sorted.txt" | cut -d '|' -f 1)
        high=$(tail -n 1 "$dir/sorted.txt" | cut -d '|' -f 1)
        mid=$(sed -n "$(((runs + 1) / 2))p" "$dir/sorted.txt")
        IFS='|' read -r ratio mean median floor gl cuda hand overlap outside label <<EOF2
$mid
EOF2
        echo "| $name | $label | $mean | $median | $floor | $ratio | $low to $high | $gl | $cuda | $hand | $overlap | $outside |"
    done
done
echo
if [ "$above" -eq 0 ]; then
    echo "goal: every run's frame within 1.15x its floor: met"
else
    echo "goal: every run's frame within 1.15x its floor: MISSED by $above run(s)"
fi
if [ "$busy" -eq 0 ]; then
    echo "goal: every run's CPU time in no phase within 0.1 ms a frame: met"
else
    echo "goal: every run's CPU time in no phase within 0.1 ms a frame: MISSED by $busy run(s)"
fi
exit 0
