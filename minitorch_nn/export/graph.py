"""The recorded op graph of an exported program (mirrors the role of ``torch.fx.Graph`` in export).

A :class:`Graph` is a flat list of :class:`Node` objects in execution order:

* ``placeholder`` nodes, one per graph input (lifted parameters ``p_*``, buffers ``b_*``,
  tensor constants ``c_*``, then the user's tensor inputs, named after ``forward``'s arguments);
* ``call_function`` nodes, one per aten op that reached the dispatcher while ``forward`` ran
  (or per composite op, see ``composites.py``). Arguments that were tensors are :class:`Ref`
  objects naming an earlier node; everything else is stored as the plain value. An op returning
  several tensors is followed, as in FX, by one ``operator.getitem`` node per tensor;
* one ``output`` node whose argument is the structure ``forward`` returned.

Every value-producing node keeps ``meta``: the shape and dtype of what it produced, and where
in the user's code the op was called (file, line, source text, and the submodule whose
``forward`` was running). ``print(ep.graph)`` prints FX's form, as PyTorch does::

    graph():
        %p_fc_weight : [num_users=1] = placeholder[target=p_fc_weight]
        ...
        %linear : [num_users=1] = call_function[target=torch.ops.aten.linear.default](args = (%x, %p_fc_weight, %p_fc_bias), kwargs = {})
        return (linear,)

and ``ep.graph_module.print_readable()`` (``graph_module.py``) the same nodes as code, with
shapes and source lines.

Differences from PyTorch: there is no ``fx.Graph`` / ``GraphModule`` code generation; the graph
is replayed by a small interpreter (:func:`run_graph`). Node names follow FX's rule (the op's
name, then ``_1``, ``_2``...; ``sum_1`` for an op named like a Python builtin). A
:class:`Ref` can also name one element of a node (``Ref("max_1", 0)``): programs saved before
the ``getitem`` nodes existed read their elements that way.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field

from minitorch_nn import _dtype as dt

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Ref:
    """A reference to the value produced by node ``name`` (element ``index`` for a tuple output)."""

    name: str
    index: int | None = None

    def __str__(self):
        return self.name if self.index is None else f"{self.name}[{self.index}]"


@dataclass
class Node:
    """One step of the graph: ``op`` is ``placeholder``, ``call_function`` or ``output``."""

    op: str
    name: str
    target: object = None          # the op for call_function; the node's name for placeholder/output (as FX)
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    meta: dict = field(default_factory=dict)  # "val": [(shape, dtype)] | (shape, dtype); "stack": {...}

    def __post_init__(self):
        if self.target is None and self.op in ("placeholder", "output"):
            self.target = self.name

    def __repr__(self):
        return f"Node({self.op}, {self.name})"


def target_name(target) -> str:
    """How a node's target is written: ``aten.add.Tensor``, or ``operator.getitem`` (FX's element read)."""
    return "operator.getitem" if target is operator.getitem else str(target)


def _short_dtype(dtype) -> str:
    # the abbreviations PyTorch's graph printer uses
    table = {
        "float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16", "int64": "i64",
        "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "u8", "bool": "b8",
        "complex64": "c64", "complex128": "c128",
    }
    name = str(dtype).replace("torch.", "")
    return table.get(name, name)


def format_val(val) -> str:
    """``f32[2, 3]`` for one tensor, ``(f32[2], f32[2])`` for several."""
    if val is None:
        return "None"
    if isinstance(val, list):
        return "(" + ", ".join(format_val(v) for v in val) + ")"
    shape, dtype = val
    return f"{_short_dtype(dtype)}[{', '.join(str(s) for s in shape)}]"


def format_arg(a, ref_prefix: str = "", kw_sep: str = "=", rename=None) -> str:
    """One node argument as PyTorch prints it: ``%x`` (FX graph) or ``x`` (code), lists, dtypes.

    ``rename`` maps node names to the names used in generated code (``input`` -> ``input_1``).
    """
    if isinstance(a, Ref):
        name = (rename or {}).get(a.name, a.name)
        return ref_prefix + (name if a.index is None else f"{name}[{a.index}]")
    if isinstance(a, (list, tuple)):
        inner = ", ".join(format_arg(x, ref_prefix, rename=rename) for x in a)
        return f"[{inner}]" if isinstance(a, list) else f"({inner}{',' if len(a) == 1 else ''})"
    if isinstance(a, dict):
        return "{" + ", ".join(f"{k}{kw_sep}{format_arg(v, ref_prefix, rename=rename)}" for k, v in a.items()) + "}"
    if isinstance(a, dt.dtype):
        return f"torch.{a}".replace("torch.torch.", "torch.")
    return repr(a)


class Graph:
    """The nodes of an exported program, in execution order."""

    def __init__(self, nodes=None):
        self.nodes: list[Node] = list(nodes or [])

    @property
    def placeholders(self) -> list[Node]:
        return [n for n in self.nodes if n.op == "placeholder"]

    @property
    def calls(self) -> list[Node]:
        return [n for n in self.nodes if n.op == "call_function"]

    @property
    def output_node(self) -> Node:
        return self.nodes[-1]

    @property
    def outputs(self) -> tuple:
        """The :class:`Ref` of every output leaf, in order."""
        out = self.output_node.args[0] if self.nodes and self.nodes[-1].op == "output" else ()
        return tuple(out[1]) if out else ()

    def find(self, name: str) -> Node:
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(name)

    def num_users(self) -> dict:
        """Node name -> how many nodes read it (FX's ``len(node.users)``; the output node counts)."""
        users = {n.name: set() for n in self.nodes}
        for n in self.nodes:
            for ref in _refs_in((n.args, list(n.kwargs.values()))):
                users.setdefault(ref.name, set()).add(n.name)
        return {name: len(u) for name, u in users.items()}

    def __len__(self):
        return len(self.nodes)

    def __iter__(self):
        return iter(self.nodes)

    def __str__(self):
        """FX's ``print(graph)`` form: one ``%name : [num_users=N] = op[target=...](...)`` line a node."""
        users = self.num_users()
        lines = ["graph():"]
        for n in self.nodes:
            if n.op == "placeholder":
                lines.append(f"    %{n.name} : [num_users={users[n.name]}] = placeholder[target={n.target}]")
            elif n.op == "call_function":
                args = format_arg(tuple(n.args), "%")
                kwargs = format_arg(dict(n.kwargs), "%", kw_sep=": ")
                target = target_name(n.target)
                target = target if n.target is operator.getitem else f"torch.ops.{target}"
                lines.append(f"    %{n.name} : [num_users={users[n.name]}] = "
                             f"call_function[target={target}](args = {args}, kwargs = {kwargs})")
        lines.append(f"    return {format_arg(self.outputs)}")
        return "\n".join(lines)

    __repr__ = __str__

    def print_readable(self, print_output: bool = True) -> str:
        """The graph as the code of a ``forward`` (``GraphModule.print_readable``); see ``graph_module.py``."""
        from minitorch_nn.export.graph_module import readable

        text = readable(self)
        if print_output:
            print(text)
        return text


def _refs_in(a):
    if isinstance(a, Ref):
        yield a
    elif isinstance(a, (list, tuple)):
        for x in a:
            yield from _refs_in(x)


# -- replay -----------------------------------------------------------------------------------

def _resolve(a, env):
    if isinstance(a, Ref):
        v = env[a.name]
        return v if a.index is None else v[a.index]
    if isinstance(a, list):
        return [_resolve(x, env) for x in a]
    if isinstance(a, tuple):
        return tuple(_resolve(x, env) for x in a)
    return a


def run_graph(graph: Graph, inputs: list):
    """Replay ``graph`` with ``inputs`` for its placeholders; returns the output leaves (a list)."""
    # BEGIN SOLUTION export-replay
    env = {}
    placeholders = graph.placeholders
    if len(placeholders) != len(inputs):
        raise RuntimeError(f"graph expects {len(placeholders)} inputs, got {len(inputs)}")
    for node, value in zip(placeholders, inputs):
        env[node.name] = value
    for node in graph.calls:
        args = _resolve(node.args, env)
        kwargs = {k: _resolve(v, env) for k, v in node.kwargs.items()}
        env[node.name] = node.target(*args, **kwargs)
    spec, leaves = graph.output_node.args[0]
    return spec, [_resolve(leaf, env) for leaf in leaves]
    # END SOLUTION


# -- JSON form ----------------------------------------------------------------------------------

def encode_arg(a):
    """A JSON-able form of one node argument (raises TypeError for anything else)."""
    if isinstance(a, Ref):
        return {"ref": a.name, "index": a.index}
    if a is None or isinstance(a, (bool, int, str)):
        return a
    if isinstance(a, float):
        return a if math.isfinite(a) else {"float": repr(a)}
    if isinstance(a, list):
        return [encode_arg(x) for x in a]
    if isinstance(a, tuple):
        return {"tuple": [encode_arg(x) for x in a]}
    if isinstance(a, dt.dtype):
        return {"dtype": str(a).replace("torch.", "")}
    from minitorch_nn._device import device

    if isinstance(a, device):
        return {"device": str(a)}
    if type(a).__name__ == "memory_format":
        return {"memory_format": str(a).replace("torch.", "")}
    raise TypeError(f"export.save: cannot serialize a graph argument of type {type(a).__name__}: {a!r}")


def decode_arg(a):
    """Inverse of :func:`encode_arg`; raises ValueError for anything it does not know."""
    if a is None or isinstance(a, (bool, int, float, str)):
        return a
    if isinstance(a, list):
        return [decode_arg(x) for x in a]
    if isinstance(a, dict) and len(a) in (1, 2):
        if "ref" in a:
            idx = a.get("index")
            if not isinstance(a["ref"], str) or not (idx is None or isinstance(idx, int)):
                raise ValueError(f"bad reference {a!r}")
            return Ref(a["ref"], idx)
        if "tuple" in a:
            return tuple(decode_arg(x) for x in a["tuple"])
        if "float" in a and a["float"] in ("inf", "-inf", "nan"):
            return float(a["float"])
        if "dtype" in a:
            return dtype_from_name(a["dtype"])
        if "device" in a:
            from minitorch_nn._device import device

            return device(a["device"])
        if "memory_format" in a:
            import minitorch_nn

            value = getattr(minitorch_nn, str(a["memory_format"]), None)
            if type(value).__name__ != "memory_format":
                raise ValueError(f"unknown memory format {a['memory_format']!r}")
            return value
    raise ValueError(f"unknown argument encoding {a!r}")


def dtype_from_name(name):
    value = getattr(dt, str(name), None)
    if not isinstance(value, dt.dtype):
        raise ValueError(f"unknown dtype {name!r}")
    return value


def encode_val(val):
    if val is None:
        return None
    if isinstance(val, list):
        return [encode_val(v) for v in val]
    shape, dtype = val
    return {"shape": list(shape), "dtype": str(dtype).replace("torch.", "")}


def decode_val(v):
    if v is None:
        return None
    if isinstance(v, list):
        return [decode_val(x) for x in v]
    if not isinstance(v, dict) or set(v) != {"shape", "dtype"}:
        raise ValueError(f"bad tensor description {v!r}")
    if not all(isinstance(s, int) and s >= 0 for s in v["shape"]):
        raise ValueError(f"bad shape {v['shape']!r}")
    return (tuple(v["shape"]), dtype_from_name(v["dtype"]))


# -- nested inputs and outputs (a tiny pytree) ---------------------------------------------------

def flatten(obj, is_leaf):
    """``(spec, leaves)``: ``spec`` is JSON-able and says where each leaf sits in ``obj``."""
    leaves = []

    def walk(o):
        if is_leaf(o):
            leaves.append(o)
            return "*"
        if isinstance(o, tuple):
            return {"tuple": [walk(x) for x in o]}
        if isinstance(o, list):
            return {"list": [walk(x) for x in o]}
        if isinstance(o, dict):
            return {"dict": [[k, walk(v)] for k, v in o.items()]}
        if o is None or isinstance(o, (bool, int, float, str)):
            return {"const": o}
        raise TypeError(f"export: unsupported value of type {type(o).__name__} in the inputs or outputs of forward")

    return walk(obj), leaves


def unflatten(spec, leaves):
    it = iter(leaves)

    def build(s):
        if s == "*":
            return next(it)
        if not isinstance(s, dict) or len(s) != 1:
            raise ValueError(f"bad output structure {s!r}")
        (kind, body), = s.items()
        if kind == "tuple":
            return tuple(build(x) for x in body)
        if kind == "list":
            return [build(x) for x in body]
        if kind == "dict":
            return {k: build(v) for k, v in body}
        if kind == "const":
            return body
        raise ValueError(f"bad output structure {s!r}")

    return build(spec)
