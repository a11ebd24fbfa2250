"""Behaviour of minitorch_nn.random without PyTorch: determinism, seeds, state bytes, errors.

The values pinned here were produced by PyTorch 2.13 on CPU; tests/oracle/test_random_oracle.py
compares against a live torch much more widely.
"""

from __future__ import annotations

import copy
import importlib
import pathlib
import sys
import types
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st


def _load_random():
    """``minitorch_nn.random``; if the package cannot be imported yet (its compiled core not built),
    load the random module on its own under a private package name."""
    try:
        return importlib.import_module("minitorch_nn.random")
    except Exception:  # noqa: BLE001 - not built yet, or mid-edit: test this module on its own
        root = pathlib.Path(__file__).resolve().parents[1] / "minitorch_nn"
        name = "_minitorch_nn_random_standalone"
        if name not in sys.modules:
            pkg = types.ModuleType(name)
            pkg.__path__ = [str(root)]
            sys.modules[name] = pkg
        return importlib.import_module(name + ".random")


R = _load_random()
_pkg = R.__name__.rsplit(".", 1)[0]
fpmath = importlib.import_module(_pkg + "._random.fpmath")
engine = importlib.import_module(_pkg + "._random.engine")

try:
    import ml_dtypes

    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover
    BF16 = None

FLOATS = [np.float32, np.float64, np.float16] + ([BF16] if BF16 is not None else [])


def state_np(state) -> np.ndarray:
    """A state (numpy array or minitorch tensor) as a numpy uint8 array."""
    if isinstance(state, np.ndarray):
        return state
    return np.asarray(state.numpy())


def gen(seed=0):
    return R.Generator().manual_seed(seed)


# ------------------------------------------------------------------------------------- pinned values
def test_pinned_values_from_pytorch():
    g = gen(0)
    np.testing.assert_array_equal(
        g._uniform((3,), np.float32),
        np.array([0.49625658988952637, 0.7682217955589294, 0.08847743272781372], np.float32),
    )
    # fewer than 16 elements: the double-precision Box-Muller path
    np.testing.assert_array_equal(
        g._normal((3,), np.float32),
        np.array([0.3643381893634796, 0.13439632952213287, 0.16421625018119812], np.float32),
    )
    assert g._randint((5,), np.int64, 0, 10).tolist() == [6, 6, 9, 8, 6]
    assert g._randperm(6, np.int64).tolist() == [0, 4, 1, 3, 2, 5]
    g = gen(0)  # 16 elements: the vectorised AVX2 path
    np.testing.assert_array_equal(
        g._normal((16,), np.float32)[:3],
        np.array([-1.1258398294448853, -1.152360200881958, -0.2505785822868347], np.float32),
    )
    np.testing.assert_array_equal(
        g._uniform((2,), np.float64), [0.5813409198075745, 0.2882358921361502]
    )


def test_fresh_generator_uses_pytorch_default_seed():
    g = R.Generator()
    assert g.initial_seed() == 67280421310721
    np.testing.assert_array_equal(
        g._uniform((2,), np.float32), np.array([0.267295241355896, 0.8725283145904541], np.float32)
    )


# ---------------------------------------------------------------------------------------- seeding
def test_manual_seed_returns_generator_and_is_deterministic():
    g = R.Generator()
    assert g.manual_seed(5) is g
    a = g._normal((100,), np.float32)
    b = gen(5)._normal((100,), np.float32)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, gen(6)._normal((100,), np.float32))


def test_seed_keeps_64_bits_but_engine_uses_low_32():
    big = (1 << 32) + 5
    g = gen(big)
    assert g.initial_seed() == big
    np.testing.assert_array_equal(g._uniform((10,), np.float32), gen(5)._uniform((10,), np.float32))


def test_negative_seed_wraps_to_uint64():
    assert gen(-1).initial_seed() == 2**64 - 1
    assert gen(-(2**63)).initial_seed() == 2**63


@pytest.mark.parametrize("bad", [2**64, -(2**63) - 1])
def test_seed_overflow(bad):
    with pytest.raises(ValueError, match="Overflow when unpacking long long"):
        R.Generator().manual_seed(bad)


@pytest.mark.parametrize("bad, name", [(1.5, "float"), ("3", "str"), (True, "bool")])
def test_generator_manual_seed_wants_an_int(bad, name):
    with pytest.raises(RuntimeError, match=f"manual_seed expected a long, but got {name}"):
        R.Generator().manual_seed(bad)


def test_module_manual_seed_goes_through_int():
    g = R.manual_seed(1.7)
    assert g is R.default_generator
    assert R.initial_seed() == 1


def test_seed_is_random_64_bit_and_reported():
    s = R.seed()
    assert 0 <= s < 2**64
    assert R.initial_seed() == s
    g = R.Generator()
    s2 = g.seed()
    assert g.initial_seed() == s2
    np.testing.assert_array_equal(g._uniform((4,), np.float32), gen(s2)._uniform((4,), np.float32))


def test_device_is_cpu_and_cuda_refused():
    g = R.Generator("cpu")
    assert str(g.device) == "cpu"
    with pytest.raises(RuntimeError, match="only 'cpu'"):
        R.Generator("cuda")


# ------------------------------------------------------------------------------------------ state
def test_state_layout_after_seeding():
    raw = state_np(gen(0x1_2345_6789).get_state())
    assert raw.dtype == np.uint8 and raw.shape == (5056,)
    st_ = np.frombuffer(raw.tobytes(), dtype=engine.STATE_DTYPE)[0]
    assert int(st_["the_initial_seed"]) == 0x1_2345_6789
    assert (int(st_["left"]), int(st_["seeded"]), int(st_["next"])) == (1, 1, 0)
    assert int(st_["state"][0]) == 0x2345_6789  # only the low 32 bits seed the twister
    assert int(st_["normal_is_valid"]) == 0 and int(st_["is_next_float_normal_sample_valid"]) == 0


def test_state_counters_advance_like_pytorch():
    g = gen(1)
    g._uniform((1,), np.float32)
    st_ = np.frombuffer(state_np(g.get_state()).tobytes(), dtype=engine.STATE_DTYPE)[0]
    assert (int(st_["left"]), int(st_["next"])) == (624, 1)
    g._uniform((623,), np.float32)
    st_ = np.frombuffer(state_np(g.get_state()).tobytes(), dtype=engine.STATE_DTYPE)[0]
    assert (int(st_["left"]), int(st_["next"])) == (1, 624)


@pytest.mark.parametrize(
    "draw", ["normal_small", "normal_big", "uniform", "randint", "randperm", "bernoulli"]
)
def test_state_round_trip(draw):
    g = gen(3)
    g._normal((3,), np.float64)  # leaves a cached Box-Muller value in the state
    saved = g.get_state()

    def sample(h):
        if draw == "normal_small":
            return h._normal((5,), np.float32)
        if draw == "normal_big":
            return h._normal((33,), np.float32)
        if draw == "uniform":
            return h._uniform((7,), np.float64)
        if draw == "randint":
            return h._randint((9,), np.int64, -(2**40), 2**40)
        if draw == "randperm":
            return h._randperm(50, np.int64)
        return h._bernoulli((20,), np.float32, 0.3)

    first = sample(g)
    g.set_state(saved)
    np.testing.assert_array_equal(sample(g), first)
    other = R.Generator().set_state(saved)
    np.testing.assert_array_equal(sample(other), first)
    np.testing.assert_array_equal(state_np(other.get_state()), state_np(g.get_state()))


def test_cached_normal_lives_in_state():
    g = gen(0)
    g._normal((1,), np.float64)
    st_ = np.frombuffer(state_np(g.get_state()).tobytes(), dtype=engine.STATE_DTYPE)[0]
    assert int(st_["normal_is_valid"]) == 1
    # the next small draw starts with that cached value, and consumes no words for it
    words_before = engine.MT19937Engine.counters(g._engine)[:2]
    v = g._normal((1,), np.float64)[0]
    assert v == float(st_["normal_y"])
    assert engine.MT19937Engine.counters(g._engine)[:2] == words_before
    # reseeding forgets the cache
    g.manual_seed(0)
    assert g._next_double_normal is None


def test_set_state_accepts_numpy_and_irregular_counters():
    g = gen(9)
    raw = state_np(g.get_state()).copy()
    st_ = np.frombuffer(raw.tobytes(), dtype=engine.STATE_DTYPE).copy()
    st_["left"] = 10  # legal for PyTorch although left + next != 625
    st_["next"] = 5
    h = R.Generator().set_state(np.frombuffer(st_.tobytes(), dtype=np.uint8))
    words = h._engine.random(12)
    key = st_["state"][0].astype(np.uint32)
    np.testing.assert_array_equal(
        words[:9], engine.temper(key[5:14])
    )  # left - 1 words from key[next:]
    # then a twist of the unchanged array: the same words a regular engine produces after 624
    reg = engine.MT19937Engine(0)
    reg.set_counters(9, 1, 0, key)
    np.testing.assert_array_equal(words[9:], reg.random(3))


def test_set_state_errors():
    g = R.Generator()
    with pytest.raises(TypeError, match="expected a torch.ByteTensor, but got list"):
        g.set_state([0] * 5056)
    with pytest.raises(TypeError, match="RNG state must be a torch.ByteTensor"):
        g.set_state(np.zeros(5056, dtype=np.float32))
    with pytest.raises(
        RuntimeError,
        match="Expected a CPUGeneratorImplState of size 5056 but found the input RNG state size to be 10",
    ):
        g.set_state(np.zeros(10, dtype=np.uint8))
    with pytest.raises(RuntimeError, match="Invalid mt19937 state"):
        g.set_state(np.zeros(5056, dtype=np.uint8))  # seeded == 0, left == 0
    # nothing changed after the failures
    assert g.initial_seed() == 67280421310721


def test_fork_rng_and_module_state_functions():
    R.manual_seed(4)
    saved = R.get_rng_state()
    with R.fork_rng():
        R.default_generator._uniform((10,), np.float32)
    np.testing.assert_array_equal(state_np(R.get_rng_state()), state_np(saved))
    a = R.default_generator._uniform((3,), np.float32)
    R.set_rng_state(saved)
    np.testing.assert_array_equal(R.default_generator._uniform((3,), np.float32), a)


def test_deepcopy_continues_the_same_stream():
    g = gen(2)
    g._normal((3,), np.float64)
    h = copy.deepcopy(g)
    np.testing.assert_array_equal(g._normal((5,), np.float64), h._normal((5,), np.float64))


# --------------------------------------------------------------------------------------- samplers
@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("shape", [(), (1,), (4, 5), (2, 3, 17)])
def test_float_samplers_shape_dtype_layout(dt, shape):
    g = gen(0)
    for out in (
        g._uniform(shape, dt),
        g._normal(shape, dt),
        g._uniform(shape, dt, -2, 3),
        g._exponential(shape, dt),
    ):
        assert out.shape == shape and out.dtype == np.dtype(dt) and out.flags.c_contiguous


@pytest.mark.parametrize("dt", FLOATS)
def test_uniform_range_is_half_open(dt):
    out = gen(1)._uniform((5000,), dt, 3.0, 3.5).astype(np.float64)
    assert out.min() >= 3.0 and out.max() < 3.5


@pytest.mark.parametrize(
    "dt", [np.int64, np.int32, np.int16, np.int8, np.uint8, np.float32, np.float64]
)
@pytest.mark.parametrize("low, high", [(0, 10), (-5, 5), (0, 100)])
def test_randint_range(dt, low, high):
    if np.dtype(dt) == np.uint8 and low < 0:
        pytest.skip("negative bounds do not fit uint8")
    out = gen(2)._randint((3, 400), dt, low, high)
    assert out.dtype == np.dtype(dt) and out.shape == (3, 400)
    assert out.min() >= low and out.max() < high
    assert len(np.unique(out)) == high - low


def test_randint_wide_and_full_range():
    out = gen(0)._randint((1000,), np.int64, -(2**40), 2**40)
    assert out.min() >= -(2**40) and out.max() < 2**40 and out.min() < -(2**38)
    full = gen(0)._randint((1000,), np.int64, -(2**63), 2**63)
    assert full.min() < -(2**60) and full.max() > 2**60


@pytest.mark.parametrize(
    "dt",
    [np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.float16, np.float32, np.float64],
)
def test_random_without_bounds(dt):
    out = gen(0)._random((2000,), dt)
    assert out.dtype == np.dtype(dt)
    if np.dtype(dt).kind == "f":
        digits = {2: 11, 4: 24, 8: 53}[np.dtype(dt).itemsize]
        assert out.astype(np.float64).max() <= 2**digits
    elif dt is not np.bool_:
        assert out.min() >= 0


@pytest.mark.parametrize("n", [0, 1, 2, 5, 1000, 20000])
@pytest.mark.parametrize("dt", [np.int64, np.int32, np.float32])
def test_randperm_is_a_permutation(n, dt):
    out = gen(n)._randperm(n, dt)
    assert out.dtype == np.dtype(dt) and out.shape == (n,)
    np.testing.assert_array_equal(np.sort(out.astype(np.int64)), np.arange(n))


def test_bernoulli_extremes_and_tensor_p():
    g = gen(0)
    assert not g._bernoulli((100,), np.float32, 0.0).any()
    assert g._bernoulli((100,), np.float32, 1.0).all()
    p = np.array([0.0, 1.0, 0.0, 1.0], dtype=np.float32)
    out = g._bernoulli((3, 4), np.int64, p)  # broadcast along the first dimension
    np.testing.assert_array_equal(out, np.tile([0, 1, 0, 1], (3, 1)))
    assert g._bernoulli((10,), np.bool_, 0.5).dtype == np.bool_
    frac = g._bernoulli((20000,), np.float64, 0.25).mean()
    assert 0.23 < frac < 0.27


def test_normal_moments_and_noncontiguous_path():
    g = gen(0)
    for dt in FLOATS:
        x = g._normal((20000,), dt, 2.0, 0.5).astype(np.float64)
        assert abs(x.mean() - 2.0) < 0.02 and abs(x.std() - 0.5) < 0.02
    a = gen(0)._normal((40,), np.float32)
    b = gen(0)._normal((40,), np.float32, contiguous=False)  # PyTorch's per-element path
    assert not np.array_equal(a, b)
    np.testing.assert_array_equal(b[:3], gen(0)._normal((3,), np.float32))


# -------------------------------------------------------------------------------------- errors
def test_sampler_errors_match_pytorch():
    g = R.Generator()
    with pytest.raises(
        RuntimeError,
        match=r"uniform_ expects to return a \[from, to\) range, but found from=2 > to=1",
    ):
        g._uniform((3,), np.float32, 2, 1)
    with pytest.raises(RuntimeError, match="from is out of bounds for c10::Half"):
        g._uniform((3,), np.float16, -70000, 70000)
    with pytest.raises(RuntimeError, match="to is out of bounds for float$"):
        g._uniform((3,), np.float32, 0, float("inf"))
    with pytest.raises(RuntimeError, match="from is out of bounds for double$"):
        g._uniform((3,), np.float64, float("nan"), 1)
    state = g.get_state()
    with pytest.raises(RuntimeError, match="to is out of bounds for float$"):
        g._uniform((3,), np.float32, 3, 1e39)  # bounds are checked before their order
    assert g.get_state().equal(state)  # a refused call draws nothing
    with pytest.raises(RuntimeError, match="normal expects std >= 0.0, but found std -1"):
        g._normal((3,), np.float32, 0, -1)
    with pytest.raises(
        RuntimeError, match="random_ expects 'from' to be less than 'to', but got from=5 >= to=5"
    ):
        g._randint((3,), np.int64, 5, 5)
    with pytest.raises(RuntimeError, match="to - 1 is out of bounds for int"):
        g._randint((3,), np.int32, 0, 2**32)
    with pytest.raises(
        RuntimeError, match=r"bernoulli_ expects p to be in \[0, 1\], but got p=1.5"
    ):
        g._bernoulli((3,), np.float32, 1.5)
    with pytest.raises(
        RuntimeError, match="Expected p_in >= 0 && p_in <= 1 to be true, but got false."
    ):
        g._bernoulli((1,), np.float32, np.array([1.5]))
    with pytest.raises(RuntimeError, match="n cannot be greater than 2049 for Half type."):
        g._randperm(3000, np.float16)
    with pytest.raises(
        RuntimeError, match="exponential_ expects lambda > 0.0, but found lambda=-1"
    ):
        g._exponential((3,), np.float32, -1)
    assert g.initial_seed() == 67280421310721  # untouched
    assert g._engine.counters()[:2] == (1, 0)  # and no word drawn by a failed call


def test_randint_warns_past_exact_float_integers():
    with pytest.warns(UserWarning, match=r"to - 1 is out of bounds \[-\(2\^24\), 2\^24\]"):
        gen(0)._randint((3,), np.float32, 0, 2**25)


# --------------------------------------------------------------------------- exact float helpers
def _round_f32(q: Fraction) -> float:
    """Round an exact rational to the nearest float32 (ties to even)."""
    lo = np.float32(float(q))
    if Fraction(float(lo)) > q:
        lo = np.nextafter(lo, np.float32(-np.inf))
    hi = np.nextafter(lo, np.float32(np.inf))
    dlo, dhi = q - Fraction(float(lo)), Fraction(float(hi)) - q
    if dlo < dhi or (dlo == dhi and (lo.view(np.uint32) & 1) == 0):
        return float(lo)
    return float(hi)


_f32 = st.floats(-1e6, 1e6, width=32, allow_subnormal=False)


@settings(max_examples=300, deadline=None)
@given(_f32, _f32, _f32)
def test_fma_f32_is_correctly_rounded(a, b, c):
    got = fpmath.fma_f32(np.float32(a), np.float32(b), np.float32(c))[0]
    assert float(got) == _round_f32(Fraction(a) * Fraction(b) + Fraction(c))


def test_fma_f32_near_halfway_points():
    # a*b lands a hair away from a float32 halfway point of c: a naive float64 sum rounds onto it
    a = np.float32(1 + 2**-23)
    b = np.float32(1 + 2**-23)
    for cc in (np.float32(-1.0), np.float32(2**24), np.float32(-(2**-20))):
        exact = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(cc))
        assert float(fpmath.fma_f32(a, b, cc)[0]) == _round_f32(exact)
    # a constructed double-rounding trap: exact = 1 + 2**-24 + 2**-60 (just above a float32 tie)
    x = np.float32(1 + 2**-12)
    y = np.float32(1 - 2**-12)  # x*y = 1 - 2**-24 exactly
    cc = np.float32(2**-23)
    exact = Fraction(float(x)) * Fraction(float(y)) + Fraction(float(cc))
    assert float(fpmath.fma_f32(x, y, cc)[0]) == _round_f32(exact)


@settings(max_examples=300, deadline=None)
@given(st.floats(-1e100, 1e100), st.floats(-1e100, 1e100), st.floats(-1e200, 1e200))
def test_fma_f64_is_correctly_rounded(a, b, c):
    got = float(np.ravel(fpmath.fma_f64(a, b, c))[0])
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    assert got == float(exact)  # Fraction -> float rounds to nearest, ties to even


def test_clone_state_offsets_and_graphsafe():
    g = gen(6)
    g._normal((3,), np.float64)
    c = g.clone_state()
    assert c is not g
    np.testing.assert_array_equal(c._normal((9,), np.float64), g._normal((9,), np.float64))
    with pytest.raises(RuntimeError, match="CPU Generator does not use offset"):
        g.get_offset()
    with pytest.raises(RuntimeError, match="CPU Generator does not use offset"):
        g.set_offset(1)
    with pytest.raises(
        NotImplementedError, match="graphsafe_get_state is not supported in this Generator"
    ):
        g.graphsafe_get_state()


def test_libm_fallback_gives_the_same_bits(monkeypatch):
    """Where numpy's float64 log/sin/cos differ from libm, the per-element ``math`` path is used;
    on this machine both must agree bit for bit."""
    dist = importlib.import_module(_pkg + "._random.distributions")
    fast = [
        gen(1)._normal((1000,), np.float64),
        gen(1)._normal((15,), np.float64, contiguous=False),
        gen(1)._exponential((500,), np.float64, 0.5),
    ]
    monkeypatch.setattr(dist, "_LIBM_CHECKED", False)
    slow = [
        gen(1)._normal((1000,), np.float64),
        gen(1)._normal((15,), np.float64, contiguous=False),
        gen(1)._exponential((500,), np.float64, 0.5),
    ]
    for a, b in zip(fast, slow):
        np.testing.assert_array_equal(a, b)


def test_big_randperm_uses_the_inside_out_algorithm(monkeypatch):
    """Above 2**32 / 20 PyTorch switches algorithms; shrink the limit to exercise that branch."""
    dist = importlib.import_module(_pkg + "._random.distributions")
    monkeypatch.setattr(dist, "_RANDPERM_SMALL_LIMIT", 10)
    g = gen(0)
    out = g._randperm(50, np.int64)
    np.testing.assert_array_equal(np.sort(out), np.arange(50))
    # inside-out shuffle by hand from the same 64-bit draws
    words = gen(0)._engine.random64(50)
    perm = [0] * 50
    for i in range(50):
        j = int(words[i] % np.uint64(i + 1))
        perm[i] = perm[j]
        perm[j] = i
    assert out.tolist() == perm
