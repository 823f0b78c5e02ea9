#!/bin/sh
# The demos in real windows, with CUDA, driven by real X input (xdotool):
# for every demo and --interop path, a drag, the wheel, the demo's keys, a
# resize and Escape. Checked: the demo exits 0; its recording (--save-input)
# holds every event sent; the view it ends at differs from the home view
# after a drag, and is the home view again after R; the screenshot has the
# resized window's size (interop kept working at the new size); postprocess
# prints the filter and radius its keys chose; the recording replays
# headless. TAP output, one test per demo and path.
#   test_window_demos.sh DEMO_BINARY...
# Skipped (77) without a display, xdotool or a CUDA device, unless
# CUGL_TEST_NO_SKIP is set.
#
# With CUGL_TEST_DISPLAYS=:N,:M,... (X servers of their own, as
# scripts/gpu-check.sh starts), the demos are spread over those displays
# and run at once, one demo after another on each: input goes to the window
# that has the focus, and each display has its own.
set -u

skip() {
    if [ -n "${CUGL_TEST_NO_SKIP:-}" ]; then
        echo "Bail out! would skip, but CUGL_TEST_NO_SKIP is set: $1"
        exit 1
    fi
    echo "1..0 # SKIP $1"
    exit 77
}
displays=$(echo "${CUGL_TEST_DISPLAYS:-}" | tr , ' ')
[ -n "$displays" ] || displays=${DISPLAY:-}
[ -n "$displays" ] || skip "no display (\$DISPLAY is not set)"
command -v xdotool >/dev/null || skip "xdotool is not installed"
[ $# -gt 0 ] || { echo "usage: $0 DEMO_BINARY..."; exit 99; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/cugl-window-demos-XXXXXX")
probe=$("$1" --headless --frames 1 --size 64x64 --screenshot "$dir/probe.png" 2>&1)
rm -f "$dir/probe.png"
case $probe in
*"needs an NVIDIA GPU"*) rm -rf "$dir"; skip "no CUDA device: $(echo "$probe" | tail -n 1)" ;;
esac

paths="map shared host"
echo "1..$(($# * 3))"

# name-of-demo BINARY -> julia
name_of() { basename "$1" | sed 's/^cugl-//'; }

# The view a run printed last ("" when none).
view_of() { sed -n 's/.*: --view //p' "$1" | tail -n 1; }

# PNG width and height from the IHDR chunk.
png_size() { od -An -tu1 -j16 -N8 "$1" | awk '{printf "%dx%d", $3*256+$4, $7*256+$8}'; }

# Start BINARY windowed with ARGS; its window id in $win, its pid in $pid.
start() {
    bin=$1
    out=$2
    shift 2
    "$bin" --size 640x480 --frames 100000 "$@" >"$out" 2>&1 &
    pid=$!
    win=$(timeout 30 xdotool search --sync --onlyvisible --name "^cugl $(name_of "$bin") " | head -n 1)
    [ -n "$win" ] || return 1
    # Let it draw a few frames before the input starts.
    sleep 1
}

# Wait for the demo to exit (30 s at most); its status in $rc.
finish() {
    i=0
    while kill -0 "$pid" 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
    if kill -0 "$pid" 2>/dev/null; then
        kill "$pid"
        rc=124
    else
        wait "$pid"
        rc=$?
    fi
}

drag() {
    xdotool mousemove --window "$win" 320 240 sleep 0.2 mousedown 1 sleep 0.2 \
        mousemove --window "$win" 360 260 sleep 0.2 mouseup 1 sleep 0.2
}

escape() { xdotool windowfocus --sync "$win" key Escape; }

# test_demo BINARY N: its three paths as TAP lines numbered from N + 1, in
# $dir/NAME.tap; the number that failed in $dir/NAME.failed.
test_demo() {
    bin=$1
    n=$2
    name=$(name_of "$bin")
    failed=0
    # The home view: a headless frame with nothing done.
    "$bin" --headless --frames 1 --size 640x480 --save-input "$dir/$name-none.txt" \
        --screenshot "$dir/$name-home.png" >"$dir/$name-home.out" 2>&1
    home=$(view_of "$dir/$name-home.out")
    for p in $paths; do
        n=$((n + 1))
        rec="$dir/$name-$p.txt"
        out="$dir/$name-$p.out"
        why=""
        if ! start "$bin" "$out" --interop "$p" --save-input "$rec" --screenshot "$dir/$name-$p.png"; then
            why="no window appeared"
        else
            drag
            xdotool click 4 sleep 0.1 click 5 sleep 0.1
            xdotool windowfocus --sync "$win"
            case $name in
            postprocess) xdotool key 2 sleep 0.1 key equal sleep 0.1 key equal sleep 0.1 key minus ;;
            fluids) xdotool key j sleep 0.1 key v sleep 0.1 key r ;;
            esac
            sleep 0.3
            xdotool windowsize "$win" 800 600
            sleep 1
            escape
            finish
            [ "$rc" -eq 0 ] || why="exited with $rc"
        fi
        for want in "button left down" "button left up" "move " "scroll 1" "scroll -1" \
                    "resize 800 600" "key escape down"; do
            [ -n "$why" ] || grep -q " $want" "$rec" || why="the recording lacks '$want'"
        done
        case $name in
        postprocess)
            for want in "key 2 down" "key = down" "key - down"; do
                [ -n "$why" ] || grep -q " $want" "$rec" || why="the recording lacks '$want'"
            done
            [ -n "$why" ] || grep -q -- "--filter blur --radius 7" "$out" ||
                why="postprocess did not end at --filter blur --radius 7"
            ;;
        fluids)
            for want in "key J down" "key V down" "key R down"; do
                [ -n "$why" ] || grep -q " $want" "$rec" || why="the recording lacks '$want'"
            done
            ;;
        esac
        if [ -z "$why" ] && [ -n "$home" ]; then
            [ "$(view_of "$out")" != "$home" ] || why="the drag left the view at home ($home)"
        fi
        [ -n "$why" ] || [ "$(png_size "$dir/$name-$p.png")" = 800x600 ] ||
            why="the screenshot is $(png_size "$dir/$name-$p.png"), not 800x600"
        if [ -z "$why" ]; then
            last=$(grep -v '^#' "$rec" | tail -n 1 | cut -d' ' -f1)
            "$bin" --headless --interop "$p" --input "$rec" --frames $((last + 1)) \
                --screenshot "$dir/$name-$p-replay.png" >"$dir/$name-$p-replay.out" 2>&1 ||
                why="the recording did not replay headless"
        fi
        # A drag, then R: the view is home again (volume's spin and fluids'
        # lack of a view excepted).
        if [ -z "$why" ] && [ -n "$home" ] && [ "$name" != volume ] && [ "$p" = map ]; then
            if start "$bin" "$dir/$name-reset.out" --interop "$p" --save-input "$dir/$name-reset.txt"; then
                drag
                xdotool windowfocus --sync "$win" key r sleep 0.3
                escape
                finish
                [ "$(view_of "$dir/$name-reset.out")" = "$home" ] ||
                    why="after R the view is $(view_of "$dir/$name-reset.out"), not $home"
            else
                why="no window appeared for the reset run"
            fi
        fi
        if [ -z "$why" ]; then
            echo "ok $n - $name --interop $p: $(grep -vc '^#' "$rec") events"
        else
            echo "not ok $n - $name --interop $p: $why (display $DISPLAY)"
            sed 's/^/# /' "$out" | tail -n 15
            failed=$((failed + 1))
        fi
    done >"$dir/$name.tap"
    echo "$failed" >"$dir/$name.failed"
}

# The demos dealt over the displays, each display's in turn in a process of
# its own; the TAP lines then in the demos' order.
count=$(echo "$displays" | wc -w)
slot=0
pids=''
for d in $displays; do
    (
        export DISPLAY="$d"
        at=0
        for bin in "$@"; do
            [ $((at % count)) -ne $slot ] || test_demo "$bin" $((at * 3))
            at=$((at + 1))
        done
    ) &
    pids="$pids $!"
    slot=$((slot + 1))
done
# shellcheck disable=SC2086 # one pid a word
wait $pids
failed=0
for bin in "$@"; do
    name=$(name_of "$bin")
    if [ -f "$dir/$name.tap" ] && [ -f "$dir/$name.failed" ]; then
        cat "$dir/$name.tap"
        failed=$((failed + $(cat "$dir/$name.failed")))
    else
        for p in $paths; do
            echo "not ok - $name --interop $p: its run ended before it wrote its results"
        done
        failed=$((failed + 1))
    fi
done
[ $failed -eq 0 ] && rm -rf "$dir" || echo "# the files are kept in $dir"
[ $failed -eq 0 ]
