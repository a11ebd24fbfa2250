"""The compiled recorder builds the same autograd graph as the readable one.

``a + b``, ``a - b``, ``a * b``, ``a.relu()`` and ``a.sum()`` on tensors that require grad run
their kernel in C (``_ext/twins/backends/``) and then ``record_computed`` (``_ext/twins/autograd/recording.pyx``)
wires the result into the graph, instead of ``autograd/recording.py:_record_simple`` around the
full dispatch chain. Everything a user can observe about the graph must be the same either way,
so each case here runs twice on fresh, identical inputs, once as is and once on the reference
path (a pass-through dispatcher, as ``dispatch_trace()`` installs, which makes the fast path step
aside, and the readable ``recording.autograd_layer`` in place of its compiled twin
``_twins.autograd.recording.autograd_layer``),
and compares:

* the result: requires_grad, is_leaf, output_nr, view bookkeeping;
* its node: class, ``name()``, sequence number (one more than the node made just before),
  ``next_functions`` (which leaf's ``AccumulateGrad``, which node, which input_nr), input
  metadata, and every saved value (kind, version, output flag, which tensor it holds);
* ``_use_count()`` of every input while the graph is alive (``swap_tensors`` relies on it);
* after backward (with a tensor hook and ``retain_grad`` on the result): every gradient, bit for
  bit, or the error (a saved input modified in place gives the version error).

The twin's ``_record_computed`` is also called directly, on ops that have no compiled kernel yet, with a
result computed under ``no_grad``: that is how other fast paths use it. Other ops, through their
public functions, compare the compiled layer with the readable one.
"""

import contextlib
import gc
import weakref

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitorch_nn as mt
from minitorch_nn._ops import aten
from minitorch_nn._twins.autograd import recording as _recording_twin
from minitorch_nn.autograd import recording
from minitorch_nn.autograd.graph import AccumulateGrad, Node, SavedScalar
from tests.strategies import build, tensor_specs
from tests.twins.harness import fast_when_on, full_path, ran_kernels
from tests.twins.signatures import _backward_outcome, _result_signature, recorder_reference_path


def _ran_full_path(fn):
    """Whether ``fn()`` ran the cpu kernel of add, sub, mul, relu or sum (their twins run none)."""
    return ran_kernels(fn, [aten.add.Tensor, aten.sub.Tensor, aten.mul.Tensor, aten.relu.default,
                            aten.sum.default, aten.sum.dim_IntList], errors=())


@contextlib.contextmanager
def reference_path():
    """The full dispatch chain (no compiled fast path) and the readable Python autograd layer."""
    with full_path(), recorder_reference_path():
        yield


OPS = {
    "add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y,
    "radd": lambda x, y: y + x, "rmul": lambda x, y: y * x,
    "relu": lambda x, y: x.relu(), "sum": lambda x, y: x.sum(),
}


def _run_case(make, op, modify):
    """(graph signature, backward outcome) of ``op`` on the inputs ``make()`` builds."""
    tensors, x, y = make()
    before = Node()._sequence_nr()
    out = op(x, y)
    sig = _result_signature(out, tensors, before) if isinstance(out, mt.Tensor) else ("not a tensor", out)
    return sig, _backward_outcome(out, tensors, modify) if isinstance(out, mt.Tensor) else None


def assert_same_graph(make, op, modify=None):
    fast = _run_case(make, op, modify)
    with reference_path():
        full = _run_case(make, op, modify)
    assert fast == full


# -- the compiled methods --------------------------------------------------------------------------


def _inputs(spec, other, x_kind, y_grad):
    """A ``make()`` for one case: ``x`` a leaf that requires grad (maybe an ``nn.Parameter``), a
    node's output, or a view of either; ``y`` a tensor (requiring grad or not), a Python number or ``x`` itself. The setup runs
    on the full path so that only the op under test differs between the two runs."""

    def make():
        with full_path():
            leaf = build(mt, spec).requires_grad_()
            if x_kind == "parameter":
                leaf = mt.nn.Parameter(leaf.detach())
            tensors = [leaf]
            if x_kind in ("leaf", "parameter"):
                x = leaf
            elif x_kind == "node output":
                x = leaf * 1.5
            elif x_kind == "view of leaf":
                x = leaf.view(-1) if leaf.is_contiguous() else leaf
            else:  # a view of a node's output, whose base is later written through another view
                base = leaf * 1.0
                x = base.view(-1) if base.is_contiguous() else base
                if base.numel():
                    base.view(-1)[:1].mul_(2)
            if x is not leaf:
                tensors.append(x)
            if other == "scalar":
                y = 2.5
            elif other == "self":
                y = x
            else:
                y = mt.tensor(build(mt, spec).detach().numpy(), dtype=x.dtype) if other == "same" else \
                    mt.tensor(1.25, dtype=x.dtype)
                y = y.reshape(x.shape) if other == "same" else y
                if y_grad:
                    y.requires_grad_()
                tensors.append(y)
        return tensors, x, y

    return make


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # sums of inf - inf, both paths
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(op=st.sampled_from(sorted(OPS)),
       spec=tensor_specs(dtypes=("float32", "float64"), layouts=("contiguous",), max_dims=3),
       other=st.sampled_from(["same", "0-d", "scalar", "self"]), y_grad=st.booleans(),
       x_kind=st.sampled_from(["leaf", "parameter", "node output", "view of leaf", "stale view"]),
       modify=st.sampled_from([None, 0, -1]))
def test_compiled_methods_build_the_full_paths_graph(op, spec, other, y_grad, x_kind, modify):
    make = _inputs(spec, other, x_kind, y_grad)
    if x_kind in ("leaf", "parameter") and other == "same" and modify is None:
        # the fast path must really run here, or the comparison would be vacuous
        tensors, x, y = make()
        assert fast_when_on(_ran_full_path(lambda: OPS[op](x, y)))
    assert_same_graph(make, OPS[op], modify)


def test_only_the_second_operand_requires_grad():
    def make():
        a, b = mt.ones(2, 3), mt.full((2, 3), 3.0, requires_grad=True)
        return [a, b], a, b

    for op in ("add", "sub", "mul"):
        assert_same_graph(make, OPS[op])


def test_grad_mode_off_records_nothing():
    def make():
        a = mt.ones(2, 3, requires_grad=True)
        return [a], a, a

    for op in OPS.values():
        with mt.no_grad():
            assert_same_graph(make, op)


def test_repeated_use_of_a_leaf_shares_its_accumulate_grad():
    # while a leaf's graph is alive, every op on it points at the same AccumulateGrad
    a = mt.ones(3, requires_grad=True)
    outs = [a * a, a + 1, a.relu(), a.sum()]
    accs = {id(fn) for o in outs for fn, _ in o.grad_fn.next_functions if fn is not None}
    assert len(accs) == 1
    del outs
    b = a * 2  # the old graph died: a fresh node, as in the full path
    assert isinstance(b.grad_fn.next_functions[0][0], AccumulateGrad)


def test_nodes_have_no_instance_dict():
    out = mt.ones(2, requires_grad=True) * 3
    try:
        out.grad_fn.foo = 1
    except AttributeError:
        pass
    else:
        raise AssertionError("a node accepted a new attribute")
    assert out.grad_fn.name() == "MulBackward0" and repr(out.grad_fn).startswith("<MulBackward0 object at 0x")
    assert out.grad_fn._saved_other.item() == 3  # a wrapped number, as a 0-d tensor


# -- record_computed called directly (how other compiled fast paths use it) -------------------------


def _direct(op, args):
    """``op(*args)`` computed under no_grad, then recorded by the compiled recorder."""
    with mt.no_grad():
        out = op(*args)
    r = _recording_twin._record_computed(op, args, out)
    return out if r is NotImplemented else r


def _direct_reference(op, args):
    """The same with the readable ``recording._record_computed``, which the compiled one mirrors."""
    with mt.no_grad():
        out = op(*args)
    r = recording._record_computed(op, args, out)
    return out if r is NotImplemented else r


DIRECT = {
    "exp": (aten.exp.default, lambda x, y: (x,)),
    "tanh": (aten.tanh.default, lambda x, y: (x,)),
    "mul": (aten.mul.Tensor, lambda x, y: (x, y)),
    "div": (aten.div.Tensor, lambda x, y: (x, y)),
    "mm": (aten.mm.default, lambda x, y: (x.reshape(2, 3), y.reshape(3, 2))),
    "view": (aten.view.default, lambda x, y: (x, [3, 2])),
    "t": (aten.t.default, lambda x, y: (x.reshape(2, 3),)),
    "slice": (aten.slice.Tensor, lambda x, y: (x, 0, 1, 4)),
    "sum dim": (aten.sum.dim_IntList, lambda x, y: (x, [0], True)),
    "max dim": (aten.max.dim, lambda x, y: (x.reshape(2, 3), 1)),
    "softmax": (aten._softmax.default, lambda x, y: (x.reshape(2, 3), 1, False)),
}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(DIRECT)), x_grad=st.booleans(), y_grad=st.booleans(),
       x_kind=st.sampled_from(["leaf", "node output"]), modify=st.sampled_from([None, 0]))
def test_record_computed_matches_the_full_path(name, x_grad, y_grad, x_kind, modify):
    op, args_of = DIRECT[name]

    def make():
        with full_path():
            leaf = mt.tensor(np.linspace(-1, 1, 6, dtype=np.float32), requires_grad=x_grad)
            x = leaf * 1.5 if x_kind == "node output" else leaf
            y = mt.tensor(np.linspace(0.5, 2, 6, dtype=np.float32), requires_grad=y_grad)
            tensors = [leaf, y] + ([x] if x is not leaf else [])
        return tensors, x, y

    def run(path):
        tensors, x, y = make()
        args = args_of(x, y)
        before = Node()._sequence_nr()
        out = path(op, args)
        main = out[0] if isinstance(out, tuple) else out
        return _result_signature(main, tensors, before), \
            _backward_outcome(main, tensors, modify) if main.requires_grad else None

    fast = run(_direct)
    readable = run(_direct_reference)
    with reference_path():
        full = run(lambda op, args: op(*args))
    assert fast == full
    assert readable == full


def test_record_computed_declines_when_only_an_index_requires_grad():
    # nothing differentiable requires grad: NotImplemented, the caller returns its result as is
    x = mt.ones(3)
    idx = mt.tensor([0, 2])
    with mt.no_grad():
        out = aten.index_select.default(x, 0, idx)
    assert _recording_twin._record_computed(aten.index_select.default, (x, 0, idx), out) is NotImplemented
    assert out.grad_fn is None and not out.requires_grad


# -- every other op: the compiled record_simple against the readable one ---------------------------

PUBLIC = {
    "exp": lambda x, y: x.exp(), "tanh": lambda x, y: x.tanh(), "div": lambda x, y: x / y,
    "pow": lambda x, y: x ** 2, "matmul": lambda x, y: x.reshape(2, 3) @ y.reshape(3, 2),
    "view": lambda x, y: x.view(3, 2), "t": lambda x, y: x.reshape(2, 3).t(), "getitem": lambda x, y: x[1:4],
    "softmax": lambda x, y: mt.softmax(x.reshape(2, 3), 1), "max dim": lambda x, y: x.reshape(2, 3).max(1)[0],
    "sort": lambda x, y: x.sort()[0], "where": lambda x, y: mt.where(x > 0, x, y),
    "cat": lambda x, y: mt.cat([x, y]), "mean": lambda x, y: x.mean(),
    "stack": lambda x, y: mt.stack([x * 2, y], 1), "cat with a plain tensor": lambda x, y: mt.cat([mt.ones(2), x]),
    "cat of views": lambda x, y: mt.cat([x[:3], y.view(2, 3)[1], x.view(3, 2).t().reshape(6)]),
    "einsum": lambda x, y: mt.einsum("i,i->", x, y), "in place": lambda x, y: (x * 1).add_(y),
    "to float64": lambda x, y: x.double(), "clone": lambda x, y: x.clone(), "expand": lambda x, y: x[:1].expand(4),
    "in place then op": lambda x, y: (x * 1).mul_(y).exp(),
}


def test_public_ops_build_the_same_graph_with_both_recorders():
    def make():
        leaf = mt.tensor(np.linspace(-1, 1, 6, dtype=np.float32), requires_grad=True)
        y = mt.tensor(np.linspace(0.5, 2, 6, dtype=np.float32), requires_grad=True)
        return [leaf, y], leaf, y

    for name, fn in PUBLIC.items():
        for modify in (None, 0):
            fast = _run_case(make, fn, modify)
            with reference_path():
                full = _run_case(make, fn, modify)
            assert fast == full, name


def test_graph_objects_have_no_instance_dict_and_can_be_weakly_referenced():
    a = mt.ones(2, requires_grad=True)
    out = (a * 3).relu()
    node, acc = out.grad_fn, out.grad_fn.next_functions[0][0].next_functions[0][0]
    saved_scalar = out.grad_fn.next_functions[0][0]._raw_saved_other
    saved_result = node._raw_saved_result
    assert isinstance(acc, AccumulateGrad) and isinstance(saved_scalar, SavedScalar)
    for obj in (node, acc, saved_scalar, saved_result):
        assert not hasattr(obj, "__dict__"), type(obj).__name__
        try:
            obj.some_new_attribute = 1
        except AttributeError:
            pass
        else:
            raise AssertionError(f"{type(obj).__name__} accepted a new attribute")
    assert weakref.ref(node)() is node and weakref.ref(acc)() is acc


def test_a_graph_is_freed_by_reference_counting_alone():
    # as in PyTorch: once the output is gone, its node, the leaves' AccumulateGrad nodes and the
    # saved tensors go at once (no cycle for the garbage collector to find), and the leaves'
    # use counts are back to 1
    a, b = mt.ones(3, requires_grad=True), mt.ones(3, requires_grad=True)
    gc.disable()
    try:
        out = (a * b).sum()
        refs = [weakref.ref(out.grad_fn), weakref.ref(out.grad_fn.next_functions[0][0])]
        refs += [weakref.ref(fn) for fn, _ in out.grad_fn.next_functions[0][0].next_functions]
        assert a._use_count() == 3  # the handle, the saved `self`, the AccumulateGrad (3 in PyTorch 2.13 too)
        del out
        assert [r() for r in refs] == [None] * len(refs)
        assert a._use_count() == 1 and b._use_count() == 1
    finally:
        gc.enable()


def test_saved_tensor_hooks_see_the_same_calls_with_both_recorders():
    # pack hooks run while the node is made (before the kernel), unpack hooks during backward
    def run():
        calls = []

        def pack(t):
            calls.append(("pack", tuple(t.shape), t.requires_grad))
            return t

        def unpack(t):
            calls.append(("unpack", tuple(t.shape)))
            return t

        x = mt.tensor(np.linspace(-1, 1, 6, dtype=np.float32), requires_grad=True)
        with mt.autograd.graph.saved_tensors_hooks(pack, unpack):
            out = ((x * x).exp() * 2 + x.reshape(2, 3).t().reshape(6)).relu().sum()
        out.backward()
        return calls, np.asarray(x.grad._array).tobytes()

    fast = run()
    with reference_path():
        full = run()
    assert fast == full and fast[0]


def test_arguments_given_by_keyword_are_saved_alike():
    ops = {
        "add alpha": lambda x, y: aten.add.Tensor(x, y, alpha=2),
        "sub alpha": lambda x, y: aten.sub.Tensor(x, y, alpha=0.5),
        "sum keepdim": lambda x, y: aten.sum.dim_IntList(x.reshape(2, 3), [1], keepdim=True),
        "softmax": lambda x, y: aten._softmax.default(x.reshape(2, 3), dim=1, half_to_float=False),
    }

    def make():
        x = mt.tensor(np.linspace(-1, 1, 6, dtype=np.float32), requires_grad=True)
        y = mt.tensor(np.linspace(0.5, 2, 6, dtype=np.float32), requires_grad=True)
        return [x, y], x, y

    for name, fn in ops.items():
        fast = _run_case(make, fn, None)
        with reference_path():
            full = _run_case(make, fn, None)
        assert fast == full, name


def _in_place_cases():
    """In-place ops (recorded by the general recorder, which rebases history), as (name, fn)."""
    def through_view(x, y):
        base = x * 1
        base.view(2, 3)[0].mul_(y[:3])   # CopySlices on the base, AsStridedBackward0 on the view
        return base

    def stale_view(x, y):
        base = x * 1
        v = base[1:4]
        base.add_(1)
        return v * y[:3]   # v's node is regenerated from the base's new history

    def relu_then_use(x, y):
        h = x * y
        h.relu_()
        return h.exp()

    return {
        "add_": lambda x, y: (x * 1).add_(y), "mul_ saves a copy of self": lambda x, y: (x * 1).mul_(y),
        "relu_": relu_then_use, "through a view": through_view, "stale view": stale_view,
        "plain self, grad other": lambda x, y: mt.zeros(6).add_(y, alpha=2),
        "leaf that requires grad (error)": lambda x, y: x.add_(1),
        "view of a leaf (error)": lambda x, y: x[:2].mul_(2),
        "retain_grad follows": lambda x, y: _retained_then_in_place(x, y),
    }


def _retained_then_in_place(x, y):
    h = x * 2
    h.retain_grad()
    h.mul_(y)
    return h


def _outcome_or_error(make, fn, modify):
    try:
        return _run_case(make, fn, modify)
    except RuntimeError as e:
        return ("error", str(e))


def test_in_place_ops_build_the_same_graph_with_both_recorders():
    def make():
        x = mt.tensor(np.linspace(-1, 1, 6, dtype=np.float32), requires_grad=True)
        y = mt.tensor(np.linspace(0.5, 2, 6, dtype=np.float32), requires_grad=True)
        return [x, y], x, y

    for name, fn in _in_place_cases().items():
        for modify in (None, 1):
            fast = _outcome_or_error(make, fn, modify)
            with reference_path():
                full = _outcome_or_error(make, fn, modify)
            assert fast == full, name


def test_a_handle_without_payload_raises_as_in_the_readable_layer():
    # TensorBase.__new__ makes a handle with no payload; the compiled layer must raise Python's
    # AttributeError, not read through a missing payload
    from minitorch_nn._C import TensorBase

    def errors():
        empty, a = TensorBase.__new__(mt.Tensor), mt.ones(2, requires_grad=True)
        out = []
        for fn in (lambda: aten.exp.default(empty), lambda: aten.mul.Tensor(a, empty), lambda: aten.mul.Tensor(empty, a),
                   lambda: aten.cat.default([a, empty]), lambda: a * empty, lambda: empty + a):
            try:
                fn()
            except AttributeError as e:
                out.append(str(e))
        return out

    fast = errors()
    with reference_path():
        full = errors()
    assert fast == full and len(fast) == 6


def test_a_derivative_whose_node_class_is_not_an_op_node_is_recorded_by_the_readable_layer():
    # a student's own node class without OpNode's C layout: the compiled recorder must not fill
    # it, the readable one makes it (and the compiled methods step aside)
    from minitorch_nn.autograd.graph import Node
    from minitorch_nn.autograd.recording import Derivative, OpNode

    class StudentNode(Node):
        __slots__ = ("_derivative", "_saved", "_needs", "_output_meta")

        def __init__(self, derivative, next_functions=(), input_metadata=(), needs=None):
            super().__init__()
            self.next_functions, self._input_metadata = next_functions, input_metadata
            self._derivative, self._saved, self._needs, self._output_meta = derivative, {}, needs or {}, ()

        _value, apply, _apply, release_variables = OpNode._value, OpNode.apply, OpNode._apply, OpNode.release_variables

    x = mt.tensor([0.5, -1.0], requires_grad=True)
    for op, fn in ((aten.exp.default, lambda: x.exp()), (aten.mul.Tensor, lambda: x * x)):
        saved = op.derivative
        d = Derivative(op, "StudentBackward", {name: f for name, f, _, _ in saved.formulas})
        d.node_cls = StudentNode
        op.derivative = d
        try:
            out = fn()
            assert type(out.grad_fn) is StudentNode and out.grad_fn._saved
            out.sum().backward()
        finally:
            op.derivative = saved
    assert x.grad is not None


def test_input_metadata_of_one_shape_and_several_dtypes_is_each_inputs_own():
    # The compiled recorder shares one (sizes, dtype, device) tuple per shape between nodes; an
    # input of the same shape but another dtype must still get its own dtype (and the readable
    # recorder's value).
    a = mt.ones(3, 4, requires_grad=True)
    b = mt.ones(3, 4, dtype=mt.float64, requires_grad=True)
    for _ in range(2):
        ea, eb = a.exp(), b.exp()
        assert ea.grad_fn._input_metadata == (((3, 4), mt.float32, a.device),)
        assert eb.grad_fn._input_metadata == (((3, 4), mt.float64, b.device),)
    with mt.backends.compiled.flags(enabled=False):
        assert b.exp().grad_fn._input_metadata == eb.grad_fn._input_metadata
    (ea.sum() + eb.sum()).backward()
    assert a.grad.dtype is mt.float32 and b.grad.dtype is mt.float64
