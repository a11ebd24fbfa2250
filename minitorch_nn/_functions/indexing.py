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
from minitorch_nn._ops import aten
from minitorch_nn.overrides import public


def _as_index_tensor(idx):
    from minitorch_nn._functions.factories import tensor

    if isinstance(idx, TensorBase):
        if idx.dtype.is_floating_point:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return idx
    t = tensor(idx)
    if t.dtype.is_floating_point:
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return t


def _normalize(index):
    if not isinstance(index, tuple):
        index = (index,)
    return index


def _is_advanced(i):
    return isinstance(i, (TensorBase, list, np.ndarray)) or (isinstance(i, bool))


def _apply_basic(self, index):
    """Apply ints/slices/None/Ellipsis as views; return the view and the advanced indices per dim."""
    index = _normalize(index)
    consumed = sum(
        1 if not (i is None or i is Ellipsis or (isinstance(i, TensorBase) and i.dtype is dt.bool) or isinstance(i, bool)) else
        (i.dim() if isinstance(i, TensorBase) and i.dtype is dt.bool else 0)
        for i in index
    )
    if sum(1 for i in index if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > self.dim():
        raise IndexError(f"too many indices for tensor of dimension {self.dim()}")
    result = self
    dim = 0
    advanced = []  # (dim, index tensor)
    for i in index:
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
            start, stop, step = i.start, i.stop, i.step
            if step is not None and step <= 0:
                raise ValueError("step must be greater than zero")
            if not (start is None and stop is None and step is None):
                result = aten.slice.Tensor(result, dim, _int(start, 0), _int(stop, 9223372036854775807), _int(step, 1))
            dim += 1
        elif isinstance(i, TensorBase) or isinstance(i, (list, np.ndarray)):
            t = _as_index_tensor(i)
            if t.dtype in (dt.bool, dt.uint8):
                for k in range(t.dim()):
                    if t.shape[k] != result.shape[dim + k]:
                        raise IndexError(
                            f"The shape of the mask {list(t.shape)} at index {k} does not match the shape of the indexed tensor {list(result.shape)} at index {dim + k}"
                        )
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
            result = aten.select.int(result, dim, i.__index__())
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices (got "
                + type(i).__name__ + ")"
            )
    return result, advanced


def _int(v, default):
    if v is None:
        return default
    return v.__index__()


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


@public
def getitem(self, index):
    result, advanced = _apply_basic(self, index)
    if not advanced:
        if result is self:
            return aten.alias.default(self)
        return result
    return aten.index.Tensor(result, _index_list(result, advanced))


@public
def setitem(self, index, value):
    from minitorch_nn._functions.factories import tensor

    result, advanced = _apply_basic(self, index)
    if not isinstance(value, TensorBase):
        value = tensor(value, dtype=self.dtype, device=self.device)
    if not advanced:
        if value.dim() == 0 and value.numel() == 1:
            aten.fill_.Tensor(result, value)
        else:
            aten.copy_.default(result, value)
        return
    aten.index_put_.default(result, _index_list(result, advanced), value)


@public
def index_select(input, dim, index, *, out=None):
    return aten.index_select.default(input, dim, index)


@public
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
def masked_select(input, mask):
    return aten.masked_select.default(input, mask)


@public
def index_add(input, dim, index, source, *, alpha=1):
    return aten.index_add.default(input, dim, index, source, alpha=alpha)
