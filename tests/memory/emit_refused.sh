#!/bin/sh
# emit_refused.sh SHORTC MODEL.arch — a Transformer-XL model has no CUDA kernels yet: compiling it
# exits 1 with a located "has no CUDA kernel yet" error and writes no output file, while
# --dump-spec and `shortc report` (the cost model, state bytes) work.
shortc=$1 arch=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
if "$shortc" "$arch" -o "$tmp/out.cu" 2>"$tmp/err"; then
    echo "FAIL: $arch was emitted"; fail=1
fi
grep -q "error: attention 'relative' (Transformer-XL, layer 0) has no CUDA kernel yet" "$tmp/err" || { echo "FAIL: message:"; cat "$tmp/err"; fail=1; }
grep -q "^  attention relative;" "$tmp/err" || { echo "FAIL: no source line under the message"; fail=1; }
[ -e "$tmp/out.cu" ] && { echo "FAIL: a half-written $tmp/out.cu"; fail=1; }
"$shortc" "$arch" --dump-spec >/dev/null || { echo "FAIL: --dump-spec"; fail=1; }
"$shortc" report "$arch" >"$tmp/report" || { echo "FAIL: report"; fail=1; }
grep -q "state bytes (at capacity)" "$tmp/report" || { echo "FAIL: report has no state bytes"; fail=1; }
[ $fail = 0 ] && echo "emission refused cleanly; spec and report work"
exit $fail
