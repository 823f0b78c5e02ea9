#!/bin/sh
# Each demo with its CUDA work on the GL GPU (--compute-device 0) and on
# another (--compute-device 1), headless at 1920x1080, --interop auto (which
# takes peer memory for device 1): the frame time of each, and whether CUDA
# on device 1 is at least as fast per frame. Exits 77 without two devices.
#
# usage: bench_compute_device.sh CUGL_DEVICES CUGL_DEMO...
#   (frames: $DEMO_FRAMES, default 300)
set -u
devices_bin=$1
shift
frames=${DEMO_FRAMES:-300}

count=$("$devices_bin" 2>/dev/null | grep -c '^Device [0-9]*:')
if [ "$count" -lt 2 ]; then
    echo "bench_compute_device: skipped: $count CUDA device(s); this needs two"
    exit 77
fi
"$devices_bin" | grep '^Device'

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
out=$dir/out.txt
# One run: its frame time ("N frames, X ms a frame" of --bench) into $ms,
# the path --interop auto took into $path.
run() {
    if ! "$1" --headless --bench --size 1920x1080 --frames "$frames" --compute-device "$2" \
        --screenshot "$dir/shot.png" >"$out" 2>&1; then
        cat "$out" >&2
        echo "bench_compute_device: $1 --compute-device $2 failed" >&2
        exit 1
    fi
    ms=$(sed -n 's/.* frames, \([0-9.]*\) ms a frame.*/\1/p' "$out")
    path=$(sed -n 's/.*--interop auto: \([a-z]*\):.*/\1/p' "$out")
}

echo
echo "| demo | CUDA on device 0 | path | CUDA on device 1 | path | device 1 / device 0 |"
echo "|---|---|---|---|---|---|"
missed=0
for demo in "$@"; do
    name=$(basename "$demo")
    run "$demo" 0
    one=$ms path0=$path
    run "$demo" 1
    two=$ms path1=$path
    ratio=$(awk -v a="$two" -v b="$one" 'BEGIN { printf "%.2f", a / b }')
    echo "| $name | $one ms | $path0 | $two ms | $path1 | $ratio |"
    awk -v r="$ratio" 'BEGIN { exit !(r > 1.0) }' && missed=$((missed + 1))
done
echo
if [ "$missed" -eq 0 ]; then
    echo "goal: every demo with --compute-device 1 at least as fast per frame: met"
else
    echo "goal: every demo with --compute-device 1 at least as fast per frame: MISSED by $missed"
fi
exit 0
