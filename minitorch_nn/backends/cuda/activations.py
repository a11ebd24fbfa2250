"""Activation functions and ``clamp`` on the GPU: elementwise kernels with parameters.

Mirrors PyTorch's ``Activation*.cu`` kernels (``elu``, ``gelu`` and ``gelu_backward``, ``hardtanh``, ``leaky_relu``,
``softplus``) and ``clamp``. Each is a device function run by ``elementwise.py``'s ``map``.

An activation's parameters (``alpha``, ``beta``...) are fixed for a model's whole life, so they are
*baked into* the device function as constants (``_baked``): one small kernel per parameter set,
cached, like PyTorch's templated functors. ``clamp``'s bounds change from call to call (or are
tensors), so they are operands instead: ``minimum(maximum(x, lo), hi)``, where a NaN bound gives
NaN as on cpu. Integer/bool inputs, which these ops reject or treat specially, take the host path.
"""

from __future__ import annotations

import math

from minitorch_nn import _dtype as dt
from minitorch_nn._C import TensorBase
from minitorch_nn._ops import aten
from minitorch_nn.backends.common import check_inplace_cast, compute_dtype, result_type
from minitorch_nn.backends.layout import check_inplace_overlap
from minitorch_nn.backends.cuda import elementwise as ew
from minitorch_nn.backends.cuda._numba import cuda
from minitorch_nn.backends.cuda.copy import copy_into
from minitorch_nn.backends.cuda.fallback import host_kernel

_BAKED: dict = {}


def _baked(make, *params):
    """``make(*params)``: a device function with the parameters as constants, one per parameter set."""
    key = (make, params)
    if key not in _BAKED:
        _BAKED[key] = make(*params)
    return _BAKED[key]


def make_elu(alpha, scale, input_scale):
    def f(x):
        if x > 0:
            return x * scale
        return alpha * scale * math.expm1(x * input_scale)

    return f


def make_gelu(tanh):
    def f(x):
        if tanh:  # the tanh approximation
            return 0.5 * x * (1.0 + math.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))
        return x * 0.5 * (1.0 + math.erf(x * 0.7071067811865476))

    return f


def make_gelu_backward(tanh):
    def f(g, x):
        if tanh:  # the derivative of the tanh approximation
            inner_derivative = 0.7978845608028654 * (1.0 + 3.0 * 0.044715 * x * x)
            t = math.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))
            return g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * inner_derivative)
        cdf = 0.5 * (1.0 + math.erf(x * 0.7071067811865476))
        pdf = 0.3989422804014327 * math.exp(x * x * -0.5)
        return g * (cdf + x * pdf)

    return f


def make_softplus(beta, threshold):
    def f(x):
        if x * beta > threshold:  # linear there: exp would overflow and adds nothing
            return x
        return math.log1p(math.exp(x * beta)) / beta

    return f


def make_leaky_relu(slope):
    def f(x):
        return x if x > 0 else x * slope

    return f


def _float_unary(op, make, params_of):
    host = host_kernel(op)

    def kernel(self, *args, **kwargs):
        if not self.dtype.is_floating_point:
            return host(self, *args, **kwargs)  # PyTorch's "not implemented for 'Long'"
        params = params_of(*args, **kwargs)
        if params is None:
            return host(self, *args, **kwargs)
        d = self.dtype
        return ew.launch(_baked(make, *params), [self], d, compute_dtype(d))

    op.impl("cuda")(kernel)


def _num(v):
    return float(v)


_float_unary(aten.elu.default, make_elu,
             lambda alpha=1, scale=1, input_scale=1: (_num(alpha), _num(scale), _num(input_scale)))
_float_unary(aten.gelu.default, make_gelu,
             lambda *, approximate="none": None if approximate not in ("none", "tanh") else (approximate == "tanh",))
_float_unary(aten.softplus.default, make_softplus, lambda beta=1, threshold=20: (_num(beta), _num(threshold)))
_float_unary(aten.leaky_relu.default, make_leaky_relu, lambda negative_slope=0.01: (_num(negative_slope),))


# -- clamp and hardtanh -------------------------------------------------------------------------------


def _is_bool(x):
    return isinstance(x, bool) or (isinstance(x, TensorBase) and x.dtype is dt.bool)


def clamp_values(self, lo, hi, dtype=None):
    """max(x, lo) then min(., hi) (either bound may be None) in the result dtype; NaN propagates."""
    d = dtype or result_type(self, *[b for b in (lo, hi) if b is not None])
    cdt = compute_dtype(d)
    r = self
    if lo is not None:
        r = ew.launch(ew.f_maximum, [r, lo], d, cdt)
    if hi is not None:
        r = ew.launch(ew.f_minimum, [r, hi], d, cdt)
    if r is self:
        r = ew.launch(ew.f_add, [self, 0], d, cdt)
    return r


def _clamp_ok(self, lo, hi):
    if lo is None and hi is None:
        return False  # the host path raises "At least one of 'min' or 'max'"
    return not any(_is_bool(x) for x in (self, lo, hi) if x is not None) and all(
        not isinstance(x, TensorBase) or x.device.type == "cuda" for x in (lo, hi))


_host_clamp_t = host_kernel(aten.clamp.Tensor)
_host_clamp_ = host_kernel(aten.clamp_.default)
_host_clamp_min = host_kernel(aten.clamp_min.default)
_host_clamp_max = host_kernel(aten.clamp_max.default)
_host_hardtanh = host_kernel(aten.hardtanh.default)


@aten.clamp.Tensor.impl("cuda")
def clamp_tensor(self, min=None, max=None):
    return clamp_values(self, min, max) if _clamp_ok(self, min, max) else _host_clamp_t(self, min, max)


@aten.clamp_min.default.impl("cuda")
def clamp_min(self, min):
    return clamp_values(self, min, None) if _clamp_ok(self, min, None) else _host_clamp_min(self, min)


@aten.clamp_max.default.impl("cuda")
def clamp_max(self, max):
    return clamp_values(self, None, max) if _clamp_ok(self, None, max) else _host_clamp_max(self, max)


@aten.clamp_.default.impl("cuda")
def clamp_(self, min=None, max=None):
    check_inplace_overlap(self, min, max)  # PyTorch's refusals, before anything is written
    if not _clamp_ok(self, min, max):
        return _host_clamp_(self, min, max)
    r = clamp_values(self, min, max)
    check_inplace_cast(r.dtype, self.dtype)
    copy_into(self, r)
    self._impl.version.value += 1
    return self


@aten.hardtanh.default.impl("cuda")
def hardtanh(self, min_val=-1, max_val=1):
    if self.dtype is dt.bool or self.dtype is dt.uint8:
        return _host_hardtanh(self, min_val, max_val)  # PyTorch's errors for these
    return clamp_values(self, min_val, max_val, dtype=self.dtype)


# -- ops PyTorch runs as one node of their own (cpu: backends/cpu/activations_more.py) ----------------
# The same expressions as the cpu kernels. Under the simulator the device functions run as plain
# Python, where math.exp overflows with an error rather than inf: mish's guard (x > 20, where
# tanh(log1p(exp(x))) is exactly 1 in float32 and float64) gives the value the formula gives.


def f_hardswish(x):
    return x * min(max(x + 3.0, 0.0), 6.0) / 6.0


def f_hardsigmoid(x):
    return min(max(x + 3.0, 0.0), 6.0) / 6.0


def f_mish(x):
    if x > 20.0:
        return x
    return x * math.tanh(math.log1p(math.exp(x)))


def f_log_sigmoid(x):
    return min(x, 0.0) - math.log1p(math.exp(-abs(x)))


def f_log_sigmoid_buffer(x):
    return math.exp(-abs(x))


def f_hardswish_backward(g, x):
    if x <= -3.0:
        return g * 0.0
    return g * (x / 3.0 + 0.5) if x < 3.0 else g


def f_hardsigmoid_backward(g, x):
    return g * 0.1666666716337204 if x > -3.0 and x < 3.0 else g * 0.0   # (1/6 rounded to float32)


def f_mish_backward(g, x):
    if x > 20.0:   # t == 1 exactly, so 1 - t * t == 0
        return g
    t = math.tanh(math.log1p(math.exp(x)))
    s = 1.0 / (1.0 + math.exp(-x)) if x >= -700.0 else 0.0
    return g * (t + x * s * (1.0 - t * t))


def f_log_sigmoid_backward(g, x):
    z = math.exp(-abs(x))
    if x < 0:
        return (1.0 - z / (1.0 + z)) * g
    return (0.0 + z / (1.0 + z)) * g


def make_elu_backward(negcoef, poscoef, negiptcoef, is_result):
    def f(g, x):
        if not x <= 0:   # (NaN takes this branch, as on cpu)
            return g * poscoef
        if is_result:
            return g * negiptcoef * (x + negcoef)
        return g * negiptcoef * negcoef * math.exp(x * negiptcoef)

    return f


for _op, _fn in ((aten.hardswish.default, f_hardswish), (aten.hardsigmoid.default, f_hardsigmoid),
                 (aten.mish.default, f_mish)):
    _float_unary(_op, lambda *params, _fn=_fn: _fn, lambda: ())


_float_unary(aten.celu.default, make_elu,
             lambda alpha=1.0: None if float(alpha) == 0 else (_num(alpha), 1.0, 1.0 / _num(alpha)))

_host_log_sigmoid_forward = host_kernel(aten.log_sigmoid_forward.default)


@aten.log_sigmoid_forward.default.impl("cuda")
def log_sigmoid_forward(self):
    if not self.dtype.is_floating_point:
        return _host_log_sigmoid_forward(self)
    d = self.dtype
    return ew.launch(f_log_sigmoid, [self], d, compute_dtype(d)), ew.launch(f_log_sigmoid_buffer, [self], d, compute_dtype(d))


def _float_backward(op, fn_of):
    """A cuda kernel for a ``*_backward(grad_output, ..., x)`` op: ``fn_of(*params)`` is the device
    function of (g, x); non-float operands (PyTorch's errors) take the host path."""
    host = host_kernel(op)

    def kernel(grad_output, *args):
        x = args[-1]
        if not (grad_output.dtype.is_floating_point and x.dtype.is_floating_point):
            return host(grad_output, *args)
        fn = fn_of(*args[:-1])
        if fn is None:
            return host(grad_output, *args)
        return ew.pointwise(fn, grad_output, x)

    op.impl("cuda")(kernel)


_float_backward(aten.hardswish_backward.default, lambda: f_hardswish_backward)
_float_backward(aten.hardsigmoid_backward.default, lambda: f_hardsigmoid_backward)
_float_backward(aten.mish_backward.default, lambda: f_mish_backward)
_float_backward(aten.elu_backward.default, lambda alpha, scale, input_scale, is_result: None
                if is_result and float(alpha) < 0 else _baked(make_elu_backward, _num(alpha) * _num(scale), _num(scale),
                                                              _num(input_scale), bool(is_result)))

_host_gelu_backward = host_kernel(aten.gelu_backward.default)


@aten.gelu_backward.default.impl("cuda")
def gelu_backward(grad_output, self, *, approximate="none"):
    if not (grad_output.dtype.is_floating_point and self.dtype.is_floating_point) or approximate not in ("none", "tanh"):
        return _host_gelu_backward(grad_output, self, approximate=approximate)   # (PyTorch's errors)
    return ew.pointwise(_baked(make_gelu_backward, approximate == "tanh"), grad_output, self)


_host_log_sigmoid_backward = host_kernel(aten.log_sigmoid_backward.default)


@aten.log_sigmoid_backward.default.impl("cuda")
def log_sigmoid_backward(grad_output, self, buffer):
    if not (grad_output.dtype.is_floating_point and self.dtype.is_floating_point):
        return _host_log_sigmoid_backward(grad_output, self, buffer)
    return ew.pointwise(f_log_sigmoid_backward, grad_output, self)


# -- glu: a * sigmoid(b) over the two halves of ``dim`` (views, no copies) ---------------------------


def _sigmoid_written_out(b):
    return 1.0 / (1.0 + math.exp(-b)) if b > -700.0 else 0.0   # (exp would overflow to inf: 1/inf)


# the device functions below call it, so it must be a device function itself: a plain Python
# helper runs on the simulator but does not compile for a GPU
_sigmoid = cuda().jit(device=True)(_sigmoid_written_out)


def f_glu(a, b):
    return a * _sigmoid(b)


def f_glu_grad_a(b, g):
    return _sigmoid(b) * g


def f_glu_grad_b(a, b, g):
    s = _sigmoid(b)
    return (1.0 - s) * s * a * g


_host_glu = host_kernel(aten.glu.default)
_host_glu_backward = host_kernel(aten.glu_backward.default)


def _glu_halves(self, dim):
    from minitorch_nn.backends.cpu.activations_more import check_glu

    d = check_glu(self, dim)
    n = self.shape[d] // 2
    view = aten.slice.Tensor.kernel_for("cuda")   # the view kernel itself: nothing is dispatched
    return d, view(self, d, 0, n), view(self, d, n, 2 * n)


@aten.glu.default.impl("cuda")
def glu(self, dim=-1):
    if not self.dtype.is_floating_point:
        return _host_glu(self, dim)
    _, a, b = _glu_halves(self, dim)
    return ew.launch(f_glu, [a, b], self.dtype, compute_dtype(self.dtype))


@aten.glu_backward.default.impl("cuda")
def glu_backward(grad_output, self, dim):
    if not (self.dtype.is_floating_point and grad_output.dtype is self.dtype):
        return _host_glu_backward(grad_output, self, dim)
    d, a, b = _glu_halves(self, dim)
    cd = compute_dtype(self.dtype)
    halves = [ew.launch(f_glu_grad_a, [b, grad_output], self.dtype, cd),
              ew.launch(f_glu_grad_b, [a, b, grad_output], self.dtype, cd)]
    return aten.cat.default.kernel_for("cuda")(halves, d)


# -- prelu's kernels: the weight arrives viewed to broadcast against the input ----------------------


def f_prelu(x, w):
    return x if x > 0 else w * x


def f_prelu_grad_input(g, x, w):
    return g if x > 0 else w * g


def f_prelu_grad_weight(g, x):
    return g * 0.0 if x > 0 else x * g


_host_prelu = host_kernel(aten._prelu_kernel.default)
_host_prelu_backward = host_kernel(aten._prelu_kernel_backward.default)


@aten._prelu_kernel.default.impl("cuda")
def _prelu_kernel(self, weight):
    if not (self.dtype.is_floating_point and weight.dtype is self.dtype and weight.is_cuda):
        return _host_prelu(self, weight)
    return ew.pointwise(f_prelu, self, weight)


@aten._prelu_kernel_backward.default.impl("cuda")
def _prelu_kernel_backward(grad_output, self, weight):
    if not (self.dtype.is_floating_point and weight.dtype is self.dtype and grad_output.dtype is self.dtype
            and weight.is_cuda and grad_output.is_cuda):
        return _host_prelu_backward(grad_output, self, weight)
    grad_input = ew.pointwise(f_prelu_grad_input, grad_output, self, weight)
    # (the weight's gradient has the full broadcast shape too: autograd sums it down)
    grad_weight = ew.pointwise(f_prelu_grad_weight, grad_output, self)
    return grad_input, grad_weight

