"""Adagrad (mirrors ``torch/optim/adagrad.py``, single-tensor path, dense gradients).

State per parameter, made when the optimizer is created (as in PyTorch): ``step`` (a float32
scalar tensor) and ``sum`` (the running sum of g**2, starting at ``initial_accumulator_value``).
One step, for a gradient g::

    step += 1
    g = g + weight_decay * p                      (if weight_decay)
    clr = lr / (1 + (step - 1) * lr_decay)
    sum = sum + g * g
    p = p - clr * g / (sqrt(sum) + eps)

with PyTorch's in-place tensor ops in PyTorch's order, so the numbers are identical. Sparse
gradients do not exist in minitorch_nn.
"""

from __future__ import annotations

import minitorch_nn as _t
from minitorch_nn.optim.optimizer import Optimizer, _use_grad_for_differentiable

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = {
            "lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value, "foreach": foreach, "maximize": maximize,
            "differentiable": differentiable, "fused": fused,
        }
        super().__init__(params, defaults)
        if fused:
            raise RuntimeError("`fused=True` is not supported by minitorch_nn's Adagrad")
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = _t.tensor(0.0, dtype=_t.float32)
                state["sum"] = _t.full_like(p, initial_accumulator_value)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("fused", None)

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """One Adagrad update of every parameter that has a gradient; returns ``closure()`` if given."""
        loss = None
        if closure is not None:
            from minitorch_nn.autograd import enable_grad

            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            lr, lr_decay, eps, weight_decay = group["lr"], group["lr_decay"], group["eps"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                step_t, state_sum = state["step"], state["sum"]
                step_t += 1
                step = step_t.item()
                grad = p.grad if not group["maximize"] else -p.grad
                if p.is_complex():
                    # as PyTorch: a complex parameter is updated as the pairs of reals it is made of
                    p, grad, state_sum = (_t.view_as_real(x) for x in (p, grad, state_sum))
                if weight_decay != 0:
                    grad = grad.add(p, alpha=weight_decay)
                clr = lr / (1 + (step - 1) * lr_decay)
                state_sum.addcmul_(grad, grad, value=1)
                std = state_sum.sqrt() + eps if group["differentiable"] else state_sum.sqrt().add_(eps)
                p.addcdiv_(grad, std, value=-clr)
        return loss
