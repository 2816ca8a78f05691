#!/usr/bin/python3
"""Generates the PyTorch goldens in tests/golden/ (see tests/golden/README.md).

For each test model: seeded random weights in the HF GPT-2 layout written as
<model>.safetensors (fp32; Conv1D weights [in, out], lm_head [vocab, d_model]),
a token file <model>.tokens and the logits of an independent forward pass in
PyTorch, <model>.logits.npy (float32 [T, vocab]).

The forward pass here is written from the model definitions alone (HF GPT-2
equations, F.layer_norm, explicit causal softmax attention) and shares no code
with shortc. It runs in float64; weights whose storage dtype is fp16/bf16 are
rounded to that dtype first, as shortc's weight loader does.

Usage: /usr/bin/python3 tests/gen_goldens.py [--out DIR] [--check]
  --check  regenerate in memory and compare with the files in DIR (exit 1 on a
           difference); the tokens, weights and logits must be reproducible.
"""
import argparse
import json
import math
import os
import struct
import sys

try:
    import numpy as np
    import torch
    import torch.nn.functional as F
except ImportError as e:  # the --check test is skipped (exit 77) where torch is missing
    print("gen_goldens.py: %s" % e, file=sys.stderr)
    sys.exit(77)

# The test models, transcribed from models/*.arch (keep in sync).
MODELS = {
    "gpt2_tiny": dict(vocab=256, d_model=64, heads=4, head_dim=16, ffn=256, act="gelu_tanh",
                      norm="layernorm", place="pre", eps=1e-5, pos="learned", max_pos=128,
                      tied=True, segment=128, layers=2, wdtype="fp32", seed=1001),
    "baseline_ba_tiny": dict(vocab=256, d_model=64, heads=4, head_dim=16, ffn=256, act="relu",
                             norm="layernorm", place="pre", eps=1e-5, pos="sinusoidal_fairseq", max_pos=0,
                             tied=True, segment=96, layers=2, wdtype="fp32", seed=1002, final_norm=False),
    "mixed_tiny": dict(vocab=200, d_model=48, heads=3, head_dim=16, ffn=112, act="gelu",
                       norm="rmsnorm", place="post", eps=1e-6, pos="none", max_pos=0,
                       tied=False, segment=40, layers=3, wdtype="fp16", seed=1003),
    # Llama's block without rotary positions: RMSNorm, SwiGLU, no biases, untied output
    "llama_tiny": dict(vocab=256, d_model=64, heads=4, head_dim=16, ffn=176, act="silu", gated=True,
                       norm="rmsnorm", place="pre", eps=1e-6, pos="none", max_pos=0, bias=False,
                       tied=False, segment=64, layers=2, wdtype="fp32", seed=1004),
    # the same in half precision (fp16 weights and activations; compared at 2e-2)
    "llama_tiny_half": dict(vocab=256, d_model=64, heads=4, head_dim=16, ffn=176, act="silu", gated=True,
                            norm="rmsnorm", place="pre", eps=1e-6, pos="none", max_pos=0, bias=False,
                            tied=False, segment=64, layers=2, wdtype="fp16", seed=1007),
    # GPT-NeoX's parallel block: x + attn(ln_1(x)) + mlp(ln_2(x))
    "neox_tiny": dict(vocab=200, d_model=48, heads=4, head_dim=12, ffn=192, act="gelu", parallel=True,
                      norm="layernorm", place="pre", eps=1e-5, pos="learned", max_pos=64,
                      tied=False, segment=64, layers=2, wdtype="fp32", seed=1005),
    # GEGLU with biases in a parallel block, bf16 weights and activations (compared at 2e-2)
    "geglu_tiny_half": dict(vocab=160, d_model=32, heads=2, head_dim=16, ffn=96, act="gelu", gated=True,
                            parallel=True, norm="rmsnorm", place="pre", eps=1e-5, pos="learned", max_pos=48,
                            tied=True, segment=48, layers=2, wdtype="bf16", seed=1006),
}
NTOKENS = 37


def has_final_norm(cfg):
    """A pre-norm model ends in ln_f unless it sets `final_norm off` (final_norm=False here)."""
    return cfg["place"] == "pre" and cfg.get("final_norm", True)


def make_weights(cfg):
    """HF GPT-2 names -> float32 tensors in the file layout."""
    g = torch.Generator().manual_seed(cfg["seed"])

    def randn(*shape, std=1.0, mean=0.0):
        return (torch.randn(*shape, generator=g, dtype=torch.float32) * std + mean).contiguous()

    V, D, H, hd, Fd = cfg["vocab"], cfg["d_model"], cfg["heads"], cfg["head_dim"], cfg["ffn"]
    W = {}
    W["wte.weight"] = randn(V, D, std=0.1)
    if cfg["pos"] == "learned":
        W["wpe.weight"] = randn(cfg["max_pos"], D, std=0.05)

    def norm(prefix):
        W[prefix + ".weight"] = randn(D, std=0.1, mean=1.0)
        if cfg["norm"] == "layernorm":
            W[prefix + ".bias"] = randn(D, std=0.05)

    bias = cfg.get("bias", True)

    def linear(name, n_in, n_out):
        """A Conv1D weight [in, out] and (unless `bias off`) its bias."""
        W[name + ".weight"] = randn(n_in, n_out, std=0.08)
        if bias:
            W[name + ".bias"] = randn(n_out, std=0.02)

    for i in range(cfg["layers"]):
        p = "h.%d." % i
        norm(p + "ln_1")
        linear(p + "attn.c_attn", D, 3 * H * hd)
        linear(p + "attn.c_proj", H * hd, D)
        norm(p + "ln_2")
        if cfg.get("gated"):
            linear(p + "mlp.c_gate", D, Fd)
        linear(p + "mlp.c_fc", D, Fd)
        linear(p + "mlp.c_proj", Fd, D)
    if has_final_norm(cfg):
        norm("ln_f")
    if not cfg["tied"]:
        W["lm_head.weight"] = randn(V, D, std=0.1)
    return W


def make_tokens(cfg):
    g = torch.Generator().manual_seed(cfg["seed"] + 7)
    return torch.randint(0, cfg["vocab"], (NTOKENS,), generator=g).tolist()


def stored(t, wdtype):
    """A weight as the model computes with it: rounded to its storage dtype, then float64."""
    if wdtype == "fp16":
        t = t.half()
    elif wdtype == "bf16":
        t = t.bfloat16()
    return t.to(torch.float64)


def forward(cfg, W, tokens):
    """Independent GPT-2-style forward in float64. Returns [T, vocab]."""
    w = {k: stored(v, cfg["wdtype"]) for k, v in W.items()}
    V, D, H, hd = cfg["vocab"], cfg["d_model"], cfg["heads"], cfg["head_dim"]
    T = len(tokens)
    ids = torch.tensor(tokens, dtype=torch.long)
    x = w["wte.weight"][ids]
    if cfg["pos"] == "learned":
        x = x + w["wpe.weight"][:T]
    elif cfg["pos"] == "sinusoidal":
        pos = torch.arange(T, dtype=torch.float64)[:, None]
        two_i = torch.arange(0, D, 2, dtype=torch.float64)
        ang = pos / torch.pow(torch.tensor(10000.0, dtype=torch.float64), two_i / D)
        pe = torch.zeros(T, D, dtype=torch.float64)
        pe[:, 0::2] = torch.sin(ang)
        pe[:, 1::2] = torch.cos(ang)[:, : D // 2]
        x = x + pe
    elif cfg["pos"] == "sinusoidal_fairseq":
        # fairseq SinusoidalPositionalEmbedding (padding_idx 1): positions 2, 3, ... (make_positions),
        # half_dim frequencies exp(-i log(10000) / (half_dim - 1)), [sin | cos] concatenated
        half_dim = D // 2
        freq = torch.exp(torch.arange(half_dim, dtype=torch.float64) * -(math.log(10000.0) / (half_dim - 1)))
        ang = (torch.arange(T, dtype=torch.float64) + 2)[:, None] * freq[None, :]
        pe = torch.cat([torch.sin(ang), torch.cos(ang)], dim=1)
        if D % 2 == 1:
            pe = torch.cat([pe, torch.zeros(T, 1, dtype=torch.float64)], dim=1)
        x = x + pe

    def norm(h, prefix):
        if cfg["norm"] == "layernorm":
            return F.layer_norm(h, (D,), w[prefix + ".weight"], w[prefix + ".bias"], cfg["eps"])
        return h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + cfg["eps"]) * w[prefix + ".weight"]

    def act(h):
        if cfg["act"] == "relu":
            return F.relu(h)
        if cfg["act"] == "gelu":
            return F.gelu(h)
        if cfg["act"] == "silu":
            return h * torch.sigmoid(h)
        return F.gelu(h, approximate="tanh")

    def lin(h, name):
        y = h @ w[name + ".weight"]
        return y + w[name + ".bias"] if name + ".bias" in w else y

    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)

    def attn(h, p):
        qkv = lin(h, p + "attn.c_attn")
        q, k, v = qkv.split(H * hd, dim=-1)
        q = q.view(T, H, hd).transpose(0, 1)  # [H, T, hd]
        k = k.view(T, H, hd).transpose(0, 1)
        v = v.view(T, H, hd).transpose(0, 1)
        s = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
        s = s.masked_fill(mask, float("-inf"))
        a = torch.softmax(s, dim=-1) @ v  # [H, T, hd]
        a = a.transpose(0, 1).reshape(T, H * hd)
        return lin(a, p + "attn.c_proj")

    def mlp(h, p):
        if cfg.get("gated"):  # SwiGLU / GEGLU: up(h) * act(gate(h))
            u = lin(h, p + "mlp.c_fc") * act(lin(h, p + "mlp.c_gate"))
        else:
            u = act(lin(h, p + "mlp.c_fc"))
        return lin(u, p + "mlp.c_proj")

    for i in range(cfg["layers"]):
        p = "h.%d." % i
        if cfg.get("parallel"):  # GPT-NeoX: both branches read the block input
            x = x + attn(norm(x, p + "ln_1"), p) + mlp(norm(x, p + "ln_2"), p)
        elif cfg["place"] == "pre":
            x = x + attn(norm(x, p + "ln_1"), p)
            x = x + mlp(norm(x, p + "ln_2"), p)
        else:
            x = norm(x + attn(x, p), p + "ln_1")
            x = norm(x + mlp(x, p), p + "ln_2")
    if has_final_norm(cfg):
        x = norm(x, "ln_f")
    out = w["wte.weight"] if cfg["tied"] else w["lm_head.weight"]
    return (x @ out.t()).to(torch.float32)


def safetensors_bytes(W, metadata, dtype="F32"):
    """A safetensors file by hand: u64 header length, JSON header, raw little-endian data (F32 or F16)."""
    header = {}
    blobs = []
    off = 0
    for name in sorted(W):
        arr = W[name].numpy().astype({"F32": "<f4", "F16": "<f2"}[dtype], copy=False)
        b = arr.tobytes(order="C")
        header[name] = {"dtype": dtype, "shape": list(arr.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    header["__metadata__"] = metadata
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + b"".join(blobs)


def npy_bytes(a):
    import io
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(a, dtype="<f4"))
    return buf.getvalue()


def golden_files(name, W, toks, logits, generator, seed):
    """The three files of one golden: weights, tokens, logits."""
    meta = {"model": name, "generator": generator, "seed": str(seed)}
    return {
        name + ".safetensors": safetensors_bytes(W, meta),
        name + ".tokens": (" ".join(str(t) for t in toks) + "\n").encode(),
        name + ".logits.npy": npy_bytes(logits),
    }


def generate(name):
    cfg = MODELS[name]
    W = make_weights(cfg)
    toks = make_tokens(cfg)
    return golden_files(name, W, toks, forward(cfg, W, toks).numpy(), "tests/gen_goldens.py", cfg["seed"])


def run_generators(generate, models, default_out):
    """The command line shared by the golden scripts: write generate(name)'s files, or --check them."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=default_out)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("models", nargs="*", default=sorted(models))
    args = ap.parse_args()
    torch.set_num_threads(1)
    os.makedirs(args.out, exist_ok=True)
    bad = 0
    for name in args.models:
        bad += write_or_check(generate(name), args.out, args.check)
    return 1 if bad else 0


def write_or_check(files, out, check):
    """Writes {file name: bytes} into out, or (check) compares them with the files there; returns the differences."""
    bad = 0
    for fname, data in files.items():
        path = os.path.join(out, fname)
        if check:
            if fname.endswith(".npy"):
                same = os.path.exists(path) and np.allclose(np.load(path), np.load(__import__("io").BytesIO(data)),
                                                            atol=1e-6, rtol=0)
            else:
                same = os.path.exists(path) and open(path, "rb").read() == data
            print("%s %s" % ("ok  " if same else "DIFF", path))
            bad += not same
        else:
            with open(path, "wb") as f:
                f.write(data)
            print("wrote %s (%d bytes)" % (path, len(data)))
    return bad


def main():
    return run_generators(generate, MODELS, os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden"))


if __name__ == "__main__":
    sys.exit(main())
