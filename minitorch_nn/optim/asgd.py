"""ASGD, averaged stochastic gradient descent (mirrors ``torch/optim/asgd.py``, single-tensor path).

State per parameter: ``step``, ``eta`` (the current step size), ``mu`` (the averaging weight), all
scalar tensors, and ``ax`` (the running average of the parameter). One step, for a gradient g::

    g = g + weight_decay * p                    (if weight_decay)
    p = p * (1 - lambd * eta) - eta * g         (decay, then the SGD step)
    ax = ax + mu * (p - ax)                     (ax = p while mu is 1)
    eta = lr / (1 + lambd * lr * step) ** alpha
    mu = 1 / max(1, step - t0)                  (averaging starts after t0 steps)

``eta`` and ``mu`` are read back as Python floats and stored in the scalar dtype, as PyTorch's
cpu path does, so trajectories are identical.
"""

from __future__ import annotations

import minitorch_nn as _t
from minitorch_nn.optim import _single_tensor as _st
from minitorch_nn.optim.optimizer import Optimizer, _use_grad_for_differentiable

__all__ = ["ASGD"]


class ASGD(Optimizer):
    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        _st.check_lr(lr)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
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
            dtype = _st.scalar_dtype()
            state["step"] = _t.zeros((), dtype=dtype)
            state["eta"] = _t.tensor(_st.as_float(group["lr"]), dtype=dtype)
            state["mu"] = _t.ones((), dtype=dtype)
            state["ax"] = _t.zeros_like(p)
        return state

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """One ASGD update of every parameter that has a gradient; returns ``closure()`` if given."""
        loss = _st.run_closure(closure)
        for group in self.param_groups:
            lr, lambd, alpha, t0 = _st.as_float(group["lr"]), group["lambd"], group["alpha"], group["t0"]
            weight_decay = group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                _st.refuse_sparse(p.grad, "ASGD")
                state = self._state_for(p, group)
                eta, mu, ax, step_t = state["eta"], state["mu"], state["ax"], state["step"]
                grad = p.grad if not group["maximize"] else -p.grad
                if p.is_complex():
                    # as PyTorch: a complex parameter is updated as the pairs of reals it is made of
                    p, grad, ax = (_t.view_as_real(x) for x in (p, grad, ax))
                step_t += 1
                if weight_decay != 0:
                    grad = grad.add(p, alpha=weight_decay)
                eta_value = eta.item()
                p.mul_(1 - lambd * eta_value)
                p.add_(grad, alpha=-eta_value)
                if mu.item() != 1:
                    ax.add_(p.sub(ax).mul_(mu))
                else:
                    ax.copy_(p)
                step = step_t.item()
                eta.copy_(_t.as_tensor(lr / ((1 + lambd * lr * step) ** alpha)))
                mu.copy_(_t.as_tensor(1 / max(1, step - t0)))
        return loss
