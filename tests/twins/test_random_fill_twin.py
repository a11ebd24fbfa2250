"""The compiled twins of the fills ``x.uniform_``/``x.normal_`` and of ``rand``/``randn``
(``_ext/twins/backends/cpu/random.pyx``), and of ``empty``/``zeros``/``ones`` and the fills
``x.zero_``/``x.fill_`` (``_ext/twins/backends/cpu/factories.pyx``), against the readable path:
what building a layer calls.

A fill is made twice, from generators in the same state, on tensors made the same way: once with
the test's switch and once on the readable path (switch off). Everything observable must agree:
the returned object (the tensor itself), its values bit for bit, its version counter, the error
and its message, and the generator's state afterwards. The factories are compared through the
harness's ``outcome`` (class, dtype, shape, strides, version, values...). Then which path ran:
the twins take the everyday calls (``nn.Linear``'s construction) while the switch is on, and step
aside for whatever could observe or change the call (modes, a replaced generator method, a
default device). The guards of the kernels (a registered kernel of one's own, a rebound module
attribute) are in ``test_guards.py``; agreement with PyTorch itself in ``tests/oracle``
(``test_random_oracle.py``, ``test_layers_oracle.py``).
"""

from __future__ import annotations

import contextlib
import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitorch_nn as mt
from minitorch_nn import random as mt_random
from minitorch_nn._ops import aten
from minitorch_nn.overrides import TorchFunctionMode
from minitorch_nn.utils._python_dispatch import TorchDispatchMode
from tests.twins.harness import (
    _Sub,
    assert_fast_equals_full,
    fast_when_on,
    full_path,
    outcome,
    ran_kernels,
)

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)

FILLS = [aten.uniform_.default, aten.normal_.default]


# -- making the target --------------------------------------------------------------------------------

def _target(shape, dtype, layout, kind):
    """A tensor to fill: row-major, transposed, a slice (a view) or an expanded view; a plain
    Tensor, a Parameter, a leaf that requires grad, or a tensor subclass."""
    base = mt.zeros(*shape, dtype=dtype) if dtype is not None else mt.zeros(*shape)
    if layout == "transposed" and base.dim() >= 2:
        base = base.transpose(0, -1)
    elif layout == "slice" and base.dim() >= 1:
        base = base[: max(shape[0] - 1, 0)]
    elif layout == "expanded" and base.dim() >= 1:
        base = base[:1].expand(3, *shape[1:]) if shape[0] else base
    if kind == "parameter":
        return mt.nn.Parameter(base) if base.dtype.is_floating_point else base
    if kind == "requires_grad":
        return base.clone().requires_grad_() if base.dtype.is_floating_point else base
    if kind == "subclass":
        return base.as_subclass(_Sub)
    return base


def _fill_outcome(make, fill, seed, explicit_generator, no_grad):
    t = make()
    default = mt.manual_seed(seed)
    gen = mt_random.Generator().manual_seed(seed + 1) if explicit_generator else default
    kwargs = {"generator": gen} if explicit_generator else {}
    before = t._impl.version.value   # (an inference tensor hides its counter from ._version)
    with mt.no_grad() if no_grad else contextlib.nullcontext(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = fill(t, kwargs)
        except Exception as e:  # noqa: BLE001 - the twin must fail exactly as the readable path does
            result = ("error", type(e).__name__, str(e))
        else:
            result = ("ok", out is t, type(out).__name__)
    result += tuple((w.category.__name__, str(w.message)) for w in caught)
    values = np.asarray(t.detach()._array).tobytes()
    states = [g.get_state().numpy().tobytes() for g in (default, gen)]
    return result, values, t._impl.version.value - before, t.requires_grad, states


def _assert_fill_same(make, fill, seed=0, explicit_generator=False, no_grad=False):
    fast = _fill_outcome(make, fill, seed, explicit_generator, no_grad)
    with full_path():
        full = _fill_outcome(make, fill, seed, explicit_generator, no_grad)
    assert fast == full


# -- the fills: same values, errors, versions and generator state -------------------------------------

SHAPES = st.lists(st.integers(0, 7), min_size=0, max_size=3).map(tuple)
NUMBER = (st.floats(-1e3, 1e3, allow_nan=False) | st.integers(-5, 5)
          | st.sampled_from([0.0, -0.0, 1.0, 1e-30, 3e38, -3e38, 1e39, math.inf, math.nan, 2**60, True]))
DTYPES = st.sampled_from([mt.float32, mt.float64, mt.float16, mt.int64, None])
LAYOUTS = st.sampled_from(["row-major", "transposed", "slice", "expanded"])
KINDS = st.sampled_from(["tensor", "parameter", "requires_grad", "subclass"])


@SETTINGS
@given(shape=SHAPES, dtype=DTYPES, layout=LAYOUTS, kind=KINDS, low=NUMBER, span=st.floats(0, 100) | NUMBER,
       seed=st.integers(0, 2**32 - 1), explicit=st.booleans(), no_grad=st.booleans())
def test_uniform_fill_matches_the_readable_path(shape, dtype, layout, kind, low, span, seed, explicit, no_grad):
    high = low + span if isinstance(low, (int, float)) and isinstance(span, (int, float)) else span
    _assert_fill_same(lambda: _target(shape, dtype, layout, kind),
                      lambda t, kw: t.uniform_(low, high, **kw), seed, explicit, no_grad)


@SETTINGS
@given(shape=SHAPES, dtype=DTYPES, layout=LAYOUTS, kind=KINDS, mean=NUMBER,
       std=st.floats(0, 10) | NUMBER, seed=st.integers(0, 2**32 - 1), explicit=st.booleans(),
       no_grad=st.booleans())
def test_normal_fill_matches_the_readable_path(shape, dtype, layout, kind, mean, std, seed, explicit, no_grad):
    _assert_fill_same(lambda: _target(shape, dtype, layout, kind),
                      lambda t, kw: t.normal_(mean, std, **kw), seed, explicit, no_grad)


@pytest.mark.parametrize("call", [
    lambda t, kw: t.uniform_(**kw), lambda t, kw: t.uniform_(-2, **kw), lambda t, kw: t.normal_(**kw),
    lambda t, kw: t.normal_(0.5, **kw), lambda t, kw: t.uniform_(a=-1.0, b=1.0, **kw),
    lambda t, kw: t.normal_(np.float32(0.5), 2.0, **kw), lambda t, kw: t.uniform_(-1.0, 1.0, 3.0),
    lambda t, kw: t.uniform_(-1.0, "1"), lambda t, kw: t.normal_(0.0, -1.0, **kw),
    lambda t, kw: t.uniform_(1.0, -1.0, **kw), lambda t, kw: t.uniform_(-1.0, 1.0, generator=7),
])
@pytest.mark.parametrize("shape", [(4, 5), (20,), (3, 1, 6)])
def test_every_call_form_matches_the_readable_path(call, shape):
    _assert_fill_same(lambda: mt.zeros(*shape), call, seed=3)
    _assert_fill_same(lambda: mt.zeros(*shape), call, seed=3, explicit_generator=True)


def test_several_fills_in_a_row_leave_the_generators_alike():
    # normal_ on fewer than 16 values caches the second Box-Muller value on the generator: the
    # next fill must find the same cache on both paths
    def fills(t, kw):
        t[:3].normal_(**kw)
        t.normal_(1.0, 2.0, **kw)
        mt.zeros(5).normal_(**kw)
        t.uniform_(-0.5, 0.5, **kw)
        return t.normal_(**kw)

    for explicit in (False, True):
        _assert_fill_same(lambda: mt.zeros(6, 7), fills, seed=5, explicit_generator=explicit)
        _assert_fill_same(lambda: mt.zeros(6, 7, dtype=mt.float64), fills, seed=5, explicit_generator=explicit)


def test_an_inference_tensor_gets_the_readable_refusal():
    with mt.inference_mode():
        t = mt.zeros(3, 4)
    _assert_fill_same(lambda: t, lambda t, kw: t.uniform_(**kw))
    with mt.inference_mode():   # inside inference mode the write is allowed
        _assert_fill_same(lambda: t, lambda t, kw: t.normal_(**kw))


def test_a_view_made_under_no_grad_of_a_leaf_gets_the_readable_refusal():
    def make():
        w = mt.zeros(4, 4, requires_grad=True)
        with mt.no_grad():
            return w[1]

    _assert_fill_same(make, lambda t, kw: t.uniform_(**kw))


def test_init_functions_and_layers_match_the_readable_path():
    def build():
        mt.manual_seed(11)
        layers = [mt.nn.Linear(8, 8), mt.nn.Linear(3, 5, dtype=mt.float64), mt.nn.Embedding(10, 6),
                  mt.nn.Conv2d(2, 3, 3), mt.nn.Bilinear(2, 3, 4)]
        w = mt.empty(5, 7)
        mt.nn.init.normal_(w, 0.0, 0.02)
        mt.nn.init.xavier_uniform_(w)
        mt.nn.init.kaiming_normal_(w)
        arrays = [p.detach().numpy().tobytes() for layer in layers for p in layer.parameters()]
        versions = [p._version for layer in layers for p in layer.parameters()]
        return arrays, versions, w.numpy().tobytes(), w._version, mt.get_rng_state().numpy().tobytes()

    fast = build()
    with full_path():
        assert build() == fast


# -- which path ran --------------------------------------------------------------------------------------

def test_the_twins_take_the_everyday_calls():
    w = mt.zeros(8, 8)
    p = mt.nn.Parameter(mt.zeros(8))
    assert fast_when_on(ran_kernels(lambda: w.uniform_(-0.1, 0.1), FILLS))
    assert fast_when_on(ran_kernels(lambda: w.normal_(0.0, 0.02), FILLS))
    assert fast_when_on(ran_kernels(lambda: mt.nn.init.uniform_(p, -0.5, 0.5), FILLS))
    assert fast_when_on(ran_kernels(lambda: mt.nn.init.kaiming_uniform_(w, a=math.sqrt(5)), FILLS))
    assert fast_when_on(ran_kernels(lambda: mt.nn.Linear(8, 8), FILLS + [aten.empty.memory_format]))
    assert fast_when_on(ran_kernels(lambda: mt.empty(2, 3), [aten.empty.memory_format]))


@pytest.mark.parametrize("fill", [lambda t: t.uniform_(), lambda t: t.normal_()])
def test_observers_see_every_fill(fill):
    t = mt.zeros(4, 4)
    seen = []

    class Functions(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return func(*args, **(kwargs or {}))

    class Ops(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    with Functions():
        fill(t)
        mt.empty(3)
    assert seen in (["uniform_", "empty"], ["normal_", "empty"])
    seen.clear()
    with Ops():
        fill(t)
        mt.empty(3)
    assert seen in (["aten.uniform_.default", "aten.empty.memory_format"],
                    ["aten.normal_.default", "aten.empty.memory_format"])
    assert ran_kernels(lambda: fill(t.as_subclass(_Sub)), FILLS)   # a subclass takes the full path
    assert ran_kernels(lambda: fill(mt.zeros(4, 4).t()), FILLS)   # so does a transposed target


def test_a_replaced_generator_method_runs():
    calls = []
    original = mt_random.Generator._uniform

    def counting(self, *args, **kwargs):
        calls.append(1)
        return original(self, *args, **kwargs)

    mt_random.Generator._uniform = counting
    try:
        mt.zeros(4).uniform_()
        mt.zeros(4).uniform_(generator=mt_random.Generator())
    finally:
        mt_random.Generator._uniform = original
    assert calls == [1, 1]
    gen = mt_random.Generator()
    gen._normal = lambda *args, **kwargs: calls.append(2) or original(gen, *args[:2], 0.0, 1.0)
    mt.zeros(4).normal_(generator=gen)       # a method replaced on one generator only
    assert calls == [1, 1, 2]


@pytest.mark.parametrize("module, name", [("kernels", "_fill"), ("kernels", "_draw"), ("kernels", "_gen"),
                                          ("kernels", "_check_float"), ("kernels", "_memory_order"),
                                          ("kernels", "_from_array"),
                                          ("random", "_shape"), ("random", "_np_dtype")])
def test_a_rebound_helper_of_the_kernels_runs(module, name):
    from minitorch_nn.backends.cpu import random as kernels

    owner = {"kernels": kernels, "random": mt_random}[module]
    original = getattr(owner, name)
    calls = []

    def counting(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    setattr(owner, name, counting)
    try:
        mt.zeros(4, 4).uniform_(-1.0, 1.0)
        mt.zeros(4, 4).normal_()
        mt.rand(3)
        mt.randn(3)
    finally:
        setattr(owner, name, original)
    assert len(calls) >= 2   # (each fill, or each of rand and randn, calls each helper at least once)


@pytest.mark.parametrize("kind", ["float64", "list", "transposed"])
def test_a_replaced_draw_is_used_as_the_kernels_use_it(kind):
    from minitorch_nn._random import distributions

    original = distributions.uniform

    def other(eng, shape, dt, low, high):
        values = original(eng, shape, dt, low, high)
        if kind == "float64":
            return values.astype(np.float64)
        if kind == "list":
            return values.tolist()
        return np.asfortranarray(values)

    distributions.uniform = other
    try:
        _assert_fill_same(lambda: mt.zeros(3, 4), lambda t, kw: t.uniform_(-1.0, 1.0, **kw), seed=2)
        assert_fast_equals_full(lambda: (mt.manual_seed(2), mt.rand(3, 4))[1])   # (a list: the kernel's error)
    finally:
        distributions.uniform = original


def test_a_replaced_default_generator_is_the_one_drawn_from():
    saved = mt_random.default_generator
    mt_random.default_generator = mt_random.Generator().manual_seed(9)
    try:
        a = mt.zeros(6).uniform_()
        expected = mt_random.Generator().manual_seed(9)._uniform((6,), np.float32)
    finally:
        mt_random.default_generator = saved
    assert a.numpy().tobytes() == expected.tobytes()


# -- empty --------------------------------------------------------------------------------------------

def _meta_summary(t):
    # (a meta tensor has no values for the harness to read)
    return repr((type(t).__name__, t.device, t.dtype, tuple(t.shape), t.stride(), t._version))


EMPTY_CALLS = [
    lambda: mt.empty(2, 3), lambda: mt.empty((2, 3)), lambda: mt.empty([4]), lambda: mt.empty(mt.Size([2, 0, 3])),
    lambda: mt.empty(()), lambda: mt.empty(0), lambda: mt.empty(5, dtype=mt.float64),
    lambda: mt.empty(5, dtype=mt.int64), lambda: mt.empty(2, 2, dtype=mt.float16), lambda: mt.empty(3, dtype=mt.bool),
    lambda: mt.empty(3, device=None, dtype=None), lambda: mt.empty(3, device="cpu"), lambda: mt.empty(3, device=mt.device("cpu")),
    lambda: _meta_summary(mt.empty(3, device="meta")), lambda: mt.empty(3, requires_grad=True), lambda: mt.empty(3, requires_grad=False),
    lambda: mt.empty(3, dtype=mt.int64, requires_grad=True), lambda: mt.empty(2, -1), lambda: mt.empty(-3),
    lambda: mt.empty(), lambda: mt.empty(2.0), lambda: mt.empty((2, 3), 4), lambda: mt.empty(True),
    lambda: mt.empty(np.int64(3)), lambda: mt.empty(2, 3, out=mt.zeros(1)), lambda: mt.empty(3, dtype=float),
    lambda: mt.empty(2**40, 2**40), lambda: mt.empty(1, 2, 3, 4, memory_format=mt.channels_last),
    lambda: mt.empty(3, layout=mt.strided), lambda: mt.empty(3, pin_memory=False), lambda: mt.empty(3, bogus=1),
]


@pytest.mark.parametrize("call", EMPTY_CALLS)
def test_empty_matches_the_readable_path(call):
    assert_fast_equals_full(call)


@SETTINGS
@given(shape=st.lists(st.integers(0, 6), min_size=0, max_size=5).map(tuple), form=st.sampled_from(["args", "tuple", "list"]),
       dtype=st.sampled_from([None, mt.float32, mt.float64, mt.int64]))
def test_empty_shapes_match_the_readable_path(shape, form, dtype):
    size = {"args": shape, "tuple": (shape,), "list": (list(shape),)}[form]
    kwargs = {} if dtype is None else {"dtype": dtype}
    assert_fast_equals_full(lambda: mt.empty(*size, **kwargs))


def test_empty_follows_the_defaults_and_modes():
    saved = mt.get_default_dtype()
    mt.set_default_dtype(mt.float64)
    try:
        assert_fast_equals_full(lambda: mt.empty(2, 3))
        assert mt.empty(2).dtype is mt.float64
    finally:
        mt.set_default_dtype(saved)
    with mt.device("meta"):
        assert_fast_equals_full(lambda: _meta_summary(mt.empty(2, 3)))
        assert mt.empty(2).device.type == "meta"
    mt.set_default_device("meta")
    try:
        assert mt.empty(2).device.type == "meta"
    finally:
        mt.set_default_device(None)
    with mt.inference_mode():
        made = mt.empty(2, 3)
        with full_path():
            reference = mt.empty(2, 3)
    assert made.is_inference() and reference.is_inference()
    assert (made.numpy().tobytes(), made.stride(), made.dtype) == (reference.numpy().tobytes(), reference.stride(),
                                                                    reference.dtype)
    assert not mt.empty(2).is_inference()
    with mt.device("cpu"):   # a default device set, even the cpu: the full path resolves it
        assert ran_kernels(lambda: mt.empty(2), [aten.empty.memory_format])


# -- zeros, ones, rand, randn -----------------------------------------------------------------------------

FACTORIES = {"empty": lambda *a, **k: mt.empty(*a, **k), "zeros": lambda *a, **k: mt.zeros(*a, **k),
             "ones": lambda *a, **k: mt.ones(*a, **k), "rand": lambda *a, **k: mt.rand(*a, **k),
             "randn": lambda *a, **k: mt.randn(*a, **k)}
FACTORY_OPS = [aten.empty.memory_format, aten.zeros.default, aten.ones.default, aten.rand.default,
               aten.rand.generator, aten.randn.default, aten.randn.generator]
ARGUMENTS = [((2, 3), {}), (((4,),), {}), (([2, 0, 3],), {}), (((),), {}), ((5,), {"dtype": mt.float64}),
             ((5,), {"dtype": mt.int64}), ((2, 2), {"dtype": mt.float16}), ((3,), {"device": None, "dtype": None}),
             ((3,), {"device": "cpu"}), ((3,), {"requires_grad": True}), ((3,), {"requires_grad": False}),
             ((2, -1), {}), ((), {}), ((2.0,), {}), ((True,), {}), ((np.int64(3),), {}), ((3,), {"dtype": float}),
             ((2, 3), {"out": None}), ((3,), {"layout": mt.strided}), ((3,), {"generator": "seeded"}),
             ((40, 40), {"generator": "seeded", "dtype": mt.float64}), ((3,), {"generator": 7}), ((3,), {"bogus": 1})]


def _factory_outcome(name, args, kwargs, seed):
    default = mt.manual_seed(seed)
    gen = mt_random.Generator().manual_seed(seed + 1)
    kwargs = {k: (gen if v == "seeded" else v) for k, v in kwargs.items()}
    result = outcome(lambda: FACTORIES[name](*args, **kwargs))
    return result, default.get_state().numpy().tobytes(), gen.get_state().numpy().tobytes()


@pytest.mark.parametrize("args, kwargs", ARGUMENTS)
@pytest.mark.parametrize("name", FACTORIES)
def test_factories_match_the_readable_path(name, args, kwargs):
    fast = _factory_outcome(name, args, kwargs, 4)
    with full_path():
        assert _factory_outcome(name, args, kwargs, 4) == fast


@SETTINGS
@given(shape=st.lists(st.integers(0, 40), min_size=1, max_size=3).map(tuple), name=st.sampled_from(sorted(FACTORIES)),
       dtype=st.sampled_from([None, mt.float32, mt.float64]), seed=st.integers(0, 2**32 - 1))
def test_factory_shapes_match_the_readable_path(shape, name, dtype, seed):
    kwargs = {} if dtype is None else {"dtype": dtype}
    fast = _factory_outcome(name, shape, kwargs, seed)
    with full_path():
        assert _factory_outcome(name, shape, kwargs, seed) == fast


def test_the_factory_twins_take_the_everyday_calls_and_step_aside_for_a_default_device():
    gen = mt_random.Generator()
    for call in (lambda: mt.zeros(3, 4), lambda: mt.ones(5), lambda: mt.rand(2, 8), lambda: mt.randn(16),
                 lambda: mt.randn(4, generator=gen), lambda: mt.zeros((2, 2), dtype=mt.int64)):
        assert fast_when_on(ran_kernels(call, FACTORY_OPS))
        with mt.device("cpu"):
            assert ran_kernels(call, FACTORY_OPS)


# -- zero_, fill_ ----------------------------------------------------------------------------------------

WRITES = [aten.zero_.default, aten.fill_.Scalar]
VALUES = NUMBER | st.sampled_from([2**24 + 1, 2**53 + 1, -(2**63), 2**64, 1e300, -1.5, 7])


@SETTINGS
@given(shape=SHAPES, dtype=st.sampled_from([mt.float32, mt.float64, mt.int64, mt.float16, mt.bool, None]),
       layout=LAYOUTS, kind=KINDS, value=VALUES, no_grad=st.booleans())
def test_fill_and_zero_match_the_readable_path(shape, dtype, layout, kind, value, no_grad):
    _assert_fill_same(lambda: _target(shape, dtype, layout, kind), lambda t, kw: t.fill_(value), no_grad=no_grad)
    def nonzero_target():
        t = _target(shape, dtype, layout, kind)
        with mt.no_grad(), contextlib.suppress(RuntimeError):   # (an expanded view cannot be written)
            t.detach().copy_(mt.full(tuple(t.shape), 3))   # (something for zero_ to clear)
        return t

    _assert_fill_same(nonzero_target, lambda t, kw: t.zero_(), no_grad=no_grad)


@pytest.mark.parametrize("call", [
    lambda t, kw: t.fill_(mt.tensor(2.5)), lambda t, kw: t.fill_(mt.ones(2)), lambda t, kw: t.fill_(value=1.0),
    lambda t, kw: t.fill_(), lambda t, kw: t.fill_(1.0, 2.0), lambda t, kw: t.fill_("x"), lambda t, kw: t.fill_(1 + 0j),
    lambda t, kw: t.fill_(2j), lambda t, kw: t.fill_(np.float32(0.1)), lambda t, kw: t.zero_(1),
    lambda t, kw: mt.nn.init.constant_(t, 0.3), lambda t, kw: mt.nn.init.ones_(t), lambda t, kw: mt.nn.init.zeros_(t),
])
@pytest.mark.parametrize("dtype", [mt.float32, mt.float64, mt.int64])
def test_every_write_form_matches_the_readable_path(call, dtype):
    _assert_fill_same(lambda: mt.ones(3, 4, dtype=dtype), call)


def test_the_write_twins_take_the_everyday_calls_and_step_aside_for_observers():
    w, p = mt.ones(4, 4), mt.nn.Parameter(mt.ones(4))
    assert fast_when_on(ran_kernels(lambda: w.zero_(), WRITES))
    assert fast_when_on(ran_kernels(lambda: w.fill_(0.5), WRITES))
    assert fast_when_on(ran_kernels(lambda: mt.nn.init.ones_(p), WRITES))
    assert fast_when_on(ran_kernels(lambda: mt.nn.LayerNorm(8), WRITES + FACTORY_OPS))
    assert ran_kernels(lambda: w.t().fill_(1.0), WRITES)
    assert ran_kernels(lambda: w[1].zero_(), WRITES)   # (a view)
    seen = []

    class Ops(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    with Ops():
        w.zero_()
        w.fill_(2.0)
    assert seen == ["aten.zero_.default", "aten.fill_.Scalar"]


@pytest.mark.parametrize("name", ["write_into", "real_scalar", "compute_dtype"])
def test_a_rebound_helper_of_the_write_kernels_runs(name):
    from minitorch_nn.backends.cpu import factories as kernels

    original = getattr(kernels, name)
    calls = []

    def counting(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    setattr(kernels, name, counting)
    try:
        mt.ones(3).fill_(2.0)
        mt.ones(3).zero_()
    finally:
        setattr(kernels, name, original)
    assert calls   # (fill_ calls all three; zero_ calls write_into)
