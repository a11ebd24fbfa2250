"""shape_ops.py and factories.py on cuda against the cpu backend."""

import pytest

import minitorch_nn as mt
import minitorch_nn.nn.functional as F
from tests.cuda._helpers import assert_same, on_gpu_only
from tests.cuda._helpers import grads_match as _grads_match

X = mt.randn(2, 3, 4)


@pytest.mark.parametrize("fn", [
    lambda t: t.flip([0, 2]), lambda t: t.flip([-1]), lambda t: t.roll(1), lambda t: t.roll(-2, 2),
    lambda t: t.roll((1, 5), (0, 1)), lambda t: t.repeat(2, 1, 3), lambda t: t.repeat(2, 1, 1, 2),
    lambda t: F.pad(t, (1, 2)), lambda t: F.pad(t, (1, 0, -1, 2), value=3.5), lambda t: F.pad(t, (0, 0, 0, 0, 2, 1)),
    lambda t: t.tril(), lambda t: t.triu(1), lambda t: t.tril(-1), lambda t: mt.diag_embed(t),
    lambda t: mt.diag_embed(t, 1), lambda t: mt.diag_embed(t, -2),
])
def test_shape_ops(fn):
    with on_gpu_only():
        got = fn(X.cuda())
    assert_same(got, fn(X))
    assert_same(fn(X.transpose(0, 2).cuda()), fn(X.transpose(0, 2)))  # strided input


def test_shape_ops_gradients_and_other_dtypes():
    _grads_match(lambda t: F.pad(t.flip([1]).roll(1, 0), (1, 1)).repeat(1, 2).tril(), mt.randn(3, 4))
    i = mt.tensor([[1, 2, 3], [4, 5, 6]])
    assert_same(i.cuda().flip([1]).triu(), i.flip([1]).triu())
    assert_same(F.pad(X.bfloat16().cuda(), (1, 1), value=2.0), F.pad(X.bfloat16(), (1, 1), value=2.0))
    assert_same(mt.tril(mt.full((2, 2), float("nan")).cuda()), mt.tril(mt.full((2, 2), float("nan"))))


@pytest.mark.parametrize("fn", [
    lambda **k: mt.arange(7, **k), lambda **k: mt.arange(1, 4.5, 0.5, **k), lambda **k: mt.arange(10, 0, -3, **k),
    lambda **k: mt.arange(0, 2.3, 0.3, dtype=mt.int32, **k), lambda **k: mt.linspace(-1, 2, 7, **k),
    lambda **k: mt.linspace(0, 10, 4, dtype=mt.int64, **k), lambda **k: mt.linspace(3, 3, 1, **k),
    lambda **k: mt.eye(3, **k), lambda **k: mt.eye(2, 4, dtype=mt.int64, **k), lambda **k: mt.full((2, 3), 1.5, **k),
    lambda **k: mt.full((2,), 7, **k), lambda **k: mt.scalar_tensor(2.5, **k), lambda **k: mt.eye(2, dtype=mt.bfloat16, **k),
])
def test_factories(fn):
    with on_gpu_only():
        got = fn(device="cuda")
    assert_same(got, fn(), rtol=1e-6, atol=1e-6)


def test_empty_strided_and_fill_tensor():
    t = mt.empty_strided((2, 3), (1, 2), device="cuda")
    assert t.is_cuda and t.stride() == (1, 2)
    t.fill_(mt.tensor(4.0).cuda())
    assert_same(t, mt.full((2, 3), 4.0))
    with pytest.raises(RuntimeError, match="0-dimension"):
        t.fill_(mt.ones(2).cuda())
    with pytest.raises(RuntimeError, match="step"):
        mt.arange(0, 1, 0, device="cuda")


def test_zero_dim_tensor_keeps_its_shape_on_the_way_to_cuda():
    assert mt.tensor(4.0).cuda().shape == ()
    assert mt.tensor(4.0).cuda().cpu().shape == ()
