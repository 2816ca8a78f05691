#!/usr/bin/env python3
"""fd_check.py SHORTC MODEL.arch — `shortc grad` against central finite differences of the loss that
`shortc grad --json` prints, for any fp32 model (no PyTorch needed): for every weight tensor, its element
of largest gradient and one element drawn at random are moved by +-h in a copy of the weights file, and
(L(w+h) - L(w-h)) / 2h must equal the gradient to 1e-4 + 1e-2 |g| (the forward's fp32 rounding bounds what
a difference quotient can resolve). Used for the ops no PyTorch reference covers yet: adaptive input and
softmax (embed_band, pos_add, adaptive_logprob) and their tied projections stored in two layouts.
"""
import json
import os
import random
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOKENS = os.path.join(os.path.dirname(HERE), "golden", "gpt2_tiny.tokens")
H = 1e-2


def read(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = bytearray(f.read())
    return n, header, data


def floats(header, data, name):
    a, b = header[name]["data_offsets"]
    return struct.unpack("<%df" % ((b - a) // 4), bytes(data[a:b]))


def write_with(path, n, header_bytes, data, offset, value):
    d = bytearray(data)
    struct.pack_into("<f", d, offset, value)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", n))
        f.write(header_bytes)
        f.write(d)


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print("FAIL: %s exited %d: %s" % (" ".join(cmd), r.returncode, r.stderr))
        sys.exit(1)
    return r.stdout


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    shortc, model = sys.argv[1], sys.argv[2]
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        w, g, wp = (os.path.join(tmp, x + ".safetensors") for x in ("w", "g", "wp"))
        toks = os.path.join(tmp, "t.tokens")
        with open(TOKENS) as f:
            with open(toks, "w") as o:
                o.write(" ".join(f.read().split()[:24]) + "\n")
        run([shortc, "run", model, "--backend", "ref", "--random-weights", "5", "--save-weights", w, "--tokens", toks])
        grad = lambda weights, out: json.loads(run([shortc, "grad", model, "--weights", weights, "--tokens", toks,
                                                    "--out", out, "--json"]))["loss"]
        grad(w, g)
        n, header, data = read(w)
        with open(w, "rb") as f:
            f.seek(8)
            header_bytes = f.read(n)
        _, gheader, gdata = read(g)
        ok, checked, worst = True, 0, 0.0
        for name in sorted(k for k in header if k != "__metadata__"):
            gv = floats(gheader, gdata, name)
            wv = floats(header, data, name)
            big = max(range(len(gv)), key=lambda i: abs(gv[i]))
            for i in sorted({big, rng.randrange(len(gv))}):
                off = header[name]["data_offsets"][0] + 4 * i
                write_with(wp, n, header_bytes, data, off, wv[i] + H)
                up = grad(wp, os.path.join(tmp, "unused.safetensors"))
                write_with(wp, n, header_bytes, data, off, wv[i] - H)
                down = grad(wp, os.path.join(tmp, "unused.safetensors"))
                fd = (up - down) / (2 * H)
                err = abs(fd - gv[i])
                worst = max(worst, err / (1e-4 + 1e-2 * abs(gv[i])))
                checked += 1
                if os.environ.get("FD_VERBOSE"): print(name, i, gv[i], fd)
                if err > 1e-4 + 1e-2 * abs(gv[i]):
                    print("FAIL: %s[%d]: shortc grad %.6g, finite difference %.6g" % (name, i, gv[i], fd))
                    ok = False
    print("%s: %d elements of %d tensors checked (worst |fd - g| / (1e-4 + 1e-2 |g|) = %.2f)" %
          (os.path.basename(model), checked, len([k for k in header if k != "__metadata__"]), worst))
    print("ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
