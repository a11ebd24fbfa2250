"""binary_math.py: xlogy, hypot, copysign, fmax/fmin and the bit shifts on cuda equal the cpu backend."""

import pytest

import minitorch_nn as mt
from tests.cuda._helpers import assert_same, on_gpu_only
from tests.cuda._helpers import grads_match as _grads_match

# the simulator runs device functions on numpy scalars, which warn where a GPU quietly gives inf/NaN
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

INF, NAN = float("inf"), float("nan")
X = mt.tensor([0.0, 0.0, 1.5, -2.0, 3.0, 0.0, INF, NAN, -0.0, 2.0])
Y = mt.tensor([0.0, 2.0, 0.0, 3.0, -1.0, NAN, 2.0, 1.0, -0.0, -INF])


def _same(fn, *args, **kw):
    with on_gpu_only():
        got = fn(*[a.cuda() if isinstance(a, mt.Tensor) else a for a in args])
    assert_same(got, fn(*args), **kw)


@pytest.mark.parametrize("fn", [
    mt.xlogy, mt.hypot, mt.copysign, mt.fmax, mt.fmin, lambda x, y: mt.xlogy(x, 2.5), lambda x, y: mt.xlogy(0.5, y),
    lambda x, y: mt.copysign(x, -0.0), lambda x, y: mt.fmax(x.reshape(2, 5), y[:5]),
    lambda x, y: mt.float_power(x, y), lambda x, y: 7.5 % y, mt.fmod, lambda x, y: x.clone().fmod_(y),
])
def test_float_ops(fn):
    _same(fn, X, Y, rtol=1e-5, atol=1e-6)


def test_integer_and_mixed_dtypes():
    i, j = mt.tensor([0, 3, -2, 5]), mt.tensor([1, 0, -4, 5], dtype=mt.int8)
    for fn in (mt.xlogy, mt.copysign, mt.fmax, mt.fmin, lambda a, b: mt.fmax(a > 0, b > 0)):
        _same(fn, i, j, rtol=1e-5, atol=1e-6)
    _same(lambda a, b: mt.xlogy(a, b.double()), i, j, rtol=1e-12, atol=1e-12)
    _same(lambda a: 7 % a, j + 10)


@pytest.mark.parametrize("dtype", [mt.uint8, mt.int8, mt.int16, mt.int32, mt.int64])
def test_shifts_every_width(dtype):
    lo = 0 if dtype is mt.uint8 else -2
    amounts = mt.arange(lo, 67).to(dtype)
    for v in ([5, 200] if dtype is mt.uint8 else [5, -5]):
        x = mt.full(amounts.shape, v).to(dtype)
        _same(lambda a, b: a << b, x, amounts)
        _same(lambda a, b: a >> b, x, amounts)
        _same(lambda a: a << 3, x)
        _same(lambda a: 2 >> a, amounts)


def test_inplace_forms_and_host_errors():
    a, b = X.clone(), X.cuda()
    a.xlogy_(Y), b.xlogy_(Y.cuda())
    a.copysign_(-1), b.copysign_(-1)
    a.hypot_(Y), b.hypot_(Y.cuda())
    assert_same(b, a)
    i, j = mt.tensor([1, 2, 3], dtype=mt.int8), mt.tensor([1, 2, 3], dtype=mt.int8).cuda()
    i <<= 2
    j <<= 2
    i >>= mt.tensor([0, 1, 9])
    j >>= mt.tensor([0, 1, 9]).cuda()
    assert_same(j, i)
    with pytest.raises(NotImplementedError, match="hypot"):
        mt.hypot(mt.tensor([1, 2]).cuda(), mt.tensor([1, 2]).cuda())
    with pytest.raises(NotImplementedError, match="lshift"):
        mt.ones(2).cuda() << 1
    with pytest.raises(RuntimeError, match="can't be cast"):
        mt.tensor([1, 2]).cuda().xlogy_(2)


def test_gradients_match_cpu():
    _grads_match(lambda a, b: mt.xlogy(a, b.abs() + 0.5) + mt.hypot(a, b) + mt.copysign(a, b) + mt.fmax(a, b),
                 mt.randn(2, 3), mt.randn(2, 3))


def test_augmented_assignments_and_number_bit_ops():
    i = mt.tensor([5, -6, 7, 12])
    for fn in (lambda a: a & 6, lambda a: 6 | a, lambda a: 3 ^ a, lambda a: 7 % (a.abs() + 1)):
        _same(fn, i)
    for fn in (lambda a: a.__imod__(4), lambda a: a.__imod__(mt.tensor([3, 3, 3, 3]).to(a.device)),
               lambda a: a.__iand__(6), lambda a: a.__ixor__(a), lambda a: a.__ifloordiv__(2),
               lambda a: a.double().__ipow__(a.double())):
        x, y = i.clone(), i.cuda()
        with on_gpu_only():
            got = fn(y)
        assert_same(got, fn(x))
    b, c = mt.tensor([True, False, True]), mt.tensor([True, True, False])
    for fn in (lambda a, o: a.__iand__(o), lambda a, o: a.__ior__(o), lambda a, o: a.__ixor__(o)):
        x, y = b.clone(), b.cuda()
        with on_gpu_only():
            got = fn(y, c.cuda())
        assert_same(got, fn(x, c))
    with pytest.raises(NotImplementedError, match="bitwise_and"):
        mt.ones(2).cuda().__iand__(1)
    with pytest.raises(RuntimeError, match="can't be cast"):
        i.cuda().__iand__(2.5)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        i.cuda().__ifloordiv__(0)


def test_logaddexp_ldexp_heaviside_gcd_lcm():
    _same(mt.logaddexp, X, Y, rtol=1e-5, atol=1e-6)
    _same(mt.logaddexp2, X, Y, rtol=1e-5, atol=1e-6)
    _same(mt.ldexp, X, mt.tensor([0, 1, -2, 3, 1, 0, 2, 1, 0, 5]), rtol=1e-5, atol=1e-6)
    _same(mt.heaviside, X, Y)
    _same(lambda a, b: a.clone().atan2_(b), X, Y, rtol=1e-5, atol=1e-6)
    a = mt.tensor([-8, 0, 0, -12, 7, 12], dtype=mt.int8)
    b = mt.tensor([100, 0, 5, -18, -7, 100], dtype=mt.int8)
    for fn in (mt.gcd, mt.lcm, lambda x, y: x.clone().gcd_(y), lambda x, y: x.clone().lcm_(y)):
        _same(fn, a, b)
        _same(fn, a.long(), b.long())
    with pytest.raises(RuntimeError, match="different dtypes"):
        mt.heaviside(X.cuda(), Y.double().cuda())
    with pytest.raises(NotImplementedError, match="gcd"):
        mt.gcd(X.cuda(), X.cuda())
