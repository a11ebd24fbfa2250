"""Stochastic gradient descent, with momentum (mirrors ``torch/optim/sgd.py``).

For each parameter with a gradient ``g`` (negated when ``maximize``), one step is::

    g = g + weight_decay * p                       (if weight_decay)
    buf = g                  on the first step     (if momentum)
    buf = momentum * buf + (1 - dampening) * g     afterwards
    g = g + momentum * buf   (nesterov)   or   g = buf
    p = p - lr * g

written with the same in-place tensor ops as PyTorch's single-tensor (``foreach=False``) code,
so the numbers are identical. Plain cpu float tensors take the same steps on their numpy views
instead (``_numpy_update.py``): bit-identical, without one dispatch per op.
"""

from __future__ import annotations

import numpy as np

from minitorch_nn._ops import aten
from minitorch_nn.backends import compiled as _compiled_switch
from minitorch_nn.optim import _numpy_update as _np
from minitorch_nn.optim.optimizer import Optimizer, _use_grad_for_differentiable

__all__ = ["SGD"]


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *, maximize=False,
                 foreach=None, differentiable=False, fused=None):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr, "momentum": momentum, "dampening": dampening, "weight_decay": weight_decay,
            "nesterov": nesterov, "maximize": maximize, "foreach": foreach, "differentiable": differentiable,
            "fused": fused,
        }
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns ``closure()`` if given."""
        loss = None
        if closure is not None:
            from minitorch_nn.autograd import enable_grad

            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            self._update_group(group)
        return loss

    def _update_group(self, group):
        lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
        weight_decay, nesterov, maximize = group["weight_decay"], group["nesterov"], group["maximize"]
        hyper_ok = _np.plain_numbers(lr, momentum, dampening, weight_decay)
        for p in group["params"]:
            grad = p.grad
            if grad is None:
                continue
            # (as in PyTorch, a parameter gets a state entry only when there is momentum)
            state = self.state[p] if momentum != 0 else None
            buf = state.get("momentum_buffer") if momentum != 0 else None
            # The fast path needs the momentum buffer to exist already (it is made on the first step).
            arrays = _np.numpy_views(p, grad, buf, guard=_NUMPY_TWIN) if hyper_ok and (momentum == 0 or buf is not None) else None
            if arrays is not None:
                _sgd_numpy(*arrays, lr, momentum, dampening, weight_decay, nesterov, maximize)
                _np.bump_versions(p, *([buf, buf] if buf is not None else []))  # buf: mul_ and add_
                continue
            # The tensor-op path, op for op PyTorch's single-tensor SGD (task optim-sgd-momentum):
            # g = -grad when maximizing; g += weight_decay * p (``grad.add(p, alpha=...)``, a new
            # tensor: p.grad itself must not change); with momentum, the buffer is a detached clone
            # of g on the first step and ``buf = momentum * buf + (1 - dampening) * g`` (in place:
            # ``mul_`` then ``add_``) afterwards, and the step direction is ``g + momentum * buf``
            # with nesterov, else ``buf``; finally ``p -= lr * direction`` (``p.add_(d, alpha=-lr)``).
            # BEGIN SOLUTION optim-sgd-momentum
            if maximize:
                grad = -grad
            if weight_decay != 0:
                grad = grad.add(p, alpha=weight_decay)
            if momentum != 0:
                if buf is None:
                    buf = grad.detach().clone()
                else:
                    buf.mul_(momentum).add_(grad, alpha=1 - dampening)
                grad = grad.add(buf, alpha=momentum) if nesterov else buf
            p.add_(grad, alpha=-lr)
            # END SOLUTION
            if momentum != 0:
                state["momentum_buffer"] = buf   # stored once p is updated, as PyTorch does


# The numpy path is a twin of the tensor-op path: it runs while the switch is on, the kernels of the
# ops it reproduces are the registered, unchanged ones, and so is the tensor-op code above.
_NUMPY_TWIN = _compiled_switch.Guard(
    "optim.SGD numpy path",
    ops=(aten.neg.default, aten.add.Tensor, aten.mul_.Tensor, aten.add_.Tensor),
    functions=(SGD._update_group,))


@_np.quiet_fp_errors
def _sgd_numpy(p, grad, buf, lr, momentum, dampening, weight_decay, nesterov, maximize):
    """The tensor-op path above on numpy arrays, writing ``p`` and ``buf`` in place."""
    # (the course's optim-sgd-momentum answer in numpy: a student copy ships the stand-in below,
    # and its guard keeps this twin off there, since the student's _update_group is not the
    # recorded original)
    # BEGIN SOLUTION optim-sgd-momentum
    if maximize:
        grad = -grad
    if weight_decay != 0:
        grad = _np.add_scaled(grad, p, weight_decay)
    if momentum != 0:
        np.multiply(buf, _np.scalar(momentum, buf), out=buf)
        _np.add_scaled(buf, grad, 1 - dampening, out=buf)
        grad = _np.add_scaled(grad, buf, momentum) if nesterov else buf
    _np.add_scaled(p, grad, -lr, out=p)
    # STARTER
    # raise RuntimeError("the numpy twin of SGD is not part of a student copy; its guard keeps it off")
    # END SOLUTION
