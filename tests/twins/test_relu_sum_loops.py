"""The C loops inside the relu and sum twins give numpy's bits.

``x.relu()``'s twin (``_ext/twins/backends/cpu/activations.pyx``) replaces ``np.maximum(x, 0)`` by
a loop, and ``x.sum()``'s (``_ext/twins/backends/cpu/reduction.pyx``) replaces ``np.add.reduce``
by a copy of numpy's pairwise summation, both for row-major float32/float64 arrays. Checked here:

* the loops on their own (``relu_values``, ``pairwise_sum_values``) against ``np.maximum`` and
  ``np.add.reduce``, bytes compared: every size 0..20000 and the sizes around numpy's block and
  buffer edges up to 70000, with specials (NaN with payloads, signalling NaN, infinities, signed
  zeros, subnormals, the largest values); a sum that is not finite is left to numpy (None);
* ``x.relu()`` / ``x.sum()`` on tensors against the readable path (``assert_fast_equals_full``:
  metadata, bytes of the values, warnings), hypothesis over sizes, shapes, dtypes and specials;
  and, with the switch on, that the twin (not the readable kernel) ran.

Like every test here it runs with the switch on and off (``conftest.py``).
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitorch_nn as mt
from minitorch_nn._ops import aten
from tests.twins.harness import assert_fast_equals_full, fast_when_on, ran_kernels

activations_twin = pytest.importorskip("minitorch_nn._twins.backends.cpu.activations",
                                       reason="the package was built without the compiled twins (_ext/twins/)")
reduction_twin = pytest.importorskip("minitorch_nn._twins.backends.cpu.reduction",
                                     reason="the package was built without the compiled twins (_ext/twins/)")

DTYPES = [np.float32, np.float64]
# numpy's pairwise blocks (8, 128), the recursion's 1024 hand-over, its iterator buffer (8192)
EDGE_SIZES = sorted({e + d for e in (8, 16, 128, 256, 512, 1024, 2048, 8192, 16384, 65536) for d in (-1, 0, 1)}
                    | {69999, 70000})


def _uint(dtype):
    return np.uint32 if dtype == np.float32 else np.uint64


def _specials(dtype):
    info = np.finfo(dtype)
    plain = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, info.smallest_subnormal,
                      -info.smallest_subnormal, info.tiny, -info.tiny, info.max, -info.max, 1.0, -1.0], dtype)
    # NaNs with payloads, of both signs, and signalling NaNs (numpy's maximum passes them on untouched)
    payloads = ([0x7FC00123, 0xFFC00456, 0x7F800001, 0xFF800777] if dtype == np.float32 else
                [0x7FF8000000000123, 0xFFF8000000000456, 0x7FF0000000000001, 0xFFF0000000000777])
    return np.concatenate([plain, np.array(payloads, _uint(dtype)).view(dtype)])


def _values(rng, n, dtype, special_share=0.0):
    x = (rng.standard_normal(n) * np.exp(rng.uniform(-12, 12, n))).astype(dtype)
    if special_share:
        mask = rng.random(n) < special_share
        x[mask] = rng.choice(_specials(dtype), int(mask.sum()))
    return x


def _sum_matches(x):
    got = reduction_twin.pairwise_sum_values(x)
    with np.errstate(all="ignore"):
        want = np.add.reduce(x, None)   # (x.sum(): every axis)
    if got is None:
        return not np.isfinite(want)   # (declined: only a sum that is infinite or NaN)
    return got.dtype == want.dtype and got.shape == () and got.tobytes() == want.tobytes()


@pytest.mark.parametrize("dtype", DTYPES)
def test_sum_loop_equals_numpy_for_every_size_to_20000(dtype):
    base = _values(np.random.default_rng(20000), 20000, dtype)
    bad = [n for n in range(20001) if not _sum_matches(base[:n])]
    assert bad == []


@pytest.mark.parametrize("dtype", DTYPES)
def test_sum_loop_equals_numpy_at_block_and_buffer_edges(dtype):
    rng = np.random.default_rng(7)
    for n in EDGE_SIZES + [100_003, 2**20 + 5]:
        for scale in (1.0, 1e-30, 1e30):
            x = (_values(rng, n, dtype) * dtype(scale)).astype(dtype)
            assert _sum_matches(x), (n, scale)
        # all negative zeros: numpy seeds the reduction with +0.0
        assert _sum_matches(np.full(n, -0.0, dtype)), n


@pytest.mark.parametrize("dtype", DTYPES)
def test_sum_loop_with_specials_and_shapes(dtype):
    rng = np.random.default_rng(3)
    for n in list(range(0, 300)) + EDGE_SIZES[:12]:
        x = _values(rng, n, dtype, special_share=0.05)
        assert _sum_matches(x), n
        assert _sum_matches(x[x == x] if n else x), n   # (no NaN: infinities and zeros only)
    for shape in [(0,), (0, 3), (1, 1), (64, 64), (256, 256), (3, 5, 7), (8193, 2)]:
        x = _values(rng, int(np.prod(shape)), dtype).reshape(shape)
        assert _sum_matches(x), shape
    # strided, Fortran-ordered, byte-swapped and other dtypes: numpy's business (None)
    x = _values(rng, 64, dtype).reshape(8, 8)
    for other in (x[:, ::2], x.T, x.astype(x.dtype.newbyteorder()), x.astype(np.int64), x.astype(np.float16)):
        assert reduction_twin.pairwise_sum_values(other) is None


@pytest.mark.parametrize("dtype", DTYPES)
def test_relu_loop_equals_numpy_maximum(dtype):
    rng = np.random.default_rng(11)
    zero = np.zeros((), dtype)
    specials = _specials(dtype)
    # every special on its own, then mixed arrays of every size to 20000
    assert activations_twin.relu_values(specials).tobytes() == np.maximum(specials, zero).tobytes()
    base = _values(rng, 20000, dtype, special_share=0.1)
    for n in range(0, 20001, 7):
        x = base[:n]
        got = activations_twin.relu_values(x)
        assert got.tobytes() == np.maximum(x, zero).tobytes(), n
        assert got.shape == x.shape and got.flags.c_contiguous
    x = base[:60].reshape(3, 4, 5)
    assert activations_twin.relu_values(x).tobytes() == np.maximum(x, zero).tobytes()
    with np.errstate(invalid="ignore"):   # (casting NaN to int64)
        as_int = x.astype(np.int64)
    for other in (x[:, ::2], x.T, as_int, x.astype(x.dtype.newbyteorder())):
        assert activations_twin.relu_values(other) is None


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(size=st.one_of(st.integers(0, 300), st.sampled_from(EDGE_SIZES)),
       dtype=st.sampled_from(["float32", "float64"]), special_share=st.sampled_from([0.0, 0.01, 0.3]),
       seed=st.integers(0, 2**32 - 1), rows=st.sampled_from([1, 2, 3]))
def test_relu_and_sum_on_tensors_equal_the_readable_path(size, dtype, special_share, seed, rows):
    x = _values(np.random.default_rng(seed), size * rows, np.dtype(dtype).type, special_share)
    a = mt.tensor(x.reshape(rows, size) if rows > 1 else x)
    assert_fast_equals_full(lambda: a.relu(), a)
    assert_fast_equals_full(lambda: a.sum(), a)   # (warnings compared too: overflow, inf - inf)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_twins_take_these_tensors(dtype):
    a = mt.tensor(_values(np.random.default_rng(0), 256 * 256, np.dtype(dtype).type).reshape(256, 256))
    assert fast_when_on(ran_kernels(lambda: a.relu(), [aten.relu.default]))
    assert fast_when_on(ran_kernels(lambda: a.sum(), [aten.sum.default, aten.sum.dim_IntList]))


def test_the_loops_are_used_exactly_where_numpy_agrees_with_them():
    # each twin asks once whether the installed numpy gives its loop's bits, and else keeps numpy
    rng = np.random.default_rng(1)
    sums_agree = all(_sum_matches(_values(rng, n, dtype)) for dtype in DTYPES for n in EDGE_SIZES)
    assert reduction_twin.sum_loop_in_use() == sums_agree
    relus_agree = all(activations_twin.relu_values(_specials(dtype)).tobytes()
                      == np.maximum(_specials(dtype), np.zeros((), dtype)).tobytes() for dtype in DTYPES)
    assert activations_twin.relu_loop_in_use() == relus_agree
