"""matmul.py's dot/mv/outer/addmm_/baddbmm and random.py's other distributions on cuda."""

import numpy as np
import pytest

import minitorch_nn as mt
from tests.cuda._helpers import assert_same, on_gpu_only
from tests.cuda._helpers import grads_match as _grads_match


def test_vector_and_batched_products():
    a, b, m = mt.randn(4), mt.randn(4), mt.randn(3, 4)
    b1, b2, c = mt.randn(2, 3, 4), mt.randn(2, 4, 5), mt.randn(2, 3, 5)
    with on_gpu_only():
        got = (mt.dot(a.cuda(), b.cuda()), mt.mv(m.cuda(), a.cuda()), mt.outer(a.cuda(), b.cuda()),
               mt.baddbmm(c.cuda(), b1.cuda(), b2.cuda(), beta=0.5, alpha=2.0))
    assert_same(got, (mt.dot(a, b), mt.mv(m, a), mt.outer(a, b), mt.baddbmm(c, b1, b2, beta=0.5, alpha=2.0)), atol=1e-5)
    s, w = mt.randn(3, 3), mt.randn(4, 3)
    addmm_ = mt.ops.aten.addmm_.default
    assert_same(addmm_(s.cuda(), m.cuda(), w.cuda(), beta=2.0), addmm_(s.clone(), m, w, beta=2.0), atol=1e-5)
    _grads_match(lambda x, y: mt.dot(x, y) * mt.outer(x, y), a, b)
    with pytest.raises(RuntimeError, match="1D tensors expected"):
        mt.dot(m.cuda(), a.cuda())


def _sample(fn, n=400):
    with on_gpu_only():
        t = fn(n)
    assert t.is_cuda
    return t.cpu().numpy()


def test_exponential_moments():
    e = _sample(lambda n: mt.empty(n, device="cuda").exponential_(2.0))
    assert e.min() > 0 and abs(e.mean() - 0.5) < 0.1


def test_bernoulli_with_tensor_and_float_probabilities():
    p = mt.full((200,), 0.3, device="cuda")
    for b in (_sample(lambda n: mt.ops.aten.bernoulli.default(p)), _sample(lambda n: mt.empty(n, device="cuda").bernoulli_(p), 200),
              _sample(lambda n: mt.ops.aten.bernoulli.p(mt.empty(n, device="cuda"), 0.3), 200)):
        assert set(np.unique(b)) <= {0.0, 1.0} and abs(b.mean() - 0.3) < 0.12


def test_random_integers_cover_their_range():
    r = _sample(lambda n: mt.randint(-3, 4, (n,), device="cuda"))
    assert r.dtype == np.int64 and set(np.unique(r)) == set(range(-3, 4))
    r = _sample(lambda n: mt.empty(n, device="cuda", dtype=mt.int32).random_(5, 9))
    assert set(np.unique(r)) == {5, 6, 7, 8}
    r = _sample(lambda n: mt.empty(n, device="cuda", dtype=mt.uint8).random_())
    assert r.min() >= 0 and r.max() <= 255 and len(np.unique(r)) > 150


def test_randperm_is_a_permutation_and_seeded():
    mt.cuda.manual_seed(3)
    a = mt.randperm(50, device="cuda")
    mt.cuda.manual_seed(3)
    b = mt.randperm(50, device="cuda")
    assert sorted(a.cpu().tolist()) == list(range(50))
    assert a.cpu().tolist() == b.cpu().tolist() and a.cpu().tolist() != list(range(50))
    with pytest.raises(RuntimeError, match="p_in >= 0"):
        mt.ops.aten.bernoulli.default(mt.full((3,), 1.5, device="cuda"))


@pytest.mark.parametrize("replacement", [False, True])
def test_multinomial(replacement):
    p = mt.tensor([[0.0, 1.0, 3.0, 0.0, 4.0], [2.0, 0.0, 0.0, 1.0, 1.0]])
    with on_gpu_only():
        s = mt.multinomial(p.cuda(), 3, replacement=replacement)
        one = mt.multinomial(p[0].cuda(), 1)
    s = s.cpu().numpy()
    assert s.shape == (2, 3) and one.shape == (1,) and one.item() in (1, 2, 4)
    for row, sample in zip(p.numpy(), s):
        assert (row[sample] > 0).all()  # zero-probability categories are never drawn
        if not replacement:
            assert len(set(sample)) == 3
    many = mt.multinomial(mt.tensor([1.0, 3.0]).cuda(), 300, replacement=True).cpu().numpy()
    assert abs(many.mean() - 0.75) < 0.1
    with pytest.raises(RuntimeError, match="probability"):
        mt.multinomial(mt.tensor([-1.0, 2.0]).cuda(), 1)
