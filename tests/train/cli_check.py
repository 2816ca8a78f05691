#!/usr/bin/env python3
"""cli_check.py SHORTC CASE — `shortc train` and `shortc grad` from the command line (no numpy needed).

  loss     30 AdamW steps of gpt2_tiny from seeded random weights on tests/golden/gpt2_tiny.tokens: the mean
           loss of the last 5 steps is below 60% of the first 5's, each step's JSON line is complete, the lr
           follows warm-up then cosine, and the saved file loads back (`shortc eval` on it gives a finite loss
           below the first step's)
  freeze   --freeze 'h.0.*' --freeze wpe.weight: those tensors' bytes in the saved file equal the initial
           file's, and every other tensor changed
  errors   bad flags and inputs give a clear message and the documented exit status, and write nothing
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
      "--schedule", "linear"], 2, "expected constant, cosine or inverse-sqrt"),
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
    (["train", arch("txl_tiny"), "--data", TOKENS, "--seq", "12", "--batch", "2", "--steps", "2", "--save", "OUT"], 1,
     "op rel_keys (layer 0) cannot be differentiated yet"),
    (["train", arch("gpt2_recurrent_tiny"), "--data", TOKENS, "--seq", "12", "--batch", "1", "--steps", "1", "--save",
      "OUT"], 1, "op rec_kv (layer 1) cannot be differentiated yet"),
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


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in ("loss", "freeze", "errors"):
        print(__doc__, file=sys.stderr)
        return 2
    shortc, case = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        ok = {"loss": check_loss, "freeze": check_freeze, "errors": check_errors}[case](shortc, tmp)
    print("ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
