"""Writes ``data.pkl`` the way ``torch.save`` does (mirrors ``torch/serialization.py::_save``).

The object is pickled with protocol 2 (PyTorch's default). Two hooks make a tensor portable:

* ``reducer_override`` turns a tensor into a call of a PyTorch rebuild function, written as a
  pickle ``GLOBAL`` by name: ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride,
  requires_grad, OrderedDict())``; a Parameter wraps that in ``torch._utils._rebuild_parameter``
  and a meta tensor is ``torch._utils._rebuild_meta_tensor_no_storage(dtype, size, stride,
  requires_grad)``, exactly as PyTorch pickles its own tensors.
* ``persistent_id`` replaces each *storage* by the tuple ``('storage', torch.FloatStorage,
  key, location, numel)``; its bytes go to the zip record ``data/<key>``. Tensors that share a
  storage (views, ``t`` and ``t.T``) get the same key, so they share it again after loading.

The names are written as text (``torch._utils _rebuild_tensor_v2``); nothing is imported, so
saving does not need PyTorch. We use the pure-Python :class:`pickle._Pickler` because only it
lets us write a ``GLOBAL`` for a name whose module we do not have.

Anything else is pickled as Python pickles it, as PyTorch does: a whole ``nn.Module`` (or any
object) goes in *by class reference* (``__main__.Net`` plus its ``__dict__``), a tensor subclass
as ``torch._tensor._rebuild_from_type_v2`` with its class. Such a file only loads with
``load(f, weights_only=False)``, which imports and runs what the file names; the default
``weights_only=True`` refuses it. A class or function pickle cannot find again by name (a
lambda, a class defined inside a function, a parametrized module) fails before a file is made.
Empty ``bytes`` are written as ``_codecs.encode('', 'latin1')``, which PyTorch's
``weights_only`` reader accepts (its own ``b''`` pickle is refused there). Tensors without
storage (``_make_wrapper_subclass`` wrappers) are refused with a ``TypeError``.
"""

from __future__ import annotations

import codecs
import collections
import pickle
import types

import numpy as np

from minitorch_nn import _dtype as dt
from minitorch_nn._C import Size, TensorImpl, _wrap
from minitorch_nn._device import device as Device
from minitorch_nn._tensor import Tensor


class TorchName:
    """A name in PyTorch's namespace, written into the pickle as a ``GLOBAL`` (never imported)."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str):
        self.module, self.name = module, name

    def __repr__(self):
        return f"{self.module}.{self.name}"

    def __call__(self, *args):  # pickle's save_reduce insists on a callable; it is never called
        raise TypeError(f"{self!r} is only a name written into a checkpoint")


REBUILD_TENSOR_V2 = TorchName("torch._utils", "_rebuild_tensor_v2")
REBUILD_PARAMETER = TorchName("torch._utils", "_rebuild_parameter")
REBUILD_PARAMETER_WITH_STATE = TorchName("torch._utils", "_rebuild_parameter_with_state")
REBUILD_META = TorchName("torch._utils", "_rebuild_meta_tensor_no_storage")
REBUILD_FROM_TYPE_V2 = TorchName("torch._tensor", "_rebuild_from_type_v2")
TORCH_TENSOR = TorchName("torch", "Tensor")
TORCH_SIZE = TorchName("torch", "Size")
TORCH_DEVICE = TorchName("torch", "device")

# PyTorch's legacy typed-storage class for each dtype (the name written in the persistent id).
STORAGE_CLASS_NAME = {
    dt.bool: "BoolStorage",
    dt.uint8: "ByteStorage",
    dt.int8: "CharStorage",
    dt.int16: "ShortStorage",
    dt.int32: "IntStorage",
    dt.int64: "LongStorage",
    dt.float16: "HalfStorage",
    dt.bfloat16: "BFloat16Storage",
    dt.float32: "FloatStorage",
    dt.float64: "DoubleStorage",
    dt.complex64: "ComplexFloatStorage",
    dt.complex128: "ComplexDoubleStorage",
}
_STORAGE_NAMES = {d: TorchName("torch", n) for d, n in STORAGE_CLASS_NAME.items()}

# Plain values pickle's own code writes; torch's weights_only reader accepts all of them.
_PLAIN = {dict, list, tuple, str, int, float, bool, type(None), set, collections.OrderedDict}


class StorageRef:
    """One storage to be written as record ``data/<key>``."""

    __slots__ = ("key", "storage", "dtype", "numel", "location")

    def __init__(self, key, storage, dtype, numel, location):
        self.key, self.storage, self.dtype, self.numel, self.location = (
            key,
            storage,
            dtype,
            numel,
            location,
        )

    def host_bytes(self):
        """The storage's bytes as a flat little-endian uint8 numpy array (no copy on cpu)."""
        s = self.storage
        if not isinstance(s, np.ndarray):
            s = s.copy_to_host()  # a numba device array (cuda)
        s = np.ascontiguousarray(s).reshape(-1)
        if s.dtype.byteorder == ">":
            s = s.astype(s.dtype.newbyteorder("<"))
        return s.view(np.uint8)[: self.numel * self.dtype.itemsize]


def _storageless(t) -> TypeError:
    kind = type(t)
    return TypeError(
        f"minitorch_nn.save cannot store a {kind.__module__}.{kind.__qualname__}: it has no storage (a "
        "_make_wrapper_subclass tensor). Save the tensors it wraps instead."
    )


class CheckpointPickler(pickle._Pickler):
    """Pickles one object for ``data.pkl``; collects the storages it meets in ``self.storages``."""

    def __init__(self, file):
        super().__init__(file, protocol=2)
        self.storages: dict[int, StorageRef] = {}
        self._alive = []  # aliases made while pickling: their ids must stay unique

    # -- storages --------------------------------------------------------------------------
    def persistent_id(self, obj):
        if type(obj) is StorageRef:
            return ("storage", _STORAGE_NAMES[obj.dtype], obj.key, obj.location, obj.numel)
        return None

    def _storage_ref(self, t) -> StorageRef:
        impl = t._impl
        ref = self.storages.get(id(impl.storage))
        if ref is not None:
            if ref.dtype is not impl.dtype:
                raise RuntimeError(
                    "Cannot save multiple tensors or storages that view the same data as different types"
                )
            return ref
        nbytes = impl.storage.nbytes
        ref = StorageRef(
            str(len(self.storages)),
            impl.storage,
            impl.dtype,
            nbytes // impl.dtype.itemsize,
            str(impl.device),
        )
        self.storages[id(impl.storage)] = ref
        return ref

    # -- objects ---------------------------------------------------------------------------
    def reducer_override(self, obj):
        t = type(obj)
        if t in _PLAIN:
            return NotImplemented
        if t is TorchName:
            return obj.name  # a str: pickle calls save_global(obj, name)
        if isinstance(obj, Tensor):
            return self._reduce_tensor(obj)
        if t is dt.dtype:
            return obj.name
        if t is Size:
            return (TORCH_SIZE, (tuple(obj),))
        if t is Device:
            return (TORCH_DEVICE, (obj.type,) if obj.index is None else (obj.type, obj.index))
        if t is bytes:
            return (codecs.encode, (obj.decode("latin1"), "latin1"))
        if t is bytearray:
            return (bytearray, (bytes(obj),))
        if t is complex:
            return (complex, (obj.real, obj.imag))
        if t is collections.Counter:
            return (collections.Counter, (dict(obj),))
        if isinstance(obj, (type, types.FunctionType)) and "<locals>" in getattr(obj, "__qualname__", ""):
            # a class or function defined inside a function cannot be found again by name:
            # PyTorch's (C) pickler's error
            raise AttributeError(f"Can't pickle local object {obj.__qualname__!r}")
        return NotImplemented  # anything else: pickled as Python pickles it (classes by reference)

    def save_global(self, obj, name=None):
        if type(obj) is TorchName:
            module, name = obj.module, obj.name
        elif type(obj) is dt.dtype:
            module, name = "torch", obj.name
        else:
            return super().save_global(obj, name)   # written by reference: module and name
        self.write(pickle.GLOBAL + f"{module}\n{name}\n".encode())
        self.memoize(obj)

    def _reduce_tensor(self, t):
        cls = type(t)
        from minitorch_nn.nn.parameter import Parameter

        if t._impl.storage is None and t._impl.device.type != "meta":
            raise _storageless(t)
        state = dict(t.__dict__) if getattr(t, "__dict__", None) else None
        if cls is not Tensor and cls is not Parameter:
            # a subclass: the plain tensor, then its class (by reference) and attributes
            plain = _wrap(Tensor, t._impl)
            self._alive.append(plain)
            func, args = self._reduce_tensor(plain)
            return (REBUILD_FROM_TYPE_V2, (func, cls, args, state))
        if cls is Parameter:
            impl = t._impl
            data = _wrap(
                Tensor,
                TensorImpl(
                    impl.storage, impl.sizes, impl.strides, impl.offset, impl.dtype, impl.device
                ),
            )
            self._alive.append(data)
            hooks = collections.OrderedDict()
            if state:
                return (REBUILD_PARAMETER_WITH_STATE, (data, t.requires_grad, hooks, state))
            return (REBUILD_PARAMETER, (data, t.requires_grad, hooks))
        impl = t._impl
        sizes, strides = tuple(impl.sizes), tuple(impl.strides)
        if impl.device.type == "meta":
            func, args = REBUILD_META, (impl.dtype, sizes, strides, t.requires_grad)
        else:
            ref = self._storage_ref(t)
            func = REBUILD_TENSOR_V2
            args = (ref, impl.offset, sizes, strides, t.requires_grad, collections.OrderedDict())
        if state:
            return (REBUILD_FROM_TYPE_V2, (func, TORCH_TENSOR, args, state))
        return (func, args)
