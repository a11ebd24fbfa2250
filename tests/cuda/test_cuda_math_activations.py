"""activations.py and math_ops.py: each op on cuda equals the cpu backend, edge values included."""

import pytest

import minitorch_nn as mt
import minitorch_nn.nn.functional as F
from tests.cuda._helpers import assert_same, on_gpu_only
from tests.cuda._helpers import grads_match as _grads_match

# the simulator runs device functions on numpy scalars, which warn on inf * 0 where a GPU quietly
# gives NaN (as the cpu backend's numpy does with its warnings silenced)
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

INF, NAN = float("inf"), float("nan")
X = mt.tensor([-3.5, -2.5, -1.0, -0.5, 0.0, 0.5, 1.5, 2.5, 7.25, 30.0, INF, -INF, NAN])
Y = mt.tensor([2.0, -2.0, 0.0, 3.0, -1.5, 0.0, 2.0, -0.75, 4.0, -3.0, 2.0, INF, 1.0])
I = mt.tensor([-7, -6, -1, 0, 1, 5, 9, 12])
J = mt.tensor([2, -4, 3, 5, -2, 3, -4, 5])


def _same(fn, *args, **kw):
    with on_gpu_only():
        got = fn(*[a.cuda() if isinstance(a, mt.Tensor) else a for a in args])
    assert_same(got, fn(*args), **kw)


@pytest.mark.parametrize("fn", [
    lambda x: F.elu(x, 0.7), F.gelu, lambda x: F.gelu(x, approximate="tanh"), lambda x: F.softplus(x, 2.0, 5.0),
    lambda x: F.leaky_relu(x, 0.2), F.hardtanh, lambda x: x.clamp(min=-1.0), lambda x: x.clamp(max=0.5),
    lambda x: x.clamp(mt.tensor(-1.0).to(x.device), mt.tensor(2.0).to(x.device)), mt.frac, mt.round,
    lambda x: mt.round(x, decimals=1), mt.isinf, mt.isfinite, mt.nan_to_num, lambda x: mt.nan_to_num(x, 1.0, 2.0, -2.0),
])
def test_float_unary(fn):
    _same(fn, X, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fn", [
    mt.remainder, mt.fmod, mt.floor_divide, lambda x, y: mt.div(x, y, rounding_mode="trunc"),
    lambda x, y: mt.div(x, y, rounding_mode="floor"), mt.pow, lambda x, y: mt.rsub(x, y),
])
def test_float_binary_and_integer_versions(fn):
    _same(fn, X, Y, rtol=1e-5, atol=1e-6)
    if fn is not mt.pow:
        _same(fn, I, J)
        _same(fn, I, 3)


def test_erfinv_and_pow_scalar_base():
    x = mt.tensor([-1.0, -0.999, -0.5, 0.0, 0.3, 0.9, 0.99999, 1.0, 1.5])
    _same(mt.erfinv, x, rtol=1e-5, atol=1e-6)
    _same(mt.erfinv, x.double(), rtol=1e-12, atol=1e-12)
    _same(lambda t: mt.pow(2.0, t), X)


def test_bitwise_ops():
    a, b = mt.tensor([0, 5, -3, 12]), mt.tensor([3, 6, 7, -1])
    for fn in (mt.bitwise_and, mt.bitwise_or, mt.bitwise_xor):
        _same(fn, a, b)
        _same(fn, a > 0, b > 0)
    _same(mt.bitwise_not, a)
    _same(mt.bitwise_not, a > 0)


def test_integer_division_by_zero_raises_as_on_cpu():
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        mt.remainder(I, mt.zeros_like(I))
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        mt.remainder(I.cuda(), mt.zeros_like(I).cuda())


def test_inplace_variants_and_gradients():
    a, b = X.clone(), X.cuda()
    a.clamp_(-1, 1)
    b.clamp_(-1, 1)
    assert_same(b, a)
    _grads_match(lambda t: F.elu(t) + F.gelu(t) + F.softplus(t) + F.leaky_relu(t) + F.hardtanh(t), mt.randn(2, 3),
                 atol=1e-5)
    with pytest.raises(NotImplementedError):
        F.gelu(I.cuda())


def test_add_and_sub_with_alpha_run_in_one_kernel():
    a, b = mt.randn(2, 3), mt.randn(3)
    _same(lambda x, y: mt.add(x, y, alpha=-0.5), a, b, atol=1e-6)
    _same(lambda x, y: mt.sub(x, y, alpha=2), a, b, atol=1e-6)
    c = a.cuda()
    with on_gpu_only():
        c.add_(b.cuda(), alpha=0.25)
    assert_same(c, a.clone().add_(b, alpha=0.25), atol=1e-6)
    assert_same(mt.add(mt.tensor([1, 2]).cuda(), mt.tensor([3, 4]).cuda(), alpha=3),
                mt.add(mt.tensor([1, 2]), mt.tensor([3, 4]), alpha=3))  # integers: the host path
