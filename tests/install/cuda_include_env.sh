#!/bin/sh
# cuda_include_env.sh — $SHORTC_CUDA_INCLUDE replaces the CUDA include
# directories compiled in (for a toolkit installed elsewhere than at build time).
#
#   cuda_include_env.sh SHORTC MODEL.arch CUDA_INCLUDE_DIR WORK_PARENT
#
# On a fresh kernel cache, the simulator's host compile of MODEL
#  - fails with the #error of a planted cuda_fp16.h when the variable names
#    the directory holding it (so the variable's directories are searched, and
#    before the system's: a host may also have the toolkit's headers in
#    /usr/local/include);
#  - succeeds when an empty directory and then the toolkit's directory are
#    listed, ':'-separated.
set -eu
SHORTC=$1 MODEL=$2 CUDA_INC=$3 PARENT=$4
mkdir -p "$PARENT"
W=$(mktemp -d "$PARENT/cuda_include_env.XXXXXX")
trap 'rm -rf "$W"' EXIT
export SHORTC_CACHE="$W/cache"
mkdir "$W/empty" "$W/planted"
echo '#error planted-by-cuda-include-env-test' >"$W/planted/cuda_fp16.h"

if SHORTC_CUDA_INCLUDE="$W/planted" "$SHORTC" run "$MODEL" --backend sim --random-weights 1 >"$W/bad.txt" 2>&1; then
    cat "$W/bad.txt"; echo "FAIL: the simulator did not read the planted cuda_fp16.h"; exit 1
fi
grep -q "planted-by-cuda-include-env-test" "$W/bad.txt" || { cat "$W/bad.txt"; echo "FAIL: not the planted header's error"; exit 1; }

SHORTC_CUDA_INCLUDE="$W/empty:$CUDA_INC" "$SHORTC" run "$MODEL" --backend sim --random-weights 1 >"$W/good.txt" 2>&1 ||
    { cat "$W/good.txt"; echo "FAIL: the simulator did not compile with the toolkit's directory listed"; exit 1; }
echo "cuda_include_env: OK"
