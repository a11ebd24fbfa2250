"""The python layer of the dispatch chain: ``__torch_dispatch__`` of dispatch modes and subclasses.

Mirrors PyTorch's ``Python`` dispatch key (``torch/csrc/autograd/python_variable.cpp``,
``dispatch_on_subclass`` and ``dispatch_on_mode``). It sits under autograd and over the kernels,
so handlers see the aten ops (``aten.add.Tensor``) that a public function turned into, after
autograd recorded its node.

For one op call the layer:

1. returns ``NotImplemented`` (go on to the kernel) when no dispatch mode is active and no
   tensor argument's class overrides ``__torch_dispatch__``. The layer is only installed in
   ``_dispatch.python_layer`` once such a class exists or a mode is entered, so until then it
   costs nothing;
2. normalises the arguments the way PyTorch presents them (:func:`normalize_args`);
3. calls the innermost dispatch mode (popped while it runs), then each overriding class, most
   specific first, as ``handler(func, types, args, kwargs)``; the first result that is not
   ``NotImplemented`` is the op's result. If all decline: ``TypeError``.

Differences from PyTorch: the mode stack is process-wide, not per thread; there is no separate
"pre-dispatch" or "proxy" mode stack.
"""

from __future__ import annotations

import contextlib

from minitorch_nn import _dispatch
from minitorch_nn._C import TensorBase
from minitorch_nn._ops import _NO_DEFAULT

_classes: set = set()  # classes with their own __torch_dispatch__
_modes: list = []  # TorchDispatchMode objects, innermost last
_excluded = [0]  # depth of excluded(): the layer lets every op through
_tracer = [None]  # the active utils.dispatch_trace() recorder, if any


def _refresh():
    """Install the layer only while it can do something."""
    _dispatch.python_layer = python_layer if (_classes or _modes) else None


def register_dispatch_class(cls):
    """Called at class creation for every Tensor subclass that defines ``__torch_dispatch__``."""
    _classes.add(cls)
    _refresh()


@contextlib.contextmanager
def excluded():
    """Skip this layer (PyTorch: ``torch._C._DisablePythonDispatcher``-like, for internal use)."""
    _excluded[0] += 1
    try:
        yield
    finally:
        _excluded[0] -= 1


# -- the mode stack ----------------------------------------------------------------------------


def push_mode(mode):
    _modes.append(mode)
    _refresh()


def pop_mode():
    if not _modes:
        raise RuntimeError("Trying to pop from an empty mode stack")
    mode = _modes.pop()
    _refresh()
    return mode


@contextlib.contextmanager
def pop_mode_temporarily():
    mode = pop_mode()
    try:
        yield mode
    finally:
        push_mode(mode)


def current_mode():
    return _modes[-1] if _modes else None


def mode_stack_len() -> int:
    return len(_modes)


# -- normalising arguments ----------------------------------------------------------------------


def normalize_args(op, args, kwargs):
    """``(args, kwargs)`` as PyTorch hands them to ``__torch_dispatch__``.

    Positional schema arguments are positional, and trailing ones still at their default are
    left out; keyword-only arguments go in ``kwargs`` only when they differ from their default.
    ``int[]`` arguments given as tuples become lists. (``x.sum(1)`` ->
    ``aten.sum.dim_IntList (x, [1]) {}``; ``x.to(torch.float64)`` ->
    ``aten._to_copy.default (x,) {'dtype': torch.float64}``.)
    """
    schema_args = op._schema.arguments
    if not kwargs and len(args) <= len(schema_args):
        values = list(args)
        kw = {}
    else:
        values = list(args)
        kw = dict(kwargs)
    positional, keyword = [], {}
    for i, arg in enumerate(schema_args):
        if i < len(values):
            value = values[i]
        elif arg.name in kw:
            value = kw.pop(arg.name)
        else:
            continue  # not given: it takes its default
        if isinstance(value, tuple) and "[" in arg.type:
            value = list(value)
        if arg.kwarg_only:
            if not (arg.has_default and _same(value, arg.default)):
                keyword[arg.name] = value
        else:
            positional.append((arg, value))
    while (
        positional
        and positional[-1][0].has_default
        and _same(positional[-1][1], positional[-1][0].default)
    ):
        positional.pop()
    keyword.update(kw)  # anything the schema does not name (should not happen) is kept
    return tuple(v for _, v in positional), keyword


def _same(value, default) -> bool:
    if default is _NO_DEFAULT or isinstance(value, TensorBase):
        return False
    if type(value) is bool or type(default) is bool:
        return type(value) is type(default) and value == default
    try:
        return bool(value == default)
    except Exception:
        return False


# -- the layer ----------------------------------------------------------------------------------


def _overriding_classes(args, kwargs) -> list:
    found: list = []

    def add(a):
        t = type(a)
        if t in _classes and t not in found:
            for i, other in enumerate(found):
                if issubclass(t, other):
                    found.insert(i, t)
                    return
            found.append(t)

    for a in args:
        if isinstance(a, (list, tuple)):
            for b in a:
                add(b)
        else:
            add(a)
    for a in kwargs.values():
        if isinstance(a, (list, tuple)):
            for b in a:
                add(b)
        else:
            add(a)
    return found


def _inplace_result(op, args, out):
    """An in-place op returns the tensor it wrote into, whatever a handler returned (PyTorch's
    in-place kernels return ``self`` above the Python key)."""
    if op.is_inplace and args and isinstance(args[0], TensorBase):
        return args[0]
    return out


def python_layer(op, args, kwargs):
    """``_dispatch.python_layer``: run the handlers, or return NotImplemented to reach the kernel."""
    if _excluded[0]:
        return NotImplemented
    classes = _overriding_classes(args, kwargs) if _classes else []
    if not classes and not _modes:
        return NotImplemented
    args, kwargs = normalize_args(op, args, kwargs)
    tracer = _tracer[0]
    # Dispatch modes come first. The innermost mode handles the op: it is taken off the stack
    # while its ``__torch_dispatch__(op, (), args, kwargs)`` runs (types is empty for a mode), so
    # the ops it calls go to the next mode out, or to the kernel, instead of back to itself; it is
    # put back afterwards, even when the handler raises. With a trace recording (``tracer`` not
    # None) the call goes through ``tracer._torch_dispatch_handler(type(mode).__name__, "mode",
    # call)``. A result other than ``NotImplemented`` is the op's result (through
    # ``_inplace_result(op, args, out)``, which gives an in-place op its ``self`` back);
    # ``NotImplemented`` lets the subclasses below, or the kernel, have the op.
    # BEGIN SOLUTION dispatch-mode
    if _modes:
        with pop_mode_temporarily() as mode:
            if tracer is None:
                out = mode.__torch_dispatch__(op, (), args, kwargs)
            else:
                out = tracer._torch_dispatch_handler(
                    type(mode).__name__,
                    "mode",
                    lambda: mode.__torch_dispatch__(op, (), args, kwargs),
                )
        if out is not NotImplemented:
            return _inplace_result(op, args, out)
    # END SOLUTION
    types = tuple(classes)
    for t in classes:
        if tracer is None:
            out = t.__torch_dispatch__(op, types, args, kwargs)
        else:
            out = tracer._torch_dispatch_handler(
                t.__name__, "subclass", lambda t=t: t.__torch_dispatch__(op, types, args, kwargs)
            )
        if out is not NotImplemented:
            return _inplace_result(op, args, out)
    if not classes:
        # a mode declined and no subclass is involved: the kernel runs
        return _dispatch.backend(op, args, kwargs)
    lines = [f"  - tensor subclass {t!r}" for t in classes]
    raise TypeError(
        f"Multiple dispatch failed for 'torch._ops.aten.{op.__name__}'; all __torch_dispatch__ "
        "handlers returned NotImplemented:\n\n" + "\n".join(lines) + "\n\n"
        "For more information, try re-running with TORCH_LOGS=not_implemented"
    )
