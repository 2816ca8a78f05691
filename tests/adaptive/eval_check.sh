#!/bin/sh
# eval_check.sh SHORTC MODEL.arch — `shortc eval` of an adaptive model (its logits are already
# log-probabilities) gives the same NLL on sim (the emitted kernels) as on ref (the interpreter),
# in the nonoverlapping and the sliding mode (stride 5: windows overlap, positions P > 0 recomputed),
# with seeded random weights through the CLI. Fails on a difference above 1e-5 relative.
set -u
shortc=$1 model=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
vocab=$("$shortc" "$model" --dump-spec | awk '$1 == "vocab" {print $2}')
awk -v v="$vocab" 'BEGIN { for (i = 0; i < 150; i++) printf "%d ", (i * 7919 + 13) % v; print "" }' > "$tmp/tokens"
fail=0
for mode in "--mode nonoverlapping" "--mode sliding --stride 5"; do
    for b in ref sim; do
        # shellcheck disable=SC2086
        "$shortc" eval "$model" --random-weights 3 --tokens "$tmp/tokens" --backend $b $mode --json >"$tmp/$b" 2>"$tmp/err" ||
            { echo "FAIL: eval on $b ($mode):"; cat "$tmp/err"; fail=1; }
    done
    nll() { sed -n 's/.*"nll": \([^,]*\),.*/\1/p' "$1"; }
    a=$(nll "$tmp/ref") b=$(nll "$tmp/sim")
    if [ -z "$a" ] || [ -z "$b" ] || ! awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-5 * (a < 0 ? -a : a)) }'; then
        echo "FAIL: $mode: nll ref '$a' sim '$b'"; fail=1
    else
        echo "ok   $mode: nll ref $a sim $b"
    fi
done
exit $fail
