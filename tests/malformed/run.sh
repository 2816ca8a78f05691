#!/bin/sh
# run.sh — every malformed input must fail cleanly.
#
#   run.sh SHORTC_BIN DIR
#
# Runs `SHORTC_BIN NAME.arch --dump-spec` from inside DIR for each DIR/*.arch,
# and for the large inputs generated below (written to a temporary
# directory), and checks that each one
#   - exits with status 3 (bad input) within 5 seconds (no crash, no hang),
#   - prints first, on stderr, a located error: `NAME.arch:LINE:COL: error:`,
#   - prints no sanitizer report (ASan/UBSan/LSan in sanitizer builds).
# Ends with "N passed, M failed". KEEP_GEN=1 keeps the generated inputs
# (their directory is printed first).
set -u
if [ $# -ne 2 ]; then
    echo "usage: $0 SHORTC_BIN DIR" >&2
    exit 2
fi
bin=$1
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
dir=$(cd "$2" && pwd) || exit 2
gen=$(mktemp -d) || exit 2
trap 'rm -rf "$gen"' EXIT INT TERM
[ -n "${KEEP_GEN:-}" ] && trap - EXIT && echo "$gen"

# repeat N TEXT: TEXT written N times
repeat() { awk -v n="$1" -v s="$2" 'BEGIN { for (i = 0; i < n; i++) printf "%s", s }'; }

# Large inputs, generated rather than committed.
{ printf 'model a { layout kv fp32 '; repeat 100000 '['; } >"$gen/gen_deep_lists.arch"
{ printf 'model a { x '; repeat 70 '['; printf '1'; repeat 70 ']'; printf '; }\n'; } >"$gen/gen_lists_65.arch"
{ printf 'model a { '; repeat 100000 'layer all { '; } >"$gen/gen_deep_blocks.arch"
{ printf 'model a { '; repeat 100000 'layer all { '; repeat 100000 '} '; printf '}\n'; } >"$gen/gen_deep_blocks_closed.arch"
{ printf 'model '; repeat 100000 'x'; printf ' { }\n'; } >"$gen/gen_long_ident.arch"
{ printf 'model a {\n  vocab '; repeat 100000 '9'; printf ';\n}\n'; } >"$gen/gen_long_number.arch"
{ printf 'import "'; repeat 100000 'p'; printf '";\n'; } >"$gen/gen_long_string.arch"
{ printf 'model a { vocab 1; '; repeat 100000 'attention causal; '; printf '}\n'; } >"$gen/gen_long_line.arch"
{ printf 'model a { vocab 10; d_model 8; heads 2; ffn 16 relu; segment 4; layers 2;\n  layer 0'; \
  awk 'BEGIN { for (i = 1; i < 100000; i++) printf ", %d", i }'; printf ' { attention causal; }\n}\n'; } >"$gen/gen_many_indices.arch"
repeat 10000 '@@ model ; }\n' >"$gen/gen_many_errors.arch"
{ repeat 20000 'model m { vocab 1; }\n'; } >"$gen/gen_many_models.arch"
{ printf 'model a { '; repeat 50000 'vocab 1; '; printf '}\n'; } >"$gen/gen_many_duplicates.arch"

pass=0
fail=0
check() { # check DIR NAME
    out=$(cd "$1" && timeout 5 "$bin" "$2" --dump-spec 2>&1 >/dev/null)
    rc=$?
    why=
    if [ $rc -eq 124 ]; then
        why="timed out (5 s)"
    elif [ $rc -ne 3 ]; then
        why="exit status $rc, expected 3"
    elif ! printf '%s\n' "$out" | head -n 1 | grep -q "^$2:[0-9][0-9]*:[0-9][0-9]*: error: "; then
        why="stderr does not start with '$2:LINE:COL: error: '"
    elif printf '%s\n' "$out" | grep -q -e 'Sanitizer' -e 'runtime error:'; then
        why="sanitizer report"
    fi
    if [ -z "$why" ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL: $2: $why"
        printf '%s\n' "$out" | head -n 20 | cut -c1-200 | sed 's/^/    /'
    fi
}

for f in "$dir"/*.arch; do check "$dir" "$(basename "$f")"; done
for f in "$gen"/*.arch; do check "$gen" "$(basename "$f")"; done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
