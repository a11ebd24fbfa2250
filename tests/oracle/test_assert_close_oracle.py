"""minitorch_nn.testing against torch.testing: assert_close's verdicts and messages, make_tensor's
ranges, and the hypothesis strategies' layouts (built in both libraries from one spec)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

import minitorch_nn as mt  # noqa: E402
from minitorch_nn.testing import assert_close, check_gradients, make_tensor  # noqa: E402
from minitorch_nn.testing import strategies as mts  # noqa: E402


def _message(fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except Exception as err:  # noqa: BLE001 - compared
        return type(err), str(err)
    return None


CASES = [
    ([1.0, 2.0, 3.0], [1.0, 2.5, 3.0], "float32", {}),
    ([[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 5.0]], "float32", {}),
    ([1.0, 2.0], [1.0 + 1e-6, 2.0], "float32", {}),
    ([1.0, 2.0], [1.001, 2.0], "float64", {}),
    ([1.0, float("nan")], [1.0, float("nan")], "float32", {}),
    ([1.0, float("nan")], [1.0, float("nan")], "float32", {"equal_nan": True}),
    ([1.0, float("inf")], [1.0, float("inf")], "float64", {}),
    ([1.0, 2.0], [1.5, 2.0], "float16", {}),
    ([1.0, 2.0], [1.01, 2.0], "bfloat16", {}),
    ([1, 2, 3], [1, 4, 3], "int64", {}),
    ([True, False], [True, True], "bool", {}),
    (3.0, 2.0, "float32", {}),
    ([1.0, 2.0], [1.1, 2.0], "float32", {"rtol": 0.2, "atol": 0.0}),
    ([1.0, 2.0], [1.1, 2.0], "float32", {"rtol": 0.0, "atol": 0.0}),
]


@pytest.mark.parametrize("actual, expected, dtype, kwargs", CASES)
def test_assert_close_messages_match_torch(actual, expected, dtype, kwargs):
    a_t = torch.tensor(actual, dtype=getattr(torch, dtype))
    e_t = torch.tensor(expected, dtype=getattr(torch, dtype))
    a_m = mt.tensor(actual, dtype=getattr(mt, dtype))
    e_m = mt.tensor(expected, dtype=getattr(mt, dtype))
    assert _message(assert_close, a_m, e_m, **kwargs) == _message(torch.testing.assert_close, a_t, e_t, **kwargs)


def test_attribute_messages_match_torch():
    pairs = [
        (lambda lib: (lib.ones(2), lib.ones(3)), {}),
        (lambda lib: (lib.ones(2), lib.ones(2, dtype=lib.float64)), {}),
        (lambda lib: (lib.ones(2, 2).t(), lib.ones(2, 2).contiguous()), {"check_stride": True}),
        (lambda lib: (lib.ones(2), lib.ones(2)), {"rtol": 1e-3}),
    ]
    for make, kwargs in pairs:
        assert _message(assert_close, *make(mt), **kwargs) == _message(torch.testing.assert_close, *make(torch), **kwargs)


def test_python_scalars_and_sequences_match_torch():
    for a, e in [(1.0, 1.5), (2, 3), ([1.0, 2.0], [1.0, 2.5]), ({"w": 1.0}, {"w": 2.0}), ((1, 2), (1, 2, 3))]:
        assert _message(assert_close, a, e) == _message(torch.testing.assert_close, a, e), (a, e)


def test_tensor_against_numpy():
    assert_close(mt.tensor([1.0, 2.0]), np.array([1.0, 2.0], dtype=np.float32))
    with pytest.raises(AssertionError, match="Greatest absolute difference: 0.5 at index \\(1,\\)"):
        assert_close(mt.tensor([1.0, 2.0]), np.array([1.0, 2.5], dtype=np.float32))


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "int64", "uint8", "bool"])
def test_make_tensor_like_torch(dtype):
    m = make_tensor(3, 4, dtype=getattr(mt, dtype), device="cpu")
    t = torch.testing.make_tensor(3, 4, dtype=getattr(torch, dtype), device="cpu")
    assert str(m.dtype) == str(t.dtype) and tuple(m.shape) == tuple(t.shape)
    vals = m.double().numpy() if dtype != "bool" else m.numpy()
    if dtype in ("float32", "float64", "bfloat16"):
        assert vals.min() >= -9 and vals.max() <= 9
    elif dtype == "uint8":
        assert vals.min() >= 0 and vals.max() < 10
    elif dtype == "int64":
        assert vals.min() >= -9 and vals.max() < 10
    nc = make_tensor((2, 3), dtype=mt.float32, device="cpu", noncontiguous=True, low=1, high=2)
    assert not nc.is_contiguous() and float(nc.min()) >= 1 and float(nc.max()) <= 2
    g = make_tensor(2, dtype=mt.float64, device="cpu", requires_grad=True)
    assert g.requires_grad and g.is_leaf


@settings(max_examples=30, deadline=None)
@given(mts.tensor_specs(dtypes=mts.DTYPE_NAMES, specials=True))
def test_spec_builds_same_layout_in_both(spec):
    m, t = spec.build(mt), spec.build(torch)
    assert tuple(m.shape) == tuple(t.shape) == spec.shape
    assert m.stride() == t.stride() and m.storage_offset() == t.storage_offset()
    assert_close(m, t, equal_nan=True, check_device=False)
    assert_close(m, spec.numpy(), equal_nan=True)


@settings(max_examples=20, deadline=None)
@given(mts.shapes(max_dims=4), st.data())
def test_reshapes_keep_numel(shape, data):
    new = data.draw(mts.reshapes(shape))
    assert int(np.prod(new)) == int(np.prod(shape))


def test_check_gradients_passes_and_fails():
    check_gradients(lambda x, y: (x * y).sin().sum(), (3,), (3,))

    class Wrong(mt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3

    with pytest.raises(AssertionError, match="gradcheck failed"):
        check_gradients(Wrong.apply, (2,))
