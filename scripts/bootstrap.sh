#!/bin/sh
# Set up, build and run cugl on Debian 12 (or a derivative) with the CUDA
# Toolkit installed.
#
#   scripts/bootstrap.sh [-Dname=value...] COMMAND [ARGUMENTS...]
#
#   demo   install what building and running the demos needs, configure and
#          build them in build/ (for the GPU here), run cugl-julia with
#          ARGUMENTS, in the folder this was started from (headless, the
#          picture is julia.png there)
#   test   install the rest (the tests' tools, the browser, doxygen), build
#          build/ with the tests and the API reference, run every suite
#          (ARGUMENTS go to that meson test) while build-sanitize/ (ASan +
#          UBSan) and build-tsan/ (TSan) build beside it, the window suite
#          (on an Xvfb where there is no display), and the unit, gl, gpu
#          and demo suites of build-sanitize/ side by side with the unit
#          and gl suites of build-tsan/; each run keeps its own log
#   setup  the test command's set-up and builds, nothing run
#   help   this text
#
# -Dname=value before COMMAND goes to meson for build/; -Dgpu_archs=86,90
# builds every build directory for those GPUs rather than for the one here
# (where no GPU answers: for sm_75, whose PTX runs on every newer GPU).
#
# Idempotent: a second run installs nothing, reconfigures nothing that is
# as asked, and rebuilds only what changed.
set -eu

prog=bootstrap
usage() {
    sed -n '2,/^$/s/^# \{0,1\}//p' "$0"
}

meson_args=
while [ $# -gt 0 ]; do
    case $1 in
    -D?*=*) meson_args="$meson_args $1" ;;
    *) break ;;
    esac
    shift
done
what=${1:-demo}
[ $# -gt 0 ] && shift
case $what in
demo | test | setup) ;;
help | --help | -h)
    usage
    exit 0
    ;;
*)
    printf 'bootstrap: unknown command '\''%s'\''\n\n' "$what" >&2
    usage >&2
    exit 2
    ;;
esac

here=$PWD
cd "$(dirname "$0")/.."
root=$PWD
. scripts/common.sh

# --- the CUDA Toolkit: we cannot install it for you -------------------------
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

# --- the GPU: what will work, before anything long --------------------------
probe_gpus
case $meson_args in
*-Dgpu_archs=*)
    # shellcheck disable=SC2086 # one option a word
    archs=$(printf '%s\n' $meson_args | sed -n 's/^-Dgpu_archs=//p' | tail -n 1)
    archs_why="sm_$(echo "$archs" | sed 's/,/, sm_/g'), as asked"
    archs_asked=yes
    ;;
*) choose_archs ;;
esac
# A build directory keeps its architectures while they include the GPU's
# here (or a -Dgpu_archs asks for others).
arch_option build
if [ -n "$dir_archs" ]; then
    if [ -z "$arch_opt" ]; then
        archs_why="sm_$(echo "$dir_archs" | sed 's/,/, sm_/g') (build/ has them)"
    elif [ "$dir_archs" != "$archs" ]; then
        archs_why="$archs_why (build/ had sm_$(echo "$dir_archs" | sed 's/,/, sm_/g'))"
    fi
fi
if [ "$gpu_count" -gt 0 ]; then
    printf '%s\n' "$gpu_list" | while read -r line; do say "GPU: $line"; done
    say "driver $gpu_driver; building for $archs_why"
else
    say "no GPU: $gpu_why"
    say "building for $archs_why"
    say "what works without one: the build, cugl-devices (it says there is no device),"
    say "  and the unit, gl, window and browser suites; the demos need an NVIDIA GPU"
    say "  and driver: cugl-julia will say so and exit, and the gpu, demo, fault and"
    say "  multi-gpu suites report skipped"
fi
say "the build: $root/build"
# Where the demo's picture will go.
if [ "$what" = demo ]; then
    headless='' served=''
    [ -n "${DISPLAY:-}" ] || headless=yes
    for a in "$@"; do
        case $a in
        --headless) headless=yes ;;
        --serve | --serve=*) served=yes ;;
        esac
    done
    if [ "$gpu_count" -eq 0 ]; then
        say "then cugl-julia: it will say that it needs an NVIDIA GPU and driver, and exit"
    elif [ -n "$served" ]; then
        say "then cugl-julia, serving its frames to web browsers (it prints the address;"
        say "  Ctrl-C stops it)"
    elif [ -z "$headless" ]; then
        say "then cugl-julia in a window on $DISPLAY (Escape quits; --headless: off-screen)"
    else
        if [ -n "${DISPLAY:-}" ]; then why=--headless; else why="no display"; fi
        say "then cugl-julia ($why): it renders off-screen and writes the last frame"
        say "  to $here/julia.png (--screenshot FILE names another)"
    fi
fi

# --- Debian packages --------------------------------------------------------
# The demos: the compilers (nvcc needs g++ as its host compiler; the UI
# panel is C++), Meson, the GL loader generator (python3-glad), GLFW, cglm,
# libpng, DLPack's header, the GL and EGL loaders (glvnd; the NVIDIA driver
# brings its own GL), Dear ImGui (the panel), libwebsockets, libjpeg-turbo
# libvpx and OpenH264 (--serve: JPEG, and VP8 or H.264 video for narrow
# links), Vulkan's headers (semaphores that GL and CUDA share; the
# loader is used at run time), and FreeType with DejaVu Sans (text in the
# picture: labels, colorbars).
demo_packages="meson ninja-build pkg-config python3 python3-glad gcc g++ binutils
 libglfw3-dev libcglm-dev libpng-dev libdlpack-dev libegl-dev libgl-dev libegl1
 libimgui-dev libwebsockets-dev libturbojpeg0-dev libvpx-dev libopenh264-dev
 libvulkan-dev libfreetype-dev fonts-dejavu-core"
# What the test command adds, in two parts. What its builds need (meson
# looks for them): cmocka, clang with libFuzzer (the fuzz suite), doxygen
# (the API reference, whose warnings fail the build), Node.js (the browser
# suite's runner; the machine's own where it has one).
# Open MPI's compiler wrappers and headers (libcugl-mpi and its suite).
test_build_packages="libcmocka-dev clang libclang-rt-dev doxygen libopenmpi-dev"
command -v node >/dev/null || command -v nodejs >/dev/null ||
    test_build_packages="$test_build_packages nodejs"
# What only its runs need, installed while the builds run: Mesa (GL without
# an NVIDIA driver, the gl suite's); ffmpeg (--record's MP4s, which a test
# checks); cmake (the CMake package's test builds a C and a C++ program);
# xvfb, xauth and xdotool (the window suite drives real windows where no
# display is); chromium, and npm for puppeteer-core (the browser suite);
# make (the examples build as their users do, with make and with CMake);
# iproute2 (the frame server's bind test looks from a network namespace,
# and its shaped-link suite shapes a veth pair there with tc); openssl (the
# HTTPS test makes a certificate);
# mpirun (the mpi suite); pytest, NumPy, pip, setuptools, wheel and venv
# (the python suite, which also installs the package into a venv);
# jupyter-notebook, ipykernel and nbclient (a notebook's live view in
# chromium, and the example notebook run headless).
test_run_packages="libegl-mesa0 libgl1-mesa-dri ffmpeg cmake xvfb xauth xdotool chromium
 make iproute2 openssl openmpi-bin python3-pytest python3-numpy python3-pip python3-setuptools
 python3-wheel python3-venv jupyter-notebook python3-ipykernel python3-nbclient"
command -v npm >/dev/null || test_run_packages="$test_run_packages npm"

# install PACKAGE...: apt-get install those not installed yet, with a line
# of progress every 25 packages.
install_packages() {
    # shellcheck disable=SC2086 # one package a word
    have=$(dpkg-query -W -f='${Package} ${Status}\n' "$@" 2>/dev/null |
        sed -n 's/ install ok installed$//p') || true
    missing=
    for p in "$@"; do
        printf '%s\n' "$have" | grep -qx "$p" || missing="$missing $p"
    done
    [ -n "$missing" ] || return 0
    command -v apt-get >/dev/null || die "missing packages:$missing (and no apt-get to install them)"
    if [ "$(id -u)" -eq 0 ]; then
        sudo=
    elif command -v sudo >/dev/null; then
        sudo=sudo
    else
        die "missing packages:$missing; run as root: apt-get install$missing"
    fi
    say "installing:$missing (and what they need)"
    log=$(mktemp)
    $sudo apt-get update -qq >"$log" 2>&1 || {
        cat "$log" >&2
        rm -f "$log"
        die "apt-get update failed"
    }
    # shellcheck disable=SC2086
    { DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends \
        $missing 2>&1 || echo "apt-get failed: status $?"; } | tee "$log" | awk -v p="$prog: " '
        / newly installed, / { total = $3; print p "  " $0; fflush() }
        /^Need to get / { print p "  " $0; fflush() }
        /^Get:/ { if (++got % 25 == 0) { print p "  downloaded " got " of " total; fflush() } }
        /^Setting up / { if (++set % 25 == 0) { print p "  set up " set " of " total; fflush() } }'
    if grep -q '^apt-get failed: status' "$log"; then
        tail -n 20 "$log" >&2
        rm -f "$log"
        die "apt-get install failed"
    fi
    rm -f "$log"
}

# The tests' run-time tools and puppeteer-core (no browser download: the
# browser suite drives Debian's chromium), in the background, into a log.
install_test_tools() {
    # shellcheck disable=SC2086
    install_packages $test_run_packages
    if [ ! -d tests/browser/node_modules/puppeteer-core ]; then
        say "installing puppeteer-core (npm ci in tests/browser)"
        (cd tests/browser && npm ci --no-audit --no-fund --loglevel=error) ||
            die "npm ci in tests/browser failed"
    fi
}

case $what in
demo)
    # shellcheck disable=SC2086
    install_packages $demo_packages
    ;;
test | setup)
    # shellcheck disable=SC2086
    install_packages $demo_packages $test_build_packages
    tools_log=$(mktemp)
    say "installing the tests' run-time tools while the builds run (log: $tools_log)"
    install_test_tools >"$tools_log" 2>&1 &
    tools=$!
    ;;
esac

# --- configure and build ----------------------------------------------------
# The kernels are the same in every build tree (only the host code differs
# between the plain, ASan and TSan builds and the option combinations'):
# each is compiled once (scripts/nvcc_cached.py).
export CUGL_NVCC_CACHE="${CUGL_NVCC_CACHE:-$root/build/nvcc-cache}"
# build/ serves both commands. The demo command makes it without the tests
# and the API reference, the test command turns them on; a demo after a
# test builds only the demos.
common="-Ddemos=enabled -Dui=enabled -Dserve=enabled -Dserve_video=enabled -Dserve_h264=enabled"
case $what in
demo)
    if [ -f build/build.ninja ]; then
        # shellcheck disable=SC2086
        configure build $arch_opt $meson_args
    else
        # shellcheck disable=SC2086
        configure build -Dtests=disabled -Ddocs=disabled $common $arch_opt $meson_args
    fi
    targets=$(ninja -C build -t targets all | sed -n 's#^\(demos/cugl-[a-z0-9_-]*\): .*#\1#p')
    # shellcheck disable=SC2086 # one target a word
    build build $targets
    ;;
test | setup)
    # shellcheck disable=SC2086
    configure build -Dtests=enabled -Ddocs=enabled $common $arch_opt $meson_args
    arch_option build-sanitize
    # shellcheck disable=SC2046,SC2086
    configure build-sanitize $(asan_options) $arch_opt -Ddocs=disabled $common $(asan_parts)
    arch_option build-tsan
    # shellcheck disable=SC2046,SC2086
    configure build-tsan $(tsan_options) $arch_opt -Ddocs=disabled $common $(tsan_parts)
    build build
    # The ASan tree's suites: the gpu and demo suites' only where a GPU
    # runs them (without one, every test of theirs skips in the plain
    # build already).
    asan_no_gpu=
    [ "$gpu_count" -gt 0 ] || asan_no_gpu="--no-suite gpu --no-suite demo"
    asan_suites="--suite unit --suite gl --suite timing --suite gpu --suite demo $asan_no_gpu"
    if [ "$what" = setup ]; then
        build build-sanitize
        build build-tsan
    else
        # The sanitized trees build while the plain build's tests run, at
        # the lowest priority: those tests wait on sockets, frames, child
        # processes and single threads for much of their time, and the
        # builds take what they leave (on 2 cores, most of a minute and a
        # half of building goes unseen).
        sanitized_log=$root/build-sanitize/background-build.log
        say "building build-sanitize and build-tsan beside the tests, at the lowest priority" \
            "(log: $sanitized_log)"
        # Each tree only what its suites run: not the benchmarks or the
        # fault sweep's programs; the TSan tree unit and gl; the ASan tree
        # the gpu and demo suites' too where a GPU runs them.
        # shellcheck disable=SC2046,SC2086 # one target, one option a word
        (nice -n 19 ninja -C build-sanitize \
            $(python3 scripts/test_list.py build-sanitize --targets $asan_suites) &&
            nice -n 19 ninja -C build-tsan \
                $(python3 scripts/test_list.py build-tsan --targets --suite unit --suite gl)) \
            >"$sanitized_log" 2>&1 &
        sanitized=$!
    fi
    if ! wait "$tools"; then
        tail -n 25 "$tools_log" >&2
        rm -f "$tools_log"
        die "installing the tests' run-time tools failed"
    fi
    grep -E "^$prog: (installing|  [0-9]+ upgraded|  Need to get)" "$tools_log" || true
    rm -f "$tools_log"
    ;;
esac

case $what in
setup) ;;
demo)
    say "the demos: $root/build/demos/cugl-* (each takes --help)"
    say "running: build/demos/cugl-julia${*:+ $*} (in $here)"
    cd "$here"
    exec "$root/build/demos/cugl-julia" "$@"
    ;;
test)
    start=$(date +%s)
    ran_logs=
    status=0
    # The build-option combinations (the options suite: builds from
    # scratch) beside everything else, at the lowest priority; its output
    # follows the others'.
    options_output=build/meson-logs/options-output.txt
    say "testing build: the options suite beside the others, at the lowest priority" \
        "(log: build/meson-logs/options.txt)"
    rm -f build/meson-logs/options.json
    nice -n 19 meson test -C build --no-rebuild --print-errorlogs --logbase options \
        --suite options >"$options_output" 2>&1 &
    options=$!
    ran_logs="$ran_logs build/meson-logs/options.json"
    run_suites build main --num-processes 2 --no-suite window --no-suite options \
        --no-suite timing "$@" || status=1
    if ! wait "$sanitized"; then
        tail -n 30 "$sanitized_log" >&2
        die "building the sanitized trees failed (the whole log: $sanitized_log)"
    fi
    wait "$options" || status=1
    cat "$options_output"
    # The tests that hold rates and latencies (the timing suite: the frame
    # server's, the browser's) with no build beside them: on 2 cores, a
    # build beside them delays frames past their bounds. The server's one
    # at a time beside the browser's one at a time (a test of each kind
    # keeps its rates beside one of the other: 44 s for the two, 69 one
    # after another), then the shaped link's alone. The browser's output
    # follows the server's.
    browser_output=build/meson-logs/timing-browser-output.txt
    # shellcheck disable=SC2046 # one name a word
    (run_suites build timing-browser --num-processes 1 \
        $(python3 scripts/test_list.py build --all --suite browser --also timing) \
        >"$browser_output" 2>&1) &
    browser=$!
    ran_logs="$ran_logs build/meson-logs/timing-browser.json"
    run_suites build timing --num-processes 1 --suite timing --no-suite browser \
        --no-suite link || status=1
    wait "$browser" || status=1
    cat "$browser_output"
    run_suites build timing-link --num-processes 1 --suite link || status=1
    display_start 1
    # shellcheck disable=SC2086 # one assignment a word
    run_suites build window $display_vars --suite window || status=1
    display_stop
    # The two sanitized builds' suites side by side, two tests of each at a
    # time: a sanitized test waits as much as it computes, the others take
    # the time (59 s where a test of each at a time took 84). The TSan
    # run's output follows the ASan run's.
    tsan_output=build-tsan/meson-logs/tsan-output.txt
    mkdir -p build-tsan/meson-logs
    # shellcheck disable=SC2046
    (run_suites build-tsan tsan $(tsan_vars) --num-processes 2 --suite unit --suite gl \
        --no-suite timing >"$tsan_output" 2>&1) &
    tsan=$!
    ran_logs="$ran_logs build-tsan/meson-logs/tsan.json"
    [ "$gpu_count" -gt 0 ] ||
        say "no GPU: build-sanitize's gpu and demo suites are neither built nor run" \
            "(the plain build's report them skipped)"
    # shellcheck disable=SC2046,SC2086 # one option a word
    run_suites build-sanitize asan $(asan_vars) --num-processes 2 \
        --suite unit --suite gl --suite gpu --suite demo --no-suite timing $asan_no_gpu ||
        status=1
    wait "$tsan" || status=1
    cat "$tsan_output"
    # And their timing tests: the two builds' side by side, a test of each
    # at a time (they wait on frames for most of their time; two of them
    # keep their rates on 2 cores), then the shaped link's (the link suite)
    # of each, side by side with nothing else (under a sanitizer it holds
    # no latency bound: tests/serve/test_link.py).
    tsan_output=build-tsan/meson-logs/tsan-timing-output.txt
    # shellcheck disable=SC2046
    (run_suites build-tsan tsan-timing $(tsan_vars) --num-processes 1 --suite timing \
        --no-suite browser --no-suite gpu --no-suite link >"$tsan_output" 2>&1) &
    tsan=$!
    ran_logs="$ran_logs build-tsan/meson-logs/tsan-timing.json"
    # shellcheck disable=SC2046,SC2086
    run_suites build-sanitize asan-timing $(asan_vars) --num-processes 1 \
        --suite timing --no-suite browser --no-suite link $asan_no_gpu || status=1
    wait "$tsan" || status=1
    cat "$tsan_output"
    tsan_output=build-tsan/meson-logs/tsan-link-output.txt
    # shellcheck disable=SC2046
    (run_suites build-tsan tsan-link $(tsan_vars) --num-processes 1 --suite link \
        >"$tsan_output" 2>&1) &
    tsan=$!
    ran_logs="$ran_logs build-tsan/meson-logs/tsan-link.json"
    # shellcheck disable=SC2046
    run_suites build-sanitize asan-link $(asan_vars) --num-processes 1 --suite link || status=1
    wait "$tsan" || status=1
    cat "$tsan_output"

    summary '' || status=1
    say "$(($(date +%s) - start)) s of tests; the API reference: $root/build/docs/html/index.html"
    if [ $status -ne 0 ]; then
        say "some tests FAILED (their output: the logs above)"
    elif [ "$gpu_count" -eq 0 ]; then
        say "all tests passed (those that need a GPU report skipped without one)"
    else
        say "all tests passed"
    fi
    exit $status
    ;;
esac
