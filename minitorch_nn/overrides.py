"""``__torch_function__``: letting tensor subclasses and modes override public functions.

Mirrors ``torch/overrides.py``. Every public function and Tensor method is wrapped by
:func:`public`; when none of its arguments is a tensor subclass with its own
``__torch_function__`` and no ``TorchFunctionMode`` is active, the wrapper calls the function
straight away (the fast path). Otherwise it calls :func:`handle_torch_function`, which follows
PyTorch's protocol: modes first (innermost first), then the argument types' handlers,
subclasses before their parents, until one returns something other than ``NotImplemented``.
"""

from __future__ import annotations

import functools

from minitorch_nn._C import TensorBase

# Set by minitorch_nn._tensor once the Tensor class exists (avoids an import cycle).
_BASE_TYPES: set = set()
_state = {"disabled": 0, "subclass_disabled": 0}
_mode_stack: list = []


def _overriding_types(args, kwargs):
    """Types among the arguments whose ``__torch_function__`` differs from the plain Tensor's."""
    found = []
    for a in _flat(args, kwargs):
        t = type(a)
        if t in _BASE_TYPES or not isinstance(a, TensorBase) and not hasattr(t, "__torch_function__"):
            continue
        if t not in found and hasattr(t, "__torch_function__"):
            found.append(t)
    return found


def _flat(args, kwargs):
    for a in args:
        if isinstance(a, (list, tuple)):
            yield from a
        else:
            yield a
    if kwargs:
        for a in kwargs.values():
            if isinstance(a, (list, tuple)):
                yield from a
            else:
                yield a


def has_torch_function(relevant_args) -> bool:
    """True when any argument's type overrides ``__torch_function__`` or a mode is active."""
    if _state["disabled"]:
        return False
    return bool(_mode_stack) or bool(_overriding_types(relevant_args, None))


def public(fn):
    """Wrap a public function so that ``__torch_function__`` overrides can intercept it."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if not _mode_stack and not _state["disabled"]:
            for a in args:
                t = type(a)
                if t in _BASE_TYPES or t in _PLAIN:
                    continue
                break
            else:
                if not kwargs or all(type(v) in _PLAIN or type(v) in _BASE_TYPES for v in kwargs.values()):
                    return fn(*args, **kwargs)
        return handle_torch_function(wrapper, _relevant(args, kwargs), *args, __impl=fn, **kwargs)

    wrapper.__wrapped_impl__ = fn
    return wrapper


_PLAIN = {int, float, bool, type(None), str, tuple, list}


def _relevant(args, kwargs):
    return tuple(_flat(args, kwargs))


def handle_torch_function(public_api, relevant_args, *args, __impl=None, **kwargs):
    """Run the ``__torch_function__`` protocol for ``public_api`` called with ``args``/``kwargs``."""
    impl = __impl or getattr(public_api, "__wrapped_impl__", public_api)
    if _state["disabled"]:
        return impl(*args, **kwargs)
    types = tuple(_overriding_types(relevant_args, None))
    if not types and not _mode_stack:
        return impl(*args, **kwargs)
    # The full protocol (modes, subclass ordering, Disable* contexts) arrives with the dispatch work.
    for t in types:
        out = t.__torch_function__(public_api, types, args, kwargs or None)
        if out is not NotImplemented:
            return out
    return impl(*args, **kwargs)
