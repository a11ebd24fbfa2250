"""Adamax (mirrors ``torch/optim/adamax.py``, single-tensor path): Adam with the infinity norm.

State per parameter: ``step``, ``exp_avg`` (the first moment m) and ``exp_inf`` (an exponentially
decayed maximum of |g|). One step, for a gradient g::

    g = g + weight_decay * p                       (if weight_decay)
    m = lerp(m, g, 1 - beta1)
    u = max(beta2 * u, |g| + eps)
    p = p - lr / (1 - beta1**step) * m / u

In-place ops in PyTorch's order, so trajectories are identical.
"""

from __future__ import annotations

import minitorch_nn as _t
from minitorch_nn.optim import _single_tensor as _st
from minitorch_nn.optim.optimizer import Optimizer, _use_grad_for_differentiable

__all__ = ["Adamax"]


class Adamax(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        _st.check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _st.check_betas(betas)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            for key, default in (("foreach", None), ("maximize", False), ("differentiable", False),
                                 ("capturable", False)):
                group.setdefault(key, default)

    def _state_for(self, p):
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _t.tensor(0.0, dtype=_st.scalar_dtype())
            state["exp_avg"] = _t.zeros_like(p)
            state["exp_inf"] = _t.zeros_like(p)
        return state

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """One Adamax update of every parameter that has a gradient; returns ``closure()`` if given."""
        loss = _st.run_closure(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps, weight_decay = _st.as_float(group["lr"]), group["eps"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                _st.refuse_sparse(p.grad, "Adamax")
                state = self._state_for(p)
                exp_avg, exp_inf, step_t = state["exp_avg"], state["exp_inf"], state["step"]
                grad = p.grad if not group["maximize"] else -p.grad
                if p.is_complex():
                    # as PyTorch: a complex parameter is updated as the pairs of reals it is made of
                    p, grad, exp_avg, exp_inf = (_t.view_as_real(x) for x in (p, grad, exp_avg, exp_inf))
                step_t += 1
                if weight_decay != 0:
                    grad = grad.add(p, alpha=weight_decay)
                exp_avg.lerp_(grad, 1 - beta1)
                if group["differentiable"]:
                    both = _t.cat([exp_inf.mul_(beta2).unsqueeze(0), grad.abs().add_(eps).unsqueeze_(0)], 0)
                    exp_inf.copy_(_t.amax(both, 0, keepdim=False))
                else:
                    _t.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps), out=exp_inf)
                clr = lr / (1 - beta1 ** step_t.item())
                p.addcdiv_(exp_avg, exp_inf, value=-clr)
        return loss
