"""Graded tests: the CUDA index helpers (task cuda-index), run on numba's CUDA simulator.

The simulator runs the kernels as Python, one thread at a time, so the shapes here stay tiny.
``MINITORCH_NN_CUDA=sim`` must be set before numba is imported: this module sets it on import.
"""

import os

os.environ.setdefault("MINITORCH_NN_CUDA", "sim")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@pytest.fixture(scope="module")
def elementwise(mt):
    if not mt.cuda.is_available():
        pytest.fail("the CUDA simulator did not start: set MINITORCH_NN_CUDA=sim before importing minitorch_nn")
    from minitorch_nn.backends.cuda import elementwise

    return elementwise


@pytest.mark.task("cuda-index")
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.data())
def test_to_index_is_row_major(elementwise, shape, data):
    ordinal = data.draw(st.integers(0, int(np.prod(shape)) - 1))
    out = np.full(len(shape), -1, np.int64)
    elementwise.to_index(ordinal, np.array(shape), out)
    assert tuple(out) == np.unravel_index(ordinal, shape)


@pytest.mark.task("cuda-index")
def test_broadcast_index(elementwise):
    out = np.full(2, -1, np.int64)
    elementwise.broadcast_index(np.array([1, 2, 3]), np.array([2, 3, 4]), np.array([3, 1]), out)
    assert out.tolist() == [2, 0]
    out = np.full(3, -1, np.int64)
    elementwise.broadcast_index(np.array([1, 2, 3]), np.array([2, 3, 4]), np.array([1, 3, 4]), out)
    assert out.tolist() == [0, 2, 3]


@pytest.mark.task("cuda-index")
def test_a_broadcast_add_on_the_device(mt):
    a = mt.arange(6.0).view(2, 3)
    b = mt.tensor([[10.0], [20.0]])
    out = (a.to("cuda") + b.to("cuda").t().t()).cpu()   # a strided, broadcast operand
    np.testing.assert_array_equal(out.numpy(), a.numpy() + b.numpy())
