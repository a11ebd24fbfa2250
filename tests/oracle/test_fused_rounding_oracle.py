"""Oracle: the ops PyTorch's cpu kernels compute with a fused multiply-add, bit for bit.

``add``/``sub`` with ``alpha``, ``addcmul``, ``addcdiv`` and ``lerp`` (``backends/cpu/_fma.py``
says which expression each one rounds once) must give exactly PyTorch 2.13's float32 and float64
values, at sizes on both sides of its vector width (its scalar tail loop rounds the same way), in
place and out of place. So must whole optimizer trajectories built from them (SGD with momentum,
weight decay and nesterov; Adam; AdamW), on the numpy fast path and on the tensor-op path (Adam
on a parameter small enough that PyTorch's square root is exact: see the trajectory test).
"""

import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

import numpy as np  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import minitorch_nn as mt  # noqa: E402
import minitorch_nn.optim  # noqa: E402,F401  (mt.optim)
from minitorch_nn.overrides import TorchFunctionMode  # noqa: E402

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
DTYPES = st.sampled_from([np.float32, np.float64])
# small sizes (vector tails), odd sizes, and a few large ones
SIZES = st.one_of(st.integers(1, 40), st.integers(41, 5000), st.sampled_from([65537, 100003]))
SCALARS = st.sampled_from([-0.01, 1e-3, 0.3, -0.7, 1, 2, 2.5, 1.0, 0.5, 0.49999, 0.9, 1.7, -3])


def _arrays(seed, n, dtype, count=3):
    rng = np.random.default_rng(seed)
    out = [rng.standard_normal(n).astype(dtype) for _ in range(count)]
    out[-1] = np.abs(out[-1]) + dtype(0.1)  # (a divisor away from zero)
    return out


def _same(ours, theirs):
    a, b = ours.detach().numpy(), theirs.detach().numpy()
    assert a.dtype == b.dtype and a.shape == b.shape
    diff = int(np.sum(a != b))
    assert np.array_equal(a, b), f"{diff} of {a.size} elements differ from PyTorch"


def _both(fn, arrays):
    """``fn`` applied to fresh copies of ``arrays`` as PyTorch tensors and as ours."""
    theirs = fn(torch, *[torch.from_numpy(a.copy()) for a in arrays])
    ours = fn(mt, *[mt.tensor(a.copy()) for a in arrays])
    return ours, theirs


@SETTINGS
@given(n=SIZES, dtype=DTYPES, alpha=SCALARS, seed=st.integers(0, 2**16))
def test_add_and_sub_with_alpha(n, dtype, alpha, seed):
    arrays = _arrays(seed, n, dtype, 2)
    _same(*_both(lambda L, a, b: L.add(a, b, alpha=alpha), arrays))
    _same(*_both(lambda L, a, b: L.sub(a, b, alpha=alpha), arrays))
    _same(*_both(lambda L, a, b: a.add_(b, alpha=alpha), arrays))
    _same(*_both(lambda L, a, b: a.sub_(b, alpha=alpha), arrays))
    # non-contiguous self (the in-place op cannot compute straight into it) and a broadcast other
    _same(*_both(lambda L, a, b: a[::2].add_(b[:1], alpha=alpha), arrays))


@SETTINGS
@given(n=SIZES, dtype=DTYPES, value=SCALARS, seed=st.integers(0, 2**16))
def test_addcmul_and_addcdiv(n, dtype, value, seed):
    arrays = _arrays(seed, n, dtype)
    _same(*_both(lambda L, s, a, b: L.addcmul(s, a, b, value=value), arrays))
    _same(*_both(lambda L, s, a, b: L.addcdiv(s, a, b, value=value), arrays))
    _same(*_both(lambda L, s, a, b: s.addcmul_(a, b, value=value), arrays))
    _same(*_both(lambda L, s, a, b: s.addcdiv_(a, b, value=value), arrays))
    _same(*_both(lambda L, s, a, b: s.addcmul_(a, a, value=value), arrays))  # (Adam's grad * grad)


@SETTINGS
@given(n=SIZES, dtype=DTYPES, weight=SCALARS, seed=st.integers(0, 2**16))
def test_lerp_number_and_tensor_weights(n, dtype, weight, seed):
    arrays = _arrays(seed, n, dtype, 2)
    _same(*_both(lambda L, a, b: L.lerp(a, b, weight), arrays))
    _same(*_both(lambda L, a, b: a.lerp_(b, weight), arrays))
    w = np.random.default_rng(seed + 1).uniform(-0.6, 1.6, n).astype(dtype)
    w[: n // 4] = dtype(0.5)  # (the switch point itself)
    _same(*_both(lambda L, a, b, w: L.lerp(a, b, w), arrays + [w]))


@settings(SETTINGS, max_examples=10)
@given(n=st.one_of(st.integers(1, 70), st.sampled_from([4099])), half=st.booleans(),
       value=SCALARS, seed=st.integers(0, 2**16))
def test_16_bit_floats_fuse_in_float32(n, half, value, seed):
    """bfloat16/float16 ``addcmul``, ``addcdiv`` and ``lerp`` compute in float32 with the same
    fused formulas, then round to the 16-bit dtype. (``add``/``sub`` with ``alpha`` are not
    checked here: PyTorch reads alpha in float32 in its scalar loop but in the 16-bit dtype in its
    vector loop, so its result depends on where each element falls.)"""
    arrays = _arrays(seed, n, np.float32, 4)
    names = ("float16", "float16") if half else ("bfloat16", "bfloat16")

    def run(lib, fn):
        d = getattr(lib, names[0])
        return fn(lib, *[lib.tensor(a.copy()).to(d) for a in arrays]).float()

    for fn in (lambda L, s, a, b, w: L.addcmul(s, a, b, value=value),
               lambda L, s, a, b, w: L.addcdiv(s, a, b, value=value),
               lambda L, s, a, b, w: s.addcmul_(a, a, value=value),
               lambda L, s, a, b, w: L.lerp(s, a, value),
               lambda L, s, a, b, w: s.lerp_(a, value),
               lambda L, s, a, b, w: L.lerp(s, a, w * 0.7)):
        _same(run(mt, fn), run(torch, fn))


class _TensorOpsOnly(TorchFunctionMode):
    """Sends the optimizers through their tensor ops (no numpy fast path)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def _trajectory(lib, make_opt, dtype, shape, tensor_ops=False, steps=20):
    rng = np.random.default_rng(7)
    p = lib.nn.Parameter(lib.tensor(rng.standard_normal(shape).astype(dtype)))
    opt = make_opt(lib, p)
    for _ in range(steps):
        p.grad = lib.tensor(rng.standard_normal(shape).astype(dtype))
        if tensor_ops:
            with _TensorOpsOnly():
                opt.step()
        else:
            opt.step()
    return p.detach(), opt.state[p]


OPTIMIZERS = {
    "sgd-momentum-wd": lambda L, p: L.optim.SGD([p], lr=0.05, momentum=0.9, weight_decay=1e-2, foreach=False),
    "sgd-nesterov": lambda L, p: L.optim.SGD([p], lr=0.05, momentum=0.9, weight_decay=1e-2, nesterov=True,
                                             dampening=0, foreach=False),
    "sgd-dampening": lambda L, p: L.optim.SGD([p], lr=0.1, momentum=0.5, dampening=0.3, foreach=False),
    "adam": lambda L, p: L.optim.Adam([p], lr=1e-2, foreach=False),
    "adam-wd-amsgrad": lambda L, p: L.optim.Adam([p], lr=1e-2, weight_decay=0.1, amsgrad=True, foreach=False),
    "adamw": lambda L, p: L.optim.AdamW([p], lr=1e-2, weight_decay=0.05, foreach=False),
    "adam-beta1-small": lambda L, p: L.optim.Adam([p], lr=1e-3, betas=(0.3, 0.99), foreach=False),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("tensor_ops", [False, True], ids=["numpy-path", "tensor-ops"])
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_trajectory_is_exact(name, tensor_ops, dtype):
    # Adam divides by ``exp_avg_sq.sqrt()``, and PyTorch's cpu sqrt (MKL's vector sqrt) is not
    # correctly rounded on tensors of 16 elements or more: about one float32 element in six is
    # one ulp away from the exact square root that numpy (and this library) gives. On 8 elements
    # PyTorch's sqrt is exact, so Adam's trajectory is compared bit for bit there; SGD has no
    # sqrt and is compared on a 64x33 parameter.
    shape = (64, 33) if name.startswith("sgd") else (2, 4)
    theirs, t_state = _trajectory(torch, OPTIMIZERS[name], dtype, shape)
    ours, m_state = _trajectory(mt, OPTIMIZERS[name], dtype, shape, tensor_ops)
    _same(ours, theirs)
    assert sorted(m_state) == sorted(t_state)
    for key in t_state:
        _same(m_state[key], t_state[key])
