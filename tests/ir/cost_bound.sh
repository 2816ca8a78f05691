#!/bin/sh
# The cost model's time bound (issue 26: report/compare were O(segment^2): gpt2_small with segment 8192 took
# 68 s, 32768 about 18 minutes): gpt2_small's dimensions with segment 32768 reported in under 2 s and with
# 16777216 (the largest segment allowed) in under 10 s, `compare` of the two as well. gpt2_small stores bf16,
# so its attention is priced by the tensor-core path's tiles (cost.c, MmaTiles): the token-by-token row sums
# their seconds over runs of calls with the same tiles. About 0.01 s at 32768 and 0.3 s at 16777216; the old
# loop would take minutes even at 32768.
#   cost_bound.sh SHORTC GPT2_SMALL_ARCH
bin=$1 src=$2
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0
now() { date +%s.%N; }
# seconds_within LIMIT CMD...: runs CMD (output to $tmp/out), fails when it errs or takes LIMIT s or more
seconds_within() {
    limit=$1
    shift
    t0=$(now)
    timeout $((limit * 3)) "$@" >"$tmp/out" 2>&1 || { echo "FAIL: $* exited $?: $(tail -3 "$tmp/out")"; fail=1; return; }
    t=$(echo "$(now) - $t0" | bc)
    echo "$* : $t s"
    [ "$(echo "$t < $limit" | bc)" = 1 ] || { echo "FAIL: took $t s, the bound is $limit s"; fail=1; }
}
grep -q '^  layout [a-z]* *bf16 ' "$src" || { echo "FAIL: $src stores no bf16: the tensor-core path goes untimed"; exit 1; }
for s in 32768 16777216; do
    sed -e "s/segment    1024;/segment    $s;/" -e "s/max=1024/max=$s/" "$src" >"$tmp/gpt2_$s.arch"
    grep -q "segment    $s;" "$tmp/gpt2_$s.arch" || { echo "FAIL: could not set the segment in $src"; exit 1; }
done
seconds_within 2 "$bin" report "$tmp/gpt2_32768.arch"
grep -q "token by token, no cache" "$tmp/out" || { echo "FAIL: no token mode in the report"; fail=1; }
seconds_within 10 "$bin" report "$tmp/gpt2_16777216.arch" --json
seconds_within 10 "$bin" compare "$tmp/gpt2_32768.arch" "$tmp/gpt2_16777216.arch"
exit $fail
