"""``minitorch_nn.export``: trace a module into a graph you can read, run, save and re-weight
(mirrors ``torch/export/__init__.py``).

    >>> import minitorch_nn as torch
    >>> ep = torch.export.export(model, (torch.randn(2, 4),))
    >>> print(ep.graph)                      # one line per aten op, with the model's source line
    >>> ep.module()(x)                       # a module that replays the graph
    >>> ep.swap_weights(new_weights)         # new weights, same program (runtime names)
    >>> torch.export.save(ep, "model.mtep"); ep2 = torch.export.load("model.mtep")

What is here: :func:`export`, :class:`ExportedProgram`, :class:`ExportGraphSignature` and its
spec records, :func:`save` / :func:`load` (``serialize.py``) and, for learners,
:func:`describe_state` (``describe.py``). What PyTorch has and this does not: dynamic shapes
(``Dim``), ``strict=True`` tracing through TorchDynamo, ``unflatten``, ``run_decompositions``,
``draft_export``, ``torch.cond`` and other control-flow operators.
"""

from __future__ import annotations

from minitorch_nn.export._trace import GuardOnDataDependentSymNode
from minitorch_nn.export.describe import describe_state
from minitorch_nn.export.exported_program import (
    ExportedProgram,
    ExportGraphSignature,
    InputKind,
    InputSpec,
    OutputKind,
    OutputSpec,
    TensorArgument,
)
from minitorch_nn.export.graph import Graph, Node
from minitorch_nn.export.serialize import load, save

__all__ = [
    "export", "save", "load", "ExportedProgram", "ExportGraphSignature", "InputKind", "InputSpec",
    "OutputKind", "OutputSpec", "TensorArgument", "Graph", "Node", "describe_state",
    "GuardOnDataDependentSymNode",
]


def export(mod, args, kwargs=None, *, dynamic_shapes=None, strict=False, preserve_module_call_signature=()):
    """Trace ``mod(*args, **kwargs)`` once and return an :class:`ExportedProgram`.

    ``args`` must be a tuple (as in PyTorch). Tensors may be real or on the meta device (then
    only shapes are computed). Every shape is fixed at export time.
    """
    from minitorch_nn.export._trace import trace
    from minitorch_nn.nn.modules.module import Module

    if not isinstance(mod, Module):
        raise ValueError(f"Expected `mod` to be an instance of `torch.nn.Module`, got {type(mod)}.")
    if not isinstance(args, tuple):
        raise ValueError(f"Expecting `args` to be a tuple of example positional inputs, got {type(args)}")
    if kwargs is not None and not isinstance(kwargs, dict):
        raise ValueError(f"Expecting `kwargs` to be a dict of example keyword inputs, got {type(kwargs)}")
    if dynamic_shapes is not None:
        raise NotImplementedError("minitorch_nn.export supports static shapes only (dynamic_shapes=None)")
    if strict:
        raise NotImplementedError("minitorch_nn.export has no strict (TorchDynamo) mode; use strict=False")
    graph, signature, state_dict, constants, forward_params = trace(mod, args, kwargs or {})
    return ExportedProgram(graph, signature, state_dict, constants, forward_params, type(mod).__name__)
