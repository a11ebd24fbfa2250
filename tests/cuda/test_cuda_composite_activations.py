"""hardswish, hardsigmoid, mish, logsigmoid and celu (and their backward ops) on the GPU: the same
values and gradients as the cpu kernels (backends/cpu/activations_more.py), without the host path."""

import numpy as np
import pytest

import minitorch_nn as mt
import minitorch_nn.nn.functional as F
from minitorch_nn.backends.cuda import fallback

FUNCTIONS = {
    "hardswish": F.hardswish,
    "hardsigmoid": F.hardsigmoid,
    "mish": F.mish,
    "logsigmoid": F.logsigmoid,
    "celu": lambda x: F.celu(x, 0.5),
    "glu": lambda x: F.glu(x[:8].reshape(2, 4), 0),
    "glu_strided": lambda x: F.glu(x[:8].reshape(2, 4).t(), 1),
    "prelu": lambda x: F.prelu(x[:6].reshape(2, 3), mt.tensor([0.25, -0.5, 2.0], dtype=x.dtype, device=x.device)),
    "prelu_one_weight": lambda x: F.prelu(x, mt.tensor([0.25], dtype=x.dtype, device=x.device)),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_gpu_matches_cpu_without_the_host(name):
    fn = FUNCTIONS[name]
    x = mt.tensor([-5.0, -3.0, -1.5, -0.2, 0.0, 0.7, 3.0, 4.0, 30.0], dtype=mt.float64)
    a, b = x.clone().requires_grad_(), x.cuda().requires_grad_()
    before = sum(fallback.HOST_CALLS.values())
    ya, yb = fn(a), fn(b)
    (ga,) = mt.autograd.grad(ya.sum(), a)
    (gb,) = mt.autograd.grad(yb.sum(), b)
    assert sum(fallback.HOST_CALLS.values()) == before
    assert yb.is_cuda and type(yb.grad_fn).__name__ == type(ya.grad_fn).__name__
    np.testing.assert_allclose(yb.detach().cpu().numpy(), ya.detach().numpy(), rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(gb.cpu().numpy(), ga.numpy(), rtol=1e-14, atol=1e-15)


def test_prelu_weight_gradient_on_the_gpu():
    x = mt.tensor([[-1.0, 2.0, -3.0], [4.0, -5.0, 0.5]], dtype=mt.float64)
    w = mt.tensor([0.25, -0.5, 2.0], dtype=mt.float64)
    grads = []
    for device in ("cpu", "cuda"):
        xs, ws = x.to(device).requires_grad_(), w.to(device).requires_grad_()
        grads.append([g.cpu().numpy() for g in mt.autograd.grad(F.prelu(xs, ws).sum(), [xs, ws])])
    for a, b in zip(*grads):
        np.testing.assert_allclose(b, a, rtol=1e-14)


def test_integer_input_raises_the_cpu_error():
    with pytest.raises(RuntimeError, match="hardswish_cpu"):
        F.hardswish(mt.ones(2, dtype=mt.int64).cuda())


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("loss", ["smooth_l1", "huber"])
def test_smooth_losses_on_the_gpu(loss, reduction):
    fn = (lambda a, b: F.smooth_l1_loss(a, b, reduction=reduction, beta=0.5)) if loss == "smooth_l1" else (
        lambda a, b: F.huber_loss(a, b, reduction=reduction, delta=0.5))
    x = mt.tensor([[-1.0, 0.2, 3.0], [0.4, -0.1, 2.0]], dtype=mt.float64)
    y = mt.tensor([[0.5, 0.0, -1.0], [0.3, 0.6, 2.0]], dtype=mt.float64)
    results = []
    before = None
    for device in ("cpu", "cuda"):
        a, b = x.to(device).requires_grad_(), y.to(device).requires_grad_()
        if device == "cuda":
            before = sum(fallback.HOST_CALLS.values())
        out = fn(a, b)
        grads = mt.autograd.grad(out.sum(), [a, b])
        results.append([out.detach().cpu().numpy(), *[g.cpu().numpy() for g in grads], type(out.grad_fn).__name__])
    assert sum(fallback.HOST_CALLS.values()) == before
    assert results[0][3] == results[1][3]
    for a, b in zip(results[0][:3], results[1][:3]):
        np.testing.assert_allclose(b, a, rtol=1e-14, atol=1e-16)


@pytest.mark.parametrize("output_size", [(3, 2), (2, 5), 1])
def test_adaptive_avg_pool2d_on_the_gpu(output_size):
    x = mt.arange(2 * 7 * 5, dtype=mt.float64).reshape(1, 2, 7, 5).sin()
    results = []
    before = None
    for device in ("cpu", "cuda"):
        a = x.to(device).requires_grad_()
        if device == "cuda":
            before = sum(fallback.HOST_CALLS.values())
        out = F.adaptive_avg_pool2d(a, output_size)
        (g,) = mt.autograd.grad((out * out).sum(), a)
        results.append([out.detach().cpu().numpy(), g.cpu().numpy(), type(out.grad_fn).__name__])
    assert sum(fallback.HOST_CALLS.values()) == before
    assert results[0][2] == results[1][2]
    for a, b in zip(results[0][:2], results[1][:2]):
        np.testing.assert_allclose(b, a, rtol=1e-14, atol=1e-16)


@pytest.mark.parametrize("kw", [{"scale_factor": 2}, {"size": (5, 3)}, {"scale_factor": 1.7}])
def test_upsample_nearest2d_on_the_gpu(kw):
    x = mt.arange(2 * 3 * 4, dtype=mt.float64).reshape(1, 2, 3, 4).sin()
    results = []
    before = None
    for device in ("cpu", "cuda"):
        a = x.to(device).requires_grad_()
        if device == "cuda":
            before = sum(fallback.HOST_CALLS.values())
        out = F.interpolate(a, **kw)
        (g,) = mt.autograd.grad((out * out).sum(), a)
        results.append([out.detach().cpu().numpy(), g.cpu().numpy(), type(out.grad_fn).__name__])
    assert sum(fallback.HOST_CALLS.values()) == before
    assert results[0][2] == results[1][2] == "UpsampleNearest2DBackward0"
    for a, b in zip(results[0][:2], results[1][:2]):
        np.testing.assert_allclose(b, a, rtol=1e-14, atol=1e-16)
