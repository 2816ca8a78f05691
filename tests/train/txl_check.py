#!/usr/bin/python3
"""txl_check.py SHORTC MODEL — `shortc grad` of a Transformer-XL model against PyTorch autograd through the
independent forward of tests/memory/gen_txl.py (the original MemTransformerLM equations, float64), on the
model's golden weights and tokens.

A sequence longer than the segment is consumed segment after segment as Transformer-XL's training loop does:
each layer's memory carries the last m_l inputs into the next segment with no gradient (`.detach()`, the
paper's stop-gradient, SG(.) in Dai et al. eq. 1), so a segment's loss trains the weights through its own
forward only, the memory rows' keys and values included (they go through qkv_net). Checked for sequences of
one segment and of three segments; every weight's gradient to 1e-5 of the tensor's largest entry. A pre-norm
model (txl_tiny_pre) is checked on one segment, and a longer sequence must be refused: its rings hold normed
rows while the original norms cat(memory, h), training its LayerNorm through the memory rows as well.
Exit 77 (skipped) without torch.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TESTS, "memory"))
sys.path.insert(0, TESTS)
try:
    import numpy as np
    import torch
    import torch.nn.functional as F
    import gen_txl
except ImportError as e:
    print("txl_check.py: %s" % e, file=sys.stderr)
    sys.exit(77)

MODELS = os.path.join(os.path.dirname(TESTS), "models")
TOL = 1e-5


def sequence_loss(cfg, W, seq):
    """Summed next-token cross-entropy of one sequence, segment after segment with detached memories."""
    pre, D = cfg["prefix"], cfg["d_model"]
    mems = [torch.zeros(0, D, dtype=torch.float64) for _ in cfg["memory"]]
    ids = torch.tensor(seq)
    total = 0.0
    for s in range(0, len(seq), cfg["segment"]):
        seg = ids[s:s + cfg["segment"]]
        h = W[pre + "word_emb.emb_layers.0.weight"][seg] * D ** 0.5
        hids = []
        for i in range(cfg["layers"]):
            hids.append(h)
            if cfg["untie"]:
                uw, ur = W[pre + "layers.%d.dec_attn.r_w_bias" % i], W[pre + "layers.%d.dec_attn.r_r_bias" % i]
            else:
                uw, ur = W[pre + "r_w_bias"], W[pre + "r_r_bias"]
            h = gen_txl.layer(cfg, W, i, h, mems[i], uw, ur)
        for i in range(cfg["layers"]):  # stop-gradient: the next segment sees these rows as constants
            m = cfg["memory"][i]
            mems[i] = torch.cat([mems[i], hids[i]], 0)[-m:].detach()
        logits = h @ W[pre + "word_emb.emb_layers.0.weight"].t() + W["crit.out_layers.0.bias"]
        targets = ids[s + 1:s + 1 + len(seg)]  # the last position of a segment predicts the next one's first
        total = total + F.cross_entropy(logits[:len(targets)], targets, reduction="sum")
    return total


def read_f32(path):
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
        data = f.read()
    return {k: torch.from_numpy(np.frombuffer(data[v["data_offsets"][0]:v["data_offsets"][1]], dtype=np.float32)
                                .reshape(v["shape"]).copy()) for k, v in header.items() if k != "__metadata__"}


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in gen_txl.MODELS:
        print(__doc__, file=sys.stderr)
        return 2
    shortc, model = sys.argv[1], sys.argv[2]
    cfg = gen_txl.MODELS[model]
    mem_dir = os.path.join(TESTS, "memory")
    weights, tokens = os.path.join(mem_dir, model + ".safetensors"), os.path.join(mem_dir, model + ".tokens")
    with open(tokens) as f:
        toks = [int(x) for x in f.read().split()]
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        lengths = (cfg["segment"], 3 * cfg["segment"])
        if cfg["place"] == "pre":
            # the rings hold normed rows, the original norms cat(memory, h): refused past one segment (for now)
            r = subprocess.run([shortc, "grad", os.path.join(mem_dir, "txl_variants.arch"), "--model", model, "--weights",
                                weights, "--tokens", tokens, "--seq", str(lengths[1]), "--out", os.path.join(tmp, "x")],
                               capture_output=True, text=True)
            if r.returncode == 0 or "must be 2 to %d" % cfg["segment"] not in r.stderr:
                print("FAIL: a pre-norm model's sequence of 3 segments was not refused: %r" % r.stderr)
                ok = False
            lengths = lengths[:1]
        for L in lengths:
            out = os.path.join(tmp, "g%d.safetensors" % L)
            arch = os.path.join(MODELS, model + ".arch")
            if not os.path.exists(arch):  # the variants of tests/memory/txl_variants.arch
                arch = os.path.join(mem_dir, "txl_variants.arch")
            r = subprocess.run([shortc, "grad", arch, "--model", model, "--weights", weights, "--tokens",
                                tokens, "--seq", str(L), "--out", out, "--json"], capture_output=True, text=True)
            if r.returncode != 0:
                print("FAIL: shortc grad --seq %d exited %d: %s" % (L, r.returncode, r.stderr))
                return 1
            got = read_f32(out)
            W = {k: v.double().requires_grad_(True) for k, v in read_f32(weights).items()}
            seqs = [toks[i * L:(i + 1) * L] for i in range(len(toks) // L)]
            loss = sum(sequence_loss(cfg, W, s) for s in seqs) / sum(len(s) - 1 for s in seqs)
            loss.backward()
            if abs(json.loads(r.stdout)["loss"] - float(loss)) > 1e-5 * max(1.0, abs(float(loss))):
                print("FAIL: L=%d loss %r, torch %r" % (L, json.loads(r.stdout)["loss"], float(loss)))
                ok = False
            worst = 0.0
            for name in sorted(W):
                g = W[name].grad if W[name].grad is not None else torch.zeros_like(W[name])
                key = name if name in got else name[len("transformer."):]  # HF's prefix, written without it
                if key not in got:
                    print("FAIL: no gradient for %s" % name)
                    ok = False
                    continue
                scale = max(float(g.abs().max()), 1e-12)
                err = float((got[key].double() - g).abs().max()) / scale
                worst = max(worst, err)
                if err > TOL:
                    print("FAIL: %s L=%d d/d %s: max error %.3e of the tensor's largest %.3e" % (model, L, name, err, scale))
                    ok = False
            print("%s L=%d (%d segment(s) per sequence): %d gradients checked, max error / tensor max %.2e" %
                  (model, L, -(-L // cfg["segment"]), len(W), worst))
    print("ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
