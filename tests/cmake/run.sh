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

# shellcheck disable=SC2086 # one option a word
run cmake -G Ninja -S "$source/tests/cmake" -B "$tmp/build" $find >"$tmp/cmake.log" ||
    { cat "$tmp/cmake.log"; exit 1; }
run cmake --build "$tmp/build" >"$tmp/build.log" || { cat "$tmp/build.log"; exit 1; }
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
