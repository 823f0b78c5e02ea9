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
# The prefix and libdir the build installs to (libdir is lib, lib64 or
# lib/<multiarch>, as Meson finds the system), under the stage.
option() {
    meson introspect "$build" --buildoptions | python3 -c '
import json, sys
print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == sys.argv[1]))' "$1"
}
prefix=$tmp/stage$(option prefix)
libdir=$prefix/$(option libdir)
case $config in
"$libdir"/*) ;;
*) echo "cuglConfig.cmake is at $config, not under $libdir"; exit 1 ;;
esac
# CMake finds the package from the prefix under lib/, lib/<multiarch> and
# share/; lib64 it searches only where the system says so, which Debian's
# does not (Meson installs to lib64 where dpkg-architecture is missing).
# There the package's folder is named.
find="-DCMAKE_PREFIX_PATH=$prefix"
case $(option libdir) in
lib | lib/*) ;;
*) find="$find -Dcugl_DIR=$(dirname "$config")" ;;
esac

# libcugl-mpi, where it was built: its .pc and its CMake component bring
# MPI's flags (cugl/mpi.h includes <mpi.h>); a program is built with each.
mpi_pc=$(find "$tmp/stage" -name cugl-mpi.pc | head -n 1)
if [ -n "$mpi_pc" ]; then
    find="$find -DCUGL_TEST_MPI=ON"
    pc_path=$(dirname "$mpi_pc")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
    # shellcheck disable=SC2046 # the flags, a word each
    run cc -std=c11 -o "$tmp/consumer_mpi_pc" "$source/tests/cmake/main_mpi.c" \
        $(PKG_CONFIG_PATH=$pc_path pkg-config --cflags --libs cugl-mpi) ||
        { echo "a program of cugl-mpi does not build with pkg-config's flags alone"; exit 1; }
    echo "cugl-mpi.pc: a program of libcugl-mpi builds with its flags alone"
else
    echo "no cugl-mpi.pc: this build has no libcugl-mpi"
fi

# shellcheck disable=SC2086 # one option a word
run cmake -G Ninja -S "$source/tests/cmake" -B "$tmp/build" $find >"$tmp/cmake.log" ||
    { cat "$tmp/cmake.log"; exit 1; }
run cmake --build "$tmp/build" >"$tmp/build.log" || { cat "$tmp/build.log"; exit 1; }
if [ -n "$mpi_pc" ]; then
    [ -x "$tmp/build/consumer_mpi" ] || { echo "cugl::mpi built no consumer_mpi"; exit 1; }
    echo "cugl::mpi: a program of libcugl-mpi builds with find_package(cugl COMPONENTS mpi)"
fi
run env LD_LIBRARY_PATH="$libdir" "$tmp/build/consumer_c"
run env LD_LIBRARY_PATH="$libdir" "$tmp/build/consumer_cxx"

# A version this cugl is not must not be found.
mkdir -p "$tmp/wrong"
sed 's/find_package(cugl 0.1 REQUIRED)/find_package(cugl 1.0 REQUIRED)/' \
    "$source/tests/cmake/CMakeLists.txt" >"$tmp/wrong/CMakeLists.txt"
cp "$source/tests/cmake/main.c" "$source/tests/cmake/main.cpp" "$tmp/wrong/"
# shellcheck disable=SC2086
if cmake -G Ninja -S "$tmp/wrong" -B "$tmp/wrong/build" $find >"$tmp/wrong.log" 2>&1; then
    echo "find_package(cugl 1.0) found cugl $(sed -n 's/.*PACKAGE_VERSION "\(.*\)".*/\1/p' \
        "$(dirname "$config")/cuglConfigVersion.cmake")"
    exit 1
fi
grep -q "with requested version \"1.0\"" "$tmp/wrong.log" || { cat "$tmp/wrong.log"; exit 1; }
echo "find_package(cugl 1.0) refused, as it should be"
