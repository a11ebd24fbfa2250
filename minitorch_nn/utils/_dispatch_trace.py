"""``dispatch_trace()``: watch one op travel through every layer of the dispatch chain.

PyTorch has no single tool for this (it is a common wish: see ``pain_points.md`` H1); this one is
ours. Inside ``with minitorch_nn.utils.dispatch_trace() as trace:`` every call is recorded as a
tree, one line per layer it passes::

    >>> import minitorch_nn as torch
    >>> x, y = torch.ones(2, requires_grad=True), torch.ones(2)
    >>> with torch.utils.dispatch_trace() as trace:
    ...     z = x + y
    >>> print(trace)
    Tensor.add(f32[2], f32[2])
      aten.add.Tensor(f32[2], f32[2])
        autograd: AddBackward0
        kernel: minitorch_nn.backends.cpu.pointwise.add

The layers, outermost first (see ``_dispatch/__init__.py``):

* the public function or Tensor method the user called (``torch.add``, ``Tensor.add``,
  ``Tensor.shape.__get__``), seen by a ``TorchFunctionMode`` that the trace pushes;
* ``__torch_function__``: each subclass handler or mode that runs (``__torch_function__:
  MyTensor``), with whatever it calls nested under it;
* the aten op (``aten.add.Tensor``), with its arguments as the op received them;
* ``autograd:`` the graph node the op recorded, read from the outputs' ``grad_fn``;
* ``__torch_dispatch__:`` each dispatch mode or wrapper-subclass handler that runs;
* ``kernel:`` the backend function that computed the result (``module.function``).

Tensors print as ``f32[2, 3]`` (dtype and shape; a subclass's name comes first:
``MyTensor:f32[2]``). Where it differs from a profiler: nothing is timed, and recording reads
only metadata, so it runs no extra ops.
"""

from __future__ import annotations

from minitorch_nn import _dispatch, _ops, overrides
from minitorch_nn._C import TensorBase
from minitorch_nn._dispatch import python_dispatch

_SHORT_DTYPES = {
    "float32": "f32",
    "float64": "f64",
    "float16": "f16",
    "bfloat16": "bf16",
    "int64": "i64",
    "int32": "i32",
    "int16": "i16",
    "int8": "i8",
    "uint8": "u8",
    "bool": "b8",
}


def _fmt(value) -> str:
    """A short, dispatch-free description of an argument."""
    if isinstance(value, TensorBase):
        impl = value._impl  # metadata straight from the payload: no property dispatch
        name = getattr(impl.dtype, "name", str(impl.dtype))
        text = f"{_SHORT_DTYPES.get(name, name)}[{', '.join(str(s) for s in impl.sizes)}]"
        if type(value).__name__ != "Tensor":
            text = f"{type(value).__name__}:{text}"
        return text
    if isinstance(value, list):
        return "[" + ", ".join(_fmt(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + ", ".join(_fmt(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    return repr(value)


def _fmt_call(args, kwargs) -> str:
    parts = [_fmt(a) for a in args]
    parts += [f"{k}={_fmt(v)}" for k, v in (kwargs or {}).items()]
    return "(" + ", ".join(parts) + ")"


def _func_name(func) -> str:
    name = overrides._torch_name(func)  # torch.add, torch.Tensor.add, torch.Tensor.shape.__get__
    return name[len("torch.") :] if name.startswith("torch.Tensor.") else name


class TraceNode:
    """One line of the trace and the lines nested under it."""

    def __init__(self, text: str):
        self.text = text
        self.children: list[TraceNode] = []

    def render(self, indent: int = 0) -> list[str]:
        lines = ["  " * indent + self.text]
        for child in self.children:
            lines += child.render(indent + 1)
        return lines


class DispatchTrace(overrides.TorchFunctionMode):
    """The object ``dispatch_trace()`` returns: a context manager holding the recorded tree."""

    def __init__(self):
        self.roots: list[TraceNode] = []
        self._open: list[TraceNode] = []

    # -- recording ---------------------------------------------------------------------------
    def _add(self, text: str) -> TraceNode:
        node = TraceNode(text)
        (self._open[-1].children if self._open else self.roots).append(node)
        return node

    def _nested(self, text, fn, *args, **kwargs):
        node = self._add(text)
        self._open.append(node)
        try:
            return node, fn(*args, **kwargs)
        finally:
            self._open.pop()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        # Layer 1: the public function or method (this mode is off the stack while it runs).
        _, out = self._nested(
            _func_name(func) + _fmt_call(args, kwargs), func, *args, **(kwargs or {})
        )
        return out

    def _torch_function_handler(self, who, kind, call):
        # Layer 2: a subclass's or a mode's __torch_function__ (called from overrides._dispatch).
        _, out = self._nested(
            f"__torch_function__: {who}" + (" (mode)" if kind == "mode" else ""), call
        )
        return out

    def _op(self, op, args, kwargs):
        # Layer 3: the aten op, then (after it ran) the autograd node its outputs carry.
        node, out = self._nested(
            f"aten.{op.__name__}{_fmt_call(args, kwargs)}", _previous_dispatch, op, args, kwargs
        )
        grad_fns = []
        for t in out if isinstance(out, (tuple, list)) else (out,):
            if (
                isinstance(t, TensorBase)
                and t._impl.grad_fn is not None
                and t._impl.grad_fn not in grad_fns
            ):
                grad_fns.append(t._impl.grad_fn)
        for g in reversed(grad_fns):
            name = g.name() if hasattr(g, "name") else type(g).__name__
            node.children.insert(0, TraceNode(f"autograd: {name}"))
        return out

    def _torch_dispatch_handler(self, who, kind, call):
        # Layer 4: a dispatch mode's or wrapper subclass's __torch_dispatch__.
        _, out = self._nested(
            f"__torch_dispatch__: {who}" + (" (mode)" if kind == "mode" else ""), call
        )
        return out

    def _kernel(self, op, args, kwargs):
        # Layer 5: the backend kernel.
        kernel = op.kernel_for(_dispatch._first_device_type(args, kwargs))
        self._add(f"kernel: {kernel.__module__}.{kernel.__name__}")
        return _previous_backend(op, args, kwargs)

    # -- the context ---------------------------------------------------------------------------
    def __enter__(self):
        global _previous_dispatch, _previous_backend
        if _active:
            raise RuntimeError("dispatch_trace() cannot be nested")
        _active.append(self)
        _previous_dispatch, _previous_backend = _ops._dispatch_fn, _dispatch.backend
        _ops._dispatch_fn = self._op
        _dispatch.backend = self._kernel
        overrides._tracer = self
        python_dispatch._tracer[0] = self
        return super().__enter__()

    def __exit__(self, *exc):
        super().__exit__(*exc)
        _ops._dispatch_fn, _dispatch.backend = _previous_dispatch, _previous_backend
        overrides._tracer = None
        python_dispatch._tracer[0] = None
        _active.clear()
        return False

    # -- output --------------------------------------------------------------------------------
    def render(self) -> str:
        """The recorded calls as an indented tree, one line per layer."""
        lines: list[str] = []
        for root in self.roots:
            lines += root.render()
        return "\n".join(lines)

    __str__ = render

    def __repr__(self):
        return f"<DispatchTrace: {len(self.roots)} calls>"


_active: list = []
_previous_dispatch = None
_previous_backend = None


def dispatch_trace() -> DispatchTrace:
    """Record every call made inside ``with dispatch_trace() as trace:``; ``print(trace)`` shows it."""
    return DispatchTrace()
