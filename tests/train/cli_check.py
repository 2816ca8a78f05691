#!/usr/bin/env python3
"""cli_check.py SHORTC CASE — `shortc train` and `shortc grad` from the command line (no numpy needed).

  loss     30 AdamW steps of gpt2_tiny from seeded random weights on tests/golden/gpt2_tiny.tokens: the mean
           loss of the last 5 steps is below 60% of the first 5's, each step's JSON line is complete, the lr
           follows warm-up then cosine, and the saved file loads back (`shortc eval` on it gives a finite loss
           below the first step's)
  freeze   --freeze 'h.0.*' --freeze wpe.weight: those tensors' bytes in the saved file equal the initial
           file's, and every other tensor changed
  errors   bad flags and inputs give a clear message and the documented exit status, and write nothing
  stages   --stages 8:3,16:2: the length changes after step 3, the first stage's losses equal a plain --seq 8
           run's, the stream continues across stages, and cosine decays over all 5 steps
  fairseq  --schedule fairseq: each step's lr equals fairseq's InverseSquareRootSchedule (written out here)
  valid    --valid with --valid-every: a validation line after steps 2 and 4; the last equals `shortc eval` of
           the saved weights under the same mode (gpt2_tiny sliding, mixed_tiny fp16 by default)
  scaling  --loss-scale on fp16 mixed_tiny: an overflowing first step is skipped, the scale follows GradScaler's
           update (backoff, growth after the interval), and the weights equal bitwise an unscaled run of as many
           updates on the same batch (a power-of-two scale is exact)
"""
import json
import math
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(os.path.dirname(HERE), "golden")
MODELS = os.path.join(os.path.dirname(os.path.dirname(HERE)), "models")


def arch(name):
    """The bundled model's .arch (the tests run from any directory)."""
    return os.path.join(MODELS, name + ".arch")

TOKENS = os.path.join(GOLDEN, "gpt2_tiny.tokens")
WEIGHTS = os.path.join(GOLDEN, "gpt2_tiny.safetensors")


def tensors(path):
    """name -> raw bytes of each tensor of a safetensors file."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    return {k: data[v["data_offsets"][0]:v["data_offsets"][1]] for k, v in header.items() if k != "__metadata__"}


def run(args):
    return subprocess.run(args, capture_output=True, text=True)


def fail(msg):
    print("FAIL: " + msg)
    return False


def check_loss(shortc, tmp):
    out = os.path.join(tmp, "trained.safetensors")
    r = run([shortc, "train", arch("gpt2_tiny"), "--seed", "3", "--data", TOKENS, "--seq", "16", "--batch", "2",
             "--steps", "30", "--lr", "3e-3", "--warmup", "5", "--schedule", "cosine", "--clip", "1",
             "--json", "--quiet", "--save", out])
    if r.returncode != 0:
        return fail("train exited %d: %s" % (r.returncode, r.stderr))
    steps = [json.loads(x) for x in r.stdout.splitlines()]
    if len(steps) != 30 or [s["step"] for s in steps] != list(range(1, 31)):
        return fail("expected 30 JSON step lines, got %r" % r.stdout[:300])
    for s in steps:
        if not all(k in s for k in ("loss", "lr", "grad_norm", "tokens", "tokens_per_s")) or s["tokens"] != 32:
            return fail("incomplete step line %r" % s)
    first = sum(s["loss"] for s in steps[:5]) / 5
    last = sum(s["loss"] for s in steps[-5:]) / 5
    print("loss: first 5 steps %.4f, last 5 %.4f (ln 256 = %.4f)" % (first, last, math.log(256)))
    if not last < 0.6 * first:
        return fail("the loss did not decrease: %.4f -> %.4f" % (first, last))
    want = [3e-3 * (k + 1) / 5 if k < 5 else 3e-3 * 0.5 * (1 + math.cos(math.pi * (k - 5) / 25)) for k in range(30)]
    if any(abs(s["lr"] - w) > 1e-12 for s, w in zip(steps, want)):
        return fail("lr schedule %r, expected %r" % ([s["lr"] for s in steps], want))
    e = run([shortc, "eval", arch("gpt2_tiny"), "--backend", "ref", "--weights", out, "--tokens", TOKENS, "--json"])
    if e.returncode != 0:
        return fail("eval of the saved weights exited %d: %s" % (e.returncode, e.stderr))
    nll = json.loads(e.stdout)["nll"] / json.loads(e.stdout)["tokens"]
    print("eval of the saved weights: %.4f nats/token" % nll)
    if not (math.isfinite(nll) and nll < steps[0]["loss"]):
        return fail("the saved weights score %.4f, not below the first step's %.4f" % (nll, steps[0]["loss"]))
    return True


def check_freeze(shortc, tmp):
    out = os.path.join(tmp, "frozen.safetensors")
    r = run([shortc, "train", arch("gpt2_tiny"), "--init", WEIGHTS, "--data", TOKENS, "--seq", "12", "--batch", "2",
             "--steps", "3", "--lr", "1e-2", "--weight-decay", "0.1", "--freeze", "h.0.*", "--freeze", "wpe.weight",
             "--quiet", "--save", out])
    if r.returncode != 0:
        return fail("train --freeze exited %d: %s" % (r.returncode, r.stderr))
    before, after = tensors(WEIGHTS), tensors(out)
    if set(before) != set(after):
        return fail("saved names %s differ from %s" % (sorted(after), sorted(before)))
    frozen = [k for k in before if k.startswith("h.0.") or k == "wpe.weight"]
    ok = len(frozen) == 13
    for k in sorted(before):
        same = before[k] == after[k]
        if (k in frozen) != same:
            ok = fail("%s is %s" % (k, "unchanged though trainable" if same else "changed though frozen"))
    print("freeze: %d frozen tensors bitwise unchanged, %d trained" % (len(frozen), len(before) - len(frozen)))
    return ok


# (arguments after `shortc`, exit status, a piece of the message)
ERRORS = [
    (["train", arch("gpt2_tiny"), "--data", TOKENS, "--seq", "12", "--stages", "8:2", "--batch", "2", "--save", "OUT"], 2,
     "--stages gives the lengths and steps"),
    (["train", arch("gpt2_tiny"), "--data", TOKENS, "--stages", "8:0", "--batch", "2", "--save", "OUT"], 2,
     "--stages '8:0': expected L1:N1,L2:N2"),
    (["train", arch("gpt2_tiny"), "--data", TOKENS, "--stages", "8:2,", "--batch", "2", "--save", "OUT"], 2,
     "expected L1:N1,L2:N2"),
    (["train", arch("gpt2_tiny"), "--data", TOKENS, "--stages", "8:2,200:1", "--batch", "1", "--save", "OUT"], 2,
     "sequence length 200 is longer than the model's segment (128)"),
    (["train", arch("gpt2_tiny"), "--data", TOKENS, "--seq", "8", "--steps", "2", "--batch", "2", "--save", "OUT",
      "--valid-every", "2"], 2, "--valid-every and --mode need --valid TOKENS"),
    (["train", arch("gpt2_tiny"), "--data", TOKENS, "--seq", "8", "--steps", "2", "--batch", "2", "--save", "OUT",
      "--valid", TOKENS, "--mode", "bogus"], 2, "unknown mode 'bogus'"),
    (["train", arch("gpt2_tiny"), "--data", TOKENS, "--seq", "8", "--steps", "2", "--batch", "2", "--save", "OUT",
      "--valid", "NO_VALID.tokens"], 3, "NO_VALID.tokens"),
    (["train", arch("gpt2_tiny"), "--data", TOKENS, "--seq", "8", "--steps", "2", "--batch", "2", "--save", "OUT",
      "--schedule", "fairseq"], 2, "--schedule fairseq needs --warmup of at least 1"),
    (["train", arch("gpt2_tiny"), "--data", TOKENS, "--seq", "8", "--steps", "2", "--batch", "2", "--save", "OUT",
      "--loss-scale", "1024", "--scale-backoff", "1.5"], 2, "--scale-backoff in (0, 1)"),
    (["train", arch("gpt2_tiny"), "--data", TOKENS, "--seq", "12", "--batch", "2", "--steps", "2"], 2, "needs --save"),
    (["train", arch("gpt2_tiny"), "--data", TOKENS, "--seq", "12", "--batch", "2", "--save", "OUT"], 2, "--steps N"),
    (["train", arch("gpt2_tiny"), "--seq", "12", "--batch", "2", "--steps", "2", "--save", "OUT"], 2, "--data TOKENS"),
    (["train", arch("gpt2_tiny"), "--data", TOKENS, "--seq", "1", "--batch", "2", "--steps", "2", "--save", "OUT"], 2,
     "--seq '1': expected a whole number from 2"),
    (["train", arch("gpt2_tiny"), "--data", TOKENS, "--seq", "12", "--batch", "0", "--steps", "2", "--save", "OUT"], 2,
     "--batch '0'"),
    (["train", arch("gpt2_tiny"), "--data", TOKENS, "--seq", "12", "--batch", "2", "--steps", "2", "--save", "OUT",
      "--optimizer", "adam"], 2, "expected adamw or sgd"),
    (["train", arch("gpt2_tiny"), "--data", TOKENS, "--seq", "12", "--batch", "2", "--steps", "2", "--save", "OUT",
      "--schedule", "linear"], 2, "expected constant, cosine, inverse-sqrt or fairseq"),
    (["train", arch("gpt2_tiny"), "--data", TOKENS, "--seq", "12", "--batch", "2", "--steps", "2", "--save", "OUT",
      "--lr", "-1"], 2, "--lr '-1': expected a finite number >= 0"),
    (["train", arch("gpt2_tiny"), "--data", TOKENS, "--seq", "12", "--batch", "2", "--steps", "2", "--save", "OUT",
      "--momentum", "0.9"], 2, "--momentum applies to --optimizer sgd only"),
    (["train", arch("gpt2_tiny"), "--data", TOKENS, "--seq", "12", "--batch", "2", "--steps", "2", "--save", "OUT",
      "--backend", "sim"], 2, "runs on --backend ref for now"),
    (["train", arch("gpt2_tiny"), "--data", TOKENS, "--seq", "12", "--batch", "2", "--steps", "2", "--save", "OUT",
      "--learning-rate", "1"], 2, "--learning-rate"),
    (["train", arch("gpt2_tiny"), "--data", TOKENS, "--seq", "12", "--batch", "2", "--steps", "2", "--save", TOKENS], 2,
     "is also an input"),
    (["train", arch("gpt2_tiny"), "--data", "NO_SUCH_FILE", "--seq", "12", "--batch", "2", "--steps", "2", "--save",
      "OUT"], 3, "NO_SUCH_FILE"),
    (["train", arch("gpt2_tiny"), "--data", TOKENS, "--seq", "64", "--batch", "2", "--steps", "2", "--save", "OUT"], 3,
     "fewer than one sequence"),
    (["train", arch("gpt2_tiny"), "--data", TOKENS, "--seq", "12", "--batch", "2", "--steps", "2", "--save", "OUT",
      "--init", "NO_SUCH.safetensors"], 3, "NO_SUCH.safetensors"),
    (["train", arch("gpt2_tiny"), "--data", "BADTOK", "--seq", "4", "--batch", "2", "--steps", "2", "--save", "OUT"], 3,
     "token 256 at index 5 is outside the vocabulary"),
    (["train", arch("shortformer_tiny"), "--data", TOKENS, "--seq", "24", "--batch", "2", "--steps", "2", "--save",
      "OUT"], 2, "sequence length 24 is longer than the model's segment (16)"),
    (["train", arch("gpt2_recurrent_tiny"), "--data", TOKENS, "--seq", "12", "--batch", "1", "--steps", "1", "--save",
      "OUT"], 1, "op rec_kv (layer 1) cannot be differentiated yet"),
    # rotary positions, ALiBi and grouped K/V heads are in the forward only (each names its setting)
    (["grad", arch("llama_rope_tiny"), "--random-weights", "1", "--tokens", TOKENS, "--out", "OUT"], 1,
     "with rotary positions (layer 0) cannot be differentiated yet"),
    (["grad", arch("alibi_tiny"), "--random-weights", "1", "--tokens", TOKENS, "--out", "OUT"], 1,
     "op attention with ALiBi (layer 0) cannot be differentiated yet"),
    (["grad", arch("gqa_tiny"), "--random-weights", "1", "--tokens", TOKENS, "--out", "OUT"], 1,
     "with grouped K/V heads (layer 0) cannot be differentiated yet"),
    (["grad", arch("gpt2_tiny"), "--tokens", TOKENS, "--out", "OUT"], 2, "--weights FILE.safetensors or --random-weights"),
    (["grad", arch("gpt2_tiny"), "--random-weights", "1", "--tokens", TOKENS], 2, "needs --out"),
]


def check_errors(shortc, tmp):
    ok = True
    with open(os.path.join(tmp, "bad.tokens"), "w") as f:
        f.write("1 2 3 4 5 256 7 8\n")
    for args, status, piece in ERRORS:
        args = [os.path.join(tmp, "OUT") if a == "OUT" else os.path.join(tmp, "bad.tokens") if a == "BADTOK" else a
                for a in args]
        r = run([shortc] + args)
        if r.returncode != status or piece not in r.stderr:
            ok = fail("shortc %s: exit %d (expected %d), stderr %r (expected %r in it)" %
                      (" ".join(args[:2]), r.returncode, status, r.stderr, piece))
        if os.path.exists(os.path.join(tmp, "OUT")):
            ok = fail("shortc %s wrote its output" % " ".join(args))
    # the recurrent model's message points at the .arch line of the recurrence
    r = run([shortc, "train", arch("gpt2_recurrent_tiny"), "--data", TOKENS, "--seq", "12", "--batch", "1", "--steps", "1",
             "--save", os.path.join(tmp, "OUT")])
    if "gpt2_recurrent_tiny.arch:" not in r.stderr or "recurrence" not in r.stderr:
        ok = fail("the refusal does not name the .arch line: %r" % r.stderr)
    print("errors: %d refused command lines checked" % len(ERRORS))
    return ok


def train_json(shortc, model, extra):
    """`shortc train MODEL --json --quiet EXTRA...`: (exit status, step objects, validation objects, stderr)."""
    r = run([shortc, "train", arch(model), "--json", "--quiet"] + extra)
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    return r.returncode, [x for x in lines if "step" in x], [x for x in lines if "valid" in x], r.stderr


def close(a, b, tol):
    return abs(a - b) <= tol * max(1.0, abs(b))


def check_stages(shortc, tmp):
    ok = True
    out = os.path.join(tmp, "s.safetensors")
    rc, steps, _, err = train_json(shortc, "gpt2_tiny", ["--data", TOKENS, "--stages", "8:3,16:2", "--batch", "1",
                                                           "--lr", "1e-2", "--schedule", "cosine", "--save", out])
    if rc != 0:
        return fail("staged train exited %d: %s" % (rc, err))
    if [s["seq"] for s in steps] != [8, 8, 8, 16, 16] or [s["tokens"] for s in steps] != [8, 8, 8, 16, 16]:
        return fail("lengths per step %r, expected 8,8,8,16,16" % [s["seq"] for s in steps])
    lrs = [1e-2 * 0.5 * (1 + math.cos(math.pi * k / 5)) for k in range(5)]
    if any(not close(s["lr"], e, 1e-12) for s, e in zip(steps, lrs)):
        ok = fail("cosine over the stages: lr %r, expected %r" % ([s["lr"] for s in steps], lrs))
    rc, staged, _, err = train_json(shortc, "gpt2_tiny", ["--data", TOKENS, "--stages", "8:3,16:2", "--batch", "1",
                                                            "--lr", "1e-2", "--save", out])
    rc2, plain, _, err2 = train_json(shortc, "gpt2_tiny", ["--data", TOKENS, "--seq", "8", "--steps", "3", "--batch", "1",
                                                            "--lr", "1e-2", "--save", out])
    if rc or rc2 or [s["loss"] for s in plain] != [s["loss"] for s in staged[:3]]:
        ok = fail("the first stage differs from a plain --seq 8 run (%s%s)" % (err, err2))
    # the stream continues: step 4 reads tokens 24..39, which wraps (37 tokens) to 0..15; step 5 reads 16..31.
    # A one-step run from the saved weights of step 3 cannot be made from the CLI, so check the data consumption
    # through a run whose stages all have the same length: it must equal one plain run.
    rc, same, _, _ = train_json(shortc, "gpt2_tiny", ["--data", TOKENS, "--stages", "8:2,8:3", "--batch", "1",
                                                        "--lr", "1e-2", "--save", out])
    rc2, one, _, _ = train_json(shortc, "gpt2_tiny", ["--data", TOKENS, "--seq", "8", "--steps", "5", "--batch", "1",
                                                        "--lr", "1e-2", "--save", out])
    if rc or rc2 or [s["loss"] for s in same] != [s["loss"] for s in one]:
        ok = fail("stages 8:2,8:3 do not continue the stream as --seq 8 --steps 5 does")
    print("stages: lengths %r, losses %r" % ([s["seq"] for s in steps], [round(s["loss"], 4) for s in steps]))
    return ok


def fairseq_lr(k, lr, warmup, init):
    """fairseq/optim/lr_scheduler/inverse_square_root_schedule.py, step_update(num_updates=k)."""
    lr_step = (lr - init) / warmup
    decay_factor = lr * warmup ** 0.5
    return init + k * lr_step if k < warmup else decay_factor * k ** -0.5


def check_fairseq(shortc, tmp):
    rc, steps, _, err = train_json(shortc, "gpt2_tiny", ["--data", TOKENS, "--seq", "8", "--batch", "1", "--steps", "8",
                                                           "--lr", "5e-4", "--warmup", "3", "--warmup-init-lr", "1e-7",
                                                           "--schedule", "fairseq", "--save", os.path.join(tmp, "f")])
    if rc != 0 or len(steps) != 8:
        return fail("fairseq run exited %d: %s" % (rc, err))
    want = [fairseq_lr(k, 5e-4, 3, 1e-7) for k in range(8)]
    got = [s["lr"] for s in steps]
    if any(not close(g, w, 1e-12) for g, w in zip(got, want)):
        return fail("fairseq lr %r, expected %r" % (got, want))
    print("fairseq: lr %s" % ", ".join("%.4g" % g for g in got))
    return True


def eval_json(shortc, model, weights, tokens, mode):
    args = [shortc, "eval", arch(model), "--backend", "ref", "--weights", weights, "--tokens", tokens, "--json"]
    r = run(args + (["--mode", mode] if mode else []))
    return json.loads(r.stdout) if r.returncode == 0 else None


def check_valid(shortc, tmp):
    ok = True
    mixed_tokens = os.path.join(GOLDEN, "mixed_tiny.tokens")
    # shortformer_tiny and txl_tiny: tensors derived from the weights (the position-infused table, the relative
    # keys) must follow each update, as a fresh load of the saved weights derives them
    for model, data, mode in (("gpt2_tiny", TOKENS, "sliding"), ("mixed_tiny", mixed_tokens, None),
                              ("shortformer_tiny", TOKENS, None),
                              ("txl_tiny", os.path.join(os.path.dirname(HERE), "memory", "txl_tiny.tokens"), None)):
        out = os.path.join(tmp, model + ".safetensors")
        extra = ["--data", data, "--seq", "12", "--batch", "2", "--steps", "4", "--lr", "3e-3", "--valid", data,
                 "--valid-every", "2", "--save", out] + (["--mode", mode] if mode else [])
        rc, steps, valids, err = train_json(shortc, model, extra)
        if rc != 0:
            ok = fail("%s: train with --valid exited %d: %s" % (model, rc, err))
            continue
        if [v["valid"] for v in valids] != [2, 4]:
            ok = fail("%s: validations after steps %r, expected 2 and 4" % (model, [v["valid"] for v in valids]))
            continue
        e = eval_json(shortc, model, out, data, mode)
        last = valids[-1]
        if e is None or e["mode"] != last["mode"] or e["tokens"] != last["tokens"] or not close(last["nll"], e["nll"], 1e-6):
            ok = fail("%s: validation %r differs from eval %r" % (model, last, e))
        elif not close(last["ppl"], e["ppl"], 1e-6) or not valids[1]["loss"] < valids[0]["loss"]:
            ok = fail("%s: ppl %g vs eval %g, or the validation loss did not fall" % (model, last["ppl"], e["ppl"]))
        else:
            print("valid: %s mode %s: nll %.6f (eval %.6f), ppl %.4f" % (model, e["mode"], last["nll"], e["nll"], last["ppl"]))
    return ok


def gradscaler_update(scale, tracker, found_inf, growth, backoff, interval):
    """torch._amp_update_scale_'s rule (aten/src/ATen/native/cuda/AmpKernels.cu), written out."""
    if found_inf:
        return scale * backoff, 0
    tracker += 1
    if tracker == interval:
        return scale * growth, 0
    return scale, tracker


def check_scaling(shortc, tmp):
    ok = True
    data = os.path.join(tmp, "one_batch.tokens")
    with open(os.path.join(GOLDEN, "mixed_tiny.tokens")) as f:
        toks = f.read().split()[:24]
    with open(data, "w") as f:
        f.write(" ".join(toks) + "\n")  # exactly one batch of 2 x 12: every step sees it
    grad = os.path.join(tmp, "g.safetensors")
    r = run([shortc, "grad", arch("mixed_tiny"), "--random-weights", "0", "--tokens", data, "--seq", "12", "--out", grad])
    if r.returncode != 0:
        return fail("grad exited %d: %s" % (r.returncode, r.stderr))
    gmax = max(abs(x) for b in tensors(grad).values() for x in struct.unpack("<%df" % (len(b) // 4), b))
    init = 2.0 ** 40
    if init * gmax < 65520:
        return fail("the test needs a gradient that overflows at scale 2^40 (largest %g)" % gmax)
    scaled = os.path.join(tmp, "scaled.safetensors")
    n = 30
    rc, steps, _, err = train_json(shortc, "mixed_tiny", ["--data", data, "--seq", "12", "--batch", "2", "--steps", str(n),
                                                            "--lr", "1e-3", "--loss-scale", str(init), "--scale-interval", "3",
                                                            "--save", scaled])
    if rc != 0 or len(steps) != n:
        return fail("scaled train exited %d: %s" % (rc, err))
    if not steps[0]["skipped"] or steps[0]["grad_norm"] is not None or steps[0]["updates"] != 0:
        ok = fail("step 1 at scale 2^40 was not skipped: %r" % steps[0])
    # until the first update the weights are the initial ones, whose gradient the grad file holds: a step is
    # skipped exactly when the scaled gradient reaches fp16's overflow (every mixed_tiny weight is fp16)
    for s in steps[:next(i for i, s in enumerate(steps) if not s["skipped"]) + 1]:
        if s["skipped"] != (s["loss_scale"] * gmax >= 65520):
            ok = fail("step %d at scale %g (largest scaled gradient %g): skipped %s" %
                      (s["step"], s["loss_scale"], s["loss_scale"] * gmax, s["skipped"]))
    scale, tracker, updates = init, 0, 0
    for s in steps:
        if s["loss_scale"] != scale:
            ok = fail("step %d: scale %r, GradScaler's %r" % (s["step"], s["loss_scale"], scale))
            break
        if s["skipped"] and scale * gmax < 65520 / 4:
            ok = fail("step %d skipped at scale %g though the gradients are far from fp16's range" % (s["step"], scale))
        updates += 0 if s["skipped"] else 1
        if s["updates"] != updates:
            ok = fail("step %d: %d updates counted, expected %d" % (s["step"], s["updates"], updates))
        scale, tracker = gradscaler_update(scale, tracker, s["skipped"], 2.0, 0.5, 3)
    skipped = sum(1 for s in steps if s["skipped"])
    grew = any(b["loss_scale"] > a["loss_scale"] for a, b in zip(steps, steps[1:]))
    if not grew or skipped < 2 or updates < 5:
        ok = fail("expected back-offs, growth and updates: %d skipped, %d updates, growth %s" % (skipped, updates, grew))
    plain = os.path.join(tmp, "plain.safetensors")
    rc, _, _, err = train_json(shortc, "mixed_tiny", ["--data", data, "--seq", "12", "--batch", "2", "--steps", str(updates),
                                                       "--lr", "1e-3", "--save", plain])
    if rc != 0 or tensors(plain) != tensors(scaled):
        ok = fail("the scaled run's weights differ from %d unscaled updates (%s)" % (updates, err))
    print("scaling: %d of %d steps skipped, scales %s" % (skipped, n, sorted({s["loss_scale"] for s in steps})))
    return ok


CASES = {"loss": check_loss, "freeze": check_freeze, "errors": check_errors, "stages": check_stages,
         "fairseq": check_fairseq, "valid": check_valid, "scaling": check_scaling}


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in CASES:
        print(__doc__, file=sys.stderr)
        return 2
    shortc, case = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        ok = CASES[case](shortc, tmp)
    print("ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
