#!/bin/sh
# hopper_sass.sh — the Hopper intrinsics on a real compiler (docs/attention/hopper.md):
#
#   hopper_sass.sh GATE_BIN SRC_DIR OUT_DIR
#
# Builds the .cu the emitter would (templates/prelude.cuh, templates/hopper.cuh,
# tests/sim/kernels/hopper.cu), compiles it with NVRTC for sm_90a through
# nvrtc_gate (no compile error, no spill; the cubin kept), then reads its SASS
# with cuobjdump and requires warpgroup MMA (HGMMA) in every wgmma kernel, TMA
# loads (UTMALDG) and stores (UTMASTG), and mbarrier operations (SYNCS) where
# the kernels use them. Exit 77 (skipped) when cuobjdump is absent
# ($SHORTC_CUOBJDUMP, $PATH, /usr/local/cuda/bin, /opt/nvidia-sass/nvidia/cu13/bin).
set -u
gate=$1 src=$2 out=$3
mkdir -p "$out" || exit 2
cu="$out/hopper_full.cu"
cat "$src/templates/prelude.cuh" "$src/templates/hopper.cuh" "$src/tests/sim/kernels/hopper.cu" > "$cu" || exit 2
"$gate" --arch sm_90a --loop --keep "$out" "$cu" > "$out/hopper.loop" 2> "$out/hopper.err"
rc=$?
[ "$rc" -eq 4 ] && { echo "hopper_sass: skipped (no cuobjdump)"; exit 77; }
[ "$rc" -eq 0 ] || { cat "$out/hopper.err" "$out/hopper.loop" >&2; echo "hopper_sass: NVRTC compile for sm_90a failed or spills (exit $rc)" >&2; exit 1; }
tool=${SHORTC_CUOBJDUMP:-}
[ -n "$tool" ] || tool=$(command -v cuobjdump 2>/dev/null)
for d in /usr/local/cuda/bin /opt/nvidia-sass/nvidia/cu13/bin; do
  [ -n "$tool" ] || { [ -x "$d/cuobjdump" ] && tool="$d/cuobjdump"; }
done
[ -n "$tool" ] || { echo "hopper_sass: skipped (no cuobjdump)"; exit 77; }
"$tool" -sass "$out/sm_90a.cubin" > "$out/hopper.sass" || { echo "hopper_sass: cuobjdump failed" >&2; exit 1; }
# per kernel: HGMMA, UTMALDG, UTMASTG and SYNCS instructions
awk '
  /Function : / { k = $NF; next }
  k && /HGMMA/ { hg[k]++ }
  k && /UTMALDG/ { ld[k]++ }
  k && /UTMASTG/ { st[k]++ }
  k && /SYNCS/ { sy[k]++ }
  k { seen[k] = 1 }
  END {
    printf "%-26s %6s %8s %8s %6s\n", "# kernel", "HGMMA", "UTMALDG", "UTMASTG", "SYNCS"
    for (k in seen) printf "%-26s %6d %8d %8d %6d\n", k, hg[k], ld[k], st[k], sy[k]
  }' "$out/hopper.sass" | sort > "$out/hopper.facts"
cat "$out/hopper.facts"
awk '
  $1 ~ /^k_hop_(ss|rs|tma_gemm)/ && $2 == 0 { print "hopper_sass: " $1 " has no HGMMA at sm_90a"; bad = 1 }
  $1 ~ /^k_hop_(tma_load|tma_gemm|pipeline)/ && ($3 == 0 || $5 == 0) { print "hopper_sass: " $1 " lacks UTMALDG or SYNCS"; bad = 1 }
  $1 ~ /^k_hop_tma_store/ && $4 == 0 { print "hopper_sass: " $1 " has no UTMASTG"; bad = 1 }
  $1 !~ /^#/ { n++ }
  END { if (n < 20) { print "hopper_sass: only " n " kernels in the SASS"; bad = 1 }; exit bad }' "$out/hopper.facts" >&2 || exit 1
echo "hopper_sass: HGMMA, UTMALDG, UTMASTG and SYNCS present in the Hopper test kernels at sm_90a"
