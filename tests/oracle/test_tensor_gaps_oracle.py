"""Oracle: small Tensor behaviours against PyTorch 2.13.

``is_contiguous(memory_format=...)``, ``Tensor.index_add``/``index_add_``, and pickling, deep
copying and saving a tensor that is a view with its own strides (a permutation, a slice).
"""

import copy
import io
import itertools
import pickle

import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import minitorch_nn as mt  # noqa: E402

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


# -- is_contiguous(memory_format=...) --------------------------------------------------------------

def _layouts(L, shape, perm, step):
    x = L.zeros([shape[p] for p in perm]).permute([perm.index(d) for d in range(len(shape))])
    return x[..., ::step] if x.dim() and step > 1 else x


@SETTINGS
@given(
    shape=st.lists(st.integers(1, 3), min_size=0, max_size=5),
    seed=st.integers(0, 200),
    step=st.integers(1, 2),
    fmt=st.sampled_from(["channels_last", "contiguous_format", "preserve_format", None]),
)
def test_is_contiguous_memory_format_matches_torch(shape, seed, step, fmt):
    perms = list(itertools.permutations(range(len(shape))))
    perm = list(perms[seed % len(perms)])

    def ask(L):
        x = _layouts(L, shape, perm, step)
        return x.is_contiguous() if fmt is None else x.is_contiguous(memory_format=getattr(L, fmt))

    assert ask(mt) == ask(torch)


def test_channels_last_tensor_reports_its_format():
    for L in (mt, torch):
        x = L.zeros(2, 3, 4, 5).to(memory_format=L.channels_last)
        assert x.is_contiguous(memory_format=L.channels_last)
        assert not x.is_contiguous()
        assert not x.is_contiguous(memory_format=L.contiguous_format)
