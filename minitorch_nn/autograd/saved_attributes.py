"""What a graph node shows of its saved values: ``grad_fn._saved_<name>``, ``_raw_saved_<name>``
and the names ``dir(grad_fn)`` lists.

Mirrors the attribute getters PyTorch generates for every node class
(``torch/csrc/autograd/generated/python_functions*.cpp``, made by
``tools/autograd/gen_autograd_functions.py``). A node class there has one getter per field its
formulas save, whichever inputs need a gradient, so the names a node lists depend on the op only.
Here the recorder saves under the names the formulas read (``recording.Derivative``); this file
is the one place that turns them into PyTorch's names and values:

**Names** (``_torch_names``):

* a schema argument keeps its name (``dim``, ``alpha``, ``self``);
* an input's metadata: ``self_sizes`` reads as ``self_sym_sizes``, ``self_strides`` as
  ``self_sym_strides``, ``self_offset`` as ``self_sym_storage_offset``; a derivative may also
  declare names PyTorch computes from the sizes (``self_sym_numel``, ``weight_sym_argsize_0``,
  ``S_sym_argsize_minus_1``: see ``derive_from_sizes``), which cost nothing when recording;
* an output: the schema's name for it when it has one (``max.dim`` saves ``indices``,
  ``linalg_eigh`` ``eigenvalues``), else ``result`` (``result0``, ``result1``... for several);
* not shown, as in PyTorch, which keeps them in fields without getters: ``ScalarType``
  arguments, an input's dtype and device (PyTorch's ``self_options``, ``self_scalar_type``), the
  metadata of ``Tensor[]`` arguments (``tensors_args_sizes``), and the names a derivative hides
  (``Derivative.hidden``).

**Values**, by the schema type of the argument (PyTorch's getter for the C++ type):

* ``int`` and ``SymInt`` (optional or not), sizes, strides, offsets: PyTorch converts the int64
  with ``PyLong_FromUnsignedLong``, so a negative value reads as its unsigned 64-bit wrap:
  ``x.sum(-1).grad_fn._saved_dim == (2**64 - 1,)``. Lists of them (``int[]``, ``int[1]``,
  ``SymInt[]``) are tuples of those;
* ``Scalar``: the number as given (``int`` signed, ``float``, ``bool``, ``complex``); ``float``: a
  float; ``bool``; ``str``; None for an optional argument that was not given;
* ``Tensor``: the saved tensor (a Python number given for it reads as the 0-d tensor PyTorch
  wraps it in); ``Tensor[]``, ``Tensor?[]``: a tuple of them. A tensor that was not saved (the
  formula reading it belongs to an input that needs no gradient) reads as None; its
  ``_raw_saved_`` twin is an empty ``SavedTensor``, as PyTorch's undefined ``SavedVariable``.

Which tensors a node saves follows PyTorch's generated code too (``Derivative.wanted``): an
argument of type ``Tensor`` read by exactly one input's formula of an op with several
differentiable inputs is saved only when that input needs a gradient (``x * 2`` does not save
``x``: ``_saved_self`` is None); everything else the formulas read is shown whichever inputs
need a gradient (``x.add(t, alpha=2)`` shows ``alpha`` though only ``x`` requires grad). To keep
recording cheap, an argument that only this file reads and that the call leaves at its default
is not saved at all: the getter reads the schema's default (``x + c`` saves nothing).

Where we differ from PyTorch: the sizes and strides of an input the node saves anyway
(``mm``'s ``self_sym_sizes`` when ``self`` is saved) are read from that tensor, so once backward
has freed it they raise the "backward through the graph a second time" error (PyTorch keeps
them). Nodes whose backward here is computed another way than PyTorch's save what their own
formula needs (``linalg.solve`` and ``linalg.det`` keep no LU factorization, ``linalg.svdvals``
keeps its input): ``KNOWN_DIFFERENCES`` in ``tests/oracle/test_saved_attributes_oracle.py``.
"""

from __future__ import annotations

import re

from minitorch_nn._C import TensorBase
from minitorch_nn.autograd.graph import SavedScalar, SavedTensor

_UINT64 = 1 << 64

# the metadata fields the recorder saves, and the name PyTorch gives each (``self_sizes`` ->
# ``self_sym_sizes``); dtype and device are kept in fields PyTorch shows no getter for
_METADATA_NAMES = {"sizes": "sym_sizes", "strides": "sym_strides", "offset": "sym_storage_offset", "numel": "sym_numel"}


def _numel(sizes):
    n = 1
    for s in sizes:
        n *= s
    return n


# Values PyTorch saves that are a function of a tensor's sizes: the recorder keeps the sizes
# (``<arg>_sizes``; for an output, the output itself) and the getter computes them.
# torch name suffix -> (kind, function of the sizes)
derive_from_sizes = {
    "sym_numel": ("int", _numel),
    "sym_argsize_0": ("int", lambda sizes: sizes[0]),
    "sym_argsize_1": ("int", lambda sizes: sizes[1]),
    "sym_argsize_minus_1": ("int", lambda sizes: sizes[-1]),
    "sym_argsize_minus_2": ("int", lambda sizes: sizes[-2]),
    "dim": ("int", len),   # index_add's source_dim
    # an optional tensor's sizes; PyTorch's nn functions pass a missing bias as an undefined
    # tensor, whose sizes read (0,)
    "sym_sizes_opt": ("ints", lambda sizes: (0,) if sizes is None else sizes),
}


def internal_names(d, torch_names):
    """The names the recorder saves for ``torch_names`` (PyTorch's names, as a derivative declares
    them in ``also_saved``): ``self_sym_sizes`` -> ``self_sizes``, ``self_sym_numel`` ->
    ``self_sizes`` (derived when read), arguments and outputs as they are."""
    out = []
    for name in torch_names:
        internal = _internal_name(d, name)
        if internal not in out:
            out.append(internal)
    return tuple(out)


def _internal_name(d, name):
    if name in d.position or name.startswith("result"):
        return name
    returns = _return_names(d)
    if name in returns:
        i = returns.index(name)
        return "result" if len(returns) == 1 else f"result{i}"
    for suffix in derive_from_sizes:
        if name.endswith("_" + suffix):
            owner = name[: -len(suffix) - 1]
            if owner in returns:   # computed from the saved output's shape
                return _internal_name(d, owner)
            return owner + "_sizes"
    for attr, torch_attr in _METADATA_NAMES.items():
        if name.endswith("_" + torch_attr):
            return name[: -len(torch_attr) - 1] + "_" + attr
    raise ValueError(f"{d.op}: cannot save '{name}': not an argument, an output or an input's metadata")


def _return_names(d):
    """The schema's names of the op's outputs, None for an unnamed one."""
    names = d.__dict__.get("_return_names")
    if names is None:
        text = d.op._schema.text
        ret = text.rpartition(") -> ")[2].strip()
        if ret.startswith("(") and ret.endswith(")"):
            ret = ret[1:-1]
        names = []
        for part in ret.split(","):
            words = part.split()
            names.append(words[1] if len(words) == 2 else None)
        names = d._return_names = tuple(names)
    return names


def _kind(arg_type):
    """How PyTorch's getter shows a saved argument of this schema type (None: it has no getter)."""
    base = arg_type.rstrip("?")
    if base == "Tensor":
        return "tensor"
    if base.startswith("Tensor") and base.endswith("]"):
        return "tensors"
    if base in ("int", "SymInt"):
        return "int"
    if re.fullmatch(r"(int|SymInt)\[\d*\]", base):
        return "ints"
    if base == "float":
        return "float"
    if re.fullmatch(r"float\[\d*\]", base):
        return "floats"
    if base == "ScalarType" or base in ("Layout", "Device", "MemoryFormat"):
        return None
    return "as_is"   # Scalar, bool, str, ...


def _torch_names(d):
    """``{torch name: (saved name, kind, derive)}`` for the node class of derivative ``d``,
    made once per derivative."""
    names = d.__dict__.get("_torch_saved")
    if names is not None:
        return names
    names = {}
    params = []
    for _name, _fn, formula_params, _is_list in d.formulas:
        params.extend(p for p in formula_params if p not in params)
    hidden = getattr(d, "hidden", ())
    for p in params:
        if p in hidden:
            continue
        entry = _entry(d, p)
        if entry is not None:
            names[entry[0]] = entry[1:]
    for torch_name in getattr(d, "also_saved", ()):
        internal = _internal_name(d, torch_name)
        kind = derive = None
        for suffix, (suffix_kind, fn) in derive_from_sizes.items():
            if torch_name.endswith("_" + suffix) and torch_name not in d.position:
                kind, derive = suffix_kind, fn
                break
        else:
            kind = _entry(d, internal)[2]
        names[torch_name] = (internal, kind, derive)
    d._torch_saved = names
    return names


def _entry(d, p):
    """(torch name, saved name, kind, derive) of formula parameter ``p``, or None when PyTorch
    shows no attribute for it."""
    if p in d.position:
        kind = _kind(d.op._schema.arguments[d.position[p]].type)
        return None if kind is None else (p, p, kind, None)
    if p.startswith("result"):
        returns = _return_names(d)
        i = int(p[6:]) if len(p) > 6 else 0
        named = getattr(d, "output_names", {}).get(p) or (returns[i] if i < len(returns) else None)
        return (named or p, p, "tensor", None)
    owner, _, attr = p.rpartition("_")
    if attr not in _METADATA_NAMES or owner in d.list_args:
        return None
    return (f"{owner}_{_METADATA_NAMES[attr]}", p, "ints" if attr in ("sizes", "strides") else "int", None)


def _wrap(v):
    """An int64 as PyTorch's getter shows it: a negative one as its unsigned 64-bit wrap."""
    v = int(v)
    return v + _UINT64 if v < 0 else v


def _to_torch(node, saved_name, kind, value):
    if kind == "tensor":
        if value is None:
            return None
        if type(value) is SavedScalar:
            if value.released:
                value.unpack(node)   # raises PyTorch's "backward through the graph a second time" error
            return _wrapped_number(value.value)
        if isinstance(value, SavedTensor):
            return value.unpack(node)
        if isinstance(value, (bool, int, float, complex)):
            return _wrapped_number(value)
        return value
    if kind == "tensors":
        if value is None:
            return None
        return tuple(v.unpack(node) if isinstance(v, SavedTensor) else v for v in value)
    if value is None:
        return None
    if kind == "int":
        return _wrap(value)
    if kind == "ints":
        if isinstance(value, int):
            return (_wrap(value),)
        return tuple(_wrap(v) for v in value)
    if kind == "float":
        return float(value)
    if kind == "floats":
        return tuple(float(v) for v in value)
    if isinstance(value, TensorBase) and value.dim() == 0:
        return value.item()
    return value


def _wrapped_number(value):
    # PyTorch wraps a Python number given for a Tensor argument in a 0-d tensor: int64 for an int,
    # float64 for a float (a double, whatever the default dtype), bool for a bool
    from minitorch_nn import _dtype
    from minitorch_nn._device import get_default_device
    from minitorch_nn._ops import aten

    if isinstance(value, bool):
        dtype = _dtype.bool
    elif isinstance(value, int):
        dtype = _dtype.int64
    else:
        dtype = _dtype.float64
    return aten.scalar_tensor.default(value, dtype=dtype, device=get_default_device(), pin_memory=False)


_MISSING_DEFAULTS = {"tensor": None, "tensors": (), "int": 0, "ints": (), "float": 0.0, "floats": ()}


def get(node, attr):
    """``node._saved_<name>`` / ``node._raw_saved_<name>``: called by ``OpNode.__getattr__``."""
    if attr.startswith("_saved_"):
        raw, name = False, attr[7:]
    elif attr.startswith("_raw_saved_"):
        raw, name = True, attr[11:]
    else:
        name = None
    if name is not None:
        entry = _torch_names(node._derivative).get(name)
        if entry is not None:
            saved_name, kind, derive = entry
            if raw:
                if kind in ("tensor", "tensors"):
                    return _raw(node._saved.get(saved_name), kind)
            else:
                if saved_name not in node._saved:
                    d = node._derivative
                    if saved_name in d.defaults:   # an argument the call left at its default
                        return _to_torch(node, saved_name, kind, d.defaults[saved_name])
                    value = _from_saved_tensor(node, saved_name)
                    if value is None:
                        return _MISSING_DEFAULTS.get(kind)   # not saved: PyTorch's field keeps its default
                else:
                    value = node._saved[saved_name]
                if derive is not None:
                    if isinstance(value, SavedTensor):   # an output: its shape
                        value = tuple(value.unpack(node).shape)
                    value = derive(value)
                return _to_torch(node, saved_name, kind, value)
    raise AttributeError(f"'{type(node).__name__}' object has no attribute '{attr}'")


def _from_saved_tensor(node, saved_name):
    """The sizes or strides named ``saved_name`` (``self_sizes``) of a tensor the node saved
    anyway, which the recorder does not keep twice (``Derivative.wanted``); None when the node
    has no such value (strides of an input that needs no gradient: PyTorch saves none)."""
    owner, _, attr = saved_name.rpartition("_")
    saved = node._saved.get(owner)
    if attr not in ("sizes", "strides") or type(saved) is not SavedTensor:
        return None
    if attr == "strides" and not any(node._needs.get(owner, (True,))):
        return None
    impl = saved.impl
    if impl is None:   # released after backward (raises PyTorch's error), or packed by hooks
        impl = saved.unpack(node)._impl
    return impl.sizes if attr == "sizes" else impl.strides


def _raw(value, kind):
    if kind == "tensors":
        return tuple(_raw(v, "tensor") for v in (value or ()))
    if isinstance(value, SavedTensor):
        return value
    return empty_saved_tensor()


def empty_saved_tensor():
    # PyTorch's undefined SavedVariable (a tensor the node did not save): a SavedTensor holding nothing
    s = SavedTensor.__new__(SavedTensor)
    s.released = False
    return s


def names(node):
    """The ``_saved_*`` and ``_raw_saved_*`` attributes of ``node``, for ``dir(node)``."""
    out = []
    for name, (_saved_name, kind, _derive) in _torch_names(node._derivative).items():
        out.append("_saved_" + name)
        if kind in ("tensor", "tensors"):
            out.append("_raw_saved_" + name)
    return out
