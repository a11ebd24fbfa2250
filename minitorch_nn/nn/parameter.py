"""``Parameter`` and ``Buffer``: tensors that modules register (mirrors ``torch/nn/parameter.py``).

A ``Parameter`` is a ``Tensor`` subclass that differs from a tensor in three ways only: it
requires grad by default, it prints as ``Parameter containing:``, and assigning one as a module
attribute registers it in ``Module._parameters``. ``Parameter(t)`` for a plain tensor is a new
handle over ``t``'s storage (no copy), as PyTorch's ``_make_subclass`` gives.

For a tensor *subclass* (one that defines its own ``__torch_function__``, say a quantized
weight), ``Parameter(t)`` keeps the subclass: it returns ``t.detach()`` with an ``_is_param``
flag set, and a metaclass makes ``isinstance(x, Parameter)`` answer True for such flagged
tensors. ``Buffer`` uses the same trick with ``_is_buffer``: ``Buffer(t)`` is not really an
instance of a Buffer class, it is ``t.detach()`` marked so that ``module.x = Buffer(t)``
registers a buffer (with ``persistent=`` remembered on the tensor).

Differences from PyTorch: none intended. Lazy parameters (``UninitializedParameter``) live with
the lazy modules.
"""

from __future__ import annotations

from minitorch_nn import _C
from minitorch_nn._C import TensorImpl
from minitorch_nn._tensor import Tensor
from minitorch_nn.autograd import grad_mode as _grad_mode


def _alias_impl(data):
    """A new payload over ``data``'s storage, sizes, strides and version counter."""
    src = data._impl
    return TensorImpl(
        src.storage, src.sizes, src.strides, src.offset, src.dtype, src.device, src.version
    )


class _ParameterMeta(type):
    # ``isinstance(t, Parameter)`` is also True for subclass tensors flagged ``_is_param``.
    def __instancecheck__(cls, instance) -> bool:
        if (
            cls is Parameter
            and isinstance(instance, Tensor)
            and getattr(instance, "_is_param", False)
        ):
            return True
        return super().__instancecheck__(instance)


class Parameter(Tensor, metaclass=_ParameterMeta):
    """A tensor that is a module parameter: requires grad by default, listed by ``parameters()``.

    Example::

        >>> w = Parameter(minitorch_nn.zeros(2))
        >>> w.requires_grad
        True
    """

    # Operations on a Parameter give plain Tensors (PyTorch's rule): no re-wrapping handler.
    __torch_function__ = _C._disabled_torch_function_impl

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from minitorch_nn._functions.factories import empty

            data = empty(0)
        if type(data) is Tensor or type(data) is Parameter:
            # The plain case: a new Parameter handle sharing data's storage.
            # (``_C._wrap`` wants a plain ``type``; our metaclass makes cls a subclass of it.)
            if requires_grad and not (data.dtype.is_floating_point or data.dtype.is_complex):
                raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
            if requires_grad and _grad_mode.is_inference_counter(data._impl.version) \
                    and not _grad_mode.is_inference_mode_enabled():
                raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
            t = _C.TensorBase.__new__(cls)
            _C._set_impl(t, _alias_impl(data))
            t._impl.requires_grad = bool(requires_grad)
            return t
        if not isinstance(data, Tensor):
            # PyTorch fails on data.detach() here, so the error is an AttributeError
            raise AttributeError(f"'{type(data).__name__}' object has no attribute 'detach'")
        # A tensor subclass stays its own type; it is only flagged as a parameter.
        t = data.detach().requires_grad_(requires_grad)
        if type(t) is not type(data):
            raise RuntimeError(
                f"Creating a Parameter from an instance of type {type(data).__name__} "
                "requires that detach() returns an instance of the same type, but return "
                f"type {type(t).__name__} was found instead. To use the type as a "
                "Parameter, please correct the detach() semantics defined by "
                "its __torch_dispatch__() implementation."
            )
        t._is_param = True
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
        # Like PyTorch, hooks are not pickled; the instance __dict__ (if any) is.
        state = dict(self.__dict__)
        if not state:
            return (_rebuild_parameter, (self.detach(), self.requires_grad))
        return (_rebuild_parameter_with_state, (self.detach(), self.requires_grad, state))


def _rebuild_parameter(data, requires_grad):
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, state):
    p = Parameter(data, requires_grad)
    p.__dict__.update(state)
    return p


class _BufferMeta(type):
    # ``isinstance(t, Buffer)`` is True for any tensor flagged ``_is_buffer``.
    def __instancecheck__(cls, instance) -> bool:
        if (
            cls is Buffer
            and isinstance(instance, Tensor)
            and getattr(instance, "_is_buffer", False)
        ):
            return True
        return super().__instancecheck__(instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    """Marks a tensor to become a buffer when assigned to a module (``nn.Buffer``).

    ``Buffer(t, persistent=False)`` returns ``t.detach()`` (same class as ``t``, same
    requires_grad) flagged ``_is_buffer`` and carrying ``persistent``; ``module.x = Buffer(t)``
    then calls ``register_buffer("x", ..., persistent)``.
    """

    # As Parameter (and PyTorch's Buffer): an instance (``t.as_subclass(Buffer)``) re-wraps nothing.
    __torch_function__ = _C._disabled_torch_function_impl

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            from minitorch_nn._functions.factories import empty

            data = empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t


def is_lazy(param) -> bool:
    """True for the uninitialized parameters and buffers of lazy modules."""
    return bool(getattr(type(param), "_is_uninitialized_lazy", False))


__all__ = ["Parameter", "Buffer", "is_lazy"]


# -- lazy placeholders (owned by the lazy-modules work; defined in parameter_lazy.py) ------------
# Imported here, after Parameter exists, so ``torch.nn.parameter.UninitializedParameter`` works.
from minitorch_nn.nn.parameter_lazy import (  # noqa: E402
    UninitializedBuffer,
    UninitializedParameter,
    UninitializedTensorMixin,
)

__all__ += ["UninitializedTensorMixin", "UninitializedParameter", "UninitializedBuffer"]
