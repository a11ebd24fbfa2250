"""The cpu kernels' written-out numpy reductions give numpy's own bits.

``backends/cpu/reduction.py:_var_steps`` (``var``/``std``) and ``backends/cpu/nn_ops.py:
_mean_keepdims`` (``native_layer_norm``) make the ufunc calls that ``np.var`` and
``ndarray.mean`` make, without their argument handling. Random float32/float64 arrays (with
infinities and NaN), axes, corrections and ``keepdims``: the result's type, shape, dtype and bytes
must be those of ``np.var``/``ndarray.mean``; and the kernels that use them must still agree with
PyTorch (``tests/oracle`` compares values; here, warnings: none for ordinary inputs).
"""

import itertools
import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_nn as mt
from minitorch_nn.backends.cpu.nn_ops import _mean_keepdims
from minitorch_nn.backends.cpu.reduction import _var_steps


@st.composite
def arrays(draw):
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=0, max_size=3)))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = np.asarray(rng.standard_normal(shape) * draw(st.sampled_from([1e-3, 1.0, 1e3, 1e20])), dtype=dtype)
    if x.size and draw(st.booleans()):
        x.reshape(-1)[draw(st.integers(0, x.size - 1))] = draw(st.sampled_from([np.inf, -np.inf, np.nan, 0.0]))
    if x.ndim >= 2 and draw(st.booleans()):
        x = x.T   # (a transposed view: numpy's loops walk it in another order)
    subsets = [None] + [p for k in range(1, x.ndim + 1) for p in itertools.permutations(range(x.ndim), k)]
    return x, draw(st.sampled_from(subsets))


def _same(a, b):
    assert type(a) is type(b)
    assert np.shape(a) == np.shape(b) and np.asarray(a).dtype == np.asarray(b).dtype
    assert np.asarray(a).tobytes() == np.asarray(b).tobytes()


@settings(max_examples=300, deadline=None)
@given(case=arrays(), ddof=st.sampled_from([0, 1, 2, 0.5]), keepdim=st.booleans())
def test_var_steps_are_np_var(case, ddof, keepdim):
    x, axes = case
    count = x.size if axes is None else int(np.prod([x.shape[a] for a in axes]))
    if count - ddof <= 0:
        return   # (the kernel calls np.var itself there, for its warning)
    with np.errstate(all="ignore"):
        _same(_var_steps(x, axes, count, ddof, keepdim), np.var(x, axis=axes, ddof=ddof, keepdims=keepdim))


@settings(max_examples=300, deadline=None)
@given(case=arrays())
def test_mean_keepdims_is_ndarray_mean(case):
    x, axes = case
    if x.ndim == 0:
        return   # (layer_norm normalizes at least one dim)
    if axes is None:
        axes = tuple(range(x.ndim))
    count = int(np.prod([x.shape[a] for a in axes]))
    with np.errstate(all="ignore"):
        _same(_mean_keepdims(x, axes, count), x.mean(axis=axes, keepdims=True))


def test_var_std_layer_norm_give_no_numpy_warnings():
    x = mt.tensor([[1.0, float("inf"), 2.0], [float("nan"), 3.0, 4.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x.var(), x.std(1), x.var(0, keepdim=True), mt.nn.functional.layer_norm(x, (3,))
