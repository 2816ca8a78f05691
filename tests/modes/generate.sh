#!/bin/sh
# generate.sh SHORTC TESTS_DIR — sampling in `shortc generate`: --temperature 0 and --top-k 1 are
# the greedy default; a --seed repeats its output and the sampled ids differ from greedy for some
# seed; --eos stops before the end token; --report gives tokens/s on stderr; bad settings are
# one-line errors.
set -u
bin=$1
tests=$2
m=$tests/tokenizer/tok_tiny.arch
data=$tests/tokenizer/data
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0
. "$tests/cli/expect.sh"
g() { "$bin" generate "$m" --backend ref --random-weights 6 --tokens "$data/ascii.ids" --max-new 12 "$@"; }

g >"$tmp/greedy" || fail=1
g --temperature 0 --seed 9 >"$tmp/t0" || fail=1
g --temperature 1.5 --top-k 1 >"$tmp/k1" || fail=1
cmp -s "$tmp/greedy" "$tmp/t0" && cmp -s "$tmp/greedy" "$tmp/k1" || { echo "FAIL: greedy settings differ"; fail=1; }
g --temperature 1 --top-k 50 --top-p 0.95 --seed 3 >"$tmp/s1" || fail=1
g --temperature 1 --top-k 50 --top-p 0.95 --seed 3 >"$tmp/s2" || fail=1
cmp -s "$tmp/s1" "$tmp/s2" || { echo "FAIL: seed 3 does not repeat"; fail=1; }
differ=0
for seed in 1 2 3 4; do
    g --temperature 1 --seed $seed >"$tmp/s" || fail=1
    grep -Eqx '[0-9]+( [0-9]+){11}' "$tmp/s" || { echo "FAIL: sampled output: $(cat "$tmp/s")"; fail=1; }
    cmp -s "$tmp/s" "$tmp/greedy" || differ=1
done
[ $differ = 1 ] || { echo "FAIL: sampling at temperature 1 always gave the greedy ids"; fail=1; }
# --eos: the greedy output cut before the first occurrence of its third id
eos=$(cut -d' ' -f3 "$tmp/greedy")
want=$(awk -v e="$eos" '{ s = ""; for (i = 1; i <= NF && $i != e; i++) s = s (i > 1 ? " " : "") $i; print s }' "$tmp/greedy")
got=$(g --eos "$eos")
[ "$got" = "$want" ] || { echo "FAIL: --eos $eos gave '$got', want '$want'"; fail=1; }
g --report >/dev/null 2>"$tmp/rep" || fail=1
grep -q "12 tokens generated, [0-9.]* tokens/s$" "$tmp/rep" || { echo "FAIL: --report: $(cat "$tmp/rep")"; fail=1; }

expect 2 "shortc: error: --top-p needs a number between 1e-09 and 1, found '0'" generate "$m" --random-weights 1 \
    --tokens "$data/ascii.ids" --max-new 2 --top-p 0
expect 2 "shortc: error: --temperature needs a number between 0 and 1e+06, found '-1'" generate "$m" \
    --random-weights 1 --tokens "$data/ascii.ids" --max-new 2 --temperature -1
vocab=$("$bin" "$m" --dump-spec | awk '$1 == "vocab" {print $2; exit}')
expect 3 "shortc: error: --eos $vocab is outside the vocabulary [0, $vocab) of model 'tok_tiny'" generate "$m" \
    --random-weights 1 --tokens "$data/ascii.ids" --max-new 2 --eos "$vocab"
exit $fail
