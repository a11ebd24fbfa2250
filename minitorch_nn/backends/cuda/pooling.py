"""2-d pooling on the GPU: ``max_pool2d_with_indices``, ``avg_pool2d``, ``_adaptive_avg_pool2d`` and
their backwards.

Mirrors PyTorch's ``DilatedMaxPool2d.cu`` and ``AveragePool2d.cu``. The input is read as planes
``(L, H, W)`` (``L`` = batch x channels), contiguous:

* **forward**, one thread per output element: walk the ``kh x kw`` window (with stride, padding and
  dilation). Max pooling keeps the first largest value -- a later one wins only if strictly larger
  or NaN -- and its flat index ``y * W + x`` in the plane, as PyTorch returns it. Average pooling
  sums what lies inside the input and divides by the window size (``count_include_pad``) or by the
  part inside the input, or by ``divisor_override``.
* **max backward**, one thread per output element: add its gradient at its saved index with an
  *atomic* add, because overlapping windows may pick the same input element.
* **avg backward**, one thread per input element: sum ``grad / divisor`` over the (few) windows
  that cover it -- a gather, so no atomics are needed.

``_adaptive_avg_pool2d`` and its backward are here too (at the end); ``max_pool1d/3d`` are
compositions above these ops. Integer inputs take the
host path (``fallback.py``); checks and error messages are the cpu backend's.
"""

from __future__ import annotations

import math

import numpy as np

from minitorch_nn import _dtype as dt
from minitorch_nn._ops import aten
from minitorch_nn.backends.common import compute_dtype
from minitorch_nn.backends.cpu.pooling import _check_pool, _pool_args, _pool_out
from minitorch_nn.backends.cuda import storage
from minitorch_nn.backends.cuda._numba import cuda
from minitorch_nn.backends.cuda.copy import cast_contiguous, contiguous
from minitorch_nn.backends.cuda.elementwise import THREADS, blocks_for
from minitorch_nn.backends.cuda.fallback import host_kernel

_cuda = cuda()


@_cuda.jit
def _max_pool(out, arg, x, H, W, OH, OW, kh, kw, sh, sw, ph, pw, dh, dw, n, neg_inf):
    i = _cuda.grid(1)
    if i < n:
        ox = i % OW
        oy = (i // OW) % OH
        plane = i // (OW * OH)
        best = neg_inf
        best_j = 0
        for a in range(kh):
            for b in range(kw):
                y = oy * sh - ph + a * dh
                xx = ox * sw - pw + b * dw
                v = neg_inf  # outside the input: the padding, which never wins
                if 0 <= y < H and 0 <= xx < W:
                    v = x[(plane * H + y) * W + xx]
                if v > best or v != v:
                    best = v
                    best_j = a * kw + b
        out[i] = best
        # the winner's flat index in the (unpadded) plane
        arg[i] = (oy * sh - ph + (best_j // kw) * dh) * W + (ox * sw - pw + (best_j % kw) * dw)


@_cuda.jit
def _max_pool_backward(gx, g, arg, HW, OHW, n):
    i = _cuda.grid(1)
    if i < n:
        plane = i // OHW
        _cuda.atomic.add(gx, plane * HW + arg[i], g[i])  # windows may overlap: several threads, one target


@_cuda.jit(device=True)
def _divisor(oy, ox, H, W, kh, kw, sh, sw, ph, pw, include_pad, override):
    if override != 0:
        return override
    y0 = oy * sh - ph
    x0 = ox * sw - pw
    y1 = min(y0 + kh, H + ph)
    x1 = min(x0 + kw, W + pw)
    if include_pad:
        return (y1 - y0) * (x1 - x0)
    return (min(y1, H) - max(y0, 0)) * (min(x1, W) - max(x0, 0))


@_cuda.jit
def _avg_pool(out, x, H, W, OH, OW, kh, kw, sh, sw, ph, pw, include_pad, override, n, zero):
    i = _cuda.grid(1)
    if i < n:
        ox = i % OW
        oy = (i // OW) % OH
        plane = i // (OW * OH)
        s = zero
        for y in range(max(oy * sh - ph, 0), min(oy * sh - ph + kh, H)):
            for xx in range(max(ox * sw - pw, 0), min(ox * sw - pw + kw, W)):
                s += x[(plane * H + y) * W + xx]
        out[i] = s / _divisor(oy, ox, H, W, kh, kw, sh, sw, ph, pw, include_pad, override)


@_cuda.jit
def _avg_pool_backward(gx, g, H, W, OH, OW, kh, kw, sh, sw, ph, pw, include_pad, override, n, zero):
    i = _cuda.grid(1)
    if i < n:
        x = i % W
        y = (i // W) % H
        plane = i // (W * H)
        # windows oy cover row y when oy*sh <= y + ph < oy*sh + kh
        oy0 = max((y + ph - kh) // sh + 1, 0)
        ox0 = max((x + pw - kw) // sw + 1, 0)
        s = zero
        for oy in range(oy0, min((y + ph) // sh + 1, OH)):
            for ox in range(ox0, min((x + pw) // sw + 1, OW)):
                s += g[(plane * OH + oy) * OW + ox] / _divisor(oy, ox, H, W, kh, kw, sh, sw, ph, pw, include_pad, override)
        gx[i] = s


def _flat(t):
    i = t._impl
    return i.storage[i.offset : i.offset + t.numel()]


def _as_compute(t, cdt):
    return contiguous(t) if t.dtype is cdt else cast_contiguous(t, cdt)


def _listify(v):
    return v if isinstance(v, (list, tuple)) else [v]


def _out_sizes(self, k, s, p, d, ceil_mode):
    h, w = self.shape[-2:]
    out = [_pool_out(n, kk, ss, pp, dd, ceil_mode) for n, kk, ss, pp, dd in zip((h, w), k, s, p, d)]
    if min(out) <= 0:
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, self.shape[-3:]))}). Calculated output size: "
                           f"({self.shape[-3]}x{out[0]}x{out[1]}). Output size is too small")
    return out


def _np(cdt, value):
    return np.dtype(storage.storage_dtype(cdt)).type(value)


_host_max = host_kernel(aten.max_pool2d_with_indices.default)
_host_max_backward = host_kernel(aten.max_pool2d_with_indices_backward.default)
_host_avg = host_kernel(aten.avg_pool2d.default)
_host_avg_backward = host_kernel(aten.avg_pool2d_backward.default)


@aten.max_pool2d_with_indices.default.impl("cuda")
def max_pool2d_with_indices(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    if not self.dtype.is_floating_point:
        return _host_max(self, kernel_size, stride, padding, dilation, ceil_mode)
    k, s, p, d = _pool_args(kernel_size, stride, _listify(padding), _listify(dilation))
    _check_pool(self, k, s, p, "max")
    oh, ow = _out_sizes(self, k, s, p, d, ceil_mode)
    h, w = self.shape[-2:]
    cdt = compute_dtype(self.dtype)
    x = _as_compute(self, cdt)
    lead = tuple(self.shape[:-2])
    out, arg = storage.empty(lead + (oh, ow), cdt), storage.empty(lead + (oh, ow), dt.int64)
    n = out.numel()
    if n:
        _max_pool[blocks_for(n), THREADS](out._impl.storage, arg._impl.storage, _flat(x), h, w, oh, ow, k[0], k[1],
                                          s[0], s[1], p[0], p[1], d[0], d[1], n, _np(cdt, -math.inf))
    return (out if cdt is self.dtype else cast_contiguous(out, self.dtype)), arg


@aten.max_pool2d_with_indices_backward.default.impl("cuda")
def max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
    if not self.dtype.is_floating_point or indices.device.type != "cuda":
        return _host_max_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices)
    # atomics exist for float32/float64 only: 16-bit gradients accumulate in float32
    cdt = compute_dtype(self.dtype)
    g = _as_compute(grad_output, cdt)
    idx = contiguous(indices) if indices.dtype is dt.int64 else cast_contiguous(indices, dt.int64)
    h, w = self.shape[-2:]
    oh, ow = grad_output.shape[-2:]
    from minitorch_nn.backends.cuda.copy import fill_value

    gx = fill_value(storage.empty(tuple(self.shape), cdt), 0)
    n = g.numel()
    if n:
        _max_pool_backward[blocks_for(n), THREADS](gx._impl.storage, _flat(g), _flat(idx), h * w, oh * ow, n)
    return gx if cdt is self.dtype else cast_contiguous(gx, self.dtype)


def _avg_args(self, kernel_size, stride, padding, divisor_override):
    k, s, p, _ = _pool_args(kernel_size, stride, _listify(padding))
    return k, s, p, int(divisor_override) if divisor_override else 0


@aten.avg_pool2d.default.impl("cuda")
def avg_pool2d(self, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None):
    if not self.dtype.is_floating_point:
        return _host_avg(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    k, s, p, override = _avg_args(self, kernel_size, stride, padding, divisor_override)
    _check_pool(self, k, s, p, "avg")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    oh, ow = _out_sizes(self, k, s, p, (1, 1), ceil_mode)
    h, w = self.shape[-2:]
    cdt = compute_dtype(self.dtype)
    x = _as_compute(self, cdt)
    out = storage.empty(tuple(self.shape[:-2]) + (oh, ow), cdt)
    n = out.numel()
    if n:
        _avg_pool[blocks_for(n), THREADS](out._impl.storage, _flat(x), h, w, oh, ow, k[0], k[1], s[0], s[1], p[0], p[1],
                                          bool(count_include_pad), override, n, _np(cdt, 0))
    return out if cdt is self.dtype else cast_contiguous(out, self.dtype)


@aten.avg_pool2d_backward.default.impl("cuda")
def avg_pool2d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    if not self.dtype.is_floating_point:
        return _host_avg_backward(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                  divisor_override)
    k, s, p, override = _avg_args(self, kernel_size, stride, padding, divisor_override)
    cdt = compute_dtype(self.dtype)
    g = _as_compute(grad_output, cdt)
    h, w = self.shape[-2:]
    oh, ow = grad_output.shape[-2:]
    gx = storage.empty(tuple(self.shape), cdt)
    n = gx.numel()
    if n:
        _avg_pool_backward[blocks_for(n), THREADS](gx._impl.storage, _flat(g), h, w, oh, ow, k[0], k[1], s[0], s[1],
                                                   p[0], p[1], bool(count_include_pad), override, n, _np(cdt, 0))
    return gx if cdt is self.dtype else cast_contiguous(gx, self.dtype)


# -- adaptive average pooling (cpu: backends/cpu/adaptive_pool.py) -----------------------------------
# bin i of n over a dim of size H covers [floor(i*H/n), ceil((i+1)*H/n)). Forward: one thread per
# output element adds its bin row by row and divides by the bin's height, then width (PyTorch's
# roundings). Backward: one thread per input element gathers grad / kh / kw from the bins that
# cover it, in PyTorch's bin order.


@_cuda.jit
def _adaptive_avg_pool(out, x, H, W, OH, OW, n, zero):
    i = _cuda.grid(1)
    if i < n:
        ox = i % OW
        oy = (i // OW) % OH
        plane = i // (OW * OH)
        y0 = (oy * H) // OH
        y1 = -((-(oy + 1) * H) // OH)
        x0 = (ox * W) // OW
        x1 = -((-(ox + 1) * W) // OW)
        s = zero
        for y in range(y0, y1):
            for xx in range(x0, x1):
                s += x[(plane * H + y) * W + xx]
        out[i] = s / (y1 - y0) / (x1 - x0)


@_cuda.jit
def _adaptive_avg_pool_backward(gx, g, H, W, OH, OW, n, zero):
    i = _cuda.grid(1)
    if i < n:
        x = i % W
        y = (i // W) % H
        plane = i // (W * H)
        s = zero
        for oy in range(OH):
            y0 = (oy * H) // OH
            y1 = -((-(oy + 1) * H) // OH)
            if y0 <= y < y1:
                for ox in range(OW):
                    x0 = (ox * W) // OW
                    x1 = -((-(ox + 1) * W) // OW)
                    if x0 <= x < x1:
                        s += g[(plane * OH + oy) * OW + ox] / (y1 - y0) / (x1 - x0)
        gx[i] = s


_host_adaptive = host_kernel(aten._adaptive_avg_pool2d.default)
_host_adaptive_backward = host_kernel(aten._adaptive_avg_pool2d_backward.default)


@aten._adaptive_avg_pool2d.default.impl("cuda")
def _adaptive_avg_pool2d(self, output_size):
    from minitorch_nn.backends.cpu.adaptive_pool import check_adaptive_avg_pool2d

    if not self.dtype.is_floating_point:
        return _host_adaptive(self, output_size)
    oh, ow = check_adaptive_avg_pool2d(self, output_size)
    h, w = self.shape[-2:]
    cdt = compute_dtype(self.dtype)
    x = _as_compute(self, cdt)
    out = storage.empty(tuple(self.shape[:-2]) + (oh, ow), cdt)
    n = out.numel()
    if n:
        _adaptive_avg_pool[blocks_for(n), THREADS](out._impl.storage, _flat(x), h, w, oh, ow, n, _np(cdt, 0))
    return out if cdt is self.dtype else cast_contiguous(out, self.dtype)


@aten._adaptive_avg_pool2d_backward.default.impl("cuda")
def _adaptive_avg_pool2d_backward(grad_output, self):
    if not self.dtype.is_floating_point:
        return _host_adaptive_backward(grad_output, self)
    cdt = compute_dtype(self.dtype)
    g = _as_compute(grad_output, cdt)
    h, w = self.shape[-2:]
    oh, ow = grad_output.shape[-2:]
    gx = storage.empty(tuple(self.shape), cdt)
    n = gx.numel()
    if n:
        _adaptive_avg_pool_backward[blocks_for(n), THREADS](gx._impl.storage, _flat(g), h, w, oh, ow, n, _np(cdt, 0))
    return gx if cdt is self.dtype else cast_contiguous(gx, self.dtype)
