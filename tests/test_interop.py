"""Moving data in and out: ``numpy()``, ``__array__``, ``from_numpy``, DLPack, ``item``, ``tolist``.

The promise is PyTorch's: ``from_numpy`` and ``numpy()`` share memory (a write through one side is
read through the other), DLPack exchanges are zero-copy both ways, and Python values come back
with the right Python types.
"""

import ml_dtypes
import numpy as np
import pytest

import minitorch_nn as mt


def test_from_numpy_shares_memory_both_ways():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = mt.from_numpy(a)
    a[0, 0] = 10
    assert t[0, 0].item() == 10
    t[1, 2] = -1
    assert a[1, 2] == -1
    assert t.data_ptr() == a.ctypes.data


def test_from_numpy_keeps_strides_of_a_strided_array():
    a = np.arange(12, dtype=np.int64).reshape(3, 4)[:, ::2]
    t = mt.from_numpy(a)
    assert t.stride() == (4, 2) and t.tolist() == a.tolist()
    t.add_(100)
    assert a[0, 0] == 100


def test_from_numpy_rejects_negative_strides_and_unknown_dtypes():
    with pytest.raises(ValueError, match="negative"):
        mt.from_numpy(np.arange(3)[::-1])
    with pytest.raises(TypeError, match="can't convert np.ndarray of type"):
        mt.from_numpy(np.zeros(2, dtype=np.uint16))  # (complex64 is supported: test_complex_oracle.py)


def test_numpy_shares_and_refuses_grad_and_meta():
    t = mt.zeros(3)
    n = t.numpy()
    n[1] = 4
    assert t.tolist() == [0.0, 4.0, 0.0]
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad"):
        mt.zeros(2, requires_grad=True).numpy()
    with pytest.raises(TypeError, match="can't convert meta device type tensor to numpy"):
        mt.zeros(2, device="meta").numpy()


def test_array_protocol():
    t = mt.arange(4).reshape(2, 2)
    assert np.asarray(t).dtype == np.int64
    assert np.asarray(t, dtype=np.float32).dtype == np.float32
    assert np.array(t, copy=True) is not t.numpy()
    assert (np.add(t, 1) == np.array([[1, 2], [3, 4]])).all()


def test_bfloat16_round_trip_uses_ml_dtypes():
    t = mt.tensor([1.0, 2.5, 3.140625]).bfloat16()
    assert t.numpy().dtype == np.dtype(ml_dtypes.bfloat16)
    assert mt.from_numpy(t.numpy()).dtype is mt.bfloat16
    assert t.tolist() == [1.0, 2.5, 3.140625]


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"])
def test_dlpack_with_numpy_both_ways(dtype):
    a = (np.arange(6) % 2).astype(dtype).reshape(2, 3)
    t = mt.from_dlpack(a)
    assert t.dtype is getattr(mt, dtype) and t.tolist() == a.tolist()
    assert t.data_ptr() == a.ctypes.data, "from_dlpack does not copy"
    back = np.from_dlpack(t)
    assert back.ctypes.data == t.data_ptr()
    assert t.__dlpack_device__() == (1, 0)


def test_dlpack_of_a_view_keeps_its_geometry():
    base = mt.arange(12.0).reshape(3, 4)
    view = base.t()[1:]
    a = np.from_dlpack(view)
    assert a.shape == (3, 3) and a.strides == tuple(s * 4 for s in view.stride())
    a[0, 0] = -7
    assert base[0, 1].item() == -7


def test_dlpack_refuses_grad():
    with pytest.raises(RuntimeError, match="Can't export tensors that require gradient"):
        mt.zeros(2, requires_grad=True).__dlpack__()


def test_dlpack_with_torch_both_ways():
    torch = pytest.importorskip("torch", reason="exchange with PyTorch needs torch")
    x = mt.arange(6.0).reshape(2, 3)
    t = torch.from_dlpack(x)
    t[0, 0] = 42
    assert x[0, 0].item() == 42, "torch sees our memory"
    src = torch.arange(10, dtype=torch.int32)[::2]
    m = mt.from_dlpack(src)
    assert m.tolist() == src.tolist() and m.stride() == src.stride()
    src[0] = 99
    assert m[0].item() == 99, "we see torch's memory"
    from torch.utils.dlpack import to_dlpack

    assert mt.from_dlpack(to_dlpack(torch.ones(2))).tolist() == [1.0, 1.0], "a bare capsule works too"


@pytest.mark.parametrize(("value", "dtype", "kind"), [
    (3, mt.int64, int), (2.5, mt.float32, float), (True, mt.bool, bool), (7, mt.uint8, int), (1.5, mt.float16, float),
])
def test_item_and_tolist_python_types(value, dtype, kind):
    t = mt.tensor(value, dtype=dtype)
    assert type(t.item()) is kind and t.item() == value
    assert type(mt.tensor([value], dtype=dtype).tolist()[0]) is kind
    assert type(t.tolist()) is kind


def test_item_errors():
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to Scalar"):
        mt.zeros(2).item()
    with pytest.raises(RuntimeError, match="cannot be called on meta tensors"):
        mt.zeros(1, device="meta").item()
