"""The float32 loops of ``_ext/_unary_kernels.pyx`` (exp, log, expm1, log2, log10, log1p, sinh,
cosh, tanh) against the correctly rounded results.

The reference is the function computed in float64 by numpy and rounded once to float32: within
one ulp of it everywhere, and equal to it on nearly every element (the loops' whole point: numpy's
own float32 routines are not). Special values (infinities, NaN, signed zeros, tiny and huge
inputs) behave as the C library's functions; other dtypes are numpy's results unchanged.
``tests/oracle/test_activation_bits_oracle.py`` compares the loops with torch.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

kernels = pytest.importorskip("minitorch_nn._unary_kernels",
                              reason="the extension was built without _ext/_unary_kernels.pyx")

_NUMPY = {"exp": np.exp, "log": np.log, "expm1": np.expm1, "log2": np.log2, "log10": np.log10,
          "log1p": np.log1p, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh}
_POSITIVE = ("log", "log2", "log10", "log1p")


def _inputs(name, n=20000, seed=0):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * 4).astype(np.float32)
    x[: n // 10] *= np.float32(1e-4)   # near zero, where tanh switches to its series
    return np.abs(x) + np.float32(1e-6) if name in _POSITIVE else x


def _ulps(ours, reference):
    with np.errstate(invalid="ignore"):
        return np.abs(ours.astype(np.float64) - reference) / np.spacing(np.abs(reference))


@pytest.mark.parametrize("name", sorted(_NUMPY))
def test_correctly_rounded_on_nearly_every_element(name):
    x = _inputs(name)
    ours = kernels.ROUNDED_AS_PYTORCH[name](x)
    reference = _NUMPY[name](x.astype(np.float64)).astype(np.float32)
    assert ours.dtype == np.float32 and ours.shape == x.shape
    assert _ulps(ours, reference).max() <= 1
    # exp and log are expf/logf (fast, nearly always correctly rounded: 99.6% of these logs);
    # the others, computed in double and rounded once, reach 99.9%
    assert (ours == reference).mean() >= (0.99 if name in ("exp", "log") else 0.999)


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(sorted(_NUMPY)), layout=st.sampled_from(["contiguous", "transposed", "strided"]),
       x=hnp.arrays(np.float32, hnp.array_shapes(min_dims=0, max_dims=3, max_side=5),
                    elements=st.floats(-20, 20, width=32)))
def test_any_shape_and_layout_gives_the_same_values(name, layout, x):
    if name in _POSITIVE:
        x = np.asarray(np.abs(x) + np.float32(0.5))   # (0-d arithmetic gives a numpy scalar)
    if layout == "transposed" and x.ndim >= 2:
        x = x.T
    elif layout == "strided" and x.ndim >= 1:
        x = np.repeat(x, 2, axis=-1)[..., ::2]
    fn = kernels.ROUNDED_AS_PYTORCH[name]
    ours = fn(x)
    assert ours.shape == x.shape and ours.flags.c_contiguous
    # (np.ascontiguousarray makes a 0-d array 1-d)
    np.testing.assert_array_equal(ours, fn(np.ascontiguousarray(x)).reshape(ours.shape))
    assert fn(x[()] if x.ndim == 0 else x).tolist() == ours.tolist()   # a numpy scalar takes the loop too


def test_special_values():
    special = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-30, -1e-30, 100.0, -100.0], np.float32)
    with np.errstate(all="ignore"):
        for name in ("exp", "expm1", "sinh", "cosh", "tanh"):
            ours = kernels.ROUNDED_AS_PYTORCH[name](special)
            reference = _NUMPY[name](special.astype(np.float64)).astype(np.float32)
            np.testing.assert_array_equal(ours, reference)
            assert (np.signbit(ours) == np.signbit(reference)).all(), name   # -0.0 stays -0.0
        positive = np.array([np.inf, 0.0, -0.0, -1.0, np.nan, 1e-38, 3e38], np.float32)
        for name in _POSITIVE:
            np.testing.assert_array_equal(kernels.ROUNDED_AS_PYTORCH[name](positive),
                                          _NUMPY[name](positive.astype(np.float64)).astype(np.float32))


@pytest.mark.parametrize("dtype", [np.float64, np.float16, np.complex64, np.int32])
def test_other_dtypes_are_numpys(dtype):
    x = np.arange(1, 7).reshape(2, 3).astype(dtype)
    for name, fn in kernels.ROUNDED_AS_PYTORCH.items():
        ours = fn(x)
        theirs = _NUMPY[name](x)
        assert ours.dtype == theirs.dtype
        np.testing.assert_array_equal(ours, theirs)
