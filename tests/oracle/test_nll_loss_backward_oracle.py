"""``nll_loss_backward``'s shortcut for cross-entropy's training case (``backends/cpu/nn_ops.py``,
``_nll_loss_backward_common``, with and without its compiled scatter ``_twins.backends.cpu.nn_ops.nll_scatter``)
against the general kernel (bit for bit) and PyTorch 2.13."""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import minitorch_nn as mt  # noqa: E402
from minitorch_nn.backends.cpu import nn_ops  # noqa: E402


def _call(L, x, t, g, reduction, ignore_index, weight):
    x = L.tensor(x)
    logp = L.log_softmax(x, 1)
    w = None if weight is None else L.tensor(weight)
    out, total = L.ops.aten.nll_loss_forward.default(logp, L.tensor(t), w, reduction, ignore_index)
    return L.ops.aten.nll_loss_backward.default(L.tensor(g, dtype=x.dtype), logp, L.tensor(t), w, reduction,
                                                ignore_index, total)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 6), c=st.integers(1, 5), dtype=st.sampled_from(["float32", "float64"]),
       reduction=st.sampled_from([0, 1, 2]), ignore=st.sampled_from([-100, 0, 1]), weighted=st.booleans(),
       seed=st.integers(0, 2**16))
def test_shortcut_matches_the_general_kernel_and_torch(n, c, dtype, reduction, ignore, weighted, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c)).astype(dtype)
    t = rng.integers(0, c, n)
    g = rng.standard_normal(n).astype(dtype) if reduction == 0 else np.asarray(rng.standard_normal(), dtype=dtype)
    w = rng.uniform(0.5, 2, c).astype(dtype) if weighted else None
    fast = _call(mt, x, t, g, reduction, ignore, w)
    saved = nn_ops._nll_loss_backward_common
    nn_ops._nll_loss_backward_common = lambda *args: None   # the general kernel
    try:
        full = _call(mt, x, t, g, reduction, ignore, w)
    finally:
        nn_ops._nll_loss_backward_common = saved
    saved = nn_ops._nll_scatter
    nn_ops._nll_scatter = None   # the shortcut's numpy scatter, without the compiled loop
    try:
        numpy_scatter = _call(mt, x, t, g, reduction, ignore, w)
    finally:
        nn_ops._nll_scatter = saved
    np.testing.assert_array_equal(fast.numpy(), numpy_scatter.numpy())
    theirs = _call(torch, x, t, g, reduction, ignore, w)
    assert (fast.dtype, fast.shape, fast.stride()) == (full.dtype, full.shape, full.stride())
    np.testing.assert_array_equal(fast.numpy(), full.numpy())
    assert str(fast.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert fast.stride() == theirs.stride()
    np.testing.assert_allclose(fast.numpy(), theirs.numpy(), rtol=1e-6, atol=0)


def test_shortcut_takes_the_training_case_only():
    x = mt.log_softmax(mt.randn(4, 3), 1)
    t = mt.tensor([0, 2, 1, 2])
    one, total = mt.tensor(1.0), mt.tensor(4.0)
    take = nn_ops._nll_loss_backward_common
    assert take(one, x, t, None, 1, -100, total) is not None
    assert take(one, x, t, None, 1, 2, total) is None              # a target is ignored
    assert take(one, x, t, mt.ones(3), 1, -100, total) is None     # weights
    assert take(mt.ones(4), x, t, None, 0, -100, total) is None    # reduction="none"
    assert take(one.double(), x, t, None, 1, -100, total) is None  # another dtype
    assert take(one, x[0], t[:1], None, 1, -100, total) is None    # 1-d input
    assert take(one, x, mt.tensor([0, 3, 1, 2]), None, 1, -100, total) is None   # not a class
