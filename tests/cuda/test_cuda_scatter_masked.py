"""losses.py, scatter.py, masked.py and advanced indexing on cuda against the cpu backend."""

import pytest

import minitorch_nn as mt
import minitorch_nn.nn.functional as F
from tests.cuda._helpers import assert_same, on_gpu_only
from tests.cuda._helpers import grads_match as _grads_match


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_l1_and_bce_losses_with_gradients(reduction):
    x, y = mt.randn(2, 3), mt.rand(2, 3)
    _grads_match(lambda a: F.l1_loss(a, y.to(a.device), reduction=reduction), x)
    _grads_match(lambda a: F.binary_cross_entropy(a, y.to(a.device), reduction=reduction), mt.rand(2, 3) * 0.9 + 0.05)
    w, pw = mt.rand(3), mt.rand(3) + 0.5
    _grads_match(lambda a: F.binary_cross_entropy_with_logits(a, y.to(a.device), w.to(a.device),
                                                              pos_weight=pw.to(a.device), reduction=reduction), x)


def test_bce_edges_and_errors():
    x, y = mt.tensor([0.0, 1.0, 0.5]), mt.tensor([1.0, 0.0, 1.0])
    assert_same(F.binary_cross_entropy(x.cuda(), y.cuda(), reduction="none"), F.binary_cross_entropy(x, y, reduction="none"))
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        F.binary_cross_entropy(mt.tensor([1.5]).cuda(), mt.tensor([1.0]).cuda())
    big = mt.tensor([-200.0, 200.0, 0.0])
    assert_same(F.binary_cross_entropy_with_logits(big.cuda(), y.cuda(), reduction="none"),
                F.binary_cross_entropy_with_logits(big, y, reduction="none"))


def test_scatter_and_scatter_add():
    x, src = mt.randn(3, 4), mt.randn(2, 4)
    idx = mt.tensor([[0, 1, 2, 0], [2, 0, 1, 1]])
    for dim in (0,):
        assert_same(x.cuda().scatter(dim, idx.cuda(), src.cuda()), x.scatter(dim, idx, src))
        assert_same(x.cuda().scatter_add(dim, idx.cuda(), src.cuda()), x.scatter_add(dim, idx, src))
    dup = mt.tensor([[0, 0, 0, 0], [0, 0, 0, 0]])  # repeated indices: the atomic adds must all land
    assert_same(x.cuda().scatter_add(0, dup.cuda(), src.cuda()), x.scatter_add(0, dup, src), atol=1e-5)
    assert_same(x.cuda().scatter(1, idx[:, :2].cuda() + 1, 7.0), x.scatter(1, idx[:, :2] + 1, 7.0))
    y = x.cuda()
    y.scatter_add_(1, idx.cuda(), src.cuda())
    assert_same(y, x.clone().scatter_add_(1, idx, src), atol=1e-5)
    with pytest.raises((IndexError, RuntimeError)):
        x.cuda().scatter_add(0, (idx + 5).cuda(), src.cuda())


def test_index_add_and_gradient_of_gather():
    x, src = mt.randn(4, 3), mt.randn(3, 3)
    idx = mt.tensor([3, 0, 3])
    assert_same(x.cuda().index_add(0, idx.cuda(), src.cuda(), alpha=2.0), x.index_add(0, idx, src, alpha=2.0), atol=1e-5)
    y = mt.ones(2, 4, dtype=mt.int64)
    add_ = mt.ops.aten.index_add_.default
    assert_same(add_(y.cuda(), 1, mt.tensor([1, 1]).cuda(), mt.ones(2, 2, dtype=mt.int64).cuda()),
                add_(y.clone(), 1, mt.tensor([1, 1]), mt.ones(2, 2, dtype=mt.int64)))
    g = mt.tensor([[0, 0], [2, 1], [1, 1], [0, 2]])
    _grads_match(lambda t: t.gather(1, g.to(t.device)), x)  # its backward is a scatter_add


@pytest.mark.parametrize("padding_idx", [None, 1])
def test_embedding_backward(padding_idx):
    w = mt.randn(5, 3)
    idx = mt.tensor([[1, 4, 1], [0, 1, 2]])
    _grads_match(lambda t: F.embedding(idx.to(t.device), t, padding_idx=padding_idx), w)
    _grads_match(lambda t: F.embedding(idx.to(t.device), t, scale_grad_by_freq=True), w)


def test_advanced_indexing_get_and_put():
    x = mt.randn(4, 3, 2)
    i, j = mt.tensor([[0, 3], [1, 1]]), mt.tensor([2, -1])
    for key in ((i,), (i, j), (slice(None), j), (slice(None), j, mt.tensor([1]))):
        kc = tuple(k.cuda() if isinstance(k, mt.Tensor) else k for k in key)
        assert_same(x.cuda()[kc], x[key])
    v = mt.randn(2)
    a, b = x.cuda(), x.clone()
    a[mt.tensor([0, 2]).cuda(), mt.tensor([1, 0]).cuda()] = v.cuda()[:, None]
    b[mt.tensor([0, 2]), mt.tensor([1, 0])] = v[:, None]
    assert_same(a, b)
    acc = mt.tensor([1, 1, 3])
    put = mt.ops.aten.index_put.default
    assert_same(put(x.cuda(), [acc.cuda()], mt.ones(3, 3, 2).cuda(), True), put(x, [acc], mt.ones(3, 3, 2), True),
                atol=1e-6)
    _grads_match(lambda t: t[mt.tensor([0, 0, 2]).to(t.device)], x)  # index's backward: index_put accumulate
    with pytest.raises(IndexError, match="out of bounds"):
        x.cuda()[mt.tensor([4]).cuda()]


def test_masked_fill_select_and_nonzero():
    x = mt.randn(3, 50)  # more than one chunk per row
    m = x > 0.3
    assert_same(x.cuda().masked_fill(m.cuda(), -1.5), x.masked_fill(m, -1.5))
    assert_same(x.cuda().masked_fill(m.cuda(), mt.tensor(2.0)), x.masked_fill(m, mt.tensor(2.0)))
    y = x.cuda()
    y.masked_fill_(m.cuda()[0], 0.0)  # a broadcast mask
    assert_same(y, x.clone().masked_fill_(m[0], 0.0))
    assert_same(x.cuda().masked_select(m.cuda()), x.masked_select(m))
    assert_same(x.cuda().masked_select(m.cuda()[1]), x.masked_select(m[1]))
    assert_same(mt.nonzero(m.cuda()), mt.nonzero(m))
    assert_same(mt.nonzero(mt.zeros(2, 3).cuda()), mt.nonzero(mt.zeros(2, 3)))
    assert_same(x.cuda()[m.cuda()], x[m])
    with pytest.raises(RuntimeError, match="boolean masks"):
        x.cuda().masked_fill(m.int().cuda(), 1.0)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_with_class_weights_runs_in_kernels(reduction):
    w, t = mt.rand(4) + 0.5, mt.tensor([0, 3, -100, 1])
    with on_gpu_only():
        _grads_match(lambda x: F.cross_entropy(x, t.to(x.device), weight=w.to(x.device), reduction=reduction) * 1.0,
                     mt.randn(4, 4))
