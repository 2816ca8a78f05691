#!/bin/sh
# txl_chunks.sh SHORTC MODEL.arch NTOKENS ATOL RTOL K...
#
# A Transformer-XL model's memories across calls of K tokens (`run --chunk K`:
# every call but a segment's first at P > 0, reading the memories of earlier
# calls and segments), the simulator against the reference interpreter on
# seeded random weights, |d| <= ATOL + RTOL*|ref|, for each K. Prints one
# line per check and a summary line; exits non-zero on any failure.
set -u
shortc=$1 model=$2 ntok=$3 atol=$4 rtol=$5
shift 5
name=$(basename "$model" .arch)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/shortc-chunks.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
export SHORTC_CACHE="$tmp/cache"
vocab=$("$shortc" "$model" --dump-spec | awk '$1 == "vocab" {print $2}')
[ -n "$vocab" ] || { echo "txl_chunks: cannot read vocab of $model"; exit 1; }
awk -v n="$ntok" -v v="$vocab" 'BEGIN { for (i = 0; i < n; i++) printf "%d ", (i * 7919 + 13) % v; print "" }' > "$tmp/tokens"

check_label=$name
. "$(dirname "$0")/../tools/check.sh"
run() { "$shortc" run "$model" --random-weights 7 --tokens "$tmp/tokens" "$@"; }

for k in "$@"; do
    check "ref, $k tokens per call" run --backend ref --chunk "$k" --logits "$tmp/ref_$k.npy"
    check "sim, $k tokens per call" run --backend sim --chunk "$k" --logits "$tmp/sim_$k.npy"
    check "$k tokens per call: sim == ref (atol $atol, rtol $rtol)" \
        "$shortc" cmp "$tmp/sim_$k.npy" "$tmp/ref_$k.npy" --atol "$atol" --rtol "$rtol"
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
