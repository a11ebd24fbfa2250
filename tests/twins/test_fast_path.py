"""The plain-tensor fast path (``_ext/twins/``, through the gate ``_ext/twins/_gate.pyx``) gives exactly what the full dispatch gives.

``a + b``, ``a - b``, ``a * b`` (and ``2 + a``, ``2 * a``), ``x.relu()`` and ``x.sum()`` skip the
dispatch chain when nothing (grad, subclass, mode, dispatch layer, trace) could observe it. The
tests here

* force the full path with :func:`full_path` (a pass-through dispatcher, which is what
  ``dispatch_trace()`` installs: the fast path declines while the dispatcher is not the plain one)
  and compare everything observable: class, dtype, shape, strides, offset, contiguity, the bytes
  of the values (NaN payloads included), version counter, grad state, errors and warnings;
* check, by counting calls to the cpu kernel, that the fast path really runs for plain operands
  (else the comparison would be vacuous) and really declines whenever something could observe
  the op.
"""

import contextlib
import gc
import itertools
import operator
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitorch_nn as mt
from minitorch_nn import _dispatch
from minitorch_nn._ops import aten
from minitorch_nn.overrides import TorchFunctionMode
from minitorch_nn.utils._python_dispatch import TorchDispatchMode
from tests.strategies import build, tensor_specs
from tests.twins import harness
from tests.twins.harness import (
    _Passthrough,
    _Sub,
    assert_fast_equals_full,
    fast_when_on,
    full_path,
    outcome,
)

FAST_DTYPES = ("float32", "float64", "int64")
OTHER_DTYPES = ("int32", "bool", "float16")
LAYOUTS = ("contiguous", "transposed", "sliced", "expanded", "offset")


# -- random operands: fast path == full path ---------------------------------------------------------


BINARY = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul,
    "radd": lambda a, b: b + a, "rmul": lambda a, b: b * a,
}
SCALARS = st.one_of(
    st.integers(-5, 5), st.sampled_from([2**24, 2**24 + 1, -(2**53) - 1, 2**62, 2**63, 10**20]),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([1e300, -1e39, 3.4e38, -0.0, 0.1]),
    st.booleans(), st.sampled_from([np.float32(1.5), np.int64(3)]),
)


@st.composite
def operand_pairs(draw):
    a = draw(tensor_specs(dtypes=FAST_DTYPES * 3 + OTHER_DTYPES, layouts=LAYOUTS, max_dims=3, min_side=0))
    kind = draw(st.sampled_from(["same", "broadcast", "other dtype", "scalar", "0-d"]))
    if kind == "scalar":
        return a, draw(SCALARS)
    if kind == "0-d":
        return a, draw(tensor_specs(shape=(), dtypes=(a.dtype,) + FAST_DTYPES))
    if kind == "broadcast":
        shape = tuple(draw(st.sampled_from([s, 1])) for s in a.shape[draw(st.integers(0, len(a.shape))):])
        return a, draw(tensor_specs(shape=shape, dtypes=(a.dtype,), layouts=LAYOUTS))
    dtypes = (a.dtype,) if kind == "same" else FAST_DTYPES + OTHER_DTYPES
    return a, draw(tensor_specs(shape=draw(st.sampled_from([a.shape, (3,), (2, 1)])), dtypes=dtypes, layouts=LAYOUTS))


def _make(x):
    return build(mt, x) if hasattr(x, "layout") else x


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(op=st.sampled_from(sorted(BINARY)), pair=operand_pairs(), subclass=st.sampled_from([None, "a", "b"]),
       mode=st.booleans())
def test_binary_fast_path_matches_full_path(op, pair, subclass, mode):
    a, b = (_make(x) for x in pair)
    if subclass == "a":
        a = a.as_subclass(_Sub)
    elif subclass == "b" and isinstance(b, mt.Tensor):
        b = b.as_subclass(_Sub)
    with _Passthrough() if mode else contextlib.nullcontext():
        assert_fast_equals_full(lambda: BINARY[op](a, b), a, b)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(method=st.sampled_from(["relu", "sum"]),
       spec=tensor_specs(dtypes=FAST_DTYPES * 3 + OTHER_DTYPES, layouts=LAYOUTS, min_side=0),
       subclass=st.booleans(), mode=st.booleans())
def test_unary_fast_path_matches_full_path(method, spec, subclass, mode):
    t = build(mt, spec)
    if subclass:
        t = t.as_subclass(_Sub)
    with _Passthrough() if mode else contextlib.nullcontext():
        assert_fast_equals_full(lambda: getattr(t, method)(), t)


@pytest.mark.parametrize("dtype", [mt.float32, mt.float64, mt.int64])
def test_special_values_and_warnings(dtype):
    # overflow, inf - inf, 0 * inf, NaN, -0.0, int wrap-around; sums that overflow (the kernel
    # lets numpy warn there) -- with warnings recorded and compared, not just values
    if dtype.is_floating_point:
        big = float(np.finfo(dtype.numpy_dtype).max)
        values = [[big, -big, float("inf"), float("nan"), -0.0, 1e-45]]
    else:
        values = [[2**62, -(2**63), 2**63 - 1, 0, -1, 7]]
    a = mt.tensor(values, dtype=dtype)
    b = mt.tensor(values[0][::-1], dtype=dtype)
    for fn in (lambda: a + a, lambda: a - b, lambda: a * b, lambda: a * 4, lambda: a - 2.5, lambda: a.relu(),
               lambda: a.sum(), lambda: (a * 0).sum(), lambda: a[0, :1].sum(), lambda: a[0, 0] * a[0, 0]):
        assert_fast_equals_full(fn, a, b)


def test_errors_match():
    a, b = mt.ones(2, 3), mt.ones(4)
    for fn in (lambda: a + b, lambda: a * mt.ones(2, 2), lambda: mt.ones(3, dtype=mt.int64) + 10**30,
               lambda: a.relu(1), lambda: a.sum(dim=5), lambda: a + "x", lambda: a * None):
        assert_fast_equals_full(fn, a, b)


# -- does the fast path run, and decline when it must? --------------------------------------------------


def kernel_calls():
    """Count calls of the cpu kernels of add, sub, mul, relu and sum (the fast path calls none)."""
    return harness.kernel_calls([aten.add.Tensor, aten.sub.Tensor, aten.mul.Tensor, aten.relu.default,
                                 aten.sum.default, aten.sum.dim_IntList])


def _ran_full_path(fn):
    with kernel_calls() as calls:
        fn()
    return len(calls) > 0


def _all_ops(a, b):
    return [lambda: a + b, lambda: a - b, lambda: a * b, lambda: 2 + a, lambda: 3 * a, lambda: a - 4,
            lambda: a.relu(), lambda: a.sum()]


def test_fast_path_runs_for_plain_operands():
    for dtype in (mt.float32, mt.float64, mt.int64):
        a = mt.arange(6, dtype=dtype).reshape(2, 3)
        for b in (a, a[0], a[1:], mt.tensor(2, dtype=dtype)):  # same shape, broadcast, 0-d
            for fn in _all_ops(a, b):
                assert fast_when_on(_ran_full_path(fn))
        if dtype.is_floating_point:
            assert fast_when_on(_ran_full_path(lambda a=a: a * 0.5))


def test_fast_path_declines_when_something_could_observe():
    a = mt.ones(2, 3)
    cases = {
        "subclass": (a.as_subclass(_Sub), a),
        "non-contiguous": (mt.ones(3, 2).t(), a),
        "float16": (a.half(), a.half()),
        "mixed dtypes": (a, a.double()),
        "int tensor and float": (a.long(), 0.5),
        "bool scalar": (a, True),
    }
    for name, (x, y) in cases.items():
        assert _ran_full_path(lambda x=x, y=y: x + y), name
        assert _ran_full_path(lambda x=x, y=y: x * y), name
    for x in (a.as_subclass(_Sub), mt.ones(3, 2).t(), a.half()):
        assert _ran_full_path(lambda x=x: x.relu()) and _ran_full_path(lambda x=x: x.sum())
    # (``a.sum(0)`` has a compiled path of its own, in the reduction twin; with a dtype it declines)
    assert _ran_full_path(lambda: a.sum(0, dtype=mt.float64)) and _ran_full_path(lambda: a.sum(dtype=mt.float64))


def test_fast_path_records_when_an_input_requires_grad():
    # the kernel runs in C and the compiled recorder wires the result (tests/test_fast_record.py
    # compares the graphs); with saved-tensor hooks, whose pack hooks run before the kernel in
    # the full path, or another autograd layer installed, the full path runs
    a, w = mt.ones(2, 3), mt.ones(2, 3, requires_grad=True)
    for x, y in ((w, a), (a, w), (w, w), (w, 2.0)):
        assert fast_when_on(_ran_full_path(lambda x=x, y=y: x + y))
        assert fast_when_on(_ran_full_path(lambda x=x, y=y: x * y))
    assert fast_when_on(_ran_full_path(lambda: w.relu())) and fast_when_on(_ran_full_path(lambda: w.sum()))
    with mt.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        for fn in _all_ops(w, a):
            assert _ran_full_path(fn)
    saved = _dispatch.autograd_layer
    _dispatch.autograd_layer = lambda op, args, kwargs: saved(op, args, kwargs)
    try:
        for fn in _all_ops(w, a):
            assert _ran_full_path(fn)
    finally:
        _dispatch.autograd_layer = saved


def test_fast_path_runs_for_parameters():
    # nn.Parameter's __torch_function__ is the disabled one: the full path treats it as a plain
    # tensor (and returns plain Tensors), so the fast path takes it too, recording as usual
    p, t = mt.nn.Parameter(mt.ones(2, 3)), mt.full((2, 3), 2.0)
    for fn in _all_ops(p, t) + _all_ops(t, p)[:3] + _all_ops(p, p):
        assert fast_when_on(_ran_full_path(fn))
        assert_fast_equals_full(fn, p, t)
        out = fn()
        assert type(out) is mt.Tensor and out.grad_fn is not None


def test_fast_path_steps_aside_when_a_derivative_is_replaced():
    # a student may remove or replace an op's derivative: the full path then records what it does
    w = mt.ones(2, 3, requires_grad=True)
    for op, fn in ((aten.mul.Tensor, lambda: w * w), (aten.relu.default, lambda: w.relu()),
                   (aten.sum.default, lambda: w.sum())):
        saved = op.derivative
        op.derivative = None
        try:
            assert _ran_full_path(fn)
            assert fn().grad_fn.name() == "NotImplemented"
        finally:
            op.derivative = saved
        assert fast_when_on(_ran_full_path(fn))


@pytest.mark.parametrize("layer", ["python_layer", "forward_ad_layer"])
def test_fast_path_declines_while_a_dispatch_layer_is_installed(layer):
    # __torch_dispatch__ classes/modes and forward-AD dual levels install these hooks
    a = mt.ones(3)
    saved = getattr(_dispatch, layer, None)
    setattr(_dispatch, layer, lambda op, args, kwargs: NotImplemented)
    try:
        for fn in _all_ops(a, a):
            assert _ran_full_path(fn)
    finally:
        setattr(_dispatch, layer, saved)
    for fn in _all_ops(a, a):
        assert fast_when_on(_ran_full_path(fn))


def test_dispatch_subclasses_leave_plain_tensors_fast_but_dispatch_modes_do_not():
    class Wrapper(mt.Tensor):  # its existence installs the python dispatch layer for good
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    a = mt.ones(3)
    assert _dispatch.python_layer is not None
    for fn in _all_ops(a, a):
        assert fast_when_on(_ran_full_path(fn))

    class Passthrough(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    with Passthrough():
        for fn in _all_ops(a, a):
            assert _ran_full_path(fn)
            assert_fast_equals_full(fn, a)


def test_fast_path_declines_under_a_mode_and_handlers_see_the_methods():
    a = mt.ones(3)
    seen = []

    class Log(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func)
            return func(*args, **(kwargs or {}))

    with Log():
        a + a, a * 2, a.relu(), a.sum()
    assert seen == [mt.Tensor.add, mt.Tensor.mul, mt.Tensor.relu, mt.Tensor.sum]
    assert mt.Tensor.relu.__name__ == "relu" and mt.Tensor.sum.__qualname__ == "Tensor.sum"


def test_fast_path_not_taken_when_grad_is_needed():
    a = mt.ones(3, requires_grad=True)
    assert (a + 1).grad_fn is not None
    assert (2 * a).grad_fn is not None
    assert a.relu().grad_fn is not None
    assert a.sum().grad_fn is not None


def test_results_are_fresh_tensors():
    a = mt.ones(2, 3)
    a.add_(1)
    for out in (a + a, a * 2, a.relu(), a.sum()):
        assert out._version == 0 and out._base is None and out.is_leaf and out.grad_fn is None
        assert out.data_ptr() != a.data_ptr()
    # the result owns its memory: writing to it leaves the inputs alone
    out = a + 0
    out.add_(5)
    assert a.tolist() == [[2.0] * 3] * 2


def test_exhaustive_small_operand_grid():
    # every pair from a small fixed set (dtypes x layouts x numbers), both orders
    rng = np.random.default_rng(0)
    tensors = []
    for dtype in (mt.float32, mt.float64, mt.int64, mt.int32, mt.bool, mt.float16):
        base = rng.standard_normal((2, 3)) * 10
        t = mt.tensor(base.astype(dtype.numpy_dtype))
        tensors += [t, t.t(), t[:, :1], mt.tensor(base[0, 0].astype(dtype.numpy_dtype))]
    tensors.append(mt.tensor([[float("nan"), float("inf"), -0.0]]))
    values = tensors + [2, -3, 2.5, 0, True, 10**20]
    pairs = [(a, b) for a, b in itertools.product(values, values) if isinstance(a, mt.Tensor)]
    for op in (operator.add, operator.sub, operator.mul):
        for a, b in pairs:
            assert_fast_equals_full(lambda op=op, a=a, b=b: op(a, b), a)


def test_results_own_their_sizes_and_strides():
    # ints above 256 are not CPython's cached small ints: the payload must hold real references
    # to them, or their memory is reused and the sizes read back as some other object
    a = mt.ones(300, 257)
    outs = [a + a, a * 2, 1 + a, a - 0.5, a.relu(), mt.ones(1000) * 3]
    gc.collect()
    filler = [object() for _ in range(20000)]  # reuse any freed memory
    for out in outs[:-1]:
        assert out._impl.sizes == (300, 257) and out._impl.strides == (257, 1)
        assert sys.getrefcount(out._impl.sizes[0]) > 2 and sys.getrefcount(out._impl.strides[0]) > 2
    assert outs[-1].shape == (1000,) and outs[-1].stride() == (1,)
    del filler


# -- grad mode off: inputs that require grad take the fast path under no_grad -------------------------


def _requiring_grad(spec, as_param=False):
    # a leaf that requires grad, in the spec's layout (a view of a non-grad tensor may be made one)
    t = build(mt, spec).requires_grad_()
    return mt.nn.Parameter(t.detach().contiguous()) if as_param else t


FLOAT_FAST = ("float32", "float64")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(op=st.sampled_from(sorted(BINARY) + ["relu", "sum"]),
       a=tensor_specs(dtypes=FLOAT_FAST + ("float16",), layouts=LAYOUTS, max_dims=3),
       other=st.sampled_from(["same", "grad", "scalar", "0-d"]), grad_enabled=st.booleans())
def test_grad_mode_off_fast_path_matches_full_path(op, a, other, grad_enabled):
    x = _requiring_grad(a)
    if other == "scalar":
        y = 2.5
    elif other == "0-d":
        y = mt.tensor(1.5, dtype=x.dtype)
    else:
        y = build(mt, a)
        if other == "grad":
            y.requires_grad_()
    fn = (lambda: getattr(x, op)()) if op in ("relu", "sum") else (lambda: BINARY[op](x, y))
    with mt.set_grad_enabled(grad_enabled):
        assert_fast_equals_full(fn, x)


def _ran_any_kernel(fn):
    with kernel_calls() as calls, copy_kernel_calls() as copies:
        fn()
    return len(calls) + len(copies) > 0


def test_fast_path_runs_under_no_grad_for_inputs_that_require_grad():
    a = mt.ones(2, 3, requires_grad=True)
    b = mt.nn.Parameter(mt.ones(2, 3))
    with mt.no_grad():
        for fn in _all_ops(a, a) + [lambda: a + b.detach(), lambda: a.detach() * 2, lambda: a.to(mt.float64)]:
            assert fast_when_on(_ran_any_kernel(fn))
            out = fn()
            assert not out.requires_grad and out.grad_fn is None
    for fn in _all_ops(a, a):  # grad mode on: the compiled kernel, recorded
        assert fast_when_on(_ran_any_kernel(fn))
        assert fn().grad_fn is not None
    assert _ran_any_kernel(lambda: a.to(mt.float64))  # (no recording fast path for to())
    assert a.to(mt.float64).grad_fn is not None


# -- detach() and to(dtype) ------------------------------------------------------------------------------


def detach_outcome(t):
    """Everything observable about ``t.detach()``, including what it shares with ``t``."""
    out = t.detach()
    before = t._version
    out._bump_version()  # a shared version counter: the input sees the write
    seen = t._version - before
    t._impl.version.value = before
    return (outcome(lambda: out), out is t, out.data_ptr() == t.data_ptr(), out._impl.storage is t._impl.storage,
            out._base is None, out._is_view(), seen, out.is_leaf, type(out))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=tensor_specs(dtypes=FAST_DTYPES + OTHER_DTYPES + ("bfloat16", "uint8"), layouts=LAYOUTS, min_side=0),
       kind=st.sampled_from(["plain", "requires grad", "parameter", "subclass", "non-leaf", "view of grad"]),
       grad_enabled=st.booleans(), mode=st.booleans())
def test_detach_fast_path_matches_full_path(spec, kind, grad_enabled, mode):
    t = build(mt, spec)
    floating = t.dtype.is_floating_point
    if kind == "requires grad" and floating:
        t = t.requires_grad_()
    elif kind == "parameter":
        t = mt.nn.Parameter(t, requires_grad=floating)
    elif kind == "subclass":
        t = t.as_subclass(_Sub)
    elif kind == "non-leaf" and floating:
        t = t.requires_grad_() * 1
    elif kind == "view of grad" and floating and t.dim():
        t = t.detach().requires_grad_()[:1]
    with mt.set_grad_enabled(grad_enabled), _Passthrough() if mode else contextlib.nullcontext():
        fast = detach_outcome(t)
        with full_path():
            full = detach_outcome(t)
    assert fast == full


TO_TARGETS = ("float32", "float64", "int64", "float16", "int32", "bool")


def to_outcome(t, args, kwargs):
    out = outcome(lambda: t.to(*args, **kwargs))
    return out, t.to(*args, **kwargs) is t


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=tensor_specs(dtypes=FAST_DTYPES * 3 + OTHER_DTYPES, layouts=LAYOUTS, min_side=0),
       target=st.sampled_from(TO_TARGETS), keyword=st.booleans(),
       kind=st.sampled_from(["plain", "requires grad", "parameter", "subclass"]),
       grad_enabled=st.booleans(), mode=st.booleans())
def test_to_dtype_fast_path_matches_full_path(spec, target, keyword, kind, grad_enabled, mode):
    t = build(mt, spec)
    floating = t.dtype.is_floating_point
    if kind == "requires grad" and floating:
        t = t.requires_grad_()
    elif kind == "parameter":
        t = mt.nn.Parameter(t, requires_grad=floating)
    elif kind == "subclass":
        t = t.as_subclass(_Sub)
    dtype = getattr(mt, target)
    args, kwargs = ((), {"dtype": dtype}) if keyword else ((dtype,), {})
    with mt.set_grad_enabled(grad_enabled), _Passthrough() if mode else contextlib.nullcontext():
        fast = to_outcome(t, args, kwargs)
        with full_path():
            full = to_outcome(t, args, kwargs)
    assert fast == full


def test_to_special_values_match_full_path():
    # overflow to inf (float64 -> float32), NaN/inf to int64, rounding: numpy's warnings stay off
    a = mt.tensor([1e300, -1e300, float("nan"), float("inf"), 0.1, -0.0, 2.0**63], dtype=mt.float64)
    for t in (a, a.float(), mt.tensor([2**62, -(2**63), 3], dtype=mt.int64)):
        for target in (mt.float32, mt.float64, mt.int64):
            assert_fast_equals_full(lambda t=t, target=target: t.to(target), t)


def copy_kernel_calls():
    """Count calls of ``_to_copy``'s cpu kernel and of ``detach``'s kernel (the fast path calls neither)."""
    return harness.kernel_calls([aten._to_copy.default, aten.detach.default])


def test_detach_and_to_fast_paths_run_and_decline():
    a = mt.arange(6.0).reshape(2, 3)
    p = mt.nn.Parameter(mt.ones(2, 3))
    fast = [lambda: a.detach(), lambda: a.t().detach(), lambda: p.detach(), lambda: a.to(mt.float64),
            lambda: a.to(dtype=mt.int64), lambda: a.long().to(mt.float32)]
    for fn in fast:
        with copy_kernel_calls() as calls:
            fn()
        assert fast_when_on(bool(calls))
    assert a.to(mt.float32) is a and p.to(mt.float32) is p and a.t().to(mt.float32) is not None
    slow = [lambda: a.to(mt.float16), lambda: a.t().to(mt.float64), lambda: a.to(mt.float64, copy=True),
            lambda: a.to("cpu", mt.float64), lambda: p.to(mt.float64), lambda: a.as_subclass(_Sub).detach(),
            lambda: a.as_subclass(_Sub).to(mt.float64), lambda: a.detach().requires_grad_().to(mt.float64)]
    for fn in slow:
        with copy_kernel_calls() as calls:
            fn()
        assert calls
    seen = []

    class Log(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func)
            return func(*args, **(kwargs or {}))

    with Log():
        for fn in fast[:4]:
            fn()
    assert seen == [mt.Tensor.detach, mt.Tensor.t, mt.Tensor.detach, mt.Tensor.detach, mt.Tensor.to]
