#!/bin/sh
# links.sh SHORTC MODELS_DIR SIM_DATA_DIR — outputs never follow a symbolic
# link in their last component (common/fileio.c; docs/security.md, "Outputs"):
# for -o, --plan-out, run --logits, mask -o, compare --svg and `shortc sim`'s
# buffer outputs, a link (to a file, dangling, or to a file another user could
# not otherwise write) is refused with a clear error, exit 1, nothing
# written and the link left as it was; with --force the link itself is
# replaced by a regular file (renamed over it) and its target is unchanged.
set -u
bin=$1 models=$2 data=$3
. "$(dirname "$0")/sec_setup.sh"
model=$models/gpt2_tiny.arch
cat >k.cu <<'CU'
__global__ void store(float *x) { x[blockIdx.x * blockDim.x + threadIdx.x] = 2.0f; }
CU

# cmd_for KIND OUT: the arguments of a command writing output OUT of that kind
cmd_for() {
    case $1 in
        o) echo "$model -o $2" ;;
        plan) echo "$model -o /dev/null --plan-out $2" ;;
        logits) echo "run $model --backend ref --random-weights 1 --logits $2" ;;
        mask) echo "mask $model --tokens 8 -o $2" ;;
        svg) echo "compare $model --svg $2" ;;
        sim) echo "sim k.cu --kernel store --grid 1 --block 1001 --arg buf:$data/fault_1001.npy:$2" ;;
    esac
}

for kind in o plan logits mask svg sim; do
    d=$tmp/$kind
    mkdir "$d"
    echo "precious" >"$d/victim"
    chmod 444 "$d/victim"   # what a link planted by someone else points at
    ln -s victim "$d/link"
    ln -s missing "$d/dangling"
    for out in "$d/link" "$d/dangling"; do
        # shellcheck disable=SC2046
        timeout 300 "$bin" $(cmd_for $kind "$out") >"$tmp/out" 2>"$tmp/err"
        rc=$?
        if [ "$rc" -ne 1 ] || ! grep -q "cannot write '$out': a symbolic link" "$tmp/err"; then
            echo "FAIL: $kind to $out: exit $rc (want 1 and a symbolic-link error): $(cat "$tmp/err")"
            fail=1
        fi
        [ -L "$out" ] || { echo "FAIL: $kind: $out is no longer the link"; fail=1; }
    done
    [ "$(cat "$d/victim")" = precious ] || { echo "FAIL: $kind: the link's target was written"; fail=1; }
    [ ! -e "$d/missing" ] || { echo "FAIL: $kind: the dangling link's target was created"; fail=1; }
    ls "$d" | grep -q tmp && { echo "FAIL: $kind: a temporary file was left: $(ls "$d")"; fail=1; }
    # --force: the link is replaced by the output, the target untouched
    for out in "$d/link" "$d/dangling"; do
        # shellcheck disable=SC2046
        timeout 300 "$bin" $(cmd_for $kind "$out") --force >"$tmp/out" 2>"$tmp/err" ||
            { echo "FAIL: $kind --force to $out: $(cat "$tmp/err")"; fail=1; }
        if [ -L "$out" ] || [ ! -f "$out" ] || [ ! -s "$out" ]; then
            echo "FAIL: $kind --force: $out is not a new regular file"; fail=1
        fi
    done
    [ "$(cat "$d/victim")" = precious ] || { echo "FAIL: $kind --force: the link's target was written"; fail=1; }
    [ ! -e "$d/missing" ] || { echo "FAIL: $kind --force: the dangling link's target was created"; fail=1; }
    [ "$fail" -eq 0 ] && echo "ok: $kind"
done
exit $fail
