"""Fixtures of the Python package's tests (run by tests/python/run.sh, the ctest `python`).

Environment: SHORTC_BIN (the shortc executable of the same build, to compare against the CLI) and
SHORTC_SOURCE_DIR (the source tree: models/, examples/).
"""
import os
import subprocess

import numpy as np
import pytest

SOURCE = os.environ.get("SHORTC_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
TINY = os.path.join(SOURCE, "models", "gpt2_tiny.arch")


def example(name):
    """A file of examples/."""
    return os.path.join(SOURCE, "examples", name)


def read_ids(name):
    """The whitespace-separated token ids of an examples/ file."""
    with open(example(name)) as f:
        return np.array([int(t) for t in f.read().split()], dtype=np.int32)


def cli(*args, check=True):
    """Runs the shortc CLI of this build; returns the CompletedProcess (text)."""
    exe = os.environ.get("SHORTC_BIN")
    if not exe:
        pytest.skip("SHORTC_BIN is not set")
    return subprocess.run([exe, *args], capture_output=True, text=True, check=check)


@pytest.fixture(scope="session")
def tiny():
    """gpt2_tiny on the reference backend with the seeded weights 1."""
    import shortc
    return shortc.compile(TINY, backend="ref").random_weights(1)


@pytest.fixture(scope="session")
def weights_file(tmp_path_factory):
    """gpt2_tiny's seeded weights 1 as a safetensors file, written by the CLI."""
    path = str(tmp_path_factory.mktemp("w") / "w.safetensors")
    cli("run", TINY, "--random-weights", "1", "--save-weights", path)
    return path


def read_safetensors(path):
    """name -> float32 array of an F32 safetensors file (the test's own reader, independent of the runtime)."""
    import json
    import struct
    with open(path, "rb") as f:
        data = f.read()
    (hlen,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + hlen])
    body = data[8 + hlen:]
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        assert t["dtype"] == "F32"
        b, e = t["data_offsets"]
        out[name] = np.frombuffer(body[b:e], dtype=np.float32).reshape(t["shape"]).copy()
    return out
