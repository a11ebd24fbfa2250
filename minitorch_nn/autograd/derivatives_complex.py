"""Derivatives of the complex-number ops (mirrors their entries in ``derivatives.yaml`` and the
helpers in ``torch/csrc/autograd/FunctionsManual.cpp``).

PyTorch's convention: for a real loss L and a complex input z, the gradient is the conjugate
Wirtinger derivative dL/dz* (times 2), which for a real z is the ordinary derivative. So:

* ``view_as_real`` and ``view_as_complex`` pass the gradient through the other view;
* ``conj``: the gradient is conjugated;
* ``angle(z)``: ``grad * i z / |z|^2`` (0 at z = 0); for a real input the gradient is 0;
* ``sgn(z) = z/|z|``: ``(g - sgn^2 * conj(g)) / (2|z|)`` (0 at z = 0); 0 for a real input;
* ``polar(r, theta)``: ``Re(conj(g) sgn(result))`` for r, ``Re(conj(g) * i * result)`` for theta;
* ``complex(re, im)``: the real and imaginary parts of the gradient.

The formulas of the ordinary ops (``mul``, ``exp``, ``mm``...) conjugate their derivative
themselves (``derivatives.py``). ``abs`` uses ``sgn``, and a real input reached through complex
ops receives the real part of its gradient (``engine._validate``).
"""

from __future__ import annotations

from minitorch_nn._ops import aten
from minitorch_nn.autograd.derivatives import derivative


def _real(t):
    """The real parts of a complex tensor (``t.real``, as the ops it is made of)."""
    return aten.select.int(aten.view_as_real.default(t), -1, 0)


def _angle_backward(grad, self):
    if not self._impl.dtype.is_complex:
        return grad * 0
    size2 = self.abs().pow(2)
    scaled = grad * self / size2 * 1j
    return aten.where.self(self == 0, scaled.new_zeros([]), scaled)


def _sgn_backward(grad, self, result):
    if not self._impl.dtype.is_complex:
        return grad * 0
    size = self.abs()
    out = (grad - result * result * aten._conj.default(grad)) / (2 * size)
    return aten.where.self(size == 0, out.new_zeros([]), out)


def _polar_abs(grad, result):
    return _real(aten._conj.default(grad) * aten.sgn.default(result))


def _polar_angle(grad, result):
    return _real(aten._conj.default(grad) * (result * 1j))


derivative("view_as_real", "ViewAsRealBackward0",
           self=lambda grad: aten.view_as_complex.default(grad.contiguous()))
derivative("view_as_complex", "ViewAsComplexBackward0",
           self=lambda grad: aten.view_as_real.default(grad.contiguous()))
derivative("_conj", "ConjBackward0", self=lambda grad: aten._conj.default(grad) if grad.dtype.is_complex else grad)
derivative("_conj_physical", "ConjPhysicalBackward0",
           self=lambda grad: aten._conj_physical.default(grad) if grad.dtype.is_complex else grad)
derivative("angle", "AngleBackward0", self=_angle_backward)
derivative("sgn", "SgnBackward0", self=_sgn_backward)
derivative("polar", "PolarBackward0", abs=_polar_abs, angle=_polar_angle)
derivative("complex", "ComplexBackward0",
           real=lambda grad: _real(grad),
           imag=lambda grad: aten.select.int(aten.view_as_real.default(grad.contiguous()), -1, 1))
