"""The convolution kernels' ``_im2col`` (one copy of a strided view) against its definition: column j
is the strided slice of the padded input that kernel offset j reads, stacked along axis 2. Pure
data movement, so equal means bit for bit."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from minitorch_nn.backends.cpu import nn_ops


def _im2col_by_definition(xp, ksize, stride, dilation, out_sizes):
    cols = [
        xp[(Ellipsis, *nn_ops._window_slices(o, stride, dilation, out_sizes))]
        for o in itertools.product(*map(range, ksize))
    ]
    return np.stack(cols, axis=2)


@st.composite
def im2col_case(draw):
    nd = draw(st.integers(1, 3))
    ksize = [draw(st.integers(1, 3)) for _ in range(nd)]
    dilation = [draw(st.integers(1, 2)) for _ in range(nd)]
    stride = [draw(st.integers(1, 3)) for _ in range(nd)]
    sizes = [draw(st.integers(d * (k - 1) + 1, 7)) for k, d in zip(ksize, dilation)]
    n, c = draw(st.integers(0, 2)), draw(st.integers(1, 3))
    dtype = draw(st.sampled_from([np.float32, np.float64, np.int64]))
    x = np.arange(n * c * int(np.prod(sizes)), dtype=dtype).reshape(n, c, *sizes)
    layout = draw(st.sampled_from(["contiguous", "transposed", "broadcast"]))
    if layout == "transposed":  # a channels-last-like input: the same values, other strides
        x = np.moveaxis(np.ascontiguousarray(np.moveaxis(x, 1, -1)), -1, 1)
    elif layout == "broadcast" and n:  # an expanded tensor: stride 0 along the batch
        x = np.broadcast_to(x[:1], x.shape)
    out_sizes = [nn_ops._conv_out_size(s, k, st_, 0, d) for s, k, st_, d in zip(x.shape[2:], ksize, stride, dilation)]
    return x, ksize, stride, dilation, out_sizes


@settings(max_examples=200, deadline=None)
@given(im2col_case())
def test_im2col_is_the_stacked_window_slices(case):
    x, ksize, stride, dilation, out_sizes = case
    got = nn_ops._im2col(x, ksize, stride, dilation, out_sizes)
    expected = _im2col_by_definition(x, ksize, stride, dilation, out_sizes)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    assert np.array_equal(got, expected)
    assert got.flags.c_contiguous
