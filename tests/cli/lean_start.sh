#!/bin/sh
# lean_start.sh SHORTC LIBSHORTRT_SO MODELS_DIR FAKE_CUDA_LIB — start-up loads nothing it does not use
# (issue 18, item 2):
#   - neither shortc nor libshortrt.so has a DT_NEEDED on libnvrtc (readelf);
#   - `shortc --version` and `shortc MODEL.arch -o x.cu` load no NVRTC (LD_DEBUG=libs);
#   - shortc needs no libclang/LLVM, and neither start-up loads them (--check dlopens them);
#   - where NVRTC is needed and cannot be loaded it is one clear error naming the library:
#     `shortc report --kernels` (the CLI) and `shortc run --backend cuda` (the runtime, on the
#     tests' fake driver), both through $SHORTC_LIBNVRTC pointing at a file that does not exist,
#     so the test means the same on machines with CUDA installed.
set -u
shortc=$1 librt=$2 models=$3 fake=$4
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

for bin in "$shortc" "$librt"; do
  readelf -d "$bin" | grep NEEDED | grep -q nvrtc && fail "$bin has a DT_NEEDED on libnvrtc"
done
LD_DEBUG=libs "$shortc" --version > /dev/null 2> "$tmp/version.libs" || fail "shortc --version failed"
grep -q "calling init" "$tmp/version.libs" || fail "LD_DEBUG=libs printed nothing to check"
grep "calling init" "$tmp/version.libs" | grep -q nvrtc && fail "shortc --version loads NVRTC"
LD_DEBUG=libs "$shortc" "$models/gpt2_tiny.arch" -o "$tmp/x.cu" 2> "$tmp/compile.libs" || fail "compile failed"
grep "calling init" "$tmp/compile.libs" | grep -q nvrtc && fail "shortc MODEL.arch -o x.cu loads NVRTC"
# libclang (and LLVM) only for --check: dlopened by compiler/check.c
readelf -d "$shortc" | grep NEEDED | grep -qi 'clang\|llvm' && fail "$shortc has a DT_NEEDED on libclang/LLVM"
grep "calling init" "$tmp/version.libs" "$tmp/compile.libs" | grep -qi 'clang\|llvm' && fail "start-up loads libclang/LLVM"

missing=/nonexistent/libnvrtc.so.13
want="NVRTC ($missing, as SHORTC_LIBNVRTC names it) cannot be loaded: $missing: cannot open shared object file"
out=$(SHORTC_LIBNVRTC=$missing SHORTC_CACHE="$tmp/cache" "$shortc" report "$models/gpt2_tiny.arch" --kernels sm_80 2>&1 >/dev/null)
rc=$?
printf '%s\n' "$out"
[ "$rc" -ne 0 ] || fail "report --kernels without NVRTC: exit status 0"
case $out in *"$want"*) ;; *) fail "report --kernels: expected '$want'" ;; esac
out=$(SHORTC_LIBCUDA=$fake SHORTC_LIBCUBLAS=$fake SHORTC_LIBCUBLASLT=$fake SHORTC_LIBNVRTC=$missing \
      "$shortc" run "$models/gpt2_tiny.arch" --backend cuda --random-weights 1 2>&1)
rc=$?
printf '%s\n' "$out"
[ "$rc" -eq 1 ] || fail "run --backend cuda without NVRTC: exit status $rc, expected 1"
case $out in *"$want"*"; use --backend sim to run on the CPU simulator") ;; *) fail "run --backend cuda: expected '$want'" ;; esac
echo "ok"
