"""``Tensor.set_(source)``: re-point a tensor at another tensor's storage (``aten::set_.source_Tensor``).

PyTorch's ``set_`` keeps the Python object (and so its ``id``, its ``Parameter`` class and every
reference an optimizer holds) but swaps what it reads: afterwards ``self`` shares ``source``'s
storage, sizes, strides and offset, and a write through one is seen by the other.
``torch.nn.utils.parametrize`` relies on this to put a new value into a parameter without
replacing the object.

The tensor keeps its own version counter, which is bumped once (``set_`` is an in-place op).
The same kernel serves cpu and meta, since it only moves references around.
"""

from __future__ import annotations

from minitorch_nn._ops import aten


@aten.set_.source_Tensor.impl("cpu", "meta")
def set_source_tensor(self, source):
    if self.dtype != source.dtype:
        raise RuntimeError(
            f"Could not set tensor of type {self.dtype} to a tensor of type {source.dtype}"
        )
    if self.device != source.device:
        raise RuntimeError(
            f'Attempted to set the storage of a tensor on device "{self.device}" to a storage on '
            f'different device "{source.device}".  This is no longer allowed; the devices must match.'
        )
    mine, theirs = self._impl, source._impl
    mine.storage = theirs.storage
    mine.set_metadata(tuple(theirs.sizes), tuple(theirs.strides), theirs.offset)
    mine.version.value += 1
    return self
