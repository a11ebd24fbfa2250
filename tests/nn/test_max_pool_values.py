"""``F.max_pool2d`` without indices: when nothing can observe them it runs
``backends/cpu/pooling.max_pool2d_values``, which must give the values of
``max_pool2d_with_indices`` bit for bit, and step aside whenever the indices (or the op) can be seen.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_nn as mt
import minitorch_nn.nn.functional as F
from minitorch_nn._ops import aten
from minitorch_nn.backends.cpu import pooling as nn_ops
from minitorch_nn.utils._python_dispatch import TorchDispatchMode

DTYPES = [np.float32, np.float64, np.float16, np.int32, np.int64]


@st.composite
def pool_case(draw):
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    dh, dw = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    ph, pw = draw(st.integers(0, kh // 2)), draw(st.integers(0, kw // 2))
    sh, sw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    h = draw(st.integers(dh * (kh - 1) + 1, 9))
    w = draw(st.integers(dw * (kw - 1) + 1, 9))
    lead = draw(st.sampled_from([(1,), (2,), (2, 3)]))
    dtype = draw(st.sampled_from(DTYPES))
    # few distinct values so that ties (and -0.0 against 0.0, NaN, inf) are common
    pool = [0.0, -0.0, 1.0, -1.0, 2.5] if np.dtype(dtype).kind == "i" else [0.0, -0.0, 1.0, -1.0, np.nan, np.inf, -np.inf]
    values = draw(st.lists(st.sampled_from(pool), min_size=int(np.prod(lead)) * h * w,
                           max_size=int(np.prod(lead)) * h * w))
    x = np.array(values, dtype=np.float64).reshape(*lead, h, w).astype(dtype)
    args = ([kh, kw], [sh, sw], [ph, pw], [dh, dw], draw(st.booleans()))
    return x, args


def _bits(t):
    a = np.ascontiguousarray(t.numpy())
    return a.dtype, a.shape, a.view(np.uint8).tobytes()


@settings(max_examples=150, deadline=None)
@given(pool_case())
def test_values_kernel_equals_the_indices_kernel_bit_for_bit(case):
    x, args = case
    t = mt.from_numpy(x)
    expected, _ = nn_ops.max_pool2d_with_indices(t, *args)
    assert _bits(nn_ops.max_pool2d_values(t, *args)) == _bits(expected)


@pytest.mark.parametrize("dtype", [mt.float32, mt.float64])
def test_functional_values_are_the_same_with_and_without_grad(dtype):
    mt.manual_seed(0)
    x = mt.randn(2, 3, 9, 7, dtype=dtype)
    x[0, 0, 0, 0] = float("nan")
    fast = F.max_pool2d(x, 3, 2, 1, ceil_mode=True)
    slow, _ = F.max_pool2d(x, 3, 2, 1, ceil_mode=True, return_indices=True)
    needing_grad = F.max_pool2d(x.clone().requires_grad_(), 3, 2, 1, ceil_mode=True)
    assert needing_grad.grad_fn is not None and fast.grad_fn is None
    assert _bits(fast) == _bits(slow) == _bits(needing_grad.detach())


def _seen_ops(fn):
    seen = []

    class Recorder(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    with Recorder():
        fn()
    return seen


def test_a_dispatch_mode_still_sees_the_op_with_indices():
    x = mt.randn(1, 1, 4, 4)
    assert "aten.max_pool2d_with_indices.default" in _seen_ops(lambda: F.max_pool2d(x, 2))


def test_the_shortcut_is_taken_only_when_nothing_observes(monkeypatch):
    calls = []
    original = nn_ops.max_pool2d_values

    def counting(*args):
        calls.append(1)
        return original(*args)

    monkeypatch.setattr(nn_ops, "max_pool2d_values", counting)
    x = mt.randn(1, 2, 6, 6)
    F.max_pool2d(x, 2)
    assert len(calls) == 1  # plain cpu tensor, no grad: values only
    F.max_pool2d(x, 2, return_indices=True)
    F.max_pool2d(x.clone().requires_grad_(), 2)
    with mt.no_grad():
        F.max_pool2d(x.clone().requires_grad_(), 2)
    assert len(calls) == 2  # indices asked for, or needed by autograd: the full op
    _seen_ops(lambda: F.max_pool2d(x, 2))
    assert len(calls) == 2  # a dispatch mode watches: the full op
    with mt.utils.dispatch_trace() as trace:
        F.max_pool2d(x, 2)
    assert len(calls) == 2  # a dispatch trace watches: the full op, which the trace shows
    assert "max_pool2d_with_indices" in str(trace)


def test_a_replaced_cpu_kernel_is_used(monkeypatch):
    op = aten.max_pool2d_with_indices.default
    original = op._kernels["cpu"]
    calls = []

    def replacement(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setitem(op._kernels, "cpu", replacement)
    F.max_pool2d(mt.randn(1, 1, 4, 4), 2)
    assert calls == [1]
