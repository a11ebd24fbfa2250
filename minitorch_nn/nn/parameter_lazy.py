"""Placeholders for tensors whose shape is not known yet (mirrors the lazy half of ``torch/nn/parameter.py``).

A lazy module (``nn.LazyLinear``...) cannot build its weight in ``__init__``: the weight's shape
depends on the input it has not seen. It holds an :class:`UninitializedParameter` instead (and
:class:`UninitializedBuffer` for running statistics). Such a placeholder is a real tensor object
with an empty payload, so it can sit in ``_parameters``, be listed by ``parameters()``, saved in a
``state_dict``, moved with ``.to()``, and be held by an optimizer. Three things make it special:

1. **It refuses to be used.** Its ``__torch_function__`` lets through only what makes sense
   without a shape -- property reads (``dtype``, ``device``, ``requires_grad``, ``data``),
   ``size()``, ``copy_``, dtype and device casts, ``is_floating_point``... -- and raises
   ``ValueError`` for anything else (``p + 1``, ``p.dim()``, ``torch.empty_like(p)``). Reading
   ``p.shape`` raises ``RuntimeError``, because ``load_state_dict`` compares shapes and that is
   where users usually meet it.
2. **Casts and moves stick.** ``module.half()`` or ``module.to("cuda")`` before the first forward
   replaces the empty payload by an empty payload of the new dtype/device; the class stays.
3. **It turns into the real thing in place.** :meth:`UninitializedTensorMixin.materialize` gives
   the *same Python object* a fresh payload of the requested shape (``torch.empty``: values are
   filled in by the module's ``reset_parameters`` afterwards) and sets ``__class__`` to
   ``cls_to_become`` (``Parameter`` or ``Tensor``). Anything that held a reference -- the module's
   ``_parameters``, an optimizer's ``param_groups`` -- now holds an ordinary parameter.

How the refusal works here: subclasses with a live ``__torch_function__`` get dispatching
property getters and methods (``_tensor_subclass.py``), so ``p.shape`` or ``p.dim()`` reach the
handler below with ``func`` being ``Tensor.shape.__get__`` or ``Tensor.dim``, as in PyTorch.

Differences from PyTorch:

* The ``.shape`` error is raised from ``__torch_function__`` (PyTorch overrides the property).
  The effect for users is the same; the reason is that our kernels are Python and read ``.shape``
  of their arguments, which they do with subclass handlers disabled, so they are not refused.
* ``materialize`` checks PyTorch's "data set to a tensor that requires gradients must be
  floating point" rule itself (our ``.data`` setter does not check dtypes).
* ``copy.deepcopy`` works for both placeholders. PyTorch defines it for
  ``UninitializedParameter`` only, so deep-copying a ``LazyBatchNorm`` raises ``ValueError`` there.
"""

from __future__ import annotations

import copy

from minitorch_nn._tensor import Tensor
from minitorch_nn.nn.parameter import Parameter

__all__ = ["UninitializedTensorMixin", "UninitializedParameter", "UninitializedBuffer"]


def _empty(shape, device=None, dtype=None):
    from minitorch_nn._functions.factories import empty

    return empty(shape, device=device, dtype=dtype)


_SHAPE_ERROR = (
    "Can't access the shape of an uninitialized parameter or buffer. "
    "This error usually happens in `load_state_dict` when trying to load "
    "an uninitialized parameter into an initialized one. "
    "Call `forward` to initialize the parameters before accessing their attributes."
)


def _allowed_methods():
    """What may run on a placeholder: things that need no shape (PyTorch's list)."""
    names = (
        "__hash__",
        "size",
        "copy_",
        "is_complex",
        "is_floating_point",
        "half",
        "float",
        "double",
        "char",
        "short",
        "int",
        "long",
        "cuda",
        "cpu",
        "to",
        "get_device",
        # Not in PyTorch's list, because there it is a C method that never dispatches; here it is
        # one of the members that do, and swap_tensors (the __future__ swap flag) needs it.
        "_use_count",
    )
    return [getattr(Tensor, n) for n in names if hasattr(Tensor, n)]


class UninitializedTensorMixin:
    """What ``UninitializedParameter`` and ``UninitializedBuffer`` share (see the module docstring)."""

    # ``nn.parameter.is_lazy`` looks for this flag on the type.
    _is_uninitialized_lazy = True
    _allowed_methods = _allowed_methods()
    cls_to_become: type = Tensor

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Become a ``cls_to_become`` of ``shape`` in place (same object), values uninitialized.

        ``device``/``dtype`` default to the placeholder's own, which is where ``module.to(...)``
        before the first forward left them. ``shape`` may be an int.
        """
        if device is None:
            device = self.data.device
        if dtype is None:
            dtype = self.data.dtype
        new_data = _empty(shape, device=device, dtype=dtype)
        if self.requires_grad and not (
            dtype.is_floating_point or getattr(dtype, "is_complex", False)
        ):
            raise RuntimeError(
                "data set to a tensor that requires gradients must be floating point or complex dtype"
            )
        # Re-point the payload (storage, sizes, dtype, device); requires_grad and __dict__ stay.
        self.data = new_data
        self.__class__ = self.cls_to_become

    def share_memory_(self):
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. "
            "Call `forward` to initialize the parameters before calling "
            "`module.share_memory()`."
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    def __deepcopy__(self, memo):
        # A fresh placeholder with the same flag, dtype and device (and __dict__: a buffer's
        # ``persistent``). PyTorch defines this for UninitializedParameter only, so deepcopy of a
        # module holding an UninitializedBuffer (LazyBatchNorm) raises there; here it works.
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.requires_grad, self.data.device, self.data.dtype)
        result.__dict__.update(copy.deepcopy(self.__dict__, memo))
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, proto):
        # Nothing to save but the flag: unpickling builds a fresh placeholder (hooks are never pickled).
        return (type(self), (self.requires_grad,))

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        # Property getters/setters arrive as method-wrappers (``Tensor.dtype.__get__``).
        if type(func).__name__ == "method-wrapper":
            if func == _shape_getter():
                raise RuntimeError(_SHAPE_ERROR)
            return super().__torch_function__(func, types, args, kwargs or {})
        if func in cls._allowed_methods:
            return super().__torch_function__(func, types, args, kwargs or {})
        raise ValueError(
            f"Attempted to use an uninitialized parameter in {_describe(func)}. "
            "This error happens when you are using a `LazyModule` or "
            f"explicitly manipulating `torch.nn.parameter.{cls.__name__}` "
            "objects. When using LazyModules Call `forward` with a dummy batch "
            "to initialize the parameters before calling torch functions"
        )


def _describe(func):
    """How PyTorch's message names ``func``: a Tensor method as the C method it is there."""
    name = getattr(func, "__name__", None)
    if name and getattr(Tensor, name, None) is func:
        return f"<method '{name}' of 'torch._C.TensorBase' objects>"
    return func


def _shape_getter():
    return Tensor.shape.__get__


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A ``Parameter`` whose shape is not known yet; ``materialize`` makes it a ``Parameter``.

    ``isinstance(p, nn.Parameter)`` is True, so a module registers it like any parameter.

    Example::

        >>> p = UninitializedParameter()
        >>> p
        <UninitializedParameter>
        >>> p.materialize((2, 3)); type(p).__name__, tuple(p.shape)
        ('Parameter', (2, 3))
    """

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return Tensor._make_subclass(cls, _empty(0, device=device, dtype=dtype), requires_grad)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet; ``materialize`` makes it a plain ``Tensor``.

    It carries ``persistent`` and ``_is_buffer`` like ``nn.Buffer``, so ``module.x =
    UninitializedBuffer()`` registers a buffer.
    """

    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        t = Tensor._make_subclass(cls, _empty(0, device=device, dtype=dtype), requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        pass
