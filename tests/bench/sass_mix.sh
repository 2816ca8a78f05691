#!/bin/sh
# sass_mix.sh — the SASS instruction mix of every kernel the bundled models emit
# (tests/bench/README.md): static counts from the NVRTC cubins through cuobjdump,
# per model and arch. Prints figures and asserts nothing.
#
#   sh tests/bench/sass_mix.sh [BUILD_DIR] [--arch sm_XX]... [--attn] [MODEL.arch|FILE.cu...]
#
# BUILD_DIR defaults to build; archs to sm_80 and sm_90; models to models/*.arch
# (a .cu is used as it is). --attn adds the attention engine's two paths for
# every kind, bf16 at gpt2_small's 12 heads of 64 (BUILD_DIR/tests/bench_attn
# --cu): _cuda_core kernels (attn_engine.cuh) beside _tc ones (attn_mma.cuh; also
# at head_dim 128). tests/bench/attn_sass.sh has the tensor-core path's main loop.
# The columns are nvrtc_gate --sass's (mma: HMMA; ldg16..ldg128: global loads by
# width; ldgsts: cp.async; ldsm: ldmatrix; ldl/stl: local memory).
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
build=build
case "${1:-}" in --*|*.arch|"") ;; *) build=$1; shift ;; esac
archs="" models="" attn=0
while [ $# -gt 0 ]; do
  case "$1" in
    --arch) archs="$archs --arch $2"; shift 2 ;;
    --attn) attn=1; shift ;;
    *) models="$models $1"; shift ;;
  esac
done
shortc="$build/shortc" gate="$build/tests/nvrtc_gate"
[ -x "$shortc" ] && [ -x "$gate" ] || { echo "sass_mix: build $build first (needs shortc and tests/nvrtc_gate)" >&2; exit 2; }
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
if [ "$attn" = 1 ]; then
  "$build/tests/bench_attn" --cu "$tmp/attn_paths.cu" || exit 1
  models="$models $tmp/attn_paths.cu"
fi
[ -n "$models" ] || models=$(ls "$here"/models/*.arch)
first=1
for m in $models; do
  case "$m" in
    *.cu) name=$(basename "$m" .cu); [ "$m" = "$tmp/$name.cu" ] || cp "$m" "$tmp/$name.cu" || exit 1 ;;
    *) name=$(basename "$m" .arch); "$shortc" "$m" -o "$tmp/$name.cu" || exit 1 ;;
  esac
  # shellcheck disable=SC2086 # archs is a list of options
  "$gate" $archs --sass --model "$name" "$tmp/$name.cu" > "$tmp/$name.sass"
  rc=$?
  [ "$rc" -eq 4 ] && exit 0 # nvrtc_gate said why (no cuobjdump)
  [ "$rc" -eq 0 ] || { echo "sass_mix: $name: nvrtc_gate --sass failed (exit $rc)" >&2; exit 1; }
  if [ "$first" = 1 ]; then cat "$tmp/$name.sass"; first=0; else grep -v '^#' "$tmp/$name.sass"; fi
done
