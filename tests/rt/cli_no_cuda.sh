#!/bin/sh
# cli_no_cuda.sh SHORTC MODEL.arch — `shortc run --backend cuda` without a
# driver fails with exit status 1 and exactly one line naming the missing
# library and the way out. $SHORTC_LIBCUDA points the runtime at a library
# that does not exist, so the test means the same on machines with a GPU.
set -u
out=$(SHORTC_LIBCUDA=/nonexistent/libcuda.so.1 "$1" run "$2" --backend cuda --random-weights 1 2>&1)
rc=$?
printf '%s\n' "$out"
want="shortc: error: no CUDA driver found (/nonexistent/libcuda.so.1: cannot open shared object file: No such file or directory); use --backend sim to run on the CPU simulator"
[ "$rc" -eq 1 ] || { echo "FAIL: exit status $rc, expected 1"; exit 1; }
[ "$out" = "$want" ] || { echo "FAIL: expected exactly: $want"; exit 1; }
echo "ok"
