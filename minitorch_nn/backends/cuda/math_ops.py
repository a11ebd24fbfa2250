"""The remaining pointwise ops on the GPU: division modes, remainders, powers, bits, rounding, tests.

Mirrors the ``BinaryDiv*Kernel.cu``, ``BinaryRemainderKernel.cu``, ``PowKernel.cu``,
``BinaryBitwiseOpsKernels.cu`` and ``UnaryFractionKernels.cu`` families: each op is one device
function run by ``elementwise.py`` (one thread per element, broadcasting, PyTorch's dtype rules
from ``backends/common.py``).

The device functions spell out the IEEE answers (``x / 0``, ``fmod(x, 0)``, ``inf`` and NaN) instead
of relying on the hardware, because under the simulator they run as Python, where ``math.fmod(1, 0)``
raises instead of giving NaN. Integer division by zero is an error in PyTorch: an integer divisor is
checked for zeros first (one reduction) and such a call takes the host path, which raises it.
``erfinv`` has no CUDA math function in numba: it is Giles' polynomial refined by Newton steps on
``erf``.
"""

from __future__ import annotations

import math

from minitorch_nn import _dtype as dt
from minitorch_nn._C import TensorBase
from minitorch_nn._ops import aten
from minitorch_nn.backends.common import check_inplace_cast, compute_dtype, result_type
from minitorch_nn.backends.layout import check_inplace_overlap
from minitorch_nn.backends.cuda import elementwise as ew
from minitorch_nn.backends.cuda._numba import cuda
from minitorch_nn.backends.cuda.activations import _baked
from minitorch_nn.backends.cuda.copy import cast_contiguous, cast_keeping_layout, copy_into
from minitorch_nn.backends.cuda.fallback import host_kernel

# -- device functions ----------------------------------------------------------------------------------


def f_true_div(x, y):
    if y == 0:  # IEEE: +-inf, or NaN for 0/0 and NaN/0
        if x != x or x == 0:
            return math.nan
        return math.inf if (x > 0) == (math.copysign(1.0, y) > 0) else -math.inf
    return x / y


_true_div = cuda().jit(device=True)(f_true_div)


def f_fmod(x, y):
    if y == 0 or x != x or y != y or x == math.inf or x == -math.inf:
        return math.nan
    if y == math.inf or y == -math.inf:
        return x
    return math.fmod(x, y)


# the helpers that other device functions call must be device functions themselves
_fmod = cuda().jit(device=True)(f_fmod)


def f_int_fmod(x, y):
    r = x % y  # Python's (floor) remainder, then moved to the sign of x (C's truncation)
    if r != 0 and (r < 0) != (x < 0):
        r -= y
    return r


def f_remainder(x, y):
    r = _fmod(x, y)  # the result takes the divisor's sign
    if r != 0 and r == r and (r < 0) != (y < 0):
        r += y
    return r


def f_int_remainder(x, y):
    return x % y


def f_trunc_div(x, y):
    q = _true_div(x, y)
    if not abs(q) < 4503599627370496.0:  # inf, NaN, or already integral
        return q
    return math.floor(q) if q >= 0 else math.ceil(q)


def f_int_trunc_div(x, y):
    q = x // y
    if x % y != 0 and (x < 0) != (y < 0):
        q += 1  # floor and trunc differ when inexact and the signs differ
    return q


def f_floor_div(x, y):
    # PyTorch's div_floor_floating: (x - fmod(x, y)) / y, corrected towards -inf, rounded
    if y == 0:
        return _true_div(x, y)
    mod = _fmod(x, y)
    if mod != mod:
        return mod
    div = (x - mod) / y
    if mod != 0 and (y < 0) != (mod < 0):
        div -= 1
    if div == 0:
        return math.copysign(0.0, x / y)
    fl = math.floor(div)
    if div - fl > 0.5:
        fl += 1
    return fl


def f_int_floor_div(x, y):
    return x // y


def f_rsub(x, y):
    return y - x


def f_bitwise_and(x, y):
    return x & y


def f_bitwise_or(x, y):
    return x | y


def f_bitwise_xor(x, y):
    return x ^ y


def f_bitwise_not(x):
    return ~x


def f_isinf(x):
    return x == math.inf or x == -math.inf


def f_isfinite(x):
    return x == x and x != math.inf and x != -math.inf


def f_frac(x):
    if not abs(x) < 4503599627370496.0:  # inf, NaN, or integral: x - x is NaN or 0, as on cpu
        return x - x
    return x - (math.floor(x) if x >= 0 else math.ceil(x))


def f_round(x):
    """Round half to even (numpy's and PyTorch's rule)."""
    if not abs(x) < 4503599627370496.0:
        return x
    f = math.floor(x)
    diff = x - f
    if diff > 0.5 or (diff == 0.5 and f % 2 != 0):
        f += 1
    return f


_round = cuda().jit(device=True)(f_round)


def make_round_decimals(scale):
    def f(x):
        return _round(x * scale) / scale

    return f


def make_nan_to_num(nan, posinf, neginf):
    def f(x):
        if x != x:
            return nan
        if x == math.inf:
            return posinf
        if x == -math.inf:
            return neginf
        return x

    return f


def f_erfinv(x):
    if x != x or x < -1 or x > 1:
        return math.nan
    if x == 1:
        return math.inf
    if x == -1:
        return -math.inf
    # Giles, "Approximating the erfinv function" (2010): single-precision polynomial...
    w = -math.log((1.0 - x) * (1.0 + x))
    if w < 5.0:
        w = w - 2.5
        p = 2.81022636e-08
        p = 3.43273939e-07 + p * w
        p = -3.5233877e-06 + p * w
        p = -4.39150654e-06 + p * w
        p = 0.00021858087 + p * w
        p = -0.00125372503 + p * w
        p = -0.00417768164 + p * w
        p = 0.246640727 + p * w
        p = 1.50140941 + p * w
    else:
        w = math.sqrt(w) - 3.0
        p = -0.000200214257
        p = 0.000100950558 + p * w
        p = 0.00134934322 + p * w
        p = -0.00367342844 + p * w
        p = 0.00573950773 + p * w
        p = -0.0076224613 + p * w
        p = 0.00943887047 + p * w
        p = 1.00167406 + p * w
        p = 2.83297682 + p * w
    y = p * x
    # ...then two Newton steps on erf(y) = x bring it to double precision
    for _ in range(2):
        y = y - (math.erf(y) - x) / (1.1283791670955126 * math.exp(-y * y))
    return y


# -- registrations --------------------------------------------------------------------------------------


def _any_zero(other):
    """Whether an integer divisor has a zero (a number, or one reduction over a tensor)."""
    if not isinstance(other, TensorBase):
        return other == 0
    from minitorch_nn.backends.cuda.reduction import reduce

    zeros = ew.pointwise(ew.f_eq, other, 0, kind="bool")
    return bool(reduce(cast_contiguous(zeros, dt.int32), None, False, "max", dt.int32).item())


def _on_cuda(*xs):
    return all(not isinstance(x, TensorBase) or x.device.type == "cuda" for x in xs)


def _inplace(self, r):
    check_inplace_cast(r.dtype, self.dtype)
    copy_into(self, r)
    self._impl.version.value += 1
    return self


def _division_like(op, float_fn, int_fn, inplace=False, mode_kw=False):
    """remainder / fmod / floor_divide / div(rounding_mode=...): float and integer device functions."""
    host = host_kernel(op)

    def run(self, other, mode=None):
        if mode_kw and mode not in ("trunc", "floor"):
            return None
        d = result_type(self, other)
        if d is dt.bool or not _on_cuda(self, other):
            return None
        if d.is_floating_point:
            fn = float_fn[mode] if mode_kw else float_fn
        else:
            if _any_zero(other):
                return None  # integer division by zero: the host path raises
            fn = int_fn[mode] if mode_kw else int_fn
        # a number ``other`` is an operand for the layout too (PyTorch wraps it as a 0-dim tensor)
        return ew.launch(fn, [self, other], d, compute_dtype(d), layout=[self, other], common_dtype=d)

    if mode_kw:
        def kernel(self, other, *, rounding_mode):
            if inplace:
                check_inplace_overlap(self, other)  # PyTorch's refusals, before anything is written
            r = run(self, other, rounding_mode)
            if r is None:
                return host(self, other, rounding_mode=rounding_mode)
            return _inplace(self, r) if inplace else r
    else:
        def kernel(self, other):
            if inplace:
                check_inplace_overlap(self, other)
            r = run(self, other)
            if r is None:
                return host(self, other)
            return _inplace(self, r) if inplace else r

    op.impl("cuda")(kernel)


_DIV_FLOAT = {"trunc": f_trunc_div, "floor": f_floor_div}
_DIV_INT = {"trunc": f_int_trunc_div, "floor": f_int_floor_div}
_division_like(aten.remainder.Tensor, f_remainder, f_int_remainder)
_division_like(aten.remainder.Scalar, f_remainder, f_int_remainder)
_division_like(aten.fmod.Scalar, f_fmod, f_int_fmod)
_division_like(aten.floor_divide.default, f_floor_div, f_int_floor_div)
_division_like(aten.div.Tensor_mode, _DIV_FLOAT, _DIV_INT, mode_kw=True)
_division_like(aten.div_.Tensor_mode, _DIV_FLOAT, _DIV_INT, inplace=True, mode_kw=True)


def _float_pow(op, inplace=False):
    """pow with a float result; integer powers (negative exponents, overflow rules) take the host path."""
    host = host_kernel(op)

    def kernel(self, exponent):
        if inplace:
            check_inplace_overlap(self, exponent)
        d = result_type(self, exponent)
        if not d.is_floating_point or not _on_cuda(self, exponent) or isinstance(exponent, bool) or isinstance(self, bool):
            return host(self, exponent)
        # ``number ** tensor`` (pow.Scalar): PyTorch allocates a contiguous result, whatever the
        # exponent's layout; tensor ** tensor keeps its operands' memory order
        layout = () if not isinstance(self, TensorBase) else [self, exponent]
        r = ew.launch(ew.f_pow, [self, exponent], d, compute_dtype(d), layout=layout, common_dtype=d)
        return _inplace(self, r) if inplace else r

    op.impl("cuda")(kernel)


_float_pow(aten.pow.Tensor_Tensor)
_float_pow(aten.pow.Scalar)
_float_pow(aten.pow_.Scalar, inplace=True)


def _rsub(op):
    host = host_kernel(op)

    def kernel(self, other, alpha=1):
        d = result_type(self, other)
        if d is dt.bool or not (type(alpha) is int and alpha == 1) or not _on_cuda(self, other):
            return host(self, other, alpha)
        return ew.launch(f_rsub, [self, other], d, compute_dtype(d), layout=[self, other], common_dtype=d)

    op.impl("cuda")(kernel)


_rsub(aten.rsub.Scalar)
_rsub(aten.rsub.Tensor)


def _bitwise(op, fn):
    host = host_kernel(op)

    def kernel(self, other):
        d = result_type(self, other)
        if d.is_floating_point or not _on_cuda(self, other):
            return host(self, other)  # PyTorch's "not implemented for 'Float'"
        if d is dt.bool:  # on bools the bit ops are the logical ones
            return ew.pointwise(fn, self, other, kind="bool")
        return ew.launch(fn, [self, other], d, d, layout=[self, other], common_dtype=d)

    op.impl("cuda")(kernel)


_bitwise(aten.bitwise_and.Tensor, f_bitwise_and)
_bitwise(aten.bitwise_or.Tensor, f_bitwise_or)
_bitwise(aten.bitwise_xor.Tensor, f_bitwise_xor)

_host_bitwise_not = host_kernel(aten.bitwise_not.default)


@aten.bitwise_not.default.impl("cuda")
def bitwise_not(self):
    if self.dtype.is_floating_point:
        return _host_bitwise_not(self)
    if self.dtype is dt.bool:
        return ew.pointwise(ew.f_logical_not, self, kind="bool")
    return ew.launch(f_bitwise_not, [self], self.dtype, self.dtype)


@aten.isinf.default.impl("cuda")
def isinf(self):
    return ew.pointwise(f_isinf, self, kind="bool")


@aten.isfinite.default.impl("cuda")
def isfinite(self):
    return ew.pointwise(f_isfinite, self, kind="bool")


def _float_only(op, fn_of):
    host = host_kernel(op)

    def kernel(self, *args, **kwargs):
        fn = fn_of(*args, **kwargs) if self.dtype.is_floating_point else None
        if fn is None:
            return host(self, *args, **kwargs)
        return ew.launch(fn, [self], self.dtype, compute_dtype(self.dtype))

    op.impl("cuda")(kernel)


_float_only(aten.frac.default, lambda: f_frac)
_float_only(aten.round.default, lambda: f_round)
_float_only(aten.round.decimals,
            lambda *, decimals: _baked(make_round_decimals, 10.0 ** decimals) if 0 <= decimals <= 15 else None)
_float_only(aten.erfinv.default, lambda: f_erfinv)

_host_erfinv_ = host_kernel(aten.erfinv_.default)


@aten.erfinv_.default.impl("cuda")
def erfinv_(self):
    check_inplace_overlap(self)
    if not self.dtype.is_floating_point:
        return _host_erfinv_(self)
    return _inplace(self, ew.launch(f_erfinv, [self], self.dtype, compute_dtype(self.dtype)))


@aten.nan_to_num.default.impl("cuda")
def nan_to_num(self, nan=None, posinf=None, neginf=None):
    d = self.dtype
    if not d.is_floating_point:
        return cast_keeping_layout(self, d)  # nothing to replace: a copy (laid out like self, as clone)
    info = dt.finfo(d)  # infinities become the largest finite values of the tensor's own dtype
    fn = _baked(make_nan_to_num, 0.0 if nan is None else float(nan), float(info.max if posinf is None else posinf),
                float(info.min if neginf is None else neginf))
    return ew.launch(fn, [self], d, compute_dtype(d))
