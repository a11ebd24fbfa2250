"""The compiled backward kernels (in ``_ext/twins/backends/cpu/activations.pyx``) against the numpy kernels they
stand in for: the same bits, dtype, shape and strides, on random values that include signed
zeros, infinities and NaNs; and they decline every case they do not take.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_nn as mt
from minitorch_nn.autograd import derivatives as D
from minitorch_nn.backends.cpu import activations as A
from minitorch_nn.backends.cpu.pointwise import _out, binary

compiled = D._compiled   # the twins of activations.py's backward kernels, which derivatives.py calls
pytestmark = pytest.mark.skipif(compiled is None, reason="the compiled twins are not built (run `make build`)")

SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-30, -1e-30]


def _numpy_kernel(name, g, y):
    if name == "tanh":
        return _out(binary(A._tanh_grad, g, y))
    if name == "sigmoid":
        return _out(binary(A._sigmoid_grad, g, y))
    return A.threshold_backward(g, y, 0)   # (the readable kernel calls nothing compiled)


def _compiled_kernel(name, g, y):
    if name == "threshold":
        return compiled.threshold_backward(g, y, 0)
    return getattr(compiled, name + "_backward")(g, y)


def _values(rng, shape, np_dtype, special):
    a = rng.standard_normal(shape).astype(np_dtype)
    if special and a.size:
        flat = a.reshape(-1)
        idx = rng.integers(0, flat.size, max(1, flat.size // 3))
        flat[idx] = rng.choice(SPECIAL, idx.size)
    return a


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(["tanh", "sigmoid", "threshold"]), dtype=st.sampled_from(["float32", "float64"]),
       shape=st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple),
       special=st.booleans(), expanded=st.booleans(), seed=st.integers(0, 2**16))
def test_compiled_matches_numpy_bit_for_bit(name, dtype, shape, special, expanded, seed):
    rng = np.random.default_rng(seed)
    npd = np.dtype(dtype)
    if expanded:   # one value expanded to the shape, as sum()'s backward sends it
        g = mt.tensor(_values(rng, (), npd, special)).expand(*shape)
    else:
        g = mt.tensor(_values(rng, shape, npd, special))
    y = mt.tensor(_values(rng, shape, npd, special))
    fast = _compiled_kernel(name, g, y)
    if name == "tanh" and dtype == "float64":
        assert fast is None   # (only float32: see the backward kernels' section of _ext/twins/backends/cpu/activations.pyx)
        return
    ref = _numpy_kernel(name, g, y)
    assert type(fast) is mt.Tensor
    assert (fast.dtype, fast.shape, fast.stride()) == (ref.dtype, ref.shape, ref.stride())
    it = np.uint32 if dtype == "float32" else np.uint64
    np.testing.assert_array_equal(fast.numpy().view(it), ref.numpy().view(it))


@pytest.mark.parametrize("name", ["tanh", "sigmoid", "threshold"])
def test_compiled_declines_other_cases(name):
    x = mt.randn(3, 4)
    cases = [
        (x, x.double()),                     # two dtypes
        (x.half(), x.half()),                # a 16-bit float
        (x.t(), x.t()),                      # column-major
        (x, x[:2]),                          # two shapes
        (mt.tensor(1.0), mt.tensor(2.0)),    # 0-d
        (mt.ones(0, 3), mt.ones(0, 3)),      # empty
        (x, 0.5),                            # a number
        (x, mt.tensor(1.0).expand(3, 4)),    # the output expanded
        (mt.randn(3, 1).expand(3, 4), x),    # a column expanded
        (x.to("meta"), x.to("meta")),        # not on the cpu
        (mt.nn.Parameter(x), x),             # not an exact Tensor
    ]
    for g, y in cases:
        assert _compiled_kernel(name, g, y) is None


def test_threshold_other_than_zero_is_left_to_numpy():
    x = mt.randn(3, 4)
    assert compiled.threshold_backward(x, x, 0.5) is None
    assert compiled.threshold_backward(x, x, True) is None
    ref = _numpy_kernel("threshold", x, x)
    np.testing.assert_array_equal(A.threshold_backward(x, x, 0.0).numpy(), ref.numpy())


# -- the formulas' direct call (autograd/derivatives.py) ----------------------------------------

from minitorch_nn._ops import aten  # noqa: E402
from minitorch_nn.autograd import derivatives, engine  # noqa: E402
from minitorch_nn.utils._python_dispatch import TorchDispatchMode  # noqa: E402

_BACKWARD_OPS = {"tanh": aten.tanh_backward.default, "sigmoid": aten.sigmoid_backward.default,
                 "relu": aten.threshold_backward.default}


def _grads(op, observe=None):
    x = mt.tensor(np.linspace(-1.5, 1.5, 12, dtype=np.float32).reshape(3, 4), requires_grad=True)
    loss = getattr(x, op)().sum()
    if observe is None:
        loss.backward()
    else:
        with observe:
            loss.backward()
    return x.grad.numpy()


@pytest.mark.parametrize("op", ["tanh", "sigmoid", "relu"])
def test_formulas_take_the_direct_call_only_when_nothing_observes(op, monkeypatch):
    direct = _grads(op)
    seen = []

    class Log(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(func)
            return func(*args, **(kwargs or {}))

    observed = _grads(op, Log())
    assert _BACKWARD_OPS[op] in seen and aten.ones_like.default in seen
    with mt.utils.dispatch_trace() as trace:
        traced = _grads(op)
    assert str(_BACKWARD_OPS[op]) in str(trace)
    monkeypatch.setattr(derivatives, "_compiled", None)   # the op, through the dispatcher
    through_op = _grads(op)
    for other in (observed, traced, through_op):
        np.testing.assert_array_equal(direct.view(np.uint32), other.view(np.uint32))
    assert engine.nothing_observes(exact_tensors=True)
