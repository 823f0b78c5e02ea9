#!/bin/sh
# Build options in combination: each configures and builds from scratch in
# a folder of its own, and its configure summary gives every part that is
# off a reason. The representative set: everything off, libcugl-app
# without the demos, the demos without the panel and the frame server, the
# tests with the frame server but without the demos, the panel and VP8
# (its video H.264 alone; there a program that uses libm and does not name
# it fails to link), the frame server without a video codec, and (in the
# build this runs from) everything on.
# TAP.
#   run.sh SOURCE_DIR GPU_ARCH
set -u
source=$1
arch=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cugl-options-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# The kernels, compiled once for all the combinations (scripts/nvcc_cached.py).
export CUGL_NVCC_CACHE="${CUGL_NVCC_CACHE:-$tmp/nvcc-cache}"
n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n - $*"; }
note() { tail -n 30 "$1" | sed 's/^/# /'; }

# name|what is built|options. The libraries and demos build with warnings
# as errors; the tests not (cmocka's macros warn under -Wpedantic on some
# compilers). "programs": the programs and libraries alone, what a
# missing library (libm, say) fails to link; not the fuzzers' clang
# builds, which the plain build makes with the options of its own.
# "nothing": configured alone (libcugl-app without the demos is what the
# plain build compiles too, everything off what the demos without the
# panel and the frame server compile but libcugl-mpi: what can break is
# the configuration). Each is
# built at -O1 without debug information: the warnings that need an
# optimizer are there, and the builds take half the time.
combinations='all-off|nothing|-Dwerror=true -Ddemos=disabled -Dtests=disabled -Dui=disabled -Dserve=disabled -Ddocs=disabled -Dmpi=disabled
app-without-demos|nothing|-Dwerror=true -Ddemos=disabled -Dtests=disabled -Ddocs=disabled
demos-without-ui-or-serve|all|-Dwerror=true -Ddemos=enabled -Dui=disabled -Dserve=disabled -Dtests=disabled -Ddocs=disabled
serve-without-video|programs|-Dwerror=true -Ddemos=disabled -Dtests=disabled -Dui=disabled -Dserve=enabled -Dserve_video=disabled -Dserve_h264=disabled -Ddocs=disabled -Dmpi=disabled
tests-without-demos-ui-or-vp8|programs|-Ddemos=disabled -Dtests=enabled -Dui=disabled -Dserve=enabled -Dserve_video=disabled -Dserve_h264=enabled -Ddocs=disabled'

# The programs and libraries of a configured tree, as ninja's targets.
programs_of() {
    meson introspect "$1" --targets | python3 -c '
import json, os, sys
for t in json.load(sys.stdin):
    if t["type"] in ("executable", "shared library", "static library"):
        for f in t["filename"]:
            print(os.path.relpath(f, sys.argv[1]))' "$1"
}

# Each summary line of a part ("name : on" or "name : off ..."); every
# "off" must say why after it.
check_summary() {
    sed -n '/^cugl /,/^  Subprojects/p' "$1" | grep -E ': *off' | while read -r line; do
        case $line in
        *'off ('* | *'off: '*) ;;
        *) echo "$line" ;;
        esac
    done
}

printf '%s\n' "$combinations" | {
    while IFS='|' read -r name what options; do
        start=$(date +%s)
        dir="$tmp/$name"
        # shellcheck disable=SC2086 # one option a word
        if ! meson setup "$dir" "$source" -Dgpu_archs="$arch" -Doptimization=1 -Ddebug=false \
            $options >"$tmp/$name.setup" 2>&1; then
            note "$tmp/$name.setup"
            not_ok "$name ($options) configures"
            continue
        fi
        unexplained=$(check_summary "$tmp/$name.setup")
        if [ -n "$unexplained" ]; then
            printf '%s\n' "$unexplained" | sed 's/^/# no reason: /'
            not_ok "$name: every part that is off says why"
        else
            ok "$name: configures; every part that is off says why ($(grep -cE ': *off' "$tmp/$name.setup") off)"
        fi
        if [ "$what" = nothing ]; then
            rm -rf "$dir"
            continue
        fi
        targets=
        [ "$what" = all ] || targets=$(programs_of "$dir")
        # shellcheck disable=SC2086 # one target a word
        if ninja -C "$dir" $targets >"$tmp/$name.build" 2>&1; then
            ok "$name builds ($what, $(($(date +%s) - start)) s)"
        else
            note "$tmp/$name.build"
            not_ok "$name ($options) builds"
        fi
        rm -rf "$dir"
    done
    echo "1..$n"
    exit $failed
}
