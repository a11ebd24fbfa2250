"""Adaptive average pooling (cpu): ``_adaptive_avg_pool2d`` and ``_adaptive_avg_pool2d_backward``.

Mirrors PyTorch's ``aten/src/ATen/native/AdaptiveAveragePooling.cpp`` and its cpu kernel
(``native/cpu/AdaptiveAvgPoolKernel.cpp``). Output bin ``i`` of ``n`` over an input dim of size
``H`` covers ``[floor(i * H / n), ceil((i + 1) * H / n))``; bins may overlap when ``n`` does not
divide ``H``. As PyTorch's kernel, the forward adds a bin's elements one after the other in row-major
order and divides by the bin's height, then its width (``sum / kh / kw``: those roundings); the
backward adds ``grad / kh / kw`` into each bin's elements, bin after bin.

``F.adaptive_avg_pool2d`` calls ``_adaptive_avg_pool2d`` except for an output of 1 x 1, which is a
``mean`` over the last two dims (as PyTorch's ``adaptive_avg_pool2d``). Where we differ: the result
is always row-major (PyTorch keeps a channels-last input's layout), and 16-bit gradients of
overlapping bins are added in float32 and rounded once.
"""

from __future__ import annotations

import numpy as np

from minitorch_nn._ops import aten
from minitorch_nn.backends.common import compute_dtype, type_name
from minitorch_nn.backends.cpu._numpy import as_array, wrap


def bins(size, out):
    """(start, end) of each of the ``out`` bins over ``size`` elements."""
    return [((i * size) // out, -(-((i + 1) * size) // out)) for i in range(out)]


def check_adaptive_avg_pool2d(self, output_size):
    """PyTorch's checks, in its order; returns the output size as two ints."""
    if len(output_size) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    oh, ow = (int(s) for s in output_size)
    if oh < 0 or ow < 0:
        raise RuntimeError("adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 "
                           f"but received {{{oh}, {ow}}}")
    if self.dim() not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {list(self.shape)}")
    for d in range(1, self.dim()):
        if self.shape[d] == 0:
            raise RuntimeError("adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(self.shape)} with dimension {d} being empty")
    return oh, ow


def _check_float(self):
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f"\"adaptive_avg_pool2d\" not implemented for '{type_name(self.dtype)}'")


@aten._adaptive_avg_pool2d.default.impl("cpu")
def _adaptive_avg_pool2d(self, output_size):
    oh, ow = check_adaptive_avg_pool2d(self, output_size)
    _check_float(self)
    cd = compute_dtype(self.dtype)
    x = as_array(self, cd)
    H, W = x.shape[-2:]
    lead = x.shape[:-2]
    out = np.empty(lead + (oh, ow), cd.numpy_dtype)
    zero = cd.numpy_dtype.type(0)
    for i, (h0, h1) in enumerate(bins(H, oh)):
        for j, (w0, w1) in enumerate(bins(W, ow)):
            # one element after the other in row-major order, as PyTorch's loop adds them: cumsum
            # adds strictly in order (np.sum would pair them up); PyTorch's sum starts from 0,
            # which only shows on an all -0.0 bin: the final + 0 gives its +0.0
            window = x[..., h0:h1, w0:w1].reshape(lead + ((h1 - h0) * (w1 - w0),))
            total = np.cumsum(window, axis=-1)[..., -1] + zero
            out[..., i, j] = total / cd.numpy_dtype.type(h1 - h0) / cd.numpy_dtype.type(w1 - w0)
    return wrap(out, self.dtype)


@aten._adaptive_avg_pool2d_backward.default.impl("cpu")
def _adaptive_avg_pool2d_backward(grad_output, self):
    _check_float(self)
    cd = compute_dtype(self.dtype)
    g = as_array(grad_output, cd)
    H, W = self.shape[-2:]
    oh, ow = g.shape[-2:]
    grad = np.zeros(tuple(self.shape), cd.numpy_dtype)
    for i, (h0, h1) in enumerate(bins(H, oh)):
        for j, (w0, w1) in enumerate(bins(W, ow)):
            delta = g[..., i, j] / cd.numpy_dtype.type(h1 - h0) / cd.numpy_dtype.type(w1 - w0)
            grad[..., h0:h1, w0:w1] += delta[..., None, None]
    return wrap(grad, self.dtype)
