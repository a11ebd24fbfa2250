"""NAdam, Adam with Nesterov momentum (mirrors ``torch/optim/nadam.py``, single-tensor path).

State per parameter: ``step`` and ``mu_product`` (scalar tensors), ``exp_avg`` (m) and
``exp_avg_sq`` (v). The momentum coefficient warms up with the step::

    mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))

One step, for a gradient g::

    g = g + weight_decay * p                       (L2 penalty), or
    p = p * (1 - lr * weight_decay)                (decoupled_weight_decay: shrink the weight, as AdamW)
    mu_product = mu_product * mu_t
    m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
    denom = sqrt(v / (1 - beta2**t)) + eps
    p = p - lr * (1 - mu_t) / (1 - mu_product) * g / denom
    p = p - lr * mu_{t+1} / (1 - mu_product * mu_{t+1}) * m / denom

In-place ops in PyTorch's order, so trajectories are identical.
"""

from __future__ import annotations

import minitorch_nn as _t
from minitorch_nn.optim import _single_tensor as _st
from minitorch_nn.optim.optimizer import Optimizer, _use_grad_for_differentiable

__all__ = ["NAdam"]


class NAdam(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        _st.check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _st.check_betas(betas)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay, "decoupled_weight_decay": decoupled_weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            for key, default in (("maximize", False), ("foreach", None), ("capturable", False),
                                 ("differentiable", False), ("decoupled_weight_decay", False)):
                group.setdefault(key, default)

    def _state_for(self, p):
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _t.tensor(0.0, dtype=_st.scalar_dtype())
            state["mu_product"] = _t.tensor(1.0, dtype=_st.scalar_dtype())
            state["exp_avg"] = _t.zeros_like(p)
            state["exp_avg_sq"] = _t.zeros_like(p)
        return state

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """One NAdam update of every parameter that has a gradient; returns ``closure()`` if given."""
        loss = _st.run_closure(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps, weight_decay = _st.as_float(group["lr"]), group["eps"], group["weight_decay"]
            momentum_decay, decoupled = group["momentum_decay"], group["decoupled_weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                _st.refuse_sparse(p.grad, "NAdam")
                state = self._state_for(p)
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                mu_product, step_t = state["mu_product"], state["step"]
                grad = p.grad if not group["maximize"] else -p.grad
                if p.is_complex():
                    # as PyTorch: a complex parameter is updated as the pairs of reals it is made of
                    p, grad, exp_avg, exp_avg_sq = (_t.view_as_real(x) for x in (p, grad, exp_avg, exp_avg_sq))
                step_t += 1
                step = step_t.item()
                bias_correction2 = 1 - beta2**step
                if weight_decay != 0:
                    if decoupled:
                        p.mul_(1 - lr * weight_decay)
                    else:
                        grad = grad.add(p, alpha=weight_decay)
                mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
                mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
                mu_product *= mu
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                denom = exp_avg_sq.div(bias_correction2).sqrt()
                if group["differentiable"]:
                    denom = denom.add(eps)
                    mu_product_next = mu_product * mu_next
                    p.addcdiv_(grad * (-lr * (1.0 - mu) / (1.0 - mu_product)), denom)
                    p.addcdiv_(exp_avg * (-lr * mu_next / (1.0 - mu_product_next)), denom)
                else:
                    product = mu_product.item()
                    mu_product_next = product * mu_next
                    denom.add_(eps)
                    p.addcdiv_(grad, denom, value=-lr * (1.0 - mu) / (1.0 - product))
                    p.addcdiv_(exp_avg, denom, value=(-lr * mu_next) / (1.0 - mu_product_next))
        return loss
