"""Activation cpu kernels: relu, gelu, silu, softplus, elu, leaky_relu, hardtanh, and the backward
kernels ``threshold_backward`` (relu's), ``gelu_backward``, ``tanh_backward`` and ``sigmoid_backward``.

Mirrors PyTorch's ``aten/src/ATen/native/Activation.cpp`` (with its cpu kernels in
``native/cpu/Activation.cpp``). They are elementwise ops like those of ``pointwise.py`` and reuse
its machinery: ``unary``/``binary`` compute a result triple ``(values, dtype, strides)`` with
PyTorch's dtype rule and result layout, ``_out`` wraps it, ``_inplace`` writes it into ``self``.
Like PyTorch, most activations refuse integer inputs (``_float_only``) and name the cpu kernel
that is "not implemented" for that dtype.

GELU and its backward compute what PyTorch's scalar cpu loop computes (``native/cpu/Gelu.h``,
``Activation.cpp``): the same operations in the same order, in the tensor's dtype, with the C
library's ``erf``/``exp``/``tanh`` (``libm.py``). That is PyTorch's result, bit for bit, for every
strided input and every float64 input's tail; on a contiguous float32 tensor PyTorch hands GELU to
oneDNN, whose polynomial erf differs in the last bits (about a third of the elements at the
scale of a transformer's activations). ``_gelu_values`` and ``_gelu_backward_values`` have a
compiled twin, ``_ext/twins/backends/cpu/activations.pyx``, which makes the same operations in one
pass; it is bound in their place while the switch ``backends.compiled`` is on (end of this file).
"""

from __future__ import annotations

import sys

import numpy as np

from minitorch_nn import _dtype as dt
from minitorch_nn._ops import aten
from minitorch_nn.backends import compiled
from minitorch_nn.backends.common import compute_dtype, not_implemented, result_type
from minitorch_nn.backends.cpu import libm
from minitorch_nn.backends.cpu._numpy import as_array
from minitorch_nn.backends.cpu.complex import refuse_complex
from minitorch_nn.backends.cpu.pointwise import (
    _float_only,
    _inplace,
    _out,
    _sigmoid,
    binary,
    unary,
)
from minitorch_nn.backends.layout import check_inplace_overlap

# The backward kernels below (tanh_backward, sigmoid_backward, threshold_backward) have compiled
# twins in _ext/twins/backends/cpu/activations.pyx, which autograd/derivatives.py calls in a backward pass while
# the switch (backends.compiled) is on and these kernels are unchanged. The kernels here are the
# reference and call nothing compiled.


def _relu(x):
    return np.maximum(x, np.zeros((), dtype=x.dtype))


def _check_relu(self):
    if self._impl.dtype is dt.bool:
        raise RuntimeError("Boolean inputs not supported for relu")
    if self._impl.dtype.is_complex:
        refuse_complex("clamp", self)  # (PyTorch's relu is a clamp, and says so)


@aten.relu.default.impl("cpu")
def relu(self):
    _check_relu(self)
    return _out(unary(_relu, self))


@aten.relu_.default.impl("cpu")
def relu_(self):
    _check_relu(self)
    check_inplace_overlap(self)
    return _inplace(self, unary(_relu, self))


# GELU's constants, as PyTorch writes them (C's M_SQRT1_2, M_2_SQRTPI, M_SQRT2, folded in double);
# each is rounded to the tensor's dtype before use, as PyTorch's scalar_t(...) does.
_SQRT1_2 = 0.7071067811865476                                 # 1 / sqrt(2)
_PDF_SCALE = 1.1283791670955126 * 0.7071067811865476 * 0.5    # 1 / sqrt(2 pi)
_TANH_BETA = 1.4142135623730951 * 1.1283791670955126 * 0.5    # sqrt(2 / pi)
_TANH_KAPPA = 0.044715


def _check_approximate(approximate):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")


def _gelu_values(x, approximate):
    """GELU of a float32 or float64 array (16-bit tensors arrive in float32): ``x * Phi(x)``, with
    the normal CDF ``Phi(x) = (1 + erf(x / sqrt(2))) / 2``, or its tanh approximation.

    Written as PyTorch's scalar loop writes it: every operation rounded to x's dtype (numpy does
    that for an array times a scalar of its own dtype), left to right."""
    c = x.dtype.type
    if approximate == "tanh":
        inner = c(_TANH_BETA) * (x + c(_TANH_KAPPA) * (x * x * x))
        return c(0.5) * x * (c(1) + libm.tanh(inner))
    return x * c(0.5) * (c(1) + libm.erf(x * c(_SQRT1_2)))


def _gelu_backward_values(grad, x, approximate):
    """``grad`` times GELU's derivative at ``x``: ``Phi(x) + x * phi(x)``, with the normal density
    ``phi(x) = exp(-x**2 / 2) / sqrt(2 pi)`` (or the tanh approximation's derivative), in the
    order PyTorch's scalar loop computes it."""
    c = x.dtype.type
    if approximate == "tanh":
        x_sq = x * x
        x_cube = x_sq * x
        inner = c(_TANH_BETA) * (x + c(_TANH_KAPPA) * x_cube)
        t = libm.tanh(inner)
        left = c(0.5) * x
        right = c(1) + t
        left_derivative = c(0.5) * right
        tanh_derivative = c(1) - t * t
        inner_derivative = c(_TANH_BETA) * (c(1) + c(3) * c(_TANH_KAPPA) * x_sq)
        right_derivative = left * tanh_derivative * inner_derivative
        return grad * (left_derivative + right_derivative)
    cdf = c(0.5) * (c(1) + libm.erf(x * c(_SQRT1_2)))
    pdf = c(_PDF_SCALE) * libm.exp(x * x * c(-0.5))
    return grad * (cdf + x * pdf)


@aten.gelu.default.impl("cpu")
def gelu(self, *, approximate="none"):
    _float_only(self, "GeluKernelImpl")
    _check_approximate(approximate)
    return _out(unary(lambda x: _gelu_values(x, approximate), self, "float"))


@aten.gelu_backward.default.impl("cpu")
def gelu_backward(grad_output, self, *, approximate="none"):
    # (the two promote to a common dtype first: a float gradient for an integer input is fine.
    # PyTorch's oneDNN path fails on mixed float dtypes and on broadcasting; we compute them.)
    dtype = result_type(grad_output, self)
    if not dtype.is_floating_point:
        raise not_implemented("GeluBackwardKernelImpl", dtype)
    _check_approximate(approximate)
    return _out(binary(lambda g, x: _gelu_backward_values(g, x, approximate), grad_output, self))


@aten.silu.default.impl("cpu")
def silu(self):
    _float_only(self, "silu_cpu")
    return _out(unary(lambda x: x * _sigmoid(x), self, "float"))


@aten.softplus.default.impl("cpu")
def softplus(self, beta=1, threshold=20):
    _float_only(self, "softplus_cpu")
    fn = lambda x: np.where(x * beta > threshold, x, np.log1p(np.exp(x * beta)) / beta)
    return _out(unary(fn, self, "float"))


@aten.elu.default.impl("cpu")
def elu(self, alpha=1, scale=1, input_scale=1):
    _float_only(self, "elu_cpu")
    fn = lambda x: np.where(x > 0, x * scale, alpha * scale * np.expm1(x * input_scale))
    return _out(unary(fn, self, "float"))


@aten.leaky_relu.default.impl("cpu")
def leaky_relu(self, negative_slope=0.01):
    _float_only(self, "leaky_relu_cpu")
    return _out(unary(lambda x: _leaky_relu_values(x, negative_slope), self))


def _leaky_relu_values(x, negative_slope):
    """``x`` where ``x > 0``, else ``x * negative_slope`` in x's dtype. (``F.leaky_relu``'s
    compiled twin, ``leaky_relu_values`` in _ext/twins/backends/cpu/activations.pyx, makes the same IEEE
    operations in one pass.)"""
    return np.where(x > 0, x, x * np.asarray(negative_slope, x.dtype))


@aten.hardtanh.default.impl("cpu")
def hardtanh(self, min_val=-1, max_val=1):
    if self.dtype is dt.bool:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    refuse_complex("clamp", self)
    if self.dtype is dt.uint8 and (int(min_val) < 0 or int(max_val) < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    return _out(unary(lambda x: np.minimum(np.maximum(x, as_array(min_val, compute_dtype(self.dtype))),
                                           as_array(max_val, compute_dtype(self.dtype))), self))


_SAME_SIZE_INT = {2: np.int16, 4: np.int32, 8: np.int64}


# tanh's and sigmoid's backward, from their output y: one kernel each, with PyTorch's expressions
# and roundings (16-bit dtypes arrive here in float32, as binary() computes them).


def _tanh_grad(g, y):
    # PyTorch's cpu kernel computes 1 - y*y as one fused multiply-add, rounded once. For float32,
    # computing it in float64 and rounding to float32 gives the same value (but for rare double-
    # rounding ties); float64 has nothing wider, so there the last bit can differ from PyTorch's.
    if y.dtype == np.float32:
        t = y.astype(np.float64)   # (np.multiply(..., dtype=) is slower on small arrays)
        np.multiply(t, t, out=t)   # exact
        np.subtract(1.0, t, out=t)
        return g * t.astype(np.float32)
    if np.iscomplexobj(y):
        return g * np.conj(1 - y * y)  # (the conjugate derivative: PyTorch's complex convention)
    return g * (1 - y * y)


def _sigmoid_grad(g, y):
    if np.iscomplexobj(y):
        return g * np.conj((1 - y) * y)
    return g * (1 - y) * y


def _sigmoid_grad_half(g, y):
    # PyTorch's float16 kernel works in float16 (each step rounded), not in float32
    h = np.float16
    g, y = g.astype(h), y.astype(h)
    return g * (h(1) - y) * y


@aten.tanh_backward.default.impl("cpu")
def tanh_backward(grad_output, output):
    return _out(binary(_tanh_grad, grad_output, output))


@aten.sigmoid_backward.default.impl("cpu")
def sigmoid_backward(grad_output, output):
    half = grad_output.dtype is dt.float16 and output.dtype is dt.float16
    return _out(binary(_sigmoid_grad_half if half else _sigmoid_grad, grad_output, output))


@aten.threshold_backward.default.impl("cpu")
def threshold_backward(grad_output, self, threshold):
    def fn(g, x):
        drop = x <= threshold
        it = _SAME_SIZE_INT.get(g.dtype.itemsize)
        if it is None or g.shape != drop.shape:
            return np.where(drop, np.zeros((), g.dtype), g)
        # np.where branches per element, slow on a random mask (relu's); instead AND g's bits
        # with 0 (dropped) or all ones (kept): the same values, several times faster.
        keep_bits = drop.astype(it)
        keep_bits -= 1
        return np.bitwise_and(g.view(it), keep_bits).view(g.dtype)

    return _out(binary(fn, grad_output, self))


# -- the compiled twin of _gelu_values and _gelu_backward_values ----------------------------------
# While the switch is on, these module attributes are the compiled loops of
# _ext/twins/backends/cpu/activations.pyx (the kernels above look them up at each call); with it
# off, or once one of the originals (or the libm functions they call) was edited, the readable
# functions. A function assigned here by hand stays (compiled.bind leaves it alone).

try:
    from minitorch_nn._twins.backends.cpu import activations as _twin
except ImportError:  # pragma: no cover - a build without the twins
    _twin = None


def _bind_gelu_twins():
    readable_values, readable_backward = _gelu_values, _gelu_backward_values
    libm_functions = (libm.erf, libm.exp, libm.tanh)

    def _libm_unchanged():
        return (libm.erf, libm.exp, libm.tanh) == libm_functions

    def gelu_values(x, approximate):
        r = _twin.gelu_values(x, approximate) if _libm_unchanged() else None
        return readable_values(x, approximate) if r is None else r

    def gelu_backward_values(grad, x, approximate):
        r = _twin.gelu_backward_values(grad, x, approximate) if _libm_unchanged() else None
        return readable_backward(grad, x, approximate) if r is None else r

    module = sys.modules[__name__]
    compiled.bind(module, "_gelu_values", gelu_values, readable_values, mirrors=(readable_values, *libm_functions))
    compiled.bind(module, "_gelu_backward_values", gelu_backward_values, readable_backward,
                  mirrors=(readable_backward, *libm_functions))


if _twin is not None:
    _bind_gelu_twins()
