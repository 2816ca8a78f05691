#!/bin/sh
# errors.sh SHORTC DIR — every DIR/bad/X.arch fails with a non-zero exit and a message containing
# the line of DIR/bad/X.err.
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
[ $fail = 0 ] && echo "all errors of $dir/bad reported"
exit $fail
