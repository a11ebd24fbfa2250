"""Meta kernels for the neural-network ops: output shapes and dtypes only, no data.

Mirrors the shape halves of PyTorch's ``torch/_meta_registrations.py`` for convolution, pooling,
normalization, embedding, dropout and the losses (and their ``*_backward`` ops), so that a model
built under ``with minitorch_nn.device("meta"):`` runs its forward and backward without memory.
Shape formulas are shared with the cpu kernels in ``backends/cpu/nn_ops.py``.
"""

from __future__ import annotations

from minitorch_nn import _dtype as dt
from minitorch_nn._ops import aten
from minitorch_nn._tensor import _new_meta

# (importing smooth_losses, adaptive_pool and upsample registers their cpu kernels too)
from minitorch_nn.backends.cpu import smooth_losses  # noqa: F401
from minitorch_nn.backends.cpu.adaptive_pool import check_adaptive_avg_pool2d
from minitorch_nn.backends.cpu.nn_ops import (
    MEAN,
    NONE,
    _check_conv,
    _check_transposed_out_size,
    _conv_out_size,
    _expand,
)
from minitorch_nn.backends.cpu.pooling import _check_pool, _pool_args, _pool_out
from minitorch_nn.backends.cpu.upsample import check_upsample_nearest2d


def _like(t, d=None):
    return _new_meta(tuple(t.shape), d or t.dtype)


def _opt_like(t, flag):
    return _like(t) if flag and t is not None else None


@aten.convolution.default.impl("meta")
def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    nd = _check_conv(input, weight, bias, stride, padding, dilation, transposed, groups)
    stride, padding, dilation = _expand(stride, nd), _expand(padding, nd), _expand(dilation, nd)
    output_padding = _expand(output_padding, nd) if output_padding else [0] * nd
    ksize = tuple(weight.shape[2:])
    if transposed:
        out_c = weight.shape[1] * groups
        sizes = [(s - 1) * st - 2 * p + d * (k - 1) + op + 1
                 for s, st, p, d, k, op in zip(input.shape[2:], stride, padding, dilation, ksize, output_padding)]
        _check_transposed_out_size(input.shape[2:], sizes)
    else:
        out_c = weight.shape[0]
        sizes = [_conv_out_size(s, k, st, p, d) for s, k, st, p, d in zip(input.shape[2:], ksize, stride, padding, dilation)]
    return _new_meta((input.shape[0], out_c, *sizes), input.dtype)


@aten.convolution_backward.default.impl("meta")
def convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
                         output_padding, groups, output_mask):
    gb = _new_meta((grad_output.shape[1],), grad_output.dtype) if output_mask[2] else None
    return _opt_like(input, output_mask[0]), _opt_like(weight, output_mask[1]), gb


def _pool_shape(self, kernel_size, stride, padding, dilation, ceil_mode, name):
    k, s, p, d = _pool_args(kernel_size, stride, padding if isinstance(padding, (list, tuple)) else [padding],
                            dilation if isinstance(dilation, (list, tuple)) else [dilation])
    _check_pool(self, k, s, p, name)
    out = [_pool_out(n, kk, ss, pp, dd, ceil_mode) for n, kk, ss, pp, dd in zip(self.shape[-2:], k, s, p, d)]
    if min(out) <= 0:
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, self.shape[-3:]))}). Calculated output size: "
                           f"({self.shape[-3]}x{out[0]}x{out[1]}). Output size is too small")
    return (*self.shape[:-2], *out)


@aten.max_pool2d_with_indices.default.impl("meta")
def max_pool2d_with_indices(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    shape = _pool_shape(self, kernel_size, stride, padding, dilation, ceil_mode, "max")
    return _new_meta(shape, self.dtype), _new_meta(shape, dt.int64)


@aten.avg_pool2d.default.impl("meta")
def avg_pool2d(self, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None):
    return _new_meta(_pool_shape(self, kernel_size, stride, padding, 1, ceil_mode, "avg"), self.dtype)


@aten.max_pool2d_with_indices_backward.default.impl("meta")
def max_pool2d_with_indices_backward(grad_output, self, *args):
    return _like(self)


@aten.avg_pool2d_backward.default.impl("meta")
def avg_pool2d_backward(grad_output, self, *args):
    return _like(self)


@aten.native_layer_norm.default.impl("meta")
def native_layer_norm(input, normalized_shape, weight, bias, eps):
    k = len(normalized_shape)
    if tuple(input.shape[input.dim() - k:]) != tuple(normalized_shape) or k == 0:
        raise RuntimeError(
            f"Given normalized_shape={list(normalized_shape)}, expected input with shape [*, "
            f"{', '.join(map(str, normalized_shape))}], but got input of size{list(input.shape)}"
        )
    stat = (*input.shape[: input.dim() - k], *([1] * k))
    return _like(input), _new_meta(stat, input.dtype), _new_meta(stat, input.dtype)


@aten.native_layer_norm_backward.default.impl("meta")
def native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask):
    return _opt_like(input, output_mask[0]), _opt_like(weight, output_mask[1]), _opt_like(bias, output_mask[2])


def _bn(input, weight, bias, running_mean, running_var, training, momentum, eps):
    c = input.shape[1] if input.dim() > 1 else 1
    stat = (c,) if training else (0,)
    return _like(input), _new_meta(stat, input.dtype), _new_meta(stat, input.dtype)


aten.native_batch_norm.default.impl("meta")(_bn)
aten._native_batch_norm_legit.default.impl("meta")(_bn)


@aten._native_batch_norm_legit_no_training.default.impl("meta")
def _native_batch_norm_legit_no_training(input, weight, bias, running_mean, running_var, momentum, eps):
    return _bn(input, weight, bias, running_mean, running_var, False, momentum, eps)


@aten.native_batch_norm_backward.default.impl("meta")
def native_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean, save_invstd, train, eps,
                               output_mask):
    c = (input.shape[1],)
    return (
        _opt_like(input, output_mask[0]),
        _new_meta(c, input.dtype) if output_mask[1] else None,
        _new_meta(c, input.dtype) if output_mask[2] else None,
    )


@aten.native_group_norm.default.impl("meta")
def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    if C % group:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of shape {list(input.shape)} and num_groups={group}")
    return _like(input), _new_meta((N, group), input.dtype), _new_meta((N, group), input.dtype)


@aten.native_group_norm_backward.default.impl("meta")
def native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group, output_mask):
    return (
        _opt_like(input, output_mask[0]),
        _new_meta((C,), input.dtype) if output_mask[1] else None,
        _new_meta((C,), input.dtype) if output_mask[2] else None,
    )


@aten.embedding.default.impl("meta")
def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    return _new_meta((*indices.shape, weight.shape[1]), weight.dtype)


@aten.embedding_dense_backward.default.impl("meta")
def embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    return _new_meta((num_weights, grad_output.shape[-1]), grad_output.dtype)


@aten.native_dropout.default.impl("meta")
def native_dropout(input, p, train):
    return _like(input), _like(input, dt.bool)


@aten.native_dropout_backward.default.impl("meta")
def native_dropout_backward(grad_output, mask, scale):
    return _like(grad_output)


def _loss(self, target, *args, reduction=MEAN):
    return _like(self) if reduction == NONE else _new_meta((), self.dtype)


@aten.mse_loss.default.impl("meta")
@aten.l1_loss.default.impl("meta")
def _pointwise_loss(self, target, reduction=MEAN):
    return _loss(self, target, reduction=reduction)


@aten._adaptive_avg_pool2d.default.impl("meta")
def _adaptive_avg_pool2d(self, output_size):
    oh, ow = check_adaptive_avg_pool2d(self, output_size)
    return _new_meta(tuple(self.shape[:-2]) + (oh, ow), self.dtype)


@aten._adaptive_avg_pool2d_backward.default.impl("meta")
def _adaptive_avg_pool2d_backward(grad_output, self):
    return _like(self)


@aten.upsample_nearest2d.default.impl("meta")
def upsample_nearest2d(self, output_size, scales_h=None, scales_w=None):
    if self.dim() != 4:
        raise RuntimeError(f"Non-empty 4D data tensor expected but got a tensor with sizes {list(self.shape)}")
    check_upsample_nearest2d(list(self.shape), list(output_size))
    return _new_meta(tuple(self.shape[:2]) + tuple(output_size), self.dtype)


@aten.upsample_nearest2d_backward.default.impl("meta")
def upsample_nearest2d_backward(grad_output, output_size, input_size, scales_h=None, scales_w=None):
    check_upsample_nearest2d(list(input_size), list(output_size))
    return _new_meta(tuple(input_size), grad_output.dtype)


@aten.smooth_l1_loss.default.impl("meta")
@aten.huber_loss.default.impl("meta")
def _smooth_loss(self, target, reduction=MEAN, beta_or_delta=1.0):
    return _loss(self, target, reduction=reduction)


@aten.smooth_l1_loss_backward.default.impl("meta")
@aten.huber_loss_backward.default.impl("meta")
def _smooth_loss_backward(grad_output, self, target, reduction, beta_or_delta):
    return _like(self)


@aten.binary_cross_entropy_with_logits.default.impl("meta")
def binary_cross_entropy_with_logits(self, target, weight=None, pos_weight=None, reduction=MEAN):
    return _loss(self, target, reduction=reduction)


@aten.binary_cross_entropy.default.impl("meta")
def binary_cross_entropy(self, target, weight=None, reduction=MEAN):
    return _loss(self, target, reduction=reduction)


@aten.mse_loss_backward.default.impl("meta")
def mse_loss_backward(grad_output, self, target, reduction):
    return _like(self)


@aten.nll_loss_forward.default.impl("meta")
def nll_loss_forward(self, target, weight, reduction, ignore_index):
    out = _new_meta(tuple(target.shape), self.dtype) if reduction == NONE else _new_meta((), self.dtype)
    return out, _new_meta((), self.dtype)


@aten.nll_loss_backward.default.impl("meta")
def nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    return _like(self)
