"""Bit shift cpu kernels: ``<<``, ``>>``, ``bitwise_left_shift``, ``bitwise_right_shift``.

Mirrors PyTorch's ``lshift_kernel``/``rshift_kernel`` (``aten/src/ATen/native/cpu/BinaryOpsKernel.cpp``).
The operands are promoted as for any binary op and the shift is done in the result dtype, which
must be an integer one: floats and two bools are refused by name (``"lshift_cpu" not implemented
for 'Float'``), while ``bool_tensor << 1`` is an int64 shift. PyTorch defines what C leaves
undefined; with ``W`` the result's width in bits:

* ``a << b`` shifts the bits of ``a`` as an unsigned number (signed results wrap around:
  ``int64(1) << 63`` is the most negative int64); a shift ``b < 0`` or ``b >= W`` gives 0;
* ``a >> b`` is arithmetic for signed dtypes (the sign bit is copied in); a shift ``b < 0`` or
  ``b >= W`` gives what shifting by ``W - 1`` gives (0 or -1) for signed dtypes, and 0 for uint8.

When every shift is in range (the usual case, one ``min``/``max`` to know) numpy's own shift
gives these answers; the other shifts are spelled out rather than left to how a numpy version
happens to treat them.

The operator overloads (``aten.__lshift__``, ``aten.__ilshift__``, ...) and the ``bitwise_*_shift``
ops are separate ops in PyTorch with the same kernels; both sets are registered here.
"""

from __future__ import annotations

import numpy as np

from minitorch_nn import _dtype as dt
from minitorch_nn._ops import aten
from minitorch_nn.backends.common import check_inplace_cast, not_implemented, result_type
from minitorch_nn.backends.cpu.pointwise import _inplace, _out, binary
from minitorch_nn.backends.layout import check_inplace_overlap


def _widths(x):
    bits = x.dtype.itemsize * 8
    return bits, np.dtype(f"u{x.dtype.itemsize}")


def _in_range(y, bits):
    # every shift between 0 and the width: numpy's own shift gives PyTorch's answer (and wraps around)
    return y.size == 0 or (y.min() >= 0 and y.max() < bits)


def _left_shift(x, y):
    x, y = np.asarray(x), np.asarray(y)
    bits, unsigned = _widths(x)
    if _in_range(y, bits):
        return np.left_shift(x, y)
    in_range = (y >= 0) & (y < bits)
    shift = np.where(in_range, y, 0).astype(unsigned)
    # shifting the unsigned bit pattern wraps around as PyTorch's kernel does; astype goes back
    r = np.left_shift(x.astype(unsigned), shift).astype(x.dtype)
    return np.where(in_range, r, np.zeros((), x.dtype))


def _right_shift(x, y):
    x, y = np.asarray(x), np.asarray(y)
    bits, _ = _widths(x)
    if _in_range(y, bits):
        return np.right_shift(x, y)
    in_range = (y >= 0) & (y < bits)
    if x.dtype.kind == "u":
        return np.where(in_range, np.right_shift(x, np.where(in_range, y, 0).astype(x.dtype)), np.zeros((), x.dtype))
    # out of range: the sign fills every bit (numpy's right_shift is arithmetic for signed dtypes)
    return np.right_shift(x, np.where(in_range, y, bits - 1).astype(x.dtype))


def _check_integral(self, other, kernel):
    d = result_type(self, other)
    if d.is_floating_point or d is dt.bool:
        raise not_implemented(kernel, d)


def _shift_kernels(fn, kernel_name):
    def kernel(self, other):
        _check_integral(self, other, kernel_name)
        return _out(binary(fn, self, other))

    def kernel_(self, other):
        check_inplace_overlap(self, other)
        # PyTorch checks the cast into ``self`` first: ``long_tensor <<= 1.5`` is a cast error,
        # ``float_tensor <<= 1`` the kernel's "not implemented"
        check_inplace_cast(result_type(self, other), self.dtype)
        _check_integral(self, other, kernel_name)
        return _inplace(self, binary(fn, self, other))

    return kernel, kernel_


lshift, lshift_ = _shift_kernels(_left_shift, "lshift_cpu")
rshift, rshift_ = _shift_kernels(_right_shift, "rshift_cpu")

for _ops, _fn in (
    ((aten.__lshift__.Tensor, aten.__lshift__.Scalar, aten.bitwise_left_shift.Tensor,
      aten.bitwise_left_shift.Tensor_Scalar, aten.bitwise_left_shift.Scalar_Tensor), lshift),
    ((aten.__ilshift__.Tensor, aten.__ilshift__.Scalar, aten.bitwise_left_shift_.Tensor,
      aten.bitwise_left_shift_.Tensor_Scalar), lshift_),
    ((aten.__rshift__.Tensor, aten.__rshift__.Scalar, aten.bitwise_right_shift.Tensor,
      aten.bitwise_right_shift.Tensor_Scalar, aten.bitwise_right_shift.Scalar_Tensor), rshift),
    ((aten.__irshift__.Tensor, aten.__irshift__.Scalar, aten.bitwise_right_shift_.Tensor,
      aten.bitwise_right_shift_.Tensor_Scalar), rshift_),
):
    for _op in _ops:
        _op.impl("cpu")(_fn)
