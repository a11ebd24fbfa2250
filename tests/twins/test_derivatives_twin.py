"""The compiled twin of the commonest backward formulas (``_ext/twins/autograd/derivatives.pyx``)
against the readable formulas of ``autograd/derivatives.py``.

* Each formula, called as the engine calls it (grad mode off), gives with the switch on exactly
  what the readable formula gives (``harness.outcome``: values bit for bit, dtype, shape, strides,
  version, shared storage, base, view or not), for random shapes, layouts and dtypes; and with the
  switch on it does not enter the kernels the twin computes without calling.
* Whole backward passes (linear layers with bias, cross-entropy, softmax, tanh/sigmoid/relu,
  chunk) give the same gradients and strides both ways.
* ``create_graph=True``: the twin declines, the readable formula records its ops (same graph, same
  second-order gradients).
* Guards: a kernel registered for ``aten.mm``, a replaced formula helper, a dispatch mode, a
  guard that failed its fingerprint check: the readable path runs.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_nn as mt
from minitorch_nn._ops import aten
from minitorch_nn.autograd import derivatives as D
from minitorch_nn.autograd import derivatives_nn as DN
from minitorch_nn.backends import compiled
from minitorch_nn.nn import functional as F
from minitorch_nn.utils._python_dispatch import TorchDispatchMode
from tests.twins.harness import (
    assert_fast_equals_full,
    fast_when_on,
    full_path,
    ran_kernels,
    switch_on,
)

DTYPES = st.sampled_from([mt.float32, mt.float64])
SIZES = st.integers(1, 6)


def _tensor(rng, shape, dtype, column_major=False):
    """A random tensor; column-major (the transpose of a row-major one) when asked."""
    if column_major and len(shape) == 2:
        return mt.tensor(rng.standard_normal(shape[::-1])).to(dtype).t()
    return mt.tensor(rng.standard_normal(shape)).to(dtype)


def _formula(fn, *args):
    """``fn(*args)`` as the engine calls a formula without create_graph: grad mode off."""
    def call():
        with mt.no_grad():
            return fn(*args)
    return call


# -- each formula, alone --------------------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(n=SIZES, k=SIZES, m=SIZES, dtype=DTYPES, seed=st.integers(0, 2**16), grad_t=st.booleans(),
       mat_t=st.booleans())
def test_mm_formulas_equal_the_readable_ones(n, k, m, dtype, seed, grad_t, mat_t):
    rng = np.random.default_rng(seed)
    grad = _tensor(rng, (n, m), dtype, grad_t)
    mat1 = _tensor(rng, (n, k), dtype, mat_t)
    mat2 = _tensor(rng, (k, m), dtype, mat_t)
    assert_fast_equals_full(_formula(D._mm_mat1_backward, grad, mat2), grad, mat2)
    # mat2's layout decides the layout of its gradient (row-major, or column-major as weight.t())
    for sizes, strides in [((k, m), (m, 1)), ((k, m), (1, k)), ((k, 1), (1, k))]:
        assert_fast_equals_full(_formula(D._mm_mat2_backward, grad, mat1, sizes, strides), grad, mat1)


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(SIZES, min_size=1, max_size=3), dtype=DTYPES, seed=st.integers(0, 2**16),
       data=st.data())
def test_softmax_formulas_equal_the_readable_ones(shape, dtype, seed, data):
    rng = np.random.default_rng(seed)
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    grad = _tensor(rng, shape, dtype)
    x = _tensor(rng, shape, dtype)
    y, log_y = x.softmax(dim), x.log_softmax(dim)
    assert_fast_equals_full(_formula(D._softmax_grad, grad, dim, y), grad, y)
    assert_fast_equals_full(_formula(D._log_softmax_grad, grad, dim, log_y), grad, log_y)


@settings(max_examples=25, deadline=None)
@given(n=SIZES, m=SIZES, dtype=DTYPES, seed=st.integers(0, 2**16), column_major=st.booleans())
def test_t_tanh_sigmoid_relu_formulas_equal_the_readable_ones(n, m, dtype, seed, column_major):
    rng = np.random.default_rng(seed)
    grad = _tensor(rng, (n, m), dtype, column_major)
    y = _tensor(rng, (n, m), dtype)
    assert_fast_equals_full(_formula(D._t_backward, grad), grad)
    assert_fast_equals_full(_formula(D._tanh_grad, grad, y.tanh()), grad)
    assert_fast_equals_full(_formula(D._sigmoid_grad, grad, y.sigmoid()), grad)
    assert_fast_equals_full(_formula(D._relu_grad, grad, y.relu()), grad)


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(SIZES, min_size=1, max_size=3), pieces=st.integers(1, 4), dtype=DTYPES,
       seed=st.integers(0, 2**16), data=st.data())
def test_split_formula_equals_the_readable_one(shape, pieces, dtype, seed, data):
    rng = np.random.default_rng(seed)
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    grads = []
    for _ in range(pieces):
        piece = list(shape)
        piece[dim] = data.draw(SIZES)
        grads.append(_tensor(rng, piece, dtype, data.draw(st.booleans())))
    assert_fast_equals_full(_formula(D._split_backward, grads, dim), *grads)


@settings(max_examples=25, deadline=None)
@given(n=SIZES, classes=st.integers(1, 5), dtype=DTYPES, seed=st.integers(0, 2**16),
       reduction=st.sampled_from([0, 1, 2]), weighted=st.booleans(), ignore=st.sampled_from([-100, 0]))
def test_nll_loss_formula_equals_the_readable_one(n, classes, dtype, seed, reduction, weighted, ignore):
    rng = np.random.default_rng(seed)
    x = _tensor(rng, (n, classes), dtype).log_softmax(1)
    target = mt.tensor(rng.integers(0, classes, n))
    weight = _tensor(rng, (classes,), dtype).abs() if weighted else None
    _, total_weight = aten.nll_loss_forward.default(x, target, weight, reduction, ignore)
    grad = _tensor(rng, (n,) if reduction == 0 else (), dtype)
    grads = [grad, None]
    assert_fast_equals_full(_formula(DN._nll_loss_grad, grads, x, target, weight, reduction, ignore, total_weight),
                            grad, x, target)


def test_the_twin_takes_the_formulas_and_declines_what_it_does_not_handle():
    grad, mat2 = mt.randn(4, 3), mt.randn(5, 3)
    took = not ran_kernels(_formula(D._mm_mat1_backward, grad, mat2), [aten.mm.default, aten.t.default])
    assert took == switch_on()
    # float16, an int grad, a mismatch (PyTorch's error from the readable kernel) and an empty
    # tensor take the readable path, with either setting
    half = grad.to(mt.float16), mat2.to(mt.float16)
    assert ran_kernels(_formula(D._mm_mat1_backward, *half), [aten.mm.default])
    assert ran_kernels(_formula(D._mm_mat1_backward, grad, mt.randn(5, 2)), [aten.mm.default])
    assert ran_kernels(_formula(D._mm_mat1_backward, mt.randn(0, 3), mat2), [aten.mm.default])
    with pytest.raises(RuntimeError, match="mat1 and mat2 shapes cannot be multiplied"):
        _formula(D._mm_mat1_backward, grad, mt.randn(5, 2))()
    assert_fast_equals_full(_formula(D._mm_mat1_backward, grad, mt.randn(5, 2)), grad)
    assert_fast_equals_full(_formula(D._log_softmax_grad, grad, 2, grad), grad)   # dim out of range


# -- whole backward passes ------------------------------------------------------------------------

def _gradients(model_and_loss):
    """Run ``model_and_loss()`` -> (loss, leaves), backward, and everything about each ``.grad``."""
    loss, leaves = model_and_loss()
    loss.backward()
    out = []
    for p in leaves:
        g = p.grad
        out.append((g.dtype, tuple(g.shape), g.stride(), g._is_view(), np.asarray(g._array).tobytes()))
    return out


def _mlp(dtype, seed, hidden_act):
    def run():
        mt.manual_seed(seed)
        model = mt.nn.Sequential(mt.nn.Linear(12, 7), hidden_act(), mt.nn.Linear(7, 5)).to(dtype)
        x = mt.randn(9, 12, dtype=dtype)
        y = mt.randint(0, 5, (9,))
        return F.cross_entropy(model(x), y), list(model.parameters())
    return run


def _lstm_cell_steps(dtype, seed):
    def run():
        mt.manual_seed(seed)
        lstm = mt.nn.LSTM(6, 5, num_layers=2).to(dtype)
        x = mt.randn(4, 3, 6, dtype=dtype)
        out, (h, c) = lstm(x)
        loss = (out.softmax(-1) * mt.randn(4, 3, 5, dtype=dtype)).sum() + h.sum() + c.sum()
        return loss, list(lstm.parameters())
    return run


@pytest.mark.parametrize("dtype", [mt.float32, mt.float64])
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("case", ["relu", "tanh", "sigmoid", "lstm"])
def test_backward_passes_give_the_readable_gradients(dtype, seed, case):
    if case == "lstm":
        run = _lstm_cell_steps(dtype, seed)
    else:
        run = _mlp(dtype, seed, {"relu": mt.nn.ReLU, "tanh": mt.nn.Tanh, "sigmoid": mt.nn.Sigmoid}[case])
    fast = _gradients(run)
    with full_path():
        full = _gradients(run)
    assert fast == full


def test_create_graph_takes_the_readable_formulas_and_records_them():
    def second_order():
        mt.manual_seed(3)
        w = mt.randn(4, 3, requires_grad=True)
        x = mt.randn(5, 4)
        loss = (x @ w).tanh().log_softmax(1).sum()
        (g,) = mt.autograd.grad(loss, [w], create_graph=True)
        (gg,) = mt.autograd.grad(g.sum(), [w])
        return g.grad_fn.name(), g.detach().numpy().tobytes(), gg.numpy().tobytes()

    with_mm = ran_kernels(second_order, [aten.mm.default])   # the readable mm formula ran
    assert with_mm
    fast = second_order()
    with full_path():
        full = second_order()
    assert fast == full


# -- guards ---------------------------------------------------------------------------------------

def _linear_backward():
    mt.manual_seed(0)
    w = mt.randn(3, 4, requires_grad=True)
    b = mt.randn(3, requires_grad=True)
    F.linear(mt.randn(5, 4), w, b).log_softmax(1).sum().backward()
    return w.grad, b.grad


def test_the_twin_runs_only_with_the_switch_on():
    ran = ran_kernels(_linear_backward, [aten.mm.default, aten._log_softmax_backward_data.default])
    assert fast_when_on(ran)

    def cross_entropy_backward():
        x = mt.randn(6, 4, requires_grad=True)
        F.cross_entropy(x, mt.tensor([0, 3, 1, 2, 2, 0])).backward()

    assert fast_when_on(ran_kernels(cross_entropy_backward, [aten.nll_loss_backward.default]))


def test_a_kernel_registered_for_mm_runs():
    calls = []
    kernel = aten.mm.default._kernels["cpu"]

    def counting(*args, **kwargs):
        calls.append(1)
        return kernel(*args, **kwargs)

    aten.mm.default.impl("cpu")(counting)
    try:
        w_grad, _ = _linear_backward()
    finally:
        aten.mm.default.impl("cpu")(kernel)
    assert calls   # the formulas' mm went to the registered kernel
    with full_path():
        assert _linear_backward()[0].tolist() == w_grad.tolist()


def test_a_replaced_formula_helper_runs():
    calls = []
    original = D._mm_mat2_backward

    def counting(*args):
        calls.append(1)
        return original(*args)

    D._mm_mat2_backward = counting
    try:
        _linear_backward()
    finally:
        D._mm_mat2_backward = original
    assert calls


def test_a_dispatch_mode_sees_the_formulas_ops():
    seen = []

    class Recorder(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    mt.manual_seed(0)
    w = mt.randn(3, 4, requires_grad=True)
    loss = F.linear(mt.randn(5, 4), w).log_softmax(1).sum()
    with Recorder():
        loss.backward()
    assert "aten.mm.default" in seen and "aten._log_softmax_backward_data.default" in seen


def test_a_guard_that_failed_its_fingerprint_check_sends_the_formula_the_readable_way():
    twin = D._twin
    if twin is None:
        pytest.skip("the derivatives twin is not built")
    guard = compiled.Guard("tests.unrecorded_formula", ops=(aten.mm.default,), functions=(lambda grad, mat2: None,))
    grad, mat2 = mt.randn(2, 3), mt.randn(4, 3)
    try:
        with mt.no_grad():
            if switch_on():
                with pytest.warns(RuntimeWarning, match="unrecorded_formula"):
                    assert twin.mm_mat1_backward(grad, mat2, guard) is NotImplemented
                assert compiled.disabled()["tests.unrecorded_formula"]
                assert twin.mm_mat1_backward(grad, mat2, D._MM_MAT1_TWIN) is not NotImplemented
            else:   # with the switch off the twin declines before it looks at a guard
                assert twin.mm_mat1_backward(grad, mat2, D._MM_MAT1_TWIN) is NotImplemented
    finally:
        compiled._guards.remove(guard)
        compiled._disabled_twins.pop("tests.unrecorded_formula", None)
