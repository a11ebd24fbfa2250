"""Shared helpers: run the same thing on cpu and cuda, compare."""

import contextlib

import numpy as np

import minitorch_nn as mt


def cpu_and_cuda(*tensors):
    return tensors, tuple(t.cuda() for t in tensors)


def assert_same(cuda_result, cpu_result, rtol=1e-5, atol=1e-6):
    """A cuda result equals the cpu one: device, dtype, shape and values within tolerance."""
    if isinstance(cpu_result, (tuple, list)):
        assert len(cuda_result) == len(cpu_result)
        for a, b in zip(cuda_result, cpu_result):
            assert_same(a, b, rtol, atol)
        return
    assert cuda_result.device == mt.device("cuda", 0), cuda_result.device
    assert cuda_result.dtype == cpu_result.dtype, (cuda_result.dtype, cpu_result.dtype)
    assert tuple(cuda_result.shape) == tuple(cpu_result.shape)
    got = cuda_result.cpu()
    assert got.device.type == "cpu"
    np.testing.assert_allclose(
        got.float().numpy() if got.dtype in (mt.bfloat16,) else got.numpy(),
        cpu_result.float().numpy() if cpu_result.dtype in (mt.bfloat16,) else cpu_result.numpy(),
        rtol=rtol, atol=atol,
    )


@contextlib.contextmanager
def on_gpu_only():
    """Fail if any op inside the block took the host path (``fallback.py``) instead of a kernel."""
    from minitorch_nn.backends.cuda.fallback import HOST_CALLS

    before = dict(HOST_CALLS)
    yield
    used = {k: v - before.get(k, 0) for k, v in HOST_CALLS.items() if v != before.get(k, 0)}
    assert not used, f"these ops ran on the host, not in a kernel: {used}"


def grads_match(fn, *tensors, atol=1e-5):
    """fn on cuda and on cpu: same output, and the same gradients of sum(out * out) for every input."""
    cu = [t.cuda().requires_grad_() for t in tensors]
    cp = [t.clone().requires_grad_() for t in tensors]
    a, b = fn(*cu), fn(*cp)
    assert_same(a.detach(), b.detach(), atol=atol)
    (a * a).sum().backward()
    (b * b).sum().backward()
    for x, y in zip(cu, cp):
        assert_same(x.grad, y.grad, rtol=1e-4, atol=atol * 10)
