#!/bin/sh
# tf32.sh SHORTC SOURCE_DIR — `math tf32` (docs/language.md): every fp32 GEMM
# of the plan gets compute f32_fast_tf32 and none does without the setting;
# the simulator rounds those GEMMs' inputs to TF32, so its logits move away
# from the interpreter's (which has no TF32: it is the fp32 oracle) by more
# than fp32 rounding (1e-5) but stay within the stated TF32 tolerance,
# 2e-3 + 2e-3*|ref| (measured on these random weights: 2.9e-4).
set -u
shortc=$1 src=$2
tf32=$src/tests/fastpath/gpt2_tiny_tf32.arch fp32=$src/models/gpt2_tiny.arch
tmp=$(mktemp -d "${TMPDIR:-/tmp}/shortc-tf32.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM
export SHORTC_CACHE="$tmp/cache"
fail() { echo "FAIL: $*"; exit 1; }
"$shortc" "$tf32" -o "$tmp/tf32.cu" || fail "emit $tf32"
"$shortc" "$fp32" -o "$tmp/fp32.cu" || fail "emit $fp32"
n=$(grep -o '"f32_fast_tf32"' "$tmp/tf32.cu" | wc -l | tr -d ' ')
[ "$n" = 18 ] || fail "expected 18 TF32 GEMMs in the tf32 plan (9 in each of its programs, forward and decode), got $n"
n=$(grep -o 'f32_fast_tf32' "$tmp/fp32.cu" | wc -l | tr -d ' ')
[ "$n" = 0 ] || fail "the fp32 plan has $n TF32 GEMMs"
"$shortc" "$tf32" --dump-spec | grep -qx 'math tf32' || fail "--dump-spec does not show math tf32"
awk 'BEGIN { for (i = 0; i < 37; i++) printf "%d ", (i * 7919 + 13) % 256; print "" }' > "$tmp/tokens"
for b in ref sim; do
  "$shortc" run "$tf32" --backend $b --random-weights 7 --tokens "$tmp/tokens" --logits "$tmp/$b.npy" >/dev/null ||
    fail "run --backend $b"
done
"$shortc" cmp "$tmp/sim.npy" "$tmp/ref.npy" --atol 1e-5 --rtol 1e-5 >/dev/null &&
  fail "TF32 logits equal the fp32 oracle's to 1e-5: the simulator does not round to TF32"
"$shortc" cmp "$tmp/sim.npy" "$tmp/ref.npy" --atol 2e-3 --rtol 2e-3 || fail "TF32 logits outside 2e-3 + 2e-3*|ref|"
printf 'import "%s";\nmodel bad : gpt2_tiny {\n  math fast;\n}\n' "$fp32" > "$tmp/bad.arch"
"$shortc" "$tmp/bad.arch" -o "$tmp/bad.cu" 2> "$tmp/bad.err" && fail "math fast was accepted"
grep -q "unknown math mode .fast. (expected fp32 or tf32)" "$tmp/bad.err" || fail "math fast: no usage in the error: $(cat "$tmp/bad.err")"
[ ! -e "$tmp/bad.cu" ] || fail "math fast: output written"
echo "ok: TF32 plan, simulator shows TF32 rounding within tolerance"
