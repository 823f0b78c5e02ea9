#!/bin/sh
# A cugl binary on a machine without libcuda starts, explains, exits 0.
set -u
bin=${1:?usage: run_without_driver.sh BINARY}
out=$(CUGL_LIBCUDA=/nonexistent/libcuda.so.1 "$bin" 2>&1)
rc=$?
printf '%s\n' "$out"
[ "$rc" -eq 0 ] || { echo "FAIL: exit status $rc, expected 0"; exit 1; }
case "$out" in
  *"no CUDA driver"*"cannot load /nonexistent/libcuda.so.1"*) exit 0 ;;
  *) echo "FAIL: the output does not explain that the driver is missing"; exit 1 ;;
esac
