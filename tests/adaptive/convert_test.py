#!/usr/bin/python3
"""convert_test.py CONVERTER: builds fairseq (tied and untied) and Transformer-XL state dicts
with NumPy under those frameworks' key names (.npz; torch is not needed), computes their
adaptive embedding and log-probabilities from those keys the way the frameworks' modules do,
converts them with tools/convert_checkpoint.py, and checks that the shortc-named tensors give
the same results through adaptive_ref.py (the semantics the interpreter is checked against).
Also: fairseq decoder layers land under their HF GPT-2 names, transposed; the final layer norm
becomes ln_f.* only where the checkpoint has one, and the converter names the `final_norm`
setting the weights need; a missing key is an error with no output file."""
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import adaptive_ref  # noqa: E402

V, D, CUT, T = 300, 32, [50, 120, 200], 20
rng = np.random.default_rng(3)


def rnd(*shape):
    return (0.3 * rng.standard_normal(shape)).astype(np.float32)


def bands(factor):
    b = [0] + CUT + [V]
    return [(b[i], b[i + 1], D // factor ** i) for i in range(len(b) - 1)]


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    return {k: np.frombuffer(data[v["data_offsets"][0]:v["data_offsets"][1]], dtype="<f4").reshape(v["shape"])
            .astype(np.float64) for k, v in header.items() if k != "__metadata__"}


def log_softmax(x):
    return adaptive_ref.log_softmax(x)


def fairseq_state(tied):
    sd = {}
    for i, (lo, hi, w) in enumerate(bands(4)):
        sd[f"decoder.embed_tokens.embeddings.{i}.0.weight"] = rnd(hi - lo, w)
        sd[f"decoder.embed_tokens.embeddings.{i}.1.weight"] = rnd(D, w)
    n = len(CUT)
    if tied:
        sd["decoder.adaptive_softmax.head.class_proj.weight"] = rnd(n, D)
    else:
        sd["decoder.adaptive_softmax.head.weight"] = rnd(CUT[0] + n, D)
        for i, (lo, hi, w) in enumerate(bands(4)[1:]):
            sd[f"decoder.adaptive_softmax.tail.{i}.0.weight"] = rnd(w, D)
            sd[f"decoder.adaptive_softmax.tail.{i}.2.weight"] = rnd(hi - lo, w)
    for k in ("q", "k", "v", "out"):
        sd[f"decoder.layers.0.self_attn.{k}_proj.weight"] = rnd(D, D)
        sd[f"decoder.layers.0.self_attn.{k}_proj.bias"] = rnd(D)
    for k in ("self_attn_layer_norm", "final_layer_norm"):
        sd[f"decoder.layers.0.{k}.weight"], sd[f"decoder.layers.0.{k}.bias"] = rnd(D), rnd(D)
    sd["decoder.layers.0.fc1.weight"], sd["decoder.layers.0.fc1.bias"] = rnd(4 * D, D), rnd(4 * D)
    sd["decoder.layers.0.fc2.weight"], sd["decoder.layers.0.fc2.bias"] = rnd(D, 4 * D), rnd(D)
    return sd


def fairseq_forward(sd, tokens, h, tied):
    """fairseq AdaptiveInput (without the decoder's scale and positions) and AdaptiveSoftmax.get_log_prob."""
    e = np.zeros((len(tokens), D))
    for i, (lo, hi, _) in enumerate(bands(4)):
        emb, lin = sd[f"decoder.embed_tokens.embeddings.{i}.0.weight"], sd[f"decoder.embed_tokens.embeddings.{i}.1.weight"]
        for t, tok in enumerate(tokens):
            if lo <= tok < hi:
                e[t] += emb[tok - lo] @ lin.T  # nn.Linear(w, D)
    p = "decoder.adaptive_softmax."
    if tied:
        head = np.concatenate([h @ sd["decoder.embed_tokens.embeddings.0.0.weight"].T,
                               h @ sd[p + "head.class_proj.weight"].T], axis=1)
    else:
        head = h @ sd[p + "head.weight"].T
    head = log_softmax(head)
    out = [head[:, :CUT[0]]]
    for i in range(len(CUT)):
        if tied:  # TiedLinear(proj, transpose=True), then TiedLinear(table)
            proj, tab = sd[f"decoder.embed_tokens.embeddings.{i + 1}.1.weight"], sd[f"decoder.embed_tokens.embeddings.{i + 1}.0.weight"]
            logits = (h @ proj) @ tab.T
        else:
            logits = (h @ sd[p + f"tail.{i}.0.weight"].T) @ sd[p + f"tail.{i}.2.weight"].T
        out.append(head[:, CUT[0] + i:CUT[0] + i + 1] + log_softmax(logits))
    return e, np.concatenate(out, axis=1)


def txl_state():
    sd = {}
    for i, (lo, hi, w) in enumerate(bands(2)):
        sd[f"word_emb.emb_layers.{i}.weight"] = rnd(hi - lo, w)
        sd[f"word_emb.emb_projs.{i}"] = rnd(D, w)
        sd[f"crit.out_layers.{i}.weight"] = sd[f"word_emb.emb_layers.{i}.weight"]
        sd[f"crit.out_layers.{i}.bias"] = rnd(hi - lo)
        sd[f"crit.out_projs.{i}"] = rnd(D, w) if i == 0 else sd[f"word_emb.emb_projs.{i}"]
    sd["crit.cluster_weight"], sd["crit.cluster_bias"] = rnd(len(CUT), D), rnd(len(CUT))
    sd["layers.0.dec_attn.r_w_bias"] = rnd(4, 8)  # relative attention: kept under its name
    return sd


def txl_forward(sd, tokens, h):
    """Transformer-XL AdaptiveEmbedding (without emb_scale) and ProjectedAdaptiveLogSoftmax."""
    e = np.zeros((len(tokens), D))
    for i, (lo, hi, _) in enumerate(bands(2)):
        for t, tok in enumerate(tokens):
            if lo <= tok < hi:
                e[t] += sd[f"word_emb.emb_projs.{i}"] @ sd[f"word_emb.emb_layers.{i}.weight"][tok - lo]
    n = len(CUT)

    def logit(x, w, b, proj):
        return (x @ proj) @ w.T + b

    head_w = np.concatenate([sd["crit.out_layers.0.weight"], sd["crit.cluster_weight"]])
    head_b = np.concatenate([sd["crit.out_layers.0.bias"], sd["crit.cluster_bias"]])
    head = log_softmax(logit(h, head_w, head_b, sd["crit.out_projs.0"]))
    out = [head[:, :CUT[0]]]
    for i in range(1, n + 1):
        tail = log_softmax(logit(h, sd[f"crit.out_layers.{i}.weight"], sd[f"crit.out_layers.{i}.bias"], sd[f"crit.out_projs.{i}"]))
        out.append(head[:, -i][:, None] + tail)
    return e, np.concatenate(out, axis=1)


def convert(tool, style, sd, tmp, name, stdout=None):
    src, dst = os.path.join(tmp, name + ".npz"), os.path.join(tmp, name + ".safetensors")
    np.savez(src, **sd)
    r = subprocess.run([sys.executable, tool, style, src, dst], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{name}: converter failed: {r.stderr}")
    if stdout is not None:
        stdout.append(r.stdout)
    return read_safetensors(dst), r.stderr


def check_final_norm(tool, tmp):
    """transformer_lm_wiki103 has no decoder.layer_norm (no_decoder_final_norm): no ln_f, and the
    converter says `final_norm off`; a checkpoint with one gets ln_f.* and `final_norm on`."""
    ok = True
    for has in (False, True):
        sd = fairseq_state(True)
        if has:
            sd["decoder.layer_norm.weight"], sd["decoder.layer_norm.bias"] = rnd(D), rnd(D)
        said = []
        W, warn = convert(tool, "fairseq", sd, tmp, f"final_{has}", said)
        want = "`final_norm on`" if has else "`final_norm off`"
        good = (("ln_f.weight" in W) == has and want in said[0] and "not converted" not in warn and
                (not has or np.array_equal(W["ln_f.bias"], sd["decoder.layer_norm.bias"])))
        print(f"fairseq final layer norm {has}: ln_f {'ln_f.weight' in W}, converter says {want}: {good}")
        ok &= good
    return ok


def check(name, got, want):
    err = np.abs(got - want).max()
    print(f"{name}: max |framework - shortc names| = {err:.3g}")
    return err < 1e-5


def main():
    tool = sys.argv[1]
    ok = True
    tokens = np.array([(t * 37 + 5) % V for t in range(T - 1)] + [V - 1])
    h = rng.standard_normal((T, D))
    with tempfile.TemporaryDirectory() as tmp:
        for tied in (True, False):
            sd = fairseq_state(tied)
            W, _ = convert(tool, "fairseq", sd, tmp, f"fairseq_{tied}")
            m = {"style": "fairseq", "tied": int(tied), "cutoffs": CUT, "vocab": V, "d_model": D, "scale": 1.0}
            e, lp = fairseq_forward(sd, tokens, h, tied)
            ok &= check(f"fairseq tied={tied} input", adaptive_ref.adaptive_input(m, tokens, W) - adaptive_ref.sinusoid(T, D), e)
            ok &= check(f"fairseq tied={tied} log-probs", adaptive_ref.adaptive_logprob(m, h, W), lp)
            qkv = np.concatenate([sd[f"decoder.layers.0.self_attn.{x}_proj.weight"] for x in "qkv"]).T
            ok &= check("fairseq c_attn (Conv1D [in,out])", W["h.0.attn.c_attn.weight"], qkv)
            ok &= check("fairseq mlp.c_fc", W["h.0.mlp.c_fc.weight"], sd["decoder.layers.0.fc1.weight"].T)
        ok &= check_final_norm(tool, tmp)
        sd = txl_state()
        W, warn = convert(tool, "transformer_xl", sd, tmp, "txl")
        m = {"style": "transformer_xl", "tied": 1, "cutoffs": CUT, "vocab": V, "d_model": D, "scale": 1.0}
        e, lp = txl_forward(sd, tokens, h)
        ok &= check("transformer_xl input", adaptive_ref.adaptive_input(m, tokens, W) - adaptive_ref.sinusoid(T, D), e)
        ok &= check("transformer_xl log-probs", adaptive_ref.adaptive_logprob(m, h, W), lp)
        ok &= np.array_equal(W.get("layers.0.dec_attn.r_w_bias"), sd["layers.0.dec_attn.r_w_bias"]) and "not converted" not in warn
        bad = {k: v for k, v in fairseq_state(True).items() if k != "decoder.adaptive_softmax.head.class_proj.weight"}
        np.savez(os.path.join(tmp, "bad.npz"), **bad)
        out = os.path.join(tmp, "bad.safetensors")
        r = subprocess.run([sys.executable, tool, "fairseq", os.path.join(tmp, "bad.npz"), out], capture_output=True, text=True)
        ok &= r.returncode == 1 and "missing key 'decoder.adaptive_softmax.head.weight'" in r.stderr and not os.path.exists(out)
        print("missing key:", r.stderr.strip())
    print("ok" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
