"""``Parameter`` and ``Buffer``: tensors that modules register (mirrors ``torch/nn/parameter.py``).

A ``Parameter`` is a ``Tensor`` subclass whose only differences are that it requires grad by
default, prints as ``Parameter containing:``, and is registered in ``Module._parameters`` when
assigned as a module attribute. ``Parameter(t)`` shares ``t``'s storage (it is a new handle
over the same data), as PyTorch's does.
"""

from __future__ import annotations

from minitorch_nn import _C
from minitorch_nn._C import TensorImpl
from minitorch_nn._tensor import Tensor


def _alias_impl(data):
    src = data._impl
    impl = TensorImpl(src.storage, src.sizes, src.strides, src.offset, src.dtype, src.device, src.version)
    return impl


class Parameter(Tensor):
    """A tensor that is a module parameter: requires grad by default, listed by ``parameters()``."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from minitorch_nn._functions.factories import empty

            data = empty(0)
        if type(data) is not Tensor and type(data) is not cls and not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): data must be a Tensor, got {type(data).__name__}")
        impl = _alias_impl(data)
        t = _C._wrap(cls, impl)
        t.requires_grad_(requires_grad)
        return t

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, proto):
        from minitorch_nn._serialization_helpers import _rebuild_parameter

        return (_rebuild_parameter, (self.detach(), self.requires_grad))


class Buffer:
    """Marks a tensor to be registered as a buffer when assigned to a module (``nn.Buffer``)."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            from minitorch_nn._functions.factories import empty

            data = empty(0)
        t = data.detach().requires_grad_(data.requires_grad) if False else data
        t.persistent = persistent
        t._is_buffer = True
        return t
