#!/bin/sh
# files.sh SHORTC MODELS_DIR FILE_TOOL — hostile files and directories on the
# command line (common/fileio.c):
#   - outputs (-o, --plan-out, --logits) that are a character device or a
#     FIFO are written through, never replaced by a regular file; a
#     symbolic link, a directory or a FIFO nobody reads is a clear error;
#   - inputs (.arch, --weights, --tokens) that are a FIFO or a directory are
#     refused at once (no hang) and say what they are;
#   - a bad token file's bytes are escaped in the message;
#   - under `run`, an .arch compile error keeps `file:line:col: error:` first;
#   - NaN weights are refused with the tensor and index, unless
#     --allow-nonfinite-weights, and non-finite logits are never written
#     silently nor sampled from (generate fails alike on ref and sim).
set -u
bin=$1 models=$2 tool=$3
model=$models/gpt2_tiny.arch
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0
prefix="timeout 60"
. "$(dirname "$0")/expect.sh"

echo "1 2 3" >"$tmp/ok.tokens"
run_ref="run $model --backend ref --random-weights 1 --tokens $tmp/ok.tokens"

# ---- outputs ----------------------------------------------------------------
# a character device: our own null device when root can make one (the old code renamed a
# temporary file over it), else /dev/null itself (the old code could not even create the temporary)
dev=/dev/null
if mknod "$tmp/null" c 1 3 2>/dev/null; then dev=$tmp/null; fi
expect 0 "" $run_ref --logits "$dev"
check "--logits $dev is still a character device" test -c "$dev"
expect 0 "" "$model" -o "$dev" --plan-out "$dev"
check "-o $dev is still a character device" test -c "$dev"
# a symbolic link is refused, never followed (every output kind and --force: tests/cli/links.sh)
: >"$tmp/real.npy"
ln -s real.npy "$tmp/link.npy"
expect 1 "shortc: error: cannot write '$tmp/link.npy': a symbolic link (outputs never follow one; --force replaces the link itself)" \
    $run_ref --logits "$tmp/link.npy"
check "--logits symlink stays a symlink" test -L "$tmp/link.npy"
check "--logits symlink: its target is not written" test ! -s "$tmp/real.npy"
# a directory, a FIFO nobody reads (refused, not waited on), a FIFO with a reader (written through)
mkdir "$tmp/dir.cu"
expect 1 "shortc: error: cannot write '$tmp/dir.cu': Is a directory" "$model" -o "$tmp/dir.cu"
mkfifo "$tmp/out.fifo"
expect 1 "shortc: error: cannot write '$tmp/out.fifo': a FIFO that nobody reads" "$model" -o "$tmp/out.fifo"
cat "$tmp/out.fifo" >"$tmp/from.fifo" &
reader=$!
sleep 0.2
expect 0 "" "$model" -o "$tmp/out.fifo"
wait $reader
check "-o FIFO delivers the source" grep -q "extern \"C\" __global__" "$tmp/from.fifo"
check "-o FIFO is still a FIFO" test -p "$tmp/out.fifo"

# an output that is an input, directly or through a link: refused, input intact
cp "$model" "$tmp/same.arch"
cp "$models/gpt2_small.arch" "$tmp/" # imported by gpt2_tiny
cp "$tmp/same.arch" "$tmp/same.orig"
expect 2 "shortc: error: output '$tmp/same.arch' is the same file as input '$tmp/same.arch'; nothing written" \
    "$tmp/same.arch" -o "$tmp/same.arch"
ln -s same.arch "$tmp/same.link"
expect 2 "shortc: error: output '$tmp/same.link' is the same file as input '$tmp/same.arch'; nothing written" \
    "$tmp/same.arch" -o "$tmp/same.link"
expect 2 "shortc: error: output '$tmp/same.arch' is the same file as input '$tmp/same.arch'; nothing written" \
    "$tmp/same.arch" -o "$tmp/ok.cu" --plan-out "$tmp/same.arch"
check "-o over the input left the input intact" cmp -s "$tmp/same.arch" "$tmp/same.orig"
cp "$tmp/ok.tokens" "$tmp/tok.copy"
expect 2 "shortc: error: output '$tmp/tok.copy' is the same file as input '$tmp/tok.copy'; nothing written" \
    run "$model" --backend ref --random-weights 1 --tokens "$tmp/tok.copy" --logits "$tmp/tok.copy"
check "--logits over --tokens left the tokens intact" cmp -s "$tmp/tok.copy" "$tmp/ok.tokens"
# an imported .arch is an input too; two outputs must be two files
cp "$tmp/gpt2_small.arch" "$tmp/small.orig"
expect 2 "shortc: error: output '$tmp/gpt2_small.arch' is the same file as input '$tmp/gpt2_small.arch'; nothing written" \
    "$tmp/same.arch" -o "$tmp/gpt2_small.arch"
expect 2 "shortc: error: output '$tmp/gpt2_small.arch' is the same file as input '$tmp/gpt2_small.arch'; nothing written" \
    run "$tmp/same.arch" --backend ref --random-weights 1 --tokens "$tmp/ok.tokens" --logits "$tmp/gpt2_small.arch"
check "outputs over an import left it intact" cmp -s "$tmp/gpt2_small.arch" "$tmp/small.orig"
expect 2 "shortc: error: output '$tmp/two.cu' is the same file as output '$tmp/two.cu'; nothing written" \
    "$tmp/same.arch" -o "$tmp/two.cu" --plan-out "$tmp/two.cu"
check "-o and --plan-out on one file wrote nothing" test ! -e "$tmp/two.cu"

# ---- inputs -------------------------------------------------------------------
mkfifo "$tmp/in.fifo" "$tmp/in.arch"
fifo_why="not a regular file (a FIFO, socket or device)"
# a streamed input (tokens) is read from a FIFO as its writer sends it; files the reader seeks in are refused
printf '1 2 3\n' >"$tmp/in.fifo" &
expect 0 "" $run_ref --tokens "$tmp/in.fifo"
wait
expect 3 "shortc: error: cannot open weights '$tmp/in.fifo': $fifo_why" \
    run "$model" --backend ref --weights "$tmp/in.fifo"
expect 3 "$tmp/in.arch: error: cannot read: $fifo_why" "$tmp/in.arch"
expect 3 "$tmp/in.arch: error: cannot read: $fifo_why" run "$tmp/in.arch" --backend ref --random-weights 1
mkdir "$tmp/tokens.d"
expect 3 "shortc: error: cannot read tokens '$tmp/tokens.d': Is a directory" $run_ref --tokens "$tmp/tokens.d"
printf '1 2 \001\033[31m\377x 4\n' >"$tmp/bin.tokens"
expect 3 "shortc: error: $tmp/bin.tokens: token 3 ('\\x01\\x1b[31m\\xffx') is not a non-negative integer" \
    $run_ref --tokens "$tmp/bin.tokens"
# a procfs file says its size is 0: it is read to its end all the same
expect 3 "shortc: error: /proc/self/status: token 1 ('Name:') is not a non-negative integer" \
    $run_ref --tokens /proc/self/status
echo "1 99999999999999999999999" >"$tmp/big.tokens"
expect 3 "shortc: error: $tmp/big.tokens: token 2 ('99999999999999999999999') is out of range (token ids are at most 2147483647)" \
    $run_ref --tokens "$tmp/big.tokens"
echo "2147483648" >"$tmp/big.tokens"
expect 3 "shortc: error: $tmp/big.tokens: token 1 ('2147483648') is out of range (token ids are at most 2147483647)" \
    $run_ref --tokens "$tmp/big.tokens"
: >"$tmp/empty.tokens"
expect 3 "shortc: error: $tmp/empty.tokens: no tokens (the file is empty or only whitespace)" \
    $run_ref --tokens "$tmp/empty.tokens"

# ---- compile errors under run: the diagnostic's own first line ----------------
cp "$models/gpt2_small.arch" "$tmp/"
sed 's/d_model *64;/d_model   oops;/' "$model" >"$tmp/bad.arch"
$prefix "$bin" run "$tmp/bad.arch" --backend ref --random-weights 1 >"$tmp/out" 2>"$tmp/err"
first=$(head -n 1 "$tmp/err")
case "$first" in
"$tmp/bad.arch:"[0-9]*:[0-9]*": error: "*) ;;
*) echo "FAIL: run of a bad .arch: first line '$first'"; fail=1 ;;
esac

# ---- NaN weights, non-finite logits ------------------------------------------------
echo "0 1 2" >"$tmp/nan.tokens"
nan_run="run $model --backend ref --tokens $tmp/nan.tokens --logits $tmp/nan.npy"
if "$tool" weights "$model" "$tmp/nan.safetensors" wte.weight 7 nan &&
    "$tool" weights "$model" "$tmp/big.safetensors" wte.weight 7 3e38; then
    expect 3 "shortc: error: weight 'wte.weight' in $tmp/nan.safetensors holds NaN at index 7 (refused; --allow-nonfinite-weights, or srt_options.allow_nonfinite_weights, accepts it)" \
        $nan_run --weights "$tmp/nan.safetensors"
    check "no logits written for refused weights" test ! -e "$tmp/nan.npy"
    # finite weights that overflow in the forward pass: the run fails and writes nothing
    $prefix "$bin" $nan_run --weights "$tmp/big.safetensors" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    check "non-finite logits: exit 1 (got $rc)" test $rc -eq 1
    check "non-finite logits: message" grep -q "^shortc: error: the logits hold .* at token 0, index 0 (an overflow in the forward pass); nothing written" "$tmp/err"
    check "non-finite logits: nothing written" test ! -e "$tmp/nan.npy"
    # generation from non-finite logits: the same error on every backend (the device sampler too)
    for be in ref sim; do
        for temp in 0 0.8; do
            expect 3 "shortc: error: no token can be drawn: logit 0 is not finite (NaN or infinite)" \
                generate "$model" --backend $be --weights "$tmp/big.safetensors" --tokens "$tmp/nan.tokens" \
                --max-new 2 --temperature $temp --seed 1
        done
    done
    # explicitly allowed: written
    expect 0 "" $nan_run --weights "$tmp/nan.safetensors" --allow-nonfinite-weights
    check "allowed NaN weights write logits" test -s "$tmp/nan.npy"
else
    echo "FAIL: file_tool weights"
    fail=1
fi

[ "$fail" -eq 0 ] && echo "ok"
exit "$fail"
