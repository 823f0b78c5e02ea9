#!/bin/sh
# The examples as their users build them: cugl installed into a staging
# folder (meson install --destdir), then examples/wave built against it
# with pkg-config (its Makefile) and with CMake (find_package(cugl
# COMPONENTS app)), each build run headless with --check (the last picture
# byte for byte against the CPU's) on every interop path. TAP; where there
# is no CUDA device the CPU computes the wave and the host path shows it (Mesa in CI).
#   run.sh BUILD_DIR SOURCE_DIR GPU_ARCH
set -u
build=$1
source=$2
arch=$3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cugl-examples-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n - $*"; }
note() { sed 's/^/# /' "$1"; }

for tool in make cmake pkg-config; do
    command -v "$tool" >/dev/null || { echo "1..0 # SKIP $tool is not installed"; exit 77; }
done
if ! meson install -C "$build" --destdir "$tmp/stage" --quiet >"$tmp/install.log" 2>&1; then
    note "$tmp/install.log"
    echo "Bail out! meson install failed"
    exit 1
fi
pc=$(find "$tmp/stage" -name cugl-app.pc | head -n 1)
config=$(find "$tmp/stage" -name cuglConfig.cmake | head -n 1)
[ -n "$pc" ] && [ -n "$config" ] || { echo "Bail out! the install lacks cugl-app.pc or cuglConfig.cmake"; exit 1; }
pcdir=$(dirname "$pc")
libdir=$(dirname "$pcdir")
# The prefix above libdir: lib or lib64, or lib/<multiarch>.
case $libdir in
*/lib/*) prefix=$(dirname "$(dirname "$libdir")") ;;
*) prefix=$(dirname "$libdir") ;;
esac
nvcc=$(command -v nvcc || echo "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc")

# pkg-config and the Makefile, in a copy of the example (nothing is written
# into the source tree).
cp -r "$source/examples/wave" "$tmp/make"
if PKG_CONFIG_PATH="$pcdir" make -C "$tmp/make" NVCC="$nvcc" ARCHS="$arch" >"$tmp/make.log" 2>&1; then
    ok "built with pkg-config and make against the staged install"
else
    note "$tmp/make.log"
    not_ok "built with pkg-config and make against the staged install"
fi

# CMake: find_package(cugl COMPONENTS app) and cugl::app.
# The package's folder is named too: CMake searches lib64, where Meson
# installs on a system without dpkg-architecture, only where the system
# says so, and Debian's does not (as tests/cmake/run.sh).
if cmake -S "$source/examples/wave" -B "$tmp/cmake" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
        -Dcugl_DIR="$(dirname "$config")" \
        -DNVCC="$nvcc" -DWAVE_ARCHS="$arch" >"$tmp/cmake.log" 2>&1 &&
    cmake --build "$tmp/cmake" >>"$tmp/cmake.log" 2>&1; then
    ok "built with CMake (find_package(cugl COMPONENTS app), cugl::app) against the staged install"
else
    note "$tmp/cmake.log"
    not_ok "built with CMake against the staged install"
fi

for how in make cmake; do
    program="$tmp/$how/wave"
    [ -x "$program" ] || continue
    for path in auto map shared host; do
        LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$program" --headless --size 320x240 --frames 100 \
            --interop "$path" --check >"$tmp/run.log" 2>&1
        rc=$?
        if [ $rc -eq 0 ]; then
            note "$tmp/run.log"
            ok "$how's wave, --interop $path: the picture equals the CPU's"
        elif [ "$path" != auto ] && [ "$path" != host ] &&
            grep -q "the CPU computes the wave" "$tmp/run.log" && [ -z "${CUGL_TEST_NO_SKIP:-}" ]; then
            n=$((n + 1))
            echo "ok $n - $how's wave, --interop $path # SKIP $(head -n 1 "$tmp/run.log")"
        else
            note "$tmp/run.log"
            not_ok "$how's wave, --interop $path (exit status $rc)"
        fi
    done
    # Served: the frame server comes up on a port of its own and says where.
    if LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$program" --headless --size 160x120 --frames 30 --serve 0 \
            >"$tmp/run.log" 2>&1 && grep -q "serving on http://127.0.0.1:[1-9]" "$tmp/run.log"; then
        ok "$how's wave --serve 0 serves on a port of its own"
    elif grep -q "built without its frame server" "$tmp/run.log"; then
        n=$((n + 1))
        echo "ok $n - $how's wave --serve # SKIP $(tail -n 1 "$tmp/run.log")"
    else
        note "$tmp/run.log"
        not_ok "$how's wave --serve 0"
    fi
done
echo "1..$n"
exit $failed
