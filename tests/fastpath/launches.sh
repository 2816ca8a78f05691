#!/bin/sh
# launches.sh SHORTC SOURCE_DIR — launches per forward of gpt2_small, counted
# from its plan (issue 12). Fused, every GEMM epilogue runs in cuBLASLt and
# every residual add in the norm after it, so a forward is 1 embed + per layer
# (norm, kv_write, attention, norm+add) + the final norm+add = 4 L + 2
# launches, and 4 L + 1 GEMMs; no epilogue or conversion kernel is left. The
# plan's step list must agree with the header's counts. Before this work the
# same plan had 98 launches (8 L + 2).
set -u
shortc=$1 src=$2
model=$src/models/gpt2_small.arch
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/shortc-launches.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM
L=$("$shortc" "$model" --dump-spec | awk '$1 == "layers" && NF == 2 {print $2; exit}')
[ -n "$L" ] || fail "no layer count"
"$shortc" "$model" -o "$tmp/fused.cu" || fail "emit"
"$shortc" "$model" --no-fuse -o "$tmp/unfused.cu" || fail "emit --no-fuse"
counts() { sed -n 's|^// [0-9]* kernels\{0,1\}, \([0-9]*\) launch.* and \([0-9]*\) GEMM.*|\1 \2|p' "$1"; }
set -- $(counts "$tmp/fused.cu")
launches=$1 gemms=$2
set -- $(counts "$tmp/unfused.cu")
echo "gpt2_small ($L layers): $launches launches + $gemms GEMMs per forward fused; $1 launches + $2 GEMMs unfused"
[ "$launches" = $((4 * L + 2)) ] || fail "fused: $launches launches, expected 4 L + 2 = $((4 * L + 2))"
[ "$gemms" = $((4 * L + 1)) ] || fail "fused: $gemms GEMMs, expected 4 L + 1 = $((4 * L + 1))"
"$shortc" "$model" --plan-out "$tmp/plan.json" -o "$tmp/again.cu" || fail "emit --plan-out"
# steps of the plan's "forward" program (the "decode" program is counted by the state tests)
forward() {
  python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))
steps = [s for g in p["programs"] if g["name"] == "forward" for s in g["steps"]]
print(sum(s["op"] == "launch" for s in steps), sum(s.get("epilogue", "none").startswith("bias") for s in steps))' "$tmp/plan.json"
}
set -- $(forward) || fail "reading the plan"
[ "$1" = "$launches" ] || fail "the plan's forward program lists $1 launch steps, the header says $launches"
[ "$2" = $((4 * L)) ] || fail "$2 GEMMs with a cuBLASLt bias epilogue, expected 4 L = $((4 * L))"
if grep -q 'void shortc_epilogue\|void shortc_convert' "$tmp/fused.cu"; then fail "an epilogue or conversion kernel is left"; fi
echo "ok"
