"""random.py (Philox fills) and the host path (fallback.py) for ops without a CUDA kernel yet."""

import numpy as np
import pytest

import minitorch_nn as mt
from minitorch_nn.backends.cuda import host_ops
from tests.cuda._helpers import assert_same


def test_cuda_manual_seed_makes_fills_reproducible():
    mt.cuda.manual_seed(123)
    a = mt.rand(40, device="cuda")
    b = mt.randn(40, device="cuda")
    mt.cuda.manual_seed(123)
    assert mt.equal(mt.rand(40, device="cuda").cpu(), a.cpu())
    assert mt.equal(mt.randn(40, device="cuda").cpu(), b.cpu())
    assert not mt.equal(mt.rand(40, device="cuda").cpu(), a.cpu())  # each call moves the counter on


def test_fills_have_the_right_distribution():
    mt.cuda.manual_seed(0)
    u = mt.empty(1000, device="cuda").uniform_(2.0, 4.0).cpu().numpy()
    assert u.min() >= 2.0 and u.max() < 4.0 and abs(u.mean() - 3.0) < 0.1
    n = mt.empty(1000, device="cuda").normal_(1.0, 2.0).cpu().numpy()
    assert abs(n.mean() - 1.0) < 0.25 and abs(n.std() - 2.0) < 0.25
    b = mt.empty(1000, device="cuda").bernoulli_(0.25).cpu().numpy()
    assert set(np.unique(b)) <= {0.0, 1.0} and abs(b.mean() - 0.25) < 0.06
    r = mt.randn_like(mt.zeros(2, 3, device="cuda", dtype=mt.float16))
    assert r.is_cuda and r.dtype == mt.float16


def test_the_host_path_covers_the_remaining_ops():
    names = {op.__name__ for op in host_ops()}
    assert "linalg_qr.default" in names and "add.Tensor" not in names and "gather.default" not in names
    x = mt.randn(3, 4)
    idx = mt.tensor([[0, 2], [1, 1], [3, 0]])
    assert_same(x.cuda().gather(1, idx.cuda()), x.gather(1, idx))
    assert_same(mt.cat([x.cuda(), x.cuda()], 1), mt.cat([x, x], 1))
    assert_same(x.cuda()[idx.cuda()[:, 1]], x[idx[:, 1]])
    assert_same(x.cuda()[:, mt.tensor([3, 1])], x[:, mt.tensor([3, 1])])  # cpu indices are allowed
    v, i = x.cuda().sort(1)
    assert_same((v, i), x.sort(1))


def test_host_path_writes_back_in_place_through_views():
    x = mt.zeros(3, 4)
    y = x.cuda()
    x[:, 1].index_put_((mt.tensor([0, 2]),), mt.tensor([5.0, 6.0]))
    y[:, 1].index_put_((mt.tensor([0, 2]).cuda(),), mt.tensor([5.0, 6.0]).cuda())
    assert_same(y, x)


def test_host_path_keeps_cpu_errors():
    x, bad = mt.randn(2, 3), mt.tensor([[5]])
    with pytest.raises(Exception) as on_cpu:
        x.gather(1, bad)
    with pytest.raises(type(on_cpu.value), match=str(on_cpu.value)[:20]):
        x.cuda().gather(1, bad.cuda())


def test_every_registry_op_has_a_cuda_kernel():
    from minitorch_nn._ops import all_ops

    missing = [op.__name__ for op in all_ops() if "cuda" not in op._kernels and "any" not in op._kernels]
    # these three re-point a tensor at other storage/metadata; a host copy cannot stand in for them
    assert set(missing) <= {"resize_.default", "set_.source_Tensor", "as_strided_.default"}, missing


def test_gather_index_select_embedding_kernels():
    x = mt.randn(3, 4)
    idx = mt.tensor([[0, 2], [1, 1], [3, 0]])
    assert_same(x.cuda().gather(1, idx.cuda()), x.gather(1, idx))
    assert_same(x.cuda().t().gather(0, idx.t().cuda()), x.t().gather(0, idx.t()))  # strided input and index
    assert_same(x.cuda().index_select(1, mt.tensor([3, 0, 0]).cuda()), x.index_select(1, mt.tensor([3, 0, 0])))
    w = mt.randn(5, 3, requires_grad=True)
    wc = w.detach().cuda().requires_grad_()
    i = mt.tensor([[1, 4], [0, 1]])
    assert_same(mt.nn.functional.embedding(i.cuda(), wc).detach(), mt.nn.functional.embedding(i, w).detach())
    mt.nn.functional.embedding(i.cuda(), wc).sum().backward()
    mt.nn.functional.embedding(i, w).sum().backward()
    assert_same(wc.grad, w.grad)
    with pytest.raises(IndexError, match="index out of range in self"):
        x.cuda().index_select(0, mt.tensor([7]).cuda())


def test_cat_and_stack_on_the_device():
    a, b = mt.randn(2, 3), mt.randn(2, 5)
    assert_same(mt.cat([a.cuda(), b.cuda()], 1), mt.cat([a, b], 1))
    assert_same(mt.cat([a.cuda(), a.int().cuda()], 0), mt.cat([a, a.int()], 0))  # promotes
    assert_same(mt.stack([a.cuda().t(), a.cuda().t() * 2], 2), mt.stack([a.t(), a.t() * 2], 2))
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 0"):
        mt.cat([a.cuda(), b.cuda()], 0)


def test_dropout_on_the_device():
    mt.cuda.manual_seed(1)
    x = mt.ones(400, device="cuda", requires_grad=True)
    y = mt.nn.functional.dropout(x, 0.25)
    vals = y.detach().cpu()
    assert set(vals.tolist()) <= {0.0, float(mt.tensor(4.0 / 3.0))}
    assert abs((vals == 0).float().mean().item() - 0.25) < 0.08
    y.sum().backward()
    assert mt.equal(x.grad.cpu(), vals)  # the gradient flows through the kept elements, scaled
    assert mt.equal(mt.nn.functional.dropout(x, 0.25, training=False).detach().cpu(), mt.ones(400))
