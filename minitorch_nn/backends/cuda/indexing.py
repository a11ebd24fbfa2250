"""Indexing on the GPU: ``gather``, ``index_select`` and ``embedding``, one thread per output.

Mirrors PyTorch's ``ScatterGatherKernel.cu`` / ``Indexing.cu`` (the gathering half). Each thread
takes one output element, turns its number into a multi-index (``to_index`` from
``elementwise.py``), reads the index tensor to learn which position to take along ``dim``,
replaces that coordinate, and reads the source through its strides:

* ``gather``: the index tensor has the output's shape: ``j = index[out_index]``;
* ``index_select``: the index is a vector: ``j = index[out_index[dim]]``;
* ``embedding``: ``index_select`` of the weight's rows, shaped like the indices plus one dim.

* ``index`` (``x[i, j]``) and ``index_put_`` (``x[i, j] = v``, ``+=`` with ``accumulate``, using
  atomic adds) for integer index tensors on neighbouring dims: see the section at the end.

An out-of-range index does not crash the GPU: the thread sets a flag, and the launcher re-runs the
op on the host path, which raises the cpu backend's error (PyTorch raises a device-side assert).
Scatters are in ``scatter.py``, masks (``masked_select``, ``nonzero``) in ``masked.py``.
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


# -- advanced indexing: ``x[i, j]`` (``index.Tensor``) and ``x[i, j] = v`` (``index_put_``) -----------
# The indexed dims must be next to each other (``x[:, i, j]``, not ``x[i, :, j]``) and indexed by
# integer tensors or bool masks (a mask becomes the columns of its ``nonzero``); split index dims
# take the host path. The index
# tensors are broadcast to one shape I and stacked into one (K, *I) array, so that a kernel gets
# them as a single device array. The result (or the region written) has the shape
# ``self.shape[:first] + I + self.shape[first + K:]``: each thread takes one element of it.


@_cuda.jit(device=True)
def _advanced_position(i, r, at, res_shape, base_sizes, base_strides, base_off, idx, n_idx, first, k_count, i_nd):
    """The position in base that result element i reads (or writes); -1 for an out-of-range index.
    On return ``r`` holds i's multi-index in the result."""
    to_index(i, res_shape, r)
    for d in range(first):  # the dims before the indexed ones are taken as they are
        at[d] = r[d]
    ipos = 0  # position in the broadcast index shape I
    for d in range(i_nd):
        ipos = ipos * res_shape[first + d] + r[first + d]
    for k in range(k_count):
        size = base_sizes[first + k]
        j = idx[k * n_idx + ipos]
        if j < 0:
            j += size  # negative indices count from the end
        if j < 0 or j >= size:
            return -1
        at[first + k] = j
    for d in range(first + k_count, len(base_sizes)):  # the dims after them, too
        at[d] = r[d - k_count + i_nd]
    return index_to_position(at, base_strides, base_off)


@_cuda.jit
def _advanced_get(res, res_shape, n, base, base_sizes, base_strides, base_off, idx, n_idx, first, k_count, i_nd,
                  bad):
    i = _cuda.grid(1)
    if i < n:
        r = _cuda.local.array(MAX_DIMS, np.int64)
        at = _cuda.local.array(MAX_DIMS, np.int64)
        pos = _advanced_position(i, r, at, res_shape, base_sizes, base_strides, base_off, idx, n_idx, first, k_count,
                                 i_nd)
        if pos < 0:
            bad[0] = 1
        else:
            res[i] = base[pos]


@_cuda.jit
def _advanced_put(res_shape, n, base, base_sizes, base_strides, base_off, idx, n_idx, first, k_count, i_nd,
                  vals, vals_strides, vals_off, bad):
    i = _cuda.grid(1)
    if i < n:
        r = _cuda.local.array(MAX_DIMS, np.int64)
        at = _cuda.local.array(MAX_DIMS, np.int64)
        pos = _advanced_position(i, r, at, res_shape, base_sizes, base_strides, base_off, idx, n_idx, first, k_count,
                                 i_nd)
        if pos < 0:
            bad[0] = 1
        else:
            base[pos] = vals[index_to_position(r, vals_strides, vals_off)]


@_cuda.jit
def _advanced_add(res_shape, n, base, base_sizes, base_strides, base_off, idx, n_idx, first, k_count, i_nd,
                  vals, vals_strides, vals_off, bad):
    """``_advanced_put`` with ``accumulate``: repeated indices add up, so the add is atomic."""
    i = _cuda.grid(1)
    if i < n:
        r = _cuda.local.array(MAX_DIMS, np.int64)
        at = _cuda.local.array(MAX_DIMS, np.int64)
        pos = _advanced_position(i, r, at, res_shape, base_sizes, base_strides, base_off, idx, n_idx, first, k_count,
                                 i_nd)
        if pos < 0:
            bad[0] = 1
        else:
            _cuda.atomic.add(base, pos, vals[index_to_position(r, vals_strides, vals_off)])


def _masks_to_indices(self, indices):
    """A bool mask over k dims becomes k integer index tensors: the columns of ``nonzero(mask)``."""
    out = []
    for t in indices:
        if t is None or t.dtype is not dt.bool:
            out.append(t)
            continue
        at = len(out)
        if t.device.type != "cuda" or t.dim() == 0 or tuple(t.shape) != tuple(self.shape[at : at + t.dim()]):
            return None  # the host path raises the shape error
        from minitorch_nn.backends.cuda.masked import nonzero

        nz = nonzero(t)  # (count, k), from masked.py's count-then-write kernels
        k = t.dim()
        out.extend(storage.wrap(nz._impl.storage, (nz.shape[0],), dt.int64, strides=(k,), offset=j) for j in range(k))
    return out


def _index_plan(self, indices):
    """(first, stacked (K, *I) int64 indices, I, result shape), or None when the kernel cannot do it."""
    from minitorch_nn._shape import broadcast_shapes
    from minitorch_nn.backends.cuda.copy import copy_into

    indices = _masks_to_indices(self, indices)
    if indices is None:
        return None
    used = [k for k, t in enumerate(indices) if t is not None]
    if not used or used != list(range(used[0], used[-1] + 1)) or len(indices) > self.dim():
        return None
    ts = [indices[k] for k in used]
    if not all(t.device.type == "cuda" and t.dtype in (dt.int64, dt.int32) for t in ts):
        return None
    try:
        shape_i = tuple(broadcast_shapes(*[tuple(t.shape) for t in ts]))
    except (RuntimeError, ValueError):
        return None
    first, k = used[0], len(ts)
    n_i = 1
    for s in shape_i:
        n_i *= s
    stacked = storage.empty((k,) + shape_i, dt.int64)
    si = stacked._impl
    for j, t in enumerate(ts):  # copy_into broadcasts t to I and casts int32 to int64
        copy_into(storage.wrap(si.storage, shape_i, dt.int64, offset=j * n_i), t)
    res_shape = tuple(self.shape[:first]) + shape_i + tuple(self.shape[first + k:])
    return first, stacked, shape_i, res_shape


def _run_advanced(res, res_shape, base, plan, put, accumulate, vals):
    """Launch the get / put / add kernel; False if an index was out of range."""
    first, stacked, shape_i, _ = plan
    n = 1
    for s in res_shape:
        n *= s
    if n == 0:
        return True
    bi = base._impl
    n_i = stacked.numel() // max(stacked.shape[0], 1)
    bad = _cuda.to_device(np.zeros(1, dtype=np.int32))
    where = (device_ints(res_shape), n, bi.storage, device_ints(tuple(bi.sizes)), device_ints(tuple(bi.strides)),
             bi.offset, stacked._impl.storage, n_i, first, stacked.shape[0], len(shape_i))
    if not put:
        _advanced_get[blocks_for(n), THREADS](res._impl.storage, *where, bad)
    else:
        vi = vals._impl
        kernel = _advanced_add if accumulate else _advanced_put
        kernel[blocks_for(n), THREADS](*where, vi.storage, device_ints(tuple(vi.strides)), vi.offset, bad)
    return not bad.copy_to_host()[0]


_host_index = host_kernel(aten.index.Tensor)


@aten.index.Tensor.impl("cuda")
def index(self, indices):
    plan = _index_plan(self, indices) if self.dim() else None
    if plan is not None:
        out = storage.empty(plan[3], self.dtype)
        if _run_advanced(out, plan[3], self, plan, False, False, None):
            return out
    return _host_index(self, indices)


def _values_view(values, res_shape, dtype):
    """``values`` cast to ``dtype`` and broadcast (by strides) to ``res_shape``, or None if it cannot be."""
    from minitorch_nn._shape import broadcast_shapes
    from minitorch_nn._tensor import _make_view

    if values.device.type != "cuda":
        return None
    try:
        if tuple(broadcast_shapes(tuple(values.shape), res_shape)) != tuple(res_shape):
            return None
    except (RuntimeError, ValueError):
        return None
    if values.dtype is not dtype:
        from minitorch_nn.backends.cuda.copy import cast_contiguous

        values = cast_contiguous(values, dtype)
    vi = values._impl
    shift = len(res_shape) - len(vi.sizes)
    strides = [0] * shift + [0 if s == 1 else st for s, st in zip(vi.sizes, vi.strides)]
    return _make_view(values, res_shape, strides, vi.offset)


def _put(self, indices, values, accumulate):
    """index_put_ into a copy of self; the copy, or None when the host path must do it."""
    from minitorch_nn.backends.cuda.copy import cast_contiguous

    if self.dim() == 0 or self.dtype is dt.bool or (accumulate and self.dtype not in (dt.float32, dt.float64, dt.int32, dt.int64)):
        return None
    plan = _index_plan(self, indices)
    if plan is None:
        return None
    vals = _values_view(values, plan[3], self.dtype)
    if vals is None:
        return None
    out = cast_contiguous(self, self.dtype)  # written into; self stays unchanged if an index is bad
    return out if _run_advanced(None, plan[3], out, plan, True, bool(accumulate), vals) else None


_host_index_put = host_kernel(aten.index_put.default)
_host_index_put_ = host_kernel(aten.index_put_.default)


@aten.index_put.default.impl("cuda")
def index_put(self, indices, values, accumulate=False):
    out = _put(self, indices, values, accumulate)
    return out if out is not None else _host_index_put(self, indices, values, accumulate)


def _put_into_overlapping(self, indices, values, accumulate):
    """index_put_ into a self whose elements share memory (an expanded tensor): the cpu kernel
    runs on a host copy of the whole storage read through self's strides, so only the indexed
    elements are written, with the cpu backend's warning and results; the storage goes back."""
    from minitorch_nn._C import TensorBase, TensorImpl, _wrap
    from minitorch_nn._device import CPU
    from minitorch_nn._tensor import Tensor

    impl = self._impl
    flat = impl.storage.copy_to_host()
    host_flat = flat.view(dt.bfloat16.numpy_dtype) if impl.dtype is dt.bfloat16 else flat
    host_self = _wrap(Tensor, TensorImpl(host_flat, tuple(impl.sizes), tuple(impl.strides), impl.offset,
                                         impl.dtype, CPU))
    host_indices = [i.cpu() if isinstance(i, TensorBase) else i for i in indices]
    host_values = values.cpu() if isinstance(values, TensorBase) else values
    aten.index_put_.default.kernel_for("cpu")(host_self, host_indices, host_values, accumulate)
    impl.storage.copy_to_device(flat)
    impl.version.value += 1
    return self


@aten.index_put_.default.impl("cuda")
def index_put_(self, indices, values, accumulate=False):
    from minitorch_nn.backends.cuda.copy import copy_into
    from minitorch_nn.backends.layout import has_internal_overlap

    if has_internal_overlap(self):
        return _put_into_overlapping(self, indices, values, accumulate)
    out = _put(self, indices, values, accumulate)
    if out is None:
        return _host_index_put_(self, indices, values, accumulate)
    copy_into(self, out)
    self._impl.version.value += 1
    return self
