#!/bin/sh
# vector_gate.sh — 128-bit accesses in the SASS of the generated elementwise
# and norm kernels (issue 12; docs/checks.md, "Vector gate"):
#
#   vector_gate.sh --shortc BIN --gate BIN --out DIR [--compiled CDIR] INPUT.arch|INPUT.cu
#
# Emits INPUT (a .cu is used as it is), reads the SASS of its NVRTC cubins at sm_80 and sm_90
# (nvrtc_gate --sass; with --compiled CDIR the listing CDIR/NAME.sass that gate_compile.sh wrote
# from the compile the baseline and tensor-core gates share) and requires of every embed, norm and epilogue kernel at
# least one 128-bit global load (LDG.128) and no 8/16-bit global load: their
# rows move in 16-byte pieces (an epilogue kernel `_nN_` whose rows are not a multiple
# of 16 bytes: the widest piece dividing them, 8 or 4 bytes). Exit 77 (skipped) when cuobjdump is absent.
set -u
shortc="" gate="" out="" compiled=""
while [ $# -gt 1 ]; do
  case "$1" in
    --shortc) shortc=$2; shift 2 ;;
    --gate) gate=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --compiled) compiled=$2; shift 2 ;;
    *) echo "vector_gate.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
input=${1:?usage: vector_gate.sh --shortc BIN --gate BIN --out DIR INPUT.arch|INPUT.cu}
name=$(basename "$input" | sed 's/\.[^.]*$//')
mkdir -p "$out" || exit 2
if [ -n "$compiled" ]; then
  sass="$compiled/$name.sass"
  [ -r "$sass" ] ||
    { echo "vector_gate: $name: no compile in $compiled (run gate_compile.sh, ctest gate_compile_$name)" >&2; exit 1; }
  # gate_compile.sh found no cuobjdump: skipped, with its reason
  grep '^# skipped: ' "$sass" && exit 77
else
  sass="$out/$name.vec.sass"
  case "$input" in
    *.cu) cu=$input ;;
    *)
      cu="$out/$name.vec.cu"
      "$shortc" "$input" -o "$cu" || { echo "vector_gate: $name: shortc could not emit $input" >&2; exit 1; }
      ;;
  esac
  "$gate" --sass "$cu" > "$sass"
  rc=$?
  [ "$rc" -eq 4 ] && exit 77
  [ "$rc" -eq 0 ] || { echo "vector_gate: $name: nvrtc_gate --sass failed (exit $rc)" >&2; exit 1; }
fi
# columns: kernel arch mma ffma hfma ldg16 ldg32 ldg64 ldg128 ldgsts lds ldsm sts shfl bar ldl stl
awk -v model="$name" '
  /^#/ || !NF || $1 !~ /^shortc_(embed|norm|epilogue)_/ { next }
  {
    checked++
    fail = ""
    # a row whose bytes are not a multiple of 16 (an epilogue over a vocabulary of 50 fp32) moves in the
    # widest piece that divides it: 8 bytes (LDG.64, column 8) or 4 (LDG.32, column 7)
    width = 16
    if (match($1, /_n[0-9]+_/)) {
      n = substr($1, RSTART + 2, RLENGTH - 3) + 0
      eb = ($1 ~ /_(f16|bf16)($|_)/) ? 2 : 4
      while (width > eb && (n * eb) % width != 0) width /= 2
    }
    if (width == 16 && $9 == 0) fail = fail "; no 128-bit global load"
    if (width == 8 && $8 == 0) fail = fail "; no 64-bit global load (rows of " n * eb " bytes)"
    if (width == 4 && $7 == 0) fail = fail "; no 32-bit global load (rows of " n * eb " bytes)"
    if ($6 > 0) fail = fail "; " $6 " 8/16-bit global loads"
    if (fail != "") { print "vector_gate: " model ": error: " $1 " at " $2 ":" substr(fail, 2); bad = 1 }
    else print "vector_gate: " model ": " $1 " at " $2 ": ok (" $9 " LDG.128)"
  }
  END {
    if (!checked) { print "vector_gate: " model ": no embed, norm or epilogue kernel in the SASS listing"; exit 1 }
    exit bad
  }' "$sass"
