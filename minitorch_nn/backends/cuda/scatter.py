"""Scattering on the GPU: ``scatter(_add)``, ``index_add``, ``embedding_dense_backward``; atomics.

Mirrors PyTorch's ``ScatterGatherKernel.cu`` and ``Indexing.cu`` (the writing half of
``indexing.py``'s gathers). The result starts as a copy of ``self`` (or zeros); then **one thread
per source element** computes where that element goes and writes it there:

* ``scatter``: ``out[... index[i] ...] = src[i]`` -- ``i`` runs over the index tensor's shape and
  the index value replaces coordinate ``dim``;
* ``index_add``: ``out[... index[i_dim] ...] += alpha * source[i]`` -- ``i`` runs over ``source``;
* ``embedding_dense_backward``: row ``indices[r]`` of the weight gradient gets ``grad[r]`` added.

Several threads may hit the same place (repeated indices). For a sum that is a race, so the adds
are **atomic** (``cuda.atomic.add``: read, add and write as one step). For a plain ``scatter``
the last writer wins, in no defined order -- exactly PyTorch's documented behaviour.

Atomics exist for 32/64-bit numbers only: float16/bfloat16/bool take the host path, and so do
out-of-range indices (a flag, then ``fallback.py`` raises the cpu backend's error).
"""

from __future__ import annotations

import numpy as np

from minitorch_nn import _dtype as dt
from minitorch_nn._C import TensorBase
from minitorch_nn._ops import aten
from minitorch_nn._shape import wrap_dim
from minitorch_nn.backends.cuda import storage
from minitorch_nn.backends.cuda._numba import cuda
from minitorch_nn.backends.cuda.copy import cast_contiguous, copy_into, fill_value
from minitorch_nn.backends.cuda.elementwise import (
    MAX_DIMS,
    THREADS,
    blocks_for,
    device_ints,
    index_to_position,
    scalar_operand,
    to_index,
)
from minitorch_nn.backends.cuda.fallback import host_kernel
from minitorch_nn.backends.layout import check_inplace_overlap

_cuda = cuda()
_ATOMIC = (dt.float32, dt.float64, dt.int32, dt.int64)  # what cuda.atomic.add supports


@_cuda.jit(device=True)
def _scatter_target(i, at, out_strides, idx, idx_shape, idx_strides, idx_off, dim, dim_size):
    """Where index element i sends its value: a position in out, or -1 for an out-of-range index.
    On return ``at`` holds i's multi-index (before the index value replaced coordinate dim)."""
    to_index(i, idx_shape, at)
    j = idx[index_to_position(at, idx_strides, idx_off)]
    if j < 0 or j >= dim_size:
        return -1
    keep = at[dim]
    at[dim] = j
    pos = index_to_position(at, out_strides, 0)
    at[dim] = keep
    return pos


@_cuda.jit
def _scatter(out, out_strides, src, src_strides, src_off, idx, idx_shape, idx_strides, idx_off, dim, dim_size,
             n, bad):
    """For each element i of the index tensor: out[i with coordinate dim := index[i]] = src[i]."""
    i = _cuda.grid(1)
    if i < n:
        at = _cuda.local.array(MAX_DIMS, np.int64)
        pos = _scatter_target(i, at, out_strides, idx, idx_shape, idx_strides, idx_off, dim, dim_size)
        if pos < 0:
            bad[0] = 1
        else:
            out[pos] = src[index_to_position(at, src_strides, src_off)]


@_cuda.jit
def _scatter_add(out, out_strides, src, src_strides, src_off, idx, idx_shape, idx_strides, idx_off, dim, dim_size,
                 n, bad):
    """The same, adding: several threads may hit one position, so the add is atomic."""
    i = _cuda.grid(1)
    if i < n:
        at = _cuda.local.array(MAX_DIMS, np.int64)
        pos = _scatter_target(i, at, out_strides, idx, idx_shape, idx_strides, idx_off, dim, dim_size)
        if pos < 0:
            bad[0] = 1
        else:
            _cuda.atomic.add(out, pos, src[index_to_position(at, src_strides, src_off)])


@_cuda.jit
def _index_add_kernel(out, out_strides, src, src_shape, src_strides, src_off, idx, idx_stride, idx_off, dim, dim_size,
               alpha, n, bad):
    """For each element i of source: out[i with coordinate dim := index[i[dim]]] += alpha * source[i]."""
    i = _cuda.grid(1)
    if i < n:
        at = _cuda.local.array(MAX_DIMS, np.int64)
        to_index(i, src_shape, at)
        v = src[index_to_position(at, src_strides, src_off)]
        j = idx[idx_off + at[dim] * idx_stride]
        if j < 0 or j >= dim_size:
            bad[0] = 1
            return
        at[dim] = j
        _cuda.atomic.add(out, index_to_position(at, out_strides, 0), alpha * v)


@_cuda.jit
def _embedding_backward(out, g, idx, idx_off, counts, padding_idx, num_weights, width, n, scale, bad):
    """grad row r goes to weight row indices[r]; one thread per element of grad (rows x width)."""
    i = _cuda.grid(1)
    if i < n:
        r = i // width
        row = idx[idx_off + r]
        if row < 0 or row >= num_weights:
            bad[0] = 1
            return
        if row == padding_idx:
            return  # the padding row gets no gradient
        v = g[i]
        if scale:
            v = v / counts[row]
        _cuda.atomic.add(out, row * width + i % width, v)


@_cuda.jit
def _count_rows(counts, idx, idx_off, n):
    i = _cuda.grid(1)
    if i < n:
        row = idx[idx_off + i]
        if 0 <= row < counts.shape[0]:  # a bad index is reported by _embedding_backward
            _cuda.atomic.add(counts, row, 1)


def _flag():
    return _cuda.to_device(np.zeros(1, dtype=np.int32))


def _is_int_index(index):
    return isinstance(index, TensorBase) and index.device.type == "cuda" and index.dtype is dt.int64


def _copy_of(self):
    """A fresh contiguous copy of ``self``: the result that the threads write into."""
    return cast_contiguous(self, self.dtype)


# -- scatter ------------------------------------------------------------------------------------------


def _scatter_ok(self, dim, index, src):
    if not _is_int_index(index) or self.dim() == 0 or index.dim() != self.dim() or self.dtype is dt.bool:
        return False
    if isinstance(src, TensorBase):
        if src.device.type != "cuda" or src.dtype is not self.dtype or src.dim() != self.dim():
            return False
        if any(index.shape[k] > src.shape[k] for k in range(self.dim())):
            return False
    d = wrap_dim(dim, self.dim())
    return all(index.shape[k] <= self.shape[k] for k in range(self.dim()) if k != d)


def scatter_into(out, dim, index, src, add):
    """Scatter ``src`` (a tensor or a number) into contiguous ``out`` in place; False on a bad index."""
    d = wrap_dim(dim, out.dim())
    if not isinstance(src, TensorBase):
        src = scalar_operand(src, out.dtype)
        src_strides, src_off = (0,) * out.dim(), 0  # a number: every thread reads the same element
    else:
        src_strides, src_off = tuple(src._impl.strides), src._impl.offset
    n = index.numel()
    if n == 0:
        return True
    ii, oi = index._impl, out._impl
    bad = _flag()
    kernel = _scatter_add if add else _scatter  # (atomics exist for 32/64-bit numbers only)
    kernel[blocks_for(n), THREADS](
        oi.storage, device_ints(tuple(oi.strides)), src._impl.storage, device_ints(src_strides), src_off, ii.storage,
        device_ints(tuple(ii.sizes)), device_ints(tuple(ii.strides)), ii.offset, d, oi.sizes[d], n, bad,
    )
    return not bad.copy_to_host()[0]


def _scatter_op(op, add, inplace):
    host = host_kernel(op)

    def kernel(self, dim, index, src):
        if inplace:
            check_inplace_overlap(self)  # PyTorch's refusal of an expanded self, on every path
        if not _scatter_ok(self, dim, index, src) or (add and self.dtype not in _ATOMIC):
            return host(self, dim, index, src)
        out = _copy_of(self)
        if not scatter_into(out, dim, index, src, add):
            return host(self, dim, index, src)  # the cpu error for the out-of-range index
        if not inplace:
            return out
        copy_into(self, out)
        self._impl.version.value += 1
        return self

    op.impl("cuda")(kernel)


_scatter_op(aten.scatter.src, False, False)
_scatter_op(aten.scatter.value, False, False)
_scatter_op(aten.scatter_.src, False, True)
_scatter_op(aten.scatter_add.default, True, False)
_scatter_op(aten.scatter_add_.default, True, True)


# -- index_add --------------------------------------------------------------------------------------


def _index_add_ok(self, dim, index, source, alpha):
    if not (self.dim() > 0 and self.dtype in _ATOMIC and isinstance(source, TensorBase) and source.dtype is self.dtype
            and source.device.type == "cuda" and source.dim() == self.dim() and _is_int_index(index)
            and index.dim() == 1 and not isinstance(alpha, bool)):
        return False
    if not self.dtype.is_floating_point and not isinstance(alpha, int):
        return False
    d = wrap_dim(dim, self.dim())
    return source.shape[d] == index.shape[0] and all(
        source.shape[k] == self.shape[k] for k in range(self.dim()) if k != d)


def _index_add(self, dim, index, source, alpha):
    d = wrap_dim(dim, self.dim())
    out = _copy_of(self)
    n = source.numel()
    if n:
        oi, si, ii = out._impl, source._impl, index._impl
        bad = _flag()
        _index_add_kernel[blocks_for(n), THREADS](
            oi.storage, device_ints(tuple(oi.strides)), si.storage, device_ints(tuple(si.sizes)),
            device_ints(tuple(si.strides)), si.offset, ii.storage, ii.strides[0], ii.offset, d, oi.sizes[d],
            self.dtype.numpy_dtype.type(alpha), n, bad,
        )
        if bad.copy_to_host()[0]:
            return None
    return out


_host_index_add = host_kernel(aten.index_add.default)
_host_index_add_ = host_kernel(aten.index_add_.default)


@aten.index_add.default.impl("cuda")
def index_add(self, dim, index, source, *, alpha=1):
    r = _index_add(self, dim, index, source, alpha) if _index_add_ok(self, dim, index, source, alpha) else None
    return r if r is not None else _host_index_add(self, dim, index, source, alpha=alpha)


@aten.index_add_.default.impl("cuda")
def index_add_(self, dim, index, source, *, alpha=1):
    check_inplace_overlap(self)
    r = _index_add(self, dim, index, source, alpha) if _index_add_ok(self, dim, index, source, alpha) else None
    if r is None:
        return _host_index_add_(self, dim, index, source, alpha=alpha)
    copy_into(self, r)
    self._impl.version.value += 1
    return self


# -- embedding backward -----------------------------------------------------------------------------

_host_embedding_backward = host_kernel(aten.embedding_dense_backward.default)


@aten.embedding_dense_backward.default.impl("cuda")
def embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    d = grad_output.dtype
    if d not in (dt.float32, dt.float64) or indices.device.type != "cuda" or indices.dtype is not dt.int64:
        return _host_embedding_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq)
    width = grad_output.shape[-1]
    g = cast_contiguous(grad_output, d)
    idx = cast_contiguous(indices, dt.int64)
    rows = idx.numel()
    out = fill_value(storage.empty((num_weights, width), d), 0)
    counts = fill_value(storage.empty((max(num_weights, 1),), d), 0)
    n = rows * width
    if n:
        ii = idx._impl
        if scale_grad_by_freq:  # each row's gradient is divided by how often its index occurs
            _count_rows[blocks_for(rows), THREADS](counts._impl.storage, ii.storage, ii.offset, rows)
        bad = _flag()
        _embedding_backward[blocks_for(n), THREADS](
            out._impl.storage, g._impl.storage, ii.storage, ii.offset, counts._impl.storage, padding_idx, num_weights,
            width, n, bool(scale_grad_by_freq), bad,
        )
        if bad.copy_to_host()[0]:
            return _host_embedding_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq)
    return out
