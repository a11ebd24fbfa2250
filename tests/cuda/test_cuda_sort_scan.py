"""scan.py and sort.py on cuda against the cpu backend."""

import pytest

import minitorch_nn as mt
from tests.cuda._helpers import assert_same, on_gpu_only
from tests.cuda._helpers import grads_match as _grads_match


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumsum_cumprod(dim):
    x = mt.randn(3, 4, 2)
    with on_gpu_only():
        assert_same(x.cuda().cumsum(dim), x.cumsum(dim), atol=1e-5)
        assert_same(x.cuda().cumprod(dim), x.cumprod(dim), atol=1e-5)
    i = mt.tensor([[1, 2, 3], [4, 5, 6]])
    assert_same(i.cuda().cumsum(1), i.cumsum(1))
    assert_same(i.cuda().cumsum(0, dtype=mt.float64), i.cumsum(0, dtype=mt.float64))
    _grads_match(lambda t: t.cumsum(1), mt.randn(2, 3))


@pytest.mark.parametrize("descending", [False, True])
def test_sort_with_ties_and_nan_is_stable(descending):
    x = mt.tensor([[3.0, 1.0, float("nan"), 1.0, 2.0, 3.0, 0.5], [1.0, 1.0, 1.0, -1.0, 5.0, 2.0, 2.0]])
    with on_gpu_only():
        got = x.cuda().sort(1, descending=descending)
    assert_same(got, x.sort(1, descending=descending))
    y = mt.randint(0, 3, (5, 3))
    assert_same(y.cuda().sort(0, descending=descending), y.sort(0, descending=descending))
    assert_same(y.cuda().sort(1, descending=descending)[1], y.sort(1, descending=descending)[1])


def test_topk_and_gradient():
    x = mt.randn(3, 6)
    for largest in (True, False):
        with on_gpu_only():
            got = x.cuda().topk(2, 1, largest=largest)
        assert_same(got, x.topk(2, 1, largest=largest))
    assert_same(x.cuda().topk(3, 0), x.topk(3, 0))
    _grads_match(lambda t: t.topk(2, 1)[0], x)
    with pytest.raises(RuntimeError, match="out of range"):
        x.cuda().topk(7)
    assert_same(x.half().cuda().sort(1), x.half().sort(1))
