#!/usr/bin/python3
"""torch_check.py — `shortc grad` and `shortc train` against PyTorch autograd and torch.optim.

The PyTorch side is an independent GPT-2-style forward (the HF GPT-2 equations, as tests/gen_goldens.py
writes them; masks of sparse kinds from tests/attention/masks/, which tests/attention/gen_masks.py writes
from the docs alone), run in float64 on the fp32 weights of tests/golden/gpt2_tiny.safetensors, so it shares
no code with shortc.

    torch_check.py SHORTC CASE    CASE: grad MODEL | grad-golden MODEL | adamw | sgd
      grad MODEL   every weight's gradient of the mean next-token cross-entropy (one sequence of 37 tokens,
                   and three sequences of 12) equals torch's to 1e-5 relative to the tensor's largest entry
      grad-golden MODEL  the same for a golden model of tests/gen_goldens.py with its own forward
      adamw        5 AdamW steps (warm-up 2 then cosine, clipping 0.5, weight decay 0.1) give torch's weights
                   (|d| <= 1e-5 + 1e-5 |w|), and each step's loss, lr and gradient norm (1e-5 relative)
      sgd          5 SGD steps (momentum 0.9, weight decay 0.01, inverse-sqrt after warm-up 1) likewise
Exit 0 when it holds, 1 when not, 77 (skipped) without torch.
"""
import json
import math
import os
import struct
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import torch
    import torch.nn.functional as F
except ImportError as e:
    print("torch_check.py: %s" % e, file=sys.stderr)
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
GOLDEN = os.path.join(TESTS, "golden")
MODELS = os.path.join(os.path.dirname(TESTS), "models")
MASKS = os.path.join(TESTS, "attention", "masks")
# gpt2_tiny (models/gpt2_tiny.arch): its sparse siblings share its weights
CFG = dict(vocab=256, d_model=64, heads=4, head_dim=16, layers=2, eps=1e-5)
TOL = 1e-5


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        assert t["dtype"] == "F32", (name, t["dtype"])
        a, b = t["data_offsets"]
        out[name] = torch.from_numpy(np.frombuffer(data[a:b], dtype=np.float32).reshape(t["shape"]).copy())
    return out


def read_tokens(path):
    with open(path) as f:
        return [int(x) for x in f.read().split()]


def model_mask(model, T):
    """bool [layers, heads, T, T]: query i sees key j (causal for gpt2_tiny)."""
    if model == "gpt2_tiny":
        m = torch.tril(torch.ones(T, T, dtype=torch.bool))
        return m.expand(CFG["layers"], CFG["heads"], T, T)
    m = torch.from_numpy(np.load(os.path.join(MASKS, model + ".npy")))
    assert m.shape[-1] >= T, "the mask golden is for %d tokens" % m.shape[-1]
    return m[:, :, :T, :T]


def forward(W, ids, mask):
    """GPT-2 pre-norm forward in float64 of one sequence -> logits [T, V]."""
    w = {k: v.to(torch.float64) for k, v in W.items()}
    D, H, hd = CFG["d_model"], CFG["heads"], CFG["head_dim"]
    T = len(ids)
    x = w["wte.weight"][ids] + w["wpe.weight"][:T]

    def ln(h, p):
        return F.layer_norm(h, (D,), w[p + ".weight"], w[p + ".bias"], CFG["eps"])

    for i in range(CFG["layers"]):
        p = "h.%d." % i
        qkv = ln(x, p + "ln_1") @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]
        q, k, v = (t.view(T, H, hd).transpose(0, 1) for t in qkv.split(H * hd, dim=-1))
        s = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
        # a query that sees no key outputs zeros (docs/attention/README.md): its row's softmax is taken over
        # nothing masked and then multiplied by 0, so that no NaN reaches the gradients
        seen = mask[i].any(dim=-1, keepdim=True)
        s = s.masked_fill(~mask[i] & seen, float("-inf"))
        a = ((torch.softmax(s, dim=-1) * seen) @ v).transpose(0, 1).reshape(T, H * hd)
        x = x + a @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
        u = F.gelu(ln(x, p + "ln_2") @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"], approximate="tanh")
        x = x + u @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]
    return ln(x, "ln_f") @ w["wte.weight"].t()


def batch_loss(W, seqs, mask):
    """Mean cross-entropy over every next-token prediction of the sequences."""
    total, count = 0.0, 0
    for s in seqs:
        ids = torch.tensor(s, dtype=torch.long)
        logits = forward(W, ids, mask)
        total = total + F.cross_entropy(logits[:-1], ids[1:], reduction="sum")
        count += len(s) - 1
    return total / count


def close(name, got, want, tol=TOL):
    if not (bool(torch.isfinite(got).all()) and bool(torch.isfinite(want).all())):
        print("FAIL: %s: a value is not finite (shortc %s, torch %s)" % (name, bool(torch.isfinite(got).all()),
                                                                        bool(torch.isfinite(want).all())))
        return False
    scale = max(float(want.abs().max()), 1e-12)
    err = float((got.to(torch.float64) - want.to(torch.float64)).abs().max())
    if err > tol * scale:
        print("FAIL: %s: max |shortc - torch| = %.3e, above %.0e x %.3e" % (name, err, tol, scale))
        return False
    return True


def allclose(name, got, want, atol=TOL, rtol=TOL):
    """Weights after steps: |shortc - torch| <= atol + rtol |torch| element by element (np.allclose). Adam's
    update g / (sqrt(v) + eps) turns the fp32 rounding of a gradient element that is nearly zero (the forward's
    activations are fp32 in shortc, float64 here) into up to ~5e-6 of difference on that element."""
    err = (got.to(torch.float64) - want.to(torch.float64)).abs()
    bad = err > atol + rtol * want.to(torch.float64).abs()
    if bool(bad.any()):
        print("FAIL: %s: %d elements differ, max |shortc - torch| = %.3e" % (name, int(bad.sum()), float(err.max())))
        return False, float(err.max())
    return True, float(err.max())


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print("FAIL: %s exited %d\n%s%s" % (" ".join(cmd), r.returncode, r.stdout, r.stderr))
        sys.exit(1)
    return r.stdout


def check_grad(shortc, model, tmp):
    weights = os.path.join(GOLDEN, "gpt2_tiny.safetensors")
    tokens_path = os.path.join(GOLDEN, "gpt2_tiny.tokens")
    toks = read_tokens(tokens_path)
    ok = True
    for L in (len(toks), 12):
        out = os.path.join(tmp, "g%d.safetensors" % L)
        run([shortc, "grad", os.path.join(MODELS, model + ".arch"), "--weights", weights, "--tokens", tokens_path, "--seq", str(L), "--out", out,
             "--json"])
        got = read_safetensors(out)
        W = {k: v.clone().requires_grad_(True) for k, v in read_safetensors(weights).items()}
        seqs = [toks[i * L:(i + 1) * L] for i in range(len(toks) // L)]
        batch_loss(W, seqs, model_mask(model, L)).backward()
        if set(got) != set(W):
            print("FAIL: gradient names %s, weights %s" % (sorted(got), sorted(W)))
            return False
        worst = 0.0
        for name in sorted(W):
            ok &= close("%s L=%d d/d %s" % (model, L, name), got[name], W[name].grad)
            g = W[name].grad
            worst = max(worst, float((got[name].double() - g).abs().max()) / max(float(g.abs().max()), 1e-12))
        print("%s L=%d: %d gradients checked (max error / tensor max %.2e)" % (model, L, len(W), worst))
    return ok


def check_golden_grad(shortc, model, tmp):
    """A golden model of tests/gen_goldens.py (its forward: layernorm or RMSNorm, pre or post, positions,
    activations, tied or not, fp16 storage) on its golden weights and tokens."""
    sys.path.insert(0, TESTS)
    import gen_goldens
    cfg = gen_goldens.MODELS[model]
    weights = os.path.join(GOLDEN, model + ".safetensors")
    tokens_path = os.path.join(GOLDEN, model + ".tokens")
    toks = read_tokens(tokens_path)
    out = os.path.join(tmp, "g.safetensors")
    run([shortc, "grad", os.path.join(MODELS, model + ".arch"), "--weights", weights, "--tokens", tokens_path, "--out", out])
    got = read_safetensors(out)
    # the leaves are the weights as stored (fp16-rounded for mixed_tiny) in float64, so that no gradient
    # passes through torch's half cast (whose backward rounds it to fp16): the forward rounds nothing more
    W = {k: gen_goldens.stored(v, cfg["wdtype"]).requires_grad_(True) for k, v in read_safetensors(weights).items()}
    logits = gen_goldens.forward(dict(cfg, wdtype="fp32"), W, toks).to(torch.float64)
    ids = torch.tensor(toks, dtype=torch.long)
    F.cross_entropy(logits[:-1], ids[1:]).backward()
    ok, worst = set(got) == set(W), 0.0
    if not ok:
        print("FAIL: gradient names %s, weights %s" % (sorted(got), sorted(W)))
        return False
    for name in sorted(W):
        ok &= close("%s d/d %s" % (model, name), got[name], W[name].grad)
        g = W[name].grad
        worst = max(worst, float((got[name].double() - g).abs().max()) / max(float(g.abs().max()), 1e-12))
    print("%s: %d gradients checked (max error / tensor max %.2e)" % (model, len(W), worst))
    return ok


def lr_factor(k, warmup, steps, schedule):
    """srt_train_lr / lr (docs/training.md), for torch's LambdaLR."""
    if k < warmup:
        return (k + 1) / warmup
    if schedule == "cosine":
        return 0.5 * (1 + math.cos(math.pi * min(1.0, (k - warmup) / max(1, steps - warmup))))
    if schedule == "inverse-sqrt":
        return math.sqrt(max(warmup, 1) / (k + 1))
    return 1.0


def check_steps(shortc, case, tmp):
    weights = os.path.join(GOLDEN, "gpt2_tiny.safetensors")
    tokens_path = os.path.join(GOLDEN, "gpt2_tiny.tokens")
    toks = read_tokens(tokens_path)
    L, B, N = 12, 2, 5
    if case == "adamw":
        opt = dict(optimizer="adamw", lr=1e-2, wd=0.1, warmup=2, schedule="cosine", clip=0.5, momentum=0.0)
    else:
        opt = dict(optimizer="sgd", lr=0.5, wd=0.01, warmup=1, schedule="inverse-sqrt", clip=0.0, momentum=0.9)
    out = os.path.join(tmp, case + ".safetensors")
    cmd = [shortc, "train", os.path.join(MODELS, "gpt2_tiny.arch"), "--init", weights, "--data", tokens_path, "--seq", str(L), "--batch",
           str(B), "--steps", str(N), "--optimizer", opt["optimizer"], "--lr", repr(opt["lr"]), "--weight-decay",
           repr(opt["wd"]), "--warmup", str(opt["warmup"]), "--schedule", opt["schedule"], "--json", "--quiet"]
    if opt["clip"]:
        cmd += ["--clip", repr(opt["clip"])]
    if opt["momentum"]:
        cmd += ["--momentum", repr(opt["momentum"])]
    lines = [json.loads(x) for x in run(cmd + ["--save", out]).splitlines()]
    got = read_safetensors(out)

    W = {k: v.clone().requires_grad_(True) for k, v in read_safetensors(weights).items()}
    params = [W[k] for k in sorted(W)]
    if case == "adamw":
        o = torch.optim.AdamW(params, lr=opt["lr"], weight_decay=opt["wd"])
    else:
        o = torch.optim.SGD(params, lr=opt["lr"], weight_decay=opt["wd"], momentum=opt["momentum"])
    sched = torch.optim.lr_scheduler.LambdaLR(o, lambda k: lr_factor(k, opt["warmup"], N, opt["schedule"]))
    nseq = len(toks) // L
    mask = model_mask("gpt2_tiny", L)
    ok = len(lines) == N
    for k in range(N):
        seqs = [toks[((k * B + b) % nseq) * L:((k * B + b) % nseq + 1) * L] for b in range(B)]
        o.zero_grad()
        loss = batch_loss(W, seqs, mask)
        loss.backward()
        norm = torch.sqrt(sum((p.grad.to(torch.float64) ** 2).sum() for p in params))
        if opt["clip"]:
            torch.nn.utils.clip_grad_norm_(params, opt["clip"])
        lr = o.param_groups[0]["lr"]
        o.step()
        sched.step()
        if ok:
            s = lines[k]
            for what, a, b in (("loss", s["loss"], float(loss)), ("lr", s["lr"], lr), ("grad norm", s["grad_norm"], float(norm))):
                if abs(a - b) > TOL * max(abs(b), 1e-12):
                    print("FAIL: %s step %d: %s %.9g, torch %.9g" % (case, k + 1, what, a, b))
                    ok = False
    worst = 0.0
    for name in sorted(W):
        good, err = allclose("%s weight %s after %d steps" % (case, name, N), got[name], W[name].detach())
        ok &= good
        worst = max(worst, err)
    print("%s: %d steps, %d weights checked (max |shortc - torch| %.2e); losses %s" %
          (case, N, len(W), worst, " ".join("%.5f" % x["loss"] for x in lines)))
    return ok


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    shortc, case = sys.argv[1], sys.argv[2]
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        if case == "grad":
            ok = check_grad(shortc, sys.argv[3], tmp)
        elif case == "grad-golden":
            ok = check_golden_grad(shortc, sys.argv[3], tmp)
        else:
            ok = check_steps(shortc, case, tmp)
    print("ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
