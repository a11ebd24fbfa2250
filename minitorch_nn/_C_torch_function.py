"""The switches of ``__torch_function__``: mode stack, ``DisableTorchFunction*`` and the disabled impls.

Mirrors the small C++ pieces of PyTorch's ``torch/csrc/utils/disable_torch_function.cpp`` and the
torch-function mode stack in ``torch/csrc/utils/python_dispatch.cpp``, which ``torch._C`` exposes:

* ``DisableTorchFunctionSubclass()``: inside it, tensor subclasses' ``__torch_function__`` handlers
  are skipped (modes still run). The default ``Tensor.__torch_function__`` uses it to run the
  original function on subclass instances without recursing.
* ``DisableTorchFunction()``: skips subclasses *and* modes.
* ``_disabled_torch_function_impl`` / ``_disabled_torch_dispatch_impl``: the values a class sets as
  its ``__torch_function__`` / ``__torch_dispatch__`` to say "no override here" (``nn.Parameter``
  does the first; ``Tensor`` itself has the second).
* the torch-function mode stack (``_push_on_torch_function_stack``, ``_pop_torch_function_stack``,
  ``_len_torch_function_stack``, ``_get_function_stack_at``).

All of them are attached to the compiled module ``minitorch_nn._C`` at import, so user code written
for PyTorch (``torch._C.DisableTorchFunctionSubclass()``) runs unchanged. They live in Python, not
in ``_ext/_C.pyx``, because they are plain state a student may want to read.

The state is process-wide (PyTorch keeps it per thread); like grad mode here, one global is
enough for a teaching library. ``overrides.py`` reads ``state`` on every public call, so every
change goes through :func:`_changed`, which recomputes the one flag that the fast path checks.
"""

from __future__ import annotations

from minitorch_nn import _C


class _State:
    """Everything the ``__torch_function__`` layer needs to decide whether to look at arguments."""

    __slots__ = ("subclass_disabled", "all_disabled", "modes", "any_subclass", "quiet")

    def __init__(self):
        self.subclass_disabled = 0  # depth of DisableTorchFunctionSubclass
        self.all_disabled = 0  # depth of DisableTorchFunction
        self.modes = []  # TorchFunctionMode objects, innermost last
        self.any_subclass = False  # has any class with a live __torch_function__ been defined?
        # True when nothing can intercept a call: no mode, and either no overriding class exists
        # or subclasses are disabled. The public wrappers only test this flag (the fast path).
        self.quiet = True


state = _State()


def _changed():
    s = state
    if s.all_disabled:
        s.quiet = True
    elif s.modes:
        s.quiet = False
    else:
        s.quiet = s.subclass_disabled > 0 or not s.any_subclass


class _NonBinding:
    """A callable that stays a plain function when stored on a class (like a C builtin).

    ``class W(Tensor): __torch_function__ = _C._disabled_torch_function_impl`` must leave
    ``W.__torch_function__`` callable as ``(func, types, args, kwargs)``: a Python function would
    turn into a bound method when looked up through an instance or ``super()``.
    """

    def __init__(self, fn):
        self._fn = fn
        self.__name__ = self.__qualname__ = fn.__name__
        self.__doc__ = fn.__doc__

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def __repr__(self):
        return f"<built-in function {self.__name__}>"


class DisableTorchFunctionSubclass:
    """Context manager: skip tensor subclasses' ``__torch_function__`` (modes still run)."""

    def __enter__(self):
        state.subclass_disabled += 1
        _changed()
        return self

    def __exit__(self, *exc):
        state.subclass_disabled -= 1
        _changed()
        return False


class DisableTorchFunction:
    """Context manager: skip ``__torch_function__`` entirely, subclasses and modes alike."""

    def __enter__(self):
        state.all_disabled += 1
        _changed()
        return self

    def __exit__(self, *exc):
        state.all_disabled -= 1
        _changed()
        return False


def refuse_foreign(func) -> None:
    """Raise a clear ``TypeError`` when ``func`` belongs to the real ``torch`` package.

    A real ``torch`` function given a minitorch_nn tensor sees a ``__torch_function__`` and hands
    the call to it; calling ``func`` back would hand it to us again, forever (``RecursionError``).
    The two libraries' tensors do not mix, so say so instead."""
    module = getattr(func, "__module__", None) or getattr(getattr(func, "__objclass__", None), "__module__", None)
    if isinstance(module, str) and (module == "torch" or module.startswith("torch.")):
        name = getattr(func, "__name__", None) or repr(func)
        module = "torch" if module.startswith("torch._C") else module
        raise TypeError(
            f"{module}.{name} was called with a minitorch_nn tensor. PyTorch's functions take only "
            "PyTorch tensors: use minitorch_nn's function of the same name, or convert the tensor "
            "with torch.from_numpy(t.numpy()) (and back with minitorch_nn.from_numpy)."
        )


def _disabled_torch_function_impl(func, types, args=(), kwargs=None):
    """Run ``func`` as if the class had no ``__torch_function__`` (results are not re-wrapped)."""
    refuse_foreign(func)
    with DisableTorchFunctionSubclass():
        return func(*args, **(kwargs or {}))


def _disabled_torch_dispatch_impl(func, types, args=(), kwargs=None):
    """Run the op's kernel directly, below ``__torch_dispatch__`` (``Tensor``'s default handler)."""
    from minitorch_nn import _dispatch

    return _dispatch.backend(func, tuple(args), dict(kwargs or {}))


_disabled_torch_function_impl = _NonBinding(_disabled_torch_function_impl)
_disabled_torch_dispatch_impl = _NonBinding(_disabled_torch_dispatch_impl)


# -- the mode stack ----------------------------------------------------------------------------


def _push_on_torch_function_stack(mode):
    state.modes.append(mode)
    _changed()


def _pop_torch_function_stack():
    if not state.modes:
        raise RuntimeError("Trying to pop from an empty mode stack")
    mode = state.modes.pop()
    _changed()
    return mode


def _len_torch_function_stack() -> int:
    return len(state.modes)


def _get_function_stack_at(i: int):
    return state.modes[i]


def _is_torch_function_enabled() -> bool:
    """False inside ``DisableTorchFunctionSubclass`` or ``DisableTorchFunction`` (as PyTorch)."""
    return not state.subclass_disabled and not state.all_disabled


def _is_torch_function_all_disabled() -> bool:
    return bool(state.all_disabled)


def _is_torch_function_mode_enabled() -> bool:
    return bool(state.modes) and not state.all_disabled


for _name in (
    "DisableTorchFunctionSubclass",
    "DisableTorchFunction",
    "_disabled_torch_function_impl",
    "_disabled_torch_dispatch_impl",
    "_push_on_torch_function_stack",
    "_pop_torch_function_stack",
    "_len_torch_function_stack",
    "_get_function_stack_at",
    "_is_torch_function_enabled",
    "_is_torch_function_all_disabled",
    "_is_torch_function_mode_enabled",
):
    setattr(_C, _name, globals()[_name])
