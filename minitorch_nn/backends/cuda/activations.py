"""Activation functions and ``clamp`` on the GPU: elementwise kernels with parameters.

Mirrors PyTorch's ``Activation*.cu`` kernels (``elu``, ``gelu``, ``hardtanh``, ``leaky_relu``,
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
