"""Derivatives of ``xlogy``, ``hypot``, ``copysign``, ``fmax``, ``fmin``, ``logaddexp``, ``logaddexp2``,
``ldexp`` and of ``pow_.Tensor``.

Mirrors these ops' entries in PyTorch's ``tools/autograd/derivatives.yaml``, with the same node
names (``XlogyBackward0``...) and the same answers at the awkward points, which gradcheck cannot
see but users can:

* ``xlogy(x, y)``: d/dx is ``log(y)``, taken as 0 where ``x == 0`` and ``y <= 0`` (the function is
  0 along ``x == 0`` there); d/dy is ``x / y`` (NaN at ``x == y == 0``, as in PyTorch). The three
  overloads are three nodes: ``Tensor`` 0, ``Scalar_Self`` (a number ``x``) 1, ``Scalar_Other`` 2.
* ``hypot``: ``x / result`` and ``y / result`` (NaN at the origin).
* ``copysign(x, y)``: d/dx is ``result / x``, 0 where ``x == 0``; ``y`` gets zeros (not None: the
  sign is a step function).
* ``fmax``/``fmin``: the whole gradient goes to one side, ``self`` on ties and wherever ``other``
  is NaN (unlike ``maximum``, which splits ties in halves).

``float_power`` needs nothing here: it is ``_to_copy`` then ``pow``, whose formulas are in
``derivatives.py``; ``float_power_`` with a tensor exponent is ``pow_.Tensor`` (``PowBackward1``).
Forward mode (JVP) formulas follow PyTorch's too, where its answers at those points differ from
what the double-vjp fallback of ``derivatives_forward.py`` would give (``xlogy``; ``fmax`` gives a
tie to ``other``'s tangent, ``fmin`` to ``self``'s); ``hypot`` and ``copysign`` use the fallback.
"""

from __future__ import annotations

from minitorch_nn._ops import aten
from minitorch_nn.autograd.derivatives import LN2, _op, derivative
from minitorch_nn.autograd.derivatives_forward import FORMULAS, forward
from minitorch_nn.autograd.recording import Derivative


def _xlogy_self(grad, self, other):
    g = aten.xlogy.Tensor(grad, other)
    return g.masked_fill((self == 0).logical_and(other <= 0), 0)


def _xlogy_self_number(grad, self, other):
    g = aten.xlogy.Scalar_Other(grad, other)
    return g if other > 0 else g.masked_fill(self == 0, 0)  # (a NaN ``other`` is not > 0: masked)


derivative("xlogy.Tensor", "XlogyBackward0", self=_xlogy_self, other=lambda grad, self, other: grad * self / other)
derivative("xlogy.Scalar_Self", "XlogyBackward1", other=lambda grad, self, other: grad * self / other)
derivative("xlogy.Scalar_Other", "XlogyBackward2", self=_xlogy_self_number)

derivative("hypot", "HypotBackward0",
           self=lambda grad, self, result: grad * self / result,
           other=lambda grad, other, result: grad * other / result)


def _copysign_self(grad, self, result):
    ratio = (result / self).masked_fill(self == 0, 0)
    return grad * ratio


derivative("copysign.Tensor", "CopysignBackward0",
           self=_copysign_self, other=lambda grad, other_sizes: grad.new_zeros(list(other_sizes)))
derivative("copysign.Scalar", "CopysignBackward1", self=_copysign_self)


def _self_wins(self, other, compare):
    # where ``self`` is the answer of fmax/fmin: it compares right, or ``other`` is NaN
    return compare(self, other).logical_or(other.isnan())


derivative("fmax", "FmaxBackward0",
           self=lambda grad, self, other: grad.masked_fill(_self_wins(self, other, aten.ge.Tensor).logical_not(), 0),
           other=lambda grad, self, other: grad.masked_fill(_self_wins(self, other, aten.ge.Tensor), 0))
derivative("fmin", "FminBackward0",
           self=lambda grad, self, other: grad.masked_fill(_self_wins(self, other, aten.le.Tensor).logical_not(), 0),
           other=lambda grad, self, other: grad.masked_fill(_self_wins(self, other, aten.le.Tensor), 0))

derivative("logaddexp", "LogaddexpBackward0",
           self=lambda grad, self, other: grad / (1 + (other - self).exp()),
           other=lambda grad, self, other: grad / (1 + (self - other).exp()))
derivative("logaddexp2", "Logaddexp2Backward0",
           self=lambda grad, self, other: grad / (1 + (other - self).exp2()),
           other=lambda grad, self, other: grad / (1 + (self - other).exp2()))
_LDEXP = {"self": lambda grad, other: grad * other.exp2(),
          "other": lambda grad, self, other: grad * self * LN2 * other.exp2()}
derivative("ldexp.Tensor", "LdexpBackward0", **_LDEXP)
_op("ldexp_").derivative = Derivative(_op("ldexp_"), "LdexpBackward0", _LDEXP)

# ``x.pow_(tensor)`` is pow.Tensor_Tensor's node, as ``x.pow_(number)`` is pow.Tensor_Scalar's
_pow_tt = _op("pow.Tensor_Tensor").derivative
_op("pow_.Tensor").derivative = Derivative(
    _op("pow_.Tensor"), "PowBackward1", {name: fn for name, fn, _, _ in _pow_tt.formulas})


def _no_derivative(op_name):
    def formula(grad):
        raise RuntimeError(f"derivative for aten::{op_name} is not implemented")

    return formula


# ``x // y``, ``x //= y`` and ``7 % x`` have no derivative in PyTorch: on a tensor that requires grad
# they record PyTorch's ``torch::autograd::NotImplemented`` node, which fails only if backward
# reaches it, with PyTorch's words. (A registered "derivative" that raises gives that node its
# name and message, and lets the in-place form replace ``self``'s history.)
_NOT_IMPLEMENTED = "torch::autograd::NotImplemented"
for _name, _inputs in (("floor_divide", ("self", "other")), ("floor_divide_.Tensor", ("self", "other")),
                       ("remainder.Scalar_Tensor", ("other",)), ("heaviside", ("self", "values")),
                       ("heaviside_", ("self", "values"))):
    _raise = _no_derivative(_name.split(".")[0])
    _op(_name).derivative = Derivative(_op(_name), _NOT_IMPLEMENTED, {i: _raise for i in _inputs})


# -- forward mode ------------------------------------------------------------------------------------


def _xlogy_jvp(self_t, other_t, self, other):
    t = aten.xlogy.Tensor(self_t, other).masked_fill((self == 0).logical_and(other <= 0), 0)
    return t + other_t * self / other


def _xlogy_number_jvp(self_t, self, other):
    t = aten.xlogy.Scalar_Other(self_t, other)
    return t if other > 0 else t.masked_fill(self == 0, 0)


def _pick_jvp(self_t, other_t, self_picked):
    return other_t + self_picked.to(self_t.dtype) * (self_t - other_t)


forward("xlogy.Tensor", _xlogy_jvp)
forward("xlogy.Scalar_Other", _xlogy_number_jvp)
forward("xlogy.Scalar_Self", lambda other_t, self, other: other_t * self / other)
forward("fmax", lambda self_t, other_t, self, other: _pick_jvp(self_t, other_t, (self > other).logical_or(other.isnan())))
forward("fmin", lambda self_t, other_t, self, other: _pick_jvp(self_t, other_t, (self <= other).logical_or(other.isnan())))
FORMULAS[_op("pow_.Tensor")] = FORMULAS[_op("pow.Tensor_Tensor")]
