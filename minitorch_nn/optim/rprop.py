"""Rprop, resilient backpropagation (mirrors ``torch/optim/rprop.py``, single-tensor path).

Rprop ignores the gradient's size and uses only its sign. Each element keeps its own step size,
which grows by ``etaplus`` while the gradient keeps its sign and shrinks by ``etaminus`` when the
sign flips (a minimum was jumped over), clamped to ``step_sizes = (min, max)``. State per
parameter: ``step``, ``prev`` (the previous gradient) and ``step_size``. One step::

    s = sign(g * prev):  s > 0 -> etaplus,  s < 0 -> etaminus,  s == 0 -> 1
    step_size = clamp(step_size * s, min, max)
    g = 0 where the sign flipped      (no move there this step, and no flip counted next time)
    p = p - sign(g) * step_size
    prev = g

In-place ops in PyTorch's order, so trajectories are identical.
"""

from __future__ import annotations

import minitorch_nn as _t
from minitorch_nn.optim import _single_tensor as _st
from minitorch_nn.optim.optimizer import Optimizer, _use_grad_for_differentiable

__all__ = ["Rprop"]


class Rprop(Optimizer):
    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        _st.check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            for key, default in (("foreach", None), ("maximize", False), ("differentiable", False),
                                 ("capturable", False)):
                group.setdefault(key, default)

    def _state_for(self, p, group):
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _t.zeros((), dtype=_st.scalar_dtype())
            state["prev"] = _t.zeros_like(p)
            lr = _st.as_float(group["lr"])
            # (a complex parameter's real and imaginary parts each get their own step size, lr)
            state["step_size"] = _t.full_like(p.grad, complex(lr, lr) if p.grad.is_complex() else lr)
        return state

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """One Rprop update of every parameter that has a gradient; returns ``closure()`` if given."""
        loss = _st.run_closure(closure)
        for group in self.param_groups:
            etaminus, etaplus = group["etas"]
            step_size_min, step_size_max = group["step_sizes"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                _st.refuse_sparse(p.grad, "Rprop")
                state = self._state_for(p, group)
                prev, step_size = state["prev"], state["step_size"]
                grad = p.grad if not group["maximize"] else -p.grad
                if p.is_complex():
                    # as PyTorch: a complex parameter is updated as the pairs of reals it is made of
                    p, grad, prev, step_size = (_t.view_as_real(x) for x in (p, grad, prev, step_size))
                state["step"] += 1
                sign = grad.mul(prev.clone() if group["differentiable"] else prev).sign()
                sign[sign.gt(0)] = etaplus
                sign[sign.lt(0)] = etaminus
                sign[sign.eq(0)] = 1
                step_size.mul_(sign).clamp_(step_size_min, step_size_max)
                grad = grad.clone()
                grad[sign.eq(etaminus)] = 0
                p.addcmul_(grad.sign(), step_size, value=-1)
                prev.copy_(grad)
        return loss
