"""The backward engine's fast loops against its reference loop (``run_backward``).

``loss.backward()`` without ``inputs`` runs through ``_run_all``, a copy of ``run_backward``'s
loop written for speed, which hands the work to its compiled twin (``_ext/_engine_fast.pyx``)
when that is built. Every scenario here runs three times, through the compiled loop, the Python
``_run_all`` and the reference loop (the switches are ``engine.use_compiled_loop`` and
``engine.use_fast_loop``), and everything observable must agree: gradients (values, strides,
and whether ``.grad`` is the formula's own result or a copy), the order of hooks of every kind,
the aten ops a ``TorchDispatchMode`` sees, what ``__torch_function__`` sees, and error messages.
"""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitorch_nn as mt
from minitorch_nn.autograd import engine
from minitorch_nn.utils._python_dispatch import TorchDispatchMode

# (use_fast_loop, use_compiled_loop): the compiled loop (``_ext/_engine_fast.pyx``), its Python
# twin ``_run_all``, the reference loop ``run_backward``
_LOOPS = [(True, True), (True, False), (False, False)]


def _both(scenario, *args):
    """``scenario(*args)`` through the fast loops (compiled and Python) and through the reference
    loop: ``[fast, reference]`` once the two fast loops are seen to agree."""
    results = []
    for fast, compiled in _LOOPS:
        old = engine.use_fast_loop, engine.use_compiled_loop
        engine.use_fast_loop, engine.use_compiled_loop = fast, compiled
        try:
            results.append(scenario(*args))
        finally:
            engine.use_fast_loop, engine.use_compiled_loop = old
    assert results[0] == results[1], "the compiled loop and its Python twin disagree"
    return results[1:]


def test_the_compiled_loop_is_built_and_runs(monkeypatch):
    # guards the three-way comparison: the compiled module exists and backward() goes through it
    assert engine._compiled is not None, "build it: python setup.py build_ext --inplace"
    calls = []
    real = engine._compiled.run_all
    monkeypatch.setattr(engine._compiled, "run_all", lambda *a: calls.append(1) or real(*a), raising=False)
    x = mt.ones(2, requires_grad=True)
    (x * 2).sum().backward()
    assert calls == [1] and x.grad.tolist() == [2.0, 2.0]


def _grad_state(t):
    g = t.grad
    if g is None:
        return None
    return (g.numpy().tolist(), g.stride(), str(g.dtype), g.grad_fn is not None)


def _tag(t, name, log):
    t.grad_fn.register_hook(lambda gi, go: log.append(name))
    t.grad_fn.register_prehook(lambda go: log.append("pre_" + name))
    return t


def _leaves(n, log, shape=(3,)):
    out = []
    for i in range(n):
        leaf = mt.ones(shape, requires_grad=True)
        leaf.register_post_accumulate_grad_hook(lambda t, i=i: log.append(f"acc{i}"))
        out.append(leaf)
    return out


def _hooks_everywhere():
    log = []
    a, b, c = _leaves(3, log)
    a.register_hook(lambda g: log.append("hook_a"))
    p = _tag(a * 2, "p", log)
    q = _tag(b.exp(), "q", log)
    q.register_hook(lambda g: log.append("hook_q") or g * 2)   # replaces the gradient
    r = _tag(p + q, "r", log)
    r.retain_grad()
    s = _tag(c * 3, "s", log)
    v = _tag(s * r, "v", log)
    w = _tag(r.sin() + v, "w", log)
    w.sum().backward()
    return log, [_grad_state(t) for t in (a, b, c, r)]


def _six_leaves_tie():
    # six AccumulateGrad nodes ready at once: the heap's tie order is visible to hooks
    log = []
    leaves = _leaves(6, log)
    mt.stack(leaves).sum().backward()
    return log


def _stealing_and_layout():
    x = mt.ones(3, 2).t().detach().requires_grad_()
    (x * 2).sum().backward()
    y = mt.ones(3, requires_grad=True)
    g = mt.ones(3)
    y.backward(g)
    z = mt.ones(3, requires_grad=True)
    (z * z).sum().backward()           # two gradients summed in the buffer: still stolen
    z_first = z.grad
    (z * 3).sum().backward()           # accumulated in place
    return (x.grad.stride(), y.grad.data_ptr() == g.data_ptr(), _grad_state(z), z.grad is z_first)


def _dispatch_ops():
    ops = []

    class Recorder(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            ops.append(str(func))
            return func(*args, **(kwargs or {}))

    x = mt.ones(3, requires_grad=True)
    w = mt.full((2, 3), 0.5, requires_grad=True)
    d = mt.ones(2, 3, dtype=mt.float64, requires_grad=True)
    with Recorder():
        ((x * w).tanh() * x).sum().backward()
        (x * x).sum().backward()
        z = mt.ones(3, requires_grad=True)
        (z * z).sum().backward()   # two gradients summed in z's buffer: stolen (aten.detach)
        (d.float() * w).sum().backward()
    return ops, [_grad_state(t) for t in (x, w, d)]


def _create_graph_double_backward():
    x = mt.tensor([0.5, -1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (x.tanh() * x).sum().backward(create_graph=True)
    g = x.grad
    x.grad = None
    g.sum().backward()
    return _grad_state(x), g.grad_fn is not None


def _errors():
    messages = []
    x = mt.ones(3, requires_grad=True)
    y = (x * x).sum()
    y.backward()
    try:
        y.backward()
    except RuntimeError as e:
        messages.append(str(e))
    z = x * 2
    out = (z * z).sum()
    with mt.no_grad():
        z.add_(1)
    try:
        out.backward()
    except RuntimeError as e:
        messages.append(str(e))
    return messages


def _torch_function_subclass():
    seen = []

    class Logged(mt.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(getattr(func, "__name__", str(func)))
            return super().__torch_function__(func, types, args, kwargs or {})

    x = mt.ones(3, requires_grad=True)
    s = mt.full((3,), 2.0).as_subclass(Logged)
    with mt._C.DisableTorchFunctionSubclass():
        y = (x * s).exp()
    y.register_hook(lambda g: seen.append("hook") or g * s)
    seen.clear()
    y.sum().backward()
    return seen, _grad_state(x)


def _torch_function_seen_by_user_code():
    # With a live __torch_function__ class around, the engine's own work must not reach it, and
    # user code (a custom Function's backward, hooks of every kind) must, as in the reference loop.
    seen = []

    class Logged(mt.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(getattr(func, "__name__", str(func)))
            return super().__torch_function__(func, types, args, kwargs or {})

    s = mt.full((3,), 2.0).as_subclass(Logged)

    class Scale(mt.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t * 3

        @staticmethod
        def backward(ctx, g):
            seen.append("Function.backward")
            return g * s

    x = mt.ones(3, requires_grad=True)
    y = mt.ones(3, requires_grad=True)
    x.register_post_accumulate_grad_hook(lambda t: seen.append("post_acc") or (t.grad * s))
    y.register_hook(lambda g: seen.append("leaf_hook") or g * 1)
    with mt._C.DisableTorchFunctionSubclass():
        a = (x * s).exp()
        b = Scale.apply(a) * y
        c = b.sin()
    c.grad_fn.register_prehook(lambda go: seen.append("prehook") or (go[0] * s,))
    b.grad_fn.register_hook(lambda gi, go: seen.append("posthook"))
    seen.clear()
    c.sum().backward()
    return seen, _grad_state(x), _grad_state(y)


def _several_roots_and_retain_graph():
    # two roots, one reachable from the other; then the same graph again (retain_graph)
    log = []
    x, w = _leaves(2, log)
    y1 = _tag(x * w, "y1", log)
    y2 = _tag(y1.exp() * x, "y2", log)
    mt.autograd.backward([y2, y1], [mt.ones(3), mt.full((3,), 0.5)], retain_graph=True)
    first = [_grad_state(t) for t in (x, w)]
    y2.sum().backward()
    return log, first, [_grad_state(t) for t in (x, w)]


def _no_gradient_reaches_a_node():
    # a custom Function that sends nothing back: the nodes before it get no gradient, and the
    # leaf is still reached through the other path
    class Stop(mt.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t * 1

        @staticmethod
        def backward(ctx, g):
            return None

    log = []
    (x,) = _leaves(1, log)
    a = _tag(x * 2, "a", log)
    (Stop.apply(a) + x * 3).sum().backward()
    return log, _grad_state(x)


def _nested_backward_in_hook():
    x = mt.ones(3, requires_grad=True)
    inner = []

    def hook(g):
        y = mt.ones(3, requires_grad=True)
        with mt.enable_grad():   # backward runs with grad mode off
            (y * 4).sum().backward()
        inner.append(_grad_state(y))

    t = x * 2
    t.register_hook(hook)
    (t * x).sum().backward()
    return inner, _grad_state(x)


SCENARIOS = [_hooks_everywhere, _six_leaves_tie, _stealing_and_layout, _dispatch_ops,
             _create_graph_double_backward, _errors, _torch_function_subclass, _torch_function_seen_by_user_code,
             _several_roots_and_retain_graph, _no_gradient_reaches_a_node, _nested_backward_in_hook]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__.strip("_"))
def test_fast_loop_matches_reference_loop(scenario):
    fast, reference = _both(scenario)
    assert fast == reference


def test_reference_loop_really_runs_when_switched_off(monkeypatch):
    # guards the comparison above: with the switch off, the fast loop is not entered
    calls = []
    monkeypatch.setattr(engine, "_run_all", lambda *a: calls.append(a))
    engine.use_fast_loop = False
    try:
        (mt.ones(2, requires_grad=True) * 2).sum().backward()
    finally:
        engine.use_fast_loop = True
    assert calls == []
    (mt.ones(2, requires_grad=True) * 2).sum().backward()
    assert len(calls) == 1


@pytest.mark.parametrize("fast, compiled", _LOOPS)
def test_both_loops_order_the_graph_with_topological_order(monkeypatch, fast, compiled):
    # the course's autograd-toposort task: every backward() goes through topological_order
    def stub(roots):
        raise NotImplementedError("autograd-toposort")

    monkeypatch.setattr(engine, "topological_order", stub)
    monkeypatch.setattr(engine, "use_fast_loop", fast)
    monkeypatch.setattr(engine, "use_compiled_loop", compiled)
    with pytest.raises(NotImplementedError, match="autograd-toposort"):
        (mt.ones(2, requires_grad=True) * 2).sum().backward()


_UNARY = ["exp", "tanh", "sigmoid", "sin", "neg"]


@st.composite
def _programs(draw):
    """A random small DAG: each step combines earlier values with a binary op or maps one with
    a unary op; some values get hooks or retain_grad."""
    n_leaves = draw(st.integers(1, 3))
    steps = []
    for i in range(draw(st.integers(1, 8))):
        n = n_leaves + i
        kind = draw(st.sampled_from(["add", "mul", "sub", "unary", "broadcast"]))
        steps.append((kind, draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1)),
                      draw(st.sampled_from(_UNARY)), draw(st.sampled_from([None, "hook", "retain", "node"]))))
    return n_leaves, steps


def _run_program(program, data):
    n_leaves, steps = program
    log = []
    values = [mt.tensor(data[i], dtype=mt.float32, requires_grad=True) for i in range(n_leaves)]
    for i, leaf in enumerate(values):
        leaf.register_hook(lambda g, i=i: log.append(("leaf", i, g.numpy().tolist())))
    retained = []
    for k, (kind, i, j, unary, extra) in enumerate(steps):
        a, b = values[i], values[j]
        if kind == "add":
            v = a + b
        elif kind == "mul":
            v = a * b
        elif kind == "sub":
            v = a - b
        elif kind == "broadcast":
            v = a * b[:1]   # a gradient summed back from a broadcast
        else:
            v = getattr(a, unary)()
        if extra == "hook":
            v.register_hook(lambda g, k=k: log.append(("hook", k, g.numpy().tolist())))
        elif extra == "retain":
            v.retain_grad()
            retained.append(v)
        elif extra == "node":
            v.grad_fn.register_hook(lambda gi, go, k=k: log.append(("node", k)))
        values.append(v)
    values[-1].sum().backward()
    grads = [_grad_state(t) for t in values[:n_leaves] + retained]
    return log, grads


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program=_programs(), seed=st.integers(0, 2**16))
def test_random_graphs_run_the_same_in_both_loops(program, seed):
    data = np.random.default_rng(seed).uniform(-1, 1, size=(3, 4)).astype(np.float32)
    fast, reference = _both(_run_program, program, data)
    assert fast == reference


class _Seq:
    def __init__(self, seq_nr):
        self._seq_nr = seq_nr


@settings(max_examples=60, deadline=None)
@given(ops=st.lists(st.one_of(st.none(), st.sampled_from([0, 1, 2, 3, 2**64 - 1])), max_size=40))
def test_compiled_ready_queue_pops_in_ready_queue_order(ops):
    # the C heap must break ties among equal sequence numbers exactly as ReadyQueue (heapq) does;
    # None pops, a number pushes a node with that number
    from minitorch_nn.autograd.ready_queue import ReadyQueue

    if engine._compiled is None:
        pytest.skip("the compiled engine is not built")
    ours, theirs = engine._compiled._Heap(), ReadyQueue()
    popped_ours, popped_theirs = [], []
    for op in ops + [None] * len(ops):
        if op is not None:
            node = _Seq(op)
            ours.push(node)
            theirs.push(node)
        elif theirs:
            popped_theirs.append(theirs.pop())
            popped_ours.append(ours.pop())
        assert len(ours) == len(theirs)
    assert popped_ours == popped_theirs


def test_compiled_loop_calls_a_patched_op_node_apply(monkeypatch):
    # the compiled loop runs its own copy of OpNode.apply/release_variables only while a node's
    # class has OpNode's own methods; a class that overrides them gets its methods called
    x = mt.ones(3, requires_grad=True)
    y = x.exp()
    cls = type(y.grad_fn)
    calls = []
    real_apply, real_release = cls.apply, cls.release_variables
    monkeypatch.setattr(cls, "apply", lambda self, g: calls.append("apply") or real_apply(self, g), raising=False)
    monkeypatch.setattr(cls, "release_variables", lambda self: calls.append("release") or real_release(self),
                        raising=False)
    y.sum().backward()
    assert calls == ["apply", "release"]
    assert x.grad.tolist() == mt.ones(3).exp().tolist()
