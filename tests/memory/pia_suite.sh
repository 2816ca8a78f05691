#!/bin/sh
# pia_suite.sh SHORTC MODEL.arch NTOKENS ATOL RTOL
#
# Position-infused attention (docs/attention/pia.md) on the simulator against
# the reference interpreter, seeded random weights, NTOKENS tokens (several
# segments), in the modes that carry the cache:
#   1. cached:    segments through the cache       sim == ref within ATOL + RTOL*|ref|
#   2. tokenwise: one token per call (the decode program)   sim == ref
#   3. the emitted .cu on sim                      == (1) from the .arch, bitwise
# Prints one line per check and a summary; exits non-zero on any failure.
set -u
shortc=$1 model=$2 ntok=$3 atol=$4 rtol=$5
name=$(basename "$model" .arch)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/shortc-pia.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
export SHORTC_CACHE="$tmp/cache"
vocab=$("$shortc" "$model" --dump-spec | awk '$1 == "vocab" {print $2}')
[ -n "$vocab" ] || { echo "pia_suite: cannot read vocab of $model"; exit 1; }
awk -v n="$ntok" -v v="$vocab" 'BEGIN { for (i = 0; i < n; i++) printf "%d ", (i * 7919 + 13) % v; print "" }' > "$tmp/tokens"

pass=0 fail=0
check() { # description, command...
    desc=$1; shift
    if out=$("$@" 2>&1); then
        pass=$((pass + 1)); echo "ok   $name: $desc"
    else
        fail=$((fail + 1)); echo "FAIL $name: $desc"; printf '%s\n' "$out" | sed 's/^/     /'
    fi
}
run() { "$shortc" run "$@" --random-weights 7 --tokens "$tmp/tokens"; }

for mode in cached tokenwise; do
    check "ref $mode" run "$model" --backend ref --mode $mode --logits "$tmp/ref_$mode.npy"
    check "sim $mode" run "$model" --backend sim --mode $mode --logits "$tmp/sim_$mode.npy"
    check "$mode: sim == ref (atol $atol, rtol $rtol)" "$shortc" cmp "$tmp/sim_$mode.npy" "$tmp/ref_$mode.npy" --atol "$atol" --rtol "$rtol"
done
check "emit .cu" "$shortc" "$model" -o "$tmp/$name.cu"
check "sim on the emitted .cu, cached" run "$tmp/$name.cu" --backend sim --mode cached --logits "$tmp/simcu.npy"
check "sim .cu bitwise equal to sim .arch" "$shortc" cmp "$tmp/simcu.npy" "$tmp/sim_cached.npy" --atol 0
echo "$name: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
