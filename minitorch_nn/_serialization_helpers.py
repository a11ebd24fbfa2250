"""deepcopy and pickle support for tensors (``Tensor.__deepcopy__``/``__reduce_ex__``).

Mirrors ``torch/_tensor.py``: a deep copy is a new tensor with copied data (views of one
storage stay views of one copied storage within the same ``memo``), the same class,
requires_grad, a deep copy of ``.grad`` and of the instance ``__dict__``. Only leaves can be
deep-copied, with PyTorch's message otherwise.
"""

from __future__ import annotations

import copy

import numpy as np


def deepcopy_tensor(t, memo):
    from minitorch_nn._C import TensorImpl, _wrap

    if id(t) in memo:
        return memo[id(t)]
    if not t.is_leaf:
        raise RuntimeError(
            "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the moment.  "
            "If you were attempting to deepcopy a module, this may be because of a torch.nn.utils.weight_norm usage, "
            "see https://github.com/pytorch/pytorch/pull/103001"
        )
    impl = t._impl
    key = ("storage", id(impl.storage))
    if impl.storage is None:
        storage = None
    elif key in memo:
        storage = memo[key]
    else:
        storage = impl.storage.copy() if isinstance(impl.storage, np.ndarray) else impl.storage.copy_to_device() if hasattr(impl.storage, "copy_to_device") else copy.deepcopy(impl.storage)
        memo[key] = storage
    new_impl = TensorImpl(storage, impl.sizes, impl.strides, impl.offset, impl.dtype, impl.device)
    new_impl.requires_grad = impl.requires_grad
    new = _wrap(type(t), new_impl)
    memo[id(t)] = new
    if impl.grad is not None:
        new_impl.grad = copy.deepcopy(impl.grad, memo)
    if t.__dict__:
        new.__dict__.update(copy.deepcopy(t.__dict__, memo))
    slots = [s for cls in type(t).__mro__ for s in getattr(cls, "__slots__", ()) if s not in ("__dict__", "__weakref__")]
    for s in slots:
        if hasattr(t, s):
            setattr(new, s, copy.deepcopy(getattr(t, s), memo))
    return new


def _rebuild(cls, array, dtype_name, device_str, requires_grad, state):
    from minitorch_nn import _dtype as dt
    from minitorch_nn import _tensor
    from minitorch_nn._tensor import _from_array, _new_meta

    if _tensor.instance_class_hook is not None:
        _tensor.instance_class_hook(cls)
    dtype = dt._dtype_from_name(dtype_name)
    if device_str == "meta":
        t = _new_meta(array, dtype, cls=cls)
    else:
        t = _from_array(np.asarray(array, order="C").astype(dtype.numpy_dtype), dtype, cls=cls)
        if device_str != "cpu":
            t = t.to(device_str)
            t.__class__ = cls
    t._impl.requires_grad = requires_grad
    if state:
        t.__dict__.update(state)
    return t


def _rebuild_strided(cls, storage, sizes, strides, offset, dtype_name, requires_grad, state):
    """A cpu tensor over a copy of its whole storage, with its sizes, strides and offset."""
    from minitorch_nn import _dtype as dt
    from minitorch_nn._C import TensorImpl, _wrap
    from minitorch_nn._device import CPU

    dtype = dt._dtype_from_name(dtype_name)
    storage = np.ascontiguousarray(storage, dtype=dtype.numpy_dtype).reshape(-1)
    sizes, strides, offset = tuple(int(s) for s in sizes), tuple(int(s) for s in strides), int(offset)
    if len(sizes) != len(strides) or offset < 0 or any(s < 0 for s in (*sizes, *strides)):
        raise RuntimeError(f"pickled tensor has an invalid geometry: sizes {sizes}, strides {strides}, offset {offset}")
    if 0 not in sizes and offset + sum((n - 1) * st for n, st in zip(sizes, strides)) >= max(storage.size, 1):
        raise RuntimeError(f"pickled tensor's geometry reaches past its storage of {storage.size} elements")
    impl = TensorImpl(storage, sizes, strides, offset, dtype, CPU)
    impl.requires_grad = requires_grad
    t = _wrap(cls, impl)
    if state:
        t.__dict__.update(state)
    return t


def reduce_tensor(t):
    """Pickle a tensor. A cpu tensor keeps its layout, as in PyTorch: its whole storage is copied
    with its sizes, strides and offset (a transposed or sliced tensor comes back transposed or
    sliced). Other devices: (class, contiguous data copy, dtype, device, requires_grad, __dict__)."""
    impl = t._impl
    if not t.is_meta and str(t.device) == "cpu" and isinstance(impl.storage, np.ndarray):
        return (_rebuild_strided, (type(t), impl.storage.copy(), tuple(impl.sizes), tuple(impl.strides), impl.offset,
                                   t.dtype.name, t.requires_grad, dict(t.__dict__)))
    if t.is_meta:
        data = tuple(t.shape)
    else:
        data = t.detach().cpu()._array.copy()
    return (_rebuild, (type(t), data, t.dtype.name, str(t.device), t.requires_grad, dict(t.__dict__)))
