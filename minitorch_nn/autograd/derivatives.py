"""The derivative of every differentiable op (mirrors ``tools/autograd/derivatives.yaml``).

Each entry names the op, the node class PyTorch shows for it (``MulBackward0``...) and one
formula per differentiable input. A formula's first parameter is ``grad`` (or ``grads`` for
ops with several outputs); its other parameter names say what it needs, and the recorder saves
exactly that (see ``recording.Derivative``):

* schema argument names: ``self``, ``other``, ``dim``, ``keepdim``...;
* ``result`` / ``result0``, ``result1``: the op's outputs;
* ``<arg>_sizes``, ``<arg>_strides``, ``<arg>_offset``, ``<arg>_dtype``, ``<arg>_device``: an
  input's metadata only (PyTorch's ``self_sym_sizes``), so the tensor itself is not kept alive.

Formulas are written with ordinary tensor operations, so with ``create_graph=True`` (grad mode
on during backward) they are themselves recorded and higher-order gradients come for free, as
in needle. Broadcasting needs no care here: the engine sums each gradient back to its input's
shape and casts it to its dtype.

In-place ops (``add_``) reuse the formula and node name of their out-of-place op, as PyTorch
does; ``self`` in a formula then means the value before the op (it is cloned when needed).

Complex numbers follow PyTorch's convention: the gradient of a real loss L with respect to a
complex z is the conjugate Wirtinger derivative dL/dz*, so a holomorphic op's formula multiplies
``grad`` by the *conjugate* of its derivative (``grad * _c(other)`` for ``mul``). ``_c`` returns
real tensors unchanged, so the real formulas run exactly the ops they always did. The formulas
of the complex-only ops (``angle``, ``sgn``, ``polar``, ``view_as_real``...) are in
``derivatives_complex.py``.

Speed: the formulas every small model's backward pass runs (``mm``/``addmm``, ``t``, ``split``,
``softmax``, ``log_softmax``, ``tanh``, ``sigmoid``, ``relu``; ``nll_loss`` in derivatives_nn.py)
have a compiled twin, ``_ext/twins/autograd/derivatives.pyx`` (``minitorch_nn._twins.autograd
.derivatives``): the same numpy calls on the same arrays, without the dispatcher and the Python
kernel around each op. Each of those formulas hands over on its first lines while the switch
``minitorch_nn.backends.compiled`` is on; the twin declines unless the formula's ``Guard`` holds
(its kernels, their derivatives and the formula are the ones it mirrors), grad mode is off (no
``create_graph``: the readable lines record their ops) and nothing observes the ops. With the
switch off the readable lines run, always. ``tests/twins/test_derivatives_twin.py`` compares both.
"""

from __future__ import annotations

import math

from minitorch_nn import _C, _dispatch, _dtype, _ops
from minitorch_nn._C import TensorBase
from minitorch_nn._C_torch_function import state as _tf_state
from minitorch_nn._device import CPU as _CPU
from minitorch_nn._dispatch import python_dispatch as _python_dispatch
from minitorch_nn._ops import aten
from minitorch_nn._tensor import _STRIDES_CACHE, Tensor, _make_view, contiguous_strides
from minitorch_nn.autograd import grad_mode as _gm
from minitorch_nn.autograd.recording import NONDIFFERENTIABLE, Derivative
from minitorch_nn.backends import compiled as _compiled_switch

try:
    # the compiled backward kernels of tanh/sigmoid/relu (see their formulas)
    from minitorch_nn._twins.backends.cpu import activations as _compiled
except ImportError:  # pragma: no cover - an extension built without it
    _compiled = None

# The compiled twin of the commonest formulas below (mm/addmm, t, softmax, log_softmax, tanh,
# sigmoid, relu): ``_ext/twins/autograd/derivatives.pyx``. Each of those formulas hands over to it
# on its first lines while the switch is on; the twin declines (NotImplemented) unless the
# formula's Guard holds, grad mode is off (no create_graph) and nothing observes the ops, and the
# readable lines run on.
try:
    from minitorch_nn._twins.autograd import derivatives as _twin
except ImportError:  # pragma: no cover - an extension built without it
    _twin = None
else:
    _twin.setup(tensor_cls=Tensor, float32=_dtype.float32, float64=_dtype.float64, cpu=_CPU,
                wrap_array=_C._wrap_array, wrap=_C._wrap, tensor_impl_cls=_C.TensorImpl, mark_view=_C.mark_view,
                row_major=_STRIDES_CACHE, contiguous_strides=contiguous_strides, grad_mode_module=_gm,
                ops_module=_ops, dispatch_module=_dispatch, python_dispatch_module=_python_dispatch,
                tf_state=_tf_state, grad_kernels=_compiled)
    _compiled_switch.on_change(_twin.set_enabled)

# ---------------------------------------------------------------------------------------------
# Registration
# ---------------------------------------------------------------------------------------------


def _op(name):
    packet, _, overload = name.partition(".")
    return getattr(getattr(aten, packet), overload or "default")


def _signature(op):
    return [(a.name, a.type) for a in op._schema.arguments]


def derivative(op_name, node_name, **formulas):
    """Register ``formulas`` for ``op_name`` (and for its in-place twin with the same arguments)."""
    op = _op(op_name)
    op.derivative = Derivative(op, node_name, formulas)
    packet, _, overload = op_name.partition(".")
    twin = getattr(aten, packet + "_", None)
    if twin is not None and (overload or "default") in twin._overloads:
        inplace = twin._overloads[overload or "default"]
        if inplace.derivative is None and _signature(inplace) == _signature(op):
            inplace.derivative = Derivative(inplace, node_name, formulas)


def nondifferentiable(*names):
    for name in names:
        _op(name).derivative = NONDIFFERENTIABLE


# ---------------------------------------------------------------------------------------------
# Helpers used by several formulas
# ---------------------------------------------------------------------------------------------


def _c(x):
    """The complex conjugate of a complex tensor or number; anything else unchanged."""
    if isinstance(x, TensorBase):
        return aten._conj.default(x) if x._impl.dtype.is_complex else x
    return x.conjugate() if isinstance(x, complex) else x


def _mH(x):
    """The conjugate transpose of the last two dims (the plain transpose for real tensors)."""
    return _c(x.transpose(-2, -1))


def _zeros(sizes, like):
    return like.new_zeros(list(sizes))


def _scale(grad, alpha):
    return grad if alpha == 1 else grad * alpha


def _sum_dims(dim, ndim):
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    return sorted(d % ndim if ndim else 0 for d in dims)


def _unsqueeze_dims(grad, dims, sizes, keepdim):
    """Put back the reduced dims as size-1 dims so the gradient broadcasts against the input."""
    if keepdim or len(sizes) == 0:
        return grad
    for d in _sum_dims(dims, len(sizes)):
        grad = grad.unsqueeze(d)
    return grad


def _reduce_count(sizes, dim):
    n = 1
    for d in _sum_dims(dim, len(sizes)):
        n *= sizes[d] if sizes else 1
    return n


def _expand_back(grad, sizes, dim, keepdim):
    return _unsqueeze_dims(grad, dim, sizes, keepdim).expand(list(sizes))


def _evenly_distribute(grad, self, result, dim=None, keepdim=True):
    """Gradient of max/min/amax: shared equally by every element equal to the extreme value."""
    res = _unsqueeze_dims(result, dim, self.shape, keepdim) if dim is not None else result
    mask = (self == res).to(grad.dtype)
    count = mask.sum(_sum_dims(dim, self.dim()), keepdim=True) if dim is not None else mask.sum()
    g = _unsqueeze_dims(grad, dim, self.shape, keepdim) if dim is not None else grad
    return mask * (g / count)


def _select_backward(grad, sizes, dim, indices, keepdim):
    """Gradient of ops that pick one element along ``dim`` (max.dim, sort, topk)."""
    if not keepdim and len(sizes) > 0:
        grad, indices = grad.unsqueeze(dim), indices.unsqueeze(dim)
    return aten.scatter.src(_zeros(sizes, grad), dim, indices, grad)


def _pow_backward(grad, self, exponent):
    if isinstance(exponent, (int, float)) and exponent == 0:
        return grad.new_zeros(list(grad.shape)) * 0
    if hasattr(exponent, "shape"):  # a tensor exponent: 0 where it is 0 (not 0 * inf at self == 0), as PyTorch
        return _where(exponent == 0, grad.new_zeros([]), grad * _c(exponent * self.pow(exponent - 1)))
    if self._impl.dtype.is_complex or isinstance(exponent, complex):
        return grad * _c(exponent * self.pow(exponent - 1))
    return grad * exponent * self.pow(exponent - 1)


def _where(mask, a, b):
    return aten.where.self(mask, a, b)


def _masked(grad, keep):
    """``grad`` where ``keep`` is true, 0 elsewhere."""
    return grad.masked_fill(keep.logical_not(), 0)


def _slice_backward(grad, sizes, dim, start, end, step):
    out = _zeros(sizes, grad)
    aten.slice.Tensor(out, dim, start, end, step).copy_(grad)
    return out


def _select_int_backward(grad, sizes, dim, index):
    out = _zeros(sizes, grad)
    aten.select.int(out, dim, index).copy_(grad)
    return out


def _as_strided_backward(grad, sizes, strides, offset, size, stride, storage_offset):
    result = aten.empty_strided.default(list(sizes), list(strides), dtype=grad.dtype, device=grad.device).zero_()
    rel = (storage_offset if storage_offset is not None else offset) - offset
    aten.as_strided.default(result, list(size), list(stride), rel).copy_(grad)
    return result


def _diagonal_backward(grad, sizes, offset, dim1, dim2):
    out = _zeros(sizes, grad)
    aten.diagonal.default(out, offset, dim1, dim2).copy_(grad)
    return out


def _repeat_backward(grad, sizes, repeats):
    # Split each repeated dim r*s into (r, s) and sum over the r copies.
    lead = len(repeats) - len(sizes)
    full = [1] * lead + list(sizes)
    shape, sum_dims = [], []
    for r, s in zip(repeats, full):
        sum_dims.append(len(shape))
        shape += [r, s]
    g = grad.reshape(shape).sum(sum_dims)
    return g.reshape(list(sizes))


def _var_backward(grad, self, dim, correction, keepdim):
    n = _reduce_count(tuple(self.shape), dim)
    c = 1 if correction is None else correction
    dims = _sum_dims(dim, self.dim())
    mean = self.mean(dims, keepdim=True)
    dof = n - c
    # no degrees of freedom left: PyTorch's 2 / 0 is inf (C++ floating division), not an error
    scale = 2.0 / dof if dof != 0 else math.inf
    return _unsqueeze_dims(grad, dim, tuple(self.shape), keepdim) * (self - mean) * scale


def _std_backward(grad, self, result, dim, correction, keepdim):
    g = _unsqueeze_dims(grad / (2 * result), dim, tuple(self.shape), keepdim)
    return _var_backward(g, self, dim, correction, True)


def _norm_backward(grad, self, ord, dim, keepdim, result):
    g = _unsqueeze_dims(grad, dim, tuple(self.shape), keepdim)
    norm = _unsqueeze_dims(result, dim, tuple(self.shape), keepdim)
    if ord == 0:
        return self * 0
    if ord == 1:
        return g * self.sgn()
    if ord == 2:
        return _masked(g * self / norm, norm != 0)
    if ord in (math.inf, -math.inf):
        return _evenly_distribute(grad, self.abs(), result, dim if dim is not None else None, keepdim) * self.sign() \
            if dim is not None else _evenly_distribute(grad, self.abs(), result) * self.sign()
    return g * self * self.abs().pow(ord - 2) / norm.pow(ord - 1)


def _gelu_second_derivative(self, approximate):
    """GELU's second derivative, in tensor ops (gelu_backward's own derivative, for double backward).

    Exact: d/dx (Phi + x phi) = 2 phi - x**2 phi. Tanh approximation, with u = beta (x + kappa x**3),
    t = tanh(u), du = beta (1 + 3 kappa x**2): (1 - t**2) (du - x t du**2 + 3 beta kappa x**2)."""
    if approximate == "tanh":
        beta, kappa = math.sqrt(2 / math.pi), 0.044715
        t = (beta * (self + kappa * self * self * self)).tanh()
        du = beta * (1 + 3 * kappa * self * self)
        return (1 - t * t) * (du - self * t * du * du + 3 * beta * kappa * self * self)
    pdf = (-0.5 * self * self).exp() / math.sqrt(2 * math.pi)
    return pdf * (2 - self * self)


def _reduction(g, reduction, numel):
    return g / numel if reduction == 1 else g


def _matrix_exp_backward(grad, self):
    # d/dA exp(A) applied to G is the top-right block of exp([[A^T, G], [0, A^T]]).
    n = self.shape[-1]
    at = _mH(self)
    top = aten.cat.default([at, grad], -1)
    bottom = aten.cat.default([grad * 0, at], -1)
    big = aten.linalg_matrix_exp.default(aten.cat.default([top, bottom], -2))
    return aten.slice.Tensor(aten.slice.Tensor(big, -2, 0, n), -1, n, 2 * n)


def _solve_b(grad, A, left):
    at = _mH(A)
    if left:
        return aten.linalg_solve.default(at, grad)
    # X A = B  <=>  A^H X^H = B^H
    return _mH(aten.linalg_solve.default(A, _mH(grad)))


def _solve_a(grad, A, B, left, result):
    gb = _solve_b(grad, A, left)
    x = result
    vector = B.dim() == 1 or (A.dim() - 1 == B.dim() and left)
    if vector:
        return -(gb.unsqueeze(-1) * _c(x).unsqueeze(-2))
    if left:
        return -(gb @ _mH(x))
    return -(_mH(x) @ gb)


def _qr_backward(grads, A, mode, result0, result1):
    # Reduced QR of a tall or square A (m >= n); see "Auto-differentiating linear algebra" (Seeger et al.).
    gq, gr = grads
    q, r = result0, result1
    m, n = A.shape[-2], A.shape[-1]
    if mode == "r" or m < n:
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                           "minitorch_nn supports it for m >= n and mode='reduced' only.")
    mt = lambda x: x.transpose(-2, -1)  # noqa: E731
    # Standard formula: grad_A = (gQ + Q copyltu(M)) R^{-T}, M = R gR^T - gQ^T Q.
    mm = r @ mt(gr) - mt(gq) @ q
    low = aten.tril.default(mm, -1)
    copyltu = low + mt(low) + aten.diag_embed.default(mm.diagonal(0, -2, -1))
    rhs = gq + q @ copyltu
    # solve X R^T = rhs  <=>  R X^T = rhs^T
    return mt(aten.linalg_solve.default(r, mt(rhs)))


# ---------------------------------------------------------------------------------------------
# Pointwise arithmetic
# ---------------------------------------------------------------------------------------------

LN2, LN10 = math.log(2.0), math.log(10.0)

derivative("add.Tensor", "AddBackward0", self=lambda grad: grad, other=lambda grad, alpha: _scale(grad, alpha))
derivative("sub.Tensor", "SubBackward0", self=lambda grad: grad, other=lambda grad, alpha: -_scale(grad, alpha))
derivative("rsub.Tensor", "RsubBackward0", self=lambda grad, alpha: -_scale(grad, alpha), other=lambda grad: grad)
derivative("rsub.Scalar", "RsubBackward1", self=lambda grad, alpha: -_scale(grad, alpha))
derivative("mul.Tensor", "MulBackward0", self=lambda grad, other: grad * _c(other), other=lambda grad, self: grad * _c(self))
derivative("div.Tensor", "DivBackward0",
           self=lambda grad, other: grad / _c(other),
           other=lambda grad, self, other: -grad * _c(self) / _c(other * other))
derivative("div.Tensor_mode", "DivBackward2",
           self=lambda grad, other, rounding_mode: grad / _c(other) if rounding_mode is None else grad * 0,
           other=lambda grad, self, other, rounding_mode: (-grad * _c(self) / _c(other * other)) if rounding_mode is None
           else grad * 0)
derivative("remainder.Tensor", "RemainderBackward1",
           self=lambda grad: grad, other=lambda grad, self, other: -grad * self.div(other, rounding_mode="floor"))
derivative("remainder.Scalar", "RemainderBackward0", self=lambda grad: grad)
# floor_divide (and //=, 7 % x): no derivative in PyTorch, a NotImplemented node (derivatives_binary_math.py)
derivative("pow.Tensor_Scalar", "PowBackward0", self=lambda grad, self, exponent: _pow_backward(grad, self, exponent))
_op("pow_.Scalar").derivative = Derivative(_op("pow_.Scalar"), "PowBackward0",
                                           {"self": lambda grad, self, exponent: _pow_backward(grad, self, exponent)})
derivative("pow.Tensor_Tensor", "PowBackward1",
           self=lambda grad, self, exponent: _pow_backward(grad, self, exponent),
           exponent=lambda grad, self, exponent, result: grad * _where(
               (self == 0).logical_and(exponent >= 0), grad.new_zeros([]), result * self.log())
           if not (self._impl.dtype.is_complex or exponent._impl.dtype.is_complex)
           else grad * _c(_where(self == 0, grad.new_zeros([]), result * self.log())))
derivative("pow.Scalar", "PowBackward2", exponent=lambda grad, self, result: grad * result * math.log(self) if self > 0 else grad * 0)
derivative("neg", "NegBackward0", self=lambda grad: -grad)
derivative("abs", "AbsBackward0", self=lambda grad, self: grad * self.sgn())
derivative("sign", "SignBackward0", self=lambda grad: grad * 0)
derivative("reciprocal", "ReciprocalBackward0", self=lambda grad, result: -grad * _c(result * result))
derivative("maximum", "MaximumBackward0",
           self=lambda grad, self, other: _where(self == other, grad / 2, _masked(grad, self > other)),
           other=lambda grad, self, other: _where(self == other, grad / 2, _masked(grad, other > self)))
derivative("minimum", "MinimumBackward0",
           self=lambda grad, self, other: _where(self == other, grad / 2, _masked(grad, self < other)),
           other=lambda grad, self, other: _where(self == other, grad / 2, _masked(grad, other < self)))
derivative("lerp.Scalar", "LerpBackward0", self=lambda grad, weight: grad * _c(1 - weight),
           end=lambda grad, weight: grad * _c(weight))
derivative("lerp.Tensor", "LerpBackward1",
           self=lambda grad, weight: grad * _c(1 - weight), end=lambda grad, weight: grad * _c(weight),
           weight=lambda grad, self, end: grad * _c(end - self))
derivative("addcmul", "AddcmulBackward0",
           self=lambda grad: grad, tensor1=lambda grad, tensor2, value: grad * _c(tensor2 * value),
           tensor2=lambda grad, tensor1, value: grad * _c(tensor1 * value))
derivative("addcdiv", "AddcdivBackward0",
           self=lambda grad: grad, tensor1=lambda grad, tensor2, value: grad * value / tensor2,
           tensor2=lambda grad, tensor1, tensor2, value: -grad * value * tensor1 / (tensor2 * tensor2))
derivative("clamp", "ClampBackward1",
           self=lambda grad, self, min, max: _masked(grad, (self >= (min if min is not None else -math.inf))
                                                     .logical_and(self <= (max if max is not None else math.inf))))
derivative("clamp.Tensor", "ClampBackward0",
           self=lambda grad, self, min, max: _masked(
               grad, (self >= min if min is not None else self == self).logical_and(self <= max if max is not None else self == self)),
           min=lambda grad, self, min: _masked(grad, self < min),
           max=lambda grad, self, max: _masked(grad, self > max))
derivative("clamp_min", "ClampMinBackward0", self=lambda grad, self, min: _masked(grad, self >= min))
derivative("clamp_max", "ClampMaxBackward0", self=lambda grad, self, max: _masked(grad, self <= max))
for _name, _node in [("floor", "FloorBackward0"), ("ceil", "CeilBackward0"), ("round", "RoundBackward0"),
                     ("round.decimals", "RoundBackward1"), ("trunc", "TruncBackward0")]:
    derivative(_name, _node, self=lambda grad: grad * 0)
derivative("frac", "FracBackward0", self=lambda grad: grad)
derivative("fmod.Scalar", "FmodBackward0", self=lambda grad: grad)
derivative("fmod.Tensor", "FmodBackward1",
           self=lambda grad: grad, other=lambda grad, self, other: -grad * self.div(other, rounding_mode="trunc"))

# ---------------------------------------------------------------------------------------------
# Pointwise math and activations
# ---------------------------------------------------------------------------------------------

derivative("exp", "ExpBackward0", self=lambda grad, result: grad * _c(result))
derivative("exp2", "Exp2Backward0", self=lambda grad, result: grad * _c(result * LN2))
derivative("expm1", "Expm1Backward0", self=lambda grad, result: grad * _c(result + 1))
derivative("log", "LogBackward0", self=lambda grad, self: grad / _c(self))
derivative("log2", "Log2Backward0", self=lambda grad, self: grad / _c(self * LN2))
derivative("log10", "Log10Backward0", self=lambda grad, self: grad / _c(self * LN10))
derivative("log1p", "Log1PBackward0", self=lambda grad, self: grad / _c(self + 1))
derivative("sqrt", "SqrtBackward0", self=lambda grad, result: grad / _c(2 * result))
derivative("rsqrt", "RsqrtBackward0", self=lambda grad, result: -0.5 * grad * _c(result.pow(3)))
derivative("sin", "SinBackward0", self=lambda grad, self: grad * _c(self.cos()))
derivative("cos", "CosBackward0", self=lambda grad, self: -grad * _c(self.sin()))
derivative("tan", "TanBackward0", self=lambda grad, result: grad * _c(1 + result * result))
derivative("asin", "AsinBackward0", self=lambda grad, self: grad / _c((1 - self * self).sqrt()))
derivative("acos", "AcosBackward0", self=lambda grad, self: -grad / _c((1 - self * self).sqrt()))
derivative("atan", "AtanBackward0", self=lambda grad, self: grad / _c(1 + self * self))
def _atan2_recip(self, other):
    # 1 / (self² + other²), taken as 0 where both are 0 (PyTorch's gradient there is 0, not NaN)
    denom = self * self + other * other
    return denom.reciprocal().masked_fill(denom == 0, 0)


derivative("atan2", "Atan2Backward0",
           self=lambda grad, self, other: grad * other * _atan2_recip(self, other),
           other=lambda grad, self, other: grad * -self * _atan2_recip(self, other))
derivative("sinh", "SinhBackward0", self=lambda grad, self: grad * _c(self.cosh()))
derivative("cosh", "CoshBackward0", self=lambda grad, self: grad * _c(self.sinh()))
# tanh and sigmoid: one kernel each from the output, as PyTorch (tanh_backward, sigmoid_backward),
# which is also what a TorchDispatchMode sees; those kernels have derivatives of their own.
# Their compiled twins (in _ext/twins/backends/cpu/activations.pyx, twins of the cpu kernels in
# backends/cpu/activations.py) compute the same values for the common case (exact Tensors, which
# they check) without the dispatcher's layers (a few us per node on small tensors). They run only
# without create_graph, with nothing watching the ops (engine.nothing_observes), with the switch on
# and while the op's kernel and derivative are the ones they mirror (a Guard): the derivatives'
# twin (see the top of this file) makes those checks in C, then calls them.
def _tanh_grad(grad, result):
    if _twin is not None and _compiled_switch._enabled:   # the compiled twin, while its guard holds
        out = _twin.tanh_backward(grad, result, _TANH_TWIN)
        if out is not NotImplemented:
            return out
    return aten.tanh_backward.default(grad, result)


def _sigmoid_grad(grad, result):
    if _twin is not None and _compiled_switch._enabled:   # the compiled twin, while its guard holds
        out = _twin.sigmoid_backward(grad, result, _SIGMOID_TWIN)
        if out is not NotImplemented:
            return out
    return aten.sigmoid_backward.default(grad, result)


def _relu_grad(grad, result):
    if _twin is not None and _compiled_switch._enabled:   # the compiled twin, while its guard holds
        out = _twin.threshold_backward(grad, result, _THRESHOLD_TWIN)
        if out is not NotImplemented:
            return out
    return aten.threshold_backward.default(grad, result, 0)


_TANH_TWIN = _compiled_switch.Guard("activations.tanh_backward", ops=(aten.tanh_backward.default,),
                                    functions=(_tanh_grad,))
_SIGMOID_TWIN = _compiled_switch.Guard("activations.sigmoid_backward", ops=(aten.sigmoid_backward.default,),
                                       functions=(_sigmoid_grad,))
_THRESHOLD_TWIN = _compiled_switch.Guard("activations.threshold_backward", ops=(aten.threshold_backward.default,),
                                         functions=(_relu_grad,))


derivative("tanh", "TanhBackward0", self=_tanh_grad)
derivative("sigmoid", "SigmoidBackward0", self=_sigmoid_grad)
derivative("tanh_backward", "TanhBackwardBackward0",
           grad_output=lambda grad, output: aten.tanh_backward.default(grad, output),
           output=lambda grad, output, grad_output: grad * (-2 * output * grad_output))
derivative("sigmoid_backward", "SigmoidBackwardBackward0",
           grad_output=lambda grad, output: aten.sigmoid_backward.default(grad, output),
           output=lambda grad, output, grad_output: grad * grad_output * (-2 * output + 1))
derivative("erf", "ErfBackward0", self=lambda grad, self: grad * (2 / math.sqrt(math.pi)) * (-(self * self)).exp())
derivative("erfc", "ErfcBackward0", self=lambda grad, self: grad * (-2 / math.sqrt(math.pi)) * (-(self * self)).exp())
derivative("erfinv", "ErfinvBackward0", self=lambda grad, result: grad * (0.5 * math.sqrt(math.pi)) * (result * result).exp())
derivative("nan_to_num", "NanToNumBackward0", self=lambda grad, self: _masked(grad, self.isfinite()))
derivative("relu", "ReluBackward0", self=_relu_grad)
derivative("gelu", "GeluBackward0",
           self=lambda grad, self, approximate: aten.gelu_backward.default(grad, self, approximate=approximate))
derivative("gelu_backward", "GeluBackwardBackward0",
           grad_output=lambda grad, self, approximate: aten.gelu_backward.default(grad, self, approximate=approximate),
           self=lambda grad, self, grad_output, approximate: grad * grad_output * _gelu_second_derivative(self, approximate))
derivative("silu", "SiluBackward0",
           self=lambda grad, self: grad * self.sigmoid() * (1 + self * (1 - self.sigmoid())))
derivative("softplus", "SoftplusBackward0",
           self=lambda grad, self, beta, threshold: _where(self * beta > threshold, grad, grad * (self * beta).sigmoid()))
derivative("elu", "EluBackward0",
           self=lambda grad, self, alpha, scale, input_scale: _where(
               self > 0, grad * scale, grad * scale * alpha * input_scale * (self * input_scale).exp()))
derivative("leaky_relu", "LeakyReluBackward0",
           self=lambda grad, self, negative_slope: _where(self > 0, grad, grad * negative_slope))
derivative("hardtanh", "HardtanhBackward0",
           self=lambda grad, self, min_val, max_val: _masked(grad, (self > min_val).logical_and(self < max_val)))
derivative("threshold_backward", "ThresholdBackwardBackward0",
           grad_output=lambda grad, self, threshold: _masked(grad, self > threshold),
           self=lambda grad: grad * 0)

# ---------------------------------------------------------------------------------------------
# Selection and masking
# ---------------------------------------------------------------------------------------------

derivative("where.self", "WhereBackward0",
           self=lambda grad, condition: _masked(grad, condition),
           other=lambda grad, condition: _masked(grad, condition.logical_not()))
derivative("masked_fill.Scalar", "MaskedFillBackward0", self=lambda grad, mask: grad.masked_fill(mask, 0))
derivative("masked_fill.Tensor", "MaskedFillBackward1",
           self=lambda grad, mask: grad.masked_fill(mask, 0), value=lambda grad, mask: _masked(grad, mask).sum())

# ---------------------------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------------------------

# (aten.expand directly: the op Tensor.expand would run, without its method layers; every loss.sum())
derivative("sum", "SumBackward0", self=lambda grad, self_sizes: aten.expand.default(grad, list(self_sizes)))
derivative("sum.dim_IntList", "SumBackward1",
           self=lambda grad, self_sizes, dim, keepdim: _expand_back(grad, self_sizes, dim, keepdim))
derivative("mean", "MeanBackward0",
           self=lambda grad, self_sizes: aten.expand.default(grad, list(self_sizes)) / max(_reduce_count(self_sizes, None), 1))
derivative("mean.dim", "MeanBackward1",
           self=lambda grad, self_sizes, dim, keepdim: _expand_back(grad, self_sizes, dim, keepdim) / _reduce_count(self_sizes, dim))
derivative("prod", "ProdBackward0", self=lambda grad, self, result: grad * _c(result / self))
derivative("prod.dim_int", "ProdBackward1",
           self=lambda grad, self, dim, keepdim, result: _unsqueeze_dims(grad, dim, tuple(self.shape), keepdim)
           * _c(_unsqueeze_dims(result, dim, tuple(self.shape), keepdim) / self))
derivative("max", "MaxBackward1", self=lambda grad, self, result: _evenly_distribute(grad, self, result))
derivative("min", "MinBackward1", self=lambda grad, self, result: _evenly_distribute(grad, self, result))
derivative("max.dim", "MaxBackward0",
           self=lambda grads, self_sizes, dim, keepdim, result1: _select_backward(grads[0], self_sizes, dim, result1, keepdim))
derivative("min.dim", "MinBackward0",
           self=lambda grads, self_sizes, dim, keepdim, result1: _select_backward(grads[0], self_sizes, dim, result1, keepdim))
derivative("amax", "AmaxBackward0",
           self=lambda grad, self, dim, keepdim, result: _evenly_distribute(grad, self, result, dim, keepdim))
derivative("amin", "AminBackward0",
           self=lambda grad, self, dim, keepdim, result: _evenly_distribute(grad, self, result, dim, keepdim))
derivative("var.correction", "VarBackward0",
           self=lambda grad, self, dim, correction, keepdim: _var_backward(grad, self, dim, correction, keepdim))
derivative("std.correction", "StdBackward0",
           self=lambda grad, self, dim, correction, keepdim, result: _std_backward(grad, self, result, dim, correction, keepdim))
derivative("var_mean.correction", "VarMeanBackward0",
           self=lambda grads, self, dim, correction, keepdim: _var_backward(grads[0], self, dim, correction, keepdim)
           + _expand_back(grads[1], tuple(self.shape), dim, keepdim) / _reduce_count(tuple(self.shape), dim))
derivative("std_mean.correction", "StdMeanBackward0",
           self=lambda grads, self, dim, correction, keepdim, result0: _std_backward(grads[0], self, result0, dim, correction, keepdim)
           + _expand_back(grads[1], tuple(self.shape), dim, keepdim) / _reduce_count(tuple(self.shape), dim))
derivative("logsumexp", "LogsumexpBackward0",
           self=lambda grad, self, dim, keepdim, result: _unsqueeze_dims(grad, dim, tuple(self.shape), keepdim)
           * _c((self - _unsqueeze_dims(result, dim, tuple(self.shape), keepdim)).exp()))
derivative("linalg_vector_norm", "LinalgVectorNormBackward0",
           self=lambda grad, self, ord, dim, keepdim, result: _norm_backward(grad, self, ord, dim, keepdim, result))
derivative("cumsum", "CumsumBackward0", self=lambda grad, dim: grad.flip([dim]).cumsum(dim).flip([dim]))
derivative("cumprod", "CumprodBackward0",
           self=lambda grad, self, dim, result: (grad * _c(result)).flip([dim]).cumsum(dim).flip([dim]) / _c(self))
derivative("sort", "SortBackward0",
           self=lambda grads, self_sizes, dim, result1: _select_backward(grads[0], self_sizes, dim, result1, True))
derivative("topk", "TopkBackward0",
           self=lambda grads, self_sizes, dim, result1: _select_backward(grads[0], self_sizes, dim, result1, True))

# ---------------------------------------------------------------------------------------------
# Linear algebra
# ---------------------------------------------------------------------------------------------



def _mm_mat1_backward(grad, mat2):
    """The gradient of ``mm(mat1, mat2)`` with respect to ``mat1``: ``grad @ mat2^T``.

    Build it from ops (``aten.mm.default`` and ``aten.t.default``) so that it is itself
    differentiable (double backward records through it)."""
    if _twin is not None and _compiled_switch._enabled:   # the compiled twin, while its guard holds
        out = _twin.mm_mat1_backward(grad, mat2, _MM_MAT1_TWIN)
        if out is not NotImplemented:
            return out
    # BEGIN SOLUTION autograd-mm-backward
    return aten.mm.default(grad, aten.t.default(mat2))
    # END SOLUTION


def _mm_mat2_backward(grad, mat1, mat2_sizes, mat2_strides):
    """The gradient of ``mm(mat1, mat2)`` with respect to ``mat2``: ``mat1^T @ grad``.

    As PyTorch's ``mm_mat2_backward``: when ``mat2`` was column-major (2-d, strides ``(1, rows)``,
    more than one column -- ``weight.t()`` in ``F.linear``), compute ``(grad^T @ mat1)^T`` instead,
    the same values laid out column-major, so that after ``TBackward`` the weight's gradient is
    contiguous and the optimizer and AccumulateGrad never copy it across a transpose. Build it from
    ``aten.mm.default`` and ``aten.t.default``."""
    if _twin is not None and _compiled_switch._enabled:   # the compiled twin, while its guard holds
        out = _twin.mm_mat2_backward(grad, mat1, mat2_sizes, mat2_strides, _MM_MAT2_TWIN)
        if out is not NotImplemented:
            return out
    # BEGIN SOLUTION autograd-mm-backward
    if len(mat2_sizes) == 2 and mat2_strides[0] == 1 and mat2_strides[1] == mat2_sizes[0] and mat2_sizes[1] > 1:
        return aten.t.default(aten.mm.default(aten.t.default(grad), mat1))
    return aten.mm.default(aten.t.default(mat1), grad)
    # END SOLUTION


_MM_MAT1_TWIN = _compiled_switch.Guard("autograd.derivatives._mm_mat1_backward",
                                       ops=(aten.mm.default, aten.t.default), functions=(_mm_mat1_backward,))
_MM_MAT2_TWIN = _compiled_switch.Guard("autograd.derivatives._mm_mat2_backward",
                                       ops=(aten.mm.default, aten.t.default), functions=(_mm_mat2_backward, _make_view))


derivative("mm", "MmBackward0",
           self=lambda grad, mat2: _mm_mat1_backward(grad, _c(mat2)),
           mat2=lambda grad, self, mat2_sizes, mat2_strides: _mm_mat2_backward(grad, _c(self), mat2_sizes, mat2_strides))
derivative("bmm", "BmmBackward0",
           self=lambda grad, mat2: aten.bmm.default(grad, _c(mat2).transpose(1, 2)),
           mat2=lambda grad, self: aten.bmm.default(_c(self).transpose(1, 2), grad))
derivative("addmm", "AddmmBackward0",
           self=lambda grad, beta: _scale(grad, _c(beta)),
           mat1=lambda grad, mat2, alpha: _scale(_mm_mat1_backward(grad, _c(mat2)), _c(alpha)),
           mat2=lambda grad, mat1, mat2_sizes, mat2_strides, alpha: _scale(
               _mm_mat2_backward(grad, _c(mat1), mat2_sizes, mat2_strides), _c(alpha)))
derivative("baddbmm", "BaddbmmBackward0",
           self=lambda grad, beta: _scale(grad, beta),
           batch1=lambda grad, batch2, alpha: _scale(aten.bmm.default(grad, _c(batch2).transpose(1, 2)), _c(alpha)),
           batch2=lambda grad, batch1, alpha: _scale(aten.bmm.default(_c(batch1).transpose(1, 2), grad), _c(alpha)))
derivative("dot", "DotBackward0", self=lambda grad, tensor: grad * _c(tensor), tensor=lambda grad, self: grad * _c(self))
derivative("mv", "MvBackward0",
           self=lambda grad, vec: grad.unsqueeze(1) * _c(vec).unsqueeze(0),
           vec=lambda grad, self: aten.mv.default(aten.t.default(_c(self)), grad))
derivative("outer", "OuterBackward0",
           self=lambda grad, vec2: aten.mv.default(grad, _c(vec2)),
           vec2=lambda grad, self: aten.mv.default(aten.t.default(grad), _c(self)))
derivative("linalg_solve", "LinalgSolveExBackward0",
           A=lambda grad, A, B, left, result: _solve_a(grad, A, B, left, result),
           B=lambda grad, A, left: _solve_b(grad, A, left))
derivative("linalg_matrix_exp", "LinalgMatrixExpBackward0", self=lambda grad, self: _matrix_exp_backward(grad, self))
derivative("linalg_inv", "LinalgInvExBackward0",
           A=lambda grad, result: -(_mH(result) @ grad @ _mH(result)))
derivative("linalg_det", "LinalgDetBackward0",
           A=lambda grad, A, result: (grad * _c(result)).unsqueeze(-1).unsqueeze(-1)
           * _mH(aten.linalg_inv.default(A)))
derivative("linalg_qr", "LinalgQrBackward0", A=lambda grads, A, mode, result0, result1: _qr_backward(grads, A, mode, result0, result1))
derivative("diagonal", "DiagonalBackward0",
           self=lambda grad, self_sizes, offset, dim1, dim2: _diagonal_backward(grad, self_sizes, offset, dim1, dim2))
derivative("diag_embed", "DiagEmbedBackward0",
           self=lambda grad, offset, dim1, dim2: aten.diagonal.default(grad, offset, dim1, dim2))
derivative("tril", "TrilBackward0", self=lambda grad, diagonal: aten.tril.default(grad, diagonal))
derivative("triu", "TriuBackward0", self=lambda grad, diagonal: aten.triu.default(grad, diagonal))
# softmax and log_softmax: one kernel each from the output, as PyTorch (a dispatch mode sees
# _softmax_backward_data / _log_softmax_backward_data); those have derivatives of their own:
# with y the output, g the incoming gradient and S the sum along dim (kept):
#   softmax:      y * (g - S(g * y));  d/dg: the same op;     d/dy: grad * (g - S(g * y)) - g * S(grad * y)
#   log_softmax:  g - exp(y) * S(g);   d/dg: grad - S(grad * exp(y));   d/dy: -grad * exp(y) * S(g)
def _softmax_grad(grad, dim, result):
    if _twin is not None and _compiled_switch._enabled:   # the compiled twin, while its guard holds
        out = _twin.softmax_backward(grad, dim, result, _SOFTMAX_TWIN)
        if out is not NotImplemented:
            return out
    return aten._softmax_backward_data.default(grad, result, dim, result.dtype)


def _log_softmax_grad(grad, dim, result):
    if _twin is not None and _compiled_switch._enabled:   # the compiled twin, while its guard holds
        out = _twin.log_softmax_backward(grad, dim, result, _LOG_SOFTMAX_TWIN)
        if out is not NotImplemented:
            return out
    return aten._log_softmax_backward_data.default(grad, result, dim, result.dtype)


_SOFTMAX_TWIN = _compiled_switch.Guard("autograd.derivatives._softmax_grad",
                                       ops=(aten._softmax_backward_data.default,), functions=(_softmax_grad,))
_LOG_SOFTMAX_TWIN = _compiled_switch.Guard("autograd.derivatives._log_softmax_grad",
                                           ops=(aten._log_softmax_backward_data.default,),
                                           functions=(_log_softmax_grad,))
derivative("_softmax", "SoftmaxBackward0", self=_softmax_grad)
derivative("_log_softmax", "LogSoftmaxBackward0", self=_log_softmax_grad)
derivative("_softmax_backward_data", "SoftmaxBackwardDataBackward0",
           grad_output=lambda grad, output, dim, input_dtype: aten._softmax_backward_data.default(
               grad, output, dim, input_dtype),
           output=lambda grad, grad_output, output, dim: grad * (grad_output - (grad_output * output).sum([dim], keepdim=True))
           - grad_output * (grad * output).sum([dim], keepdim=True))
derivative("_log_softmax_backward_data", "LogSoftmaxBackwardDataBackward0",
           grad_output=lambda grad, output, dim: grad - (grad * output.exp()).sum([dim], keepdim=True),
           output=lambda grad, grad_output, output, dim: -grad * output.exp() * grad_output.sum([dim], keepdim=True))

# ---------------------------------------------------------------------------------------------
# Views (their gradients are reshaped, transposed or padded back)
# ---------------------------------------------------------------------------------------------

def _unsqueeze_to(grad, dim, sizes):
    """PyTorch's ``unsqueeze_to``: put back the dim that squeeze removed (none if it was not 1)."""
    d = dim % len(sizes) if sizes else 0
    return grad.unsqueeze(d) if sizes and sizes[d] == 1 else grad


derivative("view", "ViewBackward0", self=lambda grad, self_sizes: grad.reshape(list(self_sizes)))
derivative("_unsafe_view", "UnsafeViewBackward0", self=lambda grad, self_sizes: grad.reshape(list(self_sizes)))
derivative("_reshape_alias", "ReshapeAliasBackward0", self=lambda grad, self_sizes: grad.reshape(list(self_sizes)))
derivative("permute", "PermuteBackward0",
           self=lambda grad, dims: aten.permute.default(grad, _inverse_perm(dims)))
derivative("transpose.int", "TransposeBackward0", self=lambda grad, dim0, dim1: aten.transpose.int(grad, dim0, dim1))
def _t_backward(grad):
    if _twin is not None and _compiled_switch._enabled:   # the compiled twin, while its guard holds
        out = _twin.t_backward(grad, _T_TWIN)
        if out is not NotImplemented:
            return out
    return aten.t.default(grad)


_T_TWIN = _compiled_switch.Guard("autograd.derivatives._t_backward", ops=(aten.t.default,),
                                 functions=(_t_backward, _make_view))
derivative("t", "TBackward0", self=_t_backward)
derivative("unsqueeze", "UnsqueezeBackward0", self=lambda grad, dim: aten.squeeze.dim(grad, dim))
derivative("squeeze", "SqueezeBackward0", self=lambda grad, self_sizes: grad.reshape(list(self_sizes)))
derivative("squeeze.dim", "SqueezeBackward1", self=lambda grad, self_sizes, dim: _unsqueeze_to(grad, dim, self_sizes))
derivative("squeeze.dims", "SqueezeBackward2", self=lambda grad, self_sizes: grad.reshape(list(self_sizes)))
derivative("expand", "ExpandBackward0", self=lambda grad, self_sizes: _sum_to(grad, self_sizes))
derivative("slice.Tensor", "SliceBackward0",
           self=lambda grad, self_sizes, dim, start, end, step: _slice_backward(grad, self_sizes, dim, start, end, step))
derivative("select.int", "SelectBackward0",
           self=lambda grad, self_sizes, dim, index: _select_int_backward(grad, self_sizes, dim, index))
derivative("as_strided", "AsStridedBackward0",
           self=lambda grad, self_sizes, self_strides, self_offset, size, stride, storage_offset: _as_strided_backward(
               grad, self_sizes, self_strides, self_offset, size, stride, storage_offset))
derivative("alias", "AliasBackward0", self=lambda grad: grad)
def _split_backward(grads, dim):
    """The gradient of a split (``chunk``, ``split``): the pieces' gradients joined back along ``dim``."""
    grads = list(grads)
    if _twin is not None and _compiled_switch._enabled:   # the compiled twin, while its guard holds
        out = _twin.split_backward(grads, dim, _SPLIT_TWIN)
        if out is not NotImplemented:
            return out
    return aten.cat.default(grads, dim)


_SPLIT_TWIN = _compiled_switch.Guard("autograd.derivatives._split_backward", ops=(aten.cat.default,),
                                     functions=(_split_backward,))
derivative("split.Tensor", "SplitBackward0", self=_split_backward)
derivative("split_with_sizes", "SplitWithSizesBackward0", self=_split_backward)
derivative("unbind.int", "UnbindBackward0", self=lambda grads, dim: aten.stack.default(list(grads), dim))


def _inverse_perm(dims):
    n = len(dims)
    inv = [0] * n
    for i, d in enumerate(dims):
        inv[d % n] = i
    return inv


def _sum_to(grad, sizes):
    from minitorch_nn.autograd.engine import sum_to_size

    return sum_to_size(grad, tuple(sizes))


# ---------------------------------------------------------------------------------------------
# Joining, copying, padding
# ---------------------------------------------------------------------------------------------


def _cat_backward(grad, tensors_sizes, dim):
    out, start = [], 0
    ndim = max(len(s) for s in tensors_sizes)
    d = dim % ndim if ndim else 0
    for sizes in tensors_sizes:
        if len(sizes) == 1 and sizes[0] == 0 and ndim > 1:   # legacy empty tensors in cat
            out.append(None)
            continue
        out.append(aten.slice.Tensor(grad, d, start, start + sizes[d]))
        start += sizes[d]
    return out


derivative("cat", "CatBackward0", tensors=lambda grad, tensors_sizes, dim: _cat_backward(grad, tensors_sizes, dim))
derivative("stack", "StackBackward0", tensors=lambda grad, dim: list(aten.unbind.int(grad, dim)))
derivative("clone", "CloneBackward0", self=lambda grad: grad)
derivative("copy_", "torch::autograd::CopyBackwards", self=lambda grad: grad * 0, src=lambda grad: grad)
derivative("_to_copy", "ToCopyBackward0",
           self=lambda grad, self_dtype, self_device: grad.to(device=self_device, dtype=self_dtype))
derivative("zero_", "ZeroBackward0", self=lambda grad: grad * 0)
derivative("fill_.Scalar", "FillBackward2", self=lambda grad: grad * 0)
derivative("fill_.Tensor", "FillBackward3", self=lambda grad: grad * 0, value=lambda grad: grad.sum())
derivative("flip", "FlipBackward0", self=lambda grad, dims: aten.flip.default(grad, dims))
derivative("roll", "RollBackward0",
           self=lambda grad, shifts, dims: aten.roll.default(grad, [-s for s in shifts], dims))
derivative("repeat", "RepeatBackward0", self=lambda grad, self_sizes, repeats: _repeat_backward(grad, self_sizes, repeats))
derivative("constant_pad_nd", "ConstantPadNdBackward0",
           self=lambda grad, pad: aten.constant_pad_nd.default(grad, [-p for p in pad]))

# ---------------------------------------------------------------------------------------------
# Indexing
# ---------------------------------------------------------------------------------------------

derivative("index.Tensor", "IndexBackward0",
           self=lambda grad, self_sizes, indices: aten.index_put.default(_zeros(self_sizes, grad), indices, grad, True))
derivative("index_put", "IndexPutBackward0",
           self=lambda grad, indices, values, accumulate: grad if accumulate
           else aten.index_put.default(grad, indices, values.new_zeros([]).to(grad.dtype), False),
           values=lambda grad, indices: aten.index.Tensor(grad, indices))
derivative("index_select", "IndexSelectBackward0",
           self=lambda grad, self_sizes, dim, index: _zeros(self_sizes, grad).index_add(dim, index, grad))
derivative("gather", "GatherBackward0",
           self=lambda grad, self_sizes, dim, index: _zeros(self_sizes, grad).scatter_add(dim, index, grad))
derivative("scatter.src", "ScatterBackward0",
           self=lambda grad, dim, index: aten.scatter.value(grad, dim, index, 0),
           src=lambda grad, dim, index: grad.gather(dim, index))
derivative("scatter.value", "ScatterBackward1", self=lambda grad, dim, index: aten.scatter.value(grad, dim, index, 0))
derivative("scatter_add", "ScatterAddBackward0", self=lambda grad: grad, src=lambda grad, dim, index: grad.gather(dim, index))
derivative("masked_select", "MaskedSelectBackward0",
           self=lambda grad, self_sizes, mask: aten.index_put.default(
               _zeros(self_sizes, grad), [mask.expand(list(self_sizes))], grad, True))
derivative("index_add", "IndexAddBackward0",
           self=lambda grad: grad, source=lambda grad, dim, index, alpha: _scale(grad.index_select(dim, index), alpha))

# The in-place twin of index_put is index_put_ (same arguments but the name differs by "_").
_op("index_put_").derivative = Derivative(_op("index_put_"), "IndexPutBackward0", {
    "self": lambda grad, indices, values, accumulate: grad if accumulate
    else aten.index_put.default(grad, indices, values.new_zeros([]).to(grad.dtype), False),
    "values": lambda grad, indices: aten.index.Tensor(grad, indices),
})

# ---------------------------------------------------------------------------------------------
# Neural-network ops
# ---------------------------------------------------------------------------------------------


def _embedding_backward(grad, weight_sizes, indices, padding_idx):
    flat = indices.reshape(-1)
    g = grad.reshape(-1, weight_sizes[-1])
    if padding_idx is not None and padding_idx >= 0:
        g = _masked(g, (flat != padding_idx).unsqueeze(1))
    return _zeros(weight_sizes, grad).index_add(0, flat, g)


derivative("embedding", "EmbeddingBackward0",
           weight=lambda grad, weight_sizes, indices, padding_idx: _embedding_backward(grad, weight_sizes, indices, padding_idx))
derivative("native_dropout", "NativeDropoutBackward0",
           input=lambda grads, p, result1: grads[0] * result1.to(grads[0].dtype) * (1.0 / (1 - p) if p < 1 else 0.0))
derivative("mse_loss", "MseLossBackward0",
           self=lambda grad, self, target, reduction: _reduction(2 * (self - target) * grad, reduction, self.numel()),
           target=lambda grad, self, target, reduction: _reduction(-2 * (self - target) * grad, reduction, self.numel()))
derivative("l1_loss", "L1LossBackward0",
           self=lambda grad, self, target, reduction: _reduction((self - target).sign() * grad, reduction, self.numel()),
           target=lambda grad, self, target, reduction: _reduction(-(self - target).sign() * grad, reduction, self.numel()))
derivative("binary_cross_entropy_with_logits", "BinaryCrossEntropyWithLogitsBackward0",
           self=lambda grad, self, target, weight, pos_weight, reduction: _reduction(
               _bce_logits_grad(self, target, weight, pos_weight) * grad, reduction, self.numel()),
           target=lambda grad, self, weight, pos_weight, reduction: _reduction(
               -self * (weight if weight is not None else 1) * grad, reduction, self.numel())
           if pos_weight is None else None)
derivative("binary_cross_entropy", "BinaryCrossEntropyBackward0",
           self=lambda grad, self, target, weight, reduction: _reduction(
               (self - target) / (self * (1 - self)).clamp_min(1e-12) * (weight if weight is not None else 1) * grad,
               reduction, self.numel()),
           # d/d target of -(t log x + (1 - t) log(1 - x)) is -logit(x) (unclamped, as PyTorch's)
           target=lambda grad, self, weight, reduction: _reduction(
               ((1 - self).log() - self.log()) * grad * (weight if weight is not None else 1), reduction, self.numel()))


def _bce_logits_grad(self, target, weight, pos_weight):
    sig = self.sigmoid()
    if pos_weight is not None:
        g = (pos_weight * target + 1 - target) * sig - pos_weight * target
    else:
        g = sig - target
    return g * weight if weight is not None else g


# ---------------------------------------------------------------------------------------------
# Ops whose outputs never need a gradient
# ---------------------------------------------------------------------------------------------

nondifferentiable(
    "detach", "lift_fresh", "_local_scalar_dense", "empty_like", "zeros_like", "ones_like", "full_like",
    "rand_like", "randn_like", "bernoulli", "bernoulli.p", "multinomial", "uniform_", "normal_",
    "bernoulli_.float", "bernoulli_.Tensor", "random_", "random_.from", "random_.to", "exponential_",
    "set_.source_Tensor", "resize_", "view.dtype",
)


# ---------------------------------------------------------------------------------------------
# unfold and the spectral decompositions (eigh, svd, svdvals)
# ---------------------------------------------------------------------------------------------


def _unfold_backward(grad, self_sizes, dimension, size, step):
    # Window i, position j of the output reads input element i * step + j along ``dimension``.
    d = dimension % len(self_sizes) if self_sizes else 0
    n_windows = grad.shape[d]
    out = _zeros(self_sizes, grad)
    for j in range(size):
        index = aten.arange.default(n_windows, device=grad.device, pin_memory=False) * step + j
        out = out.index_add(d, index, aten.select.int(grad, -1, j))
    return out


def _eigh_backward(grads, result0, result1):
    # A = V diag(L) V^T.  gA = V (diag(gL) + (V^T gV) / E) V^T,  E_ij = L_j - L_i (1 on the diagonal).
    g_l, g_v = grads
    lam, v = result0, result1
    vt = v.transpose(-2, -1)
    inner = lam.new_zeros(list(v.shape))
    if g_v is not None:
        e = lam.unsqueeze(-2) - lam.unsqueeze(-1)
        e = e + aten.diag_embed.default(lam.new_ones(list(lam.shape)))
        inner = (vt @ g_v) / e
        inner = inner - aten.diag_embed.default(inner.diagonal(0, -2, -1))
    if g_l is not None:
        inner = inner + aten.diag_embed.default(g_l)
    return v @ inner @ vt


def _svdvals_backward(grad, A):
    u, _s, vh = aten.linalg_svd.default(A, False)
    return (u * grad.unsqueeze(-2)) @ vh


derivative("unfold", "UnfoldBackward0",
           self=lambda grad, self_sizes, dimension, size, step: _unfold_backward(grad, self_sizes, dimension, size, step))
derivative("linalg_eigh", "LinalgEighBackward0", self=lambda grads, result0, result1: _eigh_backward(grads, result0, result1))
derivative("linalg_svdvals", "LinalgSvdBackward0", A=lambda grad, A: _svdvals_backward(grad, A))


def _svd_backward(grads, A, full_matrices, result0, result1, result2):
    # Reduced SVD A = U diag(S) Vh (real case), with V = Vh^T and E_jk = S_k^2 - S_j^2:
    #   gA = U [ (skew(U^T gU) / E) S + S (skew(V^T gV) / E) + diag(gS) ] Vh
    #        + (I - U U^T) gU S^-1 Vh + U S^-1 gV^T (I - V V^T)         (skew(X) = X - X^T)
    g_u, g_s, g_vh = grads
    k = result1.shape[-1]
    u = aten.slice.Tensor(result0, -1, 0, k)
    vh = aten.slice.Tensor(result2, -2, 0, k)
    s = result1
    # With full_matrices=True the extra columns of U (rows of Vh) are not unique; like PyTorch we
    # ignore their gradient.
    g_u = aten.slice.Tensor(g_u, -1, 0, k)
    g_vh = aten.slice.Tensor(g_vh, -2, 0, k)
    mt = lambda x: x.transpose(-2, -1)  # noqa: E731
    v, g_v = mt(vh), mt(g_vh)
    s2 = s * s
    e = s2.unsqueeze(-2) - s2.unsqueeze(-1)
    e = e + aten.diag_embed.default(s.new_ones(list(s.shape)))      # 1 on the diagonal
    utgu = mt(u) @ g_u
    vtgv = mt(v) @ g_v
    inner = ((utgu - mt(utgu)) / e) * s.unsqueeze(-2) + s.unsqueeze(-1) * ((vtgv - mt(vtgv)) / e)
    inner = inner + aten.diag_embed.default(g_s)
    ga = u @ inner @ vh
    m, n = A.shape[-2], A.shape[-1]
    s_inv = 1 / s
    if m > k:
        ga = ga + (g_u - u @ utgu) * s_inv.unsqueeze(-2) @ vh
    if n > k:
        ga = ga + u @ (mt(g_v - v @ vtgv) * s_inv.unsqueeze(-1))
    return ga


derivative("linalg_svd", "LinalgSvdBackward0",
           A=lambda grads, A, full_matrices, result0, result1, result2: _svd_backward(
               grads, A, full_matrices, result0, result1, result2))
