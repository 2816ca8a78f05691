#!/usr/bin/python3
"""convert_txl.py CONVERTER: tools/convert_checkpoint.py transformer_xl on an HF TransfoXL-style
state dict (the txl_lrm_tiny golden's tensors, which carry HF's leading "transformer.", plus the
tied crit.out_layers.0.weight), saved as .npz: the output holds every tensor under the names
shortc's `weights transformer_xl` reads (the prefix dropped, r_w_bias, layers.*, the tied table
and crit.out_layers.0.bias), bit for bit, and nothing is left unconverted. Needs numpy only."""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "adaptive"))
from convert_test import convert, read_safetensors  # noqa: E402
import tempfile  # noqa: E402

import numpy as np  # noqa: E402


def main():
    sd = {k: v.astype(np.float32) for k, v in read_safetensors(os.path.join(here, "txl_lrm_tiny.safetensors")).items()}
    sd["crit.out_layers.0.weight"] = sd["transformer.word_emb.emb_layers.0.weight"]
    want = {k[len("transformer."):] if k.startswith("transformer.") else k: v for k, v in sd.items()}
    del want["crit.out_layers.0.weight"]  # tied: shortc reads the table
    with tempfile.TemporaryDirectory() as tmp:
        W, warn = convert(sys.argv[1], "transformer_xl", sd, tmp, "txl_hf")
    ok = sorted(W) == sorted(want) and all(np.array_equal(W[k], want[k]) for k in want) and "not converted" not in warn
    print("%d tensors under Transformer-XL names: %s" % (len(W), "ok" if ok else "MISMATCH"))
    if not ok:
        print("missing:", sorted(set(want) - set(W)), "extra:", sorted(set(W) - set(want)), warn)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
