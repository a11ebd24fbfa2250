"""Oracle: ``torch.multinomial`` / ``Tensor.multinomial`` against PyTorch 2.13.

Under the same ``manual_seed`` (or ``generator=``) the cpu samples must be PyTorch's exactly: 1-d
and 2-d inputs, every floating dtype, with and without replacement, non-contiguous inputs. The
one known difference: without replacement, once every category of positive weight is drawn, the
remaining zero-weight categories tie, and PyTorch's ``topk`` orders ties in an order that comes
from its sorting routine; we give them in index order. Errors are compared by type and message.
"""

import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

import numpy as np  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import minitorch_nn as mt  # noqa: E402

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
DTYPES = ["float32", "float64", "float16", "bfloat16"]


def _both(weights, dtype):
    w = np.asarray(weights, dtype=np.float64)
    return mt.tensor(w, dtype=mt.float64).to(getattr(mt, dtype)), torch.tensor(w, dtype=torch.float64).to(getattr(torch, dtype))


@st.composite
def distributions(draw):
    """Weights for 1 or 2 rows: some zero, each row with at least one positive weight."""
    rows = draw(st.sampled_from([None, 1, 2, 3]))
    n = draw(st.integers(1, 40))
    weight = st.one_of(st.just(0.0), st.floats(0.01, 10.0))

    def row():
        r = draw(st.lists(weight, min_size=n, max_size=n))
        if not any(r):
            r[draw(st.integers(0, n - 1))] = 1.0
        return r

    return row() if rows is None else [row() for _ in range(rows)]


@SETTINGS
@given(weights=distributions(), data=st.data())
def test_samples_are_torchs_under_manual_seed(weights, data):
    dtype = data.draw(st.sampled_from(DTYPES))
    replacement = data.draw(st.booleans())
    w = np.asarray(weights)
    positive = int((w > 0).sum(axis=-1).min())
    top = 50 if replacement else positive  # (beyond `positive` the zero-weight ties differ, see above)
    num_samples = data.draw(st.integers(1, top))
    seed = data.draw(st.integers(0, 2**16))
    m, t = _both(weights, dtype)
    mt.manual_seed(seed)
    torch.manual_seed(seed)
    got, want = mt.multinomial(m, num_samples, replacement), torch.multinomial(t, num_samples, replacement)
    assert got.dtype is mt.int64 and got.shape == tuple(want.shape)
    assert got.tolist() == want.tolist()
    # the generator is left where PyTorch leaves it
    assert mt.rand(3).tolist() == torch.rand(3).tolist()


@SETTINGS
@given(weights=distributions(), replacement=st.booleans(), seed=st.integers(0, 2**16))
def test_without_replacement_beyond_positive_weights_draws_the_same_set(weights, replacement, seed):
    w = np.asarray(weights)
    n = w.shape[-1]
    m, t = _both(weights, "float32")
    mt.manual_seed(seed)
    torch.manual_seed(seed)
    got, want = mt.multinomial(m, n).numpy(), torch.multinomial(t, n).numpy()
    positive = (w > 0).sum(axis=-1)
    for g, x, k in zip(np.atleast_2d(got), np.atleast_2d(want), np.atleast_1d(positive)):
        assert g[:k].tolist() == x[:k].tolist()          # the positive-weight draws, in order
        assert sorted(g[k:].tolist()) == sorted(x[k:].tolist())  # then every zero-weight index once


def test_method_generator_and_non_contiguous_input():
    results = []
    for L in (mt, torch):
        g = L.Generator().manual_seed(7)
        L.manual_seed(1)
        p = L.rand(30, 3).t()  # non-contiguous rows: the exponential draws follow memory order
        results.append((
            p.multinomial(2).tolist(),
            L.multinomial(p, 3, generator=g).tolist(),
            L.multinomial(p, 5, replacement=True, generator=g).tolist(),
            L.multinomial(p[0], 1, True).tolist(),
        ))
    assert results[0] == results[1]


def _error(fn):
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 - both libraries' errors are compared
        return type(e).__name__, str(e)
    return "OK", tuple(r.shape)


NAN, INF = float("nan"), float("inf")
CASES = {
    "negative": ([0.5, -0.1], 1, False), "negative_replacement": ([0.5, -0.1], 2, True),
    "inf": ([0.5, INF], 1, False), "inf_replacement": ([0.5, INF], 2, True),
    "nan": ([0.5, NAN], 1, False), "nan_replacement": ([0.5, NAN], 2, True),
    "all_zero": ([0.0, 0.0], 1, False), "all_zero_replacement": ([0.0, 0.0], 2, True),
    "zero_row": ([[0.0, 0.0], [1.0, 1.0]], 1, False), "bad_second_row": ([[1.0, 1.0], [1.0, -1.0]], 2, True),
    "too_many_without_replacement": ([1.0, 1.0], 3, False), "zero_samples": ([1.0, 1.0], 0, False),
    "negative_samples": ([1.0, 1.0], -1, True), "scalar": (1.0, 1, False), "three_dims": ([[[1.0, 1.0]]], 1, False),
    "empty_rows": (np.ones((0, 3)), 2, False), "empty_categories": (np.ones((2, 0)), 1, True),
    "empty_categories_without_replacement": (np.ones((2, 0)), 1, False),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_errors_match_torch(name):
    weights, n, replacement = CASES[name]
    m, t = mt.tensor(np.asarray(weights, dtype=np.float32)), torch.tensor(np.asarray(weights, dtype=np.float32))
    assert _error(lambda: mt.multinomial(m, n, replacement)) == _error(lambda: torch.multinomial(t, n, replacement))


def test_argument_errors_match_torch():
    for fn in (lambda L: L.multinomial(L.tensor([1, 2]), 1), lambda L: L.multinomial(L.ones(2), 1.0)):
        assert _error(lambda fn=fn: fn(mt)) == _error(lambda fn=fn: fn(torch))


def test_meta_shapes_and_errors_match_torch():
    for fn in (lambda L: L.multinomial(L.ones(3, 4, device="meta"), 2),
               lambda L: L.multinomial(L.ones(3, 4, device="meta"), 5),      # (meta does not check this)
               lambda L: L.multinomial(L.ones(4, device="meta"), 0),
               lambda L: L.multinomial(L.ones(2, 2, 2, device="meta"), 1),
               lambda L: L.multinomial(L.ones(4, device="meta"), -2)):
        assert _error(lambda fn=fn: fn(mt)) == _error(lambda fn=fn: fn(torch))


def test_sample_frequencies_follow_the_weights():
    # a distribution check on top of the exact match: 20000 draws with replacement
    mt.manual_seed(0)
    p = mt.tensor([1.0, 2.0, 3.0, 4.0])
    counts = np.bincount(mt.multinomial(p, 20000, True).numpy(), minlength=4) / 20000
    np.testing.assert_allclose(counts, [0.1, 0.2, 0.3, 0.4], atol=0.015)
