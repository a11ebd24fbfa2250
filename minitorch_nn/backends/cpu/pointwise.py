"""Elementwise cpu kernels: arithmetic, math functions, clamp, comparisons, logic, ``where``.

Mirrors PyTorch's ``aten/src/ATen/native/BinaryOps.cpp``/``UnaryOps.cpp`` (the cpu kernels).
Each op is a numpy ufunc plus PyTorch's dtype rule:

* ``promote``: the result has the promoted dtype of the operands (``add``, ``mul``, ``maximum``);
* ``float``: integer inputs give the default float dtype (``div``, ``exp``, ``sigmoid``);
* ``bool``: the result is bool (comparisons, logical ops).

numpy broadcasts exactly like PyTorch, so the kernels only decide dtypes. Each kernel's helper
returns a triple ``(values, dtype, strides)``: the strides are the memory layout PyTorch's
``TensorIterator`` gives the result (``backends/layout.py``: ``x.t().exp()`` keeps ``x.t()``'s
column-major order), None meaning contiguous. In-place variants (``add_``) compute the same values
and write them into ``self``, after PyTorch's cast and memory-overlap checks (``add_``, ``sub_`` and
``mul_`` compute straight into ``self`` when nothing needs converting: :func:`_into_self`).

``add``/``sub`` with ``alpha``, ``addcmul`` and ``lerp`` round ``a + b * c`` once, as PyTorch's
compiled kernels do (a fused multiply-add: ``_fma.py``).

The activations (``relu``, ``gelu``, ...) are elementwise too; they live in ``activations.py``,
which reuses this file's helpers.
"""

from __future__ import annotations

import numpy as np

from minitorch_nn import _dtype as dt
from minitorch_nn._C import TensorBase
from minitorch_nn._ops import aten
from minitorch_nn._shape import broadcast_shapes
from minitorch_nn._tensor import _STRIDES_CACHE as _ROW_MAJOR
from minitorch_nn._warnings import warn_user
from minitorch_nn.backends.common import (
    _COMPUTE,
    check_inplace_cast,
    compute_dtype,
    not_implemented,
    real_scalar,
    result_type,
)
from minitorch_nn.backends.cpu import libm
from minitorch_nn.backends.cpu._fma import FUSED_DTYPES, fma
from minitorch_nn.backends.cpu._numpy import (
    as_array,
    fp_errors_off,
    fp_errors_restore,
    numpy_broadcast_error,
    wrap,
    wrap_strided,
    write_into,
)
from minitorch_nn.backends.cpu.complex import COMPLEX_REFUSALS, refuse_complex
from minitorch_nn.backends.layout import (
    check_inplace_overlap,
    converted_geometry,
    elementwise_strides,
    has_internal_overlap,
    preserve_strides,
)


def binary(fn, a, b, kind="promote", *, exact_scalar=False):
    """Apply numpy ``fn`` to two operands with PyTorch's dtype rule ``kind``; returns
    (array, dtype, strides).

    With a 16-bit float result, PyTorch first converts every operand to that dtype (so
    ``half_tensor == 0.1`` compares with ``half(0.1)``) and computes in float32. ``mul`` and
    ``div`` are the exception for a Python number or 0-d tensor, which their kernels read in
    float32 as it is (``exact_scalar=True``).
    """
    if isinstance(a, TensorBase) and isinstance(b, TensorBase):
        ia, ib = a._impl, b._impl
        dtype, sizes = ia.dtype, ia.sizes
        if (dtype is ib.dtype and sizes == ib.sizes and sizes and 0 not in sizes and dtype not in _COMPUTE
                and ia.strides == ib.strides == _ROW_MAJOR.get(sizes)
                and (kind != "float" or dtype.is_floating_point or dtype.is_complex)):
            # The common case, with the rules below already worked out: two row-major tensors of one
            # dtype and shape have that dtype (result_type), are computed as they are (no 16-bit
            # float) and give a row-major result (elementwise_strides).
            token = fp_errors_off()
            try:
                r = fn(ia.numpy_view(), ib.numpy_view())
            finally:
                fp_errors_restore(token)
            return r, (dt.bool if kind == "bool" else dtype), None
    dtype = result_type(a, b)
    if kind == "float" and not (dtype.is_floating_point or dtype.is_complex):
        dtype = dt.get_default_dtype()
    cdt = compute_dtype(dtype)
    if cdt is not dtype:
        a, b = _to_result_dtype(a, dtype, exact_scalar), _to_result_dtype(b, dtype, exact_scalar)
    x, y = as_array(a, cdt), as_array(b, cdt)
    token = fp_errors_off()
    try:
        r = fn(x, y)
    except ValueError:
        numpy_broadcast_error(a, b)
        raise
    finally:
        fp_errors_restore(token)
    # (r.shape: np.shape is a dispatched numpy function, a measurable cost on every op)
    shape = r.shape if type(r) is np.ndarray else np.shape(r)
    return r, (dt.bool if kind == "bool" else dtype), elementwise_strides(shape, (a, b), dtype)


def _to_result_dtype(x, dtype, exact_scalar):
    """An operand rounded to the (16-bit) result dtype, unless it already has it or stays exact."""
    if isinstance(x, TensorBase):
        if x._impl.dtype is dtype or (exact_scalar and not x._impl.sizes):
            return x
        return as_array(x, dtype)
    if exact_scalar:
        return x
    return float(np.asarray(x).astype(dtype.numpy_dtype))


def unary(fn, a, kind="promote"):
    impl = a._impl
    dtype = impl.dtype
    if kind == "float" and not (dtype.is_floating_point or dtype.is_complex):
        dtype = dt.get_default_dtype()
    x = impl.numpy_view()
    cdt = _COMPUTE.get(dtype, dtype)  # (compute_dtype, read without a call)
    if cdt is not impl.dtype:
        x = x.astype(cdt.numpy_dtype)
    token = fp_errors_off()
    try:
        r = fn(x)
    finally:
        fp_errors_restore(token)
    sizes = impl.sizes  # (the result's shape)
    if impl.strides == _ROW_MAJOR.get(sizes) and 0 not in sizes:
        strides = None  # a row-major input gives a row-major result: elementwise_strides' first rule
    else:
        strides = elementwise_strides(sizes, (a,), dtype)
    return r, (dt.bool if kind == "bool" else dtype), strides


def _out(triple):
    r, dtype, strides = triple
    if strides is None:   # contiguous, the common case: wrap_strided would only call wrap
        return wrap(r, dtype)
    return wrap_strided(r, dtype, strides)


def _into_self(self, other, ufunc, alpha=1):
    """``self = ufunc(self, alpha * other)`` computed straight into ``self``'s memory, when that is
    what computing a fresh result and copying it in gives: the result has ``self``'s dtype, which
    is not a 16-bit float (those compute in float32), and ``other`` broadcasts to ``self``. Saves
    a full-size temporary and its copy (an optimizer's update on a large parameter). Returns False
    when the general path must run (it also raises the errors); the kernel ran
    :func:`check_inplace_overlap` first, so ``other`` is ``self``'s memory exactly or not at all."""
    impl = self._impl
    dtype = impl.dtype
    if dtype in _COMPUTE or result_type(self, other) is not dtype:
        return False
    x, y = impl.numpy_view(), as_array(other, dtype)
    token = fp_errors_off()
    try:
        if type(alpha) is int and alpha == 1:
            ufunc(x, y, out=x)
        elif x.dtype in FUSED_DTYPES:  # (ufunc is np.add: add_/sub_ with alpha, fused as in _scaled_by)
            if np.broadcast_shapes(x.shape, np.shape(y)) != x.shape:
                return False
            fma(y, np.asarray(alpha).astype(x.dtype), x, out=x)
        else:
            ufunc(x, y * np.asarray(alpha).astype(np.result_type(y)), out=x)  # (as _scaled_by scales it)
    except ValueError:
        return False  # ``other`` does not broadcast to ``self``: nothing was written
    finally:
        fp_errors_restore(token)
    impl.version.value += 1
    return True


def _check_inplace_operands(self, other):
    """What PyTorch checks of ``self.add_(other, alpha=...)`` before alpha: ``other`` broadcasts to
    ``self``'s shape, and the result's dtype can be written into ``self``."""
    sizes = self._impl.sizes
    if isinstance(other, TensorBase):
        shape = broadcast_shapes(sizes, other._impl.sizes)  # (raises for shapes that do not broadcast)
        if shape != sizes:
            raise RuntimeError(f"output with shape {list(sizes)} doesn't match the broadcast shape {list(shape)}")
    check_inplace_cast(result_type(self, other), self._impl.dtype)


def _inplace(self, triple):
    """Write a computed result into ``self`` (its kernel ran :func:`check_inplace_overlap` first)."""
    r, dtype, _ = triple
    check_inplace_cast(dtype, self.dtype)
    return write_into(self, r)


def _scaled(other, alpha, cdt):
    if alpha == 1:
        return other
    if isinstance(other, TensorBase):
        return as_array(other, cdt) * np.asarray(alpha, dtype=cdt.numpy_dtype)
    return other * alpha


# -- arithmetic ---------------------------------------------------------------------------------

def _check_alpha(a, b, alpha):
    # PyTorch's alpha_check: a bool alpha only for bool results; a float alpha only for float results
    d = result_type(a, b)
    if isinstance(alpha, bool) and d is not dt.bool:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if not (d.is_floating_point or d.is_complex) and isinstance(alpha, float):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


def _scaled_by(alpha, fused=True):
    def fn(x, y):
        a = np.asarray(alpha).astype(np.result_type(y))
        if fused and a.dtype in FUSED_DTYPES and np.result_type(x) == a.dtype:
            return fma(y, a, x)  # PyTorch's kernel rounds ``x + alpha * y`` once (_fma.py)
        return x + y * a

    return fn


def _add(a, b, alpha=1):
    """``a + alpha * b`` as a numpy array, for the cpu kernels of ``add``/``add_``.

    Rules (``binary(fn, a, b)`` does the shared work: it broadcasts tensors and numbers, converts
    them to the promoted result dtype's computation type, calls ``fn`` on the numpy arrays and gives
    back the array):

    * ``alpha == 1`` (the int): plain ``np.add``;
    * any other ``alpha``: check it with ``_check_alpha(a, b, alpha)`` first (a float alpha with
      integer operands is an error), then add ``alpha * b`` -- ``_scaled_by(alpha, unfused)`` gives
      the function, with ``unfused`` true when the result dtype is a 16-bit float (not in
      ``_COMPUTE``), where PyTorch rounds ``alpha * b`` before adding;
    * two bool operands: the result stays bool and means logical or: ``a | (b & bool(alpha))``.
    """
    # BEGIN SOLUTION kernel-add
    if type(alpha) is int and alpha == 1:
        return binary(np.add, a, b)
    _check_alpha(a, b, alpha)
    if result_type(a, b) is dt.bool:
        # bool + alpha * bool: any non-zero alpha keeps the logical-or meaning
        return binary(lambda x, y: x | (y & bool(alpha)), a, b)
    return binary(_scaled_by(alpha, result_type(a, b) not in _COMPUTE), a, b)  # (16-bit: unfused, _fma.py)
    # END SOLUTION


def _is_bool(x):
    return x._impl.dtype is dt.bool if isinstance(x, TensorBase) else isinstance(x, bool)


def _check_sub_bool(a, b):
    # PyTorch's sub_check: any bool operand (a bool tensor or a Python bool) is refused
    if _is_bool(a) and _is_bool(b):
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. "
            "Use the `^` or `logical_xor()` operator instead."
        )
    if _is_bool(a) or _is_bool(b):
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. "
            "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )


def _sub(a, b, alpha=1):
    _check_sub_bool(a, b)
    if type(alpha) is int and alpha == 1:
        return binary(np.subtract, a, b)
    _check_alpha(a, b, alpha)
    return binary(_scaled_by(-alpha, result_type(a, b) not in _COMPUTE), a, b)


@aten.add.Tensor.impl("cpu")
def add(self, other, *, alpha=1):
    return _out(_add(self, other, alpha))


@aten.add_.Tensor.impl("cpu")
def add_(self, other, *, alpha=1):
    check_inplace_overlap(self, other)
    if type(alpha) is int and alpha == 1:
        if _into_self(self, other, np.add):
            return self
    else:
        _check_inplace_operands(self, other)
        if self._impl.dtype is not dt.bool:  # (bool + alpha * bool has its own meaning, in _add)
            _check_alpha(self, other, alpha)
            if _into_self(self, other, np.add, alpha):
                return self
    return _inplace(self, _add(self, other, alpha))


@aten.sub.Tensor.impl("cpu")
def sub(self, other, *, alpha=1):
    return _out(_sub(self, other, alpha))


@aten.sub_.Tensor.impl("cpu")
def sub_(self, other, *, alpha=1):
    check_inplace_overlap(self, other)
    _check_sub_bool(self, other)
    if type(alpha) is int and alpha == 1:
        if _into_self(self, other, np.subtract):
            return self
    else:
        _check_inplace_operands(self, other)
        _check_alpha(self, other, alpha)
        if _into_self(self, other, np.add, -alpha):  # (as _sub: self + other * -alpha)
            return self
    return _inplace(self, _sub(self, other, alpha))


@aten.rsub.Scalar.impl("cpu")
@aten.rsub.Tensor.impl("cpu")
def rsub(self, other, alpha=1):
    return _out(_sub(other, self, alpha))


@aten.mul.Tensor.impl("cpu")
def mul(self, other):
    return _out(binary(np.multiply, self, other, exact_scalar=True))


@aten.mul_.Tensor.impl("cpu")
def mul_(self, other):
    check_inplace_overlap(self, other)
    if _into_self(self, other, np.multiply):
        return self
    return _inplace(self, binary(np.multiply, self, other, exact_scalar=True))


def _check_int_divisor(name):
    """Integer division by zero is an error in PyTorch (numpy quietly gives 0)."""

    def fn(x, y):
        if np.asarray(y).dtype.kind in "iub" and np.any(np.asarray(y) == 0):
            raise RuntimeError("ZeroDivisionError")
        return name(x, y)

    return fn


def _trunc_divide(x, y):
    if np.asarray(x).dtype.kind == "f":
        return np.trunc(np.true_divide(x, y))
    q = np.floor_divide(x, y)
    # floor and trunc differ when the division is inexact and the signs differ
    fix = (np.remainder(x, y) != 0) & ((np.asarray(x) < 0) != (np.asarray(y) < 0))
    return q + fix.astype(q.dtype)


def _floor_divide(x, y):
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype.kind != "f":
        return np.floor_divide(x, y)
    # PyTorch's div_floor_floating: (x - fmod(x, y)) / y, corrected towards -inf, then rounded to
    # the nearest integer; x / 0 is the IEEE quotient and inf // y is nan (numpy says inf)
    mod = np.fmod(x, y)
    div = (x - mod) / y
    div = div - ((mod != 0) & ((y < 0) != (mod < 0))).astype(div.dtype)
    floordiv = np.floor(div)
    floordiv = floordiv + (div - floordiv > 0.5).astype(div.dtype)
    floordiv = np.where(div == 0, np.copysign(np.zeros_like(div), x / y), floordiv)
    return np.where(y == 0, x / y, floordiv)


def _reject_bool(a, b, kernel):
    d = result_type(a, b)
    if d is dt.bool:
        raise not_implemented(kernel, d)


def _div(a, b, rounding_mode=None):
    if rounding_mode is None:
        return binary(np.true_divide, a, b, "float", exact_scalar=True)
    if rounding_mode == "trunc":
        refuse_complex("div_trunc", a, b)
        _reject_bool(a, b, "div_trunc_cpu")
        return binary(_check_int_divisor(_trunc_divide), a, b, exact_scalar=True)
    if rounding_mode == "floor":
        refuse_complex("div_floor", a, b)
        _reject_bool(a, b, "div_floor_cpu")
        return binary(_check_int_divisor(_floor_divide), a, b, exact_scalar=True)
    raise RuntimeError(
        f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'"
    )


@aten.div.Tensor.impl("cpu")
def div(self, other):
    return _out(_div(self, other))


@aten.div.Tensor_mode.impl("cpu")
def div_mode(self, other, *, rounding_mode):
    return _out(_div(self, other, rounding_mode))


@aten.div_.Tensor.impl("cpu")
def div_(self, other):
    check_inplace_overlap(self, other)
    return _inplace(self, _div(self, other))


@aten.div_.Tensor_mode.impl("cpu")
def div_mode_(self, other, *, rounding_mode):
    check_inplace_overlap(self, other)
    return _inplace(self, _div(self, other, rounding_mode))


def _remainder(x, y):
    if np.asarray(x).dtype.kind == "f":
        # Python's modulo: the result takes the divisor's sign; x % 0 is nan
        r = np.fmod(x, y)
        return np.where((r != 0) & ((r < 0) != (np.asarray(y) < 0)), r + y, r)
    return np.remainder(x, y)


@aten.remainder.Tensor.impl("cpu")
@aten.remainder.Scalar.impl("cpu")
def remainder(self, other):
    refuse_complex("remainder", self, other)
    _reject_bool(self, other, "remainder_cpu")
    return _out(binary(_check_int_divisor(_remainder), self, other))


@aten.fmod.Scalar.impl("cpu")
def fmod(self, other):
    refuse_complex("fmod", self, other)
    _reject_bool(self, other, "fmod_cpu")
    return _out(binary(_check_int_divisor(np.fmod), self, other))


@aten.floor_divide.default.impl("cpu")
def floor_divide(self, other):
    refuse_complex("div_floor", self, other)
    _reject_bool(self, other, "div_floor_cpu")
    return _out(binary(_check_int_divisor(_floor_divide), self, other, exact_scalar=True))


def _int_power(x, y):
    """Integer ``x ** y`` with PyTorch's answer for negative ``y``: 1/x truncated (0 unless |x| == 1)."""
    x, y = np.asarray(x), np.asarray(y)
    negative = y < 0
    if not np.any(negative):
        return np.power(x, y)
    r = np.power(x, np.where(negative, 0, y).astype(y.dtype))
    odd = (np.abs(y) % 2).astype(bool)
    special = np.where(x == 1, 1, np.where(x == -1, np.where(odd, -1, 1), 0)).astype(r.dtype)
    return np.where(negative, special, r)


def _reciprocal(x):
    # (numpy's reciprocal of complex 0 is nan+nanj; PyTorch divides, 1 / 0j = inf+nanj)
    return np.divide(1, x) if x.dtype.kind == "c" else np.reciprocal(x)


# PyTorch's pow(tensor, number) hands these exponents to other kernels (PowKernel.cpp), which for
# complex numbers gives other roundings than exp(b log a): sqrt(-4) is exactly 2j
_COMPLEX_POW_SHORTCUTS = {0.5: np.sqrt, -0.5: lambda x: 1 / np.sqrt(x), -1: lambda x: np.divide(1, x)}


def _pow(a, b):
    if (isinstance(a, TensorBase) and a._impl.dtype.is_complex and not isinstance(b, (TensorBase, bool))
            and b in _COMPLEX_POW_SHORTCUTS):
        x = as_array(a)
        token = fp_errors_off()
        try:
            r = _COMPLEX_POW_SHORTCUTS[b](x)
        finally:
            fp_errors_restore(token)
        return r, a._impl.dtype, elementwise_strides(x.shape, (a,), a._impl.dtype)
    if isinstance(a, TensorBase) and not isinstance(b, TensorBase) and b in (0, 1):
        # x ** 0 is all ones and x ** 1 a copy, for every dtype (bool included), as in PyTorch
        d = result_type(a, b)
        x = as_array(a, compute_dtype(d))
        return (np.ones_like(x) if b == 0 else x.copy()), d, elementwise_strides(x.shape, (a,), d)
    if result_type(a, b) is dt.bool:
        raise not_implemented("pow", dt.bool)
    if isinstance(a, TensorBase) and not isinstance(b, TensorBase) and not a.dtype.is_floating_point:
        if isinstance(b, int) and not isinstance(b, bool) and b < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")

    def fn(x, y):
        if np.result_type(x, y).kind in "iu":
            return _int_power(x, y)
        return np.power(x, y)

    r, d, strides = binary(fn, a, b)
    if not isinstance(b, TensorBase):  # pow(tensor, number): the exponent is a parameter
        strides = elementwise_strides(np.shape(r), (a,), d)
    elif not isinstance(a, TensorBase):  # pow(number, tensor): PyTorch allocates it contiguous
        strides = None
    return r, d, strides


@aten.pow.Tensor_Tensor.impl("cpu")
def pow_tt(self, exponent):
    return _out(_pow(self, exponent))


@aten.pow.Tensor_Scalar.impl("cpu")
def pow_ts(self, exponent):
    return _out(_pow(self, exponent))


@aten.pow.Scalar.impl("cpu")
def pow_st(self, exponent):
    return _out(_pow(self, exponent))


@aten.pow_.Scalar.impl("cpu")
def pow_(self, exponent):
    check_inplace_overlap(self, exponent)
    return _inplace(self, _pow(self, exponent))


@aten.maximum.default.impl("cpu")
def maximum(self, other):
    refuse_complex("maximum", self, other)
    return _out(binary(np.maximum, self, other))


@aten.minimum.default.impl("cpu")
def minimum(self, other):
    refuse_complex("minimum", self, other)
    return _out(binary(np.minimum, self, other))


@aten.atan2.default.impl("cpu")
def atan2(self, other):
    refuse_complex("atan2", self, other)
    return _out(binary(np.arctan2, self, other, "float"))


def _lerp(start, end, weight):
    kernel = "lerp_kernel_tensor" if isinstance(weight, TensorBase) else "lerp_kernel_scalar"
    if start.dtype is not end.dtype:
        raise RuntimeError(f"expected dtype {_c_name(start.dtype)} for `end` but got dtype {_c_name(end.dtype)}")
    if not (start.dtype.is_floating_point or start.dtype.is_complex):
        raise not_implemented(kernel, start.dtype)

    def fn(s, e):
        w = as_array(weight, compute_dtype(start.dtype)) if isinstance(weight, TensorBase) else weight
        # PyTorch's formula switches ends at weight 0.5 for accuracy
        if s.dtype in FUSED_DTYPES:  # (16-bit floats too: they compute in float32, as PyTorch's do)
            w = np.asarray(w, s.dtype)  # (a number weight is read in the compute dtype)
            d = e - s  # each end is one multiply-add, rounded once (_fma.py)
            return np.where(np.abs(w) < 0.5, fma(w, d, s), fma(w - np.ones((), s.dtype), d, e))
        return np.where(np.abs(w) < 0.5, s + w * (e - s), e - (e - s) * (1 - w))

    r, dtype, _ = binary(fn, start, end)
    return r, dtype, elementwise_strides(np.shape(r), _tensors(start, end, weight), dtype)


def _tensors(*args):
    """The tensor arguments: the operands of ops whose number arguments are parameters, not operands."""
    return [a for a in args if isinstance(a, TensorBase)]


def _c_name(d):
    # the C type names PyTorch uses in some messages ("expected dtype float ... got dtype double")
    return {dt.float32: "float", dt.float64: "double", dt.float16: "c10::Half", dt.bfloat16: "c10::BFloat16",
            dt.int64: "long int", dt.int32: "int", dt.int16: "short int", dt.int8: "signed char",
            dt.uint8: "unsigned char", dt.bool: "bool", dt.complex64: "c10::complex<float>",
            dt.complex128: "c10::complex<double>"}[d]


@aten.lerp.Scalar.impl("cpu")
@aten.lerp.Tensor.impl("cpu")
def lerp(self, end, weight):
    return _out(_lerp(self, end, weight))


@aten.lerp_.Scalar.impl("cpu")
def lerp_(self, end, weight):
    check_inplace_overlap(self, end, weight)
    return _inplace(self, _lerp(self, end, weight))


def _addc(self, t1, t2, value, op):
    dtype = result_type(self, t1, t2)
    cdt = compute_dtype(dtype)
    token = fp_errors_off()
    try:
        s, v = as_array(self, cdt), np.asarray(value, dtype=cdt.numpy_dtype)
        if v.dtype not in FUSED_DTYPES:  # (integers; 16-bit floats compute in float32 and fuse)
            r = s + v * op(as_array(t1, cdt), as_array(t2, cdt))
        elif op is np.multiply:  # PyTorch: ``s + value * t1 * t2``, its last multiply-add fused (_fma.py)
            r = fma(v * as_array(t1, cdt), as_array(t2, cdt), s)
        else:  # ``s + value * t1 / t2``: a division does not fuse
            r = s + (v * as_array(t1, cdt)) / as_array(t2, cdt)
    finally:
        fp_errors_restore(token)
    return r, dtype, elementwise_strides(np.shape(r), (self, t1, t2), dtype)


@aten.addcmul.default.impl("cpu")
def addcmul(self, tensor1, tensor2, *, value=1):
    return _out(_addc(self, tensor1, tensor2, value, np.multiply))


@aten.addcdiv.default.impl("cpu")
def addcdiv(self, tensor1, tensor2, *, value=1):
    return _out(_addc(self, tensor1, tensor2, value, np.true_divide))


@aten.addcmul_.default.impl("cpu")
def addcmul_(self, tensor1, tensor2, *, value=1):
    check_inplace_overlap(self, tensor1, tensor2)
    return _inplace(self, _addc(self, tensor1, tensor2, value, np.multiply))


@aten.addcdiv_.default.impl("cpu")
def addcdiv_(self, tensor1, tensor2, *, value=1):
    check_inplace_overlap(self, tensor1, tensor2)
    return _inplace(self, _addc(self, tensor1, tensor2, value, np.true_divide))


# -- unary math ---------------------------------------------------------------------------------

_ONE = np.ones((), np.float32)  # (a 0-d operand: float32 and float64 arrays keep their dtype, as with 1.0)


try:
    # The compiled loop (_ext/_activation_kernels.pyx: PyTorch's order of operations, so its bits),
    # part of this kernel rather than a twin: it runs with the switch (backends.compiled) off too.
    # Absent from a tree built without that file, where numpy does it all.
    from minitorch_nn._activation_kernels import sigmoid as _compiled_sigmoid
except ImportError:  # pragma: no cover - depends on the build
    _compiled_sigmoid = None


def _sigmoid_numpy(x):
    """``1 / (1 + exp(-x))`` with numpy, each step written into one temporary (positional
    ``out``: on a small tensor the allocations and keyword handling cost more than the arithmetic).
    The readable version of the compiled loop, and what runs for the dtypes it declines (complex)."""
    t = np.negative(x)
    if type(t) is not np.ndarray:  # a 0-d input gives a numpy scalar: no memory to write into
        return 1.0 / (1.0 + np.exp(t))
    np.exp(t, t)
    np.add(t, _ONE, t)
    np.true_divide(_ONE, t, t)
    return t


def _sigmoid(x):
    """``1 / (1 + exp(-x))``: the compiled loop for float32/float64 arrays (one pass, no
    temporaries), numpy for the rest. The compiled twin (``_ext/twins/backends/cpu/pointwise.pyx``) calls
    this function too, so both paths give the same bits."""
    r = None if _compiled_sigmoid is None else _compiled_sigmoid(x)
    return _sigmoid_numpy(x) if r is None else r


def _erf(x):
    from scipy import special

    return special.erf(x)


def _erfc(x):
    from scipy import special

    return special.erfc(x)


def _erfinv(x):
    from scipy import special

    return special.erfinv(x)


def _sign(x):
    # PyTorch's sign(nan) is 0 (numpy keeps nan); bool stays bool
    if x.dtype.kind == "b":
        return x.copy()
    r = np.sign(x)
    return np.where(np.isnan(r), np.zeros((), r.dtype), r) if r.dtype.kind == "f" else r


def _exp2(x):
    # The C library's exp2, correctly rounded, as PyTorch's: numpy's exp2 is a SIMD routine on
    # AVX-512 machines that is an ulp off for some inputs (cpu/libm.py)
    if x.dtype in (np.float32, np.float64):
        return libm.exp2(x, x.dtype)
    return np.exp2(x)


def _integral_identity(fn):
    # floor/ceil/round/trunc of an integer is the integer (numpy would make it a float)
    return lambda x: fn(x) if x.dtype.kind == "f" else x.copy()


_FLOAT_UNARY = {
    "exp": np.exp, "exp2": _exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2,
    "log10": np.log10, "log1p": np.log1p, "sqrt": np.sqrt, "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "sigmoid": _sigmoid,
    "erf": _erf, "erfc": _erfc, "erfinv": _erfinv, "reciprocal": _reciprocal,
}
try:
    # float32 exp, log, tanh... rounded as PyTorch rounds them (numpy's fast float32 routines are
    # one ulp off on up to 40% of elements); other dtypes still go to the numpy functions above.
    # These compiled loops are part of this kernel, not a twin of it: they decide the bits, so they
    # run with the switch (backends.compiled) off too; _ext/_unary_kernels.pyx says how each
    # element is computed. Absent from a tree built without that file: numpy's routines then.
    from minitorch_nn._unary_kernels import ROUNDED_AS_PYTORCH as _ROUNDED_AS_PYTORCH
except ImportError:  # pragma: no cover - depends on the build
    _ROUNDED_AS_PYTORCH = {}
_FLOAT_UNARY.update(_ROUNDED_AS_PYTORCH)

# name -> (numpy function, the PyTorch kernel named in "not implemented for 'Bool'", or None)
_SAME_UNARY = {
    "abs": (np.abs, "abs_cpu"), "sign": (_sign, None),
    "floor": (_integral_identity(np.floor), "floor_vml_cpu"), "ceil": (_integral_identity(np.ceil), "ceil_vml_cpu"),
    "round": (_integral_identity(np.round), "round_vml_cpu"), "trunc": (_integral_identity(np.trunc), "trunc_vml_cpu"),
}


def _register_unary(name, fn, kind, bool_kernel=None):
    refused_for_complex = name in COMPLEX_REFUSALS

    def check(self):
        d = self._impl.dtype
        if bool_kernel is not None and d is dt.bool:
            raise not_implemented(bool_kernel, dt.bool)
        if refused_for_complex and d.is_complex:
            refuse_complex(name, self)

    def kernel(self):
        check(self)
        r, dtype, strides = unary(fn, self, kind)
        if name == "abs" and dtype.is_complex:
            dtype = dtype.to_real()  # |z| is real
        return _out((r, dtype, strides))

    def kernel_(self):
        check_inplace_overlap(self)
        check(self)
        if name == "abs" and self._impl.dtype.is_complex:
            refuse_complex("abs_", self)
        return _inplace(self, unary(fn, self, kind))

    kernel.__name__ = name
    kernel_.__name__ = name + "_"
    getattr(aten, name).default.impl("cpu")(kernel)
    packet = getattr(aten, name + "_", None) if name + "_" in aten._packets else None
    if packet is not None:
        packet.default.impl("cpu")(kernel_)


for _name, _fn in _FLOAT_UNARY.items():
    _register_unary(_name, _fn, "float")
for _name, (_fn, _kernel) in _SAME_UNARY.items():
    _register_unary(_name, _fn, "promote", _kernel)


def _float_only(self, kernel):
    """Ops with floating-point loops only (frac, gelu, silu, ...) refuse other dtypes by name."""
    if not self._impl.dtype.is_floating_point:
        raise not_implemented(kernel, self._impl.dtype)


@aten.frac.default.impl("cpu")
def frac(self):
    _float_only(self, "frac_cpu")
    return _out(unary(lambda x: x - np.trunc(x), self))


@aten.neg.default.impl("cpu")
def neg(self):
    _check_neg(self)
    return _out(unary(np.negative, self))


@aten.neg_.default.impl("cpu")
def neg_(self):
    _check_neg(self)
    check_inplace_overlap(self)
    return _inplace(self, unary(np.negative, self))


def _check_neg(self):
    if self.dtype is dt.bool:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead."
        )


@aten.round.decimals.impl("cpu")
def round_decimals(self, *, decimals):
    _float_only(self, "round_cpu")
    return _out(unary(lambda x: np.round(x, decimals), self))


@aten.isnan.default.impl("cpu")
def isnan(self):
    return _out(unary(np.isnan, self, "bool"))


@aten.isinf.default.impl("cpu")
def isinf(self):
    return _out(unary(np.isinf, self, "bool"))


@aten.isfinite.default.impl("cpu")
def isfinite(self):
    return _out(unary(np.isfinite, self, "bool"))


@aten.nan_to_num.default.impl("cpu")
def nan_to_num(self, nan=None, posinf=None, neginf=None):
    if not self.dtype.is_floating_point:
        # nothing to replace: PyTorch returns ``self.clone()``, laid out as a clone is
        impl = self._impl
        return wrap_strided(np.copy(as_array(self)), impl.dtype, preserve_strides(impl.sizes, impl.strides))
    # infinities become the largest finite value of the tensor's own dtype (not the compute dtype)
    info = dt.finfo(self.dtype)
    return _out(unary(lambda x: np.nan_to_num(
        x, nan=0.0 if nan is None else nan,
        posinf=info.max if posinf is None else posinf,
        neginf=info.min if neginf is None else neginf,
    ), self))


# -- clamp ----------------------------------------------------------------------------------------

def _clamp(self, min=None, max=None, kernel="clamp_scalar_cpu"):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    refuse_complex("clamp", self)
    dtype = result_type(self, min, max)
    if dtype is dt.bool and not isinstance(min, TensorBase) and not isinstance(max, TensorBase):
        raise not_implemented(kernel, dtype)
    cdt = compute_dtype(dtype)
    x = as_array(self, cdt)
    # NaN in the input stays NaN; a NaN bound makes the result NaN (np.maximum propagates it)
    if min is not None:
        x = np.maximum(x, as_array(min, cdt))
    if max is not None:
        x = np.minimum(x, as_array(max, cdt))
    impl = self._impl
    if (not isinstance(min, TensorBase) and not isinstance(max, TensorBase) and 0 not in impl.sizes
            and impl.strides == _ROW_MAJOR.get(impl.sizes)):
        return x, dtype, None  # number bounds and a row-major input: elementwise_strides' first rule
    return x, dtype, elementwise_strides(np.shape(x), _tensors(self, min, max), dtype)


@aten.clamp.default.impl("cpu")
@aten.clamp.Tensor.impl("cpu")
def clamp(self, min=None, max=None):
    return _out(_clamp(self, min, max))


@aten.clamp_.default.impl("cpu")
def clamp_(self, min=None, max=None):
    check_inplace_overlap(self, min, max)
    return _inplace(self, _clamp(self, min, max))


@aten.clamp_min.default.impl("cpu")
def clamp_min(self, min):
    return _out(_clamp(self, min, None, "clamp_min_scalar_cpu"))


@aten.clamp_max.default.impl("cpu")
def clamp_max(self, max):
    return _out(_clamp(self, None, max, "clamp_max_scalar_cpu"))


# -- comparisons and logic -------------------------------------------------------------------------

_COMPARE = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal}


def _register_compare(name, fn):
    ordering = name in COMPLEX_REFUSALS  # (lt, le, gt, ge: complex numbers have no order)

    def kernel(self, other):
        if ordering:
            refuse_complex(name, self, other)
        return _out(binary(fn, self, other, "bool"))

    kernel.__name__ = name
    getattr(aten, name).Tensor.impl("cpu")(kernel)
    getattr(aten, name).Scalar.impl("cpu")(kernel)


for _name, _fn in _COMPARE.items():
    _register_compare(_name, _fn)


def _logical(fn):
    return lambda self, other: _out(binary(lambda x, y: fn(x != 0, y != 0), self, other, "bool"))


aten.logical_and.default.impl("cpu")(_logical(np.logical_and))
aten.logical_or.default.impl("cpu")(_logical(np.logical_or))
aten.logical_xor.default.impl("cpu")(_logical(np.logical_xor))


@aten.logical_not.default.impl("cpu")
def logical_not(self):
    return _out(unary(np.logical_not, self, "bool"))


def _bitwise(fn, name):
    def kernel(self, other):
        d = result_type(self, other)
        if d.is_floating_point or d.is_complex:
            raise not_implemented(f"{name}_cpu", d)
        return _out(binary(fn, self, other))

    return kernel


aten.bitwise_and.Tensor.impl("cpu")(_bitwise(np.bitwise_and, "bitwise_and"))
aten.bitwise_or.Tensor.impl("cpu")(_bitwise(np.bitwise_or, "bitwise_or"))
aten.bitwise_xor.Tensor.impl("cpu")(_bitwise(np.bitwise_xor, "bitwise_xor"))


@aten.bitwise_not.default.impl("cpu")
def bitwise_not(self):
    if self.dtype.is_floating_point:
        raise not_implemented("bitwise_not_cpu", self.dtype)
    return _out(unary(np.invert, self))


@aten.where.self.impl("cpu")
def where(condition, self, other):
    if condition.dtype not in (dt.bool, dt.uint8):
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype {condition.dtype.name.capitalize()}")
    dtype = result_type(self, other)
    cdt = compute_dtype(dtype)
    try:
        r = np.where(as_array(condition).astype(bool), as_array(self, cdt), as_array(other, cdt))
    except ValueError:
        numpy_broadcast_error(condition, self, other)
        raise
    # the condition is read as bool, the values in their common dtype (each converted first if needed)
    operands = [converted_geometry(condition, dt.bool)]
    operands += [converted_geometry(x, dtype) if isinstance(x, TensorBase) else x for x in (self, other)]
    return wrap_strided(r, dtype, elementwise_strides(np.shape(r), operands))


def _masked_fill(self, mask, value):
    if mask.dtype is not dt.bool:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype {mask.dtype.name}")
    if isinstance(value, TensorBase):
        if value.dim() != 0:
            raise RuntimeError(
                f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {value.dim()} dimension(s)."
            )
        value = value.item()
    value = real_scalar(value, self.dtype)
    cdt = compute_dtype(self.dtype)
    # (PyTorch clones ``self`` contiguously and fills it: the result is contiguous, strides None)
    return np.where(as_array(mask), np.asarray(value).astype(cdt.numpy_dtype), as_array(self, cdt)), self.dtype, None


@aten.masked_fill.Scalar.impl("cpu")
@aten.masked_fill.Tensor.impl("cpu")
def masked_fill(self, mask, value):
    return _out(_masked_fill(self, mask, value))


@aten.masked_fill_.Scalar.impl("cpu")
@aten.masked_fill_.Tensor.impl("cpu")
def masked_fill_(self, mask, value):
    if has_internal_overlap(self):
        warn_user(
            "Use of masked_fill_ on expanded tensors is deprecated. Please clone() the tensor before "
            "performing this operation. This also applies to advanced indexing e.g. tensor[mask] = scalar",
        )
    check_inplace_overlap(self, mask, internal=False)
    r, _, _ = _masked_fill(self, mask, value)
    return write_into(self, r)
