#!/bin/sh
# tcore_sass.sh — the tensor-core test kernels on real compilers (docs/checks.md):
#
#   tcore_sass.sh [--compile-only] GATE_BIN SRC_DIR OUT_DIR
#
# Builds the .cu the emitter would (templates/prelude.cuh, templates/mma_frag.cuh,
# tests/sim/kernels/tcore.cu), compiles it with NVRTC for sm_80 and sm_90 through
# nvrtc_gate (no compile error, no spill), then reads the SASS of the cubins
# (nvrtc_gate --sass) and requires tensor-core MMA (HMMA) and ldmatrix (LDSM) in
# every k_tc_qk/k_tc_pv/k_tc_attn kernel, cp.async (LDGSTS) where tiles are staged,
# and LDSM in k_tc_ldmatrix. Exit 77 (skipped) when cuobjdump is absent.
# --compile-only stops after the NVRTC compile (no cuobjdump needed).
set -u
compile_only=0
[ "${1:-}" = --compile-only ] && { compile_only=1; shift; }
gate=$1 src=$2 out=$3
mkdir -p "$out" || exit 2
cu="$out/tcore_full.cu"
cat "$src/templates/prelude.cuh" "$src/templates/mma_frag.cuh" "$src/tests/sim/kernels/tcore.cu" > "$cu" || exit 2
"$gate" "$cu" || { echo "tcore_sass: NVRTC compile of the tensor-core test kernels failed or spills" >&2; exit 1; }
[ "$compile_only" = 1 ] && { echo "tcore_sass: the tensor-core test kernels compile at sm_80 and sm_90 without spills"; exit 0; }
"$gate" --sass "$cu" > "$out/tcore.sass"
rc=$?
[ "$rc" -eq 4 ] && exit 77
[ "$rc" -eq 0 ] || { echo "tcore_sass: nvrtc_gate --sass failed (exit $rc)" >&2; exit 1; }
cat "$out/tcore.sass"
# columns: kernel arch mma ffma hfma ldg16 ldg32 ldg64 ldg128 ldgsts lds ldsm sts shfl bar ldl stl
awk '
  /^#/ || !NF { next }
  { seen[$1 " " $2] = 1 }
  $1 ~ /^k_tc_(qk|pv|attn)_/ {
    if ($3 == 0) { print "tcore_sass: " $1 " at " $2 " has no tensor-core MMA (HMMA) in its SASS"; bad = 1 }
    if ($12 == 0 && $1 != "k_tc_pv_tf32") { print "tcore_sass: " $1 " at " $2 " has no ldmatrix (LDSM) in its SASS"; bad = 1 }
    if ($10 == 0) { print "tcore_sass: " $1 " at " $2 " has no cp.async (LDGSTS) in its SASS"; bad = 1 }
    if ($16 + $17 > 0) { print "tcore_sass: " $1 " at " $2 " uses local memory (LDL/STL)"; bad = 1 }
  }
  $1 == "k_tc_mma_tf32" && $3 == 0 { print "tcore_sass: k_tc_mma_tf32 at " $2 " has no HMMA"; bad = 1 }
  $1 == "k_tc_ldmatrix" && $12 < 4 { print "tcore_sass: k_tc_ldmatrix at " $2 " has " $12 " LDSM, want 4"; bad = 1 }
  END {
    n = split("k_tc_qk_f16 k_tc_qk_bf16 k_tc_pv_f16 k_tc_pv_bf16 k_tc_attn_f16 k_tc_attn_bf16 k_tc_ldmatrix k_tc_qk_tf32 k_tc_pv_tf32 k_tc_attn_tf32 k_tc_mma_tf32", k, " ")
    for (i = 1; i <= n; i++)
      for (a = 80; a <= 90; a += 10)
        if (!(k[i] " sm_" a in seen)) { print "tcore_sass: no SASS row for " k[i] " at sm_" a; bad = 1 }
    exit bad
  }' "$out/tcore.sass" >&2 || exit 1
echo "tcore_sass: HMMA, LDSM and LDGSTS present in every tensor-core test kernel at sm_80 and sm_90"
