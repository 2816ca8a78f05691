#!/bin/sh
# vector_selftest.sh SHORTC GATE SOURCE_DIR OUT — the vector gate must reject a
# norm kernel that loads one half per thread (tests/gate/vector_scalar.cu),
# naming both faults at both architectures. Exit 77 when cuobjdump is absent.
set -u
shortc=$1 gate=$2 src=$3 out=$4
log=$(sh "$src/tests/gate/vector_gate.sh" --shortc "$shortc" --gate "$gate" --out "$out" "$src/tests/gate/vector_scalar.cu" 2>&1)
rc=$?
[ "$rc" -eq 77 ] && exit 77
printf '%s\n' "$log"
[ "$rc" -eq 1 ] || { echo "FAIL: the vector gate exited $rc on a scalar kernel, expected 1"; exit 1; }
for arch in sm_80 sm_90; do
  printf '%s\n' "$log" | grep -q "error: shortc_norm_scalar_fixture at $arch: no 128-bit global load; 1 8/16-bit global loads" ||
    { echo "FAIL: no error for the scalar kernel at $arch"; exit 1; }
done
echo "ok"
