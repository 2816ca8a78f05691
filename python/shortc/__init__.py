"""shortc: compile ``.arch`` transformer models and run them through shortc's runtime (libshortrt).

The runtime does the work; this module converts Python inputs (lists, NumPy arrays, anything with
``__dlpack__`` such as PyTorch CPU tensors) into the C-contiguous arrays the runtime reads and returns
NumPy arrays (which themselves export ``__dlpack__``: ``torch.from_dlpack(logits)`` shares the memory).
Failures raise :class:`Error` (or :class:`CompileError`) with the runtime's message. See docs/python.md.
"""
from __future__ import annotations

import os
import threading
from typing import Any, Dict, Mapping, Optional, Union

import numpy as np

from . import _shortc
from ._shortc import CompileError, Error

__all__ = ["compile", "compare", "mask", "attention", "Model", "Session", "Tokenizer", "Error", "CompileError", "version"]

_BACKENDS = ("auto", "ref", "sim", "cuda")


def version() -> str:
    """The runtime's version, "MAJOR.MINOR.PATCH" (srt_version)."""
    return _shortc.version()


def _address(arr: np.ndarray) -> int:
    """The address of a C-contiguous array's first element (the array must outlive its use)."""
    return arr.__array_interface__["data"][0]


def _host_array(x: Any) -> np.ndarray:
    """x as a NumPy array: a DLPack producer on the CPU is shared without a copy, anything else through np.asarray."""
    if isinstance(x, np.ndarray):
        return x
    if hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__"):
        device_type = x.__dlpack_device__()[0]
        if device_type != 1:  # kDLCPU
            raise TypeError("shortc: an input on a DLPack device of type %d: copy it to the host first "
                            "(e.g. tensor.cpu())" % device_type)
        return np.from_dlpack(x)
    return np.asarray(x)


def _token_array(ids: Any, what: str = "ids") -> np.ndarray:
    """Token ids as a C-contiguous int32 array; a non-integer input or an id outside int32 is refused."""
    arr = _host_array(ids)
    if arr.size == 0:
        arr = arr.astype(np.int32)
    if arr.dtype.kind not in "iu":
        raise TypeError("shortc: %s must be integers, not %s" % (what, arr.dtype))
    if arr.size and (arr.min() < np.iinfo(np.int32).min or arr.max() > np.iinfo(np.int32).max):
        raise ValueError("shortc: %s outside the int32 range" % what)
    return np.ascontiguousarray(arr, dtype=np.int32)


def _output(out: Optional[np.ndarray], shape: tuple, dtype: Any) -> np.ndarray:
    """out checked to be a writable C-contiguous array of shape and dtype, or a new one."""
    if out is None:
        return np.empty(shape, dtype=dtype)
    if not isinstance(out, np.ndarray):
        raise TypeError("shortc: out= must be a NumPy array")
    if out.shape != tuple(shape) or out.dtype != np.dtype(dtype):
        raise ValueError("shortc: out= has shape %s and dtype %s, %s of %s needed"
                         % (out.shape, out.dtype, tuple(shape), np.dtype(dtype)))
    if not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError("shortc: out= must be C-contiguous and writable")
    return out


def _weight_entry(name: str, value: Any) -> tuple:
    """(name, dtype, address, nbytes, shape, keep-alive) of one weight: F32 and F16 NumPy arrays as they are,
    PyTorch bfloat16 tensors as their bits, other floating arrays converted to float32."""
    if not isinstance(name, str):
        raise TypeError("shortc: weight names must be str, not %s" % type(name).__name__)
    torch_dtype = getattr(value, "dtype", None)
    if torch_dtype is not None and str(torch_dtype) == "torch.bfloat16":
        import torch  # only when given a PyTorch tensor
        bits = value.detach().cpu().contiguous().view(torch.int16)
        arr, dtype = np.from_dlpack(bits), "BF16"
    else:
        if hasattr(value, "detach"):  # a PyTorch tensor: leave autograd, come to the host
            value = value.detach().cpu()
        arr = _host_array(value)
        if arr.dtype.kind != "f":
            raise TypeError("shortc: weight '%s' has dtype %s; weights are floating point" % (name, arr.dtype))
        if arr.dtype == np.float16:
            dtype = "F16"
        else:
            arr, dtype = arr.astype(np.float32, copy=False), "F32"
    arr = np.ascontiguousarray(arr)
    return (name, dtype, _address(arr), arr.nbytes, tuple(int(d) for d in arr.shape)), arr


class Model:
    """A compiled model (see :func:`compile`): weights, facts and sessions.

    The model is opened on one backend at :func:`compile`; a session on another backend opens the model
    again on that one (once) with the same weights.
    """

    def __init__(self, handle: Any, reopen: Dict[str, Any]):
        self._handles = {handle.info()["backend"]: handle}
        self._default = handle
        self._reopen = reopen          # the arguments of _shortc.open but the backend
        self._weights: Optional[tuple] = None  # how the weights were last given: ("path"|"tensors"|"random", ...)

    @property
    def info(self) -> Dict[str, Any]:
        """Facts about the model and its plan (srt_model_info): name, backend, vocab, segment, max_positions..."""
        return self._default.info()

    @property
    def vocab(self) -> int:
        """The width of a logits row."""
        return self._default.info()["vocab"]

    def plan_json(self) -> str:
        """The plan as JSON text."""
        return self._default.plan_json()

    def load(self, weights: Union[str, "os.PathLike[str]", Mapping[str, Any]]) -> "Model":
        """Loads weights: a safetensors file, or a mapping of names to NumPy arrays / PyTorch tensors
        (float32, float16 or bfloat16; other floating types are converted to float32). Returns the model."""
        if isinstance(weights, (str, os.PathLike)):
            path = os.fspath(weights)
            if os.path.isdir(path):
                raise Error("shortc: '%s' is a directory: give its .safetensors file (Hugging Face directories "
                            "are not read yet)" % path)
            self._weights = ("path", path)
        elif isinstance(weights, Mapping):
            entries = [_weight_entry(k, v) for k, v in weights.items()]
            self._weights = ("tensors", [e for e, _ in entries], [a for _, a in entries])
        else:
            raise TypeError("shortc: weights are a safetensors path or a mapping of names to arrays, not %s"
                            % type(weights).__name__)
        for handle in self._handles.values():
            self._apply_weights(handle)
        return self

    def random_weights(self, seed: int = 1) -> "Model":
        """Loads the seeded random weights of shortc's tests (``shortc run --random-weights SEED``)."""
        self._weights = ("random", int(seed))
        for handle in self._handles.values():
            self._apply_weights(handle)
        return self

    def _apply_weights(self, handle: Any) -> None:
        if self._weights is None:
            return
        kind = self._weights[0]
        if kind == "path":
            handle.load_weights(self._weights[1])
        elif kind == "tensors":
            handle.load_tensors(self._weights[1])
        else:
            handle.random_weights(self._weights[1])

    def _handle(self, backend: Optional[str]) -> Any:
        if backend is None or backend == "auto":
            return self._default
        if backend not in _BACKENDS:
            raise ValueError("shortc: unknown backend '%s' (auto, ref, sim or cuda)" % backend)
        if backend not in self._handles:
            args = dict(self._reopen, backend=backend)
            handle = _shortc.open(args["path"], args["source"], args["model"], backend, args["sim_threads"],
                                  args["sim_checked"], args["cache_dir"], args["allow_nonfinite"],
                                  args["allow_unused"])
            self._apply_weights(handle)
            self._handles[backend] = handle
        return self._handles[backend]

    def session(self, backend: Optional[str] = None, batch: int = 1) -> "Session":
        """A new session holding batch sequences (1 to 256), on backend ("auto", "ref", "sim", "cuda"; None:
        the model's)."""
        handle = self._handle(backend)
        return Session(handle.session(int(batch)), handle.info(), int(batch))


class Session:
    """A session: per-sequence state (KV caches, memories) and the calls that run the model."""

    def __init__(self, handle: Any, info: Dict[str, Any], batch: int):
        self._s = handle
        self._vocab = info["vocab"]
        self._batch = batch
        self.backend: str = info["backend"]
        """The backend the session runs on."""

    @property
    def batch(self) -> int:
        """Sequences the session holds."""
        return self._batch

    @property
    def position(self) -> int:
        """Positions sequence 0 has consumed (the next forward's first position)."""
        return self._s.position(0)

    def position_of(self, b: int) -> int:
        """Positions sequence b has consumed."""
        return self._s.position(int(b))

    def forward(self, ids: Any, out: Optional[np.ndarray] = None, last_only: bool = False) -> np.ndarray:
        """Runs ids (1 to segment tokens continuing the session's sequence) and returns float32 logits
        [T, vocab] ([1, vocab] with last_only). A batch session takes ids [batch, T] and returns
        [batch, T, vocab]. out= receives them instead of a new array."""
        tok = _token_array(ids)
        if self._batch > 1:
            if tok.ndim != 2 or tok.shape[0] != self._batch:
                raise ValueError("shortc: a session of %d sequences takes ids shaped [%d, T], not %s"
                                 % (self._batch, self._batch, tok.shape))
            if last_only:
                raise ValueError("shortc: last_only is for single-sequence sessions")
            logits = _output(out, (self._batch, tok.shape[1], self._vocab), np.float32)
            self._s.forward_batch(_address(tok), tok.shape[1], _address(logits), logits.nbytes)
            return logits
        if tok.ndim != 1:
            raise ValueError("shortc: ids must be one sequence (1-D), not shaped %s" % (tok.shape,))
        n = tok.shape[0]
        if n == 0:
            raise ValueError("shortc: forward needs at least one token")
        logits = _output(out, (1 if last_only else n, self._vocab), np.float32)
        self._s.forward(_address(tok), n, _address(logits), logits.nbytes, n - 1 if last_only else 0)
        return logits

    def reset(self) -> None:
        """Clears the session's state: the next forward starts a new sequence at position 0."""
        self._s.reset()

    def nll(self, ids: Any, mode: str = "nonoverlapping", stride: int = 0, overlap: int = 0, window: int = 0,
            out: Optional[np.ndarray] = None) -> np.ndarray:
        """Scores a text of any length under an inference mode (srt_eval_nll): float32 [n - 1], entry i the
        negative log-likelihood (natural log) of ids[i + 1]. mode: nonoverlapping, sliding (stride),
        windows (overlap), tokenwise or cached; window: L (0: the segment). The session is reset."""
        tok = _token_array(ids)
        if tok.ndim != 1 or tok.shape[0] < 2:
            raise ValueError("shortc: nll needs one sequence of at least 2 tokens")
        res = _output(out, (tok.shape[0] - 1,), np.float32)
        self._s.eval("nll", _address(tok), tok.shape[0], _address(res), res.nbytes, mode, int(stride),
                     int(overlap), int(window))
        return res

    def logits(self, ids: Any, mode: str = "nonoverlapping", stride: int = 0, overlap: int = 0, window: int = 0,
               out: Optional[np.ndarray] = None) -> np.ndarray:
        """The logits rows [n, vocab] the mode scores each token with (srt_eval_logits); the session is reset."""
        tok = _token_array(ids)
        if tok.ndim != 1 or tok.shape[0] < 1:
            raise ValueError("shortc: logits needs one sequence of at least 1 token")
        res = _output(out, (tok.shape[0], self._vocab), np.float32)
        self._s.eval("logits", _address(tok), tok.shape[0], _address(res), res.nbytes, mode, int(stride),
                     int(overlap), int(window))
        return res

    def generate(self, prompt: Any, max_new: int = 20, temperature: float = 0.0, top_k: int = 0,
                 top_p: float = 1.0, seed: int = 0, eos: Optional[int] = None) -> Any:
        """Continues the prompt by up to max_new tokens (an int32 array) with the library's loop of
        ``shortc generate`` (srt_generate): greedy at temperature 0, else sampled (top_k, top_p, seed give the
        CLI's tokens); stops at eos (not kept); max_new=0 only feeds the prompt. The prompt continues the
        session's sequence. A batch session takes one prompt per sequence (lengths may differ) and returns a
        list of arrays."""
        prompts = list(prompt) if self._batch > 1 else [prompt]
        if len(prompts) != self._batch:
            raise ValueError("shortc: a session of %d sequences takes %d prompts, not %d"
                             % (self._batch, self._batch, len(prompts)))
        toks = [_token_array(p, "prompt") for p in prompts]
        for t in toks:
            if t.ndim != 1 or t.shape[0] < 1:
                raise ValueError("shortc: generate needs prompts of at least 1 token (1-D)")
        gen = np.empty((self._batch, max(int(max_new), 0)), dtype=np.int32)
        counts = self._s.generate([(_address(t), t.shape[0]) for t in toks], _address(gen), int(max_new),
                                  float(temperature), int(top_k), float(top_p), int(seed),
                                  -1 if eos is None else int(eos))
        out = [gen[b, :n].copy() for b, n in enumerate(counts)]
        return out if self._batch > 1 else out[0]


def _source_args(path_or_source: Union[str, "os.PathLike[str]"], name: Optional[str]) -> tuple:
    """(path, source bytes or None): an .arch path as it is, or .arch text (a str holding a newline or a '{')
    named name (default "<source>")."""
    text = os.fsdecode(path_or_source)  # a bytes path as the str os would give for it
    if "\n" in text or "{" in text:
        return name or "<source>", text.encode()
    return text, None


def mask(path_or_source: Union[str, "os.PathLike[str]"], tokens: int, model: Optional[str] = None, *,
         name: Optional[str] = None) -> np.ndarray:
    """The boolean attention masks of a model on a forward of tokens tokens from position 0 (srt_mask, as
    ``shortc mask``): bool [layers, heads, tokens, tokens], True where query i of head h in layer l sees
    key j. path_or_source, model and name as for :func:`compile`."""
    path, source = _source_args(path_or_source, name)
    data, layers, heads = _shortc.mask(path, source, model, int(tokens))
    n = int(tokens)
    return np.frombuffer(data, dtype=np.bool_).reshape(layers, heads, n, n).copy()


# ---- attention kinds as functions (srt_attention_plan) ------------------------------------------------------

_ATTN_DTYPES = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}
_attention_plans: Dict[tuple, Any] = {}   # (kind, params, heads, dim, dtype, scale, backend, device, ...) -> plan
_attention_lock = threading.Lock()


def _is_torch(x: Any) -> bool:
    return type(x).__module__.split(".")[0] == "torch"


def _attention_plan(kind: str, params: tuple, heads: int, dim: int, dtype: str, scale: float, backend: str,
                    device: int, cache_dir: Optional[str], sim_threads: int) -> Any:
    """The plan of these arguments, made once (it keeps its compiled kernels: srt_attention_plan)."""
    key = (kind, params, heads, dim, dtype, scale, backend, device, cache_dir, sim_threads)
    with _attention_lock:
        plan = _attention_plans.get(key)
        if plan is None:
            plan = _shortc.attention_plan(kind, list(params), heads, dim, dtype, scale, backend, device, cache_dir,
                                          sim_threads)
            _attention_plans[key] = plan
        return plan


def _attention_params(params: Mapping[str, Any]) -> tuple:
    """The kind's parameters as sorted (name, float) pairs; the runtime checks names and ranges."""
    out = []
    for name, value in sorted(params.items()):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise TypeError("shortc.attention: parameter %s=%r must be a number" % (name, value))
        out.append((name, float(value)))
    return tuple(out)


def attention(q: Any, k: Any, v: Any, kind: str = "causal", *, scale: Optional[float] = None, backend: str = "auto",
              cache_dir: Optional[str] = None, sim_threads: int = 0, **params: Any) -> Any:
    """softmax(scale q k^T + the kind's mask) v (srt_attention_run): q, k, v shaped [heads, T, dim] or
    [batch, heads, T, dim] (queries = keys, positions 0..T-1), float32, float16 or bfloat16 (PyTorch; NumPy has
    no bfloat16), all alike. kind is an attention kind of the kind table with its parameters as keywords
    (window: size=...; bigbird: block=..., seed=...; docs/attention/KIND.md); scale defaults to 1/sqrt(dim).
    PyTorch CPU tensors and NumPy arrays run on the simulator (backend "sim"), PyTorch CUDA tensors on their GPU
    (backend "cuda": untested without a GPU; the call synchronises the device and runs on its default stream). Returns
    the type, shape and dtype of q (a PyTorch tensor shares the memory the runtime wrote). No autograd."""
    torch_in = _is_torch(q)
    xs = (q, k, v)
    if any(_is_torch(x) != torch_in for x in xs):
        raise TypeError("shortc.attention: q, k and v must all be PyTorch tensors or all NumPy arrays")
    if not torch_in:
        xs = tuple(_host_array(x) for x in xs)
    shapes = [tuple(int(d) for d in x.shape) for x in xs]
    if len(shapes[0]) not in (3, 4) or shapes[1] != shapes[0] or shapes[2] != shapes[0]:
        raise ValueError("shortc.attention: q, k and v must share one shape [heads, T, dim] or [batch, heads, T, dim]; "
                         "got %s, %s and %s" % tuple(shapes))
    if min(shapes[0]) < 1:
        raise ValueError("shortc.attention: empty dimension in shape %s" % (shapes[0],))
    names = [str(x.dtype).replace("torch.", "") for x in xs]
    if names[1] != names[0] or names[2] != names[0] or names[0] not in _ATTN_DTYPES:
        raise TypeError("shortc.attention: q, k and v must share one dtype of float32, float16 or bfloat16; got %s"
                        % ", ".join(names))
    dtype = _ATTN_DTYPES[names[0]]
    shape = shapes[0]
    batch, heads, tokens, dim = (1,) + shape if len(shape) == 3 else shape
    if scale is not None and not (float(scale) > 0):
        raise ValueError("shortc.attention: scale=%r must be > 0" % (scale,))
    on_gpu = torch_in and q.device.type == "cuda"
    if torch_in and q.device.type not in ("cpu", "cuda"):
        raise TypeError("shortc.attention: tensors on %s: CPU (the simulator) or CUDA tensors" % q.device)
    if torch_in and any(x.device != q.device for x in xs):
        raise ValueError("shortc.attention: q, k and v are on different devices")
    if backend not in ("auto", "sim", "cuda"):
        raise ValueError("shortc.attention: unknown backend '%s' (auto, sim or cuda)" % backend)
    if backend == "auto":
        backend = "cuda" if on_gpu else "sim"
    if (backend == "cuda") != on_gpu:
        raise TypeError("shortc.attention: backend '%s' needs %s tensors" % (backend, "CUDA" if backend == "cuda"
                                                                            else "host (CPU or NumPy)"))
    device = (q.device.index or 0) if on_gpu else 0
    plan = _attention_plan(kind, _attention_params(params), heads, dim, dtype, 0.0 if scale is None else float(scale),
                           backend, device, None if cache_dir is None else os.fsdecode(cache_dir), int(sim_threads))
    nbytes = batch * heads * tokens * dim * (4 if dtype == "fp32" else 2)
    if on_gpu:
        import torch  # only when given CUDA tensors
        ins = [x.detach().contiguous() for x in xs]
        out = torch.empty_like(ins[0], memory_format=torch.contiguous_format)
        torch.cuda.synchronize(q.device)  # the runtime launches on the device's default stream
        plan.run(batch, tokens, *(x.data_ptr() for x in ins), out.data_ptr(), nbytes)
        return out
    if torch_in:
        import torch  # only when given PyTorch tensors
        bits = dtype == "bf16"  # NumPy has no bfloat16: its bits cross as int16
        ins = [np.from_dlpack(x.detach().contiguous().view(torch.int16) if bits else x.detach().contiguous())
               for x in xs]
    else:
        ins = [np.ascontiguousarray(x) for x in xs]
    out = np.empty(shape, dtype=ins[0].dtype)
    plan.run(batch, tokens, *(_address(x) for x in ins), _address(out), nbytes)
    if not torch_in:
        return out
    t = torch.from_dlpack(out)
    return t.view(torch.bfloat16) if bits else t



def compare(*models: Union[str, "os.PathLike[str]", tuple], device: Optional[str] = None, window: int = 0,
            stride: int = 0, overlap: Optional[int] = None) -> Dict[str, Any]:
    """The cost model of .arch models side by side (srt_compare_json): the JSON ``shortc compare --json``
    prints, as a dict (schema shortc.compare/1; docs/cost-model.md). Each model is a path (its last model) or
    a (path, model name) pair; device, window, stride and overlap are the CLI's options (defaults: h100-sxm,
    each model's segment, W/2, W/4)."""
    import json
    refs = []
    for m in models:
        path, name = (m[0], m[1]) if isinstance(m, tuple) else (m, None)
        refs.append((os.fsdecode(path), name))
    text = _shortc.compare(refs, device, int(window), int(stride), -1 if overlap is None else int(overlap))
    return json.loads(text)


def compile(path_or_source: Union[str, "os.PathLike[str]"], model: Optional[str] = None, *,
            backend: str = "auto", name: Optional[str] = None, sim_threads: int = 0, sim_checked: bool = True,
            cache_dir: Optional[str] = None, allow_nonfinite_weights: bool = False,
            allow_unused_weights: bool = False) -> Model:
    """Compiles a model: path_or_source is an .arch file (or an emitted .cu) or the .arch text itself (any
    str containing a newline or a '{'); model names one of its models (None: the last). The model is opened
    on backend ("auto": cuda with a GPU, else sim). A rejected .arch raises CompileError with file, line,
    column and caret; name is the text's file name in those messages (and where its imports are found)."""
    if backend not in _BACKENDS:
        raise ValueError("shortc: unknown backend '%s' (auto, ref, sim or cuda)" % backend)
    path, source = _source_args(path_or_source, name)
    args = dict(path=path, source=source, model=model, backend=backend, sim_threads=int(sim_threads),
                sim_checked=bool(sim_checked), cache_dir=cache_dir, allow_nonfinite=bool(allow_nonfinite_weights),
                allow_unused=bool(allow_unused_weights))
    handle = _shortc.open(args["path"], args["source"], model, backend, args["sim_threads"], args["sim_checked"],
                          cache_dir, args["allow_nonfinite"], args["allow_unused"])
    return Model(handle, args)


class Tokenizer:
    """A BPE tokenizer as Hugging Face tokenizers runs it (srt_tokenizer; docs/tokenizer.md): a tokenizer.json
    (ByteLevel or Metaspace pre-tokenizers, byte fallback, added and special tokens), or GPT-2's vocab.json
    with merges (merges.txt)."""

    def __init__(self, path: Union[str, "os.PathLike[str]"], merges: Optional[Union[str, "os.PathLike[str]"]] = None):
        self._t = _shortc.tokenizer(path) if merges is None else _shortc.tokenizer(path, merges)

    @property
    def vocab_size(self) -> int:
        """Largest token id + 1."""
        return self._t.vocab_size()

    def encode(self, text: str, special_as_text: bool = False) -> np.ndarray:
        """text -> int32 token ids (an empty text: none). Special added tokens in the text are split out as
        their ids unless special_as_text (HF's encode_special_tokens); the ids are HF's
        encode(text, add_special_tokens=False)."""
        return np.frombuffer(self._t.encode(text, bool(special_as_text)), dtype=np.int32).copy()

    def decode_bytes(self, ids: Any) -> bytes:
        """ids -> the bytes they stand for (not necessarily UTF-8 where a token splits a character)."""
        tok = _token_array(ids)
        return self._t.decode(_address(tok), tok.size)

    def decode(self, ids: Any, errors: str = "replace") -> str:
        """ids -> text (bytes that are not UTF-8 decoded with errors)."""
        return self.decode_bytes(ids).decode("utf-8", errors)
