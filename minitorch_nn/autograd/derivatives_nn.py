"""Derivatives of the neural-network ops that ``derivatives.py`` does not cover.

Mirrors the ``convolution``, ``max_pool2d_with_indices``, ``avg_pool2d``, ``native_batch_norm``
(and its ``_native_batch_norm_legit*`` forms), ``native_group_norm``, ``native_layer_norm`` and
``nll_loss_forward`` entries of PyTorch's ``tools/autograd/derivatives.yaml``, and the entries of
their ``*_backward`` ops, which is what makes double backward (``create_graph=True``) work:

* Each input's gradient is one call of the op's ``*_backward`` aten op (numpy kernels in
  ``backends/cpu/nn_ops.py``), asked through ``output_mask`` for that input's gradient only;
  bias gradients are plain sums of ``grad``.
* ``convolution_backward``, ``max_pool2d_with_indices_backward``, ``avg_pool2d_backward`` and
  ``nll_loss_backward`` have derivatives of their own. All four are linear in ``grad_output``
  (and convolution is bilinear in input and weight), so their derivatives are the forward op
  again, or ``convolution_backward`` itself: any order of derivative works.
* The norms (batch, group, layer) differ from PyTorch: instead of a hand-derived
  ``batchnorm_double_backward``, when a graph is being built (``create_graph=True``) the formula
  writes the same gradient with ordinary tensor ops, recomputing the statistics from ``input``
  so that their dependence on it is recorded too. Without ``create_graph`` the one fast kernel runs.
* ``mse_loss_backward``, ``native_dropout_backward`` and ``embedding_dense_backward``, which only
  direct calls reach, are differentiable too. Not yet: the norms' ``*_backward`` ops called
  directly (autograd itself never calls them while building a graph, see above).

The activations PyTorch runs as one op (``hardswish``, ``hardsigmoid``, ``mish``,
``log_sigmoid_forward``, ``celu``) call their ``*_backward`` op as PyTorch's nodes do, at the end
of this file; ``hardsigmoid_backward`` has PyTorch's NotImplemented node (no double backward).

Registered with ``derivatives.derivative`` exactly like the formulas there: the parameter names
of each formula say what the recorder saves (schema argument names, ``result1``...).
"""

from __future__ import annotations

import weakref

from minitorch_nn import _dtype
from minitorch_nn._device import CPU as _CPU
from minitorch_nn._ops import aten
from minitorch_nn._tensor import Tensor
from minitorch_nn.autograd import derivatives as _derivatives
from minitorch_nn.autograd import grad_mode
from minitorch_nn.autograd.derivatives import _c, derivative
from minitorch_nn.backends import compiled as _compiled_switch

# The compiled twin of nll_loss's formula (``_ext/twins/autograd/derivatives_nn.pyx``): see
# ``_nll_loss_grad`` below and the top of derivatives.py.
try:
    from minitorch_nn._twins.backends.cpu import nn_ops as _nn_ops_twin
    from minitorch_nn._twins.autograd import derivatives_nn as _twin
except ImportError:  # pragma: no cover - an extension built without it
    _twin = None
else:
    if _derivatives._twin is None:   # pragma: no cover - built without the derivatives' twin
        _twin = None
    else:
        _twin.setup(tensor_cls=Tensor, float32=_dtype.float32, float64=_dtype.float64, cpu=_CPU,
                    derivatives_twin=_derivatives._twin, nll_scatter=_nn_ops_twin.nll_scatter)


def _channel_sum(g):
    """Sum over every dim but the channel dim (1): the gradient of a per-channel bias."""
    return g.sum([0, *range(2, g.dim())])


# -- convolution ---------------------------------------------------------------------------------

def _conv_grad(which, grad, input, weight, stride, padding, dilation, transposed, output_padding, groups):
    mask = [which == 0, which == 1, False]
    # (complex tensors: the conjugate of the other factor, as for any product; see derivatives.py)
    return aten.convolution_backward.default(
        grad, _c(input), _c(weight), None, stride, padding, dilation, transposed, output_padding, groups, mask
    )[which]


derivative(
    "convolution", "ConvolutionBackward0",
    input=lambda grad, input, weight, stride, padding, dilation, transposed, output_padding, groups: _conv_grad(
        0, grad, input, weight, stride, padding, dilation, transposed, output_padding, groups),
    weight=lambda grad, input, weight, stride, padding, dilation, transposed, output_padding, groups: _conv_grad(
        1, grad, input, weight, stride, padding, dilation, transposed, output_padding, groups),
    bias=lambda grad: _channel_sum(grad),
)


# convolution(x, w) is bilinear, B(x, w); convolution_backward returns gx = Bx^T(gy, w),
# gw = Bw^T(gy, x) and gb = sum(gy). Differentiating <ggx, gx> + <ggw, gw> + <ggb, gb>:
#   d/d gy = B(ggx, w) + B(x, ggw) + ggb,  d/d w = Bw^T(gy, ggx),  d/d x = Bx^T(gy, ggw).
# (``grads`` are ggx, ggw, ggb; an output that was not asked for has no gradient: None.)

def _conv_double_grad_output(grads, input, weight, stride, padding, dilation, transposed, output_padding, groups):
    ggx, ggw, ggb = grads
    out = None
    if ggx is not None:
        out = aten.convolution.default(ggx, weight, None, stride, padding, dilation, transposed, output_padding, groups)
    if ggw is not None:
        term = aten.convolution.default(input, ggw, None, stride, padding, dilation, transposed, output_padding, groups)
        out = term if out is None else out + term
    if ggb is not None:
        term = ggb.reshape([1, -1] + [1] * (weight.dim() - 2))
        out = term if out is None else out + term
    return out


def _conv_double_other(which, grads, grad_output, input, weight, stride, padding, dilation, transposed,
                       output_padding, groups):
    """Gradient for ``input`` (which=0, from ggw) or ``weight`` (which=1, from ggx)."""
    gg = grads[1 - which]
    if gg is None:
        return None
    x, w = (input, gg) if which == 0 else (gg, weight)
    mask = [which == 0, which == 1, False]
    return aten.convolution_backward.default(
        grad_output, x, w, None, stride, padding, dilation, transposed, output_padding, groups, mask
    )[which]


derivative(
    "convolution_backward", "ConvolutionBackwardBackward0",
    grad_output=lambda grads, input, weight, stride, padding, dilation, transposed, output_padding, groups:
        _conv_double_grad_output(grads, input, weight, stride, padding, dilation, transposed, output_padding, groups),
    input=lambda grads, grad_output, input, weight, stride, padding, dilation, transposed, output_padding, groups:
        _conv_double_other(0, grads, grad_output, input, weight, stride, padding, dilation, transposed,
                           output_padding, groups),
    weight=lambda grads, grad_output, input, weight, stride, padding, dilation, transposed, output_padding, groups:
        _conv_double_other(1, grads, grad_output, input, weight, stride, padding, dilation, transposed,
                           output_padding, groups),
)

# -- pooling -------------------------------------------------------------------------------------

derivative(
    "max_pool2d_with_indices", "MaxPool2DWithIndicesBackward0",
    # the indices (result1) say which input element each output came from
    self=lambda grads, self, kernel_size, stride, padding, dilation, ceil_mode, result1:
        aten.max_pool2d_with_indices_backward.default(grads[0], self, kernel_size, stride, padding, dilation,
                                                      ceil_mode, result1),
)

# max_pool2d_with_indices_backward scatters grad_output to the recorded indices, so its
# derivative gathers from the same indices (``self`` only gives the shape).
derivative(
    "max_pool2d_with_indices_backward", "MaxPool2DWithIndicesBackwardBackward0",
    grad_output=lambda grad, indices: grad.flatten(-2).gather(-1, indices.flatten(-2)).reshape(list(indices.shape)),
    self=lambda grad: aten.zeros_like.default(grad),   # as in PyTorch: a zero gradient, not none
)

derivative(
    "avg_pool2d", "AvgPool2DBackward0",
    self=lambda grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override:
        aten.avg_pool2d_backward.default(grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                         divisor_override),
)

# avg_pool2d is linear, so avg_pool2d_backward is its adjoint and the adjoint of that is avg_pool2d.
derivative(
    "avg_pool2d_backward", "AvgPool2DBackwardBackward0",
    grad_output=lambda grad, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override:
        aten.avg_pool2d.default(grad, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override),
    self=lambda grad: aten.zeros_like.default(grad),
)

# -- normalization (batch, group, layer) ---------------------------------------------------------
# Each normalizes x to xhat = (x - mean) * invstd and then applies weight and bias. Without a
# graph to build, one kernel gives the gradients from the saved mean/invstd. With
# create_graph=True the same gradients are written with tensor ops from statistics recomputed
# from ``input``, so that a second backward sees how they depend on it.


def _stats(x, axes, eps):
    """xhat and invstd of ``x`` over ``axes`` (biased variance, as the forward uses), recorded."""
    xc = x - x.mean(axes, keepdim=True)
    invstd = ((xc * xc).mean(axes, keepdim=True) + eps).rsqrt()
    return xc * invstd, invstd


def _whitening_input_grad(gxhat, xhat, invstd, axes):
    """The gradient w.r.t. x of xhat = (x - mean(x)) * invstd(x), given the gradient w.r.t. xhat."""
    return invstd * (gxhat - gxhat.mean(axes, keepdim=True) - xhat * (gxhat * xhat).mean(axes, keepdim=True))


def _bn_grad(which, grads, input, weight, running_mean, running_var, training, eps, save_mean, save_invstd):
    if not grad_mode.is_grad_enabled():
        mask = [which == 0, which == 1, False]
        return aten.native_batch_norm_backward.default(
            grads[0], input, weight, running_mean, running_var, save_mean, save_invstd, training, eps, mask
        )[which]
    g = grads[0]
    axes = [0, *range(2, input.dim())]
    shape = [1, -1] + [1] * (input.dim() - 2)
    if training:
        xhat, invstd = _stats(input, axes, eps)
    else:   # running statistics: constants, so the layer is affine in x
        invstd = (running_var + eps).rsqrt().reshape(shape)
        xhat = (input - running_mean.reshape(shape)) * invstd
    if which == 1:
        return (g * xhat).sum(axes)
    gxhat = g * weight.reshape(shape) if weight is not None else g
    return _whitening_input_grad(gxhat, xhat, invstd, axes) if training else gxhat * invstd


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


def _gn_grad(which, grads, input, weight, N, C, HxW, group, eps, mean, rstd):
    if not grad_mode.is_grad_enabled():
        mask = [which == 0, which == 1, False]
        return aten.native_group_norm_backward.default(grads[0], input, mean, rstd, weight, N, C, HxW, group,
                                                       mask)[which]
    xhat, invstd = _stats(input.reshape(N, group, -1), [2], eps)
    xhat = xhat.reshape(N, C, HxW)
    g = grads[0].reshape(N, C, HxW)
    if which == 1:
        return (g * xhat).sum([0, 2])
    gxhat = g * weight.reshape(1, C, 1) if weight is not None else g
    gx = _whitening_input_grad(gxhat.reshape(N, group, -1), xhat.reshape(N, group, -1), invstd, [2])
    return gx.reshape(list(input.shape))


derivative(
    "native_group_norm", "NativeGroupNormBackward0",
    input=lambda grads, input, weight, N, C, HxW, group, eps, result1, result2: _gn_grad(
        0, grads, input, weight, N, C, HxW, group, eps, result1, result2),
    weight=lambda grads, input, weight, N, C, HxW, group, eps, result1, result2: _gn_grad(
        1, grads, input, weight, N, C, HxW, group, eps, result1, result2),
    bias=lambda grads, N, C: grads[0].reshape(N, C, -1).sum([0, 2]),
)


# Not a formula of tensor ops on the saved mean/rstd outputs: that would lose their dependence
# on the input in a double backward (and run ~10 ops where one kernel does on the plain path).

def _ln_grad(which, grads, input, normalized_shape, weight, bias, eps, mean, rstd):
    if not grad_mode.is_grad_enabled():
        mask = [which == 0, which == 1, False]
        return aten.native_layer_norm_backward.default(grads[0], input, normalized_shape, mean, rstd, weight, bias,
                                                       mask)[which]
    lead = list(range(input.dim() - len(normalized_shape)))
    axes = list(range(len(lead), input.dim()))
    xhat, invstd = _stats(input, axes, eps)
    g = grads[0]
    if which == 1:
        return (g * xhat).sum(lead) if lead else g * xhat
    gxhat = g * weight if weight is not None else g
    return _whitening_input_grad(gxhat, xhat, invstd, axes)


derivative(
    "native_layer_norm", "NativeLayerNormBackward0",
    input=lambda grads, input, normalized_shape, weight, bias, eps, result1, result2: _ln_grad(
        0, grads, input, normalized_shape, weight, bias, eps, result1, result2),
    weight=lambda grads, input, normalized_shape, weight, bias, eps, result1, result2: _ln_grad(
        1, grads, input, normalized_shape, weight, bias, eps, result1, result2),
    bias=lambda grads, input_sizes, normalized_shape: grads[0].sum(list(range(len(input_sizes) - len(normalized_shape))))
    if len(input_sizes) > len(normalized_shape) else grads[0],
)

# -- nll_loss ------------------------------------------------------------------------------------
# One kernel rather than a formula of tensor ops: indexing ``weight[target]`` would fail on
# targets equal to ``ignore_index`` (e.g. -100). The backward kernel skips those rows, as
# PyTorch's ``nll_loss_backward`` does.

def _nll_loss_grad(grads, self, target, weight, reduction, ignore_index, result1):
    if _twin is not None and _compiled_switch._enabled:   # the compiled twin, while its guard holds
        out = _twin.nll_loss_backward(grads[0], self, target, weight, reduction, ignore_index, result1, _NLL_TWIN)
        if out is not NotImplemented:
            return out
    return aten.nll_loss_backward.default(grads[0], self, target, weight, reduction, ignore_index, result1)


_NLL_TWIN = _compiled_switch.Guard("autograd.derivatives_nn._nll_loss_grad", ops=(aten.nll_loss_backward.default,),
                                   functions=(_nll_loss_grad,))
derivative("nll_loss_forward", "NllLossBackward0", self=_nll_loss_grad)

# Outputs PyTorch gives no history (output_differentiability in derivatives.yaml): the formulas
# read them, but they do not require grad, and a dispatch mode sees no detach when they are saved.
aten.nll_loss_forward.default.derivative.non_differentiable_outputs = frozenset({1})   # total_weight
for _op_name in ("native_batch_norm", "_native_batch_norm_legit", "_native_batch_norm_legit_no_training",
                 "native_layer_norm"):
    getattr(aten, _op_name).default.derivative.non_differentiable_outputs = frozenset({1, 2})   # statistics

# nll_loss_backward is linear in grad_output: its derivative picks (and weights, and averages)
# the target entries of the incoming gradient, which is nll_loss itself.
derivative(
    "nll_loss_backward", "NllLossBackwardBackward0",
    grad_output=lambda grad, target, weight, reduction, ignore_index: aten.nll_loss_forward.default(
        grad, target, weight, reduction, ignore_index)[0],
    self=lambda grad: aten.zeros_like.default(grad),
)

# -- the other *_backward ops ------------------------------------------------------------------
# Autograd never reaches these (the derivatives of mse_loss, native_dropout and embedding are
# tensor-op formulas in derivatives.py), but they are public aten ops that PyTorch can
# differentiate when called directly, so they get PyTorch's derivatives too.

derivative(
    "native_dropout_backward", "NativeDropoutBackwardBackward0",
    grad_output=lambda grad, mask, scale: aten.native_dropout_backward.default(grad, mask, scale),
)


def _mse_backward_scale(self, reduction):
    return 2.0 / self.numel() if reduction == 1 else 2.0


# grad_input = scale * (self - target) * grad_output (grad_output broadcast when reduced)
derivative(
    "mse_loss_backward", "MseLossBackwardBackward0",
    grad_output=lambda grad, self, target, reduction: (
        (grad * (self - target) * _mse_backward_scale(self, reduction)).sum() if reduction
        else grad * (self - target) * _mse_backward_scale(self, reduction)),
    self=lambda grad, grad_output, self, reduction: grad * grad_output * _mse_backward_scale(self, reduction),
    target=lambda grad, grad_output, self, reduction: -(grad * grad_output * _mse_backward_scale(self, reduction)),
)


def _embedding_dense_double_backward(grad, indices, padding_idx):
    # the rows of grad picked by indices (PyTorch ignores scale_grad_by_freq here too)
    rows = grad.index_select(0, indices.reshape(-1))
    if padding_idx >= 0:
        rows = rows.masked_fill((indices.reshape(-1) == padding_idx).unsqueeze(1), 0)
    return rows.reshape([*indices.shape, grad.shape[-1]])


derivative(
    "embedding_dense_backward", "EmbeddingDenseBackwardBackward0",
    grad_output=lambda grad, indices, padding_idx: _embedding_dense_double_backward(grad, indices, padding_idx),
)

# -- activations with a backward op of their own (backends/cpu/activations_more.py) ---------------
# PyTorch's nodes for these call one ``*_backward`` op, so a dispatch mode sees that op (not the
# tensor ops it could be written with); their own derivatives make double backward work.

derivative("hardswish", "HardswishBackward0",
           self=lambda grad, self: aten.hardswish_backward.default(grad, self))
# hardswish_backward is g * h'(x) with h'' = 1/3 on (-3, 3) and 0 elsewhere
derivative("hardswish_backward", "HardswishBackwardBackward0",
           grad_output=lambda grad, self: aten.hardswish_backward.default(grad, self),
           self=lambda grad, grad_output, self: aten.where.self(
               (self > -3.0).logical_and(self < 3.0), grad * grad_output / 3.0, self.new_zeros([])))

derivative("hardsigmoid", "HardsigmoidBackward0",
           self=lambda grad, self: aten.hardsigmoid_backward.default(grad, self))
# PyTorch 2.13 gives hardsigmoid_backward no derivative: its NotImplemented node, failing on use
derivative("hardsigmoid_backward", "torch::autograd::NotImplemented",
           grad_output=lambda grad: _not_implemented("hardsigmoid_backward"),
           self=lambda grad: _not_implemented("hardsigmoid_backward"))


def _not_implemented(op_name):
    raise RuntimeError(f"derivative for aten::{op_name} is not implemented")


def _mish_grad(grad, self):
    if not grad_mode.is_grad_enabled():
        return aten.mish_backward.default(grad, self)
    # a graph is being built (create_graph=True): the same formula in differentiable tensor ops,
    # written as PyTorch's infinitely_differentiable_mish_backward writes it (same dispatches)
    sigmoid = self.sigmoid()
    tanh_softplus = self.exp().log1p().tanh()
    squared = tanh_softplus * tanh_softplus
    one_minus = aten.empty_like.default(squared).fill_(1).sub_(squared)
    return grad * (tanh_softplus + self * sigmoid * one_minus)


derivative("mish", "MishBackward0", self=_mish_grad)

derivative("log_sigmoid_forward", "LogSigmoidBackward0",
           self=lambda grads, self, result1: aten.log_sigmoid_backward.default(grads[0], self, result1))
aten.log_sigmoid_forward.default.derivative.non_differentiable_outputs = frozenset({1})   # buffer


def _log_sigmoid_double_self(grad, grad_output, self):
    # log_sigmoid_backward is g * (1 - sigmoid(x)); its derivative in x is -g * sigmoid'(x)
    s = self.sigmoid()
    return grad * grad_output * -(s * (1 - s))


derivative("log_sigmoid_backward", "LogSigmoidBackwardBackward0",
           grad_output=lambda grad, self, buffer: aten.log_sigmoid_backward.default(grad, self, buffer),
           self=_log_sigmoid_double_self)

derivative("celu", "CeluBackward0",
           self=lambda grad, self, alpha: aten.elu_backward.default(grad, alpha, 1, 1.0 / float(alpha), False, self))


def _elu_double_backward(grad, grad_output, alpha, scale, input_scale, is_result, self_or_result):
    negcoef = float(alpha) * float(scale)
    if is_result:   # elu_backward is g * input_scale * (y + negcoef) where y <= 0
        return grad * grad_output * input_scale * (self_or_result <= 0).to(grad.dtype)
    # d/dx of g * input_scale * negcoef * exp(x * input_scale), where x <= 0
    term = grad * grad_output * (float(input_scale) * float(input_scale) * negcoef) * (self_or_result * input_scale).exp()
    return term.masked_fill(self_or_result > 0, 0)


derivative("elu_backward", "EluBackwardBackward0",
           grad_output=lambda grad, alpha, scale, input_scale, is_result, self_or_result:
               aten.elu_backward.default(grad, alpha, scale, input_scale, is_result, self_or_result),
           self_or_result=_elu_double_backward)

derivative("glu", "GluBackward0", self=lambda grad, self, dim: aten.glu_backward.default(grad, self, dim))


def _glu_double(which, grad, grad_output, self, dim):
    # glu_backward(g, x) = [s * g, (1 - s) * s * a * g] with x = [a, b], s = sigmoid(b);
    # ``grad`` = [gg_a, gg_b] is the gradient w.r.t. that result
    gg_a, gg_b = grad.chunk(2, dim)
    a, b = self.chunk(2, dim)
    s = b.sigmoid()
    ds = s * (1 - s)
    if which == "grad_output":
        return gg_a * s + gg_b * ds * a
    grad_a = gg_b * ds * grad_output
    grad_b = gg_a * grad_output * ds + gg_b * a * grad_output * ds * (1 - 2 * s)
    return aten.cat.default([grad_a, grad_b], dim)


derivative("glu_backward", "GluBackwardBackward0",
           grad_output=lambda grad, self, dim: _glu_double("grad_output", grad, None, self, dim),
           self=lambda grad, grad_output, self, dim: _glu_double("self", grad, grad_output, self, dim))

# _prelu_kernel: PyTorch's node computes both gradients with one _prelu_kernel_backward call. Our
# derivatives have one formula per input, so self's formula (which runs first) leaves the pair
# for weight's. The pair is a function of the three tensors' values only, so it is reused when
# they are the same storage, layout and version (an in-place change bumps the version); the entry
# goes when the incoming gradient does (a weak reference), and each computation replaces it.
_PRELU_PAIR: list = [None]


def _prelu_key(*tensors):
    # which memory (the storage object, shared by views; any device), where, and at which version
    return tuple((id(i.storage), i.offset, i.version.value, tuple(i.sizes), tuple(i.strides), i.dtype)
                 for i in (t._impl for t in tensors))


def _prelu_grad(which, grad, self, weight):
    key = _prelu_key(grad, self, weight)
    entry = _PRELU_PAIR[0]
    if which == 1 and entry is not None and entry[0]() is grad and entry[1] == key:
        _PRELU_PAIR[0] = None
        return entry[2][1]
    pair = aten._prelu_kernel_backward.default(grad, self, weight)
    _PRELU_PAIR[0] = None
    if which == 0:
        _PRELU_PAIR[0] = (weakref.ref(grad, _forget_prelu_pair), key, pair)
    return pair[which]


def _forget_prelu_pair(ref):
    entry = _PRELU_PAIR[0]
    if entry is not None and entry[0] is ref:
        _PRELU_PAIR[0] = None


derivative("_prelu_kernel", "PreluKernelBackward0",
           self=lambda grad, self, weight: _prelu_grad(0, grad, self, weight),
           weight=lambda grad, self, weight: _prelu_grad(1, grad, self, weight))


def _prelu_double(which, grads, grad_output, self, weight):
    # _prelu_kernel_backward gives gi = g (x >= 0) or w * g, gw = 0 (x >= 0) or x * g; with
    # ggi, ggw the gradients w.r.t. (gi, gw), as in PyTorch's formula (its x >= 0 included)
    ggi, ggw = grads
    keep = self >= 0
    zero = self.new_zeros([])
    if which == "grad_output":
        if ggi is None:
            return aten.where.self(keep, zero, ggw * self)
        rest = ggi * weight if ggw is None else ggi * weight + ggw * self
        return aten.where.self(keep, ggi, rest)
    if which == "self":
        return aten.where.self(keep, zero, grad_output * ggw) if ggw is not None else aten.zeros_like.default(self)
    return aten.where.self(keep, zero, grad_output * ggi) if ggi is not None else aten.zeros_like.default(self)


derivative("_prelu_kernel_backward", "PreluKernelBackwardBackward0",
           grad_output=lambda grads, self, weight: _prelu_double("grad_output", grads, None, self, weight),
           self=lambda grads, grad_output, self: _prelu_double("self", grads, grad_output, self, None),
           weight=lambda grads, grad_output, self: _prelu_double("weight", grads, grad_output, self, None))

# -- smooth_l1_loss, huber_loss (backends/cpu/smooth_losses.py) -------------------------------------
# target's gradient is the same backward op with self and target swapped, as in PyTorch.

derivative("smooth_l1_loss", "SmoothL1LossBackward0",
           self=lambda grad, self, target, reduction, beta: aten.smooth_l1_loss_backward.default(
               grad, self, target, reduction, beta),
           target=lambda grad, self, target, reduction, beta: aten.smooth_l1_loss_backward.default(
               grad, target, self, reduction, beta))
derivative("huber_loss", "HuberLossBackward0",
           self=lambda grad, self, target, reduction, delta: aten.huber_loss_backward.default(
               grad, self, target, reduction, delta),
           target=lambda grad, self, target, reduction, delta: aten.huber_loss_backward.default(
               grad, target, self, reduction, delta))


def _smooth_double(kind, which, grad, grad_output, self, target, reduction, param):
    """Derivatives of ``smooth_l1_loss_backward``/``huber_loss_backward`` = norm * g * h'(x - y),
    with h' = clamp(d / beta, -1, 1) (smooth L1) or clamp(d, -delta, delta) (Huber)."""
    norm = 1.0 / self.numel() if reduction == 1 and self.numel() else 1.0
    d = self - target
    inside = (d > -param).logical_and(d < param)
    if which == "grad_output":
        slope = d.clamp(-param, param) * norm
        if kind == "smooth_l1":
            slope = slope / param
        out = grad * slope
        return out.sum() if reduction else out
    # h'' = 1 / beta (smooth L1) or 1 (Huber) inside, 0 outside
    scale = norm / param if kind == "smooth_l1" else norm
    out = aten.where.self(inside, grad * grad_output * scale, self.new_zeros([]))
    return out if which == "self" else -out


derivative("smooth_l1_loss_backward", "SmoothL1LossBackwardBackward0",
           grad_output=lambda grad, self, target, reduction, beta: _smooth_double(
               "smooth_l1", "grad_output", grad, None, self, target, reduction, beta),
           self=lambda grad, grad_output, self, target, reduction, beta: _smooth_double(
               "smooth_l1", "self", grad, grad_output, self, target, reduction, beta),
           target=lambda grad, grad_output, self, target, reduction, beta: _smooth_double(
               "smooth_l1", "target", grad, grad_output, self, target, reduction, beta))
derivative("huber_loss_backward", "HuberLossBackwardBackward0",
           grad_output=lambda grad, self, target, reduction, delta: _smooth_double(
               "huber", "grad_output", grad, None, self, target, reduction, delta),
           self=lambda grad, grad_output, self, target, reduction, delta: _smooth_double(
               "huber", "self", grad, grad_output, self, target, reduction, delta),
           target=lambda grad, grad_output, self, target, reduction, delta: _smooth_double(
               "huber", "target", grad, grad_output, self, target, reduction, delta))

# -- adaptive average pooling (backends/cpu/adaptive_pool.py) -------------------------------------
# linear in the input, so the backward's own derivative is the forward again

derivative("_adaptive_avg_pool2d", "AdaptiveAvgPool2DBackward0",
           self=lambda grad, self: aten._adaptive_avg_pool2d_backward.default(grad, self))
derivative("_adaptive_avg_pool2d_backward", "AdaptiveAvgPool2DBackwardBackward0",
           grad_output=lambda grad, grad_output: aten._adaptive_avg_pool2d.default(grad, list(grad_output.shape[-2:])),
           self=lambda grad: aten.zeros_like.default(grad))

# -- upsample_nearest2d (backends/cpu/upsample.py): linear, so each op's adjoint is the other ----

def _without_trailing_nones(*args):
    # the scales are passed only when given, as PyTorch's calls leave trailing defaults out
    args = list(args)
    while args and args[-1] is None:
        args.pop()
    return args


derivative("upsample_nearest2d", "UpsampleNearest2DBackward0",
           self=lambda grad, output_size, self_sizes, scales_h, scales_w: aten.upsample_nearest2d_backward.default(
               grad, list(output_size), *_without_trailing_nones(list(self_sizes), scales_h, scales_w)))
derivative("upsample_nearest2d_backward", "UpsampleNearest2DBackwardBackward0",
           grad_output=lambda grad, output_size, scales_h, scales_w: aten.upsample_nearest2d.default(
               grad, *_without_trailing_nones(list(output_size), scales_h, scales_w)))
