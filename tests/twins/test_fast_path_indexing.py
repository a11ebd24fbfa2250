"""The compiled ``x[index]`` of ``_ext/twins/_functions/indexing.pyx`` gives exactly what the full path gives.

For ints, slices and tuples of them (and, to check that the fast path steps aside, ``None``, ``...``,
bools, bad steps and out-of-range ints), each case runs as is and with the full path forced, and
compares the result's metadata, bytes, storage/version/base sharing or the error (without grad), and
the graph -- the chain of ``SelectBackward0``/``SliceBackward0`` nodes, saved values, view
bookkeeping -- and gradients after backward (with grad). The helpers are those of
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
from tests.strategies import tensor_specs
from tests.twins.harness import fast_when_on
from tests.twins.test_fast_path_ops import (
    _grad_inputs,
    _make,
    _Passthrough,
    _ran_full_path,
    _Sub,
    assert_fast_equals_full,
    assert_same_graph,
)


@st.composite
def index_items(draw, size, others):
    """One index for a dim of ``size``: mostly ints and slices, in range or not, sometimes ``others``."""
    kind = draw(st.sampled_from(["int", "int", "slice", "slice", "slice", "full", "other"]))
    if kind == "int":
        return draw(st.integers(-size - 1, size))
    bound = st.one_of(st.none(), st.integers(-size - 2, size + 2))
    if kind == "slice":
        return slice(draw(bound), draw(bound), draw(st.sampled_from([None, None, 1, 2, 3, 0, -1])))
    if kind == "full":
        return slice(None)
    return draw(st.sampled_from(others))


# (with grad, bools are left out: they make an ``aten.index`` node, whose saved list of tensors the
# graph signature cannot compare across the two paths; neither path is the fast one there)
NO_GRAD_OTHERS = (None, Ellipsis, True, 2**70, np.int64(1))
GRAD_OTHERS = (None, Ellipsis, 2**70, np.int64(1))


@st.composite
def indices(draw, shape, others=NO_GRAD_OTHERS):
    n = draw(st.integers(0, len(shape) + 1))
    items = tuple(draw(index_items(shape[i] if i < len(shape) else 2, others)) for i in range(n))
    if len(items) == 1 and draw(st.booleans()):
        return items[0]   # a lone index, not a tuple
    return items


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), subclass=st.sampled_from([None, None, "x", "parameter"]), mode=st.booleans(),
       grad=st.sampled_from([None, None, "no_grad", "enabled"]))
def test_getitem_matches_full_path(data, subclass, mode, grad):
    x = _make(data.draw(tensor_specs(dtypes=("float32", "float64", "int64", "bool", "float16"),
                                     layouts=("contiguous", "transposed", "sliced", "expanded", "offset"))))
    index = data.draw(indices(tuple(x.shape)))
    if subclass == "x":
        x = x.as_subclass(_Sub)
    elif subclass == "parameter" and x.dtype.is_floating_point:
        x = mt.nn.Parameter(x, requires_grad=False)
    if grad is not None and x.dtype.is_floating_point:
        x.requires_grad_()
    with mt.set_grad_enabled(grad != "no_grad"), _Passthrough() if mode else contextlib.nullcontext():
        assert_fast_equals_full(lambda: x[index], x)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(),
       x_kind=st.sampled_from(["leaf", "leaf", "parameter", "node output", "view of leaf", "stale view"]),
       modify=st.sampled_from([None, None, 0, -1]))
def test_getitem_with_grad_builds_the_full_paths_graph(data, x_kind, modify):
    spec = data.draw(tensor_specs(dtypes=("float32", "float64"), min_dims=1))
    index = data.draw(indices(spec.shape, GRAD_OTHERS))
    assert_same_graph(_grad_inputs(spec, None, x_kind, None), lambda a, b: a[index], modify)


def test_errors_match():
    a = mt.ones(2, 3)
    z = mt.tensor(1.0)
    cases = [lambda: a[2], lambda: a[-3], lambda: a[0, 3], lambda: a[1, 2, 0], lambda: a[::0], lambda: a[::-1],
             lambda: a[0, ::-2], lambda: a[2**70], lambda: z[0], lambda: z[0:1], lambda: a[1:, 5],
             lambda: a[0.5], lambda: a["x"]]
    for fn in cases:
        assert_fast_equals_full(fn, a, z)


def test_fast_path_runs_for_plain_operands():
    for grad in (False, True):
        a = mt.tensor(np.linspace(0.1, 0.9, 12).reshape(3, 4), requires_grad=grad)
        p = mt.nn.Parameter(a.detach().clone(), requires_grad=grad)
        for x in (a, p):
            for fn in (lambda x=x: x[1], lambda x=x: x[-1], lambda x=x: x[1:3], lambda x=x: x[:, 1],
                       lambda x=x: x[0, 1:], lambda x=x: x[::2, 3], lambda x=x: x[1:2, 0:4:3]):
                assert fast_when_on(_ran_full_path(fn))
                out = fn()
                assert (out.grad_fn is not None) == grad and out._base is (a if x is a else p)
    a = mt.ones(3, 3)
    for fn in (lambda: a[:], lambda: a[None], lambda: a[..., 0], lambda: a[True],
               lambda: a.as_subclass(_Sub)[0]):
        assert _ran_full_path(fn)


def test_modes_and_traces_see_every_call():
    a = mt.ones(3, 3)
    seen = []

    class Dispatch(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(func)
            return func(*args, **(kwargs or {}))

    class Function(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func)
            return func(*args, **(kwargs or {}))

    with Dispatch():
        a[0], a[1:], a[0, 1:]
    assert seen == [aten.select.int, aten.slice.Tensor, aten.select.int, aten.slice.Tensor]
    seen.clear()
    with Function():
        a[0], a[1:]
    assert seen == [mt.Tensor.__getitem__, mt.Tensor.__getitem__]
    with mt.utils.dispatch_trace() as trace:
        a[1]
    assert "aten.select.int" in str(trace)


def test_views_share_storage_version_and_base_and_write_through():
    a = mt.arange(12.0).reshape(3, 4).clone()
    for v in (a[1], a[1:], a[:, 2], a[0, 1:3], a[::2, ::3], a[1][2:]):
        assert v._base is a and v._impl.storage is a._impl.storage and v._impl.version is a._impl.version
    x = mt.arange(6.0).requires_grad_()
    y = x * 1
    y[2:4].mul_(3)   # an in-place write through a fast view rewrites y's history
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 3.0, 3.0, 1.0, 1.0]
