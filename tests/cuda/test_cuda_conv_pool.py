"""conv.py and pooling.py: forward and backward on cuda equal the cpu backend's (tiny shapes)."""

import pytest

import minitorch_nn as mt
import minitorch_nn.nn.functional as F
from tests.cuda._helpers import assert_same
from tests.cuda._helpers import grads_match as _grads_match


@pytest.mark.parametrize("kw", [{}, {"stride": 2, "padding": 1}, {"dilation": 2, "padding": 1, "groups": 2}])
def test_conv2d_forward_and_backward(kw):
    _grads_match(lambda x, w, b: F.conv2d(x, w, b, **kw), mt.randn(1, 2, 5, 4), mt.randn(2, 2 // kw.get("groups", 1), 2, 2),
                 mt.randn(2))


def test_conv1d_with_groups_and_stride():
    _grads_match(lambda x, w: F.conv1d(x, w, stride=2, groups=2), mt.randn(2, 2, 6), mt.randn(4, 1, 3))


def test_conv3d_forward():
    x, w = mt.randn(1, 1, 3, 3, 3), mt.randn(2, 1, 2, 2, 2)
    assert_same(F.conv3d(x.cuda(), w.cuda(), padding=1), F.conv3d(x, w, padding=1), atol=1e-5)


@pytest.mark.parametrize("kw", [{}, {"stride": 2, "padding": 1, "output_padding": 1}])
def test_conv_transpose2d_forward_and_backward(kw):
    _grads_match(lambda x, w: F.conv_transpose2d(x, w, **kw), mt.randn(1, 2, 3, 3), mt.randn(2, 1, 2, 2))


def test_conv_transpose1d_groups():
    _grads_match(lambda x, w, b: F.conv_transpose1d(x, w, b, stride=2, groups=2), mt.randn(1, 2, 4), mt.randn(2, 1, 3),
                 mt.randn(2))


def test_conv_half_and_errors_match_cpu():
    x, w = mt.randn(1, 2, 4, 4), mt.randn(2, 2, 3, 3)
    assert_same(F.conv2d(x.half().cuda(), w.half().cuda()), F.conv2d(x.half(), w.half()), rtol=1e-2, atol=1e-2)
    with pytest.raises(RuntimeError, match="channels"):
        F.conv2d(x.cuda(), mt.randn(2, 3, 3, 3).cuda())


@pytest.mark.parametrize("kw", [{"kernel_size": 2}, {"kernel_size": 3, "stride": 2, "padding": 1},
                                {"kernel_size": 2, "stride": 1, "dilation": 2, "ceil_mode": True}])
def test_max_pool2d_values_indices_and_gradient(kw):
    x = mt.randn(1, 2, 5, 5)
    a, ia = F.max_pool2d(x.cuda(), return_indices=True, **kw)
    b, ib = F.max_pool2d(x, return_indices=True, **kw)
    assert_same(a, b)
    assert_same(ia, ib)
    _grads_match(lambda t: F.max_pool2d(t, **kw), x)


def test_max_pool_overlapping_windows_accumulate_and_nan_wins():
    x = mt.tensor([[[[1.0, 5.0, 2.0], [0.0, float("nan"), 3.0], [4.0, 1.0, 0.0]]]])
    assert_same(F.max_pool2d(x.cuda(), 2, 1), F.max_pool2d(x, 2, 1))
    y = mt.ones(1, 1, 3, 3) * 2
    _grads_match(lambda t: F.max_pool2d(t, 2, 1), y)  # ties: the first wins, gradients pile up on it


@pytest.mark.parametrize("kw", [{"kernel_size": 2}, {"kernel_size": 3, "stride": 2, "padding": 1},
                                {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False, "ceil_mode": True},
                                {"kernel_size": 2, "divisor_override": 3}])
def test_avg_pool2d_forward_and_backward(kw):
    _grads_match(lambda t: F.avg_pool2d(t, **kw), mt.randn(1, 2, 5, 5))


def test_adaptive_and_1d_pools_and_half():
    x = mt.randn(1, 2, 6, 6)
    _grads_match(lambda t: F.adaptive_avg_pool2d(t, 3), x)
    _grads_match(lambda t: F.max_pool1d(t, 2), mt.randn(2, 3, 5))
    assert_same(F.max_pool2d(x.half().cuda(), 2), F.max_pool2d(x.half(), 2))
