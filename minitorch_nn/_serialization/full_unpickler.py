"""The unrestricted reader of ``data.pkl``, used only by ``load(f, weights_only=False)`` (mirrors
PyTorch's fallback to Python's own unpickler).

**This runs code.** A pickle names Python objects and calls them; with this reader a checkpoint
can import any module and call any function (``os.system`` included), exactly as
``torch.load(f, weights_only=False)`` can. That is what makes a whole pickled model loadable:
``save(model, f)`` writes the model's class *by reference* (``__main__.Net``), and loading
imports that class and rebuilds the object through its ``__setstate__``. Use it only for files
you trust; the default, ``weights_only=True``, reads with the restricted ``unpickler.py``.

Names are resolved in this order:

1. PyTorch's tensor and storage names (``torch._utils._rebuild_tensor_v2``, ``torch.FloatStorage``,
   ``torch.float32``...) map to our own functions, as in the restricted reader, so a file written
   by ``torch.save`` or by us rebuilds minitorch_nn tensors;
2. names allowed with ``add_safe_globals``;
3. any other ``torch.*`` name is looked up under ``minitorch_nn.*`` (a module saved as
   ``torch.nn.modules.linear.Linear`` by PyTorch loads as our ``Linear``); PyTorch itself is never
   imported;
4. everything else is imported as Python's unpickler would.

Storages come through the same ``persistent_load`` as in the restricted reader.
"""

from __future__ import annotations

import importlib
import pickle

from minitorch_nn._serialization import unpickler as _restricted
from minitorch_nn._tensor import Tensor


def rebuild_from_type_v2(func, new_type, args, state):
    """``torch._tensor._rebuild_from_type_v2`` for any tensor class: rebuild the tensor with
    ``func(*args)``, give it the class ``new_type``, then its saved Python state."""
    ret = func(*args)
    if type(ret) is not new_type:
        ret = ret.as_subclass(new_type)
    setstate = getattr(type(ret), "__setstate__", None)
    if setstate is not None and setstate is not getattr(Tensor, "__setstate__", None):
        ret.__setstate__(state)
    elif state:
        attrs, slots = state if isinstance(state, tuple) else (state, None)
        if attrs:
            ret.__dict__.update(attrs)
        for name, value in (slots or {}).items():
            setattr(ret, name, value)
    return ret


_OVERRIDES = {"torch._tensor._rebuild_from_type_v2": rebuild_from_type_v2}


def _minitorch_counterpart(module: str, name: str):
    """``torch.a.b`` -> ``minitorch_nn.a.b``; None when we have no such module or name."""
    ours = "minitorch_nn" + module[len("torch"):]
    try:
        mod = importlib.import_module(ours)
    except ImportError:
        return None
    obj = mod
    for part in name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


class FullCheckpointUnpickler(_restricted.CheckpointUnpickler):
    """Python's own unpickling (any global, any opcode), with our tensor and storage names."""

    dispatch = dict(pickle._Unpickler.dispatch)

    def find_class(self, module, name):
        full = f"{module}.{name}"
        obj = _OVERRIDES.get(full)
        if obj is None and full == "torch.nn.parameter.Parameter":
            obj = _restricted._parameter_class()
        if obj is None:
            obj = _restricted.ALLOWED_GLOBALS.get(full, _restricted.USER_GLOBALS.get(full))
        if obj is None and (module == "torch" or module.startswith("torch.")):
            obj = _minitorch_counterpart(module, name)
            if obj is None:
                raise pickle.UnpicklingError(
                    f"the checkpoint names {full}, which minitorch_nn does not have (it never imports "
                    "PyTorch to load a file)"
                )
        if obj is None:
            return pickle._Unpickler.find_class(self, module, name)
        return obj
