"""softmax.py, the nn ops an MLP needs, autograd on cuda, and one training step against cpu."""

import pytest

import minitorch_nn as mt
import minitorch_nn.nn.functional as F
from tests.cuda._helpers import assert_same

X = mt.randn(3, 5)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_and_log_softmax(dim):
    assert_same(mt.softmax(X.cuda(), dim), mt.softmax(X, dim), atol=1e-6)
    assert_same(mt.log_softmax(X.cuda(), dim), mt.log_softmax(X, dim), atol=1e-5)


def test_softmax_3d_middle_dim_and_half():
    x = mt.randn(2, 3, 4)
    assert_same(F.softmax(x.cuda(), 1), F.softmax(x, 1), atol=1e-6)
    assert_same(F.log_softmax(x.half().cuda(), 2), F.log_softmax(x.half(), 2), rtol=1e-2, atol=1e-2)


def test_softmax_large_values_do_not_overflow():
    x = mt.tensor([[1000.0, 1001.0, 999.0]])
    assert_same(mt.softmax(x.cuda(), 1), mt.softmax(x, 1))


def test_losses():
    t = mt.tensor([1, 0, 4])
    assert_same(F.cross_entropy(X.cuda(), t.cuda()), F.cross_entropy(X, t), atol=1e-6)
    assert_same(F.nll_loss(F.log_softmax(X.cuda(), 1), t.cuda()), F.nll_loss(F.log_softmax(X, 1), t), atol=1e-6)
    y = mt.randn(3, 5)
    for red in ("mean", "sum", "none"):
        assert_same(F.mse_loss(X.cuda(), y.cuda(), reduction=red), F.mse_loss(X, y, reduction=red), atol=1e-5)


def test_autograd_on_cuda_matches_cpu():
    w = mt.randn(5, 2)
    wc = w.cuda().requires_grad_()
    wp = w.clone().requires_grad_()
    for x, ww in ((X.cuda(), wc), (X, wp)):
        (x @ ww).relu().sigmoid().sum().backward()
    assert wc.grad.is_cuda
    assert_same(wc.grad, wp.grad, atol=1e-6)


def _mlp_step(device):
    mt.manual_seed(0)
    model = mt.nn.Sequential(mt.nn.Linear(4, 8), mt.nn.ReLU(), mt.nn.Linear(8, 3))
    x, target = mt.randn(6, 4), mt.tensor([0, 2, 1, 1, 0, 2])
    model.to(device)
    opt = mt.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for _ in range(2):
        opt.zero_grad()
        loss = F.cross_entropy(model(x.to(device)), target.to(device))
        loss.backward()
        opt.step()
        losses.append(loss)
    return losses, list(model.parameters())


def test_mlp_training_steps_match_cpu():
    cpu_losses, cpu_params = _mlp_step("cpu")
    cu_losses, cu_params = _mlp_step("cuda")
    for a, b in zip(cu_losses, cpu_losses):
        assert_same(a.detach(), b.detach(), atol=1e-5)
    for p, q in zip(cu_params, cpu_params):
        assert p.is_cuda
        assert_same(p.detach(), q.detach(), atol=1e-5)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_kernels_and_gradient(reduction):
    t = mt.tensor([1, -100, 4])  # -100: the default ignore_index
    xc, xp = X.cuda().requires_grad_(), X.clone().requires_grad_()
    a = F.cross_entropy(xc, t.cuda(), reduction=reduction)
    b = F.cross_entropy(xp, t, reduction=reduction)
    assert_same(a.detach(), b.detach(), atol=1e-6)
    a.sum().backward()
    b.sum().backward()
    assert_same(xc.grad, xp.grad, atol=1e-6)


def test_nll_loss_errors_and_weights_match_cpu():
    with pytest.raises(IndexError, match="Target 9 is out of bounds."):
        F.nll_loss(X.cuda(), mt.tensor([9, 0, 0]).cuda())
    w = mt.tensor([1.0, 2.0, 0.5, 1.0, 3.0])
    t = mt.tensor([1, 2, 4])
    assert_same(F.cross_entropy(X.cuda(), t.cuda(), weight=w.cuda()), F.cross_entropy(X, t, weight=w), atol=1e-6)


def test_adam_steps_match_cpu():
    m = mt.nn.Linear(3, 2)
    mc = mt.nn.Linear(3, 2)
    mc.load_state_dict(m.state_dict())
    mc.cuda()
    opt, optc = mt.optim.Adam(m.parameters(), lr=0.1), mt.optim.Adam(mc.parameters(), lr=0.1)
    x = mt.randn(4, 3)
    for _ in range(2):
        for model, o, dev in ((m, opt, "cpu"), (mc, optc, "cuda")):
            o.zero_grad()
            model(x.to(dev)).pow(2).mean().backward()
            o.step()
    assert_same(mc.weight.detach(), m.weight.detach(), atol=1e-6)
    assert_same(mc.bias.detach(), m.bias.detach(), atol=1e-6)


def test_addc_and_lerp_kernels():
    a, b, c = mt.randn(3, 4), mt.randn(3, 4), mt.rand(3, 4) + 0.5
    assert_same(mt.addcmul(a.cuda(), b.cuda(), c.cuda(), value=-0.3), mt.addcmul(a, b, c, value=-0.3), atol=1e-6)
    assert_same(mt.addcdiv(a.cuda(), b.cuda(), c.cuda(), value=2), mt.addcdiv(a, b, c, value=2), atol=1e-6)
    assert_same(mt.lerp(a.cuda(), b.cuda(), 0.25), mt.lerp(a, b, 0.25), atol=1e-6)
    assert_same(mt.lerp(a.cuda(), b.cuda(), c.cuda()), mt.lerp(a, b, c), atol=1e-6)
