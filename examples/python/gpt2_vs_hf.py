#!/usr/bin/env python3
"""A shortc GPT-2 beside Hugging Face transformers' in one script (docs/python.md).

Both models get the same weights (shortc reads the HF state dict as a mapping of PyTorch tensors),
then both score the same tokens: the logits, the per-token NLL and a greedy continuation are compared.

    python3 examples/python/gpt2_vs_hf.py                      # gpt2_tiny with random HF weights
    python3 examples/python/gpt2_vs_hf.py --hf ./gpt2 --arch models/gpt2_small.arch --backend sim
                                                               # a downloaded GPT-2 (config.json + weights)

Exit status 0 when the logits agree within --atol and the greedy tokens are equal, 1 otherwise.
"""
import argparse
import os
import sys

import numpy as np
import torch

import shortc

HERE = os.path.dirname(os.path.abspath(__file__))


def hf_model(args, info):
    """The HF GPT-2: from --hf, or randomly initialised with the .arch's sizes (gpt2_tiny's heads and ffn)."""
    import transformers
    if args.hf:
        return transformers.GPT2LMHeadModel.from_pretrained(args.hf).eval()
    torch.manual_seed(args.seed)
    cfg = transformers.GPT2Config(vocab_size=info["vocab"], n_positions=info["max_positions"], n_embd=info["d_model"],
                                  n_layer=info["n_layers"], n_head=args.heads, n_inner=args.ffn,
                                  activation_function="gelu_new", bos_token_id=info["vocab"] - 1,
                                  eos_token_id=info["vocab"] - 1)
    return transformers.GPT2LMHeadModel(cfg).eval()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default=os.path.join(HERE, "..", "..", "models", "gpt2_tiny.arch"))
    ap.add_argument("--hf", help="a Hugging Face GPT-2 directory (default: random weights of the .arch's size)")
    ap.add_argument("--backend", default="ref", help="ref, sim, cuda or auto (default: ref)")
    ap.add_argument("--heads", type=int, default=4, help="heads of the random HF model (gpt2_tiny: 4)")
    ap.add_argument("--ffn", type=int, default=256, help="feed-forward width of the random HF model (gpt2_tiny: 256)")
    ap.add_argument("--tokens", type=int, default=64, help="prompt length")
    ap.add_argument("--max-new", type=int, default=16, help="greedy tokens to compare")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--atol", type=float, default=1e-3, help="largest logits difference accepted")
    args = ap.parse_args()

    model = shortc.compile(args.arch, backend=args.backend)
    hf = hf_model(args, model.info)
    # the HF state dict as it is: "transformer."-prefixed names, Conv1D weights [in, out] (lm_head is tied to wte)
    state = {k: v for k, v in hf.state_dict().items() if not k.startswith("lm_head")}
    model.load(state)

    rng = np.random.default_rng(args.seed)
    ids = rng.integers(0, model.vocab, size=args.tokens, dtype=np.int64)
    session = model.session()
    ours = session.forward(torch.from_numpy(ids))          # a torch tensor in, a NumPy array out
    with torch.no_grad():
        theirs = hf(torch.from_numpy(ids)[None]).logits[0].float()
    diff = float((torch.from_dlpack(ours) - theirs).abs().max())   # torch.from_dlpack: no copy
    session.reset()
    nll = session.nll(ids)
    ref_nll = torch.nn.functional.cross_entropy(theirs[:-1], torch.from_numpy(ids[1:]), reduction="none").numpy()
    session.reset()
    gen = session.generate(ids, max_new=args.max_new)
    with torch.no_grad():
        hf_gen = hf.generate(torch.from_numpy(ids)[None], max_new_tokens=args.max_new, do_sample=False,
                             pad_token_id=model.vocab - 1)[0, len(ids):].numpy()
    same = gen.tolist() == hf_gen.tolist()
    print("model %s on %s: logits max |diff| %.3g over %d x %d, mean NLL %.6f (shortc) %.6f (HF), "
          "greedy %d tokens %s" % (model.info["name"], session.backend, diff, len(ids), model.vocab, nll.mean(),
                                   ref_nll.mean(), args.max_new, "equal" if same else "DIFFER"))
    return 0 if diff <= args.atol and same else 1


if __name__ == "__main__":
    sys.exit(main())
