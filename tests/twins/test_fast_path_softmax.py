"""The compiled softmax/log_softmax of ``_ext/twins/backends/cpu/reduction.pyx`` give exactly what the full path gives.

Every spelling (``minitorch_nn.softmax``, ``x.softmax``, ``nn.functional.softmax``, the
``log_softmax`` forms, positional or ``dim=``, with ``dtype=``) on random tensors (dtypes,
layouts, ranks, empty ones, dims in range or not): the result's metadata and bytes or the error
(without grad), and the ``SoftmaxBackward0``/``LogSoftmaxBackward0`` graph and gradients (with
grad), each compared with the full path forced. The helpers are those of
``tests/test_fast_path_ops.py``.
"""

import contextlib

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitorch_nn as mt
import minitorch_nn.nn.functional as F
from minitorch_nn._ops import aten
from minitorch_nn.overrides import TorchFunctionMode
from minitorch_nn.utils._python_dispatch import TorchDispatchMode
from tests.strategies import build, tensor_specs
from tests.twins.harness import fast_when_on, kernel_calls
from tests.twins.test_fast_path_ops import (
    _Passthrough,
    _Sub,
    assert_fast_equals_full,
    assert_same_graph,
)

_FORMS = {
    "function": lambda x, dim, log: (mt.log_softmax if log else mt.softmax)(x, dim),
    "function dim=": lambda x, dim, log: (mt.log_softmax if log else mt.softmax)(x, dim=dim),
    "method": lambda x, dim, log: (x.log_softmax if log else x.softmax)(dim),
    "method dim=": lambda x, dim, log: (x.log_softmax if log else x.softmax)(dim=dim),
    "F": lambda x, dim, log: (F.log_softmax if log else F.softmax)(x, dim),
    "F dim= _stacklevel=": lambda x, dim, log: (F.log_softmax if log else F.softmax)(x, dim=dim, _stacklevel=5),
    "F dtype=None": lambda x, dim, log: (F.log_softmax if log else F.softmax)(x, dim, dtype=None),
    "F dtype=float64": lambda x, dim, log: (F.log_softmax if log else F.softmax)(x, dim, dtype=mt.float64),
    "module": lambda x, dim, log: (mt.nn.LogSoftmax if log else mt.nn.Softmax)(dim)(x),
}


@st.composite
def softmax_cases(draw, dtypes=("float32", "float64", "float32", "float16", "int64"), min_side=0):
    spec = draw(tensor_specs(dtypes=dtypes, layouts=("contiguous", "contiguous", "transposed", "sliced"),
                             min_side=min_side, max_side=5))
    rank = max(len(spec.shape), 1)
    dim = draw(st.one_of(st.integers(-rank - 1, rank), st.sampled_from([1.0, True, None])))
    return spec, dim, draw(st.sampled_from(sorted(_FORMS))), draw(st.booleans())


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=softmax_cases(), subclass=st.booleans(), mode=st.booleans(),
       grad=st.sampled_from([None, None, "no_grad", "enabled"]))
def test_softmax_matches_full_path(case, subclass, mode, grad):
    spec, dim, form, log = case
    x = build(mt, spec)
    if subclass:
        x = x.as_subclass(_Sub)
    if grad is not None and x.dtype.is_floating_point:
        x.requires_grad_()
    with mt.set_grad_enabled(grad != "no_grad"), _Passthrough() if mode else contextlib.nullcontext():
        assert_fast_equals_full(lambda: _FORMS[form](x, dim, log), x)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=softmax_cases(dtypes=("float32", "float64"), min_side=1),
       x_kind=st.sampled_from(["leaf", "node output", "view of leaf"]), modify=st.sampled_from([None, None, 0]))
def test_softmax_with_grad_builds_the_full_paths_graph(case, x_kind, modify):
    spec, dim, form, log = case
    if type(dim) is not int:
        dim = -1

    def make():
        leaf = build(mt, spec).requires_grad_()
        x = leaf * 2.0 if x_kind == "node output" else leaf.view(tuple(leaf.shape)) if x_kind == "view of leaf" else leaf
        return [leaf], x, None

    assert_same_graph(make, lambda x, _: _FORMS[form](x, dim, log), modify)


def test_softmax_fast_path_runs_and_observers_see_the_call():
    x = mt.randn(3, 4)
    ops = [aten._softmax.default, aten._log_softmax.default]
    with kernel_calls(ops) as calls:
        mt.softmax(x, 1), x.log_softmax(-1), F.softmax(x, dim=0), mt.nn.LogSoftmax(1)(x)
        mt.softmax(x.requires_grad_(), 1)
    assert fast_when_on(bool(calls))   # the fast path computed them
    x = x.detach()
    with kernel_calls(ops) as calls:
        mt.softmax(x, 1, dtype=mt.float64), x.as_subclass(_Sub).softmax(0), mt.softmax(x.long().float().half(), 0)
    assert len(calls) == 3   # a dtype, a subclass, a float16 input: the full path
    seen = []

    class Dispatch(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append((func, args[1:]))
            return func(*args, **(kwargs or {}))

    class Function(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append((func.__name__, len(args), sorted(kwargs or {})))
            return func(*args, **(kwargs or {}))

    with Dispatch():
        mt.softmax(x, 1), x.log_softmax(dim=-1)
    with Function():
        F.softmax(x, dim=0)
    assert seen[:2] == [(aten._softmax.default, (1, False)), (aten._log_softmax.default, (-1, False))]
    assert seen[2] == ("softmax", 1, ["dim"])


def test_softmax_gradient_is_the_analytic_one():
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((3, 5))
    weights = rng.standard_normal((3, 5))
    x = mt.tensor(xs, requires_grad=True)
    (mt.softmax(x, 1) * mt.tensor(weights)).sum().backward()
    s = np.exp(xs - xs.max(1, keepdims=True))
    s /= s.sum(1, keepdims=True)
    expected = s * (weights - (weights * s).sum(1, keepdims=True))
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12, atol=1e-14)
