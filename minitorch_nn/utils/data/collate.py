"""Turning a list of samples into a batch (mirrors ``torch/utils/data/_utils/collate.py``).

``default_collate`` works recursively on the structure of the first sample:

===========================  ==========================================================
sample element               batch
===========================  ==========================================================
tensor                       ``stack(batch)`` (a new leading dimension)
numpy array / numpy scalar   converted with ``as_tensor``, then stacked
Python float / int / bool    a float64 / int64 / bool tensor
str / bytes                  the list unchanged
dict (any Mapping)           a dict of collated values, key by key
namedtuple                   the same namedtuple of collated fields
tuple / list (Sequence)      a list (tuples) or the same sequence type of collated columns
===========================  ==========================================================

``default_convert`` is what a ``DataLoader`` uses when batching is off: numpy arrays become
tensors, everything else is left as it is.

``collate(batch, collate_fn_map=...)`` is the general form, with a table of per-type functions;
``default_collate_fn_map`` is the table ``default_collate`` uses. Differences from PyTorch: no
shared-memory output buffers in worker processes (batches are pickled back whole).
"""

from __future__ import annotations

import collections
import copy
import re

import numpy as np

import minitorch_nn as _t

__all__ = ["default_collate", "default_convert", "collate", "default_collate_fn_map"]

# numpy dtypes that cannot become tensors: bytes, strings, objects
_np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def _is_numpy_value(value) -> bool:
    kind = type(value)
    return kind.__module__ == "numpy" and kind.__name__ not in ("str_", "string_")


def default_convert(data):
    """Numpy arrays (inside any dict/list/tuple structure) become tensors; the rest is kept."""
    if isinstance(data, _t.Tensor):
        return data
    if _is_numpy_value(data):
        if isinstance(data, np.ndarray) and _np_str_obj_array_pattern.search(data.dtype.str):
            return data
        # through np.asarray: np.float64 is also a Python float, which would become float32
        return _t.as_tensor(np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        converted = {key: default_convert(data[key]) for key in data}
        return _rebuild_mapping(data, converted)
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # a namedtuple keeps its type
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]  # tuples become lists, as in PyTorch
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data


def _rebuild_mapping(template, values: dict):
    """The template's own mapping type with new values where it can be built; a dict otherwise."""
    try:
        if isinstance(template, collections.abc.MutableMapping):
            clone = copy.copy(template)
            clone.update(values)
            return clone
        return type(template)(values)
    except TypeError:
        return values


def _rebuild_sequence(template, values: list):
    try:
        if isinstance(template, collections.abc.MutableSequence):
            clone = copy.copy(template)
            for i, value in enumerate(values):
                clone[i] = value
            return clone
        return type(template)(values)
    except TypeError:
        return values


def collate(batch, *, collate_fn_map=None):
    """Collate ``batch`` (a list of samples) by the structure of ``batch[0]``.

    ``collate_fn_map`` maps element types to functions ``fn(batch, *, collate_fn_map)``; an exact
    type match wins, then the first key the element is an instance of.
    """
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        values = {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem}
        return _rebuild_mapping(elem, values)
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        elem_size = len(elem)
        if not all(len(sample) == elem_size for sample in batch):
            raise RuntimeError(
                "each element in list of batch should be of equal size\n"
                "Pad the samples to one length, or pass a collate_fn that handles ragged lists."
            )
        columns = [collate(list(samples), collate_fn_map=collate_fn_map) for samples in zip(*batch)]
        if isinstance(elem, tuple):
            return columns  # tuples become lists, as in PyTorch
        return _rebuild_sequence(elem, columns)
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch, *, collate_fn_map=None):
    return _t.stack(batch, 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    elem = batch[0]
    if _np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([_t.as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    return _t.as_tensor(np.asarray(batch))  # keeps the scalars' numpy dtype


def collate_float_fn(batch, *, collate_fn_map=None):
    return _t.tensor(batch, dtype=_t.float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    return _t.tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


# order matters: bool is an int, and the first matching key wins
default_collate_fn_map: dict = {
    _t.Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    np.memmap: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch):
    """Stack a list of samples into a batch (see the module docstring for each element type).

    Example::

        >>> import minitorch_nn as torch
        >>> default_collate([(torch.tensor([1.0]), 0), (torch.tensor([2.0]), 1)])
        [tensor([[1.],
                [2.]]), tensor([0, 1])]
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)
