"""``TorchDispatchMode`` and the wrapper-subclass helpers (mirrors ``torch/utils/_python_dispatch.py``).

A *dispatch mode* sees every aten op that reaches the python layer of the dispatch chain (after
autograd, before the kernel), including factory ops that take no tensor (``aten.zeros.default``).
A *wrapper subclass* is a tensor made with ``Tensor._make_wrapper_subclass`` that keeps real
tensors in attributes; if it also defines ``__tensor_flatten__``/``__tensor_unflatten__`` it is
*traceable*: code such as ``nn.Module._apply`` can take it apart and rebuild it.

The machinery (mode stack, argument normalisation, calling the handlers) is in
``minitorch_nn/_dispatch/python_dispatch.py``; this file is the user-facing API.

Differences from PyTorch: no infra modes (FakeTensor, proxy, functionalization), no
pre-dispatch key, and ``return_and_correct_aliasing`` is not provided.
"""

from __future__ import annotations

from minitorch_nn._dispatch import python_dispatch as _pd


class TorchDispatchMode:
    """Intercept every aten op while the mode is active (``with MyMode(): ...``).

    Define ``__torch_dispatch__(self, func, types, args=(), kwargs=None)``; ``func`` is the
    ``OpOverload`` (``aten.add.Tensor``) and calling ``func(*args, **kwargs)`` inside it runs the
    op with this mode off the stack (so it reaches the next mode out, or the kernel).

    Example::

        >>> import minitorch_nn as torch
        >>> from minitorch_nn.utils._python_dispatch import TorchDispatchMode
        >>> class Log(TorchDispatchMode):
        ...     def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        ...         print(func)
        ...         return func(*args, **(kwargs or {}))
        >>> with Log():
        ...     _ = torch.ones(2).sum(0)
        aten.ones.default
        aten.sum.dim_IntList
    """

    def __init__(self, _dispatch_key=None):
        pass

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        _pd.push_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        _pd.pop_mode()
        return False

    @classmethod
    def push(cls, *args, **kwargs):
        return cls(*args, **kwargs)

    @classmethod
    def is_infra_mode(cls) -> bool:
        return False


def _get_current_dispatch_mode():
    """The mode that would handle the next op (the innermost), or None."""
    return _pd.current_mode()


def _get_current_dispatch_mode_stack() -> list:
    return list(_pd._modes)


def _len_torch_dispatch_stack() -> int:
    return _pd.mode_stack_len()


def _push_mode(mode) -> None:
    _pd.push_mode(mode)


def _pop_mode(k=None):
    return _pd.pop_mode()


def _pop_mode_temporarily(k=None):
    """Context manager: take the innermost mode off the stack for a while (yields it)."""
    return _pd.pop_mode_temporarily()


def _has_traceable_wrapper_subclass_protocol(t) -> bool:
    return hasattr(t, "__tensor_flatten__") and hasattr(t, "__tensor_unflatten__")


def is_traceable_wrapper_subclass(t) -> bool:
    """True for a tensor subclass instance that defines ``__tensor_flatten__`` and ``__tensor_unflatten__``."""
    from minitorch_nn._tensor import Tensor

    return (
        isinstance(t, Tensor)
        and type(t) is not Tensor
        and _has_traceable_wrapper_subclass_protocol(t)
    )


def is_traceable_wrapper_subclass_type(t) -> bool:
    """Same as :func:`is_traceable_wrapper_subclass`, for a class."""
    from minitorch_nn._tensor import Tensor

    return (
        isinstance(t, type)
        and issubclass(t, Tensor)
        and t is not Tensor
        and _has_traceable_wrapper_subclass_protocol(t)
    )


def transform_subclass(t, callback, outer_size=None, outer_stride=None):
    """Rebuild the traceable wrapper ``t`` with ``callback(name, inner)`` applied to each inner tensor."""
    outer_size = outer_size if outer_size is not None else t.size()
    outer_stride = outer_stride if outer_stride is not None else t.stride()
    names, ctx = t.__tensor_flatten__()
    inner = {name: callback(name, getattr(t, name)) for name in names}
    out = type(t).__tensor_unflatten__(inner, ctx, outer_size, outer_stride)
    if out.shape != outer_size:
        raise AssertionError(
            f"Expected return value from {type(t)}__tensor_unflatten__() to have shape equal to "
            f"{outer_size}, but got: {out.shape}"
        )
    return out
