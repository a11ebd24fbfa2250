"""RAdam, rectified Adam (mirrors ``torch/optim/radam.py``, single-tensor path).

Adam's adaptive step is unreliable in the first steps, when ``v`` has seen few gradients. RAdam
estimates the length ``rho_t`` of the moving average behind ``v`` and, while ``rho_t <= 5``,
takes a plain momentum step; after that, Adam's step scaled by a rectification term ``r_t``.

State per parameter, made at its first step: ``step`` (a float32 scalar tensor), ``exp_avg``
(m) and ``exp_avg_sq`` (v). One step::

    g = g + weight_decay * p                    (or p = p * (1 - lr * weight_decay), decoupled)
    m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
    rho_inf = 2 / (1 - beta2) - 1
    rho_t = rho_inf - 2 t beta2**t / (1 - beta2**t)
    p = p - lr * m / (1 - beta1**t) * sqrt(1 - beta2**t) / (sqrt(v) + eps) * r_t   (rho_t > 5)
    p = p - lr * m / (1 - beta1**t)                                                (otherwise)

with PyTorch's tensor ops in PyTorch's order (``scalar / tensor`` included), so the numbers are
identical.
"""

from __future__ import annotations

import minitorch_nn as _t
from minitorch_nn.optim.optimizer import Optimizer, _use_grad_for_differentiable

__all__ = ["RAdam"]


class RAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
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
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
            "foreach": foreach, "capturable": capturable, "decoupled_weight_decay": decoupled_weight_decay,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("decoupled_weight_decay", False)
            group.setdefault("capturable", False)

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """One RAdam update of every parameter that has a gradient; returns ``closure()`` if given."""
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
                    state["exp_avg_sq"] = _t.zeros_like(p)
                exp_avg, exp_avg_sq, step_t = state["exp_avg"], state["exp_avg_sq"], state["step"]
                grad = p.grad if not group["maximize"] else -p.grad
                step_t += 1
                step = step_t.item()
                if weight_decay != 0:
                    if group["decoupled_weight_decay"]:
                        p.mul_(1 - lr * weight_decay)
                    else:
                        grad = grad.add(p, alpha=weight_decay)
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                bias_correction1 = 1 - beta1**step
                bias_correction2 = 1 - beta2**step
                bias_corrected_exp_avg = exp_avg / bias_correction1
                rho_inf = 2 / (1 - beta2) - 1
                rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
                if rho_t > 5.0:
                    rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                    exp_avg_sq_sqrt = exp_avg_sq.sqrt()
                    exp_avg_sq_sqrt = exp_avg_sq_sqrt.add(eps) if group["differentiable"] else exp_avg_sq_sqrt.add_(eps)
                    adaptive_lr = (bias_correction2**0.5) / exp_avg_sq_sqrt
                    p.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
                else:
                    p.add_(bias_corrected_exp_avg * lr, alpha=-1.0)
        return loss
