"""The smooth L1 and Huber losses and their backward ops (cpu): ``smooth_l1_loss``,
``smooth_l1_loss_backward``, ``huber_loss``, ``huber_loss_backward``.

Mirrors PyTorch's ``aten/src/ATen/native/Loss.cpp`` and their pointwise cpu kernels
(``native/cpu/PointwiseOpsKernel.cpp``): with ``z = |x - y|``, smooth L1 is ``0.5 * z * z / beta``
below ``beta`` and ``z - 0.5 * beta`` from there on; Huber is ``0.5 * z * z`` below ``delta``
and ``delta * (z - 0.5 * delta)`` beyond, then both are reduced like ``mse_loss``. Being ops of
their own, ``F.smooth_l1_loss(x, y).grad_fn`` is ``SmoothL1LossBackward0`` and a dispatch mode sees
``aten.smooth_l1_loss`` (not the ``sub``/``abs``/``where`` they could be written with).

The backward kernels take the incoming gradient already broadcast (a 0-d tensor for a reduced
loss) and, as PyTorch's, fill a fresh row-major tensor; ``target``'s gradient is the same op with
``self`` and ``target`` swapped (the derivative is odd in ``x - y``).
"""

from __future__ import annotations

import numpy as np

from minitorch_nn._ops import aten
from minitorch_nn.backends.common import result_type, type_name
from minitorch_nn.backends.cpu._numpy import wrap
from minitorch_nn.backends.cpu.nn_ops import MEAN, _arr, _loss


def _operands(self, target, kernel):
    d = result_type(self, target)
    if not d.is_floating_point:   # PyTorch's words for a kernel with float loops only
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{type_name(d)}'")
    a, b = _arr(self, d), _arr(target, d)
    if a.shape != b.shape:   # (F.* has broadcast them already; the aten op called directly may not)
        a, b = np.broadcast_arrays(a, b)
    return d, a, b


@aten.smooth_l1_loss.default.impl("cpu")
def smooth_l1_loss(self, target, reduction=MEAN, beta=1.0):
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    d, a, b = _operands(self, target, "smooth_l1_cpu")
    z = np.abs(a - b)
    beta_ = np.asarray(beta, z.dtype)
    half = np.asarray(0.5, z.dtype)
    loss = np.where(z < beta_, half * z * z / beta_, z - half * beta_)
    return _loss(loss, d, reduction, self, target)


@aten.huber_loss.default.impl("cpu")
def huber_loss(self, target, reduction=MEAN, delta=1.0):
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    d, a, b = _operands(self, target, "huber_cpu")
    z = np.abs(a - b)
    delta_ = np.asarray(delta, z.dtype)
    half = np.asarray(0.5, z.dtype)
    loss = np.where(z < delta_, half * z * z, delta_ * (z - half * delta_))
    return _loss(loss, d, reduction, self, target)


def _backward_operands(grad_output, self, target, reduction, kernel):
    d, a, b = _operands(self, target, kernel)
    g = np.broadcast_to(_arr(grad_output, d), a.shape)
    # PyTorch's norm: 1/numel for a mean, rounded to the dtype
    norm = np.asarray(1.0 / a.size if reduction == MEAN and a.size else 1.0, a.dtype)
    return d, a - b, g, norm


@aten.smooth_l1_loss_backward.default.impl("cpu")
def smooth_l1_loss_backward(grad_output, self, target, reduction, beta):
    d, x, g, norm = _backward_operands(grad_output, self, target, reduction, "smooth_l1_backward_cpu")
    beta_ = np.asarray(beta, x.dtype)
    # -norm * g at or below -beta, norm * g at or above beta, norm * x * g / beta between
    grad = np.where(x <= -beta_, -norm * g, np.where(x >= beta_, norm * g, norm * x * g / beta_))
    return wrap(np.ascontiguousarray(grad) if grad.ndim else grad, d)


@aten.huber_loss_backward.default.impl("cpu")
def huber_loss_backward(grad_output, self, target, reduction, delta):
    d, x, g, norm = _backward_operands(grad_output, self, target, reduction, "huber_backward_cpu")
    delta_ = np.asarray(delta, x.dtype)
    grad = np.where(x <= -delta_, -norm * g * delta_, np.where(x >= delta_, norm * g * delta_, norm * x * g))
    return wrap(np.ascontiguousarray(grad) if grad.ndim else grad, d)
