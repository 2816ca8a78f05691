#!/bin/sh
# errors.sh SHORTC DIR — every DIR/bad/X.arch fails with a non-zero exit and a message containing
# the line of DIR/bad/X.err; an adaptive model compiled to CUDA fails cleanly (no kernel yet) and
# leaves no output file.
shortc=$1 dir=$2
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for arch in "$dir"/bad/*.arch; do
    want=$(cat "${arch%.arch}.err")
    if "$shortc" "$arch" --dump-spec >/dev/null 2>"$tmp/err"; then
        echo "FAIL: $arch was accepted"; fail=1
    elif ! grep -qF "$want" "$tmp/err"; then
        echo "FAIL: $arch: expected '$want', got:"; cat "$tmp/err"; fail=1
    fi
done
model=$dir/../../models/adaptive/baseline_ba_adaptive_tiny.arch
if "$shortc" "$model" -o "$tmp/m.cu" 2>"$tmp/err"; then
    echo "FAIL: $model compiled to CUDA although adaptive ops have no kernel"; fail=1
elif ! grep -qF "has no CUDA kernel yet" "$tmp/err" || [ -e "$tmp/m.cu" ]; then
    echo "FAIL: $model: unclear error or a half-written output"; cat "$tmp/err"; fail=1
fi
[ $fail = 0 ] && echo "all adaptive errors reported"
exit $fail
