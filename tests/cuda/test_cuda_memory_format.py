"""``memory_format`` on the way to the cuda device, and ``index_put_`` into an expanded cuda tensor,
match the cpu backend (which ``tests/oracle/`` checks against PyTorch).

* ``x.to('cuda', memory_format=...)``, ``Module.to('cuda', memory_format=...)`` and
  ``torch.empty(..., device='cuda', memory_format=...)`` lay the result out in that format
  (``channels_last`` for 4-d, ``channels_last_3d`` for 5-d), with the cpu backend's errors for a
  rank that does not fit;
* ``index_put_`` into a tensor whose elements share memory writes only the indexed elements
  through to the shared storage and gives the cpu backend's deprecation warning.

Tiny shapes: the CUDA simulator runs each thread as Python.
"""

import warnings

import pytest

import minitorch_nn as mt

CL, CL3 = mt.channels_last, mt.channels_last_3d


def _transcript(fn, device):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = repr(fn(device))
        except Exception as e:  # noqa: BLE001 - compared as type and text
            out = f"{type(e).__name__}: {e}"
    return out.replace(", device='cuda:0'", ""), [str(w.message) for w in caught]


CASES = {
    "to_channels_last": lambda d: (lambda y: (y.stride(), y.cpu().tolist()))(
        mt.arange(24.0).reshape(1, 2, 3, 4).to(d, memory_format=CL)
    ),
    "to_channels_last_float64": lambda d: (lambda y: (y.stride(), y.dtype))(
        mt.arange(24.0).reshape(1, 2, 3, 4).to(d, mt.float64, memory_format=CL)
    ),
    "to_channels_last_3d": lambda d: (lambda y: (y.stride(), y.cpu().tolist()))(
        mt.arange(48.0).reshape(1, 2, 3, 4, 2).to(d, memory_format=CL3)
    ),
    "to_contiguous_from_permuted": lambda d: (
        mt.arange(24.0)
        .reshape(1, 2, 3, 4)
        .transpose(1, 3)
        .to(d, mt.float64, memory_format=mt.contiguous_format)
        .stride()
    ),
    "to_preserve_from_permuted": lambda d: mt.arange(24.0).reshape(1, 2, 3, 4).transpose(1, 3).to(d).stride(),
    "to_channels_last_wrong_rank": lambda d: mt.zeros(2, 3).to(d, memory_format=CL),
    "empty_channels_last": lambda d: mt.empty(2, 3, 2, 2, device=d, memory_format=CL).stride(),
    "empty_channels_last_3d": lambda d: mt.empty(1, 3, 2, 2, 2, device=d, memory_format=CL3).stride(),
    "empty_wrong_rank": lambda d: mt.empty(2, 3, device=d, memory_format=CL3),
    "module_to_channels_last": lambda d: [
        p.stride()
        for p in mt.nn.Sequential(mt.nn.Conv2d(2, 3, 2), mt.nn.Linear(2, 2)).to(d, memory_format=CL).parameters()
    ],
    "index_put_expanded": lambda d: (
        lambda x: (x.index_put_((mt.tensor([0], device=d),), mt.ones(3, device=d)), x._version)
    )(mt.zeros(3, device=d).expand(2, 3)),
    "index_put_expanded_accumulate": lambda d: (
        mt.zeros(3, device=d)
        .expand(2, 3)
        .index_put_((mt.tensor([0, 1], device=d),), mt.ones(2, 3, device=d), accumulate=True)
    ),
    "setitem_expanded_bfloat16": lambda d: (
        lambda x: (x.__setitem__(mt.tensor([1], device=d), mt.tensor([1.0, 2.0, 3.0], device=d, dtype=mt.bfloat16)), x)[
            1
        ]
    )(mt.zeros(3, device=d, dtype=mt.bfloat16).expand(2, 3)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_cuda_matches_cpu(name):
    assert _transcript(CASES[name], "cuda") == _transcript(CASES[name], "cpu")
