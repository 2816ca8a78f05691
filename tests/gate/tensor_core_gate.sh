#!/bin/sh
# tensor_core_gate.sh — the static performance check of fp16/bf16 attention kernels
# (docs/checks.md, "Tensor-core gate"):
#
#   tensor_core_gate.sh --shortc BIN --gate BIN --out DIR --allow FILE
#                       [--kernels ERE] [--compiled CDIR] INPUT.arch|INPUT.cu
#
# Emits INPUT (a .cu is used as it is), reads the SASS of its NVRTC cubins at
# sm_80 and sm_90 (nvrtc_gate --sass; with --compiled CDIR the listing that
# gate_compile.sh wrote, CDIR/NAME.cu and CDIR/NAME.sass, from the compile the
# baseline and vector gates share) and checks every kernel whose name
# matches ERE (default: fp16/bf16 attention kernels, ^shortc_attn_.*_b?f16(_|$)),
# except the flash-decoding combine kernels (_decode_combine_: they merge the
# partial softmax results and multiply no matrices):
#   - it contains tensor-core MMA (HMMA), except the flash-decoding partial
#     kernels (_decode_partial_: one query row per head, CUDA cores by design,
#     docs/attention/README.md "Decode stays on CUDA cores"), which are held to
#     the load rules only;
#   - it has no 8/16-bit global load (element-wise loads of half data) and at
#     least one 128-bit global load or cp.async (LDGSTS): K and V come in
#     128-bit pieces. SASS does not say which load reads K or V, so this is
#     checked over all of the kernel's global loads.
# A kernel named in the allow FILE may fail (reported as an expected failure
# with the reason); one that passes while listed fails the test, so that the
# list only shrinks. Exit 77 (skipped) when cuobjdump is absent.
set -u
shortc="" gate="" out="" allow="" kernels='^shortc_attn_.*_b?f16(_|$)' skip='_decode_combine_' compiled=
while [ $# -gt 1 ]; do
  case "$1" in
    --shortc) shortc=$2; shift 2 ;;
    --gate) gate=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --allow) allow=$2; shift 2 ;;
    --kernels) kernels=$2; shift 2 ;;
    --compiled) compiled=$2; shift 2 ;;
    *) echo "tensor_core_gate.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
input=${1:?usage: tensor_core_gate.sh --shortc BIN --gate BIN --out DIR --allow FILE [--kernels ERE] INPUT}
[ -r "$allow" ] || { echo "tensor_core_gate.sh: cannot read the allow list '$allow'" >&2; exit 2; }
name=$(basename "$input" | sed 's/\.[^.]*$//')
mkdir -p "$out" || exit 2
if [ -n "$compiled" ]; then
  cu="$compiled/$name.cu" sass="$compiled/$name.sass"
  [ -r "$cu" ] && [ -r "$sass" ] ||
    { echo "tensor_core_gate: $name: no compile in $compiled (run gate_compile.sh, ctest gate_compile_$name)" >&2; exit 1; }
else
  sass="$out/$name.sass"
  case "$input" in
    *.cu) cu=$input ;;
    *)
      cu="$out/$name.tc.cu"
      "$shortc" "$input" -o "$cu" || { echo "tensor_core_gate: $name: shortc could not emit $input" >&2; exit 1; }
      ;;
  esac
fi
# no kernel to check: no NVRTC compile
if ! grep -Eo '__global__ void [A-Za-z_][A-Za-z0-9_]*' "$cu" | sed 's/.* //' | grep -Eq "$kernels"; then
  echo "tensor_core_gate: $name: no kernel matches $kernels (nothing to check)"
  exit 0
fi
if [ -n "$compiled" ]; then
  # gate_compile.sh found no cuobjdump: skipped, with its reason
  grep '^# skipped: ' "$sass" && exit 77
else
  "$gate" --sass "$cu" > "$sass"
  rc=$?
  [ "$rc" -eq 4 ] && exit 77
  [ "$rc" -eq 0 ] || { echo "tensor_core_gate: $name: nvrtc_gate --sass failed (exit $rc)" >&2; exit 1; }
fi
# columns: kernel arch mma ffma hfma ldg16 ldg32 ldg64 ldg128 ldgsts lds ldsm sts shfl bar ldl stl
awk -v re="$kernels" -v skip="$skip" -v nomma='_decode_partial_' -v model="$name" -v allowfile="$allow" '
  FILENAME == allowfile { if ($0 !~ /^#/ && NF) allowed[$1] = 1; next }
  /^#/ || !NF || $1 !~ re || $1 ~ skip { next }
  {
    checked++
    fail = ""
    if ($3 == 0 && $1 !~ nomma) fail = fail "; no tensor-core MMA (HMMA)"
    if ($6 > 0) fail = fail "; " $6 " 8/16-bit global loads"
    if ($9 + $10 == 0) fail = fail "; no 128-bit global load or cp.async"
    if (fail == "") {
      if ($1 in allowed) { print "tensor_core_gate: " model ": " $1 " at " $2 " now passes: delete it from " allowfile; bad = 1 }
      else print "tensor_core_gate: " model ": " $1 " at " $2 ": ok (" $3 " MMA, " $9 " LDG.128, " $10 " LDGSTS)"
    } else if ($1 in allowed) {
      print "tensor_core_gate: " model ": " $1 " at " $2 ": expected failure (allowed in " allowfile "):" substr(fail, 2)
    } else {
      print "tensor_core_gate: " model ": error: " $1 " at " $2 ":" substr(fail, 2); bad = 1
    }
  }
  END {
    if (!checked) print "tensor_core_gate: " model ": no kernel matches " re " (nothing to check)"
    exit bad
  }' "$allow" "$sass"
