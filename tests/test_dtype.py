"""dtypes: names, aliases, attributes, ``finfo``/``iinfo``, the default dtype and promotion basics.

Values are checked against PyTorch when it is installed (``torch.finfo`` is the oracle for the
16-bit formats, where numpy alone would not know bfloat16); the rest are plain facts.
"""

import ml_dtypes
import numpy as np
import pytest

import minitorch_nn as mt
from tests.strategies import DTYPE_NAMES, FLOAT_NAMES, INT_NAMES


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_dtype_prints_and_pickles_like_torch(name):
    import pickle

    d = getattr(mt, name)
    assert repr(d) == f"torch.{name}"
    assert pickle.loads(pickle.dumps(d)) is d
    assert d.is_floating_point == (name in FLOAT_NAMES)
    assert d.itemsize == np.dtype(ml_dtypes.bfloat16 if name == "bfloat16" else name).itemsize


def test_aliases_are_the_same_objects():
    assert mt.half is mt.float16 and mt.float is mt.float32 and mt.double is mt.float64
    assert mt.short is mt.int16 and mt.int is mt.int32 and mt.long is mt.int64


@pytest.mark.parametrize("name", FLOAT_NAMES)
def test_finfo_matches_torch(name):
    torch = pytest.importorskip("torch", reason="finfo values are compared with torch")
    ours, theirs = mt.finfo(getattr(mt, name)), torch.finfo(getattr(torch, name))
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr


@pytest.mark.parametrize("name", INT_NAMES)
def test_iinfo_matches_torch(name):
    torch = pytest.importorskip("torch", reason="iinfo values are compared with torch")
    ours, theirs = mt.iinfo(getattr(mt, name)), torch.iinfo(getattr(torch, name))
    assert (ours.bits, ours.min, ours.max) == (theirs.bits, theirs.min, theirs.max)


def test_finfo_iinfo_refuse_the_wrong_kind():
    with pytest.raises(TypeError):
        mt.finfo(mt.int32)
    with pytest.raises(TypeError):
        mt.iinfo(mt.float32)


def test_default_dtype_is_float32_and_only_floats_allowed():
    assert mt.get_default_dtype() is mt.float32
    with pytest.raises(TypeError, match="only floating-point types are supported as the default type"):
        mt.set_default_dtype(mt.int64)
    try:
        mt.set_default_dtype(mt.float64)
        assert mt.tensor([1.5]).dtype is mt.float64
        assert (mt.tensor([1]) / 2).dtype is mt.float64
    finally:
        mt.set_default_dtype(mt.float32)


def test_promotion_facts_that_differ_from_numpy():
    # numpy says float64 and float16+1000.0 -> float16; PyTorch: float32 and float16
    assert (mt.tensor([1, 2]) + 2.5).dtype is mt.float32
    assert (mt.zeros(2, dtype=mt.float16) + 1000.0).dtype is mt.float16
    assert mt.promote_types(mt.uint8, mt.int8) is mt.int16
    assert mt.promote_types(mt.float16, mt.bfloat16) is mt.float32
    assert (mt.zeros(2, dtype=mt.int8) + mt.tensor(5)).dtype is mt.int8, "a 0-d tensor of the same category does not promote"
    assert (mt.zeros(2, dtype=mt.int8) + mt.tensor(5.0)).dtype is mt.float32, "a 0-d float tensor lifts ints to the default float"
