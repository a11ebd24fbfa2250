"""``ExportedProgram`` and its graph signature (mirrors ``torch/export/exported_program.py`` and
``torch/export/graph_signature.py``).

An exported program is a graph plus the tensors it needs:

* ``graph_signature`` says what each graph input is: a parameter, a buffer (persistent or
  not), a lifted tensor constant or a user input, with the module's *runtime* name
  (``named_parameters()`` / ``named_buffers()``) as its ``target``;
* ``state_dict`` holds the parameters and persistent buffers, keyed by those runtime names,
  parameters first: the module's own tensor objects, whatever its state-dict hooks do (the
  behaviour PyTorch PR #137609 introduced: ``ep.state_dict`` and ``model.state_dict()`` may
  differ when hooks rename keys);
* ``constants`` holds the lifted tensor constants and the non-persistent buffers.

Beyond PyTorch:

* :meth:`ExportedProgram.swap_weights` puts a new state dict (runtime names) into the program
  without exporting again. Every key, shape, dtype and device is checked before anything
  changes, and the error explains a dict that came from a hooked ``state_dict()``.
* ``ep(*args)`` / ``ep.run(*args)`` run the program directly (PyTorch's ``ExportedProgram``
  refuses ``__call__`` and asks for ``ep.module()``; both work here).
* ``ep.module()`` is a plain ``nn.Module`` (not an fx ``GraphModule``) that replays the graph.
  As in PyTorch its ``train()``/``eval()`` raise: the mode was fixed when the graph was traced.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

from minitorch_nn._tensor import Tensor
from minitorch_nn.export.graph import Graph, format_val, run_graph, unflatten
from minitorch_nn.export.graph_module import GraphModule
from minitorch_nn.nn.modules.module import Module
from minitorch_nn.nn.parameter import Parameter


class InputKind(enum.Enum):
    USER_INPUT = enum.auto()
    PARAMETER = enum.auto()
    BUFFER = enum.auto()
    CONSTANT_TENSOR = enum.auto()


class OutputKind(enum.Enum):
    USER_OUTPUT = enum.auto()


@dataclass(frozen=True)
class TensorArgument:
    name: str


@dataclass(frozen=True)
class InputSpec:
    """One graph input: its ``kind``, the placeholder (``arg.name``) and the runtime name (``target``)."""

    kind: InputKind
    arg: TensorArgument
    target: str | None
    persistent: bool | None = None

    def __str__(self):
        target = "" if self.target is None else f" target={self.target!r}"
        persistent = "" if self.persistent is None else f" persistent={self.persistent}"
        return f"{self.arg.name}: {self.kind.name}{target}{persistent}"


@dataclass(frozen=True)
class OutputSpec:
    kind: OutputKind
    arg: TensorArgument
    target: str | None = None

    def __str__(self):
        return f"{self.arg.name}: {self.kind.name}"


class ExportGraphSignature:
    """What the graph's inputs and outputs are; the attribute names are PyTorch's."""

    def __init__(self, input_specs, output_specs):
        self.input_specs = list(input_specs)
        self.output_specs = list(output_specs)

    def _targets(self, kind, persistent=None):
        return tuple(s.target for s in self.input_specs
                     if s.kind is kind and (persistent is None or s.persistent is persistent))

    @property
    def parameters(self):
        return self._targets(InputKind.PARAMETER)

    @property
    def buffers(self):
        return self._targets(InputKind.BUFFER)

    @property
    def non_persistent_buffers(self):
        return self._targets(InputKind.BUFFER, persistent=False)

    @property
    def lifted_tensor_constants(self):
        return self._targets(InputKind.CONSTANT_TENSOR)

    @property
    def lifted_custom_objs(self):
        return ()

    @property
    def user_inputs(self):
        return tuple(s.arg.name for s in self.input_specs if s.kind is InputKind.USER_INPUT)

    @property
    def user_outputs(self):
        return tuple(s.arg.name for s in self.output_specs if s.kind is OutputKind.USER_OUTPUT)

    def _mapping(self, kind):
        return {s.arg.name: s.target for s in self.input_specs if s.kind is kind}

    @property
    def inputs_to_parameters(self):
        return self._mapping(InputKind.PARAMETER)

    @property
    def inputs_to_buffers(self):
        return self._mapping(InputKind.BUFFER)

    @property
    def inputs_to_lifted_tensor_constants(self):
        return self._mapping(InputKind.CONSTANT_TENSOR)

    @property
    def buffers_to_mutate(self):
        return {}  # mutations stay in the graph as in-place ops (see _trace.py)

    @property
    def user_inputs_to_mutate(self):
        return {}

    def __str__(self):
        lines = ["", "# inputs"] + [str(s) for s in self.input_specs] + ["", "# outputs"]
        lines += [str(s) for s in self.output_specs]
        return "\n".join(lines) + "\n"

    __repr__ = __str__


def _check_input(name, t, expected):
    shape, dtype = expected
    if not isinstance(t, Tensor):
        raise TypeError(f"Expected input {name} to be a tensor, but got {type(t).__name__}")
    if t.dim() != len(shape):
        raise AssertionError(f"Guard failed: {name}.dim() == {len(shape)}")
    for i, (got, want) in enumerate(zip(t.shape, shape)):
        if got != want:
            raise AssertionError(
                f"Guard failed: {name}.size()[{i}] == {want}\n"
                f"(got shape {list(t.shape)}; the program was exported for {format_val(expected)}. "
                "Shapes are static here: export again with an input of the new shape.)"
            )
    if t.dtype != dtype:
        raise AssertionError(f"Guard failed: {name}.dtype == {dtype} (got {t.dtype})")


class ExportedProgram:
    """A traced module: ``graph``, ``graph_signature``, ``state_dict``, ``constants``.

    Made by :func:`minitorch_nn.export.export`; run it with ``ep.module()(x)`` (a module, as in
    PyTorch) or directly with ``ep(x)`` / ``ep.run(x)``.
    """

    def __init__(self, graph: Graph, graph_signature: ExportGraphSignature, state_dict: dict,
                 constants: dict, forward_params: list, root_name: str = "Module"):
        self.graph = graph
        self.graph_signature = graph_signature
        self._state_dict = dict(state_dict)
        self.constants = dict(constants)
        self._forward_params = forward_params
        self._root_name = root_name

    # -- state ----------------------------------------------------------------------------------
    @property
    def state_dict(self) -> dict:
        """Parameters then persistent buffers, by runtime name (state-dict hooks do not apply)."""
        return self._state_dict

    @state_dict.setter
    def state_dict(self, value):
        raise RuntimeError("Unable to set ExportedProgram's state_dict attribute.")

    def named_parameters(self):
        for name in self.graph_signature.parameters:
            yield name, self._state_dict[name]

    def parameters(self):
        for _, p in self.named_parameters():
            yield p

    def named_buffers(self):
        for name in self.graph_signature.buffers:
            yield name, (self.constants[name] if name in self.graph_signature.non_persistent_buffers
                         else self._state_dict[name])

    def buffers(self):
        for _, b in self.named_buffers():
            yield b

    # -- running --------------------------------------------------------------------------------
    def _user_leaves(self, args, kwargs):
        """The tensors of a call, in the order of the user-input placeholders."""
        import inspect

        from minitorch_nn.export.graph import flatten

        params = [inspect.Parameter(p["name"], getattr(inspect.Parameter, p["kind"]))
                  for p in self._forward_params]
        try:
            bound = inspect.Signature(params).bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"ExportedProgram: the inputs do not match the exported call: {e}") from None
        leaves = []
        for p in self._forward_params:
            value = bound.arguments.get(p["name"])
            spec, vs = flatten(value, lambda x: isinstance(x, Tensor))
            if spec != p["spec"]:
                raise TypeError(
                    f"ExportedProgram: input {p['name']!r} has a different structure than at export "
                    f"time ({spec} vs {p['spec']})")
            leaves += vs
        return leaves

    def _graph_inputs(self, state, user_leaves):
        users = iter(user_leaves)
        values = []
        placeholders = self.graph.placeholders
        for spec, node in zip(self.graph_signature.input_specs, placeholders):
            if spec.kind is InputKind.USER_INPUT:
                t = next(users)
                _check_input(spec.arg.name, t, node.meta["val"])
                values.append(t)
            else:
                values.append(state(spec))
        return values

    def _state_for(self, spec):
        if spec.kind is InputKind.PARAMETER or (spec.kind is InputKind.BUFFER and spec.persistent):
            return self._state_dict[spec.target]
        return self.constants[spec.target]

    def run(self, *args, **kwargs):
        """Run the graph on ``args`` with the program's current weights."""
        inputs = self._graph_inputs(self._state_for, self._user_leaves(args, kwargs))
        spec, leaves = run_graph(self.graph, inputs)
        return unflatten(spec, leaves)

    __call__ = run

    def module(self) -> Module:
        """A ``GraphModule`` whose ``forward`` replays the graph; its state dict uses the runtime
        names. As in PyTorch its class is called ``GraphModule`` (a subclass of
        ``_StatefulGraphModule``), so reprs and ``load_state_dict`` errors name ``GraphModule``."""
        return _ProgramGraphModule(self)

    # -- weight swapping ------------------------------------------------------------------------
    def check_weights(self, new_state_dict) -> list[str]:
        """The problems :meth:`swap_weights` would report for ``new_state_dict`` (empty: fine)."""
        if not isinstance(new_state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(new_state_dict)}.")
        expected = self._state_dict
        missing = [k for k in expected if k not in new_state_dict]
        unexpected = [k for k in new_state_dict if k not in expected]
        errors = []
        if missing:
            errors.append("Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing)))
        if unexpected:
            errors.append("Unexpected key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in unexpected)))
        for key, old in expected.items():
            if key not in new_state_dict:
                continue
            new = new_state_dict[key]
            if not isinstance(new, Tensor):
                errors.append(f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like '
                              f"object from checkpoint but received {type(new)}")
            elif tuple(new.shape) != tuple(old.shape):
                errors.append(f"size mismatch for {key}: copying a param with shape {new.shape} from checkpoint, "
                              f"the shape in current model is {old.shape}.")
            elif new.dtype != old.dtype:
                errors.append(f"dtype mismatch for {key}: the new tensor is {new.dtype}, the program was "
                              f"exported with {old.dtype}.")
            elif new.device != old.device:
                errors.append(f"device mismatch for {key}: the new tensor is on {new.device}, the program's is on "
                              f"{old.device}.")
        if not errors:
            errors += _tied_errors(expected, new_state_dict)
        hint = _hooked_keys_hint(expected, new_state_dict, missing, unexpected)
        if hint:
            errors.append(hint)
        return errors

    def swap_weights(self, new_state_dict) -> None:
        """Serve with ``new_state_dict`` (keys = ``ep.state_dict``'s runtime names) from now on.

        Everything is checked first (every key present, no extra key, same shape, dtype and
        device; names that were one tied tensor at export get one tensor or equal values); if
        anything is wrong a ``RuntimeError`` lists all the problems and the program
        is unchanged. The program then holds the given tensors (no copy; parameters are wrapped
        in ``Parameter``). Modules made by :meth:`module` before the swap keep the old weights.
        """
        errors = self.check_weights(new_state_dict)
        if errors:
            raise RuntimeError("Error(s) in swapping weights into ExportedProgram:\n\t" + "\n\t".join(errors))
        params = set(self.graph_signature.parameters)
        swapped, by_old = {}, {}
        for key, old in self._state_dict.items():
            if id(old) in by_old:  # tied names stay one tensor (checked equal above)
                swapped[key] = by_old[id(old)]
                continue
            new = new_state_dict[key]
            if key in params and not isinstance(new, Parameter):
                new = Parameter(new, requires_grad=old.requires_grad)
            swapped[key] = by_old[id(old)] = new
        self._state_dict = swapped

    load_weights = swap_weights

    @property
    def graph_module(self) -> GraphModule:
        """The module holding :attr:`graph` (``forward`` takes every graph input; see ``graph_module.py``)."""
        gm = self.__dict__.get("_graph_module")
        if gm is None or gm.graph is not self.graph:
            gm = self.__dict__["_graph_module"] = GraphModule(self.graph)
        return gm

    # -- printing -------------------------------------------------------------------------------
    def __str__(self):
        # PyTorch's layout: the graph module's readable code, the signature, the (empty) range constraints
        graph = "\n".join("    " + line for line in self.graph_module.print_readable(print_output=False).split("\n"))
        first, *rest = str(self.graph_signature).split("\n")
        sig = first + "\n" + "\n".join("    " + line for line in rest)
        return f"ExportedProgram:\n{graph}\nGraph signature: {sig}\nRange constraints: {{}}\n"

    __repr__ = __str__


def _tied_errors(expected, given) -> list[str]:
    """Tied names (one tensor at export) must get one tensor, or equal values: the graph reads one."""
    import numpy as np

    groups: dict[int, list[str]] = {}
    for key, old in expected.items():
        groups.setdefault(id(old), []).append(key)
    errors = []
    for keys in groups.values():
        first = given[keys[0]]
        for other in keys[1:]:
            t = given[other]
            if t is first or first.is_meta or t.is_meta:
                continue
            if not np.array_equal(np.asarray(t.detach()), np.asarray(first.detach())):
                errors.append(
                    f'"{keys[0]}" and "{other}" are one tied tensor in the exported program, but the new '
                    "values differ (the graph reads a single tensor for both). Give both names the same tensor.")
    return errors


def _hooked_keys_hint(expected, given, missing, unexpected) -> str | None:
    """Explain unexpected keys that hold the tensors of missing keys (a hooked ``state_dict()``)."""
    if not missing or not unexpected:
        return None
    pairs = []
    for u in unexpected:
        v = given[u]
        for m in missing:
            old = expected[m]
            same = v is old
            if not same and isinstance(v, Tensor) and u.rsplit(".", 1)[-1] == m.rsplit(".", 1)[-1] \
                    and v.shape == old.shape and v.dtype == old.dtype and not v.is_meta and not old.is_meta:
                import numpy as np

                same = bool(np.array_equal(np.asarray(v.detach()), np.asarray(old.detach())))
            if same:
                pairs.append((u, m))
                break
    if not pairs:
        return None
    shown = ", ".join(f'"{u}" -> "{m}"' for u, m in pairs)
    return (
        f"The unexpected keys hold the same tensors as the missing ones ({shown}): this dict looks like "
        "the output of a model.state_dict() whose state-dict hooks rename keys. An ExportedProgram uses the "
        "runtime names of named_parameters()/named_buffers().\n"
        "Fix: build the dict from {**dict(model.named_parameters(remove_duplicate=False)), "
        "**dict(model.named_buffers(remove_duplicate=False))}, or call model.state_dict() inside "
        "`with minitorch_nn._export.utils._disable_load_state_dict_hooks(model):` "
        "(PR #137609's name: _disabled_load_state_dict_hooks)."
    )


class _StatefulGraphModule(GraphModule):
    """``ep.module()``: holds the program's tensors under their runtime names and replays the graph
    on the user's inputs (the plain ``GraphModule`` takes every graph input)."""

    def __init__(self, ep: ExportedProgram):
        super().__init__(ep.graph)
        object.__setattr__(self, "_ep_graph", ep.graph)
        object.__setattr__(self, "_ep", ep)
        sig = ep.graph_signature
        for spec in sig.input_specs:
            if spec.kind is InputKind.USER_INPUT:
                continue
            owner, _, leaf = self._owner(spec.target)
            value = ep._state_for(spec)
            if spec.kind is InputKind.PARAMETER:
                owner.register_parameter(leaf, value if isinstance(value, Parameter)
                                         else Parameter(value, requires_grad=value.requires_grad))
            elif spec.kind is InputKind.BUFFER:
                owner.register_buffer(leaf, value, persistent=bool(spec.persistent))
            else:
                object.__setattr__(owner, leaf, value)

    def _owner(self, target):
        path, _, leaf = target.rpartition(".")
        owner = self
        if path:
            for part in path.split("."):
                child = owner._modules.get(part)
                if child is None:
                    child = Module()
                    owner.add_module(part, child)
                owner = child
        return owner, path, leaf

    def _get(self, target):
        owner, _, leaf = self._owner(target)
        if leaf in owner._parameters:
            return owner._parameters[leaf]
        if leaf in owner._buffers:
            return owner._buffers[leaf]
        return getattr(owner, leaf)

    def forward(self, *args, **kwargs):
        ep = self._ep
        inputs = ep._graph_inputs(lambda spec: self._get(spec.target), ep._user_leaves(args, kwargs))
        spec, leaves = run_graph(self._ep_graph, inputs)
        return unflatten(spec, leaves)

    # As in PyTorch, the mode is part of the traced graph (batch norm's ``training`` flag,
    # dropout ops), so switching it afterwards cannot work.
    def train(self, mode: bool = True):
        raise NotImplementedError("Calling train() is not supported yet.\n"
                                  "Hint: call model.train() or model.eval() before export(); the graph "
                                  "records the mode the model was in.")

    def eval(self):
        raise NotImplementedError("Calling eval() is not supported yet.\n"
                                  "Hint: call model.eval() before export() to get an inference graph.")


# The class ``ep.module()`` returns. PyTorch's fx makes one class per instance, named
# ``GraphModule``, deriving from ``_StatefulGraphModule``; one shared class does the same here.
_ProgramGraphModule = type("GraphModule", (_StatefulGraphModule,), {"__module__": __name__})
