"""Binary math cpu kernels: ``xlogy``, ``hypot``, ``copysign``, ``fmax``, ``fmin``, ``logaddexp``,
``logaddexp2``, ``ldexp``, ``heaviside``, ``gcd``, ``lcm`` (and ``atan2_``).

Mirrors PyTorch's ``aten/src/ATen/native/BinaryOps.cpp`` and ``cpu/BinaryOpsKernel.cpp`` for these
ops. They are built like their siblings in ``pointwise.py`` (``atan2``, ``maximum``): a numpy
function plus PyTorch's dtype rule, through ``pointwise.binary``:

* ``xlogy`` and ``copysign`` are *float* ops: integer and bool operands give the default float dtype
  (``copysign(int_tensor, -1)`` is float32);
* ``hypot`` keeps the promoted dtype, which must be a floating one (``hypot_cpu`` has no integer
  loop: ``hypot(long, long)`` is a ``NotImplementedError``, as in PyTorch);
* ``fmax``/``fmin`` keep the promoted dtype, integers and bool included; unlike ``maximum`` they
  ignore a NaN when the other operand is a number (C's ``fmax``);
* ``logaddexp``/``logaddexp2`` keep the promoted dtype, a floating one (``"logaddexp_cpu" not
  implemented for 'Long'``); ``ldexp`` (``x * 2**y``) is a float op;
* ``heaviside`` needs both operands of one dtype (PyTorch does not promote there); ``gcd``/``lcm``
  are integer-only (results wrap around in the dtype, as numpy's and PyTorch's do).

A Python number operand (``xlogy(x, 2)``, ``copysign(x, -1.0)``) is an operand of the op as a 0-d
tensor would be, which is how PyTorch's ``.Scalar`` overloads wrap it.

Also here: the cpu kernels of two overloads whose op already has one in ``pointwise.py``:
``remainder.Scalar_Tensor`` (``7 % x``) and ``pow_.Tensor`` (the in-place tensor power that
``float_power_`` decomposes into). ``float_power`` itself has no kernel: like PyTorch, the public
function converts its operands to float64 and calls ``pow`` (``_functions/pointwise.py``).
"""

from __future__ import annotations

import numpy as np

from minitorch_nn import _dtype as dt
from minitorch_nn._ops import aten
from minitorch_nn.backends.common import can_cast, not_implemented, result_type, type_name
from minitorch_nn.backends.cpu import libm
from minitorch_nn.backends.cpu.complex import refuse_complex
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
    refuse_complex("fmax", self, other)
    return _out(binary(np.fmax, self, other))


@aten.fmin.default.impl("cpu")
def fmin(self, other):
    refuse_complex("fmin", self, other)
    return _out(binary(np.fmin, self, other))


def _logaddexp(log_of_sum):
    def fn(x, y):
        x, y = np.asarray(x), np.asarray(y)
        big = np.maximum(x, y)
        # equal infinities: the answer is that infinity (inf - inf would be NaN)
        same_inf = (x == y) & np.isinf(x)
        return np.where(same_inf, x, big + log_of_sum(-np.abs(x - y)))

    return fn


_LOGADDEXP = {"logaddexp": _logaddexp(lambda d: np.log1p(np.exp(d))),
              "logaddexp2": _logaddexp(lambda d: np.log2(1 + np.exp2(d)))}


def _register_logaddexp(name):
    fn = _LOGADDEXP[name]

    @getattr(aten, name).default.impl("cpu")
    def kernel(self, other):
        d = result_type(self, other)
        if not d.is_floating_point:
            raise not_implemented(f"{name}_cpu", d)
        return _out(binary(fn, self, other))

    kernel.__name__ = name


for _name in _LOGADDEXP:
    _register_logaddexp(_name)


def _ldexp(x, y):
    # PyTorch's formula, x * 2**y: the exponent need not be an integer
    y = np.asarray(y)
    return np.asarray(x) * libm.exp2(y, y.dtype)


def _check_ldexp(self, other):
    # PyTorch's kernel for a floating ``self`` has no loop for a bool exponent (an integer or bool
    # ``self`` is converted first, and then a bool exponent is fine)
    if other.dtype is dt.bool and self.dtype.is_floating_point:
        raise not_implemented("ldexp_cpu_exp", dt.bool)


def _ldexp_float_exponent(self, other):
    # PyTorch raises 2 to a floating exponent in the exponent's own dtype (a float16 ``other``
    # gives a float16 power), then multiplies: the cpu kernels of exp2 and mul, as they are
    if other.dim() == 0 and other.dtype is not dt.float64 and result_type(self, other) is dt.float64:
        # ... except a 0-d exponent with a float64 result: there PyTorch's power is not rounded to
        # the exponent's dtype (measured: ldexp(float64 0.37719066, float16 0.3772) uses
        # 2**0.377197265625 unrounded; with a float32 result it is rounded to float16 first)
        wide = aten._to_copy.default.kernel_for("cpu")(other, dtype=dt.float64)
        power = aten.exp2.default.kernel_for("cpu")(wide)
    else:
        power = aten.exp2.default.kernel_for("cpu")(other)
    return aten.mul.Tensor.kernel_for("cpu")(self, power)


@aten.ldexp.Tensor.impl("cpu")
def ldexp(self, other):
    _check_ldexp(self, other)
    if other.dtype.is_floating_point:
        return _ldexp_float_exponent(self, other)
    return _out(binary(_ldexp, self, other, "float"))  # (2 ** an integer is exact in any float dtype)


@aten.ldexp_.default.impl("cpu")
def ldexp_(self, other):
    check_inplace_overlap(self, other)
    d = result_type(self, other)
    if not can_cast(d if d.is_floating_point else dt.get_default_dtype(), self.dtype):
        raise RuntimeError(f"ldexp can't be cast to the desired output type {type_name(self.dtype)}")
    _check_ldexp(self, other)
    if other.dtype.is_floating_point:
        r = _ldexp_float_exponent(self, other)
        return _inplace(self, (r._impl.numpy_view(), r.dtype, None))
    return _inplace(self, binary(_ldexp, self, other, "float"))


def _heaviside(x, v):
    x = np.asarray(x)
    return np.where(x == 0, v, (x > 0).astype(x.dtype))


def _check_heaviside(self, values):
    refuse_complex("heaviside", self, values)
    if self.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")


@aten.heaviside.default.impl("cpu")
def heaviside(self, values):
    _check_heaviside(self, values)
    return _out(binary(_heaviside, self, values))


@aten.heaviside_.default.impl("cpu")
def heaviside_(self, values):
    check_inplace_overlap(self, values)
    _check_heaviside(self, values)
    return _inplace(self, binary(_heaviside, self, values))


def _integer_op(name, fn):
    def check(self, other):
        d = result_type(self, other)
        if d.is_floating_point or d is dt.bool:
            raise not_implemented(f"{name}_cpu", d)

    def kernel(self, other):
        check(self, other)
        return _out(binary(fn, self, other))

    def kernel_(self, other):
        check_inplace_overlap(self, other)
        check(self, other)
        return _inplace(self, binary(fn, self, other))

    getattr(aten, name).default.impl("cpu")(kernel)
    getattr(aten, name + "_").default.impl("cpu")(kernel_)


_integer_op("gcd", np.gcd)
_integer_op("lcm", np.lcm)


@aten.atan2_.default.impl("cpu")
def atan2_(self, other):
    check_inplace_overlap(self, other)
    return _inplace(self, binary(np.arctan2, self, other, "float"))


# ``7 % x``: PyTorch wraps the number as a 0-d tensor and runs remainder.Tensor's kernel
aten.remainder.Scalar_Tensor.impl("cpu")(remainder)
# ``x.pow_(tensor)``: the same kernel as ``x.pow_(number)``, which takes either
aten.pow_.Tensor.impl("cpu")(pow_)
# ``fmod(x, tensor)``: fmod.Scalar's kernel takes a tensor as well (``x.fmod_``: augmented_ops.py)
aten.fmod.Tensor.impl("cpu")(fmod)
