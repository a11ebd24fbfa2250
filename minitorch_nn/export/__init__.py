"""``minitorch_nn.export``: trace a module into a graph you can read, run, save and re-weight
(mirrors ``torch/export/__init__.py``).

    >>> import minitorch_nn as torch
    >>> ep = torch.export.export(model, (torch.randn(2, 4),))
    >>> print(ep.graph)                      # FX's form: one line per aten op (aten.linear, aten.conv2d...)
    >>> ep.graph_module.print_readable()     # the graph as code, with shapes and the model's source lines
    >>> ep.module()(x)                       # a module that replays the graph
    >>> ep.swap_weights(new_weights)         # new weights, same program (runtime names)
    >>> torch.export.save(ep, "model.mtep"); ep2 = torch.export.load("model.mtep")

What is here: :func:`export`, :class:`ExportedProgram`, :class:`ExportGraphSignature` and its
spec records, :func:`save` / :func:`load` (``serialize.py``) and, for learners,
:func:`describe_state` (``describe.py``). What PyTorch has and this does not: dynamic shapes
(``Dim``), ``strict=True`` tracing through TorchDynamo, ``unflatten``, ``run_decompositions``,
``draft_export``, ``torch.cond`` and other control-flow operators.

How close the graph is to PyTorch's (checked in ``tests/oracle/test_export_graph_oracle.py``):
node names, targets, argument lists and order, the placeholders (with their name as ``target``)
and the graph signature match for models made of ``Linear``, ``Conv1d/2d/3d``,
``ConvTranspose1d/2d``, ``BatchNorm``, ``LayerNorm``, ``GroupNorm``, ``InstanceNorm``,
``Dropout``, the activations, ``Flatten``, ``Softmax``/``LogSoftmax``, ``MaxPool2d``,
``AdaptiveAvgPool2d``, ``CrossEntropyLoss``, ``F.pad``, ``torch.where`` with a number, and
``matmul``/``reshape``/``chunk``/``expand_as``/``view_as``/``type_as`` (the composite ops
PyTorch keeps are recorded whole, see ``composites.py``), and ops returning several tensors (``max``, ``sort``, ``split``...) with
their ``getitem`` nodes; ``print(ep.graph)`` is FX's text and ``print(ep)`` PyTorch's layout.

What still differs:

* other composite ops are recorded as the ops they decompose into: ``x.T`` is
  ``aten.permute`` (``aten.numpy_T``), ``x.to(dtype)`` is ``aten._to_copy`` (PyTorch records
  ``_assert_tensor_metadata`` and ``aten.to.dtype``), ``F.mse_loss`` on broadcast shapes shows
  ``expand`` nodes (PyTorch: ``broadcast_tensors`` and ``getitem``);
* some nodes carry other arguments, because minitorch_nn's functions call the op differently:
  ``F.hardtanh``/``F.elu`` leave their default scalars out (PyTorch writes ``-1.0, 1.0`` /
  ``1.0``), ``avg_pool2d`` keeps ``[], [0, 0]`` (the dispatcher does not see that ``[0, 0]`` is
  the ``int[2]`` default ``0``);
* the generated code has no ``x = None`` clean-ups, and the ``# File:`` comments point at the
  user's line rather than the innermost library frame;
* the ``Range constraints`` are always empty (static shapes).
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
from minitorch_nn.export.graph_module import GraphModule
from minitorch_nn.export.serialize import load, save

__all__ = [
    "export", "save", "load", "ExportedProgram", "ExportGraphSignature", "InputKind", "InputSpec",
    "OutputKind", "OutputSpec", "TensorArgument", "Graph", "Node", "GraphModule", "describe_state",
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
