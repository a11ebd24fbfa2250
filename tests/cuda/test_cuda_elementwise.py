"""Elementwise kernels (elementwise.py, pointwise_ops.py) against the cpu backend."""

import pytest

import minitorch_nn as mt
from tests.cuda._helpers import assert_same

X = mt.tensor([[0.5, -1.25, 2.0], [3.5, -0.75, 1.5]])
Y = mt.tensor([[1.5, 2.0, -0.5], [0.25, 4.0, -3.0]])
ROW = mt.tensor([2.0, -1.0, 0.5])

BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "atan2", "eq", "ne", "lt", "le", "gt", "ge",
          "logical_and", "logical_or", "logical_xor"]
UNARY = ["neg", "abs", "exp", "exp2", "expm1", "sin", "cos", "tan", "atan", "sinh", "cosh", "tanh", "sigmoid",
         "erf", "erfc", "floor", "ceil", "trunc", "relu", "sign", "reciprocal", "logical_not", "isnan"]
POSITIVE = ["log", "log2", "log10", "log1p", "sqrt", "rsqrt"]


@pytest.mark.parametrize("name", BINARY)
def test_binary_with_broadcasting(name):
    fn = getattr(mt, name)
    assert_same(fn(X.cuda(), ROW.cuda()), fn(X, ROW))


@pytest.mark.parametrize("name", UNARY)
def test_unary(name):
    fn = getattr(mt, name)
    assert_same(fn(X.cuda()), fn(X))


@pytest.mark.parametrize("name", POSITIVE)
def test_unary_on_its_domain(name):
    fn = getattr(mt, name)
    assert_same(fn(X.abs().cuda() + 0.1), fn(X.abs() + 0.1))


def test_strided_operands_use_their_strides():
    a = mt.arange(24.0).reshape(2, 3, 4)
    b = mt.arange(12.0).reshape(4, 3)
    got = a.cuda()[:, ::2, 1:].transpose(1, 2) * b.cuda().t()[:, 1:3]
    assert_same(got, a[:, ::2, 1:].transpose(1, 2) * b.t()[:, 1:3])


def test_scalars_and_promotion():
    i = mt.tensor([[1, 2, 3], [4, 5, 6]])
    assert_same(i.cuda() + 1, i + 1)          # int64
    assert_same(i.cuda() * 0.5, i * 0.5)      # -> float32
    assert_same(i.cuda() / 4, i / 4)          # true division -> float32
    assert_same(X.cuda() + i.cuda(), X + i)   # float32 + int64 -> float32
    assert_same(X.double().cuda() - X.cuda(), X.double() - X)
    assert_same(X.cuda() ** 2, X ** 2)
    assert_same(X.abs().cuda() ** 0.5, X.abs() ** 0.5)
    assert_same(X.cuda() + mt.tensor(2.0), X + mt.tensor(2.0))  # a 0-d cpu tensor is a scalar


@pytest.mark.parametrize("dtype", [mt.float16, mt.bfloat16])
def test_16_bit_floats_compute_in_float32(dtype):
    a, b = X.to(dtype), Y.to(dtype)
    assert_same(a.cuda() * b.cuda(), a * b, rtol=1e-2)
    assert_same(mt.exp(a.cuda()), mt.exp(a), rtol=1e-2)


def test_where_clamp_threshold_backward():
    c = X > 0
    assert_same(mt.where(c.cuda(), X.cuda(), Y.cuda()), mt.where(c, X, Y))
    assert_same(mt.where(c.cuda(), X.cuda(), 0.0), mt.where(c, X, 0.0))
    assert_same(X.cuda().clamp(-1.0, 2.0), X.clamp(-1.0, 2.0))
    assert_same(X.cuda().clamp(min=0.0), X.clamp(min=0.0))  # one bound: host path
    g = mt.ops.aten.threshold_backward.default
    assert_same(g(Y.cuda(), X.cuda(), 0), g(Y, X, 0))


def test_inplace_writes_into_views():
    base = mt.zeros(3, 4)
    cu = base.cuda()
    v_cpu, v_cu = base[:, 1::2], cu[:, 1::2]
    v_cpu.add_(mt.tensor([1.0, 2.0]))
    v_cu.add_(mt.tensor([1.0, 2.0]).cuda())
    v_cpu.mul_(3)
    v_cu.mul_(3)
    assert_same(cu, base)
    assert cu._version == v_cu._version > 0


def test_inplace_cast_check():
    i = mt.tensor([1, 2]).cuda()
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        i.mul_(0.5)


def test_alpha_and_bool_take_the_host_path():
    assert_same(mt.add(X.cuda(), Y.cuda(), alpha=2), mt.add(X, Y, alpha=2))
    b = X > 0
    assert_same(b.cuda() + b.cuda(), b + b)
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with two bool tensors"):
        b.cuda() - b.cuda()


def test_nan_propagates_in_maximum_and_relu():
    n = mt.tensor([float("nan"), 1.0, -2.0])
    assert_same(mt.maximum(n.cuda(), mt.zeros(3).cuda()), mt.maximum(n, mt.zeros(3)))
    assert_same(mt.relu(n.cuda()), mt.relu(n))


def test_domain_edges_give_ieee_results_like_cpu():
    x = mt.tensor([0.0, -1.0, 2.0, 800.0])
    for name in ("log", "log2", "log10", "log1p", "sqrt", "rsqrt", "exp", "expm1"):
        fn = getattr(mt, name)
        assert_same(fn(x.cuda()), fn(x), rtol=1e-6)


def test_rounding_keeps_nan_and_infinities():
    x = mt.tensor([float("nan"), float("inf"), -float("inf"), 1e30, -2.5, 2.5])
    for name in ("floor", "ceil", "trunc"):
        fn = getattr(mt, name)
        assert_same(fn(x.cuda()), fn(x))
