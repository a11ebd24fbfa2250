"""Oracle: double backward (``create_graph=True``) through conv, pooling, norm and loss layers.

For each layer we take the first-order gradients with ``create_graph=True``, then differentiate
a scalar made of them (the sum of their squares, which mixes every input with every other) a
second time, in torch and in minitorch_nn, and compare the second derivatives. A second group
runs minitorch_nn's own ``autograd.gradgradcheck`` (finite differences of the analytical
gradients) on small float64 shapes, and a hypothesis test draws random convolution settings.
"""

import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

import numpy as np  # noqa: E402
import torch.nn.functional as TF  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import minitorch_nn as mt  # noqa: E402
import minitorch_nn.nn.functional as MF  # noqa: E402

# name -> (f(L, F, *tensors) -> output, input shapes). L is the library (torch or minitorch_nn),
# F its nn.functional. Every input is float64 and requires grad.
LAYERS = {
    "conv1d": (lambda L, F, x, w, b: F.conv1d(x, w, b, stride=2, padding=1), [(2, 3, 7), (4, 3, 3), (4,)]),
    "conv2d": (lambda L, F, x, w, b: F.conv2d(x, w, b, padding=1), [(2, 3, 4, 4), (4, 3, 3, 3), (4,)]),
    "conv2d_groups_dilation": (lambda L, F, x, w: F.conv2d(x, w, stride=(1, 2), dilation=2, groups=2),
                               [(1, 4, 6, 6), (2, 2, 2, 2)]),
    "conv3d": (lambda L, F, x, w: F.conv3d(x, w), [(1, 2, 3, 3, 3), (2, 2, 2, 2, 2)]),
    "conv_transpose1d": (lambda L, F, x, w, b: F.conv_transpose1d(x, w, b, stride=2, output_padding=1),
                         [(2, 3, 4), (3, 2, 3), (2,)]),
    "conv_transpose2d": (lambda L, F, x, w: F.conv_transpose2d(x, w, stride=2, padding=1, groups=1),
                         [(1, 2, 3, 3), (2, 3, 3, 3)]),
    "max_pool1d": (lambda L, F, x: F.max_pool1d(x, 2), [(2, 3, 6)]),
    "max_pool2d": (lambda L, F, x: F.max_pool2d(x, 3, stride=2, padding=1), [(2, 2, 5, 5)]),
    "avg_pool1d": (lambda L, F, x: F.avg_pool1d(x, 3, stride=2, padding=1), [(2, 2, 7)]),
    "avg_pool2d": (lambda L, F, x: F.avg_pool2d(x, 2, padding=1, count_include_pad=False), [(2, 2, 5, 5)]),
    "adaptive_avg_pool2d": (lambda L, F, x: F.adaptive_avg_pool2d(x, (2, 3)), [(2, 2, 5, 7)]),
    "batch_norm_train": (lambda L, F, x, w, b: F.batch_norm(x, None, None, w, b, training=True),
                         [(4, 3, 2, 2), (3,), (3,)]),
    "batch_norm_eval": (lambda L, F, x, w, b: F.batch_norm(
        x, L.linspace(-0.5, 0.5, 3, dtype=L.float64), L.linspace(0.5, 2.0, 3, dtype=L.float64), w, b,
        training=False), [(4, 3, 2), (3,), (3,)]),
    "instance_norm": (lambda L, F, x: F.instance_norm(x), [(2, 3, 5)]),
    "layer_norm": (lambda L, F, x, w, b: F.layer_norm(x, (2, 3), w, b), [(4, 2, 3), (2, 3), (2, 3)]),
    "layer_norm_no_affine": (lambda L, F, x: F.layer_norm(x, (5,)), [(3, 5)]),
    "group_norm": (lambda L, F, x, w, b: F.group_norm(x, 2, w, b), [(2, 4, 3), (4,), (4,)]),
    "cross_entropy": (lambda L, F, x: F.cross_entropy(x, L.tensor([1, 0, 3])), [(3, 4)]),
    "cross_entropy_weighted_ignore": (lambda L, F, x: F.cross_entropy(
        x, L.tensor([1, -100, 3, 2]), weight=L.tensor([0.5, 1.0, 2.0, 1.5], dtype=L.float64)), [(4, 4)]),
    "binary_cross_entropy_weighted": (lambda L, F, x, y: F.binary_cross_entropy(
        x.sigmoid(), y.sigmoid(), weight=L.tensor([0.5, 1.0, 2.0, 1.5], dtype=L.float64)), [(3, 4), (3, 4)]),
    "binary_cross_entropy_sum": (lambda L, F, x, y: F.binary_cross_entropy(x.sigmoid(), y.sigmoid(), reduction="sum"),
                                 [(2, 3), (2, 3)]),
    "binary_cross_entropy_with_logits": (lambda L, F, x, y: F.binary_cross_entropy_with_logits(x, y.sigmoid()),
                                         [(3, 4), (3, 4)]),
    "mse_loss": (lambda L, F, x, y: F.mse_loss(x, y), [(3, 4), (3, 4)]),
    "nll_loss_sum": (lambda L, F, x: F.nll_loss(x, L.tensor([2, 0]), reduction="sum"), [(2, 3)]),
    "nll_loss_none": (lambda L, F, x: F.nll_loss(x, L.tensor([2, 0]), reduction="none"), [(2, 3)]),
}


def _arrays(shapes, seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in shapes]


def _second_order(L, F, fn, arrays):
    """Second derivatives of sum(first-order gradients squared) w.r.t. every input."""
    leaves = [L.tensor(a, requires_grad=True) for a in arrays]
    out = fn(L, F, *leaves)
    # A loss that is not linear in the output, so the output's own curvature matters too.
    loss = (out * out).sum() if out.dim() else out
    firsts = L.autograd.grad(loss, leaves, create_graph=True)
    total = sum((g * g).sum() for g in firsts)
    seconds = L.autograd.grad(total, leaves, allow_unused=True)
    return [g.detach().numpy() for g in firsts], [None if g is None else g.detach().numpy() for g in seconds]


def _same(expected, got):
    if expected is None or got is None:   # "no gradient" and a zero gradient are the same value
        other = got if expected is None else expected
        return other is None or np.allclose(other, 0)
    return got.shape == expected.shape and np.allclose(got, expected, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_second_derivatives_match_torch(name):
    fn, shapes = LAYERS[name]
    arrays = _arrays(shapes, seed=len(name))
    t_first, t_second = _second_order(torch, TF, fn, arrays)
    m_first, m_second = _second_order(mt, MF, fn, arrays)
    for i, (e, g) in enumerate(zip(t_first, m_first)):
        assert _same(e, g), f"{name}: first-order gradient of input {i} differs"
    for i, (e, g) in enumerate(zip(t_second, m_second)):
        assert _same(e, g), f"{name}: second-order gradient of input {i} differs"


@pytest.mark.parametrize("name", ["conv2d", "conv_transpose1d", "max_pool2d", "avg_pool2d", "nll_loss_sum"])
def test_double_backward_node_names_match_torch(name):
    # The first-order gradient of the first input is made by the *_backward op, whose own node
    # PyTorch names "<Op>BackwardBackward0".
    fn, shapes = LAYERS[name]
    arrays = _arrays(shapes, seed=1)
    names = []
    for L, F in ((torch, TF), (mt, MF)):
        leaves = [L.tensor(a, requires_grad=True) for a in arrays]
        out = fn(L, F, *leaves)
        (g,) = L.autograd.grad(out.sum(), leaves[:1], create_graph=True)
        names.append(type(g.grad_fn).__name__ if L is torch else g.grad_fn.name())
    assert names[1] == names[0]


@pytest.mark.parametrize("name", ["conv1d", "conv_transpose1d", "max_pool1d", "avg_pool2d", "batch_norm_train",
                                  "batch_norm_eval", "layer_norm", "group_norm", "cross_entropy"])
def test_gradgradcheck(name):
    fn, shapes = LAYERS[name]
    leaves = [mt.tensor(a, requires_grad=True) for a in _arrays(shapes, seed=3)]
    assert mt.autograd.gradgradcheck(lambda *xs: fn(mt, MF, *xs), leaves)


def test_double_backward_without_weight_gradient():
    # Only the input requires grad: the weight enters the second backward as a constant.
    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((1, 2, 5, 5)), rng.standard_normal((3, 2, 3, 3))
    results = []
    for L, F in ((torch, TF), (mt, MF)):
        xt, wt = L.tensor(x, requires_grad=True), L.tensor(w)
        (gx,) = L.autograd.grad((F.conv2d(xt, wt, stride=2) ** 3).sum(), xt, create_graph=True)
        (ggx,) = L.autograd.grad((gx * gx).sum(), xt)
        results.append(ggx.numpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-7, atol=1e-10)


CONV_SETTINGS = settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


@CONV_SETTINGS
@given(
    nd=st.sampled_from([1, 2]),
    transposed=st.booleans(),
    stride=st.integers(1, 2),
    padding=st.integers(0, 1),
    dilation=st.integers(1, 2),
    groups=st.sampled_from([1, 2]),
    size=st.integers(4, 6),
    seed=st.integers(0, 2**16),
)
def test_random_convolutions_second_order(nd, transposed, stride, padding, dilation, groups, size, seed):
    c_in, c_out, k = 2, 4, 2
    x_shape = (2, c_in, *([size] * nd))
    w_shape = (c_in, c_out // groups, *([k] * nd)) if transposed else (c_out, c_in // groups, *([k] * nd))

    def conv(L, F, x, w, b):
        op = L.ops.aten.convolution if L is torch else L._ops.aten.convolution.default
        return op(x, w, b, [stride] * nd, [padding] * nd, [dilation] * nd, transposed, [0] * nd, groups)

    arrays = _arrays([x_shape, w_shape, (c_out,)], seed)
    t_first, t_second = _second_order(torch, TF, conv, arrays)
    m_first, m_second = _second_order(mt, MF, conv, arrays)
    for e, g in zip(t_first + t_second, m_first + m_second):
        assert _same(e, g)


# The *_backward ops themselves, called directly: (aten name, f(op, *tensors) -> output,
# shapes or arrays of the differentiable inputs, constant arguments built by the test).
_MASK = np.random.default_rng(7).random((3, 4)) > 0.5
_INDICES = np.array([[0, 2], [4, 2]])
BACKWARD_OPS = {
    "mse_loss_backward_none": ("mse_loss_backward", lambda op, g, x, y: op(g, x, y, 0), [(3, 4), (3, 4), (3, 4)]),
    "mse_loss_backward_mean": ("mse_loss_backward", lambda op, g, x, y: op(g, x, y, 1), [(), (3, 4), (3, 4)]),
    "mse_loss_backward_sum": ("mse_loss_backward", lambda op, g, x, y: op(g, x, y, 2), [(), (3, 4), (3, 4)]),
    "native_dropout_backward": ("native_dropout_backward", lambda op, g, mask: op(g, mask, 2.0), [(3, 4)], _MASK),
    "embedding_dense_backward": ("embedding_dense_backward", lambda op, g, idx: op(g, idx, 5, -1, False),
                                 [(2, 2, 3)], _INDICES),
    "embedding_dense_backward_padding": ("embedding_dense_backward", lambda op, g, idx: op(g, idx, 5, 2, False),
                                         [(2, 2, 3)], _INDICES),
}


@pytest.mark.parametrize("name", sorted(BACKWARD_OPS))
def test_backward_ops_called_directly_are_differentiable(name):
    op_name, fn, shapes, *const = BACKWARD_OPS[name]
    arrays = _arrays(shapes, seed=11)
    results = []
    for L in (torch, mt):
        op = getattr(torch.ops.aten, op_name) if L is torch else getattr(mt._ops.aten, op_name).default
        leaves = [L.tensor(a, requires_grad=True) for a in arrays]
        out = fn(op, *leaves, *[L.tensor(c) for c in const])
        grads = L.autograd.grad((out * out).sum(), leaves, allow_unused=True)
        results.append([None if g is None else g.detach().numpy() for g in grads])
    for e, g in zip(*results):
        assert _same(e, g)
