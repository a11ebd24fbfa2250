"""Graded tests: tensor views (tasks views-transpose, views-strides). numpy is the oracle."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minitorch_nn.testing import strategies as mts


@pytest.mark.task("views-transpose")
@given(mts.tensor_specs(min_dims=1, dtypes=("float32", "int64")), st.data())
def test_transpose_values_and_strides(mt, assert_close, spec, data):
    x = spec.build(mt)
    d0, d1 = data.draw(mts.dim_pairs(x.dim()))
    y = x.transpose(d0, d1)
    assert_close(y, np.swapaxes(spec.numpy(), d0, d1))
    strides = list(x.stride())
    strides[d0], strides[d1] = strides[d1], strides[d0]
    assert y.stride() == tuple(strides), "a transpose swaps the two strides"
    assert y.storage_offset() == x.storage_offset()


@pytest.mark.task("views-transpose")
def test_transpose_is_a_view(mt):
    x = mt.zeros(2, 3)
    y = x.transpose(0, 1)
    y[2, 1] = 7.0
    assert x[1, 2].item() == 7.0, "writing through the transpose must change the original"
    assert y._base is x


@pytest.mark.task("views-transpose")
def test_transpose_bad_dim(mt):
    with pytest.raises(IndexError, match="Dimension out of range"):
        mt.zeros(2, 3).transpose(0, 2)


@pytest.mark.task("views-strides")
@given(mts.tensor_specs(dtypes=("float32",), layouts=("contiguous",), max_dims=3), st.data())
def test_view_contiguous(mt, assert_close, spec, data):
    x = spec.build(mt)
    shape = data.draw(mts.reshapes(tuple(x.shape)))
    y = x.view(shape)
    assert_close(y, spec.numpy().reshape(shape))
    assert y.data_ptr() == x.data_ptr(), "view must not copy"


@pytest.mark.task("views-strides")
def test_view_of_transposed(mt, assert_close):
    x = mt.arange(24.0).view(2, 3, 4).transpose(0, 1)  # (3, 2, 4), strides (4, 12, 1)
    y = x.view(3, 2, 2, 2)  # splitting the last dim is possible
    assert_close(y, np.arange(24.0, dtype=np.float32).reshape(2, 3, 4).swapaxes(0, 1).reshape(3, 2, 2, 2))
    assert y.stride() == (4, 12, 2, 1)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        x.view(6, 4)  # merging dims 0 and 1 is not
