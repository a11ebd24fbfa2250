"""The compiled recorder (``_ext/twins/autograd/recording.pyx``) answers to the switch and to its guards.

Its original is ``autograd/recording.py``. With the switch ``minitorch_nn.backends.compiled`` off,
recording.py records every op; with it on, replacing a function of recording.py that the twin
mirrors (at run time, by assigning to the module attribute) makes every op that would go through
that function go through recording.py instead, so the replacement runs; the recorded fingerprints
of recording.py match this checkout.
"""

import pytest

import minitorch_nn as mt
from minitorch_nn import _dispatch
from minitorch_nn._twins.autograd import recording as _twin
from minitorch_nn.autograd import recording
from minitorch_nn.backends import compiled

# everyday spellings of recorded ops whose derivative is simple (recording._record_simple)
SIMPLE_SPELLINGS = {
    "a + b": lambda a, b: a + b, "torch.add": lambda a, b: mt.add(a, b), "a.add(b)": lambda a, b: a.add(b),
    "a * b": lambda a, b: a * b, "a - b": lambda a, b: a - b, "a.relu()": lambda a, b: a.relu(),
    "a.sum()": lambda a, b: a.sum(), "a.exp()": lambda a, b: a.exp(), "a.tanh()": lambda a, b: a.tanh(),
    "softmax": lambda a, b: mt.softmax(a, 0), "a @ b": lambda a, b: a.reshape(2, 2) @ b.reshape(2, 2),
    "a.t()": lambda a, b: a.reshape(2, 2).t(), "a[1:]": lambda a, b: a[1:],
}
# ... and of ops recorded by recording._record (Tensor[] inputs, in place)
GENERAL_SPELLINGS = {
    "torch.cat": lambda a, b: mt.cat([a, b]), "torch.stack": lambda a, b: mt.stack([a, b]),
    "add_": lambda a, b: (a * 1).add_(b),
}


def _leaves():
    return mt.tensor([1.0, -2.0, 3.0, 0.5], requires_grad=True), mt.tensor([0.5, 1.5, -1.0, 2.0], requires_grad=True)


@pytest.fixture
def switch_on():
    with compiled.flags(enabled=True):
        yield


def test_the_twin_is_installed_and_its_guards_hold(switch_on):
    assert _dispatch.autograd_layer is _twin.autograd_layer is recording.installed_layer
    assert recording.autograd_layer is not _twin.autograd_layer   # the module's name is the readable one
    assert _twin.recorder_guards_hold()
    with compiled.flags(enabled=False):
        assert not _twin.recorder_guards_hold()


def _counting(monkeypatch, name):
    calls = []
    real = getattr(recording, name)
    monkeypatch.setattr(recording, name, lambda *a: calls.append(name) or real(*a))
    return calls


@pytest.mark.parametrize("spelling", SIMPLE_SPELLINGS)
def test_a_replaced_record_simple_runs_for_every_spelling(monkeypatch, switch_on, spelling):
    calls = _counting(monkeypatch, "_record_simple")
    a, b = _leaves()
    out = SIMPLE_SPELLINGS[spelling](a, b)
    assert calls, f"{spelling}: the compiled recorder ran instead of the replaced _record_simple"
    assert out.grad_fn is not None


@pytest.mark.parametrize("spelling", GENERAL_SPELLINGS)
def test_a_replaced_record_runs_for_every_spelling(monkeypatch, switch_on, spelling):
    calls = _counting(monkeypatch, "_record")
    a, b = _leaves()
    out = GENERAL_SPELLINGS[spelling](a, b)
    assert calls, f"{spelling}: the compiled recorder ran instead of the replaced _record"
    assert out.grad_fn is not None


def test_a_replaced_autograd_layer_runs_for_every_op(monkeypatch, switch_on):
    seen = []
    real = recording.autograd_layer
    monkeypatch.setattr(recording, "autograd_layer", lambda op, args, kwargs: seen.append(str(op)) or real(op, args, kwargs))
    a, b = _leaves()
    (a * b).exp()
    mt.cat([a, b])
    assert {"aten.mul.Tensor", "aten.exp.default", "aten.cat.default"} <= set(seen)


def test_switch_off_records_through_recording_py(monkeypatch):
    # recording.py's own functions run (traced by their code objects, which a replacement
    # would change): _record_simple's code is entered once per recorded simple op
    import sys

    code = recording._record_simple.__code__
    entered = []

    def tracer(frame, event, arg):
        if frame.f_code is code:
            entered.append(1)
        return None

    a, b = _leaves()
    with compiled.flags(enabled=False):
        sys.settrace(tracer)
        try:
            ((a * b).exp() + a).sum()
        finally:
            sys.settrace(None)
    assert len(entered) == 4   # mul, exp, add, sum
    sys.settrace(tracer)
    try:
        with compiled.flags(enabled=True):
            ((a * b).exp() + a).sum()
    finally:
        sys.settrace(None)
    assert len(entered) == 4   # the twin recorded these


def test_graphs_agree_with_the_switch_on_and_off():
    def run():
        a, b = _leaves()
        out = mt.cat([(a * b).exp(), a.relu()]).sum()
        out.backward()
        return out.item(), a.grad.tolist(), b.grad.tolist(), out.grad_fn.name(), out.grad_fn.next_functions[0][0].name()

    with compiled.flags(enabled=True):
        on = run()
    with compiled.flags(enabled=False):
        off = run()
    assert on == off


def test_recording_py_has_its_recorded_fingerprints():
    assert [compiled.original_changed(fn) for fn in recording._TWIN_ORIGINALS] == [None] * len(recording._TWIN_ORIGINALS)


def test_a_replaced_autograd_layer_sees_plain_tensor_ops_too(monkeypatch, switch_on):
    # with the switch off, the dispatcher calls recording.autograd_layer for every op, plain
    # tensors included; a replaced one must see them with the switch on as well, so the compiled
    # fast paths of ``+``, ``relu``, ``torch.exp``... step aside for it
    seen = []
    a, b = mt.ones(3), mt.ones(3)
    real = recording.autograd_layer
    monkeypatch.setattr(recording, "autograd_layer", lambda op, args, kwargs: seen.append(str(op)) or real(op, args, kwargs))
    a + b
    a.relu()
    mt.exp(a)
    assert seen == ["aten.add.Tensor", "aten.relu.default", "aten.exp.default"]
    monkeypatch.undo()
    seen.clear()
    a + b
    assert seen == [] and _twin.recorder_guards_hold()


def test_an_edit_to_recording_py_in_a_copy_of_the_package_takes_effect(tmp_path):
    # a learner's edit, as it happens: _record_simple changes in the source, Python restarts; the
    # recorder's twin finds the fingerprint changed, the dispatcher gets recording.py's own layer,
    # and the edit runs for every spelling, the compiled fast paths of ``*`` and ``+`` included
    import os
    import shutil
    import subprocess
    import sys

    copy = tmp_path / "minitorch_nn"
    shutil.copytree(os.path.dirname(mt.__file__), copy, ignore=shutil.ignore_patterns("__pycache__"))
    source = copy / "autograd" / "recording.py"
    marker = "    # 1. and 2.: the node, its edges and what its formulas will read.\n"
    text = source.read_text()
    assert text.count(marker) == 1
    source.write_text(text.replace(marker, "    print('recording', op)\n" + marker))
    program = ("import minitorch_nn as torch\n"
               "a, b = torch.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)\n"
               "(a * b + a).exp()\n"
               "print(sorted(torch.backends.compiled.disabled()))\n")
    done = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(tmp_path), "MINITORCH_NN_COMPILED": "1"}, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["recording aten.mul.Tensor", "recording aten.add.Tensor",
                                        "recording aten.exp.default", "['autograd.recording']"], done.stdout
    assert "_record_simple in autograd/recording.py" in done.stderr
