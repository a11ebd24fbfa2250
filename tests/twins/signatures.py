"""What the twin tests compare: the observable signature of an op's result and of its backward.

Shared by ``tests/twins/harness.py`` and ``tests/test_fast_record.py`` (kept apart from both so
that neither has to import the other), and ``recorder_reference_path``, the readable recorder.
"""

from __future__ import annotations

import contextlib

import numpy as np

import minitorch_nn as mt
from minitorch_nn import _dispatch
from minitorch_nn.autograd import recording
from minitorch_nn.autograd.graph import AccumulateGrad, SavedScalar, SavedTensor


@contextlib.contextmanager
def recorder_reference_path():
    """The readable Python autograd layer in the dispatcher (the caller picks the dispatch path)."""
    compiled = _dispatch.autograd_layer
    _dispatch.autograd_layer = recording.autograd_layer
    try:
        yield
    finally:
        _dispatch.autograd_layer = compiled


def _label(impl, tensors, out):
    """Which tensor of the case a payload is: an input's index, "out", an alias of the output."""
    for i, t in enumerate(tensors):
        if impl is t._impl:
            return i
    if out is not None and impl is out._impl:
        return "out"
    if out is not None and impl.storage is out._impl.storage:
        return "alias of out"
    return "other"


def _saved_signature(v, tensors, out):
    if isinstance(v, SavedScalar):
        return ("scalar", type(v.value).__name__, repr(v.value), v.released)
    if isinstance(v, SavedTensor):
        return ("tensor", v.version, v.is_output, v.output_nr, v.released,
                None if v.impl is None else _label(v.impl, tensors, out))
    return ("value", repr(v))


def _node_signature(node, tensors, out):
    if node is None:
        return None
    if isinstance(node, AccumulateGrad):
        return ("AccumulateGrad", node.name(), _label(node._impl, tensors, out), node._sequence_nr())
    edges = []
    for fn, nr in node.next_functions:
        if isinstance(fn, AccumulateGrad) or fn is None:
            edges.append((_node_signature(fn, tensors, out), nr))
        else:  # a node made by the case's setup: the same object as that input's grad_fn
            edges.append((fn.name(), nr, [i for i, t in enumerate(tensors) if t.grad_fn is fn]))
    saved = getattr(node, "_saved", {})
    return (
        type(node).__name__, type(node).__module__, node.name(), tuple(edges), node._input_metadata,
        tuple(sorted((k, _saved_signature(v, tensors, out)) for k, v in saved.items())),
        getattr(node, "_needs", None), getattr(node, "_output_meta", None),
    )


def _result_signature(out, tensors, before_seq):
    """Everything observable about ``out`` and its node, with inputs named by position."""
    node = out.grad_fn
    meta = out._impl.autograd_meta
    return (
        out.requires_grad, out.is_leaf, out.output_nr, out.dtype, tuple(out.shape), out.stride(),
        np.asarray(out.detach()._array).tobytes(),
        None if out._base is None else _label(out._base._impl, tensors, None),
        sorted(meta) if meta else meta,
        None if node is None else node._sequence_nr() - before_seq,
        _node_signature(node, tensors, out),
        [t._use_count() for t in tensors],
        [sorted(t._impl.autograd_meta or ()) for t in tensors],
    )


def _backward_outcome(out, tensors, modify):
    """Gradients after backward through ``out`` (with a hook and retain_grad), or the error."""
    seen = []
    if out.requires_grad:
        out.retain_grad()
        out.register_hook(lambda g: seen.append(np.asarray(g._array).tobytes()))
    if modify is not None:
        with mt.no_grad():
            tensors[modify].add_(1)  # a saved input modified in place: the version check fails
    try:
        out.backward(mt.ones_like(out))
    except RuntimeError as e:
        return ("error", str(e))
    grads = [None if t._impl.grad is None else np.asarray(t._impl.grad._array).tobytes() for t in tensors]
    return ("ok", grads, seen, None if out.grad is None else np.asarray(out.grad._array).tobytes(),
            [t._use_count() for t in tensors])
