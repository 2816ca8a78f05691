#!/usr/bin/python3
"""convert_recur.py SHORTC CONVERTER: tools/convert_checkpoint.py recurrence on a PyTorch checkpoint.

Builds, with torch, what a PyTorch user of Yoshida et al.'s recurrence would save: an HF
GPT2LMHeadModel state dict ("transformer." names, the tied lm_head.weight, the attn.bias mask
buffers) of the recur_tiny golden's GPT-2 weights, plus a recurrence nn.Module under
"recurrence." (alpha and an nn.Sequential ffn of nn.Linear [out, in] layers with ReLUs between:
keys ffn.0, ffn.2, ffn.4, ffn.6) holding its rec.* weights; torch.save's it, converts it, and runs
`shortc run models/gpt2_recurrent_tiny.arch` on the result: the logits must be the golden's
(tests/memory/recur_tiny.logits.npy, 1e-4) and nothing may be left unconverted. A checkpoint whose
layers do not chain from d_model back to d_model is refused with a message. Exit 77 without torch.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import torch
except ImportError as e:
    print("convert_recur.py: %s: skipped" % e)
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "..")


def read_safetensors(path):
    """Name -> float32 array (F16 or F32 entries)."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    kinds = {"F16": "<f2", "F32": "<f4"}
    return {k: np.frombuffer(data[v["data_offsets"][0]:v["data_offsets"][1]], dtype=kinds[v["dtype"]])
            .reshape(v["shape"]).astype(np.float32) for k, v in header.items() if k != "__metadata__"}


def checkpoint(w):
    """The torch state dict: GPT-2 under HF's names, the module under 'recurrence.'."""
    sd = {"transformer." + k: torch.from_numpy(v.copy()) for k, v in w.items() if not k.startswith("rec.")}
    sd["lm_head.weight"] = sd["transformer.wte.weight"]
    layers = 0
    while "transformer.h.%d.ln_1.weight" % layers in sd:
        sd["transformer.h.%d.attn.bias" % layers] = torch.tril(torch.ones(1, 1, 128, 128))
        layers += 1
    nffn = sum(1 for k in w if k.startswith("rec.ffn.") and k.endswith(".weight"))
    mods = []
    for j in range(nffn):
        wt = w["rec.ffn.%d.weight" % j]  # [in, out]
        lin = torch.nn.Linear(wt.shape[0], wt.shape[1])
        with torch.no_grad():
            lin.weight.copy_(torch.from_numpy(wt.T.copy()))
            lin.bias.copy_(torch.from_numpy(w["rec.ffn.%d.bias" % j].copy()))
        mods += [lin, torch.nn.ReLU()] if j + 1 < nffn else [lin]
    module = torch.nn.Module()
    module.alpha = torch.nn.Parameter(torch.from_numpy(w["rec.alpha"].copy()))
    module.ffn = torch.nn.Sequential(*mods)
    sd.update({"recurrence." + k: v for k, v in module.state_dict().items()})
    return sd


def main():
    shortc, conv = sys.argv[1], sys.argv[2]
    w = read_safetensors(os.path.join(HERE, "recur_tiny.safetensors"))
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        pt, out, logits = (os.path.join(tmp, n) for n in ("model.pt", "w.safetensors", "l.npy"))
        torch.save(checkpoint(w), pt)
        r = subprocess.run([sys.executable, conv, "recurrence", pt, out], capture_output=True, text=True)
        print(r.stdout + r.stderr, end="")
        if r.returncode != 0 or "not converted" in r.stderr:
            print("FAIL: the conversion failed or left keys unconverted")
            return 1
        got = read_safetensors(out)
        same = sorted(got) == sorted(w) and all(np.array_equal(got[k], w[k]) for k in w)
        print("%d tensors under shortc's names: %s" % (len(got), "ok" if same else "MISMATCH"))
        ok &= same
        run = [shortc, "run", os.path.join(SRC, "models", "gpt2_recurrent_tiny.arch"), "--backend", "ref",
               "--weights", out, "--tokens", os.path.join(HERE, "recur_tiny.tokens"), "--logits", logits]
        r = subprocess.run(run, capture_output=True, text=True)
        cmp = subprocess.run([shortc, "cmp", logits, os.path.join(HERE, "recur_tiny.logits.npy"), "--atol", "1e-4",
                              "--rtol", "1e-4"], capture_output=True, text=True) if r.returncode == 0 else r
        print("shortc run on the converted weights == golden: %s" % ("ok" if cmp.returncode == 0 else
                                                                     "FAIL " + cmp.stdout + cmp.stderr))
        ok &= cmp.returncode == 0
        bad = checkpoint(w)  # a last layer that does not return to d_model
        bad["recurrence.ffn.6.weight"] = bad["recurrence.ffn.6.weight"][:8]
        bad["recurrence.ffn.6.bias"] = bad["recurrence.ffn.6.bias"][:8]
        torch.save(bad, pt)
        r = subprocess.run([sys.executable, conv, "recurrence", pt, out], capture_output=True, text=True)
        refused = r.returncode == 1 and "h_prev needs d_model" in r.stderr
        print("a module not ending at d_model is refused: %s %s" % ("ok" if refused else "FAIL", r.stderr.strip()))
        ok &= refused
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
