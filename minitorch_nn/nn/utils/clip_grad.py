"""Gradient clipping (mirrors ``torch/nn/utils/clip_grad.py``).

``clip_grad_norm_`` is two steps you can also call yourself:

1. :func:`get_total_norm`: the norm of every gradient taken together, as if they were one long
   vector: the norm of each gradient first, then the norm of those norms (for ``norm_type=2``
   that is ``sqrt(sum of squares)``; for ``inf`` the largest absolute value).
2. :func:`clip_grads_with_norm_`: multiply every gradient in place by
   ``min(1, max_norm / (total_norm + 1e-6))``. The multiplication always happens (by exactly 1.0
   when no clipping is needed), so the result is the same with or without clipping taking effect
   and no Python ``if`` on a tensor value is needed.

``clip_grad_value_`` clamps each gradient element into ``[-clip_value, clip_value]``.

Everything runs under ``no_grad``. The ``foreach`` argument is accepted for compatibility; the
per-tensor loop used here gives the same numbers as PyTorch's CPU ``_foreach`` kernels.
"""

from __future__ import annotations

import types

from minitorch_nn._warnings import warn_user
from minitorch_nn.autograd.grad_mode import no_grad

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm"]


def _as_list(tensors):
    from minitorch_nn._tensor import Tensor

    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


@no_grad()
def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The ``norm_type``-norm of all ``tensors`` viewed as one vector (a 0-d tensor)."""
    import minitorch_nn as torch

    # Rules: no tensors gives ``torch.tensor(0.0)``; otherwise the norm of each tensor
    # (``torch.linalg.vector_norm(t, norm_type)``, moved to the first tensor's device), then the
    # same norm of those norms stacked: that is the norm of all elements as one vector, for every
    # p including inf. With ``error_if_nonfinite`` a nan or inf total raises PyTorch's RuntimeError.
    # BEGIN SOLUTION train-clip-grad-norm
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return torch.tensor(0.0)
    first_device = tensors[0].device
    norms = [torch.linalg.vector_norm(t, norm_type).to(first_device) for t in tensors]
    total_norm = torch.linalg.vector_norm(torch.stack(norms), norm_type)
    if error_if_nonfinite and bool(total_norm.isnan() | total_norm.isinf()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it cannot be "
            "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
            "`error_if_nonfinite=False`"
        )
    return total_norm
    # END SOLUTION


@no_grad()
def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale the gradients of ``parameters`` in place so their total norm is at most ``max_norm``,
    given their ``total_norm`` (from :func:`get_total_norm`)."""
    import minitorch_nn as torch

    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    max_norm = float(max_norm)
    if not grads:
        return
    # Rules: every gradient is multiplied in place by max_norm / (total_norm + 1e-6), clamped
    # to at most 1 (gradients are never scaled up), as a tensor on the gradient's device.
    # BEGIN SOLUTION train-clip-grad-norm
    scale = torch.clamp(max_norm / (total_norm + 1e-6), max=1.0)
    for g in grads:
        g.mul_(scale.to(g.device))
    # END SOLUTION


@no_grad()
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Clip the gradients of ``parameters`` to a total norm of ``max_norm``, in place; returns the
    total norm they had before clipping.

    Typical use, between ``loss.backward()`` and ``optimizer.step()``::

        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    """
    from minitorch_nn._tensor import Tensor

    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        was_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)  # a generator can be read only once and we read it twice
        if was_generator and not parameters:
            warn_user("`parameters` is an empty generator, no gradient clipping will occur.")
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated spelling of :func:`clip_grad_norm_` (warns, then does the same)."""
    warn_user(
        "`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
        FutureWarning,
    )
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@no_grad()
def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient element of ``parameters`` into ``[-clip_value, clip_value]``, in place."""
    clip_value = float(clip_value)
    for p in _as_list(parameters):
        if p.grad is not None:
            p.grad.clamp_(min=-clip_value, max=clip_value)
