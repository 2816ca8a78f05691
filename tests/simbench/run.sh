#!/bin/sh
# run.sh — one case of the simulator test bench (tests/cmake/simbench.cmake).
#
#   run.sh SHORTC close EXPECTED.npy RTOL ATOL -- SIM-ARGS...   out.npy close to EXPECTED (shortc cmp)
#   run.sh SHORTC exact EXPECTED.npy -- SIM-ARGS...             out.npy byte for byte EXPECTED
#   run.sh SHORTC fault TEXT... -- SIM-ARGS...                  shortc sim fails, stderr has every TEXT
#
# SIM-ARGS follow `shortc sim`; the case writes its result to out.npy in the
# working directory, which is removed first.
set -u
shortc=$1
mode=$2
shift 2
expect=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    expect="$expect$1
"
    shift
done
[ $# -gt 0 ] || { echo "run.sh: no -- before the shortc sim arguments" >&2; exit 2; }
shift
rm -f out.npy stderr.txt
"$shortc" sim "$@" 2>stderr.txt
rc=$?
cat stderr.txt >&2
case $mode in
close | exact)
    [ $rc -eq 0 ] || { echo "FAIL: shortc sim exited $rc" >&2; exit 1; }
    set -- $expect
    if [ "$mode" = exact ]; then
        cmp out.npy "$1" || { echo "FAIL: out.npy differs from $1" >&2; exit 1; }
    else
        "$shortc" cmp out.npy "$1" --rtol "$2" --atol "$3" || { echo "FAIL: out.npy not close to $1" >&2; exit 1; }
    fi
    ;;
fault)
    [ $rc -ne 0 ] || { echo "FAIL: shortc sim succeeded but a fault was expected" >&2; exit 1; }
    [ ! -e out.npy ] || { echo "FAIL: out.npy was written by a faulting run" >&2; exit 1; }
    printf '%s' "$expect" | while IFS= read -r text; do
        grep -qF -- "$text" stderr.txt || { echo "FAIL: stderr lacks: $text" >&2; exit 1; }
    done || exit 1
    ;;
*)
    echo "run.sh: unknown mode $mode" >&2
    exit 2
    ;;
esac
echo PASS
