#!/usr/bin/python3
"""Goldens of gpt2_recurrent_tiny (Yoshida, Ettinger & Gimpel's recurrence on
gpt2_tiny; docs/attention/recurrence.md) from an independent PyTorch
implementation, written from the paper's §3 and §4.2 and the model file alone:

  recur_tiny.safetensors  seeded random weights, HF GPT-2 names plus rec.alpha,
                          rec.ffn.{k}.weight [in, out], rec.ffn.{k}.bias (F16 in
                          the file, so they are exact in every dtype shortc reads)
  recur_tiny.tokens       45 token ids: windows of 16 overlapping by 4 start at
                          0, 12, 24, 36 (the last one 9 tokens long)
  recur_tiny.logits.npy   float32 [45, vocab]: each token's row from the first
                          window that outputs it (rows [0,16) from window 0,
                          [16,28) from window 1, ...)

The forward runs in float64. Window n is plain GPT-2 on its tokens at positions
0..len-1, except that layer l_ins (1-based) gets one extra key and value: c_attn
of ln_1(h_prev) of the window before (none in window 0). After the window,
z = mean over its tokens of sum_l softmax(alpha)_l h^(l) (the L block outputs,
before ln_f), and h_prev = FFN(z) (ReLU between layers, none after the last).

Usage: /usr/bin/python3 tests/memory/gen_recur.py [--out DIR] [--check]
  --check  regenerate in memory and compare with the files in DIR (exit 1 on a
           difference); exit 77 where torch is missing.
"""
import argparse
import math
import os
import sys

try:
    import torch
    import torch.nn.functional as F
except ImportError as e:  # the --check test is skipped (exit 77) where torch is missing
    print("gen_recur.py: %s" % e, file=sys.stderr)
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import gen_goldens  # noqa: E402  (its safetensors and .npy writers)

# models/gpt2_recurrent_tiny.arch (keep in sync): gpt2_tiny with segment 16 and the module.
CFG = dict(vocab=256, d_model=64, heads=4, head_dim=16, ffn=256, layers=2, max_pos=128, eps=1e-5,
           window=16, overlap=4, insert=2, hidden=[24, 24, 24], seed=2024)
NTOKENS = 45


def make_weights(cfg):
    """Name -> float64 tensor (values rounded to fp16: the file stores F16)."""
    g = torch.Generator().manual_seed(cfg["seed"])

    def randn(*shape, std=1.0, mean=0.0):
        return (torch.randn(*shape, generator=g, dtype=torch.float32) * std + mean).half().double()

    V, D, A, Fd = cfg["vocab"], cfg["d_model"], cfg["heads"] * cfg["head_dim"], cfg["ffn"]
    W = {"wte.weight": randn(V, D, std=0.1), "wpe.weight": randn(cfg["max_pos"], D, std=0.05)}
    for i in range(cfg["layers"]):
        p = "h.%d." % i
        for n in ("ln_1", "ln_2"):
            W[p + n + ".weight"] = randn(D, std=0.1, mean=1.0)
            W[p + n + ".bias"] = randn(D, std=0.05)
        W[p + "attn.c_attn.weight"] = randn(D, 3 * A, std=0.08)
        W[p + "attn.c_attn.bias"] = randn(3 * A, std=0.02)
        W[p + "attn.c_proj.weight"] = randn(A, D, std=0.08)
        W[p + "attn.c_proj.bias"] = randn(D, std=0.02)
        W[p + "mlp.c_fc.weight"] = randn(D, Fd, std=0.08)
        W[p + "mlp.c_fc.bias"] = randn(Fd, std=0.02)
        W[p + "mlp.c_proj.weight"] = randn(Fd, D, std=0.08)
        W[p + "mlp.c_proj.bias"] = randn(D, std=0.02)
    W["ln_f.weight"] = randn(D, std=0.1, mean=1.0)
    W["ln_f.bias"] = randn(D, std=0.05)
    W["rec.alpha"] = randn(cfg["layers"], std=0.5)
    widths = [D] + cfg["hidden"] + [D]
    for k in range(len(widths) - 1):  # large enough that h_prev moves the logits visibly
        W["rec.ffn.%d.weight" % k] = randn(widths[k], widths[k + 1], std=1.5 / math.sqrt(widths[k]))
        W["rec.ffn.%d.bias" % k] = randn(widths[k + 1], std=0.1)
    return W


def make_tokens(cfg):
    g = torch.Generator().manual_seed(cfg["seed"] + 7)
    return torch.randint(0, cfg["vocab"], (NTOKENS,), generator=g).tolist()


def window_forward(cfg, W, toks, h_prev):
    """One window: (logits [n, V], the next h_prev [D])."""
    D, H, hd = cfg["d_model"], cfg["heads"], cfg["head_dim"]
    n = len(toks)
    x = W["wte.weight"][torch.tensor(toks)] + W["wpe.weight"][:n]  # positions restart in every window

    def ln(h, p):
        return F.layer_norm(h, (D,), W[p + ".weight"], W[p + ".bias"], cfg["eps"])

    blocks = []
    for i in range(cfg["layers"]):
        p = "h.%d." % i
        qkv = ln(x, p + "ln_1") @ W[p + "attn.c_attn.weight"] + W[p + "attn.c_attn.bias"]
        q, k, v = qkv.split(H * hd, dim=-1)
        allowed = torch.tril(torch.ones(n, n, dtype=torch.bool))
        if i == cfg["insert"] - 1 and h_prev is not None:  # one more key and value, not a query
            extra = ln(h_prev, p + "ln_1") @ W[p + "attn.c_attn.weight"] + W[p + "attn.c_attn.bias"]
            _, kx, vx = extra.split(H * hd, dim=-1)
            k = torch.cat([kx[None], k])
            v = torch.cat([vx[None], v])
            allowed = torch.cat([torch.ones(n, 1, dtype=torch.bool), allowed], dim=1)
        m = k.shape[0]
        q = q.view(n, H, hd).transpose(0, 1)
        k = k.view(m, H, hd).transpose(0, 1)
        v = v.view(m, H, hd).transpose(0, 1)
        s = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
        a = torch.softmax(s.masked_fill(~allowed, float("-inf")), dim=-1) @ v
        x = x + a.transpose(0, 1).reshape(n, H * hd) @ W[p + "attn.c_proj.weight"] + W[p + "attn.c_proj.bias"]
        u = F.gelu(ln(x, p + "ln_2") @ W[p + "mlp.c_fc.weight"] + W[p + "mlp.c_fc.bias"], approximate="tanh")
        x = x + u @ W[p + "mlp.c_proj.weight"] + W[p + "mlp.c_proj.bias"]
        blocks.append(x)
    logits = ln(x, "ln_f") @ W["wte.weight"].t()
    w = torch.softmax(W["rec.alpha"], dim=0)
    z = sum(w[l] * blocks[l].sum(0) for l in range(len(blocks))) / n  # eq. 1, mean-pooled
    nl = len(cfg["hidden"]) + 1
    for j in range(nl):
        z = z @ W["rec.ffn.%d.weight" % j] + W["rec.ffn.%d.bias" % j]
        if j < nl - 1:
            z = F.relu(z)
    return logits, z


def forward(cfg, W, toks):
    """Overlapping windows (§4.2): window n covers [n(T-K), n(T-K)+T) and outputs the rows no earlier one did."""
    T, K, N = cfg["window"], cfg["overlap"], len(toks)
    out = torch.zeros(N, cfg["vocab"], dtype=torch.float64)
    h_prev, done, start = None, 0, 0
    while done < N:
        end = min(start + T, N)
        logits, h_prev = window_forward(cfg, W, toks[start:end], h_prev)
        out[done:end] = logits[done - start:]
        done, start = end, start + T - K
    return out.to(torch.float32)


def generate():
    W = make_weights(CFG)
    toks = make_tokens(CFG)
    meta = {"model": "gpt2_recurrent_tiny", "generator": "tests/memory/gen_recur.py", "seed": str(CFG["seed"])}
    return {
        "recur_tiny.safetensors": gen_goldens.safetensors_bytes(W, meta, "F16"),
        "recur_tiny.tokens": (" ".join(str(t) for t in toks) + "\n").encode(),
        "recur_tiny.logits.npy": gen_goldens.npy_bytes(forward(CFG, W, toks).numpy()),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    files = generate()
    bad = 0
    for name, data in sorted(files.items()):
        path = os.path.join(args.out, name)
        if args.check:
            try:
                with open(path, "rb") as f:
                    same = f.read() == data
            except OSError:
                same = False
            if not same:
                print("gen_recur.py: %s differs from a fresh generation" % path, file=sys.stderr)
                bad += 1
        else:
            with open(path, "wb") as f:
                f.write(data)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
