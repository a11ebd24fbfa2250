"""The optimizers' numpy fast path (``optim/_numpy_update.py``) against their tensor-op path.

Each test trains the same parameters twice with the same gradients: once with the test's switch
(the numpy path while ``backends.compiled`` is on) and once with the switch off, which sends every
update through the tensor ops. Parameters, optimizer state and version counters must come out
bit-identical.
Agreement with PyTorch itself is checked in ``tests/oracle/test_optim_oracle.py``.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitorch_nn as mt
import minitorch_nn.optim as optim
from minitorch_nn.optim import _numpy_update
from tests.twins.harness import full_path, switch_on

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


def _train(make_opt, shapes, dtype, seed, steps, force_tensor_ops):
    rng = np.random.default_rng(seed)
    params = [mt.nn.Parameter(mt.tensor(rng.standard_normal(s), dtype=dtype)) for s in shapes]
    grads = [[rng.standard_normal(s) for s in shapes] for _ in range(steps)]
    opt = make_opt(params)
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = mt.tensor(g, dtype=dtype)
        if force_tensor_ops:
            with full_path():
                opt.step()
        else:
            opt.step()
    state = [{k: v.numpy().copy() for k, v in opt.state[p].items()} for p in params]
    versions = [[p._version] + [v._version for v in opt.state[p].values()] for p in params]
    return [p.detach().numpy().copy() for p in params], state, versions


def _assert_identical(make_opt, shapes, dtype, seed, steps=4):
    fast = _train(make_opt, shapes, dtype, seed, steps, force_tensor_ops=False)
    slow = _train(make_opt, shapes, dtype, seed, steps, force_tensor_ops=True)
    for a, b in zip(fast[0], slow[0]):
        assert a.dtype == b.dtype and np.array_equal(a, b), "parameters differ"
    for sa, sb in zip(fast[1], slow[1]):
        assert sa.keys() == sb.keys()
        for k in sa:
            assert np.array_equal(sa[k], sb[k]), f"state {k!r} differs"
    assert fast[2] == slow[2], "version counters differ"


SHAPES = st.lists(st.lists(st.integers(1, 5), min_size=0, max_size=2).map(tuple), min_size=1, max_size=3)


@SETTINGS
@given(
    shapes=SHAPES,
    dtype=st.sampled_from([mt.float32, mt.float64]),
    lr=st.floats(1e-3, 1.0),
    momentum=st.sampled_from([0, 0.5, 0.9]),
    dampening=st.sampled_from([0, 0.1]),
    weight_decay=st.sampled_from([0, 0.01]),
    nesterov=st.booleans(),
    maximize=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_sgd_numpy_path_is_bit_identical(shapes, dtype, lr, momentum, dampening, weight_decay, nesterov, maximize,
                                         seed):
    if nesterov and (momentum == 0 or dampening != 0):
        nesterov = False

    def make(params):
        return optim.SGD(params, lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                         nesterov=nesterov, maximize=maximize)

    _assert_identical(make, shapes, dtype, seed)


@SETTINGS
@given(
    shapes=SHAPES,
    dtype=st.sampled_from([mt.float32, mt.float64]),
    lr=st.floats(1e-4, 0.1),
    betas=st.sampled_from([(0.9, 0.999), (0.3, 0.5), (0.0, 0.99)]),
    weight_decay=st.sampled_from([0, 0.01]),
    amsgrad=st.booleans(),
    maximize=st.booleans(),
    decoupled=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_adam_numpy_path_is_bit_identical(shapes, dtype, lr, betas, weight_decay, amsgrad, maximize, decoupled, seed):
    def make(params):
        return optim.Adam(params, lr=lr, betas=betas, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
                          decoupled_weight_decay=decoupled)

    _assert_identical(make, shapes, dtype, seed)


@pytest.mark.parametrize("make", [lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9), lambda ps: optim.Adam(ps)])
def test_plain_parameters_take_the_numpy_path(make, monkeypatch):
    # The fast path is really used on plain float parameters (so the tests above compare two paths).
    used = []
    real = _numpy_update.numpy_views

    def spy(*tensors, **kwargs):
        views = real(*tensors, **kwargs)
        used.append(views is not None)
        return views

    monkeypatch.setattr(_numpy_update, "numpy_views", spy)
    p = mt.nn.Parameter(mt.ones(3))
    opt = make([p])
    for _ in range(2):
        p.grad = mt.full((3,), 0.5)
        opt.step()
    assert used[-1] is switch_on()


def test_dispatch_subclass_elsewhere_keeps_the_numpy_path_for_plain_tensors():
    class Logged(mt.Tensor):  # defining it installs the __torch_dispatch__ layer
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    p = mt.nn.Parameter(mt.ones(2))
    with mt.no_grad():  # (as in step())
        assert (_numpy_update.numpy_views(p) is not None) == switch_on()


def test_dispatch_mode_takes_the_tensor_path():
    from minitorch_nn.utils._python_dispatch import TorchDispatchMode

    seen = []

    class Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    p = mt.nn.Parameter(mt.ones(2))
    opt = optim.SGD([p], lr=0.5)
    p.grad = mt.ones(2)
    with Record():
        opt.step()
    assert any("add_" in name for name in seen)   # the mode saw the update
    assert p.detach().tolist() == [0.5, 0.5]


def test_half_parameters_and_tensor_lr_take_the_tensor_path():
    p = mt.nn.Parameter(mt.ones(3, dtype=mt.float16))
    assert _numpy_update.numpy_views(p) is None
    assert not _numpy_update.plain_numbers(mt.tensor(0.1))
    # ...and still train
    opt = optim.SGD([p], lr=mt.tensor(0.5))
    p.grad = mt.ones(3, dtype=mt.float16)
    opt.step()
    assert p.detach().tolist() == [0.5, 0.5, 0.5]


def test_numpy_path_overflow_is_silent():
    p = mt.nn.Parameter(mt.tensor([3e38], dtype=mt.float32))
    opt = optim.SGD([p], lr=10.0)
    p.grad = mt.tensor([-3e38], dtype=mt.float32)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.step()
    assert p.item() == float("inf")
