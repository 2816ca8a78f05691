#!/bin/sh
# recur_errors.sh SHORTC MODELS_DIR — bad `recurrence` statements: each must fail
# with its message at the right line:column and a caret line, and write no output.
set -u
shortc=$1 models=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/shortc-recur.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
fail=0
# case NAME EXPECTED-ERE STATEMENTS...: a model deriving gpt2_tiny with the statements on line 3.
case_() {
    name=$1 want=$2
    shift 2
    { echo "import \"$models/gpt2_tiny.arch\";"; echo "model $name : gpt2_tiny {"; for s in "$@"; do echo "  $s"; done; echo "}"; } > "$tmp/$name.arch"
    out=$("$shortc" "$tmp/$name.arch" -o "$tmp/$name.cu" 2>&1)
    rc=$?
    if [ $rc -eq 0 ] || ! printf '%s\n' "$out" | grep -Eq "$want" || ! printf '%s\n' "$out" | grep -q '\^' || [ -e "$tmp/$name.cu" ]; then
        echo "FAIL $name (rc $rc): expected /$want/"; printf '%s\n' "$out" | sed 's/^/     /'
        fail=$((fail + 1))
    else
        echo "ok   $name"
    fi
}
case_ insert_beyond "insert_beyond.arch:3:21: error: insert=3 is beyond the model's 2 layers" "recurrence insert=3;"
case_ insert_zero "3:21: error: 'insert' must be between 1 and" "recurrence insert=0;"
case_ overlap_window "4:22: error: overlap 16 must be less than the window \\(segment 16\\)" "segment 16;" "recurrence overlap=16;"
case_ pool_max "3:19: error: unknown pooling 'max' \\(expected mean or sum\\)" "recurrence pool=max;"
case_ states_bad "3:21: error: unknown hidden states 'all'" "recurrence states=all;"
case_ act_bad "3:18: error: unknown activation 'tanh'" "recurrence act=tanh;"
case_ norm_two "3:19: error: unknown norm flag '2' \\(expected 0 or 1\\)" "recurrence norm=2;"
case_ key_typo "3:14: error: 'recurrence' has no option 'inserts'; did you mean 'insert'\\?" "recurrence inserts=2;"
case_ ffn_zero "3:23: error: a hidden width must be between 1 and" "recurrence ffn=[24, 0];"
case_ ffn_long "3:18: error: 'ffn' needs a list of 0 to 8 hidden widths" "recurrence ffn=[1,2,3,4,5,6,7,8,9];"
case_ ffn_word "3:18: error: 'ffn' needs a list" "recurrence ffn=24;"
case_ ffn_too_wide "3:3: error: recurrence: an FFN layer of 7000 units needs 56008 bytes of shared memory" "recurrence ffn=[7000];"
case_ twice "4:3: error: 'recurrence' is set twice" "recurrence;" "recurrence insert=1;"
case_ post_norm "4:3: error: recurrence needs a pre-norm model" "norm layernorm post;" "recurrence;"
[ $fail -eq 0 ] && echo "recur_errors: ok" || echo "recur_errors: $fail failed"
exit $fail
