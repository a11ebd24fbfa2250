"""minitorch_nn.testing without PyTorch: assert_close's checks and tolerances, make_tensor,
and that every strategy layout builds the values numpy says it should (the oracle tests in
tests/oracle/test_assert_close_oracle.py compare the messages with torch.testing's)."""

import pytest
from hypothesis import given, settings

import minitorch_nn as mt
from minitorch_nn.testing import DTYPE_PRECISIONS, assert_close, default_tolerances, make_tensor
from minitorch_nn.testing import strategies as mts


def test_default_tolerances_by_dtype():
    assert default_tolerances(mt.float32) == DTYPE_PRECISIONS["float32"] == (1.3e-6, 1e-5)
    assert default_tolerances(mt.int64) == (0.0, 0.0)
    assert default_tolerances(mt.float16, mt.float64) == (1e-3, 1e-5)  # the looser of the two


def test_within_and_beyond_tolerance():
    x = mt.tensor([1.0, 100.0])
    assert_close(x, mt.tensor([1.0 + 5e-6, 100.0 + 1e-4]))  # atol + rtol * |expected|
    with pytest.raises(AssertionError, match=r"Mismatched elements: 1 / 2 \(50.0%\)"):
        assert_close(x, mt.tensor([1.0, 100.01]))
    with pytest.raises(AssertionError, match="Tensor-likes are not equal!"):
        assert_close(mt.tensor([1, 2]), mt.tensor([1, 3]))
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol' must be either specified or omitted"):
        assert_close(x, x, rtol=1e-3)


def test_attribute_checks():
    with pytest.raises(AssertionError, match="attribute 'shape'"):
        assert_close(mt.ones(2), mt.ones(2, 1))
    with pytest.raises(AssertionError, match="attribute 'dtype'"):
        assert_close(mt.ones(2), mt.ones(2, dtype=mt.float64))
    assert_close(mt.ones(2), mt.ones(2, dtype=mt.float64), check_dtype=False)
    with pytest.raises(AssertionError, match=r"attribute 'stride\(\)'"):
        assert_close(mt.ones(2, 3).t(), mt.ones(3, 2), check_stride=True)
    with pytest.raises(AssertionError, match="custom"):
        assert_close(mt.ones(2), mt.zeros(2), msg="custom")


def test_nan_handling():
    nan = mt.tensor([float("nan")])
    with pytest.raises(AssertionError):
        assert_close(nan, nan)
    assert_close(nan, nan, equal_nan=True)


@pytest.mark.parametrize("dtype", [mt.float32, mt.float64, mt.bfloat16, mt.int32, mt.uint8, mt.bool])
def test_make_tensor_shape_dtype_bounds(dtype):
    t = make_tensor((3, 2), dtype=dtype, device="cpu", low=0, high=5 if dtype != mt.bool else None)
    assert t.shape == (3, 2) and t.dtype == dtype
    if dtype != mt.bool:
        assert float(t.double().min()) >= 0 and float(t.double().max()) <= 5
    nz = make_tensor(50, dtype=mt.int64, device="cpu", low=-1, high=1, exclude_zero=True)
    assert bool((nz != 0).all())
    with pytest.raises(ValueError, match="`low` must be less than or equal to `high`"):
        make_tensor(2, dtype=mt.float32, device="cpu", low=3, high=1)


@settings(max_examples=40, deadline=None)
@given(mts.tensor_specs(dtypes=mts.DTYPE_NAMES, specials=True))
def test_specs_build_their_layout(spec):
    t = spec.build(mt)
    assert tuple(t.shape) == spec.shape and str(t.dtype) == f"torch.{spec.dtype}"
    assert_close(t, spec.numpy(), equal_nan=True)
    if spec.layout == "expanded" and spec.shape and spec.shape[0] > 1:
        assert t.stride()[0] == 0
    if spec.layout == "sliced" and spec.shape:
        assert t.stride()[-1] == 2
    if spec.layout == "offset" and spec.shape:
        assert t.storage_offset() > 0 or t.numel() == 0


@settings(max_examples=30, deadline=None)
@given(mts.tensor_specs(min_dims=1, layouts=("contiguous",)).flatmap(
    lambda s: mts.reshapes(s.shape).map(lambda new: (s, new))))
def test_reshapes_are_valid_views(pair):
    spec, new = pair
    assert_close(spec.build(mt).view(new), spec.numpy().reshape(new))
