"""Oracle: the backward kernels ``tanh_backward``, ``sigmoid_backward``, ``_softmax_backward_data``
and ``_log_softmax_backward_data`` against PyTorch 2.13.

``TanhBackward0``, ``SigmoidBackward0``, ``SoftmaxBackward0`` and ``LogSoftmaxBackward0`` compute
their gradient with one kernel each from the forward output, as PyTorch does: the values (16-bit
dtypes with PyTorch's roundings), the result's dtype and layout, errors, the ops a
``TorchDispatchMode`` sees during backward, and double backward through the kernels' own nodes
(``TanhBackwardBackward0``...).
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode as TorchMode  # noqa: E402

import minitorch_nn as mt  # noqa: E402
from minitorch_nn.utils._python_dispatch import TorchDispatchMode as MtMode  # noqa: E402

OPS = ["tanh", "sigmoid"]
DTYPES = ["float32", "float64", "float16", "bfloat16"]


def _as_np(t):
    return t.detach().float().numpy() if t.dtype in (mt.bfloat16, torch.bfloat16) else t.detach().numpy()


@settings(max_examples=40, deadline=None)
@given(op=st.sampled_from(OPS), dtype=st.sampled_from(DTYPES), shape=st.sampled_from([(3,), (2, 3), (3, 1, 2), ()]),
       transpose=st.booleans(), seed=st.integers(0, 2**16))
def test_backward_kernel_matches_torch(op, dtype, shape, transpose, seed):
    rng = np.random.default_rng(seed)
    g_np, y_np = rng.uniform(-2, 2, shape), rng.uniform(-1, 1, shape)
    results = []
    for L in (mt, torch):
        g, y = (L.tensor(a, dtype=getattr(L, dtype)) for a in (g_np, y_np))
        if transpose and len(shape) >= 2:
            g, y = g.mT.contiguous().mT, y.mT.contiguous().mT   # column-major operands
        out = getattr(L.ops.aten, op + "_backward").default(g, y)
        results.append((_as_np(out), str(out.dtype).split(".")[-1], out.stride(), tuple(out.shape)))
    (a, *meta_a), (b, *meta_b) = results
    assert meta_a == meta_b
    np.testing.assert_array_equal(a, b) if dtype in ("float16", "bfloat16") else \
        np.testing.assert_allclose(a, b, rtol=1e-6 if dtype == "float32" else 1e-12, atol=0)


def _recorded(L, Mode, op):
    ops = []

    class Recorder(Mode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            ops.append(str(func))
            return func(*args, **(kwargs or {}))

    x = L.tensor([0.3, -0.7, 1.2], requires_grad=True)
    y = getattr(x, op)()
    with Recorder():
        y.backward(L.tensor([1.0, -2.0, 0.5]))
    return [o for o in ops if o != "aten.detach.default"]   # (PyTorch unpacks saved outputs with detach)


@pytest.mark.parametrize("op", OPS)
def test_dispatch_mode_sees_the_backward_kernel(op):
    assert _recorded(mt, MtMode, op) == _recorded(torch, TorchMode, op)


def _double_backward(L, op):
    x = L.tensor([0.3, -0.7, 1.2, 2.5], dtype=L.float64, requires_grad=True)
    w = L.tensor([1.0, -2.0, 0.5, 3.0], dtype=L.float64)
    (g,) = L.autograd.grad((getattr(x, op)() * w).sum(), x, create_graph=True)
    (gg,) = L.autograd.grad((g * g).sum(), x)
    return g.grad_fn.name(), g.detach().numpy(), gg.numpy()


@pytest.mark.parametrize("op", OPS)
def test_double_backward_matches_torch(op):
    (name_a, g_a, gg_a), (name_b, g_b, gg_b) = _double_backward(mt, op), _double_backward(torch, op)
    assert name_a == name_b == f"{op.capitalize()}BackwardBackward0"
    np.testing.assert_allclose(g_a, g_b, rtol=1e-12)
    np.testing.assert_allclose(gg_a, gg_b, rtol=1e-12)


@pytest.mark.parametrize("op", OPS)
def test_gradient_of_grad_output_and_output_through_the_kernel(op):
    # both inputs of the kernel need a gradient: the two formulas of its node
    res = []
    for L in (mt, torch):
        g = L.tensor([0.5, -1.5, 2.0], dtype=L.float64, requires_grad=True)
        y = L.tensor([0.2, -0.4, 0.9], dtype=L.float64, requires_grad=True)
        out = getattr(L.ops.aten, op + "_backward").default(g, y)
        (out * L.tensor([1.0, 2.0, 3.0], dtype=L.float64)).sum().backward()
        res.append((out.grad_fn.name(), g.grad.numpy(), y.grad.numpy()))
    assert res[0][0] == res[1][0]
    for a, b in zip(res[0][1:], res[1][1:]):
        np.testing.assert_allclose(a, b, rtol=1e-12)


# -- nodes of multi-output ops ---------------------------------------------------------------------
# A formula of a multi-output op reads the gradients of the outputs it needs; an output that got
# no gradient reads as zeros, made only when read. nll_loss's node never reads the gradient of
# total_weight, so, as in PyTorch, backward runs nll_loss_backward and nothing else.


def _multi_output_backward(L, Mode, fn):
    ops = []

    class Recorder(Mode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            ops.append(str(func))
            return func(*args, **(kwargs or {}))

    x = L.tensor([[0.3, -0.7, 1.2], [0.1, 0.2, -0.4]], dtype=L.float64, requires_grad=True)
    out = fn(L, x)
    with Recorder():
        out.backward()
    return [o for o in ops if o != "aten.detach.default"], x.grad.numpy()


def test_nll_loss_node_runs_only_its_kernel():
    fn = lambda L, x: L.nn.functional.nll_loss(x, L.tensor([2, 0]))   # noqa: E731
    (ops_a, g_a), (ops_b, g_b) = _multi_output_backward(mt, MtMode, fn), _multi_output_backward(torch, TorchMode, fn)
    assert ops_a == ops_b == ["aten.ones_like.default", "aten.nll_loss_backward.default"]
    np.testing.assert_array_equal(g_a, g_b)


@pytest.mark.parametrize("which", [0, 1])
def test_gradient_of_an_unused_output_reads_as_zeros(which):
    # var_mean's formula reads both gradients: the one that did not arrive is made as zeros
    fn = lambda L, x: L.var_mean(x, 1)[which].sum()   # noqa: E731
    (ops, g_a), (_, g_b) = _multi_output_backward(mt, MtMode, fn), _multi_output_backward(torch, TorchMode, fn)
    assert "aten.zeros.default" in ops
    np.testing.assert_allclose(g_a, g_b, rtol=1e-12)


# -- softmax and log_softmax -------------------------------------------------------------------------

SOFTMAX_OPS = ["_softmax_backward_data", "_log_softmax_backward_data"]


@settings(max_examples=40, deadline=None)
@given(op=st.sampled_from(SOFTMAX_OPS), dtype=st.sampled_from(DTYPES),
       shape_dim=st.sampled_from([((3,), 0), ((2, 3), 1), ((2, 3), -2), ((3, 1, 2), 2), ((), 0), ((2, 0), 1)]),
       transpose=st.booleans(), seed=st.integers(0, 2**16))
def test_softmax_backward_kernel_matches_torch(op, dtype, shape_dim, transpose, seed):
    shape, dim = shape_dim
    rng = np.random.default_rng(seed)
    g_np, x_np = rng.uniform(-2, 2, shape), rng.uniform(-2, 2, shape)
    results = []
    for L in (mt, torch):
        g, x = (L.tensor(a, dtype=getattr(L, dtype)) for a in (g_np, x_np))
        if transpose and len(shape) >= 2:
            g, x = g.mT.contiguous().mT, x.mT.contiguous().mT
        y = (L.log_softmax if op.startswith("_log") else L.softmax)(x, dim)
        out = getattr(L.ops.aten, op).default(g, y, dim, g.dtype)
        results.append((_as_np(out).astype(np.float64), str(out.dtype).split(".")[-1], out.stride(),
                        tuple(out.shape)))
    (a, *meta_a), (b, *meta_b) = results
    assert meta_a == meta_b
    tol = {"float64": 1e-12, "float32": 1e-5}.get(dtype, 2e-2)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


# (PyTorch's _log_softmax_backward_data does not check that the shapes match; ours refuses with
# softmax's message, so that case is compared for softmax only)
@pytest.mark.parametrize("op,case", [(op, case) for op in SOFTMAX_OPS for case in ["shape", "dtype", "integer", "dim"]
                                     if not (case == "shape" and op.startswith("_log"))])
def test_softmax_backward_kernel_errors_match_torch(op, case):
    messages = []
    for L in (mt, torch):
        g, y, dim = L.ones(2, 3), L.ones(2, 3), 1
        if case == "shape":
            y = L.ones(3, 3)
        elif case == "dtype":
            y = L.ones(2, 3, dtype=L.float64)
        elif case == "integer":
            g, y = L.ones(2, 3, dtype=L.int64), L.ones(2, 3, dtype=L.int64)
        else:
            dim = 2
        with pytest.raises((RuntimeError, IndexError)) as info:
            getattr(L.ops.aten, op).default(g, y, dim, g.dtype)
        messages.append((info.type, str(info.value)))
    assert messages[0] == messages[1]


_SOFTMAXES = {"softmax": lambda L, x: L.softmax(x, 0), "log_softmax": lambda L, x: L.log_softmax(x, -1)}


def _softmax_double_backward(L, Mode, name):
    ops = []

    class Recorder(Mode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            ops.append(str(func))
            return func(*args, **(kwargs or {}))

    x = L.tensor([[0.3, -0.7, 1.2], [0.1, 0.2, -0.4]], dtype=L.float64, requires_grad=True)
    w = L.tensor([[1.0, 2.0, -1.0], [0.5, -3.0, 2.0]], dtype=L.float64)
    out = (_SOFTMAXES[name](L, x) * w).sum()
    with Recorder():
        (g,) = L.autograd.grad(out, x, create_graph=True)
    (gg,) = L.autograd.grad((g * g * w).sum(), x)
    return [o for o in ops if o != "aten.detach.default"], g.grad_fn.name(), g.detach().numpy(), gg.numpy()


@pytest.mark.parametrize("name", sorted(_SOFTMAXES))
def test_softmax_backward_and_double_backward_match_torch(name):
    (ops_a, name_a, g_a, gg_a), (ops_b, name_b, g_b, gg_b) = (
        _softmax_double_backward(mt, MtMode, name), _softmax_double_backward(torch, TorchMode, name))
    assert ops_a == ops_b   # the backward kernel, as in PyTorch
    assert name_a == name_b
    np.testing.assert_allclose(g_a, g_b, rtol=1e-12)
    np.testing.assert_allclose(gg_a, gg_b, rtol=1e-12)
