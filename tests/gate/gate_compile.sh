#!/bin/sh
# gate_compile.sh — the one NVRTC compile of a model that the gates share (docs/checks.md):
#
#   gate_compile.sh --shortc BIN --gate BIN --out DIR INPUT.arch
#
# Emits INPUT.arch to DIR/NAME.cu and compiles it once with `nvrtc_gate --model NAME --sass-out`
# (sm_80 and sm_90), writing
#   DIR/NAME.table   the ptxas table        (read by gate_model.sh --compiled DIR: gate_baseline_NAME)
#   DIR/NAME.sass    the SASS mix table, or `# skipped: REASON` without cuobjdump
#                                           (tensor_core_gate.sh / vector_gate.sh --compiled DIR)
#   DIR/NAME.log     nvrtc_gate's messages (the spill errors)
#   DIR/NAME.rc      nvrtc_gate's exit status (0, or 1: a kernel spills)
# NAME is INPUT's file name without its extension. ctest runs it as the fixture gate_compile_NAME.
# Fails when shortc cannot emit INPUT or NVRTC cannot compile it (the gates that need the files
# are then not run); a spill is left to the baseline gate to report.
set -u
shortc="" gate="" out=""
while [ $# -gt 1 ]; do
  case "$1" in
    --shortc) shortc=$2; shift 2 ;;
    --gate) gate=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "gate_compile.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
input=${1:?usage: gate_compile.sh --shortc BIN --gate BIN --out DIR INPUT.arch}
name=$(basename "$input" | sed 's/\.[^.]*$//')
mkdir -p "$out" || exit 2
# nothing of an earlier run may stand in for this one
rm -f "$out/$name.cu" "$out/$name.table" "$out/$name.sass" "$out/$name.log" "$out/$name.rc"
"$shortc" "$input" -o "$out/$name.cu" || { echo "gate_compile: $name: shortc could not emit $input" >&2; exit 1; }
"$gate" --model "$name" --sass-out "$out/$name.sass" "$out/$name.cu" > "$out/$name.table" 2> "$out/$name.log"
rc=$?
case "$rc" in
  0|1) ;;
  *) cat "$out/$name.log" >&2
     echo "gate_compile: $name: nvrtc_gate failed (exit $rc): compile error or I/O error, log above" >&2
     exit 1 ;;
esac
[ -s "$out/$name.sass" ] || { echo "gate_compile: $name: nvrtc_gate wrote no SASS table" >&2; exit 1; }
echo "$rc" > "$out/$name.rc" || exit 1
if grep -q '^# skipped: ' "$out/$name.sass"; then sass="no SASS (no cuobjdump: the SASS gates are skipped)"
else sass="$(grep -vc '^#' "$out/$name.sass") SASS rows"; fi
echo "gate_compile: $name: $(grep -vc '^#' "$out/$name.table") ptxas rows, $sass$( [ "$rc" -eq 1 ] && echo ', a kernel spills (gate_baseline_'"$name"' reports it)')"
