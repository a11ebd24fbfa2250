"""``view_as_real`` and ``view_as_complex``: a complex tensor and its real (..., 2) view share memory.

Mirrors PyTorch's ``aten/src/ATen/native/Complex.cpp``/``TensorConversions.cpp`` view kernels.
A complex64 element is two float32 numbers side by side (real, imaginary), so the real view of a
complex tensor has one more dimension of size 2 and stride 1, every other stride doubled and the
storage offset doubled; ``view_as_complex`` undoes exactly that, after PyTorch's checks on the
input's layout. The two tensors read the same memory (numpy views the storage with the other
element type), so a write through either is seen by both, and they share the version counter.

``Tensor.real``/``Tensor.imag`` are ``view_as_real(x)`` with the last dimension selected (see
``_functions/complex.py``). Differences: float16 inputs would give PyTorch's experimental
complex32, which does not exist here (a TypeError says so); cuda storage is not re-viewed, so
these views are refused on cuda with a clear error.
"""

from __future__ import annotations

from minitorch_nn import _dtype as dt
from minitorch_nn._C import TensorBase
from minitorch_nn._ops import aten
from minitorch_nn.backends.common import type_name


def _retyped(view, dtype, storage_length_divisor):
    """Give ``view`` (an alias) another element type, re-viewing its storage's memory as ``dtype``."""
    impl = view._impl
    impl.dtype = dtype
    storage = impl.storage
    if storage is not None:
        if not hasattr(storage, "view") or getattr(storage, "__cuda_array_interface__", None) is not None:
            raise RuntimeError(
                f"minitorch_nn supports complex views only on cpu and meta tensors, not on {view.device.type}; "
                "move the tensor to the cpu first (x.cpu())."
            )
        if storage_length_divisor > 1:
            # a float storage of odd length: the complex view cannot reach its last number anyway
            storage = storage[: storage.shape[0] - storage.shape[0] % storage_length_divisor]
        impl.storage = storage.view(dtype.numpy_dtype)
        impl.array = None
    return view


@aten.view_as_real.default.impl("any")
def view_as_real(self):
    if not isinstance(self, TensorBase) or not self.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    impl = self._impl
    sizes = tuple(impl.sizes) + (2,)
    strides = tuple(2 * s for s in impl.strides) + (1,)
    view = _retyped(_alias(self), self.dtype.to_real(), 1)
    # the geometry is checked against the storage in the new element type, so retype first
    view._impl.set_metadata(sizes, strides, 2 * impl.offset)
    return view


@aten.view_as_complex.default.impl("any")
def view_as_complex(self):
    d = self.dtype
    if d is dt.float16:
        raise TypeError(
            "view_as_complex of a float16 tensor gives PyTorch's complex32, which minitorch_nn does not have; "
            "convert it first (x.float())."
        )
    if d not in (dt.float32, dt.float64):
        raise RuntimeError(
            "view_as_complex is only supported for half, float and double tensors, but got a tensor of scalar "
            f"type: {type_name(d)}"
        )
    impl = self._impl
    sizes, strides = tuple(impl.sizes), tuple(impl.strides)
    if not sizes:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if sizes[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if strides[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if impl.offset % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    view = _retyped(_alias(self), d.to_complex(), 2)
    view._impl.set_metadata(sizes[:-1], tuple(s // 2 for s in strides[:-1]), impl.offset // 2)
    return view


def _alias(self):
    from minitorch_nn.backends.views import alias

    return alias(self)
