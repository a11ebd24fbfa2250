"""``Tensor(2, 3)``, ``Tensor([1, 2])``, ``FloatTensor(...)``: PyTorch's legacy constructors."""

import pytest

torch = pytest.importorskip("torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0")

import minitorch_nn as mt  # noqa: E402


def _describe(t):
    return type(t).__name__, tuple(t.shape), repr(t.dtype)


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.Tensor(),
        lambda lib: lib.Tensor(2, 3),
        lambda lib: lib.Tensor(0),
        lambda lib: lib.FloatTensor(4),
        lambda lib: lib.LongTensor(2, 2),
        lambda lib: lib.ByteTensor(3),
        lambda lib: lib.nn.Parameter(lib.Tensor(3, 2)),
    ],
)
def test_sizes_give_shape_and_dtype(make):
    assert _describe(make(torch)) == _describe(make(mt))


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.Tensor([1, 2]),
        lambda lib: lib.Tensor([[1.5, 2], [3, 4]]),
        lambda lib: lib.FloatTensor([1]),
        lambda lib: lib.DoubleTensor([1, 2]),
        lambda lib: lib.LongTensor([1, 2]),
        lambda lib: lib.BoolTensor([True, False]),
        lambda lib: lib.IntTensor([[1], [2]]),
    ],
)
def test_data_gives_same_repr(make):
    assert repr(make(torch)) == repr(make(mt))


def test_tensor_argument_is_an_alias_whatever_its_dtype():
    for lib in (torch, mt):
        x = lib.ones(2, dtype=lib.int64)
        y = lib.Tensor(x)
        assert y.dtype == lib.int64 and y.data_ptr() == x.data_ptr()


def test_default_dtype_follows_set_default_dtype():
    out = []
    for lib in (torch, mt):
        lib.set_default_dtype(lib.float64)
        try:
            out.append(repr(lib.Tensor([1]).dtype))
        finally:
            lib.set_default_dtype(lib.float32)
    assert out[0] == out[1]


def test_isinstance_checks_dtype():
    for lib in (torch, mt):
        assert isinstance(lib.ones(1, dtype=lib.int64), lib.LongTensor)
        assert not isinstance(lib.ones(1), lib.LongTensor)
        assert isinstance(lib.ones(1), lib.FloatTensor)


@pytest.mark.parametrize("bad", ["x", 2.5])
def test_bad_data_errors_match(bad):
    errors = []
    for lib in (torch, mt):
        with pytest.raises(TypeError) as e:
            lib.Tensor(bad)
        errors.append(str(e.value))
    assert errors[0] == errors[1]
