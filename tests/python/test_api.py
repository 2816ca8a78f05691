"""Every call of the shortc package against the CLI of the same build (ctest `python`)."""
import os
import sys

import numpy as np
import pytest

import shortc
from conftest import TINY, cli, example, read_ids, read_safetensors


def cli_logits(tmp_path, *extra):
    """The logits `shortc run` writes for examples/prompt.txt on gpt2_tiny with seeded weights 1."""
    out = str(tmp_path / "cli.npy")
    cli("run", TINY, "--backend", "ref", "--random-weights", "1", "--tokens", example("prompt.txt"),
        "--logits", out, *extra)
    return np.load(out)


def test_installed_from_the_wheel():
    # the package comes from the environment the wheel was installed into, with the one abi3 module
    assert os.path.realpath(shortc.__file__).startswith(os.path.realpath(sys.prefix))
    assert shortc._shortc.__file__.endswith("_shortc.abi3.so")
    here = os.path.dirname(shortc.__file__)
    assert os.path.isfile(os.path.join(here, "__init__.pyi")) and os.path.isfile(os.path.join(here, "py.typed"))
    assert shortc.version() == cli("--version").stdout.split()[1]


def test_forward_equals_cli(tiny, tmp_path):
    s = tiny.session()
    got = s.forward(read_ids("prompt.txt"))
    want = cli_logits(tmp_path)
    assert got.dtype == np.float32 and got.shape == want.shape == (10, tiny.vocab)
    np.testing.assert_array_equal(got, want)


def test_chunks_continue_the_sequence(tiny):
    ids = read_ids("prompt.txt")
    whole = tiny.session().forward(ids)
    s = tiny.session()
    parts = [s.forward(ids[:4]), s.forward(ids[4:5]), s.forward(ids[5:])]
    assert s.position == len(ids)
    np.testing.assert_allclose(np.concatenate(parts), whole, rtol=0, atol=1e-5)
    s.reset()
    assert s.position == 0
    np.testing.assert_array_equal(s.forward(ids), whole)
    s.reset()
    last = s.forward(ids, last_only=True)
    np.testing.assert_array_equal(last, whole[-1:])


def test_out_is_filled_in_place(tiny):
    ids = read_ids("prompt.txt")
    out = np.zeros((len(ids), tiny.vocab), dtype=np.float32)
    got = tiny.session().forward(ids, out=out)
    assert got is out and np.any(out != 0)
    with pytest.raises(ValueError, match="out= has shape"):
        tiny.session().forward(ids, out=np.zeros((3, tiny.vocab), dtype=np.float32))
    with pytest.raises(ValueError, match="C-contiguous"):
        tiny.session().forward(ids, out=np.zeros((tiny.vocab, len(ids)), dtype=np.float32).T)


def test_compile_from_source_text(tmp_path):
    with open(TINY) as f:
        text = f.read()
    # the text's imports resolve from the directory of its name
    m = shortc.compile(text, name=os.path.join(os.path.dirname(TINY), "from_text.arch"), backend="ref")
    assert m.info["name"] == "gpt2_tiny" and m.info["vocab"] == 256
    m.random_weights(1)
    np.testing.assert_array_equal(m.session().forward(read_ids("prompt.txt")), cli_logits(tmp_path))


def test_compile_error_like_the_cli(tmp_path):
    bad = tmp_path / "bad.arch"
    bad.write_text("model x {\n  vocab 10;\n  bogus 3;\n}\n")
    with pytest.raises(shortc.CompileError) as ei:
        shortc.compile(str(bad), backend="ref")
    e = ei.value
    assert (e.file, e.line, e.column) == (str(bad), 3, 3)
    assert e.caret == "  bogus 3;\n  ^~~~~"
    assert isinstance(e, shortc.Error) and e.status == "SRT_ERR_FORMAT"
    printed = cli("run", str(bad), "--random-weights", "1", "--tokens", example("prompt.txt"), check=False)
    assert printed.returncode == 3
    assert str(e) in printed.stderr
    # from text: the name given is the file of the message
    with pytest.raises(shortc.CompileError) as ei:
        shortc.compile("model y {\n vocab 10; heads -1;\n}\n", name="mine.arch")
    assert ei.value.file == "mine.arch" and ei.value.line == 2 and str(ei.value).startswith("mine.arch:2:")


def test_runtime_errors_carry_the_message(tiny):
    with pytest.raises(shortc.Error, match="cannot read") as ei:
        shortc.compile("/nonexistent/model.arch")
    assert not isinstance(ei.value, shortc.CompileError) and ei.value.status == "SRT_ERR_IO"
    s = tiny.session()
    with pytest.raises(shortc.Error, match="outside") as ei:
        s.forward([1, 2, 999])
    assert ei.value.status == "SRT_ERR_INVALID"
    assert s.position == 0  # a failed forward leaves the session as it was
    with pytest.raises(shortc.Error):
        s.forward(np.zeros(tiny.info["segment"] + 1, dtype=np.int64))
    with pytest.raises(TypeError, match="integers"):
        s.forward([1.5, 2.0])
    with pytest.raises(ValueError, match="at least one token"):
        s.forward([])
    with pytest.raises(ValueError, match="unknown backend"):
        tiny.session(backend="tpu")
    with pytest.raises(shortc.Error, match="batch"):
        tiny.session(batch=0)


def test_load_safetensors_and_mappings(weights_file, tmp_path):
    want = cli_logits(tmp_path)
    ids = read_ids("prompt.txt")
    m = shortc.compile(TINY, backend="ref").load(weights_file)
    np.testing.assert_array_equal(m.session().forward(ids), want)
    arrays = read_safetensors(weights_file)
    m2 = shortc.compile(TINY, backend="ref").load(arrays)
    np.testing.assert_array_equal(m2.session().forward(ids), want)
    # a missing tensor names it; the earlier weights stay
    name = sorted(arrays)[0]
    partial = {k: v for k, v in arrays.items() if k != name}
    with pytest.raises(shortc.Error, match=name.split(".")[-1]) as ei:
        m2.load(partial)
    assert ei.value.status == "SRT_ERR_WEIGHTS"
    np.testing.assert_array_equal(m2.session().forward(ids), want)
    wrong = dict(arrays, **{name: np.zeros((3, 3), dtype=np.float32)})
    with pytest.raises(shortc.Error, match="shape"):
        m2.load(wrong)
    with pytest.raises(TypeError, match="floating point"):
        m2.load(dict(arrays, **{name: np.zeros(arrays[name].shape, dtype=np.int32)}))
    # a tensor the model does not use is refused, listed, unless allow_unused_weights
    extra = dict(arrays, **{"h.7.mlp.c_fc.weight": np.zeros((2, 3), dtype=np.float32)})
    with pytest.raises(shortc.Error, match=r"does not use: 'h\.7\.mlp\.c_fc\.weight' \[2, 3\]") as ei:
        m2.load(extra)
    assert ei.value.status == "SRT_ERR_WEIGHTS"
    m4 = shortc.compile(TINY, backend="ref", allow_unused_weights=True).load(extra)
    np.testing.assert_array_equal(m4.session().forward(ids), want)
    with pytest.raises(shortc.Error, match="directory"):
        m2.load(str(tmp_path))
    # float64 converts; a non-contiguous view is copied
    m3 = shortc.compile(TINY, backend="ref").load({k: np.asfortranarray(v.astype(np.float64)) for k, v in arrays.items()})
    np.testing.assert_array_equal(m3.session().forward(ids), want)


def test_nll_equals_cli_eval(tiny):
    import json
    ids = read_ids("t.txt")
    for mode, extra in (("sliding", ["--stride", "64"]), ("nonoverlapping", []), ("windows", ["--overlap", "32"])):
        res = json.loads(cli("eval", TINY, "--backend", "ref", "--random-weights", "1", "--tokens", example("t.txt"),
                             "--mode", mode, *extra, "--json").stdout)
        kw = {"stride": 64} if mode == "sliding" else {"overlap": 32} if mode == "windows" else {}
        nll = tiny.session().nll(ids, mode=mode, **kw)
        assert nll.shape == (len(ids) - 1,) and nll.dtype == np.float32
        assert res["tokens"] == len(nll)
        assert float(np.sum(nll, dtype=np.float64)) == pytest.approx(res["nll"], rel=1e-6)
    with pytest.raises(ValueError, match="unknown mode"):
        tiny.session().nll(ids, mode="diagonal")
    logits = tiny.session().logits(ids[:200])
    np.testing.assert_allclose(logits[:128], tiny.session().forward(ids[:128]), rtol=0, atol=1e-5)


def test_generate_equals_cli(tiny):
    prompt = read_ids("prompt.txt")
    for extra, kw in (([], {}), (["--temperature", "0.8", "--top-k", "20", "--seed", "3"],
                                  {"temperature": 0.8, "top_k": 20, "seed": 3})):
        out = cli("generate", TINY, "--backend", "ref", "--random-weights", "1", "--tokens", example("prompt.txt"),
                  "--max-new", "12", *extra).stdout
        got = tiny.session().generate(prompt, max_new=12, **kw)
        assert got.dtype == np.int32
        assert got.tolist() == [int(t) for t in out.split()]
    first = tiny.session().generate(prompt, max_new=12)
    stopped = tiny.session().generate(prompt, max_new=12, eos=int(first[3]))
    assert stopped.tolist() == first[:first.tolist().index(first[3])].tolist()
    # max_new=0 feeds the prompt and draws nothing: the session continues after it.
    fed = tiny.session()
    assert fed.generate(prompt, max_new=0).tolist() == []
    np.testing.assert_allclose(fed.forward(first[:1]), tiny.session().forward(np.append(prompt, first[0]))[-1:],
                               rtol=0, atol=1e-5)


def test_batch_generate_equals_cli(tiny):
    with open(example("prompts.ids")) as f:
        prompts = [[int(t) for t in line.split()] for line in f if line.strip()]
    out = cli("generate", TINY, "--backend", "ref", "--random-weights", "1", "--prompts", example("prompts.ids"),
              "--max-new", "9", "--temperature", "0.7", "--top-p", "0.9", "--seed", "5").stdout.splitlines()
    got = tiny.session(batch=len(prompts)).generate(prompts, max_new=9, temperature=0.7, top_p=0.9, seed=5)
    assert len(got) == len(prompts) > 1
    assert [g.tolist() for g in got] == [[int(t) for t in line.split()] for line in out]
    with pytest.raises(ValueError, match="takes %d prompts" % len(prompts)):
        tiny.session(batch=len(prompts)).generate(prompts[:1])


def test_batch_session(tiny):
    ids = read_ids("t.txt")[:20].reshape(2, 10)
    s = tiny.session(batch=2)
    assert s.batch == 2
    got = s.forward(ids)
    assert got.shape == (2, 10, tiny.vocab)
    for b in range(2):
        np.testing.assert_allclose(got[b], tiny.session().forward(ids[b]), rtol=0, atol=1e-5)
        assert s.position_of(b) == 10
    with pytest.raises(ValueError, match="shaped"):
        s.forward(ids[0])


def test_other_backend_reuses_the_weights(weights_file):
    m = shortc.compile(TINY, backend="ref").load(weights_file)
    ids = read_ids("prompt.txt")
    sim = m.session(backend="sim")
    assert sim.backend == "sim"
    np.testing.assert_allclose(sim.forward(ids), m.session().forward(ids), rtol=0, atol=2e-4)


def test_info_and_plan(tiny):
    info = tiny.info
    assert info["name"] == "gpt2_tiny" and info["backend"] == "ref"
    assert info["segment"] == 128 and info["max_positions"] == 128 and info["kv_cache"]
    import json
    assert json.loads(tiny.plan_json())["model"] == "gpt2_tiny"


def test_tokenizer_equals_cli():
    tok = shortc.Tokenizer(example("tokenizer.json"))
    with open(example("valid.txt")) as f:
        text = f.read()
    ids = tok.encode(text)
    want = [int(t) for t in cli("tokenize", "--tokenizer", example("tokenizer.json"), "--text", example("valid.txt")).stdout.split()]
    assert ids.dtype == np.int32 and ids.tolist() == want
    assert tok.decode(ids) == text
    assert tok.vocab_size > max(want)
    assert tok.encode("").size == 0
    # the special token is split out as its id, or is text with special_as_text (as `--special-as-text`)
    eot = tok.encode(text[:20] + "<|endoftext|>")
    assert eot[-1] == 376 and eot[:-1].tolist() == tok.encode(text[:20]).tolist()
    as_text = tok.encode("<|endoftext|>", special_as_text=True)
    assert 376 not in as_text.tolist() and tok.decode(as_text) == "<|endoftext|>"
    assert as_text.tolist() == [int(t) for t in cli("tokenize", "--tokenizer", example("tokenizer.json"),
                                                    "--prompt", "<|endoftext|>", "--special-as-text").stdout.split()]
    with pytest.raises(shortc.Error):
        shortc.Tokenizer("/nonexistent/tokenizer.json")


def test_example_against_hf_transformers():
    # examples/python/gpt2_vs_hf.py: gpt2_tiny with HF GPT-2's random weights, logits and greedy tokens equal
    import subprocess
    hf_dir = os.environ.get("SHORTC_HF_DIR", "/opt/shortc-hf")
    if not os.path.isdir(os.path.join(hf_dir, "transformers")):
        pytest.skip("transformers is not installed in %s (.ci/setup)" % hf_dir)
    from conftest import SOURCE
    env = dict(os.environ, PYTHONPATH=hf_dir)
    r = subprocess.run([sys.executable, os.path.join(SOURCE, "examples", "python", "gpt2_vs_hf.py"), "--atol", "1e-4"],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "greedy 16 tokens equal" in r.stdout


def test_mask_equals_cli(tmp_path):
    for name, n in (("bigbird_lm", 96), ("gaussian_tiny", 16), ("gpt2_tiny", 8)):
        arch = os.path.join(os.path.dirname(TINY), name + ".arch")
        out = str(tmp_path / (name + ".npy"))
        cli("mask", arch, "--tokens", str(n), "-o", out)
        want = np.load(out)
        got = shortc.mask(arch, n)
        assert got.dtype == np.bool_ and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    causal = shortc.mask(TINY, 8)
    assert (causal == np.tril(np.ones((8, 8), dtype=bool))).all()
    with pytest.raises(shortc.Error, match="its segment") as ei:
        shortc.mask(TINY, 129)
    assert ei.value.status == "SRT_ERR_INVALID"
    with pytest.raises(shortc.CompileError) as ei:
        shortc.mask("model x {\n  nope 1;\n}\n", 4, name="m.arch")
    assert (ei.value.file, ei.value.line, ei.value.column) == ("m.arch", 2, 3)


def test_compare_equals_cli():
    import json
    models = [os.path.join(os.path.dirname(TINY), m + ".arch") for m in ("gpt2_small", "bigbird_lm")]
    want = json.loads(cli("compare", *models, "--json").stdout)
    assert shortc.compare(*models) == want
    want = json.loads(cli("compare", models[0], "--device", "a100-sxm", "--window", "512", "--stride", "128",
                          "--overlap", "0", "--json").stdout)
    assert shortc.compare(models[0], device="a100-sxm", window=512, stride=128, overlap=0) == want
    got = shortc.compare((TINY, "gpt2_small"))
    assert got["schema"] == "shortc.compare/1" and got["models"][0]["name"] == "gpt2_small"
    with pytest.raises(shortc.Error, match="unknown device 'z80'"):
        shortc.compare(TINY, device="z80")
    with pytest.raises(shortc.Error, match="cannot read"):
        shortc.compare("/nonexistent.arch")


def test_paths_that_are_not_utf8():
    # a file name of arbitrary bytes reaches the runtime as those bytes; its message is still a str
    with pytest.raises(shortc.Error, match="cannot read") as ei:
        shortc.compile(b"/nonexistent/\xff.arch")
    assert ei.value.status == "SRT_ERR_IO" and "\ufffd" in str(ei.value)
    with pytest.raises(shortc.Error, match="cannot read"):
        shortc.mask(b"/nonexistent/\xff.arch", 4)
    with pytest.raises(shortc.Error, match="cannot read"):
        shortc.compare(b"/nonexistent/\xff.arch")
