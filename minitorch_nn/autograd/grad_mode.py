"""Grad mode: the switch that decides whether ops are recorded for backward.

Mirrors ``torch/autograd/grad_mode.py``: ``no_grad``, ``enable_grad``, ``set_grad_enabled``,
``inference_mode`` and ``is_grad_enabled``. Each works as a context manager and as a decorator
(on plain functions and on generator functions, like PyTorch's ``_DecoratorContextManager``).

The state is one module-level flag, ``_enabled``. The autograd layer of the dispatch chain reads
it on every op (``recording.py``), so it is a plain global rather than anything fancier.

``inference_mode`` is ``no_grad`` plus the ``is_inference_mode_enabled`` flag, which the tensor
core also keeps (``_C._set_inference_mode``): every version counter created while it is on is
marked, so tensors allocated under it, and all views of them, are "inference tensors"
(``Tensor.is_inference()``). Outside inference mode they may not be written in place
(``_dispatch.dispatch``), saved for backward (``SavedTensor``) or made to require grad.

``.data`` and ``detach()`` of an inference tensor taken *outside* inference mode are a third kind,
as in PyTorch: ``is_inference()`` stays True (they keep the inference tensor's dispatch keys), but
they get a version counter of their own (:class:`DetachedInferenceCounter`), so they may be
written in place (``p.data.add_(1)``), while ``requires_grad_()`` and saving for backward are
still refused.

Views of inference tensors are not tracked as views (``_is_view()`` is False, ``_base`` None, as in
PyTorch, whose inference tensors keep no view metadata); a view of such a ``.data`` tensor is an
inference tensor without a counter again (``_C.mark_view``).

Where we differ from PyTorch: there is one grad-mode flag for the whole process, not one per
thread.
"""

from __future__ import annotations

import functools
import inspect

from minitorch_nn import _C

_enabled = True          # read by autograd/recording.py on every op
_inference = False
_C._set_grad_mode_namespace(globals())   # a view made under no_grad remembers it (``_C.mark_view``)


def is_grad_enabled() -> bool:
    """True when ops on tensors that require grad are being recorded."""
    return _enabled


def is_inference_mode_enabled() -> bool:
    return _inference


class DetachedInferenceCounter(_C.VersionCounter):
    """The version counter of ``.data`` / ``detach()`` of an inference tensor taken outside
    inference mode: it counts writes (``inference`` is False) while the tensor still reports
    ``is_inference()`` (see the module docstring)."""

    __slots__ = ()


def is_inference_counter(version) -> bool:
    """Whether a tensor with this version counter is an inference tensor (``is_inference()``)."""
    return version.inference or type(version) is DetachedInferenceCounter


def detached_counter(version, own: bool = False):
    """The counter for ``detach()`` (``own=False``) or ``.data`` (``own=True``, which always gets a
    counter of its own) of a tensor whose counter is ``version``; None: share ``version``."""
    if version.inference and not _inference:
        return DetachedInferenceCounter()
    if not own:
        return None
    if type(version) is DetachedInferenceCounter:
        return DetachedInferenceCounter()
    counter = _C.VersionCounter()
    counter.inference = version.inference
    return counter


def _set_enabled(mode: bool) -> None:
    global _enabled
    _enabled = bool(mode)


class _DecoratorContextManager:
    """A context manager that can also decorate a function (its body runs inside the context)."""

    def __call__(self, func):
        if inspect.isclass(func):
            # PyTorch still allows it, with this warning: the class is called inside the context
            from minitorch_nn._warnings import warn_user

            warn_user(
                "Decorating classes is deprecated and will be disabled in future versions. You should only "
                "decorate functions or methods. To preserve the current behavior of class decoration, you can "
                "directly decorate the `__init__` method and nothing else.",
                FutureWarning,
            )
            cls = func

            def func(*args, **kwargs):
                return cls(*args, **kwargs)

        if inspect.isgeneratorfunction(func):
            return self._wrap_generator(func)

        @functools.wraps(func)
        def decorated(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)

        return decorated

    def _wrap_generator(self, func):
        @functools.wraps(func)
        def generator(*args, **kwargs):
            gen = func(*args, **kwargs)
            # Each step of the generator runs inside the context; the caller's mode is
            # restored between steps (as PyTorch does).
            try:
                with self.clone():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self.clone():
                            gen.close()
                        raise
                    except BaseException as exc:
                        with self.clone():
                            response = gen.throw(exc)
                    else:
                        with self.clone():
                            response = gen.send(request)
            except StopIteration as stop:
                return stop.value

        return generator

    def clone(self):
        return self.__class__()


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """Also usable bare, as ``@torch.no_grad`` without parentheses."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecoratorContextManager):
    """Disable recording: results of ops inside have ``requires_grad=False``.

    Example::

        >>> x = torch.ones(2, requires_grad=True)
        >>> with torch.no_grad():
        ...     y = x * 2
        >>> y.requires_grad
        False
    """

    def __init__(self, orig_func=None) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = _enabled
        _set_enabled(False)

    def __exit__(self, *exc) -> None:
        _set_enabled(self.prev)


class enable_grad(_NoParamDecoratorContextManager):
    """Enable recording inside a ``no_grad`` block (or a function decorated with it)."""

    def __enter__(self) -> None:
        self.prev = _enabled
        _set_enabled(True)

    def __exit__(self, *exc) -> None:
        _set_enabled(self.prev)


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode to ``mode``. Unlike the others it takes effect when *called*, so
    ``torch.set_grad_enabled(False)`` on its own line switches recording off for good; used in a
    ``with`` statement the previous mode comes back at the end of the block."""

    def __init__(self, mode: bool) -> None:
        if type(mode) is not bool:   # (PyTorch's parser refuses 0, None and numpy booleans too)
            t = type(mode)
            name = t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"
            raise TypeError(f"set_grad_enabled(): argument 'enabled' (position 1) must be bool, not {name}")
        self.prev = _enabled
        self.mode = bool(mode)
        _set_enabled(mode)

    def __call__(self, func):
        # Used as a decorator: undo the eager switch, the function will switch itself.
        _set_enabled(self.prev)
        return super().__call__(func)

    def __enter__(self) -> None:
        _set_enabled(self.mode)

    def __exit__(self, *exc) -> None:
        _set_enabled(self.prev)

    def clone(self):
        return self.__class__(self.mode)

    def __str__(self) -> str:
        return f"{type(self).__module__}.{type(self).__qualname__}(mode={self.mode})"

    __repr__ = __str__



class inference_mode(_DecoratorContextManager):
    """``no_grad`` for code that will never need gradients (see the module docstring)."""

    def __init__(self, mode: bool = True) -> None:
        self.mode = mode

    def __new__(cls, mode=True):
        # ``@inference_mode`` without parentheses: mode is the decorated function.
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)

    def __enter__(self) -> None:
        global _inference
        self.prev, self.prev_inference = _enabled, _inference
        # like PyTorch's InferenceMode guard: inference_mode(False) turns grad mode back on
        _set_enabled(not self.mode)
        _inference = bool(self.mode)
        _C._set_inference_mode(_inference)

    def __exit__(self, *exc) -> None:
        global _inference
        _set_enabled(self.prev)
        _inference = self.prev_inference
        _C._set_inference_mode(self.prev_inference)

    def clone(self):
        return self.__class__(self.mode)
