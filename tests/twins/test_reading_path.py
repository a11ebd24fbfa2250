"""With the compiled twins off, what runs is the code a learner reads.

``sys.settrace`` sees every Python function call and line. With the switch
``minitorch_nn.backends.compiled`` off, the forward pass of a small graph must run functions of
``_dispatch/``, ``backends/cpu/`` and ``autograd/recording.py``, and its backward pass must run
the lines inside ``run_backward``'s loop in ``autograd/engine.py``. With the switch on, the same
graph must give the same values and gradients, bit for bit.
"""

import inspect
import os
import sys

import numpy as np

import minitorch_nn as mt
from minitorch_nn.autograd import engine
from minitorch_nn.backends import compiled

PACKAGE = os.path.dirname(mt.__file__)


def _inputs():
    rng = np.random.default_rng(0)
    x = mt.tensor(rng.standard_normal((3, 4)), dtype=mt.float32, requires_grad=True)
    w = mt.tensor(rng.standard_normal((4,)), dtype=mt.float32, requires_grad=True)
    return x, w


def _forward(x, w):
    return ((x * w).tanh() + x).sum()


class _Trace:
    """Records the package files and functions called, and the lines of ``run_backward`` run."""

    def __init__(self):
        self.calls = set()           # (path under the package, function name)
        self.run_backward_lines = []
        self._run_backward = engine.run_backward.__code__

    def __call__(self, frame, event, arg):
        code = frame.f_code
        if event == "call" and code.co_filename.startswith(PACKAGE):
            self.calls.add((os.path.relpath(code.co_filename, PACKAGE).replace(os.sep, "/"), code.co_name))
        if code is self._run_backward:
            return self._lines
        return None

    def _lines(self, frame, event, arg):
        if event == "line":
            self.run_backward_lines.append(frame.f_lineno)
        return self._lines

    def __enter__(self):
        sys.settrace(self)
        return self

    def __exit__(self, *exc):
        sys.settrace(None)

    def files(self, prefix):
        return {name for path, name in self.calls if path.startswith(prefix)}


def _loop_lines():
    """The line numbers of the body of run_backward's ``while ready:`` loop."""
    lines, first = inspect.getsourcelines(engine.run_backward)
    start = next(i for i, text in enumerate(lines) if text.strip() == "while ready:")
    indent = len(lines[start]) - len(lines[start].lstrip())
    body = []
    for i in range(start + 1, len(lines)):
        text = lines[i]
        if text.strip() and len(text) - len(text.lstrip()) <= indent:
            break
        body.append(first + i)
    return set(body)


def test_switch_off_runs_the_readable_forward_and_backward():
    x, w = _inputs()
    with compiled.flags(enabled=False):
        with _Trace() as forward:
            loss = _forward(x, w)
        with _Trace() as backward:
            loss.backward()
    assert forward.files("_dispatch/"), "the forward pass ran no function of _dispatch/"
    assert forward.files("backends/cpu/"), "the forward pass ran no cpu kernel of backends/cpu/"
    recorded = forward.files("autograd/recording.py")
    assert {"autograd_layer", "_record_simple"} <= recorded, recorded
    loop = _loop_lines()
    ran = set(backward.run_backward_lines)
    assert ran & loop, "run_backward's loop did not run"
    pop = next(n for n in loop if "ready.pop()" in inspect.getsource(engine).splitlines()[n - 1])
    # one pop per node: SumBackward0, AddBackward0, TanhBackward0, MulBackward0, two AccumulateGrads
    assert backward.run_backward_lines.count(pop) == 6


def test_switch_on_runs_no_line_of_run_backwards_loop():
    # the control for the test above: with the switch on, the compiled twin runs the loop
    x, w = _inputs()
    loss = _forward(x, w)
    with compiled.flags(enabled=True), _Trace() as backward:
        loss.backward()
    assert not set(backward.run_backward_lines) & _loop_lines()


def test_both_settings_give_the_same_values_and_gradients():
    results = []
    for on in (True, False):
        x, w = _inputs()
        with compiled.flags(enabled=on):
            loss = _forward(x, w)
            loss.backward()
        results.append((loss.detach().numpy().tobytes(), x.grad.numpy().tobytes(), w.grad.numpy().tobytes(),
                        loss.grad_fn.name()))
    assert results[0] == results[1]
