"""Activation checkpointing: trade compute for memory (mirrors ``torch/utils/checkpoint.py``).

``checkpoint(fn, *args, use_reentrant=False)`` runs ``fn`` without keeping the tensors autograd
would normally save for backward, and runs ``fn`` again during backward to get them back.

How the non-reentrant variant works (``use_reentrant=False``, the one PyTorch recommends):

1. the forward runs under ``saved_tensors_hooks``: every tensor autograd wants to save is replaced
   by a small *handle* (its position in saving order) and its metadata; the tensor itself is not
   kept;
2. the first time backward unpacks a handle, ``fn`` is run again on the same inputs (with grad
   mode on and the random state of the original forward, so dropout draws the same mask), and the
   tensors it saves are collected in the same order;
3. each handle returns the recomputed tensor at its position. Recomputation checks that the same
   number of tensors with the same shape, dtype and device came out (``determinism_check``), and
   raises ``CheckpointError`` otherwise.

The reentrant variant (``use_reentrant=True``, PyTorch's default when the argument is left out,
with its warning) is an ``autograd.Function`` that runs ``fn`` under ``no_grad`` and, in its
backward, runs it again with grad and backpropagates through that inner graph.

Differences from PyTorch: no ``context_fn`` selective checkpointing, no ``early_stop`` (the whole
function is recomputed), no debug mode; ``checkpoint_sequential`` is provided.
"""

from __future__ import annotations

import minitorch_nn as _t
from minitorch_nn._warnings import warn_user
from minitorch_nn.autograd.function import Function
from minitorch_nn.autograd.graph import saved_tensors_hooks

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError"]


class CheckpointError(RuntimeError):
    """Recomputation in backward did not reproduce the forward (a different number or kind of
    saved tensors)."""


def noop_context_fn():
    import contextlib

    return contextlib.nullcontext(), contextlib.nullcontext()


def _metadata(x):
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device}


class _Handle:
    """What the forward stores instead of a saved tensor: its position in saving order."""

    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index


class _Recomputation:
    """The state shared by one checkpointed call's forward and its recomputations."""

    def __init__(self, function, args, kwargs, preserve_rng_state, determinism_check):
        self.function, self.args, self.kwargs = function, args, kwargs
        self.rng_state = _t.get_rng_state() if preserve_rng_state else None
        self.check = determinism_check != "none"
        self.forward_metadata = []
        self.recomputed = {}

    # the forward: keep metadata, hand out handles
    def pack_forward(self, tensor):
        self.forward_metadata.append(_metadata(tensor))
        return _Handle(len(self.forward_metadata) - 1)

    def unpack_forward(self, handle):
        if handle.index not in self.recomputed:
            self._recompute()
        return self.recomputed.pop(handle.index)

    # backward: run the function again and collect what it saves
    def _recompute(self):
        saved = []

        def pack(tensor):
            saved.append(tensor.detach())
            return None

        def unpack(_):
            raise CheckpointError("torch.utils.checkpoint: unpacking during recomputation is not supported")

        with _t.random.fork_rng(enabled=self.rng_state is not None):
            if self.rng_state is not None:
                _t.set_rng_state(self.rng_state)
            with _t.enable_grad(), saved_tensors_hooks(pack, unpack):
                self.function(*self.args, **self.kwargs)
        if self.check:
            self._check(saved)
        self.recomputed = dict(enumerate(saved))

    def _check(self, saved):
        tip = ("\nTip: a checkpointed function must do the same thing when it runs again in backward "
               "(same ops, same shapes); or pass determinism_check='none'.")
        if len(saved) != len(self.forward_metadata):
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the original "
                "forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.forward_metadata)}\n"
                f"Number of tensors saved during recomputation: {len(saved)}.\n" + tip
            )
        mismatched = ""
        for idx, (meta, tensor) in enumerate(zip(self.forward_metadata, saved)):
            if meta != _metadata(tensor):
                mismatched += (f"tensor at position {idx}:\nsaved metadata: {meta}\n"
                               f"recomputed metadata: {_metadata(tensor)}\n")
        if mismatched:
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors have different "
                f"metadata than during the forward pass.\n{mismatched}.\n" + tip
            )


class CheckpointFunction(Function):
    """The reentrant variant: forward without grad, recompute and backpropagate inside backward."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function = run_function
        ctx.rng_state = _t.get_rng_state() if preserve_rng_state else None
        ctx.inputs = list(args)
        tensor_positions = [i for i, a in enumerate(args) if isinstance(a, _t.Tensor)]
        ctx.tensor_positions = tensor_positions
        ctx.save_for_backward(*[args[i] for i in tensor_positions])
        with _t.no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grad_outputs):
        inputs = list(ctx.inputs)
        for i, saved in zip(ctx.tensor_positions, ctx.saved_tensors):
            detached = saved.detach()
            detached.requires_grad_(saved.requires_grad)
            inputs[i] = detached
        with _t.random.fork_rng(enabled=ctx.rng_state is not None):
            if ctx.rng_state is not None:
                _t.set_rng_state(ctx.rng_state)
            with _t.enable_grad():
                outputs = ctx.run_function(*inputs)
        if isinstance(outputs, _t.Tensor):
            outputs = (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grad_outputs)
                 if isinstance(o, _t.Tensor) and o.requires_grad and g is not None]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        _t.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        grads = tuple(inp.grad if isinstance(inp, _t.Tensor) else None for inp in inputs)
        return (None, None) + grads


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn, determinism_check="default",
               debug=False, early_stop=True, **kwargs):
    """Run ``function(*args, **kwargs)`` without storing its activations; recompute them in backward.

    Example::

        >>> import minitorch_nn as torch
        >>> lin = torch.nn.Linear(4, 4)
        >>> x = torch.randn(2, 4, requires_grad=True)
        >>> y = checkpoint(lambda x: lin(x).relu().sum(), x, use_reentrant=False)
        >>> y.backward()
    """
    if use_reentrant is None:
        warn_user(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting "
            "in PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. "
            "use_reentrant=False is recommended, but if you need to preserve the current default "
            "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
            "differences between the two variants.",
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        if _t.is_grad_enabled() and not any(isinstance(a, _t.Tensor) and a.requires_grad for a in args):
            warn_user("None of the inputs have requires_grad=True. Gradients will be None")
        return CheckpointFunction.apply(function, preserve, *args)
    if context_fn is not noop_context_fn:
        raise NotImplementedError("checkpoint: context_fn (selective checkpointing) is not supported in minitorch_nn")
    if determinism_check not in ("default", "none"):
        raise ValueError(
            f"determinism_check should be one of ['default', 'none'], but got {determinism_check}"
        )
    state = _Recomputation(function, args, kwargs, preserve, determinism_check)
    with saved_tensors_hooks(state.pack_forward, state.unpack_forward):
        return function(*args, **kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Checkpoint a ``Sequential`` (or list of modules) in ``segments`` chunks; the last runs normally."""
    if use_reentrant is None:
        warn_user(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
            "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
            "use_reentrant=False is recommended, but if you need to preserve the current default "
            "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
            "differences between the two variants.",
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start, end, functions):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x

        return forward

    if isinstance(functions, _t.nn.Sequential):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)
