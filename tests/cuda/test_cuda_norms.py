"""norms.py: batch/layer/group norm on cuda equal the cpu backend's, with gradients (tiny shapes)."""

import pytest

import minitorch_nn as mt
import minitorch_nn.nn.functional as F
from tests.cuda._helpers import assert_same
from tests.cuda._helpers import grads_match as _grads_match


@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm(affine):
    x = mt.randn(2, 3, 4)
    if affine:
        _grads_match(lambda t, w, b: F.layer_norm(t, (3, 4), w, b), x, mt.randn(3, 4), mt.randn(3, 4))
    else:
        _grads_match(lambda t: F.layer_norm(t, (4,)), x)


def test_layer_norm_saved_statistics_and_half():
    x = mt.randn(3, 5)
    a = mt.ops.aten.native_layer_norm.default(x.cuda(), [5], None, None, 1e-5)
    b = mt.ops.aten.native_layer_norm.default(x, [5], None, None, 1e-5)
    assert_same(a, b, atol=1e-5)
    assert_same(F.layer_norm(x.half().cuda(), (5,)), F.layer_norm(x.half(), (5,)), rtol=1e-2, atol=1e-2)
    with pytest.raises(RuntimeError, match="normalized_shape"):
        F.layer_norm(x.cuda(), (4,))


@pytest.mark.parametrize("affine", [True, False])
def test_group_norm(affine):
    x = mt.randn(2, 4, 3)
    if affine:
        _grads_match(lambda t, w, b: F.group_norm(t, 2, w, b), x, mt.randn(4), mt.randn(4))
    else:
        _grads_match(lambda t: F.group_norm(t, 4), x)


def test_batch_norm_training_updates_running_stats_and_gradients():
    x, w, b = mt.randn(3, 2, 2, 2), mt.randn(2), mt.randn(2)
    stats = {dev: (mt.zeros(2, device=dev), mt.ones(2, device=dev)) for dev in ("cpu", "cuda")}

    def fn(t, ww, bb):
        rm, rv = stats[t.device.type]
        return F.batch_norm(t, rm, rv, ww, bb, training=True, momentum=0.3)

    _grads_match(fn, x, w, b)
    assert_same(stats["cuda"][0], stats["cpu"][0], atol=1e-6)
    assert_same(stats["cuda"][1], stats["cpu"][1], atol=1e-6)
    assert stats["cuda"][0]._version == 0  # updated behind the version counter, as in PyTorch


def test_batch_norm_eval_and_module():
    x, rm, rv = mt.randn(4, 3), mt.randn(3), mt.rand(3) + 0.5
    _grads_match(lambda t, w: F.batch_norm(t, rm.to(t.device), rv.to(t.device), w, None, training=False), x, mt.randn(3))
    m = mt.nn.BatchNorm2d(2)
    y = mt.randn(2, 2, 3, 3)
    mc = mt.nn.BatchNorm2d(2).cuda()
    assert_same(mc(y.cuda()).detach(), m(y).detach(), atol=1e-5)
    assert_same(mc.running_var, m.running_var, atol=1e-6)
    with pytest.raises(ValueError, match="more than 1 value"):
        F.batch_norm(mt.randn(1, 2).cuda(), None, None, training=True)
