"""PyTorch's legacy constructors: ``Tensor(2, 3)``, ``Tensor([1, 2])``, ``FloatTensor(...)``.

Mirrors ``torch/csrc/utils/tensor_new.cpp`` (``legacy_tensor_ctor``). Old tutorials write
``nn.Parameter(torch.Tensor(out_features, in_features))`` and then initialise it, so these keep
working: sizes give a new tensor (zero-filled here; PyTorch leaves it uninitialised), a sequence
gives a copy of the data converted to the type's dtype, and a tensor gives an alias of it. ``torch.Tensor`` uses the default dtype; ``FloatTensor``, ``LongTensor``, ... their
own, and ``isinstance(t, torch.LongTensor)`` checks the dtype, as in PyTorch.
"""

from __future__ import annotations

import numpy as np

from minitorch_nn import _dtype as dt
from minitorch_nn._C import TensorBase, TensorImpl, _wrap


def legacy_new(cls, dtype, args, device=None):
    """Build a ``cls`` tensor the way ``torch.Tensor(*args)`` does, with elements of ``dtype``."""
    from minitorch_nn import _tensor
    from minitorch_nn._tensor import Tensor, _from_array

    if cls is not Tensor and _tensor.instance_class_hook is not None:
        _tensor.instance_class_hook(cls)
    if device is not None and str(device) not in ("cpu", "cpu:0"):
        raise RuntimeError(
            f"legacy constructor expects device type: cpu but device type: {str(device).split(':')[0]} was passed"
        )
    if not args:
        return _from_array(np.empty((0,), dtype=dtype.numpy_dtype), dtype, cls=cls)
    if len(args) == 1 and isinstance(args[0], TensorBase):
        # Tensor(t) is an alias of t, whatever t's dtype (PyTorch does not convert here)
        impl = args[0]._impl
        return _wrap(cls, TensorImpl(impl.storage, impl.sizes, impl.strides, impl.offset, impl.dtype, impl.device, impl.version))
    if all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args):
        return _from_array(np.zeros(tuple(int(a) for a in args), dtype=dtype.numpy_dtype), dtype, cls=cls)
    if len(args) == 1 and isinstance(args[0], (list, tuple, np.ndarray)):
        data = np.asarray(args[0] if not isinstance(args[0], np.ndarray) else args[0])
        if data.dtype == object:
            raise ValueError("expected sequence of length consistent across dimensions (ragged nested sequence)")
        return _from_array(np.array(data, dtype=dtype.numpy_dtype, order="C"), dtype, cls=cls)
    if len(args) == 1 and isinstance(args[0], str):
        raise TypeError("new(): invalid data type 'str'")
    raise TypeError(
        f"new(): data must be a sequence (got {type(args[0]).__name__})"
        if len(args) == 1
        else "new() received an invalid combination of arguments: pass sizes as ints or one sequence of data"
    )


def dt_type_name(d):
    return {
        dt.float32: "torch.FloatTensor", dt.float64: "torch.DoubleTensor", dt.float16: "torch.HalfTensor",
        dt.bfloat16: "torch.BFloat16Tensor", dt.int64: "torch.LongTensor", dt.int32: "torch.IntTensor",
        dt.int16: "torch.ShortTensor", dt.int8: "torch.CharTensor", dt.uint8: "torch.ByteTensor",
        dt.bool: "torch.BoolTensor",
    }[d]


class _LegacyTypeMeta(type):
    """``isinstance(t, FloatTensor)`` is true for float32 tensors, as in PyTorch."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, TensorBase) and obj.dtype is cls._dtype

    def __call__(cls, *args, device=None):
        from minitorch_nn._tensor import Tensor

        return legacy_new(Tensor, cls._dtype, args, device)

    def __repr__(cls):
        return f"<class '{dt_type_name(cls._dtype)}'>"


def _legacy_type(name, dtype):
    return _LegacyTypeMeta(name, (), {"_dtype": dtype, "__doc__": f"Legacy constructor for {dtype!r} tensors."})


FloatTensor = _legacy_type("FloatTensor", dt.float32)
DoubleTensor = _legacy_type("DoubleTensor", dt.float64)
HalfTensor = _legacy_type("HalfTensor", dt.float16)
BFloat16Tensor = _legacy_type("BFloat16Tensor", dt.bfloat16)
LongTensor = _legacy_type("LongTensor", dt.int64)
IntTensor = _legacy_type("IntTensor", dt.int32)
ShortTensor = _legacy_type("ShortTensor", dt.int16)
CharTensor = _legacy_type("CharTensor", dt.int8)
ByteTensor = _legacy_type("ByteTensor", dt.uint8)
BoolTensor = _legacy_type("BoolTensor", dt.bool)

LEGACY_TYPES = (FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor, IntTensor, ShortTensor,
                CharTensor, ByteTensor, BoolTensor)
