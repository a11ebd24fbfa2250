"""The guards of the compiled twins: a twin steps aside as soon as what it mirrors changes.

For every op a twin computes, each everyday spelling of the op (``a + b``, ``torch.add(a, b)``,
``a.add(b)``...) is called with the switch on after

* a kernel of our own is registered for the op (``op.impl("cpu")(wrapper)``): the wrapper runs;
* the kernel's module attribute is rebound (``pointwise.add = other``): the twin steps aside and
  the registered kernel runs (the registry, not the attribute, is what the readable path calls);
* the op's derivative is replaced: the twin steps aside and the registered kernel runs;
* the Tensor method the twin stands in for is replaced: the new method runs, and flipping the
  switch leaves it in place.

Then the source guard, in a copy of the package (``test_an_edited_kernel_*``): a kernel edited in
the source turns its twin off at import, with a warning and an entry in ``disabled()``, and the
edit takes effect; and the switch itself, from the environment (``MINITORCH_NN_COMPILED=0``), in a
fresh process: nothing compiled is bound in place of a readable function, and the forward and
backward passes run the readable dispatcher, kernels, recorder and ``run_backward``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import minitorch_nn as mt
from minitorch_nn._ops import aten
from minitorch_nn._twins import _gate
from minitorch_nn._twins._functions import indexing as _indexing_twin
from minitorch_nn._twins.backends import views as _views_twin
from minitorch_nn._twins.backends.cpu import activations as _activations_twin
from minitorch_nn._twins.backends.cpu import factories as _factories_twin
from minitorch_nn._twins.backends.cpu import linalg as _linalg_twin
from minitorch_nn._twins.backends.cpu import nn_ops as _nn_ops_twin
from minitorch_nn._twins.backends.cpu import pointwise as _pointwise_twin
from minitorch_nn._twins.backends.cpu import random as _random_twin
from minitorch_nn._twins.backends.cpu import reduction as _reduction_twin
from minitorch_nn.backends import compiled
from minitorch_nn.nn import functional as F
from tests.twins.harness import kernel_calls, switch_on

ROOT = Path(__file__).resolve().parents[2]


def _operands():
    a = mt.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [3.0, -2.5, 0.125]])
    b = mt.tensor([[1.0, 2.0, -0.5], [0.5, -1.5, 2.5], [-3.0, 1.0, 0.75]])
    return a, b, mt.tensor([0.5, -1.0, 2.0]), a.reshape(1, 3, 3).expand(2, 3, 3).contiguous()


# op -> the everyday spellings that reach it (each a function of the operands a, b, v, batch)
SPELLINGS = {
    aten.add.Tensor: [lambda a, b, v, x3: a + b, lambda a, b, v, x3: 2 + a, lambda a, b, v, x3: a + 2.5,
                      lambda a, b, v, x3: mt.add(a, b), lambda a, b, v, x3: a.add(b)],
    aten.sub.Tensor: [lambda a, b, v, x3: a - b, lambda a, b, v, x3: a - 1, lambda a, b, v, x3: mt.sub(a, b),
                      lambda a, b, v, x3: a.sub(b)],
    aten.mul.Tensor: [lambda a, b, v, x3: a * b, lambda a, b, v, x3: 3 * a, lambda a, b, v, x3: mt.mul(a, b),
                      lambda a, b, v, x3: a.mul(b)],
    aten.div.Tensor: [lambda a, b, v, x3: a / b, lambda a, b, v, x3: a / 2, lambda a, b, v, x3: a.div(b),
                      lambda a, b, v, x3: mt.div(a, b)],
    aten.relu.default: [lambda a, b, v, x3: a.relu(), lambda a, b, v, x3: F.relu(a),
                        lambda a, b, v, x3: mt.nn.ReLU()(a)],
    aten.sum.default: [lambda a, b, v, x3: a.sum(), lambda a, b, v, x3: mt.sum(a)],
    aten.sum.dim_IntList: [lambda a, b, v, x3: a.sum(1), lambda a, b, v, x3: a.sum(-1, keepdim=True)],
    aten.exp.default: [lambda a, b, v, x3: a.exp(), lambda a, b, v, x3: mt.exp(a)],
    aten.tanh.default: [lambda a, b, v, x3: a.tanh(), lambda a, b, v, x3: mt.tanh(a)],
    aten.sigmoid.default: [lambda a, b, v, x3: a.sigmoid(), lambda a, b, v, x3: mt.sigmoid(a)],
    aten.neg.default: [lambda a, b, v, x3: -a, lambda a, b, v, x3: a.neg(), lambda a, b, v, x3: mt.neg(a)],
    aten.abs.default: [lambda a, b, v, x3: abs(a), lambda a, b, v, x3: a.abs()],
    aten.pow.Tensor_Scalar: [lambda a, b, v, x3: a ** 2, lambda a, b, v, x3: a.pow(3), lambda a, b, v, x3: a.square()],
    aten.mm.default: [lambda a, b, v, x3: a @ b, lambda a, b, v, x3: a.mm(b), lambda a, b, v, x3: mt.mm(a, b),
                      lambda a, b, v, x3: a.matmul(b), lambda a, b, v, x3: F.linear(a, b)],
    aten.mv.default: [lambda a, b, v, x3: a @ v, lambda a, b, v, x3: mt.matmul(a, v)],
    aten.dot.default: [lambda a, b, v, x3: v @ v],
    aten.t.default: [lambda a, b, v, x3: a.t(), lambda a, b, v, x3: mt.t(a)],
    aten.transpose.int: [lambda a, b, v, x3: a.transpose(0, 1), lambda a, b, v, x3: mt.transpose(a, 1, 0)],
    aten.view.default: [lambda a, b, v, x3: a.view(9), lambda a, b, v, x3: a.reshape(9),
                        lambda a, b, v, x3: a.flatten()],
    aten.unsqueeze.default: [lambda a, b, v, x3: a.unsqueeze(0), lambda a, b, v, x3: mt.unsqueeze(a, -1)],
    aten.permute.default: [lambda a, b, v, x3: a.permute(1, 0), lambda a, b, v, x3: mt.permute(a, (1, 0))],
    aten.expand.default: [lambda a, b, v, x3: v.expand(2, 3)],
    aten.select.int: [lambda a, b, v, x3: a[1]],
    aten.slice.Tensor: [lambda a, b, v, x3: a[0:2]],
    aten._softmax.default: [lambda a, b, v, x3: a.softmax(1), lambda a, b, v, x3: F.softmax(a, 1),
                            lambda a, b, v, x3: mt.softmax(a, 0)],
    aten._log_softmax.default: [lambda a, b, v, x3: a.log_softmax(1), lambda a, b, v, x3: F.log_softmax(a, 1)],
    aten.cat.default: [lambda a, b, v, x3: mt.cat([a, b])],
    aten.stack.default: [lambda a, b, v, x3: mt.stack([a, b])],
    aten.clone.default: [lambda a, b, v, x3: a.clone(), lambda a, b, v, x3: mt.clone(a)],
    aten.clamp.default: [lambda a, b, v, x3: a.clamp(-1, 1), lambda a, b, v, x3: mt.clamp(a, max=0.5)],
    aten.cumsum.default: [lambda a, b, v, x3: a.cumsum(1)],
    aten.bmm.default: [lambda a, b, v, x3: x3.bmm(x3), lambda a, b, v, x3: mt.bmm(x3, x3)],
    aten.masked_fill.Scalar: [lambda a, b, v, x3: a.masked_fill(a > 0, 0.0)],
    aten.where.self: [lambda a, b, v, x3: mt.where(a > 0, a, b)],
    aten.mse_loss.default: [lambda a, b, v, x3: F.mse_loss(a, b)],
    aten.gt.Scalar: [lambda a, b, v, x3: a > 0, lambda a, b, v, x3: a.gt(0)],
    aten.eq.Tensor: [lambda a, b, v, x3: a == b],
    aten.var.correction: [lambda a, b, v, x3: a.var()],
    aten.split.Tensor: [lambda a, b, v, x3: a.chunk(3)],
    aten.unbind.int: [lambda a, b, v, x3: a.unbind(0)],
    aten.silu.default: [lambda a, b, v, x3: F.silu(a)],
    aten.leaky_relu.default: [lambda a, b, v, x3: F.leaky_relu(a, 0.2)],
    aten.addmm.default: [lambda a, b, v, x3: F.linear(a, b, v)],
    aten.detach.default: [lambda a, b, v, x3: a.detach()],
    aten._to_copy.default: [lambda a, b, v, x3: a.to(mt.float64)],
    # (the random fills seeded first, so that two calls give the same values)
    aten.uniform_.default: [lambda a, b, v, x3: _seeded(lambda: a.clone().uniform_(-1.0, 1.0)),
                            lambda a, b, v, x3: _seeded(lambda: mt.nn.init.uniform_(a.clone(), 0.0, 2.0)),
                            lambda a, b, v, x3: _seeded(lambda: mt.nn.Linear(3, 2).weight)],
    aten.normal_.default: [lambda a, b, v, x3: _seeded(lambda: a.clone().normal_(0.0, 0.5)),
                           lambda a, b, v, x3: _seeded(lambda: mt.nn.init.normal_(mt.zeros(4, 8)))],
    aten.empty.memory_format: [lambda a, b, v, x3: mt.empty(2, 3), lambda a, b, v, x3: mt.empty((4,)),
                               lambda a, b, v, x3: _seeded(lambda: mt.nn.Linear(3, 2).bias)],
    aten.zeros.default: [lambda a, b, v, x3: mt.zeros(2, 3), lambda a, b, v, x3: mt.zeros((4,), dtype=mt.int64)],
    aten.ones.default: [lambda a, b, v, x3: mt.ones(2, 3), lambda a, b, v, x3: mt.ones([3], dtype=mt.float64)],
    aten.rand.default: [lambda a, b, v, x3: _seeded(lambda: mt.rand(2, 3))],
    aten.randn.default: [lambda a, b, v, x3: _seeded(lambda: mt.randn(5, 4))],
    aten.rand.generator: [lambda a, b, v, x3: mt.rand(3, generator=mt.Generator().manual_seed(1))],
    aten.randn.generator: [lambda a, b, v, x3: mt.randn(20, generator=mt.Generator().manual_seed(1))],
    aten.zero_.default: [lambda a, b, v, x3: a.clone().zero_(), lambda a, b, v, x3: mt.nn.init.zeros_(a.clone()),
                         lambda a, b, v, x3: mt.nn.LayerNorm(3).bias],
    aten.fill_.Scalar: [lambda a, b, v, x3: a.clone().fill_(2.0), lambda a, b, v, x3: mt.nn.init.ones_(a.clone()),
                        lambda a, b, v, x3: mt.nn.init.constant_(a.clone(), 0.5)],
}
IDS = [str(op) for op in SPELLINGS]


def _seeded(make):
    mt.manual_seed(0)
    return make()


def _key(op):
    return "cpu" if "cpu" in op._kernels else "any"


@pytest.mark.parametrize("op", SPELLINGS, ids=IDS)
def test_a_registered_kernel_of_ones_own_runs_for_every_spelling(op):
    a, b, v, x3 = _operands()
    key = _key(op)
    original = op._kernels[key]
    calls = []

    def counting(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    for spelling in SPELLINGS[op]:
        expected = spelling(a, b, v, x3)
        op.impl(key)(counting)
        try:
            calls.clear()
            got = spelling(a, b, v, x3)
            assert calls, f"{op}: the registered kernel did not run"
        finally:
            op.impl(key)(original)
        _assert_same(got, expected)


def _assert_same(got, expected):
    if isinstance(got, (tuple, list)):
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            _assert_same(g, e)
        return
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert got.detach().tolist() == expected.detach().tolist()


@pytest.mark.parametrize("op", SPELLINGS, ids=IDS)
def test_a_rebound_module_attribute_or_a_new_derivative_turns_the_twin_off(op):
    a, b, v, x3 = _operands()
    kernel = op._kernels[_key(op)]
    module = sys.modules[kernel.__module__]
    by_name = getattr(module, kernel.__name__, None) is kernel
    for spelling in SPELLINGS[op]:
        with kernel_calls([op]) as calls:
            spelling(a, b, v, x3)
        ran_before = bool(calls)   # (False: a twin took it; True with the switch off, or no twin for it)
        if by_name:
            setattr(module, kernel.__name__, lambda *args, **kwargs: kernel(*args, **kwargs))
            try:
                with kernel_calls([op]) as calls:
                    spelling(a, b, v, x3)
                assert calls, f"{op}: the twin ran although {kernel.__module__}.{kernel.__name__} was rebound"
            finally:
                setattr(module, kernel.__name__, kernel)
        saved = op.derivative
        op.derivative = None if saved is not None else object()
        try:
            with kernel_calls([op]) as calls:
                spelling(a, b, v, x3)
            assert calls, f"{op}: the twin ran although its derivative was replaced"
        finally:
            op.derivative = saved
        with kernel_calls([op]) as calls:   # everything restored: as before
            spelling(a, b, v, x3)
        assert bool(calls) == ran_before


def test_every_twin_holds_in_an_unchanged_checkout():
    a, b, v, x3 = _operands()
    took_twin = []
    for op, spellings in SPELLINGS.items():
        for spelling in spellings:
            with kernel_calls([op]) as calls:
                spelling(a, b, v, x3)
            took_twin.append(not calls)
        guard = _gate._twin_guard(op)
        assert guard is not None and guard.holds(), op
    assert compiled.disabled() == {}
    # with the switch on most spellings take a twin (the others have none: torch.sum(a)...); off, none
    assert (sum(took_twin) > len(took_twin) * 3 // 4) if switch_on() else not any(took_twin)


@pytest.mark.parametrize("name, call", [("relu", lambda a: a.relu()), ("exp", lambda a: a.exp()),
                                        ("__add__", lambda a: a + a), ("view", lambda a: a.view(9)),
                                        ("uniform_", lambda a: a.uniform_()), ("normal_", lambda a: a.normal_())])
def test_a_replaced_tensor_method_runs_and_stays_through_flips(name, call):
    a = _operands()[0]
    original = mt.Tensor.__dict__[name]
    calls = []

    def mine(self, *args, **kwargs):
        calls.append(1)
        return original(self, *args, **kwargs)

    setattr(mt.Tensor, name, mine)
    try:
        call(a)
        with compiled.flags(enabled=not compiled.enabled):
            call(a)
        call(a)
        assert calls == [1, 1, 1] and mt.Tensor.__dict__[name] is mine
    finally:
        setattr(mt.Tensor, name, original)


def test_the_bindings_follow_the_switch():
    bound = {"Tensor.relu": lambda: mt.Tensor.__dict__["relu"], "Tensor.__add__": lambda: mt.Tensor.__dict__["__add__"],
             "minitorch_nn.exp": lambda: mt.exp, "F.relu": lambda: F.relu, "F.softmax": lambda: F.softmax}
    compiled_objects = _compiled_functions()
    on = switch_on()
    for name, get in bound.items():
        assert (get() in compiled_objects) == on, name
    with compiled.flags(enabled=not on):
        for name, get in bound.items():
            assert (get() in compiled_objects) != on, name


def _compiled_functions():
    out = set()
    for twin in _TWIN_MODULES:
        for table in ("METHODS", "FUNCTIONS", "FUNCTIONAL"):
            out.update(getattr(twin, table, {}).values())
        out.update(getattr(twin, name) for name in dir(twin) if name.startswith(("tensor_", "function_", "functional_")))
    return out


_TWIN_MODULES = (_pointwise_twin, _activations_twin, _reduction_twin, _linalg_twin, _factories_twin, _nn_ops_twin,
                 _random_twin, _views_twin, _indexing_twin)


# -- in a fresh process --------------------------------------------------------------------------------

def _package_copy(tmp_path):
    """A copy of the package (sources, built extensions and the build's fingerprints)."""
    shutil.copytree(ROOT / "minitorch_nn", tmp_path / "minitorch_nn", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def _run(code, cwd, **env):
    environment = {**os.environ, "PYTHONPATH": str(cwd), **env}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, env=environment,
                          capture_output=True, text=True, timeout=300)


def test_an_edited_kernel_turns_its_twin_off_and_the_edit_takes_effect(tmp_path):
    if not switch_on():
        pytest.skip("one run is enough: the subprocess sets its own switch")
    copy = _package_copy(tmp_path)
    pointwise = copy / "minitorch_nn" / "backends" / "cpu" / "pointwise.py"
    source = pointwise.read_text()
    original = "def add(self, other, *, alpha=1):\n    return _out(_add(self, other, alpha))\n"
    assert original in source
    pointwise.write_text(source.replace(original, original.replace("alpha))", "2 * alpha))  # edited")))
    probe = _run("""
        import warnings
        warnings.simplefilter("always")
        import minitorch_nn as t
        a = t.ones(3)
        print((a + a).tolist(), t.add(a, a).tolist(), a.add(a).tolist(), (a * a).tolist())
        print(sorted(t.backends.compiled.disabled()))
        """, copy)
    assert probe.returncode == 0, probe.stderr
    lines = probe.stdout.splitlines()
    assert lines[0] == "[3.0, 3.0, 3.0] [3.0, 3.0, 3.0] [3.0, 3.0, 3.0] [1.0, 1.0, 1.0]"
    assert lines[1] == "['aten.add.Tensor (cpu kernel)']"
    assert "the compiled twin 'aten.add.Tensor (cpu kernel)' is off because add in backends/cpu/pointwise.py" \
           " has changed since its twin was written" in probe.stderr
    assert probe.stderr.count("compiled twin") == 1   # (once, though several spellings met it)


def test_an_edited_public_function_turns_off_the_twins_of_every_spelling(tmp_path):
    if not switch_on():
        pytest.skip("one run is enough: the subprocess sets its own switch")
    copy = _package_copy(tmp_path)
    functions = copy / "minitorch_nn" / "_functions" / "pointwise.py"
    source = functions.read_text()
    original = '    other = _check_operand(other, "add")\n'
    assert original in source
    functions.write_text(source.replace(original, original + "    other = other * 2  # edited\n", 1))
    probe = _run("""
        import warnings
        warnings.simplefilter("ignore")
        import minitorch_nn as t
        a = t.ones(3)
        print((a + a).tolist(), (2 + a).tolist(), t.add(a, a).tolist(), a.add(a).tolist(), (a - a).tolist())
        print(sorted(t.backends.compiled.disabled()))
        """, copy)
    assert probe.returncode == 0, probe.stderr
    values, disabled = probe.stdout.splitlines()
    assert values == "[3.0, 3.0, 3.0] [5.0, 5.0, 5.0] [3.0, 3.0, 3.0] [3.0, 3.0, 3.0] [0.0, 0.0, 0.0]"
    assert "Tensor.__add__" in disabled and "Tensor.add" in disabled and "minitorch_nn._functions.pointwise.add" in disabled


def test_an_edited_helper_of_a_kernel_turns_its_twins_off(tmp_path):
    if not switch_on():
        pytest.skip("one run is enough: the subprocess sets its own switch")
    copy = _package_copy(tmp_path)
    views = copy / "minitorch_nn" / "backends" / "views.py"
    source = views.read_text()
    views.write_text(source.replace("def compute_view_strides(", "def compute_view_strides(  # edited\n", 1))
    probe = _run("""
        import minitorch_nn as t
        print(t.ones(2, 3).view(6).shape)
        print(sorted(t.backends.compiled.disabled()))
        """, copy)
    # a comment changes no code: the twin stays on
    assert probe.returncode == 0 and probe.stdout.splitlines()[1] == "[]", probe.stderr
    views.write_text(source.replace("def compute_view_strides(", "def compute_view_strides(*args, _edited=True, **kw):\n"
                                    "    return _compute_view_strides_original(*args, **kw)\n\n\n"
                                    "def _compute_view_strides_original(", 1))
    probe = _run("""
        import minitorch_nn as t
        print(t.ones(2, 3).view(6).shape, t.ones(2, 3).reshape(3, 2).shape)
        print(sorted(t.backends.compiled.disabled()))
        """, copy)
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.splitlines()[0] == "torch.Size([6]) torch.Size([3, 2])"
    assert "aten.view.default (cpu kernel)" in probe.stdout.splitlines()[1]


def test_the_manifest_records_exactly_the_functions_the_twins_mirror():
    if not switch_on():
        pytest.skip("one run is enough: the subprocess sets its own switch")
    probe = _run("""
        import json
        import minitorch_nn, minitorch_nn.nn, minitorch_nn.optim, minitorch_nn.random, minitorch_nn.utils.data
        from minitorch_nn.backends import compiled
        compiled._remember_originals()
        print(sorted(compiled.disabled()))
        recorded = {(path, name) for path, names in json.load(open(compiled._MANIFEST_PATH)).items() for name in names}
        print(sorted(recorded - set(compiled._seen)))
        """, ROOT)
    assert probe.returncode == 0, probe.stderr
    changed, unused = probe.stdout.splitlines()
    assert changed == "[]", f"originals changed since their twins were written: {changed} (make the twins " \
                            "match, then run `make twins-manifest`)"
    assert unused == "[]", f"the manifest records functions no twin mirrors: {unused} (run `make twins-manifest`)"


def test_with_the_switch_off_from_the_environment_only_readable_code_runs(tmp_path):
    if not switch_on():
        pytest.skip("one run is enough: the subprocess sets its own switch")
    probe = _run("""
        import sys
        import minitorch_nn as t
        import importlib
        from minitorch_nn.nn import functional as F
        from minitorch_nn._functions import pointwise, linalg, reductions, shape
        assert not t.backends.compiled.enabled
        twins = set()
        for name in ("backends.cpu.pointwise", "backends.cpu.activations", "backends.cpu.reduction",
                     "backends.cpu.linalg", "backends.cpu.factories", "backends.cpu.nn_ops", "backends.views",
                     "_functions.indexing"):
            twin = importlib.import_module("minitorch_nn._twins." + name)
            for table in ("METHODS", "FUNCTIONS", "FUNCTIONAL"):
                twins.update(getattr(twin, table, {}).values())
            twins.update(getattr(twin, n) for n in dir(twin) if n.startswith(("tensor_", "function_", "functional_")))
        bound = [f"{getattr(ns, '__name__', ns)}.{k}" for ns in (t.Tensor, t, F, pointwise, linalg, reductions, shape)
                 for k, v in vars(ns).items() if any(v is twin for twin in twins)]
        print("bound:", bound)

        files = set()
        def trace(frame, event, arg):
            if event == "call":
                files.add((frame.f_code.co_filename.replace("\\\\", "/").split("minitorch_nn/")[-1],
                           frame.f_code.co_name))
        x = t.randn(4, 3)
        w = t.randn(3, 2, requires_grad=True)
        sys.settrace(trace)
        loss = (x @ w).relu().sum()
        sys.settrace(None)
        forward = set(files)
        files.clear()
        sys.settrace(trace)
        loss.backward()
        sys.settrace(None)
        print("forward dispatch:", any(f.startswith("_dispatch/") for f, _ in forward))
        print("forward kernels:", sorted(n for f, n in forward if f.startswith("backends/cpu/") and n in ("mm", "relu", "sum_all")))
        print("forward recorder:", any(f == "autograd/recording.py" for f, _ in forward))
        print("backward:", any(n == "run_backward" for f, n in files))
        """, ROOT, MINITORCH_NN_COMPILED="0")
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.splitlines() == [
        "bound: []", "forward dispatch: True", "forward kernels: ['mm', 'relu', 'sum_all']",
        "forward recorder: True", "backward: True"]
