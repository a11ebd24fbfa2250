"""The compiled forward loops of ``_ext/_activation_kernels.pyx`` (sigmoid, softmax, log_softmax).

Checked against their readable numpy versions (``pointwise._sigmoid_numpy``,
``reduction._softmax_numpy``) on random arrays of any layout, rank and dim: the same values to a
few ulps (the exp differs: libm's against numpy's own), the documented order of the sum exactly
(an emulation of the lanes in numpy), NaN and infinities as PyTorch treats them, and what the
loops decline. ``tests/oracle/test_activation_bits_oracle.py`` compares them with torch.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

kernels = pytest.importorskip("minitorch_nn._activation_kernels",
                              reason="the extension was built without _ext/_activation_kernels.pyx")
from minitorch_nn.backends.cpu.pointwise import _sigmoid_numpy  # noqa: E402
from minitorch_nn.backends.cpu.reduction import _softmax_numpy  # noqa: E402

_FLOATS = st.sampled_from([np.float32, np.float64])


def _arrays(dtype, min_dims=0, min_side=1):
    return hnp.arrays(dtype, hnp.array_shapes(min_dims=min_dims, max_dims=4, min_side=min_side, max_side=6),
                      elements=st.floats(-30, 30, width=32))


def _layout(a, how):
    """``a`` as a transposed or strided view holding the same values, or as is."""
    if how == "transposed" and a.ndim >= 2:
        return np.ascontiguousarray(a.swapaxes(0, -1)).swapaxes(0, -1)
    if how == "strided":
        return np.repeat(a, 2, axis=-1)[..., ::2] if a.ndim else a
    return a


def _close(ours, reference, ulps):
    assert ours.dtype == reference.dtype and ours.shape == reference.shape
    assert ours.flags.c_contiguous
    scale = np.maximum(np.abs(reference), np.finfo(reference.dtype).tiny)
    np.testing.assert_array_less(np.abs(ours - reference), ulps * np.spacing(scale.astype(reference.dtype)) + 1e-300)


@settings(max_examples=150, deadline=None)
@given(data=st.data(), dtype=_FLOATS, layout=st.sampled_from(["contiguous", "transposed", "strided"]))
def test_sigmoid_agrees_with_numpy(data, dtype, layout):
    a = _layout(data.draw(_arrays(dtype)), layout)
    _close(kernels.sigmoid(a), np.asarray(_sigmoid_numpy(a), dtype), ulps=4)


@settings(max_examples=200, deadline=None)
@given(data=st.data(), dtype=_FLOATS, log=st.booleans(), layout=st.sampled_from(["contiguous", "transposed", "strided"]))
def test_softmax_agrees_with_numpy(data, dtype, log, layout):
    a = _layout(data.draw(_arrays(dtype)), layout)
    dim = data.draw(st.integers(0, max(a.ndim - 1, 0)))
    ours = kernels.softmax(a, dim, log)
    reference = _softmax_numpy(a, dim, log)
    if log:   # near zero the log's cancellation makes relative ulps meaningless: compare to the row's scale
        np.testing.assert_allclose(ours, reference, rtol=0, atol=8 * np.finfo(dtype).eps * max(1.0, np.abs(a).max() * 2))
    else:
        _close(ours, reference, ulps=8)


def _lane_sum(e, lanes, fold_in_halves):
    """The sum of the 1-d array ``e`` in the kernel's documented order (in e's dtype)."""
    if len(e) < lanes:
        total = e[0]
        for v in e[1:]:
            total = e.dtype.type(total + v)
        return total
    acc = e[:lanes].copy()
    for j in range(lanes, len(e)):
        acc[j % lanes] += e[j]
    if fold_in_halves:
        while len(acc) > 1:
            acc = acc[: len(acc) // 2] + acc[len(acc) // 2:]
        return acc[0]
    total = acc[0]
    for v in acc[1:]:
        total = e.dtype.type(total + v)
    return total


@pytest.mark.parametrize("dtype, lanes, halves, tiny_exponent", [(np.float32, 8, True, -17.0),
                                                                  (np.float64, 4, False, -37.5)])
@pytest.mark.parametrize("size", [3, 7, 8, 9, 16, 21, 64])
def test_softmax_sums_in_the_documented_order(dtype, lanes, halves, tiny_exponent, size):
    # One 1 and many values under half an ulp of 1: added to the 1 one at a time, each is lost,
    # while in other lanes they first add up to something the 1 notices. So the order of the sum
    # shows in the result, by many ulps, and the emulation must give the very same bits.
    row = np.full(size, tiny_exponent, dtype)
    row[0] = 0
    e = np.exp(row)
    total = _lane_sum(e, lanes, halves)
    # (the small results themselves hold libm's exp, an ulp from numpy's: compare the 1's result,
    # which holds only the sum)
    assert kernels.softmax(row, 0, False)[0] == dtype(1) / total
    np.testing.assert_allclose(kernels.softmax(row, 0, True)[0], -np.log(total), rtol=2 * np.finfo(dtype).eps)
    if size >= 16:   # the emulation itself: in order, the small values would be lost
        assert _lane_sum(e, lanes, halves) != _lane_sum(e, size + 1, halves)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nan_and_infinities_fill_the_line_as_in_pytorch(dtype):
    x = np.array([[1.0, np.nan, 2.0], [0.0, 1.0, 2.0], [-np.inf, -np.inf, -np.inf], [np.inf, 0.0, 1.0]], dtype)
    for log in (False, True):
        out = kernels.softmax(x, 1, log)
        assert np.isnan(out[0]).all() and np.isnan(out[2]).all() and np.isnan(out[3]).all()
        assert np.isfinite(out[1]).all()
    col = kernels.softmax(np.array([[np.nan], [1.0]], dtype), 0, False)
    assert np.isnan(col).all()
    np.testing.assert_array_equal(kernels.sigmoid(np.array([-np.inf, np.inf, np.nan], dtype)), [0.0, 1.0, np.nan])


def test_what_the_loops_decline():
    assert kernels.sigmoid(np.arange(3)) is None
    assert kernels.sigmoid(np.ones(2, np.complex64)) is None
    assert kernels.sigmoid([1.0]) is None
    assert kernels.softmax(np.ones((2, 0), np.float32), 1, False) is None   # empty: the caller's early return
    assert kernels.softmax(np.ones(3, np.float16), 0, False) is None        # 16-bit floats arrive widened
    assert kernels.softmax(np.ones((2, 2)), 2, False) is None               # dim out of range


def test_zero_dim_and_shapes():
    for dtype in (np.float32, np.float64):
        assert kernels.softmax(np.array(3.0, dtype), 0, False).tolist() == 1.0
        assert kernels.softmax(np.array(3.0, dtype), 0, True).tolist() == 0.0
        s = kernels.sigmoid(np.array(0.0, dtype))
        assert s.shape == () and s.dtype == dtype and s.tolist() == 0.5
