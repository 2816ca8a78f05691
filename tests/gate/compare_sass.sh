#!/bin/sh
# compare_sass.sh — `shortc compare --kernels` shows the SASS mix (docs/cost-model.md):
#
#   compare_sass.sh SHORTC MODEL.arch
#
# With cuobjdump: the "SASS instruction mix" table lists the model's attention
# kernel at sm_90 and --json carries its `sass` object. Without (exit 77,
# skipped): the note says where cuobjdump was looked for. Either way, with
# SHORTC_CUOBJDUMP naming a missing file the note appears and the PTX table stays.
set -u
shortc=$1 model=$2
out=$(SHORTC_CUOBJDUMP=/nonexistent/cuobjdump "$shortc" compare "$model" --kernels sm_90 2>&1) || { echo "$out"; exit 1; }
echo "$out" | grep -q "note: .*SASS mix not shown: no cuobjdump found" || { echo "$out"; echo "compare_sass: no note without cuobjdump" >&2; exit 1; }
echo "$out" | grep -q "^kernels of .*PTX instruction counts" || { echo "$out"; exit 1; }
echo "$out" | grep -q "SASS instruction mix" && { echo "$out"; echo "compare_sass: SASS table without cuobjdump" >&2; exit 1; }
out=$("$shortc" compare "$model" --kernels sm_90 2>&1) || { echo "$out"; exit 1; }
echo "$out" | grep -q "SASS mix not shown: no cuobjdump" && exit 77
echo "$out"
echo "$out" | sed -n '/^SASS instruction mix/,$p' | grep -Eq "^shortc_attn_causal_[a-z0-9_]+ +0 +[1-9][0-9]* " ||
  { echo "compare_sass: no SASS row with FFMA for the attention kernel" >&2; exit 1; }
json=$("$shortc" compare "$model" --kernels sm_90 --json 2>/dev/null) || exit 1
echo "$json" | grep -q '"sass"' && echo "$json" | grep -q '"ldmatrix"' || { echo "compare_sass: --json has no sass object" >&2; exit 1; }
echo "compare_sass: ok"
