#!/bin/sh
# matrix_steps.sh STEP_CHECK MODEL.arch [--position P] T...
# step_check (tests/suite/step_check.c: every step alone against the reference
# interpreter) on one attention-matrix model at each token count; --position P:
# each call continues P earlier tokens (a recurrent model: after a window of P).
set -u
check=$1 model=$2
shift 2
pos=""
if [ "${1:-}" = "--position" ]; then
  pos="--position $2"
  shift 2
fi
rc=0
for t in "$@"; do
  # shellcheck disable=SC2086 # $pos is empty or two words
  out=$("$check" "$model" "$t" $pos) || { rc=1; printf '%s\n' "$out" | grep -v ' ok$'; }
  echo "T=$t${pos:+ ($pos)}: $(printf '%s\n' "$out" | tail -1)"
done
exit $rc
