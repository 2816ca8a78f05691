#!/usr/bin/python3
"""`shortc eval --mode cached` on shortformer_tiny against the PyTorch golden logits.

The total NLL over the N-1 next-token predictions that `shortc eval` prints
(computed in the runtime from its own cached pass) must equal the NLL of the
golden logits of tests/memory/gen_pia.py (pia_tiny.cached.npy), computed here
with NumPy in float64: issue 9's "cached PIA" evaluation against the
independent implementation, which checked itself against the explicit-pattern pass.

Usage: pia_nll.py SHORTC SRCDIR BACKEND   (exit 77 without numpy)
"""
import json
import os
import subprocess
import sys

try:
    import numpy as np
except ImportError as e:
    print("pia_nll.py: %s" % e, file=sys.stderr)
    sys.exit(77)


def golden_nll(mem, logits_file="pia_tiny.cached.npy", tokens_file="pia_tiny.tokens"):
    logits = np.load(os.path.join(mem, logits_file)).astype(np.float64)
    toks = [int(t) for t in open(os.path.join(mem, tokens_file)).read().split()]
    m = logits.max(axis=1, keepdims=True)
    logp = logits - m - np.log(np.exp(logits - m).sum(axis=1, keepdims=True))
    return -sum(logp[i, toks[i + 1]] for i in range(len(toks) - 1)), len(toks) - 1


def check_eval(shortc, src, backend, arch, stem, logits_file):
    """0 when `shortc eval ARCH --mode cached` on tests/memory/STEM.{safetensors,tokens} gives the golden NLL."""
    mem = os.path.join(src, "tests", "memory")
    out = subprocess.run([shortc, "eval", os.path.join(src, arch), "--backend", backend,
                          "--weights", os.path.join(mem, stem + ".safetensors"), "--tokens",
                          os.path.join(mem, stem + ".tokens"), "--mode", "cached", "--json"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        print("shortc eval failed:\n" + out.stdout + out.stderr)
        return 1
    got = json.loads(out.stdout)
    want, n = golden_nll(mem, logits_file, stem + ".tokens")
    print("shortc eval --mode cached: nll %.6f over %d tokens; golden %.6f over %d" % (got["nll"], got["tokens"], want, n))
    return 0 if got["tokens"] == n and abs(got["nll"] - want) <= 1e-4 * n else 1


def main():
    shortc, src, backend = sys.argv[1:4]
    return check_eval(shortc, src, backend, os.path.join("models", "shortformer_tiny.arch"), "pia_tiny",
                      "pia_tiny.cached.npy")

if __name__ == "__main__":
    sys.exit(main())
