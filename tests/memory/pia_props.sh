#!/bin/sh
# pia_props.sh SHORTC SRCDIR BACKEND
#
# Properties of position-infused attention with a cache (docs/attention/pia.md)
# on one backend:
#   1. shortformer_tiny, cached (also run's default) and tokenwise, equals the PyTorch goldens of
#      tests/memory/gen_pia.py (an independent implementation that re-projects
#      the cache each segment; it checks itself against the explicit-pattern pass);
#   2. Vaswani-style positions equal their golden and differ from fairseq's;
#   3. L' = 0: mode cached equals nonoverlapping evaluation;
#   4. token by token through a cache of L' = 8 equals sliding-window
#      recomputation with stride 1 over windows of L' + 1 = 9 tokens (one layer:
#      deeper layers' cached inputs carry their own calls' context).
set -u
shortc=$1 src=$2 backend=$3
mem=$src/tests/memory
tmp=$(mktemp -d "${TMPDIR:-/tmp}/shortc-piap.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
export SHORTC_CACHE="$tmp/cache"
check_label=$backend
. "$src/tests/tools/check.sh"
runw() { # model mode out
    "$shortc" run "$1" --backend "$backend" --weights "$mem/pia_tiny.safetensors" --tokens "$mem/pia_tiny.tokens" \
        --mode "$2" --logits "$3"
}
sf=$src/models/shortformer_tiny.arch
for mode in cached tokenwise; do
    check "shortformer_tiny $mode runs" runw "$sf" $mode "$tmp/sf_$mode.npy"
    check "shortformer_tiny $mode == torch" "$shortc" cmp "$tmp/sf_$mode.npy" "$mem/pia_tiny.$mode.npy" --atol 1e-4
done
check "shortformer_tiny default runs" "$shortc" run "$sf" --backend "$backend" --weights "$mem/pia_tiny.safetensors" \
    --tokens "$mem/pia_tiny.tokens" --logits "$tmp/own.npy"
check "shortformer_tiny default == cached (the model's own way)" "$shortc" cmp "$tmp/own.npy" "$tmp/sf_cached.npy" \
    --atol 0
check "vaswani cached runs" runw "$mem/pia_vaswani_tiny.arch" cached "$tmp/va.npy"
check "vaswani cached == torch" "$shortc" cmp "$tmp/va.npy" "$mem/pia_tiny_vaswani.cached.npy" --atol 1e-4
differs() { ! "$shortc" cmp "$1" "$2" --atol 1e-3 >/dev/null 2>&1; }
check "vaswani differs from fairseq" differs "$tmp/va.npy" "$tmp/sf_cached.npy"
check "cached differs from tokenwise" differs "$tmp/sf_cached.npy" "$tmp/sf_tokenwise.npy"
check "cache 0: cached runs" runw "$mem/pia_nocache_tiny.arch" cached "$tmp/c0.npy"
check "shortformer_tiny nonoverlapping runs" runw "$sf" nonoverlapping "$tmp/non.npy"
check "cache 0 cached == nonoverlapping" "$shortc" cmp "$tmp/c0.npy" "$tmp/non.npy" --atol 1e-6
check "cache 8: tokenwise runs" runw "$mem/pia_c8_tiny.arch" tokenwise "$tmp/tw8.npy"
check "cache 8, segment 9: sliding stride 1 runs" "$shortc" run "$mem/pia_c8_tiny.arch" --backend "$backend" \
    --weights "$mem/pia_tiny.safetensors" --tokens "$mem/pia_tiny.tokens" --mode sliding --stride 1 --logits "$tmp/sl.npy"
check "tokenwise through L'=8 == sliding S=1 over L'+1" "$shortc" cmp "$tmp/tw8.npy" "$tmp/sl.npy" --atol 1e-5
echo "$backend: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
