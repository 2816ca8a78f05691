#!/bin/sh
# golden_suite.sh SHORTC MODEL.arch NTOKENS ATOL RTOL [MODES]
#
# The simulator against the reference interpreter on one model, with seeded
# random weights (the same generator for both backends):
#   1. ref logits                         (the oracle)
#   2. sim logits from the .arch          must equal ref within |d| <= ATOL + RTOL*|ref|
#   3. sim logits with 1 worker thread    must equal (2) bitwise (no dependence on parallelism)
#   4. sim logits from the emitted .cu    must equal (2) bitwise (the literal file runs)
#   5. for each --mode in MODES (a space-separated list, e.g. "cached tokenwise"):
#      sim == ref within ATOL + RTOL*|ref| in that mode
# Prints one line per check and a summary line; exits non-zero on any failure.
set -u
shortc=$1 model=$2 ntok=$3 atol=$4 rtol=$5 modes=${6:-}
name=$(basename "$model" .arch)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/shortc-golden.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
export SHORTC_CACHE="$tmp/cache"
# Deterministic token ids spread over the vocabulary (wrapped by the model's vocab below).
vocab=$("$shortc" "$model" --dump-spec | awk '$1 == "vocab" {print $2}')
[ -n "$vocab" ] || { echo "golden: cannot read vocab of $model"; exit 1; }
awk -v n="$ntok" -v v="$vocab" 'BEGIN { for (i = 0; i < n; i++) printf "%d ", (i * 7919 + 13) % v; print "" }' > "$tmp/tokens"

check_label=$name
. "$(dirname "$0")/../tools/check.sh"
run() { "$shortc" run "$@" --random-weights 7 --tokens "$tmp/tokens"; }

check "ref backend runs" run "$model" --backend ref --logits "$tmp/ref.npy"
check "sim backend runs" run "$model" --backend sim --logits "$tmp/sim.npy"
check "sim == ref (atol $atol, rtol $rtol)" "$shortc" cmp "$tmp/sim.npy" "$tmp/ref.npy" --atol "$atol" --rtol "$rtol"
check "sim, 1 worker thread" run "$model" --backend sim --sim-threads 1 --logits "$tmp/sim1.npy"
check "sim bitwise equal across thread counts" "$shortc" cmp "$tmp/sim1.npy" "$tmp/sim.npy" --atol 0
check "emit .cu" "$shortc" "$model" -o "$tmp/$name.cu"
check "sim on the emitted .cu" run "$tmp/$name.cu" --backend sim --logits "$tmp/simcu.npy"
check "sim .cu bitwise equal to sim .arch" "$shortc" cmp "$tmp/simcu.npy" "$tmp/sim.npy" --atol 0
for mode in $modes; do
    check "ref, mode $mode" run "$model" --backend ref --mode "$mode" --logits "$tmp/ref_$mode.npy"
    check "sim, mode $mode" run "$model" --backend sim --mode "$mode" --logits "$tmp/sim_$mode.npy"
    check "mode $mode: sim == ref" "$shortc" cmp "$tmp/sim_$mode.npy" "$tmp/ref_$mode.npy" --atol "$atol" --rtol "$rtol"
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
