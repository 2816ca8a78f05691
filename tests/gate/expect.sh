#!/bin/sh
# expect.sh — runs a command and checks its exit status and output.
#
#   expect.sh [--fail] [--grep ERE]... [--absent ERE]... -- COMMAND [ARGS...]
#
# --fail: the command must exit non-zero (default: zero). --grep: a line of
# its combined stdout+stderr must match the extended regular expression;
# --absent: no line may match. Prints the output when an expectation fails.
set -uf  # -f: the patterns are not file globs
want_fail=0
greps=""
absents=""
nl='
'
while [ $# -gt 0 ]; do
  case "$1" in
    --fail) want_fail=1; shift ;;
    --grep) greps="$greps$2$nl"; shift 2 ;;
    --absent) absents="$absents$2$nl"; shift 2 ;;
    --) shift; break ;;
    *) echo "expect.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
out=$("$@" 2>&1)
rc=$?
ok=1
if [ "$want_fail" = 1 ] && [ "$rc" -eq 0 ]; then echo "expect.sh: expected a failure, the command succeeded"; ok=0; fi
if [ "$want_fail" = 0 ] && [ "$rc" -ne 0 ]; then echo "expect.sh: expected success, the command exited with $rc"; ok=0; fi
IFS=$nl
for re in $greps; do
  printf '%s\n' "$out" | grep -E -q -- "$re" || { echo "expect.sh: no output line matches: $re"; ok=0; }
done
for re in $absents; do
  printf '%s\n' "$out" | grep -E -q -- "$re" && { echo "expect.sh: an output line matches: $re"; ok=0; }
done
unset IFS
if [ "$ok" = 0 ]; then
  echo "---- command: $*"
  echo "---- exit status $rc, output:"
  printf '%s\n' "$out"
  exit 1
fi
exit 0
