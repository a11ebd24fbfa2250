"""RAdam, rectified Adam (mirrors ``torch/optim/radam.py``, single-tensor path).

Early in training Adam's second-moment estimate has a high variance; RAdam measures it through
the length of the approximated simple moving average::

    rho_inf = 2 / (1 - beta2) - 1
    rho_t = rho_inf - 2 t beta2**t / (1 - beta2**t)

and takes a plain momentum-SGD step while ``rho_t <= 5``, an Adam step scaled by the rectifier
``r_t = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))`` afterwards.
State per parameter: ``step``, ``exp_avg`` (m), ``exp_avg_sq`` (v). One step, for a gradient g::

    g = g + weight_decay * p   or   p = p * (1 - lr * weight_decay)   (decoupled_weight_decay)
    m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
    m_hat = m / (1 - beta1**t)
    p = p - m_hat * lr * sqrt(1 - beta2**t) / (sqrt(v) + eps) * r_t      (rho_t > 5)
    p = p - m_hat * lr                                                    (otherwise)

In-place ops in PyTorch's order, so trajectories are identical.
"""

from __future__ import annotations

import minitorch_nn as _t
from minitorch_nn.optim import _single_tensor as _st
from minitorch_nn.optim.optimizer import Optimizer, _use_grad_for_differentiable

__all__ = ["RAdam"]


class RAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        _st.check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _st.check_betas(betas)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable, "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            for key, default in (("foreach", None), ("maximize", False), ("differentiable", False),
                                 ("capturable", False), ("decoupled_weight_decay", False)):
                group.setdefault(key, default)

    def _state_for(self, p):
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _t.tensor(0.0, dtype=_st.scalar_dtype())
            state["exp_avg"] = _t.zeros_like(p)
            state["exp_avg_sq"] = _t.zeros_like(p)
        return state

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """One RAdam update of every parameter that has a gradient; returns ``closure()`` if given."""
        loss = _st.run_closure(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps, weight_decay = _st.as_float(group["lr"]), group["eps"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                _st.refuse_sparse(p.grad, "RAdam")
                state = self._state_for(p)
                exp_avg, exp_avg_sq, step_t = state["exp_avg"], state["exp_avg_sq"], state["step"]
                grad = p.grad if not group["maximize"] else -p.grad
                if p.is_complex():
                    # as PyTorch: a complex parameter is updated as the pairs of reals it is made of
                    p, grad, exp_avg, exp_avg_sq = (_t.view_as_real(x) for x in (p, grad, exp_avg, exp_avg_sq))
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
                m_hat = exp_avg / bias_correction1
                rho_inf = 2 / (1 - beta2) - 1
                rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
                if rho_t > 5.0:
                    rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                    sqrt_v = exp_avg_sq.sqrt()
                    sqrt_v = sqrt_v.add(eps) if group["differentiable"] else sqrt_v.add_(eps)
                    adaptive_lr = (bias_correction2**0.5) / sqrt_v
                    p.add_(m_hat * lr * adaptive_lr * rect, alpha=-1.0)
                else:
                    p.add_(m_hat * lr, alpha=-1.0)
        return loss
