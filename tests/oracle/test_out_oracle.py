"""Oracle: ``out=`` on elementwise functions against PyTorch 2.13.

The result lands in ``out`` (which is returned, one version bump later); an ``out`` of another
shape is resized (with PyTorch's warning unless it was empty) and laid out like a fresh result;
each op family's dtype rule and message; autograd's refusal; overlapping ``out`` tensors raise.
The rules live in ``minitorch_nn/_functions/_out.py``.
"""

import itertools
import math
import warnings

import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import minitorch_nn as mt  # noqa: E402

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


def run(fn, L):
    """What ``fn(L)`` does: the error, or out's geometry, values, version, identity and warnings."""
    x = L.arange(6.0).reshape(2, 3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out, r = fn(L, x)
        except Exception as e:  # noqa: BLE001 - both libraries' errors are compared
            return type(e).__name__, str(e)
    texts = [str(w.message).split(" (Triggered internally")[0] for w in caught]
    return (r is out, tuple(out.shape), out.stride(), str(out.dtype).removeprefix("torch."), out.tolist(),
            out._version, texts)


def _e(L, *shape, dtype="float32"):
    return L.zeros(*shape, dtype=getattr(L, dtype))


CASES = {
    "add_same_shape": lambda L, x: (o := _e(L, 2, 3), L.add(x, 1, out=o)),
    "add_resize_warns": lambda L, x: (o := _e(L, 3), L.add(x, 1, out=o)),
    "add_resize_empty_keeps_layout": lambda L, x: (o := _e(L, 0), L.add(x.t(), 1, out=o)),
    "add_into_long_refused": lambda L, x: (o := _e(L, 2, 3, dtype="int64"), L.add(x, 1, out=o)),
    "add_into_double": lambda L, x: (o := _e(L, 2, 3, dtype="float64"), L.add(x, 1, out=o)),
    "add_into_transposed_out": lambda L, x: (o := _e(L, 3, 2).t(), L.add(x, 1, out=o)),
    "add_into_input": lambda L, x: (x, L.add(x, x, out=x)),
    "add_into_expanded": lambda L, x: (o := _e(L, 3).expand(2, 3), L.add(x, 1, out=o)),
    "add_partial_overlap": lambda L, x: (o := x.reshape(-1)[1:4].reshape(1, 3), L.add(x[:1], 1, out=o)),
    "eq_into_long": lambda L, x: (o := _e(L, 2, 3, dtype="int64"), L.eq(x, 1, out=o)),
    "exp_into_long_refused": lambda L, x: (o := _e(L, 2, 3, dtype="int64"), L.exp(x, out=o)),
    "sqrt_int_into_double": lambda L, x: (o := _e(L, 2, 3, dtype="float64"), L.sqrt(x.to(L.int64), out=o)),
    "exp_into_expanded": lambda L, x: (o := x[:, :1].expand(2, 3), L.exp(x, out=o)),
    "abs_into_double_refused": lambda L, x: (o := _e(L, 2, 3, dtype="float64"), L.abs(x, out=o)),
    "neg_into_double_refused": lambda L, x: (o := _e(L, 2, 3, dtype="float64"), L.neg(x, out=o)),
    "clamp_into_double_refused": lambda L, x: (o := _e(L, 2, 3, dtype="float64"), L.clamp(x, 0, 1, out=o)),
    "where_into_double_refused": lambda L, x: (o := _e(L, 2, 3, dtype="float64"), L.where(x > 1, x, x, out=o)),
    "nan_to_num_into_double_refused": lambda L, x: (o := _e(L, 2, 3, dtype="float64"), L.nan_to_num(x, out=o)),
    "isnan_has_no_out": lambda L, x: (o := _e(L, 2, 3), L.isnan(x, out=o)),
    "addcmul_into_double": lambda L, x: (o := _e(L, 2, 3, dtype="float64"), L.addcmul(x, x, x, out=o)),
    "div_floor_int_into_long": lambda L, x: (o := _e(L, 2, 3, dtype="int64"), L.div(x.to(L.int64), 2, rounding_mode="floor", out=o)),
    "pow_into_long_refused": lambda L, x: (o := _e(L, 2, 3, dtype="int64"), L.pow(x, 2, out=o)),
    "logical_and_into_float": lambda L, x: (o := _e(L, 2, 3), L.logical_and(x, x, out=o)),
    "requires_grad_refused": lambda L, x: (o := _e(L, 2, 3), L.add(x.requires_grad_(), 1, out=o)),
    "out_requires_grad_refused": lambda L, x: (o := _e(L, 2, 3).requires_grad_(), L.mul(x, 2, out=o)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_out_matches_torch(name):
    assert run(CASES[name], mt) == run(CASES[name], torch)


def test_no_grad_allows_out():
    for L in (mt, torch):
        x = L.ones(3, requires_grad=True)
        o = L.zeros(3)
        with L.no_grad():
            assert L.mul(x, 2, out=o) is o
        assert o.tolist() == [2.0, 2.0, 2.0]


@SETTINGS
@given(shape=st.lists(st.integers(0, 3), min_size=0, max_size=3).map(tuple),
       perm_seed=st.integers(0, 5), out_size=st.sampled_from([0, 1, None]))
def test_resized_out_is_laid_out_like_a_fresh_result(shape, perm_seed, out_size):
    perms = list(itertools.permutations(range(len(shape))))
    perm = perms[perm_seed % len(perms)]

    n = math.prod(shape)

    def fn(L, _):
        x = L.arange(float(n)).reshape([shape[p] for p in perm])  # stored in the order `perm`
        x = x.permute(tuple(sorted(range(len(perm)), key=perm.__getitem__)))
        o = L.zeros(out_size) if out_size is not None else L.zeros(shape)
        return o, L.neg(x, out=o)

    assert run(fn, mt) == run(fn, torch)
