"""storage_ops.py (resize_/set_/as_strided_ on cuda), and the list of ops still on the host path.

The list is pinned: an op leaving it (a new kernel) or joining it (a new registry op without a
cuda kernel) must update ``EXPECTED_HOST_OPS`` here and the list in ``fallback.py``'s docstring.
"""

import minitorch_nn as mt
import minitorch_nn.nn.functional as F
from minitorch_nn.backends.cuda import fallback, host_ops
from tests.cuda._helpers import assert_same, on_gpu_only

# numerically delicate linear algebra on the small matrices of this project: numpy's LAPACK
LINALG = {"linalg_det.default", "linalg_eigh.default", "linalg_inv.default", "linalg_matrix_exp.default",
          "linalg_qr.default", "linalg_solve.default", "linalg_svd.default", "linalg_svdvals.default"}
# an explicit (cpu) Generator keeps its own cpu stream, as on cpu
WITH_GENERATOR = {"rand.generator", "randn.generator", "randint.generator", "randint.low_generator",
                  "randperm.generator"}
# complex-number ops: complex tensors cannot be on cuda here, so these see real tensors only
COMPLEX = {"_conj.default", "_conj_physical.default", "angle.default", "sgn.default", "complex.default",
           "polar.default"}
EXPECTED_HOST_OPS = LINALG | WITH_GENERATOR | COMPLEX


def test_host_ops_are_exactly_the_documented_ones():
    names = {op.__name__ for op in host_ops()}
    assert names == EXPECTED_HOST_OPS, (sorted(names - EXPECTED_HOST_OPS), sorted(EXPECTED_HOST_OPS - names))
    for name in names:  # fallback.py's docstring names each of them
        assert name.split(".")[0] in fallback.__doc__, name


def test_resize_grows_device_storage_and_keeps_old_views():
    x = mt.arange(6.0).cuda()
    view = x[:2]
    with on_gpu_only():
        x.resize_(2, 4)
    assert x.is_cuda and tuple(x.shape) == (2, 4) and x.stride() == (4, 1)
    assert x.cpu().reshape(-1)[:6].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    x[0, 0] = 9.0
    assert view.cpu().tolist() == [0.0, 1.0]  # the old view still reads the old storage
    x.resize_(3)
    assert x.cpu().tolist() == [9.0, 1.0, 2.0]


def test_set_and_as_strided_share_device_memory():
    a, b = mt.arange(6.0).cuda(), mt.zeros(2).cuda()
    with on_gpu_only():
        b.set_(a)
        b.mul_(2.0)
    assert_same(a, mt.arange(6.0) * 2)
    a.as_strided_((2, 2), (1, 2), 1)
    assert a.cpu().tolist() == [[2.0, 6.0], [4.0, 8.0]]


def test_a_small_cnn_trains_without_the_host():
    """conv, pool, norms, activations, dropout-free head, cross-entropy and SGD: all in kernels."""
    mt.manual_seed(0)
    model = mt.nn.Sequential(mt.nn.Conv2d(1, 2, 3, padding=1), mt.nn.BatchNorm2d(2), mt.nn.ReLU(),
                             mt.nn.MaxPool2d(2), mt.nn.Flatten(), mt.nn.Linear(8, 3)).cuda()
    opt = mt.optim.SGD(model.parameters(), lr=0.1)
    x, y = mt.randn(1, 1, 4, 4).cuda(), mt.tensor([2]).cuda()
    with on_gpu_only():
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    assert loss.is_cuda
