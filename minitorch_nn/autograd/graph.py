"""The autograd graph: nodes, edges, saved tensors and the leaves' ``AccumulateGrad``.

Mirrors ``torch/csrc/autograd/function.h`` (``Node``), ``saved_variable.cpp`` (``SavedVariable``),
``functions/accumulate_grad.cpp`` and the Python view ``torch.autograd.graph``.

The picture to keep in mind: every tensor produced by a recorded op points at the node that made
it (``t.grad_fn``, with ``t.output_nr`` saying which output of that node it is). A node points
back at the nodes that made its inputs through ``next_functions``, a tuple of *edges*
``(node, input_nr)``; an input that needs no gradient is the edge ``(None, 0)``. A leaf tensor
that requires grad has no ``grad_fn``; its edge leads to an ``AccumulateGrad`` node, which adds the
incoming gradient into ``leaf.grad``::

    x (leaf) --> AccumulateGrad <-- MulBackward0 <-- SumBackward0 <-- loss.grad_fn
                                     (next_functions)  (next_functions)

``loss.backward()`` walks these edges from ``loss.grad_fn`` (see ``engine.py``).

Every node gets a *sequence number* when it is made (``node._sequence_nr()``), one more than the
node made before it; the engine runs later nodes first (see ``ready_queue.py``). ``AccumulateGrad``
nodes get the largest number there is, as in PyTorch.

Where we differ from PyTorch: nodes are Python objects; a node class per op is made on demand
(``node_class("MulBackward0")``) instead of being generated C++. Like PyTorch's C++ nodes they have
no ``__dict__`` (``grad_fn.foo = 1`` is an ``AttributeError``). Their fields, and those of
``AccumulateGrad``, ``SavedTensor`` and ``SavedScalar``, are laid out in C by small Cython base
classes (``NodeBase``... in ``_ext/twins/autograd/recording.pyx``) so that the compiled recorder can fill them
without running the ``__init__`` methods below; every method stays here, in Python.

What a ``TorchDispatchMode`` or a ``__torch_dispatch__`` subclass sees of saved tensors is what it
sees in PyTorch: saving a node's own output (``exp``'s ``result``) dispatches ``aten.detach`` on it
(not with saved-tensor hooks), and so does every unpack of one (``ctx.saved_tensors``,
``grad_fn._saved_result``, a formula reading it in backward). When nothing of the kind is active
the output is aliased without an op, which costs less. One difference is left: ``AccumulateGrad``'s
strided copy starts from ``aten.empty_strided`` where PyTorch uses ``aten.new_empty_strided``.
"""

from __future__ import annotations

import contextlib
import re
import sys
import weakref

from minitorch_nn import _C, _dispatch
from minitorch_nn._C import TensorBase, TensorImpl
from minitorch_nn._C_torch_function import DisableTorchFunction
from minitorch_nn._C_torch_function import state as _tf_state
from minitorch_nn._twins.autograd import recording as _recording_twin
from minitorch_nn._twins.autograd.recording import (
    AccumulateGradBase,
    NodeBase,
    SavedScalarBase,
    SavedTensorBase,
)
from minitorch_nn.autograd import grad_mode as _gm
from minitorch_nn.backends import compiled as _compiled_switch

# ---------------------------------------------------------------------------------------------
# Hook handles
# ---------------------------------------------------------------------------------------------


class RemovableHandle:
    """Returned by every ``register_*hook``; ``handle.remove()`` unregisters the hook."""

    _next_id = 0

    def __init__(self, hooks_dict):
        self.hooks_dict_ref = weakref.ref(hooks_dict) if hasattr(hooks_dict, "__weakref__") else (lambda: hooks_dict)
        self.id = RemovableHandle._next_id
        RemovableHandle._next_id += 1

    def remove(self):
        hooks = self.hooks_dict_ref()
        if hooks is not None:
            hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class _HookDict(dict):
    """A dict that weakrefs can point at (plain dicts cannot)."""

    __slots__ = ("__weakref__",)


def _add_hook(hooks, fn):
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


class _CheckedNodeHook:
    """A node hook (``grad_fn.register_hook`` / ``register_prehook``) with PyTorch's checks on
    what it returns. The hook receives the gradients as a tuple and may hand back a new tuple of
    the same length; a list, a wrong length, a non-tensor or a tensor of another dtype or size
    is refused with PyTorch's error instead of corrupting the gradients further on. The checks
    wrap the hook when it is registered, so every engine loop (and its compiled twin) gets them.
    """

    __slots__ = ("fn",)

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, *args):
        new = self.fn(*args)
        if new is not None and new is not args[0]:
            _check_node_hook_result(self.fn, args[0], new)
        return new


def _hook_name(hook) -> str:
    return getattr(hook, "__name__", "<unknown>")


def _check_node_hook_result(hook, previous, new):
    """``new`` replaces the gradients ``previous``: a tuple, one entry per gradient, each None or
    a tensor like the one it replaces (``check_result`` in PyTorch's ``python_hook.cpp``)."""
    if not isinstance(new, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(new).__name__}'")
    if len(new) != len(previous):
        raise RuntimeError(
            f"hook '{_hook_name(hook)}' has returned an incorrect number of values "
            f"(got {len(new)}, but expected {len(previous)})"
        )
    from minitorch_nn.autograd.engine import _check_hook_result

    for old, value in zip(previous, new):
        if value is None:
            continue
        if old is None:
            raise RuntimeError("can't replace a None gradient with a non-None value")
        _check_hook_result(hook, old, value)


# ---------------------------------------------------------------------------------------------
# Node
# ---------------------------------------------------------------------------------------------


# Sequence numbers: one counter for the whole process (PyTorch keeps one per thread), kept in C
# so that the compiled recorder and Node.__init__ take numbers from the same counter.
_next_sequence_nr = _recording_twin.next_sequence_nr
# AccumulateGrad's number: UINT64_MAX in PyTorch, so leaves are written as soon as they can be.
MAX_SEQUENCE_NR = 2**64 - 1


class Node(NodeBase):
    """One step of the backward pass (``torch.autograd.graph.Node``).

    ``apply(grad_outputs)`` takes one gradient per output of the forward op and returns one
    gradient per edge in ``next_functions`` (``None`` where there is nothing to send).

    Its fields (in C: ``NodeBase``, see the module docstring; a node can be weakly referenced):

    * ``next_functions``: one edge ``(node, input_nr)`` per input;
    * ``_input_metadata``: for each edge, (sizes, dtype, device) of the input the gradient goes
      to, so the engine can sum a broadcast gradient back to the input's shape and cast it;
    * ``_seq_nr``: the engine runs ready nodes with the highest number first;
    * ``_pre_hooks``: fn(grad_outputs) -> new grad_outputs or None;
    * ``_post_hooks``: fn(grad_inputs, grad_outputs) -> new grad_inputs or None;
    * ``_tensor_pre_hooks``: output_nr -> hooks registered with ``Tensor.register_hook``;
    * ``_retains_grad``: output_nr -> TensorImpl whose .grad to fill (``Tensor.retain_grad``);
    * ``_metadata``: the dict behind ``metadata``.
    """

    __slots__ = ()

    def __init__(self):
        self._seq_nr = _next_sequence_nr()
        self.next_functions = ()
        self._input_metadata = ()
        self._pre_hooks = self._post_hooks = self._tensor_pre_hooks = self._retains_grad = None
        self._metadata = None

    def _sequence_nr(self) -> int:
        """The order this node was made in; the engine runs higher numbers first."""
        return self._seq_nr

    @property
    def metadata(self):
        """A dict for your own notes about this node (made on first use)."""
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    # -- identity --------------------------------------------------------------------------
    def name(self) -> str:
        return type(self).__name__

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    # -- the work --------------------------------------------------------------------------
    def apply(self, grad_outputs):
        raise NotImplementedError

    def __call__(self, *grad_outputs):
        return self.apply(grad_outputs)

    def release_variables(self):
        """Free saved tensors after a backward without ``retain_graph``."""

    # -- hooks ---------------------------------------------------------------------------------
    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` runs after this node; it may return new grad_inputs."""
        if self._post_hooks is None:
            self._post_hooks = _HookDict()
        return _add_hook(self._post_hooks, _CheckedNodeHook(fn))

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` runs before this node; it may return new grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = _HookDict()
        return _add_hook(self._pre_hooks, _CheckedNodeHook(fn))

    def _register_tensor_hook(self, output_nr, fn):
        if self._tensor_pre_hooks is None:
            self._tensor_pre_hooks = {}
        hooks = self._tensor_pre_hooks.setdefault(output_nr, _HookDict())
        return _add_hook(hooks, fn)

    @property
    def requires_grad(self):
        return any(fn is not None for fn, _ in self.next_functions)


# The nodes a running backward pass needs gradients for (None: all of them). Set by the engine
# when ``inputs`` are given; a node skips formulas whose gradient goes nowhere else.
should_compute = [None]

_node_classes: dict = {}


def node_class(name: str) -> type:
    """The node class called ``name`` (``MulBackward0``...), made once and cached."""
    cls = _node_classes.get(name)
    if cls is None:
        from minitorch_nn.autograd.recording import OpNode

        # A few of PyTorch's nodes are hand-written C++ classes whose name() carries the
        # namespace ("torch::autograd::CopyBackwards"); the class is named by the last part.
        short = name.rsplit("::", 1)[-1]
        attrs = {"__module__": "minitorch_nn.autograd.graph", "__slots__": ()}
        if short != name:
            attrs["name"] = lambda self: name
        cls = _node_classes[name] = type(short, (OpNode,), attrs)
    return cls


# ---------------------------------------------------------------------------------------------
# Saved tensors
# ---------------------------------------------------------------------------------------------

_FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they "
    "have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)


def _type_name(impl) -> str:
    from minitorch_nn._tensor import _LEGACY_TYPE_NAMES

    return _LEGACY_TYPE_NAMES.get(impl.dtype, "torch.Tensor")


def _short_name(node) -> str:
    # PyTorch's message names the producing op without the "Backward0" suffix: "output 0 of Mul".
    return re.sub(r"Backward\d*$", "", node.name().rsplit("::", 1)[-1])


# minitorch_nn.Tensor, read on first use: _tensor.py is imported after this module. A global
# and not a local ``from ... import`` because that import costs about a microsecond per unpack.
_Tensor = None


def _load_tensor_class():
    global _Tensor
    from minitorch_nn._tensor import Tensor

    _Tensor = Tensor
    return Tensor


def tensor_for(impl):
    """The Python tensor that owns ``impl`` (the same object when it is alive), else a new handle.

    Uses ``TensorBase._base``, which knows how to find a payload's owning handle.
    """
    Tensor = _Tensor or _load_tensor_class()
    probe = TensorImpl(None, (), (), 0, impl.dtype, impl.device, impl.version)
    probe.base = impl
    return _C._wrap(Tensor, probe)._base


def _alias(impl):
    """A new payload reading the same storage with the same version counter, no autograd state."""
    return TensorImpl(impl.storage, impl.sizes, impl.strides, impl.offset, impl.dtype, impl.device, impl.version)


_saved_tensors_hooks_stack: list = []   # (pack_hook, unpack_hook) pairs, innermost last


def _python_sees(t) -> bool:
    """Whether an op on ``t`` would reach Python now: a dispatch mode is active or ``t``'s class
    has its own ``__torch_dispatch__``. (Checked only once ``_dispatch.python_layer`` is set.)"""
    from minitorch_nn._dispatch import python_dispatch as pd

    return not pd._excluded[0] and (bool(pd._modes) or type(t) in pd._classes)


_saving_output = [0]   # > 0 while the detach below runs (the export tracer leaves it out of graphs)


def _detach_saved_output(t):
    """``aten.detach(t)`` as PyTorch's ``SavedVariable`` makes it for an output it saves or
    unpacks: a dispatched op, so modes and ``__torch_dispatch__`` subclasses see it."""
    from minitorch_nn._ops import aten

    _saving_output[0] += 1
    try:
        return aten.detach.default(t)
    finally:
        _saving_output[0] -= 1


def saving_output_for_backward() -> bool:
    """True while autograd dispatches the ``aten.detach`` of an output it saves or unpacks
    (for tracers that record the user's ops, not autograd's bookkeeping)."""
    return _saving_output[0] > 0


class saved_tensors_hooks:
    """Context manager: tensors saved for backward inside it are stored as ``pack_hook(tensor)``
    and turned back with ``unpack_hook(packed)`` when backward needs them
    (``torch.autograd.graph.saved_tensors_hooks``). With hooks, no version check is made."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        _saved_tensors_hooks_stack.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        _saved_tensors_hooks_stack.pop()


class save_on_cpu(saved_tensors_hooks):
    """Keep saved tensors on the cpu until backward needs them (a no-op for cpu tensors)."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack(t):
            return (t.device, t.cpu())

        def unpack(packed):
            device, t = packed
            return t.to(device)

        super().__init__(pack, unpack)


_INFERENCE_SAVE_MESSAGE = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode in "
    "computation tracked by autograd. To work around this, you can make a clone to get a normal tensor and use it "
    "in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`."
)


class SavedTensor(SavedTensorBase):
    """A tensor kept for backward, with the version it had when saved (``SavedVariable``).

    An input is saved as its payload itself, so it counts in ``t._use_count()`` exactly as
    PyTorch's saved variables do. An output of the node is saved as a bare alias of its data
    (no ``grad_fn``), because the output points at the node and the node must not point back.
    When a dispatch mode or the output's ``__torch_dispatch__`` would see it, the output is also
    detached through the dispatcher, as PyTorch does, and that tensor (a subclass keeps its
    class) is kept in ``packed``; unpacking detaches it again.

    Fields (in C: ``SavedTensorBase``): ``impl``, ``version``, ``is_output``, ``output_nr``,
    ``released``, ``packed`` (with saved-tensor hooks, or the detached output) and ``unpack_hook``.
    """

    __slots__ = ()

    def __init__(self, tensor, is_output=False):
        impl = tensor._impl
        if _gm.is_inference_counter(impl.version):
            raise RuntimeError(_INFERENCE_SAVE_MESSAGE)
        self.version = impl.version.value
        self.is_output = is_output
        self.output_nr = impl.output_nr
        self.released = False
        self.unpack_hook = None
        if _saved_tensors_hooks_stack:
            pack, self.unpack_hook = _saved_tensors_hooks_stack[-1]
            self.packed = pack(tensor)
            self.impl = None
            return
        self.impl = _alias(impl) if is_output else impl
        if is_output and _dispatch.python_layer is not None and impl.grad_fn is not None and _python_sees(tensor):
            # (an output with no history, such as max's indices, is kept as it is, as in PyTorch)
            self.packed = _detach_saved_output(tensor)

    def unpack(self, node=None, detached=False):
        """The saved tensor, after checking it was not modified in place since it was saved.

        With ``detached``, a plain tensor aliasing the data, with no history: what a formula
        needs when backward runs with grad mode off (it then takes the fast paths for tensors
        that do not require grad)."""
        if self.released:
            raise RuntimeError(_FREED_MESSAGE)
        if self.unpack_hook is not None:
            return self._unpack_with_hook(node)
        impl = self.impl
        if impl.version.value != self.version:
            # (an input that is a view gets its node brought up to date first, as PyTorch's message does)
            grad_fn = node if self.is_output else current_grad_fn(impl)
            where = f", which is output {self.output_nr} of {_short_name(grad_fn)}," if grad_fn is not None else ""
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an inplace "
                f"operation: [{_type_name(impl)} {list(impl.sizes)}]{where} is at version {impl.version.value}; "
                f"expected version {self.version} instead. Hint: enable anomaly detection to find the "
                "operation that failed to compute its gradient, with "
                "torch.autograd.set_detect_anomaly(True, check_nan=False)."
            )
        if detached:
            Tensor = _Tensor or _load_tensor_class()
            return _C._wrap(Tensor, _alias(impl))
        if not self.is_output:
            return tensor_for(impl)
        # An output comes back with its grad_fn, so a double backward can go through it.
        Tensor = _Tensor or _load_tensor_class()
        if _dispatch.python_layer is not None and (impl.dtype.is_floating_point or impl.dtype.is_complex):
            kept = self.packed if self.packed is not None else _C._wrap(Tensor, _alias(impl))
            if _python_sees(kept):
                return self._output_with_history(_detach_saved_output(kept), node)
        out = _alias(impl)
        out.requires_grad = True
        out.grad_fn = node
        out.output_nr = self.output_nr
        return _C._wrap(Tensor, out)

    def _unpack_with_hook(self, node):
        t = self.unpack_hook(self.packed)
        if not self.is_output:
            return t
        if _dispatch.python_layer is not None and isinstance(t, TensorBase) and _python_sees(t) \
                and (t.dtype.is_floating_point or t.dtype.is_complex):
            return self._output_with_history(_detach_saved_output(t), node)
        Tensor = _Tensor or _load_tensor_class()
        out = _alias(t._impl)
        out.requires_grad, out.grad_fn, out.output_nr = True, node, self.output_nr
        return _C._wrap(Tensor, out)

    def _output_with_history(self, t, node):
        """``t``, a fresh detach of the saved output, given the output's place in the graph."""
        if t is self.packed:   # a handler that handed back its argument: do not touch what is kept
            t = _C._wrap(_Tensor or _load_tensor_class(), _alias(t._impl))
        impl = t._impl
        impl.requires_grad, impl.grad_fn, impl.output_nr = True, node, self.output_nr
        return t

    def register_hooks(self, pack_hook, unpack_hook):
        """PyTorch's ``grad_fn._raw_saved_<name>.register_hooks(pack_hook, unpack_hook)``: hand
        the saved tensor to ``pack_hook`` now and keep what it returns; whenever the value is
        unpacked (``grad_fn._saved_<name>``, backward) ``unpack_hook`` gets it back, with no
        version check. One pair of hooks per saved tensor."""
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("register_hooks(): incompatible function arguments: pack_hook and unpack_hook must "
                            "be callables")
        if self.released:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate values of "
                "the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if "
                "you need to backward through the graph a second time or if you need to access saved variables "
                "after calling backward.")
        if self.unpack_hook is not None:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already been set. "
                               "Hint: only one pair of hooks is allowed at a time.")
        if self.impl is None:
            raise RuntimeError("Calling register_hooks on a saved tensor with value None is forbidden")
        # (PyTorch hands the hook the saved data without history, for inputs as for outputs)
        tensor = self.unpack(None, detached=True)
        self.packed = pack_hook(tensor)
        self.unpack_hook = unpack_hook
        self.impl = None

    def release(self):
        self.released = True
        self.impl = None
        self.packed = None


class SavedScalar(SavedTensor, SavedScalarBase):
    """A Python number passed where the schema says ``Tensor`` (``x * 2``): PyTorch wraps it in a
    0-d tensor and saves that like any tensor, so it too is freed after backward. (Its field
    ``value`` is in C: ``SavedScalarBase``.)"""

    __slots__ = ()

    def __init__(self, value):
        self.value = value
        self.released = False
        self.unpack_hook = None

    def unpack(self, node=None, detached=False):
        if self.released:
            raise RuntimeError(_FREED_MESSAGE)
        return self.value

    def release(self):
        self.released = True


# ---------------------------------------------------------------------------------------------
# Leaves: AccumulateGrad
# ---------------------------------------------------------------------------------------------


class AccumulateGrad(Node, AccumulateGradBase):
    """The node at the end of every path: adds the incoming gradient into ``leaf.grad``.

    It holds the leaf's payload, ``_impl`` (so a leaf in a live graph has ``_use_count() == 2``),
    and is cached *weakly* in the leaf's ``autograd_meta``: the graph keeps it alive, the leaf does
    not. (The compiled recorder makes it too: ``_accumulate_grad`` in ``_ext/twins/autograd/recording.pyx``.)
    """

    __slots__ = ()

    def __init__(self, impl):
        # Node.__init__ written out (a leaf's node is made again whenever its last graph died).
        self._seq_nr = MAX_SEQUENCE_NR
        self.next_functions = ()
        self._input_metadata = ((impl.sizes, impl.dtype, impl.device),)
        self._pre_hooks = self._post_hooks = self._tensor_pre_hooks = self._retains_grad = None
        self._metadata = None
        self._impl = impl

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    @property
    def variable(self):
        return tensor_for(self._impl)

    def apply(self, grad_outputs):
        if _twin is not None and _compiled_switch._enabled:   # the compiled twin (end of this file)
            out = _twin.accumulate_grad_apply(self, grad_outputs)
            if out is not NotImplemented:
                return out
        (new_grad,) = grad_outputs
        impl = self._impl
        if new_grad is None or impl is None:
            return ()
        # Like PyTorch's C++ AccumulateGrad, the bookkeeping runs below __torch_function__; the
        # ops it runs are still seen by __torch_dispatch__ modes, and they are PyTorch's ones.
        with _below_torch_function():
            old = impl.grad
            if old is None:
                if (
                    not _gm._enabled
                    and sys.getrefcount(new_grad) <= _UNSHARED_REFS
                    and new_grad._use_count() == 1
                    and _obeys_layout_contract(new_grad._impl, impl)
                ):
                    # Nobody else holds the incoming gradient (not the caller of backward, not a
                    # hook, not another edge of the node that made it) and its strides match the
                    # leaf's: PyTorch "steals" it, keeping a detached alias instead of a copy.
                    impl.grad = new_grad.detach()
                else:
                    # A copy with the leaf's strides (PyTorch's "gradient layout contract"),
                    # so later in-place updates never write through to someone else's tensor.
                    impl.grad = _clone_obey_contract(new_grad, impl)
            elif not _gm._enabled:
                old.add_(new_grad)               # the usual case: accumulate in place
            else:
                impl.grad = old + new_grad       # create_graph: keep the history of the sum
        hooks = (impl.autograd_meta or {}).get("post_accumulate_grad_hooks")
        if hooks:
            tensor = tensor_for(impl)
            for hook in list(hooks.values()):
                hook(tensor)
        return ()


def _below_torch_function():
    """``DisableTorchFunction()``, or a context that does nothing when no ``__torch_function__``
    handler or mode exists to be disabled (the common case, and a cheaper one)."""
    return _NOTHING if _tf_state.quiet else DisableTorchFunction()


_NOTHING = contextlib.nullcontext()


# References to the incoming gradient inside AccumulateGrad.apply when nobody else holds it: the
# tuple the engine passes, the local name ``new_grad``, and getrefcount's own argument.
_UNSHARED_REFS = 3


def _obeys_layout_contract(grad, var) -> bool:
    """PyTorch's ``obeys_layout_contract``: ``grad`` (a payload) may become ``var.grad`` as is."""
    if grad.sizes != var.sizes:
        return False
    if _non_overlapping_and_dense(var.sizes, var.strides):
        # the strides must match, except along dims of size 1, where any stride but 0 will do (a
        # 0 stride there marks an expanded view, which PyTorch does not keep as the .grad)
        return all(a != 0 if s == 1 else a == b for s, a, b in zip(var.sizes, grad.strides, var.strides))
    return _dense_in_order(grad.sizes, grad.strides, reversed(range(len(grad.sizes))))


def _clone_obey_contract(new_grad, var):
    """PyTorch's ``clone_obey_contract``: a copy of ``new_grad`` laid out like the leaf ``var``
    when the leaf is dense, else a contiguous copy. (The copy is recorded when grad mode is on.)
    PyTorch makes the empty tensor with ``aten.new_empty_strided``, which we do not have; we use
    ``aten.empty_strided``."""
    from minitorch_nn._dtype import contiguous_format
    from minitorch_nn._ops import aten

    if _non_overlapping_and_dense(var.sizes, var.strides):
        out = aten.empty_strided.default(list(var.sizes), list(var.strides), dtype=var.dtype, device=var.device)
        return out.copy_(new_grad)
    return new_grad.clone(memory_format=contiguous_format)


def _non_overlapping_and_dense(sizes, strides) -> bool:
    """The elements fill one block of memory exactly once, in some order of the dims."""
    return _dense_in_order(sizes, strides, sorted(range(len(sizes)), key=lambda d: strides[d]))


def _dense_in_order(sizes, strides, dims) -> bool:
    """Walking ``dims`` from the fastest, each dim of size > 1 steps over all the ones before."""
    if 0 in sizes:
        return True
    expected = 1
    for d in dims:
        if sizes[d] != 1:
            if strides[d] != expected:
                return False
            expected *= sizes[d]
    return True


def grad_accumulator(impl):
    """The ``AccumulateGrad`` node of a leaf payload, made on first use and cached weakly."""
    meta = impl.autograd_meta
    if meta is None:
        meta = impl.autograd_meta = {}
    else:
        ref = meta.get("grad_accumulator")
        if ref is not None:
            node = ref()
            if node is not None:
                return node
    node = AccumulateGrad(impl)
    meta["grad_accumulator"] = weakref.ref(node)
    return node


def current_grad_fn(impl):
    """``impl.grad_fn``, first brought up to date if ``impl`` is a stale view.

    A view's node leads to its base's history *as it was when the node was made*. A view shares
    its base's version counter and remembers the counter's value at that moment
    (``impl.view_version``). Once the counter has moved on, the base or another view of it was
    written in place (with grad mode on or off, through ``detach()`` too), and the old path
    would miss that write; so the view gets a fresh ``AsStridedBackward0`` leading to the base's
    current history, as PyTorch's ``VariableHooks::grad_fn`` does. A view made under no_grad or
    inference_mode, or an output of ``unbind``/``split``..., cannot be given one: PyTorch raises.
    """
    fn = impl.grad_fn
    base = impl.base
    if base is None or impl.view_version == impl.version.value:
        return fn
    if fn is None and not base.requires_grad:
        return None   # neither the view nor its base has a history to bring up to date
    from minitorch_nn.autograd.inplace import regenerate_view_node

    return regenerate_view_node(impl)


def gradient_edge(tensor):
    """The edge a gradient for ``tensor`` travels along: ``(grad_fn, output_nr)``, the leaf's
    ``(AccumulateGrad, 0)``, or ``None`` when it does not require grad."""
    impl = tensor._impl
    fn = current_grad_fn(impl)
    if fn is not None:
        return (fn, impl.output_nr)
    if impl.requires_grad:
        return (grad_accumulator(impl), 0)
    return None


def get_gradient_edge(tensor):
    """``torch.autograd.graph.get_gradient_edge``: the (node, input_nr) pair of ``tensor``."""
    edge = gradient_edge(tensor)
    if edge is None:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require gradients")
    return edge


# ---------------------------------------------------------------------------------------------
# swap_tensors support
# ---------------------------------------------------------------------------------------------

_POISON_MESSAGE = (
    "Trying to execute AccumulateGrad node that was poisoned by swap_tensors this can happen when you "
    "try to run backward on a tensor that was swapped. For a module m with `torch.__future__.set_swap_"
    "module_params_on_conversion(True)` you should not change the device or dtype of the module (e.g. "
    "`m.cpu()` or `m.half()`) between running forward and backward. To resolve this, please only change "
    "the device/dtype before running forward (or after both forward and backward)."
)


_SWAP_POISONS = weakref.WeakKeyDictionary()   # AccumulateGrad node -> its poison hooks' handles


def poison_accumulate_grad_for_swap(tensor):
    """Make a later backward through ``tensor``'s AccumulateGrad fail (``utils.swap_tensors``).

    The node still holds the old payload, which after the swap belongs to the other tensor, so
    running it would put a gradient on the wrong object. The node also leaves the payload's cache,
    so a fresh graph built later gets a fresh, healthy node.
    """
    node, _ = get_gradient_edge(tensor)

    def poisoned(grad_outputs):
        raise RuntimeError(_POISON_MESSAGE)

    _SWAP_POISONS.setdefault(node, []).append(node.register_prehook(poisoned))
    meta = tensor._impl.autograd_meta
    if meta is not None:
        meta.pop("grad_accumulator", None)


def accumulator_of(tensor):
    """The weak reference to ``tensor``'s cached AccumulateGrad node, or None (read before a swap
    that may be undone, see :func:`unpoison_after_swap_back`)."""
    meta = tensor._impl.autograd_meta
    return None if not isinstance(meta, dict) else meta.get("grad_accumulator")


def unpoison_after_swap_back(tensor, accumulator_ref) -> None:
    """Undo :func:`poison_accumulate_grad_for_swap` once a swap was exchanged back (a failed
    ``load_state_dict`` or conversion): the node's payload is ``tensor``'s again, so it is healthy."""
    node = None if accumulator_ref is None else accumulator_ref()
    if node is None or node._impl is not tensor._impl:
        return
    for handle in _SWAP_POISONS.pop(node, ()):   # (the swap and the swap back may both poison)
        handle.remove()
    meta = tensor._impl.autograd_meta
    if isinstance(meta, dict):
        meta["grad_accumulator"] = accumulator_ref


# ---------------------------------------------------------------------------------------------
# The compiled twin of AccumulateGrad.apply
# ---------------------------------------------------------------------------------------------
# ``_ext/twins/autograd/graph.pyx`` makes the same decisions as ``AccumulateGrad.apply`` (steal
# or add) in C and calls the same methods; ``apply`` hands over on its first lines while the
# switch is on. Edited originals (their fingerprints) turn it off at import; replaced helpers of
# this module (identity) send every call the readable way.
try:
    from minitorch_nn._twins.autograd import graph as _twin
except ImportError:  # pragma: no cover - an extension built without it
    _twin = None
else:
    _twin.setup(graph_module=sys.modules[__name__], grad_mode_module=_gm, tf_state=_tf_state,
                originals_ok=_compiled_switch.check_original(
                    "autograd.graph.AccumulateGrad.apply", AccumulateGrad.apply, _obeys_layout_contract,
                    _non_overlapping_and_dense, _dense_in_order, _below_torch_function))
    _compiled_switch.on_change(_twin.set_enabled)
