#!/usr/bin/python3
"""Generates the Transformer-XL goldens in tests/memory/ (docs/attention/relative.md).

For each test model: seeded random weights under the original Transformer-XL
PyTorch names (<model>.safetensors, fp32, nn.Linear weights [out, in]; the
txl_lrm_tiny file carries HF's leading "transformer." on the body's names), a
token file <model>.tokens and <model>.logits.npy: the logits of an independent
forward pass over consecutive segments of `segment` tokens (the last one
shorter) carrying each layer's memory from segment to segment, float32
[N, vocab], and <model>.zeros.logits.npy: the same with the memories starting as
HF TransfoXL's init_mems makes them, m_l zero rows per layer (`--mem-init zeros`; post-norm
models only).

The forward pass is written from the Transformer-XL equations (attn_type 0,
MemTransformerLM): for each layer the keys come from cat(memory, h), the
scores are AC + BD with BD from the projected sinusoids of positions
klen-1 .. 0 and the pad-and-reshape relative shift of the original code, the
mask is triu(1 + mlen) (plus tril(-shift) for same_length), and after the
segment each layer keeps the last m_l rows of cat(memory, layer input). It
shares no code with shortc and runs in float64.

Usage: /usr/bin/python3 tests/memory/gen_txl.py [--out DIR] [--check]
  --check  regenerate in memory and compare with the files in DIR (exit 1 on a
           difference); exit 77 where torch is missing.
"""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gen_goldens import torch, F, golden_files, npy_bytes, run_generators  # noqa: E402 (exits 77 without torch)

# The test models, transcribed from models/*.arch and tests/memory/txl_variants.arch (keep in sync).
BASE = dict(vocab=50, d_model=32, heads=4, head_dim=8, ffn=64, place="post", eps=1e-5, segment=7, layers=2,
            memory=[5, 5], clamp=0, same_length=False, untie=False, prefix="", ntokens=25)
MODELS = {
    "txl_tiny": dict(BASE, seed=2001),
    "txl_lrm_tiny": dict(BASE, segment=6, layers=4, memory=[3, 12, 3, 12], prefix="transformer.", ntokens=27,
                         seed=2002),
    "txl_tiny_pre": dict(BASE, place="pre", clamp=4, same_length=True, untie=True, ntokens=23, seed=2003),
}


def make_weights(cfg):
    g = torch.Generator().manual_seed(cfg["seed"])

    def randn(*shape, std=1.0, mean=0.0):
        return (torch.randn(*shape, generator=g, dtype=torch.float32) * std + mean).contiguous()

    V, D, H, hd, Fd, pre = cfg["vocab"], cfg["d_model"], cfg["heads"], cfg["head_dim"], cfg["ffn"], cfg["prefix"]
    W = {pre + "word_emb.emb_layers.0.weight": randn(V, D, std=0.2)}
    if not cfg["untie"]:
        W[pre + "r_w_bias"] = randn(H, hd, std=0.2)
        W[pre + "r_r_bias"] = randn(H, hd, std=0.2)
    for i in range(cfg["layers"]):
        p = pre + "layers.%d." % i
        W[p + "dec_attn.qkv_net.weight"] = randn(3 * H * hd, D, std=0.15)
        W[p + "dec_attn.r_net.weight"] = randn(H * hd, D, std=0.15)
        W[p + "dec_attn.o_net.weight"] = randn(D, H * hd, std=0.15)
        if cfg["untie"]:
            W[p + "dec_attn.r_w_bias"] = randn(H, hd, std=0.2)
            W[p + "dec_attn.r_r_bias"] = randn(H, hd, std=0.2)
        for ln in ("dec_attn.layer_norm", "pos_ff.layer_norm"):
            W[p + ln + ".weight"] = randn(D, std=0.1, mean=1.0)
            W[p + ln + ".bias"] = randn(D, std=0.1)
        W[p + "pos_ff.CoreNet.0.weight"] = randn(Fd, D, std=0.15)
        W[p + "pos_ff.CoreNet.0.bias"] = randn(Fd, std=0.05)
        W[p + "pos_ff.CoreNet.3.weight"] = randn(D, Fd, std=0.1)
        W[p + "pos_ff.CoreNet.3.bias"] = randn(D, std=0.05)
    W["crit.out_layers.0.bias"] = randn(V, std=0.1)
    return W


def make_tokens(cfg):
    g = torch.Generator().manual_seed(cfg["seed"] + 1)
    return torch.randint(0, cfg["vocab"], (cfg["ntokens"],), generator=g).tolist()


def rel_shift(x):
    """The original _rel_shift: x [qlen, klen, heads]; pad a zero column, reshape, drop the first row."""
    zero_pad = torch.zeros((x.size(0), 1) + x.size()[2:], dtype=x.dtype)
    x_padded = torch.cat([zero_pad, x], dim=1)
    x_padded = x_padded.view((x.size(1) + 1, x.size(0)) + x.size()[2:])
    return x_padded[1:].view_as(x)


def pos_emb(klen, D, clamp):
    pos_seq = torch.arange(klen - 1, -1, -1.0, dtype=torch.float64)
    if clamp > 0:
        pos_seq = pos_seq.clamp(max=clamp)
    inv_freq = 1.0 / (10000 ** (torch.arange(0.0, D, 2.0, dtype=torch.float64) / D))
    sinusoid = torch.outer(pos_seq, inv_freq)
    return torch.cat([sinusoid.sin(), sinusoid.cos()], dim=-1)


def rel_attention(cfg, W, p, uw, ur, h, mem, m):
    """RelPartialLearnableMultiHeadAttn.forward for one sequence: h [qlen, D], mem [mlen, D]."""
    H, hd, D = cfg["heads"], cfg["head_dim"], cfg["d_model"]
    qlen, mlen = h.size(0), mem.size(0)
    cat = torch.cat([mem, h], 0)
    klen = cat.size(0)
    if cfg["place"] == "pre":
        cat = F.layer_norm(cat, (D,), W[p + "dec_attn.layer_norm.weight"], W[p + "dec_attn.layer_norm.bias"], cfg["eps"])
    heads = cat @ W[p + "dec_attn.qkv_net.weight"].t()
    r_head_k = (pos_emb(klen, D, cfg["clamp"]) @ W[p + "dec_attn.r_net.weight"].t()).view(klen, H, hd)
    q, k, v = torch.chunk(heads, 3, dim=-1)
    q, k, v = q[-qlen:].view(qlen, H, hd), k.view(klen, H, hd), v.view(klen, H, hd)
    AC = torch.einsum("ind,jnd->ijn", q + uw, k)
    BD = rel_shift(torch.einsum("ind,jnd->ijn", q + ur, r_head_k))
    score = (AC + BD) * (1.0 / math.sqrt(hd))
    ones = torch.ones(qlen, klen, dtype=torch.bool)
    mask = torch.triu(ones, diagonal=1 + mlen)
    if cfg["same_length"]:
        mask_len = klen - m
        shift = qlen - mask_len if mask_len > 0 else qlen
        mask = mask | torch.tril(ones, diagonal=-shift)
    score = score.masked_fill(mask[:, :, None], float("-inf"))
    prob = torch.softmax(score, dim=1)
    vec = torch.einsum("ijn,jnd->ind", prob, v).reshape(qlen, H * hd)
    return vec @ W[p + "dec_attn.o_net.weight"].t()


def layer(cfg, W, i, h, mem, uw, ur):
    D, eps, pre = cfg["d_model"], cfg["eps"], cfg["prefix"] + "layers.%d." % i

    def ln(x, name):
        return F.layer_norm(x, (D,), W[pre + name + ".weight"], W[pre + name + ".bias"], eps)

    def ff(x):
        y = F.relu(x @ W[pre + "pos_ff.CoreNet.0.weight"].t() + W[pre + "pos_ff.CoreNet.0.bias"])
        return y @ W[pre + "pos_ff.CoreNet.3.weight"].t() + W[pre + "pos_ff.CoreNet.3.bias"]

    a = rel_attention(cfg, W, pre, uw, ur, h, mem, cfg["memory"][i])
    if cfg["place"] == "pre":
        x = h + a
        return x + ff(ln(x, "pos_ff.layer_norm"))
    x = ln(h + a, "dec_attn.layer_norm")
    return ln(x + ff(x), "pos_ff.layer_norm")


def forward(cfg, W, tokens, zeros=False):
    """Consecutive segments through the memories; logits [N, vocab]. zeros: the memories start as HF
    TransfoXL's init_mems makes them, m_l zero rows per layer (the original code starts them empty)."""
    W = {k: v.double() for k, v in W.items()}
    pre, D = cfg["prefix"], cfg["d_model"]
    mems = [torch.zeros(m if zeros else 0, D, dtype=torch.float64) for m in cfg["memory"]]
    out = []
    for s in range(0, len(tokens), cfg["segment"]):
        seg = torch.tensor(tokens[s:s + cfg["segment"]])
        h = W[pre + "word_emb.emb_layers.0.weight"][seg] * math.sqrt(D)
        hids = []
        for i in range(cfg["layers"]):
            hids.append(h)
            if cfg["untie"]:
                uw, ur = W[pre + "layers.%d.dec_attn.r_w_bias" % i], W[pre + "layers.%d.dec_attn.r_r_bias" % i]
            else:
                uw, ur = W[pre + "r_w_bias"], W[pre + "r_r_bias"]
            h = layer(cfg, W, i, h, mems[i], uw, ur)
        for i in range(cfg["layers"]):  # _update_mems: the last m_l rows of cat(mem, layer input)
            m = cfg["memory"][i]
            mems[i] = torch.cat([mems[i], hids[i]], 0)[-m:] if m > 0 else mems[i][:0]
        out.append(h @ W[pre + "word_emb.emb_layers.0.weight"].t() + W["crit.out_layers.0.bias"])
    return torch.cat(out, 0).float()


def generate(name):
    cfg = MODELS[name]
    W = make_weights(cfg)
    toks = make_tokens(cfg)
    files = golden_files(name, W, toks, forward(cfg, W, toks).numpy(), "tests/memory/gen_txl.py", cfg["seed"])
    if cfg["place"] == "post":  # --mem-init zeros (refused for pre-norm LayerNorm: its rings hold normed rows)
        files[name + ".zeros.logits.npy"] = npy_bytes(forward(cfg, W, toks, zeros=True).numpy())
    return files


def main():
    return run_generators(generate, MODELS, os.path.dirname(os.path.abspath(__file__)))


if __name__ == "__main__":
    sys.exit(main())
