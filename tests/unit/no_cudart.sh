#!/bin/sh
# No cugl binary links the CUDA runtime (cudart) or libcuda: the driver is
# dlopened, device code is embedded as fatbins.
set -u
status=0
for f in "$@"; do
  needed=$(readelf -d "$f" | grep NEEDED)
  if printf '%s\n' "$needed" | grep -Eq 'libcudart|libcuda\.so'; then
    echo "FAIL: $f links: $(printf '%s\n' "$needed" | grep -E 'libcuda')"
    status=1
  fi
  undef=$(nm -D --undefined-only "$f" | awk '{print $NF}' | grep -E '^(cuda[A-Z_]|cu[A-Z][a-zA-Z]+$|__cuda)' || true)
  if [ -n "$undef" ]; then
    echo "FAIL: $f needs CUDA symbols from elsewhere: $undef"
    status=1
  fi
  defined=$(nm "$f" 2>/dev/null | grep -E ' [TtDdBb] (cuda[A-Z]|__cudaRegister)' || true)
  if [ -n "$defined" ]; then
    echo "FAIL: $f contains CUDA runtime code: $defined"
    status=1
  fi
  [ $status -eq 0 ] && echo "ok: $f"
done
exit $status
