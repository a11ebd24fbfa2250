"""Tracing a module's forward into a :class:`~minitorch_nn.export.graph.Graph` (mirrors ``torch/export/_trace.py``).

How it works, in order:

1. **Lift the state.** Every parameter (``named_parameters(remove_duplicate=False)``), then
   every buffer (``named_buffers(remove_duplicate=False)``) becomes a graph input named
   ``p_<fqn>`` / ``b_<fqn>`` (dots become underscores). Tied parameters get one input per name,
   and, as in PyTorch, the ops use the input of the *last* name. Using the runtime names here
   (not ``state_dict()``) is the point of PyTorch PR #137609: state-dict hooks cannot change them.
2. **Name the user inputs** after ``forward``'s parameters (``x``; ``xs_0``, ``xs_1`` for the
   tensors inside a list or tuple argument). Non-tensor arguments are baked into the graph.
3. **Run ``forward`` once** under :class:`_ExportTracer`, a ``TorchDispatchMode``. Every aten op
   that reaches the dispatcher runs for real (over real or meta tensors: meta tensors give
   shapes without computing) and is recorded as a node: its arguments (tensors replaced by
   references to earlier nodes), the shapes and dtypes it produced, and the user's source line.
4. **Lift constants.** A tensor that an op reads but that is neither a graph input nor an
   op's output is a constant: a plain tensor attribute of a submodule becomes ``c_<fqn>``,
   anything else (``torch.tensor(2.0)`` inside ``forward``) ``c_lifted_tensor_<n>``.
5. **Refuse data-dependent control flow.** Reading a traced tensor's value (``item()``,
   ``bool()``, ``int()``, ``tolist()``; PyTorch's ``aten._local_scalar_dense``) means the graph
   would depend on the data, so export stops with :class:`GuardOnDataDependentSymNode` naming
   the user's line.

Differences from PyTorch: no symbolic shapes (every shape is static, checked when the program
runs), no FakeTensor (tracing runs the real kernels, or the meta ones for meta tensors), no
strict mode (no TorchDynamo); as with PyTorch the model is left unchanged (its tensors are
copied back after the real run), mutations of buffers stay in the graph as in-place ops (PyTorch's
training IR does the same for ``batch_norm``; ``buffers_to_mutate`` is always empty here).
``Tensor.item`` in minitorch_nn reads the array directly instead of dispatching, so the tracer
routes it through ``aten._local_scalar_dense`` for the duration of the trace.
"""

from __future__ import annotations

import builtins
import contextlib
import inspect
import keyword
import linecache
import operator
import os
import sys

from minitorch_nn._tensor import Tensor
from minitorch_nn._warnings import in_package
from minitorch_nn.autograd.graph import saving_output_for_backward as _saving_output_for_backward
from minitorch_nn.export.composites import intercept_composites
from minitorch_nn.export.graph import Graph, Node, Ref, flatten
from minitorch_nn.utils._python_dispatch import TorchDispatchMode


class GuardOnDataDependentSymNode(RuntimeError):
    """Export read the value of a traced tensor (PyTorch raises a class of this name too)."""


def _is_tensor(x) -> bool:
    return isinstance(x, Tensor)


def _sanitize(fqn: str) -> str:
    return "".join(c if (c.isalnum() or c == "_") else "_" for c in fqn)


def _user_frame(stop=None):
    """The innermost frame outside the minitorch_nn package (the user's code), or None.

    Only frames inside the traced call (below ``stop``) count, so a model made only of
    library layers (``nn.Sequential``) is not attributed to the line that called export.
    """
    f = sys._getframe(1)
    while f is not None and f is not stop:
        if not in_package(f):
            return f
        f = f.f_back
    return None


class _ExportTracer(TorchDispatchMode):
    """Records every aten op as a graph node; see the module docstring."""

    def __init__(self, module):
        super().__init__()
        self.module = module
        self.values: dict[int, Ref] = {}      # id(tensor) -> the node that produced it
        self.dependent: set[int] = set()      # ids of tensors computed from graph inputs (not constants only)
        self.alive: list = []                 # keeps traced tensors alive so ids stay unique
        self.names: set[str] = set()
        self.counts: dict[str, int] = {}
        self.nodes: list[Node] = []
        self.constant_placeholders: list[Node] = []
        self.constants: dict[str, Tensor] = {}   # constant fqn -> tensor
        self.attr_constants: dict[int, str] = {}  # id(plain tensor attribute) -> fqn
        self.module_names = {id(m): name for name, m in module.named_modules(remove_duplicate=False)}
        for prefix, m in module.named_modules(remove_duplicate=False):
            for attr, value in vars(m).items():
                if _is_tensor(value) and not attr.startswith("__"):
                    self.attr_constants.setdefault(id(value), f"{prefix}.{attr}" if prefix else attr)
        self.lifted = 0
        self.depth = 0           # > 0 while a composite op (export/composites.py) runs: its inner ops are not nodes
        self.outer_frame = None  # the frame of trace(): user frames above it are not in forward

    # -- naming ---------------------------------------------------------------------------------
    def unique(self, base: str, op_name: bool = False) -> str:
        base = base or "v"
        if op_name and len(base) > 4 and base.startswith("__") and base.endswith("__"):
            base = base[2:-2]  # as FX names a magic method's node: ``aten.__lshift__`` -> ``lshift``
        # as FX does, a node named after an op never shadows a Python builtin or keyword (sum_1, max_1)
        if op_name and (keyword.iskeyword(base) or hasattr(builtins, base)):
            self.names.add(base)
        if base not in self.names:
            self.names.add(base)
            return base
        n = self.counts.get(base, 0)
        while True:
            n += 1
            name = f"{base}_{n}"
            if name not in self.names:
                self.counts[base] = n
                self.names.add(name)
                return name

    def bind(self, t, ref: Ref):
        self.values[id(t)] = ref
        self.alive.append(t)

    # -- where in the user's code ---------------------------------------------------------------
    def where(self) -> dict | None:
        frame = _user_frame(self.outer_frame)
        owner_frame = None
        f = sys._getframe(1)
        while f is not None:  # the innermost submodule whose forward is running
            if f.f_code.co_name == "forward" and id(f.f_locals.get("self")) in self.module_names:
                owner_frame = f
                break
            f = f.f_back
        if frame is None:
            frame = owner_frame  # library code only: show the layer's own line
        if frame is None:
            return None
        info = {
            "file": os.path.basename(frame.f_code.co_filename),
            "path": frame.f_code.co_filename,
            "line": frame.f_lineno,
            "code": linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip(),
            "function": frame.f_code.co_name,
        }
        if owner_frame is not None:
            owner = owner_frame.f_locals["self"]
            info["module"] = self.module_names[id(owner)]
            info["module_type"] = type(owner).__name__
        return info

    # -- tensors as node arguments --------------------------------------------------------------
    def ref_for(self, t) -> Ref:
        ref = self.values.get(id(t))
        if ref is not None:
            return ref
        fqn = self.attr_constants.get(id(t))
        if fqn is None:
            fqn = f"lifted_tensor_{self.lifted}"
            self.lifted += 1
        name = self.unique("c_" + _sanitize(fqn))
        node = Node("placeholder", name, meta={"val": (tuple(t.shape), t.dtype), "kind": "CONSTANT_TENSOR",
                                               "target": fqn})
        self.constant_placeholders.append(node)
        self.constants[fqn] = t
        ref = Ref(name)
        self.bind(t, ref)
        return ref

    def encode(self, a):
        if _is_tensor(a):
            return self.ref_for(a)
        if isinstance(a, list):
            return [self.encode(x) for x in a]
        if isinstance(a, tuple):
            return tuple(self.encode(x) for x in a)
        return a

    # -- the mode -------------------------------------------------------------------------------
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if _saving_output_for_backward():
            # autograd's own detach of an output it saves (PyTorch's export traces above autograd)
            return func(*args, **kwargs)
        if func.__name__.startswith("_local_scalar_dense") and args and id(args[0]) in self.dependent:
            raise_data_dependent(self.where(), "Tensor.item()")
        out = func(*args, **kwargs)
        dependent = any(id(t) in self.dependent for t in _tensors_in(args, kwargs))
        if self.depth:  # inside a composite op: the composite is the node
            for o in (out if isinstance(out, (tuple, list)) else (out,)):
                if dependent and _is_tensor(o):
                    self.dependent.add(id(o))
            return out
        node = Node("call_function", self.unique(func.__name__.split(".")[0], op_name=True), target=func,
                    args=self.encode(tuple(args)), kwargs={k: self.encode(v) for k, v in kwargs.items()})
        self._finish(node, out, dependent)
        return out

    def record_composite(self, op, args, run):
        """One node for a composite op (``aten.linear``...); ``run()`` computes it, its ops unrecorded."""
        dependent = any(id(t) in self.dependent for t in _tensors_in(args, {}))
        encoded = self.encode(tuple(args))  # before running: the result may be an input tensor itself
        self.depth += 1
        try:
            out = run()
        finally:
            self.depth -= 1
        if not _is_tensor(out) and not (isinstance(out, (tuple, list)) and out and all(map(_is_tensor, out))):
            return out  # e.g. NotImplemented from Tensor.__matmul__: nothing was computed
        node = Node("call_function", self.unique(op.__name__.split(".")[0], op_name=True), target=op, args=encoded)
        self._finish(node, out, dependent)
        return out

    def _finish(self, node, out, dependent):
        """Attach the source line and output shapes to ``node``, bind its outputs, append it."""
        stack = self.where()
        if stack:
            node.meta["stack"] = stack
        if _is_tensor(out):
            node.meta["val"] = (tuple(out.shape), out.dtype)
            self.bind(out, Ref(node.name))
            if dependent:
                self.dependent.add(id(out))
        elif isinstance(out, (tuple, list)) and any(_is_tensor(o) for o in out):
            node.meta["val"] = [(tuple(o.shape), o.dtype) if _is_tensor(o) else None for o in out]
        self.nodes.append(node)
        if isinstance(out, (tuple, list)) and not _is_tensor(out):
            # as FX: one getitem node per tensor of the result, right after the op, used or not
            for i, o in enumerate(out):
                if _is_tensor(o):
                    item = Node("call_function", self.unique("getitem"), target=operator.getitem,
                                args=(Ref(node.name), i), meta={"val": (tuple(o.shape), o.dtype)})
                    if stack:
                        item.meta["stack"] = stack
                    self.nodes.append(item)
                    self.bind(o, Ref(item.name))
                    if dependent:
                        self.dependent.add(id(o))


def _tensors_in(args, kwargs):
    for a in list(args) + list(kwargs.values()):
        if _is_tensor(a):
            yield a
        elif isinstance(a, (list, tuple)):
            yield from (b for b in a if _is_tensor(b))


def raise_data_dependent(where: dict | None, what: str):
    loc = ""
    if where:
        loc = (f"\n\nThe following call raised this error:\n  File \"{where['path']}\", line {where['line']}, "
               f"in {where['function']}\n    {where['code']}")
    raise GuardOnDataDependentSymNode(
        f"Could not guard on data-dependent expression: {what} reads the value of a tensor that "
        f"export is tracing, so the graph would depend on the input data.{loc}\n"
        "Hint: an exported graph is one fixed sequence of ops. Compute both branches and pick with "
        "torch.where(cond, a, b) instead of `if tensor:`, or move the check out of forward()."
    )


@contextlib.contextmanager
def _route_scalar_reads(tracer: _ExportTracer):
    """Make ``item()`` (hence ``bool()``, ``int()``, ``float()``) and ``tolist()`` visible to the tracer."""
    from minitorch_nn._ops import ops

    orig_item, orig_tolist = Tensor.item, Tensor.tolist

    def item(self):
        if self.numel() == 1 and id(self) in tracer.dependent:
            return ops.aten._local_scalar_dense.default(self)
        return orig_item(self)

    def tolist(self):
        if id(self) in tracer.dependent:
            raise_data_dependent(tracer.where(), "Tensor.tolist()")
        return orig_tolist(self)

    Tensor.item, Tensor.tolist = item, tolist
    try:
        yield
    finally:
        Tensor.item, Tensor.tolist = orig_item, orig_tolist


@contextlib.contextmanager
def _state_restored(module):
    """Undo what tracing did to the module's tensors (batch norm's running stats, ``add_`` on buffers).

    PyTorch traces with fake tensors, so ``export`` never changes the model; here forward runs
    for real, so the values are copied back afterwards, even when tracing fails.
    """
    from minitorch_nn.autograd import no_grad

    saved = []
    seen = set()
    for _, t in list(module.named_parameters(remove_duplicate=False)) + list(module.named_buffers(remove_duplicate=False)):
        if id(t) not in seen and not t.is_meta:
            seen.add(id(t))
            saved.append((t, t.detach().clone()))
    try:
        yield
    finally:
        with no_grad():
            for t, copy in saved:
                t.copy_(copy)


def _non_persistent_fqns(module) -> set:
    out = set()
    for prefix, m in module.named_modules(remove_duplicate=False):
        for name in m._non_persistent_buffers_set:
            out.add(f"{prefix}.{name}" if prefix else name)
    return out


def _forward_params(module, args, kwargs):
    """``[(name, kind, value)]`` for the arguments given, in ``forward``'s order."""
    sig = inspect.signature(module.forward)
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"export: the example inputs do not match {type(module).__name__}.forward{sig}: {e}") from None
    return [(name, sig.parameters[name].kind.name, value) for name, value in bound.arguments.items()]


def trace(module, args, kwargs):
    """Run ``module(*args, **kwargs)`` once and return the pieces of an ExportedProgram."""
    from minitorch_nn.export.exported_program import (
        ExportGraphSignature,
        InputKind,
        InputSpec,
        OutputKind,
        OutputSpec,
        TensorArgument,
    )

    tracer = _ExportTracer(module)
    param_nodes, buffer_nodes, input_specs = [], [], []
    params = list(module.named_parameters(remove_duplicate=False))
    buffers = list(module.named_buffers(remove_duplicate=False))
    non_persistent = _non_persistent_fqns(module)
    for fqn, p in params:
        node = Node("placeholder", tracer.unique("p_" + _sanitize(fqn)), meta={"val": (tuple(p.shape), p.dtype)})
        param_nodes.append(node)
        tracer.bind(p, Ref(node.name))
        tracer.dependent.add(id(p))
        input_specs.append(InputSpec(InputKind.PARAMETER, TensorArgument(node.name), fqn))
    for fqn, b in buffers:
        node = Node("placeholder", tracer.unique("b_" + _sanitize(fqn)), meta={"val": (tuple(b.shape), b.dtype)})
        buffer_nodes.append(node)
        tracer.bind(b, Ref(node.name))
        tracer.dependent.add(id(b))
        input_specs.append(InputSpec(InputKind.BUFFER, TensorArgument(node.name), fqn, fqn not in non_persistent))

    forward_params, user_nodes, user_names = [], [], []
    for name, kind, value in _forward_params(module, args, kwargs):
        spec, leaves = flatten(value, _is_tensor)
        forward_params.append({"name": name, "kind": kind, "spec": spec})
        for i, t in enumerate(leaves):
            node_name = tracer.unique(_sanitize(name) if spec == "*" else f"{_sanitize(name)}_{i}")
            node = Node("placeholder", node_name, meta={"val": (tuple(t.shape), t.dtype)})
            user_nodes.append(node)
            user_names.append(node_name)
            tracer.bind(t, Ref(node_name))
            tracer.dependent.add(id(t))

    tracer.outer_frame = sys._getframe()
    with _route_scalar_reads(tracer), _state_restored(module), intercept_composites(tracer.record_composite), tracer:
        result = module(*args, **(kwargs or {}))

    out_spec, out_leaves = flatten(result, _is_tensor)
    out_refs = [tracer.ref_for(t) for t in out_leaves]

    constant_specs = [InputSpec(InputKind.CONSTANT_TENSOR, TensorArgument(n.name), n.meta["target"])
                      for n in tracer.constant_placeholders]
    input_specs += constant_specs
    input_specs += [InputSpec(InputKind.USER_INPUT, TensorArgument(n), None) for n in user_names]
    output_specs = [OutputSpec(OutputKind.USER_OUTPUT, TensorArgument(str(r)), None) for r in out_refs]

    graph = Graph(param_nodes + buffer_nodes + tracer.constant_placeholders + user_nodes + tracer.nodes
                  + [Node("output", "output", args=((out_spec, out_refs),))])
    signature = ExportGraphSignature(input_specs, output_specs)
    state_dict = {}
    for fqn, p in params:
        state_dict[fqn] = p
    for fqn, b in buffers:
        if fqn not in non_persistent:
            state_dict[fqn] = b
    constants = dict(tracer.constants)  # lifted constants first, then non-persistent buffers (PyTorch's order)
    for fqn, b in buffers:
        if fqn in non_persistent:
            constants[fqn] = b
    return graph, signature, state_dict, constants, forward_params
