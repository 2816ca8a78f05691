#!/bin/sh
# state.sh SHORTC MODELS_DIR — the session state through the command line:
# `run --chunk 1` and `--chunk 7` give the logits of one call for every
# bundled tiny model on ref (its KV cache) and for two on sim (which re-runs
# the sequence so far); a token file longer than the segment gives
# one logits row per token, its segments evaluated independently (the second
# segment's rows equal a run of those tokens alone); `generate` prints only
# the generated ids on stdout and one summary line with tokens/s on stderr
# (nothing with --quiet), each id the argmax of a full re-run of the prompt and the
# ids before it (on ref and on sim); a generation past the learned positions
# and an empty prompt are one-line errors.
set -u
bin=$1
models=$2
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0
export SHORTC_CACHE="$tmp/cache"

. "$(dirname "$0")/expect.sh"

# ids: N pseudo-random token ids below V, whitespace-separated
ids() { awk -v n="$1" -v v="$2" -v s="$3" 'BEGIN { x = s; for (i = 0; i < n; i++) { x = (x * 1103 + 12345) % 65536; printf "%d ", x % v } print "" }'; }

for m in gpt2_tiny baseline_ba_tiny mixed_tiny gpt2_tiny_half; do
    ids 33 200 7 >"$tmp/t.txt"
    "$bin" run "$models/$m.arch" --backend ref --random-weights 3 --tokens "$tmp/t.txt" --logits "$tmp/one.npy" || fail=1
    for k in 1 7; do
        "$bin" run "$models/$m.arch" --backend ref --random-weights 3 --tokens "$tmp/t.txt" --chunk $k \
            --logits "$tmp/c$k.npy" || fail=1
        "$bin" cmp "$tmp/one.npy" "$tmp/c$k.npy" --atol 0 --rtol 1e-5 >/dev/null || { echo "FAIL: $m --chunk $k differs"; fail=1; }
    done
done

for m in gpt2_tiny mixed_tiny; do
    ids 33 200 5 >"$tmp/t.txt"
    "$bin" run "$models/$m.arch" --backend sim --random-weights 3 --tokens "$tmp/t.txt" --logits "$tmp/one.npy" || fail=1
    "$bin" run "$models/$m.arch" --backend sim --random-weights 3 --tokens "$tmp/t.txt" --chunk 7 --logits "$tmp/c7.npy" || fail=1
    "$bin" cmp "$tmp/one.npy" "$tmp/c7.npy" --atol 0 --rtol 1e-5 >/dev/null || { echo "FAIL: $m on sim: --chunk 7 differs"; fail=1; }
done

# a file longer than the segment (baseline_ba_tiny: 96): 200 tokens = segments of 96, 96, 8
ids 200 256 11 >"$tmp/long.txt"
"$bin" run "$models/baseline_ba_tiny.arch" --backend ref --random-weights 1 --tokens "$tmp/long.txt" \
    --logits "$tmp/long.npy" --chunk 5 || fail=1
head -c 200 "$tmp/long.npy" | grep -q "'shape': (200, 256)" || { echo "FAIL: long file: not 200 rows"; fail=1; }
# the last segment (tokens 192..199) alone gives the last 8 rows
tr -s ' ' '\n' <"$tmp/long.txt" | grep . | tail -n 8 | tr '\n' ' ' >"$tmp/tail.txt"
"$bin" run "$models/baseline_ba_tiny.arch" --backend ref --random-weights 1 --tokens "$tmp/tail.txt" --logits "$tmp/tail.npy" || fail=1
tail -c $((8 * 256 * 4)) "$tmp/long.npy" >"$tmp/a.bin"
tail -c $((8 * 256 * 4)) "$tmp/tail.npy" >"$tmp/b.bin"
cmp -s "$tmp/a.bin" "$tmp/b.bin" || { echo "FAIL: the last segment is not evaluated on its own"; fail=1; }

# generate: stdout is the ids only, stderr one summary line (none with --quiet); each id is the argmax of a full re-run
m="$models/gpt2_tiny.arch"
echo "5 17 99 3" >"$tmp/prompt.txt"
for b in ref sim; do
    "$bin" generate "$m" --backend $b --random-weights 2 --tokens "$tmp/prompt.txt" --max-new 6 >"$tmp/gen.txt" 2>"$tmp/gen.err" || fail=1
    # stderr: the one summary line (issue 6: timings to stderr), nothing else
    grep -Eqx "1 prompt on backend $b: 6 tokens generated in [0-9.]+ ms, [0-9.]+ tokens/s" "$tmp/gen.err" &&
        [ "$(wc -l <"$tmp/gen.err")" -eq 1 ] || { echo "FAIL: generate on $b: stderr is not the summary: $(cat "$tmp/gen.err")"; fail=1; }
    "$bin" generate "$m" --backend $b --random-weights 2 --tokens "$tmp/prompt.txt" --max-new 6 --quiet >"$tmp/genq.txt" 2>"$tmp/genq.err" || fail=1
    [ -s "$tmp/genq.err" ] && { echo "FAIL: generate --quiet on $b wrote to stderr: $(cat "$tmp/genq.err")"; fail=1; }
    cmp -s "$tmp/gen.txt" "$tmp/genq.txt" || { echo "FAIL: generate --quiet on $b changed stdout"; fail=1; }
    grep -Eqx '[0-9]+( [0-9]+){5}' "$tmp/gen.txt" || { echo "FAIL: generate output on $b: $(cat "$tmp/gen.txt")"; fail=1; }
    cp "$tmp/prompt.txt" "$tmp/ctx.txt"
    for id in $(cat "$tmp/gen.txt"); do
        want=$("$bin" run "$m" --backend $b --random-weights 2 --tokens "$tmp/ctx.txt" --top 1 | sed -n 's/^top 1 next tokens: \([0-9]*\) .*/\1/p')
        [ "$want" = "$id" ] || { echo "FAIL: generated $id on $b, a full re-run gives $want"; fail=1; }
        printf ' %s' "$id" >>"$tmp/ctx.txt"
    done
done

# errors
expect 1 "shortc: error: a 4-token prompt and 126 new tokens go past the 128 positions model 'gpt2_tiny' can address" \
    generate "$m" --backend ref --random-weights 2 --tokens "$tmp/prompt.txt" --max-new 126
expect 2 "shortc: error: generate needs --tokens PROMPT and --max-new N" \
    generate "$m" --backend ref --random-weights 2 --tokens "$tmp/prompt.txt"
: >"$tmp/empty.txt"
expect 3 "shortc: error: $tmp/empty.txt: no tokens (the file is empty or only whitespace)" \
    generate "$m" --backend ref --random-weights 2 --tokens "$tmp/empty.txt" --max-new 2
expect 2 "shortc: error: --chunk needs an integer between 1 and 2147483647, found '0'" \
    run "$m" --backend ref --random-weights 2 --chunk 0
expect 1 "shortc: error: a 4-token prompt and 126 new tokens go past the 128 positions model 'gpt2_tiny' can address" \
    generate "$m" --backend sim --random-weights 2 --tokens "$tmp/prompt.txt" --max-new 126

[ $fail -eq 0 ] && echo "state: ok"
exit $fail
