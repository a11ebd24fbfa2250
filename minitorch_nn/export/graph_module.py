"""``ep.graph_module``: the module that holds an exported graph, and the graph printed as code
(mirrors ``torch.fx.GraphModule`` as ``torch.export`` uses it).

In PyTorch ``ep.graph_module`` is an ``fx.GraphModule`` whose ``forward`` takes *every* graph
input (lifted parameters and buffers first, then the user's inputs) and returns the flat tuple
of outputs; its ``code`` is generated Python, and ``print_readable()`` is that code with the
shape of each value and, above each group of nodes, the source line that produced them::

    class GraphModule(torch.nn.Module):
        def forward(self, p_weight: "f32[3, 4]", p_bias: "f32[3]", x: "f32[2, 4]"):
            # File: model.py:12 in forward, code: return self.fc(x)
            linear: "f32[2, 3]" = torch.ops.aten.linear.default(x, p_weight, p_bias)
            return (linear,)

Here the same text is produced from the node list, and ``forward`` runs the graph with the
small interpreter of ``graph.py`` (no code is generated or executed).

Differences from PyTorch: the generated lines do not end with FX's ``;  x = None`` clean-up of
dead values; the ``# File:`` line is the first frame in the user's
code (PyTorch shows the innermost frame, often a line inside ``torch/nn/modules``) and falls
back to the library layer's line for models built only from library layers.
"""

from __future__ import annotations

import builtins
import keyword
import operator

from minitorch_nn.export.graph import Graph, format_arg, format_val, run_graph
from minitorch_nn.nn.modules.module import Module


def _call_text(n, rename) -> str:
    if n.target is operator.getitem:  # FX writes an element read as indexing
        return f"{format_arg(n.args[0], rename=rename)}[{format_arg(n.args[1])}]"
    args = [format_arg(a, rename=rename) for a in n.args]
    args += [f"{k} = {format_arg(v, rename=rename)}" for k, v in n.kwargs.items()]
    return f"torch.ops.{n.target}({', '.join(args)})"


def _renames(graph: Graph) -> dict:
    """Inputs named like a Python builtin (``input``) get a ``_1`` name inside the body, as in FX."""
    taken = {n.name for n in graph.nodes}
    out = {}
    for n in graph.placeholders:
        if keyword.iskeyword(n.name) or hasattr(builtins, n.name):
            i = 1
            while f"{n.name}_{i}" in taken:
                i += 1
            out[n.name] = f"{n.name}_{i}"
            taken.add(out[n.name])
    return out


def _file_comment(stack) -> str:
    if not stack:
        return "# No stacktrace found for following nodes"
    return f"# File: {stack['path']}:{stack['line']} in {stack['function']}, code: {stack.get('code', '')}".rstrip()


def _body(graph: Graph, annotate: bool) -> list[str]:
    """The lines of ``forward``'s body, indented by four spaces."""
    rename = _renames(graph)
    lines = [f"    {new} = {old}" for old, new in rename.items()]
    if lines and annotate:
        lines.append("")
    last = None
    for n in graph.calls:
        if annotate:
            comment = _file_comment(n.meta.get("stack"))
            if comment != last:
                if last is not None:
                    lines.append("")
                lines.append(f"    {comment}")
                last = comment
        val = n.meta.get("val")
        # as PyTorch, a value that is one tensor is annotated; a tuple of them is not
        hint = f': "{format_val(val)}"' if annotate and val is not None and not isinstance(val, list) else ""
        lines.append(f"    {n.name}{hint} = {_call_text(n, rename)}")
    lines.append(f"    return {format_arg(graph.outputs, rename=rename)}")
    return lines


def code(graph: Graph) -> str:
    """``GraphModule.code``: the graph as the Python source of a ``forward``."""
    params = ", ".join(["self"] + [n.name for n in graph.placeholders])
    return "\n\n\n" + f"def forward({params}):\n" + "\n".join(_body(graph, annotate=False)) + "\n    "


def readable(graph: Graph) -> str:
    """``GraphModule.print_readable()``: the code with shapes and source lines."""
    params = ", ".join(["self"] + [f'{n.name}: "{format_val(n.meta.get("val"))}"' for n in graph.placeholders])
    lines = ["class GraphModule(torch.nn.Module):", f"    def forward({params}):"]
    lines += ["    " + line if line else "" for line in _body(graph, annotate=True)]
    return "\n".join(lines) + "\n"


class GraphModule(Module):
    """The module holding an exported graph: ``forward(*every_graph_input)`` -> tuple of outputs."""

    def __init__(self, graph: Graph):
        super().__init__()
        self.graph = graph

    @property
    def code(self) -> str:
        return code(self.graph)

    def forward(self, *inputs):
        _, leaves = run_graph(self.graph, list(inputs))
        return tuple(leaves)

    def print_readable(self, print_output: bool = True) -> str:
        text = readable(self.graph)
        if print_output:
            print(text)
        return text

    def _get_name(self):
        return "GraphModule"

    def __str__(self):
        # as PyTorch: the module's repr, then its code
        return f"{self!r}\n{self.code}\n# To see more debug info, please use `graph_module.print_readable()`"
