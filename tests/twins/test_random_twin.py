"""The compiled twin of the random recipes (``_ext/twins/_random/distributions.pyx``) against the
readable ``minitorch_nn/_random/distributions.py``.

Each draw is made twice from generators in the same state: once with the test's switch (the twin
while ``backends.compiled`` is on) and once on the readable path (switch off). The values must be
the same bits, and the generators must end in the same state (same bytes from ``get_state``).
Then the guards: a helper of ``uniform`` replaced at run time, or ``uniform`` itself, takes over
from the twin. Agreement with PyTorch itself is checked in ``tests/oracle`` (the seeded
``rand``/``uniform_``/``nn.init`` and module-construction tests).
"""

from __future__ import annotations

import contextlib
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitorch_nn as mt
from minitorch_nn import random as mt_random
from minitorch_nn._random import distributions
from minitorch_nn.backends import compiled
from tests.twins.harness import full_path, switch_on

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
SHAPES = st.lists(st.integers(0, 9), min_size=0, max_size=3).map(tuple)
BOUND = st.floats(-1e6, 1e6, allow_nan=False) | st.sampled_from([0.0, -0.0, 1.0, -1.0, 1e-30, 3e38, -3e38])


def _twin():
    """``distributions.uniform``'s compiled twin, or None where the extension is not built."""
    try:
        from minitorch_nn._twins._random import distributions as twin
    except ImportError:
        return None
    return twin


def _pair(seed, warm_up):
    """Two generators in the same state: seeded, then ``warm_up`` words drawn (which moves the
    engine off a fresh twist, so both the first-draw and the mid-block cases are seen)."""
    gens = [mt_random.Generator().manual_seed(seed) for _ in range(2)]
    for g in gens:
        g._engine.random(warm_up)
    return gens


def _draw_both(seed, warm_up, draw):
    """``draw(generator)`` with the test's switch and on the readable path; returns both outcomes
    (the values' dtype and bytes, or the error) and both final states."""
    fast_gen, slow_gen = _pair(seed, warm_up)
    outcomes = []
    for gen, readable in ((fast_gen, False), (slow_gen, True)):
        try:
            if readable:
                with full_path():
                    out = draw(gen)
            else:
                out = draw(gen)
            outcomes.append(("value", out.dtype, out.shape, out.tobytes()))
        except Exception as e:  # noqa: BLE001 - the twin must fail exactly as the original does
            outcomes.append(("error", type(e), str(e)))
    return outcomes, fast_gen.get_state().numpy().tobytes(), slow_gen.get_state().numpy().tobytes()


def _assert_same(seed, warm_up, draw):
    (fast, slow), fast_state, slow_state = _draw_both(seed, warm_up, draw)
    assert fast == slow
    assert fast_state == slow_state, "the generators ended in different states"


@SETTINGS
@given(shape=SHAPES, dtype=st.sampled_from([F32, F64]), low=BOUND, span=st.floats(0, 1e6),
       seed=st.integers(0, 2**64 - 1), warm_up=st.integers(0, 700))
def test_uniform_same_bits(shape, dtype, low, span, seed, warm_up):
    high = low + span
    _assert_same(seed, warm_up, lambda g: g._uniform(shape, dtype, low, high))


@SETTINGS
@given(n=st.integers(1, 3000), dtype=st.sampled_from([F32, F64]), seed=st.integers(0, 2**32 - 1))
def test_unit_interval_and_sizes_across_a_twist(n, dtype, seed):
    # [0, 1) is the recipe's no-fma branch; sizes up to 3000 words cross the 624-word twist
    _assert_same(seed, 0, lambda g: g._uniform((n,), dtype))


@SETTINGS
@given(n=st.integers(0, 400), dtype=st.sampled_from([F32, F64]),
       mean=st.floats(-10, 10) | st.sampled_from([0.0, -0.0, 1.0, -900.5]),
       std=st.floats(1e-3, 10) | st.sampled_from([0.0, 1.0, 0.02, 700.25]),
       contiguous=st.booleans(), seed=st.integers(0, 2**64 - 1), warm_up=st.integers(0, 700))
def test_normal_same_bits(n, dtype, mean, std, contiguous, seed, warm_up):
    # 16 or more contiguous values: the Box-Muller blocks (a partial last block redone with fresh
    # words); fewer, or non-contiguous: the readable double-precision path with its cached value
    _assert_same(seed, warm_up, lambda g: g._normal((n,), dtype, mean, std, contiguous))


@pytest.mark.parametrize("mean, std", [(0.0, 1.0), (0.3, 0.7), (-2.5, 3.1), (0.0, 0.02)])
@pytest.mark.parametrize("n", [16, 1000, 1001])
@pytest.mark.parametrize("dtype", [F32, F64])
def test_normal_many_values(dtype, n, mean, std):
    # enough values that a single multiply-add rounded twice, or a step of the float32 Cephes
    # functions rounded differently, shows in some of them
    _assert_same(n, 1, lambda g: g._normal((n,), dtype, mean, std))


@pytest.mark.parametrize("dtype", [F32, F64])
def test_normal_after_a_cached_value_and_in_shapes(dtype):
    def draw(g):
        g._normal((3,), dtype)             # leaves a cached second Box-Muller value
        return np.concatenate([g._normal((4, 9), dtype, 1.5, 0.5).ravel(), g._normal((5,), dtype).ravel()])

    _assert_same(2, 0, draw)


@pytest.mark.parametrize("std", [-1.0, math.nan, math.inf, 1e31])
def test_normal_refusals_and_extremes_are_the_readable_ones(std):
    (fast, slow), fast_state, slow_state = _draw_both(4, 0, lambda g: g._normal((20,), F32, 0.0, std))
    assert fast == slow and fast_state == slow_state


@SETTINGS
@given(n=st.integers(0, 3000), seed=st.integers(0, 2**64 - 1), warm_up=st.integers(0, 700),
       dtype=st.sampled_from([np.int64, np.int32, np.float32, np.float16]))
def test_randperm_same_bits(n, seed, warm_up, dtype):
    _assert_same(seed, warm_up, lambda g: g._randperm(n, np.dtype(dtype)))


@SETTINGS
@given(shape=SHAPES, p=st.floats(0, 1) | st.sampled_from([0.0, 1.0, 0.5, 0.9, 1 - 2**-53]),
       dtype=st.sampled_from([F32, F64, np.dtype(np.float16), np.dtype(np.int64), np.dtype(np.bool_)]),
       seed=st.integers(0, 2**64 - 1), warm_up=st.integers(0, 700))
def test_bernoulli_same_bits(shape, p, dtype, seed, warm_up):
    _assert_same(seed, warm_up, lambda g: g._bernoulli(shape, dtype, p))


@pytest.mark.parametrize("p", [-0.1, 1.5, math.nan, 1, np.float32(0.25), np.array([0.2, 0.9, 0.5])])
def test_bernoulli_other_probabilities_are_the_readable_ones(p):
    _assert_same(6, 2, lambda g: g._bernoulli((3,), F32, p))


def test_dropout_matches_the_readable_path():
    def run(readable):
        mt.manual_seed(4)
        x = mt.randn(4, 8, 16)
        with (full_path() if readable else contextlib.nullcontext()):
            y = mt.nn.functional.dropout(x, 0.1)
            z = mt.nn.functional.dropout(x.double(), 0.3)
        return y.numpy().tobytes(), z.numpy().tobytes(), mt.get_rng_state().numpy().tobytes()

    assert run(False) == run(True)


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16"])
def test_narrow_float_types_take_the_readable_recipe(dtype):
    # float16/bfloat16 are computed in float32 and rounded once more: the twin hands them over
    narrow = np.dtype(mt.bfloat16.numpy_dtype if dtype == "bfloat16" else dtype)
    _assert_same(7, 3, lambda g: g._uniform((5, 7), narrow, -2.0, 3.0))
    _assert_same(7, 3, lambda g: g._normal((5, 7), narrow, 0.5, 1.5))


@pytest.mark.parametrize("low, high", [
    (2.0, 1.0),                       # from > to
    (math.inf, math.inf), (-math.inf, 0.0), (0.0, math.nan), (math.nan, 1.0),
    (-3e38, 3e38),                    # the span exceeds float32's largest value
    (0.0, 1e39),                      # a bound outside float32
])
@pytest.mark.parametrize("dtype", [F32, F64])
def test_refusals_are_the_readable_ones(low, high, dtype):
    (fast, slow), fast_state, slow_state = _draw_both(1, 0, lambda g: g._uniform((4,), dtype, low, high))
    assert fast == slow
    assert fast_state == slow_state
    if dtype == F32:
        assert fast[0] == "error"


def test_a_hand_made_state_with_queued_words():
    # an irregular (but legal) saved state makes the engine hand out queued words first
    g = mt_random.Generator().manual_seed(3)
    state = g.get_state().numpy().copy()
    raw = np.frombuffer(state.tobytes(), dtype=mt_random._STATE_DTYPE).copy()
    raw["left"], raw["next"] = 5, 10
    state = np.frombuffer(raw.tobytes(), dtype=np.uint8).copy()

    def draw(gen):
        gen.set_state(state)
        return gen._uniform((9,), F32, -1.0, 1.0)

    _assert_same(0, 0, draw)


def test_init_and_linear_weights_match_the_readable_path():
    # the everyday callers: nn.init.uniform_ / kaiming_uniform_ through Tensor.uniform_
    def build(readable):
        mt.manual_seed(11)
        if readable:
            with full_path():
                layer = mt.nn.Linear(8, 5)
                t = mt.empty(3, 17, dtype=mt.float64).uniform_(-4, 2)
        else:
            layer = mt.nn.Linear(8, 5)
            t = mt.empty(3, 17, dtype=mt.float64).uniform_(-4, 2)
        return [layer.weight.detach().numpy().tobytes(), layer.bias.detach().numpy().tobytes(), t.numpy().tobytes(),
                mt.get_rng_state().numpy().tobytes()]

    assert build(False) == build(True)


@pytest.mark.parametrize("name", ["uniform", "normal", "randperm", "bernoulli"])
def test_the_switch_binds_the_twin_or_the_readable_function(name):
    twin = _twin()
    if twin is None:
        pytest.skip("the compiled twins are not built (python setup.py build_ext --inplace)")
    assert f"minitorch_nn._random.distributions.{name}" not in compiled.disabled()
    if switch_on():
        assert getattr(distributions, name) is getattr(twin, name)
    else:
        assert getattr(distributions, name) is not getattr(twin, name)
        assert getattr(distributions, name).__code__.co_filename.endswith("distributions.py")


def test_randn_and_dataloader_shuffle_match_the_readable_path():
    def run(readable):
        mt.manual_seed(3)
        with (full_path() if readable else contextlib.nullcontext()):
            x = mt.randn(5, 40)
            e = mt.nn.Embedding(10, 4)
            order = [b[0].tolist() for b in mt.utils.data.DataLoader(mt.arange(50), batch_size=7, shuffle=True)]
        return x.numpy().tobytes(), e.weight.detach().numpy().tobytes(), order, mt.get_rng_state().numpy().tobytes()

    assert run(False) == run(True)


def test_guard_a_replaced_helper_runs():
    # a helper of uniform replaced at run time: the twin steps aside and the helper is called
    calls = []
    original = distributions._unit_uniform

    def counting(*args, **kwargs):
        calls.append(args[1:])
        return original(*args, **kwargs)

    distributions._unit_uniform = counting
    try:
        values = mt_random.Generator().manual_seed(0)._uniform((6,), F32, -1.0, 1.0)
    finally:
        distributions._unit_uniform = original
    assert calls == [(6, F32)]
    expected = mt_random.Generator().manual_seed(0)
    with full_path():
        assert values.tobytes() == expected._uniform((6,), F32, -1.0, 1.0).tobytes()


def test_guard_a_replaced_engine_method_runs():
    calls = []
    engine_type = type(mt_random.default_generator._engine)
    original = engine_type.random

    def counting(self, n):
        calls.append(n)
        return original(self, n)

    engine_type.random = counting
    try:
        mt_random.Generator().manual_seed(0)._uniform((3, 2), F32)
    finally:
        engine_type.random = original
    assert calls == [6]


def test_guard_a_replaced_avx2_helper_runs():
    # log_ps is imported by name into distributions: replacing that name turns the twin aside
    calls = []
    original = distributions.log_ps

    def counting(x):
        calls.append(x.size)
        return original(x)

    distributions.log_ps = counting
    try:
        values = mt_random.Generator().manual_seed(0)._normal((32,), F32)
    finally:
        distributions.log_ps = original
    assert calls == [16]
    with full_path():
        assert values.tobytes() == mt_random.Generator().manual_seed(0)._normal((32,), F32).tobytes()


def test_guard_a_replaced_uniform_runs_and_stays():
    calls = []
    before = distributions.uniform

    def mine(eng, shape, dt, low=0.0, high=1.0):
        calls.append(shape)
        return np.zeros(shape, dtype=dt)

    distributions.uniform = mine
    try:
        out = mt.empty(2, 3).uniform_(-1, 1)
        with compiled.flags(enabled=not compiled.enabled):   # a flip leaves a replaced binding alone
            assert distributions.uniform is mine
    finally:
        distributions.uniform = before
    assert calls == [(2, 3)]
    assert not out.numpy().any()
