#!/bin/sh
# The main demo lists the GPU: its name, compute capability, memory.
# Skipped (77) where there is no driver or no device.
set -u
bin=${1:?usage: devices.sh BINARY}
out=$("$bin" 2>&1)
rc=$?
printf '%s\n' "$out"
case "$out" in
  *"no CUDA driver"*|*"no CUDA device"*)
    # On a machine known to have a GPU, a skip would hide a broken loader.
    [ -n "${CUGL_TEST_NO_SKIP:-}" ] && { echo "FAIL: no driver or device"; exit 1; }
    exit 77 ;;
esac
[ "$rc" -eq 0 ] || { echo "FAIL: exit status $rc"; exit 1; }
for want in "Device 0: " "compute capability" "multiprocessors" "PCI bus id"; do
  case "$out" in
    *"$want"*) ;;
    *) echo "FAIL: output lacks '$want'"; exit 1 ;;
  esac
done
