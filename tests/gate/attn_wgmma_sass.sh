#!/bin/sh
# attn_wgmma_sass.sh — the sm_90a attention kernel on a real compiler (docs/attention/hopper.md):
#
#   attn_wgmma_sass.sh GATE_BIN SRC_DIR OUT_DIR
#
# Builds the .cu the emitter would (templates/prelude.cuh, hopper.cuh, attn_wgmma.cuh and the kernels of
# tests/sim/kernels/attn_wgmma.cu), compiles it with NVRTC for sm_90a through nvrtc_gate (no compile error,
# no spill: nvrtc_gate fails on either; MMAs in each kernel's main loop), then reads its SASS with cuobjdump
# and requires in every kernel warpgroup MMA (HGMMA), no warp-level MMA (HMMA) anywhere, TMA loads
# (UTMALDG) and mbarrier operations (SYNCS). Exit 77 (skipped) when cuobjdump is absent ($SHORTC_CUOBJDUMP, $PATH, /usr/local/cuda/bin,
# /opt/nvidia-sass/nvidia/cu13/bin).
set -u
gate=$1 src=$2 out=$3
mkdir -p "$out" || exit 2
cu="$out/attn_wgmma_full.cu"
cat "$src/templates/prelude.cuh" "$src/templates/hopper.cuh" "$src/templates/attn_wgmma.cuh" \
    "$src/tests/sim/kernels/attn_wgmma.cu" > "$cu" || exit 2
"$gate" --arch sm_90a --loop --keep "$out" "$cu" > "$out/attn_wgmma.loop" 2> "$out/attn_wgmma.err"
rc=$?
[ "$rc" -eq 4 ] && { echo "attn_wgmma_sass: skipped (no cuobjdump)"; exit 77; }
[ "$rc" -eq 0 ] || { cat "$out/attn_wgmma.err" "$out/attn_wgmma.loop" >&2; echo "attn_wgmma_sass: NVRTC compile for sm_90a failed or spills (exit $rc)" >&2; exit 1; }
cat "$out/attn_wgmma.loop"
# the main loop (the innermost loop holding an MMA, nvrtc_gate --loop) holds the kernel's wgmmas
awk '$1 !~ /^#/ && $6 == 0 { print "attn_wgmma_sass: " $1 " has no MMA in its main loop"; bad = 1 } END { exit bad }' \
    "$out/attn_wgmma.loop" >&2 || exit 1
tool=${SHORTC_CUOBJDUMP:-}
[ -n "$tool" ] || tool=$(command -v cuobjdump 2>/dev/null)
for d in /usr/local/cuda/bin /opt/nvidia-sass/nvidia/cu13/bin; do
  [ -n "$tool" ] || { [ -x "$d/cuobjdump" ] && tool="$d/cuobjdump"; }
done
[ -n "$tool" ] || { echo "attn_wgmma_sass: skipped (no cuobjdump)"; exit 77; }
"$tool" -sass "$out/sm_90a.cubin" > "$out/attn_wgmma.sass" || { echo "attn_wgmma_sass: cuobjdump failed" >&2; exit 1; }
awk '
  /Function : / { k = $NF; next }
  k && /HGMMA/ { hg[k]++ }
  k && /[^G]HMMA/ { hm[k]++ }
  k && /UTMALDG/ { ld[k]++ }
  k && /SYNCS/ { sy[k]++ }
  k { seen[k] = 1 }
  END {
    printf "%-26s %6s %6s %8s %6s\n", "# kernel", "HGMMA", "HMMA", "UTMALDG", "SYNCS"
    for (k in seen) printf "%-26s %6d %6d %8d %6d\n", k, hg[k], hm[k], ld[k], sy[k]
  }' "$out/attn_wgmma.sass" | sort > "$out/attn_wgmma.facts"
cat "$out/attn_wgmma.facts"
awk '
  $1 !~ /^#/ && ($2 == 0 || $3 != 0 || $4 == 0 || $5 == 0) { print "attn_wgmma_sass: " $1 " lacks HGMMA, UTMALDG or SYNCS, or holds HMMA"; bad = 1 }
  $1 !~ /^#/ { n++ }
  END { if (n < 8) { print "attn_wgmma_sass: only " n " kernels in the SASS"; bad = 1 }; exit bad }' "$out/attn_wgmma.facts" >&2 || exit 1
echo "attn_wgmma_sass: HGMMA (no HMMA), UTMALDG and SYNCS in every sm_90a attention kernel, no spill"
