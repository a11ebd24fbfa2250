"""ASGD, averaged stochastic gradient descent (mirrors ``torch/optim/asgd.py``, single-tensor path).

Plain SGD with a decaying step ``eta`` and a weight decay ``lambd``, plus a running *average*
of the parameters, ``ax``, which starts averaging after ``t0`` steps; ``ax`` is what one
evaluates with (copy it into the model yourself, as in PyTorch).

State per parameter, made at its first step: ``step``, ``eta`` (the current step size, starting
at ``lr``) and ``mu`` (the averaging weight, starting at 1), all float32 scalar tensors as in
PyTorch, and ``ax``. One step::

    g = g + weight_decay * p                     (if weight_decay)
    p = p * (1 - lambd * eta) - eta * g
    ax = ax + mu * (p - ax)                      (ax = p while mu == 1)
    eta = lr / (1 + lambd * lr * step) ** alpha
    mu = 1 / max(1, step - t0)

``eta`` and ``mu`` are read back as Python floats and stored as float32, so they are rounded
exactly as PyTorch rounds them.
"""

from __future__ import annotations

import minitorch_nn as _t
from minitorch_nn.optim.optimizer import Optimizer, _use_grad_for_differentiable

__all__ = ["ASGD"]


class ASGD(Optimizer):
    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0, "weight_decay": weight_decay,
            "foreach": foreach, "maximize": maximize, "differentiable": differentiable, "capturable": capturable,
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
        """One ASGD update of every parameter that has a gradient; returns ``closure()`` if given."""
        loss = None
        if closure is not None:
            with _t.enable_grad():
                loss = closure()
        for group in self.param_groups:
            lr, lambd, alpha, t0 = group["lr"], group["lambd"], group["alpha"], group["t0"]
            weight_decay = group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _t.zeros((), dtype=_t.float32)
                    state["eta"] = _t.as_tensor(float(lr), dtype=_t.float32).clone().detach()
                    state["mu"] = _t.ones((), dtype=_t.float32)
                    state["ax"] = _t.zeros_like(p)
                mu, ax, eta, step_t = state["mu"], state["ax"], state["eta"], state["step"]
                grad = p.grad if not group["maximize"] else -p.grad
                step_t += 1
                if weight_decay != 0:
                    grad = grad.add(p, alpha=weight_decay)
                eta_value = eta.item()
                p.mul_(1 - lambd * eta_value)   # decay
                p.add_(grad, alpha=-eta_value)  # gradient step
                if mu.item() != 1:
                    ax.add_(p.sub(ax).mul_(mu))
                else:
                    ax.copy_(p)
                step = step_t.item()
                eta.copy_(_t.as_tensor(lr / ((1 + lambd * lr * step) ** alpha)))
                mu.copy_(_t.as_tensor(1 / max(1, step - t0)))
        return loss
