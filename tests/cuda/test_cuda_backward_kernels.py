"""The backward kernels tanh_backward and sigmoid_backward on cuda against the cpu backend, and
tanh's/sigmoid's backward running on cuda."""

import pytest

import minitorch_nn as mt
from tests.cuda._helpers import assert_same

G = mt.tensor([[0.5, -1.25, 2.0], [3.5, -0.75, 1.5]])
Y = mt.tensor([[0.25, -0.5, 0.75], [0.9, -0.1, 0.0]])


@pytest.mark.parametrize("name", ["tanh_backward", "sigmoid_backward"])
def test_backward_kernel(name):
    fn = getattr(mt.ops.aten, name).default
    assert_same(fn(G.cuda(), Y.cuda()), fn(G, Y))
    assert_same(fn(G.t().cuda(), Y.t().cuda()), fn(G.t(), Y.t()))


@pytest.mark.parametrize("name", ["tanh", "sigmoid"])
def test_backward_through_the_op(name):
    grads = []
    for x in (G.clone().requires_grad_(), G.cuda().requires_grad_()):
        (getattr(x, name)() * Y.to(x.device)).sum().backward()
        grads.append(x.grad)
    assert_same(grads[1], grads[0])


@pytest.mark.parametrize("name", ["_softmax_backward_data", "_log_softmax_backward_data"])
@pytest.mark.parametrize("dim", [0, 1])
def test_softmax_backward_kernel(name, dim):
    fn = getattr(mt.ops.aten, name).default
    y = (mt.log_softmax if name.startswith("_log") else mt.softmax)(Y, dim)
    assert_same(fn(G.cuda(), y.cuda(), dim, G.dtype), fn(G, y, dim, G.dtype))
    out = fn(G.t().cuda(), y.t().cuda(), dim, G.dtype)
    assert_same(out, fn(G.t(), y.t(), dim, G.dtype))
    assert out.is_contiguous()


def test_cross_entropy_backward_on_cuda():
    grads = []
    for x in (G.clone().requires_grad_(), G.cuda().requires_grad_()):
        target = mt.tensor([2, 0]).to(x.device)
        mt.nn.functional.cross_entropy(x * 1.5, target).backward()
        grads.append(x.grad)
    assert_same(grads[1], grads[0])
