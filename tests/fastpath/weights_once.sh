#!/bin/sh
# weights_once.sh SHORTC SOURCE_DIR — weights converted once at load, never
# per forward (issue 12): mixed_tiny has fp16 weights and fp32 activations,
# which cuBLAS cannot multiply together. Its GEMM weights are held in fp32
# with their values rounded to fp16 (plan weights "round": "f16", converted
# when they load), so the plan has no conversion launch at all: 13 GEMM
# weights (4 per layer, 3 layers, and lm_head) carry "round", nothing else
# does, and there is no shortc_convert kernel. Its golden test
# (golden_mixed_tiny) checks that the numbers did not change.
set -u
shortc=$1 src=$2
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/shortc-weights.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM
for flags in "" "--no-fuse"; do
  "$shortc" "$src/models/mixed_tiny.arch" $flags -o "$tmp/m.cu" || fail "emit $flags"
  if grep -q 'void shortc_convert' "$tmp/m.cu"; then fail "a conversion kernel is left ($flags)"; fi
  n=$(grep -o '"round":[[:space:]]*"f16"' "$tmp/m.cu" | wc -l | tr -d ' ')
  [ "$n" = 13 ] || fail "$n weights held wider than their layout, expected 13 ($flags)"
done
echo "ok"
