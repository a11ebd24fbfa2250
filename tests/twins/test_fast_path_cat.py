"""The compiled ``minitorch_nn.cat`` of ``_ext/twins/backends/cpu/factories.pyx`` gives exactly what the full path gives.

Random lists of tensors (dtypes, layouts, ranks and sizes that agree or not, empty ones), dims in
range or not, called positionally or with ``dim=``: the result's metadata and bytes or the error
(without grad), and the ``CatBackward0`` graph and gradients (with grad), each compared with the
full path forced. The helpers are those of ``tests/test_fast_path_ops.py``.
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
def cat_cases(draw, dtypes=("float32", "float64", "int64", "float32", "float16"), min_side=0):
    """(specs of the tensors, dim, call form)."""
    shape = list(draw(st.lists(st.integers(min_side, 3), min_size=1, max_size=3)))
    dim = draw(st.integers(-len(shape) - 1, len(shape)))
    count = draw(st.integers(1, 3))
    specs = []
    for _ in range(count):
        s = list(shape)
        if -len(s) <= dim < len(s):
            s[dim] = draw(st.integers(min_side, 3))
        if draw(st.integers(0, 9)) == 0:
            s = draw(st.sampled_from([s + [1], [0], s[::-1]]))   # a rank or size that disagrees
        specs.append(draw(tensor_specs(shape=tuple(s), dtypes=draw(st.sampled_from([dtypes[:1], dtypes])),
                                       layouts=("contiguous", "contiguous", "transposed", "sliced"))))
    form = draw(st.sampled_from(["positional", "keyword", "default", "tuple"]))
    return specs, dim, form


def _call(tensors, dim, form):
    if form == "positional":
        return mt.cat(list(tensors), dim)
    if form == "keyword":
        return mt.cat(list(tensors), dim=dim)
    if form == "tuple":
        return mt.concat(tuple(tensors), dim)
    return mt.cat(list(tensors))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cat_cases(), subclass=st.booleans(), mode=st.booleans(),
       grad=st.sampled_from([None, None, "no_grad", "enabled"]))
def test_cat_matches_full_path(case, subclass, mode, grad):
    specs, dim, form = case
    tensors = [build(mt, s) for s in specs]
    if subclass:
        tensors[-1] = tensors[-1].as_subclass(_Sub)
    if grad is not None and tensors[0].dtype.is_floating_point:
        tensors[0].requires_grad_()
    with mt.set_grad_enabled(grad != "no_grad"), _Passthrough() if mode else contextlib.nullcontext():
        assert_fast_equals_full(lambda: _call(tensors, dim, form), *tensors)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cat_cases(dtypes=("float32", "float64"), min_side=1), which=st.sampled_from(["first", "last", "all"]),
       modify=st.sampled_from([None, None, 0]))
def test_cat_with_grad_builds_the_full_paths_graph(case, which, modify):
    specs, dim, form = case

    def make():
        with full_path():
            tensors = [build(mt, s) for s in specs]
            for i, t in enumerate(tensors):
                if which == "all" or (i == 0) == (which == "first"):
                    t.requires_grad_()
        return tensors, tensors, None

    assert_same_graph(make, lambda ts, _: _call(ts, dim, form), modify)


def test_cat_fast_path_runs_and_modes_see_the_call():
    a, b = mt.ones(2, 3), mt.zeros(1, 3)
    with kernel_calls([aten.cat.default]) as calls:
        mt.cat([a, b]), mt.cat((a, b), 0), mt.cat([a, a], dim=1)
    assert fast_when_on(bool(calls))   # the fast path computed them
    with kernel_calls([aten.cat.default]) as calls:
        mt.cat([a, b.double()]), mt.cat([a, b.as_subclass(_Sub)])
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
        mt.cat([a, b]), mt.cat([a, a], 1)
    with Function():
        mt.cat([a, b]), mt.cat([a, a], dim=1)
    assert seen == [(aten.cat.default, 1), (aten.cat.default, 2), (mt.cat, 1, []), (mt.cat, 1, ["dim"])]


def test_cat_gradients_match_torch_shapes():
    a = mt.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    b = mt.tensor(np.arange(3.0).reshape(1, 3), requires_grad=True)
    out = mt.cat([a, b])
    (out * mt.arange(9.0).reshape(3, 3)).sum().backward()
    assert a.grad.tolist() == np.arange(6.0).reshape(2, 3).tolist()
    assert b.grad.tolist() == [[6.0, 7.0, 8.0]]
