#!/usr/bin/python3
"""adaptive_ref.py DIR: an independent NumPy reference of adaptive input and
adaptive softmax (fairseq AdaptiveInput/AdaptiveSoftmax, Transformer-XL
AdaptiveEmbedding/ProjectedAdaptiveLogSoftmax), written from the checkpoint
semantics and the weight names of docs/language.md, checked against what
tests/adaptive/adaptive_dump.c wrote from the reference interpreter:

  embed.f32     = scale * sum over bands of emb_proj_i(emb_i[tok - lo_i]) + positions
  logprobs.f32  = the adaptive log-softmax of hidden.f32 over the whole vocab

Exit 0 when both agree to 1e-4 (absolute, fp32 storage) and every row of
exp(log-probs) sums to 1."""
import os
import sys

import numpy as np


def load(d):
    man = {"weights": {}}
    with open(os.path.join(d, "manifest.txt")) as f:
        for line in f:
            k, *v = line.split()
            if k == "weight":
                rows, cols = int(v[1]), int(v[2])
                w = np.fromfile(os.path.join(d, v[0] + ".f32"), dtype="<f4").astype(np.float64)
                man["weights"][v[0]] = w.reshape(rows, cols) if cols > 1 else w
            elif k == "cutoffs":
                man[k] = [int(x) for x in v]
            elif k in ("style", "pos_style"):
                man[k] = v[0]
            elif k == "scale":
                man[k] = float(v[0])
            else:
                man[k] = int(v[0])
    return man


def raw(d, name, shape, dtype="<f4"):
    return np.fromfile(os.path.join(d, name), dtype=dtype).reshape(shape).astype(np.float64)


def sinusoid(T, D):
    """shortc's sinusoid: channel c of position p is sin (even c) or cos (odd c) of p / 10000^((c & ~1) / D)."""
    p = np.arange(T)[:, None].astype(np.float64)
    c = np.arange(D)[None, :]
    ang = p / np.power(10000.0, (c & ~1) / D)
    return np.where(c % 2 == 0, np.sin(ang), np.cos(ang))


def fairseq_sinusoid(T, D, padding_idx=1):
    """fairseq's SinusoidalPositionalEmbedding.get_embedding (positions padding_idx + 1 + t, as
    utils.make_positions numbers non-pad tokens): half_dim = D // 2 frequencies
    exp(-i * log(10000) / (half_dim - 1)), sin of all of them then cos of all of them
    (concatenated), a zero column when D is odd."""
    half_dim = D // 2
    emb = np.exp(np.arange(half_dim, dtype=np.float64) * -(np.log(10000.0) / (half_dim - 1)))
    pos = (padding_idx + 1 + np.arange(T, dtype=np.float64))[:, None]
    emb = np.concatenate([np.sin(pos * emb[None, :]), np.cos(pos * emb[None, :])], axis=1)
    if D % 2 == 1:
        emb = np.concatenate([emb, np.zeros((T, 1))], axis=1)
    return emb


def log_softmax(x):
    m = x.max(axis=1, keepdims=True)
    return x - (m + np.log(np.exp(x - m).sum(axis=1, keepdims=True)))


def adaptive_input(m, tokens, W):
    bounds = [0] + m["cutoffs"] + [m["vocab"]]
    out = np.zeros((len(tokens), m["d_model"]))
    for i in range(len(bounds) - 1):
        lo, hi = bounds[i], bounds[i + 1]
        emb, proj = W[f"adaptive.emb.{i}.weight"], W[f"adaptive.emb_proj.{i}.weight"]  # proj: nn.Linear(dim, D)
        for t, tok in enumerate(tokens):
            if lo <= tok < hi:
                out[t] += proj @ emb[tok - lo]
    pos = fairseq_sinusoid if m.get("pos_style") == "fairseq" else sinusoid
    return out * m["scale"] + pos(len(tokens), m["d_model"])


def adaptive_logprob(m, h, W):
    txl = m["style"] == "transformer_xl"
    tied = m["tied"] == 1
    bounds = [0] + m["cutoffs"] + [m["vocab"]]
    n = len(bounds) - 2  # tail clusters

    def table(i):
        return W[f"adaptive.emb.{i}.weight"] if tied else W[f"adaptive.out.{i}.weight"]

    def bias(i):
        return W[f"adaptive.out.{i}.bias"] if txl else 0.0

    def hidden(i):
        if i == 0:
            return h @ W["adaptive.out_proj.0.weight"].T if txl else h
        if tied:  # the input's projection, nn.Linear(dim, D) weight [D, dim], read as h @ P
            return h @ W[f"adaptive.emb_proj.{i}.weight"]
        return h @ W[f"adaptive.out_proj.{i}.weight"].T  # nn.Linear(D, dim)

    h0 = hidden(0)
    clusters = h0 @ W["adaptive.cluster.weight"].T + (W["adaptive.cluster.bias"] if txl else 0.0)
    head = log_softmax(np.concatenate([h0 @ table(0).T + bias(0), clusters], axis=1))
    c0 = bounds[1]
    parts = [head[:, :c0]]
    for i in range(1, n + 1):
        col = c0 + n - i if txl else c0 + i - 1
        parts.append(head[:, col:col + 1] + log_softmax(hidden(i) @ table(i).T + bias(i)))
    return np.concatenate(parts, axis=1)


def main():
    d = sys.argv[1]
    m = load(d)
    T, D, V = m["ntokens"], m["d_model"], m["vocab"]
    tokens = np.fromfile(os.path.join(d, "tokens.i32"), dtype="<i4")
    W = m["weights"]
    ok = True
    emb = adaptive_input(m, tokens, W)
    got = raw(d, "embed.f32", (T, D))
    err = np.abs(emb - got).max()
    print(f"adaptive input: max |numpy - interp| = {err:.3g}")
    ok &= err < 1e-4 * max(1.0, np.abs(emb).max())
    lp = adaptive_logprob(m, raw(d, "hidden.f32", (T, D)), W)
    got = raw(d, "logprobs.f32", (T, V))
    err = np.abs(lp - got).max()
    sums = np.exp(got).sum(axis=1)
    print(f"adaptive softmax: max |numpy - interp| = {err:.3g}, row sums of exp in [{sums.min():.7f}, {sums.max():.7f}]")
    ok &= err < 1e-4 and np.abs(sums - 1).max() < 1e-4
    bands = [0] + m["cutoffs"] + [V]
    hit = {i for t in tokens for i in range(len(bands) - 1) if bands[i] <= t < bands[i + 1]}
    ok &= len(hit) == len(bands) - 1  # the tokens reach every band
    print("ok" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
