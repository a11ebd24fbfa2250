"""Graded tests: one op, end to end (tutorial 03). Tasks broadcast-shapes, type-promotion,
kernel-add, kernel-sum, dispatch-mode. numpy is the oracle for values."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st


# -- broadcast-shapes ------------------------------------------------------------------------------

@pytest.mark.task("broadcast-shapes")
def test_broadcast_pairs(mt):
    from minitorch_nn._shape import _infer_size

    assert _infer_size((3, 1), (4,)) == (3, 4)
    assert _infer_size((), (2, 3)) == (2, 3)
    assert _infer_size((5, 1, 4), (3, 1)) == (5, 3, 4)
    assert _infer_size((0,), (1,)) == (0,)
    assert _infer_size((2, 0), (2, 1)) == (2, 0)


@pytest.mark.task("broadcast-shapes")
@given(st.lists(st.integers(0, 4), max_size=4), st.lists(st.integers(0, 4), max_size=4))
def test_broadcast_agrees_with_numpy(mt, a, b):
    from minitorch_nn._shape import _infer_size

    try:
        expected = np.broadcast_shapes(tuple(a), tuple(b))
    except ValueError:
        with pytest.raises(RuntimeError, match="must match the size of tensor b"):
            _infer_size(tuple(a), tuple(b))
    else:
        assert _infer_size(tuple(a), tuple(b)) == expected


@pytest.mark.task("broadcast-shapes")
def test_broadcast_error_names_the_dim(mt):
    from minitorch_nn._shape import _infer_size

    with pytest.raises(RuntimeError, match=r"tensor a \(3\) must match the size of tensor b \(4\) at "
                                           r"non-singleton dimension 1"):
        _infer_size((2, 3), (4,))
    # two mismatches: the last dim is reported
    with pytest.raises(RuntimeError, match="at non-singleton dimension 2"):
        _infer_size((2, 3, 5), (4, 6))


# -- type-promotion --------------------------------------------------------------------------------

@pytest.mark.task("type-promotion")
def test_promotion_tiers(mt):
    from minitorch_nn._dtype import result_type_from

    f32, f64, i32, i64, u8, b = mt.float32, mt.float64, mt.int32, mt.int64, mt.uint8, mt.bool
    assert result_type_from([f32, f64], [], []) is f64
    assert result_type_from([i32], [f64], []) is f64           # a higher category wins
    assert result_type_from([f32], [f64], []) is f32           # the same category does not
    assert result_type_from([], [i32, i64], []) is i64         # no dimensioned tensor: zero-dim rules
    assert result_type_from([u8], [], [1000]) is u8            # an int does not widen an int tensor
    assert result_type_from([i32], [], [2.5]) is mt.get_default_dtype()
    assert result_type_from([b], [], [3]) is i64
    assert result_type_from([], [], [True]) is b
    assert result_type_from([], [], [1, 2.0]) is mt.get_default_dtype()


@pytest.mark.task("type-promotion")
def test_promotion_follows_the_default_dtype(mt):
    from minitorch_nn._dtype import result_type_from

    old = mt.get_default_dtype()
    try:
        mt.set_default_dtype(mt.float64)
        assert result_type_from([mt.int64], [], [0.5]) is mt.float64
        assert result_type_from([mt.float16], [], [0.5]) is mt.float16
    finally:
        mt.set_default_dtype(old)


# -- kernel-add ------------------------------------------------------------------------------------

def _add(mt, a, b, **kw):
    # the cpu kernel itself, called through the op registry
    return mt.ops.aten.add.Tensor(a, b, **kw)


@pytest.mark.task("kernel-add")
@given(st.sampled_from(["float32", "float64", "int64", "int32"]), st.sampled_from([(3,), (2, 3), (2, 1)]),
       st.sampled_from([(3,), (1, 3), ()]))
def test_add_values_and_dtype(mt, dtype, shape_a, shape_b):
    rng = np.random.default_rng(0)
    a = rng.integers(-5, 5, size=shape_a).astype(dtype)
    b = rng.integers(-5, 5, size=shape_b).astype(dtype)
    out = _add(mt, mt.from_numpy(a), mt.from_numpy(b))
    assert out.dtype == getattr(mt, dtype)
    np.testing.assert_array_equal(out.numpy(), a + b)


@pytest.mark.task("kernel-add")
def test_add_alpha_and_promotion(mt):
    a = mt.tensor([1, 2, 3])
    b = mt.tensor([0.5, 0.25, 1.0])
    out = _add(mt, a, b, alpha=2)
    assert out.dtype == mt.float32
    np.testing.assert_allclose(out.numpy(), [2.0, 2.5, 5.0])
    out = _add(mt, a, mt.tensor([1, 1, 1]), alpha=-3)
    assert out.tolist() == [-2, -1, 0]
    with pytest.raises(RuntimeError, match="alpha"):
        _add(mt, a, mt.tensor([1, 1, 1]), alpha=0.5)   # a float alpha with integer operands


@pytest.mark.task("kernel-add")
def test_add_bools_is_logical_or(mt):
    a, b = mt.tensor([True, False, False]), mt.tensor([False, False, True])
    out = _add(mt, a, b)
    assert out.dtype == mt.bool and out.tolist() == [True, False, True]
    assert _add(mt, a, b, alpha=0).tolist() == [True, False, False]


# -- kernel-sum ------------------------------------------------------------------------------------

def _sum(mt, x, dim, keepdim=False, **kw):
    return mt.ops.aten.sum.dim_IntList(x, dim, keepdim, **kw)


@pytest.mark.task("kernel-sum")
@given(st.sampled_from([(2, 3, 4), (5,), (3, 1, 2)]), st.data(), st.booleans())
def test_sum_dims_and_keepdim(mt, shape, data, keepdim):
    x = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) / 7
    dims = data.draw(st.lists(st.integers(-len(shape), len(shape) - 1), max_size=len(shape), unique_by=lambda d: d % len(shape)))
    out = _sum(mt, mt.from_numpy(x), dims, keepdim)
    expected = x.sum(axis=tuple(dims) if dims else None, keepdims=keepdim)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)
    assert out.dtype == mt.float64


@pytest.mark.task("kernel-sum")
def test_sum_result_dtypes(mt):
    assert _sum(mt, mt.tensor([True, True, False]), [0]).dtype == mt.int64
    assert _sum(mt, mt.tensor([1, 2], dtype=mt.int8), [0]).item() == 3
    assert _sum(mt, mt.tensor([1, 2], dtype=mt.int8), [0]).dtype == mt.int64
    assert _sum(mt, mt.ones(2, 2), [1], dtype=mt.float64).dtype == mt.float64
    assert _sum(mt, mt.ones(2, 2, dtype=mt.float16), [0]).dtype == mt.float16
    with pytest.raises(IndexError, match="Dimension out of range"):
        _sum(mt, mt.ones(2, 2), [2])


# -- dispatch-mode ---------------------------------------------------------------------------------

def _logging_mode(mt, log, name="log", decline=False):
    from minitorch_nn.utils._python_dispatch import TorchDispatchMode

    class Log(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            log.append((name, str(func), types))
            if decline:
                return NotImplemented
            return func(*args, **(kwargs or {}))

    return Log()


@pytest.mark.task("dispatch-mode")
def test_mode_sees_each_op(mt):
    log = []
    x = mt.ones(2, 3)
    with _logging_mode(mt, log):
        y = (x * 2).sum()
    assert [entry[1] for entry in log] == ["aten.mul.Tensor", "aten.sum.default"]
    assert all(entry[2] == () for entry in log), "a mode gets an empty types tuple"
    assert y.item() == 12.0


@pytest.mark.task("dispatch-mode")
def test_nested_modes_inner_first_and_ops_inside_go_outward(mt):
    log = []
    x = mt.ones(2)
    with _logging_mode(mt, log, "outer"), _logging_mode(mt, log, "inner"):
        x + 1
    # the inner mode handles the op; its call of func reaches the outer mode, not itself again
    assert [entry[0] for entry in log] == ["inner", "outer"]


@pytest.mark.task("dispatch-mode")
def test_declining_mode_and_inplace_result(mt):
    log = []
    x = mt.zeros(3)
    with _logging_mode(mt, log, decline=True):
        y = x.add_(1)
    assert y is x and x.tolist() == [1.0, 1.0, 1.0], "NotImplemented lets the kernel run; add_ returns self"
    assert log and log[0][1] == "aten.add_.Tensor"
