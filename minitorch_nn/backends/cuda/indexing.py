"""Indexing on the GPU: ``gather``, ``index_select`` and ``embedding``, one thread per output.

Mirrors PyTorch's ``ScatterGatherKernel.cu`` / ``Indexing.cu`` (the gathering half). Each thread
takes one output element, turns its number into a multi-index (``to_index`` from
``elementwise.py``), reads the index tensor to learn which position to take along ``dim``,
replaces that coordinate, and reads the source through its strides:

* ``gather``: the index tensor has the output's shape: ``j = index[out_index]``;
* ``index_select``: the index is a vector: ``j = index[out_index[dim]]``;
* ``embedding``: ``index_select`` of the weight's rows, shaped like the indices plus one dim.

An out-of-range index does not crash the GPU: the thread sets a flag, and the launcher re-runs the
op on the host path, which raises the cpu backend's error (PyTorch raises a device-side assert).
Scatter, ``index``/``index_put_`` with several tensors, ``masked_select`` and ``nonzero`` take the
host path.
"""

from __future__ import annotations

import numpy as np

from minitorch_nn import _dtype as dt
from minitorch_nn._ops import aten
from minitorch_nn._shape import wrap_dim
from minitorch_nn.backends.cuda import storage
from minitorch_nn.backends.cuda._numba import cuda
from minitorch_nn.backends.cuda.elementwise import (
    MAX_DIMS,
    THREADS,
    blocks_for,
    device_ints,
    index_to_position,
    to_index,
)
from minitorch_nn.backends.cuda.fallback import host_kernel

_cuda = cuda()


@_cuda.jit
def _take_along(out, out_shape, n, src, src_strides, src_off, idx, idx_strides, idx_off, dim, dim_size, vector, bad):
    """out[i] = src at out's index i with coordinate ``dim`` replaced by the index tensor's value."""
    i = _cuda.grid(1)
    if i < n:
        index = _cuda.local.array(MAX_DIMS, np.int64)
        to_index(i, out_shape, index)
        if vector:  # index_select: a 1-d index, read at the output's position along dim
            j = idx[idx_off + index[dim] * idx_strides[0]]
        else:       # gather: the index tensor has the output's shape
            j = idx[index_to_position(index, idx_strides, idx_off)]
        if j < 0 or j >= dim_size:
            bad[0] = 1
            return
        index[dim] = j
        out[i] = src[index_to_position(index, src_strides, src_off)]


def _launch(self, d, index, out_shape, vector):
    """Run ``_take_along``; returns the result, or None if an index was out of range."""
    out = storage.empty(out_shape, self.dtype)
    n = out.numel()
    if n:
        si, ii = self._impl, index._impl
        bad = _cuda.to_device(np.zeros(1, dtype=np.int32))
        _take_along[blocks_for(n), THREADS](
            out._impl.storage, device_ints(tuple(out_shape)), n, si.storage, device_ints(tuple(si.strides)), si.offset,
            ii.storage, device_ints(tuple(ii.strides)), ii.offset, d, si.sizes[d], vector, bad,
        )
        if bad.copy_to_host()[0]:
            return None
    return out


def _int_index(index):
    return index.dtype in (dt.int64, dt.int32) and index.device.type == "cuda"


_host_gather = host_kernel(aten.gather.default)
_host_index_select = host_kernel(aten.index_select.default)
_host_embedding = host_kernel(aten.embedding.default)


@aten.gather.default.impl("cuda")
def gather(self, dim, index, *, sparse_grad=False):
    ok = _int_index(index) and self.dim() > 0 and index.dim() == self.dim()
    if ok:
        d = wrap_dim(dim, self.dim())
        ok = all(index.shape[k] <= self.shape[k] for k in range(self.dim()) if k != d)
    r = _launch(self, d, index, tuple(index.shape), False) if ok else None
    return r if r is not None else _host_gather(self, dim, index, sparse_grad=sparse_grad)


@aten.index_select.default.impl("cuda")
def index_select(self, dim, index):
    r = None
    if _int_index(index) and self.dim() > 0 and index.dim() == 1:
        d = wrap_dim(dim, self.dim())
        shape = tuple(self.shape[:d]) + (index.shape[0],) + tuple(self.shape[d + 1:])
        r = _launch(self, d, index, shape, True)
    return r if r is not None else _host_index_select(self, dim, index)


@aten.embedding.default.impl("cuda")
def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    r = None
    if _int_index(indices) and weight.dim() == 2:
        flat = indices if indices.dim() == 1 else indices.contiguous().view(-1)
        r = _launch(weight, 0, flat, (flat.shape[0], weight.shape[1]), True)
    if r is None:
        return _host_embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse)
    return storage.wrap(r._impl.storage, tuple(indices.shape) + (weight.shape[1],), weight.dtype)
