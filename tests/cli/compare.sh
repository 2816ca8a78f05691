#!/bin/sh
# compare.sh [--update] SHORTC SOURCE_DIR COMPARE_JSON — `shortc compare` and
# `shortc report` (cli/cmd_compare.c): the table, CSV and report against the
# goldens in tests/cli/compare/, the JSON parsed and checked by compare_json,
# the SVG written whole, and bad arguments as one "shortc: error:" line with
# a non-zero exit and nothing on stdout. --update rewrites the goldens.
set -u
update=0
if [ "${1:-}" = "--update" ]; then update=1; shift; fi
bin=$1
src=$2
json_check=$3
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
case $json_check in /*) ;; *) json_check=$(pwd)/$json_check ;; esac
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
cd "$src" || exit 2
gold=tests/cli/compare
fail=0

# golden NAME ARGS...: stdout must equal $gold/NAME, stderr empty, exit 0
golden() {
    name=$1
    shift
    "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ $update = 1 ]; then cp "$tmp/out" "$gold/$name"; fi
    if [ $rc -ne 0 ] || [ -s "$tmp/err" ] || ! diff -u "$gold/$name" "$tmp/out"; then
        echo "FAIL: shortc $* (exit $rc)"
        cat "$tmp/err"
        fail=1
    fi
}

# refused MESSAGE ARGS...: exit 1, stderr's first line is MESSAGE, stdout empty
refused() {
    rc_want=$1 want=$2
    shift 2
    "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    got=$(head -n 1 "$tmp/err")
    if [ $rc -ne "$rc_want" ] || [ "$got" != "$want" ] || [ -s "$tmp/out" ]; then
        echo "FAIL: shortc $* (exit $rc, want $rc_want)"
        echo "  expected: $want"
        echo "  got:      $got"
        fail=1
    fi
}

golden compare_tiny.out compare models/gpt2_tiny.arch models/baseline_ba_tiny.arch
golden compare_tiny.csv compare models/gpt2_tiny.arch models/baseline_ba_tiny.arch --csv --device l4
golden variants.out compare --variants $gold/variants.arch --window 64 --stride 16 --overlap 0
golden report_gpt2_tiny.out report models/gpt2_tiny.arch --device a100-sxm

# JSON: parsed and checked figure by figure
if "$bin" compare models/gpt2_tiny.arch models/baseline_ba_tiny.arch --json --device a100-sxm >"$tmp/c.json"; then
    "$json_check" "$tmp/c.json" || fail=1
else
    echo "FAIL: compare --json"; fail=1
fi

# --kernels: NVRTC facts per kernel, checked by compare_json --kernels
if "$bin" report models/gpt2_tiny.arch --kernels sm_90 --json >"$tmp/k.json"; then
    "$json_check" --kernels "$tmp/k.json" || fail=1
else
    echo "FAIL: report --kernels sm_90 --json"; fail=1
fi

# SVG: written whole, one bar per model and panel
if "$bin" compare models/gpt2_tiny.arch models/baseline_ba_tiny.arch --svg "$tmp/c.svg" >/dev/null &&
    [ "$(grep -c '<rect x=' "$tmp/c.svg")" = 8 ] && tail -n 1 "$tmp/c.svg" | grep -q '^</svg>$'; then :
else
    echo "FAIL: compare --svg"; fail=1
fi

refused 2 "shortc: error: compare needs .arch files or --variants FILE.arch; see 'shortc help compare'" compare
refused 2 "shortc: error: report takes exactly one .arch file; see 'shortc help report'" report models/gpt2_tiny.arch models/gpt2_tiny.arch
refused 2 "shortc: error: compare: unknown option '--frobnicate'; see 'shortc help compare'" compare models/gpt2_tiny.arch --frobnicate
refused 2 "shortc: error: --window needs a value; see 'shortc help compare'" compare models/gpt2_tiny.arch --window
refused 2 "shortc: error: --window needs an integer of at least 1, found '0'" compare models/gpt2_tiny.arch --window 0
refused 2 "shortc: error: --stride needs an integer of at least 1, found '3x'" compare models/gpt2_tiny.arch --stride 3x
refused 2 "shortc: error: --overlap needs an integer of at least 0, found '-1'" compare models/gpt2_tiny.arch --overlap -1
refused 2 "shortc: error: --csv: --json and --csv are exclusive" compare models/gpt2_tiny.arch --json --csv
refused 2 "shortc: error: unknown device 'h100'; known: h100-sxm a100-sxm l4" compare models/gpt2_tiny.arch --device h100
refused 2 "shortc: error: gpt2_tiny (models/gpt2_tiny.arch): window 129 is outside 1..128 (the segment of model gpt2_tiny)" \
    compare models/gpt2_tiny.arch --window 129
refused 2 "shortc: error: gpt2_tiny (models/gpt2_tiny.arch): overlap 128 is outside 0..127 (below the window)" \
    compare models/gpt2_tiny.arch --overlap 128
refused 2 "shortc: error: --kernels needs an architecture sm_50 .. sm_120 such as sm_80, found 'sm80'" \
    report models/gpt2_tiny.arch --kernels sm80
refused 2 "shortc: error: --kernels needs an architecture sm_50 .. sm_120 such as sm_80, found 'sm_8x'" \
    report models/gpt2_tiny.arch --kernels sm_8x
refused 2 "shortc: error: compare: unknown option '--model'; see 'shortc help compare'" compare models/gpt2_tiny.arch --model gpt2_tiny
refused 2 "shortc: error: report: unknown option '--variants'; see 'shortc help report'" report models/gpt2_tiny.arch --variants models/gpt2_tiny.arch
refused 3 "$tmp/none.arch: error: cannot read: No such file or directory" compare "$tmp/none.arch"
printf '# no models here\n' >"$tmp/empty.arch"
refused 3 "shortc: error: $tmp/empty.arch defines no model" compare --variants "$tmp/empty.arch"
# an SVG that cannot be written: nothing on stdout either
refused 1 "shortc: error: cannot write '$tmp': Is a directory" compare models/gpt2_tiny.arch --svg "$tmp"

[ $fail = 0 ] && echo "compare: ok"
exit $fail
