"""``backends/cpu/_fma.fma``: one rounding of ``x * y + z``, compiled or with its numpy fallback.

The reference is exact rational arithmetic (``fractions.Fraction``) rounded once to the dtype, so
these tests need no PyTorch; ``tests/oracle/test_fused_rounding_oracle.py`` checks the ops built
on it against PyTorch.
"""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from minitorch_nn.backends.cpu import _fma

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


def _round_once(value, dtype):
    """The exact rational ``value`` rounded to nearest ``dtype`` (ties to even), with no
    intermediate rounding: the candidates around a first guess are compared exactly."""
    guess = dtype(float(value))
    candidates = [np.nextafter(guess, dtype(-np.inf)), guess, np.nextafter(guess, dtype(np.inf))]
    candidates = [c for c in candidates if np.isfinite(c)]
    return min(candidates, key=lambda c: (abs(Fraction(float(c)) - value), int(c.view(f"u{c.itemsize}")) & 1))


def _exact(x, y, z, dtype):
    """``x * y + z`` computed exactly, then rounded once to ``dtype``."""
    return np.array([_round_once(Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c)), dtype)
                     for a, b, c in zip(x, y, z)], dtype)


@SETTINGS
@given(n=st.integers(1, 300), dtype=st.sampled_from([np.float32, np.float64]), seed=st.integers(0, 2**16))
def test_rounds_once(n, dtype, seed):
    rng = np.random.default_rng(seed)
    x, y, z = (rng.standard_normal(n).astype(dtype) for _ in range(3))
    expected = _exact(x, y, z, dtype)
    if dtype == np.float64 and _fma._compiled_fma is None:
        pytest.skip("float64 needs the compiled loop (build the extension: make build)")
    assert np.array_equal(_fma.fma(x, y, z), expected)


@SETTINGS
@given(n=st.integers(1, 300), seed=st.integers(0, 2**16))
def test_numpy_fallback_matches_for_float32(n, seed):
    # (float64 then float32 is two roundings: equal to one except in double-rounding cases
    # too rare for random inputs to meet)
    rng = np.random.default_rng(seed)
    x, y, z = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    saved = _fma._compiled_fma
    try:
        _fma._compiled_fma = None
        fallback = _fma.fma(x, y, z)
    finally:
        _fma._compiled_fma = saved
    assert fallback.dtype == np.float32
    assert np.array_equal(fallback, _exact(x, y, z, np.float32))


def test_broadcasting_and_out():
    rng = np.random.default_rng(0)
    z = rng.standard_normal((4, 6))
    x, y = rng.standard_normal(6), np.asarray(0.3)
    expected = _exact(np.broadcast_to(x, z.shape).ravel(), np.full(z.size, 0.3), z.ravel(), np.float64).reshape(4, 6)
    if _fma._compiled_fma is None:
        pytest.skip("float64 needs the compiled loop (build the extension: make build)")
    assert np.array_equal(_fma.fma(x, y, z), expected)
    target = z.copy()
    assert _fma.fma(x, y, target, out=target) is target  # in place, as add_ uses it
    assert np.array_equal(target, expected)
    wide = np.zeros((4, 12))
    view = wide[:, ::2]  # a non-contiguous out gets the values too
    _fma.fma(x, y, z, out=view)
    assert np.array_equal(view, expected) and not wide[:, 1::2].any()
    with pytest.raises(ValueError):
        _fma.fma(x, y, z, out=np.zeros((2, 6)))
