"""Pooling cpu kernels: max pooling (with and without indices) and average pooling, 2-d.

Mirrors the cpu halves of PyTorch's ``aten/src/ATen/native/{DilatedMaxPool2d,AveragePool2d}.cpp``
and their ``*_backward`` kernels, in numpy:

* max pooling takes one pass per kernel offset over a strided view of the padded input, keeping
  the larger value and, when the indices are wanted, where it came from (``max_pool2d_values`` is
  the same pass without the indices, for ``F.max_pool2d`` when nothing can see them);
* average pooling views the padded input as windows (``as_strided``) and reduces each window.

The max pooling kernels do their work on numpy arrays in ``max_pool2d_np``,
``max_pool2d_values_np`` and ``max_pool2d_scatter_np`` (the backward), which have a compiled twin,
``_ext/twins/backends/cpu/pooling.pyx``: the same arrays, bit for bit, while the switch
``backends.compiled`` is on (see "Compiled twin" at the end of this file).

The argument helpers (``_pool_args``, ``_pool_out``, ``_check_pool``) are shared with the meta and
cuda kernels. Differences from PyTorch: float16/bfloat16 are computed in float32 and rounded at
the end.
"""

from __future__ import annotations

import itertools

import numpy as np

from minitorch_nn import _dtype as dt
from minitorch_nn._ops import aten
from minitorch_nn.backends import compiled as _compiled_switch
from minitorch_nn.backends.common import not_implemented
from minitorch_nn.backends.cpu._numpy import as_array, wrap
from minitorch_nn.backends.cpu.nn_ops import _arr, _expand


def _pool_args(kernel_size, stride, padding, dilation=(1,)):
    k = _expand(kernel_size, 2)
    s = _expand(stride, 2) if stride else k
    return k, s, _expand(padding, 2), _expand(dilation, 2)


def _pool_out(size, k, s, p, d, ceil_mode):
    num = size + 2 * p - d * (k - 1) - 1
    out = (num + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1  # the last window must start inside the input or its left padding
    return out


def _check_pool(self, k, s, p, name):
    if self.dim() not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    for kk, pp in zip(k, p):
        if pp > kk // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={pp}, kernel_size={kk} and dilation=1"
                               if name == "max" else f"pad should be at most half of kernel size, but got pad={pp} and kernel_size={kk}")


def _windows(xp, k, s, d, out_sizes):
    """A (…, oh, ow, kh, kw) strided view of windows over the padded input (no copy)."""
    st = xp.strides
    shape = xp.shape[:-2] + tuple(out_sizes) + tuple(k)
    strides = st[:-2] + (st[-2] * s[0], st[-1] * s[1], st[-2] * d[0], st[-1] * d[1])
    return np.lib.stride_tricks.as_strided(xp, shape, strides, writeable=False)


def _padded_for_pool(x, k, s, p, d, out_sizes, fill):
    # right side padding also covers windows that ceil_mode lets run past the end
    need = [(o - 1) * ss + dd * (kk - 1) + 1 for o, ss, dd, kk in zip(out_sizes, s, d, k)]
    right = [max(0, n - (size + pp)) for n, size, pp in zip(need, x.shape[-2:], p)]
    if not any(p) and not any(right):
        return x
    pads = [(0, 0)] * (x.ndim - 2) + [(p[0], right[0]), (p[1], right[1])]
    return np.pad(x, pads, constant_values=fill)


def _max_pool2d_setup(self, kernel_size, stride, padding, dilation, ceil_mode):
    """Checks, then (x, k, s, p, d, out_sizes): what both max pooling kernels share."""
    k, s, p, d = _pool_args(kernel_size, stride, padding if isinstance(padding, (list, tuple)) else [padding],
                            dilation if isinstance(dilation, (list, tuple)) else [dilation])
    _check_pool(self, k, s, p, "max")
    if self.dtype.is_complex:
        raise not_implemented("max_pool2d", self.dtype)  # (complex numbers have no order)
    x = _arr(self)
    h, w = x.shape[-2:]
    out_sizes = [_pool_out(n, kk, ss, pp, dd, ceil_mode) for n, kk, ss, pp, dd in zip((h, w), k, s, p, d)]
    if min(out_sizes) <= 0:
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, x.shape[-3:]))}). Calculated output size: "
                           f"({x.shape[-3]}x{out_sizes[0]}x{out_sizes[1]}). Output size is too small")
    return x, k, s, p, d, out_sizes


def _lowest(np_dtype):
    """The value padding never wins against: -inf, or the integer type's minimum."""
    return -np.inf if np_dtype.kind == "f" else np.iinfo(np_dtype).min


def _max_pool_offsets(xp, k, s, d, out_sizes):
    """(ki, kj, window) for each kernel offset, row-major: the strided view of what it reads."""
    for ki, kj in itertools.product(range(k[0]), range(k[1])):
        yield ki, kj, xp[..., ki * d[0]:ki * d[0] + s[0] * (out_sizes[0] - 1) + 1:s[0],
                         kj * d[1]:kj * d[1] + s[1] * (out_sizes[1] - 1) + 1:s[1]]


def _take_larger(vals, window, is_float):
    """Where ``window`` beats ``vals``, copy it in; returns where it did. Like PyTorch's kernel, a
    later element wins only if it is strictly larger -- or NaN, which always propagates (so the
    first of equal values, -0.0 against 0.0 included, is the one kept)."""
    better = window > vals
    if is_float:
        better |= np.isnan(window)
    np.copyto(vals, window, where=better)
    return better


def _first_offset_inside(out_size, k, s, p, d):
    """Along one axis, for each output position, the first kernel offset that reads the input
    rather than its left padding: ceil(max(0, p - o*s) / d)."""
    before_input = np.maximum(0, p - np.arange(out_size) * s)
    return -(-before_input // d)


@aten.max_pool2d_with_indices.default.impl("cpu")
def max_pool2d_with_indices(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    x, k, s, p, d, out_sizes = _max_pool2d_setup(self, kernel_size, stride, padding, dilation, ceil_mode)
    vals, idx = max_pool2d_np(x, k, s, p, d, out_sizes)
    return wrap(vals, self.dtype), wrap(idx, dt.int64)


def max_pool2d_np(x, k, s, p, d, out_sizes):
    """Max pooling of the numpy array ``x`` (..., H, W): the maxima, and the flat index in its
    plane of the element each came from."""
    if _twin_holds() and (out := _twin.max_pool2d_np(x, k, s, p, d, out_sizes)) is not None:
        return out   # the compiled twin (see "Compiled twin" below)
    xp = _padded_for_pool(x, k, s, p, d, out_sizes, _lowest(x.dtype))
    is_float = x.dtype.kind == "f"
    # One pass per kernel offset over strided views (no window copies), starting from the first
    # offset's values (what comparing them with the padding value would keep).
    offsets = _max_pool_offsets(xp, k, s, d, out_sizes)
    vals = np.array(next(offsets)[2])
    # The index PyTorch returns is flat in the unpadded input plane: for kernel offset (ki, kj)
    # and output (oy, ox) it is (oy*s0 - p0 + ki*d0) * width + (ox*s1 - p1 + kj*d1).
    width = x.shape[-1]
    row0 = (np.arange(out_sizes[0]) * s[0] - p[0])[:, None]
    col0 = (np.arange(out_sizes[1]) * s[1] - p[1])[None, :]

    def flat_index(ki, kj):
        return (row0 + ki * d[0]) * width + (col0 + kj * d[1])

    # Padding holds the lowest value, so it never wins and a real value equal to it does not win
    # either: a window whose real values are all that low keeps the index of its first element
    # inside the input, as PyTorch's does.
    first_y, first_x = (_first_offset_inside(n, kk, ss, pp, dd) for n, kk, ss, pp, dd in zip(out_sizes, k, s, p, d))
    idx = np.broadcast_to(flat_index(first_y[:, None], first_x[None, :]), vals.shape).copy()
    for ki, kj, window in offsets:
        np.copyto(idx, flat_index(ki, kj), where=_take_larger(vals, window, is_float))
    return vals, idx


def max_pool2d_values(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """The first result of :func:`max_pool2d_with_indices` alone, without tracking where each
    maximum came from: what ``F.max_pool2d`` runs when neither autograd nor the caller needs the
    indices. Same values, bit for bit: the same comparisons in the same order."""
    x, k, s, p, d, out_sizes = _max_pool2d_setup(self, kernel_size, stride, padding, dilation, ceil_mode)
    return wrap(max_pool2d_values_np(x, k, s, p, d, out_sizes), self.dtype)


def max_pool2d_values_np(x, k, s, p, d, out_sizes):
    """The first result of :func:`max_pool2d_np` alone."""
    if _twin_holds() and (out := _twin.max_pool2d_values_np(x, k, s, p, d, out_sizes)) is not None:
        return out   # the compiled twin (see "Compiled twin" below)
    xp = _padded_for_pool(x, k, s, p, d, out_sizes, _lowest(x.dtype))
    is_float = x.dtype.kind == "f"
    offsets = _max_pool_offsets(xp, k, s, d, out_sizes)
    vals = np.array(next(offsets)[2])
    for _, _, window in offsets:
        _take_larger(vals, window, is_float)
    return vals


@aten.max_pool2d_with_indices_backward.default.impl("cpu")
def max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
    d = self.dtype
    g = _arr(grad_output, d)
    return wrap(max_pool2d_scatter_np(g, as_array(indices), tuple(self.shape)), d)


def max_pool2d_scatter_np(g, idx, shape):
    """The gradient of max pooling's input (of ``shape``): each output's gradient in ``g`` added to
    the input element its index ``idx`` names."""
    if _twin_holds() and (out := _twin.max_pool2d_scatter_np(g, idx, shape)) is not None:
        return out   # the compiled twin (see "Compiled twin" below)
    h, w = shape[-2:]
    lead = int(np.prod(shape[:-2]))
    idx = idx.reshape(lead, -1)
    # Each output's gradient is added to the input element it came from. np.add.at adds them one
    # at a time in output order, in the gradient's own dtype: PyTorch's loop, so where windows
    # overlap the sums are rounded the same way.
    flat = (np.arange(lead)[:, None] * (h * w) + idx).reshape(-1)
    out = np.zeros(lead * h * w, dtype=g.dtype)
    np.add.at(out, flat, g.reshape(-1))
    return out.reshape(shape)


def _avg_divisors(h, w, k, s, p, out_sizes, count_include_pad, divisor_override):
    if divisor_override:
        return np.asarray(float(divisor_override))
    divs = np.empty(out_sizes)
    for i in range(out_sizes[0]):
        for j in range(out_sizes[1]):
            y0, x0 = i * s[0] - p[0], j * s[1] - p[1]
            y1, x1 = min(y0 + k[0], h + p[0]), min(x0 + k[1], w + p[1])
            if count_include_pad:
                divs[i, j] = (y1 - y0) * (x1 - x0)
            else:
                divs[i, j] = (min(y1, h) - max(y0, 0)) * (min(x1, w) - max(x0, 0))
    return divs


@aten.avg_pool2d.default.impl("cpu")
def avg_pool2d(self, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None):
    k, s, p, dl = _pool_args(kernel_size, stride, padding if isinstance(padding, (list, tuple)) else [padding])
    _check_pool(self, k, s, p, "avg")
    if self.dtype.is_complex:
        raise not_implemented("avg_pool2d", self.dtype)  # (PyTorch has no complex pooling loop)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    x = _arr(self)
    h, w = x.shape[-2:]
    out_sizes = [_pool_out(n, kk, ss, pp, 1, ceil_mode) for n, kk, ss, pp in zip((h, w), k, s, p)]
    if min(out_sizes) <= 0:
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, x.shape[-3:]))}). Calculated output size: "
                           f"({x.shape[-3]}x{out_sizes[0]}x{out_sizes[1]}). Output size is too small")
    xp = _padded_for_pool(x, k, s, p, dl, out_sizes, 0)
    sums = _windows(xp, k, s, dl, out_sizes).sum(axis=(-2, -1))
    return wrap(sums / _avg_divisors(h, w, k, s, p, out_sizes, count_include_pad, divisor_override), self.dtype)


@aten.avg_pool2d_backward.default.impl("cpu")
def avg_pool2d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    k, s, p, dl = _pool_args(kernel_size, stride, padding)
    d = self.dtype
    h, w = self.shape[-2:]
    g = _arr(grad_output, d)
    out_sizes = g.shape[-2:]
    g = g / _avg_divisors(h, w, k, s, p, out_sizes, count_include_pad, divisor_override)
    need = [(o - 1) * ss + kk for o, ss, kk in zip(out_sizes, s, k)]
    gp = np.zeros((*g.shape[:-2], max(need[0], h + 2 * p[0]), max(need[1], w + 2 * p[1])), dtype=g.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            gp[..., i:i + s[0] * (out_sizes[0] - 1) + 1:s[0], j:j + s[1] * (out_sizes[1] - 1) + 1:s[1]] += g
    return wrap(gp[..., p[0]:p[0] + h, p[1]:p[1] + w], d)


# -- Compiled twin --------------------------------------------------------------------------------
# max_pool2d_np, max_pool2d_values_np and max_pool2d_scatter_np have a compiled twin
# (``_ext/twins/backends/cpu/pooling.pyx``) that gives the same arrays, bit for bit, in one pass
# over each window (and one loop for the backward). It runs while the switch ``backends.compiled``
# is on, these functions and the helpers they call are unchanged since it was written (their
# fingerprints, checked at import) and the helpers are still this module's (an identity check per
# call, ``_twin.guards_hold``). A case the twin does not take (integer dtypes, say) returns None
# from it and runs the code below the hand-over.

def _load_twin():
    try:
        from minitorch_nn._twins.backends.cpu import pooling as twin
    except ImportError:
        return None
    if not _compiled_switch.check_original("backends.cpu.pooling max_pool2d",
                                           max_pool2d_np, max_pool2d_values_np, max_pool2d_scatter_np):
        return None
    twin.setup(globals())
    return twin


def _twin_holds():
    return _twin is not None and _compiled_switch._enabled and _twin.guards_hold()


_twin = _load_twin()
