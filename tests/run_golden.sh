#!/bin/sh
# run_golden.sh — golden-file test runner (one directory of .arch cases).
#
#   run_golden.sh [--update] SHORTC_BIN MODE DIR
#
# For each DIR/NAME.arch (sorted; subdirectories are not cases, so files a
# case imports can live in DIR/inc/), runs, from inside DIR,
#
#   SHORTC_BIN NAME.arch MODE [contents of NAME.flags]
#
# MODE is a flags string split on spaces ("--dump-spec", "--dump-ir=fuse",
# "-o /dev/stdout"); NAME.flags adds per-case flags. Then compares
#   stdout      with NAME.out   (missing file: expected empty)
#   stderr      with NAME.err   (missing file: expected empty)
#   exit status with NAME.rc    (missing file: the error status if NAME.err is non-empty, else 0;
#                                the error status is 3, shortc's "bad input", when SHORTC_BIN is
#                                shortc, else 1)
# Paths in messages are stable because the input is named relative to DIR.
# Each run is limited to SHORTC_TIMEOUT seconds (default 60).
#
# --update rewrites the goldens from the actual output: empty outputs delete
# their file, and NAME.rc is kept only when it differs from the default.
# Prints a diff for each failure and ends with "N passed, M failed";
# exits 1 if anything failed.
set -u

update=0
if [ "${1:-}" = "--update" ]; then
    update=1
    shift
fi
if [ $# -ne 3 ]; then
    echo "usage: $0 [--update] SHORTC_BIN MODE DIR" >&2
    exit 2
fi
bin=$1
mode=$2
case $bin in */shortc | shortc) error_rc=3 ;; *) error_rc=1 ;; esac
dir=$3
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
timeout_s=${SHORTC_TIMEOUT:-60}
cd "$dir" || exit 2

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM

# compare GOLDEN ACTUAL LABEL: 0 when equal (a missing golden means empty)
compare() {
    if [ -f "$1" ]; then
        cmp -s "$1" "$2" && return 0
        diff -u --label "$1" --label "$3 (actual)" "$1" "$2"
    else
        [ -s "$2" ] || return 0
        echo "--- $1 (missing: expected empty)"
        sed 's/^/+/' "$2"
    fi
    return 1
}

# keep GOLDEN ACTUAL: store ACTUAL as GOLDEN, or delete GOLDEN when ACTUAL is empty
keep() {
    if [ -s "$2" ]; then cp "$2" "$1"; else rm -f "$1"; fi
}

pass=0
fail=0
for arch in *.arch; do
    [ -f "$arch" ] || continue
    name=${arch%.arch}
    extra=
    [ -f "$name.flags" ] && extra=$(cat "$name.flags")
    # shellcheck disable=SC2086  # MODE and .flags are word lists on purpose
    timeout "$timeout_s" "$bin" "$arch" $mode $extra >"$tmp/out" 2>"$tmp/err"
    rc=$?

    if [ $update -eq 1 ]; then
        keep "$name.out" "$tmp/out"
        keep "$name.err" "$tmp/err"
        if [ -s "$tmp/err" ]; then default_rc=$error_rc; else default_rc=0; fi
        if [ "$rc" -ne "$default_rc" ]; then echo "$rc" >"$name.rc"; else rm -f "$name.rc"; fi
        pass=$((pass + 1))
        continue
    fi

    if [ -s "$name.err" ]; then want_rc=$error_rc; else want_rc=0; fi
    [ -f "$name.rc" ] && want_rc=$(cat "$name.rc")
    ok=1
    report=$tmp/report
    : >"$report"
    compare "$name.out" "$tmp/out" "$name stdout" >>"$report" || ok=0
    compare "$name.err" "$tmp/err" "$name stderr" >>"$report" || ok=0
    if [ "$rc" -ne "$want_rc" ]; then
        ok=0
        if [ "$rc" -eq 124 ]; then
            echo "exit status 124: timed out after ${timeout_s}s" >>"$report"
        else
            echo "exit status $rc, expected $want_rc" >>"$report"
        fi
    fi
    if [ $ok -eq 1 ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL: $dir/$arch"
        sed 's/^/    /' "$report"
    fi
done

if [ $update -eq 1 ]; then
    echo "updated $pass goldens in $dir"
    exit 0
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ] && [ $pass -gt 0 ]
