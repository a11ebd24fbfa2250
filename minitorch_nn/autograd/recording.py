"""The autograd layer of the dispatch chain: records a graph node for each differentiable op.

Mirrors PyTorch's generated ``VariableType`` kernels (``torch/csrc/autograd/generated/``) plus
``variable.cpp``'s history rebasing for in-place ops and views. For one op call it:

1. returns ``NotImplemented`` at once when grad mode is off or no tensor argument requires grad
   (the fast path every op takes on plain tensors);
2. finds the op's derivative (registered by ``derivatives.py`` on ``op.derivative``), makes its
   node (``MulBackward0``...) with one edge per differentiable input, and saves what the
   derivative formulas of the inputs that need a gradient will read (and nothing else, which is
   why ``y = x * 2`` does not save ``x`` but ``x * x`` saves it twice);
3. runs the op below autograd with grad mode off;
4. wires the outputs: ``out.grad_fn = node``, ``out.output_nr = i``, ``requires_grad=True``.

In-place ops rebase history instead (``inplace.py``): ``y.add_(z)`` makes ``y.grad_fn`` the
new ``AddBackward0``, whose edge for ``self`` is ``y``'s old edge. When ``y`` is a view, the base
gets a ``CopySlices`` node (its gradient flows through the view's node for the part the view
covers) and the view gets ``AsStridedBackward0`` pointing at it, as in PyTorch.

Other views of a base that is later modified in place are brought up to date lazily, as in
PyTorch: each view remembers the value of the version counter it shares with its base when its
node was made (``impl.view_version``), and ``graph.current_grad_fn`` gives it a fresh
``AsStridedBackward0`` once the counter has moved on (an in-place write to the base or to any
view of it, with grad mode on or off).

Speed: this layer runs for every op on tensors that require grad, so the common case has its
own short path, ``_record_simple`` (ops whose differentiable inputs are single tensors and that
write no input). Everything that depends only on the op and on *which* inputs need a gradient
(what to save, which saved names are arguments, metadata or outputs) is worked out once and kept
on the op's :class:`Derivative` as a :class:`_SavePlan`. ``_record`` is the general path
(``Tensor[]`` inputs such as ``cat``, and in-place ops).

``autograd_layer`` and the recorders it calls are the readable reference; by default the
dispatcher calls their compiled twin, ``autograd_layer`` of ``_ext/twins/autograd/recording.pyx``, which
does the same steps in the same order and fills the nodes' and saved tensors' C fields directly
(``_record`` has its twin there too: ``_record_general``). The compiled fast paths of ``a * b`` and
friends record through the twin of ``_record_computed``. The twin steps aside, and every op is
recorded by the code in this file, while the switch ``minitorch_nn.backends.compiled`` is off
(``with torch.backends.compiled.flags(enabled=False):``), and while a function of this file it
mirrors has been replaced (``recording._record_simple = my_version`` takes effect at the next op);
``tests/test_fast_record.py`` checks that both build the same graph.

Where we differ from PyTorch: a view made under ``no_grad`` of a tensor that requires grad reports
``requires_grad=True`` and prints so, as in PyTorch, but its payload's own flag stays False, so an
op on it records nothing here (PyTorch records a node whose edge for it leads nowhere). An in-place
op on it with grad mode on, or reading its ``grad_fn`` after its base was written, is refused with
PyTorch's message.
"""

from __future__ import annotations

import sys
import types

from minitorch_nn import _dispatch
from minitorch_nn._C import TensorBase
from minitorch_nn._C_torch_function import DisableTorchFunction
from minitorch_nn._C_torch_function import state as _tf_state
from minitorch_nn._ops import aten
from minitorch_nn._twins.autograd import recording as _twin
from minitorch_nn._twins.autograd.recording import OpNodeBase
from minitorch_nn.autograd import grad_mode as _gm
from minitorch_nn.autograd import graph as _graph
from minitorch_nn.autograd import saved_attributes as _saved_attributes
from minitorch_nn.autograd.graph import (
    Node,
    SavedScalar,
    SavedTensor,
    _next_sequence_nr,
    current_grad_fn,
    grad_accumulator,
    gradient_edge,
    node_class,
)
from minitorch_nn.autograd.inplace import _check_inplace, _rebase_history
from minitorch_nn.backends import compiled as _compiled_switch

# Marks ops whose outputs never require grad (detach, factories *_like, random fills...).
NONDIFFERENTIABLE = object()


# ---------------------------------------------------------------------------------------------
# Derivative: what derivatives.py registers per op
# ---------------------------------------------------------------------------------------------


class Derivative:
    """The derivative of one op: a formula per differentiable input, like derivatives.yaml.

    Each formula is a function whose first parameter is ``grad`` (the output's gradient; for
    ops with several outputs ``grads``, a tuple) and whose other parameter names say what it
    reads: schema arguments (``self``, ``other``, ``dim``...) or outputs (``result``,
    ``result0``, ``result1``...). The recorder saves those, by PyTorch's rule (``wanted``).

    ``also_saved``: what PyTorch's node saves besides what the formulas read, by PyTorch's names
    (``squeeze.dim`` keeps ``dim``, ``mean`` ``self_sym_numel``); ``hidden``: formula parameters
    PyTorch's node does not show. Both only change what ``grad_fn._saved_*`` shows
    (``saved_attributes.py``); set them with ``derivatives.saves_as_torch`` before the op is
    first recorded.
    """

    also_saved = ()
    hidden = frozenset()

    def __init__(self, op, node_name, formulas):
        self.op = op
        self.node_cls = node_class(node_name)
        args = op._schema.arguments
        self.arg_names = tuple(a.name for a in args)
        self.defaults = {a.name: a.default for a in args if a.has_default}
        self.list_args = {a.name for a in args if a.type.startswith("Tensor") and a.type.endswith("[]")}
        self.tensor_args = {a.name for a in args if a.type in ("Tensor", "Tensor?")}
        order = {name: i for i, name in enumerate(self.arg_names)}
        unknown = [n for n in formulas if n not in order]
        if unknown:
            raise ValueError(f"{op}: no argument named {unknown}")
        self.inputs = tuple(sorted(formulas, key=order.__getitem__))
        self.formulas = []
        for name in self.inputs:
            fn = formulas[name]
            code = fn.__code__   # the formula's parameter names, without importing inspect
            params = code.co_varnames[1:code.co_argcount]
            self.formulas.append((name, fn, params, name in self.list_args))
        # (name, position in the schema, is a Tensor[] argument) of each differentiable input
        self.input_slots = tuple((name, order[name], name in self.list_args) for name in self.inputs)
        self.position = order
        self.multi_output = len(op._schema.returns) > 1 or op._schema.returns[:1] == ("Tensor[]",)
        # outputs PyTorch never gives a history (derivatives.yaml's output_differentiability:
        # nll_loss's total_weight, batch/layer norm's saved statistics): set by derivatives_nn.py.
        # An op with some is recorded by this file, not by the compiled recorder.
        self.non_differentiable_outputs = frozenset()
        self._wanted_cache = {}
        # The fast recorder (_record_simple) handles ops whose differentiable inputs are all
        # single tensors and that write no input: almost every op. It needs, precomputed once:
        self.simple = not op.is_inplace and not any(is_list for _, _, is_list in self.input_slots)
        self.input_positions = tuple((order[name], name) for name in self.inputs)
        self._plans = {}   # needed_inputs -> _SavePlan

    def plan(self, needed_inputs):
        """The :class:`_SavePlan` for this combination of inputs that need a gradient."""
        plan = self._plans.get(needed_inputs)
        if plan is None:
            plan = self._plans[needed_inputs] = _SavePlan(self, self.wanted(needed_inputs), needed_inputs)
        return plan

    def arg(self, name, args, kwargs):
        """The value of argument ``name`` in this call (its default when not passed)."""
        i = self.position[name]
        if i < len(args):
            return args[i]
        if kwargs and name in kwargs:
            return kwargs[name]
        return self.defaults.get(name)

    def wanted(self, needed_inputs):
        """What to save when the inputs in ``needed_inputs`` (a tuple of bools) need a gradient,
        computed once per combination. PyTorch's generated code saves everything the formulas
        read whichever inputs need a gradient, except a ``Tensor`` argument that only one input's
        formula reads (``x * 2`` does not keep ``x``): see ``_saved_only_when_needed``. Then
        ``also_saved`` (a ``self_sym_numel`` is kept as the sizes it is computed from)."""
        wanted = self._wanted_cache.get(needed_inputs)
        if wanted is None:
            wanted = []
            guarded = self._saved_only_when_needed()
            for (_name, _fn, params, _is_list), needed in zip(self.formulas, needed_inputs):
                wanted.extend(p for p in params if p not in wanted and (needed or guarded is None or p not in guarded))
            if self.also_saved:
                # a tensor input, or its strides, only when that input needs a gradient (as above);
                # the sizes and strides of a tensor that is saved anyway are read from it
                needs = dict(zip(self.inputs, needed_inputs)) if guarded is not None else {}
                for p in _saved_attributes.internal_names(self, self.also_saved):
                    owner = p[:-8] if p.endswith("_strides") else p
                    if p in wanted or not needs.get(owner, True):
                        continue
                    if p.endswith(("_sizes", "_strides")) and p.rpartition("_")[0] in wanted:
                        continue
                    wanted.append(p)
            wanted = self._wanted_cache[needed_inputs] = tuple(wanted)
        return wanted

    def _saved_only_when_needed(self):
        """The formula parameters saved only when the one input whose formula reads them needs a
        gradient, as PyTorch's ``gen_variable_type.py`` guards them: ``Tensor`` arguments and
        ``<arg>_strides`` read by a single formula of an op with several differentiable inputs,
        no ``Tensor[]`` argument, and no "backward" in its name. None for an op that guards
        nothing (one differentiable input...): everything is saved."""
        schema = self.op._schema
        if len(self.formulas) < 2 or "backward" in schema.name or any(
                a.type.startswith("Tensor") and a.type.endswith("[]") for a in schema.arguments):
            return None
        readers = {}
        for _name, _fn, params, _is_list in self.formulas:
            for p in params:
                readers[p] = readers.get(p, 0) + 1
        return frozenset(
            p for p, n in readers.items() if n == 1 and (
                (p in self.position and schema.arguments[self.position[p]].type == "Tensor")
                or (p.endswith("_strides") and p not in self.position)))


class _SavePlan:
    """What to save for one op when a given set of its inputs needs a gradient, sorted by kind
    once so that recording a node is a few loops over short tuples:

    * ``args``: ``(name, position, may_hold_tensors, shown_only)`` of schema arguments to save
      (tensors become SavedTensor; ``may_hold_tensors`` is False for ``int``, ``bool``,
      ``int[]``... slots; ``shown_only``: no formula that runs reads it, only ``grad_fn._saved_*``
      does, and it has a default: left out when the call does not pass it, the getter reads the
      default, so ``x + c`` pays nothing for ``alpha``);
    * ``metadata``: ``(name, owner position, owner name, attr)`` for ``self_sizes`` and the like;
    * ``results``: ``(name, output index)`` of outputs, saved once the op has run.
    * ``needs``: the per-input flags the node's ``apply`` reads (``{"self": [True], ...}``).
    """

    __slots__ = ("args", "metadata", "results", "needs")

    def __init__(self, d, wanted, needed_inputs):
        args, metadata, results = [], [], []
        read = {p for (_n, _fn, params, _l), needed in zip(d.formulas, needed_inputs) if needed for p in params}
        for p in wanted:
            if p in d.position:
                arg_type = d.op._schema.arguments[d.position[p]].type
                args.append((p, d.position[p], "Tensor" in arg_type, p not in read and p in d.defaults))
            elif p.startswith("result"):
                results.append((p, int(p[6:]) if len(p) > 6 else 0))
            else:
                owner, _, attr = p.rpartition("_")
                metadata.append((p, d.position[owner], owner, attr))
        self.args, self.metadata, self.results = tuple(args), tuple(metadata), tuple(results)
        self.needs = {name: [need] for name, need in zip(d.inputs, needed_inputs)}


# ---------------------------------------------------------------------------------------------
# The node every formula-based op uses
# ---------------------------------------------------------------------------------------------


class OpNode(Node, OpNodeBase):
    """A node made from a :class:`Derivative`: runs the formulas of the inputs that need grad.

    Its formulas run with ``__torch_function__`` disabled, as PyTorch's C++ backward formulas
    run below the Python layer: a tensor subclass saved for backward does not see them.

    Fields, besides Node's (in C: ``OpNodeBase``): ``_derivative``; ``_saved``, name -> saved
    value; ``_needs``, input name -> [needs a gradient]; ``_output_meta``, (sizes, dtype, device)
    per output of a multi-output op.
    """

    __slots__ = ()

    def __init__(self, derivative, next_functions=(), input_metadata=(), needs=None):
        # Node.__init__ written out, with the edges passed in: this runs once per recorded op.
        self._seq_nr = _next_sequence_nr()
        self.next_functions = next_functions
        self._input_metadata = input_metadata
        self._pre_hooks = self._post_hooks = self._tensor_pre_hooks = self._retains_grad = None
        self._metadata = None
        self._derivative = derivative
        self._saved = {}
        self._needs = {} if needs is None else needs
        self._output_meta = ()

    def _value(self, name, detached=False):
        v = self._saved[name]
        if isinstance(v, SavedTensor):
            return v.unpack(self, detached)
        if isinstance(v, list) and v and isinstance(v[0], SavedTensor):
            return [s.unpack(self, detached) for s in v]
        return v

    def __getattr__(self, attr):
        # node._saved_dim, node._saved_self_sym_sizes, node._raw_saved_result ... with PyTorch's
        # names and values (negative ints as their unsigned wrap...): saved_attributes.py
        return _saved_attributes.get(self, attr)

    def __dir__(self):
        # PyTorch's node lists its _saved_* attributes; our dict of saved values, ``_saved``,
        # is left out of the listing so that ``[a for a in dir(fn) if "saved" in a]`` reads the same
        return [a for a in super().__dir__() if a != "_saved"] + _saved_attributes.names(self)

    def apply(self, grad_outputs):
        if _tf_state.quiet:   # nothing could intercept the formulas' ops anyway
            return self._apply(grad_outputs)
        with DisableTorchFunction():
            return self._apply(grad_outputs)

    def _apply(self, grad_outputs):
        d = self._derivative
        if len(grad_outputs) == 1 and not d.multi_output:
            grad = grad_outputs[0]   # the usual node: one output
            if grad is None:
                return (None,) * len(self.next_functions)
        else:
            for g in grad_outputs:
                if g is not None:
                    break
            else:   # no gradient at all: nothing to compute
                return (None,) * len(self.next_functions)
            if d.multi_output:
                grad = _OutputGrads(grad_outputs, self._output_meta)
            else:
                grad = grad_outputs[0]
        out = []
        # Without create_graph nothing is recorded, so the formulas may read saved tensors as
        # plain aliases (cheaper ops); not when __torch_dispatch__ classes must see their own.
        detached = not _gm._enabled and _dispatch.python_layer is None
        wanted = _graph.should_compute[0]
        saved = self._saved
        needs = self._needs
        outputs = None
        if _dispatch.python_layer is not None:
            # PyTorch unpacks every saved variable before the first formula runs, so a dispatch
            # mode sees the aten.detach of each saved output (exp's result) there, in saved order
            outputs = {p: v.unpack(self, detached) for p, v in saved.items()
                       if type(v) is SavedTensor and v.is_output}
        k = 0   # index of the first edge of the current input
        for name, fn, params, is_list in d.formulas:
            n_edges = needs[name]
            if wanted is not None:
                edges = self.next_functions
                n_edges = [need and edges[k + i][0] in wanted for i, need in enumerate(n_edges)]
            k += len(n_edges)
            if True not in n_edges:
                out.extend([None] * len(n_edges))
                continue
            values = []
            for p in params:
                if outputs and p in outputs:
                    values.append(outputs[p])
                    continue
                v = saved[p]
                # a SavedTensor unpacked here, without _value's call: the usual case
                values.append(v.unpack(self, detached) if type(v) is SavedTensor else self._value(p, detached))
            result = fn(grad, *values)
            if is_list:
                out.extend(r if need else None for r, need in zip(result, n_edges))
            else:
                out.append(result)
        return tuple(out)

    def release_variables(self):
        for v in self._saved.values():
            if isinstance(v, SavedTensor):
                v.release()
            elif isinstance(v, list):
                for s in v:
                    if isinstance(s, SavedTensor):
                        s.release()


class _OutputGrads:
    """``grads`` for the formulas of a multi-output op: the gradient of each output, read as
    ``grads[i]``, by unpacking or with ``list(grads)``. An output that received no gradient reads
    as zeros of its shape (None if it has no metadata), made when first read, so a formula that
    never looks at it (``nll_loss``'s ``total_weight``) makes no tensor for it."""

    __slots__ = ("_grads", "_metas")

    def __init__(self, grad_outputs, metas):
        n = min(len(grad_outputs), len(metas))
        self._grads = list(grad_outputs[:n])
        self._metas = metas

    def __len__(self):
        return len(self._grads)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return tuple(self[j] for j in range(*i.indices(len(self._grads))))
        if i < 0:
            i += len(self._grads)
        g = self._grads[i]
        if g is None:
            meta = self._metas[i]
            if meta:
                g = self._grads[i] = aten.zeros.default(tuple(meta[0]), dtype=meta[1], device=meta[2], pin_memory=False)
        return g

    def __iter__(self):
        for i in range(len(self._grads)):
            yield self[i]

    def __repr__(self):
        return repr(tuple(self._grads))


class NotImplementedNode(Node):
    """Stands in for an op that has no derivative yet: fails only if backward reaches it."""

    __slots__ = ("_op",)

    def __init__(self, op):
        super().__init__()
        self._op = op

    def name(self):
        return "NotImplemented"

    def apply(self, grad_outputs):
        raise RuntimeError(f"derivative for {self._op.name()} is not implemented")


# ---------------------------------------------------------------------------------------------
# The layer
# ---------------------------------------------------------------------------------------------


def _any_requires_grad(args, kwargs):
    for a in args:
        if isinstance(a, TensorBase):
            if a._impl.requires_grad:
                return True
        elif type(a) in (list, tuple):
            for b in a:
                if isinstance(b, TensorBase) and b._impl.requires_grad:
                    return True
    if kwargs:
        for a in kwargs.values():
            if isinstance(a, TensorBase) and a._impl.requires_grad:
                return True
    return False


def autograd_layer(op, args, kwargs):
    """The dispatcher's autograd layer; see the module docstring.

    With the switch ``backends.compiled`` on, its compiled twin ``_twin.autograd_layer`` runs in its
    place (see the end of this module) and makes the same checks in C.
    """
    if not _gm._enabled:
        return NotImplemented  # the fast path
    # Plain tensors leave here, before any per-op work: one loop over the positional arguments
    # (_any_requires_grad, inlined for them).
    for a in args:
        if isinstance(a, TensorBase):
            if a._impl.requires_grad:
                break
        elif type(a) in (list, tuple):
            if _any_requires_grad(a, None):
                break
    else:
        if not (kwargs and _any_requires_grad((), kwargs)):
            if op.is_inplace and args and isinstance(args[0], TensorBase) and args[0]._impl.base is not None:
                _check_inplace(args[0])   # a view made under no_grad of a tensor that requires grad
            return NotImplemented
    if _gm._inference:
        return NotImplemented   # enable_grad() inside inference_mode: still nothing is recorded
    d = op.derivative
    if d is not None and d is not NONDIFFERENTIABLE and d.simple:
        return _record_simple(op, d, args, kwargs)
    return _record_other(op, d, args, kwargs)


def _record_other(op, d, args, kwargs):
    """The autograd layer for ops that are not simple (the compiled layer calls this too)."""
    if d is NONDIFFERENTIABLE:
        if op.is_inplace:
            _check_inplace(args[0])
        return NotImplemented
    if d is None:
        return _record_without_formula(op, args, kwargs)
    return _record(op, d, args, kwargs)


def _run_below(op, args, kwargs):
    _gm._enabled = False
    try:
        return _dispatch.below_autograd(op, args, kwargs)
    finally:
        _gm._enabled = True


def _edge(impl):
    """``gradient_edge`` inlined for the hot path: (grad_fn, output_nr), the leaf's
    AccumulateGrad, or None."""
    fn = impl.grad_fn
    if fn is not None:
        if impl.base is not None and impl.view_version != impl.version.value:
            fn = current_grad_fn(impl)   # a view whose base changed in place since
        return (fn, impl.output_nr)
    if impl.requires_grad:
        return (grad_accumulator(impl), 0)
    return None


def _record_simple(op, d, args, kwargs):
    """``_record`` for ops whose differentiable inputs are single tensors and that write no
    input (``d.simple``): the same four steps, with the per-op work done once in ``d.plan``.

    Its compiled twin is ``_record`` in ``_ext/twins/autograd/recording.pyx``: the same steps, in the same
    order, in C.
    """
    # 1. and 2.: the node, its edges and what its formulas will read.
    started = _start_simple(d, args, kwargs)
    if started is NotImplemented:
        return NotImplemented   # nothing differentiable requires grad (maybe an index does)
    node, plan = started

    # 3. Run the op below autograd (python dispatch, then the kernel), with grad mode off.
    _gm._enabled = False
    try:
        python_layer = _dispatch.python_layer
        out = NotImplemented if python_layer is None else python_layer(op, args, kwargs)
        if out is NotImplemented:
            out = _dispatch.backend(op, args, kwargs)
    finally:
        _gm._enabled = True

    # 4. Wire the outputs to the node.
    return _finish_simple(op, d, node, plan, args, out)


def _record_computed(op, args, out):
    """Record ``op(*args)`` whose result ``out`` was already computed below autograd.

    For compiled twins that run the kernel themselves (``_ext/twins/backends/``): steps 1, 2
    and 4 of ``_record_simple``, the same graph as the full path. ``op.derivative`` must be a
    simple one (``d.simple``); the op writes no input, so the inputs' versions saved now are
    the ones they had at the call. Returns ``out``, or ``NotImplemented`` when no differentiable
    input requires grad (the caller then returns ``out`` as it is).
    """
    d = op.derivative
    started = _start_simple(d, args, None)
    if started is NotImplemented:
        return NotImplemented
    node, plan = started
    return _finish_simple(op, d, node, plan, args, out)


def _start_simple(d, args, kwargs):
    """Steps 1 and 2 of ``_record_simple``: ``(node, plan)``, or NotImplemented when no
    differentiable input requires grad."""
    if _gm._inference:
        return NotImplemented   # (fast paths record through here) inference_mode records nothing
    n = len(args)
    # 1. One edge per differentiable input (as _edge, inlined).
    edges, metas, needed = [], [], []
    for pos, name in d.input_positions:
        v = args[pos] if pos < n else d.arg(name, args, kwargs)
        if isinstance(v, TensorBase):
            impl = v._impl
            fn = impl.grad_fn
            if fn is not None:
                if impl.base is not None and impl.view_version != impl.version.value:
                    fn = current_grad_fn(impl)   # a view whose base changed in place since
                edges.append((fn, impl.output_nr))
                needed.append(True)
            elif impl.requires_grad:
                if impl.version.inference and _only_inference_tensors(d.op, args, kwargs):
                    return NotImplemented
                # grad_accumulator(impl), with its cached case inlined (a leaf used again
                # while its graph is alive: every weight of a model in a training step)
                meta = impl.autograd_meta
                ref = meta.get("grad_accumulator") if meta else None
                fn = ref() if ref is not None else None
                edges.append((fn or grad_accumulator(impl), 0))
                needed.append(True)
            else:
                edges.append(_NO_EDGE)
                needed.append(False)
            metas.append((impl.sizes, impl.dtype, impl.device))
        else:
            edges.append(_NO_EDGE)
            needed.append(False)
            metas.append(None)
    needed = tuple(needed)
    plan = d._plans.get(needed)   # (no plan is ever made for "no input needs a gradient")
    if plan is None:
        if True not in needed:
            return NotImplemented
        plan = d.plan(needed)
    node = d.node_cls(d, tuple(edges), tuple(metas), plan.needs)

    # 2. Save what the formulas of the inputs that need a gradient read.
    saved = node._saved
    for name, pos, may_hold_tensors, shown_only in plan.args:
        if pos < n:
            v = args[pos]
        elif shown_only and not (kwargs and name in kwargs):
            continue   # only grad_fn._saved_<name> reads it, and it is the default: read from there
        else:
            v = d.arg(name, args, kwargs)
        if isinstance(v, TensorBase):
            saved[name] = SavedTensor(v)
        elif may_hold_tensors:
            saved[name] = _saved_value(d, name, v)
        else:
            saved[name] = v   # an int, a list of ints, a dtype...
    for name, pos, owner, attr in plan.metadata:
        v = args[pos] if pos < n else d.arg(owner, args, kwargs)
        if attr in _IMPL_FIELDS and isinstance(v, TensorBase):
            saved[name] = getattr(v._impl, attr)   # self_sizes and the like: _metadata, inlined
        else:
            saved[name] = _metadata(v, attr)
    return node, plan


def _finish_simple(op, d, node, plan, args, out):
    """Step 4 of ``_record_simple``: wire the outputs to ``node``, save the outputs the
    formulas read; returns ``out``."""
    no_history = d.non_differentiable_outputs
    if d.multi_output:
        outs = out if type(out) in (tuple, list) else (out,)
        for i, o in enumerate(outs):
            if i not in no_history:
                _wire_output(op, node, args, o, i)
        node._output_meta = tuple(
            (o._impl.sizes, o._impl.dtype, o._impl.device) if isinstance(o, TensorBase) else None for o in outs
        )
    else:
        outs = (out,)
        # _wire_output, inlined for the usual single output
        impl = out._impl if isinstance(out, TensorBase) else None
        if impl is not None and (impl.dtype.is_floating_point or impl.dtype.is_complex):
            for a in args:
                if out is a:
                    raise RuntimeError(f"{op}: autograd expected a new tensor, not an input")
            impl.grad_fn = node
            impl.requires_grad = True
            impl.output_nr = 0
            if impl.base is not None:
                impl.view_version = impl.version.value   # a view: its node is current at this version
                impl.creation_meta = 0   # (made with grad mode on: _run_below turns it off for kernels)
    saved = node._saved
    for name, idx in plan.results:
        # (an output without history is saved as it is, as PyTorch saves a leaf)
        saved[name] = SavedTensor(outs[idx], is_output=idx not in no_history)
    return out


_NO_EDGE = (None, 0)


def _only_inference_tensors(op, args, kwargs):
    """True when every tensor argument of this call is an inference tensor.

    PyTorch's autograd kernels are keyed on the inputs' dispatch keys, which inference tensors
    do not carry: a call on inference tensors alone records nothing, even when one of them
    requires grad (made to inside ``inference_mode``). A Python number in a ``Tensor`` slot
    (``x * 2``) counts as a normal tensor, as PyTorch wraps it in one. Only asked when an
    inference tensor that requires grad is met, so the usual op never pays for it.
    """
    schema = op._schema.arguments
    for i, a in enumerate(args):
        if not _inference_argument(a, schema[i].type if i < len(schema) else ""):
            return False
    if kwargs:
        types = {arg.name: arg.type for arg in schema}
        for name, a in kwargs.items():
            if not _inference_argument(a, types.get(name, "")):
                return False
    return True


def _inference_argument(a, arg_type):
    if isinstance(a, TensorBase):
        return _gm.is_inference_counter(a._impl.version)
    if type(a) in (list, tuple):
        return all(_inference_argument(b, "") for b in a)
    if arg_type in ("Tensor", "Tensor?") and type(a) in (int, float, bool, complex):
        return False
    return True



def _saved_value(d, name, v):
    """How a non-tensor argument is saved: lists of tensors and numbers in tensor slots get
    the same treatment as tensors, anything else is kept as is."""
    if type(v) in (list, tuple) and any(isinstance(t, TensorBase) for t in v):
        return [SavedTensor(t) if t is not None else None for t in v]
    if name in d.tensor_args and isinstance(v, (int, float)):
        return SavedScalar(v)
    return v


def _wire_output(op, node, args, o, i):
    """Make ``o`` (output ``i`` of the op) point at ``node``, if it is differentiable."""
    if not isinstance(o, TensorBase):
        return
    impl = o._impl
    dtype = impl.dtype
    if not (dtype.is_floating_point or dtype.is_complex):
        return
    for a in args:
        if o is a:  # an op must hand back a new tensor, or the input's history breaks
            raise RuntimeError(f"{op}: autograd expected a new tensor, not an input")
    impl.grad_fn = node
    impl.requires_grad = True
    impl.output_nr = i
    if impl.base is not None:
        # a view: its node is current until the version counter it shares with its base moves on;
        # made with grad mode on (``_run_below`` turns it off only to run the kernel)
        impl.view_version = impl.version.value
        impl.creation_meta = 0


def _record(op, d, args, kwargs):
    node = d.node_cls(d)
    # 1. One edge per differentiable input (one per element of a Tensor[] input).
    edges, metas, needs = [], [], node._needs
    for name, _pos, is_list in d.input_slots:
        v = d.arg(name, args, kwargs)
        flags = []
        for item in (v if is_list else (v,)):
            if isinstance(item, TensorBase):
                impl = item._impl
                if impl.grad_fn is None and impl.requires_grad and impl.version.inference \
                        and _only_inference_tensors(op, args, kwargs):
                    return NotImplemented
                edge = _edge(impl)
                metas.append((impl.sizes, impl.dtype, impl.device))
            else:
                edge = None
                metas.append(None)
            edges.append(edge or (None, 0))
            flags.append(edge is not None)
        needs[name] = flags
    needed_inputs = tuple(any(f) for f in needs.values())
    inplace = op.is_inplace
    if inplace:
        _check_inplace(args[0])
    elif not any(needed_inputs):
        return NotImplemented   # only non-differentiable arguments (an index, a mask) need grad
    node.next_functions = tuple(edges)
    node._input_metadata = tuple(metas)

    # 2. Save what the formulas of the inputs that need a gradient read.
    wanted = d.wanted(needed_inputs)
    saved = node._saved
    for p in wanted:
        if p in d.position:
            v = d.arg(p, args, kwargs)
        elif p.startswith("result"):
            continue     # outputs are saved after the op has run
        else:            # "self_sizes", "tensors_sizes", "self_dtype"...: metadata, no tensor kept
            owner, _, attr = p.rpartition("_")
            saved[p] = _metadata(d.arg(owner, args, kwargs), attr)
            continue
        if isinstance(v, TensorBase):
            if inplace and p == "self":
                # The original value is about to be overwritten: keep a copy, recorded like any
                # op so that a double backward can differentiate through it.
                v = _clone_op()(v)
            saved[p] = SavedTensor(v)
        else:
            saved[p] = _saved_value(d, p, v)

    # 3. Run the op below autograd.
    out = _run_below(op, args, kwargs)

    # 4. Wire the outputs to the node (or, in place, rebase the history of self).
    outs = out if type(out) in (tuple, list) else (out,)
    if inplace:
        _rebase_history(args[0], node)
    else:
        for i, o in enumerate(outs):
            if i not in d.non_differentiable_outputs:
                _wire_output(op, node, args, o, i)
    if d.multi_output:
        node._output_meta = tuple(
            (o._impl.sizes, o._impl.dtype, o._impl.device) if isinstance(o, TensorBase) else None for o in outs
        )
    for p in wanted:
        if p.startswith("result") and p not in d.position:
            idx = int(p[6:]) if len(p) > 6 else 0
            saved[p] = SavedTensor(outs[idx], is_output=idx not in d.non_differentiable_outputs)
    return out


# the metadata names that are fields of the payload as they are (``self_sizes`` -> impl.sizes)
_IMPL_FIELDS = frozenset({"sizes", "strides", "offset", "dtype", "device"})


def _metadata(v, attr):
    if type(v) in (list, tuple):
        return [_metadata(t, attr) for t in v]
    if not isinstance(v, TensorBase):
        return None
    impl = v._impl
    if attr == "sizes":
        return impl.sizes
    if attr == "strides":
        return impl.strides
    if attr == "offset":
        return impl.offset
    if attr == "dtype":
        return impl.dtype
    if attr == "device":
        return impl.device
    if attr == "numel":
        return v.numel()
    raise ValueError(f"unknown tensor metadata '{attr}' in a derivative formula")


def _clone_op():
    return aten.clone.default


def _record_without_formula(op, args, kwargs):
    if op.is_inplace:
        _check_inplace(args[0])
    out = _run_below(op, args, kwargs)
    outs = out if type(out) in (tuple, list) else (out,)
    node = None
    for i, o in enumerate(outs):
        if isinstance(o, TensorBase) and (o.dtype.is_floating_point or o.dtype.is_complex) and not any(o is a for a in args):
            if node is None:
                node = NotImplementedNode(op)
                tensors = [a for a in args if isinstance(a, TensorBase)]
                node.next_functions = tuple(gradient_edge(t) or (None, 0) for t in tensors)
            o._impl.grad_fn, o._impl.requires_grad, o._impl.output_nr = node, True, i
    return out


# ---------------------------------------------------------------------------------------------
# What the dispatcher calls: autograd_layer, or its compiled twin
# ---------------------------------------------------------------------------------------------

# autograd/__init__.py installs ``installed_layer`` as ``_dispatch.autograd_layer``. It is the
# compiled twin ``_twin.autograd_layer`` (``_ext/twins/autograd/recording.pyx``), which hands every op to
# ``autograd_layer`` above while the switch ``minitorch_nn.backends.compiled`` is off or while a
# function of this file it mirrors has been replaced; or, when this file's source has changed since
# the build (its fingerprints), ``autograd_layer`` itself.
_twin.install_recorder(recording=sys.modules[__name__], graph=_graph, grad_mode=_gm, dispatch=_dispatch, aten=aten)
# The functions whose work the twin does in its own code: an edit to one of them turns it off.
_TWIN_ORIGINALS = (autograd_layer, _any_requires_grad, _record_simple, _record_computed, _start_simple,
                   _finish_simple, _record, _edge, _wire_output, _saved_value, _run_below, OpNode.__init__,
                   SavedTensor.__init__, _graph.AccumulateGrad.__init__, grad_accumulator, _graph._alias)
installed_layer = (_twin.autograd_layer if _compiled_switch.check_original("autograd.recording", *_TWIN_ORIGINALS)
                   else autograd_layer)


class _RecordingModule(types.ModuleType):
    """This module, telling its compiled twin when a name in it is assigned or deleted
    (``recording._record_simple = my_version``): the twin then compares the functions it mirrors
    with the ones it was installed with, by identity, and steps aside if one differs."""

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        _twin.recorder_recheck()

    def __delattr__(self, name):
        super().__delattr__(name)
        _twin.recorder_recheck()


sys.modules[__name__].__class__ = _RecordingModule
