#!/bin/sh
# bench_memory.sh — the memory family side by side (issue 8 item 7; tests/bench/README.md). Prints
# figures and asserts nothing:
#   1. paper-size models from their cost model (`shortc compare`): attention matrix per call (queries x
#      keys of layer 0: Shortformer's 512 x 1024 against the Baevski & Auli baseline's 3072 x 3072), state
#      bytes, FLOPs per token in every mode, including token by token through the state;
#   2. the test-size models on the simulator (`bench_modes sim`): tokens/s and FLOPs per token of every mode
#      they run — cached token-by-token generation (tokenwise through Shortformer's cache) against
#      sliding-window recomputation with S = 1 (the seed's generation comparison), the recurrent model's
#      overlapping windows.
#
#   sh tests/bench/bench_memory.sh [BUILD_DIR]
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build}
shortc="$build/shortc" modes="$build/tests/bench_modes"
[ -x "$shortc" ] && [ -x "$modes" ] || { echo "bench_memory: build $build first (needs shortc and tests/bench_modes)" >&2; exit 2; }
m=$here/models
big="$m/shortformer.arch $m/baseline_ba.arch $m/gpt2_recurrent.arch $m/gpt2_small.arch"
for f in txl_wt103 txl_wt103_eval txl_wt103_lrm3 txl_enwik8 txl_lrm4; do
  big="$big $m/$f.arch"
done
echo "== paper-size models: the cost model (figures: docs/cost-model.md; [estimate] rows are a roofline, not a measurement)"
# shellcheck disable=SC2086
"$shortc" compare $big | grep -E '^(model|segment|layers|state bytes|attention, layer 0|  scores/forward|FLOPs per token|bytes per token|time per token|  (nonoverlap|sliding S|overlap K|token by token))' ||
  exit 1
echo
echo "== generation, Shortformer vs the baseline (seeds/000 §5): cached token-by-token through the cache of L' = 512"
echo "   against sliding-window recomputation with S = 1 (one full forward per token), per token [estimate]"
"$shortc" compare --stride 1 "$m/shortformer.arch" "$m/baseline_ba.arch" | grep -E '^(model|  (sliding S|token by token, cached))' ||
  exit 1
echo
echo "== test-size models on the simulator (tokens/s: this machine, the CPU simulator; FLOPs: the cost model)"
"$modes" sim "$m/shortformer_tiny.arch" "$m/gpt2_recurrent_tiny.arch" "$m/gpt2_tiny.arch"
