"""Indexing cpu kernels: advanced indexing, ``index_put_``, ``gather``, ``scatter``, ``nonzero``.

``aten.index.Tensor`` receives one entry per indexed dim (``None`` for a dim that is not
indexed) and follows numpy's rules for where the indexed dims land, so numpy's own advanced
indexing computes it once the ``None`` entries are turned into full slices.
"""

from __future__ import annotations

import numpy as np

from minitorch_nn import _dtype as dt
from minitorch_nn._ops import aten
from minitorch_nn._shape import wrap_dim
from minitorch_nn.backends.cpu._numpy import as_array, wrap, write_into


def _numpy_index(self, indices):
    key = []
    for i, t in enumerate(indices):
        if t is None:
            key.append(slice(None))
            continue
        arr = as_array(t)
        if arr.dtype == np.uint8:
            arr = arr.astype(bool)
        if arr.dtype != bool:
            size = self.shape[len(key)] if len(key) < self.dim() else 0
            if arr.size and (arr.max() >= size or arr.min() < -size):
                bad = int(arr.max()) if arr.max() >= size else int(arr.min())
                raise IndexError(f"index {bad} is out of bounds for dimension {len(key)} with size {size}")
        key.append(arr)
    return tuple(key)


@aten.index.Tensor.impl("cpu")
def index(self, indices):
    return wrap(np.array(as_array(self)[_numpy_index(self, indices)], copy=True), self.dtype)


@aten.index_put_.default.impl("cpu")
def index_put_(self, indices, values, accumulate=False):
    target = as_array(self)
    key = _numpy_index(self, indices)
    v = as_array(values).astype(target.dtype)
    if accumulate:
        np.add.at(target, key, v)
    else:
        target[key] = v
    self._impl.version.value += 1
    return self


@aten.index_put.default.impl("cpu")
def index_put(self, indices, values, accumulate=False):
    out = wrap(as_array(self).copy(), self.dtype)
    return index_put_(out, indices, values, accumulate)


@aten.index_select.default.impl("cpu")
def index_select(self, dim, index):
    if index.dim() > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    d = wrap_dim(dim, self.dim())
    idx = as_array(index).reshape(-1)
    n = self.shape[d] if self.dim() else 1
    if idx.size and (idx.max() >= n or idx.min() < 0):
        raise IndexError("index out of range in self")
    arr = as_array(self)
    return wrap(np.take(arr, idx, axis=d) if self.dim() else arr.reshape(1)[idx].reshape(()), self.dtype)


@aten.gather.default.impl("cpu")
def gather(self, dim, index, *, sparse_grad=False):
    if index.dtype.is_floating_point or index.dtype is dt.bool:
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    if index.dim() != self.dim() and not (index.dim() <= 1 and self.dim() <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    d = wrap_dim(dim, self.dim())
    arr = as_array(self)
    idx = as_array(index)
    sliced = arr[tuple(slice(0, s) if k != d else slice(None) for k, s in enumerate(idx.shape))]
    return wrap(np.take_along_axis(sliced, idx, axis=d), self.dtype)


def _scatter(self, dim, index, src, op):
    d = wrap_dim(dim, self.dim())
    if self.dim() == 0:
        # a 0-d tensor scatters like a 1-element vector
        out = _scatter(self.reshape(1), 0, index.reshape(-1),
                       src.reshape(-1) if hasattr(src, "reshape") else src, op)
        return out.reshape(())
    out = as_array(self).copy()
    idx = as_array(index)
    src_arr = as_array(src).astype(out.dtype) if hasattr(src, "dtype") and not isinstance(src, (int, float)) else np.full(idx.shape, src, dtype=out.dtype)
    src_arr = src_arr[tuple(slice(0, s) for s in idx.shape)]
    grids = list(np.indices(idx.shape, sparse=True))
    grids[d] = idx
    if op == "add":
        np.add.at(out, tuple(grids), src_arr)
    else:
        out[tuple(grids)] = src_arr
    return out


@aten.scatter.src.impl("cpu")
def scatter_src(self, dim, index, src):
    return wrap(_scatter(self, dim, index, src, None), self.dtype)


@aten.scatter.value.impl("cpu")
def scatter_value(self, dim, index, value):
    return wrap(_scatter(self, dim, index, value, None), self.dtype)


@aten.scatter_.src.impl("cpu")
def scatter_src_(self, dim, index, src):
    return write_into(self, _scatter(self, dim, index, src, None))


@aten.scatter_add.default.impl("cpu")
def scatter_add(self, dim, index, src):
    return wrap(_scatter(self, dim, index, src, "add"), self.dtype)


@aten.scatter_add_.default.impl("cpu")
def scatter_add_(self, dim, index, src):
    return write_into(self, _scatter(self, dim, index, src, "add"))


@aten.masked_select.default.impl("cpu")
def masked_select(self, mask):
    a, m = np.broadcast_arrays(as_array(self), as_array(mask))
    return wrap(a[m].copy(), self.dtype)


@aten.nonzero.default.impl("cpu")
def nonzero(self):
    arr = as_array(self)
    if arr.ndim == 0:
        return wrap(np.zeros((1 if arr else 0, 0), dtype=np.int64), dt.int64)
    return wrap(np.stack(np.nonzero(arr), axis=1).astype(np.int64), dt.int64)


@aten.index_add.default.impl("cpu")
def index_add(self, dim, index, source, *, alpha=1):
    d = wrap_dim(dim, self.dim())
    out = as_array(self).copy()
    key = [slice(None)] * self.dim()
    key[d] = as_array(index)
    np.add.at(out, tuple(key), as_array(source).astype(out.dtype) * alpha)
    return wrap(out, self.dtype)


@aten.index_add_.default.impl("cpu")
def index_add_(self, dim, index, source, *, alpha=1):
    return write_into(self, as_array(index_add(self, dim, index, source, alpha=alpha)))
