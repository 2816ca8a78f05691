#!/bin/sh
# external.sh SHORTC MODELS_DIR SIM_DATA_DIR — external programs (common/proc.c;
# docs/security.md, "External programs"):
#   - `compare --kernels` runs cuobjdump with an argument vector: a $TMPDIR
#     holding shell syntax reaches the tool as one argument and runs nothing
#     (the tool is a stand-in script recording its arguments; skipped without
#     NVRTC);
#   - the simulator's host compiler is killed at $SHORTC_SIM_COMPILE_TIMEOUT:
#     a .cu including a FIFO fails with a clear error instead of hanging, and
#     leaves no build directory;
#   - a stale tmp-sim-* build directory in the cache (a killed process's) is
#     removed by the next build; a fresh one is kept.
set -u
bin=$1 models=$2 data=$3
. "$(dirname "$0")/sec_setup.sh"

# ---- no shell for cuobjdump ----
cat >fake_cuobjdump <<'SH'
#!/bin/sh
printf '%s\n' "$@" >"$FAKE_ARGS"
SH
chmod +x fake_cuobjdump
evil="$tmp/t'\$(touch PWNED)'\`touch PWNED2\`"
mkdir "$evil"
FAKE_ARGS=$tmp/args SHORTC_CUOBJDUMP=$tmp/fake_cuobjdump TMPDIR=$evil \
    timeout 300 "$bin" compare "$models/gpt2_tiny.arch" --kernels sm_80 >out 2>err
rc=$?
if grep -q "NVRTC" err && [ "$rc" -ne 0 ]; then
    echo "skipped: --kernels needs NVRTC: $(head -n 1 err)"
else
    [ "$rc" -eq 0 ] || { echo "FAIL: compare --kernels: exit $rc: $(cat err)"; fail=1; }
    [ -z "$(find "$tmp" -name 'PWNED*')" ] || { echo "FAIL: \$TMPDIR ran as shell code"; fail=1; }
    case $(sed -n 2p args 2>/dev/null) in
        "$evil"/shortc-sass-*.cubin) echo "ok: cuobjdump got the path as one argument" ;;
        *) echo "FAIL: cuobjdump's arguments: $(cat args 2>/dev/null)"; fail=1 ;;
    esac
fi

# ---- the host compiler's time limit ----
mkfifo never.h
printf '#include "never.h"\n__global__ void store(float *x) { x[threadIdx.x] = 1.0f; }\n' >fifo.cu
start=$(date +%s)
SHORTC_SIM_COMPILE_TIMEOUT=2 timeout 120 "$bin" sim fifo.cu --kernel store --grid 1 --block 1001 \
    --arg "buf:$data/fault_1001.npy" >out 2>err
rc=$?
took=$(($(date +%s) - start))
if [ "$rc" -ne 1 ] || ! grep -q "ran for more than 2 s on fifo.cu and was killed" err || [ "$took" -gt 60 ]; then
    echo "FAIL: a .cu including a FIFO: exit $rc after $took s: $(cat err)"; fail=1
else
    echo "ok: the host compiler killed at the limit ($took s)"
fi
ls "$SHORTC_CACHE" | grep -q tmp-sim && { echo "FAIL: a build directory was left: $(ls "$SHORTC_CACHE")"; fail=1; }

# ---- stale build directories ----
for d in tmp-sim-stale1 tmp-sim-fresh1; do
    mkdir "$SHORTC_CACHE/$d"
    echo x >"$SHORTC_CACHE/$d/compile.log"
done
touch -d '3 days ago' "$SHORTC_CACHE/tmp-sim-stale1/compile.log" "$SHORTC_CACHE/tmp-sim-stale1"
printf '__global__ void store(float *x) { x[blockIdx.x * blockDim.x + threadIdx.x] = 3.0f; }\n' >ok.cu
timeout 300 "$bin" sim ok.cu --kernel store --grid 1 --block 1001 --arg "buf:$data/fault_1001.npy" >out 2>err ||
    { echo "FAIL: sim ok.cu: $(cat err)"; fail=1; }
[ ! -e "$SHORTC_CACHE/tmp-sim-stale1" ] || { echo "FAIL: a stale build directory stays"; fail=1; }
[ -d "$SHORTC_CACHE/tmp-sim-fresh1" ] || { echo "FAIL: a fresh build directory was removed"; fail=1; }
[ "$fail" -eq 0 ] && echo "ok: stale build directories removed"
exit $fail
