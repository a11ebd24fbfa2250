"""The in-place kernels behind ``%=``, ``//=``, ``&=``, ``|=``, ``^=`` and the number forms of ``& | ^``.

Mirrors PyTorch's ``remainder_``, ``floor_divide_``, ``fmod_``, ``bitwise_and_``/``or_``/``xor_`` and the
``bitwise_*.Scalar``/``.Scalar_Tensor`` overloads (``x & 2``, ``2 & x``). Each reuses the numpy
function and dtype rule of its out-of-place sibling in ``pointwise.py`` and writes into ``self``
as the other in-place kernels there do. PyTorch's order of checks is kept: an overlap of ``self``
with the other operand, then whether the result's dtype can be written into ``self``
(``long_tensor %= 2.5``: "result type Float can't be cast..."), then the kernel's own refusals
(``float_tensor &= 1``: ``"bitwise_and_cpu" not implemented for 'Float'``).
"""

from __future__ import annotations

import numpy as np

from minitorch_nn._ops import aten
from minitorch_nn.backends.common import check_inplace_cast, not_implemented, result_type
from minitorch_nn.backends.cpu.pointwise import _bitwise as _bitwise_kernel
from minitorch_nn.backends.cpu.pointwise import (
    _check_int_divisor,
    _floor_divide,
    _inplace,
    _reject_bool,
    _remainder,
    binary,
)
from minitorch_nn.backends.layout import check_inplace_overlap


def _checked_inplace(check, fn, exact_scalar=False):
    """An in-place kernel: overlap, cast into ``self``, ``check(self, other)``, then compute and write."""

    def kernel(self, other):
        check_inplace_overlap(self, other)
        check_inplace_cast(result_type(self, other), self.dtype)
        check(self, other)
        return _inplace(self, binary(fn, self, other, exact_scalar=exact_scalar))

    return kernel


def _no_bool(kernel_name):
    return lambda self, other: _reject_bool(self, other, kernel_name)


def _no_float(kernel_name):
    def check(self, other):
        d = result_type(self, other)
        if d.is_floating_point:
            raise not_implemented(kernel_name, d)

    return check


_remainder_ = _checked_inplace(_no_bool("remainder_cpu"), _check_int_divisor(_remainder))
aten.remainder_.Tensor.impl("cpu")(_remainder_)
aten.remainder_.Scalar.impl("cpu")(_remainder_)
_fmod_ = _checked_inplace(_no_bool("fmod_cpu"), _check_int_divisor(np.fmod))  # (x.fmod_(y): no operator)
aten.fmod_.Tensor.impl("cpu")(_fmod_)
aten.fmod_.Scalar.impl("cpu")(_fmod_)
# (``x //= 2`` reaches the Tensor overload with the number, as in PyTorch)
aten.floor_divide_.Tensor.impl("cpu")(
    _checked_inplace(_no_bool("div_floor_cpu"), _check_int_divisor(_floor_divide), exact_scalar=True))

for _name, _fn in (("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or), ("bitwise_xor", np.bitwise_xor)):
    _out_of_place = _bitwise_kernel(_fn, _name)  # (the same kernel as the Tensor overload)
    getattr(aten, _name).Scalar.impl("cpu")(_out_of_place)
    getattr(aten, _name).Scalar_Tensor.impl("cpu")(_out_of_place)
    _in_place = _checked_inplace(_no_float(f"{_name}_cpu"), _fn)
    getattr(aten, _name + "_").Tensor.impl("cpu")(_in_place)
    getattr(aten, _name + "_").Scalar.impl("cpu")(_in_place)
