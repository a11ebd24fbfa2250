"""The JVP (forward-mode derivative) of every op, and the forward-AD step of the dispatch chain
(:func:`forward_ad_layer`) that runs them: how one op call computes its outputs' tangents.

Mirrors the ``result:`` (forward derivative) entries of PyTorch's ``derivatives.yaml``. Where
``derivatives.py`` says how a gradient flows *back* to each input, a JVP formula here says how the
inputs' tangents flow *forward* to the output: ``y = f(x, w)`` gives ``y_t = df/dx x_t + df/dw w_t``.

A formula is a function whose parameter names say what it reads, as in ``derivatives.py``:

* ``<arg>_t``: that argument's tangent (PyTorch's ``self_t``); an input without a tangent gets
  zeros (``0.0`` for a Python number), so formulas never test for ``None``; a ``Tensor[]``
  argument gives a list;
* ``<arg>``: the argument's value (PyTorch's ``self_p``), its default when not passed;
* ``result`` / ``result0``, ``result1``...: the op's outputs.

It returns the output's tangent (a tuple for ops with several outputs, ``None`` for outputs
without one, such as indices). For ops that are linear in some of their tensor arguments (views,
indexing, ``cat``, ``clone``...) :func:`linear` says so, and the tangent is the op itself applied
to those arguments' tangents: the tangent of a view is the same view of the tangent.

Ops without a formula here fall back on their reverse-mode derivative with the "double vjp" trick
(:func:`jvp_by_double_vjp`): the vjp ``u -> J^T u`` is linear in ``u``, so differentiating
``<J^T u, t>`` with respect to ``u`` gives ``J t``. That costs a backward pass through the
formula but makes every op that has a differentiable reverse formula work (and, when that formula
uses an op with no derivative, raises PyTorch's "... has not been implemented yet"). An op with
no derivative at all runs with forward AD still on, since its kernel may be made of other ops;
if a float output comes back without a tangent, PyTorch's ``NotImplementedError`` ("Trying to use
forward AD with aten::... that does not support it.").

In-place ops reuse their out-of-place op's formula (``self`` then means the value before the op,
which is cloned first); :func:`run_with_tangents` writes the new tangent into the existing one.
"""

from __future__ import annotations

import math

from minitorch_nn import _dispatch
from minitorch_nn._C import TensorBase
from minitorch_nn._ops import aten
from minitorch_nn.autograd import forward_ad as _fw
from minitorch_nn.autograd import grad_mode as _gm
from minitorch_nn.autograd.recording import NONDIFFERENTIABLE, _metadata

# OpOverload -> formula (a function, or a _Linear)
FORMULAS: dict = {}

# PyTorch's message for an op that has a derivative but no forward formula; here, for an op whose
# reverse formula uses a kernel that has no derivative, so that the double-vjp fallback cannot run.
_NOT_IMPLEMENTED_MESSAGE = (
    "Trying to use forward AD with {name} that does not support it because it has not been implemented yet.\n"
    "Please file an issue to PyTorch at https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml "
    "so that we can prioritize its implementation or submit a PR adding the implementation to derivatives.yaml"
)


# ---------------------------------------------------------------------------------------------
# Registration
# ---------------------------------------------------------------------------------------------


def _op(name):
    packet, _, overload = name.partition(".")
    return getattr(getattr(aten, packet), overload or "default")


class _Linear:
    """The op is linear in ``names`` (jointly): its tangent is the op applied to their tangents."""

    def __init__(self, op, names):
        self.op = op          # always the out-of-place op, so the tangent is a fresh tensor
        self.names = names


def forward(op_name, formula):
    """Register ``formula`` for ``op_name`` and for its in-place twin (``add_`` for ``add``)."""
    op = _op(op_name)
    FORMULAS[op] = formula
    packet, _, overload = op_name.partition(".")
    twin = getattr(aten, packet + "_", None)
    if twin is not None and (overload or "default") in twin._overloads:
        FORMULAS.setdefault(twin._overloads[overload or "default"], formula)


def linear(op_name, *names):
    """``op_name`` is linear in the tensor arguments ``names`` (default ``self``)."""
    forward(op_name, _Linear(_op(op_name), names or ("self",)))


# ---------------------------------------------------------------------------------------------
# The forward-AD step of the dispatch chain
# ---------------------------------------------------------------------------------------------


def forward_ad_layer(op, args, kwargs):
    """Installed as ``_dispatch.forward_ad_layer`` while a dual level is active (``forward_ad.py``).

    When no input carries a tangent it steps aside. Otherwise it runs the op through the rest of
    the chain and then the op's JVP formula, both with itself switched off: the formulas see plain
    tensors (their tangents are not propagated) while reverse mode still records them."""
    level = _fw._current_level
    if not _fw.has_tangent(args, kwargs, level):
        return NotImplemented
    if treated_as_composite(op):
        return run_composite(op, args, kwargs, level)   # the ops its kernel calls carry the tangents
    with _fw.forward_ad_off():
        return run_with_tangents(op, args, kwargs, level)


class _Call:
    """The arguments of one op call, bound to the schema's names, and their tangents."""

    def __init__(self, op, args, kwargs, level):
        self.op, self.level = op, level
        arguments = op._schema.arguments
        self.values = {}
        for i, a in enumerate(arguments):
            if i < len(args):
                self.values[a.name] = args[i]
            elif kwargs and a.name in kwargs:
                self.values[a.name] = kwargs[a.name]
            else:
                self.values[a.name] = a.default if a.has_default else None
        self.outs = ()
        self.before = {}   # in-place ops: {"self": a clone of self taken before the op ran}

    def tangent(self, name, zeros=True):
        """The tangent of argument ``name``: zeros when it has none (``None`` if ``zeros`` is
        false), ``None`` for non-tensors and non-float tensors; a list for ``Tensor[]``."""
        v = self.values[name]
        if type(v) in (list, tuple):
            return [self._tangent_of(x, zeros) for x in v]
        return self._tangent_of(v, zeros)

    def _tangent_of(self, x, zeros):
        if isinstance(x, (int, float, complex)) and not isinstance(x, bool) and zeros:
            return 0.0    # a Python number passed where the schema says Tensor: a constant
        if not isinstance(x, TensorBase) or not (x.dtype.is_floating_point or x.dtype.is_complex):
            return None
        t = _fw.get_tangent(x, self.level)
        if t is None and zeros:
            t = aten.zeros_like.default(x)
        return t

    def value(self, p):
        """What a formula parameter named ``p`` reads (see the module docstring)."""
        if p in self.before:
            return self.before[p]
        if p in self.values:
            return self.values[p]
        if p.startswith("result") and (len(p) == 6 or p[6:].isdigit()):
            return self.outs[int(p[6:]) if len(p) > 6 else 0]
        if p.endswith("_t") and p[:-2] in self.values:
            return self.tangent(p[:-2])
        owner, _, attr = p.rpartition("_")   # "self_sizes": metadata of an argument
        return _metadata(self.values[owner], attr)


def _is_float(o):
    return isinstance(o, TensorBase) and (o.dtype.is_floating_point or o.dtype.is_complex)


def treated_as_composite(op):
    """An op with neither a JVP formula nor a derivative: its kernel may be made of other ops
    (``einsum``), so it runs with forward AD still on and those ops compute the tangents."""
    return op.derivative is None and op not in FORMULAS


def run_composite(op, args, kwargs, level):
    """Run ``op`` under forward AD (see :func:`treated_as_composite`); if a float output comes
    back without a tangent, the op has no forward derivative: PyTorch's NotImplementedError."""
    out = NotImplemented
    if _dispatch.autograd_layer is not None:
        out = _dispatch.autograd_layer(op, args, kwargs)
    if out is NotImplemented:
        out = _dispatch.below_autograd(op, args, kwargs)
    for o in (out if type(out) in (tuple, list) else (out,)):
        if _is_float(o) and _fw.get_tangent(o, level) is None:
            raise NotImplementedError(f"Trying to use forward AD with aten::{op._schema.name} that does not support it.")
    return out


def run_with_tangents(op, args, kwargs, level):
    """Run ``op`` through the rest of the chain, then give its outputs their tangents."""
    formula = FORMULAS.get(op)
    d = op.derivative
    if formula is None and d is NONDIFFERENTIABLE:
        out = _dispatch.dispatch(op, args, kwargs)
        if op.is_inplace and isinstance(args[0], TensorBase):
            tangent = _fw.get_tangent(args[0], level)
            if tangent is not None:
                tangent.zero_()   # uniform_() & co.: the new values do not depend on the old ones
        return _mark_nondifferentiable_views(out)

    call = _Call(op, args, kwargs, level)
    inplace = op.is_inplace
    if inplace and _is_float(args[0]) and _reads_self(formula, d):
        call.before["self"] = aten.clone.default(args[0])   # the formula reads the value before the op
    out = _dispatch.dispatch(op, args, kwargs)
    call.outs = out if type(out) in (tuple, list) else (out,)

    if formula is None:
        tangents = jvp_by_double_vjp(d, call)
    elif isinstance(formula, _Linear):
        tangents = _apply_linear(formula, call)
    else:
        code = formula.__code__
        tangents = formula(*[call.value(p) for p in code.co_varnames[:code.co_argcount]])
    if type(tangents) not in (tuple, list):
        tangents = (tangents,)

    if inplace:
        self = args[0]
        if tangents[0] is not None and _is_float(self):
            current = _fw.get_tangent(self, level)
            if current is None:
                current = _fw.zero_tangent_for(self, level)
            current.copy_(tangents[0])
        return out
    for o, t in zip(call.outs, tangents):
        if t is not None and _is_float(o):
            if tuple(t.shape) != tuple(o.shape):
                t = t.expand(list(o.shape)).clone()   # e.g. a formula that gave a broadcastable 0
            _fw.set_tangent(o, t, level)
    return out


def _reads_self(formula, d):
    """Whether the formula (or, without one, a reverse formula) reads the primal ``self``."""
    if isinstance(formula, _Linear):
        return False
    if formula is None:
        return any("self" in params for _name, _fn, params, _is_list in d.formulas)
    code = formula.__code__
    return "self" in code.co_varnames[:code.co_argcount]


def _mark_nondifferentiable_views(out):
    """Outputs of detach() & co. that are views must never show their base's tangent."""
    for o in (out if type(out) in (tuple, list) else (out,)):
        if isinstance(o, TensorBase) and o._impl.base is not None:
            _fw.mark_no_tangent(o)
    return out


def _apply_linear(formula, call):
    op = formula.op
    args, kwargs = [], {}
    for a in op._schema.arguments:
        v = call.tangent(a.name) if a.name in formula.names else call.values[a.name]
        if a.kwarg_only:
            kwargs[a.name] = v
        else:
            args.append(v)
    return op(*args, **kwargs)


def jvp_by_double_vjp(d, call):
    """``J t`` from the reverse-mode formulas of derivative ``d`` (see the module docstring)."""
    from minitorch_nn.autograd.engine import grad, sum_to_size

    outs = call.outs
    # One dummy gradient per output; only the float ones are differentiated against.
    us = [aten.zeros_like.default(o).requires_grad_(True) if _is_float(o) else
          (aten.zeros_like.default(o) if isinstance(o, TensorBase) else None) for o in outs]
    grad_arg = tuple(us) if d.multi_output else us[0]
    keep_graph = _gm.is_grad_enabled() and any(
        isinstance(v, TensorBase) and v.requires_grad for v in _all_tensors(call))
    with _gm.enable_grad():
        total = None
        for name, fn, params, is_list in d.formulas:
            tangents = call.tangent(name, zeros=False)
            primals = call.value(name)
            if not is_list:
                tangents, primals = [tangents], [primals]
            if all(t is None for t in tangents):
                continue
            vjps = fn(grad_arg, *[call.value(p) for p in params])
            if not is_list:
                vjps = [vjps]
            for g, t, x in zip(vjps, tangents, primals):
                if g is None or t is None:
                    continue
                g = sum_to_size(g, tuple(x.shape))
                term = (g * t).sum()
                total = term if total is None else total + term
        wrt = [u for u, o in zip(us, outs) if _is_float(o)]
        if total is None or not total.requires_grad:
            jvps = [None] * len(wrt)
        else:
            try:
                jvps = grad(total, wrt, allow_unused=True, create_graph=keep_graph)
            except RuntimeError as e:
                # the reverse formula used an op that has no derivative (recording.NotImplementedNode)
                if not str(e).startswith("derivative for "):
                    raise
                raise NotImplementedError(_NOT_IMPLEMENTED_MESSAGE.format(name=call.op._schema.name)) from e
    it = iter(jvps)
    result = []
    for o in outs:
        if _is_float(o):
            j = next(it)
            result.append(j if j is not None else aten.zeros_like.default(o))
        else:
            result.append(None)
    return tuple(result)


def _all_tensors(call):
    for v in call.values.values():
        for x in (v if type(v) in (list, tuple) else (v,)):
            if isinstance(x, TensorBase):
                yield x
                t = _fw.get_tangent(x, call.level)
                if t is not None:
                    yield t


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def _scale(t, alpha):
    return t if alpha == 1 else t * alpha


def _zero(result):
    """The tangent of a piecewise-constant op (floor, sign...): zeros."""
    return aten.zeros_like.default(result)


def _where(mask, a, b):
    return aten.where.self(mask, a, b)


def _mask(t, keep):
    return t.masked_fill(keep.logical_not(), 0)


def _pow_jvp(self_t, self, exponent):
    if isinstance(exponent, (int, float)) and exponent == 0:
        return self_t * 0
    if isinstance(exponent, TensorBase):  # 0 where the exponent is 0 (not 0 * inf at self == 0), as PyTorch
        return _where(exponent == 0, self_t.new_zeros([]), self_t * (exponent * self.pow(exponent - 1)))
    return self_t * exponent * self.pow(exponent - 1)


def _dims(dim, ndim):
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(ndim))
    return [dim] if isinstance(dim, int) else list(dim)


# ---------------------------------------------------------------------------------------------
# Pointwise arithmetic
# ---------------------------------------------------------------------------------------------

LN2, LN10 = math.log(2.0), math.log(10.0)

forward("add.Tensor", lambda self_t, other_t, alpha: self_t + _scale(other_t, alpha))
forward("sub.Tensor", lambda self_t, other_t, alpha: self_t - _scale(other_t, alpha))
forward("rsub.Tensor", lambda self_t, other_t, alpha: other_t - _scale(self_t, alpha))
forward("rsub.Scalar", lambda self_t, alpha: -_scale(self_t, alpha))
forward("mul.Tensor", lambda self_t, other_t, self, other: self_t * other + other_t * self)
forward("div.Tensor", lambda self_t, other_t, other, result: (self_t - other_t * result) / other)
forward("div.Tensor_mode", lambda self_t, other_t, other, rounding_mode, result:
        (self_t - other_t * result) / other if rounding_mode is None else _zero(result))
forward("neg", lambda self_t: -self_t)
forward("abs", lambda self_t, self: _abs_jvp(self_t, self))
forward("sign", lambda result: _zero(result))
forward("reciprocal", lambda self_t, result: -self_t * result * result)
forward("pow.Tensor_Scalar", lambda self_t, self, exponent: _pow_jvp(self_t, self, exponent))
forward("pow_.Scalar", lambda self_t, self, exponent: _pow_jvp(self_t, self, exponent))
forward("pow.Tensor_Tensor", lambda self_t, exponent_t, self, exponent, result:
        _pow_jvp(self_t, self, exponent) + exponent_t * _where(
            (self == 0).logical_and(exponent >= 0), exponent_t.new_zeros([]), result * self.log()))
forward("pow.Scalar", lambda exponent_t, self, result:
        exponent_t * result * math.log(self) if self > 0 else _zero(result))
forward("maximum", lambda self_t, other_t, self, other:
        _where(self == other, (self_t + other_t) / 2, _where(self > other, self_t, other_t)))
forward("minimum", lambda self_t, other_t, self, other:
        _where(self == other, (self_t + other_t) / 2, _where(self < other, self_t, other_t)))
forward("lerp.Scalar", lambda self_t, end_t, weight: self_t * (1 - weight) + end_t * weight)
forward("lerp.Tensor", lambda self_t, end_t, weight_t, self, end, weight:
        self_t * (1 - weight) + end_t * weight + weight_t * (end - self))
forward("addcmul", lambda self_t, tensor1_t, tensor2_t, tensor1, tensor2, value:
        self_t + _scale(tensor1_t * tensor2 + tensor2_t * tensor1, value))
forward("addcdiv", lambda self_t, tensor1_t, tensor2_t, tensor1, tensor2, value:
        self_t + _scale(tensor1_t / tensor2 - tensor2_t * tensor1 / (tensor2 * tensor2), value))
forward("clamp", lambda self_t, self, min, max: _mask(
    self_t, (self >= (min if min is not None else -math.inf)) & (self <= (max if max is not None else math.inf))))
forward("clamp_min", lambda self_t, self, min: _mask(self_t, self >= min))
forward("clamp_max", lambda self_t, self, max: _mask(self_t, self <= max))
for _name in ("floor", "ceil", "round", "round.decimals", "trunc", "floor_divide"):
    forward(_name, lambda result: _zero(result))
forward("frac", lambda self_t: self_t.clone())
forward("remainder.Scalar", lambda self_t: self_t.clone())
forward("fmod.Scalar", lambda self_t: self_t.clone())

# ---------------------------------------------------------------------------------------------
# Unary math and activations
# ---------------------------------------------------------------------------------------------

forward("exp", lambda self_t, result: self_t * result)
forward("exp2", lambda self_t, result: self_t * result * LN2)
forward("expm1", lambda self_t, result: self_t * (result + 1))
forward("log", lambda self_t, self: self_t / self)
forward("log2", lambda self_t, self: self_t / (self * LN2))
forward("log10", lambda self_t, self: self_t / (self * LN10))
forward("log1p", lambda self_t, self: self_t / (self + 1))
forward("sqrt", lambda self_t, result: self_t / (2 * result))
forward("rsqrt", lambda self_t, result: -0.5 * self_t * result.pow(3))
forward("sin", lambda self_t, self: self_t * self.cos())
forward("cos", lambda self_t, self: -self_t * self.sin())
forward("tan", lambda self_t, result: self_t * (1 + result * result))
forward("asin", lambda self_t, self: self_t / (1 - self * self).sqrt())
forward("acos", lambda self_t, self: -self_t / (1 - self * self).sqrt())
forward("atan", lambda self_t, self: self_t / (1 + self * self))
forward("atan2", lambda self_t, other_t, self, other: (self_t * other - other_t * self) / (self * self + other * other))
forward("sinh", lambda self_t, self: self_t * self.cosh())
forward("cosh", lambda self_t, self: self_t * self.sinh())
forward("tanh", lambda self_t, result: self_t * (1 - result * result))
forward("sigmoid", lambda self_t, result: self_t * result * (1 - result))
forward("erf", lambda self_t, self: self_t * (2 / math.sqrt(math.pi)) * (-self * self).exp())
forward("erfc", lambda self_t, self: -self_t * (2 / math.sqrt(math.pi)) * (-self * self).exp())
forward("erfinv", lambda self_t, result: self_t * (math.sqrt(math.pi) / 2) * (result * result).exp())
forward("relu", lambda self_t, result: _mask(self_t, result > 0))
forward("silu", lambda self_t, self: self_t * (self.sigmoid() * (1 + self * (1 - self.sigmoid()))))
forward("leaky_relu", lambda self_t, self, negative_slope: _where(self > 0, self_t, self_t * negative_slope))
forward("hardtanh", lambda self_t, self, min_val, max_val: _mask(self_t, (self > min_val) & (self < max_val)))
forward("softplus", lambda self_t, self, beta, threshold: _where(
    self * beta > threshold, self_t, self_t * (self * beta).sigmoid()))
forward("elu", lambda self_t, self, alpha, scale, input_scale: _where(
    self > 0, self_t * scale, self_t * (self * input_scale).exp() * (alpha * scale * input_scale)))
forward("where.self", lambda condition, self_t, other_t: _where(condition, self_t, other_t))
forward("masked_fill.Scalar", lambda self_t, mask: self_t.masked_fill(mask, 0))
forward("masked_fill.Tensor", lambda self_t, value_t, mask: _where(mask, value_t, self_t))


def _gelu_jvp(self_t, self, approximate):
    # the Jacobian is diagonal, so the tangent goes through the gradient's kernel, as in PyTorch
    return aten.gelu_backward.default(self_t, self, approximate=approximate)


forward("gelu", _gelu_jvp)

# ---------------------------------------------------------------------------------------------
# Reductions, softmax
# ---------------------------------------------------------------------------------------------

linear("sum")
linear("sum.dim_IntList")
linear("mean")
linear("mean.dim")
linear("cumsum")
forward("logsumexp", lambda self_t, self, dim, keepdim, result: _logsumexp_jvp(self_t, self, dim, keepdim, result))
forward("_softmax", lambda self_t, dim, result: result * (self_t - (self_t * result).sum([dim], keepdim=True)))
forward("_log_softmax", lambda self_t, dim, result: self_t - (self_t * result.exp()).sum([dim], keepdim=True))


def _logsumexp_jvp(self_t, self, dim, keepdim, result):
    dims = _dims(dim, self.dim())
    r = result if keepdim else _unsqueeze_all(result, dims, self.dim())
    return (self_t * (self - r).exp()).sum(dims, keepdim=keepdim)


def _unsqueeze_all(t, dims, ndim):
    for d in sorted(x % ndim for x in dims):
        t = t.unsqueeze(d)
    return t


# ---------------------------------------------------------------------------------------------
# Matrix products
# ---------------------------------------------------------------------------------------------

forward("mm", lambda self_t, mat2_t, self, mat2: self_t.mm(mat2) + self.mm(mat2_t))
forward("bmm", lambda self_t, mat2_t, self, mat2: self_t.bmm(mat2) + self.bmm(mat2_t))
forward("dot", lambda self_t, tensor_t, self, tensor: self_t.dot(tensor) + self.dot(tensor_t))
forward("mv", lambda self_t, vec_t, self, vec: self_t.mv(vec) + self.mv(vec_t))
forward("outer", lambda self_t, vec2_t, self, vec2: aten.outer.default(self_t, vec2) + aten.outer.default(self, vec2_t))
forward("addmm", lambda self_t, mat1_t, mat2_t, mat1, mat2, beta, alpha:
        _scale(self_t, beta) + _scale(mat1_t.mm(mat2) + mat1.mm(mat2_t), alpha))
forward("baddbmm", lambda self_t, batch1_t, batch2_t, batch1, batch2, beta, alpha:
        _scale(self_t, beta) + _scale(batch1_t.bmm(batch2) + batch1.bmm(batch2_t), alpha))



def _einsum_jvp(equation, tensors, tensors_t):
    # multilinear: one term per operand, with that operand replaced by its tangent
    out = None
    for i, t in enumerate(tensors_t):
        if isinstance(t, TensorBase):
            term = aten.einsum.default(equation, list(tensors[:i]) + [t] + list(tensors[i + 1:]))
            out = term if out is None else out + term
    return out


forward("einsum", _einsum_jvp)

# ---------------------------------------------------------------------------------------------
# Views, shape and indexing ops: linear, so the tangent goes through the same op
# ---------------------------------------------------------------------------------------------

for _name in ("_unsafe_view", "permute", "transpose.int", "t", "unsqueeze", "squeeze", "squeeze.dim",
              "squeeze.dims", "expand", "slice.Tensor", "select.int", "alias", "unfold", "split.Tensor",
              "split_with_sizes", "unbind.int", "diagonal", "diag_embed", "tril", "triu", "clone", "_to_copy",
              "flip", "roll", "repeat", "index.Tensor", "index_select", "gather", "masked_select", "avg_pool2d"):
    linear(_name)
linear("cat", "tensors")
linear("stack", "tensors")
forward("index_put", lambda self_t, indices, values_t, accumulate: aten.index_put.default(
    self_t, indices, values_t.to(self_t.dtype), accumulate))
linear("scatter.src", "self", "src")
linear("scatter_add", "self", "src")
linear("index_add", "self", "source")
linear("embedding", "weight")
forward("view", lambda self_t, size: self_t.reshape(size))   # the tangent may not be viewable as the primal is
forward("_reshape_alias", lambda self_t, size: self_t.reshape(size))
forward("as_strided", lambda self_t, self, size, stride, storage_offset: aten.as_strided.default(
    _fw.in_layout_of(self_t, self), size, stride, storage_offset))
forward("as_strided_", lambda self_t, self, size, stride, storage_offset: aten.as_strided.default(
    _fw.in_layout_of(self_t, self), size, stride, storage_offset))
forward("constant_pad_nd", lambda self_t, pad: aten.constant_pad_nd.default(self_t, pad, 0))
forward("scatter.value", lambda self_t, dim, index: aten.scatter.value(self_t, dim, index, 0))

# in-place writes: the new tangent replaces the old one where the op wrote
forward("copy_", lambda self_t, src_t, self: src_t.to(self_t.dtype).expand(list(self.shape)))
forward("zero_", lambda self_t: self_t * 0)
forward("fill_.Scalar", lambda self_t: self_t * 0)
forward("fill_.Tensor", lambda self_t, value_t: (self_t * 0) + value_t)

# ---------------------------------------------------------------------------------------------
# Neural-network ops
# ---------------------------------------------------------------------------------------------


def _conv_jvp(input_t, weight_t, bias_t, input, weight, bias, stride, padding, dilation, transposed,
              output_padding, groups):
    # convolution is bilinear in (input, weight) and affine in bias
    conv = aten.convolution.default
    out = conv(input_t, weight, None, stride, padding, dilation, transposed, output_padding, groups) \
        + conv(input, weight_t, None, stride, padding, dilation, transposed, output_padding, groups)
    if bias_t is not None:
        out = out + bias_t.reshape([1, -1] + [1] * (out.dim() - 2))
    return out


def _max_pool_jvp(self_t, result1):
    # each output is one input element (result1 holds its flat index in the H*W plane)
    flat = self_t.reshape(list(self_t.shape[:-2]) + [-1])
    idx = result1.reshape(list(result1.shape[:-2]) + [-1])
    return flat.gather(-1, idx).reshape(list(result1.shape)), None


forward("convolution", _conv_jvp)
forward("max_pool2d_with_indices", _max_pool_jvp)
forward("native_dropout", lambda input_t, p, result1: (
    input_t * result1.to(input_t.dtype) * (1.0 / (1 - p) if p < 1 else 0.0), None))
forward("nll_loss_forward", lambda self_t, target, weight, reduction, ignore_index: (
    aten.nll_loss_forward.default(self_t, target, weight, reduction, ignore_index)[0], None))


# ---------------------------------------------------------------------------------------------
# Complex numbers (reverse formulas: derivatives_complex.py). A JVP is the ordinary directional
# derivative, so holomorphic ops need no conjugate here; the others split into real parts.
# ---------------------------------------------------------------------------------------------


def _real(t):
    return aten.select.int(aten.view_as_real.default(t), -1, 0)


def _abs_jvp(self_t, self):
    if not self._impl.dtype.is_complex:
        return self_t * self.sign()
    # d|z| = Re(conj(sgn z) dz)
    return _real(aten._conj.default(aten.sgn.default(self)) * self_t)


def _angle_jvp(self_t, self):
    if not self._impl.dtype.is_complex:
        return aten.zeros_like.default(self_t)
    # d arg z = Im(dz / z) = Re(conj(z) (-i dz)) / |z|^2
    scaled = _real(aten._conj.default(self) * self_t * -1j) / self.abs().pow(2)
    return aten.where.self(self == 0, scaled.new_zeros([]), scaled)


def _sgn_jvp(self_t, self, result):
    if not self._impl.dtype.is_complex:
        return aten.zeros_like.default(result)
    # d(z/|z|) = (dz - sgn * Re(conj(sgn) dz)) / |z|
    size = self.abs()
    out = (self_t - result * _real(aten._conj.default(result) * self_t)) / size
    return aten.where.self(size == 0, out.new_zeros([]), out)


linear("view_as_real")
linear("view_as_complex")
linear("_conj")
linear("_conj_physical")
forward("angle", _angle_jvp)
forward("sgn", _sgn_jvp)
# d(r e^{i theta}) = e^{i theta} (dr + i r dtheta), with e^{i theta} read off the result as sgn(result)
forward("polar", lambda abs_t, angle_t, abs, result:
        aten.complex.default(abs_t, angle_t * abs) * aten.sgn.default(result))
forward("complex", lambda real_t, imag_t: aten.complex.default(real_t, imag_t))
