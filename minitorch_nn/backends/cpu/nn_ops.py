"""Neural-network cpu kernels: convolution, normalization, embedding, dropout, losses (pooling:
``pooling.py``).

Mirrors the cpu halves of PyTorch's ``aten/src/ATen/native/{Convolution,Normalization,
layer_norm,group_norm,Embedding,Dropout,LossNLL,Loss}.cpp`` and their ``*_backward`` kernels.
Everything is numpy:

* convolution is **im2col + matmul**: for every kernel offset, one strided slice of the padded
  input becomes a column (all columns are copied at once from one strided view), and the columns
  are multiplied by the weight matrix. A transposed
  convolution runs the same picture backwards (**col2im**): a matmul, then each kernel offset's
  column is added into a strided slice of the output. Both work for 1, 2 and 3 spatial dims.
* ``conv_forward_np``, ``conv_transpose_np`` and ``_conv_weight_grad`` have a compiled twin,
  ``_ext/twins/backends/cpu/nn_ops.pyx``: the same arrays, bit for bit, while the switch
  ``backends.compiled`` is on (see "Compiled twins" after the convolution kernels).
* normalizations compute mean and ``rstd = 1/sqrt(var + eps)`` per group and return them, since
  the backward kernels reuse them (that is why PyTorch's ``native_*_norm`` ops return three
  tensors).

Differences from PyTorch: float16/bfloat16 inputs are computed in float32 and rounded at the
end; reduction order differs from PyTorch's vectorized loops, so float32 results agree to about
1e-6 relative, not bit for bit.
"""

from __future__ import annotations

import itertools

import numpy as np

from minitorch_nn import _dtype as dt
from minitorch_nn._ops import aten
from minitorch_nn.backends import compiled as _compiled_switch
from minitorch_nn.backends.common import compute_dtype, type_name
from minitorch_nn.backends.cpu._numpy import (
    as_array,
    fp_errors_off,
    fp_errors_restore,
    wrap,
    wrap_strided,
)
from minitorch_nn.backends.layout import elementwise_strides, format_strides, suggest_memory_format

# x.sum(), x.min(), np.max(x)... reach these ufuncs' reduce through Python-level argument handling
# that costs more than the reduction on a small tensor: the hot kernels call them directly.
_sum = np.add.reduce
_max = np.maximum.reduce
_min = np.minimum.reduce

# Loss reductions travel as ints in aten schemas, as in PyTorch's ``at::Reduction``.
NONE, MEAN, SUM = 0, 1, 2


def _reduce(loss, reduction):
    if reduction == MEAN:
        return loss.mean() if loss.size else np.asarray(np.nan, loss.dtype)
    if reduction == SUM:
        return loss.sum()
    return loss


def _loss(loss, d, reduction, *operands):
    """A loss as a tensor: unreduced, it is laid out like an elementwise result of ``operands``
    (PyTorch computes these losses with TensorIterator; see ``backends/layout.py``)."""
    if reduction == NONE:
        return wrap_strided(loss, d, elementwise_strides(np.shape(loss), operands, d))
    return wrap(_reduce(loss, reduction), d)


def _arr(t, d=None):
    """A tensor's data as numpy in the compute dtype of ``d`` (default: its own dtype)."""
    return as_array(t, compute_dtype(d or t.dtype))


def _check_float(t, kernel):
    """PyTorch's error for a kernel that has no integer version (``"mse_cpu" not implemented for 'Long'``)."""
    if not t.dtype.is_floating_point:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{type_name(t.dtype)}'")


def _empty(d):
    return wrap(np.empty((0,), dtype=compute_dtype(d).numpy_dtype), d)


# =================================================================================================
# Convolution
# =================================================================================================

def _conv_out_size(size, k, s, p, d):
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _window_slices(offsets, stride, dilation, out_sizes):
    """The input slice that kernel offset ``offsets`` reads for every output position."""
    return tuple(
        slice(o * d, o * d + s * (n - 1) + 1, s) for o, s, d, n in zip(offsets, stride, dilation, out_sizes)
    )


def _im2col(xp, ksize, stride, dilation, out_sizes):
    """Columns of shape (N, C, prod(k), *out): column j holds what kernel offset j multiplies.

    Column j is the strided slice ``_window_slices(offset j, ...)`` of the padded input. All of
    them at once are one strided view of shape (N, C, *k, *out): a step along a kernel axis
    moves ``dilation`` input elements, a step along an output axis moves ``stride`` of them.
    Copying that view is the only pass over the data.
    """
    nd = len(ksize)
    step = xp.strides[-nd:]
    view = np.lib.stride_tricks.as_strided(
        xp,
        shape=(*xp.shape[:-nd], *ksize, *out_sizes),
        strides=(*xp.strides[:-nd], *(s * d for s, d in zip(step, dilation)), *(s * st for s, st in zip(step, stride))),
        writeable=False,
    )
    return np.ascontiguousarray(view).reshape(*xp.shape[:-nd], int(np.prod(ksize)), *out_sizes)


def _col2im(cols, out_shape, ksize, stride, dilation, in_sizes):
    """The adjoint of :func:`_im2col`: add each offset's column back into its slice."""
    out = np.zeros(out_shape, dtype=cols.dtype)
    for j, o in enumerate(itertools.product(*map(range, ksize))):
        out[(Ellipsis, *_window_slices(o, stride, dilation, in_sizes))] += cols[:, :, j]
    return out


def _check_conv(input, weight, bias, stride, padding, dilation, transposed, groups):
    nd = weight.dim() - 2
    if input.dim() != weight.dim():
        raise RuntimeError(
            f"Expected {weight.dim()}D (unbatched) or {weight.dim() + 1}D (batched) input to conv{nd}d, but got input "
            f"of size: {list(input.shape)}"
        )
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"expected scalar type {type_name(input.dtype)} but found {type_name(weight.dtype)}")
    if bias is not None and bias.dtype is not input.dtype:
        raise RuntimeError(f"Input type ({type_name(input.dtype).lower()}) and bias type ({type_name(bias.dtype).lower()}) should be the same")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    c_in = input.shape[1]
    if not transposed:
        if c_in != weight.shape[1] * groups:
            raise RuntimeError(
                f"Given groups={groups}, weight of size {list(weight.shape)}, expected input{list(input.shape)} to have "
                f"{weight.shape[1] * groups} channels, but got {c_in} channels instead"
            )
        if weight.shape[0] % groups:
            raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but got weight of size {list(weight.shape)} instead")
        n_out = weight.shape[0]
        for size, k, p, d in zip(input.shape[2:], weight.shape[2:], padding, dilation):
            if size + 2 * p < d * (k - 1) + 1:
                raise RuntimeError(
                    f"Calculated padded input size per channel: ({' x '.join(str(s + 2 * q) for s, q in zip(input.shape[2:], padding))}). "
                    f"Kernel size: ({' x '.join(str(d_ * (k_ - 1) + 1) for k_, d_ in zip(weight.shape[2:], dilation))}). "
                    "Kernel size can't be greater than actual input size"
                )
    else:
        if c_in != weight.shape[0]:
            raise RuntimeError(
                f"Given transposed=1, weight of size {list(weight.shape)}, expected input{list(input.shape)} to have "
                f"{weight.shape[0]} channels, but got {c_in} channels instead"
            )
        n_out = weight.shape[1] * groups
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != n_out):
        raise RuntimeError(
            f"Given weight of size {list(weight.shape)}, expected bias to be 1-dimensional with {n_out} elements, but got bias of size {list(bias.shape)} instead"
        )
    return nd


def _expand(v, nd):
    v = list(v)
    return v * nd if len(v) == 1 else v


def conv_forward_np(x, w, stride, padding, dilation, groups, bias=None):
    """Plain convolution on numpy arrays: x (N, C, *S), w (O, C/groups, *k) -> (N, O, *out), plus
    ``bias`` (O,) at every output position when given.

    The column array is laid out (N, G, Cg*K, P) so that one broadcast matmul
    (G, Og, Cg*K) @ (N, G, Cg*K, P) -> (N, G, Og, P) gives the output in its final layout,
    with no transposed copies.
    """
    if _twin_holds() and (out := _twin.conv_forward_np(x, w, stride, padding, dilation, groups, bias)) is not None:
        return out   # the compiled twin (see "Compiled twins" below)
    n, c = x.shape[:2]
    ksize = w.shape[2:]
    out_sizes = [_conv_out_size(s, k, st, p, d) for s, k, st, p, d in zip(x.shape[2:], ksize, stride, padding, dilation)]
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding]) if any(padding) else x
    cols = _im2col(xp, ksize, stride, dilation, out_sizes)  # (N, C, K, *out)
    kk = int(np.prod(ksize))
    cg, og = c // groups, w.shape[0] // groups
    npos = int(np.prod(out_sizes))
    out = np.matmul(w.reshape(groups, og, cg * kk), cols.reshape(n, groups, cg * kk, npos))
    if bias is not None:
        out += bias.reshape(groups, og, 1)
    return out.reshape(n, groups * og, *out_sizes)


def conv_transpose_np(x, w, stride, padding, dilation, groups, output_padding, bias=None):
    """Transposed convolution: x (N, C, *S), w (C, O/groups, *k) -> (N, O, *out) (col2im), plus
    ``bias`` (O,) at every output position when given.

    One broadcast matmul (G, Og*K, Cg) @ (N, G, Cg, P) -> (N, G, Og*K, P) makes the columns;
    col2im adds each kernel offset's column into its strided slice of the output.
    """
    if (_twin_holds()
            and (out := _twin.conv_transpose_np(x, w, stride, padding, dilation, groups, output_padding, bias))
            is not None):
        return out   # the compiled twin (see "Compiled twins" below)
    n, c = x.shape[:2]
    in_sizes = x.shape[2:]
    ksize = w.shape[2:]
    cg, og = c // groups, w.shape[1]
    kk = int(np.prod(ksize))
    full = [(s - 1) * st + d * (k - 1) + 1 + op for s, st, d, k, op in zip(in_sizes, stride, dilation, ksize, output_padding)]
    npos = int(np.prod(in_sizes))
    wt = w.reshape(groups, cg, og * kk).transpose(0, 2, 1)
    cols = np.matmul(wt, x.reshape(n, groups, cg, npos)).reshape(n, groups * og, kk, *in_sizes)
    out = _col2im(cols, (n, groups * og, *full), ksize, stride, dilation, in_sizes)
    crop = tuple(slice(p, f - p) for p, f in zip(padding, full))
    out = np.ascontiguousarray(out[(Ellipsis, *crop)])
    if bias is not None:
        out += bias.reshape(1, -1, *([1] * len(in_sizes)))
    return out


def _check_transposed_out_size(input_sizes, sizes):
    """A transposed convolution whose output would have a size below 1 is refused, as in PyTorch."""
    if min(sizes, default=1) < 1:
        raise RuntimeError(
            f"Given input size per channel: ({' x '.join(map(str, input_sizes))}). Calculated output size per "
            f"channel: ({' x '.join(map(str, sizes))}). Output size is too small"
        )


@aten.convolution.default.impl("cpu")
def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    nd = _check_conv(input, weight, bias, stride, padding, dilation, transposed, groups)
    stride, padding, dilation = _expand(stride, nd), _expand(padding, nd), _expand(dilation, nd)
    output_padding = _expand(output_padding, nd) if output_padding else [0] * nd
    if transposed:
        _check_transposed_out_size(
            input.shape[2:],
            [(s - 1) * st - 2 * p + dl * (k - 1) + op + 1 for s, st, p, dl, k, op in
             zip(input.shape[2:], stride, padding, dilation, weight.shape[2:], output_padding)],
        )
    d = input.dtype
    x, w = _arr(input), _arr(weight, d)
    b = _arr(bias, d) if bias is not None else None
    if transposed:
        out = conv_transpose_np(x, w, stride, padding, dilation, groups, output_padding, b)
    else:
        out = conv_forward_np(x, w, stride, padding, dilation, groups, b)
    if nd == 2 and dt.channels_last in (suggest_memory_format(input), suggest_memory_format(weight)):
        # PyTorch's cpu 2-d convolution writes a channels_last result when either operand is
        return wrap_strided(out, d, format_strides(out.shape, dt.channels_last))
    return wrap(out, d)


def _conv_weight_grad(x, gy, wshape, stride, padding, dilation, groups):
    """d(loss)/d(weight) of a plain convolution: grad_output times the columns of x, summed over N."""
    if _twin_holds() and (gw := _twin.conv_weight_grad(x, gy, wshape, stride, padding, dilation, groups)) is not None:
        return gw   # the compiled twin (see "Compiled twins" below)
    n, c = x.shape[:2]
    ksize = wshape[2:]
    out_sizes = gy.shape[2:]
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding]) if any(padding) else x
    cols = _im2col(xp, ksize, stride, dilation, out_sizes)
    kk = int(np.prod(ksize))
    cg, og = c // groups, wshape[0] // groups
    npos = int(np.prod(out_sizes))
    # (N, G, Cg*K, P) @ (N, G, P, Og) -> (N, G, Cg*K, Og), then the sum over the batch, turned
    # to (G, Og, Cg*K). (Rather than gy @ cols^T: on LeNet-sized layers OpenBLAS is up to twice as
    # fast this way round.)
    gw = np.matmul(cols.reshape(n, groups, cg * kk, npos), gy.reshape(n, groups, og, npos).transpose(0, 1, 3, 2))
    return gw.sum(axis=0).transpose(0, 2, 1).reshape(wshape)


@aten.convolution_backward.default.impl("cpu")
def convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
                         output_padding, groups, output_mask):
    nd = weight.dim() - 2
    stride, padding, dilation = _expand(stride, nd), _expand(padding, nd), _expand(dilation, nd)
    output_padding = _expand(output_padding, nd) if output_padding else [0] * nd
    d = input.dtype
    gy, x, w = _arr(grad_output, d), _arr(input), _arr(weight, d)
    gx = gw = gb = None
    if not transposed:
        if output_mask[0]:
            # The input gradient is a transposed convolution of grad_output with the same weight;
            # output_padding recovers the rows a strided forward skipped.
            extra = [
                s + 2 * p - ((o - 1) * st + dl * (k - 1) + 1)
                for s, p, o, st, dl, k in zip(x.shape[2:], padding, gy.shape[2:], stride, dilation, w.shape[2:])
            ]
            gx = conv_transpose_np(gy, w, stride, padding, dilation, groups, extra)
        if output_mask[1]:
            gw = _conv_weight_grad(x, gy, w.shape, stride, padding, dilation, groups)
    else:
        # conv_transpose(., w) is the adjoint of conv(., w) with w read as a plain conv weight
        # (out = C_in, in/groups = C_out/groups): so the input gradient is conv(gy, w), and the
        # weight gradient is conv's weight gradient with the roles of input and output swapped.
        if output_mask[0]:
            gx = conv_forward_np(gy, w, stride, padding, dilation, groups)
            # with output_padding >= stride (allowed when below dilation) the forward wrote rows
            # past the last input position; they read no input, so their gradient is dropped
            gx = gx[(slice(None), slice(None), *(slice(0, s) for s in x.shape[2:]))]
        if output_mask[1]:
            gw = _conv_weight_grad(gy, x, w.shape, stride, padding, dilation, groups)
    if output_mask[2]:
        gb = gy.sum(axis=(0, *range(2, gy.ndim)))
    return (
        wrap(gx, d) if gx is not None else None,
        wrap(gw, weight.dtype) if gw is not None else None,
        wrap(gb, d) if gb is not None else None,
    )


# -- Compiled twins ------------------------------------------------------------------------------
# conv_forward_np, conv_transpose_np and _conv_weight_grad each have a compiled twin
# (``_ext/twins/backends/cpu/nn_ops.pyx``) that gives the same arrays, bit for bit, faster: it
# fuses the padding and im2col into one loop over a few samples at a time, calls the same
# ``np.matmul`` on them, adds the bias while they are in the cache, and adds col2im's columns
# straight into the cropped result. It runs while
# the switch ``backends.compiled`` is on, these three functions and the helpers they call are
# unchanged since it was written (their fingerprints, checked at import) and the helpers are still
# this module's (an identity check per call, ``_twin.guards_hold``). Each hand-over is the first
# line of its function; a case the twin does not take (3-d, integer or complex dtypes) returns
# None from it and runs the code below the hand-over.

def _load_twin():
    try:
        from minitorch_nn._twins.backends.cpu import nn_ops as twin
    except ImportError:
        return None
    if not _compiled_switch.check_original("backends.cpu.nn_ops convolution",
                                           conv_forward_np, conv_transpose_np, _conv_weight_grad):
        return None
    twin.setup(globals())
    return twin


def _twin_holds():
    return _twin is not None and _compiled_switch._enabled and _twin.guards_hold()


_twin = _load_twin()


# =================================================================================================
# Normalization
# =================================================================================================

def _affine(y, weight, bias, shape, d):
    if weight is not None:
        y = y * _arr(weight, d).reshape(shape)
    if bias is not None:
        y = y + _arr(bias, d).reshape(shape)
    return y


def _mean_keepdims(x, axes, count):
    """``x.mean(axis=axes, keepdims=True)`` for a float array, as the two ufunc calls numpy makes
    for it (so the same bits): the sum kept as an array, divided in place by the count as a numpy
    ``intp`` (which picks numpy's float64 division loop, as ``mean`` does). Without ``mean``'s
    argument handling, which costs more than the arithmetic on a small tensor. (An empty
    reduction takes ``mean`` itself, for its warning.)"""
    if count == 0:
        return x.mean(axis=axes, keepdims=True)
    total = _add_reduce(x, axes, None, None, True)
    return np.true_divide(total, np.intp(count), out=total, casting="unsafe", subok=False)


_add_reduce = np.add.reduce


@aten.native_layer_norm.default.impl("cpu")
def native_layer_norm(input, normalized_shape, weight, bias, eps):
    normalized_shape = tuple(normalized_shape)
    nn_ = len(normalized_shape)
    _check_float(input, "LayerNormKernelImpl")
    if tuple(input.shape[input.dim() - nn_:]) != normalized_shape or nn_ == 0:
        raise RuntimeError(
            f"Given normalized_shape={list(normalized_shape)}, expected input with shape [*, "
            f"{', '.join(map(str, normalized_shape))}], but got input of size{list(input.shape)}"
        )
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != normalized_shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape {list(t.shape)} and normalized_shape = {list(normalized_shape)}")
    d = input.dtype
    x = _arr(input)
    axes = tuple(range(x.ndim - nn_, x.ndim))
    count = 1
    for n in normalized_shape:
        count *= n
    token = fp_errors_off()   # (inf - inf and the like: PyTorch gives nan without a warning)
    try:
        mean = _mean_keepdims(x, axes, count)
        dev = x - mean
        var = _mean_keepdims(dev ** 2, axes, count)
        rstd = 1.0 / np.sqrt(var + eps)
        y = _affine(dev * rstd, weight, bias, normalized_shape, d)
    finally:
        fp_errors_restore(token)
    stat_shape = tuple(input.shape[: x.ndim - nn_]) + (1,) * nn_
    return wrap(y, d), wrap(mean.reshape(stat_shape), d), wrap(rstd.reshape(stat_shape), d)


@aten.native_layer_norm_backward.default.impl("cpu")
def native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask):
    d = input.dtype
    nn_ = len(normalized_shape)
    x, g = _arr(input), _arr(grad_out, d)
    mu, rs = _arr(mean, d), _arr(rstd, d)
    axes = tuple(range(x.ndim - nn_, x.ndim))
    lead = tuple(range(x.ndim - nn_))
    xhat = (x - mu) * rs
    gxhat = g * _arr(weight, d) if weight is not None else g
    gx = gw = gb = None
    if output_mask[0]:
        gx = rs * (gxhat - gxhat.mean(axis=axes, keepdims=True) - xhat * (gxhat * xhat).mean(axis=axes, keepdims=True))
    if output_mask[1] and weight is not None:
        gw = (g * xhat).sum(axis=lead)
    if output_mask[2] and bias is not None:
        gb = g.sum(axis=lead)
    return tuple(wrap(a, d) if a is not None else None for a in (gx, gw, gb))


def _batch_stats_axes(x):
    return (0,) + tuple(range(2, x.ndim))


def _bn_shape(x):
    return (1, -1) + (1,) * (x.ndim - 2)


def _update_stat(t, value):
    """Write a running statistic in place *without* bumping its version counter.

    PyTorch's batch-norm kernels update ``running_mean``/``running_var`` behind the version
    counter's back (``rm._version`` stays 0 after a training step), so autograd does not complain
    about the saved running stats having changed. We mirror that.
    """
    np.copyto(t._impl.numpy_view(), value, casting="unsafe")


def _batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    _check_float(input, "batch_norm")
    d = input.dtype
    x = _arr(input)
    shape = _bn_shape(x)
    c = x.shape[1] if x.ndim > 1 else 1
    # PyTorch checks the running stats first, then weight and bias
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight), ("bias", bias)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    if training:
        axes = _batch_stats_axes(x)
        count = x.size // max(c, 1)
        if count <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {list(input.shape)}")
        mean = x.mean(axis=axes)
        var = ((x - mean.reshape(shape)) ** 2).mean(axis=axes)
        invstd = 1.0 / np.sqrt(var + eps)
        # running_var takes the unbiased variance, the normalization the biased one
        if running_mean is not None:
            _update_stat(running_mean, (1 - momentum) * _arr(running_mean) + momentum * mean)
        if running_var is not None:
            _update_stat(running_var, (1 - momentum) * _arr(running_var) + momentum * var * count / (count - 1))
        y = (x - mean.reshape(shape)) * invstd.reshape(shape)
        y = _affine(y, weight, bias, shape, d)
        return wrap(y, d), wrap(mean, d), wrap(invstd, d)
    rm, rv = _arr(running_mean, d), _arr(running_var, d)
    y = (x - rm.reshape(shape)) / np.sqrt(rv.reshape(shape) + eps)
    return wrap(_affine(y, weight, bias, shape, d), d), _empty(d), _empty(d)


@aten.native_batch_norm.default.impl("cpu")
def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    for name, t in (("running_mean", running_mean), ("running_var", running_var)):
        if not training and t is None:
            raise RuntimeError(f"{name} must be defined in evaluation mode")
    return _batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)


@aten._native_batch_norm_legit.default.impl("cpu")
def _native_batch_norm_legit(input, weight, bias, running_mean, running_var, training, momentum, eps):
    return _batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)


@aten._native_batch_norm_legit_no_training.default.impl("cpu")
def _native_batch_norm_legit_no_training(input, weight, bias, running_mean, running_var, momentum, eps):
    return _batch_norm(input, weight, bias, running_mean, running_var, False, momentum, eps)


@aten.native_batch_norm_backward.default.impl("cpu")
def native_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean, save_invstd, train, eps,
                               output_mask):
    d = input.dtype
    x, g = _arr(input), _arr(grad_out, d)
    shape = _bn_shape(x)
    axes = _batch_stats_axes(x)
    if train:
        mean, invstd = _arr(save_mean, d), _arr(save_invstd, d)
    else:
        mean, invstd = _arr(running_mean, d), 1.0 / np.sqrt(_arr(running_var, d) + eps)
    w = _arr(weight, d) if weight is not None else np.ones_like(mean)
    xhat = (x - mean.reshape(shape)) * invstd.reshape(shape)
    gx = gw = gb = None
    if output_mask[0]:
        if train:
            gm = g.mean(axis=axes, keepdims=True)
            gxm = (g * xhat).mean(axis=axes, keepdims=True)
            gx = (g - gm - xhat * gxm) * (invstd * w).reshape(shape)
        else:
            gx = g * (invstd * w).reshape(shape)
    if output_mask[1]:
        gw = (g * xhat).sum(axis=axes)
    if output_mask[2]:
        gb = g.sum(axis=axes)
    return tuple(wrap(a, d) if a is not None else None for a in (gx, gw, gb))


@aten.native_group_norm.default.impl("cpu")
def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    _check_float(input, "GroupNormKernelImpl")
    if C % group:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of shape {list(input.shape)} and num_groups={group}")
    d = input.dtype
    x = _arr(input).reshape(N, group, -1)
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    rstd = 1.0 / np.sqrt(var + eps)
    y = ((x - mean) * rstd).reshape(N, C, -1)
    y = _affine(y, weight, bias, (1, C, 1), d).reshape(tuple(input.shape))
    return wrap(y, d), wrap(mean.reshape(N, group), d), wrap(rstd.reshape(N, group), d)


@aten.native_group_norm_backward.default.impl("cpu")
def native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group, output_mask):
    d = input.dtype
    x = _arr(input).reshape(N, group, -1)
    g = _arr(grad_out, d).reshape(N, C, -1)
    mu, rs = _arr(mean, d).reshape(N, group, 1), _arr(rstd, d).reshape(N, group, 1)
    xhat = (x - mu) * rs
    gxhat = (g * _arr(weight, d).reshape(1, C, 1) if weight is not None else g).reshape(N, group, -1)
    gx = gw = gb = None
    if output_mask[0]:
        gx = rs * (gxhat - gxhat.mean(axis=-1, keepdims=True) - xhat * (gxhat * xhat).mean(axis=-1, keepdims=True))
        gx = gx.reshape(tuple(input.shape))
    if output_mask[1]:
        gw = (g * xhat.reshape(N, C, -1)).sum(axis=(0, 2))
    if output_mask[2]:
        gb = g.sum(axis=(0, 2))
    return tuple(wrap(a, d) if a is not None else None for a in (gx, gw, gb))


# =================================================================================================
# Embedding, dropout
# =================================================================================================

@aten.embedding.default.impl("cpu")
def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    if indices.dtype not in (dt.int64, dt.int32):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; "
            f"but got {indices.type()} instead (while checking arguments for embedding)"
        )
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    idx = as_array(indices)
    n = weight.shape[0]
    if idx.size and (idx.min() < -n or idx.max() >= n) or (idx.size and idx.min() < 0):
        raise IndexError("index out of range in self")
    return wrap(_arr(weight)[idx], weight.dtype)


@aten.embedding_dense_backward.default.impl("cpu")
def embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    d = grad_output.dtype
    dim = grad_output.shape[-1]
    g = _arr(grad_output).reshape(-1, dim)
    idx = as_array(indices).reshape(-1)
    out = np.zeros((num_weights, dim), dtype=g.dtype)
    if scale_grad_by_freq:
        counts = np.bincount(idx, minlength=num_weights)
        g = g / counts[idx][:, None]
    np.add.at(out, idx, g)
    if padding_idx >= 0:
        out[padding_idx] = 0
    return wrap(out, d)


@aten.native_dropout.default.impl("cpu")
def native_dropout(input, p, train):
    if train is None or train:
        if p == 1:
            mask = np.zeros(tuple(input.shape), dtype=bool)
            return wrap(np.zeros_like(_arr(input)), input.dtype), wrap(mask, dt.bool)
        # Same stream as PyTorch: a Bernoulli(1 - p) mask drawn with bernoulli_.
        keep = aten.empty_like.default(input)
        aten.bernoulli_.float(keep, 1 - p)
        m = _arr(keep)
        return wrap(_arr(input) * m / (1 - p), input.dtype), wrap(m.astype(bool), dt.bool)
    return wrap(_arr(input).copy(), input.dtype), wrap(np.ones(tuple(input.shape), dtype=bool), dt.bool)


@aten.native_dropout_backward.default.impl("cpu")
def native_dropout_backward(grad_output, mask, scale):
    d = grad_output.dtype
    return wrap(_arr(grad_output) * as_array(mask) * scale, d)


# =================================================================================================
# Losses
# =================================================================================================

@aten.mse_loss.default.impl("cpu")
def mse_loss(self, target, reduction=MEAN):
    _check_float(self, "mse_cpu")
    d = self.dtype
    a, b = _arr(self), _arr(target, d)
    if a.shape != b.shape:   # (F.mse_loss has broadcast them already; aten.mse_loss called directly may not)
        a, b = np.broadcast_arrays(a, b)
    return _loss((a - b) ** 2, d, reduction, self, target)


@aten.mse_loss_backward.default.impl("cpu")
def mse_loss_backward(grad_output, self, target, reduction):
    d = self.dtype
    diff = _arr(self) - _arr(target, d)
    scale = 2.0 / diff.size if reduction == MEAN else 2.0
    return wrap(scale * diff * _arr(grad_output, d), d)


@aten.l1_loss.default.impl("cpu")
def l1_loss(self, target, reduction=MEAN):
    d = self.dtype
    return wrap(_reduce(np.abs(_arr(self) - _arr(target, d)), reduction), d)


def _bce_logits_np(x, y, w, pw):
    # log(1 + exp(-x)) written so that large |x| neither overflows nor loses digits
    log_sig_neg = np.maximum(-x, 0) + np.log1p(np.exp(-np.abs(x)))  # = -log(sigmoid(x))
    if pw is not None:
        lw = 1 + (pw - 1) * y
        loss = (1 - y) * x + lw * log_sig_neg
    else:
        loss = (1 - y) * x + log_sig_neg
    return loss * w if w is not None else loss


@aten.binary_cross_entropy_with_logits.default.impl("cpu")
def binary_cross_entropy_with_logits(self, target, weight=None, pos_weight=None, reduction=MEAN):
    _check_float(self, "log_sigmoid_cpu")
    d = self.dtype
    x, y = _arr(self), _arr(target, d)
    w = _arr(weight, d) if weight is not None else None
    pw = _arr(pos_weight, d) if pos_weight is not None else None
    return _loss(_bce_logits_np(x, y, w, pw), d, reduction, self, target, weight, pos_weight)


@aten.binary_cross_entropy.default.impl("cpu")
def binary_cross_entropy(self, target, weight=None, reduction=MEAN):
    d = self.dtype
    x, y = _arr(self), _arr(target, d)
    if x.size and (x.min() < 0 or x.max() > 1):
        raise RuntimeError("all elements of input should be between 0 and 1")
    if y.size and (y.min() < 0 or y.max() > 1):
        raise RuntimeError("all elements of target should be between 0 and 1")
    # PyTorch clamps each log term at -100 so that log(0) gives a finite loss
    with np.errstate(divide="ignore"):
        loss = -(y * np.maximum(np.log(x), -100) + (1 - y) * np.maximum(np.log1p(-x), -100))
    if weight is not None:
        loss = loss * _arr(weight, d)
    return _loss(loss, d, reduction, self, target, weight)


def _nll_check(self, target, weight):
    if self.dim() == 2 and self.shape[0] != target.shape[0]:
        raise ValueError(f"Expected input batch_size ({self.shape[0]}) to match target batch_size ({target.shape[0]}).")
    if target.dtype is not dt.int64 and target.dtype is not dt.uint8:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {type_name(target.dtype)}")
    n_classes = self.shape[-1] if self.dim() else 1
    if weight is not None and weight.numel() != n_classes:
        raise RuntimeError(
            f"weight tensor should be defined either for all {n_classes} classes or no classes but got weight tensor of shape: {list(weight.shape)}"
        )


def _nll_targets(t, ignore_index, n_classes):
    """(class index per row with ignored rows sent to 0, valid-row mask or None when every row counts)."""
    valid = t != ignore_index
    if np.logical_and.reduce(valid, axis=None):  # (valid.all(), without its Python-level wrapper)
        return t, None
    return np.where(valid, t, 0), valid


def _nll_weights(weight, safe_t, valid, d, like):
    """Each row's class weight (0 for ignored rows); None for "all ones" (no weight, none ignored)."""
    if weight is None:
        return None if valid is None else valid.astype(like.dtype)
    w = _arr(weight, d)[safe_t]
    return w if valid is None else np.where(valid, w, 0)


@aten.nll_loss_forward.default.impl("cpu")
def nll_loss_forward(self, target, weight, reduction, ignore_index):
    _nll_check(self, target, weight)
    _check_float(self, "nll_loss_out_frame")
    d = self.dtype
    x = _arr(self)
    t = as_array(target)
    if x.ndim == 1:
        x, t = x[None], t.reshape(1)
    n, n_classes = x.shape
    lo, hi = (_min(t, axis=None), _max(t, axis=None)) if n else (0, 0)
    if n and 0 <= lo and hi < n_classes and not lo <= ignore_index <= hi:
        # the common case, told by the range of the targets alone: each is a class and none is ignored
        safe_t, valid = t, None
    else:
        safe_t, valid = _nll_targets(t, ignore_index, n_classes)
        bad = (t < 0) | (t >= n_classes)
        if valid is not None:
            bad &= valid
        if bad.any():
            # PyTorch's loop stops at the first target (in order) that is neither a class nor ignored
            raise IndexError(f"Target {int(t.reshape(-1)[np.argmax(bad.reshape(-1))])} is out of bounds.")
    w = _nll_weights(weight, safe_t, valid, d, x)
    picked = x[np.arange(n), safe_t]
    losses = -picked if w is None else -picked * w
    if reduction == NONE:
        return wrap(losses.reshape(tuple(target.shape)), d), wrap(np.zeros((), x.dtype), d)
    total = x.dtype.type(n) if w is None else _sum(w, axis=None)
    if reduction == SUM:
        return wrap(_sum(losses, axis=None), d), wrap(total, d)
    token = fp_errors_off()  # every target ignored: 0/0 is nan, silently as in PyTorch
    try:
        return wrap(_sum(losses, axis=None) / total, d), wrap(total, d)
    finally:
        fp_errors_restore(token)


try:
    # a compiled twin of the scatter below (the same zeros and values), used while the switch
    # (backends.compiled) is on
    from minitorch_nn._twins.backends.cpu.nn_ops import nll_scatter as _nll_scatter
except ImportError:  # pragma: no cover - an extension built without it
    _nll_scatter = None


def _nll_loss_backward_common(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    """``nll_loss_backward`` for cross-entropy's training case, else None: a 2-d float32/float64
    input, no weight, "mean" or "sum", a 0-d gradient and total weight of the input's dtype, and
    targets that are all classes with none ignored (told from their range, as the forward does).
    The values of the general code below (the same scalar scattered into zeros), with less numpy
    bookkeeping: one flat scatter instead of a two-index one."""
    si, ti, gi, wi = self._impl, target._impl, grad_output._impl, total_weight._impl
    d = si.dtype
    if (weight is not None or reduction == NONE or (d is not dt.float32 and d is not dt.float64)
            or len(si.sizes) != 2 or len(ti.sizes) != 1 or gi.sizes or gi.dtype is not d
            or wi.sizes or wi.dtype is not d):
        return None
    n, n_classes = si.sizes
    t = ti.numpy_view()
    if not n or len(t) != n:
        return None
    scale = -gi.numpy_view()
    if reduction == MEAN:
        token = fp_errors_off()
        try:
            scale = scale / wi.numpy_view()
        finally:
            fp_errors_restore(token)
    if _nll_scatter is not None and _compiled_switch._enabled:
        # the same zeros and scatter, as one compiled loop that also checks each target
        g = _nll_scatter(t, n_classes, ignore_index, scale)
        if g is not None:
            return wrap(g, d)
    lo, hi = _min(t, axis=None), _max(t, axis=None)
    if lo < 0 or hi >= n_classes or lo <= ignore_index <= hi:
        return None
    g = np.zeros(n * n_classes, dtype=d.numpy_dtype)
    g[np.arange(0, n * n_classes, n_classes) + t] = scale
    return wrap(g.reshape(n, n_classes), d)


@aten.nll_loss_backward.default.impl("cpu")
def nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    fast = _nll_loss_backward_common(grad_output, self, target, weight, reduction, ignore_index, total_weight)
    if fast is not None:
        return fast
    d = self.dtype
    x = _arr(self)
    t = as_array(target).reshape(-1)
    go = _arr(grad_output, d)
    x2 = x.reshape(-1, x.shape[-1]) if x.ndim else x.reshape(1, 1)
    safe_t, valid = _nll_targets(t, ignore_index, x2.shape[1])
    w = _nll_weights(weight, safe_t, valid, d, x2)
    # the gradient of row i is -w[i] * grad at its target class (/ total weight for "mean")
    if reduction == NONE:
        scale = -go.reshape(-1) if w is None else -w * go.reshape(-1)
    else:
        scale = -go if w is None else -w * go
        if reduction == MEAN:
            token = fp_errors_off()
            try:
                scale = scale / _arr(total_weight, d)
            finally:
                fp_errors_restore(token)
    if valid is not None:
        # PyTorch never writes an ignored row: +0.0 there, even where the scale is 0/0 (every
        # target ignored with "mean") or -0.0
        scale = np.where(valid, scale, np.zeros((), scale.dtype))
    g = np.zeros_like(x2)
    g[np.arange(len(t)), safe_t] = scale
    return wrap(g.reshape(tuple(self.shape)), d)
