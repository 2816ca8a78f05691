#!/bin/sh
# gate_model.sh — the NVRTC gate for one model (docs/checks.md).
#
#   gate_model.sh --shortc BIN --gate BIN --out DIR [--name NAME] [--compiled CDIR]
#                 [--baseline FILE | --table-only] INPUT.arch|INPUT.cu
#
# Emits INPUT.arch to DIR/NAME.cu (a .cu is used as it is), compiles it with
# nvrtc_gate for sm_80 and sm_90 (each once) and writes the table to
# DIR/NAME.table. Fails on a compile error or any spill. With --compiled CDIR
# nothing is emitted or compiled: the table, messages and exit status of the
# compile that gate_compile.sh made into CDIR (CDIR/NAME.table, .log, .rc) are
# judged instead (ctest: gate_baseline_NAME after its fixture gate_compile_NAME). With --baseline,
# the rows of model NAME in FILE must equal the table (whitespace aside);
# with --table-only the rows are printed on stdout instead. NAME defaults to
# INPUT's file name without its extension.
set -u
shortc="" gate="" out="" name="" baseline="" table_only=0 compiled=
while [ $# -gt 1 ]; do
  case "$1" in
    --shortc) shortc=$2; shift 2 ;;
    --gate) gate=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --name) name=$2; shift 2 ;;
    --baseline) baseline=$2; shift 2 ;;
    --table-only) table_only=1; shift ;;
    --compiled) compiled=$2; shift 2 ;;
    *) echo "gate_model.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
input=${1:?usage: gate_model.sh --shortc BIN --gate BIN --out DIR [--name NAME] [--baseline FILE|--table-only] INPUT}
[ -n "$name" ] || name=$(basename "$input" | sed 's/\.[^.]*$//')
mkdir -p "$out" || exit 2

if [ -n "$compiled" ]; then
  table="$compiled/$name.table"
  [ -r "$compiled/$name.rc" ] && [ -r "$table" ] ||
    { echo "gate: $name: no compile in $compiled (run gate_compile.sh, ctest gate_compile_$name)" >&2; exit 1; }
  rc=$(cat "$compiled/$name.rc")
  cat "$compiled/$name.log" >&2
else
  case "$input" in
    *.cu) cu=$input ;;
    *)
      cu="$out/$name.cu"
      "$shortc" "$input" -o "$cu" || { echo "gate: $name: shortc could not emit $input" >&2; exit 1; }
      ;;
  esac
  table="$out/$name.table"
  "$gate" --model "$name" "$cu" > "$table"
  rc=$?
fi
if [ "$rc" -ne 0 ]; then
  [ "$rc" -eq 1 ] && cat "$table"
  echo "gate: $name: the NVRTC gate failed (exit $rc): $( [ "$rc" -eq 1 ] && echo 'a kernel spills registers' || echo 'compile error, log above' )" >&2
  exit 1
fi

# rows without comments, whitespace squeezed
rows() { awk '!/^#/ && NF { $1 = $1; print }'; }

if [ "$table_only" = 1 ]; then
  cat "$table"
  exit 0
fi
[ -n "$baseline" ] || { cat "$table"; exit 0; }

rows < "$table" > "$out/$name.current"
awk -v m="$name" '!/^#/ && $1 == m' "$baseline" | rows > "$out/$name.expected"
if [ ! -s "$out/$name.expected" ]; then
  cat "$table"
  echo "gate: $name: model has no rows in $baseline." >&2
  echo "gate: run tests/gate/update_baseline.sh [BUILD_DIR] and commit tests/kernels.baseline." >&2
  exit 1
fi
if ! diff -u "$out/$name.expected" "$out/$name.current" > "$out/$name.diff"; then
  cat "$table"
  echo "gate: $name: kernel registers/shared memory/stack differ from $baseline (- baseline, + now):" >&2
  sed '1,2d' "$out/$name.diff" >&2
  want=$(sed -n 's/^# nvrtc //p' "$baseline")
  have=$("$gate" --version 2>/dev/null | sed -n 's/^nvrtc //p')
  [ -n "$want" ] && [ "$want" != "$have" ] &&
    echo "gate: note: the baseline was made with NVRTC $want, this is NVRTC $have; that alone changes register counts." >&2
  echo "gate: if the change is intended, run tests/gate/update_baseline.sh [BUILD_DIR] and commit" >&2
  echo "gate: tests/kernels.baseline with it, so that the difference shows in review." >&2
  exit 1
fi
cat "$table"
echo "gate: $name: matches $baseline"
