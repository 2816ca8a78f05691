#!/usr/bin/env python3
"""shortc beside PyTorch on one GPU: attention, prefill and decoding, same shapes, one run.

    tests/gpu/bench.py [--out DIR] [--dry-run] [--shortc PATH] [--only attention,prefill,decode]

Every figure is a median of timed repeats after warm-up: CUDA events for PyTorch, shortc's per-step
device events (srt_session_set_profiling) for its attention, the host clock around a synchronous
forward for its prefill, and the tokens/s that `shortc generate` reports for decoding. Each row is
printed as times and as the ratio shortc / PyTorch (below 1: shortc is faster), written with the
card's measured peaks (a bf16 8192^3 GEMM, a device-to-device copy) to DIR/bench.json.

  attention  causal at head dim 64 and 128, T 512..16k, bf16 and fp16, against
             scaled_dot_product_attention (flash and cuDNN back ends) and FlexAttention (compiled);
             every sparse kind against FlexAttention fed the block mask of `shortc mask`;
             position-infused attention (PIA) against SDPA on the position-added inputs and relative
             attention (Transformer-XL) against eager PyTorch
  prefill    the whole forward of a gpt2_small-shaped model (the same weights: HF's GPT-2, saved and
             loaded by shortc) against HF transformers with SDPA in bf16, eager and torch.compile
  decode     tokens/s at batch 1, 8, 64 and context 1k and 4k against HF generate with a static cache

--dry-run runs the same flow on the CPU with tiny shapes: the simulator for shortc, PyTorch's CPU
paths where they exist; what this PyTorch lacks (SDPA and FlexAttention before 2.x, transformers
when not installed) is skipped with a note. Its times are not GPU figures.
"""
import argparse
import ctypes
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

try:
    import numpy as np
    import torch
except ImportError as e:  # the script needs PyTorch: say so plainly
    sys.exit("bench: needs PyTorch and NumPy (%s)" % e)


def find_shortc(given):
    for cand in (given, os.environ.get("SHORTC"), os.path.join(REPO, "build", "bundle", "bin", "shortc"),
                 os.path.join(REPO, "build", "shortc")):
        if cand and os.access(cand, os.X_OK):
            return os.path.abspath(cand)
    sys.exit("bench: no shortc found (build it, pass --shortc PATH or set SHORTC)")


def find_libshortrt(shortc):
    root = os.path.dirname(os.path.dirname(shortc))
    for cand in (os.path.join(root, "lib", "libshortrt.so"), os.path.join(os.path.dirname(shortc), "libshortrt.so")):
        if os.path.exists(cand):
            return cand
    sys.exit("bench: no libshortrt.so beside %s" % shortc)


def models_dir(shortc):
    d = os.path.join(os.path.dirname(os.path.dirname(shortc)), "share", "shortc", "models")
    return d if os.path.isdir(d) else os.path.join(REPO, "models")


# ---------------------------------------------------------------- libshortrt through ctypes (thin)

class Options(ctypes.Structure):
    """srt_options of runtime/include/shortrt.h, field for field."""
    _fields_ = [("backend", ctypes.c_int), ("cache_dir", ctypes.c_char_p), ("sim_threads", ctypes.c_int),
                ("sim_checked", ctypes.c_int), ("model_name", ctypes.c_char_p),
                ("allow_nonfinite_weights", ctypes.c_int)]


class StepTime(ctypes.Structure):
    """srt_step_time of runtime/include/shortrt.h."""
    _fields_ = [("kernel", ctypes.c_char_p), ("line", ctypes.c_int), ("layer", ctypes.c_int),
                ("ms", ctypes.c_double), ("runs", ctypes.c_int)]


BACKENDS = {"sim": 2, "cuda": 3}


class Shortrt:
    """The few calls of the C API the benchmark needs; every status is checked."""

    def __init__(self, path):
        self.lib = L = ctypes.CDLL(path)
        vp, i32p = ctypes.c_void_p, ctypes.POINTER(ctypes.c_int32)
        L.srt_last_error.restype = ctypes.c_char_p
        L.srt_last_error.argtypes = [vp]
        L.srt_options_init.argtypes = [ctypes.POINTER(Options)]
        L.srt_context_create.argtypes = [ctypes.POINTER(vp), vp, vp]
        L.srt_model_open.argtypes = [vp, ctypes.c_char_p, ctypes.POINTER(Options), ctypes.POINTER(vp)]
        L.srt_model_random_weights.argtypes = [vp, ctypes.c_uint64]
        L.srt_model_load_weights.argtypes = [vp, ctypes.c_char_p]
        L.srt_session_create.argtypes = [vp, ctypes.c_int, ctypes.POINTER(vp)]
        L.srt_session_reset.argtypes = [vp]
        L.srt_session_destroy.argtypes = [vp]
        L.srt_model_close.argtypes = [vp]
        L.srt_forward_rows.argtypes = [vp, i32p, ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_float)]
        L.srt_session_set_profiling.argtypes = [vp, ctypes.c_int]
        L.srt_session_step_count.argtypes = [vp]
        L.srt_session_step_time.argtypes = [vp, ctypes.c_int, ctypes.POINTER(StepTime)]
        self.ctx = vp()
        self.ok(L.srt_context_create(ctypes.byref(self.ctx), None, None), "srt_context_create")

    def ok(self, st, what):
        if st != 0:
            raise RuntimeError("%s: %s" % (what, self.lib.srt_last_error(self.ctx).decode()))

    def open(self, arch, name, backend, weights=None):
        o = Options()
        self.lib.srt_options_init(ctypes.byref(o))
        o.backend, o.model_name = BACKENDS[backend], name.encode()
        m = ctypes.c_void_p()
        self.ok(self.lib.srt_model_open(self.ctx, arch.encode(), ctypes.byref(o), ctypes.byref(m)), "open " + name)
        if weights:
            self.ok(self.lib.srt_model_load_weights(m, weights.encode()), "load weights")
        else:
            self.ok(self.lib.srt_model_random_weights(m, 1), "random weights")
        s = ctypes.c_void_p()
        self.ok(self.lib.srt_session_create(m, 1, ctypes.byref(s)), "session")
        return m, s

    def close(self, m, s):
        self.lib.srt_session_destroy(s)
        self.lib.srt_model_close(m)

    def forward_last(self, s, ids, vocab):
        """One forward of ids from a fresh sequence, copying the last row's logits; host seconds."""
        arr = (ctypes.c_int32 * len(ids))(*ids)
        out = (ctypes.c_float * vocab)()
        self.ok(self.lib.srt_session_reset(s), "reset")
        t0 = time.perf_counter()
        self.ok(self.lib.srt_forward_rows(s, arr, len(ids), len(ids) - 1, out), "forward")
        return time.perf_counter() - t0

    def last_logits(self, s, ids, vocab):
        """The last row's logits of one forward of ids from a fresh sequence, as a NumPy array."""
        arr = (ctypes.c_int32 * len(ids))(*ids)
        out = (ctypes.c_float * vocab)()
        self.ok(self.lib.srt_session_reset(s), "reset")
        self.ok(self.lib.srt_forward_rows(s, arr, len(ids), len(ids) - 1, out), "forward")
        return np.frombuffer(out, dtype=np.float32).copy()

    def step_ms(self, s, prefix):
        """Per-run device ms of the steps whose kernel starts with prefix (summed over those steps)."""
        total = 0.0
        for i in range(self.lib.srt_session_step_count(s)):
            t = StepTime()
            self.ok(self.lib.srt_session_step_time(s, i, ctypes.byref(t)), "step time")
            if t.kernel.decode().startswith(prefix) and t.runs:
                total += t.ms / t.runs
        return total


# ---------------------------------------------------------------- timing helpers

def median_events(fn, warmup, reps, dev):
    """Median milliseconds of fn() over reps after warmup: CUDA events on a GPU, the host clock on the CPU."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        if dev == "cuda":
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            torch.cuda.synchronize()
            times.append(a.elapsed_time(b))
        else:
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


class Bench:
    def __init__(self, args):
        self.a = args
        self.dry = args.dry_run
        self.dev = "cpu" if self.dry else "cuda"
        self.backend = "sim" if self.dry else "cuda"
        self.shortc = find_shortc(args.shortc)
        self.rt = Shortrt(find_libshortrt(self.shortc))
        self.mdir = models_dir(self.shortc)
        self.work = tempfile.mkdtemp(prefix="shortc-bench-")
        self.rows = []
        self.peaks = {}
        self.warm, self.reps = (1, 3) if self.dry else (5, 20)

    def row(self, section, name, shortc_ms, torch_ms, baseline, note="", extra=None, failed=False):
        """One printed and recorded row; failed: shortc could not do the case (the run exits 1)."""
        ratio = shortc_ms / torch_ms if shortc_ms and torch_ms else None
        r = {"section": section, "name": name, "shortc_ms": shortc_ms, "torch_ms": torch_ms, "baseline": baseline,
             "ratio": ratio, "note": note, "failed": failed}
        r.update(extra or {})
        self.rows.append(r)
        f = lambda x: "-" if x is None else "%.4g" % x
        print("%-9s %-44s %10s %10s %7s  %-22s %s" % (section, name, f(shortc_ms), f(torch_ms), f(ratio), baseline,
                                                      note[:70]), flush=True)

    def sh(self, args, timeout=1800):
        p = subprocess.run([self.shortc] + args, cwd=self.work, capture_output=True, text=True, timeout=timeout)
        if p.returncode != 0:
            raise RuntimeError(p.stderr.strip()[-300:])
        return p.stdout, p.stderr

    def write_arch(self, name, base_file, base, lines):
        path = os.path.join(self.work, name + ".arch")
        with open(path, "w") as f:
            f.write('import "%s";\n\nmodel %s : %s {\n%s}\n' % (os.path.join(self.mdir, base_file), name, base,
                                                                  "".join("  %s;\n" % l for l in lines)))
        return path

    # ------------------------------------------------------------ peaks
    def measure_peaks(self):
        n = 1024 if self.dry else 8192
        dt = torch.float32 if self.dry else torch.bfloat16
        a = torch.randn(n, n, device=self.dev, dtype=dt)
        b = torch.randn(n, n, device=self.dev, dtype=dt)
        ms = median_events(lambda: a @ b, self.warm, self.reps, self.dev)
        self.peaks["gemm_tflops"] = 2 * n ** 3 / ms / 1e9
        self.peaks["gemm"] = "%s %d^3" % ("fp32" if self.dry else "bf16", n)
        nbytes = (64 if self.dry else 2048) << 20
        src = torch.empty(nbytes, dtype=torch.uint8, device=self.dev).random_(0, 255)
        dst = torch.empty_like(src)
        ms = median_events(lambda: dst.copy_(src), self.warm, self.reps, self.dev)
        self.peaks["copy_gbs"] = 2 * nbytes / ms / 1e6  # bytes read + written
        print("peaks: %s GEMM %.1f TFLOP/s, copy %.0f GB/s (read + write)" % (self.peaks["gemm"],
                                                                           self.peaks["gemm_tflops"],
                                                                           self.peaks["copy_gbs"]))

    # ------------------------------------------------------------ attention
    def attn_shapes(self):
        if self.dry:
            return [(16, 2, [64])]  # head dim, heads, T
        return [(64, 16, [512, 1024, 2048, 4096, 8192, 16384]), (128, 16, [512, 1024, 2048, 4096, 8192, 16384])]

    def shortc_attention_ms(self, name, base_file, base, lines, T, vocab=256, layers=1):
        """Device ms of one layer's attention steps over T tokens (a profiled forward of a model of `layers`)."""
        arch = self.write_arch(name, base_file, base, lines)
        m, s = self.rt.open(arch, name, self.backend)
        try:
            ids = [(i * 7) % vocab for i in range(T)]
            self.rt.forward_last(s, ids, vocab)  # compile caches, cuBLAS handles
            self.rt.ok(self.rt.lib.srt_session_set_profiling(s, 1), "profiling")
            for _ in range(self.reps if not self.dry else 1):
                self.rt.forward_last(s, ids, vocab)
            return self.rt.step_ms(s, "shortc_attn_") / layers
        finally:
            self.rt.close(m, s)

    def torch_attention(self, q, k, v, mask=None, causal=False):
        """(name, ms) of each PyTorch attention this PyTorch has for the shapes."""
        out = []
        F = torch.nn.functional
        if hasattr(F, "scaled_dot_product_attention"):
            try:
                from torch.nn.attention import SDPBackend, sdpa_kernel
                backends = (("sdpa_flash", SDPBackend.FLASH_ATTENTION), ("sdpa_cudnn", SDPBackend.CUDNN_ATTENTION))
            except (ImportError, AttributeError) as e:  # a PyTorch with SDPA but without these names
                backends = ()
                out.append(("sdpa (unavailable: %s)" % str(e)[:40], None))
            for label, be in backends:
                if mask is not None or self.dry:
                    continue
                try:
                    with sdpa_kernel(be):
                        ms = median_events(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal),
                                           self.warm, self.reps, self.dev)
                    out.append((label, ms))
                except RuntimeError as e:
                    out.append((label + " (unavailable: %s)" % str(e).splitlines()[0][:40], None))
        flex = self.flex_attention(q, k, v, mask, causal)
        if flex:
            out.append(flex)
        if not out:  # an older PyTorch: the math, eagerly
            ms = median_events(lambda: eager_attention(q, k, v, mask, causal), self.warm, self.reps, self.dev)
            out.append(("eager", ms))
        return out

    def flex_attention(self, q, k, v, mask, causal):
        if self.dry:
            return None
        try:
            from torch.nn.attention.flex_attention import create_block_mask, flex_attention
        except ImportError:
            return None
        T = q.shape[2]
        if mask is not None:
            dense = mask.to(q.device)
            mask_mod = lambda b, h, qi, ki: dense[h, qi, ki]
            bm = create_block_mask(mask_mod, 1, dense.shape[0], T, T, device=q.device)
        elif causal:
            bm = create_block_mask(lambda b, h, qi, ki: qi >= ki, None, None, T, T, device=q.device)
        else:
            bm = None
        fa = torch.compile(flex_attention)
        ms = median_events(lambda: fa(q, k, v, block_mask=bm), self.warm, self.reps, self.dev)
        return ("flex_compiled", ms)

    def bench_attention(self):
        dts = [("bf16", torch.float32 if self.dry else torch.bfloat16)]
        if not self.dry:
            dts.append(("fp16", torch.float16))
        for hd, H, Ts in self.attn_shapes():
            for dname, dt in dts:
                for T in Ts:
                    lines = ["vocab 256", "d_model %d" % (H * hd), "heads %d" % H, "ffn %d gelu_tanh" % (4 * H * hd),
                             "positions learned max=%d" % T, "segment %d" % T, "layers 1",
                             "attention causal"] + half_layouts(dname)
                    name = "bench_causal_hd%d_%s_T%d" % (hd, dname, T)
                    self.attention_row(name, "gpt2_small.arch", "gpt2_small", lines, T, H, hd, dt, None, True)
        self.bench_sparse()
        self.bench_memory_kinds()

    def attention_row(self, name, base_file, base, lines, T, H, hd, dt, mask, causal, pre=None, layers=1):
        try:
            sms = self.shortc_attention_ms(name, base_file, base, lines, T, layers=layers)
        except Exception as e:  # a failure is a row, not the end of the run
            self.row("attention", name, None, None, "-", "shortc: %s" % e, failed=True)
            return
        g = torch.Generator(device="cpu").manual_seed(0)
        q, k, v = (torch.randn(1, H, T, hd, generator=g).to(self.dev, dt) for _ in range(3))
        if pre:
            q, k, v = pre(q, k, v)
        flops = 4 * T * T * hd * H * (0.5 if causal and mask is None else 1.0)
        if mask is not None:
            flops = 4 * hd * float(mask.sum())
        for label, tms in self.torch_attention(q, k, v, mask, causal):
            self.row("attention", name, sms, tms, label, "shortc %.1f TFLOP/s%s" % (
                flops / sms / 1e9 if sms else 0,
                ", %.0f%% of the GEMM peak" % (100 * flops / sms / 1e9 / self.peaks["gemm_tflops"]) if sms else ""),
                {"T": T, "head_dim": hd, "heads": H, "flops": flops})

    def bench_sparse(self):
        T_list = [64] if self.dry else [1024, 4096]
        # (label, file, base model, extra lines): longformer_lm's window ramps over its 12 layers and its upper six
        # dilate two heads; its top layer (512 taps, heads 10-11 dilated by 4) stands for it, on gpt2_small
        kinds = [("local", "local.arch", "local", []),
                 ("longformer_lm_top", "gpt2_small.arch", "gpt2_small",
                  ["attention dilated size=512 dilation=4 undilated_heads=10"]),
                 ("sparse_strided", "sparse_strided.arch", "sparse_strided", []),
                 ("sparse_fixed", "sparse_fixed.arch", "sparse_fixed", []),
                 ("bigbird_lm", "bigbird_lm.arch", "bigbird_lm", []), ("gaussian", "gaussian.arch", "gaussian", [])]
        hd, H = (8, 12) if self.dry else (64, 12)  # 12 heads: sparse_strided's local_heads=6 is half of them
        dname, dt = ("bf16", torch.float32 if self.dry else torch.bfloat16)
        for label, f, base, extra in kinds:
            for T in T_list:
                name = "bench_%s_T%d" % (label, T)
                lines = ["vocab 256", "d_model %d" % (H * hd), "heads %d" % H, "ffn %d gelu_tanh" % (4 * H * hd),
                         "positions learned max=%d" % T, "segment %d" % T, "layers 1"] + extra + half_layouts(dname)
                arch = self.write_arch(name, f, base, lines)
                try:
                    npy = os.path.join(self.work, name + ".npy")
                    self.sh(["mask", arch, "--model", name, "--tokens", str(T), "-o", npy])
                    mask = torch.from_numpy(np.load(npy)[0])  # layer 0: [heads, T, T]
                except Exception as e:
                    self.row("attention", name, None, None, "-", "shortc mask: %s" % e, failed=True)
                    continue
                self.attention_row(name, f, base, lines, T, H, hd, dt, mask, False)

    def bench_memory_kinds(self):
        """PIA against SDPA on position-added inputs; relative attention against eager PyTorch."""
        T = 64 if self.dry else 2048
        hd, H = (16, 2) if self.dry else (64, 16)
        dname, dt = ("bf16", torch.float32 if self.dry else torch.bfloat16)
        common = ["vocab 256", "d_model %d" % (H * hd), "heads %d" % H, "head_dim %d" % hd,
                  "ffn %d relu" % (4 * H * hd), "segment %d" % T, "layers 1"] + half_layouts(dname)
        pos = torch.randn(1, 1, T, hd).to(self.dev, dt)
        # the bundled Shortformer's adaptive softmax needs its WikiText-103 vocabulary: a plain one here
        self.attention_row("bench_pia_T%d" % T, "shortformer.arch", "shortformer",
                           common + ["embedding tied", "cache %d" % T], T, H,
                           hd, dt, None, True, pre=lambda q, k, v: (q + pos, k + pos, v))
        name = "bench_relative_T%d" % T
        try:
            sms = self.shortc_attention_ms(name, "txl_wt103.arch", "txl_wt103",
                                           common + ["embedding tied", "memory %d" % T], T)
        except Exception as e:
            self.row("attention", name, None, None, "-", "shortc: %s" % e, failed=True)
            return
        g = torch.Generator(device="cpu").manual_seed(0)
        q, k, v = (torch.randn(1, H, T, hd, generator=g).to(self.dev, dt) for _ in range(3))
        r = torch.randn(1, H, T, hd, generator=g).to(self.dev, dt)
        u = torch.randn(1, H, 1, hd, generator=g).to(self.dev, dt)
        w = torch.randn(1, H, 1, hd, generator=g).to(self.dev, dt)
        ms = median_events(lambda: relative_attention(q, k, v, r, u, w), self.warm, self.reps, self.dev)
        self.row("attention", name, sms, ms, "eager", "Transformer-XL score terms, eager PyTorch", {"T": T})

    # ------------------------------------------------------------ prefill and decode
    def hf(self):
        try:
            import transformers
            return transformers
        except ImportError:
            return None

    def gpt2_weights(self, cfg_kw, path):
        """Random HF GPT-2 weights, saved under the hub's names for shortc; returns the HF model."""
        tf = self.hf()
        torch.manual_seed(0)
        last = cfg_kw["vocab_size"] - 1  # GPT-2's <|endoftext|> is the last id; so here
        cfg = tf.GPT2Config(bos_token_id=last, eos_token_id=last, **cfg_kw)
        model = tf.GPT2LMHeadModel(cfg).eval()
        from safetensors.torch import save_file
        sd = {k[len("transformer."):] if k.startswith("transformer.") else k: t.contiguous()
              for k, t in model.state_dict().items() if not k.startswith("lm_head")}
        save_file(sd, path)
        return model

    def bench_prefill(self):
        tf = self.hf()
        if tf is None:
            self.row("prefill", "gpt2_small", None, None, "hf", "skipped: transformers is not installed",
                     failed=self.a.require_hf)
            return
        shapes = ([("gpt2_tiny", "gpt2_tiny.arch", dict(n_layer=2, n_embd=64, n_head=4, vocab_size=256,
                                                          n_positions=128), [64])] if self.dry else
                  [("gpt2_small", "gpt2_small.arch", dict(n_layer=12, n_embd=768, n_head=12, vocab_size=50257,
                                                            n_positions=1024), [512, 1024])])
        for name, f, kw, Ts in shapes:
            w = os.path.join(self.work, name + ".safetensors")
            model = self.gpt2_weights(kw, w)
            dname = "fp32" if self.dry else "bf16"
            lines = [] if self.dry else half_layouts("bf16")
            arch = self.write_arch(name + "_b", f, name, lines)
            m, s = self.rt.open(arch, name + "_b", self.backend, w)
            hfm = model.to(self.dev, torch.float32 if self.dry else torch.bfloat16)
            try:
                for T in Ts:
                    ids = [(i * 7) % kw["vocab_size"] for i in range(T)]
                    for _ in range(self.warm):
                        self.rt.forward_last(s, ids, kw["vocab_size"])
                    sms = statistics.median(self.rt.forward_last(s, ids, kw["vocab_size"]) for _ in range(self.reps)) * 1e3
                    x = torch.tensor([ids], device=self.dev)
                    with torch.no_grad():
                        # same weights, so the last row's logits agree (to the storage precision)
                        mine = self.rt.last_logits(s, ids, kw["vocab_size"])
                        theirs = hfm(x).logits[0, -1].float().cpu().numpy()
                        diff = float(np.max(np.abs(mine - theirs)))
                        limit = 1e-3 if dname == "fp32" else 0.1  # bf16 storage rounds both sides' weights
                        eager = median_events(lambda: hfm(x), self.warm, self.reps, self.dev)
                        self.row("prefill", "%s %s T=%d" % (name, dname, T), sms, eager, "hf eager",
                                 "same weights: last-row logits differ by at most %.2g (limit %g)" % (diff, limit),
                                 {"T": T, "logits_max_diff": diff}, failed=not diff <= limit)
                        if not self.dry and hasattr(torch, "compile"):
                            cm = torch.compile(hfm)
                            comp = median_events(lambda: cm(x), self.warm, self.reps, self.dev)
                            self.row("prefill", "%s %s T=%d" % (name, dname, T), sms, comp, "hf torch.compile",
                                     "same weights", {"T": T})
            finally:
                self.rt.close(m, s)

    def shortc_decode_tps(self, arch, name, weights, batch, ctx, new):
        """Decoding tokens/s of `shortc generate`: (new - 1) steps per sequence over the time beyond one token."""
        prompts = os.path.join(self.work, "prompts_%d_%d.ids" % (batch, ctx))
        with open(prompts, "w") as f:
            for b in range(batch):
                f.write(" ".join(str((i * 7 + b) % 256) for i in range(ctx - new)) + "\n")

        def run(n):
            _, err = self.sh(["generate", arch, "--model", name, "--backend", self.backend, "--weights", weights,
                              "--prompts", prompts, "--max-new", str(n)])
            return float(re.search(r"generated in ([0-9.]+) ms", err).group(1))
        t1 = statistics.median(run(1) for _ in range(3))
        tn = statistics.median(run(new) for _ in range(3))
        if tn <= t1:
            raise RuntimeError("decoding %d tokens took no longer than one (%.1f ms vs %.1f ms): too short to time"
                               % (new, tn, t1))
        return batch * (new - 1) / (tn - t1) * 1e3

    def bench_decode(self):
        tf = self.hf()
        if tf is None:
            self.row("decode", "gpt2_small", None, None, "hf", "skipped: transformers is not installed",
                     failed=self.a.require_hf)
            return
        if self.dry:
            kw, f, name, ctxs, batches, new = (dict(n_layer=2, n_embd=64, n_head=4, vocab_size=256, n_positions=128),
                                               "gpt2_tiny.arch", "gpt2_tiny", [64], [1, 2], 24)
        else:
            kw, f, name, ctxs, batches, new = (dict(n_layer=12, n_embd=768, n_head=12, vocab_size=50257,
                                                    n_positions=4096), "gpt2_small.arch", "gpt2_small", [1024, 4096],
                                               [1, 8, 64], 64)
        hf_label = "hf generate" if self.dry else "hf generate static"
        w = os.path.join(self.work, name + "_dec.safetensors")
        model = self.gpt2_weights(kw, w).to(self.dev, torch.float32 if self.dry else torch.bfloat16)
        for ctx in ctxs:
            # the learned position table as HF's (n_positions), the segment the context
            lines = ["positions learned max=%d" % kw["n_positions"], "segment %d" % ctx]
            if not self.dry:
                lines += half_layouts("bf16")
            arch = self.write_arch("%s_ctx%d" % (name, ctx), f, name, lines)
            for B in batches:
                label = "%s ctx=%d batch=%d" % (name, ctx, B)
                try:
                    stps = self.shortc_decode_tps(arch, "%s_ctx%d" % (name, ctx), w, B, ctx, new)
                except Exception as e:
                    # a dry run checks the flow: its CPU timings are noise-bound (prefill dominates a tiny model's
                    # generate), so an untimeable decode there is noted, not failed; on a GPU it fails the row
                    untimed = self.dry and "too short to time" in str(e)
                    self.row("decode", label, None, None, "hf generate", "shortc: %s" % e, failed=not untimed)
                    continue
                x = torch.tensor([[(i * 7 + b) % 256 for i in range(ctx - new)] for b in range(B)], device=self.dev)
                gen = lambda n: model.generate(x, max_new_tokens=n, min_new_tokens=n, do_sample=False,
                                               cache_implementation="static" if not self.dry else None,
                                               pad_token_id=0)
                with torch.no_grad():
                    t1 = median_events(lambda: gen(1), 1, 3, self.dev)
                    tn = median_events(lambda: gen(new), 1, 3, self.dev)
                if tn <= t1:
                    self.row("decode", label, 1e3 / stps, None, hf_label, "hf: too short to time")
                    continue
                htps = B * (new - 1) / (tn - t1) * 1e3
                # as times per generated token, so the ratio reads like the others (below 1: shortc faster)
                self.row("decode", label, 1e3 / stps, 1e3 / htps, hf_label,
                         "shortc %.0f tok/s, hf %.0f tok/s" % (stps, htps), {"shortc_tps": stps, "torch_tps": htps})

    def run(self):
        print("bench: shortc %s on %s; PyTorch %s on %s" % (self.shortc, self.backend, torch.__version__, self.dev))
        if not self.dry and not torch.cuda.is_available():
            sys.exit("bench: no GPU visible to PyTorch (use --dry-run on the CPU)")
        self.measure_peaks()
        print("%-9s %-44s %10s %10s %7s  %-22s %s" % ("section", "case", "shortc ms", "torch ms", "ratio",
                                                      "baseline", "note"))
        only = set(self.a.only.split(",")) if self.a.only else {"attention", "prefill", "decode"}
        try:
            if "attention" in only:
                self.bench_attention()
            if "prefill" in only:
                self.bench_prefill()
            if "decode" in only:
                self.bench_decode()
        finally:
            shutil.rmtree(self.work, ignore_errors=True)
        env = {"date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "torch": torch.__version__, "dry_run": self.dry,
               "device": torch.cuda.get_device_name(0) if not self.dry else "cpu",
               "cuda": getattr(torch.version, "cuda", None)}
        os.makedirs(self.a.out, exist_ok=True)
        with open(os.path.join(self.a.out, "bench.json"), "w") as f:
            json.dump({"env": env, "peaks": self.peaks, "rows": self.rows}, f, indent=1)
        measured = sum(1 for r in self.rows if r["ratio"] is not None)
        failed = sum(1 for r in self.rows if r["failed"])
        print("bench: %d rows, %d with a ratio, %d failed; %s" % (len(self.rows), measured, failed, os.path.join(self.a.out,
                                                                                               "bench.json")))
        return 0 if measured and not failed else 1


def half_layouts(dtype):
    """The .arch lines that store weights, activations and K/V in dtype (the tensor-core path's storage)."""
    return ["layout weights %s [in, out]" % dtype, "layout activations %s [tokens, channels]" % dtype,
            "layout kv %s [heads, tokens, dim]" % dtype]


def eager_attention(q, k, v, mask, causal):
    s = (q @ k.transpose(-1, -2)) * q.shape[-1] ** -0.5
    T = q.shape[2]
    if mask is not None:
        s = s.masked_fill(~mask.to(s.device), float("-inf"))
    elif causal:
        s = s.masked_fill(torch.ones(T, T, dtype=torch.bool, device=s.device).triu(1), float("-inf"))
    return torch.softmax(s.float(), -1).to(v.dtype) @ v


def relative_attention(q, k, v, r, u, w):
    """Transformer-XL's scores (q+u)k^T + shift((q+w)r^T), causal, softmax, times v (Dai et al. 2019, A.2)."""
    T = q.shape[2]
    ac = (q + u) @ k.transpose(-1, -2)
    bd = (q + w) @ r.transpose(-1, -2)  # r[j]: distance T-1-j
    bd = torch.nn.functional.pad(bd, (1, 0)).view(*bd.shape[:2], T + 1, T)[:, :, 1:].view_as(bd)  # the shift
    s = (ac + bd) * q.shape[-1] ** -0.5
    s = s.masked_fill(torch.ones(T, T, dtype=torch.bool, device=s.device).triu(1), float("-inf"))
    return torch.softmax(s.float(), -1).to(v.dtype) @ v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="bench-out", help="directory for bench.json (default bench-out)")
    ap.add_argument("--dry-run", action="store_true", help="the CPU: simulator and PyTorch's CPU paths, tiny shapes")
    ap.add_argument("--shortc", help="the shortc executable (default: build/bundle/bin/shortc, build/shortc)")
    ap.add_argument("--only", help="comma-separated sections: attention, prefill, decode")
    ap.add_argument("--require-hf", action="store_true", help="a missing transformers is a failure, not a skip")
    return Bench(ap.parse_args()).run()


if __name__ == "__main__":
    sys.exit(main())
