#!/usr/bin/env python3
"""gen_masks.py — an independent NumPy implementation of every attention
pattern (docs/attention/*.md), written from the docs and sharing no code with
shortc. Writes tests/attention/masks/M.npy: bool [layers, heads, N, N],
mask[l, h, i, j] = query i of head h in layer l sees key j, for the test
models below (transcribed from models/*_tiny.arch: keep them in sync).
`shortc mask` must produce the same files byte for byte (test attn_masks_*).

    /usr/bin/python3 tests/attention/gen_masks.py           # write the goldens
    /usr/bin/python3 tests/attention/gen_masks.py --check   # compare with the committed ones
"""
import math
import os
import sys

try:
    import numpy as np
except ImportError:  # the --check test is skipped (exit 77) where numpy is missing
    sys.exit(77)

N = 40  # tokens
MASK64 = (1 << 64) - 1

# model: (layers, heads, kind, params) — from models/*_tiny.arch (gpt2_tiny: 2 layers, 4 heads)
MODELS = {
    "gpt2_tiny": (2, 4, "causal", {}),
    "local_tiny": (2, 4, "window", {"size": 20}),
    "longformer_lm_tiny": (2, 4, "dilated", {"size": 4, "size_last": 6, "dilation": 3, "global": 2,
                                             "undilated_heads": 2}),
    "sparse_strided_tiny": (2, 4, "strided", {"stride": 11, "local_heads": 2}),
    "sparse_fixed_tiny": (2, 4, "fixed", {"stride": 8, "c": 3, "local_heads": 2}),
    "bigbird_lm_tiny": (2, 4, "bigbird", {"block": 8, "window": 3, "global": 1, "random": 2, "seed": 3}),
    "gaussian_tiny": (2, 4, "gaussian", {"c": 5, "base": 1, "seed": 11, "self": 0, "tie": 0}),
}


class SplitMix64:
    """splitmix64 (docs/attention/README.md: the generator of seeded patterns)."""

    def __init__(self, s):
        self.s = s & MASK64

    def next(self):
        self.s = (self.s + 0x9E3779B97F4A7C15) & MASK64
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def uniform(self):
        return (self.next() >> 11) * 2.0**-53

    def normal(self):
        u1 = self.uniform()
        u2 = self.uniform()
        return math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(6.283185307179586 * u2)


def stream(seed, layer, head, row):
    r = SplitMix64(seed)
    r.s = r.next() ^ (((layer + 1) * 0xD1B54A32D192ED03) & MASK64)
    r.s = r.next() ^ (((head + 1) * 0x8CB92BA72F3D8DD7) & MASK64)
    r.s = r.next() ^ (((row + 1) * 0xABC98388FB8FAC03) & MASK64)
    return r


def gaussian_keys(seed, layer, head, q, c, base, tie_up):
    i = q + base  # the survey's i: 1-based with base 1
    n = min(c, i)
    used = [False] * i
    r = stream(seed, layer, head, q)
    for _ in range(n):
        while True:
            x = i + 0.5 * i * r.normal()
            if 0.0 <= x < i:
                break
        j = int(math.floor(x))
        dist = 0
        while used[j]:
            order = (j + dist, j - dist) if tie_up else (j - dist, j + dist)
            hit = [a for a in order if 0 <= a < i and not used[a]]
            if hit:
                j = hit[0]
                break
            dist += 1
        used[j] = True
    return [j for j in range(i) if used[j]]


def bigbird_random(seed, layer, head, qb, w, g, r):
    cands = list(range(g, qb - w + 1))
    rng = stream(seed, layer, head, qb)
    picks = []
    for k in range(min(r, len(cands))):
        free = [b for b in cands if b not in picks]
        picks.append(free[int(rng.uniform() * (len(cands) - k))])
    return sorted(picks)


def mask(layers, heads, kind, p, n):
    m = np.zeros((layers, heads, n, n), dtype=bool)
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    causal = j <= i
    d = i - j
    for l in range(layers):
        for h in range(heads):
            if kind == "causal":
                v = causal
            elif kind == "window":
                v = causal & (d < p["size"])
            elif kind == "dilated":
                size = p["size"]  # a ramp: linear from size (layer 0) to size_last (the last layer)
                if p.get("size_last") and layers > 1:
                    size = int(math.floor(p["size"] + (p["size_last"] - p["size"]) * l / (layers - 1) + 0.5))
                dil = 1 if h < p.get("undilated_heads", 0) else p["dilation"]
                v = causal & ((j < p["global"]) | ((d % dil == 0) & (d // dil < size)))
            elif kind == "strided":  # Child et al.'s A1: i - l <= j <= i
                v = causal & ((d <= p["stride"]) if h < p["local_heads"] else (d % p["stride"] == 0))
            elif kind == "fixed":
                s = p["stride"]
                v = causal & ((j // s == i // s) if h < p["local_heads"] else (j % s >= s - p["c"]))
            elif kind == "bigbird":
                b = p["block"]
                w = (p["window"] + 1) // 2  # the centred window's causal half: own block and (w-1)/2 before
                qb, kb = i // b, j // b
                v = causal & ((qb - kb < w) | (kb < p["global"]) | (qb < p["global"]))
                for q in range((n + b - 1) // b):
                    for rb in bigbird_random(p["seed"], l, h, q, w, p["global"], p["random"]):
                        v[q * b:(q + 1) * b, rb * b:(rb + 1) * b] |= causal[q * b:(q + 1) * b, rb * b:(rb + 1) * b]
            elif kind == "gaussian":
                v = np.zeros((n, n), dtype=bool)
                for q in range(n):
                    v[q, gaussian_keys(p["seed"], l, h, q, p["c"], p["base"], p["tie"] == 1)] = True
                    v[q, q] |= p["self"] == 1
            m[l, h] = v
    return m


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "masks")
    check = "--check" in sys.argv[1:]
    bad = 0
    os.makedirs(out, exist_ok=True)
    for name, (layers, heads, kind, p) in MODELS.items():
        m = mask(layers, heads, kind, p, N)
        path = os.path.join(out, name + ".npy")
        if check:
            same = os.path.exists(path) and np.array_equal(np.load(path), m)
            print(("ok   " if same else "FAIL ") + name)
            bad += not same
        else:
            np.save(path, m)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
