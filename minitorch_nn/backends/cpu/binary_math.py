"""Binary math cpu kernels: ``xlogy``, ``hypot``, ``copysign``, ``fmax``, ``fmin``.

Mirrors PyTorch's ``aten/src/ATen/native/BinaryOps.cpp`` and ``cpu/BinaryOpsKernel.cpp`` for these
ops. They are built like their siblings in ``pointwise.py`` (``atan2``, ``maximum``): a numpy
function plus PyTorch's dtype rule, through ``pointwise.binary``:

* ``xlogy`` and ``copysign`` are *float* ops: integer and bool operands give the default float dtype
  (``copysign(int_tensor, -1)`` is float32);
* ``hypot`` keeps the promoted dtype, which must be a floating one (``hypot_cpu`` has no integer
  loop: ``hypot(long, long)`` is a ``NotImplementedError``, as in PyTorch);
* ``fmax``/``fmin`` keep the promoted dtype, integers and bool included; unlike ``maximum`` they
  ignore a NaN when the other operand is a number (C's ``fmax``).

A Python number operand (``xlogy(x, 2)``, ``copysign(x, -1.0)``) is an operand of the op as a 0-d
tensor would be, which is how PyTorch's ``.Scalar`` overloads wrap it.

Also here: the cpu kernels of two overloads whose op already has one in ``pointwise.py``:
``remainder.Scalar_Tensor`` (``7 % x``) and ``pow_.Tensor`` (the in-place tensor power that
``float_power_`` decomposes into). ``float_power`` itself has no kernel: like PyTorch, the public
function converts its operands to float64 and calls ``pow`` (``_functions/pointwise.py``).
"""

from __future__ import annotations

import numpy as np

from minitorch_nn._ops import aten
from minitorch_nn.backends.common import not_implemented, result_type
from minitorch_nn.backends.cpu.pointwise import _inplace, _out, binary, fmod, pow_, remainder
from minitorch_nn.backends.layout import check_inplace_overlap


def _xlogy(x, y):
    """``x * log(y)``, 0 where ``x`` is 0 (even for ``y`` 0 or inf), NaN where ``y`` is NaN."""
    x, y = np.asarray(x), np.asarray(y)
    r = x * np.log(y)
    zero = np.zeros((), r.dtype)
    return np.where(np.isnan(y), y.astype(r.dtype), np.where(x == 0, zero, r))


def _float_binary(name, fn):
    """Kernels of a float op (``xlogy``, ``copysign``) and of its in-place variant."""

    def kernel(self, other):
        return _out(binary(fn, self, other, "float"))

    def kernel_(self, other):
        check_inplace_overlap(self, other)
        return _inplace(self, binary(fn, self, other, "float"))  # (PyTorch's cast check: xlogy_ on long fails)

    kernel.__name__, kernel_.__name__ = name, name + "_"
    return kernel, kernel_


xlogy, xlogy_ = _float_binary("xlogy", _xlogy)
for _op in (aten.xlogy.Tensor, aten.xlogy.Scalar_Other, aten.xlogy.Scalar_Self):
    _op.impl("cpu")(xlogy)
for _op in (aten.xlogy_.Tensor, aten.xlogy_.Scalar_Other):
    _op.impl("cpu")(xlogy_)

copysign, copysign_ = _float_binary("copysign", np.copysign)
for _op in (aten.copysign.Tensor, aten.copysign.Scalar):
    _op.impl("cpu")(copysign)
for _op in (aten.copysign_.Tensor, aten.copysign_.Scalar):
    _op.impl("cpu")(copysign_)


def _check_hypot(self, other):
    d = result_type(self, other)
    if not d.is_floating_point:  # checked before computing: numpy would happily give floats
        raise not_implemented("hypot_cpu", d)


@aten.hypot.default.impl("cpu")
def hypot(self, other):
    _check_hypot(self, other)
    return _out(binary(np.hypot, self, other))


@aten.hypot_.default.impl("cpu")
def hypot_(self, other):
    check_inplace_overlap(self, other)
    _check_hypot(self, other)
    return _inplace(self, binary(np.hypot, self, other))


@aten.fmax.default.impl("cpu")
def fmax(self, other):
    return _out(binary(np.fmax, self, other))


@aten.fmin.default.impl("cpu")
def fmin(self, other):
    return _out(binary(np.fmin, self, other))


# ``7 % x``: PyTorch wraps the number as a 0-d tensor and runs remainder.Tensor's kernel
aten.remainder.Scalar_Tensor.impl("cpu")(remainder)
# ``x.pow_(tensor)``: the same kernel as ``x.pow_(number)``, which takes either
aten.pow_.Tensor.impl("cpu")(pow_)
# ``fmod(x, tensor)``: fmod.Scalar's kernel takes a tensor as well (``x.fmod_``: augmented_ops.py)
aten.fmod.Tensor.impl("cpu")(fmod)
