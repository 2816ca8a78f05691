#!/bin/sh
# tokenize.sh SHORTC TESTS_DIR [PYTHON3] — GPT-2 byte-level BPE through `shortc tokenize`:
# every case text (ASCII, contractions, non-ASCII letters and numbers, Unicode spaces, whitespace
# runs) encodes to the known answer make_bpe.py computed with Python's regex engine and GPT-2's
# bpe() loop, from tokenizer.json (merges as strings and as pairs), vocab.json + merges.txt and
# their directory; every answer decodes back to the exact text; --prompt equals --text; the files
# and answers committed are what make_bpe.py writes (when python3 is there); run, eval and generate
# take --text/--prompt; bad tokenizers, texts and ids are one-line errors.
set -u
bin=$1
dir=$2/tokenizer
py=${3:-}
data=$dir/data
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0
. "$2/cli/expect.sh"

for c in "$dir"/cases/*.txt; do
    n=$(basename "$c" .txt)
    for t in "$data/tokenizer.json" "$data/pairs/tokenizer.json" "$data/vocab.json" "$data"; do
        "$bin" tokenize --tokenizer "$t" --text "$c" >"$tmp/$n.ids" || fail=1
        cmp -s "$tmp/$n.ids" "$data/$n.ids" || { echo "FAIL: $n with $t: $(cat "$tmp/$n.ids")"; fail=1; }
    done
    "$bin" tokenize --tokenizer "$data" --decode --tokens "$data/$n.ids" >"$tmp/$n.txt" || fail=1
    cmp -s "$tmp/$n.txt" "$c" || { echo "FAIL: $n does not decode to its text"; fail=1; }
done
"$bin" tokenize --tokenizer "$data" --prompt "$(cat "$dir/cases/unicode.txt")" >"$tmp/p.ids" || fail=1
cmp -s "$tmp/p.ids" "$data/unicode.ids" || { echo "FAIL: --prompt differs from --text"; fail=1; }
# the special token decodes; a token that splits a character decodes to its bytes
echo "376" >"$tmp/eot.ids"
[ "$("$bin" tokenize --tokenizer "$data" --decode --tokens "$tmp/eot.ids")" = "<|endoftext|>" ] ||
    { echo "FAIL: <|endoftext|> does not decode"; fail=1; }

# the committed files are the script's output
if [ -n "$py" ]; then
    "$py" "$dir/make_bpe.py" "$tmp/gen" || fail=1
    for f in tokenizer.json pairs/tokenizer.json vocab.json merges.txt $(cd "$data" && ls *.ids); do
        cmp -s "$tmp/gen/$f" "$data/$f" || { echo "FAIL: $f differs from make_bpe.py's"; fail=1; }
    done
fi

# the commands that take token ids take text
m=$dir/tok_tiny.arch
"$bin" run "$m" --backend ref --random-weights 1 --tokens "$data/unicode.ids" --logits "$tmp/a.npy" || fail=1
"$bin" run "$m" --backend ref --random-weights 1 --tokenizer "$data" --text "$dir/cases/unicode.txt" \
    --logits "$tmp/b.npy" || fail=1
"$bin" cmp "$tmp/a.npy" "$tmp/b.npy" --atol 0 >/dev/null || { echo "FAIL: run --text differs from --tokens"; fail=1; }
"$bin" generate "$m" --backend ref --random-weights 1 --tokens "$data/ascii.ids" --max-new 3 >"$tmp/g1" || fail=1
"$bin" generate "$m" --backend ref --random-weights 1 --tokenizer "$data/vocab.json" \
    --prompt "$(cat "$dir/cases/ascii.txt")" --max-new 3 >"$tmp/g2" || fail=1
"$bin" tokenize --tokenizer "$data" --decode --tokens "$tmp/g1" >"$tmp/g1.txt" && echo >>"$tmp/g1.txt" || fail=1
cmp -s "$tmp/g1.txt" "$tmp/g2" || { echo "FAIL: generate --prompt's text differs from --tokens' ids decoded"; fail=1; }

# errors
printf 'ok \377 bad' >"$tmp/bad.txt"
expect 1 "shortc: error: $tmp/bad.txt: the text is not UTF-8 at byte 3 (0xff)" \
    tokenize --tokenizer "$data" --text "$tmp/bad.txt"
printf '\355\240\200' >"$tmp/surrogate.txt"
expect 1 "shortc: error: $tmp/surrogate.txt: the text is not UTF-8 at byte 0 (0xed)" \
    tokenize --tokenizer "$data" --text "$tmp/surrogate.txt"
: >"$tmp/empty.txt"
# an empty text gives no ids (an empty line); the commands that run a model need a token
[ "$("$bin" tokenize --tokenizer "$data" --text "$tmp/empty.txt")" = "" ] || { echo "FAIL: empty text"; fail=1; }
expect 1 "shortc: error: $tmp/empty.txt: no tokens (the text is empty)" \
    run "$m" --random-weights 1 --tokenizer "$data" --text "$tmp/empty.txt"
echo "5 999" >"$tmp/big.ids"
expect 3 "shortc: error: token 1: id 999 is not in the vocabulary" \
    tokenize --tokenizer "$data" --decode --tokens "$tmp/big.ids"
mkdir "$tmp/only"
cp "$data/vocab.json" "$tmp/only/"
expect 3 "shortc: error: cannot open '$tmp/only/merges.txt': No such file or directory" \
    tokenize --tokenizer "$tmp/only/vocab.json" --text "$dir/cases/ascii.txt"
expect 1 "shortc: error: directory '$tmp' holds neither tokenizer.json nor vocab.json" \
    tokenize --tokenizer "$tmp" --text "$dir/cases/ascii.txt"
printf '{"model": {"type": "WordPiece", "vocab": {"a": 0}}}' >"$tmp/wp.json"
expect 1 "shortc: error: $tmp/wp.json: model type 'WordPiece' is not supported (only BPE)" \
    tokenize --tokenizer "$tmp/wp.json" --text "$dir/cases/ascii.txt"
printf '{"model": {"vocab": {"a": 0}, "merges": ["a"]}}' >"$tmp/m.json"
expect 3 "shortc: error: $tmp/m.json: merge 1 ('a') is not two tokens separated by one space" \
    tokenize --tokenizer "$tmp/m.json" --text "$dir/cases/ascii.txt"
mkdir "$tmp/bad8"
cp "$data/vocab.json" "$tmp/bad8/"
printf '#version: 0.2\n\377a b\n' >"$tmp/bad8/merges.txt"
expect 3 "shortc: error: $tmp/bad8/merges.txt: merge 1 holds a token that is not UTF-8" \
    tokenize --tokenizer "$tmp/bad8/vocab.json" --text "$dir/cases/ascii.txt"
printf '{"model": {"vocab": {"a": -1}, "merges": []}}' >"$tmp/neg.json"
expect 3 "shortc: error: $tmp/neg.json: token 'a' has id -1 (expected an integer 0 to 16777215)" \
    tokenize --tokenizer "$tmp/neg.json" --text "$dir/cases/ascii.txt"
printf '{"model": {"vocab": {"a": 0}, "merges": []}}' >"$tmp/small.json"
expect 1 "shortc: error: $dir/cases/ascii.txt: the vocabulary has no token for 'T' (in the word 'The'), and the tokenizer has no unk_token" \
    tokenize --tokenizer "$tmp/small.json" --text "$dir/cases/ascii.txt"
# a component the pipeline cannot run is an error naming it
for c in '"normalizer": {"type": "NFKC"}|normalizer '"'"'NFKC'"'"' is not supported (supported: Prepend, Replace with a String pattern, NFC, Sequence of them)' \
         '"normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "x"}, {"type": "Lowercase"}]}|normalizer '"'"'Lowercase'"'"' is not supported (supported: Prepend, Replace with a String pattern, NFC, Sequence of them)' \
         '"pre_tokenizer": {"type": "Whitespace"}|pre-tokenizer '"'"'Whitespace'"'"' is not supported (supported: ByteLevel, Metaspace, Sequence of them)' \
         '"pre_tokenizer": null, "decoder": {"type": "WordPiece"}|decoder '"'"'WordPiece'"'"' is not supported (supported: ByteLevel, Metaspace, Replace with a String pattern, ByteFallback, Fuse, Strip, Sequence of them)' \
         '"normalizer": {"type": "Replace", "pattern": {"Regex": " +"}, "content": "x"}|normalizer Replace with a Regex pattern is not supported (only a String)' \
         '"added_tokens": [{"id": 1, "content": "<x>", "single_word": true}]|added token '"'"'<x>'"'"': single_word is not supported'; do
    printf '{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, %s}' "${c%%|*}" >"$tmp/c.json"
    expect 1 "shortc: error: $tmp/c.json: ${c#*|}" tokenize --tokenizer "$tmp/c.json" --prompt a
done
printf '{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [], "dropout": 0.1}}' >"$tmp/c.json"
expect 1 "shortc: error: $tmp/c.json: model BPE with dropout is not supported (it samples)" tokenize --tokenizer "$tmp/c.json" --prompt a
printf '{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [], "continuing_subword_prefix": "##"}}' >"$tmp/c.json"
expect 1 "shortc: error: $tmp/c.json: model BPE with a continuing_subword_prefix is not supported" tokenize --tokenizer "$tmp/c.json" --prompt a
# added tokens' ids are those HF gives them (the vocabulary's, else the next ones), or the file is refused
printf '{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": []}, "added_tokens": [{"id": 0, "content": "a"}, {"id": 2, "content": "<x>"}, {"id": 4, "content": "<y>"}]}' >"$tmp/c.json"
expect 3 "shortc: error: $tmp/c.json: added token '<y>' has id 4, where Hugging Face tokenizers gives it 3 (its vocabulary id, else the next after the vocabulary and the added tokens before it)" \
    tokenize --tokenizer "$tmp/c.json" --prompt a
printf '{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": []}, "added_tokens": [{"id": 1, "content": "a"}]}' >"$tmp/c.json"
expect 3 "shortc: error: $tmp/c.json: added token 'a' has id 1, where Hugging Face tokenizers gives it 0 (its vocabulary id, else the next after the vocabulary and the added tokens before it)" \
    tokenize --tokenizer "$tmp/c.json" --prompt a
# ignore_merges: a word that is a token is that token; without it, the merges decide; no decoder: tokens
# joined by spaces (as HF); merges as pairs may hold spaces
im='"vocab": {"a": 0, "b": 1, "c": 2, "bc": 3, "abc": 4, " ": 5, "a ": 6}, "merges": [["b", "c"], ["a", " "]]'
printf '{"model": {"type": "BPE", %s, "ignore_merges": true}, "pre_tokenizer": null, "decoder": null}' "$im" >"$tmp/im.json"
printf '{"model": {"type": "BPE", %s}, "pre_tokenizer": null, "decoder": null}' "$im" >"$tmp/nim.json"
[ "$("$bin" tokenize --tokenizer "$tmp/im.json" --prompt abc)" = "4" ] || { echo "FAIL: ignore_merges"; fail=1; }
[ "$("$bin" tokenize --tokenizer "$tmp/nim.json" --prompt abc)" = "0 3" ] || { echo "FAIL: merges without ignore_merges"; fail=1; }
[ "$("$bin" tokenize --tokenizer "$tmp/nim.json" --prompt "a bc")" = "6 3" ] || { echo "FAIL: a merge holding a space"; fail=1; }
echo "0 3" >"$tmp/03.ids"
[ "$("$bin" tokenize --tokenizer "$tmp/nim.json" --decode --tokens "$tmp/03.ids")" = "a bc" ] || { echo "FAIL: no decoder"; fail=1; }
# Metaspace without its split (tokenizers >= 0.19's split: false) and with prepend_scheme never
ms='"vocab": {"▁": 0, "a": 1, "b": 2, "▁a": 3, "▁a▁": 4, "▁a▁b": 5}, "merges": ["▁ a", "▁a ▁", "▁a▁ b"]'
printf '{"model": {"type": "BPE", %s}, "pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": false}, "decoder": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always"}}' "$ms" >"$tmp/ms.json"
printf '{"model": {"type": "BPE", %s}, "pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "never"}, "decoder": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "never"}}' "$ms" >"$tmp/msn.json"
[ "$("$bin" tokenize --tokenizer "$tmp/ms.json" --prompt "a b")" = "5" ] || { echo "FAIL: Metaspace split false"; fail=1; }
[ "$("$bin" tokenize --tokenizer "$tmp/msn.json" --prompt "a b")" = "1 0 2" ] || { echo "FAIL: Metaspace never"; fail=1; }
echo "5" >"$tmp/5.ids"
[ "$("$bin" tokenize --tokenizer "$tmp/ms.json" --decode --tokens "$tmp/5.ids")" = "ab" ] || { echo "FAIL: Metaspace decoder (first token)"; fail=1; }
[ "$("$bin" tokenize --tokenizer "$tmp/msn.json" --decode --tokens "$tmp/5.ids")" = " a b" ] || { echo "FAIL: Metaspace decoder never"; fail=1; }

# special tokens are split out of the text before BPE, or are text with --special-as-text
p=$("$bin" tokenize --tokenizer "$data" --prompt "Hello")
[ "$("$bin" tokenize --tokenizer "$data" --prompt "Hello<|endoftext|>Hello")" = "$p 376 $p" ] ||
    { echo "FAIL: <|endoftext|> is not split out"; fail=1; }
"$bin" tokenize --tokenizer "$data" --prompt "<|endoftext|>" --special-as-text >"$tmp/st.ids" || fail=1
grep -qw 376 "$tmp/st.ids" && { echo "FAIL: --special-as-text"; fail=1; }
[ "$("$bin" tokenize --tokenizer "$data" --decode --tokens "$tmp/st.ids")" = "<|endoftext|>" ] ||
    { echo "FAIL: --special-as-text does not decode back"; fail=1; }

# a tokenizer with more ids than the model is refused before anything runs (run, eval, generate)
printf '{"model": {"type": "BPE", "vocab": {"a": 0, "b": 500}, "merges": []}}' >"$tmp/big.json"
msg="shortc: error: tokenizer '$tmp/big.json' has 501 ids, more than the vocabulary of 377 of model 'tok_tiny': its ids would not fit the model"
printf "ab" >"$tmp/ab.txt"
expect 3 "$msg" run "$m" --random-weights 1 --tokenizer "$tmp/big.json" --text "$tmp/ab.txt"
expect 3 "$msg" eval "$m" --random-weights 1 --tokenizer "$tmp/big.json" --text "$tmp/ab.txt"
expect 3 "$msg" generate "$m" --random-weights 1 --tokenizer "$tmp/big.json" --prompt "ab" --max-new 1

printf '{"model": ' >"$tmp/trunc.json"
expect 3 "shortc: error: $tmp/trunc.json: not valid JSON" tokenize --tokenizer "$tmp/trunc.json" --prompt hi
expect 2 "shortc: error: run needs --tokenizer with --text or --prompt" \
    run "$m" --random-weights 1 --text "$dir/cases/ascii.txt"
expect 2 "shortc: error: run takes --tokens or --text, not both" \
    run "$m" --random-weights 1 --text "$dir/cases/ascii.txt" --tokens "$data/ascii.ids" --tokenizer "$data"
expect 2 "shortc: error: tokenize takes --text FILE or --prompt TEXT, or --decode --tokens FILE" \
    tokenize --tokenizer "$data" --decode --text "$dir/cases/ascii.txt"
exit $fail
