#!/bin/sh
# --record FILE.mp4 and FILE.webm (VP8, and VP9 with --record-codec vp9) on
# a demo, headless on a GPU: the file
# plays (read back by RECORD_READ, the tests' own reader: its codec, size
# and every frame, 60 a second, each decoded and none black or flat; where
# FFPROBE is given, ffprobe reads the same), the same run with the same
# replayed input twice
# gives the same bytes, and a name that is no video or a folder that does
# not exist is refused with nothing left behind. With VIEWER (the tests'
# own page, tests/serve/link_viewer), a served demo records while a viewer
# watches: every frame is in the file and the viewer got pictures. Skipped
# (77) without a CUDA device or the recorder, which CUGL_TEST_NO_SKIP makes
# a failure.
#
#   record_video.sh DEMO FFPROBE RECORD_READ [VIEWER]   (FFPROBE empty: none here)
set -u
usage='usage: record_video.sh DEMO FFPROBE RECORD_READ [VIEWER]'
bin=${1:?$usage}
ffprobe=${2?$usage}
record_read=${3:?$usage}
viewer=${4:-}
skip() {
    [ -n "${CUGL_TEST_NO_SKIP:-}" ] && { echo "not ok 1 - $1 (CUGL_TEST_NO_SKIP)"; exit 1; }
    echo "1..0 # SKIP $1"
    exit 77
}
dir=$(mktemp -d "${TMPDIR:-/tmp}/cugl-record-video-XXXXXX")
trap 'rm -rf "$dir"' EXIT
# A drag and the wheel, replayed from frame 10.
printf '10 move 100 100\n10 button left down\n20 move 160 120\n30 button left up\n40 scroll 2\n' \
    >"$dir/input.txt"
frames=90
n=0
failed=0
echo "1..$([ -n "$viewer" ] && echo 11 || echo 10)"
check() { # check DESCRIPTION CONDITION-STATUS
    n=$((n + 1))
    if [ "$2" -eq 0 ]; then echo "ok $n - $1"; else echo "not ok $n - $1"; failed=1; fi
}
# Times on stdin, one a line: "ok" where frame i is at i/60 s (within
# WebM's milliseconds), every one of them.
at_60() {
    awk -v n=$frames '{ d = $1 - (NR - 1) / 60; if (d < -0.0011 || d > 0.0011) bad++ }
        END { print (NR == n && !bad) ? "ok" : "bad" }'
}

for kind in mp4 webm vp9; do
    # The file's extension, and its codec (the container's, or asked for).
    ext=$kind codec=h264 asked=
    [ $kind = webm ] && codec=vp8
    [ $kind = vp9 ] && ext=webm codec=vp9 asked="--record-codec vp9"
    for run in a b; do
        # shellcheck disable=SC2086 # no word or two
        out=$("$bin" --headless --size 640x360 --frames $frames --input "$dir/input.txt" \
            --record "$dir/$run-$kind.$ext" $asked 2>&1)
        rc=$?
        case "$out" in
        *"no CUDA driver"* | *"no CUDA device"*) skip "no CUDA device" ;;
        *"has no recorder"*) skip "this build has no recorder" ;;
        esac
        [ $rc -eq 0 ] || { printf '%s\n' "$out" | sed 's/^/# /'; }
        printf '%s\n' "$out" | grep 'recorded' | sed 's/^/# /'
        [ $run = a ] && out_a=$out && rc_a=$rc
    done
    [ "$rc_a" -eq 0 ] && printf '%s\n' "$out_a" | grep -q "recorded $frames frames as $dir/a-$kind.$ext"
    check "--record a-$kind.$ext: exit 0, says it recorded $frames frames" $?
    "$record_read" --decode "$dir/a-$kind.$ext" >"$dir/read.txt" 2>&1
    rc=$?
    info=$(head -n 1 "$dir/read.txt")
    echo "# $kind: $info"
    sed -n 's/^pts=\([^ ]*\) key=.*/\1/p' "$dir/read.txt" >"$dir/times.txt"
    times=$(at_60 <"$dir/times.txt")
    # A picture in every frame, not a black or flat one (headless
    # recorders elsewhere have written black videos): each frame's luma
    # spread (its standard deviation), the least of them.
    spread=$(sed -n 's/^pts=.* spread=\([0-9.]*\)$/\1/p' "$dir/read.txt" |
        awk 'NR == 1 || $1 < least { least = $1 } END { print NR ? least : 0 }')
    echo "# $kind: the least luma spread of a frame $spread (of 255)"
    [ $rc -eq 0 ] && [ "$info" = "codec=$codec width=640 height=360 frames=$frames" ] &&
        awk -v s="$spread" 'BEGIN { exit !(s >= 4) }'
    ok=$?
    if [ -n "$ffprobe" ]; then
        # ffprobe reads the same: codec, size, frames, each time within 1 us.
        probed=$("$ffprobe" -v error -count_frames -select_streams v:0 \
            -show_entries stream=codec_name,width,height,nb_read_frames -of csv=p=0 \
            "$dir/a-$kind.$ext" 2>&1)
        echo "# $kind by ffprobe: $probed"
        "$ffprobe" -v error -select_streams v:0 -show_entries packet=pts_time -of csv=p=0 \
            "$dir/a-$kind.$ext" | sort -g >"$dir/probed.txt"
        [ $ok -eq 0 ] && [ "$probed" = "$codec,640,360,$frames" ] &&
            paste -d ' ' "$dir/times.txt" "$dir/probed.txt" | awk -v n=$frames '
                { d = $1 - $2; if (d < -0.000001 || d > 0.000001 || NF != 2) bad++ }
                END { exit (NR == n && !bad) ? 0 : 1 }'
        ok=$?
        also="ffprobe agrees"
    else
        also="no ffprobe here to cross-check"
    fi
    check "--record a-$kind.$ext: $codec, 640x360, $frames frames, each decoded and none flat ($also)" $ok
    [ -s "$dir/a-$kind.$ext" ] && cmp -s "$dir/a-$kind.$ext" "$dir/b-$kind.$ext" && [ "$times" = ok ]
    check "--record b-$kind.$ext: frame i at i/60 s, and the same bytes as a-$kind.$ext" $?
done

# Refused: a name that is no video goes on being a folder of PNGs, so the
# case is a folder that does not exist for a video file.
out=$("$bin" --headless --frames 2 --record "$dir/no/such/run.mp4" 2>&1)
rc=$?
printf '%s\n' "$out" | grep -q 'cannot open' && [ $rc -ne 0 ] && [ ! -e "$dir/no" ]
check "--record into a missing folder: refused (exit $rc), nothing made" $?

# Served and recorded at once: 180 frames at the served pace (60 a second),
# a viewer watching for a second of them.
if [ -n "$viewer" ]; then
    served=180
    "$bin" --headless --size 640x360 --frames $served --serve 127.0.0.1:0 \
        --record "$dir/served.mp4" >"$dir/served.txt" 2>&1 &
    pid=$!
    port='' i=0
    while [ -z "$port" ] && [ $i -lt 300 ] && kill -0 $pid 2>/dev/null; do
        port=$(sed -n 's|.*serving on http://127\.0\.0\.1:\([0-9]*\)/.*|\1|p' "$dir/served.txt" |
            head -n 1)
        [ -n "$port" ] || sleep 0.05
        i=$((i + 1))
    done
    got=0
    if [ -n "$port" ]; then
        seen=$("$viewer" 127.0.0.1 "$port" --no-psnr --warmup 0.2 --periods 1 --period 1 2>&1)
        got=$(printf '%s\n' "$seen" | sed -n 's/.*"pictures":\([0-9]*\).*/\1/p' | head -n 1)
        echo "# the viewer: $(printf '%s\n' "$seen" | tail -n 1 | cut -c1-200)"
    fi
    wait $pid
    rc=$?
    grep -E 'serving on|recorded' "$dir/served.txt" | sed 's/^/# /'
    [ $rc -eq 0 ] || sed 's/^/# /' "$dir/served.txt"
    "$record_read" --decode "$dir/served.mp4" >"$dir/read.txt" 2>&1
    info=$(head -n 1 "$dir/read.txt")
    echo "# served: $info; the viewer got ${got:-0} pictures in its second"
    [ $rc -eq 0 ] && [ -n "$port" ] && [ "${got:-0}" -gt 0 ] &&
        [ "$info" = "codec=h264 width=640 height=360 frames=$served" ]
    check "--serve and --record served.mp4 at once: exit 0, a viewer got pictures, $served frames in the file" $?
fi
exit $failed
