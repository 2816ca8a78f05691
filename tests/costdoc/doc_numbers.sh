#!/bin/sh
# doc_numbers.sh SHORTC SOURCE_DIR — the worked comparison of docs/cost-model.md
# stays true: every ```text block there whose first line is "$ shortc ARGS" is
# rerun (in SOURCE_DIR), and each other line of the block, except "...", must be
# a line of the command's output (trailing blanks ignored on both sides).
set -u
bin=$1
src=$2
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
cd "$src" || exit 2
doc=docs/cost-model.md
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

# Split the doc's command blocks into $tmp/N.cmd (the arguments) and $tmp/N.want (the quoted lines).
awk -v dir="$tmp" '
    /^```text$/ { inblock = 1; first = 1; next }
    /^```/ { inblock = 0; next }
    inblock && first {
        first = 0
        if ($0 !~ /^\$ shortc /) { inblock = 0; next }
        n++
        sub(/^\$ shortc /, "")
        print > (dir "/" n ".cmd")
        printf "" > (dir "/" n ".want")
        next
    }
    inblock && $0 != "..." { sub(/[ \t]+$/, ""); print >> (dir "/" n ".want") }
' "$doc"

fail=0
count=0
for cmd in "$tmp"/*.cmd; do
    [ -e "$cmd" ] || break
    count=$((count + 1))
    n=${cmd%.cmd}
    args=$(cat "$cmd")
    # shellcheck disable=SC2086 # the arguments are words of the doc's command line
    if ! "$bin" $args >"$n.out" 2>"$n.err"; then
        echo "FAIL: shortc $args (exit status $?)"
        cat "$n.err"
        fail=1
        continue
    fi
    sed 's/[ \t]*$//' "$n.out" >"$n.trim"
    while IFS= read -r line; do
        if ! grep -Fxq -- "$line" "$n.trim"; then
            echo "FAIL: shortc $args no longer prints:"
            echo "  $line"
            fail=1
        fi
    done <"$n.want"
done
if [ "$count" -lt 4 ]; then
    echo "FAIL: found $count command blocks in $doc (expected at least 4)"
    fail=1
fi
[ $fail = 0 ] && echo "doc_numbers: $count commands ok"
exit $fail
