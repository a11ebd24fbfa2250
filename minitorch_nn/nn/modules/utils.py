"""Small helpers that layers and checkpoint code import from ``torch.nn.modules.utils``.

* ``_single``/``_pair``/``_triple``/``_quadruple`` (``_ntuple(n)``): turn ``3`` into ``(3, 3)``;
  an iterable comes back as a tuple of its items, *whatever its length* (``_pair([1, 2, 3])`` is
  ``(1, 2, 3)``: PyTorch checks lengths elsewhere, and so does code written against it);
* ``_reverse_repeat_tuple(t, n)``: a conv padding ``(pad_h, pad_w)`` in the order ``F.pad``
  wants, each side repeated: ``((1, 2), 2) -> (2, 2, 1, 1)``;
* ``_list_with_default(out_size, defaults)``: an adaptive pooling output size with ``None``
  entries taken from the input's trailing sizes;
* :func:`consume_prefix_in_state_dict_if_present`: strip ``"module."`` (or any prefix) from the
  keys of a checkpoint saved from ``DataParallel``/``DistributedDataParallel``, in place,
  metadata included.
"""

from __future__ import annotations

import collections.abc
from typing import Any

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n: int, name: str = "parse"):
    """A function that repeats a single value ``n`` times and passes an iterable through as a tuple."""

    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return (x,) * n

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n: int) -> tuple:
    """The items of ``t`` from last to first, each repeated ``n`` times."""
    return tuple(item for item in reversed(t) for _ in range(n))


def _list_with_default(out_size, defaults):
    """``out_size`` with each None replaced by the matching entry of ``defaults``' tail."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    tail = defaults[-len(out_size):]
    return [d if v is None else v for v, d in zip(out_size, tail)]


def consume_prefix_in_state_dict_if_present(state_dict: dict[str, Any], prefix: str) -> None:
    """Remove ``prefix`` from the keys of ``state_dict`` that start with it, in place.

    Example: a checkpoint saved from ``DistributedDataParallel(model)`` has keys
    ``"module.fc.weight"``; ``consume_prefix_in_state_dict_if_present(sd, "module.")`` makes them
    ``"fc.weight"`` so the bare model can load it. The state dict's ``_metadata`` (per-module
    versions) is renamed the same way; its ``""`` entry (the wrapper itself) is left alone, and
    the entry named after the prefix without its dot (``"module"``) becomes the root's.
    """
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)

    metadata = getattr(state_dict, "_metadata", None)
    if metadata is None:
        return
    for key in list(metadata.keys()):
        if not key:
            continue
        if key == prefix.replace(".", "") or key.startswith(prefix):
            metadata[key[len(prefix):]] = metadata.pop(key)
