"""Tensors whose storage lives on the GPU: numba device arrays as ``TensorImpl.storage``.

Mirrors PyTorch's CUDA ``StorageImpl`` + ``CUDACachingAllocator`` at the smallest scale: a cuda
tensor is the same payload as a cpu tensor (sizes, strides, offset, dtype, version...), except
that ``storage`` is a flat 1-D numba device array instead of a numpy array. Views share it, so
``backends/views.py`` works unchanged.

Differences from PyTorch:

* there is no caching allocator: every result is a fresh ``cuda.device_array`` and numba frees it
  when the last reference goes; :func:`memory_allocated` counts live bytes we allocated;
* ``bfloat16`` is stored as its raw 16-bit words (``uint16``), because numba's GPU target has no
  bfloat16 type; ``copy.py`` converts words to/from float32 with bit operations;
* a cuda tensor has no numpy view (``t._array`` fails, as ``t.numpy()`` does in PyTorch);
* complex dtypes are refused (:func:`refuse_complex`): the kernels are written for real numbers.
"""

from __future__ import annotations

import weakref

import numpy as np

from minitorch_nn import _C
from minitorch_nn import _dtype as dt
from minitorch_nn._C import TensorImpl
from minitorch_nn._device import CUDA0
from minitorch_nn._tensor import Tensor, contiguous_strides
from minitorch_nn.backends.cuda._numba import cuda

_live_bytes = [0]


def _release(nbytes):
    _live_bytes[0] -= nbytes


def memory_allocated() -> int:
    """Bytes held by live cuda storages made by this backend."""
    return _live_bytes[0]


def storage_dtype(d: dt.dtype):
    """The numpy dtype of the device array that stores ``d`` (bfloat16 as uint16 words)."""
    if d.is_complex:
        refuse_complex(d)
    return np.dtype(np.uint16) if d is dt.bfloat16 else d.numpy_dtype


def refuse_complex(d: dt.dtype):
    """The cuda kernels here are written for real numbers only: refuse complex tensors up front
    rather than compute on their parts as if they were reals."""
    raise RuntimeError(
        f"minitorch_nn's cuda backend does not support complex tensors (got {d}); "
        "keep complex tensors on the cpu (PyTorch supports them on cuda)."
    )


def _track(arr):
    nbytes = int(arr.size) * arr.dtype.itemsize
    _live_bytes[0] += nbytes
    weakref.finalize(arr, _release, nbytes)
    return arr


def device_array(n: int, np_dtype):
    return _track(cuda().device_array(max(int(n), 0), dtype=np_dtype))


def wrap(storage, sizes, dtype, strides=None, offset=0) -> Tensor:
    """A cuda tensor reading the flat device array ``storage``."""
    if dtype.is_complex:
        refuse_complex(dtype)
    sizes = tuple(int(s) for s in sizes)
    strides = contiguous_strides(sizes) if strides is None else tuple(strides)
    return _C._wrap(Tensor, TensorImpl(storage, sizes, strides, offset, dtype, CUDA0))


def empty(sizes, dtype, strides=None) -> Tensor:
    """An uninitialised cuda tensor: contiguous, or with ``strides`` (non-negative, from
    ``backends/layout.py``), its storage then just long enough to hold every element."""
    sizes = tuple(int(s) for s in sizes)
    if strides is None:
        n = 1
        for s in sizes:
            n *= s
        return wrap(device_array(n, storage_dtype(dtype)), sizes, dtype)
    n = 0 if 0 in sizes else 1 + sum((size - 1) * stride for size, stride in zip(sizes, strides))
    return wrap(device_array(n, storage_dtype(dtype)), sizes, dtype, strides)


def from_host(arr: np.ndarray, dtype, strides=None) -> Tensor:
    """Copy a numpy array (already of ``dtype``'s numpy dtype) to a new cuda tensor, contiguous or
    laid out with ``strides`` (non-negative, dense: the host buffer is arranged so first)."""
    if strides is None or 0 in arr.shape:
        flat = np.ascontiguousarray(arr).reshape(-1)
        strides = None
    else:
        flat = np.empty(1 + sum((size - 1) * stride for size, stride in zip(arr.shape, strides)), dtype=arr.dtype)
        np.lib.stride_tricks.as_strided(flat, arr.shape, tuple(s * arr.dtype.itemsize for s in strides))[...] = arr
    if dtype is dt.bfloat16:
        flat = flat.view(np.uint16)
    return wrap(_track(cuda().to_device(flat)), arr.shape, dtype, strides)


def to_host(t) -> np.ndarray:
    """The values of cuda tensor ``t`` as a fresh C-ordered numpy array of its dtype."""
    from minitorch_nn.backends.cuda.copy import contiguous

    impl = t._impl
    n = t.numel()
    if n == 0:
        return np.empty(impl.sizes, dtype=impl.dtype.numpy_dtype)
    c = contiguous(t)._impl
    host = c.storage[c.offset : c.offset + n].copy_to_host()
    if impl.dtype is dt.bfloat16:
        host = host.view(dt.bfloat16.numpy_dtype)
    return host.reshape(impl.sizes)
