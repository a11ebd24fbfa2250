"""RMSprop (mirrors ``torch/optim/rmsprop.py``, single-tensor path).

State per parameter: ``step`` (a float32 scalar tensor, as in PyTorch), ``square_avg`` (a running
mean of g**2), plus ``momentum_buffer`` with ``momentum > 0`` and ``grad_avg`` with
``centered=True``. One step, for a gradient g::

    g = g + weight_decay * p                              (if weight_decay)
    square_avg = alpha * square_avg + (1 - alpha) * g * g
    avg = sqrt(square_avg - grad_avg**2) + eps            (centered: grad_avg = lerp(grad_avg, g, 1 - alpha))
    avg = sqrt(square_avg) + eps                          (otherwise)
    buf = momentum * buf + g / avg;  p = p - lr * buf     (momentum > 0)
    p = p - lr * g / avg                                  (otherwise)

written with the same in-place tensor ops as PyTorch's single-tensor code (the path it takes for
cpu tensors), in the same order, so the numbers are identical.
"""

from __future__ import annotations

import minitorch_nn as _t
from minitorch_nn.optim.optimizer import Optimizer, _use_grad_for_differentiable

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {
            "lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
            "weight_decay": weight_decay, "capturable": capturable, "foreach": foreach, "maximize": maximize,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("momentum", 0)
            group.setdefault("centered", False)
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)

    def _state_for(self, p, group):
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _t.zeros((), dtype=_t.float32)
            state["square_avg"] = _t.zeros_like(p)
            if group["momentum"] > 0:
                state["momentum_buffer"] = _t.zeros_like(p)
            if group["centered"]:
                state["grad_avg"] = _t.zeros_like(p)
        return state

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """One RMSprop update of every parameter that has a gradient; returns ``closure()`` if given."""
        loss = None
        if closure is not None:
            from minitorch_nn.autograd import enable_grad

            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
            weight_decay, momentum, centered = group["weight_decay"], group["momentum"], group["centered"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self._state_for(p, group)
                grad = p.grad if not group["maximize"] else -p.grad
                square_avg = state["square_avg"]
                buf, grad_avg = state.get("momentum_buffer"), state.get("grad_avg")
                if p.is_complex():
                    # as PyTorch: a complex parameter is updated as the pairs of reals it is made of
                    p, grad, square_avg = (_t.view_as_real(x) for x in (p, grad, square_avg))
                    buf, grad_avg = (None if x is None else _t.view_as_real(x) for x in (buf, grad_avg))
                state["step"] += 1
                if weight_decay != 0:
                    grad = grad.add(p, alpha=weight_decay)
                square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
                if centered:
                    grad_avg.lerp_(grad, 1 - alpha)
                    avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
                else:
                    avg = square_avg.sqrt()
                avg = avg.add(eps) if group["differentiable"] else avg.add_(eps)
                if momentum > 0:
                    buf.mul_(momentum).addcdiv_(grad, avg)
                    p.add_(buf, alpha=-lr)
                else:
                    p.addcdiv_(grad, avg, value=-lr)
        return loss
