#!/bin/sh
# doc_commands.sh [--min N] SHORTC SOURCE_DIR [DOC.md...] — every ```sh block of README.md and docs/usage.md
# (or the DOCs given) is run, so the commands the documentation shows keep working. A block is run as
# one `sh -e` script in a fresh directory that holds links to the source tree's models/, tests/ and
# examples/, with `shortc` on PATH (the binary under test) and a 120 s limit; it must exit 0.
# A block whose fence is preceded by the line
#     <!-- doc-test: skip (WHY) -->
# (a build, an install, a download, a GPU) is not run, and is counted; a skip without a reason fails.
# At least N blocks (default 10) must run: a fence the splitter misses would otherwise pass unnoticed.
set -u
unset SHORTC_PATH SHORTC_DATA_DIR
min=10
if [ "${1:-}" = --min ]; then min=$2; shift 2; fi
case $1 in /*) bin=$1 ;; *) bin=$(pwd)/$1 ;; esac
src=$(cd "$2" && pwd) || exit 2
shift 2
[ $# -gt 0 ] || set -- README.md docs/usage.md
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin"
ln -s "$bin" "$tmp/bin/shortc"

fail=0 ran=0 skipped=0
for doc in "$@"; do
    # split the doc into $tmp/blocks/N.sh (N.skip holds the reason of a skipped block, N.line its line)
    rm -rf "$tmp/blocks"
    mkdir "$tmp/blocks"
    awk -v dir="$tmp/blocks" '
        /^```sh[ \t]*$/ {
            n++; inblock = 1
            printf "%d\n", NR > (dir "/" n ".line")
            if (prev ~ /^<!-- doc-test: skip/) {
                why = prev; sub(/^<!-- doc-test: skip */, "", why); sub(/ *-->.*$/, "", why)
                printf "%s\n", why > (dir "/" n ".skip")
            }
            printf "" > (dir "/" n ".sh")
            next
        }
        /^```/ && inblock { inblock = 0; next }
        inblock { print > (dir "/" n ".sh") }
        { if ($0 !~ /^[ \t]*$/) prev = $0 }
    ' "$src/$doc"
    for sh in "$tmp/blocks"/*.sh; do
        [ -e "$sh" ] || break
        n=${sh%.sh}
        line=$(cat "$n.line")
        if [ -e "$n.skip" ]; then
            if [ -z "$(tr -d ' ()\n' <"$n.skip")" ]; then
                echo "FAIL: $doc:$line: a skipped block needs a reason: <!-- doc-test: skip (WHY) -->"
                fail=1
            fi
            skipped=$((skipped + 1))
            continue
        fi
        ran=$((ran + 1))
        work=$tmp/work.$ran
        mkdir "$work"
        for d in models tests examples; do ln -s "$src/$d" "$work/$d"; done
        if ! (cd "$work" && PATH="$tmp/bin:$PATH" timeout 120 sh -e "$sh") >"$work.out" 2>"$work.err"; then
            echo "FAIL: $doc:$line: the block exits non-zero:"
            sed 's/^/    /' "$sh"
            echo "  stderr (last lines):"
            tail -n 5 "$work.err" | sed 's/^/    /'
            fail=1
        fi
        rm -rf "$work"
    done
done
[ "$ran" -ge "$min" ] || { echo "FAIL: only $ran blocks ran (expected at least $min)"; fail=1; }
echo "doc_commands: $ran blocks run, $skipped skipped (marked: builds, installs, downloads, GPU)"
exit $fail
