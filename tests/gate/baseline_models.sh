#!/bin/sh
# baseline_models.sh — tests/kernels.baseline covers exactly the models in models/.
#
#   baseline_models.sh MODELS_DIR BASELINE
set -u
models=$1
baseline=$2
have=$(awk '!/^#/ && NF { print $1 }' "$baseline" | sort -u)
want=$(for f in "$models"/*.arch; do basename "$f" .arch; done | sort -u)
if [ "$have" != "$want" ]; then
  echo "baseline_models.sh: models in $baseline differ from $models/*.arch:"
  printf '%s\n' "$want" > "${TMPDIR:-/tmp}/gate_want.$$"
  printf '%s\n' "$have" | diff "${TMPDIR:-/tmp}/gate_want.$$" - | sed -n 's/^< /  missing from the baseline: /p; s/^> /  in the baseline, not in models\/: /p'
  rm -f "${TMPDIR:-/tmp}/gate_want.$$"
  echo "baseline_models.sh: run tests/gate/update_baseline.sh [BUILD_DIR] and commit tests/kernels.baseline"
  exit 1
fi
echo "baseline_models.sh: $(printf '%s\n' "$want" | wc -l) models, all in the baseline"
