"""Indexing cpu kernels: advanced indexing, ``index_put_``, ``gather``, ``scatter``, ``nonzero``.

``aten.index.Tensor`` receives one entry per indexed dim (``None`` for a dim that is not
indexed) and follows numpy's rules for where the indexed dims land, so numpy's own advanced
indexing computes it once the ``None`` entries are turned into full slices.
"""

from __future__ import annotations

import numpy as np

from minitorch_nn import _dtype as dt
from minitorch_nn._C import TensorBase
from minitorch_nn._ops import aten
from minitorch_nn._shape import wrap_dim
from minitorch_nn._warnings import warn_user
from minitorch_nn.backends.common import type_name
from minitorch_nn.backends.cpu._numpy import as_array, wrap, wrap_strided, write_into
from minitorch_nn.backends.layout import (
    check_inplace_overlap,
    check_no_overlap,
    has_internal_overlap,
)


_max = np.maximum.reduce  # (np.max without its Python-level argument handling)
_min = np.minimum.reduce
_MASK_DTYPES = (np.dtype(bool), np.dtype(np.uint8))


def _numpy_index(self, indices, check_bounds=True):
    """``indices`` (``Tensor?[]``, one entry per dim from the first) as a numpy index key, after
    PyTorch's checks: the index tensors must broadcast together, and each index value must be
    in range. As in PyTorch's kernel, which visits the output elements in order and checks each
    one's index in every indexed dim, the first bad value in that order is reported (its dim
    counted among the indexed dims only), and nothing is checked when no element is picked.

    ``check_bounds=False`` leaves the values unchecked, for a caller that lets numpy find a bad
    one (numpy raises IndexError for the same values) and calls again to get PyTorch's error."""
    arrays = [None if t is None else as_array(t) for t in indices]
    sizes = self._impl.sizes
    ndim = len(sizes)
    key, checks, shapes = [], [], []  # checks: (ordinal, index array, size of its dim)
    dim = ordinal = 0
    for arr in arrays:
        if arr is None:
            key.append(slice(None))
            dim += 1
            continue
        if arr.dtype in _MASK_DTYPES:  # a k-d mask stands for k index tensors of its nonzero count
            arr = arr.astype(bool)
            shapes += [(int(np.count_nonzero(arr)),)] * max(arr.ndim, 1)
            key.append(arr)
            dim += arr.ndim
            ordinal += max(arr.ndim, 1)
            continue
        shapes.append(arr.shape)
        checks.append((ordinal, arr, sizes[dim] if dim < ndim else 0, len(key)))
        key.append(arr)
        dim += 1
        ordinal += 1
    if len(set(shapes)) == 1:
        picked = shapes[0]  # (the common case: no broadcasting to work out)
    else:
        try:
            picked = np.broadcast_shapes(*shapes) if shapes else ()
        except ValueError:
            listed = ", ".join(str(list(s)) for s in shapes)
            raise IndexError(f"shape mismatch: indexing tensors could not be broadcast together with shapes {listed}") from None
    kept = [sizes[d] for d in range(dim, ndim)]
    kept += [sizes[d] for d, a in enumerate(arrays) if a is None and d < ndim]
    if 0 in picked or 0 in kept:
        # no element is picked: no value is checked (numpy would check them all, so pass zeros)
        for _, arr, _, k in checks:
            key[k] = np.zeros_like(arr)
        return tuple(key)
    if check_bounds and checks and any(_max(a, None) >= n or _min(a, None) < -n for _, a, n, _ in checks):
        # some value is out of range (two reductions per index told us, cheaply): find the first
        # one in PyTorch's order, which costs more
        bad = np.stack([np.broadcast_to((a >= n) | (a < -n), picked).reshape(-1) for _, a, n, _ in checks], axis=1)
        if bad.any():
            element, j = divmod(int(np.argmax(bad.reshape(-1))), len(checks))
            which, arr, size, _ = checks[j]
            value = int(np.broadcast_to(arr, picked).reshape(-1)[element])
            raise IndexError(f"index {value} is out of bounds for dimension {which} with size {size}")
    return tuple(key)


def _plain_key(self, indices):
    """The numpy key in the common case, ``x[rows, cols]``: integer index tensors only, one per
    leading dim, all of one shape, nothing empty (no zeros to substitute); else None."""
    key = []
    for t in indices:
        if t is None:
            return None
        arr = as_array(t)
        if arr.dtype in _MASK_DTYPES or (key and arr.shape != key[0].shape):
            return None
        key.append(arr)
    sizes = self._impl.sizes
    if not key or len(key) > len(sizes) or 0 in key[0].shape or 0 in sizes[len(key):]:
        return None
    return tuple(key)


@aten.index.Tensor.impl("cpu")
def index(self, indices):
    # numpy checks every index value as it gathers; only when it finds a bad one do we look for
    # the one PyTorch reports
    key = _plain_key(self, indices)
    try:
        picked = as_array(self)[key if key is not None else _numpy_index(self, indices, check_bounds=False)]
    except IndexError:
        _numpy_index(self, indices)  # raises PyTorch's error
        raise
    return wrap(np.array(picked, copy=True), self.dtype)


def _single_mask(indices):
    """The one bool/uint8 mask among ``indices`` when it is the only index (else None): PyTorch then
    fills through ``masked_fill_`` (a value with one element, no accumulate)."""
    given = [t for t in indices if t is not None]
    if len(given) == 1 and given[0].dtype in (dt.bool, dt.uint8):
        return given[0]
    return None


def _check_index_put(self, indices, values, key, accumulate):
    """PyTorch's checks of ``index_put_`` (after the optional masked_fill_ route), in its order."""
    mask = None if accumulate or values.numel() != 1 else _single_mask(indices)
    if mask is not None and mask.dtype is dt.uint8:
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype unsigned char")
    if has_internal_overlap(self):
        warn_user(
            "Use of index_put_ on expanded tensors is deprecated. Please clone() the tensor before performing "
            "this operation. This also applies to advanced indexing e.g. tensor[indices] = tensor",
        )
    if mask is not None:
        return  # masked_fill_ casts the single value itself
    check_no_overlap(self, values, *[t for t in indices if t is not None])
    if _plain_key(self, indices) is not None:
        # integer indices of one shape on the leading dims: that shape, then the dims left
        result_shape = key[0].shape + tuple(self._impl.sizes[len(key):])
    else:
        result_shape = np.broadcast_to(np.empty((), dtype=bool), tuple(self.shape))[key].shape
    vshape = tuple(values.shape)
    if len(vshape) > len(result_shape) or any(
        v != 1 and v != r for v, r in zip(reversed(vshape), reversed(result_shape))
    ):
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(vshape)} cannot be broadcast to indexing result of "
            f"shape {list(result_shape)}"
        )
    if values.dtype is not self.dtype:
        raise RuntimeError(
            f"Index put requires the source and destination dtypes match, got {type_name(self.dtype)} for the "
            f"destination and {type_name(values.dtype)} for the source."
        )


@aten.index_put_.default.impl("cpu")
def index_put_(self, indices, values, accumulate=False):
    target = as_array(self)
    key = _numpy_index(self, indices)
    _check_index_put(self, indices, values, key, accumulate)
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
    if index.dtype not in (dt.int64, dt.int32):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
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
    n = arr.shape[d] if arr.ndim else 1
    if idx.size and (idx.max() >= n or idx.min() < -n):
        bad = int(idx.max()) if idx.max() >= n else int(idx.min())
        raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {n}")
    sliced = arr[tuple(slice(0, s) if k != d else slice(None) for k, s in enumerate(idx.shape))]
    return wrap(np.take_along_axis(sliced, idx, axis=d), self.dtype)


def _scatter_check(self, dim, index, src):
    """PyTorch's checks for every scatter variant, in its order: dtypes, dims, sizes, bounds."""
    if index.dtype not in (dt.int64, dt.int32):
        raise RuntimeError("scatter(): Expected dtype int32/int64 for index")
    src_t = src if isinstance(src, TensorBase) else None
    if src_t is not None and src_t.dtype is not self.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    d = wrap_dim(dim, self.dim())
    if index.numel() == 0:
        return
    if max(self.dim(), 1) != max(index.dim(), 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")

    def size(t, k):  # ensure_nonempty_size: a 0-d tensor counts as one element along dim 0
        return 1 if t.dim() == 0 else t.shape[wrap_dim(k, t.dim())]

    wrong = any(k != d and size(index, k) > size(self, k) for k in range(max(self.dim(), 1)))
    if not wrong and src_t is not None:
        wrong = any(size(index, k) > size(src_t, k) for k in range(max(self.dim(), 1)))
    if wrong:
        msg = f"Expected index {list(index.shape)} to be no larger than self {list(self.shape)} apart from dimension {d}"
        if src_t is not None:
            msg += f" and to be no larger size than src {list(src_t.shape)}"
        raise RuntimeError(msg)
    idx = as_array(index)
    n = size(self, d)
    bad = idx[(idx < 0) | (idx >= n)]
    if bad.size:
        raise RuntimeError(f"index {int(bad.flat[0])} is out of bounds for dimension {d} with size {n}")


def _scatter(self, dim, index, src, op):
    _scatter_check(self, dim, index, src)
    if index.numel() == 0:
        return as_array(self).copy()  # nothing to write, whatever the index's shape
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
    check_inplace_overlap(self)
    return write_into(self, _scatter(self, dim, index, src, None))


@aten.scatter_add.default.impl("cpu")
def scatter_add(self, dim, index, src):
    return wrap(_scatter(self, dim, index, src, "add"), self.dtype)


@aten.scatter_add_.default.impl("cpu")
def scatter_add_(self, dim, index, src):
    check_inplace_overlap(self)
    return write_into(self, _scatter(self, dim, index, src, "add"))


@aten.masked_select.default.impl("cpu")
def masked_select(self, mask):
    if mask.dtype is not dt.bool:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    a, m = np.broadcast_arrays(as_array(self), as_array(mask))
    return wrap(a[m].copy(), self.dtype)


@aten.nonzero.default.impl("cpu")
def nonzero(self):
    arr = as_array(self)
    if arr.ndim == 0:
        count = 1 if arr else 0
        return wrap_strided(np.zeros((count, 0), dtype=np.int64), dt.int64, (1, count))
    # PyTorch's result is column-major (strides ``(1, count)``): each column is one dim's indices
    idx = np.stack(np.nonzero(arr), axis=1).astype(np.int64)
    return wrap_strided(idx, dt.int64, (1, idx.shape[0]))


def _check_index_add(self, dim, index, source):
    """PyTorch's checks of ``index_add``, in its order and words; returns the wrapped dim."""
    d = wrap_dim(dim, max(self.dim(), 1))
    if index.dim() > 1:
        raise IndexError(
            f"index_add_(): Index is supposed to be a vector, but got dim: {index.dim()} with type: "
            f"{type_name(index.dtype)} and size: {list(index.shape)}"
        )
    if index.dtype not in (dt.int64, dt.int32):
        raise RuntimeError(f"index_add_(): Expected dtype int32/int64 for index but got: {type_name(index.dtype)}")
    if self.dtype is not source.dtype:
        raise RuntimeError(
            f"index_add_(): self ({type_name(self.dtype)}) and source ({type_name(source.dtype)}) must have the same scalar type"
        )
    source_len = source.shape[d] if source.dim() > 0 else 1
    if index.numel() != source_len:
        raise RuntimeError(
            f"index_add_(): Number of indices ({index.numel()}) should be equal to source.size(dim): ({source_len}), for dim: {dim}"
        )
    others = lambda t: [s for k, s in enumerate(t.shape) if k != d]  # noqa: E731
    if self.dim() > 0 and source.dim() > 0 and others(self) != others(source):
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified dimension. "
            f"Got self.shape = {list(self.shape)} source.shape = {list(source.shape)}"
        )
    size = self.shape[d] if self.dim() > 0 else 1
    for i in as_array(index).reshape(-1).tolist():
        if not 0 <= i < size:
            raise RuntimeError(f"index {i} is out of bounds for dimension {d} with size {size}")
    return d


@aten.index_add.default.impl("cpu")
def index_add(self, dim, index, source, *, alpha=1):
    d = _check_index_add(self, dim, index, source)
    out = as_array(self).copy()
    if self.dim() == 0:  # a 0-d self is treated as one element along dim 0
        return wrap(out + as_array(source) * alpha, self.dtype)
    key = [slice(None)] * self.dim()
    key[d] = as_array(index).reshape(-1)
    if not self.dtype.is_floating_point and self.dtype is not dt.bool:
        alpha = int(alpha)  # PyTorch converts alpha to self's dtype
    np.add.at(out, tuple(key), (as_array(source) * alpha).astype(out.dtype))
    return wrap(out, self.dtype)


@aten.index_add_.default.impl("cpu")
def index_add_(self, dim, index, source, *, alpha=1):
    check_inplace_overlap(self)
    return write_into(self, as_array(index_add(self, dim, index, source, alpha=alpha)))
