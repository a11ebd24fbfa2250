"""Indexing: ``x[...]`` and ``x[...] = v``, plus ``index_select``, ``gather``, ``scatter``.

Mirrors PyTorch's ``torch/csrc/autograd/python_variable_indexing.cpp``. Basic indices (ints,
slices, ``None``, ``...``) become views: ``select``, ``slice``, ``unsqueeze``. Tensor or list
indices are "advanced": after the basic part is applied, the remaining tensor indices go to one
``aten.index.Tensor`` call (or ``index_put_`` when assigning), with numpy's placement rules.
"""

from __future__ import annotations

import numpy as np

from minitorch_nn import _dtype as dt
from minitorch_nn._C import TensorBase
from minitorch_nn._functions._out import writes_out
from minitorch_nn._ops import aten
from minitorch_nn._warnings import warn_user
from minitorch_nn.overrides import public

_INDEX_DTYPES = (dt.int64, dt.int32, dt.uint8, dt.bool)


def _as_index_tensor(idx):
    if isinstance(idx, TensorBase):
        t = idx
    else:
        from minitorch_nn._functions.factories import tensor

        if isinstance(idx, list) and not idx:
            t = tensor(idx, dtype=dt.int64)  # x[[]] selects nothing, with an (empty) long index
        else:
            _reject_strings(idx)
            t = tensor(idx)
    if t.dtype not in _INDEX_DTYPES:
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return t


def _reject_strings(idx):
    # PyTorch turns a list index into a tensor, whose constructor refuses text
    if isinstance(idx, str):
        raise TypeError("new(): invalid data type 'str'")
    if isinstance(idx, (list, tuple)):
        for item in idx:
            _reject_strings(item)


def _is_sequence(obj):
    return isinstance(obj, (list, tuple, str, bytes, range, np.ndarray))


def _sequence_as_tuple(index):
    """PyTorch's (and old numpy's) rule for a non-tuple sequence: a short one (< 32 items) that
    holds a tensor, a sequence, a slice, ``...`` or None is read as a tuple of indices
    (``x[[0, slice(None)]]`` is ``x[0, :]``); any other is one index (``x[[0, 1]]``)."""
    if isinstance(index, TensorBase) or not _is_sequence(index) or isinstance(index, (str, bytes)):
        return False
    if len(index) >= 32:
        return False
    return any(isinstance(i, (TensorBase, slice)) or _is_sequence(i) or i is Ellipsis or i is None for i in index)


_SEQUENCE_AS_TUPLE_WARNING = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed in "
    "pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted as "
    "tensor index, x[torch.tensor(seq)], which will result either in an error or a different result"
)


def _normalize(index):
    if isinstance(index, tuple):
        return index
    if isinstance(index, str):
        raise TypeError("new(): invalid data type 'str'")
    if _sequence_as_tuple(index):
        warn_user(_SEQUENCE_AS_TUPLE_WARNING, UserWarning)
        return tuple(index)
    return (index,)


def _apply_basic(self, index):
    """Apply ints/slices/None/Ellipsis as views; return the view and the advanced indices per dim.

    Unlike numpy, PyTorch accepts several ``...`` in one index: each stands for the dims that the
    other indices leave over, so ``x[..., ...]`` is ``x`` and ``x[..., 0, ...]`` is ``x[..., 0]``.
    Where that pushes a later index past the last dim, PyTorch reads out of bounds (its answer
    is arbitrary); we raise an IndexError that says so.
    """
    index = _normalize(index)
    consumed = ellipses = 0  # dims the indices use up; how many "..." there are
    for i in index:
        if i is Ellipsis:
            ellipses += 1
        elif isinstance(i, TensorBase) and i.dtype is dt.bool:
            consumed += i.dim()  # a k-d mask uses up k dims
        elif not (i is None or isinstance(i, bool)):
            consumed += 1
    if consumed > self.dim():
        raise IndexError(f"too many indices for tensor of dimension {self.dim()}")
    several_ellipses = ellipses > 1
    result = self
    dim = 0
    advanced = []  # (dim, index tensor)
    for position, i in enumerate(index):
        past_end = several_ellipses and dim >= result.dim()
        if past_end and (isinstance(i, slice) or hasattr(i, "__index__") and not isinstance(i, (bool, TensorBase))):
            # PyTorch reads a size past the end of its array here; it usually finds 0, hence its words
            what = f"index {i.__index__()}" if not isinstance(i, slice) else "slice"
            raise IndexError(
                f"{what} is out of bounds for dimension {position} with size 0 (with several ellipses ('...'), "
                f"each standing for {self.dim() - consumed} dims, this index falls past the last dimension of a "
                f"{self.dim()}-d tensor; use a single '...')"
            )
        if past_end and isinstance(i, (TensorBase, list, np.ndarray)):
            raise IndexError(f"too many indices for tensor of dimension {self.dim()} (got {dim + 1})")
        if i is Ellipsis:
            dim += self.dim() - consumed
        elif i is None:
            result = aten.unsqueeze.default(result, dim)
            dim += 1
        elif isinstance(i, bool):
            result = aten.unsqueeze.default(result, dim)
            advanced.append((dim, _as_index_tensor([i])))
            dim += 1
        elif isinstance(i, slice):
            result = _slice(result, dim, i)
            dim += 1
        elif isinstance(i, TensorBase) or isinstance(i, (list, np.ndarray)):
            t = _as_index_tensor(i)
            if t.dtype in (dt.bool, dt.uint8):
                advanced.append((dim, t))
                dim += max(t.dim(), 1) if t.dim() else 0
                if t.dim() == 0:
                    result = aten.unsqueeze.default(result, dim)
                    advanced[-1] = (dim, t.reshape(1))
                    dim += 1
            else:
                advanced.append((dim, t))
                dim += 1
        elif hasattr(i, "__index__"):
            v = i.__index__()
            if dim < result.dim() and not -result.shape[dim] <= v < result.shape[dim]:
                # PyTorch names the index's position in the tuple, not the dim of the narrowed view
                raise IndexError(f"index {v} is out of bounds for dimension {position} with size {result.shape[dim]}")
            result = aten.select.int(result, dim, v)
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices (got "
                + type(i).__name__ + ")"
            )
    # masks are checked against the tensor after all the basic indices (as PyTorch's index does)
    for dim, t in advanced:
        if t.dtype in (dt.bool, dt.uint8):
            for k in range(t.dim()):
                if dim + k >= result.dim() or t.shape[k] != result.shape[dim + k]:
                    raise IndexError(
                        f"The shape of the mask {list(t.shape)} at index {k} does not match the shape of the "
                        f"indexed tensor {list(result.shape)} at index {dim + k}"
                    )
    return result, advanced


def _slice(t, dim, i):
    """``t`` sliced along ``dim`` by the slice ``i`` (``t`` itself for ``:``)."""
    start, stop, step = i.start, i.stop, i.step
    if step is None:
        if start is None and stop is None:
            return t
        step = 1
    else:
        _check_step(step)
        step = step.__index__()
    start = 0 if start is None else start.__index__()
    stop = 9223372036854775807 if stop is None else stop.__index__()
    return aten.slice.Tensor(t, dim, start, stop, step)


def _check_step(step):
    if step is not None and step.__index__() == 0:
        raise ValueError("slice step cannot be zero")  # (Python's own message, as PyTorch shows)
    if step is not None and step < 0:
        raise ValueError("step must be greater than zero")


def _index_list(result, advanced):
    """The ``Tensor?[] indices`` list for aten.index: one entry per dim, None where not indexed."""
    indices = []
    for dim, t in advanced:
        if t.dtype in (dt.bool, dt.uint8) and t.dim() > 1:
            # a k-d mask indexes k dims at once; aten.index takes it as is
            while len(indices) < dim:
                indices.append(None)
            indices.append(t)
            continue
        while len(indices) < dim:
            indices.append(None)
        indices.append(t)
    return indices


def _is_long_index(i):
    return isinstance(i, TensorBase) and i._impl.dtype in _LONG_INDEX_DTYPES


_LONG_INDEX_DTYPES = (dt.int64, dt.int32)


def _lone_index_on_0d(index):
    """PyTorch's error for ``x[i]`` or ``x[a:b]`` on a 0-d tensor (inside a tuple it says "too many indices")."""
    if type(index) is slice:
        _check_step(index.step)  # (a bad step is reported first)
        return IndexError("slice() cannot be applied to a 0-dim tensor.")
    if index == 0:
        return IndexError(
            "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to convert "
            "a 0-dim tensor to a number"
        )
    return IndexError(f"index {index} is out of bounds for dimension 0 with size 0")


@public
def getitem(self, index):
    # The two commonest indices, ``x[i]`` and ``x[a:b]``, go straight to their view op (the steps
    # _apply_basic takes for a tuple of one, except on a 0-d tensor, where PyTorch words its error
    # differently for a lone index).
    kind = type(index)
    if kind is int or kind is slice:
        sizes = self._impl.sizes
        if not sizes:
            raise _lone_index_on_0d(index)
        if kind is slice:
            result = _slice(self, 0, index)
            return aten.alias.default(self) if result is self else result
        if not -sizes[0] <= index < sizes[0]:
            raise IndexError(f"index {index} is out of bounds for dimension 0 with size {sizes[0]}")
        return aten.select.int(self, 0, index)
    if kind is tuple:
        if 0 < len(index) <= len(self._impl.sizes) and all(_is_long_index(i) for i in index):
            # ``x[rows, cols]`` with integer index tensors only, one per leading dim: nothing for
            # _apply_basic to apply, and _index_list would list them as they are
            return aten.index.Tensor(self, list(index))
    elif _is_long_index(index) and self._impl.sizes:
        return aten.index.Tensor(self, [index])  # ``x[idx]``, likewise
    result, advanced = _apply_basic(self, index)
    if not advanced:
        if result is self:
            return aten.alias.default(self)
        return result
    return aten.index.Tensor(result, _index_list(result, advanced))


@public
def setitem(self, index, value):
    from minitorch_nn._functions.factories import tensor

    if not isinstance(value, TensorBase):
        if not isinstance(value, (int, float, bool, complex, np.number, np.bool_)):
            # PyTorch converts only numbers (and tensors): a list must be made a tensor first
            raise TypeError(f"can't assign a {_type_name(value)} to a {self.type()}")
        if isinstance(value, complex):
            from minitorch_nn.backends.common import real_scalar

            value = real_scalar(value, self.dtype)  # (PyTorch's error for 1j into a real tensor)
        value = tensor(value, dtype=self.dtype, device=self.device)
    result, advanced = _apply_basic(self, index)
    if not advanced:
        if value.dim() == 0 and value.numel() == 1:
            aten.fill_.Tensor(result, value)
        elif tuple(value.shape) == tuple(result.shape):
            aten.copy_.default(result, value)
        else:
            # leading 1s of the value are dropped, then it is expanded to the target (PyTorch's copy_to)
            aten.copy_.default(result, aten.expand.default(_drop_leading_ones(value), list(result.shape)))
        return
    aten.index_put_.default(result, _index_list(result, advanced), _drop_leading_ones(value))


def _drop_leading_ones(value):
    sizes = list(value.shape)
    k = 0
    while k < len(sizes) and sizes[k] == 1:
        k += 1
    return value if k == 0 else aten.view.default(value, sizes[k:])


def _type_name(value):
    t = type(value)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"


@public
@writes_out("index_select")
def index_select(input, dim, index, *, out=None):
    return aten.index_select.default(input, dim, index)


@public
@writes_out("exact")
def gather(input, dim, index, *, sparse_grad=False, out=None):
    return aten.gather.default(input, dim, index)


@public
def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    if isinstance(src, TensorBase):
        return aten.scatter.src(input, dim, index, src)
    return aten.scatter.value(input, dim, index, src if value is None else value)


@public
def scatter_add(input, dim, index, src):
    return aten.scatter_add.default(input, dim, index, src)


@public
def masked_fill(input, mask, value):
    if isinstance(value, TensorBase):
        return aten.masked_fill.Tensor(input, mask, value)
    return aten.masked_fill.Scalar(input, mask, value)


@public
@writes_out("masked_select")
def masked_select(input, mask, *, out=None):
    return aten.masked_select.default(input, mask)


@public
@writes_out("exact")
def index_add(input, dim, index, source, *, alpha=1, out=None):
    return aten.index_add.default(input, dim, index, source, alpha=alpha)
