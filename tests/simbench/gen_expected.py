#!/usr/bin/python3
"""Inputs and expected outputs of the simulator test bench (tests/simbench/).

Computed with NumPy alone, independently of the simulator and of the CUDA
sources: run `/usr/bin/python3 tests/simbench/gen_expected.py` to rewrite
tests/simbench/data/*.npy (deterministic; the files are committed).
"""
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
rng = np.random.default_rng(10)
np.seterr(over="ignore")  # half conversions of large values overflow to inf, on the GPU too


def save(name, a):
    np.save(os.path.join(OUT, name + ".npy"), np.ascontiguousarray(a))


def f32(a):
    return np.asarray(a, dtype=np.float32)


# transpose: a 45 x 70 matrix
h, w = 45, 70
m = f32(rng.standard_normal((h, w)))
save("transpose_in", m.reshape(-1))
save("transpose_zero", np.zeros(h * w, np.float32))
save("transpose_expected", m.T.reshape(-1))

# block_sum: 1000 values, blocks of 256 (the last one partial)
n, bs = 1000, 256
x = f32(rng.integers(-50, 50, n))  # integers: every summation order is exact
nb = (n + bs - 1) // bs
pad = np.zeros(nb * bs, np.float32)
pad[:n] = x
save("reduce_in", x)
save("reduce_zero", np.zeros(nb, np.float32))
save("reduce_sums", pad.reshape(nb, bs).sum(axis=1).astype(np.float32))
save("reduce_counts", (pad.reshape(nb, bs) > 0).sum(axis=1).astype(np.float32))

# shuffles: 4 warps of 32 lanes
n = 128
v = f32(rng.integers(-20, 20, n))
seg8 = v.reshape(-1, 8)
sums = np.repeat(seg8.sum(axis=1), 8)
scan = np.cumsum(v.reshape(-1, 16), axis=1).reshape(-1)
bcast = np.repeat(seg8[:, 3], 8)
save("shuffle_in", v)
save("shuffle_zero", np.zeros(3 * n, np.float32))
save("shuffle_expected", f32(np.concatenate([sums, scan, bcast])))

# votes: 3 blocks of 16 x 4 threads; linear thread t = y * 16 + x, warp t // 32
blocks, per = 3, 64
vals = rng.integers(-3, 4, blocks * per).astype(np.int32)
vals[0:32] = 1  # a warp where all are true
vals[32:64] = -1  # a warp where none is
exp = np.zeros((blocks * per, 3), np.uint32)
for wbase in range(0, blocks * per, 32):
    p = vals[wbase:wbase + 32] > 0
    ballot = sum(1 << l for l in range(32) if p[l])
    exp[wbase:wbase + 32] = [ballot, int(p.any()), int(p.all())]
save("vote_in", vals)
save("vote_zero", np.zeros(blocks * per * 3, np.uint32))
save("vote_expected", exp.reshape(-1))

# histogram: 5000 values into 64 bins (value & 63)
data = rng.integers(0, 1 << 20, 5000).astype(np.int32)
save("hist_in", data)
save("hist_zero", np.zeros(64, np.uint32))
save("hist_expected", np.bincount(data & 63, minlength=64).astype(np.uint32))

# conversions: half and bfloat16 round trips (round to nearest even), half2 add
n = 300
c = f32(np.concatenate([rng.standard_normal(n - 12) * 100, [0.0, -0.0, 1e-8, 65504.0, 65520.0, 1e5,
                                                            1.0 + 2.0 ** -11, 1.0 + 3 * 2.0 ** -11,
                                                            3.140625, 1.00390625, 1.01171875, -2.5]]))
as_half = c.astype(np.float16).astype(np.float32)
bits = c.view(np.uint32).astype(np.uint64)
bf = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16).astype(np.uint32).view(np.float32)
h2 = (c.astype(np.float16) + c.astype(np.float16)).astype(np.float32)
save("convert_in", c)
save("convert_zero", np.zeros(3 * n, np.float32))
save("convert_expected", f32(np.concatenate([as_half, bf, h2])))

# softmax: 7 rows of 100
r, cols = 7, 100
s = f32(rng.standard_normal((r, cols)) * 3)
e = np.exp(s.astype(np.float64) - s.max(axis=1, keepdims=True))
save("softmax_in", s.reshape(-1))
save("softmax_zero", np.zeros(r * cols, np.float32))
save("softmax_expected", f32(e / e.sum(axis=1, keepdims=True)).reshape(-1))

# fault cases
save("fault_1001", np.zeros(1001, np.float32))
save("fault_64", np.zeros(64, np.float32))
save("fault_twos", np.full(1001, 2.0, np.float32))
save("fault_2d", np.zeros((4, 4), np.float32))

# in_bounds (underruns.cu): 33 threads on the first 33 of reduce_in's values;
# thread 0 copies s[30:33] over s[0:3] before the last step
x = np.load(os.path.join(OUT, "reduce_in.npy"))
s = x[:33].copy()
s[0:3] = s[30:33]
ib = x.copy()
ib[:33] = (x[:33] + f32(1.0)) + s[(np.arange(33) + 32) % 33]
save("in_bounds_expected", f32(ib))
