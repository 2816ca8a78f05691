#!/bin/sh
# mask_golden.sh SHORTC MODEL.arch GOLDEN.npy N
# `shortc mask MODEL.arch --tokens N` must write GOLDEN.npy byte for byte (the
# independent NumPy patterns of tests/attention/gen_masks.py).
set -u
shortc=$1 model=$2 golden=$3 n=$4
tmp=$(mktemp -d "${TMPDIR:-/tmp}/shortc-mask.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
"$shortc" mask "$model" --tokens "$n" -o "$tmp/m.npy" || exit 1
cmp "$tmp/m.npy" "$golden" || { echo "FAIL: $model: shortc mask differs from $golden"; exit 1; }
echo "ok   $(basename "$model" .arch): shortc mask equals the NumPy pattern ($n tokens)"
