"""Adamax (mirrors ``torch/optim/adamax.py``, single-tensor path): Adam with the infinity norm.

State per parameter, made at its first step: ``step`` (a float32 scalar tensor), ``exp_avg``
(the first moment m) and ``exp_inf`` (an exponentially weighted infinity norm u). One step::

    g = g + weight_decay * p                 (if weight_decay)
    m = lerp(m, g, 1 - beta1)
    u = max(beta2 * u, |g| + eps)
    p = p - lr / (1 - beta1**step) * m / u

with PyTorch's in-place tensor ops in PyTorch's order (``differentiable=True`` takes the max
with ``amax`` over a stacked pair, as PyTorch does, so autograd can follow it).
"""

from __future__ import annotations

import minitorch_nn as _t
from minitorch_nn.optim.optimizer import Optimizer, _use_grad_for_differentiable

__all__ = ["Adamax"]


class Adamax(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "foreach": foreach,
            "maximize": maximize, "differentiable": differentiable, "capturable": capturable,
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
        """One Adamax update of every parameter that has a gradient; returns ``closure()`` if given."""
        loss = None
        if closure is not None:
            with _t.enable_grad():
                loss = closure()
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps, weight_decay = group["lr"], group["eps"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _t.tensor(0.0, dtype=_t.float32)
                    state["exp_avg"] = _t.zeros_like(p)
                    state["exp_inf"] = _t.zeros_like(p)
                exp_avg, exp_inf, step_t = state["exp_avg"], state["exp_inf"], state["step"]
                grad = p.grad if not group["maximize"] else -p.grad
                step_t += 1
                if weight_decay != 0:
                    grad = grad.add(p, alpha=weight_decay)
                exp_avg.lerp_(grad, 1 - beta1)
                if not group["differentiable"]:
                    _t.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps), out=exp_inf)
                else:
                    pair = _t.cat([exp_inf.mul_(beta2).unsqueeze(0), grad.abs().add_(eps).unsqueeze_(0)], 0)
                    exp_inf.copy_(_t.amax(pair, 0, keepdim=False))
                clr = lr / (1 - beta1 ** step_t.item())
                p.addcdiv_(exp_avg, exp_inf, value=-clr)
        return loss
