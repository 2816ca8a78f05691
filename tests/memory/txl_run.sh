#!/bin/sh
# txl_run.sh SHORTC SRCDIR BACKEND
#
# Transformer-XL through the runtime (docs/attention/relative.md) on one
# backend: `shortc run --mode cached` and `--mode tokenwise` over several
# segments, the memories carried from call to call, equal the PyTorch goldens
# of tests/memory/gen_txl.py (an independent implementation doing the
# original pad-and-reshape relative shift) for txl_tiny, txl_lrm_tiny
# (per-layer memories; "transformer." weight names) and txl_tiny_pre
# (pre-norm, clamp, same_length, untie). With same_length every query sees
# exactly its last m positions, whatever the calls: txl_tiny_pre token by
# token (mode tokenwise) equals its segment goldens too; without it the
# memory a query sees depends on the segmentation, so tokenwise is checked
# for sim == ref only (tests/suite/golden_suite.sh). Without --mode, run
# takes the model's own way (cached), with --chunk too; nonoverlapping
# (memories reset each segment) differs from the goldens after the first
# segment. --mem-init zeros (HF TransfoXL's m_l zero rows at the start)
# equals the goldens computed that way (<model>.zeros.logits.npy; post-norm
# models, pre-norm LayerNorm is refused) and differs from the default in the
# first segment; the default stays the empty start. txl_lrm_tiny stored in fp16
# and bf16 (the tensor-core path of relative attention) stays near the goldens.
set -u
shortc=$1 src=$2 backend=$3
mem=$src/tests/memory
tmp=$(mktemp -d "${TMPDIR:-/tmp}/shortc-txlr.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
export SHORTC_CACHE="$tmp/cache"
check_label=$backend
. "$src/tests/tools/check.sh"
run() { # arch golden-name mode out
    "$shortc" run "$1" --backend "$backend" --weights "$mem/$2.safetensors" --tokens "$mem/$2.tokens" --mode "$3" \
        --logits "$4"
}
for spec in "$src/models/txl_tiny.arch txl_tiny" "$src/models/txl_lrm_tiny.arch txl_lrm_tiny" \
            "$mem/txl_variants.arch txl_tiny_pre"; do
    set -- $spec
    modes=cached
    [ "$2" = txl_tiny_pre ] && modes="cached tokenwise" # same_length: independent of the calls' sizes
    for mode in $modes; do
        check "$2 $mode runs" run "$1" "$2" $mode "$tmp/$2_$mode.npy"
        check "$2 $mode == torch" "$shortc" cmp "$tmp/$2_$mode.npy" "$mem/$2.logits.npy" --atol 1e-4
    done
done
# txl_lrm_tiny stored in fp16 and bf16 (bf16 memories; relative attention on the tensor-core path, head_dim 8
# padded to 16) against the fp32 goldens: fp16 within the half tolerance 2e-2, bf16 within 6e-2 (txl_interp's
# bf16 bound; the interpreter itself is 0.048 off at bf16's 8 bits).
for spec in "fp16 2e-2" "bf16 6e-2"; do
    set -- $spec
    check "txl_lrm_tiny $1 cached runs" "$shortc" run "$mem/txl_lrm_tiny_$1.arch" --backend "$backend" \
        --weights "$mem/txl_lrm_tiny.safetensors" --tokens "$mem/txl_lrm_tiny.tokens" --mode cached --logits "$tmp/lrm_$1.npy"
    check "txl_lrm_tiny $1 cached == torch (atol $2, rtol 2e-2)" "$shortc" cmp "$tmp/lrm_$1.npy" \
        "$mem/txl_lrm_tiny.logits.npy" --atol "$2" --rtol 2e-2
done
# Without --mode, run takes the model's own way (cached: memories carried across segments).
check "txl_tiny default runs" "$shortc" run "$src/models/txl_tiny.arch" --backend "$backend" \
    --weights "$mem/txl_tiny.safetensors" --tokens "$mem/txl_tiny.tokens" --logits "$tmp/own.npy"
check "txl_tiny default == torch (the memories carried)" "$shortc" cmp "$tmp/own.npy" "$mem/txl_tiny.logits.npy" \
    --atol 1e-4
check "txl_tiny_pre --chunk 3 runs" "$shortc" run "$mem/txl_variants.arch" --backend "$backend" \
    --weights "$mem/txl_tiny_pre.safetensors" --tokens "$mem/txl_tiny_pre.tokens" --chunk 3 --logits "$tmp/ch.npy"
check "txl_tiny_pre --chunk 3 == torch (same_length)" "$shortc" cmp "$tmp/ch.npy" "$mem/txl_tiny_pre.logits.npy" \
    --atol 1e-4
for spec in "$src/models/txl_tiny.arch txl_tiny" "$src/models/txl_lrm_tiny.arch txl_lrm_tiny"; do
    set -- $spec
    check "$2 --mem-init zeros runs" "$shortc" run "$1" --backend "$backend" --weights "$mem/$2.safetensors" \
        --tokens "$mem/$2.tokens" --mode cached --mem-init zeros --logits "$tmp/$2_zeros.npy"
    check "$2 --mem-init zeros == torch (HF's zero memories)" "$shortc" cmp "$tmp/$2_zeros.npy" \
        "$mem/$2.zeros.logits.npy" --atol 1e-4
done
# the first segment (7 tokens x 50) differs from the default's, which is the empty start's golden above
check "txl_tiny --mem-init zeros changes the first segment" sh -c "! '$shortc' cmp '$tmp/txl_tiny_zeros.npy' \
    '$tmp/txl_tiny_cached.npy' --atol 1e-3 >/dev/null"
check "txl_tiny --mem-init empty == the default" "$shortc" run "$src/models/txl_tiny.arch" --backend "$backend" \
    --weights "$mem/txl_tiny.safetensors" --tokens "$mem/txl_tiny.tokens" --mem-init empty --logits "$tmp/empty.npy"
check "txl_tiny --mem-init empty == torch" "$shortc" cmp "$tmp/empty.npy" "$mem/txl_tiny.logits.npy" --atol 1e-4
check "--mem-init zeros on a model without memories: an error" sh -c "! '$shortc' run '$src/models/gpt2_tiny.arch' \
    --backend '$backend' --random-weights 1 --mem-init zeros 2>'$tmp/err' && grep -q 'no Transformer-XL memories' '$tmp/err'"
check "--mem-init zeros on a pre-norm LayerNorm model: an error" sh -c "! '$shortc' run '$mem/txl_variants.arch' \
    --backend '$backend' --weights '$mem/txl_tiny_pre.safetensors' --mem-init zeros 2>'$tmp/err' && \
    grep -q 'LayerNorm before attention' '$tmp/err'"
check "txl_tiny nonoverlapping runs" run "$src/models/txl_tiny.arch" txl_tiny nonoverlapping "$tmp/non.npy"
check "txl_tiny nonoverlapping != torch (no memory across segments)" \
    sh -c "! '$shortc' cmp '$tmp/non.npy' '$mem/txl_tiny.logits.npy' --atol 1e-3"
echo "$pass passed, $fail failed"
[ $fail = 0 ]
