#!/bin/sh
# generate_batch.sh SHORTC TESTS_DIR — `shortc generate` over a batch of prompts of different lengths
# (--prompts FILE, one per line; repeated --prompt with --tokenizer): one output line per prompt, each the
# same as the prompt run alone, greedy and sampled, on sim (tokens drawn on the device) and ref; --eos
# stops only the sequence that draws it; --report gives tokens/s on stderr and counts 4 bytes per draw copied
# from the device; errors for bad prompt files and conflicting inputs.
set -u
bin=$1
tests=$2
m=$tests/tokenizer/tok_tiny.arch
data=$tests/tokenizer/data
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0
. "$tests/cli/expect.sh"
printf '5 9 13\n\n100 7 250 31 2 2 2 40 41\r\n17\n' >"$tmp/prompts"
g() { "$bin" generate "$m" --random-weights 6 --max-new 6 "$@"; }

for be in sim ref; do
    for opts in "" "--temperature 1 --top-k 20 --top-p 0.9 --seed 4"; do
        # shellcheck disable=SC2086
        g --backend $be --prompts "$tmp/prompts" $opts --report >"$tmp/batch" 2>"$tmp/err" || { cat "$tmp/err"; fail=1; }
        [ "$(wc -l <"$tmp/batch")" -eq 3 ] || { echo "FAIL: $be $opts: $(cat "$tmp/batch")"; fail=1; }
        grep -Eq "^3 prompts on backend $be: [0-9]+ tokens generated in [0-9.]+ ms, [0-9.]+ tokens/s$" "$tmp/err" ||
            { echo "FAIL: $be: stderr: $(cat "$tmp/err")"; fail=1; }
        i=0
        grep -v '^[[:space:]]*$' "$tmp/prompts" | while IFS= read -r line; do
            i=$((i + 1))
            printf '%s\n' "$line" >"$tmp/one"
            # shellcheck disable=SC2086
            got=$(g --backend $be --tokens "$tmp/one" $opts 2>/dev/null)
            want=$(sed -n "${i}p" "$tmp/batch")
            [ "$got" = "$want" ] || { echo "FAIL: $be $opts: prompt $i alone gave '$got', in the batch '$want'"; exit 1; }
        done || fail=1
    done
done

# --eos: the second sequence stops before its third token; the others are unchanged unless they draw it
g --backend sim --prompts "$tmp/prompts" >"$tmp/greedy" 2>/dev/null || fail=1
eos=$(sed -n 2p "$tmp/greedy" | cut -d' ' -f3)
want=$(awk -v e="$eos" '{ s = ""; for (i = 1; i <= NF && $i != e; i++) s = s (i > 1 ? " " : "") $i; print s }' "$tmp/greedy")
got=$(g --backend sim --prompts "$tmp/prompts" --eos "$eos" 2>/dev/null)
[ "$got" = "$want" ] || { echo "FAIL: --eos $eos gave '$got', want '$want'"; fail=1; }

# --report: one token id (4 bytes) per draw comes from the device
g --backend sim --prompts "$tmp/prompts" --report >/dev/null 2>"$tmp/rep" || fail=1
grep -q "model tok_tiny (KV cache): 72 bytes copied from the device, 18 tokens generated" "$tmp/rep" ||
    { echo "FAIL: --report: $(cat "$tmp/rep")"; fail=1; }

# repeated --prompt with the tokenizer: the lines of the texts' continuations, each as alone
g --backend ref --tokenizer "$data/tokenizer.json" --prompt "Hello" --prompt "the river runs" >"$tmp/texts" 2>/dev/null || fail=1
a=$(g --backend ref --tokenizer "$data/tokenizer.json" --prompt "Hello" 2>/dev/null)
b=$(g --backend ref --tokenizer "$data/tokenizer.json" --prompt "the river runs" 2>/dev/null)
[ "$(printf '%s\n%s' "$a" "$b")" = "$(cat "$tmp/texts")" ] || { echo "FAIL: --prompt twice: $(cat "$tmp/texts")"; fail=1; }

: >"$tmp/empty"
printf '\n  \n' >"$tmp/blank"
printf '1 2\n3 x\n' >"$tmp/bad"
expect 3 "shortc: error: $tmp/blank: no prompts (every line is empty)" generate "$m" --random-weights 1 --max-new 2 \
    --prompts "$tmp/blank"
expect 3 "shortc: error: $tmp/empty: no prompts (every line is empty)" generate "$m" --random-weights 1 --max-new 2 \
    --prompts "$tmp/empty"
expect 3 "shortc: error: $tmp/bad line 2: token 2 ('x') is not a non-negative integer" generate "$m" \
    --random-weights 1 --max-new 2 --prompts "$tmp/bad"
expect 3 "shortc: error: cannot read prompts '$tmp/none': No such file or directory" generate "$m" \
    --random-weights 1 --max-new 2 --prompts "$tmp/none"
expect 2 "shortc: error: generate takes one of --tokens, --text, --prompt (repeated for a batch) and --prompts" \
    generate "$m" --random-weights 1 --max-new 2 --prompts "$tmp/prompts" --tokens "$data/ascii.ids"
exit $fail
