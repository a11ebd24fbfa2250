"""DataLoader's speed path for a ``TensorDataset``: one gather per tensor instead of one view per sample.

The readable path (``dataloader.py``'s ``_MapDatasetFetcher.fetch``) does what PyTorch does for a
batch of indices ``[i0, i1, ...]``: it asks the dataset for each sample
(``TensorDataset.__getitem__``: a view ``t[i]`` of every tensor), then ``default_collate``
stacks the views column by column (``collate.py``: ``collate`` -> ``collate_tensor_fn`` ->
``stack``). For a ``TensorDataset`` the result is, column by column, exactly ``t[indices]``: the
same rows in the same order, in a new contiguous tensor of the same dtype. Here that gather is
done once per tensor, which saves two Python-level views and their numpy arrays per sample (most
of an epoch over a small dataset).

This path is a twin of the readable one and answers to the same switch and guards as the compiled
twins (``backends/compiled.py``): it runs only while ``minitorch_nn.backends.compiled.enabled`` is
on and its :class:`~minitorch_nn.backends.compiled.Guard` holds (``TensorDataset.__getitem__`` and
the collate functions unchanged since the build), and only when nothing could tell the difference:

* the dataset is exactly a ``TensorDataset`` (a subclass may change ``__getitem__``), with no
  ``__getitems__`` of its own, holding plain, contiguous cpu tensors that do not require grad
  (with grad, ``stack`` would record a different graph node than a gather);
* the collate function is ``default_collate``, and its table ``default_collate_fn_map`` holds what
  it held at import (PyTorch's documentation invites users to extend it);
* the batch is a non-empty list of Python ints inside the dataset (anything else: the readable
  path, with its errors);
* no ``__torch_function__`` or ``__torch_dispatch__`` mode and no forward-AD level is active (a
  mode would see one gather instead of the views and the stack).

PyTorch has no such path; it is the same idea as its ``__getitems__`` protocol (a dataset that
fetches a whole batch at once), applied where the result is known to be identical.
"""

from __future__ import annotations

import numpy as np

import minitorch_nn as _t
from minitorch_nn import _dispatch
from minitorch_nn._dispatch import python_dispatch as _python_dispatch
from minitorch_nn._tensor import Tensor
from minitorch_nn.backends import compiled as _compiled_switch
from minitorch_nn.overrides import _state as _torch_function_state
from minitorch_nn.utils.data import collate as _collate
from minitorch_nn.utils.data.dataset import TensorDataset

# The originals this path stands in for, as they are now (at import, before user code runs).
_GETITEM = TensorDataset.__getitem__
_DEFAULT_COLLATE = _collate.default_collate
_COLLATE_TABLE = dict(_collate.default_collate_fn_map)
_GUARD = _compiled_switch.Guard(
    "utils.data._batched_fetch",
    functions=(_GETITEM, _collate.default_collate, _collate.collate, _collate.collate_tensor_fn),
)


def _nothing_observes() -> bool:
    return not (
        _torch_function_state.modes
        or _python_dispatch._modes
        or _dispatch.forward_ad_layer is not None
    )


def fetch_batch(dataset, indices, collate_fn):
    """``collate_fn([dataset[i] for i in indices])`` computed as one gather per tensor, or None
    when this path may not stand in for the readable one (see the module docstring)."""
    if not _compiled_switch._enabled or type(dataset) is not TensorDataset or collate_fn is not _DEFAULT_COLLATE:
        return None
    if (
        type(indices) is not list
        or not indices
        or TensorDataset.__getitem__ is not _GETITEM
        or getattr(dataset, "__getitems__", None) is not None
        or _collate.default_collate_fn_map != _COLLATE_TABLE
        or not _nothing_observes()
        or not _GUARD.holds()
    ):
        return None
    tensors = dataset.tensors
    size = len(dataset)
    for t in tensors:
        if (type(t) is not Tensor or t.requires_grad or t.device.type != "cpu" or not t.is_contiguous()
                or t.dim() == 0 or t.shape[0] != size):
            return None
    for i in indices:
        if type(i) is not int:
            return None
    order = np.array(indices, dtype=np.int64)
    if order.min() < 0 or order.max() >= size:
        return None  # the readable path raises (or wraps a negative index) as PyTorch does
    where = _t.from_numpy(order)
    return [t[where] for t in tensors]  # a list: default_collate turns the samples' tuples into lists
