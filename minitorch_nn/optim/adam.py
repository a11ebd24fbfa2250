"""Adam (mirrors ``torch/optim/adam.py``, single-tensor path).

State per parameter: ``step`` (a float32 scalar tensor on cpu, as in PyTorch), ``exp_avg`` (the
first moment m) and ``exp_avg_sq`` (the second moment v), plus ``max_exp_avg_sq`` with
``amsgrad``. One step, for a gradient g::

    step += 1
    g = g + weight_decay * p            (Adam: L2 penalty in the gradient)
    p = p * (1 - lr * weight_decay)     (AdamW / decoupled_weight_decay: shrink the weight)
    m = lerp(m, g, 1 - beta1)
    v = beta2 * v + (1 - beta2) * g * g
    p = p - lr / (1 - beta1**step) * m / (sqrt(v) / sqrt(1 - beta2**step) + eps)

The bias corrections are Python floats and the tensor ops are PyTorch's, in PyTorch's order,
so trajectories are identical to ``foreach=False``. Plain cpu float tensors take the same steps
on their numpy views instead (``_numpy_update.py``): bit-identical, without one dispatch per op.
"""

from __future__ import annotations

import numpy as np

import minitorch_nn as _t
from minitorch_nn._ops import aten
from minitorch_nn.backends import compiled as _compiled_switch
from minitorch_nn.optim import _numpy_update as _np
from minitorch_nn.optim.optimizer import Optimizer, _use_grad_for_differentiable

__all__ = ["Adam"]


class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
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
        if not (isinstance(betas[0], float) and isinstance(betas[1], float)):
            raise ValueError("betas must be either both floats or both Tensors")
        defaults = {
            "lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay, "amsgrad": amsgrad,
            "maximize": maximize, "foreach": foreach, "capturable": capturable, "differentiable": differentiable,
            "fused": fused, "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("capturable", False)
            group.setdefault("differentiable", False)
            group.setdefault("fused", None)
            group.setdefault("decoupled_weight_decay", False)

    def _state_for(self, p, amsgrad):
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _t.tensor(0.0, dtype=_t.float32)
            state["exp_avg"] = _t.zeros_like(p)
            state["exp_avg_sq"] = _t.zeros_like(p)
            if amsgrad:
                state["max_exp_avg_sq"] = _t.zeros_like(p)
        return state

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """One Adam update of every parameter that has a gradient; returns ``closure()`` if given."""
        loss = None
        if closure is not None:
            from minitorch_nn.autograd import enable_grad

            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps, weight_decay = group["lr"], group["eps"], group["weight_decay"]
            amsgrad, maximize, decoupled = group["amsgrad"], group["maximize"], group["decoupled_weight_decay"]
            hyper_ok = _np.plain_numbers(lr, eps, weight_decay, beta1, beta2)
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self._state_for(p, amsgrad)
                arrays = _np.numpy_views(
                    p, p.grad, state["exp_avg"], state["exp_avg_sq"], state.get("max_exp_avg_sq"), guard=_NUMPY_TWIN
                ) if hyper_ok else None
                step_arr = _np.numpy_views(state["step"]) if arrays is not None else None
                if arrays is not None and step_arr is not None and state["step"].dim() == 0:
                    _adam_numpy(*arrays, step_arr[0], lr, beta1, beta2, eps, weight_decay, maximize, decoupled)
                    # one new version per in-place op of the tensor-op path (exp_avg_sq has two)
                    _np.bump_versions(p, state["exp_avg"], state["exp_avg_sq"], state["exp_avg_sq"], state["step"],
                                      *([state["max_exp_avg_sq"]] if amsgrad else []),
                                      *([p] if weight_decay != 0 and decoupled else []))
                    continue
                # The tensor-op path, op for op PyTorch's single-tensor Adam.
                grad = p.grad if not maximize else -p.grad
                exp_avg, exp_avg_sq, step_t = state["exp_avg"], state["exp_avg_sq"], state["step"]
                max_exp_avg_sq = state.get("max_exp_avg_sq")
                if p.is_complex():
                    # as PyTorch: a complex parameter is updated as the pairs of reals it is made of
                    p, grad, exp_avg, exp_avg_sq = (_t.view_as_real(x) for x in (p, grad, exp_avg, exp_avg_sq))
                    if amsgrad:
                        max_exp_avg_sq = _t.view_as_real(max_exp_avg_sq)
                step_t += 1
                if weight_decay != 0:
                    if decoupled:
                        p.mul_(1 - lr * weight_decay)
                    else:
                        grad = grad.add(p, alpha=weight_decay)
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                step = step_t.item()
                bias_correction1 = 1 - beta1**step
                bias_correction2 = 1 - beta2**step
                step_size = lr / bias_correction1
                bias_correction2_sqrt = bias_correction2**0.5
                if amsgrad:
                    max_exp_avg_sq.copy_(_t.maximum(max_exp_avg_sq, exp_avg_sq))
                    denom = (max_exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
                else:
                    denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
                p.addcdiv_(exp_avg, denom, value=-step_size)
        return loss


# The numpy path is a twin of the tensor-op path: it runs while the switch is on, the kernels of the
# ops it reproduces are the registered, unchanged ones, and so is the tensor-op code in step().
_NUMPY_TWIN = _compiled_switch.Guard(
    "optim.Adam numpy path",
    ops=(aten.neg.default, aten.add_.Tensor, aten.mul_.Tensor, aten.add.Tensor, aten.lerp_.Scalar,
         aten.addcmul_.default, aten.maximum.default, aten.copy_.default, aten.sqrt.default, aten.div.Tensor,
         aten.addcdiv_.default),
    functions=(Adam.step,))


@_np.quiet_fp_errors
def _adam_numpy(p, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, step_t, lr, beta1, beta2, eps, weight_decay,
                maximize, decoupled):
    """The tensor-op path above on numpy arrays (``_numpy_update.py``), writing the state and ``p``
    in place with the cpu kernels' formulas and roundings (``_numpy_update.lerp_into``,
    ``addcmul_into``, ``addcdiv_into``)."""
    if maximize:
        grad = -grad
    np.add(step_t, _np.scalar(1, step_t), out=step_t)
    if weight_decay != 0:
        if decoupled:
            np.multiply(p, _np.scalar(1 - lr * weight_decay, p), out=p)
        else:
            grad = _np.add_scaled(grad, p, weight_decay)
    _np.lerp_into(exp_avg, grad, 1 - beta1)
    np.multiply(exp_avg_sq, _np.scalar(beta2, exp_avg_sq), out=exp_avg_sq)
    _np.addcmul_into(exp_avg_sq, grad, grad, 1 - beta2)
    step = float(step_t)
    bias_correction2_sqrt = (1 - beta2**step) ** 0.5
    step_size = lr / (1 - beta1**step)
    if max_exp_avg_sq is not None:
        np.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
        second = max_exp_avg_sq
    else:
        second = exp_avg_sq
    denom = np.sqrt(second, out=np.empty_like(second))  # (an array even when 0-d)
    np.true_divide(denom, _np.scalar(bias_correction2_sqrt, denom), out=denom)
    np.add(denom, _np.scalar(eps, denom), out=denom)
    _np.addcdiv_into(p, exp_avg, denom, -step_size)
