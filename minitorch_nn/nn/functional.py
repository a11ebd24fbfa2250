"""``nn.functional``: the stateless forms of the layers (mirrors ``torch/nn/functional.py``).

Each function checks its arguments the way PyTorch's does (same exception type, same key message)
and then calls the same aten ops PyTorch's would, so ``__torch_dispatch__`` and
``dispatch_trace()`` see the same op names: ``F.linear`` is ``aten.t`` + ``aten.addmm`` (or
``aten.mm``), ``F.softmax`` is ``aten._softmax``, ``F.conv2d`` is ``aten.convolution``,
``F.cross_entropy`` is ``aten._log_softmax`` + ``aten.nll_loss_forward``, ``F.dropout`` on cpu is
``bernoulli_`` + ``div_`` + ``mul`` (PyTorch's cpu path, which draws the same random numbers).

The losses live in ``_functional/loss.py`` and are re-exported here.

Differences from PyTorch: :func:`pad`'s reflect/replicate/circular modes are composed from
``index_select``/slices; no ``max_norm`` in
:func:`embedding`; the attention helpers are written with plain tensor ops (PyTorch picks a fused
kernel).
"""

from __future__ import annotations

import math
import sys

import minitorch_nn as _t
from minitorch_nn._C import TensorBase
from minitorch_nn._dispatch import python_dispatch as _python_dispatch
from minitorch_nn._ops import aten
from minitorch_nn._twins import _gate as _twin_gate
from minitorch_nn._twins.backends.cpu import activations as _activations_twin
from minitorch_nn._twins.backends.cpu import linalg as _linalg_twin
from minitorch_nn._twins.backends.cpu import nn_ops as _nn_ops_twin
from minitorch_nn._twins.backends.cpu import reduction as _reduction_twin
from minitorch_nn._warnings import warn_user
from minitorch_nn.autograd import engine as _engine
from minitorch_nn.backends import compiled as _compiled_switch
from minitorch_nn.backends.cpu import pooling as _cpu_pooling
from minitorch_nn.overrides import public

# =================================================================================================
# helpers
# =================================================================================================

def _tuple(v, n):
    return tuple(v) if isinstance(v, (list, tuple)) else (v,) * n


def _check_tensor(x, fname, argname="input", pos=1):
    if not isinstance(x, TensorBase):
        raise TypeError(f"{fname}(): argument '{argname}' (position {pos}) must be Tensor, not {type(x).__name__}")


# distances live in _functional/distance.py, the losses in _functional/loss.py (re-exported here)
from minitorch_nn.nn._functional.distance import cosine_similarity, pairwise_distance  # noqa: E402,F401
from minitorch_nn.nn._functional.loss import (  # noqa: E402,F401
    _REDUCTIONS,
    _legacy_reduction,
    _reduction_enum,
    _warn_size,
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    huber_loss,
    kl_div,
    l1_loss,
    mse_loss,
    nll_loss,
    smooth_l1_loss,
)

# =================================================================================================
# linear layers
# =================================================================================================

@public
def linear(input, weight, bias=None):
    """``input @ weight.T + bias``, as ``aten.t`` + ``aten.addmm`` (or ``aten.mm``) like PyTorch."""
    _check_tensor(input, "linear")
    _check_tensor(weight, "linear", "weight", 2)
    if input.dim() == 0 or weight.dim() == 0:
        raise RuntimeError(
            f"both arguments to linear need to be at least 1D, but they are {input.dim()}D and {weight.dim()}D"
        )
    if input.dim() == 2 and bias is not None:
        return aten.addmm.default(bias, input, aten.t.default(weight))
    if input.dim() > 2 and bias is not None and input.is_contiguous():
        # fold the leading dims into one batch dim, one addmm, then unfold (PyTorch's fast path)
        flat = aten.view.default(input, [-1, input.shape[-1]])
        out = aten.addmm.default(bias, flat, aten.t.default(weight))
        return aten.view.default(out, [*input.shape[:-1], out.shape[-1]])
    if input.dim() == 2:
        return aten.mm.default(input, aten.t.default(weight))
    out = _t.matmul(input, aten.t.default(weight) if weight.dim() == 2 else weight)
    return out + bias if bias is not None else out


@public
def bilinear(input1, input2, weight, bias=None):
    """``y[b, o] = sum_ij x1[b, i] * W[o, i, j] * x2[b, j] + bias[o]``."""
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(
            f"bilinear(): input batch dimensions do not match: got {list(input1.shape[:-1])} and {list(input2.shape[:-1])}"
        )
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but expected {weight.shape[2]}")
    lead = input1.shape[:-1]
    x1 = input1.reshape(-1, input1.shape[-1])
    x2 = input2.reshape(-1, input2.shape[-1])
    # (B, I) @ (I, O*J) -> (B, O, J), then contract J with x2
    o, i, j = weight.shape
    t1 = _t.matmul(x1, weight.permute(1, 0, 2).reshape(i, o * j)).reshape(-1, o, j)
    out = _t.matmul(t1, x2.unsqueeze(-1)).squeeze(-1)
    if bias is not None:
        out = out + bias
    return out.reshape(*lead, o)


# =================================================================================================
# convolution
# =================================================================================================

def _conv(input, weight, bias, stride, padding, dilation, groups, nd, name):
    _check_tensor(input, name)
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got input of size: {list(input.shape)}"
        )
    batched = input.dim() == nd + 2
    if not batched:
        input = input.unsqueeze(0)
    stride, dilation = list(_tuple(stride, nd)), list(_tuple(dilation, nd))
    if isinstance(padding, str):
        if padding == "valid":
            padding = [0] * nd
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            totals = [d * (k - 1) for d, k in zip(dilation, weight.shape[2:])]
            padding = [t // 2 for t in totals]
            extra = [t - 2 * (t // 2) for t in totals]
            if any(extra):
                # an odd total: the extra row/column goes on the right, as PyTorch does
                pad_nd = []
                for e in reversed(extra):
                    pad_nd += [0, e]
                input = aten.constant_pad_nd.default(input, pad_nd, 0)
        else:
            raise ValueError(f"Invalid padding string '{padding}', should be one of {{'valid', 'same'}}")
    else:
        padding = list(_tuple(padding, nd))
    out = aten.convolution.default(input, weight, bias, stride, padding, dilation, False, [0] * nd, groups)
    return out if batched else out.squeeze(0)


@public
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-d convolution over (N, C, L) input (``aten.convolution``)."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


@public
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-d convolution over (N, C, H, W) input (``aten.convolution``)."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


@public
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, nd, name):
    _check_tensor(input, name)
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got input of size: {list(input.shape)}"
        )
    batched = input.dim() == nd + 2
    if not batched:
        input = input.unsqueeze(0)
    stride, padding, dilation = list(_tuple(stride, nd)), list(_tuple(padding, nd)), list(_tuple(dilation, nd))
    output_padding = list(_tuple(output_padding, nd))
    for op, s, d in zip(output_padding, stride, dilation):
        if op >= s and op >= d:
            # PyTorch names each dimension (a 1-d convolution runs as a 2-d one of height 1)
            names = {1: ["height", "width"], 2: ["height", "width"], 3: ["depth", "height", "width"]}[nd]
            pad0, one = ([0], [1]) if nd == 1 else ([], [])
            shown = [(pad0 + list(output_padding), "output_padding"), (one + list(stride), "stride"),
                     (one + list(dilation), "dilation")]
            parts = [f"{what}_{n}: {v}" for values, what in shown for n, v in zip(names, values)]
            raise RuntimeError("output padding must be smaller than either stride or dilation, but got " + " ".join(parts))
    out = aten.convolution.default(input, weight, bias, stride, padding, dilation, True, output_padding, groups)
    return out if batched else out.squeeze(0)


@public
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 1, "conv_transpose1d")


@public
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """The adjoint of :func:`conv2d`: weight is (C_in, C_out/groups, kH, kW)."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 2, "conv_transpose2d")


@public
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """The adjoint of :func:`conv3d`: weight is (C_in, C_out/groups, kD, kH, kW)."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 3, "conv_transpose3d")


# =================================================================================================
# pooling
# =================================================================================================

def _pool_input(input, name):
    _check_tensor(input, name)
    return input


def _check_pool_window(kernel_size, stride) -> None:
    """PyTorch's checks on a 2-d pooling window, before any arithmetic divides by them: the
    stride (the kernel size when not given) must not be zero, the kernel must be positive."""
    kh, kw = _tuple(kernel_size, 2)
    sh, sw = _tuple(stride, 2) if stride is not None and stride != () and stride != [] else (kh, kw)
    if sh == 0 or sw == 0:
        raise RuntimeError("stride should not be zero")
    if kh <= 0 or kw <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {kh} kW: {kw}")


def _only_values_observable(input):
    """Whether nothing but max pooling's values can be seen: no gradient will be taken (so
    autograd keeps no indices), the input is a plain cpu tensor (so no ``__torch_dispatch__``
    class acts on it), nothing else could see the aten op (``engine.nothing_observes``: no
    dispatch or function mode, no ``dispatch_trace``, no forward-mode AD level), and the cpu kernel
    is still the one this package registered. Then the indices need not be computed at all."""
    return (
        type(input) is _t.Tensor
        and input.device.type == "cpu"
        and not (input.requires_grad and _t.is_grad_enabled())
        and _engine.nothing_observes(exact_tensors=True)
        and aten.max_pool2d_with_indices.default._kernels.get("cpu") is _cpu_pooling.max_pool2d_with_indices
    )


@public
def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Max over each window (``aten.max_pool2d_with_indices``); indices are flat per plane."""
    _pool_input(input, "max_pool2d")
    _check_pool_window(kernel_size, stride)
    args = (list(_tuple(kernel_size, 2)), list(_tuple(stride, 2)) if stride is not None else [],
            list(_tuple(padding, 2)), list(_tuple(dilation, 2)), ceil_mode)
    if not return_indices and _only_values_observable(input):
        return _cpu_pooling.max_pool2d_values(input, *args)
    out, idx = aten.max_pool2d_with_indices.default(input, *args)
    return (out, idx) if return_indices else out


max_pool2d_with_indices = max_pool2d


@public
def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """1-d max pooling, run as 2-d pooling over a height-1 image."""
    k, s = _tuple(kernel_size, 1)[0], (_tuple(stride, 1)[0] if stride is not None else None)
    out = max_pool2d(input.unsqueeze(-2), (1, k), (1, s) if s is not None else None, (0, _tuple(padding, 1)[0]),
                     (1, _tuple(dilation, 1)[0]), ceil_mode, return_indices)
    if return_indices:
        return out[0].squeeze(-2), out[1].squeeze(-2)
    return out.squeeze(-2)


@public
def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None):
    """Mean over each window (``aten.avg_pool2d``)."""
    _pool_input(input, "avg_pool2d")
    _check_pool_window(kernel_size, stride)
    return aten.avg_pool2d.default(
        input, list(_tuple(kernel_size, 2)), list(_tuple(stride, 2)) if stride is not None else [],
        list(_tuple(padding, 2)), ceil_mode, count_include_pad, divisor_override,
    )


@public
def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    k, s = _tuple(kernel_size, 1)[0], (_tuple(stride, 1)[0] if stride is not None else None)
    out = avg_pool2d(input.unsqueeze(-2), (1, k), (1, s) if s is not None else None, (0, _tuple(padding, 1)[0]),
                     ceil_mode, count_include_pad)
    return out.squeeze(-2)


@public
def adaptive_avg_pool1d(input, output_size):
    """Average pooling of the last dim to ``output_size`` bins (PyTorch's ``adaptive_avg_pool1d``):
    ``adaptive_avg_pool2d`` over an inserted dim of size 1, as PyTorch computes it."""
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for argument #1 "
                           "'self' (while checking arguments for adaptive_avg_pool1d)")
    size = list(output_size) if isinstance(output_size, (list, tuple)) else [output_size]
    if len(size) != 1:
        raise RuntimeError(f"adaptive_avg_pool1d() argument 'output_size' should contain one int (got {len(size)})")
    return _adaptive_avg_pool2d(input.unsqueeze(-2), [1, size[0]]).squeeze(-2)


@public
def adaptive_avg_pool2d(input, output_size):
    """Average pooling to a fixed output size: bin ``i`` of ``n`` covers ``[floor(i*H/n), ceil((i+1)*H/n))``
    (``aten._adaptive_avg_pool2d``; a ``mean`` of the last two dims for a 1 x 1 output). ``None``
    in ``output_size`` keeps that dim's input size."""
    if isinstance(output_size, (list, tuple)):
        shape = input.shape
        output_size = [shape[len(shape) - len(output_size) + i] if s is None else s for i, s in enumerate(output_size)]
    else:
        output_size = [output_size, output_size]
    return _adaptive_avg_pool2d(input, output_size)


def _adaptive_avg_pool2d(input, output_size):
    """PyTorch's composite ``aten.adaptive_avg_pool2d``: its checks, then the mean or the kernel."""
    if len(output_size) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    oh, ow = output_size
    if oh < 0 or ow < 0:
        raise RuntimeError("adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 "
                           f"but received {{{oh}, {ow}}}")
    if oh == 1 and ow == 1:
        # (PyTorch then restrides a channels-last input's result with an aten.as_strided_: not here)
        return input.mean([-1, -2], keepdim=True)
    return aten._adaptive_avg_pool2d.default(input, list(output_size))


# =================================================================================================
# normalization
# =================================================================================================

def _verify_batch_size(size):
    n = size[0]
    for s in size[2:]:
        n *= s
    if n == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size!r}")


@public
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Normalize each channel over the batch (and spatial) dims (``aten.native_batch_norm``)."""
    if training:
        _verify_batch_size(input.shape)
    if _python_dispatch._modes:
        # PyTorch's batch_norm first makes an empty "reserve" tensor (used by cuDNN), which a
        # dispatch mode sees; made only when one could see it
        aten.empty.memory_format([0], dtype=_t.uint8, layout=_t.strided, device=input.device)
    return aten.native_batch_norm.default(input, weight, bias, running_mean, running_var, training, momentum, eps)[0]


@public
def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Normalize each (sample, channel) plane: batch norm over a (1, N*C, ...) view of the input."""
    if use_input_stats:
        size = input.shape
        n = 1
        for s in size[2:]:
            n *= s
        if n == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input size {size!r}")
    n, c = input.shape[0], input.shape[1]
    x = input.reshape(1, n * c, *input.shape[2:])
    rm = running_mean.repeat(n) if running_mean is not None else None
    rv = running_var.repeat(n) if running_var is not None else None
    w = weight.repeat(n) if weight is not None else None
    b = bias.repeat(n) if bias is not None else None
    out = aten.native_batch_norm.default(x, w, b, rm, rv, use_input_stats, momentum, eps)[0]
    if use_input_stats and running_mean is not None:
        # the per-sample running stats are averaged back into the module's buffers
        with _t.no_grad() if hasattr(_t, "no_grad") else _nullcontext():
            running_mean.copy_(rm.reshape(n, c).mean(0))
            running_var.copy_(rv.reshape(n, c).mean(0))
    return out.reshape(input.shape)


class _nullcontext:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


@public
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalize over the last ``len(normalized_shape)`` dims (``aten.native_layer_norm``)."""
    if not isinstance(normalized_shape, (list, tuple)):
        raise TypeError(
            f"layer_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not {type(normalized_shape).__name__}"
        )
    return aten.native_layer_norm.default(input, list(normalized_shape), weight, bias, eps)[0]


@public
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalize over groups of channels (``aten.native_group_norm``)."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    n, c = input.shape[0], input.shape[1]
    hxw = 1
    for s in input.shape[2:]:
        hxw *= s
    return aten.native_group_norm.default(input, weight, bias, n, c, hxw, num_groups, eps)[0]


@public
def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input / max(||input||_p, eps)`` along ``dim``; written into ``out`` when given."""
    denom = _t.norm(input, p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is None:
        return input / denom
    return _t.div(input, denom, out=out)


# =================================================================================================
# embedding, dropout
# =================================================================================================

@public
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    """Rows of ``weight`` picked by the integer ``input`` (``aten.embedding``)."""
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < weight.size(0), "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -weight.size(0), "Padding_idx must be within num_embeddings"
            padding_idx = weight.size(0) + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        raise NotImplementedError("embedding(max_norm=...) is not supported by minitorch_nn yet")
    return aten.embedding.default(weight, input, padding_idx, scale_grad_by_freq, sparse)


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


@public
def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p`` and scale the rest by ``1/(1-p)``.

    On cpu PyTorch draws the keep-mask with ``bernoulli_(1 - p)``; so do we, so the same seed
    zeroes the same elements.
    """
    _check_p(p)
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        zero = _t.zeros((), dtype=input.dtype, device=input.device)
        return input.mul_(zero) if inplace else input * zero
    noise = aten.empty_like.default(input)
    noise.bernoulli_(1 - p)
    noise.div_(1 - p)
    return input.mul_(noise) if inplace else input * noise


@public
def dropout1d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout(input, p, training, inplace, 1)


@public
def dropout2d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout(input, p, training, inplace, 2)


def _feature_dropout(input, p, training, inplace, nd):
    """Drop whole channels: one mask value per (sample, channel)."""
    _check_p(p)
    if p == 0 or not training or input.numel() == 0:
        return input
    shape = list(input.shape[:2]) + [1] * (input.dim() - 2)
    noise = _t.empty(shape, dtype=input.dtype, device=input.device)
    if p == 1:
        noise.zero_()
    else:
        noise.bernoulli_(1 - p)
        noise.div_(1 - p)
    return input.mul_(noise) if inplace else input * noise


# =================================================================================================
# activations
# =================================================================================================

@public
def relu(input, inplace=False):
    return aten.relu_.default(input) if inplace else aten.relu.default(input)


def _compiled(wrapper, twin):
    """``wrapper`` (``F.relu``, ``F.softmax``...) as its compiled function in ``twin``, the twin of
    the kernel's file (its ``FUNCTIONAL`` table: the op's compiled path when nothing could tell the
    spellings apart), whose full path is the public wrapper remade to hand it to handlers as ``func``."""
    fast = twin.FUNCTIONAL[wrapper.__name__]
    fast.__name__ = fast.__qualname__ = wrapper.__name__
    fast.__module__, fast.__doc__, fast.__wrapped__ = __name__, wrapper.__doc__, wrapper.__wrapped__
    fast.__wrapped_impl__ = wrapper.__wrapped_impl__
    slow = public(wrapper.__wrapped_impl__, func=fast)
    _twin_gate.install_fast_functions({"functional." + wrapper.__name__: slow})
    # the compiled one while the switch is on, the readable wrapper itself while it is off
    return _compiled_switch.bind(sys.modules[__name__], wrapper.__name__, fast, wrapper,
                                 mirrors=(wrapper.__wrapped_impl__,))


relu = _compiled(relu, _activations_twin)
linear = _compiled(linear, _linalg_twin)
mse_loss = _compiled(mse_loss, _nn_ops_twin)


def relu_(input):
    return aten.relu_.default(input)


@public
def relu6(input, inplace=False):
    return hardtanh(input, 0, 6, inplace)   # ints, as PyTorch's relu6 passes them (grad_fn._saved_max_val == 6)


@public
def gelu(input, approximate="none"):
    return aten.gelu.default(input, approximate=approximate)


@public
def silu(input, inplace=False):
    out = aten.silu.default(input)
    return input.copy_(out) if inplace else out


silu = _compiled(silu, _activations_twin)


@public
def tanh(input):
    return aten.tanh.default(input)


@public
def sigmoid(input):
    return aten.sigmoid.default(input)


@public
def softplus(input, beta=1, threshold=20):   # ints, as the schema's defaults PyTorch passes
    return aten.softplus.default(input, beta, threshold)


@public
def elu(input, alpha=1.0, inplace=False):
    out = aten.elu.default(input, alpha)
    return input.copy_(out) if inplace else out


@public
def leaky_relu(input, negative_slope=0.01, inplace=False):
    out = aten.leaky_relu.default(input, negative_slope)
    return input.copy_(out) if inplace else out


leaky_relu = _compiled(leaky_relu, _activations_twin)


@public
def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    out = aten.hardtanh.default(input, min_val, max_val)
    return input.copy_(out) if inplace else out


@public
def logsigmoid(input):
    """``log(sigmoid(x))`` (``aten.log_sigmoid_forward``, whose second result PyTorch keeps for backward)."""
    return aten.log_sigmoid_forward.default(input)[0]


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _maybe_inplace(input, out, inplace):
    return input.copy_(out) if inplace else out


@public
def selu(input, inplace=False):
    """``scale * elu(x, alpha)`` with the self-normalizing constants (``aten.elu``)."""
    return _maybe_inplace(input, aten.elu.default(input, _SELU_ALPHA, _SELU_SCALE, 1), inplace)


@public
def celu(input, alpha=1.0, inplace=False):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` (``aten.celu``: elu with ``input_scale=1/alpha``)."""
    return _maybe_inplace(input, aten.celu.default(input, alpha) if alpha != 1.0 else aten.celu.default(input), inplace)


@public
def mish(input, inplace=False):
    """``x * tanh(softplus(x))`` (``aten.mish``)."""
    return _maybe_inplace(input, aten.mish.default(input), inplace)


@public
def hardsigmoid(input, inplace=False):
    """``relu6(x + 3) / 6``: a piecewise-linear sigmoid (``aten.hardsigmoid``)."""
    return _maybe_inplace(input, aten.hardsigmoid.default(input), inplace)


@public
def hardswish(input, inplace=False):
    """``x * relu6(x + 3) / 6`` (``aten.hardswish``)."""
    return _maybe_inplace(input, aten.hardswish.default(input), inplace)


@public
def softsign(input):
    return input / (input.abs() + 1)


@public
def tanhshrink(input):
    return input - input.tanh()


@public
def threshold(input, threshold, value, inplace=False):
    """``x`` where ``x > threshold``, else ``value``."""
    out = _t.where(input > threshold, input, _t.full_like(input, value))
    return _maybe_inplace(input, out, inplace)


@public
def glu(input, dim=-1):
    """Gated linear unit: split ``dim`` in halves ``a, b`` and return ``a * sigmoid(b)`` (``aten.glu``)."""
    return aten.glu.default(input) if dim == -1 else aten.glu.default(input, dim)


@public
def prelu(input, weight):
    """``x`` if ``x > 0`` else ``weight * x``, one learnable slope per channel (dim 1) or one for all.

    As PyTorch's ``aten.prelu``: checks the weight, views it to broadcast over dim 1 (a dispatched
    ``aten.view``, whose ``ViewBackward0`` is the weight's edge) and calls ``aten._prelu_kernel``.
    """
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}")
    n = weight.numel()
    if n != 1:
        if input.dim() == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if input.dim() >= 2 else 1
        if channels != n:
            raise RuntimeError("Mismatch of parameter numbers and input channel size. "
                               f"Found parameter numbers = {n} and channel size = {channels}.")
    if input.dim() != weight.dim():
        shape = [1] * input.dim()
        if input.dim() >= 2:
            shape[1] = n
        weight = weight.view(shape)
    return aten._prelu_kernel.default(input, weight)


def _softmax_dim(name, ndim):
    warn_user(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an argument.",
    )
    return 0 if ndim in (0, 1, 3) else 1


@public
def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``exp(x) / sum(exp(x))`` along ``dim`` (``aten._softmax``)."""
    if dim is None:
        dim = _softmax_dim("softmax", input.dim())
    return _t.softmax(input, dim, dtype)  # as PyTorch's F.softmax defers to input.softmax


@public
def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``x - logsumexp(x)`` along ``dim`` (``aten._log_softmax``)."""
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim())
    return _t.log_softmax(input, dim, dtype)


softmax = _compiled(softmax, _reduction_twin)
log_softmax = _compiled(log_softmax, _reduction_twin)


@public
def softmin(input, dim=None, _stacklevel=3, dtype=None):
    return softmax(-input, dim, dtype=dtype)


# =================================================================================================
# padding, attention
# =================================================================================================

_PAD_COMBINATIONS = {1: (2, 3), 2: (3, 4), 3: (4, 5)}


@public
def pad(input, pad, mode="constant", value=None):
    """Pad the last dims: ``pad = (left, right, top, bottom, ...)``.

    ``mode="constant"`` is ``aten.constant_pad_nd``. ``"reflect"``, ``"replicate"`` and
    ``"circular"`` are written as an ``index_select`` per padded dim with the source index of
    every output position (mirrored, clamped or wrapped), so autograd needs nothing new; PyTorch
    calls dedicated ``reflection_pad*``/``replication_pad*`` kernels instead.
    """
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise RuntimeError("Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {input.dim()}")
    if mode == "constant":
        return aten.constant_pad_nd.default(input, list(pad), 0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    npad = len(pad) // 2
    if input.dim() not in _PAD_COMBINATIONS.get(npad, ()):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.dim()}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
        )
    out = input
    for i in range(npad):
        dim = input.dim() - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        n = input.shape[dim]
        if mode == "reflect" and (left >= n or right >= n):
            raise RuntimeError(
                "Argument #4: Padding size should be less than the corresponding input dimension, but got: "
                f"padding ({left}, {right}) at dimension {dim} of input {list(input.shape)}"
            )
        if mode == "circular" and (left > n or right > n):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        src = _pad_source_index(n, left, right, mode)
        out = out.index_select(dim, _t.tensor(src, dtype=_t.int64, device=input.device))
    return out


def _pad_source_index(n, left, right, mode):
    """For each output position along one dim, the input position it copies."""
    idx = list(range(-left, n + right))
    if mode == "reflect":  # mirror about the edge elements: -1 -> 1, n -> n-2
        return [abs(i) if i < n else 2 * (n - 1) - i for i in idx]
    if mode == "replicate":  # repeat the edge elements
        return [min(max(i, 0), n - 1) for i in idx]
    return [i % n for i in idx]  # circular: wrap around


_INTERP_DIMS = {"linear": 1, "bilinear": 2, "trilinear": 3}


@public
def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize the spatial dims (``nearest``, ``nearest-exact``, ``linear``, ``bilinear``, ``trilinear``).

    ``nearest`` on 4-d inputs calls ``aten.upsample_nearest2d`` as PyTorch does. The other modes
    and ranks are separable here: each spatial dim is resized on its own with an ``index_select``
    of source rows (nearest) or two ``index_select`` calls blended by their distance (linear), the
    same sample positions PyTorch's kernels use; PyTorch calls ``upsample_*`` kernels instead.
    """
    nd = input.dim() - 2
    if nd < 1:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for the modes: "
                         "nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact (got "
                         f"{mode})")
    if mode in ("nearest", "nearest-exact", "area") and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined")
    if mode not in ("nearest", "nearest-exact") and _INTERP_DIMS.get(mode) != nd:
        if mode in _INTERP_DIMS:
            raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {_INTERP_DIMS[mode] + 2}D input")
        raise NotImplementedError(f"interpolate(mode={mode!r}) is not supported by minitorch_nn")
    in_sizes = list(input.shape[2:])
    if size is not None:
        out_sizes = list(_tuple(size, nd))
        scales = [None] * nd
    else:
        factors = list(_tuple(scale_factor, nd))
        out_sizes = [int(math.floor(s * f)) for s, f in zip(in_sizes, factors)]
        scales = [None] * nd if recompute_scale_factor else factors
    if mode == "nearest" and nd == 2 and not antialias:   # PyTorch's kernel (backends/cpu/upsample.py)
        given = [float(f) for f in scales if f is not None]
        return aten.upsample_nearest2d.default(input, out_sizes, *given)
    align = bool(align_corners)
    out = input
    for i in range(nd):
        dim = 2 + i
        n_in, n_out = in_sizes[i], out_sizes[i]
        # the ratio PyTorch's kernels use: 1/scale_factor when given, else in/out
        ratio = (1.0 / scales[i]) if scales[i] else n_in / n_out
        if mode in ("nearest", "nearest-exact"):
            shift = 0.5 if mode == "nearest-exact" else 0.0
            src = [min(int(math.floor((o + shift) * ratio)), n_in - 1) for o in range(n_out)]
            out = out.index_select(dim, _t.tensor(src, dtype=_t.int64, device=input.device))
            continue
        if align:
            pos = [o * (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0 for o in range(n_out)]
        else:
            pos = [max((o + 0.5) * ratio - 0.5, 0.0) for o in range(n_out)]
        lo = [min(int(math.floor(p)), n_in - 1) for p in pos]
        hi = [min(i0 + 1, n_in - 1) for i0 in lo]
        shape = [1] * input.dim()
        shape[dim] = n_out
        lam = _t.tensor([p - i0 for p, i0 in zip(pos, lo)], dtype=input.dtype, device=input.device).reshape(shape)
        a = out.index_select(dim, _t.tensor(lo, dtype=_t.int64, device=input.device))
        b = out.index_select(dim, _t.tensor(hi, dtype=_t.int64, device=input.device))
        out = a + (b - a) * lam
    return out


# (scaled_dot_product_attention lives in _functional/attention.py)
from minitorch_nn.nn._functional.attention import scaled_dot_product_attention  # noqa: E402,F401


@public
def one_hot(tensor, num_classes=-1):
    """Integer labels to 0/1 rows (int64), like ``F.one_hot``."""
    if tensor.dtype is not _t.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    # PyTorch's checks, in its order
    if tensor.numel() == 0:
        if num_classes <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
    else:
        if int(tensor.min().item()) < 0:
            raise RuntimeError("Class values must be non-negative.")
        if num_classes == -1:
            num_classes = int(tensor.max().item()) + 1
        elif int(tensor.max().item()) >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    return (tensor.unsqueeze(-1) == _t.arange(num_classes, device=tensor.device)).long()
