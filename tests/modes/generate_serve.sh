#!/bin/sh
# generate_serve.sh SHORTC TESTS_DIR — `shortc generate --prompts FILE --max-batch N` (continuous batching,
# srt_scheduler): with fewer slots than prompts (queued prompts join as others finish, with different lengths
# and --max-new / --eos ending them at different steps) the output is the plain batch's line for line, greedy
# and sampled, on sim and ref; stderr has the prefill and decode throughput, --json its fields, --report a row
# per pass with its batch; a bad --max-batch is a usage error.
set -u
bin=$1
tests=$2
m=$tests/tokenizer/tok_tiny.arch
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0
. "$tests/cli/expect.sh"
printf '5 9 13\n100 7 250 31 2 2 2 40 41\n17\n3 4\n8 8 8 8 8 8\n' >"$tmp/prompts"
g() { "$bin" generate "$m" --random-weights 6 --max-new 6 --prompts "$tmp/prompts" "$@"; }

for be in sim ref; do
    for opts in "" "--temperature 1 --top-k 20 --top-p 0.9 --seed 4"; do
        # shellcheck disable=SC2086
        g --backend $be $opts >"$tmp/plain" 2>/dev/null || fail=1
        # shellcheck disable=SC2086
        g --backend $be $opts --max-batch 2 >"$tmp/sched" 2>"$tmp/err" || { cat "$tmp/err"; fail=1; }
        [ "$(wc -l <"$tmp/sched")" -eq 5 ] && cmp -s "$tmp/plain" "$tmp/sched" ||
            { echo "FAIL: $be $opts: --max-batch 2 gave '$(cat "$tmp/sched")', the batch '$(cat "$tmp/plain")'"; fail=1; }
        grep -Eq "^continuous batching on 2 slots, [0-9]+ steps: prefill 21 tokens in [0-9.]+ ms \([0-9.]+ tokens/s\), decode 25 tokens in [0-9.]+ ms \([0-9.]+ tokens/s\)$" "$tmp/err" ||
            { echo "FAIL: $be $opts: stderr: $(cat "$tmp/err")"; fail=1; }
    done
done

# --eos: each sequence stops at its first eos, as in the plain batch (they leave at different steps)
eos=$(sed -n 2p "$tmp/plain" | cut -d' ' -f3)
g --backend sim --eos "$eos" >"$tmp/plain_eos" 2>/dev/null || fail=1
g --backend sim --eos "$eos" --max-batch 3 >"$tmp/sched_eos" 2>/dev/null || fail=1
cmp -s "$tmp/plain_eos" "$tmp/sched_eos" || { echo "FAIL: --eos $eos: '$(cat "$tmp/sched_eos")', want '$(cat "$tmp/plain_eos")'"; fail=1; }

# --json: the throughput fields; --report: one row per pass with its batch (decode rows of 2 and of 1)
g --backend sim --max-batch 2 --json --report >"$tmp/json" 2>/dev/null || fail=1
for key in '"max_batch": 2' '"prefill_tokens": 21' '"decode_tokens": 25' '"prefill_tokens_per_s": ' \
           '"decode_tokens_per_s": ' '"prefill": false, "batch": 2' '"prefill": false, "batch": 1' '"prefill": true, "batch": 2'; do
    grep -qF "$key" "$tmp/json" || { echo "FAIL: --json lacks $key: $(cat "$tmp/json")"; fail=1; }
done
g --backend sim --max-batch 2 --report >/dev/null 2>"$tmp/rep" || fail=1
grep -Eq '^ +[0-9]+  decode +2 ' "$tmp/rep" && grep -Eq '^ +[0-9]+  prefill +2 ' "$tmp/rep" ||
    { echo "FAIL: --report: $(cat "$tmp/rep")"; fail=1; }

expect 2 "shortc: error: --max-batch needs an integer between 1 and 256, found '0'" generate "$m" --random-weights 1 \
    --max-new 2 --prompts "$tmp/prompts" --max-batch 0
exit $fail
