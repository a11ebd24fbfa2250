"""Rprop, resilient backpropagation (mirrors ``torch/optim/rprop.py``, single-tensor path).

Rprop ignores the gradient's size and keeps a step size per element: it grows by ``etaplus``
while the gradient keeps its sign, shrinks by ``etaminus`` when the sign flips (and that
element then stands still for one step), clamped to ``step_sizes = (min, max)``.

State per parameter, made at its first step: ``step`` (a float32 scalar tensor), ``prev`` (the
previous step's gradient, zeroed where the sign flipped) and ``step_size`` (starting at ``lr``).
One step::

    sign = sign(g * prev) mapped to etaplus (> 0), etaminus (< 0) or 1 (0)
    step_size = clamp(step_size * sign, min, max)
    g = 0 where sign == etaminus
    p = p - sign(g) * step_size
    prev = g

with PyTorch's tensor ops (boolean-mask assignments included) in PyTorch's order.
"""

from __future__ import annotations

import minitorch_nn as _t
from minitorch_nn.optim.optimizer import Optimizer, _use_grad_for_differentiable

__all__ = ["Rprop"]


class Rprop(Optimizer):
    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False,
                 foreach=None, maximize=False, differentiable=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {
            "lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach, "maximize": maximize,
            "differentiable": differentiable, "capturable": capturable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """One Rprop update of every parameter that has a gradient; returns ``closure()`` if given."""
        loss = None
        if closure is not None:
            with _t.enable_grad():
                loss = closure()
        for group in self.param_groups:
            etaminus, etaplus = group["etas"]
            step_size_min, step_size_max = group["step_sizes"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                grad = p.grad
                if len(state) == 0:
                    state["step"] = _t.zeros((), dtype=_t.float32)
                    state["prev"] = _t.zeros_like(p)
                    state["step_size"] = _t.full_like(grad, group["lr"])
                prev, step_size = state["prev"], state["step_size"]
                if group["maximize"]:
                    grad = -grad
                state["step"] += 1
                sign = grad.mul(prev.clone() if group["differentiable"] else prev).sign()
                sign[sign.gt(0)] = etaplus
                sign[sign.lt(0)] = etaminus
                sign[sign.eq(0)] = 1
                step_size.mul_(sign).clamp_(step_size_min, step_size_max)
                # where the sign flipped, this element stands still and forgets its gradient
                grad = grad.clone()
                grad[sign.eq(etaminus)] = 0
                p.addcmul_(grad.sign(), step_size, value=-1)
                prev.copy_(grad)
        return loss
