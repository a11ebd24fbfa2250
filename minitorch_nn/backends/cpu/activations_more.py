"""Activation cpu kernels that PyTorch runs as one op of their own, and their backward ops:
``hardswish``, ``hardsigmoid``, ``mish``, ``log_sigmoid_forward``, ``celu``, ``glu``, and
``hardswish_backward``, ``hardsigmoid_backward``, ``mish_backward``, ``log_sigmoid_backward``,
``elu_backward`` (celu's), ``glu_backward``; and prelu's ``_prelu_kernel`` and
``_prelu_kernel_backward``.

Mirrors PyTorch's ``aten/src/ATen/native/Activation.cpp``, ``GatedLinearUnit.cpp`` and their cpu
kernels in ``native/cpu/Activation.cpp``/``GluKernel.cpp``: each expression below is the one those
kernels evaluate, in the same order, so that results round the same way. Because these are single
ops, ``F.hardswish(x).grad_fn`` is ``HardswishBackward0`` and a dispatch mode sees
``aten.hardswish`` (not the ``add``/``hardtanh``/``mul``/``div`` it could be written with).

Like ``activations.py`` they reuse ``pointwise.py``'s ``unary``/``binary`` (PyTorch's dtype rule,
result layout, 16-bit floats computed in float32) and refuse integer inputs by kernel name.
"""

from __future__ import annotations

import numpy as np

from minitorch_nn import _dtype as dt
from minitorch_nn._ops import aten
from minitorch_nn._shape import wrap_dim
from minitorch_nn.backends.common import compute_dtype, result_type
from minitorch_nn.backends.cpu._numpy import as_array, wrap, wrap_strided
from minitorch_nn.backends.cpu.pointwise import _float_only, _out, _sigmoid, binary, unary
from minitorch_nn.backends.layout import elementwise_strides


def _c(value, x):
    """``value`` as a 0-d array of ``x``'s dtype (so numpy does not widen float32 to float64)."""
    return np.asarray(value, dtype=x.dtype)


# -- hardswish, hardsigmoid -------------------------------------------------------------------------


@aten.hardswish.default.impl("cpu")
def hardswish(self):
    _float_only(self, "hardswish_cpu")
    # x * min(max(x + 3, 0), 6) / 6
    return _out(unary(lambda x: x * np.minimum(np.maximum(x + _c(3, x), _c(0, x)), _c(6, x)) / _c(6, x),
                      self, "float"))


@aten.hardswish_backward.default.impl("cpu")
def hardswish_backward(grad_output, self):
    _float_only(self, "hardswish_backward_cpu")

    def fn(g, x):
        # 0 up to -3 (inclusive), g * (x / 3 + 0.5) strictly between -3 and 3, g from 3 on (and for NaN)
        mid = g * (x / _c(3, x) + _c(0.5, x))
        return np.where(x <= -3, np.zeros((), g.dtype), np.where(x < 3, mid, g))

    return _out(binary(fn, grad_output, self))


@aten.hardsigmoid.default.impl("cpu")
def hardsigmoid(self):
    _float_only(self, "hardsigmoid_cpu")
    return _out(unary(lambda x: np.minimum(np.maximum(x + _c(3, x), _c(0, x)), _c(6, x)) / _c(6, x),
                      self, "float"))


_ONE_SIXTH = float(np.float32(1.0) / np.float32(6.0))


@aten.hardsigmoid_backward.default.impl("cpu")
def hardsigmoid_backward(grad_output, self):
    _float_only(self, "hardsigmoid_backward_cpu")

    def fn(g, x):
        # PyTorch multiplies by 1/6 rounded to float32 here, whatever the dtype (the forward divides by 6)
        inside = (x > -3) & (x < 3)
        return np.where(inside, g * _c(_ONE_SIXTH, g), np.zeros((), g.dtype))

    return _out(binary(fn, grad_output, self))


# -- mish -------------------------------------------------------------------------------------------


@aten.mish.default.impl("cpu")
def mish(self):
    _float_only(self, "mish_cpu")
    # x * tanh(softplus(x)) with softplus written log1p(exp(x)), no threshold (as PyTorch's kernel)
    return _out(unary(lambda x: x * np.tanh(np.log1p(np.exp(x))), self, "float"))


@aten.mish_backward.default.impl("cpu")
def mish_backward(grad_output, self):
    _float_only(self, "mish_backward_cpu")

    def fn(g, x):
        t = np.tanh(np.log1p(np.exp(x)))
        return g * (t + x * _sigmoid(x) * (_c(1, x) - t * t))

    return _out(binary(fn, grad_output, self))


# -- log_sigmoid ------------------------------------------------------------------------------------


@aten.log_sigmoid_forward.default.impl("cpu")
def log_sigmoid_forward(self):
    """(output, buffer): ``min(x, 0) - log1p(exp(-|x|))`` and the ``exp(-|x|)`` it used, which
    the backward reads again (PyTorch's cpu kernel fills the buffer the same way)."""
    _float_only(self, "log_sigmoid_cpu")
    # (both row-major whatever the input's layout, as PyTorch allocates them)
    buffer = _contiguous(unary(lambda x: np.exp(-np.abs(x)), self, "float"))
    output = _contiguous(unary(lambda x: np.minimum(x, _c(0, x)) - np.log1p(np.exp(-np.abs(x))), self, "float"))
    return output, buffer


def _contiguous(triple):
    values, dtype, _ = triple
    # (not np.ascontiguousarray, which turns a 0-d array into a 1-d one)
    return wrap(values if values.flags.c_contiguous else values.copy(order="C"), dtype)


@aten.log_sigmoid_backward.default.impl("cpu")
def log_sigmoid_backward(grad_output, self, buffer):
    _float_only(self, "log_sigmoid_backward_cpu")
    stored = buffer.dtype.numpy_dtype if buffer.dtype in (dt.float16, dt.bfloat16) else None

    def fn(g, x):
        # d/dx [min(x, 0) - log1p(exp(-|x|))] = [x < 0] - sign * z / (1 + z), sign = +1 if x < 0 else -1.
        # z is the buffer's exp(-|x|), recomputed here (the same bits, rounded to a 16-bit
        # buffer's dtype as the buffer is) so that one numpy pass sees all three operands
        z = np.exp(-np.abs(x))
        if stored is not None:
            z = z.astype(stored).astype(x.dtype)
        neg = x < 0
        max_deriv = np.where(neg, _c(1, x), _c(0, x))
        sign = np.where(neg, _c(1, x), _c(-1, x))
        return (max_deriv - sign * (z / (_c(1, z) + z))) * g

    # laid out as an elementwise result of all three operands (PyTorch's TensorIterator)
    values, d, _ = binary(fn, grad_output, self)
    return wrap_strided(values, d, elementwise_strides(values.shape, [grad_output, self, buffer], d))


# -- celu (elu with input_scale = 1 / alpha) and elu_backward -----------------------------------------


@aten.celu.default.impl("cpu")
def celu(self, alpha=1.0):
    if float(alpha) == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return aten.elu.default.kernel_for("cpu")(self, alpha, 1.0, 1.0 / float(alpha))


@aten.elu_backward.default.impl("cpu")
def elu_backward(grad_output, alpha, scale, input_scale, is_result, self_or_result):
    _float_only(self_or_result, "elu_backward_cpu")
    if is_result and float(alpha) < 0:
        raise RuntimeError("In-place elu backward calculation is triggered with a negative slope which is not "
                           "supported. This is caused by calling in-place forward function with a negative slope, "
                           "please call out-of-place version instead.")
    negcoef, poscoef, negiptcoef = float(alpha) * float(scale), float(scale), float(input_scale)

    def fn(g, x):
        if is_result:   # x is elu's output: exp(x * input_scale) * negcoef == x + negcoef there
            neg = g * _c(negiptcoef, x) * (x + _c(negcoef, x))
        else:
            neg = g * _c(negiptcoef, x) * _c(negcoef, x) * np.exp(x * _c(negiptcoef, x))
        return np.where(x <= 0, neg, g * _c(poscoef, x))

    return _out(binary(fn, grad_output, self_or_result))


# -- glu --------------------------------------------------------------------------------------------


def check_glu(self, dim):
    """PyTorch's checks for glu; returns ``dim`` wrapped to a non-negative dim."""
    if self.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = wrap_dim(dim, self.dim())
    n = self.shape[d]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {n}")
    return d


def _halves(x, d):
    n = x.shape[d] // 2
    return np.take(x, range(n), axis=d), np.take(x, range(n, 2 * n), axis=d)


@aten.glu.default.impl("cpu")
def glu(self, dim=-1):
    d = check_glu(self, dim)
    _float_only(self, "glu_cpu")
    a, b = _halves(as_array(self, compute_dtype(self.dtype)), d)
    one = _c(1, a)
    return wrap(a * (one / (one + np.exp(-b))), self.dtype)   # a * sigmoid(b), sigmoid written out


@aten.glu_backward.default.impl("cpu")
def glu_backward(grad_output, self, dim):
    d = check_glu(self, dim)
    _float_only(self, "glu_backward_cpu")
    cd = compute_dtype(self.dtype)
    a, b = _halves(as_array(self, cd), d)
    g = as_array(grad_output, cd)
    one = _c(1, a)
    s = one / (one + np.exp(-b))
    if cd is not self.dtype:   # PyTorch stores sigmoid(b) in the 16-bit result first, then reads it back
        s = s.astype(self.dtype.numpy_dtype).astype(s.dtype)
    # d/da = sigmoid(b) * g; d/db = (1 - sigmoid(b)) * sigmoid(b) * a * g (PyTorch's order of products)
    return wrap(np.concatenate([s * g, (one - s) * s * a * g], axis=d), self.dtype)


# -- prelu (F.prelu views the weight to broadcast over dim 1, then calls _prelu_kernel) ---------------


@aten._prelu_kernel.default.impl("cpu")
def _prelu_kernel(self, weight):
    _float_only(self, "prelu_cpu")
    return _out(binary(lambda x, w: np.where(x > 0, x, w * x), self, weight))


@aten._prelu_kernel_backward.default.impl("cpu")
def _prelu_kernel_backward(grad_output, self, weight):
    """(grad_input, grad_weight), both of the broadcast shape: autograd sums the weight's down."""
    _float_only(self, "prelu_backward_cpu")
    d = result_type(grad_output, self, weight)
    cd = compute_dtype(d)
    g, xs, w = np.broadcast_arrays(as_array(grad_output, cd), as_array(self, cd), as_array(weight, cd))
    positive = xs > 0
    gi = np.where(positive, g, w * g)
    gw = np.where(positive, np.zeros((), cd.numpy_dtype), xs * g)
    strides = elementwise_strides(gi.shape, [grad_output, self, weight], d)
    return wrap_strided(gi, d, strides), wrap_strided(gw, d, strides)
