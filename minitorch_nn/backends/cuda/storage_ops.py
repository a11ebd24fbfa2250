"""Ops that change *which memory* a cuda tensor reads: ``resize_`` and ``set_``.

Mirrors PyTorch's ``Resize.cpp`` (``resize_`` on cuda) and ``set_``. These ops cannot take the
host path (``fallback.py``): a copy on the host has its own storage, so changing that copy's sizes
or storage pointer would leave the cuda tensor as it was. They work on the device storage itself:

* ``resize_``: give the tensor contiguous strides for the new size; if its storage is too small,
  allocate a larger device array and copy the old elements to the front of it (one thread per
  element; the new tail is zero, as the cpu backend gives). Views of the old storage keep the
  old array, as in PyTorch.
* ``set_``: point the tensor at another cuda tensor's storage, sizes, strides and offset -- the
  cpu kernel (``backends/cpu/storage_ops.py``) only moves references, so it serves cuda as is.

``as_strided_`` is a pure metadata change for every device (``backends/views.py``).
"""

from __future__ import annotations

from minitorch_nn._ops import aten
from minitorch_nn._tensor import contiguous_strides
from minitorch_nn.backends.cpu.storage_ops import set_source_tensor
from minitorch_nn.backends.cuda import storage
from minitorch_nn.backends.cuda._numba import cuda
from minitorch_nn.backends.cuda.elementwise import THREADS, blocks_for

_cuda = cuda()


@_cuda.jit
def _grow(new, old, n_old, n_new, zero):
    """new[i] = old[i] for the old elements, 0 for the added ones."""
    i = _cuda.grid(1)
    if i < n_new:
        new[i] = old[i] if i < n_old else zero


@aten.resize_.default.impl("cuda")
def resize_(self, size, *, memory_format=None):
    size = tuple(size)
    if any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: {list(size)}")
    impl = self._impl
    needed = impl.offset
    n = 1
    for s in size:
        n *= s
    needed += n
    old = impl.storage
    if needed > old.shape[0]:
        grown = storage.device_array(needed, old.dtype)
        _grow[blocks_for(needed), THREADS](grown, old, old.shape[0], needed, old.dtype.type(0))
        impl.storage = grown
    impl.set_metadata(size, contiguous_strides(size), impl.offset)
    return self


aten.set_.source_Tensor.impl("cuda")(set_source_tensor)
