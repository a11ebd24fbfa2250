"""conv.py and pooling.py: forward and backward on cuda equal the cpu backend's (tiny shapes)."""

import pytest

import minitorch_nn as mt
import minitorch_nn.nn.functional as F
from tests.cuda._helpers import assert_same


def _grads_match(fn, *tensors, atol=1e-5):
    """fn on cuda and on cpu: same output, and the same gradients of sum(out * out) for every input."""
    cu = [t.cuda().requires_grad_() for t in tensors]
    cp = [t.clone().requires_grad_() for t in tensors]
    a, b = fn(*cu), fn(*cp)
    assert_same(a.detach(), b.detach(), atol=atol)
    (a * a).sum().backward()
    (b * b).sum().backward()
    for x, y in zip(cu, cp):
        assert_same(x.grad, y.grad, rtol=1e-4, atol=atol * 10)


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
