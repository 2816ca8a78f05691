#!/bin/sh
# habits.sh SHORTC MODELS_DIR TOKENIZER_DIR — the command-line habits of issue 20 item 5: every
# subcommand's --help (its own usage, exit 0) and `shortc help CMD`, did-you-mean for options and
# commands, the exit codes (0 ok, 1 failure, 2 usage, 3 bad input), '-' for standard input and output,
# pipes and FIFOs as token inputs, eval/generate --json (schema, full precision, only the fields that
# apply), --progress/--quiet, .npy token files, --save-weights read back to the same logits, the
# tokenizer's vocabulary checked before generating, `shortc convert`.
set -u
case $1 in /*) bin=$1 ;; *) bin=$(pwd)/$1 ;; esac
models=$(cd "$2" && pwd) || exit 2
tokdir=$3
model=$models/gpt2_tiny.arch
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0

. "$(dirname "$0")/expect.sh"


# ---- --help, help CMD -----------------------------------------------------------
for cmd in run eval generate tokenize demo cmp sim compare report mask convert help; do
    "$bin" "$cmd" --help >"$tmp/h" 2>"$tmp/e"
    rc=$?
    [ "$cmd" = convert ] && continue # the converter's own --help (python)
    check "$cmd --help exits 0 (got $rc)" test "$rc" -eq 0
    check "$cmd --help prints its usage on stdout" grep -q "^usage: shortc $cmd" "$tmp/h"
    check "$cmd --help prints nothing on stderr" test ! -s "$tmp/e"
    check "$cmd --help is its own usage, not the global one" test "$(wc -l <"$tmp/h")" -lt 25
    "$bin" help "$cmd" >"$tmp/h2" 2>&1
    check "help $cmd equals $cmd --help" cmp -s "$tmp/h" "$tmp/h2"
done
"$bin" help >"$tmp/h" || { echo "FAIL: shortc help"; fail=1; }
check "shortc help is the whole usage" grep -q "shortc generate" "$tmp/h"
"$bin" gpt2_tiny.arch --help >"$tmp/h"
check "FILE --help is the compile usage" grep -q "^usage: shortc FILE.arch" "$tmp/h"
expect 2 "shortc: error: unknown command 'genrate' (did you mean 'generate'?); see 'shortc --help'" help genrate

# ---- did-you-mean ------------------------------------------------------------------
expect 2 "shortc: error: run: unknown option '--tokns' (did you mean '--tokens'?); see 'shortc help run'" \
    run "$model" --random-weights 1 --tokns x
expect 2 "shortc: error: eval: unknown option '--strde' (did you mean '--stride'?); see 'shortc help eval'" \
    eval "$model" --random-weights 1 --strde 3
expect 2 "shortc: error: generate: unknown option '--max-nwe' (did you mean '--max-new'?); see 'shortc help generate'" \
    generate "$model" --random-weights 1 --max-nwe 3
expect 2 "shortc: error: shortc: unknown option '--dump-iir' (did you mean '--dump-ir'?); see 'shortc help compile'" \
    "$model" --dump-iir
expect 2 "shortc: error: mask: unknown option '--ascci' (did you mean '--ascii'?); see 'shortc help mask'" \
    mask "$model" --tokens 4 --ascci
expect 2 "shortc: error: run: unknown option '--zzzzzzzz'; see 'shortc help run'" run "$model" --zzzzzzzz
expect 2 "shortc: error: run: option '--tokens' needs a value" run "$model" --random-weights 1 --tokens
expect 2 "shortc: error: unknown command 'genrate' (did you mean 'generate'?); see 'shortc --help'" genrate
expect 2 "shortc: error: cmp: unknown option '--atl' (did you mean '--atol'?); see 'shortc help cmp'" cmp a b --atl 1

# ---- exit codes ------------------------------------------------------------------------
expect 3 "shortc: error: cannot read tokens '$tmp/none': No such file or directory" \
    run "$model" --random-weights 1 --tokens "$tmp/none"
expect 3 "shortc: error: no model 'no_such_model': neither a file nor no_such_model.arch here, along \$SHORTC_PATH, among the installed models or under models/" \
    run no_such_model --random-weights 1
printf 'model m { vocab x; }\n' >"$tmp/bad.arch"
"$bin" "$tmp/bad.arch" >/dev/null 2>&1
check "an .arch with errors exits 3 (got $?)" test $? -eq 3
"$bin" >/dev/null 2>&1
check "no arguments exit 2 (got $?)" test $? -eq 2

# ---- '-': standard input and output; pipes; FIFOs ------------------------------------------
echo "1 2 3 4 5" >"$tmp/t"
"$bin" run "$model" --backend ref --random-weights 1 --tokens "$tmp/t" --logits "$tmp/file.npy" ||
    { echo "FAIL: run --logits FILE"; fail=1; }
echo "1 2 3 4 5" | "$bin" run "$model" --backend ref --random-weights 1 --tokens - --logits - >"$tmp/stdout.npy" ||
    { echo "FAIL: run --tokens - --logits -"; fail=1; }
check "--logits - writes the same bytes as --logits FILE" cmp -s "$tmp/file.npy" "$tmp/stdout.npy"
check "no file named '-' is written" test ! -e ./-
mkfifo "$tmp/fifo"
echo "1 2 3 4 5" >"$tmp/fifo" &
"$bin" run "$model" --backend ref --random-weights 1 --tokens "$tmp/fifo" --logits "$tmp/fifo.npy" ||
    { echo "FAIL: run --tokens FIFO"; fail=1; }
wait
check "a FIFO of tokens gives the file's logits" cmp -s "$tmp/file.npy" "$tmp/fifo.npy"
expect 2 "shortc: error: run cannot read --weights from standard input: the reader needs a regular file (it seeks)" \
    run "$model" --weights - --tokens "$tmp/t"
expect 2 "shortc: error: run writes the logits to stdout with --logits -, so takes no --top or --report (they print there too)" \
    run "$model" --random-weights 1 --logits - --top 3
echo "1 2 3" | "$bin" generate "$model" --backend ref --random-weights 1 --prompts - --max-new 3 --quiet >"$tmp/g" ||
    { echo "FAIL: generate --prompts -"; fail=1; }
check "generate --prompts - prints one line" test "$(wc -l <"$tmp/g")" -eq 1
"$bin" mask "$model" --tokens 8 -o "$tmp/m.npy" && "$bin" mask "$model" --tokens 8 -o - >"$tmp/m_out.npy" ||
    { echo "FAIL: mask -o"; fail=1; }
check "mask -o - writes the file's bytes to stdout" cmp -s "$tmp/m.npy" "$tmp/m_out.npy"
printf 'The river ran\n' >"$tmp/text"
"$bin" tokenize --tokenizer "$tokdir" --text "$tmp/text" >"$tmp/ids1" || fail=1
"$bin" tokenize --tokenizer "$tokdir" --text - <"$tmp/text" >"$tmp/ids2" || fail=1
check "tokenize --text - reads stdin" cmp -s "$tmp/ids1" "$tmp/ids2"
"$bin" tokenize --tokenizer "$tokdir" --decode --tokens - <"$tmp/ids1" >"$tmp/back" || fail=1
check "tokenize --decode --tokens - gives the text back" cmp -s "$tmp/text" "$tmp/back"
expect 2 "shortc: error: --svg needs a file name (standard output holds the table)" compare "$model" --svg -
yes 1 | head -c 67200000 | "$bin" run "$model" --backend ref --random-weights 1 --tokens - >/dev/null 2>"$tmp/big"
rc=$?
check "a pipe past 64 MiB: exit 3 (got $rc)" test $rc -eq 3
check "a pipe past 64 MiB: the bound named" grep -q "^shortc: error: cannot read tokens '(standard input)': larger than 64 MiB$" "$tmp/big"
seq 1 200 | "$bin" eval "$model" --backend ref --random-weights 1 --tokens - >"$tmp/e" || { echo "FAIL: eval from a pipe"; fail=1; }
check "eval from a pipe scores 199 tokens" grep -q "over 199 tokens" "$tmp/e"

# ---- --json ------------------------------------------------------------------------------
seq 1 100 >"$tmp/t100"
"$bin" eval "$model" --backend ref --random-weights 1 --tokens "$tmp/t100" --json >"$tmp/j" || fail=1
check "eval --json: schema" grep -q '^{"schema": "shortc.eval/1", "model": "gpt2_tiny"' "$tmp/j"
check "eval --json: no stride or overlap for nonoverlapping" sh -c "! grep -q -e '\"stride\"' -e '\"overlap\"' '$tmp/j'"
"$bin" eval "$model" --backend ref --random-weights 1 --tokens "$tmp/t100" --stride 16 --json >"$tmp/j" || fail=1
check "eval --json: stride for sliding" grep -q '"mode": "sliding", "stride": 16, "nll"' "$tmp/j"
check "eval --json: no overlap for sliding" sh -c "! grep -q '\"overlap\"' '$tmp/j'"
"$bin" eval "$model" --backend ref --random-weights 1 --tokens "$tmp/t100" --stride 16 >"$tmp/txt" || fail=1
nll_json=$(sed 's/.*"nll": \([^,]*\),.*/\1/' "$tmp/j")
nll_text=$(sed 's/.*: nll \([^ ]*\) nats.*/\1/' "$tmp/txt")
check "eval --json holds at least the text line's digits ($nll_json vs $nll_text)" \
    awk -v j="$nll_json" -v t="$nll_text" 'BEGIN { d = j - t; if (d < 0) d = -d; exit !(length(j) >= length(t) && d <= 5e-7) }'
"$bin" generate "$model" --backend ref --random-weights 1 --tokens "$tmp/t" --max-new 4 --json --quiet >"$tmp/g" 2>"$tmp/ge" || fail=1
check "generate --json: schema and one sequence of 4 ids" \
    grep -q '^{"schema": "shortc.generate/1", .*"sequences": \[{"prompt_tokens": 5, "stop": "max_new", "ids": \[[0-9]*, [0-9]*, [0-9]*, [0-9]*\]}\], "tokens_generated": 4, ' "$tmp/g"
check "generate --json: no sampling fields when greedy" sh -c "! grep -q temperature '$tmp/g'"
check "generate --json --quiet: nothing on stderr" test ! -s "$tmp/ge"
"$bin" generate "$model" --backend ref --random-weights 1 --tokens "$tmp/t" --max-new 4 --quiet >"$tmp/plain" || fail=1
ids=$(sed 's/.*"ids": \[\([^]]*\)\].*/\1/' "$tmp/g" | tr -d ',')
check "generate --json ids are the text output's" test "$ids" = "$(cat "$tmp/plain")"

# ---- generate --report: per-step device calls -----------------------------------------------
"$bin" generate "$model" --backend sim --random-weights 1 --tokens "$tmp/t" --max-new 4 --report --json --quiet >"$tmp/g" || fail=1
check "generate --report --json: four steps" test "$(grep -o '"step": [0-9]*' "$tmp/g" | wc -l)" -eq 4
check "generate --report --json: step 0 is the prefill of one sequence" grep -q '"steps": \[{"step": 0, "prefill": true, "batch": 1, "launches": [1-9]' "$tmp/g"
check "generate --report --json: the last step replays graphs, no launch one by one" \
    grep -q '{"step": 3, "prefill": false, "batch": 1, "launches": 0, "gemms": 0, "graph_launches": [1-9][0-9]*, "syncs": [1-9]' "$tmp/g"
"$bin" generate "$model" --backend sim --random-weights 1 --tokens "$tmp/t" --max-new 2 --report >/dev/null 2>"$tmp/r" || fail=1
check "generate --report: a table of the steps" grep -q '^step  kind     batch  launches  gemms  graphs  syncs  copies      bytes$' "$tmp/r"
check "generate --report: a decode line" grep -Eq '^   1  decode       1 ' "$tmp/r"

# ---- --progress, --quiet -------------------------------------------------------------------
"$bin" eval "$model" --backend ref --random-weights 1 --tokens "$tmp/t100" --progress >/dev/null 2>"$tmp/p" || fail=1
check "eval --progress without a terminal prints lines" grep -q "^shortc: eval: 100/100 tokens (100%)" "$tmp/p"
"$bin" run "$model" --backend ref --random-weights 1 --tokens "$tmp/t100" --progress >/dev/null 2>"$tmp/p" || fail=1
check "run --progress prints lines" grep -q "^shortc: run: 100/100 tokens" "$tmp/p"
"$bin" generate "$model" --backend ref --random-weights 1 --tokens "$tmp/t" --max-new 3 --progress >/dev/null 2>"$tmp/p" || fail=1
check "generate --progress ends with the count of tokens generated" grep -q "^shortc: generate: 3 of at most 3 tokens, " "$tmp/p"
"$bin" eval "$model" --backend ref --random-weights 1 --tokens "$tmp/t100" --quiet >/dev/null 2>"$tmp/p" || fail=1
check "eval --quiet prints nothing on stderr" test ! -s "$tmp/p"
expect 2 "shortc: error: eval takes --quiet or --progress, not both" \
    eval "$model" --random-weights 1 --tokens "$tmp/t100" --quiet --progress

# ---- .npy token files ----------------------------------------------------------------------
# int32 [5]: the header padded to 128 bytes, then 1 2 3 4 5 little-endian
npy() { # DESCR SHAPE OUT, then the data bytes as printf escapes
    descr=$1 shape=$2 out=$3
    shift 3
    { printf '\223NUMPY\001\000\166\000'; printf "%-117s\n" "{'descr': '$descr', 'fortran_order': False, 'shape': $shape, }"
      printf "$@"; } >"$out"
}
npy '<i4' '(5,)' "$tmp/t.npy" '\001\000\000\000\002\000\000\000\003\000\000\000\004\000\000\000\005\000\000\000'
"$bin" run "$model" --backend ref --random-weights 1 --tokens "$tmp/t.npy" --logits "$tmp/npy.npy" || fail=1
check ".npy tokens give the text file's logits" cmp -s "$tmp/file.npy" "$tmp/npy.npy"
npy '<f4' '(1,)' "$tmp/f.npy" '\000\000\200\077'
expect 3 "shortc: error: $tmp/f.npy: token ids must be integers (int32 or uint32), found float32" \
    run "$model" --random-weights 1 --tokens "$tmp/f.npy"
npy '<i4' '(2,)' "$tmp/neg.npy" '\001\000\000\000\377\377\377\377'
expect 3 "shortc: error: $tmp/neg.npy: token 2 (-1) is not a token id" run "$model" --random-weights 1 --tokens "$tmp/neg.npy"

# ---- --save-weights --------------------------------------------------------------------------
for m in gpt2_tiny txl_tiny gpt2_tiny_half adaptive/baseline_ba_adaptive_tiny; do
    "$bin" run "$models/$m.arch" --backend ref --random-weights 7 --save-weights "$tmp/w.safetensors" \
        --tokens "$tmp/t" --logits "$tmp/a.npy" || fail=1
    "$bin" run "$models/$m.arch" --backend ref --weights "$tmp/w.safetensors" --tokens "$tmp/t" --logits "$tmp/b.npy" ||
        fail=1
    check "$m: --save-weights reads back to the same logits" cmp -s "$tmp/a.npy" "$tmp/b.npy"
done
expect 2 "shortc: error: run takes --save-weights only with --random-weights SEED" \
    run "$model" --weights "$tmp/w.safetensors" --save-weights "$tmp/w2.safetensors"

# ---- the tokenizer's vocabulary before generating --------------------------------------------
# gpt2_tiny has 256 ids, the test tokenizer 377: refused before anything runs
expect 3 "shortc: error: tokenizer '$tokdir' has 377 ids, more than the vocabulary of 256 of model 'gpt2_tiny': its ids would not fit the model" \
    generate "$model" --backend ref --random-weights 1 --tokens "$tmp/t" --tokenizer "$tokdir" --max-new 2
# a model with a larger vocabulary than the tokenizer: a warning, and ids past it printed, not lost
printf 'import "%s";\nmodel big : gpt2_tiny { vocab 4000; }\n' "$model" >"$tmp/big.arch"
"$bin" generate "$tmp/big.arch" --backend ref --random-weights 3 --tokens "$tmp/t" --tokenizer "$tokdir" --max-new 8 \
    --quiet >"$tmp/g" 2>"$tmp/ge" || { echo "FAIL: generate with a smaller tokenizer"; cat "$tmp/ge"; fail=1; }
check "a smaller tokenizer is warned about" grep -q "^shortc: warning: tokenizer '$tokdir' has 377 ids, model 'big' 4000" "$tmp/ge"
"$bin" generate "$tmp/big.arch" --backend ref --random-weights 3 --tokens "$tmp/t" --max-new 8 --quiet >"$tmp/ids" || fail=1
big=$(tr ' ' '\n' <"$tmp/ids" | awk '$1 >= 377' | head -n 1)
if [ -n "$big" ]; then check "an id past the tokenizer prints as <|id:N|>" grep -q "<|id:$big|>" "$tmp/g"; fi

# ---- shortc convert ----------------------------------------------------------------------------
(cd "$models/.." && SHORTC_PYTHON=/nonexistent/python3 "$bin" convert fairseq a b) >/dev/null 2>"$tmp/ce"
check "convert names the python it could not run" grep -q "cannot run '/nonexistent/python3'" "$tmp/ce"
(cd "$tmp" && "$bin" convert fairseq a b) >/dev/null 2>"$tmp/ce"
check "convert without the script says where it looked" grep -q "neither installed (share/shortc/tools) nor in the working directory" "$tmp/ce"
if python3 -c 'import numpy' 2>/dev/null; then
    (cd "$models/.." && "$bin" convert 2>&1) | grep -q "usage" || { echo "FAIL: shortc convert runs the converter"; fail=1; }
fi

[ $fail -eq 0 ] && echo "habits: ok"
exit $fail
