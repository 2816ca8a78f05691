#!/bin/sh
# matrix_steps.sh STEP_CHECK MODEL.arch T...
# step_check (tests/suite/step_check.c: every step alone against the reference
# interpreter) on one attention-matrix model at each token count.
set -u
check=$1 model=$2
shift 2
rc=0
for t in "$@"; do
  out=$("$check" "$model" "$t") || { rc=1; printf '%s\n' "$out" | grep -v ' ok$'; }
  echo "T=$t: $(printf '%s\n' "$out" | tail -1)"
done
exit $rc
