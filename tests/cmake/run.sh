#!/bin/sh
# Install cugl into a staging folder (meson install --destdir), build
# tests/cmake against it with CMake's find_package(cugl), run both
# programs, and check that a version cugl is not refuses to be found.
#   run.sh BUILD_DIR SOURCE_DIR
# CMake generates for Ninja, which the build has already (make need not be
# installed).
set -eu
build=$1
source=$2
command -v cmake >/dev/null || { echo "cmake is not installed (Debian: apt-get install cmake)"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cugl-cmake-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
run() { echo "+ $*"; "$@"; }

run meson install -C "$build" --destdir "$tmp/stage" --quiet
config=$(find "$tmp/stage" -name cuglConfig.cmake)
[ -n "$config" ] || { echo "the install has no cuglConfig.cmake"; exit 1; }
prefix=$(cd "$(dirname "$config")/../../../.." && pwd)
libdir=$(dirname "$(dirname "$(dirname "$config")")")

run cmake -G Ninja -S "$source/tests/cmake" -B "$tmp/build" -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/cmake.log" ||
    { cat "$tmp/cmake.log"; exit 1; }
run cmake --build "$tmp/build" >"$tmp/build.log" || { cat "$tmp/build.log"; exit 1; }
run env LD_LIBRARY_PATH="$libdir" "$tmp/build/consumer_c"
run env LD_LIBRARY_PATH="$libdir" "$tmp/build/consumer_cxx"

# A version this cugl is not must not be found.
mkdir -p "$tmp/wrong"
sed 's/find_package(cugl 0.1 REQUIRED)/find_package(cugl 1.0 REQUIRED)/' \
    "$source/tests/cmake/CMakeLists.txt" >"$tmp/wrong/CMakeLists.txt"
cp "$source/tests/cmake/main.c" "$source/tests/cmake/main.cpp" "$tmp/wrong/"
if cmake -G Ninja -S "$tmp/wrong" -B "$tmp/wrong/build" -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/wrong.log" 2>&1; then
    echo "find_package(cugl 1.0) found cugl $(sed -n 's/.*PACKAGE_VERSION "\(.*\)".*/\1/p' \
        "$(dirname "$config")/cuglConfigVersion.cmake")"
    exit 1
fi
grep -q "with requested version \"1.0\"" "$tmp/wrong.log" || { cat "$tmp/wrong.log"; exit 1; }
echo "find_package(cugl 1.0) refused, as it should be"
