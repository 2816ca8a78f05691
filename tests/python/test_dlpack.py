"""DLPack round trips with PyTorch CPU tensors (ctest `python`)."""
import numpy as np
import pytest

import shortc
from conftest import TINY, read_ids, read_safetensors

torch = pytest.importorskip("torch")


def test_torch_ids_in_and_logits_out_without_copy(tiny):
    ids = read_ids("prompt.txt")
    want = tiny.session().forward(ids)
    for t in (torch.from_numpy(ids), torch.from_numpy(ids.astype(np.int64))):
        got = tiny.session().forward(t)
        np.testing.assert_array_equal(got, want)
    logits = tiny.session().forward(torch.from_numpy(ids))
    tensor = torch.from_dlpack(logits)  # NumPy exports __dlpack__: the tensor shares the array's memory
    assert tensor.data_ptr() == logits.__array_interface__["data"][0]
    assert tensor.shape == (len(ids), tiny.vocab) and tensor.dtype == torch.float32
    logits[0, 0] = 42.0
    assert tensor[0, 0].item() == 42.0


def test_dlpack_capsule_producers(tiny):
    ids = read_ids("prompt.txt")
    want = tiny.session().forward(ids)

    class Producer:  # anything with __dlpack__ and __dlpack_device__
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, stream=None):
            return self.t.__dlpack__()

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    np.testing.assert_array_equal(tiny.session().forward(Producer(torch.from_numpy(ids))), want)


def test_weights_from_torch_tensors(weights_file, tiny):
    ids = read_ids("prompt.txt")
    want = tiny.session().forward(ids)
    arrays = read_safetensors(weights_file)
    tensors = {k: torch.from_numpy(v).requires_grad_(True) for k, v in arrays.items()}
    m = shortc.compile(TINY, backend="ref").load(tensors)
    np.testing.assert_array_equal(m.session().forward(ids), want)
    # bfloat16 and float16 tensors are read as such: the same logits as the rounded fp32 weights
    for dt in (torch.bfloat16, torch.float16):
        low = {k: v.detach().to(dt) for k, v in tensors.items()}
        rounded = {k: v.float().numpy() for k, v in low.items()}
        a = shortc.compile(TINY, backend="ref").load(low).session().forward(ids)
        b = shortc.compile(TINY, backend="ref").load(rounded).session().forward(ids)
        np.testing.assert_array_equal(a, b)
        assert not np.array_equal(a, want)
