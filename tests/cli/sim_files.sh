#!/bin/sh
# sim_files.sh SHORTC DATA_DIR — `shortc sim` and the kernel cache with the
# files and directories a user really has (docs/simulator.md):
#   - a relative cache directory ($SHORTC_CACHE) and a relative $TMPDIR work
#     (the compiler runs inside a build directory, so every path is absolute);
#   - an unusable $HOME is not created: the fallback directory is used;
#   - #include "x.cuh" next to the .cu, and -I DIR, compile; editing an included
#     header changes the cache key (no stale object from the cache);
#   - a compile error quotes the user's own line (the file is compiled unchanged);
#   - a namespaced, template or overloaded kernel gets a clear error;
#   - an unchecked fault names the kernel, not its trampoline;
#   - outputs are all or nothing: one output that cannot be written means none is
#     (checked before the launch).
set -u
shortc=$1 data=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/shortc-simfiles.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
fail() { echo "FAIL: $*"; [ -f "$tmp/err" ] && cat "$tmp/err"; exit 1; }
cd "$tmp" || exit 1
mkdir -p src/inc
cat > src/store.cu <<'CU'
#include "value.cuh"
#include "scale.cuh"
__global__ void store(float *x) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    x[i] = VALUE * SCALE;
}
CU
echo '#define VALUE 2.0f' > src/value.cuh
echo '#define SCALE 1.0f' > src/inc/scale.cuh
sim() { "$shortc" sim "$@" 2> "$tmp/err"; }
in=$data/fault_1001.npy twos=$data/fault_twos.npy

# ---- relative directories ----
SHORTC_CACHE=relcache sim src/store.cu -I src/inc --kernel store --grid 1 --block 1001 --arg buf:$in:a.npy ||
    fail "relative SHORTC_CACHE"
cmp a.npy "$twos" || fail "relative SHORTC_CACHE: wrong result"
ls relcache | grep -q '\.so$' || fail "nothing stored in the relative cache"
: > notadir
mkdir reltmp
SHORTC_CACHE=notadir TMPDIR=reltmp sim src/store.cu -I src/inc --kernel store --grid 1 --block 1001 --arg buf:$in:b.npy ||
    fail "relative TMPDIR with an unusable cache"
cmp b.npy "$twos" || fail "relative TMPDIR: wrong result"
[ -z "$(ls reltmp)" ] || fail "build directory left in TMPDIR"

# ---- an unusable HOME is not created ----
env -u SHORTC_CACHE HOME="$tmp/no/such/home" "$shortc" sim src/store.cu -I src/inc --kernel store --grid 1 --block 1001 \
    --arg buf:$in:c.npy 2> "$tmp/err" || fail "run with a missing HOME"
[ -e "$tmp/no" ] && fail "a missing HOME was created"
cmp c.npy "$twos" || fail "missing HOME: wrong result"

# ---- includes and the cache key ----
sim src/store.cu --kernel store --grid 1 --block 1001 --arg buf:$in:d.npy && fail "scale.cuh found without -I"
grep -q "scale.cuh" "$tmp/err" || fail "no message naming the missing header"
echo '#define VALUE 3.0f' > src/value.cuh
SHORTC_CACHE=relcache sim src/store.cu -I src/inc --kernel store --grid 1 --block 1001 --arg buf:$in:e.npy ||
    fail "run after editing value.cuh"
cmp -s e.npy "$twos" && fail "edited header ignored: stale object from the cache"
echo '#define VALUE 1.0f' > src/value.cuh
echo '#define SCALE 2.0f' > src/inc/scale.cuh
SHORTC_CACHE=relcache sim src/store.cu -I src/inc --kernel store --grid 1 --block 1001 --arg buf:$in:f.npy ||
    fail "run after editing scale.cuh"
cmp f.npy "$twos" || fail "edited -I header ignored"

# ---- a compile error quotes the user's line ----
printf '// line 1\n__global__ void bad(float *x) {\n    x[0] = undeclared_name_xyz;\n}\n' > src/bad.cu
sim src/bad.cu --kernel bad --grid 1 --block 1 --arg buf:$in && fail "a broken kernel compiled"
grep -q "bad.cu:3:" "$tmp/err" || fail "the error is not located at bad.cu:3"
grep -q "x\[0\] = undeclared_name_xyz;" "$tmp/err" || fail "the error does not quote line 3"

# ---- outputs are all or nothing ----
cp "$data/../faults.cu" .
sim faults.cu --kernel global_load --grid 1 --block 1 --arg buf:$in:ok1.npy --arg buf:$in:no/such/dir/o.npy --arg i32:0 &&
    fail "an output in a missing directory did not fail the run"
grep -q "no/such/dir/o.npy" "$tmp/err" || fail "the unwritable output is not named"
[ -e ok1.npy ] && fail "an output was written although another could not be"
sim faults.cu --kernel global_load --grid 1 --block 1 --arg buf:$in:ok1.npy --arg buf:$in:ok2.npy --arg i32:0 ||
    fail "two writable outputs"
[ -f ok1.npy ] && [ -f ok2.npy ] || fail "outputs missing after a successful run"

# ---- kernels the simulator cannot find by name: a clear error ----
printf 'namespace ops {\n__global__ void nk(float *x) { x[0] = 1.0f; }\n}\n__global__ void ov(float *x) { x[0] = 1.0f; }\n__global__ void ov(int *x) { x[0] = 1; }\n' > odd.cu
sim odd.cu --kernel nk --grid 1 --block 1 --arg buf:$in && fail "an unqualified namespaced kernel ran"
grep -q "no kernel \`nk'; its kernels: ops::nk, ov" "$tmp/err" || fail "the kernel list does not qualify ops::nk"
sim odd.cu --kernel ops::nk --grid 1 --block 1 --arg buf:$in && fail "a namespaced kernel ran"
grep -q "kernel \`ops::nk' is in a namespace" "$tmp/err" || fail "no clear error for a namespaced kernel"
sim odd.cu --kernel ov --grid 1 --block 1 --arg buf:$in && fail "an overloaded kernel ran"
grep -q "kernel \`ov' is overloaded (2 definitions)" "$tmp/err" || fail "no clear error for an overloaded kernel"
printf 'template <int B> __global__ void tk(float *x) { x[threadIdx.x] = B; }\ntemplate __global__ void tk<2>(float *);\n' > tk.cu
sim tk.cu --kernel tk --grid 1 --block 1 --arg buf:$in && fail "a template kernel ran"
grep -q "kernel \`tk' is a template" "$tmp/err" || fail "no clear error for a template kernel"

# ---- an unchecked fault names the kernel, not the simulator's trampoline ----
printf '__global__ void gidx(float *x) {\n    __shared__ float s[4];\n    s[threadIdx.x] = 1.0f;\n    x[0] = s[0];\n}\n' > gidx.cu
sim gidx.cu --kernel gidx --grid 1 --block 5 --unchecked --arg buf:$in && fail "the overrun was not reported"
grep -q "\[in gidx" "$tmp/err" || fail "the fault does not name the kernel"
grep -q "shortsim_" "$tmp/err" && fail "the fault names a simulator-internal symbol"

# ---- a cache that is not used is said so (the issue: "say so"); an output over an input is refused ----
mkdir -m 700 gw && chmod 777 gw
SHORTC_CACHE=gw sim src/store.cu -I src/inc --kernel store --grid 1 --block 1001 --arg buf:$in:g.npy ||
    fail "world-writable cache"
grep -q "shortc: warning: kernel cache gw not used" "$tmp/err" || fail "no warning about the unusable cache"
cp src/store.cu store.orig
sim src/store.cu -I src/inc --kernel store --grid 1 --block 1001 --arg buf:$in:src/store.cu &&
    fail "an output over the .cu was accepted"
grep -q "output 'src/store.cu' is the same file as 'src/store.cu'; nothing written" "$tmp/err" ||
    fail "no clear error for an output over the .cu"
cmp -s src/store.cu store.orig || fail "the .cu was overwritten"

echo PASS
