"""The legacy-format reader reads each pickle from memory when it fits in ``_IN_MEMORY`` bytes and
through the bounded stream otherwise; both give what ``torch.load`` gives (files by torch.save with
``_use_new_zipfile_serialization=False``), and a damaged file fails the same way on both paths.
"""

from __future__ import annotations

import io
import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

import minitorch_nn as mt  # noqa: E402
from minitorch_nn._serialization import legacy  # noqa: E402


def legacy_file():
    torch.manual_seed(0)
    base = torch.randn(4, 5)
    obj = {"w": base, "view": base[1:3, ::2], "i": torch.arange(7), "nested": [(1, 2.5, "x")] * 50,
           "h": torch.ones(3, dtype=torch.float16)}
    buf = io.BytesIO()
    torch.save(obj, buf, _use_new_zipfile_serialization=False)
    return buf.getvalue()


@pytest.mark.parametrize("in_memory", [64, 1 << 10, legacy._IN_MEMORY], ids=["stream", "partly", "memory"])
def test_legacy_reader_paths_match_torch(monkeypatch, in_memory):
    monkeypatch.setattr(legacy, "_IN_MEMORY", in_memory)
    data = legacy_file()
    theirs = torch.load(io.BytesIO(data), weights_only=True)
    ours = mt.load(io.BytesIO(data))
    assert sorted(ours) == sorted(theirs)
    for key in ("w", "view", "i", "h"):
        np.testing.assert_array_equal(ours[key].numpy(), theirs[key].numpy())
        assert ours[key].stride() == theirs[key].stride()
    assert ours["nested"] == theirs["nested"]
    ours["w"][1, 0] = 100.0   # the view still shares the storage
    assert float(ours["view"][0, 0]) == 100.0


@pytest.mark.parametrize("in_memory", [64, legacy._IN_MEMORY], ids=["stream", "memory"])
def test_truncated_legacy_file_fails_cleanly_on_both_paths(monkeypatch, in_memory):
    monkeypatch.setattr(legacy, "_IN_MEMORY", in_memory)
    data = legacy_file()
    for cut in (10, 100, len(data) // 2, len(data) - 5):
        with pytest.raises((RuntimeError, pickle.UnpicklingError)):
            mt.load(io.BytesIO(data[:cut]))
