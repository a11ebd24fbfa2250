"""The loss functions of ``nn.functional`` (mirrors the losses in ``torch/nn/functional.py``).

Split out of ``functional.py`` to keep each file readable; ``functional.py`` re-exports every
name, so ``F.cross_entropy`` is the one to use. Each function resolves ``reduction`` (and the
deprecated ``size_average``/``reduce``) and calls the op PyTorch's would:
``cross_entropy`` = ``aten._log_softmax`` + ``aten.nll_loss_forward``, ``mse_loss`` =
``aten.mse_loss``, ``binary_cross_entropy_with_logits``, ``smooth_l1_loss`` and ``huber_loss``
their own ops; ``l1_loss`` and ``kl_div`` are compositions of pointwise ops (PyTorch 2.13
decomposes ``l1_loss`` the same way).

Differences from PyTorch: :func:`nll_loss` on inputs with more than two dims moves the class
dim last and calls ``nll_loss_forward`` (PyTorch calls ``nll_loss2d_forward`` for 4-d inputs).
"""

from __future__ import annotations

import minitorch_nn as _t
from minitorch_nn._ops import aten
from minitorch_nn._warnings import warn_user
from minitorch_nn.overrides import public

__all__ = [
    "mse_loss", "l1_loss", "nll_loss", "cross_entropy", "binary_cross_entropy_with_logits", "binary_cross_entropy",
    "smooth_l1_loss", "huber_loss", "kl_div",
]

_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _reduction_enum(reduction: str) -> int:
    try:
        return _REDUCTIONS[reduction]
    except KeyError:
        raise ValueError(f"{reduction} is not a valid value for reduction") from None


def _legacy_reduction(size_average, reduce, reduction):
    """The deprecated ``size_average``/``reduce`` pair, turned into a ``reduction`` string."""
    if size_average is None and reduce is None:
        return reduction
    warn_user("size_average and reduce args will be deprecated, please use reduction='{}' instead.".format(
        "none" if reduce is False else ("mean" if size_average in (None, True) else "sum")))
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"


def _warn_size(input, target, name):
    if tuple(target.shape) != tuple(input.shape):
        warn_user(
            f"Using a target size ({target.shape!r}) that is different to the input size ({input.shape!r}). "
            "This will likely lead to incorrect results due to broadcasting. Please ensure they have the same size.",
        )


@public
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error (``aten.mse_loss``)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _warn_size(input, target, "mse_loss")
    if weight is not None:
        loss = (input - target) ** 2 * weight
        return {"none": lambda: loss, "mean": loss.mean, "sum": loss.sum}[reduction]()
    input, target = _t.broadcast_tensors(input, target)
    return aten.mse_loss.default(input, target, _reduction_enum(reduction))


@public
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error; like PyTorch 2.13 this is ``sub`` + ``abs`` + ``mean``/``sum``."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _warn_size(input, target, "l1_loss")
    _reduction_enum(reduction)
    loss = (input - target).abs()
    if weight is not None:
        loss = loss * weight
    if reduction == "none":
        return loss
    return loss.mean() if reduction == "mean" else loss.sum()


@public
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """Negative log likelihood of the target class (``aten.nll_loss_forward``)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _nll_loss(input, target, weight, _reduction_enum(reduction), ignore_index)


def _nll_loss(input, target, weight, red, ignore_index):
    """:func:`nll_loss` after the reduction is resolved to its enum; :func:`cross_entropy` calls
    this directly (as PyTorch's calls its C++ ``nll_loss_nd``: no second ``__torch_function__``
    check, and no second pass over the arguments)."""
    ndim = input.dim()
    if ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {ndim})")
    if ndim != 1:
        # (``size(0)`` rather than ``shape[0]``: no Size object built on every call)
        batch = input.size(0)
        target_batch = target.size(0) if target.dim() else 0  # PyTorch reads a 0-d target's as 0
        if batch != target_batch:
            raise ValueError(f"Expected input batch_size ({batch}) to match target batch_size ({target_batch}).")
    if ndim <= 2:
        return aten.nll_loss_forward.default(input, target, weight, red, ignore_index)[0]
    # (N, C, d1, ...) -> (N*d1*..., C): classes last, one row per position
    if tuple(target.shape[1:]) != tuple(input.shape[2:]):
        raise RuntimeError(f"Expected target size {[input.shape[0], *input.shape[2:]]}, got {list(target.shape)}")
    c = input.shape[1]
    flat = _t.movedim(input, 1, -1).reshape(-1, c)
    out = aten.nll_loss_forward.default(flat, target.reshape(-1), weight, red, ignore_index)[0]
    return out.reshape(target.shape) if red == 0 else out


@public
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    """``nll_loss(_log_softmax(input, 1), target)``; also probability targets and label smoothing."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    ndim = input.dim()
    class_dim = 0 if ndim == 1 else 1
    logp = aten._log_softmax.default(input, class_dim, False)
    n_classes = input.size(class_dim)
    if target.dim() == ndim and target.dtype.is_floating_point and target.shape == input.shape:
        return _cross_entropy_probs(logp, target, weight, reduction, label_smoothing, class_dim, n_classes, input)
    loss = _nll_loss(logp, target, weight, _reduction_enum(reduction), ignore_index)
    if label_smoothing == 0.0:
        return loss
    # the smoothed part: the mean over classes of -log p, masked where target == ignore_index
    if weight is not None:
        shape = [1] * logp.dim()
        shape[class_dim] = n_classes
        smooth = -(logp * weight.reshape(shape)).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    ignore = target == ignore_index
    smooth = smooth.masked_fill(ignore, 0.0)
    if reduction == "mean":
        if weight is not None:
            smooth = smooth.sum() / weight.gather(0, target.masked_select(ignore.logical_not()).flatten()).sum()
        else:
            smooth = smooth.sum() / ignore.logical_not().sum()
    elif reduction == "sum":
        smooth = smooth.sum()
    return (1 - label_smoothing) * loss + smooth * (label_smoothing / n_classes)


def _cross_entropy_probs(logp, target, weight, reduction, label_smoothing, class_dim, n_classes, input):
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / n_classes
    prod = logp * target
    if weight is not None:
        shape = [1] * logp.dim()
        shape[class_dim] = n_classes
        prod = prod * weight.reshape(shape)
    if reduction == "none":
        return -prod.sum(class_dim)
    if reduction == "sum":
        return -prod.sum()
    _reduction_enum(reduction)
    if input.numel() == 0:
        return -prod.sum() * float("nan")
    return -prod.sum() / (input.numel() / n_classes)


@public
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    """Sigmoid + binary cross entropy in one stable step (``aten.binary_cross_entropy_with_logits``)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    red = _reduction_enum(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape!r}) must be the same as input size ({input.shape!r})")
    return aten.binary_cross_entropy_with_logits.default(input, target, weight, pos_weight, red)


@public
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Binary cross entropy of probabilities (``aten.binary_cross_entropy``); logs clamped at -100."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    red = _reduction_enum(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Using a target size ({target.shape!r}) that is different to the input size ({input.shape!r}) is deprecated. "
            "Please ensure they have the same size."
        )
    if weight is not None:
        weight = weight.expand(input.shape)
    return aten.binary_cross_entropy.default(input, target, weight, red)


@public
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """Quadratic below ``beta``, linear from there on (``aten.smooth_l1_loss``; ``l1_loss`` for ``beta=0``)."""
    _warn_size(input, target, "smooth_l1_loss")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    input, target = _t.broadcast_tensors(input, target)
    if beta == 0.0:
        return l1_loss(input, target, reduction=reduction)
    red = _reduction_enum(reduction)
    # (arguments equal to the schema's defaults are left out, as PyTorch's binding passes them)
    if beta == 1.0:
        return aten.smooth_l1_loss.default(input, target) if red == 1 else aten.smooth_l1_loss.default(input, target, red)
    return aten.smooth_l1_loss.default(input, target, red, beta)


@public
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """Quadratic for ``|d| < delta``, linear beyond: ``delta * (|d| - delta / 2)`` (``aten.huber_loss``;
    with ``weight``, the unreduced loss times ``weight``, then reduced)."""
    _warn_size(input, target, "huber_loss")
    input, target = _t.broadcast_tensors(input, target)
    if weight is None:
        red = _reduction_enum(reduction)
        if delta == 1.0:
            return aten.huber_loss.default(input, target) if red == 1 else aten.huber_loss.default(input, target, red)
        return aten.huber_loss.default(input, target, red, delta)
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    loss = (aten.huber_loss.default(input, target, 0) if delta == 1.0
            else aten.huber_loss.default(input, target, 0, delta)) * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


@public
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """``KL(target || exp(input))`` pointwise, with ``input`` given as log-probabilities."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction == "mean":
        warn_user(
            "reduction: 'mean' divides the total loss by both the batch size and the support size."
            "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
            "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
        )
    if log_target:
        loss = target.exp() * (target - input)
    else:
        # target * log(target) taken as 0 where target == 0 (xlogy)
        safe = _t.where(target > 0, target, _t.ones_like(target))
        loss = _t.where(target > 0, target * safe.log(), _t.zeros_like(target)) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.dim() else loss.sum()
    if reduction == "none":
        return loss
    _reduction_enum(reduction)
    return loss.mean() if reduction == "mean" else loss.sum()
