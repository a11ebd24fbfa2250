"""max_pool2d against PyTorch 2.13 on inputs full of ties, -inf, NaN and signed zeros, with padding,
dilation and ceil_mode: values bit for bit and the same argmax indices, with and without the
indices asked for (the values-only kernel runs in the second case)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

import minitorch_nn as mt  # noqa: E402

VALUES = [0.0, -0.0, 1.0, -1.0, float("-inf"), float("inf"), float("nan")]


@st.composite
def case(draw):
    kh, kw = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    dh, dw = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    ph, pw = draw(st.integers(0, kh // 2)), draw(st.integers(0, kw // 2))
    sh, sw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    h = draw(st.integers(dh * (kh - 1) + 1, 8))
    w = draw(st.integers(dw * (kw - 1) + 1, 8))
    # mostly -inf sometimes, so that whole windows hold nothing larger than their padding
    pool = draw(st.sampled_from([VALUES, [float("-inf")] * 6 + [1.0], [0.0, -0.0]]))
    values = draw(st.lists(st.sampled_from(pool), min_size=2 * h * w, max_size=2 * h * w))
    x = np.array(values, dtype=np.float32).reshape(1, 2, h, w)
    return x, dict(kernel_size=(kh, kw), stride=(sh, sw), padding=(ph, pw), dilation=(dh, dw),
                   ceil_mode=draw(st.booleans()))


def _bits(a):
    a = np.ascontiguousarray(a)
    return a.shape, a.view(np.uint8).tobytes()


@settings(max_examples=200, deadline=None)
@given(case())
def test_values_and_indices_match_pytorch(c):
    x, kw = c
    t_out, t_idx = torch.nn.functional.max_pool2d(torch.from_numpy(x), return_indices=True, **kw)
    m_out, m_idx = mt.nn.functional.max_pool2d(mt.from_numpy(x), return_indices=True, **kw)
    assert _bits(m_out.numpy()) == _bits(t_out.numpy())
    assert np.array_equal(m_idx.numpy(), t_idx.numpy())
    values_only = mt.nn.functional.max_pool2d(mt.from_numpy(x), **kw)
    assert _bits(values_only.numpy()) == _bits(t_out.numpy())


@settings(max_examples=100, deadline=None)
@given(case(), st.sampled_from([np.float32, np.float64]), st.booleans())
def test_input_gradient_matches_pytorch_bit_for_bit(c, dtype, channels_last):
    """Overlapping windows (stride < kernel) send several gradients to one input element; they
    are summed in PyTorch's order and precision."""
    x, kw = c
    x = np.nan_to_num(x, nan=0.5, posinf=2.0, neginf=-2.0).astype(dtype)  # finite, still full of ties
    g = np.random.default_rng(x.size).standard_normal(size=1).astype(dtype)  # shape fixed below
    grads = []
    for lib, from_numpy in ((torch, torch.from_numpy), (mt, mt.from_numpy)):
        xt = from_numpy(x.copy())
        if channels_last:
            xt = xt.contiguous(memory_format=lib.channels_last)
        xt.requires_grad_()
        out = lib.nn.functional.max_pool2d(xt, **kw)
        if g.shape != tuple(out.shape):
            g = np.random.default_rng(x.size).standard_normal(tuple(out.shape)).astype(dtype) / 3
        out.backward(from_numpy(g.copy()))
        grads.append(np.ascontiguousarray(xt.grad.numpy()))
    assert _bits(grads[1]) == _bits(grads[0])
