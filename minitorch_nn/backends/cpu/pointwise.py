"""Elementwise cpu kernels: arithmetic, math functions, comparisons, activations.

Mirrors PyTorch's ``aten/src/ATen/native/BinaryOps.cpp``/``UnaryOps.cpp`` (the cpu kernels).
Each op is a numpy ufunc plus PyTorch's dtype rule:

* ``promote``: the result has the promoted dtype of the operands (``add``, ``mul``, ``maximum``);
* ``float``: integer inputs give the default float dtype (``div``, ``exp``, ``sigmoid``);
* ``bool``: the result is bool (comparisons, logical ops).

numpy broadcasts exactly like PyTorch, so the kernels only decide dtypes. In-place variants
(``add_``) compute the same result and write it into ``self``, after PyTorch's cast check.
"""

from __future__ import annotations

import numpy as np

from minitorch_nn import _dtype as dt
from minitorch_nn._C import TensorBase
from minitorch_nn._ops import aten
from minitorch_nn.backends.common import check_inplace_cast, compute_dtype, result_type
from minitorch_nn.backends.cpu._numpy import as_array, numpy_broadcast_error, wrap, write_into


def _float_result(d: dt.dtype) -> dt.dtype:
    return d if d.is_floating_point else dt.get_default_dtype()


def binary(fn, a, b, kind="promote"):
    """Apply numpy ``fn`` to two operands with PyTorch's dtype rule ``kind``; returns (array, dtype)."""
    dtype = result_type(a, b)
    if kind == "float":
        dtype = _float_result(dtype)
    cdt = compute_dtype(dtype)
    try:
        with np.errstate(all="ignore"):
            r = fn(as_array(a, cdt), as_array(b, cdt))
    except ValueError:
        numpy_broadcast_error(a, b)
        raise
    return r, (dt.bool if kind == "bool" else dtype)


def unary(fn, a, kind="promote"):
    dtype = a.dtype if kind != "float" else _float_result(a.dtype)
    cdt = compute_dtype(dtype)
    with np.errstate(all="ignore"):
        r = fn(as_array(a, cdt))
    return r, (dt.bool if kind == "bool" else dtype)


def _out(pair):
    return wrap(*pair)


def _inplace(self, pair):
    r, dtype = pair
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
    d = result_type(a, b)
    if not d.is_floating_point and isinstance(alpha, float) and not float(alpha).is_integer():
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    if d is dt.bool and isinstance(alpha, (int, float)) and not isinstance(alpha, bool) and alpha not in (0, 1):
        raise RuntimeError("Boolean alpha only supported for Boolean results.")


def _add(a, b, alpha=1):
    _check_alpha(a, b, alpha)
    if alpha == 1:
        return binary(np.add, a, b)
    return binary(lambda x, y: x + y * np.asarray(alpha, dtype=y.dtype if hasattr(y, "dtype") else None), a, b)


def _check_sub_bool(a, b):
    if result_type(a, b) is dt.bool:
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. "
            "Use the `^` or `logical_xor()` operator instead."
        )


def _sub(a, b, alpha=1):
    _check_sub_bool(a, b)
    _check_alpha(a, b, alpha)
    if alpha == 1:
        return binary(np.subtract, a, b)
    return binary(lambda x, y: x - y * np.asarray(alpha, dtype=y.dtype if hasattr(y, "dtype") else None), a, b)


@aten.add.Tensor.impl("cpu")
def add(self, other, *, alpha=1):
    return _out(_add(self, other, alpha))


@aten.add_.Tensor.impl("cpu")
def add_(self, other, *, alpha=1):
    return _inplace(self, _add(self, other, alpha))


@aten.sub.Tensor.impl("cpu")
def sub(self, other, *, alpha=1):
    return _out(_sub(self, other, alpha))


@aten.sub_.Tensor.impl("cpu")
def sub_(self, other, *, alpha=1):
    return _inplace(self, _sub(self, other, alpha))


@aten.rsub.Scalar.impl("cpu")
@aten.rsub.Tensor.impl("cpu")
def rsub(self, other, alpha=1):
    return _out(_sub(other, self, alpha))


@aten.mul.Tensor.impl("cpu")
def mul(self, other):
    return _out(binary(np.multiply, self, other))


@aten.mul_.Tensor.impl("cpu")
def mul_(self, other):
    return _inplace(self, binary(np.multiply, self, other))


def _div(a, b, rounding_mode=None):
    if rounding_mode is None:
        return binary(np.true_divide, a, b, "float")
    if rounding_mode == "trunc":
        fn = lambda x, y: np.trunc(np.true_divide(x, y)) if np.asarray(x).dtype.kind == "f" else _int_trunc_div(x, y)
    elif rounding_mode == "floor":
        fn = np.floor_divide
    else:
        raise RuntimeError(
            f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'"
        )
    return binary(fn, a, b)


def _int_trunc_div(x, y):
    q = np.floor_divide(x, y)
    fix = (np.remainder(x, y) != 0) & ((np.asarray(x) < 0) != (np.asarray(y) < 0))
    return q + fix


@aten.div.Tensor.impl("cpu")
def div(self, other):
    return _out(_div(self, other))


@aten.div.Tensor_mode.impl("cpu")
def div_mode(self, other, *, rounding_mode):
    return _out(_div(self, other, rounding_mode))


@aten.div_.Tensor.impl("cpu")
def div_(self, other):
    return _inplace(self, _div(self, other))


@aten.div_.Tensor_mode.impl("cpu")
def div_mode_(self, other, *, rounding_mode):
    return _inplace(self, _div(self, other, rounding_mode))


@aten.remainder.Tensor.impl("cpu")
@aten.remainder.Scalar.impl("cpu")
def remainder(self, other):
    return _out(binary(np.remainder, self, other))


@aten.fmod.Scalar.impl("cpu")
def fmod(self, other):
    return _out(binary(np.fmod, self, other))


@aten.floor_divide.default.impl("cpu")
def floor_divide(self, other):
    return _out(binary(np.floor_divide, self, other))


def _pow(a, b):
    def fn(x, y):
        if np.asarray(x).dtype.kind in "iu" and np.any(np.asarray(y) < 0):
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        return np.power(x, y)

    return binary(fn, a, b)


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
    return _inplace(self, _pow(self, exponent))


@aten.maximum.default.impl("cpu")
def maximum(self, other):
    return _out(binary(np.maximum, self, other))


@aten.minimum.default.impl("cpu")
def minimum(self, other):
    return _out(binary(np.minimum, self, other))


@aten.atan2.default.impl("cpu")
def atan2(self, other):
    return _out(binary(np.arctan2, self, other, "float"))


def _lerp(start, end, weight):
    def fn(s, e):
        w = as_array(weight, compute_dtype(result_type(start, end))) if isinstance(weight, TensorBase) else weight
        # PyTorch's formula switches ends at weight 0.5 for accuracy
        return np.where(np.abs(w) < 0.5, s + w * (e - s), e - (e - s) * (1 - w))

    return binary(fn, start, end)


@aten.lerp.Scalar.impl("cpu")
@aten.lerp.Tensor.impl("cpu")
def lerp(self, end, weight):
    return _out(_lerp(self, end, weight))


@aten.lerp_.Scalar.impl("cpu")
def lerp_(self, end, weight):
    return _inplace(self, _lerp(self, end, weight))


def _addc(self, t1, t2, value, op):
    dtype = result_type(self, t1, t2)
    cdt = compute_dtype(dtype)
    with np.errstate(all="ignore"):
        r = as_array(self, cdt) + np.asarray(value, dtype=cdt.numpy_dtype) * op(as_array(t1, cdt), as_array(t2, cdt))
    return r, dtype


@aten.addcmul.default.impl("cpu")
def addcmul(self, tensor1, tensor2, *, value=1):
    return _out(_addc(self, tensor1, tensor2, value, np.multiply))


@aten.addcdiv.default.impl("cpu")
def addcdiv(self, tensor1, tensor2, *, value=1):
    return _out(_addc(self, tensor1, tensor2, value, np.true_divide))


@aten.addcmul_.default.impl("cpu")
def addcmul_(self, tensor1, tensor2, *, value=1):
    return _inplace(self, _addc(self, tensor1, tensor2, value, np.multiply))


@aten.addcdiv_.default.impl("cpu")
def addcdiv_(self, tensor1, tensor2, *, value=1):
    return _inplace(self, _addc(self, tensor1, tensor2, value, np.true_divide))


# -- unary math ---------------------------------------------------------------------------------

def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _erf(x):
    from scipy import special

    return special.erf(x)


def _erfc(x):
    from scipy import special

    return special.erfc(x)


def _erfinv(x):
    from scipy import special

    return special.erfinv(x)


_FLOAT_UNARY = {
    "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2,
    "log10": np.log10, "log1p": np.log1p, "sqrt": np.sqrt, "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "sigmoid": _sigmoid,
    "erf": _erf, "erfc": _erfc, "erfinv": _erfinv, "reciprocal": np.reciprocal,
}

_SAME_UNARY = {
    "abs": np.abs, "sign": np.sign, "floor": np.floor, "ceil": np.ceil, "round": np.round,
    "trunc": np.trunc, "frac": lambda x: x - np.trunc(x),
}


def _register_unary(name, fn, kind):
    def kernel(self):
        return _out(unary(fn, self, kind))

    def kernel_(self):
        return _inplace(self, unary(fn, self, kind))

    kernel.__name__ = name
    kernel_.__name__ = name + "_"
    getattr(aten, name).default.impl("cpu")(kernel)
    packet = getattr(aten, name + "_", None) if name + "_" in aten._packets else None
    if packet is not None:
        packet.default.impl("cpu")(kernel_)


for _name, _fn in _FLOAT_UNARY.items():
    _register_unary(_name, _fn, "float")
for _name, _fn in _SAME_UNARY.items():
    _register_unary(_name, _fn, "promote")


@aten.neg.default.impl("cpu")
def neg(self):
    _check_neg(self)
    return _out(unary(np.negative, self))


@aten.neg_.default.impl("cpu")
def neg_(self):
    _check_neg(self)
    return _inplace(self, unary(np.negative, self))


def _check_neg(self):
    if self.dtype is dt.bool:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead."
        )


@aten.round.decimals.impl("cpu")
def round_decimals(self, *, decimals):
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
    return _out(unary(lambda x: np.nan_to_num(x, nan=0.0 if nan is None else nan, posinf=posinf, neginf=neginf), self))


# -- clamp ----------------------------------------------------------------------------------------

def _clamp(self, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    dtype = result_type(self, min, max)
    cdt = compute_dtype(dtype)
    x = as_array(self, cdt)
    with np.errstate(invalid="ignore"):
        if min is not None:
            x = np.where(np.isnan(x) if cdt.is_floating_point else False, x, np.maximum(x, as_array(min, cdt)))
        if max is not None:
            x = np.where(np.isnan(x) if cdt.is_floating_point else False, x, np.minimum(x, as_array(max, cdt)))
    return x, dtype


@aten.clamp.default.impl("cpu")
@aten.clamp.Tensor.impl("cpu")
def clamp(self, min=None, max=None):
    return _out(_clamp(self, min, max))


@aten.clamp_.default.impl("cpu")
def clamp_(self, min=None, max=None):
    return _inplace(self, _clamp(self, min, max))


@aten.clamp_min.default.impl("cpu")
def clamp_min(self, min):
    return _out(_clamp(self, min, None))


@aten.clamp_max.default.impl("cpu")
def clamp_max(self, max):
    return _out(_clamp(self, None, max))


# -- activations ----------------------------------------------------------------------------------

@aten.relu.default.impl("cpu")
def relu(self):
    if self.dtype is dt.bool:
        raise RuntimeError('"clamp_min_cpu" not implemented for \'Bool\'')
    return _out(unary(lambda x: np.maximum(x, np.zeros((), dtype=x.dtype)), self))


@aten.relu_.default.impl("cpu")
def relu_(self):
    return _inplace(self, unary(lambda x: np.maximum(x, np.zeros((), dtype=x.dtype)), self))


@aten.gelu.default.impl("cpu")
def gelu(self, *, approximate="none"):
    if approximate == "none":
        fn = lambda x: x * 0.5 * (1.0 + _erf(x * np.asarray(0.7071067811865476, dtype=x.dtype)))
    elif approximate == "tanh":
        k = np.sqrt(2.0 / np.pi)
        fn = lambda x: 0.5 * x * (1.0 + np.tanh(np.asarray(k, x.dtype) * (x + np.asarray(0.044715, x.dtype) * x * x * x)))
    else:
        raise RuntimeError(f"approximate argument must be either none or tanh.")
    return _out(unary(fn, self, "float"))


@aten.silu.default.impl("cpu")
def silu(self):
    return _out(unary(lambda x: x * _sigmoid(x), self, "float"))


@aten.softplus.default.impl("cpu")
def softplus(self, beta=1, threshold=20):
    fn = lambda x: np.where(x * beta > threshold, x, np.log1p(np.exp(x * beta)) / beta)
    return _out(unary(fn, self, "float"))


@aten.elu.default.impl("cpu")
def elu(self, alpha=1, scale=1, input_scale=1):
    fn = lambda x: np.where(x > 0, x * scale, alpha * scale * np.expm1(x * input_scale))
    return _out(unary(fn, self, "float"))


@aten.leaky_relu.default.impl("cpu")
def leaky_relu(self, negative_slope=0.01):
    return _out(unary(lambda x: np.where(x > 0, x, x * np.asarray(negative_slope, x.dtype)), self))


@aten.hardtanh.default.impl("cpu")
def hardtanh(self, min_val=-1, max_val=1):
    return _out(unary(lambda x: np.clip(x, min_val, max_val), self))


@aten.threshold_backward.default.impl("cpu")
def threshold_backward(grad_output, self, threshold):
    def fn(g, x):
        return np.where(x <= threshold, np.zeros((), g.dtype), g)

    return _out(binary(fn, grad_output, self))


# -- comparisons and logic -------------------------------------------------------------------------

_COMPARE = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal}


def _register_compare(name, fn):
    def kernel(self, other):
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
        if result_type(self, other).is_floating_point:
            raise RuntimeError(f'"{name}_cpu" not implemented for \'Float\'')
        return _out(binary(fn, self, other))

    return kernel


aten.bitwise_and.Tensor.impl("cpu")(_bitwise(np.bitwise_and, "bitwise_and"))
aten.bitwise_or.Tensor.impl("cpu")(_bitwise(np.bitwise_or, "bitwise_or"))
aten.bitwise_xor.Tensor.impl("cpu")(_bitwise(np.bitwise_xor, "bitwise_xor"))


@aten.bitwise_not.default.impl("cpu")
def bitwise_not(self):
    if self.dtype.is_floating_point:
        raise RuntimeError("\"bitwise_not_cpu\" not implemented for 'Float'")
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
    return wrap(r, dtype)


def _masked_fill(self, mask, value):
    if mask.dtype is not dt.bool:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype {mask.dtype.name}")
    if isinstance(value, TensorBase):
        if value.dim() != 0:
            raise RuntimeError(
                f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {value.dim()} dimension(s)."
            )
        value = value.item()
    cdt = compute_dtype(self.dtype)
    return np.where(as_array(mask), np.asarray(value).astype(cdt.numpy_dtype), as_array(self, cdt)), self.dtype


@aten.masked_fill.Scalar.impl("cpu")
@aten.masked_fill.Tensor.impl("cpu")
def masked_fill(self, mask, value):
    return _out(_masked_fill(self, mask, value))


@aten.masked_fill_.Scalar.impl("cpu")
@aten.masked_fill_.Tensor.impl("cpu")
def masked_fill_(self, mask, value):
    r, _ = _masked_fill(self, mask, value)
    return write_into(self, r)
