#!/bin/sh
# kernel_count.sh SHORTC SHALLOW.arch DEEP.arch
# The number of distinct kernels (`; kernels N` in `shortc --dump-ir`) must
# not depend on the number of layers.
set -u
shortc=$1 shallow=$2 deep=$3
count() {
    out=$("$shortc" "$1" --dump-ir) || { echo "shortc $1 --dump-ir failed" >&2; exit 1; }
    printf '%s\n' "$out" | sed -n 's/^; kernels \([0-9][0-9]*\)$/\1/p'
}
a=$(count "$shallow") b=$(count "$deep")
layers() { "$shortc" "$1" --dump-ir | sed -n 's/.* layers=\([0-9]*\).*/\1/p' | head -1; }
la=$(layers "$shallow") lb=$(layers "$deep")
echo "$shallow: $la layers, $a kernels; $deep: $lb layers, $b kernels"
[ -n "$a" ] && [ -n "$b" ] || { echo "no '; kernels N' line" >&2; exit 1; }
[ "$la" != "$lb" ] || { echo "the two models have the same layer count" >&2; exit 1; }
[ "$a" = "$b" ] || { echo "kernel count depends on depth" >&2; exit 1; }
