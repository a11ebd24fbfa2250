"""Small helpers shared by the ``nn.Module`` files (``module.py``, ``_hooks.py``, ``_state_dict.py``,
``_conversion.py``). Nothing here is public API.

* :func:`typename` mirrors ``torch.typename`` (``'torch.FloatTensor'`` for a float tensor,
  ``'int'`` for an int), which PyTorch's error messages use.
* :func:`no_grad` is ``minitorch_nn.no_grad()`` once the autograd package provides it, and a
  do-nothing context before that (with no autograd, nothing is recorded anyway).
* :func:`addindent` re-indents a multi-line child repr, as ``torch.nn.modules.module._addindent``.
"""

from __future__ import annotations

import contextlib


def typename(obj) -> str:
    """The type name PyTorch's messages print: the legacy tensor type for tensors."""
    from minitorch_nn._tensor import Tensor

    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    qualname = ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    if module in {"", "builtins"}:
        return qualname
    return f"{module}.{qualname}"


def no_grad():
    """A ``no_grad`` context if autograd exists, else a null context."""
    import minitorch_nn

    ng = getattr(minitorch_nn, "no_grad", None)
    return ng() if ng is not None else contextlib.nullcontext()


def addindent(s: str, num_spaces: int) -> str:
    """Indent every line but the first by ``num_spaces`` (blank lines become empty)."""
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    lines = [(num_spaces * " ") + line if line.strip() else "" for line in lines]
    return first + "\n" + "\n".join(lines)
