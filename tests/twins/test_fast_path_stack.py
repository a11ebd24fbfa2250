"""The compiled ``minitorch_nn.stack`` of ``_ext/twins/backends/cpu/factories.pyx`` gives exactly what the full path gives.

Random lists of tensors (dtypes, layouts, shapes that agree or not, 0-d and empty ones), dims in
range or not, called positionally, with ``dim=``, as a tuple or with the default dim: the
result's metadata and bytes or the error (without grad), and the ``StackBackward0`` graph and
gradients (with grad), each compared with the full path forced. The helpers are those of
``tests/test_fast_path_ops.py``.
"""

import contextlib

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitorch_nn as mt
from minitorch_nn._ops import aten
from minitorch_nn.overrides import TorchFunctionMode
from minitorch_nn.utils._python_dispatch import TorchDispatchMode
from tests.strategies import build, tensor_specs
from tests.twins.harness import fast_when_on, full_path, kernel_calls
from tests.twins.test_fast_path_ops import (
    _Passthrough,
    _Sub,
    assert_fast_equals_full,
    assert_same_graph,
)


@st.composite
def stack_cases(draw, dtypes=("float32", "float64", "int64", "float32", "float16"), min_side=0):
    """(specs of the tensors, dim, call form)."""
    shape = list(draw(st.lists(st.integers(min_side, 3), min_size=0, max_size=3)))
    dim = draw(st.integers(-len(shape) - 2, len(shape) + 1))
    count = draw(st.integers(1, 3))
    specs = []
    for _ in range(count):
        s = list(shape)
        if draw(st.integers(0, 9)) == 0:
            s = draw(st.sampled_from([s + [1], [0], s[::-1], [2] + s]))   # a shape that disagrees
        specs.append(draw(tensor_specs(shape=tuple(s), dtypes=draw(st.sampled_from([dtypes[:1], dtypes])),
                                       layouts=("contiguous", "contiguous", "transposed", "sliced"))))
    form = draw(st.sampled_from(["positional", "keyword", "default", "tuple"]))
    return specs, dim, form


def _call(tensors, dim, form):
    if form == "positional":
        return mt.stack(list(tensors), dim)
    if form == "keyword":
        return mt.stack(list(tensors), dim=dim)
    if form == "tuple":
        return mt.stack(tuple(tensors), dim)
    return mt.stack(list(tensors))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=stack_cases(), subclass=st.booleans(), mode=st.booleans(),
       grad=st.sampled_from([None, None, "no_grad", "enabled"]))
def test_stack_matches_full_path(case, subclass, mode, grad):
    specs, dim, form = case
    tensors = [build(mt, s) for s in specs]
    if subclass:
        tensors[-1] = tensors[-1].as_subclass(_Sub)
    if grad is not None and tensors[0].dtype.is_floating_point:
        tensors[0].requires_grad_()
    with mt.set_grad_enabled(grad != "no_grad"), _Passthrough() if mode else contextlib.nullcontext():
        assert_fast_equals_full(lambda: _call(tensors, dim, form), *tensors)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=stack_cases(dtypes=("float32", "float64"), min_side=1), which=st.sampled_from(["first", "last", "all"]),
       modify=st.sampled_from([None, None, 0]))
def test_stack_with_grad_builds_the_full_paths_graph(case, which, modify):
    specs, dim, form = case

    def make():
        with full_path():
            tensors = [build(mt, s) for s in specs]
            for i, t in enumerate(tensors):
                if which == "all" or (i == 0) == (which == "first"):
                    t.requires_grad_()
        return tensors, tensors, None

    assert_same_graph(make, lambda ts, _: _call(ts, dim, form), modify)


def test_stack_fast_path_runs_and_modes_see_the_call():
    a, b = mt.ones(2, 3), mt.zeros(2, 3)
    with kernel_calls([aten.stack.default]) as calls:
        mt.stack([a, b]), mt.stack((a, b), 2), mt.stack([a, a], dim=-1), mt.stack([mt.tensor(1.0)] * 3)
    assert fast_when_on(bool(calls))   # the fast path computed them
    with kernel_calls([aten.stack.default]) as calls:
        mt.stack([a, b.double()]), mt.stack([a, b.as_subclass(_Sub)])
    assert len(calls) == 2   # mixed dtypes, a subclass: the full path
    seen = []

    class Dispatch(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append((func, len(args)))
            return func(*args, **(kwargs or {}))

    class Function(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append((func, len(args), sorted(kwargs or {})))
            return func(*args, **(kwargs or {}))

    with Dispatch():
        mt.stack([a, b]), mt.stack([a, a], 1)
    with Function():
        mt.stack([a, b]), mt.stack([a, a], dim=1)
    assert seen == [(aten.stack.default, 1), (aten.stack.default, 2), (mt.stack, 1, []), (mt.stack, 1, ["dim"])]


def test_stack_gradients():
    a = mt.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    b = mt.tensor(np.arange(6.0, 12.0).reshape(2, 3), requires_grad=True)
    out = mt.stack([a, b], 1)
    assert out.grad_fn.name() == "StackBackward0" and out.shape == (2, 2, 3)
    (out * mt.arange(12.0).reshape(2, 2, 3)).sum().backward()
    assert a.grad.tolist() == [[0.0, 1.0, 2.0], [6.0, 7.0, 8.0]]
    assert b.grad.tolist() == [[3.0, 4.0, 5.0], [9.0, 10.0, 11.0]]
