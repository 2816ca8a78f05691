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
#   4. token by token equals cached nonoverlapping evaluation, logits and NLL per
#      token (the paper's "same perplexity"; the window grows from L'+1 to L'+L
#      and a new segment starts), on shortformer_tiny, the Vaswani variant and
#      L' = 8 < L = 9 (a cache that does not divide the segment);
#   5. run --chunk K equals cached evaluation for every K (calls are cut at
#      segment ends: a PIA session's segments are those of the token stream);
#   6. the cache without PIA (pia_nopia_tiny, Shortformer's ablation) equals
#      its golden (each segment's positions 0..L-1 on the embeddings, the
#      previous segment's keys and values as computed there), token by token
#      and in chunks too; after the first segment it differs from
#      nonoverlapping evaluation.
set -u
shortc=$1 src=$2 backend=$3
mem=$src/tests/memory
tmp=$(mktemp -d "${TMPDIR:-/tmp}/shortc-piap.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
export SHORTC_CACHE="$tmp/cache"
check_label=$backend
. "$src/tests/tools/check.sh"
# --allow-unused: pia_c8_tiny (one layer) reads the first layer of the two-layer pia_tiny checkpoint by design
runw() { # model mode out
    "$shortc" run "$1" --backend "$backend" --weights "$mem/pia_tiny.safetensors" --tokens "$mem/pia_tiny.tokens" \
        --mode "$2" --logits "$3" --allow-unused
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
check "cache 0: cached runs" runw "$mem/pia_nocache_tiny.arch" cached "$tmp/c0.npy"
check "shortformer_tiny nonoverlapping runs" runw "$sf" nonoverlapping "$tmp/non.npy"
check "cache 0 cached == nonoverlapping" "$shortc" cmp "$tmp/c0.npy" "$tmp/non.npy" --atol 1e-6
check "tokenwise == cached (shortformer_tiny)" "$shortc" cmp "$tmp/sf_tokenwise.npy" "$tmp/sf_cached.npy" --atol 2e-5
check "vaswani tokenwise runs" runw "$mem/pia_vaswani_tiny.arch" tokenwise "$tmp/va_tw.npy"
check "tokenwise == cached (vaswani)" "$shortc" cmp "$tmp/va_tw.npy" "$tmp/va.npy" --atol 2e-5
for mode in cached tokenwise; do
    check "cache 8, segment 9: $mode runs" runw "$mem/pia_c8_tiny.arch" $mode "$tmp/c8_$mode.npy"
done
check "tokenwise == cached (L' = 8, L = 9)" "$shortc" cmp "$tmp/c8_tokenwise.npy" "$tmp/c8_cached.npy" --atol 2e-5
nll() { # model mode: eval --json (its total NLL)
    "$shortc" eval "$1" --backend "$backend" --weights "$mem/pia_tiny.safetensors" --tokens "$mem/pia_tiny.tokens" \
        --mode "$2" --json --allow-unused
}
same_nll() { # model: eval's NLL in modes tokenwise and cached agree within 1e-3
    ja=$(nll "$1" cached) || return 1
    jb=$(nll "$1" tokenwise) || return 1
    a=$(printf '%s\n' "$ja" | sed -n 's/.*"nll": *\([0-9.e+-]*\).*/\1/p')
    b=$(printf '%s\n' "$jb" | sed -n 's/.*"nll": *\([0-9.e+-]*\).*/\1/p')
    echo "nll cached $a tokenwise $b"
    [ -n "$a" ] && [ -n "$b" ] && awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; exit !(d < 1e-3 && d > -1e-3) }'
}
check "eval NLL tokenwise == cached (shortformer_tiny)" same_nll "$sf"
check "eval NLL tokenwise == cached (L' = 8, L = 9)" same_nll "$mem/pia_c8_tiny.arch"
for k in 1 3 5 16; do
    check "run --chunk $k runs" "$shortc" run "$sf" --backend "$backend" --weights "$mem/pia_tiny.safetensors" \
        --tokens "$mem/pia_tiny.tokens" --chunk $k --logits "$tmp/ch$k.npy"
    check "run --chunk $k == cached" "$shortc" cmp "$tmp/ch$k.npy" "$tmp/sf_cached.npy" --atol 2e-5
done
np=$mem/pia_nopia_tiny.arch
for mode in cached tokenwise nonoverlapping; do
    check "no PIA: $mode runs" runw "$np" $mode "$tmp/np_$mode.npy"
done
check "no PIA: cached == torch" "$shortc" cmp "$tmp/np_cached.npy" "$mem/pia_tiny_nopia.cached.npy" --atol 1e-4
check "no PIA: tokenwise == cached" "$shortc" cmp "$tmp/np_tokenwise.npy" "$tmp/np_cached.npy" --atol 2e-5
check "no PIA: run --chunk 5 runs" "$shortc" run "$np" --backend "$backend" --weights "$mem/pia_tiny.safetensors" \
    --tokens "$mem/pia_tiny.tokens" --chunk 5 --logits "$tmp/np_ch5.npy"
check "no PIA: --chunk 5 == cached" "$shortc" cmp "$tmp/np_ch5.npy" "$tmp/np_cached.npy" --atol 2e-5
check "no PIA: later segments differ from nonoverlapping" differs "$tmp/np_cached.npy" "$tmp/np_nonoverlapping.npy"
echo "$backend: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
