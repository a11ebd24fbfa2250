"""arg_reduction.py and statistics.py on cuda against the cpu backend."""

import pytest

import minitorch_nn as mt
from tests.cuda._helpers import assert_same, on_gpu_only
from tests.cuda._helpers import grads_match as _grads_match

NAN, INF = float("nan"), float("inf")
X = mt.tensor([[3.0, 1.0, 3.0, -2.0, 0.5], [1.0, NAN, 4.0, NAN, -1.0], [-INF, -INF, 2.0, 2.0, 0.0]])


def _same(fn, x, **kw):
    with on_gpu_only():
        got = fn(x.cuda())
    assert_same(got, fn(x), **kw)


@pytest.mark.parametrize("fn", [
    lambda t: t.argmax(), lambda t: t.argmin(1), lambda t: t.argmax(0, keepdim=True), lambda t: t.max(1),
    lambda t: t.min(0, keepdim=True), lambda t: t.argmax(None, keepdim=True),
])
def test_arg_reductions_first_extremum_and_nan(fn):
    _same(fn, X)
    _same(fn, mt.randint(0, 3, (3, 5)))


def test_max_dim_gradient_and_half():
    _grads_match(lambda t: t.max(1)[0], mt.randn(3, 4))
    _same(lambda t: t.min(1), mt.randn(2, 5).half())


@pytest.mark.parametrize("fn", [
    lambda t: t.prod(), lambda t: t.prod(1), lambda t: t.prod(0, keepdim=True), lambda t: t.var(),
    lambda t: t.var(1), lambda t: t.std(0, keepdim=True), lambda t: mt.var_mean(t, 1),
    lambda t: mt.std_mean(t, [0, 1], correction=0), lambda t: t.logsumexp(1), lambda t: t.logsumexp([0, 1], keepdim=True),
    lambda t: mt.linalg.vector_norm(t), lambda t: mt.linalg.vector_norm(t, 1, 1), lambda t: mt.linalg.vector_norm(t, INF, 0),
    lambda t: mt.linalg.vector_norm(t, -INF), lambda t: mt.linalg.vector_norm(t, 0, 1), lambda t: mt.linalg.vector_norm(t, 3.0),
])
def test_statistics(fn):
    _same(fn, mt.randn(3, 4), rtol=1e-5, atol=1e-5)


def test_logsumexp_with_infinities():
    _same(lambda t: t.logsumexp(1), mt.tensor([[-INF, -INF], [INF, 1.0], [0.0, 1000.0]]))


@pytest.mark.parametrize("t", [[[1, 0, 2], [3, 4, 5]], [[0.0, NAN], [0.0, 0.0]], [[True, False]]])
def test_all_any(t):
    t = mt.tensor(t)
    for fn in (mt.all, mt.any, lambda x: x.all(1), lambda x: x.any(0, keepdim=True)):
        _same(fn, t)
    _same(mt.any, t.to(mt.uint8))  # uint8 stays uint8


def test_statistics_gradients():
    _grads_match(lambda t: t.var(1) + t.std(1) + t.logsumexp(1) + mt.linalg.vector_norm(t, dim=1) + t.prod(1),
                 mt.randn(2, 3), atol=1e-4)
