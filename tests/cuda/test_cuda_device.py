"""The cuda device: availability, transfers, dtypes, printing, factories, device checks."""

import os
import subprocess
import sys

import numpy as np
import pytest

import minitorch_nn as mt
from tests.cuda._helpers import assert_same


def test_available_on_the_simulator():
    assert mt.cuda.is_available()
    assert mt.cuda.device_count() == 1
    mt.cuda.synchronize()


@pytest.mark.parametrize("dtype", [mt.float32, mt.float64, mt.float16, mt.bfloat16, mt.int64, mt.int32, mt.uint8, mt.bool])
def test_round_trip_keeps_values_and_dtype(dtype):
    x = (mt.arange(6).reshape(2, 3) - 2).to(dtype)
    y = x.cuda()
    assert y.is_cuda and not y.is_cpu and y.device == mt.device("cuda:0")
    assert y.dtype == dtype and tuple(y.shape) == (2, 3)
    back = y.cpu()
    assert back.device.type == "cpu" and back.dtype == dtype
    assert mt.equal(back, x)


@pytest.mark.parametrize("src,dst", [(mt.float32, mt.float16), (mt.float32, mt.bfloat16), (mt.bfloat16, mt.float32),
                                     (mt.float16, mt.bfloat16), (mt.float32, mt.int64), (mt.int64, mt.float32),
                                     (mt.float32, mt.bool), (mt.bfloat16, mt.float64)])
def test_casts_on_the_device_match_cpu(src, dst):
    x = mt.tensor([[0.0, 1.5, -2.25], [3.140625, 1e-3, 250.7]]).to(src)
    assert_same(x.cuda().to(dst), x.to(dst), rtol=0, atol=0)


def test_bfloat16_rounds_to_nearest_even_like_cpu():
    x = mt.tensor([1.00390625, 1.01171875, -3.3, 1e30, float("inf"), float("nan")])
    got = x.cuda().bfloat16().cpu()
    want = x.bfloat16()
    np.testing.assert_array_equal(got.view(mt.int16).numpy(), want.view(mt.int16).numpy())


def test_views_share_device_storage():
    y = mt.arange(12.0).reshape(3, 4).cuda()
    v = y.t()[1:, ::2]
    assert v.is_cuda and v._base is not None
    assert mt.equal(v.cpu(), mt.arange(12.0).reshape(3, 4).t()[1:, ::2])
    v.fill_(-1.0)  # writes through the view into y's storage
    assert float(y[0, 1]) == -1.0


def test_printing_a_cuda_tensor():
    text = repr(mt.tensor([1.0, 2.5]).cuda())
    assert text == "tensor([1.0000, 2.5000], device='cuda:0')"
    assert "device='cuda:0'" in repr(mt.tensor([1, 2]).cuda())


def test_factories_with_device():
    z = mt.zeros(2, 3, device="cuda")
    assert z.is_cuda and mt.equal(z.cpu(), mt.zeros(2, 3))
    assert mt.equal(mt.full((2,), 7, device="cuda").cpu(), mt.full((2,), 7))
    assert mt.arange(5, device="cuda").is_cuda
    assert mt.zeros_like(z).is_cuda and mt.ones_like(z, device="cpu").is_cpu


def test_item_and_numpy():
    y = mt.tensor([[3.5]]).cuda()
    assert y.item() == 3.5
    with pytest.raises(TypeError, match="Use Tensor.cpu"):
        y.numpy()


def test_mixing_devices_raises_pytorchs_message():
    a, b = mt.ones(3).cuda(), mt.ones(3)
    msg = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
    with pytest.raises(RuntimeError, match=msg):
        a + b
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        mt.mm(mt.ones(2, 2), mt.ones(2, 2).cuda())
    # a 0-d cpu tensor is a scalar: allowed, as in PyTorch
    assert mt.equal((a + mt.tensor(2.0)).cpu(), mt.full((3,), 3.0))


def test_copy_between_devices():
    y = mt.zeros(2, 2).cuda()
    y.copy_(mt.tensor([[1.0, 2.0], [3.0, 4.0]]))
    x = mt.zeros(2, 2)
    x.copy_(y)
    assert mt.equal(x, mt.tensor([[1.0, 2.0], [3.0, 4.0]]))


def test_memory_allocated_counts_live_storages():
    before = mt.cuda.memory_allocated()
    y = mt.zeros(100).cuda()
    assert mt.cuda.memory_allocated() >= before + 400
    del y
    import gc

    gc.collect()
    assert mt.cuda.memory_allocated() <= before + 400


def test_module_cuda_moves_parameters():
    m = mt.nn.Linear(3, 2).cuda()
    assert m.weight.is_cuda and m.bias.is_cuda and isinstance(m.weight, mt.nn.Parameter)
    out = m(mt.ones(4, 3).cuda())
    assert out.is_cuda and tuple(out.shape) == (4, 2)


def _run(code, **env):
    e = {k: v for k, v in os.environ.items() if k not in ("MINITORCH_NN_CUDA", "NUMBA_ENABLE_CUDASIM")}
    e.update(env)
    return subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True, timeout=120)


def test_import_does_not_import_numba():
    r = _run("import sys, minitorch_nn; print('numba' in sys.modules)")
    assert r.stdout.strip() == "False", r.stderr


@pytest.mark.skipif(os.path.exists("/dev/nvidia0"), reason="this machine has a GPU")
def test_without_gpu_or_simulator_cuda_is_unavailable_with_a_hint():
    r = _run(
        "import minitorch_nn as mt\n"
        "print(mt.cuda.is_available())\n"
        "try:\n    mt.ones(2).cuda()\nexcept RuntimeError as e:\n    print('ERR', e)\n"
    )
    assert r.stdout.startswith("False"), r.stderr
    assert "ERR" in r.stdout and "MINITORCH_NN_CUDA=sim" in r.stdout


def test_view_dtype_keeps_bfloat16_as_16_bit_words():
    x = mt.tensor([1.5, -2.0], dtype=mt.bfloat16)
    v = x.cuda().view(mt.int16).view(mt.bfloat16)
    assert_same(v * 2, x * 2)


def test_fills_and_factories_on_the_device():
    y = mt.zeros(2, 3, device="cuda")
    y[:, 1].fill_(5)
    x = mt.zeros(2, 3)
    x[:, 1].fill_(5)
    assert_same(y, x)
    assert_same(mt.ones(2, device="cuda", dtype=mt.bfloat16), mt.ones(2, dtype=mt.bfloat16))
    assert_same(mt.full_like(y, 7), mt.full_like(x, 7))
    assert_same(mt.zeros_like(y, dtype=mt.int64), mt.zeros_like(x, dtype=mt.int64))
    assert_same(y.zero_(), x.zero_())
    assert mt.empty(2, 0, device="cuda").shape == (2, 0)
