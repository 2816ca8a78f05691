#!/bin/sh
# tensor_core_selftest.sh — the tensor-core gate must catch what it is for:
#
#   tensor_core_selftest.sh SHORTC GATE_BIN SRC_DIR OUT_DIR
#
# 1. an fp16 attention kernel on the CUDA-core path (head_dim 20, not a multiple
#    of 8: tests/attention/matrix/attn_fp16_hd20.arch falls back to
#    attn_engine.cuh) with an empty allow list: the gate fails and names the
#    kernel and what it lacks;
# 2. the tensor-core test kernels (tests/sim/kernels/tcore.cu) pass the check,
#    and listed in an allow list, they fail it as stale entries.
# Exit 77 (skipped) when cuobjdump is absent.
set -u
shortc=$1 gate=$2 src=$3 out=$4
tc="$src/tests/gate/tensor_core_gate.sh"
mkdir -p "$out" || exit 2
: > "$out/empty.allow"
sh "$tc" --shortc "$shortc" --gate "$gate" --out "$out" --allow "$out/empty.allow" "$src/tests/attention/matrix/attn_fp16_hd20.arch" > "$out/neg.log" 2>&1
rc=$?
[ "$rc" -eq 77 ] && exit 77
cat "$out/neg.log"
[ "$rc" -ne 0 ] || { echo "selftest: the scalar fp16 attention kernel passed the tensor-core gate" >&2; exit 1; }
grep -Eq "error: shortc_attn_causal_h2_hd20_f16 at sm_90: no tensor-core MMA \(HMMA\); [0-9]+ 8/16-bit global loads" "$out/neg.log" ||
  { echo "selftest: missing the error line for the scalar kernel" >&2; exit 1; }

cu="$out/tcore_full.cu"
cat "$src/templates/prelude.cuh" "$src/templates/mma_frag.cuh" "$src/tests/sim/kernels/tcore.cu" > "$cu" || exit 2
sh "$tc" --shortc "$shortc" --gate "$gate" --out "$out" --allow "$out/empty.allow" --kernels '^k_tc_attn_' "$cu" ||
  { echo "selftest: the tensor-core test kernels fail the gate" >&2; exit 1; }
printf 'k_tc_attn_f16 stale entry\n' > "$out/stale.allow"
sh "$tc" --shortc "$shortc" --gate "$gate" --out "$out" --allow "$out/stale.allow" --kernels '^k_tc_attn_' "$cu" > "$out/stale.log" 2>&1
rc=$?
cat "$out/stale.log"
[ "$rc" -ne 0 ] && grep -q "k_tc_attn_f16 at sm_80 now passes: delete it from" "$out/stale.log" ||
  { echo "selftest: a stale allow-list entry was not reported" >&2; exit 1; }
echo "selftest: ok"
