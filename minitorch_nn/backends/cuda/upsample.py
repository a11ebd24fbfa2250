"""Nearest-neighbour upsampling of 4-d inputs on the GPU: ``upsample_nearest2d`` and its backward.

Mirrors PyTorch's ``UpSampleNearest2d.cu``, with the source indices of the cpu kernel
(``backends/cpu/upsample.py``'s ``nearest_indices``, computed on the host and cached on the
device). Forward: one thread per output element copies its source element. Backward: one thread
per input element adds the gradients of the outputs that read it; those form a block of rows and
columns (the indices never decrease), walked in row-major order -- a gather, so no atomics.
"""

from __future__ import annotations

import numpy as np

from minitorch_nn._ops import aten
from minitorch_nn.backends.common import compute_dtype
from minitorch_nn.backends.cpu.upsample import check_upsample_nearest2d, nearest_indices
from minitorch_nn.backends.cuda import storage
from minitorch_nn.backends.cuda._numba import cuda
from minitorch_nn.backends.cuda.elementwise import THREADS, blocks_for, device_ints
from minitorch_nn.backends.cuda.pooling import _as_compute, _flat, _np

_cuda = cuda()


@_cuda.jit
def _nearest(out, x, H, W, OH, OW, rows, cols, n):
    i = _cuda.grid(1)
    if i < n:
        ox = i % OW
        oy = (i // OW) % OH
        plane = i // (OW * OH)
        out[i] = x[(plane * H + rows[oy]) * W + cols[ox]]


@_cuda.jit
def _nearest_backward(gx, g, H, W, OH, OW, row_start, col_start, n, zero):
    i = _cuda.grid(1)
    if i < n:
        x = i % W
        y = (i // W) % H
        plane = i // (W * H)
        s = zero
        for oy in range(row_start[y], row_start[y + 1]):
            for ox in range(col_start[x], col_start[x + 1]):
                s += g[(plane * OH + oy) * OW + ox]
        gx[i] = s


def _starts(n_in, n_out, scale):
    """For each input index, the first output reading it (and one past the last: n_in + 1 values)."""
    src = nearest_indices(n_in, n_out, scale)
    return device_ints(tuple(int(v) for v in np.searchsorted(src, np.arange(n_in + 1), side="left")))


@aten.upsample_nearest2d.default.impl("cuda")
def upsample_nearest2d(self, output_size, scales_h=None, scales_w=None):
    if self.dim() != 4:
        raise RuntimeError(f"Non-empty 4D data tensor expected but got a tensor with sizes {list(self.shape)}")
    check_upsample_nearest2d(list(self.shape), list(output_size))
    oh, ow = output_size
    h, w = self.shape[-2:]
    x = _as_compute(self, self.dtype)   # (a copy: any dtype, bool and integers too)
    out = storage.empty(tuple(self.shape[:2]) + (oh, ow), self.dtype)
    n = out.numel()
    if n:
        rows = device_ints(tuple(int(v) for v in nearest_indices(h, oh, scales_h)))
        cols = device_ints(tuple(int(v) for v in nearest_indices(w, ow, scales_w)))
        _nearest[blocks_for(n), THREADS](out._impl.storage, _flat(x), h, w, oh, ow, rows, cols, n)
    return out


@aten.upsample_nearest2d_backward.default.impl("cuda")
def upsample_nearest2d_backward(grad_output, output_size, input_size, scales_h=None, scales_w=None):
    from minitorch_nn.backends.cuda.copy import cast_contiguous

    check_upsample_nearest2d(list(input_size), list(output_size))
    oh, ow = output_size
    h, w = input_size[-2:]
    cdt = compute_dtype(grad_output.dtype)
    g = _as_compute(grad_output, cdt)
    gx = storage.empty(tuple(input_size), cdt)
    n = gx.numel()
    if n:
        _nearest_backward[blocks_for(n), THREADS](gx._impl.storage, _flat(g), h, w, oh, ow, _starts(h, oh, scales_h),
                                                  _starts(w, ow, scales_w), n, _np(cdt, 0))
    return gx if cdt is grad_output.dtype else cast_contiguous(gx, grad_output.dtype)
