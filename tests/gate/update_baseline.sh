#!/bin/sh
# update_baseline.sh — regenerates tests/kernels.baseline (docs/checks.md).
#
#   tests/gate/update_baseline.sh [BUILD_DIR]      (default: build)
#
# Emits every model in models/*.arch with BUILD_DIR/shortc, compiles it with
# BUILD_DIR/tests/nvrtc_gate for sm_80 and sm_90 and writes the tables into
# tests/kernels.baseline. Nothing is written if a model fails to compile or
# spills. Commit the file with the change that moved the numbers.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build}
case "$build" in /*) ;; *) build="$(pwd)/$build" ;; esac
shortc="$build/shortc"
gate="$build/tests/nvrtc_gate"
for bin in "$shortc" "$gate"; do
  [ -x "$bin" ] || { echo "update_baseline.sh: $bin not found; build first (cmake --build $build)" >&2; exit 2; }
done
work=$(mktemp -d) || exit 2
trap 'rm -rf "$work"' EXIT INT TERM
tmp="$work/kernels.baseline"
{
  echo "# tests/kernels.baseline: ptxas facts for every kernel of every model in models/,"
  echo "# from tests/tools/nvrtc_gate (NVRTC, --ptxas-options=-v). Checked by the gate_baseline_*"
  echo "# tests; regenerate with tests/gate/update_baseline.sh [BUILD_DIR] (docs/checks.md)."
  echo "# regs: registers/thread; smem: static shared bytes; spill_st/spill_ld: spill bytes; stack: frame bytes."
  "$gate" --version | sed 's/^/# /'
  printf '%-20s %-48s %-6s %5s %6s %8s %8s %6s\n' "# model" kernel arch regs smem spill_st spill_ld stack
} > "$tmp"
failed=0
for arch in "$top"/models/*.arch; do
  name=$(basename "$arch" .arch)
  if sh "$top/tests/gate/gate_model.sh" --shortc "$shortc" --gate "$gate" --out "$work" --table-only "$arch" > "$work/$name.rows"; then
    grep -v '^#' "$work/$name.rows" >> "$tmp"
    echo "update_baseline.sh: $name: $(grep -vc '^#' "$work/$name.rows") rows"
  else
    failed=1
  fi
done
if [ "$failed" -ne 0 ]; then
  echo "update_baseline.sh: some models failed (above); tests/kernels.baseline left as it was" >&2
  exit 1
fi
if [ -f "$top/tests/kernels.baseline" ] && cmp -s "$tmp" "$top/tests/kernels.baseline"; then
  echo "update_baseline.sh: tests/kernels.baseline is unchanged"
else
  [ -f "$top/tests/kernels.baseline" ] && diff -u "$top/tests/kernels.baseline" "$tmp" | sed '1,2d'
  cp "$tmp" "$top/tests/kernels.baseline" && echo "update_baseline.sh: wrote tests/kernels.baseline"
fi
