"""softmax, log_softmax and sigmoid against torch 2.13, to the bit where we can.

Our cpu kernels follow PyTorch's order of operations (``_ext/_activation_kernels.pyx``); only the
exp differs (libm's against PyTorch's vectorised polynomial). So: every element within a few
ulps of torch's, and most elements bit-identical, for float32 and float64, along the last dim and
along inner dims, through the public functions (fast path) and with the full path forced.
"""

import contextlib

import numpy as np
import pytest

import minitorch_nn as mt
from tests.twins.harness import full_path

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

_CASES = [((400, 4), 1), ((400, 7), -1), ((200, 16), 1), ((50, 100), 1), ((4, 300), 0), ((20, 10, 12), 1),
          ((6, 5, 4, 3), 2), ((9,), 0)]


def _ulps(ours, theirs):
    scale = np.spacing(np.maximum(np.abs(theirs), np.finfo(theirs.dtype).tiny).astype(theirs.dtype))
    return np.abs(ours.astype(np.float64) - theirs.astype(np.float64)) / scale


@pytest.mark.parametrize("forced", [False, True], ids=["fast path", "full path"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, dim", _CASES)
def test_softmax_and_log_softmax_track_torch(shape, dim, dtype, forced):
    rng = np.random.default_rng(len(shape) * 1000 + shape[0])
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    with full_path() if forced else contextlib.nullcontext():
        ours = mt.softmax(mt.tensor(x), dim).numpy()
        ours_log = mt.log_softmax(mt.tensor(x), dim).numpy()
    theirs = torch.softmax(torch.from_numpy(x), dim).numpy()
    theirs_log = torch.log_softmax(torch.from_numpy(x), dim).numpy()
    assert _ulps(ours, theirs).max() <= 4
    assert (ours == theirs).mean() >= 0.6
    # log_softmax: near 0 the cancellation makes relative ulps meaningless; compare at the scale of 1
    eps = np.finfo(dtype).eps
    assert np.abs(ours_log - theirs_log).max() <= 8 * eps * max(1.0, np.abs(theirs_log).max())
    assert (ours_log == theirs_log).mean() >= 0.8


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sigmoid_tracks_torch(dtype):
    x = (np.random.default_rng(3).standard_normal(20000) * 6).astype(dtype)
    ours = mt.tensor(x).sigmoid().numpy()
    theirs = torch.from_numpy(x).sigmoid().numpy()
    assert _ulps(ours, theirs).max() <= 4
    assert (ours == theirs).mean() >= 0.9


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_sixteen_bit_softmax_computes_in_float32_as_torch(dtype):
    x = torch.randn(8, 12, generator=torch.Generator().manual_seed(5)).to(getattr(torch, dtype))
    ours = mt.softmax(mt.tensor(x.float().numpy()).to(getattr(mt, dtype)), 1)
    theirs = torch.softmax(x, 1)
    assert ours.dtype == getattr(mt, dtype)
    diff = (ours.float().numpy() - theirs.float().numpy())
    # one rounding to 16 bits apart at most
    assert np.abs(diff).max() <= float(torch.finfo(getattr(torch, dtype)).eps)


# float32 unary math (_ext/_unary_kernels.pyx): the share of elements bit-identical to torch's,
# measured at 91.5% (log) to 99.9% (tanh, sinh, cosh, log10, expm1, log2); numpy's own float32
# routines gave 60% (exp) to 99.6% (log2)
_UNARY_AT_LEAST = {"exp": 0.98, "log": 0.9, "expm1": 0.99, "log2": 0.99, "log10": 0.99, "log1p": 0.98,
                   "sinh": 0.99, "cosh": 0.99, "tanh": 0.99}


@pytest.mark.parametrize("name", sorted(_UNARY_AT_LEAST))
def test_float32_unary_math_tracks_torch(name):
    x = (np.random.default_rng(7).standard_normal(20000) * 4).astype(np.float32)
    if name.startswith("log"):
        x = np.abs(x) + np.float32(1e-3)
    ours = getattr(mt.tensor(x), name)().numpy()
    fast_and_full = getattr(mt, name)(mt.tensor(x)).numpy()
    theirs = getattr(torch.from_numpy(x), name)().numpy()
    np.testing.assert_array_equal(ours, fast_and_full)
    assert _ulps(ours, theirs).max() <= 1
    assert (ours == theirs).mean() >= _UNARY_AT_LEAST[name]
