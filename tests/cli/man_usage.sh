#!/bin/sh
# man_usage.sh SHORTC SHORTC_1 SHORTRT_H SHORTRT_3 — every subcommand and
# every option that `shortc --help` and `shortc sim --help` show appears in
# the manual page docs/man/shortc.1, and every function shortrt.h declares
# in shortrt.3, so they cannot drift apart.
set -u
bin=$1 page=$2 header=$3 page3=$4
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
# the page as plain text: roff escapes of '-' removed, font switches dropped
sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' "$page" > "$tmp/page"
{ "$bin" --help; "$bin" sim --help; } > "$tmp/usage" || { echo "FAIL: shortc --help"; exit 1; }
fail=0
# subcommands: the word after "shortc" on a usage line, when it is not a file or an option
for cmd in $(sed -n 's/^.*shortc \([a-z][a-z]*\)\( .*\)\{0,1\}$/\1/p' "$tmp/usage" | sort -u); do
    grep -q "shortc $cmd" "$tmp/page" || { echo "FAIL: subcommand '$cmd' is not in $page"; fail=1; }
done
# options: --long and -X
for opt in $(grep -o -- '-\{1,2\}[a-zA-Z][a-zA-Z-]*' "$tmp/usage" | sort -u); do
    grep -q -- "$opt" "$tmp/page" || { echo "FAIL: option '$opt' is not in $page"; fail=1; }
done
n=$(grep -o -- '-\{1,2\}[a-zA-Z][a-zA-Z-]*' "$tmp/usage" | sort -u | wc -l)
[ "$n" -ge 20 ] || { echo "FAIL: only $n options found in the usage text"; fail=1; }
# library functions
nf=0
for fn in $(grep -o 'srt_[a-z0-9_]*(' "$header" | tr -d '(' | sort -u); do
    nf=$((nf + 1))
    grep -q "$fn" "$page3" || { echo "FAIL: function '$fn' is not in $page3"; fail=1; }
done
[ "$nf" -ge 20 ] || { echo "FAIL: only $nf functions found in $header"; fail=1; }
[ "$fail" -eq 0 ] && echo "ok: $n options, $nf functions"
exit "$fail"
