"""Small pieces the single-tensor optimizers share (mirrors helpers of ``torch/optim/optimizer.py``).

PyTorch's optimizers take a per-parameter loop (its "single-tensor" path) for cpu tensors; the
optimizers in this package reproduce that loop op for op, so trajectories match bit for bit.
"""

from __future__ import annotations

import minitorch_nn as _t


def scalar_dtype():
    """The dtype of ``state["step"]`` and other scalar state: float64 when that is the default
    dtype, else float32 (PyTorch's ``_get_scalar_dtype``)."""
    return _t.float64 if _t.get_default_dtype() is _t.float64 else _t.float32


def run_closure(closure):
    """Evaluate ``closure`` with grad mode on (``step`` itself may run under ``no_grad``)."""
    if closure is None:
        return None
    from minitorch_nn.autograd import enable_grad

    with enable_grad():
        return closure()


def refuse_sparse(grad, name):
    # dense tensors only here, but keep PyTorch's message for a layout that says otherwise
    if getattr(grad, "is_sparse", False):
        raise RuntimeError(f"{name} does not support sparse gradients")


def check_lr(lr):
    if isinstance(lr, _t.Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def check_betas(betas):
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")


def as_float(lr):
    """A tensor learning rate as a Python float (``_to_scalar``)."""
    return lr.item() if isinstance(lr, _t.Tensor) else lr
