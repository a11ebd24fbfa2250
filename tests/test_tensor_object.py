"""The tensor object: one Python handle, one C-level payload slot (``_ext/_C.pyx``)."""

import copy
import pickle
import weakref

import numpy as np
from minitorch_nn._C import TensorBase, TensorImpl, VersionCounter

import minitorch_nn as mt


def test_handle_holds_one_payload_and_views_share_its_storage():
    x = mt.zeros(2, 3)
    assert isinstance(x, TensorBase)
    assert isinstance(x._impl, TensorImpl)
    v = x.t()
    assert v._impl is not x._impl
    assert v._impl.storage is x._impl.storage
    assert v._impl.version is x._impl.version
    assert v._base is x  # the same Python object comes back, like PyTorch's pyobj slot
    # a view of a view remembers the original base, as in PyTorch
    assert v[0]._base is x


def test_base_is_resurrected_when_handle_is_gone():
    v = mt.arange(4.0)[1:]
    base = v._base
    assert isinstance(base, mt.Tensor)
    assert base.shape == (4,)


def test_subclasses_get_dict_slots_and_weakrefs():
    class WithSlots(mt.Tensor):
        __slots__ = ("a",)

    t = mt.zeros(2).as_subclass(WithSlots) if hasattr(mt.Tensor, "as_subclass") else None
    p = mt.nn.Parameter(mt.zeros(2))
    p.extra = 3
    assert p.__dict__ == {"extra": 3}
    r = weakref.ref(p)
    assert r() is p
    del t


def test_version_counter_counts_inplace_writes_shared_with_views():
    x = mt.zeros(3)
    v = x[1:]
    assert x._version == 0
    x.add_(1)
    assert x._version == 1 and v._version == 1
    v.mul_(2)
    assert x._version == 2
    assert x.tolist() == [1.0, 2.0, 2.0]


def test_version_counter_object():
    c = VersionCounter(3)
    assert c.value == 3 and repr(c) == "VersionCounter(3)"


def test_data_ptr_moves_with_offset():
    x = mt.arange(4, dtype=mt.float32)
    assert x[1:].data_ptr() - x.data_ptr() == 4
    assert mt.zeros(2, device="meta").data_ptr() == 0


def test_numpy_view_is_cached_and_shares_memory():
    x = mt.zeros(3)
    a = x._array
    assert a is x._array
    a[0] = 5
    assert x[0].item() == 5


def test_deepcopy_keeps_views_sharing_within_one_copy():
    x = mt.arange(4.0)
    pair = [x, x[1:]]
    a, b = copy.deepcopy(pair)
    a.add_(10)
    assert b.tolist() == [11.0, 12.0, 13.0]
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_pickle_round_trip_keeps_class_dtype_requires_grad():
    p = mt.nn.Parameter(mt.tensor([1.0, 2.0]))
    q = pickle.loads(pickle.dumps(p))
    assert type(q) is mt.nn.Parameter and q.requires_grad and q.tolist() == [1.0, 2.0]
    t = mt.tensor([1, 2], dtype=mt.int16)
    u = pickle.loads(pickle.dumps(t))
    assert u.dtype is mt.int16 and np.array_equal(u.numpy(), t.numpy())


def test_tensor_constructor_without_data_is_empty_float():
    t = mt.Tensor()
    assert t.shape == (0,) and t.dtype is mt.float32
    # the legacy forms (sizes, data) are compared with PyTorch in tests/oracle/test_legacy_constructors_oracle.py
    assert mt.Tensor([1, 2]).tolist() == [1.0, 2.0]


def test_use_count_counts_payload_references():
    x = mt.zeros(3)
    assert x._use_count() == 1
    alias = x  # a second Python name is not a second payload reference
    assert x._use_count() == 1
    v = x[1:]
    assert x._use_count() == 2
    del v, alias
    assert x._use_count() == 1
