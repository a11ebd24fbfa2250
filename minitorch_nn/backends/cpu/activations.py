"""Activation cpu kernels: relu, gelu, silu, softplus, elu, leaky_relu, hardtanh, and the backward
kernels ``threshold_backward`` (relu's), ``tanh_backward`` and ``sigmoid_backward``.

Mirrors PyTorch's ``aten/src/ATen/native/Activation.cpp`` (with its cpu kernels in
``native/cpu/Activation.cpp``). They are elementwise ops like those of ``pointwise.py`` and reuse
its machinery: ``unary``/``binary`` compute a result triple ``(values, dtype, strides)`` with
PyTorch's dtype rule and result layout, ``_out`` wraps it, ``_inplace`` writes it into ``self``.
Like PyTorch, most activations refuse integer inputs (``_float_only``) and name the cpu kernel
that is "not implemented" for that dtype.
"""

from __future__ import annotations

import numpy as np

from minitorch_nn import _dtype as dt
from minitorch_nn._ops import aten
from minitorch_nn.backends.common import compute_dtype
from minitorch_nn.backends.cpu._numpy import as_array
from minitorch_nn.backends.cpu.complex import refuse_complex
from minitorch_nn.backends.cpu.pointwise import (
    _erf,
    _float_only,
    _inplace,
    _out,
    _sigmoid,
    binary,
    unary,
)
from minitorch_nn.backends.layout import check_inplace_overlap

# The backward kernels below (tanh_backward, sigmoid_backward, threshold_backward) have compiled
# twins in _ext/_grad_kernels.pyx, which autograd/derivatives.py calls in a backward pass while
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


@aten.gelu.default.impl("cpu")
def gelu(self, *, approximate="none"):
    _float_only(self, "GeluKernelImpl")
    if approximate == "none":
        fn = lambda x: x * 0.5 * (1.0 + _erf(x * np.asarray(0.7071067811865476, dtype=x.dtype)))
    elif approximate == "tanh":
        k = np.sqrt(2.0 / np.pi)
        fn = lambda x: 0.5 * x * (1.0 + np.tanh(np.asarray(k, x.dtype) * (x + np.asarray(0.044715, x.dtype) * x * x * x)))
    else:
        raise RuntimeError("approximate argument must be either none or tanh.")
    return _out(unary(fn, self, "float"))


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
