#!/bin/sh
# args.sh SHORTC MODELS_DIR — command-line checks of cli/main.c: bad
# `shortc run` / `shortc cmp` values and token files are one "shortc: error:"
# line and a non-zero exit, never a silently wrong value; the default prompt
# works for a model of any vocabulary; a compile whose -o or --plan-out cannot
# be written leaves neither file (nor a temporary) behind.
set -u
bin=$1
model=$2/gpt2_tiny.arch
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0

. "$(dirname "$0")/expect.sh"

echo "1 2 3" >"$tmp/ok.tokens"
printf '1\0002 3\n' >"$tmp/nul.tokens"
printf '%070d1\n' 0 >"$tmp/long.tokens"

expect 2 "shortc: error: --top needs an integer between 0 and 2147483647, found 'x'" \
    run "$model" --random-weights 1 --tokens "$tmp/ok.tokens" --top x
expect 2 "shortc: error: --top needs an integer between 0 and 2147483647, found '-3'" \
    run "$model" --random-weights 1 --tokens "$tmp/ok.tokens" --top -3
expect 2 "shortc: error: --random-weights needs an integer between 0 and 9223372036854775807, found '99999999999999999999'" \
    run "$model" --random-weights 99999999999999999999
expect 2 "shortc: error: --random-weights needs an integer between 0 and 9223372036854775807, found '1x'" \
    run "$model" --random-weights 1x
expect 2 "shortc: error: --sim-threads needs an integer between 0 and 4096, found '-5'" \
    run "$model" --random-weights 1 --sim-threads -5
expect 3 "shortc: error: $tmp/nul.tokens: token 1 is longer than 63 bytes or holds a NUL byte" \
    run "$model" --random-weights 1 --tokens "$tmp/nul.tokens"
expect 3 "shortc: error: $tmp/long.tokens: token 1 is longer than 63 bytes or holds a NUL byte" \
    run "$model" --random-weights 1 --tokens "$tmp/long.tokens"
expect 2 "shortc: error: --weights and --random-weights are exclusive" \
    run "$model" --random-weights 1 --weights "$tmp/none.safetensors"
expect 2 "shortc: error: run needs --weights FILE or --random-weights SEED" run "$model"

# the default prompt (GPT-2 ids) is folded into a 256-token vocabulary
expect 0 "" run "$model" --backend ref --random-weights 1 --logits "$tmp/a.npy" --top 1
expect 0 "" run "$model" --backend ref --random-weights 1 --tokens "$tmp/ok.tokens" --logits "$tmp/b.npy"
expect 2 "shortc: error: --atol needs a non-negative number, found 'x'" cmp "$tmp/b.npy" "$tmp/b.npy" --atol x
expect 2 "shortc: error: --rtol needs a non-negative number, found '-1'" cmp "$tmp/b.npy" "$tmp/b.npy" --rtol -1
expect 0 "" cmp "$tmp/b.npy" "$tmp/b.npy" --atol 0

# -o and --plan-out are written together or not at all
mkdir "$tmp/out.d"
expect 1 "shortc: error: cannot write '$tmp/none/p.json': No such file or directory" \
    "$model" -o "$tmp/out.d/m.cu" --plan-out "$tmp/none/p.json"
expect 1 "shortc: error: cannot write '$tmp/none/m.cu': No such file or directory" \
    "$model" -o "$tmp/none/m.cu" --plan-out "$tmp/out.d/p.json"
if [ -n "$(ls -A "$tmp/out.d")" ]; then
    echo "FAIL: a failed compile left files: $(ls -A "$tmp/out.d")"
    fail=1
fi
expect 0 "" "$model" -o "$tmp/out.d/m.cu" --plan-out "$tmp/out.d/p.json"
[ -s "$tmp/out.d/m.cu" ] && [ -s "$tmp/out.d/p.json" ] || { echo "FAIL: -o/--plan-out not written"; fail=1; }

[ "$fail" -eq 0 ] && echo "ok"
exit "$fail"
