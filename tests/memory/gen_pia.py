#!/usr/bin/python3
"""PyTorch goldens of Shortformer's position-infused attention (docs/attention/pia.md).

An independent implementation written from the paper (seeds/000 §5, Figure 1(c))
and fairseq's conventions, sharing no code with shortc: every layer caches its
normed inputs of the last L' tokens and, each segment, re-projects them
(W_k (x + p), W_v x) as fairseq's Shortformer does; positions are re-assigned
per call (cached tokens slots 0..c-1, new ones c..c+n-1). The weights,
tokens and the weight generator are those of tests/gen_goldens.py.

Writes into tests/memory/:
  pia_tiny.safetensors, pia_tiny.tokens   weights (HF GPT-2 names, no wpe) and 50 tokens
  pia_tiny.cached.npy                     shortformer_tiny, segments of 16 through the cache
  pia_tiny.tokenwise.npy                  one token per call through the cache (the window grows through each
                                          segment of 16: cached evaluation's pattern)
  pia_tiny_vaswani.cached.npy             the same with Vaswani-style positions (pia_vaswani_tiny.arch)
  pia_tiny_nopia.cached.npy               the cache without PIA (pia_nopia_tiny.arch): fairseq positions
                                          0..15 on each segment's embeddings, the cache of the segment before

Before writing, it checks the cached pass (segments of 16) and the
token-by-token pass (one query per call, the window growing through each
segment as in the authors' code) each against a second computation: one
pass over all tokens with cached evaluation's explicit pattern (each query's
visible keys and their position slots written out, in every layer), and
exits 1 if they differ.

Usage: /usr/bin/python3 tests/memory/gen_pia.py [--out DIR] [--check]
  --check  regenerate in memory and compare with the files in DIR (exit 1 on a difference);
           exit 77 where torch is missing.
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import gen_goldens as gg  # noqa: E402  (exits 77 without torch)
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

# shortformer_tiny (models/shortformer_tiny.arch: gpt2_tiny's block, no learned positions)
CFG = dict(vocab=256, d_model=64, heads=4, head_dim=16, ffn=256, act="gelu_tanh", norm="layernorm",
           place="pre", eps=1e-5, pos="none", max_pos=0, tied=True, layers=2, wdtype="fp32", seed=1008)
SEGMENT, CACHE, NTOKENS = 16, 16, 50


def positions(style, slots, D):
    """[slots, D] position codes of slots 0..slots-1."""
    if style == "fairseq":  # padding_idx 1: the first position is 2; sin half then cos half
        half = D // 2
        freq = torch.exp(torch.arange(half, dtype=torch.float64) * -(math.log(10000.0) / (half - 1)))
        ang = (torch.arange(slots, dtype=torch.float64) + 2)[:, None] * freq[None, :]
        pe = torch.cat([torch.sin(ang), torch.cos(ang)], dim=1)
        return F.pad(pe, (0, D - 2 * half))
    ang = torch.arange(slots, dtype=torch.float64)[:, None] / torch.pow(
        torch.tensor(10000.0, dtype=torch.float64), torch.arange(0, D, 2, dtype=torch.float64) / D)
    pe = torch.zeros(slots, D, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(ang)
    pe[:, 1::2] = torch.cos(ang)[:, : D // 2]
    return pe


class Model:
    def __init__(self, W, style):
        self.w = {k: v.to(torch.float64) for k, v in W.items()}
        self.style = style
        self.D, self.H, self.hd = CFG["d_model"], CFG["heads"], CFG["head_dim"]

    def ln(self, x, p):
        return F.layer_norm(x, (self.D,), self.w[p + ".weight"], self.w[p + ".bias"], CFG["eps"])

    def proj(self, x, p, part):  # part 0 q, 1 k, 2 v of c_attn
        HD = self.H * self.hd
        return x @ self.w[p + "attn.c_attn.weight"][:, part * HD:(part + 1) * HD] + \
            self.w[p + "attn.c_attn.bias"][part * HD:(part + 1) * HD]

    def attend(self, q, k, v, visible):
        """q [n, HD], k/v [m, HD] per query row i: visible[i] a bool [m]."""
        H, hd = self.H, self.hd
        qh, kh, vh = (t.view(t.shape[0], H, hd).transpose(0, 1) for t in (q, k, v))
        s = qh @ kh.transpose(-1, -2) / math.sqrt(hd)
        s = s.masked_fill(~visible[None], float("-inf"))
        return (torch.softmax(s, -1) @ vh).transpose(0, 1).reshape(q.shape[0], H * hd)

    def block_tail(self, x, a, p):
        x = x + a @ self.w[p + "attn.c_proj.weight"] + self.w[p + "attn.c_proj.bias"]
        u = F.gelu(self.ln(x, p + "ln_2") @ self.w[p + "mlp.c_fc.weight"] + self.w[p + "mlp.c_fc.bias"],
                   approximate="tanh")
        return x + u @ self.w[p + "mlp.c_proj.weight"] + self.w[p + "mlp.c_proj.bias"]

    def logits(self, x):
        return self.ln(x, "ln_f") @ self.w["wte.weight"].t()

    def cached(self, tokens, call, cache):
        """Calls of `call` tokens (cut at segment ends) through per-layer caches, as the authors' code runs
        it: a layer holds the normed inputs of the last `cache` tokens before the segment plus the segment's
        so far (the window grows from L'+1 to L'+L), and keeps only the last `cache` when the segment ends."""
        held = [torch.zeros(0, self.D, dtype=torch.float64) for _ in range(CFG["layers"])]
        rows, s = [], 0
        while s < len(tokens):
            n = min(call, SEGMENT - s % SEGMENT, len(tokens) - s)
            ids = torch.tensor(tokens[s:s + n])
            x = self.w["wte.weight"][ids]
            for i in range(CFG["layers"]):
                p = "h.%d." % i
                h = self.ln(x, p + "ln_1")
                ctx = torch.cat([held[i], h])  # slots 0..c+n-1
                c = held[i].shape[0]
                pe = positions(self.style, c + n, self.D)
                q, k, v = self.proj(h + pe[c:], p, 0), self.proj(ctx + pe, p, 1), self.proj(ctx, p, 2)
                visible = torch.arange(c + n)[None, :] <= (c + torch.arange(n))[:, None]
                x = self.block_tail(x, self.attend(q, k, v, visible), p)
                end = (s + n) % SEGMENT == 0
                held[i] = ctx if not end else ctx[max(0, c + n - cache):] if cache > 0 else ctx[:0]
            rows.append(self.logits(x))
            s += n
        return torch.cat(rows).to(torch.float32)

    def cached_nopia(self, tokens, cache):
        """Shortformer's cache without PIA: segments of L embedded with positions 0..n-1 (fairseq
        sinusoids on the embeddings, as in nonoverlapping evaluation), each layer attending to the normed
        inputs of the last `cache` tokens of earlier segments, as computed in their own segment (their
        positions inside them), and the segment's own, causally; nothing positional is added per layer."""
        held = [torch.zeros(0, self.D, dtype=torch.float64) for _ in range(CFG["layers"])]
        rows = []
        for s in range(0, len(tokens), SEGMENT):
            ids = torch.tensor(tokens[s:s + SEGMENT])
            n = len(ids)
            x = self.w["wte.weight"][ids] + positions(self.style, n, self.D)
            for i in range(CFG["layers"]):
                p = "h.%d." % i
                h = self.ln(x, p + "ln_1")
                ctx = torch.cat([held[i], h])
                c = held[i].shape[0]
                q, k, v = self.proj(h, p, 0), self.proj(ctx, p, 1), self.proj(ctx, p, 2)
                visible = torch.arange(c + n)[None, :] <= (c + torch.arange(n))[:, None]
                x = self.block_tail(x, self.attend(q, k, v, visible), p)
                held[i] = ctx[max(0, c + n - cache):]
            rows.append(self.logits(x))
        return torch.cat(rows).to(torch.float32)

    def explicit(self, tokens, chunk, cache):
        """One pass over every token: query i of segment s sees tokens [w_i, i], w_i = max(0, s*chunk - cache),
        its key j at slot j - w_i and itself at slot i - w_i, all written out per query."""
        N = len(tokens)
        x = self.w["wte.weight"][torch.tensor(tokens)]
        start = [max(0, (i // chunk) * chunk - cache) for i in range(N)]
        for li in range(CFG["layers"]):
            p = "h.%d." % li
            h = self.ln(x, p + "ln_1")
            a = torch.zeros(N, self.H * self.hd, dtype=torch.float64)
            for i in range(N):
                w0 = start[i]
                pe = positions(self.style, i - w0 + 1, self.D)
                q = self.proj(h[i:i + 1] + pe[-1:], p, 0)
                k, v = self.proj(h[w0:i + 1] + pe, p, 1), self.proj(h[w0:i + 1], p, 2)
                a[i] = self.attend(q, k, v, torch.ones(1, i - w0 + 1, dtype=torch.bool))[0]
            x = self.block_tail(x, a, p)
        return self.logits(x).to(torch.float32)


def generate():
    W = gg.make_weights(CFG)
    g = torch.Generator().manual_seed(CFG["seed"] + 7)
    toks = torch.randint(0, CFG["vocab"], (NTOKENS,), generator=g).tolist()
    fs, va = Model(W, "fairseq"), Model(W, "vaswani")
    cached = fs.cached(toks, SEGMENT, CACHE)
    explicit = fs.explicit(toks, SEGMENT, CACHE)
    err = (cached - explicit).abs().max().item()
    if err > 1e-5:
        print("gen_pia.py: the cached pass and the explicit-pattern pass differ by %g" % err, file=sys.stderr)
        sys.exit(1)
    print("cached == explicit pattern (max diff %.2g)" % err)
    # token by token (the authors' way) has the pattern of cached evaluation: segments of L, not calls of 1
    tokenwise = fs.cached(toks, 1, CACHE)
    err1 = (tokenwise - explicit).abs().max().item()
    if err1 > 1e-5:
        print("gen_pia.py: the token-by-token pass and the cached explicit pattern differ by %g" % err1, file=sys.stderr)
        sys.exit(1)
    print("token by token == cached explicit pattern (max diff %.2g)" % err1)
    meta = {"model": "shortformer_tiny", "generator": "tests/memory/gen_pia.py", "seed": str(CFG["seed"])}
    return {
        "pia_tiny.safetensors": gg.safetensors_bytes(W, meta),
        "pia_tiny.tokens": (" ".join(str(t) for t in toks) + "\n").encode(),
        "pia_tiny.cached.npy": gg.npy_bytes(cached.numpy()),
        "pia_tiny.tokenwise.npy": gg.npy_bytes(tokenwise.numpy()),
        "pia_tiny_vaswani.cached.npy": gg.npy_bytes(va.cached(toks, SEGMENT, CACHE).numpy()),
        "pia_tiny_nopia.cached.npy": gg.npy_bytes(fs.cached_nopia(toks, CACHE).numpy()),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(1)
    return 1 if gg.write_or_check(generate(), args.out, args.check) else 0


if __name__ == "__main__":
    sys.exit(main())
