"""``xlogy``, ``hypot``, ``copysign``, ``fmax``, ``fmin``, ``logaddexp(2)``, ``ldexp``, ``heaviside``,
``gcd``, ``lcm`` and the bit shifts on the GPU.

Mirrors the cpu kernels of ``backends/cpu/binary_math.py`` and ``bit_shifts.py`` (PyTorch's
``BinaryMiscOpsKernels.cu``, ``BinaryShiftOpsKernels.cu``...): one device function per op, run by
``elementwise.py`` with the same dtype rules, so results equal the cpu backend's.

As in ``math_ops.py``, the device functions spell out the IEEE cases instead of leaving them to
the hardware: under the simulator they run as Python, where ``math.log(0.0)`` raises. The shifts
spell out what PyTorch defines and C (and PTX) leave open: a negative or over-wide shift, one
device function per integer width. Everything the kernels do not cover (errors such as
``"hypot_cuda" not implemented for 'Long'``, bool operands of the shifts, in-place casts) takes
the host path (``fallback.py``), which raises the cpu backend's errors.
"""

from __future__ import annotations

import math

from minitorch_nn import _dtype as dt
from minitorch_nn._C import TensorBase
from minitorch_nn._ops import aten
from minitorch_nn.backends.common import can_cast, check_inplace_cast, compute_dtype, result_type
from minitorch_nn.backends.cuda import elementwise as ew
from minitorch_nn.backends.cuda._numba import cuda
from minitorch_nn.backends.cuda.activations import _baked
from minitorch_nn.backends.cuda.copy import copy_into
from minitorch_nn.backends.cuda.fallback import host_kernel
from minitorch_nn.backends.cuda.math_ops import (
    _bitwise,
    _division_like,
    _float_pow,
    f_bitwise_and,
    f_bitwise_or,
    f_bitwise_xor,
    f_floor_div,
    f_fmod,
    f_int_floor_div,
    f_int_fmod,
    f_int_remainder,
    f_remainder,
)
from minitorch_nn.backends.layout import check_inplace_overlap

# -- device functions ----------------------------------------------------------------------------------


def f_xlogy(x, y):
    if y != y:  # NaN wins, even over x == 0
        return y
    if x == 0:
        return x - x  # 0 (of x's type), whatever y is
    if y > 0:
        return x * math.log(y)
    if y == 0:
        return x * -math.inf
    return math.nan  # log of a negative number


def f_hypot(x, y):
    return math.hypot(x, y)


def f_copysign(x, y):
    return math.copysign(x, y)


def f_fmax(x, y):
    if x != x:  # C's fmax: a NaN loses to a number
        return y
    if y != y:
        return x
    return x if x >= y else y


def f_fmin(x, y):
    if x != x:
        return y
    if y != y:
        return x
    return x if x <= y else y


def f_logaddexp(x, y):
    if x != x or y != y:
        return x + y
    if x == y and (x == math.inf or x == -math.inf):
        return x  # (inf - inf would be NaN)
    big = x if x > y else y
    return big + math.log1p(math.exp(-abs(x - y)))


def f_logaddexp2(x, y):
    if x != x or y != y:
        return x + y
    if x == y and (x == math.inf or x == -math.inf):
        return x
    big = x if x > y else y
    return big + math.log2(1.0 + 2.0 ** (-abs(x - y)))


def f_ldexp(x, y):
    return x * 2.0 ** y


def f_heaviside(x, v):
    if x == 0:
        return v
    return 1 if x > 0 else 0


def f_gcd(x, y):
    a, b = abs(x), abs(y)
    while b != 0:
        a, b = b, a % b
    return a


_gcd = cuda().jit(device=True)(f_gcd)


def f_lcm(x, y):
    g = _gcd(x, y)
    if g == 0:
        return x - x
    # PyTorch takes |x / g * y| in a wide integer, then wraps it into the dtype: the same as
    # negating the wrapped product when the exact one is negative (its sign is the operands')
    p = (x // g) * y
    if (x < 0) != (y < 0):
        p = -p
    return p


def make_left_shift(bits):
    def f(x, y):
        if y < 0 or y >= bits:
            return x - x  # 0
        return x << y  # (wraps around in the result's width when stored)

    return f


def make_right_shift(bits, signed):
    def f(x, y):
        if y < 0 or y >= bits:
            if signed:
                return x >> (bits - 1)  # every bit a copy of the sign: 0 or -1
            return x - x
        return x >> y

    return f


# -- registrations --------------------------------------------------------------------------------------


def _on_cuda(*xs):
    return all(not isinstance(x, TensorBase) or x.device.type == "cuda" for x in xs)


def _inplace(self, r):
    check_inplace_cast(r.dtype, self.dtype)
    copy_into(self, r)
    self._impl.version.value += 1
    return self


def _ldexp_refuses(self, other):
    # a bool exponent of a floating tensor: the host path raises PyTorch's error
    return isinstance(other, TensorBase) and other.dtype is dt.bool and self.dtype.is_floating_point


def _register(ops, fn_for, inplace=False, float_result=False, host_if=None):
    """Give each op in ``ops`` a cuda kernel. ``fn_for(result dtype)`` gives the device function,
    or None where the host path decides; ``float_result``: integer and bool operands give the
    default float dtype (xlogy, copysign)."""

    def make(op):
        host = host_kernel(op)

        def kernel(self, other):
            if inplace:
                check_inplace_overlap(self, other)  # PyTorch's refusals, before anything is written
            d = result_type(self, other)
            if float_result and not d.is_floating_point:
                d = dt.get_default_dtype()
            fn = fn_for(d) if _on_cuda(self, other) and not (host_if and host_if(self, other)) else None
            if fn is None or (inplace and not can_cast(d, self.dtype)):
                return host(self, other)  # (which raises the cpu backend's error)
            # a number operand counts for the layout too (PyTorch wraps it as a 0-dim tensor)
            r = ew.launch(fn, [self, other], d, compute_dtype(d), layout=[self, other], common_dtype=d)
            return _inplace(self, r) if inplace else r

        kernel.__name__ = op.__name__
        return kernel

    for op in ops:
        op.impl("cuda")(make(op))


def _floats_only(fn):
    return lambda d: fn if d.is_floating_point else None


def _every_dtype(fn):
    return lambda d: fn


_register([aten.xlogy.Tensor, aten.xlogy.Scalar_Other, aten.xlogy.Scalar_Self], _every_dtype(f_xlogy), float_result=True)
_register([aten.xlogy_.Tensor, aten.xlogy_.Scalar_Other], _every_dtype(f_xlogy), inplace=True, float_result=True)
_register([aten.copysign.Tensor, aten.copysign.Scalar], _every_dtype(f_copysign), float_result=True)
_register([aten.copysign_.Tensor, aten.copysign_.Scalar], _every_dtype(f_copysign), inplace=True, float_result=True)
_register([aten.hypot.default], _floats_only(f_hypot))
_register([aten.hypot_.default], _floats_only(f_hypot), inplace=True)
_register([aten.fmax.default], _every_dtype(f_fmax))
_register([aten.fmin.default], _every_dtype(f_fmin))
_register([aten.logaddexp.default], _floats_only(f_logaddexp))  # (others: the host path's NotImplementedError)
_register([aten.logaddexp2.default], _floats_only(f_logaddexp2))
_register([aten.ldexp.Tensor], _every_dtype(f_ldexp), float_result=True, host_if=_ldexp_refuses)
_register([aten.ldexp_.default], _every_dtype(f_ldexp), inplace=True, float_result=True, host_if=_ldexp_refuses)
_register([aten.atan2_.default], _every_dtype(ew.f_atan2), inplace=True, float_result=True)


def _integers_only(fn):
    return lambda d: None if d.is_floating_point or d is dt.bool else fn


_register([aten.gcd.default], _integers_only(f_gcd))
_register([aten.gcd_.default], _integers_only(f_gcd), inplace=True)
_register([aten.lcm.default], _integers_only(f_lcm))
_register([aten.lcm_.default], _integers_only(f_lcm), inplace=True)


def _heaviside(op, inplace):
    host = host_kernel(op)

    def kernel(self, values):
        if inplace:
            check_inplace_overlap(self, values)
        if self.dtype is not values.dtype or not _on_cuda(self, values):
            return host(self, values)  # (PyTorch's "not yet implemented for tensors with different dtypes")
        d = self.dtype
        r = ew.launch(f_heaviside, [self, values], d, compute_dtype(d), layout=[self, values], common_dtype=d)
        return _inplace(self, r) if inplace else r

    op.impl("cuda")(kernel)


_heaviside(aten.heaviside.default, False)
_heaviside(aten.heaviside_.default, True)


def _shift_for(left):
    def fn_for(d):
        if d.is_floating_point or d is dt.bool:
            return None  # the host path raises "lshift_cpu" not implemented for ...
        bits = d.itemsize * 8
        if left:
            return _baked(make_left_shift, bits)
        return _baked(make_right_shift, bits, d is not dt.uint8)

    return fn_for


_LEFT = (aten.__lshift__.Tensor, aten.__lshift__.Scalar, aten.bitwise_left_shift.Tensor,
         aten.bitwise_left_shift.Tensor_Scalar, aten.bitwise_left_shift.Scalar_Tensor)
_LEFT_INPLACE = (aten.__ilshift__.Tensor, aten.__ilshift__.Scalar, aten.bitwise_left_shift_.Tensor,
                 aten.bitwise_left_shift_.Tensor_Scalar)
_RIGHT = (aten.__rshift__.Tensor, aten.__rshift__.Scalar, aten.bitwise_right_shift.Tensor,
          aten.bitwise_right_shift.Tensor_Scalar, aten.bitwise_right_shift.Scalar_Tensor)
_RIGHT_INPLACE = (aten.__irshift__.Tensor, aten.__irshift__.Scalar, aten.bitwise_right_shift_.Tensor,
                  aten.bitwise_right_shift_.Tensor_Scalar)
_register(_LEFT, _shift_for(True))
_register(_LEFT_INPLACE, _shift_for(True), inplace=True)
_register(_RIGHT, _shift_for(False))
_register(_RIGHT_INPLACE, _shift_for(False), inplace=True)

# overloads whose op's other forms have kernels in math_ops.py: ``7 % x``, ``x %= y``, ``x //= y``,
# ``x.pow_(tensor)``, ``x & 2``, ``2 & x``, ``x &= y``
_division_like(aten.remainder.Scalar_Tensor, f_remainder, f_int_remainder)
_division_like(aten.remainder_.Tensor, f_remainder, f_int_remainder, inplace=True)
_division_like(aten.remainder_.Scalar, f_remainder, f_int_remainder, inplace=True)
_division_like(aten.floor_divide_.Tensor, f_floor_div, f_int_floor_div, inplace=True)
_division_like(aten.fmod.Tensor, f_fmod, f_int_fmod)
_division_like(aten.fmod_.Tensor, f_fmod, f_int_fmod, inplace=True)
_division_like(aten.fmod_.Scalar, f_fmod, f_int_fmod, inplace=True)
_float_pow(aten.pow_.Tensor, inplace=True)
for _packet, _f in ((aten.bitwise_and, f_bitwise_and), (aten.bitwise_or, f_bitwise_or), (aten.bitwise_xor, f_bitwise_xor)):
    _bitwise(_packet.Scalar, _f)
    _bitwise(_packet.Scalar_Tensor, _f)
for _packet, _f in ((aten.bitwise_and_, f_bitwise_and), (aten.bitwise_or_, f_bitwise_or), (aten.bitwise_xor_, f_bitwise_xor)):
    # (on bools the bit ops are the logical ones; floats take the host path, which refuses them)
    _register([_packet.Tensor, _packet.Scalar], lambda d, _f=_f: None if d.is_floating_point else _f, inplace=True)
