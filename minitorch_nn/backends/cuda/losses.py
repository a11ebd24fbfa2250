"""Elementwise losses on the GPU: ``l1_loss``, ``binary_cross_entropy(_with_logits)``.

Mirrors PyTorch's ``Loss.cu`` / ``BinaryCrossEntropy`` kernels: each loss is one elementwise
device function (a ``zip`` of ``elementwise.py``: one thread per element, broadcasting, dtype
casts), optionally multiplied by a weight, then reduced with ``reduction.py``:
``reduction`` 0 keeps the elements, 1 takes the mean, 2 the sum.

``mse_loss`` lives with the other pointwise registrations (``pointwise_ops.py``) and ``nll_loss``
with ``softmax.py``. Their backwards are derivative formulas in plain tensor ops, so they need no
kernel here. Integer inputs and empty means take the host path (``fallback.py``), which raises
the cpu backend's errors.
"""

from __future__ import annotations

import math

from minitorch_nn._C import TensorBase
from minitorch_nn._ops import aten
from minitorch_nn.backends.common import compute_dtype
from minitorch_nn.backends.cuda import elementwise as ew
from minitorch_nn.backends.cuda.copy import cast_contiguous
from minitorch_nn.backends.cuda.fallback import host_kernel
from minitorch_nn.backends.cuda.reduction import reduce

NONE, MEAN, SUM = 0, 1, 2


def f_l1(x, y):
    d = x - y
    return d if d >= 0 else -d


def f_bce(x, y):
    # each log is clamped at -100 (as PyTorch does), so log(0) gives a large finite loss
    lx = math.log(x) if x > 0 else -100.0
    l1x = math.log1p(-x) if x < 1 else -100.0
    return -(y * max(lx, -100.0) + (1 - y) * max(l1x, -100.0))


def f_bce_logits(x, y):
    # -log(sigmoid(x)) = max(-x, 0) + log1p(exp(-|x|)): neither overflows nor loses digits
    return (1 - y) * x + max(-x, 0.0) + math.log1p(math.exp(-abs(x)))


def f_bce_logits_pos(x, y, pw):
    return (1 - y) * x + (1 + (pw - 1) * y) * (max(-x, 0.0) + math.log1p(math.exp(-abs(x))))


def _reduce(loss, reduction, cdt, d):
    if reduction == MEAN:
        return ew.launch(ew.f_div, [reduce(loss, None, False, "sum", cdt), loss.numel()], d, cdt)
    if reduction == SUM:
        loss = reduce(loss, None, False, "sum", cdt)
    return loss if d is cdt else cast_contiguous(loss, d)


def _gpu_float(*ts):
    return all(t is None or (isinstance(t, TensorBase) and t.device.type == "cuda" and t.dtype.is_floating_point)
               for t in ts)


_host_l1 = host_kernel(aten.l1_loss.default)
_host_bce = host_kernel(aten.binary_cross_entropy.default)
_host_bce_logits = host_kernel(aten.binary_cross_entropy_with_logits.default)


@aten.l1_loss.default.impl("cuda")
def l1_loss(self, target, reduction=MEAN):
    if not _gpu_float(self, target) or self.numel() == 0:
        return _host_l1(self, target, reduction)
    d = self.dtype
    cdt = compute_dtype(d)
    return _reduce(ew.launch(f_l1, [self, target], cdt, cdt), reduction, cdt, d)


def _in_unit_interval(t):
    """Whether every element lies in [0, 1] (two reductions; PyTorch checks with a device assert)."""
    lo = reduce(t, None, False, "min", t.dtype).item()
    hi = reduce(t, None, False, "max", t.dtype).item()
    return 0 <= lo and hi <= 1


@aten.binary_cross_entropy.default.impl("cuda")
def binary_cross_entropy(self, target, weight=None, reduction=MEAN):
    if (not _gpu_float(self, target, weight) or self.numel() == 0 or not _in_unit_interval(self)
            or not _in_unit_interval(target)):
        return _host_bce(self, target, weight, reduction)  # raises the range errors
    d = self.dtype
    cdt = compute_dtype(d)
    loss = ew.launch(f_bce, [self, target], cdt, cdt)
    if weight is not None:
        loss = ew.launch(ew.f_mul, [loss, weight], cdt, cdt)
    return _reduce(loss, reduction, cdt, d)


@aten.binary_cross_entropy_with_logits.default.impl("cuda")
def binary_cross_entropy_with_logits(self, target, weight=None, pos_weight=None, reduction=MEAN):
    if not _gpu_float(self, target, weight, pos_weight) or self.numel() == 0:
        return _host_bce_logits(self, target, weight, pos_weight, reduction)
    d = self.dtype
    cdt = compute_dtype(d)
    if pos_weight is None:
        loss = ew.launch(f_bce_logits, [self, target], cdt, cdt)
    else:
        loss = ew.launch(f_bce_logits_pos, [self, target, pos_weight], cdt, cdt)
    if weight is not None:
        loss = ew.launch(ew.f_mul, [loss, weight], cdt, cdt)
    return _reduce(loss, reduction, cdt, d)
