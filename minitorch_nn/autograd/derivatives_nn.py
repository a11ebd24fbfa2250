"""Derivatives of the neural-network ops that ``derivatives.py`` does not cover.

Mirrors the ``convolution``, ``max_pool2d_with_indices``, ``avg_pool2d``, ``native_batch_norm``
(and its ``_native_batch_norm_legit*`` forms), ``native_group_norm`` and ``nll_loss_forward``
entries of PyTorch's ``tools/autograd/derivatives.yaml``. As there, each input's gradient is one call of the op's
``*_backward`` aten op (numpy kernels in ``backends/cpu/nn_ops.py``), asked through
``output_mask`` for that input's gradient only; bias gradients are plain sums of ``grad``.

Registered with ``derivatives.derivative`` exactly like the formulas there: the parameter names
of each formula say what the recorder saves (schema argument names, ``result1``...).

Differences from PyTorch: the ``*_backward`` ops have no derivatives of their own, so
double backward through these layers raises "derivative for aten::... is not implemented".
"""

from __future__ import annotations

from minitorch_nn._ops import aten
from minitorch_nn.autograd.derivatives import derivative


def _channel_sum(g):
    """Sum over every dim but the channel dim (1): the gradient of a per-channel bias."""
    return g.sum([0, *range(2, g.dim())])


# -- convolution ---------------------------------------------------------------------------------

def _conv_grad(which, grad, input, weight, stride, padding, dilation, transposed, output_padding, groups):
    mask = [which == 0, which == 1, False]
    return aten.convolution_backward.default(
        grad, input, weight, None, stride, padding, dilation, transposed, output_padding, groups, mask
    )[which]


derivative(
    "convolution", "ConvolutionBackward0",
    input=lambda grad, input, weight, stride, padding, dilation, transposed, output_padding, groups: _conv_grad(
        0, grad, input, weight, stride, padding, dilation, transposed, output_padding, groups),
    weight=lambda grad, input, weight, stride, padding, dilation, transposed, output_padding, groups: _conv_grad(
        1, grad, input, weight, stride, padding, dilation, transposed, output_padding, groups),
    bias=lambda grad: _channel_sum(grad),
)

# -- pooling -------------------------------------------------------------------------------------

derivative(
    "max_pool2d_with_indices", "MaxPool2DWithIndicesBackward0",
    # the indices (result1) say which input element each output came from
    self=lambda grads, self, kernel_size, stride, padding, dilation, ceil_mode, result1:
        aten.max_pool2d_with_indices_backward.default(grads[0], self, kernel_size, stride, padding, dilation,
                                                      ceil_mode, result1),
)

derivative(
    "avg_pool2d", "AvgPool2DBackward0",
    self=lambda grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override:
        aten.avg_pool2d_backward.default(grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                         divisor_override),
)

# -- batch norm ----------------------------------------------------------------------------------


def _bn_grad(which, grads, input, weight, running_mean, running_var, training, eps, save_mean, save_invstd):
    mask = [which == 0, which == 1, False]
    return aten.native_batch_norm_backward.default(
        grads[0], input, weight, running_mean, running_var, save_mean, save_invstd, training, eps, mask
    )[which]


for _name, _node in (("native_batch_norm", "NativeBatchNormBackward0"),
                     ("_native_batch_norm_legit", "NativeBatchNormLegitBackward0")):
    derivative(
        _name, _node,
        input=lambda grads, input, weight, running_mean, running_var, training, eps, result1, result2: _bn_grad(
            0, grads, input, weight, running_mean, running_var, training, eps, result1, result2),
        weight=lambda grads, input, weight, running_mean, running_var, training, eps, result1, result2: _bn_grad(
            1, grads, input, weight, running_mean, running_var, training, eps, result1, result2),
        bias=lambda grads: _channel_sum(grads[0]),
    )

derivative(
    "_native_batch_norm_legit_no_training", "NativeBatchNormLegitNoTrainingBackward0",
    input=lambda grads, input, weight, running_mean, running_var, eps, result1, result2: _bn_grad(
        0, grads, input, weight, running_mean, running_var, False, eps, result1, result2),
    weight=lambda grads, input, weight, running_mean, running_var, eps, result1, result2: _bn_grad(
        1, grads, input, weight, running_mean, running_var, False, eps, result1, result2),
    bias=lambda grads: _channel_sum(grads[0]),
)

# -- group norm ----------------------------------------------------------------------------------


def _gn_grad(which, grads, input, weight, N, C, HxW, group, mean, rstd):
    mask = [which == 0, which == 1, False]
    return aten.native_group_norm_backward.default(grads[0], input, mean, rstd, weight, N, C, HxW, group, mask)[which]


derivative(
    "native_group_norm", "NativeGroupNormBackward0",
    input=lambda grads, input, weight, N, C, HxW, group, result1, result2: _gn_grad(
        0, grads, input, weight, N, C, HxW, group, result1, result2),
    weight=lambda grads, input, weight, N, C, HxW, group, result1, result2: _gn_grad(
        1, grads, input, weight, N, C, HxW, group, result1, result2),
    bias=lambda grads, N, C: grads[0].reshape(N, C, -1).sum([0, 2]),
)

# -- nll_loss ------------------------------------------------------------------------------------
# Replaces the tensor-op formula in derivatives.py, which indexes ``weight[target]`` and so fails
# on targets equal to ``ignore_index`` (e.g. -100). The backward kernel skips those rows, as
# PyTorch's ``nll_loss_backward`` does.

derivative(
    "nll_loss_forward", "NllLossBackward0",
    self=lambda grads, self, target, weight, reduction, ignore_index, result1: aten.nll_loss_backward.default(
        grads[0], self, target, weight, reduction, ignore_index, result1),
)
