"""Helpers shared by the distributions (mirrors ``torch/distributions/utils.py``)."""

from __future__ import annotations

from numbers import Number

import minitorch_nn as _t

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs", "probs_to_logits"]


def broadcast_all(*values):
    """Broadcast tensors together; numbers become tensors of the first tensor's dtype (or the
    default dtype when there is none)."""
    if not all(isinstance(v, (_t.Tensor, Number)) for v in values):
        raise ValueError(
            "Input arguments must all be instances of Number, torch.Tensor or objects implementing __torch_function__."
        )
    if not all(isinstance(v, _t.Tensor) for v in values):
        options = {"dtype": _t.get_default_dtype()}
        for v in values:
            if isinstance(v, _t.Tensor):
                options = {"dtype": v.dtype, "device": v.device}
                break
        values = [v if isinstance(v, _t.Tensor) else _t.tensor(v, **options) for v in values]
    return _t.broadcast_tensors(*values)


def _standard_normal(shape, dtype, device):
    return _t.empty(shape, dtype=dtype, device=device).normal_()


def _sum_rightmost(value, dim: int):
    if dim == 0:
        return value
    return value.reshape(value.shape[:-dim] + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    """Log-odds to probabilities (``sigmoid``), or log-weights to a probability vector (``softmax``)."""
    if is_binary:
        return _t.sigmoid(logits)
    return _t.softmax(logits, dim=-1)


def clamp_probs(probs):
    """Keep probabilities within ``[eps, 1 - eps]`` so their logs stay finite."""
    eps = _t.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """Probabilities to log-odds (binary) or to log-probabilities."""
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return _t.log(ps_clamped) - _t.log1p(-ps_clamped)
    return _t.log(ps_clamped)


class lazy_property:
    """Computed on first access, then stored on the instance (``probs`` from ``logits`` and back).

    Gradients are recorded even under ``no_grad``, as in PyTorch, so a cached value can be
    differentiated later.
    """

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        with _t.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value
