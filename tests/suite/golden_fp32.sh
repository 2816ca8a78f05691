#!/bin/sh
# golden_fp32.sh SHORTC MODEL.arch NTOKENS ATOL RTOL
#
# golden_suite.sh on MODEL with fp32 storage: every `layout weights|activations|kv` line stored
# fp16 or bf16 is rewritten to fp32 into a temporary NAME_fp32.arch (the rest of the model,
# comments included, unchanged), so that a model stored in half precision as models of its size
# run (gpt2_small: bf16) keeps the fp32 check of its full-size shapes at fp32 tolerances
# (golden_gpt2_small_fp32). Fails when MODEL has no such line or one stays half after the rewrite.
# A layout the model imports is not rewritten (the check above sees only MODEL's own lines).
set -u
shortc=$1 model=$2 ntok=$3 atol=$4 rtol=$5
name=$(basename "$model" .arch)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/shortc-golden-fp32.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
variant="$tmp/${name}_fp32.arch"
half='^[[:space:]]*layout[[:space:]]+(weights|activations|kv)[[:space:]]+(bf16|fp16)[[:space:]]'
dir=$(cd "$(dirname "$model")" && pwd) || exit 1
nhalf=$(grep -Ec "$half" "$model")
[ "$nhalf" -gt 0 ] || { echo "golden_fp32: $model has no fp16/bf16 layout line to rewrite"; exit 1; }
# a relative `import "F"` is resolved from MODEL's directory, not the temporary one
sed -E -e 's/^([[:space:]]*layout[[:space:]]+(weights|activations|kv)[[:space:]]+)(bf16|fp16)([[:space:]])/\1fp32\4/' \
    -e 's|^([[:space:]]*import[[:space:]]+")([^/"][^"]*")|\1'"$dir"'/\2|' "$model" > "$variant" || exit 1
if grep -Eq "$half" "$variant"; then
    echo "golden_fp32: a half layout line stays in $variant:"
    grep -E "$half" "$variant"
    exit 1
fi
echo "golden_fp32: $name: $nhalf layout lines rewritten to fp32:"
grep -E '^[[:space:]]*layout[[:space:]]' "$variant"
sh "$(dirname "$0")/golden_suite.sh" "$shortc" "$variant" "$ntok" "$atol" "$rtol"
