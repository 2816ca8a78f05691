#!/usr/bin/python3
"""Goldens of the rotary / ALiBi / grouped-query models (issue 22) in tests/golden/.

For each model: seeded random weights under HF GPT-2 names (<model>.safetensors),
37 token ids (<model>.tokens) and reference logits (<model>.logits.npy, float32
[37, vocab]). The logits come from HF transformers 4.38.2 (LlamaForCausalLM,
MistralForCausalLM, GPTNeoXForCausalLM, in float64, eager attention) where it
has the model: plain, linear and dynamic rope, the sliding window and NeoX's
partial rotary. YaRN, Llama 3.1 scaling, GPT-J's interleaved pairs and ALiBi
(not in 4.38) come from the independent float64 forward below, written from
their definitions (the YaRN and Llama 3.1 papers / HF's later
_compute_yarn_parameters and _compute_llama3_parameters, Press et al.'s
slopes); that forward is also checked against HF on every model HF has
(max |diff| < 1e-5: HF 4.38 recomputes dynamic scaling's frequencies in float32). Nothing here shares code with shortc.

Usage: PYTHONPATH=/opt/shortc-hf /usr/bin/python3 tests/gen_goldens_rope.py [--out DIR] [--check] [MODEL...]
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import torch
    import torch.nn.functional as F
    import gen_goldens as gg  # safetensors writer and the --check driver
except ImportError as e:
    print("gen_goldens_rope.py: %s" % e, file=sys.stderr)
    sys.exit(77)

LLAMA = dict(family="llama", vocab=256, d_model=64, heads=4, kv_heads=2, head_dim=16, ffn=176, eps=1e-6,
             layers=2, theta=10000.0, dims=16, interleaved=False, scaling=None, window=None)
# transcribed from models/*.arch (keep in sync); file: the .arch, model: its model name
MODELS = {
    "llama_rope_tiny": dict(LLAMA, file="llama_rope_tiny", seed=2201),
    "llama_rope_linear_tiny": dict(LLAMA, file="llama_rope_tiny", seed=2202, scaling=dict(type="linear", factor=2.5)),
    "llama_rope_dynamic_tiny": dict(LLAMA, file="llama_rope_tiny", seed=2203,
                                    scaling=dict(type="dynamic", factor=3.0, original_max=16)),
    "llama_rope_yarn_tiny": dict(LLAMA, file="llama_rope_tiny", seed=2204,
                                 scaling=dict(type="yarn", factor=4.0, original_max=16, beta_fast=32.0, beta_slow=1.0)),
    "llama_rope_llama3_tiny": dict(LLAMA, file="llama_rope_tiny", seed=2205, theta=500000.0,
                                   scaling=dict(type="llama3", factor=8.0, original_max=16, low_freq=1.0,
                                                high_freq=4.0)),
    "llama_rope_yarn_half_tiny": dict(LLAMA, file="llama_rope_tiny", seed=2210, wdtype="bf16",
                                      scaling=dict(type="yarn", factor=4.0, original_max=16, beta_fast=32.0,
                                                   beta_slow=1.0)),
    "llama_rope_mqa_tiny": dict(LLAMA, file="llama_rope_tiny", seed=2206, kv_heads=1, interleaved=True),
    "mistral_tiny": dict(LLAMA, file="mistral_tiny", seed=2207, ffn=128, eps=1e-5, window=8),
    "neox_rope_tiny": dict(family="neox", file="neox_rope_tiny", seed=2208, vocab=200, d_model=64, heads=4,
                           kv_heads=4, head_dim=16, ffn=256, eps=1e-5, layers=2, theta=10000.0, dims=4,
                           interleaved=False, scaling=None, window=None),
    "alibi_tiny": dict(family="alibi", file="alibi_tiny", seed=2209, vocab=200, d_model=48, heads=6, kv_heads=6,
                       head_dim=8, ffn=192, eps=1e-5, layers=2, window=None, scaling=None),
}
NTOKENS = 37
DECODE_CHUNKS = (1, 5)  # tokens per call of the dynamic-scaling decode goldens


def make_weights(cfg):
    """Our names (HF GPT-2's), fp32, in the file layout: Conv1D [in, out] (shortc transposes for [out, in] layouts)."""
    g = torch.Generator().manual_seed(cfg["seed"])
    V, D, H, G, hd, Fd = cfg["vocab"], cfg["d_model"], cfg["heads"], cfg["kv_heads"], cfg["head_dim"], cfg["ffn"]
    bias = cfg["family"] != "llama"
    rms = cfg["family"] == "llama"
    W = {}

    def randn(*shape, std=1.0, mean=0.0):
        return (torch.randn(*shape, generator=g, dtype=torch.float32) * std + mean).contiguous()

    def linear(name, n_in, n_out):
        W[name + ".weight"] = randn(n_in, n_out, std=0.08)
        if bias:
            W[name + ".bias"] = randn(n_out, std=0.02)

    def norm(name):
        W[name + ".weight"] = randn(D, std=0.1, mean=1.0)
        if not rms:
            W[name + ".bias"] = randn(D, std=0.05)

    W["wte.weight"] = randn(V, D, std=0.3)
    for i in range(cfg["layers"]):
        p = "h.%d." % i
        norm(p + "ln_1")
        linear(p + "attn.c_attn", D, (H + 2 * G) * hd)
        linear(p + "attn.c_proj", H * hd, D)
        norm(p + "ln_2")
        if cfg["family"] == "llama":
            linear(p + "mlp.c_gate", D, Fd)
        linear(p + "mlp.c_fc", D, Fd)
        linear(p + "mlp.c_proj", Fd, D)
    norm("ln_f")
    if cfg["family"] != "alibi":
        W["lm_head.weight"] = randn(V, D, std=0.1)
    return W


def in_out(cfg, W, name):
    """Weight `name` as [in, out] float64 (the file layout)."""
    return W[name].to(torch.float64)


# ---- the independent forward ----------------------------------------------------------------------------------

def inv_freq(cfg, seq_len):
    """Rotary inverse frequencies and the cos/sin factor, from the definitions of each scaling."""
    dims, theta, sc = cfg["dims"], cfg["theta"], cfg["scaling"] or {}
    kind = sc.get("type")
    if kind == "dynamic" and seq_len > sc["original_max"]:  # NTK-aware base growth (HF dynamic)
        theta = theta * (sc["factor"] * seq_len / sc["original_max"] - (sc["factor"] - 1)) ** (dims / (dims - 2))
    f = 1.0 / theta ** (torch.arange(0, dims, 2, dtype=torch.float64) / dims)
    if kind == "linear":
        return f / sc["factor"], 1.0
    if kind == "yarn":  # YaRN (Peng et al. 2023): ramp between interpolation and extrapolation, mscale
        def corr(rot):
            return dims * math.log(sc["original_max"] / (rot * 2 * math.pi)) / (2 * math.log(theta))
        lo, hi = max(math.floor(corr(sc["beta_fast"])), 0), min(math.ceil(corr(sc["beta_slow"])), dims - 1)
        hi = hi + 0.001 if lo == hi else hi
        ramp = ((torch.arange(dims // 2, dtype=torch.float64) - lo) / (hi - lo)).clamp(0, 1)
        keep = 1 - ramp
        return f / sc["factor"] * (1 - keep) + f * keep, 0.1 * math.log(sc["factor"]) + 1.0
    if kind == "llama3":  # Llama 3.1: by wavelength against the original context
        wl = 2 * math.pi / f
        lo_wl, hi_wl = sc["original_max"] / sc["low_freq"], sc["original_max"] / sc["high_freq"]
        smooth = (sc["original_max"] / wl - sc["low_freq"]) / (sc["high_freq"] - sc["low_freq"])
        mid = (1 - smooth) * f / sc["factor"] + smooth * f
        return torch.where(wl > lo_wl, f / sc["factor"], torch.where(wl < hi_wl, f, mid)), 1.0
    return f, 1.0


def rotate(cfg, x, pos, seq_len):
    """x [heads, T, hd] rotated to positions pos [T] on its first dims channels."""
    f, m = inv_freq(cfg, seq_len)
    ang = pos.to(torch.float64)[:, None] * f[None, :]  # [T, dims/2]
    c, s = torch.cos(ang) * m, torch.sin(ang) * m
    x = x.clone()
    d = cfg["dims"]
    if cfg["interleaved"]:
        a, b = x[..., 0:d:2].clone(), x[..., 1:d:2].clone()
        x[..., 0:d:2], x[..., 1:d:2] = a * c - b * s, b * c + a * s
    else:
        a, b = x[..., : d // 2].clone(), x[..., d // 2: d].clone()
        x[..., : d // 2], x[..., d // 2: d] = a * c - b * s, b * c + a * s
    return x


def alibi_slopes(H):
    """Press et al.'s slopes: 2^(-8k/n) for the closest power of two n <= H, then the next power's odd ones."""
    n = 2 ** math.floor(math.log2(H))
    s = [2.0 ** (-8.0 * k / n) for k in range(1, n + 1)]
    s += [2.0 ** (-8.0 * k / (2 * n)) for k in range(1, 2 * (H - n), 2)]
    return torch.tensor(s, dtype=torch.float64)


def forward(cfg, W, tokens):
    T, D, H, G, hd = len(tokens), cfg["d_model"], cfg["heads"], cfg["kv_heads"], cfg["head_dim"]
    x = W["wte.weight"].to(torch.float64)[torch.tensor(tokens)]
    pos = torch.arange(T)
    i, j = pos[:, None], pos[None, :]
    masked = j > i
    if cfg["window"]:
        masked = masked | (i - j >= cfg["window"])

    def lin(h, name):
        y = h @ in_out(cfg, W, name + ".weight")
        return y + W[name + ".bias"].to(torch.float64) if name + ".bias" in W else y

    def norm(h, name):
        w = W[name + ".weight"].to(torch.float64)
        if cfg["family"] == "llama":
            return h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + cfg["eps"]) * w
        return F.layer_norm(h, (D,), w, W[name + ".bias"].to(torch.float64), cfg["eps"])

    def attn(h, p):
        qkv = lin(h, p + "attn.c_attn")
        q = qkv[:, : H * hd].view(T, H, hd).transpose(0, 1)
        k = qkv[:, H * hd: (H + G) * hd].view(T, G, hd).transpose(0, 1)
        v = qkv[:, (H + G) * hd:].view(T, G, hd).transpose(0, 1)
        if cfg["family"] != "alibi":
            q, k = rotate(cfg, q, pos, T), rotate(cfg, k, pos, T)
        k, v = k.repeat_interleave(H // G, 0), v.repeat_interleave(H // G, 0)  # query head h reads group h // (H/G)
        s = q @ k.transpose(-1, -2) / math.sqrt(hd)
        if cfg["family"] == "alibi":
            s = s - alibi_slopes(H)[:, None, None] * (i - j).to(torch.float64)
        a = torch.softmax(s.masked_fill(masked, float("-inf")), -1) @ v
        return lin(a.transpose(0, 1).reshape(T, H * hd), p + "attn.c_proj")

    def mlp(h, p):
        if cfg["family"] == "llama":
            return lin(F.silu(lin(h, p + "mlp.c_gate")) * lin(h, p + "mlp.c_fc"), p + "mlp.c_proj")
        return lin(F.gelu(lin(h, p + "mlp.c_fc")), p + "mlp.c_proj")

    for layer in range(cfg["layers"]):
        p = "h.%d." % layer
        if cfg["family"] == "neox":
            x = x + attn(norm(x, p + "ln_1"), p) + mlp(norm(x, p + "ln_2"), p)
        else:
            x = x + attn(norm(x, p + "ln_1"), p)
            x = x + mlp(norm(x, p + "ln_2"), p)
    x = norm(x, "ln_f")
    out = W["lm_head.weight" if "lm_head.weight" in W else "wte.weight"].to(torch.float64)
    return x @ out.t()


# ---- HF transformers 4.38.2 -----------------------------------------------------------------------------------

def hf_logits(cfg, W, tokens, chunk=0):
    """HF's logits for the models 4.38 has, our weights mapped to its names; None where it has none. chunk > 0:
    decoded chunk tokens per call through HF's KV cache (past_key_values) instead of one forward."""
    try:
        import transformers as tf
    except ImportError:
        return None
    sc = cfg["scaling"]
    if cfg.get("interleaved") or cfg["family"] == "alibi" or (sc and sc["type"] not in ("linear", "dynamic")):
        return None
    H, G, hd, D = cfg["heads"], cfg["kv_heads"], cfg["head_dim"], cfg["d_model"]
    L = lambda name: in_out(cfg, W, name + ".weight").t().contiguous()  # nn.Linear [out, in]
    sd = {}
    if cfg["family"] == "neox":
        conf = tf.GPTNeoXConfig(vocab_size=cfg["vocab"], hidden_size=D, num_hidden_layers=cfg["layers"],
                                num_attention_heads=H, intermediate_size=cfg["ffn"], hidden_act="gelu",
                                rotary_pct=cfg["dims"] / hd, rotary_emb_base=cfg["theta"], max_position_embeddings=64,
                                layer_norm_eps=cfg["eps"], use_parallel_residual=True, tie_word_embeddings=False,
                                attn_implementation="eager")
        model = tf.GPTNeoXForCausalLM(conf)
        sd["gpt_neox.embed_in.weight"] = W["wte.weight"]
        for i in range(cfg["layers"]):
            p, q = "h.%d." % i, "gpt_neox.layers.%d." % i
            for ours, theirs in (("ln_1", "input_layernorm"), ("ln_2", "post_attention_layernorm")):
                sd[q + theirs + ".weight"], sd[q + theirs + ".bias"] = W[p + ours + ".weight"], W[p + ours + ".bias"]
            # NeoX's query_key_value is [H, 3, hd] on its output axis; ours is q | k | v
            w, b = L(p + "attn.c_attn"), W[p + "attn.c_attn.bias"]
            sd[q + "attention.query_key_value.weight"] = w.view(3, H, hd, D).transpose(0, 1).reshape(3 * H * hd, D)
            sd[q + "attention.query_key_value.bias"] = b.view(3, H, hd).transpose(0, 1).reshape(-1)
            for ours, theirs in (("attn.c_proj", "attention.dense"), ("mlp.c_fc", "mlp.dense_h_to_4h"),
                                 ("mlp.c_proj", "mlp.dense_4h_to_h")):
                sd[q + theirs + ".weight"], sd[q + theirs + ".bias"] = L(p + ours), W[p + ours + ".bias"]
        sd["gpt_neox.final_layer_norm.weight"], sd["gpt_neox.final_layer_norm.bias"] = W["ln_f.weight"], W["ln_f.bias"]
        sd["embed_out.weight"] = W["lm_head.weight"]
    else:
        common = dict(vocab_size=cfg["vocab"], hidden_size=D, intermediate_size=cfg["ffn"],
                      num_hidden_layers=cfg["layers"], num_attention_heads=H, num_key_value_heads=G,
                      rms_norm_eps=cfg["eps"], rope_theta=cfg["theta"], tie_word_embeddings=False,
                      attn_implementation="eager")
        if cfg["window"]:
            model = tf.MistralForCausalLM(tf.MistralConfig(sliding_window=cfg["window"], max_position_embeddings=64,
                                                           **common))
        else:
            rs = dict(type=sc["type"], factor=sc["factor"]) if sc else None
            mp = sc.get("original_max", 64) if sc else 64
            model = tf.LlamaForCausalLM(tf.LlamaConfig(rope_scaling=rs, max_position_embeddings=mp, **common))
        sd["model.embed_tokens.weight"] = W["wte.weight"]
        for i in range(cfg["layers"]):
            p, q = "h.%d." % i, "model.layers.%d." % i
            sd[q + "input_layernorm.weight"] = W[p + "ln_1.weight"]
            sd[q + "post_attention_layernorm.weight"] = W[p + "ln_2.weight"]
            w = L(p + "attn.c_attn")
            sd[q + "self_attn.q_proj.weight"] = w[: H * hd]
            sd[q + "self_attn.k_proj.weight"] = w[H * hd: (H + G) * hd]
            sd[q + "self_attn.v_proj.weight"] = w[(H + G) * hd:]
            sd[q + "self_attn.o_proj.weight"] = L(p + "attn.c_proj")
            sd[q + "mlp.gate_proj.weight"] = L(p + "mlp.c_gate")
            sd[q + "mlp.up_proj.weight"] = L(p + "mlp.c_fc")
            sd[q + "mlp.down_proj.weight"] = L(p + "mlp.c_proj")
        sd["model.norm.weight"] = W["ln_f.weight"]
        sd["lm_head.weight"] = W["lm_head.weight"]
    missing, unexpected = model.load_state_dict(sd, strict=False)
    buffers = ("rotary_emb", "masked_bias", "attention.bias")  # HF's non-weight buffers (causal mask, inv_freq)
    missing = [m for m in missing if not any(b in m for b in buffers)]
    assert not missing and not unexpected, (missing, unexpected)
    if hasattr(getattr(model, "model", None), "causal_mask"):  # 4.38 sizes it by max_position_embeddings only
        model.model.register_buffer("causal_mask", torch.triu(torch.ones(64, 64, dtype=torch.bool), 1), persistent=False)
    model = model.double().eval()
    torch.set_default_dtype(torch.float64)  # 4.38's 4-D masks are filled at the default dtype
    try:
        with torch.no_grad():
            if not chunk:
                return model(torch.tensor([tokens])).logits[0]
            rows, past = [], None
            for at in range(0, len(tokens), chunk):
                out = model(torch.tensor([tokens[at: at + chunk]]), past_key_values=past, use_cache=True)
                rows.append(out.logits[0])
                past = out.past_key_values
            return torch.cat(rows)
    finally:
        torch.set_default_dtype(torch.float32)


def generate(name):
    cfg = MODELS[name]
    W = make_weights(cfg)
    toks = torch.randint(0, cfg["vocab"], (NTOKENS,), generator=torch.Generator().manual_seed(cfg["seed"] + 7)).tolist()
    # bf16 storage: the weights as shortc's loader rounds them (activations stay float64 here: compared at 2e-2)
    Wc = {k: gg.stored(v, cfg.get("wdtype", "fp32")).to(torch.float32) for k, v in W.items()}
    ours = forward(cfg, Wc, toks)
    hf = hf_logits(cfg, Wc, toks)
    if hf is not None:
        diff = (hf - ours).abs().max().item()
        assert diff < 1e-5, "%s: the independent forward differs from HF by %g" % (name, diff)
    logits = (hf if hf is not None else ours).to(torch.float32).numpy()
    gen = "tests/gen_goldens_rope.py (%s)" % ("HF transformers " + __import__("transformers").__version__
                                              if hf is not None else "independent PyTorch forward")
    files = gg.golden_files(name, W, toks, logits, gen, cfg["seed"])
    if (cfg["scaling"] or {}).get("type") == "dynamic":
        # dynamic scaling depends on each call's length and the cache keeps keys rotated at their call's base:
        # decoding c tokens per call gives other logits than one forward, as in HF
        for c in DECODE_CHUNKS:
            files[name + ".chunk%d.logits.npy" % c] = gg.npy_bytes(hf_logits(cfg, Wc, toks, c).to(torch.float32).numpy())
    return files


def main():
    return gg.run_generators(generate, MODELS, os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden"))


if __name__ == "__main__":
    sys.exit(main())
