"""Registers the elementwise kernels of ``elementwise.py`` for the cuda device.

Each registration picks the device function and PyTorch's dtype rule (``promote``, ``float``,
``bool``), exactly like ``backends/cpu/pointwise.py`` does with numpy ufuncs. Rare argument
combinations whose rules and errors are intricate (bool tensors in arithmetic, ``alpha`` with an
integer result) go to the host path (``fallback.py``) so that they behave exactly as on cpu.
"""

from __future__ import annotations

from minitorch_nn import _dtype as dt
from minitorch_nn._C import TensorBase
from minitorch_nn._ops import aten
from minitorch_nn.backends.common import check_inplace_cast, compute_dtype, result_type
from minitorch_nn.backends.cuda import elementwise as ew
from minitorch_nn.backends.cuda.copy import copy_into
from minitorch_nn.backends.cuda.fallback import host_kernel
from minitorch_nn.backends.layout import check_inplace_overlap, converted_geometry


def _is_bool(x):
    return x._impl.dtype is dt.bool if isinstance(x, TensorBase) else isinstance(x, bool)


def _inplace(self, result):
    """Write an out-of-place result into ``self`` (PyTorch's in-place variants), after the cast check."""
    check_inplace_cast(result.dtype, self.dtype)
    copy_into(self, result)
    self._impl.version.value += 1
    return self


def f_add_scaled(x, y, alpha):
    return x + alpha * y


def f_sub_scaled(x, y, alpha):
    return x - alpha * y


_SCALED = {ew.f_add: f_add_scaled, ew.f_sub: f_sub_scaled}


def _scaled(fn, self, other, alpha):
    """x + alpha * y (or x - alpha * y) in one kernel: the optimizers' ``p.add_(g, alpha=-lr)``.
    None when the host path must decide (integer results, where alpha has its own rules)."""
    if fn not in _SCALED or isinstance(alpha, bool) or not isinstance(alpha, (int, float)):
        return None
    d = result_type(self, other)
    if not d.is_floating_point:
        return None
    # alpha is a parameter, not an operand, for the result's layout (as on cpu)
    return ew.launch(_SCALED[fn], [self, other, alpha], d, compute_dtype(d), layout=[self, other])


def _binary(op, fn, kind="promote", inplace_of=None):
    host = host_kernel(op)

    def kernel(self, other, *, alpha=1):
        if inplace_of:
            # PyTorch's refusals (an expanded self, a self partly overlapping other), before
            # anything is computed or written, on every path (the host path only sees copies)
            check_inplace_overlap(self, other)
        if _is_bool(self) or _is_bool(other):
            return host(self, other, alpha=alpha) if "alpha" in op._schema.text else host(self, other)
        if not (type(alpha) is int and alpha == 1):
            r = _scaled(fn, self, other, alpha)
            if r is None:
                return host(self, other, alpha=alpha)
            return _inplace(self, r) if inplace_of else r
        r = ew.pointwise(fn, self, other, kind=kind)
        return _inplace(self, r) if inplace_of else r

    op.impl("cuda")(kernel)


_binary(aten.add.Tensor, ew.f_add)
_binary(aten.add_.Tensor, ew.f_add, inplace_of=True)
_binary(aten.sub.Tensor, ew.f_sub)
_binary(aten.sub_.Tensor, ew.f_sub, inplace_of=True)
_binary(aten.mul.Tensor, ew.f_mul)
_binary(aten.mul_.Tensor, ew.f_mul, inplace_of=True)
_binary(aten.div.Tensor, ew.f_div, "float")
_binary(aten.div_.Tensor, ew.f_div, "float", inplace_of=True)
_binary(aten.maximum.default, ew.f_maximum)
_binary(aten.minimum.default, ew.f_minimum)
_binary(aten.atan2.default, ew.f_atan2, "float")

for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    _f = getattr(ew, "f_" + _name)
    for _op in (getattr(aten, _name).Tensor, getattr(aten, _name).Scalar):
        _op.impl("cuda")(lambda self, other, _f=_f: ew.pointwise(_f, self, other, kind="bool"))

for _name in ("logical_and", "logical_or", "logical_xor"):
    _f = getattr(ew, "f_" + _name)
    getattr(aten, _name).default.impl("cuda")(lambda self, other, _f=_f: ew.pointwise(_f, self, other, kind="bool"))


@aten.logical_not.default.impl("cuda")
def logical_not(self):
    return ew.pointwise(ew.f_logical_not, self, kind="bool")


@aten.isnan.default.impl("cuda")
def isnan(self):
    return ew.pointwise(ew.f_isnan, self, kind="bool")


# -- pow -----------------------------------------------------------------------------------------

_host_pow = host_kernel(aten.pow.Tensor_Scalar)


@aten.pow.Tensor_Scalar.impl("cuda")
def pow_ts(self, exponent):
    if not self.dtype.is_floating_point or isinstance(exponent, bool):
        return _host_pow(self, exponent)  # integer powers have their own rules (negative exponents)
    # the exponent is a parameter, not an operand, for the result's layout (as on cpu)
    d = self.dtype
    if exponent == 2:
        return ew.launch(ew.f_mul, [self, self], d, compute_dtype(d), layout=[self])
    return ew.launch(ew.f_pow, [self, exponent], d, compute_dtype(d), layout=[self])


# -- unary ----------------------------------------------------------------------------------------

_FLOAT_UNARY = ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos",
                "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid", "erf", "erfc", "reciprocal")
_SAME_UNARY = ("neg", "abs", "floor", "ceil", "trunc", "relu", "sign", "silu")


def _unary(op, fn, kind, inplace=False):
    host = host_kernel(op)

    def kernel(self):
        if inplace:
            check_inplace_overlap(self)
        if self.dtype is dt.bool or (kind == "promote" and not self.dtype.is_floating_point and op.__name__.split(".")[0].rstrip("_") in ("floor", "ceil", "trunc", "sign")):
            return host(self)
        r = ew.pointwise(fn, self, kind=kind)
        return _inplace(self, r) if inplace else r

    op.impl("cuda")(kernel)


for _name in _FLOAT_UNARY + _SAME_UNARY:
    _kind = "float" if _name in _FLOAT_UNARY else "promote"
    if _name == "silu":
        _kind = "float"
    _unary(getattr(aten, _name).default, getattr(ew, "f_" + _name), _kind)
    if _name + "_" in aten._packets:
        _unary(getattr(aten, _name + "_").default, getattr(ew, "f_" + _name), _kind, inplace=True)


# -- three operands ---------------------------------------------------------------------------------


_host_where = host_kernel(aten.where.self)


@aten.where.self.impl("cuda")
def where(condition, self, other):
    if condition.dtype is not dt.bool:
        return _host_where(condition, self, other)  # PyTorch's error for a non-bool condition
    dtype = result_type(self, other)
    cdt = compute_dtype(dtype)
    # the condition is read as bool; self and other are cast to the result's compute dtype
    # laid out from the operands as PyTorch sees them (each converted to its compute dtype), as on cpu
    layout = [converted_geometry(condition, dt.bool)]
    layout += [converted_geometry(x, dtype) if isinstance(x, TensorBase) else x for x in (self, other)]
    return ew.launch(ew.f_where, [condition, ew._as_compute(self, cdt), ew._as_compute(other, cdt)], dtype, cdt,
                     cast=False, layout=layout)


@aten.tanh_backward.default.impl("cuda")
def tanh_backward(grad_output, output):
    return ew.pointwise(ew.f_tanh_backward, grad_output, output)


@aten.sigmoid_backward.default.impl("cuda")
def sigmoid_backward(grad_output, output):
    return ew.pointwise(ew.f_sigmoid_backward, grad_output, output)


@aten.threshold_backward.default.impl("cuda")
def threshold_backward(grad_output, self, threshold):
    return ew.pointwise(lambda_threshold_backward(threshold), grad_output, self)


_TB_CACHE: dict = {}


def lambda_threshold_backward(threshold):
    # the threshold is part of the device function (a constant); relu's backward always uses 0
    if threshold not in _TB_CACHE:
        t = threshold

        def f(g, x):
            return g * 0 if x <= t else g

        _TB_CACHE[threshold] = f
    return _TB_CACHE[threshold]


_host_clamp = host_kernel(aten.clamp.default)


@aten.clamp.default.impl("cuda")
def clamp(self, min=None, max=None):
    if self.dtype is dt.bool or isinstance(min, TensorBase) or isinstance(max, TensorBase):
        return _host_clamp(self, min, max)
    if min is None or max is None:
        from minitorch_nn.backends.cuda.activations import clamp_tensor

        return clamp_tensor(self, min, max)  # one bound: max(x, lo) or min(x, hi)
    return ew.pointwise(ew.f_clamp, self, min, max)


@aten.mse_loss.default.impl("cuda")
def mse_loss(self, target, reduction=1):
    sq = ew.pointwise(ew.f_mse, self, target)
    if reduction == 0:
        return sq
    from minitorch_nn.backends.cuda.reduction import sum_all

    total = sum_all(sq)
    return ew.pointwise(ew.f_div, total, sq.numel()) if reduction == 1 else total


@aten.mse_loss_backward.default.impl("cuda")
def mse_loss_backward(grad_output, self, target, reduction):
    # d/dx mean((x - y)^2) = 2 (x - y) / n * grad
    diff = ew.pointwise(ew.f_sub, self, target)
    scale = 2.0 / self.numel() if reduction == 1 else 2.0
    g = ew.pointwise(ew.f_mul, diff, grad_output)
    return ew.pointwise(ew.f_mul, g, scale)


# -- compositions (the optimizers' update ops) -------------------------------------------------------
# Adam's scalars (value=-step_size, weight=1-beta1) change every step, so they are operands of the
# kernels (0-d tensors), never constants baked into a device function: nothing recompiles.

_host_addcmul = host_kernel(aten.addcmul.default)
_host_addcdiv = host_kernel(aten.addcdiv.default)
_host_lerp = host_kernel(aten.lerp.Scalar)


def _all_float(*ts):
    return all(isinstance(t, TensorBase) and t.dtype.is_floating_point for t in ts)


def _addc(self, t1, t2, value, f, host):
    if not _all_float(self, t1, t2) or isinstance(value, bool):
        return None, host
    r = ew.pointwise(f, t1, t2)
    if value != 1:
        r = ew.pointwise(ew.f_mul, r, value)
    return ew.pointwise(ew.f_add, self, r), None


@aten.addcmul.default.impl("cuda")
def addcmul(self, tensor1, tensor2, *, value=1):
    r, host = _addc(self, tensor1, tensor2, value, ew.f_mul, _host_addcmul)
    return host(self, tensor1, tensor2, value=value) if host else r


@aten.addcdiv.default.impl("cuda")
def addcdiv(self, tensor1, tensor2, *, value=1):
    r, host = _addc(self, tensor1, tensor2, value, ew.f_div, _host_addcdiv)
    return host(self, tensor1, tensor2, value=value) if host else r


@aten.addcmul_.default.impl("cuda")
def addcmul_(self, tensor1, tensor2, *, value=1):
    check_inplace_overlap(self, tensor1, tensor2)
    r, host = _addc(self, tensor1, tensor2, value, ew.f_mul, None)
    if host is not None or r is None:
        return host_kernel(aten.addcmul_.default)(self, tensor1, tensor2, value=value)
    return _inplace(self, r)


@aten.addcdiv_.default.impl("cuda")
def addcdiv_(self, tensor1, tensor2, *, value=1):
    check_inplace_overlap(self, tensor1, tensor2)
    r, host = _addc(self, tensor1, tensor2, value, ew.f_div, None)
    if host is not None or r is None:
        return host_kernel(aten.addcdiv_.default)(self, tensor1, tensor2, value=value)
    return _inplace(self, r)


def _lerp(self, end, weight):
    # start + weight * (end - start), weight a number or a tensor
    return ew.launch(ew.f_lerp, [self, end, weight], self.dtype, compute_dtype(self.dtype))


@aten.lerp.Scalar.impl("cuda")
@aten.lerp.Tensor.impl("cuda")
def lerp(self, end, weight):
    if not _all_float(self, end) or self.dtype is not end.dtype or (isinstance(weight, TensorBase) and weight.dtype is not self.dtype):
        return _host_lerp(self, end, weight)  # PyTorch's dtype checks
    return _lerp(self, end, weight)


@aten.lerp_.Scalar.impl("cuda")
def lerp_(self, end, weight):
    check_inplace_overlap(self, end, weight)
    if not _all_float(self, end) or self.dtype is not end.dtype:
        return host_kernel(aten.lerp_.Scalar)(self, end, weight)
    return _inplace(self, _lerp(self, end, weight))
