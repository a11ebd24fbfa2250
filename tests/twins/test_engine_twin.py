"""The backward engine's compiled twin against its readable original, ``run_backward``.

``engine.run_backward`` hands every pass to its compiled twin (``_ext/twins/autograd/engine.pyx``) while
the switch ``minitorch_nn.backends.compiled`` is on and the twin's guards hold; with the switch off
its own loop runs. Every scenario here runs both ways, and everything observable must agree:
gradients (values, strides, and whether ``.grad`` is the formula's own result or a copy), the order
of hooks of every kind, the aten ops a ``TorchDispatchMode`` sees, what ``__torch_function__`` sees,
and error messages. The guards are tested too: replacing an engine function the twin relies on
sends the pass through the readable loop, which then calls the replacement.
"""

import os
import sys
import warnings

import pytest

import minitorch_nn as mt
from minitorch_nn.autograd import engine
from minitorch_nn.backends import compiled
from minitorch_nn.utils._python_dispatch import TorchDispatchMode


def _both(scenario, *args):
    """``scenario(*args)`` with the compiled twins on, then off: ``[twin, readable]``."""
    results = []
    for on in (True, False):
        with compiled.flags(enabled=on):
            results.append(scenario(*args))
    return results


@pytest.fixture
def switch_on():
    """The tests of the twin itself run with the switch on, whatever MINITORCH_NN_COMPILED says."""
    with compiled.flags(enabled=True):
        yield


def _count_twin_calls(monkeypatch):
    calls = []
    real = engine._twin.run_backward
    monkeypatch.setattr(engine._twin, "run_backward", lambda *a: calls.append(1) or real(*a), raising=False)
    return calls


def test_the_twin_is_built_and_runs_only_with_the_switch_on(monkeypatch, switch_on):
    # guards the comparisons below: the twin exists, backward() goes through it with the switch
    # on, and not with it off
    assert engine._twin is not None, "build it: python setup.py build_ext --inplace"
    calls = _count_twin_calls(monkeypatch)
    x = mt.ones(2, requires_grad=True)
    (x * 2).sum().backward()
    assert calls == [1] and x.grad.tolist() == [2.0, 2.0]
    with compiled.flags(enabled=False):
        (x * 2).sum().backward()
        mt.autograd.grad((x * 3).sum(), x)
    assert calls == [1] and x.grad.tolist() == [4.0, 4.0]
    mt.autograd.grad((x * 3).sum(), x)   # autograd.grad goes through the twin too
    assert calls == [1, 1]


def test_with_the_switch_off_the_readable_loop_runs_line_by_line():
    # the lines inside run_backward's `while ready:` loop run once per node
    code = engine.run_backward.__code__
    lines = []

    def tracer(frame, event, arg):
        if frame.f_code is code:
            if event == "line":
                lines.append(frame.f_lineno)
            return tracer
        return None

    x = mt.ones(3, requires_grad=True)
    loss = (x.exp() * 2).sum()
    with compiled.flags(enabled=False):
        sys.settrace(tracer)
        try:
            loss.backward()
        finally:
            sys.settrace(None)
    pop_line = next(i for i, text in enumerate(_source_lines(engine.run_backward), code.co_firstlineno)
                    if "node = ready.pop()" in text)
    assert lines.count(pop_line) == 4   # SumBackward0, MulBackward0, ExpBackward0, AccumulateGrad
    assert x.grad.tolist() == (mt.ones(3).exp() * 2).tolist()


def _source_lines(fn):
    import inspect

    return inspect.getsourcelines(fn)[0]


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
def test_twin_matches_the_readable_loop(scenario):
    twin, readable = _both(scenario)
    assert twin == readable


def _grad_with_inputs():
    # backward(inputs=...) and autograd.grad: only the nodes leading to the inputs run
    log = []
    x, w = _leaves(2, log)
    h = _tag(x * w, "h", log)
    h.retain_grad()
    out = _tag(h.exp() * x, "out", log)
    gx, gh = mt.autograd.grad(out.sum(), [x, h], retain_graph=True)
    out.sum().backward(inputs=[h, w])
    return log, gx.tolist(), gh.tolist(), [_grad_state(t) for t in (x, w, h)]


def _grad_create_graph():
    x = mt.tensor([0.3, -0.7], requires_grad=True)
    (g,) = mt.autograd.grad((x.tanh() ** 3).sum(), x, create_graph=True)
    (gg,) = mt.autograd.grad(g.sum(), x)
    return g.tolist(), gg.tolist()


@pytest.mark.parametrize("scenario", [_grad_with_inputs, _grad_create_graph], ids=["inputs", "create_graph"])
def test_twin_matches_the_readable_loop_with_inputs(scenario):
    twin, readable = _both(scenario)
    assert twin == readable


@pytest.mark.parametrize("on", [True, False], ids=["switch on", "switch off"])
def test_every_backward_orders_the_graph_with_topological_order(monkeypatch, on):
    # the course's autograd-toposort task: every backward() goes through topological_order, and
    # a replaced one steps the twin aside
    def stub(roots):
        raise NotImplementedError("autograd-toposort")

    monkeypatch.setattr(engine, "topological_order", stub)
    with compiled.flags(enabled=on), pytest.raises(NotImplementedError, match="autograd-toposort"):
        (mt.ones(2, requires_grad=True) * 2).sum().backward()


@pytest.mark.parametrize("name", ["_send", "_validate", "count_dependencies", "_call_tensor_hooks", "_add_to_buffer"])
def test_a_replaced_engine_function_runs_with_the_switch_on(monkeypatch, name, switch_on):
    # the guard: an engine function the twin calls or copies, replaced at run time, steps the
    # twin aside, and the readable loop calls the replacement
    calls = []
    real = getattr(engine, name)
    monkeypatch.setattr(engine, name, lambda *a: calls.append(name) or real(*a))
    twin_calls = _count_twin_calls(monkeypatch)
    x = mt.ones(3, requires_grad=True)
    x.register_hook(lambda g: g)   # so that _call_tensor_hooks has work to do
    (x * mt.ones(2, 3, dtype=mt.float64)).float().sum().backward()   # a broadcast and a cast: _validate runs
    assert calls and twin_calls == []
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    monkeypatch.undo()
    (x * 1).sum().backward()
    assert engine._twin.guards_hold()


def test_a_replaced_ready_queue_method_runs_with_the_switch_on(monkeypatch, switch_on):
    from minitorch_nn.autograd.ready_queue import ReadyQueue

    pushed = []
    real = ReadyQueue.push
    monkeypatch.setattr(ReadyQueue, "push", lambda self, node: pushed.append(node.name()) or real(self, node))
    x = mt.ones(3, requires_grad=True)
    (x.exp() * 2).sum().backward()
    assert pushed == ["SumBackward0", "MulBackward0", "ExpBackward0", "torch::autograd::AccumulateGrad"]


def test_the_engines_originals_have_their_recorded_fingerprints():
    assert [compiled.original_changed(fn) for fn in engine._twin_originals()] == [None] * len(engine._twin_originals())


def test_an_edited_original_turns_the_twin_off_with_one_warning(monkeypatch):
    # a source edit, as the import-time check sees it: run_backward's code differs from the record
    # (one more constant, in the same file under the same name)
    code = engine.run_backward.__code__
    monkeypatch.setattr(engine.run_backward, "__code__", code.replace(co_consts=code.co_consts + ("an edit",)))
    monkeypatch.setattr(compiled, "_disabled_twins", {})
    assert "run_backward" in compiled.original_changed(engine.run_backward)
    with pytest.warns(RuntimeWarning, match="autograd.engine.*run_backward"):
        assert compiled.check_original("autograd.engine", *engine._twin_originals()) is False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert compiled.check_original("autograd.engine", *engine._twin_originals()) is False   # said once
    assert "autograd.engine" in compiled.disabled()
    monkeypatch.setattr(engine, "_twin", None)
    x = mt.ones(2, requires_grad=True)
    (x * 2).sum().backward()   # the (still working) edited function runs
    assert x.grad.tolist() == [2.0, 2.0]


def test_an_edit_to_run_backward_in_a_copy_of_the_package_takes_effect(tmp_path):
    # a learner's edit, as it happens: the source file changes, Python restarts; the compiled twin
    # finds run_backward's fingerprint changed, turns itself off with a warning, and the edited
    # loop runs with the switch on
    import shutil
    import subprocess

    package = os.path.dirname(mt.__file__)
    copy = tmp_path / "minitorch_nn"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    source = copy / "autograd" / "engine.py"
    text = source.read_text()
    assert text.count("            node = ready.pop()\n") == 1
    source.write_text(text.replace("            node = ready.pop()\n",
                                   "            node = ready.pop()\n            print('popped', node.name())\n"))
    program = ("import minitorch_nn as torch\n"
               "x = torch.ones(2, requires_grad=True)\n"
               "(x.exp() * 2).sum().backward()\n"
               "print(sorted(torch.backends.compiled.disabled()), x.grad.tolist())\n")
    done = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(tmp_path), "MINITORCH_NN_COMPILED": "1"}, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:4] == ["popped SumBackward0", "popped MulBackward0", "popped ExpBackward0",
                         "popped torch::autograd::AccumulateGrad"], done.stdout
    assert "'autograd.engine'" in lines[4] and "run_backward in autograd/engine.py" in done.stderr
