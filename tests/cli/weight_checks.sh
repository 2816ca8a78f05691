#!/bin/sh
# weight_checks.sh SHORTC MODELS_DIR — loading checks the checkpoint against the model (docs/runtime.md,
# "Weight checks"): each mismatch produces its own error through run, eval and generate.
#   - a 4-layer checkpoint on a 2-layer model: every unused tensor listed, "4 layers, the model 2";
#   - an untied lm_head on a tied model: listed, with the tying hint; a tied checkpoint on an untied model;
#   - --allow-unused loads both, and the logits equal those of the matching weights;
#   - an 8-head config.json beside a 4-head model's weights: the heads difference (same tensor shapes);
#     several differences at once; a config.json that is not an object; a matching config.json loads;
#   - a 1-layer checkpoint on the 2-layer model: the missing tensor; a wider one: the shape;
#   - HF GPT-2's mask buffers (h.N.attn.bias / masked_bias) are not reported.
set -u
bin=$1 models=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/shortc-wcheck.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
export SHORTC_CACHE="$tmp/cache"
fail=0
. "$(dirname "$0")/expect.sh"

base=$(cd "$models" && pwd)/gpt2_tiny.arch
mk() { # mk NAME SETTINGS: a gpt2_tiny variant and its seeded weights NAME.safetensors
    printf 'import "%s";\nmodel %s : gpt2_tiny { %s }\n' "$base" "$1" "$2" > "$tmp/$1.arch"
    "$bin" run "$tmp/$1.arch" --backend ref --random-weights 5 --save-weights "$tmp/$1.safetensors" --quiet >/dev/null 2>&1 ||
        { echo "FAIL: cannot make $1 weights"; fail=1; }
}
mk four "layers 4;"
mk untied "embedding untied;"
mk one "layers 1;"
mk wide "d_model 128;"
mk same ""

lay="'h.2.ln_1.weight' [64], 'h.2.ln_1.bias' [64], 'h.2.attn.c_attn.weight' [64, 192], 'h.2.attn.c_attn.bias' [192], 'h.2.attn.c_proj.weight' [64, 64], 'h.2.attn.c_proj.bias' [64], 'h.2.ln_2.weight' [64], 'h.2.ln_2.bias' [64], 'h.2.mlp.c_fc.weight' [64, 256], 'h.2.mlp.c_fc.bias' [256], 'h.2.mlp.c_proj.weight' [256, 64], 'h.2.mlp.c_proj.bias' [64]"
lay3=$(echo "$lay" | sed 's/h\.2\./h.3./g')
way="(a checkpoint of another model? --allow-unused, or srt_options.allow_unused_weights, loads it anyway)"
for cmd in run eval generate; do
    extra=""
    [ "$cmd" = generate ] && extra="--tokens $tmp/toks --max-new 2"
    [ "$cmd" = eval ] && extra="--tokens $tmp/toks"
    echo "1 2 3 4 5 6 7" > "$tmp/toks"
    expect 3 "shortc: error: $tmp/four.safetensors holds 24 tensors that model 'gpt2_tiny' does not use: $lay, $lay3; the checkpoint has 4 layers, the model 2 $way" \
        $cmd "$base" --backend ref --weights "$tmp/four.safetensors" $extra --quiet
done
expect 3 "shortc: error: $tmp/untied.safetensors holds 1 tensor that model 'gpt2_tiny' does not use: 'lm_head.weight' [256, 64]; lm_head.weight is an untied output projection, the model ties its output to the embedding (\`embedding untied\` reads lm_head.weight) $way" \
    run "$base" --backend ref --weights "$tmp/untied.safetensors" --quiet

expect 3 "shortc: error: weight 'lm_head.weight' is missing from $tmp/same.safetensors (the model's output projection is untied, \`embedding untied\`; the checkpoint's looks tied to wte.weight)" \
    run "$tmp/untied.arch" --backend ref --weights "$tmp/same.safetensors" --quiet

# --allow-unused: the extra tensors ignored, the rest as the matching weights (h.0, h.1, wte, wpe, ln_f are
# drawn per name by the seeded generator, so four's equal same's)
"$bin" run "$base" --backend ref --weights "$tmp/same.safetensors" --logits "$tmp/same.npy" --quiet >/dev/null 2>&1 ||
    { echo "FAIL: matching weights"; fail=1; }
for w in four untied; do
    expect 0 "" run "$base" --backend ref --weights "$tmp/$w.safetensors" --allow-unused --logits "$tmp/$w.npy" --quiet
    check "--allow-unused $w: logits equal the matching weights'" "$bin" cmp "$tmp/$w.npy" "$tmp/same.npy" --atol 0
done

# config.json beside the weights
mkdir -p "$tmp/hf"
cp "$tmp/same.safetensors" "$tmp/hf/model.safetensors"
echo '{"n_head": 8, "n_layer": 2, "n_embd": 64, "vocab_size": 256}' > "$tmp/hf/config.json"
expect 3 "shortc: error: $tmp/hf/config.json does not describe model 'gpt2_tiny': n_head 8, the model heads 4 (the checkpoint in $tmp/hf/model.safetensors is another model's)" \
    run "$base" --backend ref --weights "$tmp/hf/model.safetensors" --quiet
expect 3 "shortc: error: $tmp/hf/config.json does not describe model 'gpt2_tiny': n_head 8, the model heads 4 (the checkpoint in $tmp/hf/model.safetensors is another model's)" \
    run "$base" --backend ref --weights "$tmp/hf/model.safetensors" --allow-unused --quiet
echo '{"num_attention_heads": 8, "num_hidden_layers": 4, "hidden_size": 64, "vocab_size": 300, "tie_word_embeddings": false}' > "$tmp/hf/config.json"
expect 3 "shortc: error: $tmp/hf/config.json does not describe model 'gpt2_tiny': num_hidden_layers 4, the model layers 2; num_attention_heads 8, the model heads 4; vocab_size 300, the model vocab 256; tie_word_embeddings false, the model's output projection is tied (embedding tied) (the checkpoint in $tmp/hf/model.safetensors is another model's)" \
    run "$base" --backend ref --weights "$tmp/hf/model.safetensors" --quiet
echo '[1, 2]' > "$tmp/hf/config.json"
expect 3 "shortc: error: $tmp/hf/config.json (beside the weights $tmp/hf/model.safetensors) is not a JSON object" \
    run "$base" --backend ref --weights "$tmp/hf/model.safetensors" --quiet
echo '{"n_head": 4, "n_layer": 2, "n_embd": 64, "vocab_size": 256, "tie_word_embeddings": true, "model_type": "gpt2"}' > "$tmp/hf/config.json"
expect 0 "" run "$base" --backend ref --weights "$tmp/hf/model.safetensors" --quiet

# fewer layers, another width: the tensor and the shapes
expect 3 "shortc: error: weight 'h.1.ln_1.weight' is missing from $tmp/one.safetensors" \
    run "$base" --backend ref --weights "$tmp/one.safetensors" --quiet
expect 3 "shortc: error: weight 'wte.weight': expected shape [256, 64], got [256, 128] in $tmp/wide.safetensors" \
    run "$base" --backend ref --weights "$tmp/wide.safetensors" --quiet

# HF GPT-2's mask buffers are not parameters: a checkpoint holding them loads without --allow-unused
/usr/bin/python3 - "$tmp/same.safetensors" "$tmp/buffers.safetensors" <<'PY' 2>/dev/null
import json, struct, sys
raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
head = json.loads(raw[8:8 + n])
data = raw[8 + n:]
end = max(v["data_offsets"][1] for k, v in head.items() if k != "__metadata__")
for i in range(2):
    for name in ("h.%d.attn.bias" % i, "h.%d.attn.masked_bias" % i):
        head[name] = {"dtype": "F32", "shape": [1], "data_offsets": [end, end + 4]}
        end += 4
        data += struct.pack("<f", -1e4)
h = json.dumps(head).encode()
h += b" " * (-len(h) % 8)
open(sys.argv[2], "wb").write(struct.pack("<Q", len(h)) + h + data)
PY
if [ -f "$tmp/buffers.safetensors" ]; then
    expect 0 "" run "$base" --backend ref --weights "$tmp/buffers.safetensors" --quiet
else
    echo "weight_checks: no /usr/bin/python3 to write the mask buffers; that check is skipped"
fi

[ "$fail" -eq 0 ] && echo "weight_checks: all passed"
exit "$fail"
