#!/bin/sh
# stream.sh SHORTC MODELS_DIR TESTS_DIR STREAM_REF MAXRSS FILE_TOOL — `shortc run` streams its logits
# (issue 26 item 4): the .npy header with the final shape, then each segment's rows as they are computed.
#   1. the streamed file is byte for byte the one the old in-memory path wrote (stream_ref: every row in
#      one n x vocab array, then srt_npy_write_f32) for run's own segment loop (with --chunk) and the
#      runtime's modes (srt_eval_logits_stream): gpt2_tiny nonoverlapping, sliding, windows, tokenwise
#      (ref and sim), shortformer_tiny cached, gpt2_recurrent_tiny windows, txl_tiny cached;
#   2. peak memory does not grow with the tokens: 4096 tokens of a 4096-word vocabulary (64 MiB of
#      logits) stay within 8 MiB of the resident set of 32 tokens, with and without --logits;
#   3. an error after segments were written (a file size limit reached mid-run) leaves no output and
#      no temporary file, and an existing output untouched; overflowing logits stop a mode's stream
#      with one message; a full disk and a missing directory are plain errors.
set -u
bin=$1 models=$2 tests=$3 ref=$4 maxrss=$5 tool=$6
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0
prefix="timeout 120"
. "$(dirname "$0")/expect.sh"

# ---- 1. byte-identical to the in-memory output ----------------------------------------------
awk 'BEGIN { for (i = 0; i < 300; i++) printf "%d ", (i * 37 + 11) % 256; print "" }' >"$tmp/t256"
awk 'BEGIN { for (i = 0; i < 100; i++) printf "%d ", (i * 13 + 5) % 50; print "" }' >"$tmp/t50"
n=0
same() { # MODEL BACKEND TOKENS "RUN FLAGS" REF ARGS...
    model=$1 be=$2 toks=$3 flags=$4
    shift 4
    n=$((n + 1))
    "$ref" "$models/$model.arch" "$be" "$tmp/$toks" "$tmp/ref$n.npy" "$@" 2>"$tmp/referr" ||
        { echo "FAIL: stream_ref $model $*: $(cat "$tmp/referr")"; fail=1; return; }
    expect 0 "" run "$models/$model.arch" --backend "$be" --random-weights 1 --tokens "$tmp/$toks" $flags \
        --logits "$tmp/run$n.npy"
    check "$model on $be, run $flags: the streamed logits equal the in-memory ones" cmp "$tmp/ref$n.npy" "$tmp/run$n.npy"
}
same gpt2_tiny ref t256 "" segments 0
same gpt2_tiny ref t256 "--chunk 7" segments 7
same gpt2_tiny ref t256 "--mode nonoverlapping" nonoverlapping 0 0
same gpt2_tiny ref t256 "--mode sliding --stride 48" sliding 48 0
same gpt2_tiny ref t256 "--mode windows --overlap 30" windows 0 30
same gpt2_tiny ref t256 "--mode tokenwise" tokenwise 0 0
same gpt2_tiny sim t256 "" segments 0
same gpt2_tiny sim t256 "--mode sliding --stride 100" sliding 100 0
same shortformer_tiny ref t256 "" cached 0 0
same shortformer_tiny ref t256 "--chunk 5" segments 5
same shortformer_tiny ref t256 "--mode sliding --stride 5" sliding 5 0
same gpt2_recurrent_tiny ref t256 "" windows 0 4
same gpt2_recurrent_tiny ref t256 "--mode nonoverlapping" nonoverlapping 0 0
same txl_tiny ref t50 "" cached 0 0
same txl_tiny ref t50 "--chunk 3" segments 3
# --top reads the last row with and without a file
expect 0 "" run "$models/gpt2_tiny.arch" --backend ref --random-weights 1 --tokens "$tmp/t256" --top 3
cp "$tmp/out" "$tmp/top.nofile"
expect 0 "" run "$models/gpt2_tiny.arch" --backend ref --random-weights 1 --tokens "$tmp/t256" --top 3 --logits /dev/null
check "--top without --logits prints what it prints with it" cmp "$tmp/top.nofile" "$tmp/out"
check "--top prints 3 tokens" grep -q "^top 3 next tokens: [0-9]* (.*) [0-9]* (.*) [0-9]* (.*)$" "$tmp/out"

# ---- 2. peak memory ----------------------------------------------------------------------------
wide=$tests/cli/stream/wide.arch
awk 'BEGIN { for (i = 0; i < 4096; i++) printf "%d ", (i * 7919) % 4096; print "" }' >"$tmp/wide.big"
awk 'BEGIN { for (i = 0; i < 32; i++) printf "%d ", (i * 7919) % 4096; print "" }' >"$tmp/wide.small"
rss() { # TOKENS, then run flags: prints the peak resident set in KiB
    toks=$1
    shift
    timeout 120 "$maxrss" "$bin" run "$wide" --backend ref --random-weights 1 --tokens "$toks" "$@" 2>"$tmp/rsserr" ||
        { echo "FAIL: run $wide $*: $(cat "$tmp/rsserr")" >&2; echo 0; }
}
base=$(rss "$tmp/wide.small" --logits "$tmp/small.npy" | tail -n 1)
with=$(rss "$tmp/wide.big" --logits "$tmp/big.npy" | tail -n 1)
without=$(rss "$tmp/wide.big" --top 1 | tail -n 1)
echo "peak resident set: 32 tokens $base KiB; 4096 tokens with --logits $with KiB, without $without KiB (logits: 65536 KiB)"
check "peak memory with --logits: $with KiB, over 32 tokens' $base KiB + 8 MiB" test "$base" -gt 0 -a "$with" -gt 0 -a "$with" -lt $((base + 8192))
check "peak memory without --logits: $without KiB, over 32 tokens' $base KiB + 8 MiB" test "$without" -gt 0 -a "$without" -lt $((base + 8192))
size=$(wc -c <"$tmp/big.npy")
check "the streamed file holds 4096 x 4096 floats after a 128-byte header ($size bytes)" test "$size" -eq $((128 + 4096 * 4096 * 4))
check "its header says the final shape" sh -c "head -c 128 '$tmp/big.npy' | grep -q \"'shape': (4096, 4096), }\""

# ---- 3. no output after an error mid-run -----------------------------------------------------
# a file size limit (ulimit -f, SIGXFSZ ignored: writes fail with EFBIG) reached after two or more
# segments of 128 rows were written: 300 or 600 KiB (the unit is 512 or 1024 bytes by shell) of 1 MB
awk 'BEGIN { for (i = 0; i < 1000; i++) printf "%d ", (i * 37 + 11) % 256; print "" }' >"$tmp/t1000"
mkdir "$tmp/out.d"
for flags in "" "--mode sliding --stride 64" "--chunk 50"; do
    (trap '' XFSZ; ulimit -f 600; exec $prefix "$bin" run "$models/gpt2_tiny.arch" --backend ref --random-weights 1 \
        --tokens "$tmp/t1000" $flags --logits "$tmp/out.d/l.npy") >"$tmp/out" 2>"$tmp/err"
    rc=$?
    check "file size limit ($flags): exit 1 (got $rc)" test $rc -eq 1
    check "file size limit ($flags): one message: $(cat "$tmp/err")" \
        test "$(cat "$tmp/err")" = "shortc: error: cannot write '$tmp/out.d/l.npy': File too large"
    check "file size limit ($flags): no file left in the output directory: $(ls -A "$tmp/out.d")" \
        test -z "$(ls -A "$tmp/out.d")"
done
echo "earlier logits" >"$tmp/out.d/keep.npy"
(trap '' XFSZ; ulimit -f 600; exec $prefix "$bin" run "$models/gpt2_tiny.arch" --backend ref --random-weights 1 \
    --tokens "$tmp/t1000" --logits "$tmp/out.d/keep.npy") >"$tmp/out" 2>"$tmp/err"
check "an existing output survives the failed run" test "$(cat "$tmp/out.d/keep.npy")" = "earlier logits"
check "... and nothing else is left: $(ls -A "$tmp/out.d")" test "$(ls -A "$tmp/out.d")" = keep.npy
# logits that overflow (3e38 in wte.weight, tied to every row's logit 0) stop a mode's stream at its
# first window with one message (the runtime's "callback stopped" error is not printed over it)
if "$tool" weights "$models/gpt2_tiny.arch" "$tmp/big.safetensors" wte.weight 7 3e38; then
    expect 1 "shortc: error: the logits hold -Inf at token 0, index 0 (an overflow in the forward pass); nothing written (--allow-nonfinite-weights accepts it)" \
        run "$models/gpt2_tiny.arch" --backend ref --weights "$tmp/big.safetensors" --tokens "$tmp/t256" \
        --mode sliding --stride 64 --logits "$tmp/out.d/nan.npy"
    check "overflowing logits: nothing written" test ! -e "$tmp/out.d/nan.npy"
else
    echo "FAIL: file_tool weights"
    fail=1
fi
if [ -c /dev/full ]; then # a disk that fills: written through, the error at the first write
    expect 1 "shortc: error: cannot write '/dev/full': No space left on device" \
        run "$models/gpt2_tiny.arch" --backend ref --random-weights 1 --tokens "$tmp/t256" --logits /dev/full
fi
expect 1 "shortc: error: cannot write '$tmp/none/l.npy': No such file or directory" \
    run "$models/gpt2_tiny.arch" --backend ref --random-weights 1 --tokens "$tmp/t256" --logits "$tmp/none/l.npy"

[ "$fail" -eq 0 ] && echo "ok"
exit "$fail"
