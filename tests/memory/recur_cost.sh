#!/bin/sh
# recur_cost.sh SHORTC MODEL.arch — FLOPs per token of gpt2_recurrent (GPT-2 small, 300-token windows,
# the recurrence module included) under overlap K, without the logits projection (the paper's
# non-embedding convention, docs/cost-model.md), against Yoshida et al.'s Table 1 within 1 %.
set -u
shortc=$1 model=$2
fail=0
for row in "0 1.75e8" "5 1.78e8" "10 1.81e8" "30 1.94e8" "50 2.10e8"; do
    set -- $row
    k=$1 paper=$2
    got=$("$shortc" report "$model" --overlap "$k" --json | /usr/bin/python3 -c '
import json, sys
f = json.load(sys.stdin)["models"][0]["forward"]
print("%.4e" % ((f["flops"] - f["flops_logits"]) / (300 - int(sys.argv[1]))))' "$k") || { echo "FAIL overlap $k: report"; fail=1; continue; }
    if awk -v g="$got" -v p="$paper" 'BEGIN { d = g / p - 1; exit !(d < 0.01 && d > -0.01) }'; then
        echo "ok   overlap $k: $got FLOPs/token (paper $paper)"
    else
        echo "FAIL overlap $k: $got FLOPs/token, paper $paper"; fail=1
    fi
done
exit $fail
