"""The smooth L1 and Huber losses and their backward ops on the GPU: elementwise kernels, then the
sum of ``reduction.py`` for a reduced loss.

Mirrors PyTorch's ``Loss.cu`` kernels for ``smooth_l1_loss``/``huber_loss`` and their backward
ops, with the expressions of the cpu kernels (``backends/cpu/smooth_losses.py``). Operands of
another dtype or shape than the loss's, and empty ones, take the host path (the cpu kernel's
promotion, broadcasting and errors).
"""

from __future__ import annotations

from minitorch_nn._ops import aten
from minitorch_nn.backends.common import compute_dtype
from minitorch_nn.backends.cuda import elementwise as ew
from minitorch_nn.backends.cuda.activations import _baked
from minitorch_nn.backends.cuda.fallback import host_kernel

# beta/delta are baked in (a loss module keeps them), and so is the backward's 1/n of a mean (an
# elementwise kernel has at most three operands; a training loop keeps its batch size).


def make_smooth_l1(beta):
    def f(x, y):
        z = abs(x - y)
        return 0.5 * z * z / beta if z < beta else z - 0.5 * beta

    return f


def make_huber(delta):
    def f(x, y):
        z = abs(x - y)
        return 0.5 * z * z if z < delta else delta * (z - 0.5 * delta)

    return f


def make_smooth_l1_backward(beta, norm):
    def f(x, y, g):
        d = x - y
        if d <= -beta:
            return -norm * g
        if d >= beta:
            return norm * g
        return norm * d * g / beta

    return f


def make_huber_backward(delta, norm):
    def f(x, y, g):
        d = x - y
        if d <= -delta:
            return -norm * g * delta
        if d >= delta:
            return norm * g * delta
        return norm * d * g

    return f


def _reduce_loss(loss, reduction):
    if reduction == 0:
        return loss
    from minitorch_nn.backends.cuda.reduction import sum_all

    total = sum_all(loss)
    return ew.pointwise(ew.f_div, total, loss.numel()) if reduction == 1 else total


def _smooth_loss(op, make, check):
    host = host_kernel(op)

    def kernel(self, target, reduction=1, param=1.0):
        check(param)
        if not (self.dtype.is_floating_point and target.dtype is self.dtype and target.is_cuda
                and tuple(self.shape) == tuple(target.shape) and self.numel()):
            return host(self, target, reduction, param)
        return _reduce_loss(ew.pointwise(_baked(make, float(param)), self, target), reduction)

    op.impl("cuda")(kernel)


def _smooth_loss_backward(op, make):
    host = host_kernel(op)

    def kernel(grad_output, self, target, reduction, param):
        if not (self.dtype.is_floating_point and target.dtype is self.dtype and grad_output.dtype is self.dtype
                and target.is_cuda and grad_output.is_cuda and tuple(self.shape) == tuple(target.shape)
                and self.numel()):
            return host(grad_output, self, target, reduction, param)
        norm = 1.0 / self.numel() if reduction == 1 else 1.0
        return ew.launch(_baked(make, float(param), norm), [self, target, grad_output], self.dtype,
                         compute_dtype(self.dtype), layout=[])   # (row-major, as PyTorch's zeros_like)

    op.impl("cuda")(kernel)


def _check_beta(beta):
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")


def _check_delta(delta):
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")


_smooth_loss(aten.smooth_l1_loss.default, make_smooth_l1, _check_beta)
_smooth_loss(aten.huber_loss.default, make_huber, _check_delta)
_smooth_loss_backward(aten.smooth_l1_loss_backward.default, make_smooth_l1_backward)
_smooth_loss_backward(aten.huber_loss_backward.default, make_huber_backward)
