"""Nearest-neighbour upsampling of 4-d inputs (cpu): ``upsample_nearest2d`` and
``upsample_nearest2d_backward``.

Mirrors PyTorch's ``aten/src/ATen/native/UpSampleNearest2d.cpp`` and its cpu kernel
(``native/cpu/UpSampleKernel.cpp``). Output row ``o`` reads input row ``nearest_idx(o)``: ``o`` itself
for an equal size, ``o // 2`` for twice the size, else ``min(floor(o * scale), in - 1)`` computed in
float32 as PyTorch does, with ``scale = 1 / scales_h`` when a scale factor was given and
``in / out`` otherwise. The backward adds each output gradient into its source element, output
after output in row-major order (the order of PyTorch's loop).

Only ``F.interpolate(mode="nearest")`` on 4-d inputs comes here; the other modes and ranks are
still compositions of ``index_select`` in ``nn/functional.py``.
"""

from __future__ import annotations

import numpy as np

from minitorch_nn._ops import aten
from minitorch_nn.backends.common import compute_dtype
from minitorch_nn.backends.cpu._numpy import as_array, wrap


def nearest_indices(n_in, n_out, scale):
    """The input index each of the ``n_out`` outputs reads (PyTorch's ``nearest_idx``)."""
    if n_out == n_in:
        return np.arange(n_out)
    if n_out == 2 * n_in:
        return np.arange(n_out) >> 1
    s = np.float32(1.0 / scale) if scale is not None and scale > 0 else np.float32(n_in) / np.float32(n_out)
    src = np.floor(np.arange(n_out, dtype=np.float32) * s).astype(np.int64)
    return np.minimum(src, n_in - 1)


def check_upsample_nearest2d(input_size, output_size):
    if len(output_size) != 2:
        raise RuntimeError(f"It is expected output_size equals to 2, but got size {len(output_size)}")
    if len(input_size) != 4:
        raise RuntimeError(f"It is expected input_size equals to 4, but got size {len(input_size)}")
    n, c, h, w = input_size
    oh, ow = output_size
    if not (h > 0 and w > 0 and oh > 0 and ow > 0):
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input (H: {h}, W: {w}) "
                           f"output (H: {oh}, W: {ow})")


@aten.upsample_nearest2d.default.impl("cpu")
def upsample_nearest2d(self, output_size, scales_h=None, scales_w=None):
    if self.dim() != 4:
        raise RuntimeError(f"Non-empty 4D data tensor expected but got a tensor with sizes {list(self.shape)}")
    check_upsample_nearest2d(list(self.shape), list(output_size))
    oh, ow = output_size
    h, w = self.shape[-2:]
    rows = nearest_indices(h, oh, scales_h)
    cols = nearest_indices(w, ow, scales_w)
    x = as_array(self)
    return wrap(np.ascontiguousarray(x[:, :, rows[:, None], cols[None, :]]), self.dtype)


@aten.upsample_nearest2d_backward.default.impl("cpu")
def upsample_nearest2d_backward(grad_output, output_size, input_size, scales_h=None, scales_w=None):
    check_upsample_nearest2d(list(input_size), list(output_size))
    n, c, h, w = input_size
    oh, ow = output_size
    cd = compute_dtype(grad_output.dtype)
    g = as_array(grad_output, cd)
    grad = np.zeros((n, c, h, w), cd.numpy_dtype)
    # The outputs reading input (y, x) form a block (the source indices never decrease): add the
    # block's gradients one offset (r, c) at a time, r outer, which is the row-major order in
    # which PyTorch's loop adds them (np.add.at would too, but far slower). A masked-out offset
    # adds 0, which changes no sum that started from +0.
    row_start, row_count = _blocks(h, oh, scales_h)
    col_start, col_count = _blocks(w, ow, scales_w)
    zero = np.zeros((), cd.numpy_dtype)
    for r in range(int(row_count.max(initial=0))):
        rows = np.minimum(row_start + r, oh - 1)
        for c in range(int(col_count.max(initial=0))):
            cols = np.minimum(col_start + c, ow - 1)
            inside = (r < row_count)[:, None] & (c < col_count)[None, :]
            grad += np.where(inside, g[:, :, rows[:, None], cols[None, :]], zero)
    return wrap(grad, grad_output.dtype)


def _blocks(n_in, n_out, scale):
    """For each input index: the first output reading it, and how many do."""
    edges = np.searchsorted(nearest_indices(n_in, n_out, scale), np.arange(n_in + 1), side="left")
    return edges[:-1], np.diff(edges)
