#!/bin/sh
# eval.sh SHORTC TESTS_DIR [PYTHON3] — `shortc run --mode` and `shortc eval` on the command line:
# for each mode, the NLL eval prints equals the sum of -log p(next token) computed with numpy from
# the logits file run writes with the same mode (and ppl = exp(nll / tokens)); sliding with stride L
# equals nonoverlapping on a multiple of L; --json has nll, tokens, ppl, tokens_per_s; stdout holds
# only the result when stderr is not a terminal (no progress bar); errors are one line.
set -u
bin=$1
tests=$2
py=${3:-}
m=$tests/tokenizer/tok_tiny.arch
data=$tests/tokenizer/data
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0
. "$tests/cli/expect.sh"
common="--backend ref --random-weights 4 --tokenizer $data --text $tests/tokenizer/corpus.txt"

for mode in "nonoverlapping" "sliding --stride 5" "windows --overlap 10" "tokenwise"; do
    # shellcheck disable=SC2086
    "$bin" run "$m" $common --mode $mode --logits "$tmp/l.npy" || fail=1
    # shellcheck disable=SC2086
    "$bin" eval "$m" $common --mode $mode --json >"$tmp/e.json" 2>"$tmp/e.err" || fail=1
    [ -s "$tmp/e.err" ] && { echo "FAIL: eval wrote to stderr: $(cat "$tmp/e.err")"; fail=1; }
    "$bin" tokenize --tokenizer "$data" --text "$tests/tokenizer/corpus.txt" >"$tmp/ids" || fail=1
    [ -z "$py" ] && continue
    "$py" - "$tmp/l.npy" "$tmp/ids" "$tmp/e.json" "$mode" <<'PY' || fail=1
import json, sys
import numpy as np
logits = np.load(sys.argv[1]).astype(np.float64)
ids = np.array(open(sys.argv[2]).read().split(), dtype=np.int64)
got = json.load(open(sys.argv[3]))
assert logits.shape == (len(ids), 377), logits.shape
rows = logits[:-1]
mx = rows.max(axis=1, keepdims=True)
logp = rows - mx - np.log(np.exp(rows - mx).sum(axis=1, keepdims=True))
nll = -logp[np.arange(len(ids) - 1), ids[1:]].sum()
ok = abs(nll - got["nll"]) <= 1e-4 * abs(nll) and got["tokens"] == len(ids) - 1 \
    and abs(got["ppl"] - np.exp(nll / (len(ids) - 1))) <= 1e-4 * got["ppl"] and got["tokens_per_s"] > 0
if not ok:
    print(f"FAIL: mode {sys.argv[4]}: numpy nll {nll} over {len(ids) - 1}, eval {got}")
    sys.exit(1)
PY
done

# sliding with stride L = nonoverlapping on a multiple of L (72 = 3 x 24 tokens)
"$bin" tokenize --tokenizer "$data" --text "$tests/tokenizer/corpus.txt" | tr ' ' '\n' | head -72 >"$tmp/t72"
"$bin" eval "$m" --backend ref --random-weights 4 --tokens "$tmp/t72" --mode nonoverlapping >"$tmp/a" || fail=1
"$bin" eval "$m" --backend ref --random-weights 4 --tokens "$tmp/t72" --stride 24 >"$tmp/b" || fail=1
[ "$(sed 's/.*: nll \([^ ]*\) .*/\1/' "$tmp/a")" = "$(sed 's/.*: nll \([^ ]*\) .*/\1/' "$tmp/b")" ] ||
    { echo "FAIL: sliding 24 and nonoverlapping differ: $(cat "$tmp/a") / $(cat "$tmp/b")"; fail=1; }
grep -q "^tok_tiny on ref, mode sliding (stride 24): nll [0-9.]* nats over 71 tokens, ppl [0-9.]*, [0-9.]* tokens/s$" \
    "$tmp/b" || { echo "FAIL: text result: $(cat "$tmp/b")"; fail=1; }

# errors
expect 1 "shortc: error: model 'tok_tiny' keeps no state across segments (a PIA cache or memories), so mode 'cached' cannot run it; use nonoverlapping, sliding, windows or tokenwise" \
    eval "$m" --random-weights 1 --backend ref --tokens "$tmp/t72" --mode cached
expect 2 "shortc: error: unknown mode 'slide' (expected nonoverlapping, sliding, windows, tokenwise or cached)" \
    eval "$m" --random-weights 1 --backend ref --tokens "$tmp/t72" --mode slide
expect 1 "shortc: error: --overlap applies to --mode windows only, not 'sliding'" \
    run "$m" --random-weights 1 --backend ref --tokens "$tmp/t72" --mode sliding --overlap 3
expect 3 "shortc: error: stride 25 of model 'tok_tiny': expected 1 to its window of 24 tokens" \
    eval "$m" --random-weights 1 --backend ref --tokens "$tmp/t72" --stride 25
expect 2 "shortc: error: run takes --chunk only without --mode" \
    run "$m" --random-weights 1 --backend ref --tokens "$tmp/t72" --mode sliding --chunk 2
echo 5 >"$tmp/one"
expect 3 "shortc: error: eval needs at least 2 tokens (one prediction), found 1" \
    eval "$m" --random-weights 1 --backend ref --tokens "$tmp/one"
expect 2 "shortc: error: eval needs --tokens FILE or --text FILE" eval "$m" --random-weights 1
# a token outside the vocabulary is named by its index in the whole file, not in its window
awk '{ for (i = 1; i <= NF; i++) printf "%s ", (++n == 50 ? 9999 : $i) } END { print "" }' "$tmp/t72" >"$tmp/oov"
vocab=$("$bin" "$m" --dump-spec | awk '$1 == "vocab" {print $2; exit}')
for cmd in eval run; do
  expect 3 "shortc: error: $tmp/oov: token 9999 at index 49 is outside the vocabulary [0, $vocab) of model 'tok_tiny'" \
      $cmd "$m" --random-weights 1 --backend ref --tokens "$tmp/oov" --stride 5
done
exit $fail
