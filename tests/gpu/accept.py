#!/usr/bin/env python3
"""GPU acceptance for shortc: every bundled model, --backend cuda against an oracle.

    tests/gpu/accept.sh [--out DIR] [--dry-run] [--part N] [--shortc PATH] [--models a,b]

On a GPU (docs/gpu.md) each bundled model runs on `--backend cuda` and is compared
with the reference interpreter on short inputs (tiny models: several segments;
paper-size models: a few tokens, the interpreter being slow at that size, within
the tolerance of their bf16 storage):
logits, chunked and token-by-token runs, `eval` NLL in every mode the model
allows, seeded `generate` (sampled and greedy: the same tokens), a batch of
prompts, and fp32 / TF32 / fp16 / bf16 variants of the tiny models. Part 3 runs
compute-sanitizer (memcheck, racecheck, synccheck) over one forward and one
decode step of each tiny model, which together cover every kernel family.

With --dry-run the same flow runs on the CPU: the simulator stands in for
cuda, the tiny models only, shorter inputs, and compute-sanitizer is skipped.
CI runs it that way so the script cannot rot.

Prints a table, writes DIR/accept.json (one entry per check: name, model,
backend pair, max difference, tolerance, verdict, seconds) and exits 1 if any
check failed. Only the Python standard library is used.
"""
import argparse
import concurrent.futures as cf
import glob
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

# parts: 1 tiny models (every check), 2 paper-size models, 3 compute-sanitizer
PARTS = (1, 2, 3)
MODES = ("nonoverlapping", "sliding", "windows", "tokenwise", "cached")
# tolerances of logits against the fp32 interpreter: (atol, rtol) per storage variant
TOL = {"fp32": (2e-3, 2e-3), "tf32": (3e-2, 3e-2), "fp16": (5e-2, 5e-2), "bf16": (1.5e-1, 1e-1)}
NLL_RTOL = {"fp32": 1e-4}  # eval NLL: relative difference of the summed NLL
VOCAB_FLOOR = 50           # the smallest vocabulary of a bundled model (txl_tiny): ids below it fit every model


def find_shortc(given):
    for cand in (given, os.environ.get("SHORTC"),
                 os.path.join(REPO, "build", "bundle", "bin", "shortc"),
                 os.path.join(REPO, "build", "shortc")):
        if cand and os.access(cand, os.X_OK):
            return os.path.abspath(cand)
    sys.exit("accept: no shortc found (build it, pass --shortc PATH or set SHORTC)")


def models_dir(shortc):
    """The models beside the bundle (share/shortc/models), else the repository's."""
    d = os.path.join(os.path.dirname(os.path.dirname(shortc)), "share", "shortc", "models")
    return d if os.path.isdir(d) else os.path.join(REPO, "models")


def bundled_models(mdir):
    """(file, model name) of every model in every .arch file, in file order."""
    out = []
    for f in sorted(glob.glob(os.path.join(mdir, "*.arch")) + glob.glob(os.path.join(mdir, "*", "*.arch"))):
        with open(f) as fh:
            for name in re.findall(r"^model\s+(\w+)", fh.read(), re.M):
                out.append((f, name))
    return out


def is_tiny(name):
    return "tiny" in name


class Runner:
    """Runs shortc commands in a scratch directory and records checks."""

    def __init__(self, shortc, work, dry):
        self.shortc, self.work, self.dry = shortc, work, dry
        self.results = []
        self.partial = None  # DIR/accept.json while the run is under way

    def sh(self, args, timeout=600, env=None):
        p = subprocess.run([self.shortc] + args, cwd=self.work, capture_output=True, text=True,
                           timeout=timeout, env=env)
        return p.returncode, p.stdout, p.stderr

    def record(self, name, model, pair, diff, tol, verdict, seconds, note=""):
        r = {"name": name, "model": model, "backends": pair, "max_diff": diff, "tolerance": tol,
             "verdict": verdict, "seconds": round(seconds, 3), "note": note}
        self.results.append(r)
        if self.partial:  # kept current, so a run stopped by a time limit still leaves its checks
            with open(self.partial, "w") as f:
                json.dump({"partial": True, "checks": self.results}, f, indent=1)
        d = "-" if diff is None else "%.3g" % diff
        t = "-" if tol is None else str(tol)
        print("%-5s %-28s %-22s %-10s %10s %-16s %7.2fs %s" % (verdict.upper(), name, model, pair, d, t, seconds,
                                                             note[:90]), flush=True)
        return r

    def path(self, *parts):
        return os.path.join(self.work, *parts)


def write_tokens(path, n, seed):
    rng = random.Random(seed)
    with open(path, "w") as f:
        f.write(" ".join(str(rng.randrange(VOCAB_FLOOR)) for _ in range(n)) + "\n")


def model_args(arch, name):
    return [arch, "--model", name]


def cmp_npy(R, a, b, tol):
    rc, out, err = R.sh(["cmp", a, b, "--atol", str(tol[0]), "--rtol", str(tol[1])])
    m = re.search(r"max abs diff ([0-9.eE+-]+|nan|inf)", out + err)
    diff = float(m.group(1)) if m else None
    return rc == 0, diff, (out + err).strip().splitlines()[-1] if (out + err).strip() else ""


def check_logits(R, label, arch, name, backend, oracle_npy, tokens, tol, extra=(), variant="fp32"):
    """run on backend (with extra flags), compare with the oracle's logits."""
    t0 = time.time()
    out = R.path("%s_%s_%s.npy" % (name, label, backend))
    rc, o, e = R.sh(["run"] + model_args(arch, name) + ["--backend", backend, "--random-weights", "1",
                                                        "--tokens", tokens, "--logits", out] + list(extra))
    if rc != 0:
        return R.record(label, name, backend + ":ref", None, tol, "fail", time.time() - t0, e.strip()[-200:])
    ok, diff, line = cmp_npy(R, out, oracle_npy, tol)
    return R.record(label, name, backend + ":ref", diff, list(tol), "pass" if ok else "fail", time.time() - t0,
                    "" if ok else line)


def ref_logits(R, arch, name, tokens, extra=()):
    """The interpreter's logits (with the same run flags as the run it judges)."""
    out = R.path("%s%s_ref.npy" % (name, "".join(extra).replace("-", "_")))
    rc, o, e = R.sh(["run"] + model_args(arch, name) + ["--backend", "ref", "--random-weights", "1",
                                                        "--tokens", tokens, "--logits", out] + list(extra),
                    timeout=1800)
    return (out, None) if rc == 0 else (None, e.strip()[-300:])


def eval_json(R, arch, name, backend, tokens, mode):
    rc, o, e = R.sh(["eval"] + model_args(arch, name) + ["--backend", backend, "--random-weights", "1",
                                                         "--tokens", tokens, "--mode", mode, "--json"])
    if rc != 0:
        return None, e.strip()
    return json.loads(o.strip().splitlines()[-1]), ""


def check_eval_modes(R, arch, name, backend, tokens):
    for mode in MODES:
        t0 = time.time()
        ref, why = eval_json(R, arch, name, "ref", tokens, mode)
        if ref is None:
            if "cannot run it" in why:  # the model's own refusal: not a defect of either backend
                R.record("eval_" + mode, name, backend + ":ref", None, None, "skip", time.time() - t0,
                         why.splitlines()[-1][:120])
            else:
                R.record("eval_" + mode, name, backend + ":ref", None, None, "fail", time.time() - t0, why[-200:])
            continue
        got, why = eval_json(R, arch, name, backend, tokens, mode)
        if got is None:
            R.record("eval_" + mode, name, backend + ":ref", None, NLL_RTOL["fp32"], "fail", time.time() - t0,
                     why[-200:])
            continue
        diff = abs(got["nll"] - ref["nll"]) / max(abs(ref["nll"]), 1e-30)
        ok = diff <= NLL_RTOL["fp32"] and got["tokens"] == ref["tokens"]
        R.record("eval_" + mode, name, backend + ":ref", diff, NLL_RTOL["fp32"], "pass" if ok else "fail",
                 time.time() - t0, "nll %s vs %s" % (got["nll"], ref["nll"]))


def generate_ids(R, arch, name, backend, src_flag, src, extra):
    rc, o, e = R.sh(["generate"] + model_args(arch, name) + ["--backend", backend, "--random-weights", "1",
                                                             src_flag, src, "--quiet"] + extra)
    return (o.split(), "") if rc == 0 else (None, e.strip()[-200:])


def check_generate(R, arch, name, backend, prompt, prompts_file, nprompts, max_new):
    """Greedy, sampled and batched generation: the same tokens, max_new per prompt (no --eos: none stops early)."""
    cases = [("generate_greedy", "--tokens", prompt, ["--max-new", str(max_new)], 1),
             ("generate_sampled", "--tokens", prompt,
              ["--max-new", str(max_new), "--temperature", "0.8", "--top-k", "20", "--seed", "7"], 1),
             ("generate_batch", "--prompts", prompts_file, ["--max-new", str(max_new)], nprompts)]
    for label, flag, src, extra, n in cases:
        t0 = time.time()
        ref, why = generate_ids(R, arch, name, "ref", flag, src, extra)
        if ref is None:
            R.record(label, name, backend + ":ref", None, 0, "fail", time.time() - t0, "ref: " + why)
            continue
        got, why = generate_ids(R, arch, name, backend, flag, src, extra)
        if got is None:
            R.record(label, name, backend + ":ref", None, 0, "fail", time.time() - t0, why)
            continue
        if len(ref) != n * max_new:
            R.record(label, name, backend + ":ref", None, 0, "fail", time.time() - t0,
                     "ref printed %d tokens, not %d" % (len(ref), n * max_new))
            continue
        differ = sum(1 for a, b in zip(got, ref) if a != b) + abs(len(got) - len(ref))
        R.record(label, name, backend + ":ref", differ, 0, "pass" if differ == 0 else "fail", time.time() - t0,
                 "%d tokens" % len(ref) + ("" if differ == 0 else "; got %s want %s" % (got[:12], ref[:12])))


# storage variants of a tiny model: the .arch lines a derived model adds
VARIANTS = {
    "tf32": "  math tf32;\n",
    "fp16": "  layout weights fp16 [in, out];\n  layout activations fp16 [tokens, channels];\n",
    "bf16": "  layout weights bf16 [in, out];\n  layout activations bf16 [tokens, channels];\n",
}


def variant_arch(R, arch, name, variant):
    """Writes NAME_VARIANT into the scratch directory, derived from the bundled model."""
    path = R.path("%s_%s.arch" % (name, variant))
    with open(path, "w") as f:
        f.write('# accept.py: %s of %s\nimport "%s";\n\nmodel %s_%s : %s {\n%s}\n'
                % (variant, name, arch, name, variant, name, VARIANTS[variant]))
    return path, "%s_%s" % (name, variant)


def check_variants(R, arch, name, backend, tokens):
    for variant in VARIANTS:
        t0 = time.time()
        varch, vname = variant_arch(R, arch, name, variant)
        ref, why = ref_logits(R, varch, vname, tokens)
        if ref is None:
            # a diagnostic located in the variant's own file is the model refusing the variant; anything else fails
            refused = why and os.path.basename(varch) + ":" in why
            R.record("logits_" + variant, name, backend + ":ref", None, None, "skip" if refused else "fail",
                     time.time() - t0, ("the model takes no %s variant: " % variant if refused else "ref: ") +
                     (why.splitlines()[-1][:100] if why else ""))
            continue
        check_logits(R, "logits_" + variant, varch, vname, backend, ref, tokens, TOL[variant], variant=variant)


def part_tiny(R, models, backend):
    tok = R.path("tokens_tiny.txt")
    write_tokens(tok, 160 if R.dry else 300, 1)
    prompt = R.path("prompt.txt")
    write_tokens(prompt, 12, 2)
    prompts = R.path("prompts.ids")
    with open(prompts, "w") as f:
        rng = random.Random(3)
        for n in (3, 9, 17):
            f.write(" ".join(str(rng.randrange(VOCAB_FLOOR)) for _ in range(n)) + "\n")
    for arch, name in models:
        t0 = time.time()
        ref, why = ref_logits(R, arch, name, tok)
        if ref is None:
            R.record("logits", name, backend + ":ref", None, None, "fail", time.time() - t0, "ref: " + why)
            continue
        check_logits(R, "logits", arch, name, backend, ref, tok, TOL["fp32"])
        # chunked runs are judged against the interpreter run the same way (a kind with memories may
        # legitimately differ from its one-call logits; the runs' own equality is the modes tests' job)
        for label, chunk in (("tokenwise_chunk1", "1"), ("chunked_37", "37")):
            cref, why = ref_logits(R, arch, name, tok, ["--chunk", chunk])
            if cref is None:
                R.record(label, name, backend + ":ref", None, None, "fail", 0.0, "ref: " + why)
            else:
                check_logits(R, label, arch, name, backend, cref, tok, TOL["fp32"], ["--chunk", chunk])
        check_eval_modes(R, arch, name, backend, tok)
        check_generate(R, arch, name, backend, prompt, prompts, 3, 6 if R.dry else 16)
        if not R.dry or name == "gpt2_tiny":
            check_variants(R, arch, name, backend, tok)


def storage_of(R, arch, name):
    """The storage a model's tolerance follows: its widest-rounding layout dtype (`--dump-spec`)."""
    rc, o, e = R.sh(model_args(arch, name) + ["--dump-spec"])
    found = set(re.findall(r"^layout \w+ (fp32|fp16|bf16)\b", o, re.M)) if rc == 0 else set()
    return next((d for d in ("bf16", "fp16") if d in found), "fp32")


def part_paper(R, models, backend, jobs):
    """Paper-size models: logits, token by token and chunked, against the interpreter on a few tokens,
    within the tolerance of the model's storage (the paper-size models store bf16)."""
    tok = R.path("tokens_paper.txt")
    write_tokens(tok, 12, 4)
    with cf.ThreadPoolExecutor(max_workers=jobs) as pool:  # the interpreter is the slow side: run them together
        # each run is judged against the interpreter run the same way (memories and caches are per call pattern)
        runs = (("logits", ()), ("tokenwise_chunk1", ("--chunk", "1")), ("chunked_5", ("--chunk", "5")))
        refs = {(name, label): pool.submit(ref_logits, R, arch, name, tok, extra)
                for arch, name in models for label, extra in runs}
        storage = {name: storage_of(R, arch, name) for arch, name in models}
        for arch, name in models:
            for label, extra in runs:
                t0 = time.time()
                ref, why = refs[(name, label)].result()
                if ref is None:
                    R.record(label, name, backend + ":ref", None, None, "fail", time.time() - t0, "ref: " + why)
                    continue
                check_logits(R, label, arch, name, backend, ref, tok, TOL[storage[name]], extra)


def find_sanitizer():
    for c in (shutil.which("compute-sanitizer"), "/usr/local/cuda/bin/compute-sanitizer",
              "/usr/local/cuda/compute-sanitizer/compute-sanitizer"):
        if c and os.access(c, os.X_OK):
            return c
    return None


def part_sanitizer(R, models):
    san = None if R.dry else find_sanitizer()
    tok = R.path("tokens_san.txt")
    write_tokens(tok, 24, 5)
    prompt = R.path("prompt_san.txt")
    write_tokens(prompt, 6, 6)
    for arch, name in models:
        for tool in ("memcheck", "racecheck", "synccheck"):
            for what, args in (("forward", ["run"] + model_args(arch, name) + ["--tokens", tok]),
                               ("decode", ["generate"] + model_args(arch, name) +
                                ["--tokens", prompt, "--max-new", "2", "--quiet"])):
                label = "sanitize_%s_%s" % (tool, what)
                if san is None:
                    R.record(label, name, "cuda", None, None, "skip", 0.0,
                             "dry run" if R.dry else "compute-sanitizer not found")
                    continue
                t0 = time.time()
                cmd = [san, "--tool", tool, "--error-exitcode", "86", "--print-limit", "20", R.shortc] + args + [
                    "--backend", "cuda", "--random-weights", "1"]
                p = subprocess.run(cmd, cwd=R.work, capture_output=True, text=True, timeout=900)
                summary = [l for l in (p.stdout + p.stderr).splitlines() if "ERROR SUMMARY" in l or "Error" in l]
                ok = p.returncode == 0
                R.record(label, name, "cuda", None, None, "pass" if ok else "fail", time.time() - t0,
                         (summary[-1] if summary else "") if ok else (p.stdout + p.stderr)[-300:].replace("\n", " | "))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="accept-out", help="directory for accept.json (default accept-out)")
    ap.add_argument("--dry-run", action="store_true", help="the simulator instead of cuda, tiny models, no GPU")
    ap.add_argument("--part", type=int, choices=PARTS, action="append",
                    help="1 tiny models, 2 paper-size models, 3 compute-sanitizer (repeatable; default all)")
    ap.add_argument("--shortc", help="the shortc executable (default: build/bundle/bin/shortc, build/shortc)")
    ap.add_argument("--models", help="comma-separated model names to restrict to")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="concurrent interpreter runs (part 2)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directory")
    a = ap.parse_args()
    shortc = find_shortc(a.shortc)
    mdir = models_dir(shortc)
    models = bundled_models(mdir)
    if a.models:
        want = set(a.models.split(","))
        models = [m for m in models if m[1] in want]
    parts = a.part or list(PARTS)
    backend = "sim" if a.dry_run else "cuda"
    if a.dry_run:
        parts = [p for p in parts if p != 2]
        if not a.models:  # one of each family keeps CI short
            keep = {"gpt2_tiny", "shortformer_tiny", "txl_tiny", "gpt2_recurrent_tiny", "longformer_lm_tiny"}
            models = [m for m in models if m[1] in keep]
    os.makedirs(a.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="shortc-accept-")
    R = Runner(shortc, work, a.dry_run)
    R.partial = os.path.join(a.out, "accept.json")
    print("accept: %s, backend %s against ref, models from %s, parts %s" % (shortc, backend, mdir, parts))
    print("%-5s %-28s %-22s %-10s %10s %-16s %8s %s" % ("", "check", "model", "pair", "max diff", "tolerance",
                                                       "time", "note"))
    t0 = time.time()
    try:
        tiny = [m for m in models if is_tiny(m[1])]
        paper = [m for m in models if not is_tiny(m[1])]
        if 1 in parts:
            part_tiny(R, tiny, backend)
        if 2 in parts:
            part_paper(R, paper, backend, a.jobs)
        if 3 in parts:
            part_sanitizer(R, tiny)
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    counts = {v: sum(1 for r in R.results if r["verdict"] == v) for v in ("pass", "fail", "skip")}
    doc = {"shortc": shortc, "backend": backend, "dry_run": a.dry_run, "parts": parts,
           "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "seconds": round(time.time() - t0, 1),
           "counts": counts, "checks": R.results}
    with open(os.path.join(a.out, "accept.json"), "w") as f:
        json.dump(doc, f, indent=1)
    print("accept: %d passed, %d failed, %d skipped in %.0f s; %s" % (counts["pass"], counts["fail"], counts["skip"],
                                                                       time.time() - t0,
                                                                       os.path.join(a.out, "accept.json")))
    return 1 if counts["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
