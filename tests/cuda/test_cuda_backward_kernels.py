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
