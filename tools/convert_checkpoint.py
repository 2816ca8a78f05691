#!/usr/bin/python3
"""convert_checkpoint.py — fairseq transformer_lm and Transformer-XL checkpoints to
safetensors with shortc's weight names (docs/ir.md, "Lowering" and "Adaptive input and
softmax").

usage: convert_checkpoint.py fairseq|transformer_xl|recurrence IN OUT.safetensors

IN is a state dict: a .pt/.pth file (needs torch; fairseq checkpoints keep it under
"model") or a .npz whose keys are the state-dict names (what the tests build without torch).

fairseq: the adaptive input and adaptive softmax (tied or untied) and every decoder layer
(q/k/v/out projections, fc1/fc2, the two layer norms) -> HF GPT-2 names, and the final
layer norm decoder.layer_norm -> ln_f.* where the checkpoint has one (transformer_lm_wiki103
has none: no_decoder_final_norm; the last line printed says which `final_norm` setting the
weights need, docs/language.md); the embedding
positions are computed (models/baseline_ba.arch: `positions sinusoidal style=fairseq`, fairseq's
SinusoidalPositionalEmbedding layout), so no position table is read. Transformer-XL (original PyTorch or
HF TransfoXL, whose leading "transformer." is dropped): the adaptive embedding and
ProjectedAdaptiveLogSoftmax -> the adaptive.* names (a checkpoint without clusters keeps
word_emb.emb_layers.0.weight and crit.out_layers.0.bias), and the relative-attention
layers (r_w_bias, r_r_bias, layers.*) under their own names, which shortc's
`weights transformer_xl` reads (docs/attention/relative.md).
recurrence (Yoshida et al.'s module on GPT-2, docs/attention/recurrence.md): an HF GPT-2 state
dict (GPT2LMHeadModel: "transformer." dropped, the tied lm_head.weight and the attn.bias /
attn.masked_bias buffers skipped) plus the module as a PyTorch nn.Module under any prefix P
(e.g. "recurrence."): P + "alpha" (the pooling logits, one per pooled state) and its nn.Linear
layers, in the order of their names' numbers (P + "ffn.0", P + "ffn.2", ... of an nn.Sequential
with activations between them), weight [out, in] -> rec.ffn.{j}.weight [in, out] (transposed)
and bias -> rec.ffn.{j}.bias; the layers must chain from d_model back to d_model.
Only numpy is needed for .npz input. Exits 1 with a message on a missing key or a shape
that does not fit.
"""
import json
import os
import struct
import sys

import numpy as np


USAGE = "usage: convert_checkpoint.py fairseq|transformer_xl|recurrence IN OUT.safetensors"
KINDS = ("fairseq", "transformer_xl", "recurrence")


class ConvertError(Exception):
    pass


def load_state(path):
    if path.endswith(".npz"):
        with np.load(path) as z:
            return {k: np.asarray(z[k]) for k in z.files}
    try:
        import torch  # noqa: F401 (only for .pt input)
    except ImportError as exc:
        raise ConvertError(f"{path}: reading a torch checkpoint needs torch, which is not installed "
                           "(save the state dict as .npz instead)") from exc
    sd = torch.load(path, map_location="cpu")
    if isinstance(sd, dict) and "model" in sd and isinstance(sd["model"], dict):
        sd = sd["model"]
    if not isinstance(sd, dict):  # Transformer-XL saves the whole module
        sd = sd.state_dict()
    return {k: v.float().numpy() for k, v in sd.items()}


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name], dtype="<f4")
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + a.nbytes]}
        blobs.append(a.tobytes())
        offset += a.nbytes
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)


class State:
    """The input state dict; take() marks keys as used so the unconverted ones can be listed."""

    def __init__(self, sd):
        self.sd, self.used = sd, set()

    def has(self, key):
        return key in self.sd

    def take(self, key, ndim=None):
        if key not in self.sd:
            raise ConvertError(f"missing key '{key}'")
        a = self.sd[key]
        if ndim is not None and a.ndim != ndim:
            raise ConvertError(f"'{key}' has shape {list(a.shape)}, expected {ndim} dimensions")
        self.used.add(key)
        return a

    def unused(self):
        return sorted(k for k in self.sd if k not in self.used)


def count_bands(st, fmt):
    n = 0
    while st.has(fmt.format(n)):
        n += 1
    if n == 0:
        raise ConvertError(f"no adaptive bands: missing key '{fmt.format(0)}'")
    return n


def fairseq_adaptive(st, out):
    pre = "decoder.embed_tokens.embeddings.{}"
    n = count_bands(st, pre.format("{}") + ".0.weight")
    for i in range(n):
        out[f"adaptive.emb.{i}.weight"] = st.take(pre.format(i) + ".0.weight", 2)
        out[f"adaptive.emb_proj.{i}.weight"] = st.take(pre.format(i) + ".1.weight", 2)
    sm = "decoder.adaptive_softmax."
    c1 = out["adaptive.emb.0.weight"].shape[0]
    if st.has(sm + "head.class_proj.weight"):  # tied: words from the input, clusters of their own
        out["adaptive.cluster.weight"] = st.take(sm + "head.class_proj.weight", 2)
        for i in range(1, n):  # the tied tails use the input's tables and projections
            for k in (sm + f"tail.{i - 1}.0.weight", sm + f"tail.{i - 1}.2.weight"):
                if st.has(k):
                    st.take(k)
    else:  # untied: one head Linear for the words and the clusters, one Sequential per tail
        head = st.take(sm + "head.weight", 2)
        if head.shape[0] != c1 + n - 1:
            raise ConvertError(f"'{sm}head.weight' has {head.shape[0]} rows, expected {c1} words + {n - 1} clusters")
        out["adaptive.out.0.weight"], out["adaptive.cluster.weight"] = head[:c1], head[c1:]
        for i in range(1, n):
            out[f"adaptive.out_proj.{i}.weight"] = st.take(sm + f"tail.{i - 1}.0.weight", 2)
            out[f"adaptive.out.{i}.weight"] = st.take(sm + f"tail.{i - 1}.2.weight", 2)


def fairseq_layers(st, out):
    i = 0
    while st.has(f"decoder.layers.{i}.self_attn.q_proj.weight"):
        p, h = f"decoder.layers.{i}.", f"h.{i}."
        qkv = [st.take(p + f"self_attn.{x}_proj.weight", 2) for x in "qkv"]
        out[h + "attn.c_attn.weight"] = np.concatenate(qkv, axis=0).T  # Conv1D [in, out]
        out[h + "attn.c_attn.bias"] = np.concatenate([st.take(p + f"self_attn.{x}_proj.bias", 1) for x in "qkv"])
        out[h + "attn.c_proj.weight"] = st.take(p + "self_attn.out_proj.weight", 2).T
        out[h + "attn.c_proj.bias"] = st.take(p + "self_attn.out_proj.bias", 1)
        for src, dst in (("self_attn_layer_norm", "ln_1"), ("final_layer_norm", "ln_2")):
            out[h + dst + ".weight"] = st.take(p + src + ".weight", 1)
            out[h + dst + ".bias"] = st.take(p + src + ".bias", 1)
        out[h + "mlp.c_fc.weight"] = st.take(p + "fc1.weight", 2).T
        out[h + "mlp.c_fc.bias"] = st.take(p + "fc1.bias", 1)
        out[h + "mlp.c_proj.weight"] = st.take(p + "fc2.weight", 2).T
        out[h + "mlp.c_proj.bias"] = st.take(p + "fc2.bias", 1)
        i += 1
    if st.has("decoder.layer_norm.weight"):  # trained with no_decoder_final_norm False
        out["ln_f.weight"] = st.take("decoder.layer_norm.weight", 1)
        out["ln_f.bias"] = st.take("decoder.layer_norm.bias", 1)
    for k in st.unused():
        if k.endswith("embed_positions._float_tensor") or k == "decoder.version":
            st.take(k)  # fairseq bookkeeping, no weights


def final_norm_note(out):
    """Which `final_norm` setting the converted weights need (docs/language.md)."""
    if "ln_f.weight" in out:
        return ("convert_checkpoint: the checkpoint has a final layer norm (decoder.layer_norm -> ln_f.*): "
                "compile it with `final_norm on` (models/baseline_ba.arch sets `final_norm off`)")
    return ("convert_checkpoint: the checkpoint has no final layer norm (fairseq's no_decoder_final_norm, as "
            "transformer_lm_wiki103): compile it with `final_norm off`, as models/baseline_ba.arch does")


def txl_adaptive(st, out):
    n = count_bands(st, "word_emb.emb_layers.{}.weight")
    for i in range(n):
        emb = st.take(f"word_emb.emb_layers.{i}.weight", 2)
        out[f"adaptive.emb.{i}.weight"] = emb
        if st.has(f"word_emb.emb_projs.{i}"):
            proj = st.take(f"word_emb.emb_projs.{i}", 2)  # [d_proj, d_emb], F.linear(e, proj)
        else:  # no projection: d_emb == d_proj
            proj = np.eye(emb.shape[1], dtype=np.float32)
        out[f"adaptive.emb_proj.{i}.weight"] = proj
        w = st.take(f"crit.out_layers.{i}.weight", 2)
        b = st.take(f"crit.out_layers.{i}.bias", 1)
        if not np.array_equal(w, emb):
            raise ConvertError(f"'crit.out_layers.{i}.weight' differs from the input table: only tied "
                               "Transformer-XL models are supported (the released ones are tied)")
        out[f"adaptive.out.{i}.bias"] = b
        if i == 0:  # the head projection is the softmax's own: [d_proj, d_emb] -> nn.Linear(D, d_emb)
            op = st.take("crit.out_projs.0", 2) if st.has("crit.out_projs.0") else np.eye(emb.shape[1], dtype=np.float32)
            out["adaptive.out_proj.0.weight"] = op.T
        elif st.has(f"crit.out_projs.{i}"):
            op = st.take(f"crit.out_projs.{i}", 2)
            if not np.array_equal(op, proj):
                raise ConvertError(f"'crit.out_projs.{i}' differs from the input projection: only tied "
                                   "projections (tie_projs) are supported for tail bands")
    out["adaptive.cluster.weight"] = st.take("crit.cluster_weight", 2)
    out["adaptive.cluster.bias"] = st.take("crit.cluster_bias", 1)


def strip_hf_prefix(sd):
    """HF TransfoXLLMHeadModel and GPT2LMHeadModel keep the body under 'transformer.'; the original code does not."""
    return {k[len("transformer."):] if k.startswith("transformer.") else k: v for k, v in sd.items()}


def txl_plain(st, out):
    """A Transformer-XL without adaptive clusters: the tied table and the output bias keep their names."""
    emb = st.take("word_emb.emb_layers.0.weight", 2)
    if st.has("crit.out_layers.0.weight") and not np.array_equal(st.take("crit.out_layers.0.weight", 2), emb):
        raise ConvertError("'crit.out_layers.0.weight' differs from the input table: only tied Transformer-XL "
                           "models are supported")
    out["word_emb.emb_layers.0.weight"] = emb
    out["crit.out_layers.0.bias"] = st.take("crit.out_layers.0.bias", 1)


def txl_layers(st, out):
    """The relative-attention layers: u, v (shared or per layer) and layers.* under their names."""
    for k in list(st.sd):
        if k in ("r_w_bias", "r_r_bias") or k.startswith("layers."):
            out[k] = st.take(k)


def gpt2_body(st, out):
    """HF GPT-2 names pass through (shortc reads them); lm_head.weight must be the tied table."""
    for k in list(st.sd):
        if k.startswith(("wte.", "wpe.", "h.", "ln_f.")):
            if k.endswith((".attn.bias", ".attn.masked_bias")):
                st.take(k)  # causal-mask buffers, no weights
            else:
                out[k] = st.take(k)
    if "wte.weight" not in out:
        raise ConvertError("missing key 'wte.weight' (an HF GPT-2 state dict, with or without 'transformer.')")
    if st.has("lm_head.weight") and not np.array_equal(st.take("lm_head.weight", 2), out["wte.weight"]):
        raise ConvertError("'lm_head.weight' differs from 'wte.weight': only tied GPT-2 models are supported")


def layer_order(name):
    """Sort key of a module path: its numbers as numbers (ffn.10 after ffn.2)."""
    return [int(p) if p.isdigit() else p for p in name.split(".")]


def recurrence_module(st, out, d_model):
    """The module's alpha and nn.Linear layers -> rec.alpha, rec.ffn.{j}.weight [in, out], rec.ffn.{j}.bias."""
    alphas = [k for k in st.sd if k == "alpha" or k.endswith(".alpha")]
    if len(alphas) != 1:
        raise ConvertError("expected one recurrence module (a key '<prefix>alpha'), found %d: %s" %
                           (len(alphas), ", ".join(alphas) or "none"))
    pre = alphas[0][:-len("alpha")]
    out["rec.alpha"] = st.take(alphas[0], 1)
    linears = sorted((k[:-len(".weight")] for k in st.sd
                      if k.startswith(pre) and k.endswith(".weight") and st.sd[k].ndim == 2 and k not in st.used),
                     key=layer_order)
    if not linears:
        raise ConvertError(f"no nn.Linear layers under '{pre}' (keys '{pre}<name>.weight', [out, in])")
    width = d_model
    for j, name in enumerate(linears):
        w = st.take(name + ".weight", 2)
        if w.shape[1] != width:
            raise ConvertError(f"'{name}.weight' has shape {list(w.shape)}: its input should be {width} wide "
                               f"({'d_model' if j == 0 else 'the layer before'})")
        out[f"rec.ffn.{j}.weight"] = w.T  # nn.Linear [out, in] -> Conv1D order [in, out]
        out[f"rec.ffn.{j}.bias"] = st.take(name + ".bias", 1)
        width = w.shape[0]
    if width != d_model:
        raise ConvertError(f"the last layer '{linears[-1]}' has {width} outputs; h_prev needs d_model = {d_model}")


def main(argv):
    if len(argv) != 4 or argv[1] not in KINDS:
        print(USAGE, file=sys.stderr)
        return 2
    try:
        st = State(load_state(argv[2]))
        out = {}
        if argv[1] == "fairseq":
            fairseq_adaptive(st, out)
            fairseq_layers(st, out)
        elif argv[1] == "recurrence":
            st = State(strip_hf_prefix(st.sd))
            gpt2_body(st, out)
            recurrence_module(st, out, out["wte.weight"].shape[1])
        else:
            st = State(strip_hf_prefix(st.sd))
            if st.has("crit.cluster_weight"):
                txl_adaptive(st, out)
            else:
                txl_plain(st, out)
            txl_layers(st, out)
        left = st.unused()
        if left:
            print(f"convert_checkpoint: warning: {len(left)} keys not converted: " + ", ".join(left[:8]) +
                  (" ..." if len(left) > 8 else ""), file=sys.stderr)
        write_safetensors(argv[3], out)
    except (ConvertError, OSError, ValueError) as e:
        print(f"convert_checkpoint: error: {e}", file=sys.stderr)
        return 1
    print(f"convert_checkpoint: wrote {len(out)} tensors to {argv[3]}")
    if argv[1] == "fairseq":
        print(final_norm_note(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
