#!/usr/bin/python3
"""`shortc eval --mode cached` on txl_tiny against the PyTorch golden logits.

The total NLL over the N-1 next-token predictions that `shortc eval` prints
(the runtime's own cached pass, memories carried across segments) must equal
the NLL of the golden logits of tests/memory/gen_txl.py (txl_tiny.logits.npy),
computed with NumPy in float64 (tests/memory/pia_nll.py's check).

Usage: txl_nll.py SHORTC SRCDIR BACKEND   (exit 77 without numpy)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pia_nll  # noqa: E402  (exits 77 without numpy)

if __name__ == "__main__":
    shortc, src, backend = sys.argv[1:4]
    sys.exit(pia_nll.check_eval(shortc, src, backend, os.path.join("models", "txl_tiny.arch"), "txl_tiny",
                                "txl_tiny.logits.npy"))
