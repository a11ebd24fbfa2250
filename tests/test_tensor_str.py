"""Tensor printing (minitorch_nn/_tensor_str.py) without PyTorch installed.

PyTorch 2.13's output is the specification, so the expected strings below are
literal copies of what ``repr(torch.<same tensor>)`` prints. The oracle test
(tests/oracle/test_tensor_str_oracle.py) checks many random tensors against
real PyTorch; this file pins the well-known cases and the option handling.

The printer only needs a small duck-typed interface (dtype, shape, dim(),
numel(), device, requires_grad, grad_fn, ``_array``), so these tests use a
tiny stand-in tensor built on a numpy array and do not depend on the tensor
core.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from minitorch_nn import _dtype
from minitorch_nn import _tensor_str as ts

# -- a stand-in tensor ---------------------------------------------------------


class FakeDevice:
    def __init__(self, name: str) -> None:
        self.type, _, index = name.partition(":")
        self.index = int(index) if index else None
        self._name = name

    def __str__(self) -> str:
        return self._name


class FakeGradFn:
    def __init__(self, name: str) -> None:
        self._name = name

    def name(self) -> str:
        return self._name


class FakeTensor:
    """Just what the printer reads; values live in a numpy array."""

    def __init__(self, data, dtype=None, device="cpu", requires_grad=False, grad_fn=None):
        array = np.asarray(data)
        if dtype is None:
            if array.dtype.kind == "f":
                dtype = _dtype.get_default_dtype()
            else:
                dtype = _dtype.from_numpy_dtype(
                    array.dtype if array.dtype.kind == "b" else np.int64
                )
        self.dtype = dtype
        self.shape = tuple(array.shape)
        self._array = None if device == "meta" else array.astype(dtype.numpy_dtype)
        self.device = FakeDevice(device)
        self.requires_grad = requires_grad
        self.grad_fn = None if grad_fn is None else FakeGradFn(grad_fn)
        self.is_leaf = grad_fn is None

    def dim(self) -> int:
        return len(self.shape)

    def numel(self) -> int:
        return math.prod(self.shape)

    def cpu(self) -> FakeTensor:
        return FakeTensor(self._array, self.dtype)


class FakeParameter(FakeTensor):
    pass


class MyTensor(FakeTensor):
    pass


class MyParameter(FakeParameter):
    pass


@pytest.fixture(autouse=True)
def _fake_classes_and_clean_options(monkeypatch):
    # The stand-ins play the roles of minitorch_nn's Tensor and Parameter.
    monkeypatch.setattr(ts, "_tensor_classes", lambda: (FakeTensor, FakeParameter))
    ts.set_printoptions(profile="default")
    default = _dtype.get_default_dtype()
    yield
    ts.set_printoptions(profile="default")
    _dtype.set_default_dtype(default)


def r(data, dtype=None, **kwargs) -> str:
    return ts._str(FakeTensor(data, dtype, **kwargs))


# -- well-known outputs ------------------------------------------------------

F32, F64, F16, BF16 = _dtype.float32, _dtype.float64, _dtype.float16, _dtype.bfloat16
I32, I64 = _dtype.int32, _dtype.int64
NAN, INF = float("nan"), float("inf")

CASES = [
    # int mode for whole-number floats, fixed point otherwise
    ([1.0, 2.0], None, "tensor([1., 2.])"),
    ([1.5, 2.0], None, "tensor([1.5000, 2.0000])"),
    (5.0, None, "tensor(5.)"),
    (7, None, "tensor(7)"),
    ([1, -20, 300], None, "tensor([  1, -20, 300])"),
    ([True, False], None, "tensor([ True, False])"),
    # scientific notation: tiny, huge, or a wide range
    ([1e-5, 1.0], None, "tensor([1.0000e-05, 1.0000e+00])"),
    ([1e9, 1.0], None, "tensor([1.0000e+09, 1.0000e+00])"),
    ([1.0, 1001.5], None, "tensor([1.0000e+00, 1.0015e+03])"),
    # nan / inf / zeros do not affect the choice; negative zero keeps its sign
    ([NAN, INF, -INF, 0.0], None, "tensor([nan, inf, -inf, 0.])"),
    ([-0.0, 2.0], None, "tensor([-0., 2.])"),
    ([-0.0, 2.5], None, "tensor([-0.0000, 2.5000])"),
    ([0.0, 0.0], None, "tensor([0., 0.])"),
    ([1e-5, NAN, -0.0], None, "tensor([1.0000e-05,        nan, -0.0000e+00])"),
    # dtype suffix for dtypes the values do not imply
    ([1.5, 2.0], F64, "tensor([1.5000, 2.0000], dtype=torch.float64)"),
    ([1, 2], I32, "tensor([1, 2], dtype=torch.int32)"),
    ([1.1, 2.0], F16, "tensor([1.0996, 2.0000], dtype=torch.float16)"),
    ([1.1, 2.0], BF16, "tensor([1.1016, 2.0000], dtype=torch.bfloat16)"),
    # empty tensors
    (np.zeros(0), F32, "tensor([])"),
    (np.zeros(0), I64, "tensor([], dtype=torch.int64)"),
    (np.zeros((0, 3)), F32, "tensor([], size=(0, 3))"),
    (np.zeros((2, 0)), I32, "tensor([], size=(2, 0), dtype=torch.int32)"),
    # n-d nesting
    (np.arange(6.0).reshape(2, 3), F32, "tensor([[0., 1., 2.],\n        [3., 4., 5.]])"),
    (
        np.arange(8).reshape(2, 2, 2),
        I64,
        "tensor([[[0, 1],\n         [2, 3]],\n\n        [[4, 5],\n         [6, 7]]])",
    ),
    # summarising past the threshold
    (np.arange(2000), I64, "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"),
    # wrapping at the line width
    (
        np.arange(30.0, dtype=np.float32) / np.float32(7),
        F32,
        "tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000, 1.1429,\n"
        "        1.2857, 1.4286, 1.5714, 1.7143, 1.8571, 2.0000, 2.1429, 2.2857, 2.4286,\n"
        "        2.5714, 2.7143, 2.8571, 3.0000, 3.1429, 3.2857, 3.4286, 3.5714, 3.7143,\n"
        "        3.8571, 4.0000, 4.1429])",
    ),
]


@pytest.mark.parametrize("data, dtype, expected", CASES, ids=[c[2][:40] for c in CASES])
def test_known_outputs(data, dtype, expected):
    assert r(data, dtype) == expected


def test_bfloat16_array_is_accepted_as_is():
    array = np.array([1.1, 2.0], dtype=ml_dtypes.bfloat16)
    assert r(array, BF16) == "tensor([1.1016, 2.0000], dtype=torch.bfloat16)"


# -- suffixes ------------------------------------------------------------------


def test_meta_prints_no_data():
    assert r(np.zeros((2, 3)), F32, device="meta") == "tensor(..., device='meta', size=(2, 3))"
    # on meta even int64 names its dtype
    assert (
        r(np.zeros(2), I64, device="meta")
        == "tensor(..., device='meta', size=(2,), dtype=torch.int64)"
    )
    assert (
        r(np.zeros((2, 3)), F32, device="meta", requires_grad=True)
        == "tensor(..., device='meta', size=(2, 3), requires_grad=True)"
    )


def test_cuda_tensor_names_its_device():
    assert r([1.0, 2.0], F32, device="cuda:0") == "tensor([1., 2.], device='cuda:0')"


def test_requires_grad_and_grad_fn():
    assert r([1.0, 2.0], requires_grad=True) == "tensor([1., 2.], requires_grad=True)"
    assert (
        r([2.0, 4.0], requires_grad=True, grad_fn="MulBackward0")
        == "tensor([2., 4.], grad_fn=<MulBackward0>)"
    )
    assert (
        r(np.zeros((0, 3)), F32, requires_grad=True)
        == "tensor([], size=(0, 3), requires_grad=True)"
    )


def test_dtype_suffix_follows_the_default_dtype():
    _dtype.set_default_dtype(F64)
    assert r([1.5, 2.0], F64) == "tensor([1.5000, 2.0000])"
    assert r([1.5, 2.0], F32) == "tensor([1.5000, 2.0000], dtype=torch.float32)"
    assert r(np.zeros(0), F32) == "tensor([], dtype=torch.float32)"


def test_suffixes_wrap_past_linewidth():
    data = np.arange(9.0) + 0.5
    expected = (
        "tensor([0.5000, 1.5000, 2.5000, 3.5000, 4.5000, 5.5000, 6.5000, 7.5000, 8.5000],\n"
        "       dtype=torch.float64)"
    )
    assert r(data, F64) == expected


def test_tensor_contents_replaces_the_data():
    assert ts._str(FakeTensor([1.0, 2.0], F64), tensor_contents="[x]") == (
        "tensor([x], dtype=torch.float64)"
    )


# -- subclasses ------------------------------------------------------------------


def test_subclass_uses_its_class_name():
    assert ts._str(MyTensor([1.5, 2.0])) == "MyTensor([1.5000, 2.0000])"
    assert ts._str(MyTensor([1, 2])) == "MyTensor([1, 2])"


def test_parameter_and_parameter_subclass():
    assert ts._str(FakeParameter([1.5, 2.0], requires_grad=True)) == (
        "tensor([1.5000, 2.0000], requires_grad=True)"
    )
    assert ts._str(MyParameter([1.5, 2.0], requires_grad=True)) == (
        "Parameter(MyParameter([1.5000, 2.0000], requires_grad=True))"
    )


# -- print options ---------------------------------------------------------------


def test_get_printoptions_defaults_and_order():
    assert ts.get_printoptions() == {
        "precision": 4,
        "threshold": 1000,
        "edgeitems": 3,
        "linewidth": 80,
        "sci_mode": None,
    }
    assert list(ts.get_printoptions()) == [
        "precision",
        "threshold",
        "edgeitems",
        "linewidth",
        "sci_mode",
    ]


def test_precision_and_threshold():
    ts.set_printoptions(precision=2)
    assert r([1.12345]) == "tensor([1.12])"
    ts.set_printoptions(threshold=5)
    assert r(np.arange(10)) == "tensor([0, 1, 2,  ..., 7, 8, 9])"
    ts.set_printoptions(profile="default")
    assert r([1.12345]) == "tensor([1.1235])"
    assert r(np.arange(10)) == "tensor([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])"


def test_sci_mode_forced_and_reset_by_any_call():
    ts.set_printoptions(sci_mode=True)
    assert r([1.5, 2.0]) == "tensor([1.5000e+00, 2.0000e+00])"
    assert r([0.0]) == "tensor([0.])"  # no non-zero value: sci mode never engages
    ts.set_printoptions(sci_mode=False)
    assert r([1e-5, 1.0]) == "tensor([0.0000, 1.0000])"
    ts.set_printoptions(precision=4)  # sci_mode left out means None again
    assert ts.get_printoptions()["sci_mode"] is None


def test_profiles():
    ts.set_printoptions(profile="short")
    assert ts.get_printoptions() == {
        "precision": 2,
        "threshold": 1000,
        "edgeitems": 2,
        "linewidth": 80,
        "sci_mode": None,
    }
    ts.set_printoptions(profile="full")
    assert ts.get_printoptions()["threshold"] == math.inf
    assert "..." not in r(np.arange(5000))
    ts.set_printoptions(profile="full", precision=6)
    assert ts.get_printoptions()["precision"] == 6


def test_edgeitems_zero_adds_size_and_hides_everything_when_summarised():
    ts.set_printoptions(edgeitems=0)
    assert r(np.arange(5.0)) == "tensor([0., 1., 2., 3., 4.], size=(5,))"
    assert r(np.arange(2000.0)) == "tensor([...], size=(2000,))"
    assert r(np.arange(2000.0).reshape(2, 1000)) == "tensor([...], size=(2, 1000))"


def test_summarised_nd():
    ts.set_printoptions(threshold=10, edgeitems=1)
    expected = "tensor([[ 0,  ..., 19],\n        ...,\n        [80,  ..., 99]])"
    assert r(np.arange(100).reshape(5, 20)) == expected


def test_linewidth():
    ts.set_printoptions(linewidth=20)
    assert r(np.arange(8)) == "tensor([0, 1, 2, 3,\n        4, 5, 6, 7])"


def test_printoptions_context_restores():
    with ts.printoptions(precision=2, sci_mode=True):
        assert ts.get_printoptions()["precision"] == 2
        assert r([1.5]) == "tensor([1.50e+00])"
    assert ts.get_printoptions()["precision"] == 4
    assert ts.get_printoptions()["sci_mode"] is None


def test_printoptions_context_restores_after_error():
    with pytest.raises(ValueError), ts.printoptions(linewidth=10):
        raise ValueError
    assert ts.get_printoptions()["linewidth"] == 80
