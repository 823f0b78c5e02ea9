#!/bin/sh
# Set up, build and run cugl on Debian 12 (or a derivative) with the CUDA
# Toolkit installed.
#
#   scripts/bootstrap.sh demo   install what is missing, configure, build, run the main
#                               demo (cugl-julia; arguments are passed on to it)
#   scripts/bootstrap.sh test   the same set-up, then every test suite, then the
#                               sanitizer build's unit and gl suites
#   scripts/bootstrap.sh setup  only the set-up
#
# Idempotent: a second run installs nothing and rebuilds only what changed.
# Build directories: build/ (the project) and build-sanitize/ (ASan + UBSan).
set -eu

cd "$(dirname "$0")/.."
what=${1:-demo}
[ $# -gt 0 ] && shift

say() { printf 'bootstrap: %s\n' "$*"; }
die() { printf 'bootstrap: %s\n' "$*" >&2; exit 1; }

# --- the CUDA Toolkit: we cannot install it for you -------------------------
find_nvcc() {
    for d in ${CUDA_HOME:+"$CUDA_HOME/bin"} ${CUDA_PATH:+"$CUDA_PATH/bin"} /usr/local/cuda/bin; do
        [ -x "$d/nvcc" ] && { echo "$d/nvcc"; return 0; }
    done
    command -v nvcc 2>/dev/null
}
nvcc=$(find_nvcc) || true
if [ -z "$nvcc" ]; then
    die "the CUDA Toolkit is not installed (no nvcc on PATH, in \$CUDA_HOME/bin or
/usr/local/cuda/bin). cugl needs its nvcc and headers (cuda.h); it does not
link any CUDA library. Install it from NVIDIA's repository:
  https://developer.nvidia.com/cuda-downloads  (Linux > x86_64 > Debian > 12),
  then: sudo apt-get install cuda-toolkit
or set CUDA_HOME to an existing installation, and run this again."
fi
cuda_inc=$(dirname "$(dirname "$nvcc")")/include
[ -f "$cuda_inc/cuda.h" ] || die "found $nvcc but not $cuda_inc/cuda.h: the CUDA Toolkit is incomplete; reinstall cuda-toolkit"

# --- Debian packages --------------------------------------------------------
# (ffmpeg: the demos' --record makes MP4s with it, and its test checks them;
# cmake and g++: the test of the CMake package builds a C and a C++ program;
# xvfb and xdotool: the window suite drives real windows where no display is;
# libwebsockets-dev and libturbojpeg0-dev: --serve; chromium and nodejs: the
# browser suite, with puppeteer-core from npm; doxygen: the API reference,
# whose warnings fail the build.)
packages="meson ninja-build pkg-config python3 python3-glad gcc binutils
 libcmocka-dev libglfw3-dev libcglm-dev libpng-dev libdlpack-dev libimgui-dev libstb-dev
 libegl-dev libgl-dev libegl1 libegl-mesa0 libgl1-mesa-dri clang libclang-rt-dev
 ffmpeg cmake g++ xvfb xauth xdotool libwebsockets-dev libturbojpeg0-dev chromium
 doxygen python3-pytest python3-numpy python3-pip python3-setuptools python3-wheel python3-venv
 libopenmpi-dev openmpi-bin"
missing=
for p in $packages; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
        missing="$missing $p"
done
if [ -n "$missing" ]; then
    command -v apt-get >/dev/null || die "missing packages:$missing (and no apt-get to install them)"
    if [ "$(id -u)" -eq 0 ]; then
        sudo=
    elif command -v sudo >/dev/null; then
        sudo=sudo
    else
        die "missing packages:$missing; run as root: apt-get install$missing"
    fi
    say "installing:$missing"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

# Node.js for the browser suite: the machine's own where it has one, else Debian's.
if ! command -v npm >/dev/null; then
    for p in nodejs npm; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
            missing_node="${missing_node:-} $p"
    done
    if [ -n "${missing_node:-}" ]; then
        say "installing:$missing_node"
        [ "$(id -u)" -eq 0 ] && sudo= || sudo=sudo
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
            $missing_node >/dev/null
    fi
fi
# puppeteer-core (no browser download: the suite drives Debian's chromium).
if [ ! -d tests/browser/node_modules/puppeteer-core ]; then
    say "installing puppeteer-core (npm ci in tests/browser)"
    (cd tests/browser && npm ci --no-audit --no-fund --loglevel=error >/dev/null) ||
        die "npm ci in tests/browser failed"
fi

# --- configure and build ----------------------------------------------------
setup_build() {
    dir=$1
    shift
    if [ ! -f "$dir/build.ninja" ]; then
        say "configuring $dir"
        log=$(meson setup "$dir" -Dtests=enabled -Ddemos=enabled "$@" 2>&1) || {
            printf '%s\n' "$log" | tail -n 25 >&2
            die "meson setup $dir failed; the whole log: $dir/meson-logs/meson-log.txt"
        }
    fi
    say "building $dir"
    ninja -C "$dir" >/dev/null || { ninja -C "$dir"; die "the build in $dir failed"; }
}

setup_build build -Ddocs=enabled

case $what in
setup)
    ;;
demo)
    # A window where there is a display; headless (julia.png) where not.
    exec ./build/demos/cugl-julia "$@"
    ;;
test)
    status=0
    meson test -C build --print-errorlogs --num-processes 2 --no-suite window "$@" || status=1
    # The window suite needs a display: without one, a virtual one (Mesa's GL).
    if [ -n "${DISPLAY:-}" ]; then
        meson test -C build --print-errorlogs --suite window || status=1
    else
        n=99
        while [ -e "/tmp/.X11-unix/X$n" ] || [ -e "/tmp/.X$n-lock" ]; do n=$((n + 1)); done
        Xvfb ":$n" -screen 0 1280x1024x24 -nolisten tcp >/dev/null 2>&1 &
        xvfb=$!
        i=0
        while [ ! -e "/tmp/.X11-unix/X$n" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
        DISPLAY=":$n" meson test -C build --print-errorlogs --suite window || status=1
        kill "$xvfb" 2>/dev/null || true
    fi
    # Sanitizers watch the host code; one GPU architecture is enough there.
    setup_build build-sanitize -Db_sanitize=address,undefined -Db_lundef=false \
        -Dc_args=-fno-sanitize-recover=all -Dgpu_archs=90 -Ddocs=disabled
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        meson test -C build-sanitize --suite unit --suite gl --print-errorlogs \
        --num-processes 2 || status=1
    # ThreadSanitizer on the same suites (the frame server's threads among
    # them); tests/tsan.supp leaves out Mesa's own threads.
    setup_build build-tsan -Db_sanitize=thread -Db_lundef=false -Dgpu_archs=90 -Ddocs=disabled
    TSAN_OPTIONS="halt_on_error=1 suppressions=$PWD/tests/tsan.supp" \
        meson test -C build-tsan --suite unit --suite gl --print-errorlogs \
        --num-processes 2 || status=1
    if [ $status -ne 0 ]; then
        say "some tests FAILED"
    else
        say "all tests passed (suites that need a GPU report skipped without one)"
    fi
    exit $status
    ;;
*)
    die "unknown command '$what'; use demo, test or setup"
    ;;
esac
