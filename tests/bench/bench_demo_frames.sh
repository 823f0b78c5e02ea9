#!/bin/sh
# Each demo on each --interop path, and shared memory pipelined, headless at
# 1920x1080 with --bench: the frame time (ms, the mean over the frames) as a
# table. Exits 77 without a GPU.
#
# usage: bench_demo_frames.sh CUGL_DEVICES CUGL_DEMO...
#   (frames: $DEMO_FRAMES, default 300)
set -u
devices_bin=$1
shift
frames=${DEMO_FRAMES:-300}
if ! "$devices_bin" 2>/dev/null | grep -q '^Device 0:'; then
    echo "bench_demo_frames: skipped: no CUDA device"
    exit 77
fi
"$devices_bin" | grep '^Device 0'
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
echo
echo "| demo | map | shared | shared, pipelined | host | shared / map |"
echo "|---|---|---|---|---|---|"
for demo in "$@"; do
    row="| $(basename "$demo")"
    for path in map shared piped host; do
        flags="--interop $path"
        [ "$path" = piped ] && flags="--interop shared --pipelined"
        if ! "$demo" --headless --bench --size 1920x1080 --frames "$frames" $flags \
            --screenshot "$dir/shot.png" >"$dir/$path.txt" 2>&1; then
            cat "$dir/$path.txt" >&2
            echo "bench_demo_frames: $demo --interop $path failed" >&2
            exit 1
        fi
        ms=$(sed -n 's/.* frames, \([0-9.]*\) ms a frame.*/\1/p' "$dir/$path.txt")
        eval "ms_$path=$ms"
        row="$row | $ms ms"
    done
    echo "$row | $(awk -v a="$ms_shared" -v b="$ms_map" 'BEGIN { printf "%.2f", a / b }') |"
done
exit 0
