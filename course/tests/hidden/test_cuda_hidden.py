"""Hidden graded tests: the CUDA index helpers, on the simulator."""

import os

os.environ.setdefault("MINITORCH_NN_CUDA", "sim")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@pytest.mark.task("cuda-index")
@given(st.lists(st.integers(1, 3), min_size=1, max_size=4), st.data())
def test_broadcast_index_random(mt, big, data):
    from minitorch_nn.backends.cuda import elementwise

    k = data.draw(st.integers(1, len(big)))
    small = [data.draw(st.sampled_from([1, s])) for s in big[len(big) - k:]]
    big_index = [data.draw(st.integers(0, s - 1)) for s in big]
    out = np.full(len(small), -1, np.int64)
    elementwise.broadcast_index(np.array(big_index), np.array(big), np.array(small), out)
    expected = [0 if s == 1 else big_index[len(big) - k + i] for i, s in enumerate(small)]
    assert out.tolist() == expected


@pytest.mark.task("cuda-index")
def test_strided_unary_and_binary_on_device(mt):
    x = mt.arange(12.0).view(3, 4).t()           # strides (1, 4)
    y = mt.tensor([1.0, 2.0, 3.0])
    out = (x.to("cuda").exp() * y.to("cuda")).cpu()
    np.testing.assert_allclose(out.numpy(), np.exp(np.arange(12.0).reshape(3, 4).T) * [1.0, 2.0, 3.0], rtol=1e-6)
