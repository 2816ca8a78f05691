"""shortc.attention (srt_attention_run): every mask-only kind against a PyTorch reference built from the kind's
boolean mask as shortc.mask gives it for a one-layer model (seeded kinds draw layer 0's pattern), on the
simulator; [H, T, D] and [B, H, T, D]; T = 1, 17, 65; head widths 16 and 64; fp32, fp16, bf16; NumPy in and out;
errors with the .arch front end's messages; four threads on one plan; reference counts unchanged. Kept small: each (kind, parameters, shape class, dtype) is one
kernel compile on the simulator (cached on disk between runs)."""
import math
import os

import numpy as np
import pytest

import shortc
from conftest import SOURCE

torch = pytest.importorskip("torch")

H = 2

# kind -> its parameters (those of tests/attention/test_engine.c where they fit T <= 65)
KINDS = {
    "causal": {},
    "window": {"size": 5},
    "dilated": {"size": 4, "dilation": 3, "global": 2},
    "strided": {"stride": 6, "local_heads": 1},
    "bigbird": {"block": 4, "random": 2, "seed": 4},
    "gaussian": {"c": 5, "seed": 3},
    "fixed": {"stride": 7, "c": 2, "local_heads": 1},  # the summary head's first queries see no key: zeros
}


def kind_mask(kind, params, tokens, heads=H):
    """bool [heads, tokens, tokens] of the kind from shortc.mask on a one-layer model (srt_mask)."""
    spelled = " ".join("%s=%d" % kv for kv in sorted(params.items()))
    text = ('import "gpt2_tiny.arch";\nmodel m : gpt2_tiny {\n  heads %d;\n  layers 1;\n  attention %s %s;\n}\n'
            % (heads, kind, spelled))
    m = shortc.mask(text, tokens, name=os.path.join(SOURCE, "models", "attn_fn.arch"))
    assert m.shape == (1, heads, tokens, tokens)
    return torch.from_numpy(m[0])


def reference(q, k, v, mask, scale=None):
    """softmax(scale q k^T, masked) v in float64 ([..., H, T, D]); a query that sees nothing gives zeros."""
    q, k, v = (x.double() for x in (q, k, v))
    s = q @ k.transpose(-1, -2) * (scale if scale is not None else 1.0 / math.sqrt(q.shape[-1]))
    s = s.masked_fill(~mask, float("-inf"))
    p = torch.softmax(s, dim=-1).nan_to_num(0.0)
    return p @ v


def inputs(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(*shape, generator=g).to(dtype) for _ in range(3)]


def check(kind, params, shape, dtype=torch.float32, tol=1e-5, scale=None, seed=0):
    q, k, v = inputs(shape, dtype, seed)
    out = shortc.attention(q, k, v, kind, scale=scale, **params)
    assert isinstance(out, torch.Tensor) and out.shape == q.shape and out.dtype == q.dtype
    ref = reference(q, k, v, kind_mask(kind, params, shape[-2], shape[-3]), scale)
    err = (out.double() - ref).abs().max().item()
    assert err <= tol, "%s %s %s: max |out - ref| = %g" % (kind, shape, dtype, err)
    return out


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_kinds_fp32(kind):
    out = check(kind, KINDS[kind], (H, 17, 16))
    if kind == "fixed":
        assert not out[1, :5].any()  # queries 0..4 of the summary head (columns 5, 6 of each block of 7)


@pytest.mark.parametrize("kind", ["window", "bigbird"])
def test_batch_and_odd_lengths(kind):
    check(kind, KINDS[kind], (3, H, 17, 16), seed=1)
    check(kind, KINDS[kind], (H, 1, 16), seed=2)
    if kind == "window":  # the next token class (128 positions): one more kernel
        check(kind, KINDS[kind], (2, H, 65, 16), seed=3)


def test_head_dim_64_and_scale():
    check("causal", {}, (H, 17, 64), scale=0.3, seed=4)  # the scale is part of the kernel (the default: elsewhere)
    check("causal", {}, (2, H, 17, 64), scale=0.3, seed=5)


def test_causal_equals_torch_sdpa():
    sdpa = getattr(torch.nn.functional, "scaled_dot_product_attention", None)
    if sdpa is None:
        pytest.skip("this PyTorch (%s) has no scaled_dot_product_attention" % torch.__version__)
    q, k, v = inputs((2, H, 17, 16), torch.float32, 6)
    ours = shortc.attention(q, k, v)
    theirs = sdpa(q, k, v, is_causal=True)
    assert (ours - theirs).abs().max().item() <= 1e-5


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_types(dtype):
    check("window", KINDS["window"], (H, 17, 16), dtype=dtype, tol=2e-2, seed=7)  # the tensor-core path
    check("window", KINDS["window"], (2, H, 17, 16), dtype=dtype, tol=2e-2, seed=8)


def test_numpy_in_numpy_out():
    q, k, v = (x.numpy() for x in inputs((H, 17, 16), torch.float32, 9))
    out = shortc.attention(q, k, v, "window", size=5)
    assert isinstance(out, np.ndarray) and out.shape == q.shape and out.dtype == np.float32
    ref = reference(*(torch.from_numpy(x) for x in (q, k, v)), kind_mask("window", {"size": 5}, 17))
    assert np.abs(out - ref.numpy()).max() <= 1e-5


def test_plan_compiles_once_per_token_class():
    q, k, v = inputs((H, 9, 16), torch.float32, 10)
    first = shortc.attention(q, k, v, "window", size=5)
    plan = shortc._attention_plans[("window", (("size", 5.0),), H, 16, "fp32", 0.0, "sim", 0, None, 0)]
    before = plan.modules()[0]
    again = shortc.attention(q, k, v, "window", size=5)
    assert plan.modules()[0] == before >= 1
    assert torch.equal(first, again)


def arch_error(kind_text):
    """The compile error the .arch front end gives for `attention KIND_TEXT;`."""
    text = 'import "gpt2_tiny.arch";\nmodel m : gpt2_tiny {\n  heads 2;\n  attention %s;\n}\n' % kind_text
    with pytest.raises(shortc.CompileError) as e:
        shortc.compile(text, name=os.path.join(SOURCE, "models", "attn_fn.arch"), backend="ref")
    return str(e.value)


@pytest.mark.parametrize("call, spelled, expected", [
    (dict(kind="windo", size=3), "windo size=3", "unknown attention kind 'windo'; did you mean 'window'?"),
    (dict(kind="window", sise=3), "window sise=3", "attention 'window' has no parameter 'sise'; did you mean 'size'?"),
    (dict(kind="window"), "window", "attention 'window' needs 'size=NUM'"),
    (dict(kind="window", size=0), "window size=0", "attention 'window': size=0 must be a whole number in [1, 1048576]"),
    (dict(kind="strided", stride=4, local_heads=3), "strided stride=4 local_heads=3",
     "attention 'strided': local_heads=3 must be a whole number in [0, 2]"),
    (dict(kind="bigbird", block=4, window=2), "bigbird block=4 window=2", "attention 'bigbird': window=2 must be odd"),
])
def test_parameter_errors_are_the_front_ends(call, spelled, expected):
    q, k, v = inputs((H, 5, 16), torch.float32, 11)
    kind = call.pop("kind")
    with pytest.raises(shortc.Error) as e:
        shortc.attention(q, k, v, kind, **call)
    assert expected in str(e.value) and e.value.status == "SRT_ERR_INVALID"
    assert expected in arch_error(spelled)


def test_refused_kinds_and_bad_tensors():
    q, k, v = inputs((H, 5, 16), torch.float32, 12)
    with pytest.raises(shortc.Error, match="relative.*not a function of q, k and v"):
        shortc.attention(q, k, v, "relative")
    with pytest.raises(ValueError, match="share one shape"):
        shortc.attention(q, k[:, :4], v)
    with pytest.raises(ValueError, match="share one shape"):
        shortc.attention(q[0], k[0], v[0])
    with pytest.raises(TypeError, match="dtype"):
        shortc.attention(q, k.half(), v)
    with pytest.raises(TypeError, match="dtype"):
        shortc.attention(q.double(), k.double(), v.double())
    with pytest.raises(TypeError, match="all be PyTorch tensors or all NumPy"):
        shortc.attention(q, k.numpy(), v)
    with pytest.raises(TypeError, match="backend 'cuda' needs CUDA tensors"):
        shortc.attention(q, k, v, backend="cuda")
    with pytest.raises(TypeError, match="must be a number"):
        shortc.attention(q, k, v, "window", size="5")
    with pytest.raises(ValueError, match="scale"):
        shortc.attention(q, k, v, scale=-1.0)
    with pytest.raises(shortc.Error, match="head_dim=200"):
        shortc.attention(*inputs((1, 3, 200), torch.float32, 13))


def test_non_contiguous_inputs_and_grad_tensors():
    q, k, v = inputs((H, 17, 16), torch.float32, 14)
    qt = q.transpose(0, 1).contiguous().transpose(0, 1)  # same values, not contiguous
    q.requires_grad_(True)
    out = shortc.attention(qt, k, v)
    assert torch.equal(out, shortc.attention(q, k, v))


def test_threads_and_reference_counts():
    import sys
    import threading
    q, k, v = inputs((H, 9, 16), torch.float32, 15)
    want = shortc.attention(q, k, v, "window", size=5)
    counts = [sys.getrefcount(x) for x in (q, k, v, want)]
    for _ in range(50):
        shortc.attention(q, k, v, "window", size=5)
    assert [sys.getrefcount(x) for x in (q, k, v, want)] == counts
    results, errors = [], []

    def work():
        try:
            for _ in range(5):
                results.append(shortc.attention(q, k, v, "window", size=5))
        except Exception as e:  # reported below
            errors.append(e)
    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 20
    assert all(torch.equal(r, want) for r in results)
