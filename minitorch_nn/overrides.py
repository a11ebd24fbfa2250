"""``__torch_function__``: letting tensor subclasses and modes override public functions.

Mirrors ``torch/overrides.py`` plus the C++ argument check PyTorch runs in every function
(``torch/csrc/utils/python_arg_parser.cpp``). The protocol, step by step:

1. Every public function and Tensor method is wrapped by :func:`public`. If nothing can
   intercept the call (no ``TorchFunctionMode`` active and no class with a live
   ``__torch_function__`` was ever defined, or subclasses are disabled) the wrapper calls the
   function at once: this *fast path* is one attribute test.
2. Otherwise the wrapper collects the *overloaded types*: the types of the arguments (looking
   one level into lists and tuples) that have a ``__torch_function__`` other than plain
   ``Tensor``'s and other than ``_C._disabled_torch_function_impl``. Each type appears once, and
   a subclass is placed before its parent, so the most specific handler runs first.
3. :func:`_dispatch` then calls the innermost mode (popped from the stack while it runs, so
   calls it makes go to the next mode out) and then each overloaded type's handler, as
   ``handler(func, types, args, kwargs)``; ``kwargs`` is ``None`` when none were passed. The
   first result that is not ``NotImplemented`` wins. If all decline: ``TypeError``.

``func`` is what the user called: ``minitorch_nn.add`` for the function, ``Tensor.add`` for the
method, ``Tensor.shape.__get__`` for a property read (see ``_tensor_subclass.py``).

Differences from PyTorch: one process-wide state (PyTorch's is per thread); the ``types`` a mode
sees for plain tensors follow two rules instead of PyTorch's per-method C++ details: public
functions and methods pass the overloaded types (``()`` for plain tensors), property reads and
the Tensor methods PyTorch writes by hand (``dim``, ``item``, ``__repr__``...) pass
``(type(self),)``.
"""

from __future__ import annotations

import contextlib
import functools
import re

from minitorch_nn import _argument_errors
from minitorch_nn import _C_torch_function as _tfc
from minitorch_nn._C import TensorBase
from minitorch_nn._C_torch_function import (  # noqa: F401  (re-exported as in torch.overrides)
    DisableTorchFunction,
    DisableTorchFunctionSubclass,
    _disabled_torch_function_impl,
)

_state = _tfc.state
_DISABLED = _disabled_torch_function_impl
# Set by _tensor_subclass.py: plain Tensor (its own default handler is not an override).
_TENSOR: list = [None]
# Called (by _tensor_subclass.py) the first time a type takes part in dispatch, to give it the
# property/method overrides if it got its __torch_function__ after class creation.
_on_new_overloaded_type = None
_seen_types: set = set()
# The active utils.dispatch_trace() recorder, if any (it wants to see each handler that runs).
_tracer = None

_PLAIN = frozenset({int, float, bool, type(None), str, complex, slice, type(Ellipsis)})
# Argument types that can never bring a handler: the plain ones, plus Tensor, Parameter, dtype,
# device and Size (added by _tensor_subclass.py). The fast path of public() tests membership here.
_NO_OVERRIDE: set = set(_PLAIN)


# ---------------------------------------------------------------------------------------------
# Which arguments take part
# ---------------------------------------------------------------------------------------------


def _has_live_handler(t) -> bool:
    """True when type ``t`` has a ``__torch_function__`` that is not the disabled one."""
    if t is _TENSOR[0] or t in _PLAIN:
        return False
    handler = getattr(t, "__torch_function__", None)
    return handler is not None and handler is not _DISABLED


def _add_type(found: list, t) -> None:
    if t in _NO_OVERRIDE or t in found or not _has_live_handler(t):
        return
    if t not in _seen_types and _on_new_overloaded_type is not None:
        _seen_types.add(t)
        _on_new_overloaded_type(t)
    # a subclass goes before the first of its parents already listed
    for i, other in enumerate(found):
        if issubclass(t, other):
            found.insert(i, t)
            return
    found.append(t)


def _get_overloaded_types(args, kwargs=None) -> list:
    """The argument types whose handlers should run, most specific first (step 2 above)."""
    found: list = []
    if _state.subclass_disabled or _state.all_disabled:
        return found
    for a in args:
        t = type(a)
        if t is list or t is tuple:
            for b in a:
                _add_type(found, type(b))
        else:
            _add_type(found, t)
    if kwargs:
        for a in kwargs.values():
            t = type(a)
            if t is list or t is tuple:
                for b in a:
                    _add_type(found, type(b))
            else:
                _add_type(found, t)
    return found


def _get_overloaded_args(relevant_args) -> list:
    """``torch.overrides._get_overloaded_args``: the arguments (not types) whose handlers run."""
    out, types = [], []
    for a in relevant_args:
        t = type(a)
        handler = getattr(t, "__torch_function__", None)
        if t in types or handler is None or handler is _DISABLED:
            continue
        for i, other in enumerate(types):
            if issubclass(t, other):
                types.insert(i, t)
                out.insert(i, a)
                break
        else:
            types.append(t)
            out.append(a)
    return out


def has_torch_function(relevant_args) -> bool:
    """True when a mode is active or an argument is a subclass (or tensor-like) with a handler."""
    if _state.all_disabled:
        return False
    if _state.modes:
        return True
    return bool(_get_overloaded_types(tuple(relevant_args)))


def has_torch_function_unary(obj) -> bool:
    """``has_torch_function((obj,))`` without building the tuple."""
    if _state.quiet:
        return False
    if _state.modes:
        return True
    return not _state.subclass_disabled and _has_live_handler(type(obj))


def has_torch_function_variadic(*args) -> bool:
    return has_torch_function(args)


def is_tensor_like(inp) -> bool:
    """True for tensors and for objects whose type defines ``__torch_function__``."""
    return isinstance(inp, TensorBase) or hasattr(type(inp), "__torch_function__")


def get_default_nowrap_functions() -> set:
    """Functions whose results the default ``Tensor.__torch_function__`` leaves unwrapped."""
    from minitorch_nn._tensor_subclass import default_nowrap_functions

    return set(default_nowrap_functions)


# ---------------------------------------------------------------------------------------------
# Running the handlers
# ---------------------------------------------------------------------------------------------


def _torch_name(func) -> str:
    """How PyTorch names ``func`` in error messages: ``torch.add``, ``torch.Tensor.add``."""
    name = getattr(func, "_torch_name", None)
    if name:
        return name
    owner = getattr(func, "__self__", None)
    if (
        getattr(func, "__name__", None) in ("__get__", "__set__", "__delete__")
        and owner is not None
    ):
        # a property's method-wrapper: name it after the property (Tensor.shape.__get__)
        prop = getattr(owner, "__name__", None) or getattr(
            getattr(owner, "fget", None), "__name__", "?"
        )
        return f"torch.Tensor.{prop}.{func.__name__}"
    qual = getattr(func, "__qualname__", None) or getattr(func, "__name__", repr(func))
    module = getattr(func, "__module__", "") or ""
    if qual.startswith(("Tensor.", "TensorBase.")):
        return "torch.Tensor." + qual.partition(".")[2]
    if module.startswith("minitorch_nn._functions") or module == "minitorch_nn":
        return "torch." + qual
    return module.replace("minitorch_nn", "torch", 1) + "." + qual


def _dispatch(func, overloaded, args, kwargs, *, python_style=False):
    """Step 3: the innermost mode, then each overloaded type's handler."""
    types = tuple(overloaded)
    if _state.modes and not _state.all_disabled:
        with _pop_mode_temporarily() as mode:
            if _tracer is None or mode is _tracer:
                out = mode.__torch_function__(func, types, args, kwargs)
            else:
                out = _tracer._torch_function_handler(
                    type(mode).__name__,
                    "mode",
                    lambda: mode.__torch_function__(func, types, args, kwargs),
                )
        if out is not NotImplemented:
            return out
    for t in overloaded:
        try:
            if _tracer is None:
                out = t.__torch_function__(func, types, args, kwargs)
            else:
                out = _tracer._torch_function_handler(
                    t.__name__,
                    "subclass",
                    lambda t=t: t.__torch_function__(func, types, args, kwargs),
                )
        except RecursionError as e:
            _explain_recursion(e, t, func)
            raise
        if out is not NotImplemented:
            return out
    if python_style:
        raise TypeError(
            f"no implementation found for '{_torch_name(func)}' on types that implement "
            f"__torch_function__: {list(types)}"
        )
    lines = []
    if _state.modes:
        lines.append(f"  - mode object {_state.modes[-1]!r}")
    lines += [f"  - tensor subclass {t!r}" for t in overloaded]
    raise TypeError(
        f"Multiple dispatch failed for '{_torch_name(func)}'; all __torch_function__ handlers "
        "returned NotImplemented:\n\n" + "\n".join(lines) + "\n\n"
        "For more information, try re-running with TORCH_LOGS=not_implemented"
    )


def _explain_recursion(err, cls, func):
    # Ours, not PyTorch's: the classic trap is a handler that calls func (or prints a tensor,
    # which calls Tensor.__repr__) on its own subclass, re-entering itself. Say so once.
    if getattr(err, "_mt_explained", False):
        return
    err._mt_explained = True
    err.add_note(
        f"hint: {cls.__name__}.__torch_function__ was re-entered while handling {_torch_name(func)}: "
        "calls it makes on instances of its own class (including printing one, which runs "
        "Tensor.__repr__) come back to it. Run them inside "
        "`with minitorch_nn._C.DisableTorchFunctionSubclass():` or end the handler with "
        "super().__torch_function__(func, types, args, kwargs)."
    )


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Run the protocol for ``public_api(*args, **kwargs)``; ``relevant_args`` are the candidates.

    As in PyTorch's Python version, every relevant argument whose type has a live handler counts,
    plain ``Tensor`` included (its default handler then runs the function).
    """
    overloaded = (
        [type(a) for a in _get_overloaded_args(relevant_args)]
        if not (_state.subclass_disabled or _state.all_disabled)
        else []
    )
    for t in overloaded:
        if t not in _seen_types and _on_new_overloaded_type is not None:
            _seen_types.add(t)
            _on_new_overloaded_type(t)
    return _dispatch(public_api, overloaded, args, kwargs, python_style=True)


_MISSING = re.compile(r"^(\w+)\(\) missing (\d+) required positional arguments?: (.*)$")
_TOO_MANY = re.compile(r"^(\w+)\(\) takes (?:from (\d+) to )?(\d+) positional arguments? but (\d+) (?:was|were) given$")
_BINDING_FRAMES = ("wrapper", "with_out")   # where a call that does not fit a signature fails


def _parser_wording(error, name, is_method):
    """PyTorch's argument parser's words for Python's "missing"/"takes N positional arguments"
    errors when ``name`` itself was called with arguments that do not fit its signature (not for
    such an error from deeper inside): ``"dim"`` in double quotes after "arguments" for one missing
    argument (and "argument" for several); for a method, counts without ``self``, and
    ``TensorBase.abs() takes no arguments (1 given)`` for a method that takes none. None: leave
    ``error`` as it is."""
    tb = error.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None or tb.tb_frame.f_code.co_name not in _BINDING_FRAMES:
        return None
    text = str(error)
    m = _MISSING.match(text)
    if m and m.group(1) == name:
        names = re.findall(r"'(\w+)'", m.group(3))
        n = len(names)
        return TypeError(f"{name}() missing {n} required positional argument{'s' if n == 1 else ''}: "
                         + ", ".join(f'"{a}"' for a in names))
    m = _TOO_MANY.match(text)
    if m and m.group(1) == name and is_method:
        low, high, given = (int(m.group(2)) - 1 if m.group(2) else None), int(m.group(3)) - 1, int(m.group(4)) - 1
        if high == 0:
            return TypeError(f"TensorBase.{name}() takes no arguments ({given} given)")
        counted = f"from {low} to {high} positional arguments" if low is not None else \
            f"{high} positional argument{'s' if high != 1 else ''}"
        return TypeError(f"{name}() takes {counted} but {given} were given")
    return None


def public(fn, *, func=None):
    """Wrap a public function so that ``__torch_function__`` overrides can intercept it.

    The wrapper itself is what handlers receive as ``func`` (so ``func is minitorch_nn.add``
    holds); the undecorated function is kept as ``__wrapped_impl__``. A compiled Tensor method
    that is its own fast path and calls the wrapper only as its slow path passes itself as
    ``func``, so handlers see ``func is Tensor.relu`` (``_ext/twins/backends/cpu/activations.pyx``).
    """
    state = _state
    skip = _NO_OVERRIDE
    # a function given ``out=`` by ``_functions/_out.writes_out``: its own body, for calls without
    # keywords (``out`` is keyword-only, so they never write out). The ``__wrapped__`` test keeps
    # a further decorator around such a function (functools.wraps copies the attribute) in the call.
    direct = getattr(fn, "__without_out__", None)
    if direct is None or getattr(fn, "__wrapped__", None) is not direct:
        direct = fn

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            if state.quiet:
                # (without ``out=`` the ``out`` wrapper would only pass the call on)
                return direct(*args, **kwargs) if "out" not in kwargs else fn(*args, **kwargs)
            if not state.modes:
                # The common case once any subclass exists somewhere: all arguments are plain
                # tensors, numbers, dtypes... one set lookup each.
                for a in args:
                    if type(a) not in skip:
                        break
                else:
                    if not kwargs:
                        return direct(*args)
                    for a in kwargs.values():
                        if type(a) not in skip:
                            break
                    else:
                        return direct(*args, **kwargs) if "out" not in kwargs else fn(*args, **kwargs)
            if kwargs and type(kwargs.get("dtype")) is type:   # dtype=float: PyTorch's float64
                kwargs["dtype"] = _argument_errors.python_type_dtype(kwargs["dtype"])
            overloaded = _get_overloaded_types(args, kwargs)
            if overloaded or (state.modes and not state.all_disabled):
                return _dispatch(wrapper if func is None else func, overloaded, args, kwargs or None)
            return fn(*args, **kwargs)
        except TypeError as e:   # (free unless raised: only a wrong call pays for the check)
            worded = _parser_wording(e, fn.__name__, (func or wrapper).__qualname__.startswith("Tensor."))
            if worded is None:
                raise
            raise worded from None
        except (AttributeError, ValueError, KeyError, IndexError, ZeroDivisionError, OverflowError,
                RuntimeError) as e:
            if kwargs and type(kwargs.get("dtype")) is type and kwargs["dtype"] in (int, float, bool):
                # dtype=float is PyTorch's float64: converted here, where it costs nothing to calls
                # that pass a torch dtype
                kwargs["dtype"] = _argument_errors.python_type_dtype(kwargs["dtype"])
                return wrapper(*args, **kwargs)
            # an argument of the wrong type failing deep inside: PyTorch's TypeError instead
            is_method = (func or wrapper).__qualname__.startswith("Tensor.")
            worded = _argument_errors.wrong_type_error(fn, fn.__name__, is_method, args, kwargs,
                                                       numbers_may_fit=isinstance(e, RuntimeError))
            if worded is None:
                raise
            raise worded from e

    wrapper.__wrapped_impl__ = fn
    return wrapper


# ---------------------------------------------------------------------------------------------
# Modes
# ---------------------------------------------------------------------------------------------


@contextlib.contextmanager
def _pop_mode_temporarily():
    """Take the innermost mode off the stack while its handler runs, then put it back."""
    mode = _tfc._pop_torch_function_stack()
    try:
        yield mode
    finally:
        _tfc._push_on_torch_function_stack(mode)


def _get_current_function_mode():
    return _state.modes[-1] if _state.modes else None


def _get_current_function_mode_stack() -> list:
    return list(_state.modes)


class TorchFunctionMode:
    """Intercept every public function and Tensor method while the mode is active.

    Subclass it and define ``__torch_function__(self, func, types, args=(), kwargs=None)``; use
    it as ``with MyMode(): ...``. Modes nest: the innermost runs first, and while it runs it is off
    the stack, so ``func(*args, **kwargs)`` inside it reaches the next mode out (or the function).

    Example::

        >>> import minitorch_nn as torch
        >>> class Log(torch.overrides.TorchFunctionMode):
        ...     def __torch_function__(self, func, types, args=(), kwargs=None):
        ...         print(func.__name__)
        ...         return func(*args, **(kwargs or {}))
        >>> with Log():
        ...     _ = torch.ones(2) + 1
        ones
        add
    """

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        _tfc._push_on_torch_function_stack(self)
        _mode_entered(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        _tfc._pop_torch_function_stack()
        _mode_exited(self)
        return False

    @classmethod
    def push(cls, *args, **kwargs):
        return cls(*args, **kwargs)


# Hooks for _tensor_subclass.py, which makes property reads dispatch while any mode is active.
def _mode_entered(mode):
    if _mode_hooks[0] is not None:
        _mode_hooks[0]()


def _mode_exited(mode):
    if _mode_hooks[1] is not None:
        _mode_hooks[1]()


_mode_hooks: list = [None, None]
